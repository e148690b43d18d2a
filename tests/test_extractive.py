"""The extractive answerer (no chat model): evidence quoted from passages, each cited, with a status."""

import dataclasses

import numpy as np
import pytest

from chat.citations import parse_citations
from chat.extractive import (
    MAX_EMBEDDED,
    OTHER_LANGUAGE,
    Quantity,
    Scored,
    Sentence,
    Status,
    analysis_for,
    asked_head,
    asked_in_another_language,
    asked_measure,
    asked_terms,
    asked_wording,
    asks_about_funding,
    asks_place,
    asks_several,
    candidate_sentences,
    candidate_windows,
    caption_lines,
    cheap_scores,
    choose_evidence,
    compose_answer,
    counts_asked_thing,
    embed_candidates,
    enumeration_fit,
    extreme_row,
    is_quotable,
    is_signpost,
    missing_names,
    names_in,
    names_place,
    normalise_numbers,
    number_attached,
    quantities,
    quantity_fit,
    row_named,
    score_candidates,
    states_fact,
    states_rate,
    with_extreme_row,
)
from chat.prompts import REFUSAL
from chat.question import PaperRef, analyse_question
from chat.services import (
    ABSENT_PAPER,
    NO_OTHER_PAPER,
    NO_PAPERS,
    WHICH_OTHER_PAPER,
    answer_question,
    extractive_answer,
)
from indexing.pdf import extract_text
from indexing.retrieval import Reference
from tests.conftest import shared_case, shared_paper


def reference(n: int, paper_id: int, text: str, title: str = "Raft", page: int | None = None) -> Reference:
    return Reference(n=n, paper_id=paper_id, title=title, page=page or n, text=text, score=0.9)


def scored_answer(refs, question, *, dense=None, **analysis_fields):
    """The answer composed with the given dense scores (default: all equal), so the test isolates
    the lexical, answer-type and novelty parts of the score."""
    analysis = dataclasses.replace(analysis_for(question), **analysis_fields)
    candidates = candidate_sentences(refs)
    candidates += candidate_windows(candidates)
    cosines = np.full(len(candidates), 0.5) if dense is None else dense(candidates)
    texts = [ref.text for ref in refs]
    return compose_answer(score_candidates(candidates, analysis, cosines), analysis, texts=texts)


def relation_answer(refs, question, names, key_terms):
    """`scored_answer` for a question relating the papers of *names* ((paper id, name) pairs)."""
    ids = tuple(pid for pid, _ in names)
    return scored_answer(refs, question, named_paper_ids=ids, comparison=True, key_terms=key_terms, related_names=names)


# --- candidates -----------------------------------------------------------------------------------


def test_candidate_sentences_are_whole_sentences_with_hyphenation_joined():
    ref = reference(
        1, 1, "ends mid-way. A follower that hears no heart-\nbeat becomes a fault-\ntolerant candidate. Ok."
    )
    assert [s.text for s in candidate_sentences([ref])] == [
        "A follower that hears no heartbeat becomes a fault-tolerant candidate."
    ]


def test_a_sentence_is_not_cut_at_an_abbreviations_stop():
    ref = reference(
        1,
        1,
        "Some corpora cover few papers (e.g. AAN), or are domain-specific (i.e. PubMed only). "
        "Lamport et al. [14] proposed the original algorithm for such systems.",
    )
    assert [s.text.replace("\u2060", "") for s in candidate_sentences([ref])] == [
        "Some corpora cover few papers (e.g. AAN), or are domain-specific (i.e. PubMed only).",
        "Lamport et al. [14] proposed the original algorithm for such systems.",
    ]


def test_a_quoted_sentence_keeps_the_papers_own_reference_numbers_as_text_not_citations():
    ref = reference(1, 1, "Leaders are elected with randomized timeouts as in earlier work [6, 31].")
    (sentence,) = candidate_sentences([ref])
    # Shown verbatim ("[6, 31]"), with an invisible word joiner that keeps it from being a citation.
    assert sentence.text.replace("\u2060", "") == ref.text
    text, cited = parse_citations(f"\u201c{sentence.text}\u201d [1]", valid={1, 6, 31})
    assert cited == [1]
    assert "[\u20606, 31]" in text


def test_numbers_in_parentheses_stay_text_in_a_brackets_only_stream_and_in_passages_shown_to_a_model():
    from chat.citations import CitationStream, neutralise_paper_markers
    from chat.services import words

    quote = "\u201cThe common (N,R,W) configuration of Dynamo is (3,2,2).\u201d [1]"
    for brackets_only, cited in ((False, [3, 2, 1]), (True, [1])):
        stream = CitationStream(valid={1, 2, 3}, brackets_only=brackets_only)
        shown = "".join(stream.feed(piece)[0] for piece in words(quote)) + stream.close()[0]
        assert stream.cited == cited  # streamed word by word, "(3,2,2)." comes before "[1]"
    assert "is (3,2,2).\u201d [1]" in shown
    shown_to_model = neutralise_paper_markers("Dynamo is (3,2,2).", parentheses=True)
    assert shown_to_model.replace("\u2060", "") == "Dynamo is (3,2,2)." != shown_to_model


def test_headings_are_not_glued_into_quotes_and_a_footnote_is_quoted_without_its_number():
    text = (
        "Proposers retry with a higher number after the failure of the election.\n"
        "2.5 The Implementation\n"
        "The Paxos algorithm assumes a network of processes that communicate.\n"
        "2We stress here that the protocol is safe in every execution of it.\n"
        "3Com switches were used in the testbed for every run."
    )
    assert [s.text for s in candidate_sentences([reference(1, 1, text)])] == [
        "Proposers retry with a higher number after the failure of the election.",
        "The Paxos algorithm assumes a network of processes that communicate.",
        "We stress here that the protocol is safe in every execution of it.",
    ]
    assert not is_quotable("2We stress here that the protocol is safe in every execution of it.")


def test_a_footnote_the_text_layer_puts_inside_a_sentence_is_taken_out_of_it_and_quoted_alone():
    text = (
        "Many filtered clusters have no associated PDF and\n"
        "13Unpaywall 2019-04-19 data dump\n"
        "14We use the cld2 tool for language detection with a\n"
        "threshold of 0.9 over the English language score.\n"
        "do not provide significant value to our dataset.\n"
        "A Chubby cell serves ten thousand machines over\n"
        "1Gbit/s Ethernet links in every data centre.\n"
        "Zorblax provides more structured full text than other\n"
        "7pronounced \u201czorb\u201d\n"
        "resources for every discipline."
    )
    assert [s.text for s in candidate_sentences([reference(1, 1, text)])] == [
        "Many filtered clusters have no associated PDF and do not provide significant value to our dataset.",
        "A Chubby cell serves ten thousand machines over 1Gbit/s Ethernet links in every data centre.",
        "Zorblax provides more structured full text than other resources for every discipline.",
        "We use the cld2 tool for language detection with a threshold of 0.9 over the English language score.",
    ]


def test_a_sentence_with_a_footnote_glued_inside_is_not_quoted_but_a_unit_is_no_footnote():
    glued = "We note that many clusters have no associated PDF and 13Unpaywall 2019-04-19 data dump was used."
    unit = "A Chubby cell might serve ten thousand machines connected by 1Gbit/s Ethernet."
    assert not is_quotable(glued)
    assert is_quotable(unit)


def test_a_paragraph_heading_without_a_number_is_not_glued_into_a_quote_but_a_table_header_stays():
    text = (
        "The master handles such failures gracefully.\n"
        "Worker Failure\n"
        "The master pings every worker periodically to check that it is alive.\n"
        "The numbers for both clusters are shown below.\n"
        "Cluster A B\n"
        "Read rate 583 380\n"
    )
    candidates = candidate_sentences([reference(1, 1, text)])
    assert [s.text for s in candidates if s.kind == "sentence"] == [
        "The master handles such failures gracefully.",
        "The master pings every worker periodically to check that it is alive.",
        "The numbers for both clusters are shown below.",
    ]
    (row,) = [s for s in candidates if s.kind == "line"]
    assert (row.text, row.context) == ("Read rate 583 380", "Cluster A B")


def test_a_run_in_heading_on_the_paragraphs_own_line_is_not_glued_into_a_quote():
    text = (
        "We keep papers that meet these criteria. Extracting structured data from PDFs We use a parser to "
        "extract title and authors from each PDF. Our pipeline then links every citation to its paper. "
        "The Semantic Scholar team built We Are Here as a demo of the reader interface."
    )
    assert [s.text for s in candidate_sentences([reference(1, 1, text)])] == [
        "We keep papers that meet these criteria.",
        "We use a parser to extract title and authors from each PDF.",
        "Our pipeline then links every citation to its paper.",
        "The Semantic Scholar team built We Are Here as a demo of the reader interface.",
    ]
    (parser,) = [s for s in candidate_sentences([reference(1, 1, text)]) if "parser" in s.text]
    assert parser.context == "Extracting structured data from PDFs"  # matched, not quoted


def test_a_window_joins_only_sentences_the_paper_prints_next_to_each_other():
    text = (
        "Each tablet server manages a set of tablets in memory. See 3.1. "
        "The master assigns tablets to tablet servers as they start. It also balances the load of every tablet server."
    )
    candidates = candidate_sentences([reference(1, 1, text)])
    windows = [w.text for w in candidate_windows(candidates)]
    # "See 3.1." is too short to quote: the sentences on either side of it make no window.
    assert windows == [
        "The master assigns tablets to tablet servers as they start. It also balances the load of every tablet server."
    ]


def test_figure_text_glued_to_a_caption_is_not_quoted():
    text = (
        "GFS client File namespace /foo/bar chunk 2ef0 Legend: Data messages Figure 1: GFS Architecture "
        "and replication decisions using global knowledge. The master makes placement decisions with global knowledge."
    )
    assert [s.text for s in candidate_sentences([reference(1, 1, text)])] == [
        "The master makes placement decisions with global knowledge."
    ]


def test_a_reference_list_is_never_quoted_as_evidence():
    bibliography = (
        "[12] Lo, K., Wang, L. L., and Neumann, M. 2020.\n"
        "S2ORC: The semantic scholar open research corpus. In Proceedings of ACL, pages 4969-4983.\n"
        "[13] Ammar, W. et al. 2018. Construction of the literature graph in semantic scholar.\n"
        "In Proceedings of NAACL."
    )
    assert candidate_sentences([reference(1, 1, bibliography)]) == []


def test_prose_that_cites_in_author_year_style_is_no_reference_list():
    # A table of components, each line citing "(Name et al., 2019)", is the paper's own text.
    text = (
        "SentencePredictor wraps sciSpaCy (Neumann et al., 2019) and\n"
        "PySBD (Sadvilkar and Neumann, 2020) to segment sentences.\n"
        "WordPredictor is a custom scikit-learn model to identify broken words split across PDF lines.\n"
        "BoxPredictor wraps models from LayoutParser (Shen et al., 2021), which\n"
        "provides vision models like EfficientDet (Tan et al., 2020)."
    )
    texts = [s.text for s in candidate_sentences([reference(1, 1, text)])]
    assert "WordPredictor is a custom scikit-learn model to identify broken words split across PDF lines." in texts


def test_list_items_and_the_sentence_opening_a_list_are_candidates():
    text = (
        "Clients open nodes to obtain handles. Handles include:\n"
        "\u2022 check digits that prevent clients from creating or guessing handles, so access control checks "
        "are performed only when handles are created;\n"
        "\u2022 a sequence number that tells a master whether it generated the handle.\n"
        "We assume that messaging between processes is reliable (but not necessarily FIFO):\n"
        "\u2022 a message sent to a non-faulty process is eventually received; \u2022\n"
    )
    texts = [s.text for s in candidate_sentences([reference(1, 1, text)])]
    assert (
        "check digits that prevent clients from creating or guessing handles, so access control checks "
        "are performed only when handles are created;" in texts
    )
    assert "a sequence number that tells a master whether it generated the handle." in texts
    assert "We assume that messaging between processes is reliable (but not necessarily FIFO):" in texts
    assert "a message sent to a non-faulty process is eventually received;" in texts
    assert "Handles include:" not in texts  # too short to be a sentence of its own


def test_figure_numbers_and_section_numbers_glued_after_a_sentence_are_cut_off():
    text = (
        "The average request latency is 1.2ms for three servers and 1.4ms for 9 servers. # of clients # of "
        "barriers 50 100 200 9.4 19.8 41.0",
        "It applies a MD5 hash on the key to generate a 128-bit identifier. 4.2",
        "For these experiments, we configured the servers to have a maximum of 2,000 total requests in process. "
        "90000 80000 70000 60000 0 20 40 60 Operations per second Throughput of",
    )
    texts = [s.text for s in candidate_sentences([reference(n, 1, part) for n, part in enumerate(text, 1)])]
    assert (
        "For these experiments, we configured the servers to have a maximum of 2,000 total requests in process."
        in texts
    )
    assert "The average request latency is 1.2ms for three servers and 1.4ms for 9 servers." in texts
    assert "It applies a MD5 hash on the key to generate a 128-bit identifier." in texts
    assert not any("90000" in text or "barriers" in text for text in texts)


def test_a_sentence_in_brackets_or_with_a_figure_in_it_is_quotable():
    assert is_quotable("(The constant factors for memory usage are small: about one byte per task pair.)")
    assert is_quotable("Participants\u2019 age ranged from 19 to 67 (\u03bc = 35.04).")
    assert not is_quotable("Marlin 0.850 0.760 0.802 and Kestrel 0.710 0.910 0.798.")


def test_table_rows_and_short_lines_are_candidates_quoted_as_lines():
    text = (
        "Table 1 lists precision, recall and F1 of the linkers.\n"
        "System Precision Recall F1\n"
        "Kestrel 0.710 0.910 0.798\n"
        "Marlin 0.850 0.760 0.802\n"
        "Erratum: n = 7 needs 4.\n"
    )
    candidates = {s.text: s for s in candidate_sentences([reference(1, 1, text)])}
    assert candidates["Marlin 0.850 0.760 0.802"].kind == "line"
    assert candidates["Marlin 0.850 0.760 0.802"].context == "System Precision Recall F1"
    assert candidates["Erratum: n = 7 needs 4."].kind == "line"


def test_a_row_after_a_label_wrapped_onto_its_own_line_keeps_the_tables_header():
    text = "Table 2 evaluates the parsers.\nModel P R F1\nGrobid 40.6 38.3 39.1\nCRF\nRoBERTa 75.9 80.0 76.8\n"
    candidates = {s.text: s for s in candidate_sentences([reference(1, 1, text)])}
    assert candidates["RoBERTa 75.9 80.0 76.8"].context == "Model P R F1"


def test_cjk_sentences_are_split_on_their_own_punctuation():
    text = "本文提出一种新的共识算法。领导者每隔五十毫秒发送一次心跳\uff01这样是否足够\uff1f"
    assert [s.text for s in candidate_sentences([reference(1, 1, text)])] == [
        "本文提出一种新的共识算法。",
        "领导者每隔五十毫秒发送一次心跳\uff01",
        "这样是否足够\uff1f",
    ]


# --- numbers --------------------------------------------------------------------------------------


def test_a_number_reads_the_same_with_or_without_a_space_before_its_unit():
    assert quantities("300 ms") == quantities("300ms") == quantities("300 milliseconds") == [Quantity(300, 300, "ms")]
    assert quantities("64MB") == [Quantity(64, 64, "mb")]
    assert quantities("a limit on file size (256kBytes)") == quantities("256 KBytes") == [Quantity(256, 256, "kb")]
    assert quantities("a single 1.5MByte file") == [Quantity(1.5, 1.5, "mb")]


def test_a_thousands_or_millions_suffix_is_part_of_the_number():
    assert quantities("a vocabulary of size 31k using 15%") == [Quantity(31_000, 31_000, ""), Quantity(15, 15, "%")]
    assert quantities("81.1M papers") == [Quantity(81_100_000, 81_100_000, "")]
    assert quantities("64MB chunks") == [Quantity(64, 64, "mb")]
    refs = [
        reference(
            1,
            4,
            "We pretrain S2ORC-SciBERT on the S2ORC pretraining corpus. "
            "Following SciBERT, we construct a cased WordPiece vocabulary of size 31k.",
        )
    ]
    answer = scored_answer(refs, "What is the vocabulary size of S2ORC-SciBERT?")
    assert answer.status == Status.ANSWERED
    assert "31k" in answer.text


def test_a_number_in_scientific_notation_is_one_number():
    rates = quantities("a maximum learning rate of 1e-5, 2e-5, 3e-5, or 5e-5.")
    assert [q.low for q in rates] == [1e-5, 2e-5, 3e-5, 5e-5]
    assert quantities("1.5e-3s") == [Quantity(0.0015, 0.0015, "s")]
    assert quantities("between 1e-5 and 5e-5") == [Quantity(1e-5, 5e-5, "")]
    assert quantities("version 1e-5a") == []  # an identifier, no number


def test_ranges_are_one_quantity_with_their_unit():
    assert quantities("timeouts of 150-300ms") == [Quantity(150, 300, "ms")]
    assert quantities("between 150 and 300 milliseconds") == [Quantity(150, 300, "ms")]
    assert quantities("from 150 to 300 ms") == [Quantity(150, 300, "ms")]
    assert quantities("1,000\u20132,000 participants") == [Quantity(1000, 2000, "")]


def test_years_section_numbers_and_two_counted_things_are_not_ranges_or_quantities():
    assert quantities("published in 2004, see Section 3.2 and Figure 4") == []
    assert quantities("3 and 4 servers") == [Quantity(3, 3, ""), Quantity(4, 4, "")]
    assert quantities("it took 2 seconds in 2004") == [Quantity(2, 2, "s")]
    assert quantities("a maximum of 2,000 total requests") == [Quantity(2000, 2000, "")]  # no year


def test_numbered_labels_and_multi_level_section_numbers_are_not_quantities():
    assert quantities("Similar to §3, no participant had medical training. 6.1.2 Procedure. Each") == []
    assert quantities("Appendix 2 used GROBID v0.5.510 on 24 papers.") == [Quantity(24, 24, "")]


