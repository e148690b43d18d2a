"""Question analysis (`chat.question`): named papers, comparison intent, answer types, key terms and
the deterministic follow-up rewrite. Pure functions: no database, no model."""

import dataclasses

import pytest

from chat.prompts import Turn
from chat.question import (
    AnswerType,
    PaperRef,
    absent_paper,
    acting_name,
    analyse_question,
    answer_name,
    asked_thing,
    classify_answer_type,
    close_paper_name,
    cut_mentions,
    defined_term,
    figure_label,
    first_author,
    measured_thing,
    mentions,
    paper_names,
    standalone_from_reply,
    surname,
)

CHUBBY = PaperRef(1, "The Chubby lock service for loosely-coupled distributed systems", "Mike Burrows", 2006)
RAFT = PaperRef(
    2,
    "In Search of an Understandable Consensus Algorithm",
    "Diego Ongaro",
    2013,
    abstract="Raft is a consensus algorithm for managing a replicated log. It is as efficient as Paxos.",
)
ZOOKEEPER = PaperRef(
    3,
    "ZooKeeper: Wait-free coordination for Internet-scale systems",
    "Patrick Hunt",
    2010,
    abstract="In this paper, we describe ZooKeeper, a service for coordinating processes.",
)
GFS = PaperRef(4, "The Google File System", "Sanjay Ghemawat", 2003)
BIGTABLE = PaperRef(5, "Bigtable: A Distributed Storage System for Structured Data", "Fay Chang", 2006)
PAXOS = PaperRef(6, "Paxos Made Simple", "Leslie Lamport", 2001)
LIBRARY = [CHUBBY, RAFT, ZOOKEEPER, GFS, BIGTABLE, PAXOS]


def analyse(question: str, *turns: tuple[str, tuple[int, ...]]) -> object:
    """*question* after the (question, cited paper ids) turns, in LIBRARY."""
    history = [t for q, cited in turns for t in (Turn("user", q), Turn("assistant", "An answer.", paper_ids=cited))]
    return analyse_question(question, history=history, papers=LIBRARY)


# --- paper names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("paper", "name"),
    [(ZOOKEEPER, "ZooKeeper"), (BIGTABLE, "Bigtable"), (CHUBBY, "Chubby"), (GFS, "GFS"), (RAFT, "Raft")],
)
def test_short_names_come_from_the_title_or_the_abstracts_introduction(paper, name):
    assert paper_names(paper)[0] == name


def test_a_coined_word_opening_a_title_is_its_name_but_an_ordinary_word_is_not():
    assert "Paxos" in paper_names(PAXOS)
    assert "Note" not in paper_names(PaperRef(7, "A Note on Quorum Systems"))


def test_a_parenthesised_name_in_a_title_is_a_short_name_but_a_version_note_is_not():
    assert "Raft" in paper_names(PaperRef(9, "In Search of an Understandable Consensus Algorithm (Raft)"))
    assert paper_names(PaperRef(9, "A study of caching (Extended Version)")) == ()


def test_a_subtitle_gives_no_names_when_the_title_leads_with_one():
    assert paper_names(ZOOKEEPER) == ("ZooKeeper",)


def test_surnames_come_from_the_first_author_in_any_common_form():
    assert surname(first_author("Mike Burrows, Google Inc.")) == "Burrows"
    assert surname(first_author("Patrick Hunt and Mahadev Konar")) == "Hunt"
    assert surname("Burrows, M.") == "Burrows"
    assert surname("Amy X. Zhang") == "Zhang"
    assert surname("TAL AUGUST") == "August"
    assert first_author("Joseph Chee Chang Amy X. Zhang Jonathan Bragg") == ""


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("What chunk size does GFS use?", (4,)),
        ("According to the ZooKeeper paper, what ordering guarantees do clients get?", (3,)),
        ("How does the Raft paper handle membership changes?", (2,)),
        ("What does Burrows say about caching?", (1,)),
        ("What does the Google File System say about record appends?", (4,)),
        ("What is zookeeper's consistency model?", (3,)),
        ("How do GFS and Bigtable depend on each other?", (4, 5)),
        ("How does Raft elect a leader, and how does Paxos choose a value?", (2, 6)),
        ("How do leaders get elected?", ()),
    ],
)
def test_papers_are_named_by_title_short_name_or_first_author(question, named):
    assert analyse(question).named_paper_ids == named


def test_a_plain_capitalised_name_in_lower_case_is_an_ordinary_word():
    assert analyse("How do you keep a chubby cat happy?").named_paper_ids == ()


# --- comparison -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "named", "not_key"),
    [
        ("Ongaro and Ousterhout thank one person for finding a subtle bug. Who was it?", (2,), "ousterhout"),
        ("According to Ghemawat, Gobioff and Leung, which chunks does the master boost?", (4,), "gobioff"),
    ],
)
def test_a_first_author_with_co_authors_names_one_paper_and_their_names_are_no_key_terms(question, named, not_key):
    analysis = analyse(question)
    assert analysis.named_paper_ids == named and not analysis.comparison
    assert not_key not in analysis.key_terms


def test_two_first_authors_joined_by_and_are_two_papers():
    analysis = analyse("How do Lamport and Ongaro differ on leader election?")
    assert set(analysis.named_paper_ids) == {PAXOS.paper_id, RAFT.paper_id} and analysis.comparison


@pytest.mark.parametrize(
    "question",
    [
        "How do GFS and Bigtable depend on each other?",
        "Compare the consistency models of GFS and Bigtable.",
        "How does Raft differ from Paxos Made Simple?",
        "Which papers rely on S2ORC?",
        "How do the storage systems and the lock service each handle failures?",
        "Do both systems use leases?",
    ],
)
def test_comparisons_and_broad_questions_are_recognised(question):
    assert analyse(question).comparison is True


@pytest.mark.parametrize(
    "question",
    [
        "What chunk size does GFS use?",
        "How does Raft elect a leader?",
        # One paper named twice, by its name and by its first author.
        "In the Bigtable paper by Chang et al., what is the maximum size of a row key?",
        "In Burrows's paper on the Chubby lock service, how long was the last master fail-over ago?",
    ],
)
def test_a_question_about_one_paper_is_no_comparison(question):
    assert analyse(question).comparison is False


# --- answer types and key terms -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "answer_type"),
    [
        ("What chunk size does GFS use?", AnswerType.QUANTITY),
        ("How many participants took part in the study?", AnswerType.QUANTITY),
        ("What is the lease timeout in Chubby?", AnswerType.QUANTITY),
        ("What range of election timeouts does Raft use?", AnswerType.QUANTITY),
        ("What fanout do the authors use?", AnswerType.QUANTITY),
        ("How deep does the crawler crawl?", AnswerType.QUANTITY),
        ("How old were the participants?", AnswerType.QUANTITY),
        ("What is Paxos?", AnswerType.DEFINITION),
        ("Define linearizability", AnswerType.DEFINITION),
        ("Which system stores its logs in GFS?", AnswerType.ENTITY),
        ("Who wrote the Chubby paper?", AnswerType.ENTITY),
        ("What hardware was SciBERT pretrained on?", AnswerType.ENTITY),
        ("What framework is the model built with?", AnswerType.ENTITY),
        ("What cloud provider did the GFS authors use?", AnswerType.ENTITY),  # a maker, with a modifier
        ("What operating system do the chunkservers run?", AnswerType.ENTITY),
        ("What PDF library does PaperMage use to extract text?", AnswerType.ENTITY),  # a tool of a kind, named
        ("Which web framework does the backend use?", AnswerType.ENTITY),
        # The thing used to do something: a tool; what another thing is used for is no name.
        ("What does S2ORC use to split text into sentences?", AnswerType.ENTITY),
        ("What does papermage use for sentence segmentation?", AnswerType.ENTITY),
        ("What does Bigtable use Chubby for?", AnswerType.OTHER),
        ("Does ZooKeeper use locks?", AnswerType.YES_NO),
        ("How does Raft elect a leader?", AnswerType.MECHANISM),
        ("Why does Chubby use coarse-grained locks?", AnswerType.MECHANISM),
        ("How well does the click table compress?", AnswerType.QUANTITY),
        ("And how does the leader replicate entries?", AnswerType.MECHANISM),
        ("How did Grobid fare on the same evaluation?", AnswerType.QUANTITY),
        ("How does CoreRecipe perform on S2-VL?", AnswerType.QUANTITY),
        ("How does Raft perform leader election?", AnswerType.MECHANISM),
        # "servers" after "what" is counted; after "what data structure lets", it is no asked noun.
        ("What servers make up a Chubby cell?", AnswerType.QUANTITY),
        ("What data structure lets replicas detect which keys differ?", AnswerType.ENTITY),
    ],
)
def test_answer_types(question, answer_type):
    assert classify_answer_type(question) == answer_type


def test_key_terms_leave_out_question_words_light_verbs_and_the_named_paper():
    assert analyse("What chunk size does GFS use?").key_terms == ("chunk", "size")
    assert analyse("What fanout do the authors use?").key_terms == ("fanout",)


def test_an_adjective_asked_with_how_brings_its_dimensions_noun():
    assert analyse("How deep does the crawler crawl?").key_terms == ("deep", "depth", "crawler", "crawl")
    assert analyse("How old were the participants?").key_terms == ("old", "age", "participants")
    assert "length" not in analyse("How long did the sort take?").key_terms  # a time, not a length


def test_a_name_two_papers_share_is_cut_once():
    paxos_complex = PaperRef(8, "Paxos Made Moderately Complex", "Robbert van Renesse", 2015)
    papers = [CHUBBY, PAXOS, paxos_complex]
    question = "Where do the storage systems rely on Paxos through Chubby?"
    assert cut_mentions(question, papers) == "Where do the storage systems rely on through ?"
    assert (
        cut_mentions(question, papers, keep={PAXOS.paper_id}) == "Where do the storage systems rely on Paxos through ?"
    )


# --- follow-ups -----------------------------------------------------------------------------------