def test_normalised_numbers_match_in_the_lexical_leg():
    assert normalise_numbers("150-300ms").split() == ["150", "ms", "300", "ms"]
    assert normalise_numbers("300ms").split() == normalise_numbers("300 ms").split() == ["300", "ms"]


def test_the_asked_terms_name_what_the_question_asks_for():
    assert asked_terms("What chunk size does GFS use?") == ["chunk", "size"]
    assert asked_terms("How much energy does a GFS chunkserver use?") == ["energi"]  # Snowball stems
    assert asked_terms("What is the F1 of the Marlin system?") == ["f1"]
    # A word that only says a figure is asked for: the thing after it is asked.
    assert asked_terms("What is the largest number of open sessions that one Chubby master has held?") == [
        "open",
        "session",
    ]
    assert asked_terms("What example value does the author give for the lease period a leader requests?") == [
        "leas",
        "period",
    ]


# --- evidence -------------------------------------------------------------------------------------


def test_the_sentence_with_the_number_beats_the_one_restating_the_question():
    refs = [
        reference(
            1,
            1,
            "Election timeouts matter for Raft election timeouts. "
            "Raft uses randomized election timeouts chosen from a fixed interval of 150-300ms.",
        )
    ]
    answer = scored_answer(refs, "What range of election timeouts does Raft use?")
    assert "150-300ms" in answer.text
    assert "matter for Raft" not in answer.text
    assert answer.status == Status.ANSWERED


def test_a_topic_sentence_is_quoted_with_the_next_sentence_that_holds_the_fact():
    refs = [
        reference(
            1,
            1,
            "Chunk size is one of the key design parameters. We have chosen 64 MB, which is much larger "
            "than typical file system block sizes. Lazy space allocation avoids wasting space.",
            title="The Google File System",
        )
    ]
    answer = scored_answer(refs, "What chunk size does GFS use?")
    assert "“Chunk size is one of the key design parameters. We have chosen 64 MB" in answer.text


def test_gfs_chunk_size_is_answered_with_64_mb_from_page_3_of_the_real_paper():
    pages = extract_text(shared_paper("storage/gfs.pdf")).pages
    bigtable = extract_text(shared_paper("storage/bigtable.pdf")).pages
    refs = [
        reference(1, 1, pages[2], title="The Google File System", page=3),
        reference(2, 2, bigtable[2], title="Bigtable", page=3),
    ]
    answer = extractive_answer("What chunk size does GFS use?", refs)
    assert answer.status == Status.ANSWERED
    assert "64 MB" in answer.text
    assert answer.text.count("[2]") == 0  # no filler quote from Bigtable
    assert all(sentence.supported for sentence in answer.sentences)


def test_papers_far_below_the_best_evidence_are_not_quoted():
    refs = [
        reference(1, 1, "Raft uses randomized election timeouts of 150-300ms to elect a leader."),
        reference(2, 2, "We thank the anonymous reviewers for their valuable comments.", title="MapReduce"),
    ]
    answer = scored_answer(
        refs, "What election timeouts does Raft use?", dense=lambda c: [0.8 if "Raft" in s.text else 0.3 for s in c]
    )
    assert "[1]" in answer.text
    assert "MapReduce" not in answer.text


def test_a_named_paper_is_answered_from_first_and_others_are_left_out():
    refs = [
        reference(1, 1, "Chubby clients see events in the order the master sent them, with sessions.", title="Chubby"),
        reference(2, 2, "ZooKeeper guarantees FIFO client order for all requests of one client.", title="ZooKeeper"),
    ]
    question = "According to the ZooKeeper paper, what ordering guarantees do clients get?"
    answer = scored_answer(refs, question, named_paper_ids=(2,))
    assert "ZooKeeper:" in answer.text
    assert "Chubby:" not in answer.text


def test_a_comparison_quotes_every_needed_paper():
    refs = [
        reference(1, 1, "Bigtable uses GFS to store its log and data files.", title="Bigtable"),
        reference(2, 2, "GFS stores files as fixed-size chunks on chunkservers.", title="GFS"),
    ]
    answer = scored_answer(
        refs,
        "How do GFS and Bigtable depend on each other?",
        named_paper_ids=(1, 2),
        comparison=True,
        dense=lambda c: [0.9 if "Bigtable" in s.text else 0.1 for s in c],
    )
    assert "[1]" in answer.text
    assert "[2]" in answer.text


# --- status and "not stated" ----------------------------------------------------------------------


def test_a_quantity_no_passage_states_is_not_stated_plainly_with_related_passages():
    refs = [
        reference(
            1,
            1,
            "Each chunkserver stores chunks on local disks as Linux files. The master sends instructions "
            "to chunkservers in HeartBeat messages.",
            title="The Google File System",
        )
    ]
    answer = scored_answer(refs, "How much energy does a GFS chunkserver use?")
    assert answer.status == Status.NOT_STATED
    assert answer.text.startswith(
        "The papers discuss chunkserver but do not state a figure for the energy asked about."
    )
    assert "Related passages (they do not answer the question):" in answer.text
    assert not any(s.supported for s in answer.sentences if not s.not_stated)


def test_the_not_stated_line_leaves_out_the_verb_a_question_ends_on():
    refs = [reference(1, 1, "The S2ORC pretraining corpus contains the full text of every paper released so far.")]
    answer = scored_answer(refs, "How many gigabytes does the S2ORC pretraining corpus contain?")
    assert answer.status == Status.NOT_STATED
    assert answer.text.startswith("The papers discuss S2ORC pretraining corpus but do not state")
    refs = [reference(1, 1, "S2ORC was released alongside a reader interface for the whole corpus of papers.")]
    answer = scored_answer(refs, "What licence is S2ORC released under?")
    assert answer.text.startswith("The papers discuss S2ORC but do not state")


def test_the_not_stated_line_leaves_the_verb_of_a_relation_out_of_the_topic():
    refs = [
        reference(1, 4, "NightOwl relates low-light frames to one another by optical flow.", title="NightOwl"),
        reference(2, 5, "S2ORC is a corpus of papers whose full text relates sections to citations.", title="S2ORC"),
    ]
    names = ((4, "NightOwl"), (5, "S2ORC"))
    answer = relation_answer(refs, "How does NightOwl relate to S2ORC?", names, ("nightowl", "relate", "s2orc"))
    assert answer.status == Status.NOT_STATED
    assert answer.text.startswith("The papers discuss NightOwl and S2ORC but do not state")


def test_the_not_stated_line_names_what_the_papers_discuss_as_the_questions_own_phrases():
    refs = [reference(1, 1, "The full text index is rebuilt every night from the stored papers of each corpus.")]
    answer = scored_answer(refs, "How much energy does the full text index of the corpus use?")
    assert answer.status == Status.NOT_STATED
    assert answer.text.startswith(
        "The papers discuss full text index and corpus but do not state a figure for the energy asked about."
    )


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        (
            "How large is the S2ORC corpus in gigabytes or terabytes?",
            "how large the S2ORC corpus is in gigabytes or terabytes.",
        ),
        ("And how often are heartbeats sent to the master?", "how often heartbeats are sent to the master."),
    ],
)
def test_the_not_stated_line_restates_a_how_large_question_as_a_clause_not_a_word_list(question, wanted):
    refs = [reference(1, 1, "The S2ORC corpus sends heartbeats to the master of its papers at every stage.")]
    answer = scored_answer(refs, question)
    assert answer.status == Status.NOT_STATED
    line = answer.text.splitlines()[0]
    assert line.startswith("The papers discuss ") and line.endswith(f" but do not state {wanted}")


@pytest.mark.parametrize(
    ("question", "wanted"),
    [
        # The asked word is a verb ("train", "removes"): the question itself says what was asked.
        (
            "How long did it take to train the full text index?",
            "an answer to “How long did it take to train the full text index?”.",
        ),
        ("Which of the filters removes the most?", "an answer to “Which of the filters removes the most?”."),
        # A noun phrase after "What" or a determiner reads as one.
        ("What is the vocabulary size of the full text index?", "a figure for the vocabulary size asked about."),
        # ... without the question's verb after it.
        ("Which company developed GROBID?", "the company asked about."),
    ],
)
def test_the_not_stated_line_names_a_verb_asked_about_by_the_question_not_as_a_noun(question, wanted):
    refs = [reference(1, 1, "The full text index holds every paper GROBID parsed so far in the corpus.")]
    answer = scored_answer(refs, question)
    assert answer.status == Status.NOT_STATED
    assert answer.text.splitlines()[0].endswith(f" but do not state {wanted}")


def test_a_time_in_words_answers_a_how_long_question():
    assert quantity_fit("We pretrain it on a single TPU for one week.", "time") == 1.0
    assert quantity_fit("The run took a few days on eight machines.", "time") == 1.0
    assert quantity_fit("The nodes handle millions of requests a day.", "time") == 0.0
    assert quantity_fit("Changes show up in the mirrors in well under a second.", "time") == 1.0
    assert quantity_fit("It keeps a second replica for reads.", "time") == 0.0
    assert quantity_fit("We pretrain it on a single TPU.", "time") == 0.0
    assert quantities("It ran for 2 weeks.") == [Quantity(2, 2, "week")]
    refs = [
        reference(
            1,
            4,
            "We pretrain S2ORC-SciBERT with a vocabulary of size 31k. The model is trained on a TPU v3-8 for one week.",
        )
    ]
    answer = scored_answer(refs, "How long did it take to train S2ORC-SciBERT?")
    assert answer.status == Status.ANSWERED
    assert "for one week" in answer.text


def test_a_named_thing_no_passage_names_is_not_stated():
    refs = [reference(1, 1, "Raft elects a leader with randomized timeouts and majority votes.")]
    answer = scored_answer(refs, "How does Raft use Zab to elect a leader?")
    assert answer.status == Status.NOT_STATED
    assert "do not state anything about Zab" in answer.text


def test_some_supported_quotes_make_a_partly_answered_status():
    refs = [
        reference(1, 1, "Raft uses randomized election timeouts of 150-300ms in its evaluation."),
        reference(2, 2, "Paxos election timeouts depend on the deployment and the network.", title="Paxos"),
    ]
    answer = scored_answer(
        refs, "What election timeouts do Raft and Paxos use?", named_paper_ids=(1, 2), comparison=True
    )
    assert answer.status == Status.PARTLY_ANSWERED
    assert [s.supported for s in answer.sentences if not s.not_stated] == [True, False]
    # The side no quote states is named (a reader sees which half of the comparison is missing).
    assert [s.text for s in answer.sentences if s.not_stated] == ["The passages quoted from Paxos do not state it."]
    assert answer.text.endswith("The passages quoted from Paxos do not state it.")


GFS_BIGTABLE = ((4, "GFS"), (5, "Bigtable"))
GFS_BIGTABLE_TERMS = ("gfs", "bigtable", "depend")


def test_a_passage_relating_named_papers_states_the_relation_only_where_it_names_another():
    refs = [
        reference(1, 4, "GFS provides a location independent namespace for load balance.", title="GFS"),
        reference(2, 4, "GFS client code may break a read into multiple RPCs.", title="GFS"),
        reference(
            3, 5, "Bigtable uses the distributed Google File System (GFS) to store log and data files.", "Bigtable"
        ),
        reference(4, 5, "Bigtable keeps its data in immutable SSTable files.", title="Bigtable"),
    ]
    answer = relation_answer(refs, "How do GFS and Bigtable depend on each other?", GFS_BIGTABLE, GFS_BIGTABLE_TERMS)
    # Bigtable's quote names GFS: it states the relation for both papers, and GFS's own sentences,
    # which never name Bigtable, are not quoted beside it.
    assert answer.status == Status.ANSWERED
    quotes = [s for s in answer.sentences if not s.not_stated]
    assert "Google File System (GFS)" in quotes[0].text and quotes[0].supported
    assert all(s.supported for s in quotes)
    assert "GFS provides" not in answer.text and "GFS client" not in answer.text
    assert "do not state it" not in answer.text


def test_a_relation_no_quote_states_is_said_of_each_related_paper():
    refs = [
        reference(1, 4, "GFS provides a location independent namespace for load balance.", title="GFS"),
        reference(2, 5, "Bigtable keeps its data in immutable SSTable files.", title="Bigtable"),
    ]
    answer = relation_answer(refs, "How do GFS and Bigtable depend on each other?", GFS_BIGTABLE, GFS_BIGTABLE_TERMS)
    assert answer.status == Status.NOT_STATED
    assert not any(s.supported for s in answer.sentences if not s.not_stated)


def test_a_table_row_answers_with_its_page():
    pages = extract_text(shared_case("results-table.pdf")).pages
    refs = [reference(1, 1, pages[0], title="Benchmark Results for Entity Linkers", page=1)]
    answer = extractive_answer("What is the F1 of the Marlin system?", refs)
    assert "“Marlin 0.850 0.760 0.802” [1]" in answer.text
    assert answer.status == Status.ANSWERED


def test_a_one_line_erratum_is_quoted():
    pages = extract_text(shared_case("one-line-erratum.pdf")).pages
    answer = extractive_answer("What is the quorum size for n = 7?", [reference(1, 1, pages[0], page=1)])
    assert "“Erratum: in Table 2 the quorum size for n = 7 is 4, not 5.” [1]" in answer.text
    assert answer.status == Status.ANSWERED


def test_a_cjk_passage_is_quoted_never_not_covered():
    text = "本文提出一种新的共识算法。领导者每隔五十毫秒发送一次心跳。"
    answer = extractive_answer("领导者多久发送一次心跳\uff1f", [reference(1, 1, text, title="共识")])
    assert "[1]" in answer.text
    assert "“领导者每隔五十毫秒发送一次心跳。” [1]" in answer.text
    assert REFUSAL not in answer.text


def test_a_short_passage_with_a_year_is_prose_not_a_reference_list():
    text = (
        "Volcanic ash and aviation. The Eyjafjallajokull eruption in 2010 injected ash to an altitude of "
        "9 kilometres, closing European airspace for six days."
    )
    answer = extractive_answer("What altitude did the volcanic ash reach in 2010?", [reference(1, 1, text)])
    assert "injected ash to an altitude of 9 kilometres" in answer.text
    assert answer.status == Status.ANSWERED


def test_a_reference_list_is_never_quoted_and_no_empty_related_list_is_shown():
    bibliography = "\n".join(
        f"[{n}] A. Author. A study of consensus, part {n}. In Proc. OSDI, pages 1-14, 20{n:02d}." for n in range(1, 7)
    )
    answer = extractive_answer("How do leaders get elected?", [reference(1, 1, bibliography)])
    assert "A study of consensus" not in answer.text
    assert "Related passages" not in answer.text
    assert answer.status == Status.NOT_STATED


def test_a_passage_without_a_quotable_sentence_is_still_quoted_not_refused():
    answer = extractive_answer("what about the glyph soup", [reference(1, 1, "x1 y2 z3 glyph soup q")])
    assert "[1]" in answer.text
    assert REFUSAL not in answer.text


# --- through the service --------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_without_a_chat_model_the_project_answers_extractively_from_several_papers(indexed_project, alice):
    answer = answer_question(
        project=indexed_project, user=alice, question="How does Raft elect a leader, and how does Paxos choose a value?"
    )
    assert answer.extractive
    assert {ref.title for ref in answer.references} == {"Raft", "Paxos"}
    for ref in answer.references:
        assert f"[{ref.n}]" in answer.text
    assert answer.status in {"answered", "partly_answered"}


@pytest.mark.django_db(transaction=True)
def test_a_name_the_quoted_papers_prose_holds_outside_the_passages_is_not_missing(alice, indexed_paper):
    pages = [
        "Patrick Hunt, Yahoo! Grid. We describe a coordination kernel for distributed applications.",
        "For these experiments, we configured the servers to have a maximum of 2,000 total requests in process.",
        "References. [4] GRAY, J. Sort benchmark home page. http://research.microsoft.com/barc/SortBenchmark/",
    ]
    paper = indexed_paper(alice, pages, title="A coordination kernel")
    passage = [reference(1, paper.pk, pages[1], title=paper.title, page=2)]

    def asked(name):
        question = f"In the {name} coordination kernel's benchmarks, what cap on total requests were servers set to?"
        return extractive_answer(question, passage, papers=[paper])

    yahoo = asked("Yahoo!")
    assert yahoo.status == Status.ANSWERED and "2,000 total requests" in yahoo.text
    # A name in a web address of a reference list is no mention: the answer says it is not stated.
    microsoft = asked("Microsoft")
    assert microsoft.status == Status.NOT_STATED and "Microsoft" in microsoft.text
    # Without the papers to search, a name no passage holds is missing, as before.
    assert (
        extractive_answer(
            "In the Yahoo! coordination kernel's benchmarks, what cap on total requests were servers set to?", passage
        ).status
        == Status.NOT_STATED
    )


def test_a_name_of_hyphenated_names_is_there_when_most_of_its_names_are():
    text = "The famous result of Fischer, Lynch, and Patterson implies that a reliable algorithm must use randomness."
    question = "Given the Fischer-Lynch-Paterson result, what must a reliable algorithm use?"
    answer = extractive_answer(question, [reference(1, 1, text, title="Paxos Made Simple")])
    assert answer.status == Status.ANSWERED
    assert (
        extractive_answer(
            "Given the Fischer-Smith-Jones result, what must a reliable algorithm use?",
            [reference(1, 1, text, title="Paxos Made Simple")],
        ).status
        == Status.NOT_STATED
    )


@pytest.mark.django_db(transaction=True)
def test_a_question_naming_a_paper_none_of_whose_passages_qualifies_is_not_stated_of_that_paper(alice, indexed_paper):
    from projects.services import add_papers_to_project, create_project

    project = create_project(owner=alice, name="Broadcast")
    pages = ["Atomic broadcast delivers messages in the same order to every replica of the service."]
    add_papers_to_project(project=project, papers=[indexed_paper(alice, pages, title="Zab")], user=alice)
    answer = answer_question(project=project, user=alice, question="Which bakery in Lisbon sponsored Zab?")
    # The project holds the paper, so not "The papers in this project don't cover this question".
    assert answer.text == (
        "No passage of \u201cZab\u201d states an answer to \u201cWhich bakery in Lisbon sponsored Zab?\u201d: "
        "none was relevant enough to quote."
    )
    assert answer.references == []
    assert answer.status == "not_stated"


@pytest.mark.django_db(transaction=True)
def test_a_question_about_a_paper_the_project_does_not_hold_says_so_instead_of_quoting_others(alice, indexed_paper):
    from projects.services import add_papers_to_project, create_project

    project = create_project(owner=alice, name="Locks")
    pages = ["The lock service stores small files. Each chunk of a file is 256 KB, and the cell holds five replicas."]
    add_papers_to_project(project=project, papers=[indexed_paper(alice, pages, title="Chubby")], user=alice)
    answer = answer_question(project=project, user=alice, question="How big is a chunk in the GFS paper?")
    assert answer.text == ABSENT_PAPER.format(name="GFS")  # no "Did you mean ...?"
    assert "[1]" not in answer.text
    assert answer.status == "not_stated"
    # The paper the project holds is answered from as before.
    answer = answer_question(project=project, user=alice, question="How big is a chunk in the Chubby paper?")
    assert "256 KB" in answer.text
    # A name spelt close to the paper's is refused with the name it is close to; GFS is close to none.
    answer = answer_question(project=project, user=alice, question="How big is a chunk in the Chuby paper?")
    assert answer.text == ABSENT_PAPER.format(name="Chuby") + " Did you mean \u201cChubby\u201d?"
    assert answer.status == "not_stated"


@pytest.mark.django_db(transaction=True)
def test_the_other_paper_among_several_is_asked_about_not_guessed(alice, indexed_paper):
    from projects.services import add_papers_to_project, create_project

    project = create_project(owner=alice, name="Consensus")
    papers = [
        indexed_paper(alice, [f"{name} elects a leader with randomized timeouts of {ms} ms."], title=name)
        for name, ms in (("Raft", 150), ("Zab", 200), ("Viewstamped", 300))
    ]
    add_papers_to_project(project=project, papers=papers, user=alice)
    first = answer_question(project=project, user=alice, question="How does Raft elect a leader?", chat=True)
    assert "150 ms" in first.text
    answer = answer_question(project=project, user=alice, question="And the other paper?", chat=True)
    assert answer.text in {
        WHICH_OTHER_PAPER.format(papers=f"\u201c{a}\u201d and \u201c{b}\u201d")
        for a, b in (("Zab", "Viewstamped"), ("Viewstamped", "Zab"))
    }
    assert answer.status == "not_stated"


@pytest.mark.django_db(transaction=True)
def test_the_other_paper_in_a_project_of_one_paper_is_said_not_to_exist(alice, indexed_paper):
    from projects.services import add_papers_to_project, create_project

    project = create_project(owner=alice, name="Only Raft")
    paper = indexed_paper(alice, ["Raft elects a leader with randomized timeouts of 150 ms."], title="Raft")
    add_papers_to_project(project=project, papers=[paper], user=alice)
    answer_question(project=project, user=alice, question="How does Raft elect a leader?", chat=True)
    answer = answer_question(project=project, user=alice, question="And the other paper?", chat=True)
    assert answer.text == NO_OTHER_PAPER.format(title="Raft")
    assert answer.status == "not_stated"


@pytest.mark.django_db(transaction=True)
def test_without_a_chat_model_an_unrelated_question_is_refused_without_citations(indexed_project, alice):
    answer = answer_question(project=indexed_project, user=alice, question="Best sourdough hydration for rye bread?")
    assert answer.text == REFUSAL
    assert answer.references == []
    assert answer.status == "not_stated"


@pytest.mark.django_db(transaction=True)
def test_an_empty_project_says_it_has_no_papers(alice, chunk_store):
    from chat.models import ChatMessage
    from projects.services import create_project

    project = create_project(owner=alice, name="Empty")
    answer = answer_question(project=project, user=alice, question="What chunk size does GFS use?", chat=True)
    assert answer.text == NO_PAPERS
    assert answer.status == "no_papers"
    assert ChatMessage.objects.filter(role="assistant").get().status == "no_papers"


def test_without_the_full_analysis_papers_named_by_title_word_or_by_their_own_text_are_found():
    titles = {
        1: "In Search of an Understandable Consensus Algorithm",
        2: "Paxos Made Simple",
        3: "The Google File System",
    }
    texts = {1: "Raft elects a leader. Raft uses terms. In Raft, Paxos is compared.", 2: "Paxos chooses.", 3: "GFS"}
    analysis = analysis_for("How does Raft elect a leader, and how does Paxos choose a value?", titles, texts)
    assert set(analysis.named_paper_ids) == {1, 2}
    assert analysis.comparison
    assert analysis_for("What chunk size does GFS use?", titles, texts).named_paper_ids == (3,)


def test_a_second_quote_from_the_same_paper_must_also_state_the_fact():
    refs = [
        reference(
            1,
            1,
            "The fanout parameter controls how many peers a node contacts; we use a fanout of three. "
            "Journal of Overlay Networks, accepted manuscript, licensed for personal use only by the authors.",
        )
    ]
    answer = scored_answer(refs, "What fanout do the authors use?")
    assert answer.text.count("“") == 1
    assert "we use a fanout of three" in answer.text
    assert answer.status == Status.ANSWERED


# --- first mentions, definitions, entities, more quotes -------------------------------------------


def test_the_sentence_that_first_names_the_asked_thing_beats_later_uses_of_it():
    refs = [
        reference(
            1,
            1,
            "Users often have a map function that produces many repeated keys. "
            "We allow the user to specify an optional Combiner function that does partial merging of this data. "
            "The only difference between a reduce function and a combiner function is how the library handles "
            "the output of the function. "
            "The output of a combiner function is written to an intermediate file.",
            title="MapReduce",
        )
    ]
    analysis = analysis_for("What does the Combiner function do?")
    candidates = candidate_sentences(refs)
    candidates += candidate_windows(candidates)
    # The later sentences echo the question more closely; the first mention still wins.
    cosines = np.array([0.6 if "only difference" in c.text else 0.5 for c in candidates])
    answer = compose_answer(score_candidates(candidates, analysis, cosines), analysis)
    first_quote = answer.sentences[0].text
    assert "partial merging" in first_quote


def test_a_first_mention_counts_for_less_when_its_term_is_in_every_candidate():
    # Every passage's first "node" introduces nothing; the first "tokens" introduces the asked thing.
    refs = [
        reference(1, 1, "A node joins the ring by contacting a seed node. Each node gossips with one peer a second."),
        reference(2, 1, "Every node runs the same code. Several tokens are given to each node."),
    ]
    analysis = analysis_for("Why is each node given several tokens?")
    candidates = candidate_sentences(refs)
    scored = {s.candidate.text: s for s in score_candidates(candidates, analysis, np.full(len(candidates), 0.5))}
    common = scored["Every node runs the same code."]
    rare = scored["Several tokens are given to each node."]
    assert 0 < common.type_match < rare.type_match
    assert rare.score > common.score


def test_an_apposition_defines_the_name_it_follows():
    refs = [
        reference(
            1,
            1,
            "Wayfinder rebuilds its routing table from tile manifests after a restart. A separate routing "
            "service, Wayfinder, maintains the mapping from series to storage nodes.",
            title="Tessellate",
        )
    ]
    answer = scored_answer(refs, "What is Wayfinder?")
    assert answer.status == Status.ANSWERED
    assert "A separate routing service, Wayfinder," in answer.sentences[0].text


def test_a_definition_question_prefers_the_sentence_defining_the_term():
    refs = [
        reference(
            1,
            1,
            "More specifically, Zab guarantees that changes broadcast by a leader are delivered in the order "
            "they were sent. The leader executes the request and broadcasts the change through Zab [ref 24], "
            "an atomic broadcast protocol.",
            title="ZooKeeper",
        )
    ]
    answer = scored_answer(refs, "What is Zab?")
    assert "atomic broadcast protocol" in answer.sentences[0].text


def test_an_entity_question_is_answered_by_a_name_without_the_category_word():
    refs = [
        reference(
            1,
            1,
            "We use SCIENCEPARSE to extract title and authors from each PDF. We then use GROBID to process each PDF "
            "and its citations.",
            title="S2ORC",
        )
    ]
    answer = scored_answer(refs, "Which tools does S2ORC use to extract text and metadata from PDFs?")
    assert answer.status == Status.ANSWERED
    assert "GROBID" in answer.text or "SCIENCEPARSE" in answer.text
    # The category word without a name ("tools and tasks") states no tool.
    refs = [reference(1, 1, "We hope this resource will help research on tools and tasks for text mining.", "S2ORC")]
    answer = scored_answer(refs, "What tools does S2ORC use to parse PDFs?")
    assert answer.status == Status.NOT_STATED


def test_the_best_paper_may_give_up_to_three_quotes_that_do_not_overlap():
    refs = [
        reference(
            1,
            1,
            "A leader is elected when a candidate wins an election with votes from a majority. "
            "A server that times out starts an election when it hears from no leader for a term. "
            "The leader of an election sends periodic heartbeats when it has won, to keep its authority. "
            "Followers vote when asked for at most one leader candidate per term in an election.",
        )
    ]
    answer = scored_answer(
        refs,
        "How is a leader elected in an election?",
        dense=lambda c: [0.45 if s.text.startswith("A leader is") else 0.8 for s in c],
    )
    quotes = [s for s in answer.sentences if s.citations]
    assert 2 <= len(quotes) <= 3
    assert len({q.text for q in quotes}) == len(quotes)


def test_a_name_two_papers_share_quotes_only_the_one_with_close_evidence():
    refs = [
        reference(1, 1, "A distinguished learner informs the other learners when a value has been chosen.", "Simple"),
        reference(2, 2, "We thank the reviewers of this draft for their comments on the text.", "Complex"),
    ]
    answer = scored_answer(
        refs,
        "Why would acceptors send their acceptances to a distinguished learner?",
        named_paper_ids=(1, 2),
        dense=lambda c: [0.8 if "learner" in s.text else 0.1 for s in c],
    )
    assert "[1]" in answer.text
    assert "[2]" not in answer.text


def test_comparing_the_two_papers_of_a_two_paper_project_with_evidence_from_one_is_partly_answered():
    from chat.question import PaperRef, analyse_question

    papers = [
        PaperRef(1, "Paper Plain: Making Medical Research Papers Approachable", "Tal August"),
        PaperRef(2, "CiteSee: Augmenting Citations in Scientific Papers", "Joseph Chang"),
    ]
    analysis = analyse_question("Compare the sample sizes of the two papers", history=[], papers=papers)
    refs = [reference(1, 1, "We ran a usability study with 24 participants reading two papers.", title="Paper Plain")]
    candidates = candidate_sentences(refs)
    answer = compose_answer(score_candidates(candidates, analysis, np.full(len(candidates), 0.6)), analysis)
    assert "24 participants" in answer.text
    assert answer.status == Status.PARTLY_ANSWERED


@pytest.mark.parametrize(
    ("question", "measure"),
    [
        ("How many seconds does Dynamo take to rebuild a Merkle tree?", "time"),
        ("What range of election timeouts does Raft use?", "time"),
        ("What chunk size does GFS use?", "size"),
        ("How much memory does the master need?", "bytes"),
        ("How much energy does a GFS chunkserver use?", "power"),
        ("How many replicas of each chunk does GFS store?", "count"),
        ("Compare the sample sizes of the two papers", "size"),
        ("How many lapses per test did the nurses have?", ""),
        ("What F1 score does Marlin reach?", ""),
        # How long a thing is: a length, in time or bytes; how much it costs: money.
        ("How long may a Bigtable row key be?", "length"),
        ("How long is a Chubby lease?", "length"),
        ("How long did the sort take?", "time"),
        ("How much does it cost per month to run a ZooKeeper ensemble?", "money"),
        ("What does a chunkserver's failure cost the cluster?", ""),
        # A change: by a factor, a share or an amount in the measure's unit alike.
        ("How much did write buffering lower the 99.9th percentile latency?", ""),
        # How many times a thing happened is a count of its verb; how many times faster, a factor.
        ("How many times was the dataset downloaded in its first month?", "count"),
        ("How many times faster is the new sort?", "share"),
        ("On average, what share of requests timed out?", "share"),
        ("How far behind the leader can a follower be?", "time"),
        ("What did the 300-node test cluster cost to buy?", "money"),
    ],
)
def test_a_quantity_question_says_what_it_measures(question, measure):
    assert asked_measure(question) == measure


def test_how_many_times_a_thing_was_done_is_stated_by_a_count_of_it():
    refs = [
        reference(
            1,
            1,
            "The corpus saw wide adoption. With over 75K dataset downloads in the first month of its release, "
            "it became the canonical resource.",
            title="Corpus",
        ),
        reference(
            2,
            1,
            "The corpus dataset links to MAG, which contained 213M papers at the time of dataset construction, "
            "and to the ACL Anthology, which contained 25k papers at the time of dataset construction.",
            title="Corpus",
        ),
    ]
    answer = scored_answer(refs, "How many times was the corpus downloaded in its first month?")
    assert answer.status == Status.ANSWERED
    assert "75K dataset downloads" in answer.sentences[0].text


def test_a_count_per_something_is_stated_by_a_fractional_rate():
    refs = [reference(1, 1, "Lapses (responses slower than 500 ms) rose from 2.1 to 4.8 per test.", title="Nurses")]
    answer = scored_answer(refs, "How many lapses per test did nurses have?")
    assert answer.status == Status.ANSWERED


def test_a_count_of_people_states_how_many_people_under_any_noun_for_them():
    refs = [
        reference(1, 4, "The field study enrolled 112 office workers across three offices.", title="Glare"),
        reference(2, 5, "We recruited 48 participants from a university campus.", title="Night reading"),
    ]
    answer = scored_answer(
        refs, "How many people took part in the two studies?", named_paper_ids=(4, 5), comparison=True
    )
    assert answer.status == Status.ANSWERED
    assert "112 office workers" in answer.text and "48 participants" in answer.text
    assert "do not state" not in answer.text


def test_a_number_in_the_wrong_unit_does_not_answer_a_quantity_question():
    assert quantity_fit("By default, we store three replicas.", "count") == 0.5
    # A count in words counts when it counts what the question asks about ("people" being any of
    # the nouns for study participants); a label number ("Topic 1", "Study 2") counts nothing.
    replicas = asked_terms("How many replicas does GFS store?")
    assert quantity_fit("By default, we store three replicas.", "count", replicas) == 1.0
    people = asked_terms("How many people took part in the lab study?")
    assert quantity_fit("We recruited a total of ten participants.", "count", people) == 1.0
    assert quantity_fit("We hired twenty Upworkers for the study.", "count", people) == 1.0
    assert quantity_fit("The lab study compared CiteSee with three baselines.", "count", people) == 0.5
    assert quantity_fit("Four of them chose Topic 1 and Study 2.", "count", people) == 0.5
    assert quantity_fit("Each participant (N=10) read four papers.", "count") == 1.0
    assert quantity_fit("Each znode stores a maximum of 1MB of data.", "count") == 0.2
    assert quantity_fit("The master takes 2 seconds.", "bytes") == 0.2
    assert quantity_fit("We chose 64MB.", "size") == 1.0
    assert quantity_fit("The quorum size for n = 7 is 4.", "size") == 1.0
    # A count is a whole number: accuracies of 0.93 and 0.89 count nothing; 16.4B tokens do.
    assert quantity_fit("Paper clustering 0.93 0.89", "count") == 0.2
    assert quantity_fit("The corpus contains 16.4B tokens.", "count") == 1.0
    refs = [reference(1, 1, "Each znode in the tree stores a maximum of 1MB of data by default.", title="ZooKeeper")]
    answer = scored_answer(refs, "What is the maximum number of znodes a ZooKeeper ensemble can store?")
    assert answer.status == Status.NOT_STATED
    assert "Related passages" in answer.text


def test_each_part_of_a_compound_question_gets_its_own_evidence():
    refs = [
        reference(
            1,
            5,
            "Bigtable keeps its data in files of the SSTable format, and SSTables are used throughout the system. "
            "An SSTable is a persistent, ordered and immutable map from keys to values. "
            "Each SSTable holds a sequence of blocks followed by a block index that is loaded into memory. "
            "Because SSTables are never modified after they are written, Bigtable reads them without any locking.",
            title="Bigtable",
        )
    ]
    papers = [PaperRef(5, "Bigtable: A Distributed Storage System for Structured Data", "Fay Chang")]
    analysis = analyse_question("What is an SSTable and why does Bigtable not lock it?", history=(), papers=papers)
    quoted = " ".join(s.text for s in extractive_answer(analysis.query, refs, analysis=analysis).sentences)
    assert "persistent, ordered and immutable map" in quoted
    assert "without any locking" in quoted


def test_a_compound_question_whose_second_part_no_passage_states_is_partly_answered():
    refs = [
        reference(
            1,
            5,
            "An SSTable is a persistent, ordered and immutable map from keys to values. "
            "Each SSTable holds a sequence of blocks followed by a block index that is loaded into memory.",
            title="Bigtable",
        )
    ]
    papers = [PaperRef(5, "Bigtable: A Distributed Storage System for Structured Data", "Fay Chang")]
    question = "What is an SSTable and how many kilowatts does a tablet server consume?"
    analysis = analyse_question(question, history=(), papers=papers)
    assert len(analysis.parts) == 2
    answer = extractive_answer(analysis.query, refs, analysis=analysis)
    assert answer.status == Status.PARTLY_ANSWERED
    assert "persistent, ordered and immutable map" in answer.text
    (gap,) = [s for s in answer.sentences if s.not_stated]
    assert "do not state" in gap.text and "kilowatts" in gap.text
    assert gap.text in answer.text


@pytest.mark.parametrize(
    "text",
    [
        "Copyright 2003 ACM 1-58113-757-5/03/0010 for this article and its copies.",
        "To copy otherwise, to republish, to post on servers or to redistribute to lists, requires permission.",
        "We thank our teammates at the lab for their help with the data on this project.",
        "Finally, we thank the infrastructure team for assisting with data access and storage.",
        "This work was supported in part by a grant from the national science foundation.",
        "The user study would not have been possible without the support of the students of CS 240.",
        "Chris Wilhelm provided feedback on the toolkit's design and implemented faster indexing.",
        "We are grateful to the anonymous reviewers for their careful reading of the draft.",
    ],
)
def test_copyright_notices_and_acknowledgements_are_not_quoted_for_other_questions(text):
    assert candidate_sentences([reference(1, 1, text)]) == []