MEMBERSHIP = ("How does Raft handle cluster membership changes?", (2,))
ELECTION = ("How do Raft and Chubby elect a leader?", (2, 1))
ELECTED = ("How does Raft elect a leader?", (2,))
GFS_FAILS = ("What happens when the GFS master fails?", (4,))


def test_a_standalone_question_is_left_as_it_is():
    analysis = analyse("How does ZooKeeper order writes?", MEMBERSHIP)
    assert (analysis.query, analysis.rewritten) == ("How does ZooKeeper order writes?", False)


def test_without_history_nothing_is_rewritten():
    analysis = analyse("How does Chubby handle that?")
    assert (analysis.query, analysis.rewritten) == ("How does Chubby handle that?", False)
    assert analysis.named_paper_ids == (1,)


def test_that_takes_the_previous_topic_and_the_new_paper():
    analysis = analyse("How does Chubby handle that?", MEMBERSHIP)
    assert analysis.rewritten is True
    assert analysis.query == "How does Chubby handle cluster membership changes?"
    assert analysis.named_paper_ids == (1,)
    assert analysis.key_terms == ("cluster", "membership", "changes")


@pytest.mark.parametrize(
    ("question", "query"),
    [
        ("How long did that take?", "How long did cluster membership changes take in Raft?"),
        ("What does this cost?", "What does cluster membership changes cost in Raft?"),
    ],
)
def test_that_as_the_subject_of_a_closing_verb_is_the_previous_topic(question, query):
    analysis = analyse(question, MEMBERSHIP)
    assert analysis.query == query
    assert analysis.named_paper_ids == (2,)
    assert {"cluster", "membership", "changes"} <= set(analysis.key_terms)


def test_the_previous_topic_leaves_out_the_words_the_follow_up_says_itself():
    analysis = analyse("How long did that take?", ("How long did the Raft evaluation take?", (2,)))
    assert analysis.query == "How long did evaluation take in Raft?"


def test_the_second_paper_is_the_second_one_the_previous_turn_named():
    analysis = analyse("And how does the second paper do it?", ELECTION)
    assert analysis.query == "How does Chubby elect a leader?"
    assert analysis.named_paper_ids == (1,)


def test_the_second_paper_of_a_broad_question_is_the_second_one_its_answer_cited():
    analysis = analyse("How does the second paper do that?", ("How do the papers handle leader failure?", (2, 3, 1)))
    assert analysis.named_paper_ids == (3,)
    assert "ZooKeeper" in analysis.query and "leader failure" in analysis.query


def test_the_other_one_is_the_paper_the_previous_turn_was_not_about():
    analysis = analyse("Does the other one use leases too?", ("How does Raft elect a leader?", (2, 1)))
    assert analysis.query == "Does Chubby use leases too?"
    assert analysis.named_paper_ids == (1,)


def test_it_as_the_subject_is_the_previous_paper():
    analysis = analyse("How does it handle log compaction?", ("How does Raft elect a leader?", (2,)))
    assert analysis.query == "How does Raft handle log compaction?"
    assert analysis.named_paper_ids == (2,)


def test_a_question_with_nothing_of_its_own_asks_the_previous_one_about_the_new_paper():
    analysis = analyse("And Bigtable?", ("What chunk size does GFS use?", (4,)))
    assert analysis.query == "What chunk size does Bigtable use?"
    assert analysis.named_paper_ids == (5,)
    assert analysis.answer_type == AnswerType.QUANTITY


def test_a_follow_up_naming_no_paper_stays_with_the_previous_papers():
    analysis = analyse("And what is a term?", ("How does Raft elect a leader?", (2,)))
    assert analysis.query == "What is a term in Raft?"
    assert analysis.named_paper_ids == (2,)


@pytest.mark.parametrize(
    ("previous", "follow_up"),
    [
        (("How many failures can a Raft cluster of five tolerate?", (2,)), "What happens if more than that fail?"),
        (("Which clients read from Chubby's cache?", (1,)), "Which services use it that way?"),
        (("How does GFS place replicas by default?", (4,)), "When would you want something else?"),
    ],
)  # fmt: skip
def test_a_question_pointing_back_with_than_that_it_that_way_or_something_else_is_a_follow_up(previous, follow_up):
    analysis = analyse(follow_up, previous)
    assert analysis.rewritten is True
    assert analysis.named_paper_ids == previous[1]


@pytest.mark.parametrize(
    ("previous", "follow_up", "query"),
    [
        # The previous question's verb stands where "handle that" did, not after it.
        (ELECTED, "How does Chubby handle that?", "How does Chubby elect a leader?"),
        (ELECTED, "And how does ZooKeeper deal with it?", "How does ZooKeeper elect a leader?"),
        # An event: the same event, in the paper now named.
        (GFS_FAILS, "How does Chubby handle that?", "What happens when Chubby master fails?"),
        # With a light verb of its own the topic takes the place of "that", as before.
        (MEMBERSHIP, "How does Chubby cope with that?", "How does Chubby cope with cluster membership changes?"),
    ],
)  # fmt: skip
def test_handling_that_asks_the_previous_question_of_the_paper_now_named(previous, follow_up, query):
    analysis = analyse(follow_up, previous)
    assert analysis.query == query
    assert analysis.named_paper_ids == analyse(query).named_paper_ids


def test_both_of_them_is_a_comparison_of_the_previous_papers():
    analysis = analyse("How do both of them handle that?", ELECTION)
    assert analysis.named_paper_ids == (2, 1)
    assert analysis.comparison is True


def test_follow_ups_of_follow_ups_resolve_through_the_chain():
    analysis = analyse("And the other one?", MEMBERSHIP, ("How does Chubby handle that?", (1,)))
    assert analysis.named_paper_ids == (2,)
    assert analysis.query == "How does Raft handle cluster membership changes?"


def test_they_refers_to_the_questions_own_papers_when_it_names_some():
    analysis = analyse("Which papers use Paxos and how do they differ?", MEMBERSHIP)
    assert analysis.rewritten is False


def test_the_other_servers_is_not_a_paper_reference():
    assert analyse("How does the leader inform the other servers?", MEMBERSHIP).rewritten is False


# --- the chat model's reply -----------------------------------------------------------------------


def test_the_standalone_question_is_read_from_the_first_line_of_a_reply():
    assert standalone_from_reply('Standalone question: "How does Chubby handle membership?"\n') == (
        "How does Chubby handle membership?"
    )
    assert standalone_from_reply("\n\n") == ""
    assert standalone_from_reply("x" * 2000) == ""


def test_its_belonging_to_a_noun_of_the_question_is_no_reference():
    analysis = analyse("How does a replicated system keep its state consistent?", MEMBERSHIP)
    assert analysis.rewritten is False
    assert analyse("What is its chunk size?", ("How does GFS store files?", (4,))).query == "What is GFS's chunk size?"


def test_a_comparison_word_inside_one_paper_is_no_comparison_of_papers():
    for question in ("How does Dynamo capture causality between different versions?", "Which keys differ?"):
        assert analyse(question).comparison is False


def test_broad_questions_are_told_apart_from_comparisons_of_named_papers():
    assert analyse("Where do the storage systems rely on Paxos through Chubby?").broad is True
    # "Paxos" names the Paxos paper too; a broad question searches every paper all the same.
    assert analyse("Where do the storage systems rely on Paxos through Chubby?").named_paper_ids == (6, 1)
    compared = analyse("How do GFS and Bigtable depend on each other?")
    assert (compared.comparison, compared.broad) == (True, False)


# --- first authors and two-paper projects ---------------------------------------------------------

S2ORC = PaperRef(7, "S2ORC: The Semantic Scholar Open Research Corpus", "Kyle Lo", 2020)
TRUST = PaperRef(8, "Calibrating trust in clinical decision support", "Chidi Okafor", 2021)
PAIR = [GFS, BIGTABLE]


def analyse_in(papers: list[PaperRef], question: str, *turns: tuple[str, tuple[int, ...]]) -> object:
    history = [t for q, cited in turns for t in (Turn("user", q), Turn("assistant", "An answer.", paper_ids=cited))]
    return analyse_question(question, history=history, papers=papers)


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("What does Okafor find about trust?", (8,)),
        ("What did Okafor et al. measure?", (8,)),
        ("According to Lo et al., how many papers have full text?", (7,)),
        ("What corpus do Lo et al. build?", (7,)),
        ("Lo and behold, what is a corpus?", ()),
    ],
)
def test_a_paper_named_only_by_its_first_authors_surname_is_focused(question, named):
    analysis = analyse_in([S2ORC, TRUST, GFS], question)
    assert analysis.named_paper_ids == named
    assert "et" not in analysis.key_terms and "al" not in analysis.key_terms


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("What was the average completion time of jobs at Google in August 2004?", ()),
        ("What did August et al. find about medical papers?", (9,)),
        ("What does August's paper say about gists?", (9,)),
    ],
)
def test_a_surname_that_is_a_month_names_the_paper_only_in_a_citations_form(question, named):
    plain = PaperRef(9, "Plainly Put: Making Medical Research Papers Approachable", "Tal August", 2022)
    assert analyse_in([plain, GFS], question).named_paper_ids == named


ZOOKEEPER_BY_HUNT = PaperRef(9, "ZooKeeper: Wait-free coordination for Internet-scale systems", "Patrick Hunt", 2010)
PAPERMAGE_BY_LO = PaperRef(10, "PaperMage: A Unified Toolkit for Scientific Documents", "Kyle Lo", 2023)