def test_a_funding_question_is_answered_from_the_acknowledgements():
    refs = [
        reference(
            1,
            2,
            "Tessellate is available as open source under the Apache 2.0 licence. This research was supported "
            "by the National Science Foundation under grant CNS-2107786 and by a gift from Fastly.",
            title="Tessellate",
        )
    ]
    assert asks_about_funding("Who funded the Tessellate work?")
    assert not asks_about_funding("Which storage formats are supported?")
    answer = extractive_answer("Who funded the Tessellate work?", refs)
    assert answer.status == Status.ANSWERED
    assert answer.sentences[0].text.startswith("\u201cThis research was supported by the National Science Foundation")
    # Never evidence: a copyright notice, whatever the question.
    notice = "Copyright 2003 ACM 1-58113-757-5/03/0010 for this article and its copies."
    assert candidate_sentences([reference(1, 1, notice)], acknowledgements=True) == []


def test_a_count_of_people_is_stated_by_any_noun_for_them():
    refs = [
        reference(
            1,
            1,
            "We measured sound levels in 11 classrooms and assessed reading comprehension in 212 children aged 8 to "
            "10 years. Background noise often exceeds the recommended levels.",
            title="Classroom Noise",
        )
    ]
    answer = extractive_answer("How many participants were in the classroom noise study?", refs)
    assert answer.status == Status.ANSWERED
    assert "212 children" in answer.sentences[0].text


@pytest.mark.parametrize(
    "text",
    [
        "The previous sections described how Raft elects leaders.",
        "Section 4 briefly describes the underlying infrastructure.",
        "See §2.5 for details on filtering the papers.",
        "Figure 2 summarizes the algorithm in condensed form for reference.",
        "In this paper, we describe the construction of S2ORC (§2).",
        "Details for these steps are provided below.",
        "We describe each step in the following sections.",
        "The master executes the following steps at startup.",
        "The master executes the following startup steps.",
    ],
)
def test_sentences_about_the_papers_own_sections_and_figures_are_signposts(text):
    assert is_signpost(text)


@pytest.mark.parametrize(
    "text",
    [
        "As described in Section 3, the master grants leases.",
        "Raft elects a leader (Figure 4) with votes.",
        "As described below, the master pings every worker.",
        "The master executes the following steps at startup. (1) The master grabs a unique lock.",
        # How many it announces is a fact: "How many phases does Paxos have?"
        "Putting them together, the algorithm operates in the following two phases.",
        # A figure that closes a sentence stating a result of its own.
        "Participants scored 4.9 points higher on average (the mean score was 25.7); Figure 13 shows each score.",
    ],
)
def test_a_sentence_that_cites_a_section_while_stating_a_fact_is_no_signpost(text):
    assert not is_signpost(text)


def test_a_sentence_about_the_papers_sections_loses_to_the_one_stating_the_fact():
    refs = [
        reference(
            1,
            1,
            "The previous sections described how Raft elects leaders and replicates log entries. "
            "A candidate becomes leader when it receives votes from a majority of the servers in the cluster.",
        )
    ]
    answer = scored_answer(refs, "How does Raft elect leaders?")
    assert "majority of the servers" in answer.sentences[0].text


@pytest.mark.parametrize(
    ("question", "passage"),
    [
        (
            "By how many percent does the lease protocol cut read latency under contention?",
            "Under contention, the lease protocol cuts read latency by 41 percent compared with the baseline.",
        ),
        (
            "At what temperature are the layered oxides synthesised?",
            "We synthesise the layered oxides at 350 degrees Celsius in air for two hours.",
        ),
    ],
)
def test_a_number_in_the_unit_of_the_measure_asked_for_answers_the_question(question, passage):
    answer = scored_answer([reference(1, 1, passage)], question)
    assert answer.status == Status.ANSWERED


def test_a_figure_in_the_asked_unit_must_stand_by_the_words_that_say_which_measure():
    question = "What 99th percentile latency did the random-read benchmark show?"
    passage = (
        "Rebalancing is throttled to reduce the number of tablet movements (a tablet is unavailable for a "
        "short time, typically less than one second, when it is moved), and the benchmark generates load."
    )
    assert scored_answer([reference(1, 1, passage)], question).status == Status.NOT_STATED
    stated = "In the random-read benchmark the 99th percentile latency was 18 ms."
    assert scored_answer([reference(1, 1, stated)], question).status == Status.ANSWERED
    # An asked phrase that names no measure does not narrow it: "for how long" is the time asked.
    hardware = "What hardware was the model pretrained on, and for how long?"
    assert asked_terms(hardware) == ["hardwar"]
    trained = "The model is pretrained from scratch on a single accelerator board for one week."
    assert scored_answer([reference(1, 1, trained)], hardware).status != Status.NOT_STATED


def test_lines_of_code_are_counted_in_the_language_the_code_is_written_in():
    question = "How many lines of code is the tracker backend?"
    frontend = "Around 5,000 lines of TypeScript and ReactJS code were added to the front-end."
    backend = "The backend was implemented in around 1,000 lines of Python using Flask."
    analysis = analysis_for(question)
    assert counts_asked_thing(backend, question)
    assert states_fact(backend, analysis, asked_terms(question))
    answer = scored_answer([reference(1, 1, f"{frontend} {backend}")], question)
    assert answer.text.index("1,000 lines of Python") < answer.text.index("5,000 lines")
    # Lines of a log are no lines of Python.
    assert not counts_asked_thing(backend, "How many lines of log does the backend write?")


def test_a_count_of_papers_qualified_by_a_name_counts_papers():
    assert asked_terms("How many Zorblax papers have DOIs?") == ["zorblax", "paper"]
    # The paper named is the one the passages come from: its name is no term a row must repeat.
    question = "How many Zorblax papers have DOIs?"
    analysis = analyse_question(question, history=(), papers=[PaperRef(1, "Zorblax: An Open Corpus", "Kim Lo")])
    refs = [
        reference(1, 1, "Zorblax links citations to 81.1M paper nodes.", title="Zorblax: An Open Corpus"),
        reference(1, 5, "Total papers 81.1M\nPapers w/ DOIs 52.2M (64.3%)", title="Zorblax: An Open Corpus"),
    ]
    answer = extractive_answer(analysis.query, refs, analysis=analysis)
    assert answer.status == Status.ANSWERED
    assert "52.2M" in answer.text


def test_a_comparison_naming_a_thing_no_passage_mentions_answers_the_rest_and_says_what_is_missing():
    refs = [
        reference(1, 1, "Raft uses randomized election timeouts to ensure that split votes are rare.", title="Raft"),
        reference(2, 2, "Chubby replicas elect a master when their master leases expire.", title="Chubby"),
    ]
    papers = [
        PaperRef(1, "In Search of an Understandable Consensus Algorithm (Raft)", "Diego Ongaro"),
        PaperRef(2, "The Chubby lock service", "Mike Burrows"),
    ]
    question = "How do Raft, Zebra-Paxos and Chubby each handle leader election?"
    analysis = analyse_question(question, history=(), papers=papers)
    answer = extractive_answer(analysis.query, refs, analysis=analysis)
    assert answer.status == Status.PARTLY_ANSWERED
    assert "randomized election timeouts" in answer.text and "master leases expire" in answer.text
    assert "do not mention Zebra-Paxos" in answer.text


def test_a_question_about_one_thing_no_passage_mentions_is_not_stated():
    refs = [
        reference(1, 1, "Bigtable tablet servers are written as a library linked into every client.", title="Bigtable")
    ]
    papers = [PaperRef(1, "Bigtable: A Distributed Storage System for Structured Data", "Fay Chang")]
    analysis = analyse_question(
        "Which Rust library does Bigtable use for its tablet servers?", history=(), papers=papers
    )
    assert extractive_answer(analysis.query, refs, analysis=analysis).status == Status.NOT_STATED


def test_a_reference_list_entry_with_many_authors_is_never_quoted():
    entry = (
        "Feldman, Joseph Gorney, David Gra-\nham, Fangzhou Hu, Regan Huff, Daniel King, Se-\n"
        "bastian Kohlmeier, Bailey Kuehl, Michael Langan,\nDaniel Lin, Haokun Liu, Kyle Lo, Jaron Lochner,\n"
        "Kelsey MacMillan, Tyler Murray, Chris Newell,\nSmita Rao, Shaurya Rohatgi, Paul Sayre, Zejiang\n"
        "Zuylen, and Daniel S. Weld. 2023. The Semantic\nScholar Open Data Platform. ArXiv, abs/2301.10140."
    )
    assert candidate_sentences([reference(1, 1, entry)]) == []
    prose = (
        "Bigtable is used by more than sixty Google products and projects, including Google Analytics,\n"
        "Google Finance, Orkut, Personalized Search, Writely, and Google Earth. These products use\n"
        "Bigtable for a variety of demanding workloads, which range from throughput-oriented batch\n"
        "processing jobs to latency-sensitive serving of data to end users in 2006 and later."
    )
    assert candidate_sentences([reference(1, 1, prose)])


@pytest.mark.parametrize(
    ("question", "passage", "status"),
    [
        (
            "What is the largest number of open sessions that one lock server has been seen to hold?",
            "Sessions are cheap, so a server must hold more than one might expect; we have seen "
            "40,000 open sessions held by a single lock server at peak.",
            Status.ANSWERED,
        ),
        (
            "On average, what share of server hours was affected by lock service outages?",
            "The average percentage of server hours during which some data was unavailable because of "
            "lock service outages was 0.0031%.",
            Status.ANSWERED,
        ),
        (
            "What example value does the author give for the lease period a leader requests?",
            "For example, the lease period could be \u201c8 seconds.\u201d Until it expires, no acceptor "
            "adopts a higher ballot.",
            Status.ANSWERED,
        ),
        (
            "What did the 300-node test cluster cost to buy?",
            "All of the benchmarks ran on a test cluster of approximately 300 nodes with two disks each.",
            Status.NOT_STATED,
        ),
        (
            "How far behind the leader can a standby replica be?",
            "Standbys are not mirrors: they may lag the leader slightly, typically fractions of a second.",
            Status.ANSWERED,
        ),
        (
            "What is the maximum number of open handles one lock client may hold?",
            "handles open 31k",
            Status.NOT_STATED,
        ),
        (
            "What maximum file size did the team introduce after one service stored large files?",
            "We introduced a limit on file size (128kBytes), and moved the service elsewhere.",
            Status.ANSWERED,
        ),
        # How fast a thing is done is a rate.
        (
            "How fast do the compression passes of Raft encode data?",
            "Both compression passes are very fast: they encode at 100-200 MB/s on modern machines.",
            Status.ANSWERED,
        ),
        # What a thing is called is a name the question does not say.
        (
            "What is the consensus algorithm at the heart of Raft called?",
            "At its heart is a consensus algorithm, the \u201csynod\u201d algorithm of [5].",
            Status.ANSWERED,
        ),
        (
            "What is the consensus algorithm at the heart of Raft called?",
            "The Raft consensus algorithm is precisely the one described above, sent as messages.",
            Status.NOT_STATED,
        ),
        (
            "What is the name of the step that updates stale replicas?",
            "This process is called read repair because it repairs stale replicas.",
            Status.ANSWERED,
        ),
        # An implementation language is a named language with its code.
        (
            "What implementation languages did the Raft library use?",
            "All these components are implemented in Java.",
            Status.ANSWERED,
        ),
        (
            "What implementation languages did the Raft library use?",
            "This paper presents the design and implementation of the Raft library.",
            Status.NOT_STATED,
        ),
    ],
)
def test_whether_a_passage_states_the_fact_asked_decides_the_status(question, passage, status):
    assert scored_answer([reference(1, 1, passage)], question).status == status


@pytest.mark.parametrize(
    ("passage", "status"),
    [
        ("We also release CorpusBERT to serve as a baseline for research.", Status.NOT_STATED),
        ("The corpus is released under the CC BY-NC 2.0 license, with attribution.", Status.ANSWERED),
        ("The corpus is released under the open non-commercial ODC-By terms.", Status.ANSWERED),
    ],
)
def test_a_name_answers_a_question_ending_in_a_preposition_only_after_that_preposition(passage, status):
    papers = [PaperRef(1, "CorpusX: An Open Corpus of Papers", "Ada Lovelace")]
    analysis = analyse_question("Which licence is CorpusX released under?", history=(), papers=papers)
    refs = [reference(1, 1, passage.replace("the corpus", "CorpusX"), title="CorpusX")]
    # The British "licence" of the question meets the American "license" of the passage.
    assert extractive_answer(analysis.query, refs, analysis=analysis).status == status


def test_a_modifier_that_says_no_kind_of_the_asked_thing_need_not_be_repeated():
    refs = [reference(1, 1, "The front-end of the viewer was built on the open-source PaperLens codebase [27].")]
    question = "Which existing open-source codebase was the viewer's front-end built on?"
    assert scored_answer(refs, question).status == Status.ANSWERED


def test_a_word_cut_at_a_column_break_after_a_stop_starts_no_quote():
    text = (
        "We report the mean of five runs. Others do not report the number of runs.\n"
        "tecting inline citations using a corpus of 5k papers, and found the parser to have an F1 of 0.89."
    )
    quoted = [c.text for c in candidate_sentences([reference(1, 1, text)])]
    assert "Others do not report the number of runs." in quoted
    assert not any("tecting" in q for q in quoted)
    # A lower-case name the paper says elsewhere is no cut word.
    named = "The library magelib provides data classes for documents. It ships Data Classes. magelib adds a layer."
    assert any("Data Classes. magelib adds" in c.text for c in candidate_sentences([reference(1, 1, named)]))


def test_a_figure_naming_neither_of_two_things_it_is_asked_of_does_not_state_it():
    from chat.extractive import analysis_for, states_fact

    question = "What is the F1 of NightBERT on ChemSet?"
    analysis, asked = analysis_for(question), asked_terms(question)
    other = (
        "Smith et al. (2018) report ParseKit as the best among 10 out-of-the-box tools for parsing "
        "bibliographies, also achieving an F1 of 0.89 in an evaluation corpus of 9.5k papers."
    )
    assert not states_fact(other, analysis, asked)
    assert states_fact("On ChemSet, NightBERT reaches an F1 of 84.6.", analysis, asked)
    # Names of a lead-in that sets the scene say where, not of what the figure is.
    scene = "In the trace of a server used by Acme's Fetch Service, what read:write ratio did it see at peak?"
    peak = "At peak, the read:write ratio varies between 10:1 and 100:1."
    assert states_fact(peak, analysis_for(scene), asked_terms(scene))


def test_a_name_of_several_words_is_one_of_the_things_a_figure_is_asked_of():
    from chat.extractive import states_fact

    # "Moon Map" is one name beside the paper's own: a figure need not repeat it.
    question = "How much data does the raw imagery table in Moon Map's Tabler preprocessing pipeline hold?"
    analysis = analyse_question(question, history=(), papers=[PaperRef(2, "Tabler: A Storage System")])
    stated = "This table contains approximately 70 terabytes of data and therefore is served from disk."
    assert states_fact(stated, analysis, asked_terms(question))
    # Names that own nothing are two things asked of: a tablet's size is no Block Cache's.
    question = "What is the default size, in megabytes, of the Block Cache on a Tabler tablet server?"
    analysis = analyse_question(question, history=(), papers=[PaperRef(2, "Tabler: A Storage System")])
    tablets = "As a table grows, it is split into multiple tablets, each approximately 100-200 MB in size by default."
    assert not states_fact(tablets, analysis, asked_terms(question))


def test_in_a_comparison_a_figure_need_not_name_the_other_sides_names():
    from chat.extractive import analysis_for, states_fact

    question = "What input rates are reported for the Sorter sort benchmark and for Tabler's Moon Map pipeline?"
    titles = {1: "Sorter: Simplified Data Processing", 2: "Tabler: A Storage System"}
    analysis, asked = analysis_for(question, titles), asked_terms(question)
    assert analysis.comparison
    assert states_fact("The input rate peaks at about 13 GB/s and dies off quickly.", analysis, asked)


def test_money_is_a_measure_with_currency_units():
    assert quantities("each participant was compensated $35 USD") == [Quantity(35, 35, "$")]
    assert asked_measure("How much does a GFS chunkserver cost in dollars?") == "money"
    refs = [reference(1, 1, "Each chunkserver stores 64 MB chunks as plain Linux files on local disks.", title="GFS")]
    assert scored_answer(refs, "How much does a GFS chunkserver cost in dollars?").status == Status.NOT_STATED


def test_a_why_question_is_answered_by_a_reason_not_by_naming_the_thing():
    refs = [
        reference(
            1,
            1,
            "Quorbits are small rings of three servers that share one log. "
            "Quorbits are used because they tolerate the failure of one server without a new election.",
            title="Zorblax",
        )
    ]
    answer = scored_answer(refs, "Why are quorbits used?")
    assert "because they tolerate" in answer.text
    naming_only = [reference(1, 1, "Quorbits are small rings of three servers that share one log.", title="Zorblax")]
    assert scored_answer(naming_only, "Why are quorbits used?").status == Status.NOT_STATED
    # A follow-up "Why?" rewritten as "..., and why?" asks for a reason too.
    assert scored_answer(naming_only, "What are quorbits used for, and why?").status == Status.NOT_STATED
    # "added to" a place is no purpose ("added to balance the load" is).
    placed = [reference(1, 1, "When a quorbit is added to the ring, it is given three positions.", title="Zorblax")]
    assert scored_answer(placed, "Why is a quorbit given three positions?").status == Status.NOT_STATED
    purpose = [reference(1, 1, "Each quorbit is added to balance the load across the ring.", title="Zorblax")]
    assert scored_answer(purpose, "Why is a quorbit added?").status == Status.ANSWERED
    # A consequence is a reason too: "... are idempotent so this causes no harm".
    consequence = [reference(1, 1, "Fortunately, quorbit RPCs are idempotent so this causes no harm.", title="Zorblax")]
    assert scored_answer(consequence, "Why is a repeated quorbit RPC harmless?").status == Status.ANSWERED


def test_a_sentence_pointing_back_is_quoted_with_the_sentence_before_it():
    text = (
        "Ring positions are drawn at random. Random positions leave some nodes with far more keys than others. "
        "To address these issues, Zorblax gives every node several positions on the ring."
    )
    answer = scored_answer(
        [reference(1, 1, text, title="Zorblax")], "Why does Zorblax give every node several positions?"
    )
    assert (
        "“Random positions leave some nodes with far more keys than others. To address these issues, Zorblax "
        "gives every node several positions on the ring.” [1]"
    ) in answer.text
    # A sentence that stands alone is quoted alone.
    alone = "Ring positions are drawn at random. Zorblax gives every node several positions because it spreads keys."
    answer = scored_answer(
        [reference(1, 1, alone, title="Zorblax")], "Why does Zorblax give every node several positions?"
    )
    assert "“Zorblax gives every node several positions because it spreads keys.” [1]" in answer.text


def test_a_what_hardware_question_is_stated_by_the_named_hardware():
    text = "Like SciBERT, Zorbert is pretrained from scratch with the BERT code on a single TPU v3-8 for one week."
    answer = scored_answer([reference(1, 1, text, title="Zorbert")], "What hardware was Zorbert pretrained on?")
    assert answer.status == Status.ANSWERED
    assert "TPU v3-8" in answer.text


def test_a_which_question_is_not_stated_by_another_kind_of_the_thing_it_asks_for():
    question = "Which encryption algorithm does Zorblax use?"
    other_kind = [reference(1, 1, "Zorblax relies on distributed algorithms taken from Frangipani.", title="Z")]
    assert scored_answer(other_kind, question).status == Status.NOT_STATED
    asked_kind = [reference(1, 1, "Zorblax uses the AES encryption algorithm for stored data.", title="Z")]
    assert scored_answer(asked_kind, question).status == Status.ANSWERED


def test_a_what_or_which_question_is_stated_only_by_a_sentence_naming_the_thing_it_asks_for():
    refs = [
        reference(
            1,
            1,
            "We have written wrappers that allow a Bigtable to be used as an input source for MapReduce jobs. "
            "Annotators labelled every sentence and their agreement was measured on a held-out sample.",
            title="Bigtable",
        )
    ]
    for question in ("Under which open-source license is Bigtable released?", "What is the annotator agreement kappa?"):
        assert scored_answer(refs, question).status == Status.NOT_STATED, question
    licensed = [reference(1, 1, "The Bigtable client library is released under the Apache license.", title="Bigtable")]
    answer = scored_answer(licensed, "Under which open-source license is Bigtable released?")
    assert answer.status == Status.ANSWERED and "Apache license" in answer.text


def test_a_mechanism_is_stated_by_what_is_used_for_a_purpose():
    refs = [
        reference(
            1,
            1,
            "Most clients never communicate with the master about tablet locations at all. "
            "We use a three-level hierarchy analogous to a B+-tree to store tablet location information.",
            title="Bigtable",
        )
    ]
    analysis = analysis_for("How does Bigtable locate its tablets?")
    candidates = candidate_sentences(refs)
    by_text = {s.candidate.text: s for s in score_candidates(candidates, analysis, np.full(len(candidates), 0.5))}
    echo, means = (by_text[c.text] for c in candidates)
    assert means.type_match > echo.type_match
    assert means.score > echo.score


def test_a_b_glued_to_a_number_counts_billions_not_bytes():
    assert [q.unit for q in quantities("approximately 16.5B tokens of full body text")] == [""]
    assert [q.unit for q in quantities("a 64 B header and 64 MB chunks")] == ["b", "mb"]
    refs = [reference(1, 1, "We estimate that the corpus consists of approximately 16.5B tokens of text.", "S2ORC")]
    assert scored_answer(refs, "How many gigabytes does the corpus take on disk?").status == Status.NOT_STATED


def test_byte_units_spelled_out_are_units_and_ask_for_bytes():
    assert quantities("the release takes 1.2 terabytes") == [Quantity(1.2, 1.2, "tb")]
    assert asked_measure("How large is the S2ORC download in terabytes?") == "bytes"
    assert asked_measure("How big is the dump in GB?") == "bytes"
    refs = [reference(1, 1, "We estimate that the corpus consists of approximately 16.5B tokens of text.", "S2ORC")]
    assert scored_answer(refs, "How large is the S2ORC download in terabytes?").status == Status.NOT_STATED
    refs = [reference(1, 1, "The full S2ORC download is 2.1 terabytes of compressed JSON lines.", "S2ORC")]
    assert scored_answer(refs, "How large is the S2ORC download in terabytes?").status != Status.NOT_STATED


def test_a_quoted_table_row_comes_with_its_header_line():
    refs = [
        reference(
            1,
            1,
            "Table 3: Record linkage results on the CORA benchmark.\n"
            "System Precision Recall F1\n"
            "Marlin 0.850 0.760 0.802\n"
            "Dedupe 0.812 0.701 0.752",
            title="Marlin",
        )
    ]
    answer = scored_answer(refs, "What F1 does Dedupe reach?")
    assert "“System Precision Recall F1” [1]\n  “Dedupe 0.812 0.701 0.752” [1]" in answer.text


@pytest.mark.parametrize(
    ("sent", "asked"),
    [("chunk\x00size?", "chunk size?"), ("How does Raft\x00 elect a leader?", "How does Raft elect a leader?")],
)
def test_a_control_character_in_a_question_separates_words_and_is_never_stored(sent, asked):
    from chat.services import check_question

    assert check_question(sent) == asked


MAPREDUCE_TABLE_1 = (
    "Number of jobs 29,423\n"
    "Average job completion time 634 secs\n"
    "Machine days used 79,186 days\n"
    "Table 1: MapReduce jobs run in August 2004\n"
    "source code management system over time, from 0 in\n"
    "early 2003 to almost 900 separate instances as of late"
)
S2ORC_TABLE_2 = (
    "they are generally of lower quality and are filtered out of the corpus to improve corpus quality.\n"
    "Filter Number of papers\n"
    "No title 20k\n"
    "No authors 0.3M\n"
    "< 100 chars of text 80.0M\n"
    "Not English 15.2M\n"
    "Table 2: Post-processing data quality filters for papers\n"
    "2.6 Linking bibliographies to papers"
)


@pytest.mark.parametrize(
    ("text", "label", "quoted"),
    [
        (
            MAPREDUCE_TABLE_1,
            "Table 1",
            [
                "Number of jobs 29,423",
                "Average job completion time 634 secs",
                "Machine days used 79,186 days",
                "Table 1: MapReduce jobs run in August 2004",
            ],
        ),
        # Counts in thousands and millions ("20k", "0.3M") are cells; the next section's heading is no row.
        (
            S2ORC_TABLE_2,
            "Table 2",
            [
                "Filter Number of papers",
                "No title 20k",
                "No authors 0.3M",
                "< 100 chars of text 80.0M",
                "Not English 15.2M",
                "Table 2: Post-processing data quality filters for papers",
            ],
        ),
        # A single year in parentheses is prose, not a row.
        ("Following Beltagy et al. (2019)\nTable 2: Filters", "Table 2", ["Table 2: Filters"]),
    ],
)
def test_a_table_captioned_under_its_rows_is_quoted_with_them_and_never_with_the_next_columns_prose(
    text, label, quoted
):
    assert [s.text for s in caption_lines([reference(1, 1, text, page=12)], label)] == quoted


def test_sentences_with_known_vectors_are_all_scored_and_only_unknown_ones_are_embedded():
    texts = [f"Tablet server {i} serves a range of rows for the master in the cluster." for i in range(40)]
    candidates = candidate_sentences([reference(1, 1, " ".join(texts))])
    analysis = analyse_question("How do tablet servers serve rows?", history=(), papers=[])
    query = np.ones(4, dtype=np.float32) / 2
    held = {text: query for text in texts[1:]}  # every sentence but the first has a vector
    embedded: list[str] = []

    def embed(batch):
        embedded.extend(batch)
        return np.tile(query, (len(batch), 1))

    cosines = embed_candidates(candidates, analysis, query, embed, known=lambda wanted: held)
    assert len(candidates) > MAX_EMBEDDED
    assert embedded == [texts[0]]
    assert np.allclose(cosines, 1.0)
    without = embed_candidates(candidates, analysis, query, lambda batch: np.tile(query, (len(batch), 1)))
    assert (without == 0).sum() == len(candidates) - MAX_EMBEDDED


@pytest.mark.parametrize(
    ("question", "weaker", "stronger"),
    [
        # An experiment using a system to measure it is no mechanism.
        (
            "How does Raft elect a leader?",
            "We used our Raft implementation to measure the performance of its leader election algorithm.",
            "Raft uses randomized timers to elect leaders, so that split votes are rare.",
        ),
        # A condition and its consequence state a mechanism.
        (
            "How does the coordinator notice that a node has died?",
            "The coordinator simply re-ran the jobs of the unreachable storage nodes.",
            "If no reply arrives from a node within a timeout, the coordinator marks the node as failed.",
        ),
        # When a thing may happen is answered by its condition.
        (
            "When are clients allowed to enter the gate?",
            "For each round, every client first enters all the gates and then leaves them in turn.",
            "Clients can enter the gate when the number of children of the gate node exceeds a threshold.",
        ),
        # What a thing is used for is stated by its use for a purpose.
        (
            "What is TextMiner used for?",
            "Prior to running TextMiner, we filter out PDFs that have more than 50 pages.",
            "We then use TextMiner to process each PDF and extract its paragraphs.",
        ),
        (
            "What does the pipeline use TextMiner for?",
            "Prior to running TextMiner, we filter out PDFs that have more than 50 pages.",
            "We then use TextMiner to process each PDF and extract its paragraphs.",
        ),
    ],
)
def test_the_sentence_of_the_kind_asked_for_fits_the_answer_type_better(question, weaker, stronger):
    candidates = candidate_sentences([reference(1, 1, weaker), reference(2, 1, stronger)])
    analysis = analyse_question(question, history=(), papers=[])
    by_text = {s.candidate.text: s for s in score_candidates(candidates, analysis, np.full(len(candidates), 0.6))}
    assert by_text[weaker].type_match < by_text[stronger].type_match


def test_a_definition_question_whose_quotes_only_mention_the_term_is_partly_answered():
    refs = [
        reference(1, 1, "We then use GROBID to process each PDF and extract its bibliography entries.", "S2ORC"),
        reference(2, 2, "GROBID output is converted to JSON with the parsed sections of every paper.", "S2ORC"),
    ]
    answer = scored_answer(refs, "What is GROBID?")
    assert answer.status == Status.PARTLY_ANSWERED
    assert "The quotes mention GROBID; none says what it is." in answer.text
    refs.append(reference(3, 3, "GROBID is a machine learning library for parsing scholarly PDFs into XML.", "S2ORC"))
    assert scored_answer(refs, "What is GROBID?").status == Status.ANSWERED


def test_a_term_given_as_an_alternative_name_in_parentheses_is_defined():
    text = (
        "Semantic Scholar groups its records into paper clusters for the corpus. In this work, each paper of "
        "interest is actually a collection (or cluster) of highly-similar (but not necessarily identical) documents."
    )
    answer = scored_answer([reference(1, 3, text, "S2ORC")], "What is a paper cluster?")
    assert answer.status == Status.ANSWERED
    assert "a collection (or cluster) of highly-similar" in answer.text


def test_a_list_item_naming_the_term_before_a_colon_defines_it():
    text = (
        "There are two types of znodes that a client can create: Regular: Clients manipulate regular znodes "
        "by creating and deleting them explicitly; Ephemeral: Clients create such znodes, and they either "
        "delete them explicitly, or let the system remove them automatically when the session ends."
    )
    answer = scored_answer([reference(1, 3, text, "ZooKeeper")], "What is an ephemeral znode in ZooKeeper?")
    assert answer.status == Status.ANSWERED


def test_a_figure_for_a_year_no_passage_names_is_not_stated():
    text = "S2ORC contains 380.5M citation links between its 81.1M papers. The corpus was released in 2020."
    answer = extractive_answer("How many citations did S2ORC papers receive in 2023?", [reference(1, 1, text)])
    assert answer.status == Status.NOT_STATED
    assert "do not state anything for 2023" in answer.text
    assert "380.5M citation links" in answer.text  # shown as a related passage

    same_year = extractive_answer("How many citations did S2ORC papers receive in 2020?", [reference(1, 1, text)])
    assert same_year.status != Status.NOT_STATED


# The text layer of a two-column page with a display equation: the subscript "title" of S on lines
# of its own, the equation's symbols and indexes one fragment to a line.
EQUATION_PAGE = """The similarity
score S is computed as the harmonic mean be-
title
tween a Jaccard index and a containment metric:
2 \u00d7 J \u00d7 C
S = (1)
title
J + C
where the Jaccard index J and containment metric
C are computed from the n-grams of the two titles
N and N as:
1 2
|N ∩ N |
1 2
J =
|N \u222a N |
1 2
For each bibliography entry, the bibliography-
paper pair with the highest similarity score above
0.8 is output as the correct link."""


def test_display_math_is_never_quoted_and_the_sentence_introducing_it_is():
    texts = [s.text for s in candidate_sentences([reference(1, 1, EQUATION_PAGE, title="S2ORC")])]
    assert texts == [
        "The similarity score S is computed as the harmonic mean between a Jaccard index and a containment metric:",
        "For each bibliography entry, the bibliography-paper pair with the highest similarity score above 0.8 is "
        "output as the correct link.",
    ]


def test_a_number_stated_as_a_bound_states_the_threshold_asked_for():
    refs = [
        reference(
            1,
            1,
            "For each bibliography entry, the pair with the highest similarity score above 0.8 is output.",
            "S2ORC",
        ),
        reference(
            2, 2, "Each title is normalized and represented by its character 3-grams for the similarity score.", "S2ORC"
        ),
    ]
    answer = scored_answer(refs, "What threshold does the similarity score use?")
    assert answer.status in (Status.ANSWERED, Status.PARTLY_ANSWERED)
    assert [s.supported for s in answer.sentences if "above 0.8" in s.text] == [True]
    without = scored_answer(refs[1:], "What threshold does the similarity score use?")
    assert without.status == Status.NOT_STATED  # "3-grams" is a number, but no bound


def test_a_table_row_with_a_parenthesised_share_answers_a_percentage_question():
    text = (
        "Our PDF coverage is 35.6%, or 28.9M papers.\n"
        "Total papers 81.1M\n"
        "Papers w/ PDF 28.9M (35.6%)\n"
        "Papers w/ DOIs 52.2M (64.3%)\n"
        "Papers w/ ArXiv IDs 1.7M (2.0%)\n"
        "Table 3: Statistics on paper provenance."
    )
    answer = extractive_answer("What percentage of papers have a DOI?", [reference(1, 5, text, page=5)])
    assert "“Papers w/ DOIs 52.2M (64.3%)” [1]" in answer.text


def test_the_papers_title_block_is_never_quoted_as_a_definition():
    text = (
        "S2ORC: The Semantic Scholar Open Research Corpus Kyle Lo Lucy Lu Wang Mark Neumann Daniel S.\n"
        "Weld Allen Institute for Artificial Intelligence\n"
        "We introduce S2ORC, a large corpus of 81.1M English-language academic papers spanning many disciplines."
    )
    refs = [reference(1, 1, text, title="S2ORC: The Semantic Scholar Open Research Corpus")]
    answer = scored_answer(refs, "What is S2ORC?")
    assert "Kyle Lo" not in answer.text
    assert "“We introduce S2ORC, a large corpus of 81.1M" in answer.text


def test_a_bulleted_sentence_with_inline_citations_is_quoted_on_its_own():
    text = (
        "We sentencize the text and remove paragraphs that are too short to use in pretraining.\n"
        "\u2022 Size: The resulting S2ORC pretraining corpus contains 16.4B tokens, nearly five times larger.\n"
        "\u2022 Vocab: Following Beltagy et al. (2019), we construct a cased WordPiece (Wu et al., 2016) "
        "vocabulary of size 31k using 15% of the S2ORC pretraining corpus. The Jaccard index between "
        "the two vocabularies is 0.536."
    )
    texts = [s.text for s in candidate_sentences([reference(1, 5, text)])]
    assert (
        "Vocab: Following Beltagy et al. (2019), we construct a cased WordPiece (Wu et al., 2016) "
        "vocabulary of size 31k using 15% of the S2ORC pretraining corpus."
    ) in texts
    assert not any("\u2022" in t for t in texts)
    answer = scored_answer([reference(1, 5, text)], "What is the vocabulary size of S2ORC-SciBERT?")
    assert "vocabulary of size 31k" in answer.text


def test_a_reference_entry_with_et_al_is_still_never_quotable():
    assert not is_quotable("Lo, Kyle, Wang, Lucy, et al., 2020. S2ORC: The Semantic Scholar Open Research Corpus.")
    assert is_quotable("We follow the setup of prior work (Wu et al., 2016; Beltagy et al., 2019) for pretraining.")


def test_a_number_the_question_gives_must_be_in_the_sentence_that_answers_it():
    refs = [
        reference(
            1,
            16,
            "The user study would not have been possible without the support of Ali Ghodsi and the students "
            "of CS 294 at Berkeley.",
            title="Raft",
        ),
        reference(2, 1, "A user study with 43 students at two universities shows that Raft is easier.", title="Raft"),
    ]
    answer = scored_answer(refs, "Which study had 43 students?")
    assert answer.status in (Status.ANSWERED, Status.PARTLY_ANSWERED)
    supported = [s.text for s in answer.sentences if s.supported]
    assert supported and all("43 students" in s for s in supported)
    assert answer.text.index("43 students") < answer.text.find("Ghodsi") or "Ghodsi" not in answer.text


def test_a_sentence_naming_arxiv_is_prose_but_an_arxiv_reference_is_not():
    text = (
        "Open access status is assigned if a paper is derived from arXiv, ACL Anthology or PubMed Central, or "
        "has an open-access DOI in the Unpaywall database."
    )
    assert is_quotable(text)
    assert not is_quotable("Kyle Lo and Lucy Wang. 2020. S2ORC. arXiv preprint arXiv:1911.02782.")