@pytest.mark.parametrize(
    ("question", "query"),
    [
        ("What did Hunt et al. measure?", "What did ZooKeeper measure?"),
        ("What is Hunt et al.'s main claim?", "What is ZooKeeper's main claim?"),
        ("According to Hunt, what is a znode?", "According to ZooKeeper, what is a znode?"),
        # Two papers by Lo: the surname names both, and stays.
        ("What did Lo et al. build?", "What did Lo et al. build?"),
        # No proper short name ("Calibrating" is only the title's first word): the title, quoted.
        (
            "What did Okafor et al. measure?",
            "What did \u201cCalibrating trust in clinical decision support\u201d measure?",
        ),
        # "X's paper" is the paper, not something of it; the name the abstract introduces is proper.
        ("What does Ongaro's paper say about log compaction?", "What does Raft say about log compaction?"),
        (
            "What does Okafor's paper conclude?",
            "What does \u201cCalibrating trust in clinical decision support\u201d conclude?",
        ),
    ],
)
def test_a_paper_named_by_its_first_authors_surname_is_searched_by_its_own_name(question, query):
    analysis = analyse_in([S2ORC, TRUST, ZOOKEEPER_BY_HUNT, PAPERMAGE_BY_LO, RAFT], question)
    assert analysis.query == query
    assert analysis.named_paper_ids


@pytest.mark.parametrize(
    ("authors", "first"),
    [
        ("Kyle Lo\u03b1\u2217, Zejiang Shen\u03b1\u2217", "Kyle Lo"),
        ("Jos\u00e9 N\u00fa\u00f1ez1 and Ana Ruiz2", "Jos\u00e9 N\u00fa\u00f1ez"),
        ("Mike Burrows, Google Inc.", "Mike Burrows"),
    ],
)
def test_a_first_author_is_read_without_affiliation_marks(authors, first):
    assert first_author(authors) == first


@pytest.mark.parametrize(
    "follow_up", ["What about the other one?", "And the other paper?", "How does the second paper do it?"]
)
def test_in_a_two_paper_project_the_other_one_is_the_paper_not_cited(follow_up):
    analysis = analyse_in(PAIR, follow_up, ("What chunk size does GFS use?", (4,)))
    assert analysis.query == "What chunk size does Bigtable use?"
    assert analysis.named_paper_ids == (5,)


def test_they_after_a_question_about_one_paper_are_its_authors():
    analysis = analyse_in(PAIR, "Why did they choose such a large size?", ("What chunk size does GFS use?", (4,)))
    assert analysis.query == "Why did GFS choose such a large size?"
    assert analysis.named_paper_ids == (4,)
    assert analysis.comparison is False


def test_it_inside_a_clause_is_the_paper_the_previous_question_named_last():
    analysis = analyse("What happens when it becomes unavailable?", ("What does Bigtable use Chubby for?", (5,)))
    assert analysis.query == "What happens when Chubby becomes unavailable in Bigtable?"
    assert set(analysis.named_paper_ids) == {1, 5}


def test_the_two_papers_of_a_two_paper_project_are_both_needed():
    analysis = analyse_in(PAIR, "Compare the sample sizes of the two papers")
    assert analysis.named_paper_ids == (4, 5)
    assert analysis.comparison is True
    # In a larger project "the two papers" names none of them.
    assert analyse("Compare the sample sizes of the two papers").named_paper_ids == ()


def test_its_refers_back_to_the_previous_paper_unless_the_question_owns_it():
    analysis = analyse_in([S2ORC, GFS], "For how many of its papers is full text available?", ("What is S2ORC?", (7,)))
    assert analysis.query == "For how many of S2ORC's papers is full text available?"
    assert analysis.named_paper_ids == (7,)
    own = analyse_in([S2ORC, GFS], "How does a system keep its state?", ("What is S2ORC?", (7,)))
    assert (own.rewritten, own.named_paper_ids) == (False, ())


def test_an_adjective_one_is_a_kind_of_the_previous_topic():
    analysis = analyse(
        "What happens to an ephemeral one when its session ends?", ("What is a znode in ZooKeeper?", (3,))
    )
    assert analysis.query == "What happens to an ephemeral znode when its session ends in ZooKeeper?"
    assert analysis.named_paper_ids == (3,)
    assert analyse("Is the second one faster?", ("How do GFS and Bigtable store data?", (4, 5))).named_paper_ids == (5,)


def test_a_compound_question_is_split_into_parts_that_each_keep_their_subject():
    analysis = analyse("What is an SSTable and what does it provide to Bigtable?")
    first, second = analysis.parts
    assert (first.query, first.answer_type) == ("What is an SSTable?", AnswerType.DEFINITION)
    assert "sstable" in second.key_terms  # "it" is the first part's subject
    assert second.named_paper_ids == (BIGTABLE.paper_id,)


@pytest.mark.parametrize(
    ("question", "second"),
    [
        ("How many chunks does GFS keep, and how many with three replicas?", "how many chunks with three replicas?"),
        ("How many chunks does GFS keep, and how many have three replicas?", "how many chunks have three replicas?"),
        # A first part that counts no plural of its own ("how many of the chunks") lends none.
        ("How many of the chunks does GFS keep, and how many with three replicas?", "how many with three replicas?"),
        # "of them" counts the first part's things already.
        ("How many servers does a Chubby cell have and how many of them are masters?", "how many of them are masters?"),
    ],
)
def test_a_bare_how_many_in_a_later_part_counts_what_the_first_part_counts(question, second):
    assert analyse(question).parts[1].query == second


def test_each_part_of_a_compound_question_names_its_own_papers():
    analysis = analyse("How big are GFS chunks, and how does Bigtable use GFS to store its files?")
    first, second = analysis.parts
    assert (first.answer_type, first.named_paper_ids) == (AnswerType.QUANTITY, (GFS.paper_id,))
    assert set(second.named_paper_ids) == {GFS.paper_id, BIGTABLE.paper_id}
    assert "chunks" not in second.key_terms  # it does not refer back


@pytest.mark.parametrize(
    "question", ["How and why does GFS replicate chunks?", "What chunk size does GFS use and why?", "What is Raft?"]
)
def test_a_question_that_asks_one_thing_has_no_parts(question):
    assert analyse(question).parts == ()


def test_each_paper_of_a_comparison_gets_its_own_query_without_the_other_papers_names():
    queries = dict(analyse("How do Raft and Chubby each elect a leader?").paper_queries)
    assert queries == {
        RAFT.paper_id: "How do Raft each elect a leader?",
        CHUBBY.paper_id: "How do Chubby each elect a leader?",
    }
    compound = dict(analyse("How big are GFS chunks, and how does Bigtable store its tablets?").paper_queries)
    assert compound[GFS.paper_id] == "How big are GFS chunks?"
    assert compound[BIGTABLE.paper_id] == "how does Bigtable store its tablets?"
    assert analyse("How does Raft elect a leader?").paper_queries == ()


def test_each_side_of_a_comparison_in_phrases_of_their_own_leaves_the_other_phrase_out():
    queries = dict(analyse("How many servers run in the Raft cluster and in the Chubby cell?").paper_queries)
    assert queries == {
        RAFT.paper_id: "How many servers run in the Raft cluster?",
        CHUBBY.paper_id: "How many servers run in the Chubby cell?",
    }
    definite = dict(analyse("How long did the Raft user study and the Chubby outage last?").paper_queries)
    assert definite == {
        RAFT.paper_id: "How long did the Raft user study last?",
        CHUBBY.paper_id: "How long did the Chubby outage last?",
    }
    # The same modifier before each name: each phrase to the end of its conjunct.
    parallel = dict(analyse("How large are typical Bigtable row keys and typical GFS chunks?").paper_queries)
    assert parallel == {
        BIGTABLE.paper_id: "How large are typical Bigtable row keys?",
        GFS.paper_id: "How large are typical GFS chunks?",
    }
    # Without one, the verb after the second phrase belongs to both: only the names are cut.
    shared = dict(analyse("How do Bigtable row keys and GFS chunks differ in size?").paper_queries)
    assert shared[GFS.paper_id] == "How do row keys and GFS chunks differ in size?"
    # "X's thing compared with Y's": the thing of each.
    theirs = dict(analyse("How does Raft's leader election compare with ZooKeeper's?").paper_queries)
    assert theirs == {
        RAFT.paper_id: "How does Raft's leader election compare?",
        ZOOKEEPER.paper_id: "How does ZooKeeper's leader election compare?",
    }


@pytest.mark.parametrize("question", ["Who are the authors of the paper?", "Where was the paper published?"])
def test_a_question_about_the_paper_itself_is_no_follow_up(question):
    analysis = analyse(question, ("How does Raft handle failures?", (RAFT.paper_id,)))
    assert analysis.query == question and not analysis.rewritten


@pytest.mark.parametrize(
    ("question", "term"),
    [
        ("What is a znode in ZooKeeper?", "znode"),
        ("What is S2ORC?", "S2ORC"),
        ("According to the Raft paper, what is a term?", "term"),
        ("What does SSTable stand for?", "SSTable"),
        ("Define joint consensus.", "joint consensus"),
        ("What is a tablet in the Bigtable paper?", "tablet"),
        ("What is the lease timeout in Chubby?", None),  # a quantity
        ("What is Chubby used for?", None),
        ("What is the role of the master in GFS today?", None),
    ],
)
def test_a_definition_question_names_the_term_it_asks_to_define(question, term):
    assert defined_term(question) == term


@pytest.mark.parametrize(
    ("question", "label"),
    [
        ("What does Table 3 show?", "Table 3"),
        ("what is in fig. 2 of the Raft paper", "Figure 2"),
        ("Explain Figure 10.", "Figure 10"),
        ("Which table lists the results?", None),
    ],
)
def test_a_question_names_the_table_or_figure_it_asks_about(question, label):
    assert figure_label(question) == label


@pytest.mark.parametrize(
    "question",
    ["What is an SSTable and what does it provide?", "What is a znode and how is it used?"],
)
def test_a_pronoun_whose_noun_is_in_an_earlier_part_of_the_question_is_no_follow_up(question):
    analysis = analyse(question, ("How does Raft elect a leader?", (RAFT.paper_id,)))
    assert analysis.query == question
    assert not analysis.rewritten and analysis.named_paper_ids == ()


@pytest.mark.parametrize(
    "question",
    ["Compare how GFS and Bigtable use Chubby.", "How do Bigtable, GFS and Chubby depend on each other?"],
)
def test_a_question_about_how_named_papers_bear_on_one_another_searches_each_pair(question):
    analysis = analyse(question)
    assert len(analysis.named_paper_ids) == 3
    # Each paper once with each other one, the third name cut: Bigtable's passages about GFS and
    # its passages about Chubby are both found.
    bigtable = [text for pid, text in analysis.paper_queries if pid == BIGTABLE.paper_id]
    assert len(bigtable) == 2
    assert {("GFS" in text, "Chubby" in text) for text in bigtable} == {(True, False), (False, True)}
    assert all("Bigtable" in text for text in bigtable)
    assert len(analysis.paper_queries) == 6
    # The papers' names are what a passage relating them holds: they are key terms.
    assert {"bigtable", "gfs", "chubby"} <= set(analysis.key_terms)
    assert dict(analysis.related_names) == {
        BIGTABLE.paper_id: "Bigtable",
        GFS.paper_id: "GFS",
        CHUBBY.paper_id: "Chubby",
    }


def test_relate_to_asks_how_papers_bear_on_one_another():
    analysis = analyse("How does Raft relate to Paxos?")
    assert dict(analysis.paper_queries) == {
        RAFT.paper_id: "How does Raft relate to Paxos?",
        PAXOS.paper_id: "How does Raft relate to Paxos?",
    }
    assert {"raft", "paxos"} <= set(analysis.key_terms)


def test_the_use_of_a_named_paper_asks_how_the_others_bear_on_it():
    analysis = analyse("How do Bigtable and Chubby each describe their use of GFS?")
    assert {"bigtable", "chubby", "gfs"} <= set(analysis.key_terms)
    assert (BIGTABLE.paper_id, "How do Bigtable each describe their use of GFS?") in analysis.paper_queries


def test_a_comparison_of_each_paper_on_its_own_gets_a_query_per_paper():
    analysis = analyse("How do Raft and Chubby each use leases?")
    assert analysis.related_names == ()
    assert dict(analysis.paper_queries) == {
        RAFT.paper_id: "How do Raft each use leases?",
        CHUBBY.paper_id: "How do Chubby each use leases?",
    }


def test_it_after_a_definition_question_is_the_thing_defined():
    analysis = analyse("How is it stored?", ("What is an SSTable?", ()))
    assert analysis.query == "How is the SSTable stored?"


def test_it_after_a_what_x_question_is_the_thing_asked_for_unless_a_named_paper_acts():
    analysis = analyse("How is it computed?", ("What similarity score is used for bibliography linking?", ()))
    assert analysis.query == "How is the similarity score computed?"
    analysis = analyse("Why was it chosen?", ("What chunk size does GFS use?", (GFS.paper_id,)))
    assert analysis.query == "Why was the chunk size chosen in GFS?"
    assert analysis.named_paper_ids == (GFS.paper_id,)
    analysis = analyse("How does it handle hot spots?", ("What chunk size does GFS use?", (GFS.paper_id,)))
    assert analysis.query == "How does GFS handle hot spots?"
    analysis = analyse("How does it split them?", ("Which paper introduced tablets?", (BIGTABLE.paper_id,)))
    assert "paper" not in analysis.query


def test_it_after_a_passive_how_question_is_that_questions_subject():
    previous = ("How is the similarity score computed?", ())
    assert analyse("What threshold does it use?", previous).query == "What threshold does the similarity score use?"
    earlier = [("What is S2ORC?", ()), ("How are bibliography entries linked to papers?", ()), previous]
    analysis = analyse("What threshold does it use?", *earlier)
    assert analysis.query == "What threshold does the similarity score use?" and analysis.rewritten
    longer = ("How is the similarity score for linking bibliography entries computed?", ())
    assert analyse("What threshold does it use?", longer).query == (
        "What threshold does the similarity score for linking bibliography entries use?"
    )


def test_the_two_after_a_question_about_one_paper_are_two_things_not_two_papers():
    caching = ("How do Bigtable tablet servers improve read performance with caching?", (BIGTABLE.paper_id,))
    analysis = analyse("Which of the two helps applications that keep reading the same data?", caching)
    assert analysis.query == "Which of the two helps applications that keep reading the same data in Bigtable?"
    assert analysis.named_paper_ids == (BIGTABLE.paper_id,)
    both = ("How do Raft and Chubby elect a leader?", (RAFT.paper_id, CHUBBY.paper_id))
    assert analyse("Which of the two is simpler?", both).query == "Which of Raft and Chubby is simpler?"


def test_it_as_an_object_and_them_as_a_group_are_the_things_the_previous_question_asked_for():
    tools = ("What tools does S2ORC use to parse PDFs?", (S2ORC.paper_id,))
    assert analyse_in([S2ORC], "What version of it is used?", tools).query == (
        "What version of the tools is used in S2ORC?"
    )
    filters = ("What filters does S2ORC apply to the full text?", (S2ORC.paper_id,))
    assert analyse_in([S2ORC], "Which of them removes the most?", filters).query == (
        "Which of the filters removes the most in S2ORC?"
    )
    assert analyse_in([S2ORC], "How are they applied?", filters).query == "How are the filters applied in S2ORC?"
    # Asked again, it is answered as the first time: its own answer's quotes are no "said before".
    said = Turn("assistant", "...", paper_ids=(S2ORC.paper_id,), quotes=("Not English 15.2M",))
    history = [Turn("user", filters[0]), Turn("assistant", "...", paper_ids=(S2ORC.paper_id,))]
    first = analyse_question("Which of them removes the most?", history=history, papers=[S2ORC])
    history += [Turn("user", "Which of them  removes the most?"), said]
    assert analyse_question("Which of them removes the most?", history=history, papers=[S2ORC]) == first
    assert first.said_before == ()
    # One thing asked for ("Which filter ...?"): "which of them" is which of those things.
    one = ("Which filter removes the most papers?", (S2ORC.paper_id,))
    assert analyse_in([S2ORC], "Which of them removes the least?", one).query == "Which filter removes the least?"
    # "They" acting is still the paper's authors; "them" after a comparison, its papers.
    assert analyse_in([S2ORC], "Why did they choose GROBID?", tools).query == "Why did S2ORC choose GROBID?"
    assert analyse_in([S2ORC], "What do they propose?", tools).query == "What do S2ORC propose?"
    # Things acting in the present are the things: the servers choose a master, not Chubby's authors.
    servers = ("What servers make up a Chubby cell?", (CHUBBY.paper_id,))
    analysis = analyse("How do they choose a master?", servers)
    assert analysis.query == "How do the servers that make up a Chubby cell choose a master?"
    assert analysis.named_paper_ids == (CHUBBY.paper_id,)
    previous = ("How do Raft and Chubby elect a leader?", (RAFT.paper_id, CHUBBY.paper_id))
    assert analyse("Which of them is faster?", previous).named_paper_ids == (RAFT.paper_id, CHUBBY.paper_id)


def test_that_compared_with_something_is_the_previous_questions_topic():
    previous = ("What is the vocabulary size of the pretrained model?", (S2ORC.paper_id,))
    analysis = analyse_in([S2ORC], "How does that compare with SciBERT's?", previous)
    assert analysis.rewritten and "vocabulary size" in analysis.query


def test_the_other_paper_named_in_the_question_itself_is_that_paper():
    previous = ("How does Bigtable partition data?", (BIGTABLE.paper_id, GFS.paper_id))
    analysis = analyse("How does the other paper, Chubby, partition data?", previous)
    assert analysis.named_paper_ids == (CHUBBY.paper_id,) and not analysis.comparison
    assert "GFS" not in analysis.query


# --- papers described by their titles' words ------------------------------------------------------

NURSES = PaperRef(11, "Shift Length and Sleep Quality among Hospital Nurses: A Cohort Study", "Maria Lopez", 2022)
DESKS = PaperRef(12, "Standing Desks and Afternoon Productivity in Office Workers", "John Smith", 2021)
STUDIES = [NURSES, DESKS, ZOOKEEPER_BY_HUNT]


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("How many people took part in the nurse study?", (11,)),
        ("What did the sleep study measure?", (11,)),
        ("Was the standing desk study randomised?", (12,)),
        ("How do the nurse study and the office paper differ?", (11, 12)),
        ("What did the other study find?", ()),  # a place, not a title's words
        ("What did the pilot study find?", ()),  # no title says "pilot"
    ],
)
def test_a_paper_described_by_words_of_its_title_is_named(question, named):
    assert analyse_in(STUDIES, question).named_paper_ids == named


def test_what_about_a_described_paper_asks_the_previous_question_about_it():
    previous = ("How many participants took part in the nurse study?", (11,))
    analysis = analyse_in(STUDIES, "What about the office study?", previous)
    assert analysis.named_paper_ids == (12,)
    assert analysis.query == f"How many participants took part in \u201c{DESKS.title}\u201d?"  # not "SDAPOW"


def test_the_other_paper_among_several_is_never_the_one_just_asked_about_and_left_to_the_reader():
    # The answer cited only the nurse study, and the project has two more: which one is "the other
    # paper" the reader says (the answer asks), never the nurse study itself.
    analysis = analyse_in(STUDIES, "And the other paper?", ("Who funded the nurse study?", (11,)))
    assert set(analysis.unclear_papers) == {12, 9}
    # A question naming no paper is about the papers its answer cited.
    analysis = analyse_in(STUDIES, "And the other paper?", ("How many office workers took part?", (12,)))
    assert 12 not in analysis.unclear_papers and analysis.unclear_papers
    # With one other paper in the project, that one.
    two = analyse_in(STUDIES[:2], "And the other paper?", ("Who funded the nurse study?", (11,)))
    assert two.unclear_papers == () and two.named_paper_ids


def test_it_and_the_other_after_a_question_about_two_papers_are_those_two_in_turn():
    # Not "which paper do you mean?" among the project's other papers: the conversation names both.
    previous = ("What does ZooKeeper say about Chubby?", (3, 1))
    analysis = analyse_in(LIBRARY, "What guarantee does it provide that the other system does not?", previous)
    assert analysis.unclear_papers == ()
    assert analysis.query == "What guarantee does ZooKeeper provide that Chubby does not?"
    assert set(analysis.named_paper_ids) == {3, 1}


# --- bare question words and "that" as a subject --------------------------------------------------