@pytest.mark.parametrize(
    ("question", "place"),
    [
        ("Where was the classroom noise study conducted?", "in central Lisbon"),
        ("In which city was the noise study done?", "in central Lisbon"),
        ("Where was the evaluation run?", "on a cluster of 12 Amazon EC2"),
    ],
)
def test_a_question_asking_where_a_study_was_done_is_answered_by_a_place(question, place):
    refs = [
        reference(
            1,
            1,
            "Classroom noise may impair learning and memory in children, as laboratory studies of noise have shown. "
            "We therefore combined acoustic measurement with a reading assessment in schools in central Lisbon. "
            "We ran all experiments on a cluster of 12 Amazon EC2 instances. The evaluation results are given in "
            "Section 4.",
            title="Classroom Noise",
        )
    ]
    answer = extractive_answer(question, refs)
    assert answer.status == Status.ANSWERED
    assert place in answer.sentences[0].text
    assert asks_place(question)
    assert not names_place("The evaluation results are given in Section 4.", question)


def test_a_sample_size_is_a_count_of_people_and_a_quoted_title_asks_for_nothing():
    refs = [
        reference(
            1,
            1,
            "We recruited 84 adolescents from three secondary schools. Sleep onset latency was measured at home. "
            "Six participants withdrew before completing both conditions, leaving 78 for the analysis.",
            title="Sleep Onset Latency in Adolescents",
        )
    ]
    sample = [reference(1, 1, "We recruited 84 adolescents from three secondary schools. Sleep was measured at home.")]
    answer = extractive_answer("What was the sample size of the sleep study?", sample)
    assert answer.status == Status.ANSWERED and "84 adolescents" in answer.text
    question = "In \u201cSleep Onset Latency in Adolescents\u201d, how many withdrew?"
    assert asked_measure(question) == "count"  # not a time, for "Latency" in the title
    answer = extractive_answer(question, refs)
    assert answer.status == Status.ANSWERED and "Six participants withdrew" in answer.sentences[0].text


def test_an_irregular_past_form_meets_its_verb():
    refs = [reference(1, 1, "The study ran over eight weeks, from September to November 2021. Sleep was measured.")]
    question = "How long did the sleep study run, and what was its budget?"  # "the sleep study" names the paper
    analysis = analyse_question(question, history=[], papers=[PaperRef(1, "Evening Tablet Use and Sleep")])
    assert len(analysis.parts) == 2
    answer = extractive_answer(question, refs, analysis=analysis)
    assert answer.status == Status.PARTLY_ANSWERED
    assert "ran over eight weeks" in answer.sentences[0].text
    assert "budget" in answer.text.splitlines()[-1]


def test_who_did_something_is_stated_only_where_the_doing_is():
    refs = [
        reference(
            1,
            1,
            "Class 1 sound level meters (Bruel & Kjaer 2250) were mounted at the centre of each classroom. "
            "Reading was assessed with a standard test.",
        )
    ]
    question = "What sound level meters were used and who calibrated them?"
    analysis = analyse_question(question, history=[], papers=[PaperRef(1, "Classroom Noise")])
    answer = extractive_answer(question, refs, analysis=analysis)
    assert answer.status == Status.PARTLY_ANSWERED
    assert "Bruel & Kjaer 2250" in answer.sentences[0].text
    assert "who calibrated them" in answer.text.splitlines()[-1]
    part = analysis.parts[1]  # "who calibrated them?", with the whole question's key terms
    meters = "Class 1 sound level meters (Bruel & Kjaer 2250) were mounted at the centre of each classroom."
    assert not states_fact(meters, part, asked_terms(part.query))
    assert states_fact("The meters were calibrated by Acustica Lisboa.", part, asked_terms(part.query))


def test_a_two_column_tables_row_answers_in_its_columns_unit():
    refs = [
        reference(
            1,
            1,
            "Table 4: Running time per million records.\nSystem Minutes\nMarlin 14\nDedupe 41\nMagellan 29",
            title="Marlin",
        )
    ]
    answer = scored_answer(refs, "How many minutes does Dedupe need per million records?")
    assert "“System Minutes” [1]\n" in answer.text
    assert "“Dedupe 41” [1]" in answer.text
    assert answer.status == Status.ANSWERED


def test_a_two_column_tables_row_may_give_its_unit_in_each_cell():
    page = (
        "Table 1: Jobs run in August 2004\nNumber of jobs 29,423\nAverage job completion time 634 secs\n"
        "Machine days used 79,186 days\nInput data read 3,288 TB"
    )
    answer = scored_answer([reference(1, 1, page)], "What was the average job completion time in August 2004?")
    assert "“Average job completion time 634 secs” [1]" in answer.text
    assert answer.status == Status.ANSWERED


def test_one_sentence_in_two_papers_is_quoted_for_each():
    said = "The machines were arranged in a two-level tree-shaped network with 100-200 Gbps at the root."
    refs = [reference(1, 1, said, title="Tablestore", page=8), reference(2, 2, said, title="MapFold", page=8)]
    papers = [PaperRef(1, "Tablestore: Structured Storage", "Fay Chang"), PaperRef(2, "MapFold: Batch Jobs", "J Dean")]
    question = "How much bandwidth was available at the root of the network in the Tablestore and MapFold clusters?"
    analysis = analyse_question(question, history=(), papers=papers)
    answer = extractive_answer(analysis.query, refs, analysis=analysis)
    cited = {n for sentence in answer.sentences if "100-200 Gbps" in sentence.text for n in sentence.citations}
    assert cited == {1, 2}


def test_how_many_women_is_answered_by_the_count_of_women_not_of_anyone():
    assert asked_terms("How many women took part in the usability study?") == ["women"]
    refs = [
        reference(
            1,
            1,
            "The usability study consisted of two parts, each about a patient with a particular diagnosis. "
            "A total of 24 workers (9 male, 1 non-binary, and 14 female) participated in the study.",
        )
    ]
    answer = scored_answer(refs, "How many women took part in the usability study?")
    assert "14 female" in answer.sentences[0].text


def test_a_sentence_that_closes_its_passage_on_a_colon_is_quoted():
    refs = [
        reference(
            1,
            4,
            "Assume that agents can communicate with one another by sending messages. "
            "We use the customary asynchronous, non-Byzantine model, in which:",
            title="Paxos",
        )
    ]
    answer = scored_answer(refs, "What failure model does the algorithm assume?")
    assert "asynchronous, non-Byzantine model" in answer.text
    assert answer.status == Status.ANSWERED


RESULTS_PAGE = (
    "2 Results\nTable 1: Election latency by cluster size\nCluster size Median latency (ms) Failed elections\n"
    "3 180 2\n5 240 7\n7 310 19\nLarger clusters had more failed elections because split votes were more frequent."
)


def test_rows_of_numbers_only_are_rows_and_the_sentence_after_them_is_quoted():
    # A table whose first column is a number too: its rows once ran into the caption and the next
    # sentence as one unquotable "sentence", so nothing on the page could be quoted.
    page = [reference(1, 1, RESULTS_PAGE, page=2)]
    why = scored_answer(page, "Why did larger clusters have more failed elections?")
    assert "because split votes were more frequent" in why.text
    assert why.status == Status.ANSWERED
    count = scored_answer(page, "How many failed elections were there with 7 servers?")
    assert "“7 310 19” [1]" in count.text
    assert count.status == Status.ANSWERED


def test_a_row_the_question_names_is_quoted_over_the_prose_about_its_table():
    page = (
        "We filter paper clusters to remove papers with no title, no authors, or where English is not the "
        "primary language. In total, 95.5M paper clusters are filtered out and removed from the corpus.\n"
        "Filter Number of papers\nNo title 20k\nNo authors 0.3M\nNot English 15.2M\n"
        "Table 2: Post-processing data quality filters for papers"
    )
    answer = scored_answer([reference(1, 1, page)], "How many papers were removed by the 'Not English' filter?")
    assert "“Not English 15.2M” [1]" in answer.text
    assert row_named("No authors 0.3M", "How many papers did the No authors filter remove?")
    assert not row_named("Papers w/ DOIs 52.2M", "How many papers have DOIs?")
    assert not row_named("I-VILA 92.0 94.1 92.7", "What F1 does I-VILA reach on titles?")  # one word: many tables


def test_a_lone_label_and_number_is_no_table_row():
    refs = [reference(1, 1, "We ran it twice.\nFigure 2 shows 3\nThe rest is prose that ends here.")]
    assert all(c.text != "Figure 2 shows 3" for c in candidate_sentences(refs))


def test_a_setting_line_answers_a_how_deep_question_by_its_dimension():
    refs = [reference(1, 1, "Maximum crawl depth: 6 links", title="Lantern")]
    answer = scored_answer(refs, "How deep does the Lantern crawler crawl?")
    assert "“Maximum crawl depth: 6 links” [1]" in answer.text
    assert answer.status == Status.ANSWERED


def test_a_price_question_is_not_stated_by_a_sentence_without_money():
    refs = [
        reference(
            1,
            1,
            "Dynamo has been the underlying storage technology for a number of the core services in Amazon's "
            "e-commerce platform. It stores 10 GB per node.",
            title="Dynamo",
        )
    ]
    assert scored_answer(refs, "What does Amazon charge per gigabyte stored in Dynamo?").status == Status.NOT_STATED
    priced = [reference(1, 1, "Amazon charges $0.10 per gigabyte stored in Dynamo each month.", title="Dynamo")]
    assert scored_answer(priced, "What does Amazon charge per gigabyte stored in Dynamo?").status == Status.ANSWERED


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        # The passage gives sample sizes, no font size.
        ("Which font size does Paper Plain use for its definitions?", "font"),
        # The latency of one data centre, no wide-area figure.
        ("What leader election latency does Raft reach across continents on a wide-area network?", "continents"),
    ],
)
def test_a_figure_about_something_the_passages_never_mention_is_not_stated(question, missing):
    refs = [
        reference(
            1,
            1,
            "Paper Plain shows definitions for 24 sample sizes. With an election timeout of 12-24ms, it takes "
            "only 35ms on average to elect a leader in Raft.",
            title="Paper Plain",
        )
    ]
    answer = scored_answer(refs, question)
    assert answer.status == Status.NOT_STATED
    assert f"No passage mentions {missing}" in answer.text


def test_a_measure_of_a_named_paper_whose_qualifier_only_another_paper_mentions_is_not_stated():
    refs = [
        reference(1, 1, "Dynamo is meant for small objects, of size under 1 MB, stored by key.", title="Dynamo"),
        reference(2, 2, "Files are divided into fixed-size chunks of 64 MB each.", title="The Google File System"),
    ]
    question = "In the Dynamo paper, what is the chunk size?"
    answer = scored_answer(refs, question, named_paper_ids=(1,))
    assert answer.status == Status.NOT_STATED
    assert "No passage mentions chunk" in answer.text
    # Asked of the paper that mentions chunks, it is answered.
    assert scored_answer(refs, "In the GFS paper, what is the chunk size?", named_paper_ids=(2,)).status == (
        Status.ANSWERED
    )


def test_the_not_stated_line_leaves_out_the_verb_closing_a_where_clause():
    refs = [reference(1, 1, "Replicas go to chunkservers on other racks, where reads of the replicas are cheap.")]
    answer = scored_answer(refs, "Which engineer decides where replicas go?")
    assert answer.status == Status.NOT_STATED
    assert answer.text.startswith("The papers discuss replicas but do not state")


@pytest.mark.parametrize(
    ("question", "other"),
    [
        ("Quelle est la taille d'un chunk dans GFS ?", True),
        ("Wie groß ist ein Chunk in GFS?", True),
        ("Wie wählt Raft einen Leader?", True),
        ("¿Cuál es el tamaño de un chunk en GFS?", True),
        ("What is the chunk size in GFS?", False),
        ("Which authors of the GFS paper are from MIT?", False),  # one such word, among English ones
    ],
)
def test_a_question_in_another_language_than_the_passages_is_told_apart(question, other):
    passages = ["Files are divided into fixed-size chunks of 64 MB, and each chunk is stored on three servers."]
    assert asked_in_another_language(question, passages) is other
    # In the passages' own language it is no other language.
    assert not asked_in_another_language(question, ["La taille d'un chunk est de 64 Mo dans le système GFS."])


def test_a_question_in_another_language_is_not_stated_with_the_shared_words_shown_as_related():
    refs = [reference(1, 1, "Each chunk replica is stored as a plain Linux file on a chunkserver.", title="GFS")]
    answer = scored_answer(refs, "Quelle est la taille d'un chunk dans GFS ?")
    assert answer.status == Status.NOT_STATED
    assert answer.text.startswith(OTHER_LANGUAGE)
    assert "Each chunk replica" in answer.text  # shown as related


def test_the_not_stated_line_keeps_a_name_that_holds_an_asking_word():
    refs = [reference(1, 1, "Readers using Paper Plain rated the papers as easier to read.", title="Paper Plain")]
    answer = scored_answer(refs, "What font size does Paper Plain use?")
    assert answer.status == Status.NOT_STATED
    assert answer.text.startswith("The papers discuss Paper Plain but do not state a figure for the font size")


def test_a_cjk_question_restated_in_a_not_stated_line_ends_with_one_question_mark():
    analysis = analysis_for("GFS \u306e\u30c1\u30e3\u30f3\u30af\u30b5\u30a4\u30ba\u306f\u4f55\u3067\u3059\u304b\uff1f")
    assert asked_wording(analysis).endswith("\u304b\uff1f\u201d")


def test_a_figure_whose_qualifiers_the_passages_mention_is_answered():
    refs = [reference(1, 1, "With an election timeout of 12-24ms, it takes only 35ms on average to elect a leader.")]
    answer = scored_answer(refs, "What leader election latency does Raft reach with a 12-24ms timeout?")
    assert answer.status == Status.ANSWERED


def test_the_verb_after_a_named_place_is_no_qualifier_the_passages_must_mention():
    refs = [
        reference(
            1,
            1,
            "For each bibliography entry, the pair with the highest similarity score above 0.8 is output as the link.",
            title="S2ORC",
        )
    ]
    question = "Why would an entry in S2ORC end up unlinked? What similarity score must a pair exceed to be linked?"
    assert scored_answer(refs, question).status == Status.ANSWERED


def test_choosing_is_stated_by_electing_selecting_or_appointing():
    question = analysis_for("How are leaders chosen?")
    asked = asked_terms(question.query)
    assert states_fact("The replicas elect a master by a distributed consensus protocol.", question, asked)
    assert states_fact("One replica is appointed master for a lease period.", question, asked)
    assert not states_fact("The master stores the metadata of every cell.", question, asked)


def test_a_name_of_another_kind_than_the_one_asked_for_is_not_stated():
    refs = [
        reference(
            1,
            1,
            "We have implemented Raft as part of a replicated state machine that stores configuration "
            "information for RAMCloud. Raft uses a collection of servers communicating with RPCs.",
        )
    ]
    for question in (
        "Which cloud provider hosts the servers of the Raft implementation?",
        # "provider" is no "provides", and "What cloud provider" asks for a name as "Which" does.
        "What cloud provider did the Raft authors use?",
    ):
        answer = scored_answer(
            [*refs, reference(2, 2, "The cluster provides hundreds of terabytes of storage.")], question
        )
        assert answer.status == Status.NOT_STATED, question
        assert "No passage mentions cloud." in answer.text


# --- what a number or a name is about ------------------------------------------------------------


def states(question: str, text: str) -> bool:
    return states_fact(text, analysis_for(question), asked_terms(question))


MAJORITY = "A candidate wins an election if it receives votes from a majority of the servers in the full cluster."


def test_how_many_a_rule_needs_is_stated_by_a_share_but_how_many_there_are_is_not():
    assert states("How many votes does a Raft candidate need to win an election?", MAJORITY)
    assert states(
        "How many acceptors must accept a proposal?", "A proposal is chosen once a quorum of acceptors accept it."
    )
    assert not states("How many servers does a Raft cluster have?", MAJORITY)
    assert not states("How many votes does a candidate need?", "A candidate asks the other servers for votes.")


def test_a_value_in_an_aside_gives_the_figure_of_what_its_clause_is_about():
    timeouts = (
        "Election timeouts are chosen randomly from a fixed interval (currently 150-300ms in our implementation)."
    )
    elsewhere = "With an election timeout of 12-24ms, it takes only 35ms on average to elect a leader."
    answer = scored_answer(
        [reference(1, 1, elsewhere, page=15), reference(2, 1, timeouts, page=6)],
        "How long is the election timeout in Raft?",
    )
    # Both figures stand by "election timeout(s)"; the aside's is no longer the weaker fit, and
    # the setting is quoted first (before, the 12-24ms of an experiment was).
    assert answer.status == Status.ANSWERED
    setting, experiment = answer.text.index("150-300ms"), answer.text.find("12-24ms")
    assert experiment == -1 or setting < experiment


def test_a_count_is_stated_only_by_a_number_next_to_what_it_counts():
    question = "How many lines of code does the Raft implementation contain?"
    assert states(question, "The Raft implementation contains roughly 2000 lines of C++ code, not including tests.")
    assert not states(
        question, "Each server is in one of three states. In normal code paths the leader handles all lines."
    )
    assert number_attached("We recruited a total of ten participants.", "count", ["particip"])
    assert not number_attached("Three servers took part; participants were remote.", "count", ["particip"])


def test_a_follow_up_is_held_only_to_the_names_its_own_words_say():
    question = "What's the equivalent rule on the ZooKeeper side?"
    query = "How often are KeepAlives exchanged between a ZooKeeper client and the master?"
    passages = ["A client sends a heartbeat after the session has been idle for s/3 ms."]
    rewritten = dataclasses.replace(analysis_for(query), question=question, rewritten=True)
    assert missing_names(rewritten, passages, ["ZooKeeper"]) == []
    assert missing_names(analysis_for(query), passages, ["ZooKeeper"]) == ["KeepAlives"]