@pytest.mark.parametrize(
    ("previous", "follow_up", "query"),
    [
        (
            "How does Raft handle cluster membership changes?",
            "Why?",
            "Why does Raft handle cluster membership changes?",
        ),
        ("What chunk size does GFS use?", "Why?", "Why does GFS use that chunk size?"),
        ("How many replicas does a Chubby cell have?", "Why so?", "Why does a Chubby cell have that many replicas?"),
        ("How big is a Bigtable SSTable block?", "And why?", "Why is a Bigtable SSTable block that big?"),
        ("Does Chubby use Paxos?", "How?", "How does Chubby use Paxos?"),
        # A form the question word cannot be swapped into: the previous question, and why.
        ("Chubby's cell size?", "Why?", "Chubby's cell size, and why?"),
        ("Which of the filters removes the most?", "Why?", "Which of the filters removes the most, and why?"),
        # The degree asked about is the previous answer's.
        (
            "How many replicas does GFS keep by default?",
            "Why so many?",
            "Why does GFS keep by default that many replicas?",
        ),
        # ... also through a pronoun for it.
        (
            "How many replicas does GFS keep by default?",
            "Why is that so many?",
            "Why does GFS keep by default that many replicas?",
        ),
        (
            "What is the aggregate write limit in the GFS micro-benchmarks?",
            "Why is it that low?",
            "Why is the aggregate write limit in the GFS micro-benchmarks?",
        ),
        # A question word after a preposition: the previous question, asking for that.
        ("How long was NightBERT pretrained?", "On what hardware?", "On what hardware was NightBERT pretrained?"),
        (
            "When was the lock service first deployed?",
            "In which year?",
            "In which year was the lock service first deployed?",
        ),
        # Not after a question that ends on a preposition of its own: that asks something else.
        ("How many runs are the results averaged over?", "On what hardware?", "On what hardware?"),
    ],
)
def test_a_bare_question_word_asks_the_previous_question_with_it(previous, follow_up, query):
    assert analyse(follow_up, (previous, ())).query == query


def test_that_as_the_subject_of_a_passive_is_the_previous_topic():
    analysis = analyse("Can that be configured?", ("How big is a Bigtable SSTable block?", (BIGTABLE.paper_id,)))
    assert analysis.query == "Can SSTable block be configured in Bigtable?"
    assert analysis.named_paper_ids == (BIGTABLE.paper_id,)


def test_by_how_much_asks_the_previous_question_for_an_amount():
    assert analyse("By how much?", ("What does Raft outperform?", ())).query == "By how much does Raft outperform?"


@pytest.mark.parametrize(
    ("follow_up", "query"),
    [
        ("Who uses it?", "Who uses ZooKeeper?"),
        ("What does it do?", "What does ZooKeeper do?"),
        ("How is it deployed?", "How is ZooKeeper deployed?"),
    ],
)
def test_it_after_a_question_defining_a_paper_is_that_paper(follow_up, query):
    analysis = analyse(follow_up, ("What is ZooKeeper?", (ZOOKEEPER.paper_id,)))
    assert analysis.query == query
    assert analysis.named_paper_ids == (ZOOKEEPER.paper_id,)


@pytest.mark.parametrize(
    ("previous", "follow_up", "query"),
    [
        # The previous question put what it asked first: "it" is its subject, not the paper.
        (
            "How many servers did the Raft benchmark use?",
            "How long did it take?",
            "How long did the Raft benchmark take?",
        ),
        (
            "What hardware was ZooKeeper deployed on?",
            "How long did that take?",
            "How long did deploying ZooKeeper take?",
        ),
        # Its subject is only the paper: "that" is what it asked for.
        ("What chunk size does GFS use?", "What does that cost?", "What does the chunk size cost in GFS?"),
    ],
)
def test_it_as_the_subject_of_a_closing_verb_is_the_previous_questions_subject(previous, follow_up, query):
    assert analyse(follow_up, (previous, ())).query == query


def test_it_after_a_preposition_is_the_thing_just_defined():
    analysis = analyse("What happens to it after a restart?", ("What is Wayfinder?", ()))
    assert analysis.query == "What happens to Wayfinder after a restart?"
    assert analyse("How are writes applied to it?", ("What is an SSTable?", ())).query == (
        "How are writes applied to the SSTable?"
    )


def test_a_quoted_title_is_swapped_whole_with_its_quotes_and_article():
    trial = PaperRef(
        13, "An Eight-Week Mindfulness Programme for Burnout in Intensive Care Nurses", "Kenji Nakamura", 2023
    )
    previous = ("How many participants were in the mindfulness study?", (13,))
    analysis = analyse_in([trial, NURSES, DESKS], "What about the standing desk study?", previous)
    assert analysis.query == f"How many participants were in \u201c{DESKS.title}\u201d?"
    quoted = f"Who funded \u201c{trial.title}\u201d?"
    (mention,) = mentions(quoted, [trial, NURSES, DESKS])
    assert quoted[mention.start : mention.end] == f"\u201c{trial.title}\u201d"


@pytest.mark.parametrize(
    ("question", "thing"),
    [
        ("What similarity score is used for bibliography linking?", "similarity score"),
        ("What servers make up a Chubby cell?", "servers"),
        ("Which cloud provider hosts the servers of LogCabin?", "cloud provider"),
        ("What does the master store?", None),
        ("What happens when the master fails?", None),
        ("What has changed?", None),
        ("Which paper introduced the term?", None),
    ],
)
def test_the_asked_thing_is_the_noun_phrase_a_what_or_which_question_asks_for(question, thing):
    assert asked_thing(question) == thing


def test_that_described_by_an_adjective_is_the_thing_the_previous_question_asked_for():
    previous = ("What consistency model does ZooKeeper provide for reads?", (ZOOKEEPER.paper_id,))
    analysis = analyse("Why is that helpful?", previous)
    assert analysis.query == "Why is the consistency model helpful in ZooKeeper?"


def test_them_as_an_object_after_a_question_about_one_paper_is_not_the_paper():
    analysis = analyse("Who stores them?", ("How does GFS recover its master state?", (GFS.paper_id,)))
    assert analysis.query == "Who stores them in GFS?"
    assert analysis.named_paper_ids == (GFS.paper_id,)


def test_the_topic_of_a_what_happens_question_keeps_its_ordinal_and_drops_happens():
    previous = ("What happens in the second step of leader election in Raft?", (RAFT.paper_id,))
    query = analyse("What does a follower do in it?", previous).query
    assert "second step" in query
    assert "happens" not in query


def test_a_name_two_papers_share_is_cut_once_from_the_previous_topic():
    paxos_complex = PaperRef(8, "Paxos Made Moderately Complex", "Robbert van Renesse", 2015)
    previous = ("What happens in the first phase of the Paxos algorithm?", (PAXOS.paper_id,))
    query = analyse_in([PAXOS, paxos_complex], "What does an acceptor promise in it?", previous).query
    assert "first phase of algorithm" in query


def test_a_name_two_papers_share_names_only_the_one_the_question_also_names_by_title():
    paxos_complex = PaperRef(8, "Paxos Made Moderately Complex", "Robbert van Renesse", 2015)
    papers = [PAXOS, paxos_complex, RAFT]
    question = "What happens in the first phase of the Paxos algorithm in Paxos Made Simple?"
    assert analyse_in(papers, question).named_paper_ids == (PAXOS.paper_id,)
    # Named by the shared name alone, it is both papers.
    assert set(analyse_in(papers, "How does Raft relate to Paxos?").named_paper_ids) == {
        RAFT.paper_id,
        PAXOS.paper_id,
        paxos_complex.paper_id,
    }


def test_a_rewrite_calls_a_paper_whose_short_name_another_shares_by_its_title():
    paxos_complex = PaperRef(8, "Paxos Made Moderately Complex", "Robbert van Renesse", 2015)
    previous = ("How do leaders work in Paxos Made Simple?", (PAXOS.paper_id,))
    query = analyse_in([PAXOS, paxos_complex], "How do they recover?", previous).query
    assert "\u201cPaxos Made Simple\u201d" in query and "Moderately" not in query


@pytest.mark.parametrize(
    ("previous", "follow_up", "query"),
    [
        (
            "How long did the MapReduce sort program take in its normal execution?",
            "And when 200 of the worker processes were killed partway through?",
            # The new condition replaces the old one.
            "How long did the MapReduce sort program take when 200 of the worker processes were killed partway "
            "through?",
        ),
        (
            "What happens when a Raft leader fails?",
            "And when a follower fails?",
            "What happens when a follower fails in Raft?",
        ),
        (
            "What does a leader spawn to run phase 1 (the view change) for a ballot?",
            "And for phase 2?",
            "What does a leader spawn to run phase 2 for a ballot?",
        ),
        (
            "How does GFS detect stale replicas?",
            "And with snapshots?",
            "How does GFS detect stale replicas with snapshots?",
        ),
        (
            # The new phrase in place of the previous question's closing one of the same preposition.
            "What is the F1 of NightBERT on ChemSet?",
            "What about on SciSet?",
            "What is the F1 of NightBERT on SciSet?",
        ),
        (
            # A paper the previous question named already is no paper asked about anew.
            "How many points higher did the model predict on the Raft exam than on the Paxos exam?",
            "And for people who had already taken the Paxos quiz?",
            "How many points higher did the model predict on the Raft exam than on the Paxos exam for people who "
            "had already taken the Paxos quiz?",
        ),
        (
            # A name in a phrase of the same form as one of the previous question's says which thing
            # (which quiz), in place of its twin; it asks nothing of another paper.
            "What was the mean score on the Raft quiz in the user study?",
            "And on the Paxos quiz?",
            "What was the mean score on the Paxos quiz in the user study?",
        ),
    ],
)
def test_a_fragment_asks_the_previous_question_again_under_its_condition(previous, follow_up, query):
    analysis = analyse(follow_up, (previous, ()))
    assert (analysis.query, analysis.rewritten) == (query, True)


def test_that_thing_in_a_clause_of_condition_stays_with_the_previous_paper():
    previous = ("In Raft, what does a candidate need to win an election?", (RAFT.paper_id,))
    analysis = analyse("Is safety at risk if that election fails?", previous)
    assert analysis.named_paper_ids == (RAFT.paper_id,)
    assert analysis.query == "Is safety at risk if the election fails in Raft?"


def test_what_happened_under_a_varied_condition_asks_the_previous_question_again():
    previous = ("What median downtime did adding 5ms of randomness to Raft's election timeouts give?", (2,))
    analysis = analyse("What happened without any randomness?", previous)
    assert analysis.query == (
        "What median downtime did adding 5ms of randomness to Raft's election timeouts give without any randomness?"
    )
    # A condition the previous question did not speak of makes a question of its own.
    assert not analyse("What happens if a follower crashes?", previous).rewritten


@pytest.mark.parametrize(
    ("follow_up", "query"),
    [
        ("What's the equivalent rule on the ZooKeeper side?", "How often does a ZooKeeper client renew its lease?"),
        ("What is the counterpart in ZooKeeper?", "How often does a ZooKeeper client renew its lease?"),
    ],
)
def test_the_equivalent_in_another_paper_asks_the_previous_question_of_it(follow_up, query):
    analysis = analyse(follow_up, ("How often does a Chubby client renew its lease?", (CHUBBY.paper_id,)))
    assert (analysis.query, analysis.named_paper_ids) == (query, (ZOOKEEPER.paper_id,))
    # "side" as a word of the question's own is no pointer back.
    assert not analyse("Which side effects does ZooKeeper avoid?", MEMBERSHIP).rewritten


@pytest.mark.parametrize(
    ("previous", "follow_up", "query"),
    [
        # "it" as a verb's object is the thing the previous question asked for.
        (
            "What did the first version of Chubby use as its database?",
            "Why did they replace it, and with what?",
            "Why did Chubby replace the database, and with what?",
        ),
        # "it" as the subject is what the previous question measured.
        (
            "How large is the raw click table that Bigtable keeps?",
            "And how well does it compress?",
            "How well does the raw click table compress in Bigtable?",
        ),
        # An "it" that stands for what follows is left alone; the paper stays.
        (
            "How does ZooKeeper take its fuzzy snapshots?",
            "Why is it still safe to replay state changes on top of such a snapshot?",
            "Why is it still safe to replay state changes on top of such a snapshot in ZooKeeper?",
        ),
        # "of them" after a question about a study's participants: of the participants.
        (
            "In the Raft user study, how much higher did participants score on the Raft quiz?",
            "And how many of them said Raft would be easier to implement?",
            "How many of the participants said Raft would be easier to implement?",
        ),
        # "that step" is the first part of a question of two.
        (
            "How does Chubby elect a master, and where do the clients find it?",
            "How long does that take?",
            "How long does elect a master take in Chubby?",
        ),
    ],
)
def test_pronouns_refer_to_the_thing_the_previous_question_was_about(previous, follow_up, query):
    paper = next(paper for paper in LIBRARY if paper_names(paper)[0] in previous)
    assert analyse(follow_up, (previous, (paper.paper_id,))).query == query


def test_a_follow_up_knows_the_pages_and_quotes_of_the_answer_it_follows():
    answer = Turn("assistant", "An answer.", paper_ids=(RAFT.paper_id,), pages=((2, 13),), quotes=("A quote.",))
    history = [Turn("user", "How does Raft serve read-only requests?"), answer]
    analysis = analyse_question("What does it have to do first?", history=history, papers=LIBRARY)
    assert (analysis.previous_pages, analysis.said_before) == (((2, 13),), ("A quote.",))
    standalone = analyse_question("How does ZooKeeper order writes?", history=history, papers=LIBRARY)
    assert (standalone.previous_pages, standalone.said_before) == ((), ())


def continued(question: str, previous: str, answer: str) -> object:
    history = [Turn("user", previous), Turn("assistant", answer, paper_ids=(RAFT.paper_id,))]
    return analyse_question(question, history=history, papers=LIBRARY)


def test_a_question_pointing_back_with_those_or_it_as_an_object_stays_with_the_previous_paper():
    previous = "During Raft's user study, how many students took the quizzes?"
    analysis = continued("How many of those students kept using it afterwards?", previous, "An answer.")
    assert analysis.query == "How many of the students kept using Raft afterwards?"
    assert analysis.named_paper_ids == (RAFT.paper_id,)


def test_a_definite_thing_the_previous_answer_spoke_of_stays_with_its_paper():
    previous = "How does Raft serve read-only client requests?"
    answer = "\u201cA leader must check whether it has been deposed.\u201d [1]"
    analysis = continued("What does the leader have to do first?", previous, answer)
    assert analysis.query == "What does the leader have to do first in Raft?"
    assert analysis.named_paper_ids == (RAFT.paper_id,)
    # A thing the conversation never spoke of starts afresh.
    fresh = continued("What is the chunk size?", previous, answer)
    assert (fresh.query, fresh.named_paper_ids, fresh.rewritten) == ("What is the chunk size?", (), False)


def test_a_fragment_naming_a_paper_asks_the_previous_question_of_that_paper():
    assert analyse("And in Chubby?", MEMBERSHIP).query == "How does Chubby handle cluster membership changes?"


def test_it_after_they_the_authors_is_the_thing_the_previous_question_asked_for():
    citesee = PaperRef(9, "CiteSee: Augmenting Citations in Scientific Papers", "Joseph Chee Chang", 2023)
    previous = ("Which existing open-source codebase was CiteSee's front-end built on?", (9,))
    query = analyse_in([citesee, RAFT], "How much code did they add to it?", previous).query
    assert query == "How much code did CiteSee add to the existing open-source codebase?"


def test_what_about_a_thing_asks_the_previous_question_for_that_thing():
    previous = ("What recall does Bigtable's compression reach?", (BIGTABLE.paper_id,))
    assert analyse("What about its precision?", previous).query == "What precision does Bigtable's compression reach?"
    # A paper, not a thing: the previous question about that paper.
    query = analyse("What about Chubby?", previous).query
    assert query.startswith("What recall does Chubby") and "Bigtable" not in query


def test_a_count_that_does_not_say_of_what_counts_the_previous_questions_things():
    previous = ("What servers make up a Chubby cell?", (CHUBBY.paper_id,))
    assert analyse("How many did they use?", previous).query.startswith("How many servers did")
    assert "hardware" not in analyse("How much did it cost?", ("What hardware did GFS use?", (4,))).query


def test_a_count_noun_after_the_verb_does_not_make_a_what_question_a_quantity():
    question = "What hardware did the machines in the GFS micro-benchmark cluster have?"
    assert classify_answer_type(question) == AnswerType.ENTITY
    assert classify_answer_type("What is the typical number of replicas?") == AnswerType.QUANTITY


@pytest.mark.parametrize(
    ("previous", "answer", "follow_up", "query"),
    [
        (
            "How does S2ORC decide whether a paper is in English?",
            "\u201cWe use the cld2 language filter.\u201d [1]",
            "How many paper clusters did that language filter end up removing?",
            "How many paper clusters did the language filter end up removing in S2ORC?",
        ),
        # Pointed at, though the answer's words were others.
        (
            "How does S2ORC link bibliography entries?",
            "\u201cEach candidate gets a similarity value.\u201d [1]",
            "Is there an upper limit on that score?",
            "Is there an upper limit on the score in S2ORC?",
        ),
        # "same" points back whatever the answer said.
        (
            "Which parser does S2ORC use?",
            "An answer.",
            "How did ScienceParse fare on that same evaluation?",
            "How did ScienceParse fare on the same evaluation in S2ORC?",
        ),
    ],
)
def test_that_or_this_pointing_at_a_thing_the_previous_turn_spoke_of_stays_with_its_paper(
    previous, answer, follow_up, query
):
    history = [Turn("user", previous), Turn("assistant", answer, paper_ids=(S2ORC.paper_id,))]
    analysis = analyse_question(follow_up, history=history, papers=[S2ORC, RAFT])
    assert (analysis.query, analysis.named_paper_ids) == (query, (S2ORC.paper_id,))


def test_that_opening_a_relative_clause_starts_afresh():
    history = [
        Turn("user", "Which parser does S2ORC use?"),
        Turn("assistant", "An answer.", paper_ids=(S2ORC.paper_id,)),
    ]
    for question in ("What is the data that clients read?", "How is the lease that clients hold renewed?"):
        analysis = analyse_question(question, history=history, papers=[S2ORC, RAFT])
        assert (analysis.query, analysis.named_paper_ids) == (question, ())


def test_it_after_a_question_about_a_named_tool_is_the_tool_and_a_bare_name_swaps_it():
    previous = ("What is GROBID used for in S2ORC?", (S2ORC.paper_id,))
    tool_it = analyse_in([S2ORC, RAFT], "What F1 does it achieve?", previous)
    assert tool_it.query == "What F1 does GROBID achieve in S2ORC?"
    swapped = analyse_in([S2ORC, RAFT], "And SCIENCEPARSE?", previous)
    assert (swapped.query, swapped.named_paper_ids) == ("What is SCIENCEPARSE used for in S2ORC?", (S2ORC.paper_id,))
    # A paper's own name is no tool: "it" is still the paper.
    paper_it = analyse("What does it store?", ("How does Bigtable use Chubby?", (5,)))
    assert paper_it.query.startswith("What does Bigtable")


def test_they_after_a_plural_noun_of_the_same_question_is_that_noun_and_their_the_studys_people():
    query = analyse(
        "And the reverse case: what trouble can servers cause after they have been removed from the configuration?",
        MEMBERSHIP,
    ).query
    assert "after they have been removed" in query and query.endswith("in Raft?")
    study = ("In Raft's user study, how long did participants get for each quiz?", (RAFT.paper_id,))
    assert analyse("How was their understanding measured?", study).query == (
        "How was the participants' understanding measured in Raft?"
    )
    assert analyse("Which universities were they from?", study).query == (
        "Which universities were the participants from in Raft?"
    )
    assert analyse("What did they find?", study).query == "What did Raft find?"  # the authors
    # Without a study's people, "their" is still the paper's.
    authors = analyse("What is their leader election timeout?", MEMBERSHIP)
    assert authors.query == "What is Raft's leader election timeout?"