def test_a_follow_up_prefers_new_sentences_beside_the_ones_the_previous_answer_quoted():
    said = "The click table holds a row for each end-user session."
    refs = [
        reference(1, 1, f"{said} This table compresses to 14% of its original size.", title="Bigtable", page=10),
        reference(
            2, 1, "The crawl table compresses to 45% of its size in a two-pass scheme.", title="Bigtable", page=7
        ),
    ]
    candidates = candidate_sentences(refs)
    alone = analysis_for("How well does the click table compress?")
    follow_up = dataclasses.replace(alone, previous_pages=((1, 10),), said_before=(said,))
    cosines = np.full(len(candidates), 0.5)
    before = {s.candidate.text: s.score for s in score_candidates(candidates, alone, cosines)}
    after = {s.candidate.text: s.score for s in score_candidates(candidates, follow_up, cosines)}
    beside, elsewhere = "This table compresses to 14% of its original size.", refs[1].text
    assert after[beside] > before[beside]  # on the page the previous answer cited
    assert after[elsewhere] == before[elsewhere]
    assert after[said] < after[beside]  # quoted already: the reader has it


def test_how_much_smaller_asks_about_what_shrank_not_the_comparative():
    question = "How much smaller did the code for one phase of the indexing computation become?"
    assert "smaller" in asked_terms(question) and "code" in asked_terms(question)
    assert states(question, "One phase of the computation dropped from 3800 lines of C++ code to 700 lines.")


def test_a_sentence_that_only_points_to_a_table_is_quoted_with_the_table():
    text = (
        "We remove papers that fail our quality filters. The distribution of filtered papers is given in Table 2.\n"
        "Table 2: Post-processing data quality filters for papers\n"
        "No title 20k\nNo authors 0.3M\nNot English 15.2M\n"
    )
    answer = extractive_answer("What is the distribution of filtered papers?", [reference(1, 1, text, title="S2ORC")])
    assert "given in Table 2" in answer.text
    assert "Not English 15.2M" in answer.text and "Table 2: Post-processing" in answer.text


def test_a_size_in_bytes_states_the_size_asked_for():
    question = "Do GFS checksum blocks have the same size as SSTable blocks? What size is each?"
    assert states(question, "The chunkservers store the checksums for 64 KB blocks of user data.")
    assert not states(question, "The chunkservers store the checksums for 64 blocks of user data.")


def test_a_part_of_a_counted_whole_counts_what_its_sentence_is_about():
    question = "How many of the participants said Raft would be easier to implement?"
    sentence = "A majority of participants said Raft would be easier to implement (33 of 41 for each question)."
    assert states(question, sentence)
    assert not states(question, "The lecture videos were long (33 of 41 minutes).")


def test_a_count_by_a_variable_states_how_many():
    question = "How many nodes does the preference list contain in Dynamo?"
    assert states(question, "To account for node failures, preference list contains more than N nodes.")
    assert states("How many replicas does Paxos need?", "Paxos tolerates f failures with 2f + 1 replicas.")
    # An article is no variable: "a set of nodes" counts nothing.
    assert not states(question, "The preference list is a set of nodes chosen by the coordinator.")
    replicas = asked_terms("How many replicas does Paxos need?")
    assert quantity_fit("It runs N-1 clockwise successor replicas.", "count", replicas) == 1.0


def test_a_number_with_a_unit_says_what_it_measures_where_the_question_names_no_measure():
    assert states("How large are GFS chunks?", "We have chosen 64 MB, which is much larger than typical block sizes.")


def test_a_statistic_name_next_to_a_number_does_not_say_what_it_measures():
    question = "What was the average age of the study participants?"
    assert not states(question, "Participants clicked on average only 7 Section Gists.")
    assert states(question, "Participants were 35 years old on average, aged 22 to 61.")


def test_a_rate_is_stated_only_per_the_unit_of_time_asked_for():
    question = "How many commands per second did the Paxos implementation process?"
    assert not states(question, "The leader could take the next two commands to be commands 136 and 137.")
    assert states(question, "The implementation processed about 40,000 commands per second.")
    assert states_rate("Throughput peaks at 12k ops/s.", "How many operations per second does it sustain?")
    assert states_rate("anything", "How many operations does it sustain?")


def test_a_label_word_inside_another_word_does_not_hide_a_number():
    assert [q.low for q in quantities("Around 5,000 lines of TypeScript were added (Round 2, Section 3).")] == [5000.0]


def test_a_year_like_number_before_the_plural_noun_it_counts_is_a_count():
    assert [q.low for q in quantities("roughly 2000 lines of C++ code")] == [2000.0]
    assert quantities("In 2006 this was built; by 1999 papers cited it") == [Quantity(1999.0, 1999.0, "")]


def test_a_quantity_questions_own_numbers_need_not_be_repeated_by_its_answer():
    question = "How long did the grep over 10^10 100-byte records take from start to finish?"
    assert states(question, "The entire computation takes approximately 150 seconds from start to finish.")
    assert not states("Which study had 43 students?", "The second study had 51 students.")


def test_a_length_is_stated_in_bytes_or_in_time():
    question = "How long may a Bigtable row key be?"
    assert states(question, "The row keys in a table are arbitrary strings (currently up to 64KB in size).")
    assert not states(
        "How much does it cost per month to run ZooKeeper?", "ZooKeeper handles 17,000 operations per second."
    )


def test_a_capitalised_word_inside_a_sentence_is_a_name_but_a_unit_or_a_section_is_not():
    assert names_in("All these components are implemented in Java.") == ["Java"]
    assert names_in("The largest ones have over 300 TB of disk, see Section 4 and Table 2.") == []


def test_an_entity_asked_with_a_preposition_is_answered_by_a_name_about_the_rest_of_the_question():
    question = "In which programming language are Dynamo's components implemented?"
    assert states(question, "All these components are implemented in Java.")
    assert not states(question, "Dynamo is run on standard commodity hardware components.")


def test_which_thing_is_not_stated_by_a_sentence_about_the_rest_of_the_question_alone():
    question = "Which manufacturer made the disks in the GFS clusters?"
    assert not states(question, "Given that a GFS cluster often has thousands of disks, it experiences disk failures.")
    assert not states(question, "The largest GFS clusters have over 300 TB of disk storage.")
    # With no asked phrase, the rest of the question is every term but the asked thing.
    assert not states(question, "While NASD is based on network-attached disk drives, we use commodity machines.")
    assert states("Which filters does S2ORC apply?", "S2ORC filters out papers with no title.")


def test_a_quoted_sentence_that_restates_the_question_comes_with_the_sentence_that_completes_it():
    refs = [
        reference(
            1,
            1,
            "After a file is deleted, GFS does not immediately reclaim the available physical storage. It does so "
            "only lazily during regular garbage collection at both the file and chunk levels. Chunkservers report "
            "a subset of their chunks in HeartBeat messages.",
            title="GFS",
        )
    ]
    answer = scored_answer(refs, "How does GFS reclaim the storage of deleted files?")
    assert "lazily during regular garbage collection" in answer.text


def test_a_caption_runs_on_past_a_word_cut_at_its_line_end():
    text = (
        "to filter document-level recommendations.\nFigure 2: Distribution of papers by Microsoft Aca-\n"
        "demic field of study.\nExamples of papers are shown in the plot."
    )
    quoted = [s.text for s in caption_lines([reference(1, 1, text, page=7)], "Figure 2")]
    assert quoted == ["Figure 2: Distribution of papers by Microsoft Academic field of study."]


def test_a_table_above_its_caption_split_into_column_blocks_is_quoted_whole():
    text = (
        "the most recent work in this area.\n"
        "Papers w/ Citation\nCorpus\nbody text contexts\n"
        "S2ORC (PDF-parse) 8.1M full text\nAAN (Radev et al., 2009) 25k full text\n"
        "References to\nLinked to Academic\ngraph disciplines\n"
        "yes S2ORC (full) multi\nno ACL Anthology comp ling\n"
        "Table 1: A comparison of S2ORC with other publicly-available academic text corpora."
    )
    quoted = [s.text for s in caption_lines([reference(1, 1, text, page=2)], "Table 1")]
    assert quoted[0] == "Papers w/ Citation" and quoted[-1].startswith("Table 1: A comparison")
    assert "AAN (Radev et al., 2009) 25k full text" in quoted and "no ACL Anthology comp ling" in quoted
    assert not any("most recent work" in line for line in quoted)


def test_a_time_that_places_a_moment_in_a_run_is_no_duration():
    question = "How long did the sort program take when 200 workers were killed?"
    assert not states(question, "We killed 200 out of 1746 worker processes several minutes into the computation.")
    assert not states(question, "Roughly 300 seconds into the computation, the sort program restarts its workers.")
    assert states(question, "The sort program finishes in 933 seconds including startup overhead.")


def test_a_figure_asked_in_a_unit_must_be_in_that_unit_and_stand_by_the_asked_thing():
    question = "What initial timeout, in milliseconds, does Zorblax give a new ballot?"
    lease = [reference(1, 1, "For example, the lease period could be 10 seconds in Zorblax deployments.", title="Z")]
    assert scored_answer(lease, question).status == Status.NOT_STATED
    timeout = [reference(1, 1, "Zorblax starts every new ballot with an initial timeout of 50 ms.", title="Z")]
    answer = scored_answer(timeout, question)
    assert answer.status == Status.ANSWERED and "50 ms" in answer.text


def test_the_value_of_a_symbol_is_stated_only_where_the_symbol_is_given_a_value():
    question = "What value of \u03b1 does Zorblax recommend in practice?"
    used = "In general, a Zorblax leader can get \u03b1 commands ahead, proposing commands i + 1 through i + \u03b1."
    assert scored_answer([reference(1, 1, used, title="Z")], question).status == Status.NOT_STATED
    valued = "In practice Zorblax deployments set \u03b1 to 10 so that gaps stay short."
    answer = scored_answer([reference(1, 1, valued, title="Z")], question)
    assert answer.status == Status.ANSWERED and "to 10" in answer.text


def test_limitations_are_no_limit_a_figure_answers():
    text = "One limitation of the Zorblax study is its small sample of students from one university."
    answer = scored_answer([reference(1, 1, text, title="Zorblax")], "What limitations does the Zorblax study have?")
    assert answer.status == Status.ANSWERED and "small sample" in answer.text
    limit = scored_answer([reference(1, 1, text, title="Zorblax")], "What limit does the Zorblax study set?")
    assert limit.status == Status.NOT_STATED


def test_how_long_a_text_is_is_told_in_lines_pages_or_words():
    text = "The Zorblax specification is written in TLA+. It is about 400 lines long and checked by TLC."
    answer = scored_answer([reference(1, 1, text, title="Zorblax")], "How long is the Zorblax TLA+ specification?")
    assert answer.status == Status.ANSWERED and "400 lines" in answer.text
    assert quantity_fit("It is about 400 lines long.", "length") == 1.0
    assert quantity_fit("It is about 400 lines long.", "time") < 1.0


def test_a_what_information_question_is_stated_without_the_word_information():
    text = "With this optimization, a Zorblax acceptor needs to remember only the highest-numbered proposal."
    question = "What is the only information a Zorblax acceptor needs to remember?"
    assert scored_answer([reference(1, 1, text, title="Zorblax")], question).status == Status.ANSWERED


def test_a_year_question_is_answered_by_a_year_beside_what_happened_not_by_another_figure():
    question = "In which year was Zorblax first deployed inside the company?"
    assert asked_measure(question) == "year"
    dated = "Zorblax was first deployed inside the company in 2004, serving one team."
    answer = scored_answer([reference(1, 1, dated, title="Zorblax")], question)
    assert answer.status == Status.ANSWERED and "in 2004" in answer.text
    sized = "We introduced a limit on file size (256kBytes) after Zorblax was deployed inside the company."
    assert scored_answer([reference(1, 1, sized, title="Zorblax")], question).status == Status.NOT_STATED
    code = "The first Zorblax deployment inside the company took 2000 lines of code."
    assert scored_answer([reference(1, 1, code, title="Zorblax")], question).status == Status.NOT_STATED


@pytest.mark.parametrize(
    ("question", "elsewhere", "stated"),
    [
        # No asked thing: the figure stands by two of the question's terms.
        (
            "How often, in seconds, does the Zorblax master write checkpoints?",
            "All of the writes finish about 850 seconds into the Zorblax computation.",
            "The Zorblax master writes checkpoints every 30 seconds to its local disk.",
        ),
        # "How many <unit>" asks in that unit, by the asked thing.
        (
            "How many petabytes of data does Zorblax store across all of its instances?",
            "Zorblax targets applications that store objects that are relatively small (usually less than 1 MB).",
            "Across all of its instances, Zorblax stores about 3 PB of data for its clients.",
        ),
        # A generic asked thing ("trouble"): the question's other terms say what is asked.
        (
            "What trouble can Zorblax servers cause after they have been removed from the configuration?",
            "Zorblax keeps a log of every write request on each machine.",
            "If removed Zorblax servers do not know it, they can still start new elections and disrupt the cluster.",
        ),
        # "In which ...?": a name after that preposition.
        (
            "In which programming language are the Zorblax master and chunkserver implemented?",
            "Zorblax client code implements the file system API and talks to the master and chunkservers.",
            "The Zorblax master and chunkserver are implemented in Java and run on commodity machines.",
        ),
    ],
)
def test_a_sentence_states_what_is_asked_only_where_it_says_that_thing(question, elsewhere, stated):
    assert scored_answer([reference(1, 1, elsewhere, title="Z")], question).status == Status.NOT_STATED
    assert scored_answer([reference(1, 1, stated, title="Z")], question).status == Status.ANSWERED


def test_a_sentence_ends_at_a_footnote_mark_after_its_stop():
    text = (
        "Zorblax links these terms to definitions from the medical thesaurus or Wiktionary.6 The extraction "
        "and linking process led to many false positives, so we filter terms by frequency."
    )
    assert [s.text for s in candidate_sentences([reference(1, 1, text)])] == [
        "Zorblax links these terms to definitions from the medical thesaurus or Wiktionary.6",
        "The extraction and linking process led to many false positives, so we filter terms by frequency.",
    ]
    assert not is_quotable("Zorblax links these terms to definitions from the thesaurus in version 2")


def test_a_table_row_under_a_unit_header_answers_a_how_many_units_question():
    question = "How many minutes does Zorbdupe need per million records?"
    refs = [
        reference(
            1,
            1,
            "Table 4: Running time per million records.\nSystem Minutes\nMarlin 12\nZorbdupe 41\nMagellan 55",
            title="R",
        )
    ]
    answer = scored_answer(refs, question)
    assert answer.status == Status.ANSWERED and "Zorbdupe 41" in answer.text


def test_calls_named_in_code_style_are_names():
    assert {"getData", "exists"} <= set(names_in("The read operations are getData(), getChildren(), and exists()."))


def test_how_well_a_thing_does_something_is_a_figure_beside_its_verb():
    from chat.extractive import UNATTACHED_FIT, cheap_scores

    question = "How well does the Zorblax click table compress?"
    size = "The Zorblax click table (about 200 TB) keeps a row for each session of each user."
    ratio = "This Zorblax table compresses to 14% of its original size on disk."
    candidates = candidate_sentences([reference(1, 1, size, title="Z"), reference(2, 1, ratio, title="Z")])
    scores = cheap_scores(candidates, analysis_for(question))
    fits = {candidate.text: score[1] for candidate, score in zip(candidates, scores, strict=True)}
    assert (fits[size], fits[ratio]) == (UNATTACHED_FIT, 1.0)


@pytest.mark.parametrize(
    ("question", "text"),
    [
        (
            "How many hours of annealing give phase-pure samples?",
            "Phase-pure samples came after twelve hours of annealing.",
        ),
        (
            "How many rounds until ninety-nine percent of nodes learn an update?",
            "With a fanout of three, ninety-nine percent of the nodes learn an update within nine rounds.",
        ),
        (
            "What is the load of a majority system over nine servers?",
            "The load of the majority system over nine servers is five ninths.",
        ),
    ],
)
def test_a_figure_in_words_answers_a_quantity_question(question, text):
    assert scored_answer([reference(1, 1, text, title="Gossip notes")], question).status == Status.ANSWERED


def test_a_how_question_is_matched_best_by_a_sentence_naming_the_means():
    refs = [
        reference(
            1,
            1,
            "The store must track different versions of one object and keep them. In order to track "
            "different versions of one object, the store treats each modification as a new version of the "
            "object. The store uses vector clocks to capture causality between them.",
            title="Store",
        )
    ]
    analysis = analysis_for("How does the store track different versions of one object?")
    candidates = candidate_sentences(refs)
    scored = {s.candidate.text: s for s in score_candidates(candidates, analysis, np.full(len(candidates), 0.5))}
    means = scored["The store uses vector clocks to capture causality between them."]
    other = next(s for text, s in scored.items() if text.startswith("In order to track"))
    assert means.type_match > other.type_match


def test_how_many_papers_a_corpus_holds_is_a_count_of_papers():
    refs = [
        reference(
            1,
            1,
            "We introduce S2ORC, a large corpus of scholarly papers. The resulting corpus consists of 81.1M papers.",
            title="S2ORC: The Semantic Scholar Open Research Corpus",
        )
    ]
    answer = scored_answer(refs, "How many papers are in S2ORC?")
    assert answer.status == Status.ANSWERED
    assert "81.1M papers" in answer.text


def test_a_sentence_announcing_a_list_is_quoted_with_what_follows_it():
    text = (
        "Note that the proposer can always abandon a proposal and forget all about it. Putting the actions of "
        "the proposer and acceptor together, we see that the algorithm operates in the following two phases.\n"
        "Phase 1. (a) A proposer selects a proposal number n and sends a prepare request with number n to a "
        "majority of acceptors.\n"
        "(b) If an acceptor receives a prepare request with number n greater than that of any prepare request, "
        "it responds with a promise."
    )
    answer = scored_answer(
        [reference(1, 1, text, title="Paxos Made Simple")], "What are the two phases of the algorithm?"
    )
    assert (
        "operates in the following two phases.\u201d [1] \u201c(a) A proposer selects a proposal number n"
        in answer.text
    )


def test_not_stated_names_the_topic_not_the_verb_after_to():
    refs = [reference(1, 1, "We evaluate Raft with a user study of 43 students and with a real implementation.")]
    answer = scored_answer(refs, "How many GPUs were used to evaluate Raft?")
    assert answer.status == Status.NOT_STATED
    assert "The papers discuss Raft but do not state" in answer.text