def test_they_after_a_definition_are_the_kind_defined():
    tablet = ("What is a tablet in Raft?", (RAFT.paper_id,))
    assert analyse("How big are they?", tablet).query == "How big are the tablets in Raft?"
    assert analyse("How are they stored?", ("What is an SSTable?", (RAFT.paper_id,))).query.startswith(
        "How are the SSTables stored"
    )


def test_they_doing_what_a_studys_people_do_are_the_people_and_it_is_no_verb_of_before():
    study = ("How many participants did Raft recruit?", (RAFT.paper_id,))
    # Wearing is the participants' doing; choosing the authors'. "it" is no "recruit": it stays,
    # in the paper the study is of.
    assert analyse("How often did they wear it?", study).query == "How often did the participants wear it in Raft?"
    assert analyse("Why did they choose 43?", study).query == "Why did Raft choose 43?"
    # "that" as the subject still carries the previous question's verb.
    assert "recruit" in analyse("How long did that take?", study).query


def test_the_people_of_a_study_using_it_use_the_papers_system():
    citesee = PaperRef(9, "CiteSee: Augmenting Citations in Scientific Papers", "Joseph Chee Chang", 2023)
    study = ("Who were the participants in the CiteSee field study?", (9,))
    used = analyse_in([citesee, GFS], "How often did they use it?", study)
    assert used.query == "How often did the participants in the CiteSee field study use CiteSee?"
    assert used.named_paper_ids == (9,)
    # What a study found is its authors' finding, and choosing its size their choice.
    assert analyse_in([citesee, GFS], "What did they find?", study).query == "What did CiteSee find?"
    assert analyse_in([citesee, GFS], "Why did they choose 8?", study).query == "Why did CiteSee choose 8?"


def test_how_long_it_takes_after_an_event_is_asked_after_that_event():
    event = ("What happens when the GFS master fails?", (GFS.paper_id,))
    took = analyse("How long does it take?", event)
    # Not "How long does GFS take?": the recovery from the failure, which the question says whole.
    assert took.query == "How long does it take? (after: What happens when the GFS master fails?)"
    assert took.named_paper_ids == (GFS.paper_id,) and "master" in took.key_terms
    # Without an event, "it" measured is the paper acting.
    assert analyse("How long does it take?", ("How does GFS replicate a chunk?", (4,))).query != took.query


@pytest.mark.parametrize(
    ("previous", "follow_up", "query"),
    [
        # "they"/"them": the things a how-question's verb was done to.
        (
            ("How does Chubby generate lock sequencers?", (CHUBBY.paper_id,)),
            "Were they accurate?",
            "Were the lock sequencers accurate in Chubby?",
        ),
        (
            ("How does Chubby generate lock sequencers?", (CHUBBY.paper_id,)),
            "How do servers check them?",
            "How do servers check the lock sequencers in Chubby?",
        ),
        # "that value" stands for what the previous question asked for.
        (
            ("What lease duration does Chubby use?", (CHUBBY.paper_id,)),
            "Why that value?",
            "Why the lease duration in Chubby?",
        ),
        # "which one" of two compared papers.
        (
            ("How do Raft and Paxos differ in leader election?", (RAFT.paper_id, PAXOS.paper_id)),
            "Which one is simpler?",
            "Which of Raft and Paxos is simpler?",
        ),
        # "it" measured after two papers is the topic; "How does X compare?" asks the same of X.
        (
            ("How do Raft and ZooKeeper handle leader failover?", (RAFT.paper_id, ZOOKEEPER.paper_id)),
            "How long does it take?",
            "How long does leader failover take in Raft and ZooKeeper?",
        ),
        (
            ("How does ZooKeeper order updates?", (ZOOKEEPER.paper_id,)),
            "How does Chubby compare?",
            "How do Chubby and ZooKeeper order updates?",
        ),
        # "What about X?" after a question with no asked thing: X in place of its closing phrase.
        (
            ("How do Raft and Paxos differ in leader election?", (RAFT.paper_id, PAXOS.paper_id)),
            "What about log replication?",
            "How do Raft and Paxos differ in log replication?",
        ),
    ],
)
def test_follow_ups_name_the_things_papers_and_topics_they_point_at(previous, follow_up, query):
    assert analyse(follow_up, previous).query == query


def test_a_question_asked_again_of_other_papers_keeps_none_of_the_old_names_apart_in_it():
    previous = ("How many servers took part in the Raft cluster and in the Chubby cell?", (2, 1))
    query = analyse_in([RAFT, CHUBBY, ZOOKEEPER], "What about the other paper?", previous).query
    assert query == "How many servers took part in cluster and in cell in ZooKeeper?"


def test_it_as_an_object_after_a_question_asking_for_a_name_is_the_name_the_answer_gave():
    history = [
        Turn("user", "Which baseline of the ZooKeeper evaluation picked servers by load?"),
        Turn(
            "assistant",
            "An answer [1].",
            paper_ids=(ZOOKEEPER.paper_id,),
            quotes=("Least Loaded Choice [12]: a baseline that sends each request to the idlest server.",),
        ),
    ]
    analysis = analyse_question("Did the watch-based strategy beat it?", history=history, papers=LIBRARY)
    assert analysis.query == "Did the watch-based strategy beat Least Loaded Choice in ZooKeeper?"


@pytest.mark.parametrize(
    ("quote", "question", "name"),
    [
        ("The pipeline for creating S2ORC was used to construct the CORD-19 corpus.", "Which dataset?", "CORD-19"),
        ("Specter Similarity [17]: A strong personalized baseline.", "Which baseline?", "Specter Similarity"),
        # Names the question said, and papers' names, are not what the answer gives.
        ("Chubby uses Paxos; ZooKeeper uses Zab.", "Which protocol does ZooKeeper use?", "Zab"),
        ("The master grants a lease.", "What does the master grant?", None),
    ],
)
def test_the_name_an_answer_gives_is_one_its_question_did_not_say(quote, question, name):
    assert answer_name(quote, question, LIBRARY) == name


@pytest.mark.parametrize(
    ("previous", "follow_up", "query"),
    [
        ("What's the chunk size in Bigtable?", "Why was it chosen?", "Why was the chunk size chosen in Bigtable?"),
        (
            "What is the problem with the simplest lock recipe in ZooKeeper?",
            "How does the improved recipe get around it?",
            "How does the improved recipe get around the problem with the simplest lock recipe in ZooKeeper?",
        ),
        # The thing whose doing a question measured: "it" of a passive follow-up.
        (
            "How long does a Chubby lease last by default?",
            "By how much can it be extended?",
            "By how much can the lease be extended in Chubby?",
        ),
    ],
)
def test_it_after_what_is_the_thing_is_that_thing(previous, follow_up, query):
    assert analyse(follow_up, (previous, ())).query == query


@pytest.mark.parametrize(
    ("question", "absent"),
    [
        ("How big is a chunk in the GFS paper?", None),
        ("What does the Dynamo paper say about vector clocks?", "Dynamo"),
        ("Who is the first author of the MapReduce paper?", "MapReduce"),
        # Papers of the project, papers by position or venue, and no paper at all.
        ("According to the Raft paper, how are leaders elected?", None),
        ("What does the second paper say?", None),
        ("What does the OSDI paper say about locks?", None),
        ("How do leaders get elected?", None),
    ],
)
def test_a_paper_called_by_a_name_no_project_paper_goes_by_is_absent(question, absent):
    library = [*LIBRARY[:-1], dataclasses.replace(LIBRARY[-1], venue="OSDI 2006")]
    assert absent_paper(question, library) == absent
    assert analyse_in(library, question).absent_name == absent


@pytest.mark.parametrize(
    ("name", "like"),
    [("Bigtabel", "Bigtable"), ("zookeper", "ZooKeeper"), ("Chuby", "Chubby"), ("Spanner", None), ("Dynamo", None)],
)
def test_a_misspelt_paper_name_is_close_to_the_paper_it_means(name, like):
    assert close_paper_name(name, LIBRARY) == like


@pytest.mark.parametrize(
    ("question", "thing"),
    [
        ("In the Dynamo paper, what is the chunk size?", "chunk size"),
        ("What is the lease timeout in Chubby?", "lease timeout"),
        ("What is the size?", None),
        ("What is a chunk?", None),
    ],
)
def test_the_measure_a_what_is_the_question_asks_for_keeps_its_modifiers(question, thing):
    assert measured_thing(question, LIBRARY) == thing


@pytest.mark.parametrize(
    ("question", "query"),
    [
        ("<img src=x onerror=alert(1)> What is a znode in ZooKeeper?", "What is a znode in ZooKeeper?"),
        ("<b>How does Raft elect a leader?</b>", "How does Raft elect a leader?"),
        ("<script>alert(1)</script>What is Chubby?", "What is Chubby?"),
        ("Is a latency < 10 ms and > 5 ms common in Raft?", "Is a latency < 10 ms and > 5 ms common in Raft?"),
    ],
)
def test_markup_pasted_into_a_question_is_no_part_of_what_it_asks(question, query):
    assert analyse_in(LIBRARY, question).query == query


def test_the_ones_after_a_count_are_the_things_counted():
    previous = ("How many outages did the Chubby cells record?", (CHUBBY.paper_id,))
    analysis = analyse("What caused the ones that lasted longer than 30 seconds?", previous)
    assert analysis.query == "What caused the outages that lasted longer than 30 seconds in Chubby?"
    assert analysis.named_paper_ids == (CHUBBY.paper_id,)


def test_they_after_what_do_things_do_are_those_things():
    previous = ("What do GFS 'shadow' masters offer while the primary master is down?", (GFS.paper_id,))
    analysis = analyse("How far behind the primary can they be?", previous)
    assert analysis.query == "How far behind the primary can the shadow masters be in GFS?"


PMMC = PaperRef(13, "Paxos Made Moderately Complex", "Robbert van Renesse", 2011)
CORPUS = PaperRef(14, "S2ORC: The Semantic Scholar Open Research Corpus", "Kyle Lo", 2020)


@pytest.mark.parametrize(
    ("follow_up", "query", "named"),
    [
        (
            "What about S2ORC \u2014 which PDFs did its pipeline filter out before processing?",
            "Which PDFs did S2ORC's pipeline filter out before processing?",
            (14,),
        ),
        (
            "What about Paxos Made Simple: what is the first-phase message there called?",
            "What is the first-phase message called in Paxos Made Simple?",
            (6,),
        ),
    ],
)
def test_what_about_a_paper_then_a_question_is_that_question_of_the_paper(follow_up, query, named):
    analysis = analyse_in([*LIBRARY, CORPUS], follow_up, ("Which RPCs does Raft use for leader election?", (2,)))
    assert analysis.query == query
    assert analysis.named_paper_ids == named


def test_a_surname_with_its_particle_names_the_paper_whole():
    assert [(m.start, m.paper_id) for m in mentions("And in van Renesse's version, how?", [*LIBRARY, PMMC])] == [
        (7, 13)
    ]


def test_it_after_what_the_thing_does_is_that_thing():
    analysis = analyse("How is it made that cheap?", ("What does the snapshot operation in GFS do?", (4,)))
    assert analysis.query == "How is the snapshot operation made that cheap in GFS?"


def test_it_closing_a_question_after_a_yes_no_question_about_a_paper_is_the_paper():
    analysis = analyse_in(
        [*LIBRARY, PMMC],
        "How do the processes communicate in it?",
        ("Does Paxos Made Moderately Complex come with code you can run?", (7,)),
    )
    assert analysis.query == "How do the processes communicate in \u201cPaxos Made Moderately Complex\u201d?"
    assert analysis.named_paper_ids == (13,)


def test_it_in_a_clause_after_a_generic_owner_is_that_owner():
    analysis = analyse(
        "So what should an application do if it needs the other kind?",
        ("What granularity of locking is Chubby meant to provide?", (1,)),
    )
    assert "if it needs" in analysis.query
    assert analysis.named_paper_ids == (1,)


def test_it_after_a_noun_of_its_own_clause_is_that_noun_and_it_judging_a_clause_is_no_paper():
    analysis = analyse(
        "Why is it harmless if the server then gets the same RPC twice after it restarts?",
        ("How does Raft deal with RPCs sent to a follower or candidate that has crashed?", (2,)),
    )
    assert analysis.query.startswith("Why is it harmless if the server then gets the same RPC twice after it restarts")
    assert analysis.named_paper_ids == (2,)


def test_a_follow_up_said_after_the_previous_question_keeps_its_own_answer_type():
    previous = "How much data does the raw imagery table of Bigtable's preprocessing pipeline hold?"
    analysis = analyse("Does Bigtable compress it?", (previous, (BIGTABLE.paper_id,)))
    assert analysis.query.endswith(f"(after: {previous})")
    assert analysis.answer_type == AnswerType.YES_NO


@pytest.mark.parametrize(
    ("previous", "follow_up", "query"),
    [
        (
            "What coefficient did the reencountered-citation strategy get for the literature-review measure in Raft?",
            "And the Specter baseline?",
            "What coefficient did the Specter baseline get for the literature-review measure in Raft?",
        ),
        (
            "What scheme does the first pass of Bigtable's compression use?",
            "And the second pass?",
            "What scheme does the second pass of Bigtable's compression use?",
        ),
    ],
)
def test_and_a_noun_phrase_asks_the_previous_question_of_it_in_its_subjects_place(previous, follow_up, query):
    analysis = analyse(follow_up, (previous, (2,)))
    assert analysis.query == query


def test_and_a_measure_is_not_asked_in_the_subjects_place():
    analysis = analyse("And the median?", ("What mean score did the Raft group get on the quiz?", (2,)))
    assert "did the median get" not in analysis.query


def test_they_after_a_question_about_things_are_those_things():
    analysis = analyse(
        "And how much outgoing RPC traffic did they produce?",
        ("How many requests per second did the group of 14 busy Bigtable clusters handle?", (BIGTABLE.paper_id,)),
    )
    assert analysis.query.startswith("How much outgoing RPC traffic did the group of 14 busy Bigtable clusters produce")


def test_that_kind_of_thing_after_an_entity_question_is_what_the_answer_named():
    history = [
        Turn("user", "Which external coordination service does Bigtable depend on to elect its master?"),
        Turn(
            "assistant",
            "An answer.",
            paper_ids=(BIGTABLE.paper_id,),
            quotes=("Bigtable relies on a highly-available and persistent distributed lock service called Chubby.",),
        ),
    ]
    analysis = analyse_question(
        "How many replicas does that service usually run in each cell?", history=history, papers=LIBRARY
    )
    assert analysis.query == "How many replicas does Chubby usually run in each cell?"
    assert analysis.named_paper_ids == (CHUBBY.paper_id,)


def test_it_asked_of_another_paper_is_the_thing_asked_before():
    analysis = analyse("How long is it in Chubby?", ("What is the initial timeout of a chunk lease in GFS?", (4,)))
    assert analysis.query == "How long is the initial timeout in Chubby?"
    assert analysis.named_paper_ids == (1,)


def test_a_verb_that_only_applies_the_asked_thing_is_no_key_term():
    assert analyse("What filters does the pipeline apply?").key_terms == ("filters", "pipeline")


def test_that_after_which_of_the_things_is_those_things():
    analysis = analyse("How many papers does that remove?", ("Which of the filters removes the most in Raft?", (2,)))
    assert analysis.query == "How many papers does the filters remove in Raft?"


def test_a_paper_word_modifying_a_thing_leaves_the_thing():
    analysis = analyse("How accurate was it?", ("How was paper clustering evaluated in Raft?", (2,)))
    assert analysis.query == "How accurate was the paper clustering in Raft?"


def test_the_other_paper_in_a_project_of_one_paper_is_none():
    analysis = analyse_in([GFS], "And the other paper?", ("How does GFS place replicas?", (4,)))
    assert analysis.no_other_paper
    assert analysis.query == "And the other paper?" and not analysis.rewritten  # no "Asked as" of another question
    assert not analyse_in(
        [GFS, BIGTABLE], "And the other paper?", ("How does GFS place replicas?", (4,))
    ).no_other_paper


def test_papers_counted_by_how_many_are_a_key_term():
    assert analyse("How many papers are in Raft?").key_terms == ("papers",)
    assert "paper" not in analyse("What does the Raft paper say about leaders?").key_terms


@pytest.mark.parametrize(
    ("previous", "follow_up"),
    [
        (
            "When the cluster manager starts a Bigtable master, what is the very first thing the master does?",
            "And the step right after that?",
        ),
        (
            "Bigtable keeps the mutations of all of a tablet server's tablets in one commit log. What goes wrong "
            "with that when the server dies and many servers each pick up one of its tablets?",
            "So how do they get around it?",
        ),
    ],
)
def test_a_pronoun_standing_for_a_whole_clause_is_asked_after_the_previous_question_said_whole(previous, follow_up):
    analysis = analyse(follow_up, (previous, (BIGTABLE.paper_id,)))
    assert analysis.query.endswith(f"(after: {previous})")
    assert analysis.named_paper_ids == (BIGTABLE.paper_id,)


@pytest.mark.parametrize(
    ("previous", "follow_up"),
    [("How large is the GFS chunk size?", "How many?"), ("How many replicas does a Chubby cell have?", "By how much?")],
)
def test_an_amount_asked_after_an_amount_asks_the_previous_question_again(previous, follow_up):
    assert analyse(follow_up, (previous, (GFS.paper_id, CHUBBY.paper_id))).query == previous


def test_why_after_what_a_thing_is_used_for_asks_why_it_is_used():
    assert analyse("Why?", ("What is Chubby used for in Bigtable?", (BIGTABLE.paper_id,))).query == (
        "Why is Chubby used in Bigtable?"
    )


@pytest.mark.parametrize(
    ("follow_up", "query"),
    [
        ("How long is the timeout?", "How long is the timeout in Raft?"),
        ("What is the election timeout?", "What is the election timeout in Raft?"),
    ],
)
def test_a_measure_the_previous_answer_spoke_of_is_that_papers(follow_up, query):
    answer = "\u201cA follower that hears nothing before its election timeout becomes a candidate.\u201d [1]"
    analysis = continued(follow_up, "How does Raft elect a leader?", answer)
    assert analysis.query == query
    assert analysis.named_paper_ids == (RAFT.paper_id,)


def test_it_that_fails_is_the_system_not_the_measure_asked_before():
    previous = [("How does Raft elect a leader?", (RAFT.paper_id,)), ("What is the throughput of Raft?", (2,))]
    analysis = analyse("What happens when it fails?", *previous)
    assert analysis.query == "What happens when Raft fails?"
    # With no paper to stand for, "it" is left as it is rather than read as the throughput.
    alone = analyse("What happens when it fails?", ("What is the throughput?", ()))
    assert alone.query == "What happens when it fails?"
    # A measure still is what "it" means where a measure can be meant.
    assert analyse("How is it computed?", ("What similarity score is used for linking?", ())).query == (
        "How is the similarity score computed?"
    )


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("How does Chubby handle that?", "Chubby"),
        ("And how would Apache Kafka do it?", "Apache Kafka"),
        ("How does Raft handle that?", None),  # a paper of the project
        ("How does it handle that?", None),
        ("How do they handle that?", None),
        ("How does Chubby elect a master?", "Chubby"),
        ("What does Chubby use?", None),  # no system acting
        ("How do Lo et al. say the name is pronounced?", None),  # a paper's first author
    ],
)
def test_a_name_acting_as_a_system_is_told_apart_from_the_projects_papers(question, name):
    library = [paper for paper in LIBRARY if paper is not CHUBBY] + [S2ORC]
    assert acting_name(question, library) == name
    assert analyse_in(library, question).acting_name == name