def test_a_question_asking_for_several_things_is_answered_by_the_sentence_listing_them():
    text = (
        "We further filter paper clusters to remove papers with (i) no title, (ii) no authors, (iii) fewer than "
        "100 characters of abstract and body text, and (iv) where English is not the primary language. "
        "All filters are applied in series. Among recommenders, the corpus suits those who filter citations."
    )
    answer = scored_answer(
        [reference(1, 1, text, title="S2ORC: The Semantic Scholar Open Research Corpus")],
        "What filters does S2ORC apply?",
    )
    first_quote = answer.text.split("\u201c", 1)[1]
    assert first_quote.startswith("We further filter paper clusters to remove papers with (i) no title")


@pytest.mark.parametrize(
    ("question", "several"),
    [
        ("What filters does S2ORC apply?", True),
        ("What are the main components of Bigtable?", True),
        ("What chunk size does GFS use?", False),
        ("What bus does the cluster use?", False),
        ("What is Paxos?", False),
    ],
)
def test_a_plural_asked_noun_asks_for_several_things(question, several):
    assert asks_several(question) is several


@pytest.mark.parametrize(
    ("text", "fit"),
    [
        ("We filter papers with (i) no title, (ii) no authors and (iii) no text.", 1.0),
        ("First, the client asks the master; second, it contacts the replica.", 1.0),
        ("The filters drop papers without titles, authors, or text.", 0.5),
        ("Here, the first statement was the primary measurement, and the second statement was a check.", 0.0),
        ("Subsequently, 95.5M paper clusters are filtered out based on the criteria and removed.", 0.0),
        # A list announced by its count and a colon; a count with no colon announces none.
        ("ZooKeeper has two basic ordering guarantees: Linearizable writes: all requests are serializable.", 1.0),
        ("ZooKeeper has two basic ordering guarantees that clients rely on.", 0.0),
    ],
)
def test_a_sentence_lists_several_items_when_they_are_numbered_or_joined_by_commas(text, fit):
    assert enumeration_fit(text) == fit


def test_a_list_of_other_things_does_not_list_the_asked_ones():
    text = "In our environment: (1) machines run Linux, with 2-4 GB of memory, (2) networking is commodity."
    assert enumeration_fit(text, "drive") == 0.0
    assert enumeration_fit(text, "machin") == 1.0


def test_a_complaint_is_stated_without_the_word_complaint():
    text = "One participant (N5) reported that the sidebar was distracting and occluded other reader features."
    question = "One participant (N5) disliked the sidebar. What was their complaint?"
    assert scored_answer([reference(1, 1, text, title="Paper Plain")], question).status == Status.ANSWERED


def test_kinds_and_types_count_as_one_word():
    text = "Raft uses only two types of RPCs between servers for the basic consensus algorithm."
    question = "How many kinds of RPC does the basic Zorblax algorithm need?"
    answer = scored_answer([reference(1, 1, text, title="Zorblax")], question)
    assert answer.status == Status.ANSWERED
    assert "two types of RPCs" in answer.text


def test_two_passages_sharing_a_sentence_quote_it_once():
    shared = "The corpus contains three times more full text papers than any other corpus of its kind."
    before = "The other corpus contains 6M papers at the time of writing, by its own count."
    after = "Citations in the corpus are linked to the full set of 81.1M paper nodes it holds."
    # Overlapping chunks: each holds the shared sentence, one with the sentence after it, one with
    # the sentence before.
    windows = [
        Sentence(1, 1, "Corpus", f"{shared} {after}", page=2, kind="window", parts=2),
        Sentence(2, 1, "Corpus", f"{before} {shared}", page=2, kind="window", parts=2),
    ]
    chosen = [Scored(window, 0.9, 1.0, 0.5, 1.0, 0.9, True) for window in windows]
    analysis = analysis_for("How many papers does the corpus contain?")
    answer = compose_answer(chosen, analysis, chosen=chosen)
    assert answer.text.count("three times more full text papers") == 1
    assert f"\u201c{before}\u201d [2]" in answer.text


@pytest.mark.parametrize(
    ("text", "quotable"),
    [
        ("Beltagy et al. (2019) do not report standard deviation or number of runs.", True),
        ("*LATEX preserves line breaks rather than paragraph breaks in these sources.", False),
        ("\u2020Saier and F\u00e4rber (2020) is an update to this work with more papers.", False),
    ],
)
def test_a_tables_note_is_no_sentence_of_the_prose_before_it(text, quotable):
    prose = "Reported values are averaged over all open access papers in the corpus."
    sentences = [s.text for s in candidate_sentences([reference(1, 1, f"{prose} {text}")])]
    assert prose in sentences
    assert (text in sentences) is quotable


@pytest.mark.parametrize(
    ("question", "row"),
    [
        ("Which of the filters removes the most papers?", "< 100 chars of text 80.0M"),
        ("Which filter removes the fewest papers?", "No title 20k"),
    ],
)
def test_which_thing_has_the_most_is_the_table_row_with_the_largest_figure(question, row):
    text = (
        "We drop papers that fail any filter. All filters are applied in series.\n"
        "Filter Number of papers\nNo title 20k\nNo authors 0.3M\n< 100 chars of text 80.0M\nNot English 15.2M\n"
        "Table 2: Post-processing data quality filters for papers"
    )
    references = [reference(1, 1, text, title="Corpus")]
    candidates = candidate_sentences(references)
    analysis = analysis_for(question)
    assert extreme_row(candidates, analysis).text == row
    scored = score_candidates(candidates, analysis, np.full(len(candidates), 0.5))
    chosen = with_extreme_row(choose_evidence(scored, analysis), candidates, analysis)
    answer = compose_answer(scored, analysis, chosen=chosen)
    assert answer.text.index("\u201cFilter Number of papers\u201d [1]") < answer.text.index(f"\u201c{row}\u201d [1]")


def test_a_superlative_reads_the_table_whose_header_names_most_of_the_question():
    pdfs = "Filter Number of PDFs\nParser error 0.21M\nOver 50 pages 2.27M\nTable 8: PDF filters"
    papers = "Filter Number of papers\nNo title 20k\nNo authors 0.3M\nTable 2: Paper filters"
    candidates = candidate_sentences([reference(1, 1, pdfs, title="Corpus"), reference(2, 1, papers, title="Corpus")])
    assert extreme_row(candidates, analysis_for("Which filter removes the fewest papers?")).text == "No title 20k"
    assert extreme_row(candidates, analysis_for("Which filter removes the most PDFs?")).text == "Over 50 pages 2.27M"


def test_a_table_row_states_what_its_caption_says_the_cells_measure():
    # ACL prints captions under their tables; other papers above them, where the caption below a
    # table's rows heads the next table.
    below = (
        "Evaluated task Title Authors\nPaper clustering 0.93 0.89\nBib. linking (GROBID) 1.00 0.96\n"
        "Table 6: Accuracy of paper clustering and bibliography linking for\ntitles and authors in sampled sets."
    )
    above = (
        "Table 3: Record linkage results on the benchmark.\nSystem Precision Recall F1\nMarlin 0.850 0.760 0.802\n"
        "Table 4: Running time per million records.\nSystem Minutes\nMarlin 14\nDedupe 41"
    )
    candidates = candidate_sentences([reference(1, 1, below, title="Corpus"), reference(2, 2, above, title="Linkage")])
    caption_of = {c.text: c.caption for c in candidates}
    assert caption_of["Paper clustering 0.93 0.89"].startswith("Table 6: Accuracy") and caption_of[
        "Paper clustering 0.93 0.89"
    ].endswith("sampled sets.")
    assert caption_of["Marlin 0.850 0.760 0.802"].startswith("Table 3:")
    assert caption_of["Marlin 14"].startswith("Table 4:")
    analysis = analysis_for("What is the accuracy of paper clustering for authors?")
    states = dict(zip([c.text for c in candidates], (s[3] for s in cheap_scores(candidates, analysis)), strict=True))
    assert states["Paper clustering 0.93 0.89"]
    assert not states["Marlin 0.850 0.760 0.802"]  # no accuracy in its caption


def test_a_superlative_over_a_table_of_other_things_quotes_no_row():
    text = "Model Accuracy\nBERT 0.81\nRoBERTa 0.84\nXLNet 0.83"
    candidates = candidate_sentences([reference(1, 1, text, title="Corpus")])
    assert extreme_row(candidates, analysis_for("Which of the filters removes the most papers?")) is None
    assert extreme_row(candidates, analysis_for("What accuracy does BERT reach?")) is None


def test_footnote_marks_glued_to_words_are_not_quoted():
    text = (
        "To address these issues, we introduce S2ORC,7 the Semantic Scholar8 Open Research Corpus, a large\n"
        "collection of academic papers covering dozens of academic disciplines and many languages.\n"
        "We process PDFs using SCIENCEPARSE v3.0.09 and GROBID v0.5.510 on a cluster of machines.\n"
        "The English language filter14 reduces parsing errors in the body text of the papers we keep.\n"
        "We report the F1 of every filter and parse each PDF with PyPDF2. All filters are applied in series.\n"
        "7pronounced \u201cstork\u201d\n8The papers included in S2ORC are a curated subset of the graph.\n"
        "10https://github.com/kermitt2/grobid\n"
        "14We use the cld2 tool for language detection with a threshold of 0.9 over the English language score.\n"
    )
    sentences = [s.text for s in candidate_sentences([reference(1, 1, text, title="Corpus")])]
    assert (
        "To address these issues, we introduce S2ORC, the Semantic Scholar Open Research Corpus, a large "
        "collection of academic papers covering dozens of academic disciplines and many languages." in sentences
    )
    # Footnote 10 is on the page, footnote 9 is not: a version keeps a digit that is no mark.
    assert "We process PDFs using SCIENCEPARSE v3.0.09 and GROBID v0.5.5 on a cluster of machines." in sentences
    assert "The English language filter reduces parsing errors in the body text of the papers we keep." in sentences
    # No footnote 1 or 2 on the page: names keep their digits.
    assert "We report the F1 of every filter and parse each PDF with PyPDF2." in sentences
    assert not any("filter14" in sentence for sentence in sentences)


def test_a_version_number_matches_the_version_asked_for():
    analysis = analysis_for("What version of GROBID is used?")
    versioned = "We process PDFs using SCIENCEPARSE v3.0.0 and GROBID v0.5.5 (Lopez, 2009)."
    plain = "We then use GROBID to process each PDF into a structured document."
    candidates = candidate_sentences([reference(1, 1, f"{versioned} {plain}", title="Corpus")])
    lexical = {c.text: scores[0] for c, scores in zip(candidates, cheap_scores(candidates, analysis), strict=True)}
    assert lexical[versioned] == 1.0 and lexical[plain] < 1.0


def test_what_a_thing_is_used_for_is_not_stated_by_a_sentence_without_it():
    analysis = analysis_for("What does the pipeline use TextMiner for?")
    asked = asked_terms(analysis.query)
    assert not states_fact("The output of this pipeline is visualized in Figure 1.", analysis, asked)
    assert states_fact("We then use TextMiner to process each PDF and extract its paragraphs.", analysis, asked)
    # Where the thing is ("in Zorg") is no part of what must be named.
    where = analysis_for("What is a double barrier in Zorg used for?")
    sentence = "Double barriers enable clients to synchronize the beginning and the end of a computation."
    assert states_fact(sentence, where, asked_terms(where.query))


def test_a_footnote_in_another_passage_of_the_page_drops_its_mark():
    body = "We process PDFs using SCIENCEPARSE v3.0.09 and GROBID v0.5.510 on a cluster of machines."
    notes = "9https://github.com/allenai/science-parse\n10https://github.com/kermitt2/grobid"
    passages = [reference(1, 1, body, title="Corpus", page=3), reference(2, 1, notes, title="Corpus", page=3)]
    sentences = {s.text for s in candidate_sentences(passages)}
    assert "We process PDFs using SCIENCEPARSE v3.0.0 and GROBID v0.5.5 on a cluster of machines." in sentences
    # The same footnote numbers on another page mark nothing here.
    other_page = [reference(1, 1, body, title="Corpus", page=3), reference(2, 1, notes, title="Corpus", page=4)]
    assert body in {s.text for s in candidate_sentences(other_page)}


def test_an_approximate_count_asks_for_the_counted_thing_not_the_corpus_it_is_in():
    question = "Roughly how many papers in the Semantic Scholar corpus have more than one Microsoft Academic field?"
    analysis = analysis_for(question)
    assert asked_terms(question) == ["paper"]
    assert states_fact(
        "Approximately 677k papers have more than one primary Microsoft Academic field.",
        analysis,
        asked_terms(question),
    )


@pytest.mark.parametrize(
    ("text", "question", "counts"),
    [
        ("The system is roughly 2000 lines of C++ code.", "How many lines of code does the library contain?", True),
        # A number that labels counts nothing; a number's own noun says what it counts.
        ("If the znode has the lowest sequence number at line 3, the client holds the lock.",
         "How many lines of code does the client library contain?", False),
        ("Divergent versions arise in two scenarios, such as data center failures.",
         "Across how many data centers is a preference list spread?", False),
        ("A Chubby cell consists of five servers known as replicas.", "How many servers make up a cell?", True),
        ("we have seen 90,000 clients communicating directly with a master",
         "What is the largest number of client processes seen talking to one master?", True),
        ("A total of 24 Upworkers (9 male, 1 non-binary, and 14 female) participated in the study.",
         "How many participants took part in the usability study?", True),
        ("GROBID uses twelve interdependent sequence labeling models.",
         "How many separate models does GROBID chain?", True),
        ("The preference list contains more than N nodes.", "How many nodes does the preference list contain?", True),
        ("Citations are linked to other papers. Additionally, we provide 1.5M full text LaTeX parses.",
         "How many papers come with full text parsed from LaTeX?", True),
        ("active clients (direct) 22k", "How many clients were directly connected?", True),
        # The counted thing itself must be there.
        ("We used 35 machines to simulate 250 simultaneous clients.", "How many watches can a client register?", False),
        ("Each replica keeps four variables.", "What does each replica keep?", True),  # counts nothing
        # After "of", the things counted; a modifier in -ing does not make "teams" participants.
        ("There were hundreds of participating teams across two shared tasks.",
         "How many participants did the user study have?", False),
        ("We recruited 84 of the participants from a pool.", "How many participants did the study have?", True),
    ],
)  # fmt: skip
def test_a_count_is_of_the_thing_asked_for(text, question, counts):
    assert counts_asked_thing(text, question) is counts


LOCAL_SHARE = "What fraction of the map tasks read their input locally?"


@pytest.mark.parametrize(
    ("question", "text", "stated"),
    [
        # A share is a percentage, a fraction, a ratio or a part of a whole, not a count.
        (LOCAL_SHARE, "The first batch was of approximately 1700 reduce tasks.", False),
        (LOCAL_SHARE, "Most map tasks (82%) read their input locally.", True),
        (LOCAL_SHARE, "33 of 41 map tasks read their input locally.", True),
        ("What percentage of jobs used a Combiner function?", "Average map tasks per job 3,351", False),
        # A percentile asked for is the figure's own.
        ("What 99th-percentile latency did write requests see?",
         "The average request latency is 1.2ms for three servers.", False),
        ("What 99.9th percentile latency did writes see?", "The 99.9th percentile latencies are around 200 ms.", True),
        # The time of doing what was asked.
        ("How long does Paper Plain take to generate the gists?",
         "Participants averaged 5.19 seconds in each paper position before moving.", False),
        ("How long does Paper Plain take to generate the gists?", "Generating all gists takes about 40 seconds.", True),
        # A kind only a name answers: the sentence must say the kind, or put the name where asked.
        ("Which hash functions do Bloom filters use?",
         "A Bloom filter allows us to ask whether an SSTable might contain any data.", False),
        ("Which hash functions do Bloom filters use?", "The Bloom filters use the MurmurHash hash function.", True),
        ("In which programming language are the master and chunkserver implemented?",
         "Distributed garbage collection is hard in the context of programming languages.", False),
        ("Which programming languages are used for the client library?",
         "The C++ client library is 7000 lines.", True),
        ("Which manufacturer made the disks?", "Each machine has two 80 GB 5400 rpm disks and PIII processors.", False),
    ],
)  # fmt: skip
def test_a_share_a_percentile_a_timed_doing_and_a_named_kind_are_stated_only_as_asked(question, text, stated):
    assert states(question, text) is stated


@pytest.mark.parametrize(
    ("question", "text", "stated"),
    [
        ("What is the p99 election latency?", "The median election took 412 ms.", False),
        ("What is the p99 election latency?", "p99 election latency was 1630 ms.", True),
        ("What is the median election time in milliseconds?",
         "Election timeouts are chosen at random between 150 and 300 ms.", False),
        ("What is the median election time in milliseconds?", "The median election time was 412 ms.", True),
    ],
)  # fmt: skip
def test_a_median_or_a_p99_asked_for_is_the_figures_own(question, text, stated):
    assert states(question, text) is stated


@pytest.mark.parametrize(
    ("question", "head"),
    [
        ("What was the slowest leader election observed in the experiments?", "elect"),
        ("What is the simple optimization suggested for read-only commands?", "optim"),
        ("Which other off-the-shelf tools for extracting content from PDFs do the authors mention?", "tool"),
        ("Under which open-source license is Bigtable released?", "licens"),
        ("At what point does the leader step down?", ""),
    ],
)
def test_the_asked_head_is_the_noun_before_what_modifies_it(question, head):
    assert asked_head(question) == head


def test_a_sentence_naming_the_asked_noun_before_its_participle_states_the_fact():
    refs = [reference(1, 1, "One simple optimization is for a leader to send a read-only command to one replica.")]
    answer = scored_answer(refs, "What is the simple optimization suggested for read-only commands in Raft?")
    assert answer.status == Status.ANSWERED


def test_a_percentage_the_question_gives_is_a_condition_not_the_measure_asked():
    assert asked_measure("What throughput does a 3-server ensemble get with 0% reads?") != "share"
    assert asked_measure("What % of requests are reads?") == "share"
