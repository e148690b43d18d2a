"""The evaluation's pure metrics (`benchmarks.evaluate`): fact matching, quote extraction, the
status read from an answer, the per-question scores, and the labelled question set itself."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import pdfplumber
import pytest

from benchmarks.evaluate import (
    Fact,
    Needed,
    Question,
    Turn,
    answer_status,
    check_gold,
    fact_quoted_share,
    followup_resolved,
    gold_page_cited,
    json_safe,
    load_questions,
    meets,
    needed_papers_at_evidence,
    quoted_evidence,
    read_turn,
    score,
    select_kinds,
    select_split,
    summarise,
    unneeded_references,
)
from benchmarks.generated import CJK_SENTENCES, SHORT_LINES, cjk_pdf, short_lines_pdf, table_pdf
from chat.prompts import REFUSAL
from chat.services import Answer
from indexing.retrieval import Reference

GFS, BIGTABLE, CHUBBY = "storage/gfs.pdf", "storage/bigtable.pdf", "consensus/chubby.pdf"


@dataclass(frozen=True)
class StatusAnswer(Answer):
    """An answer as the answerer returns it once it reports a status and the resolved question."""

    status: str = "answered"
    query: str = ""


def ref(n: int, paper_id: int, page: int) -> Reference:
    return Reference(n=n, paper_id=paper_id, title=f"Paper {paper_id}", page=page, text="", score=0.5)


def turn(*quotes: tuple[str, tuple[str, ...]], cited: tuple[tuple[str, int], ...] = (), status: str = "answered"):
    return Turn(status=status, query="", cited=cited, quotes=quotes)


# --- fact matching --------------------------------------------------------------------------------


def test_fact_matches_across_line_breaks_hyphens_and_spacing():
    assert Fact("64 MB").found_in("We have chosen 64\nMB, which is much larger")
    assert Fact("Chubby manages the client cache directly").found_in("Chubby man-\nages the client cache directly")
    assert Fact("Chubby manages the client cache").found_in("Chubby man- ages the client cache")
    assert Fact("150-300ms").found_in("(currently 150-300ms in our implementation)")


def test_fact_matches_ligatures_curly_apostrophes_and_case():
    assert Fact("reduces clients' need").found_in("it reduces clients\u2019 need to interact")
    assert Fact("file system").found_in("a scalable distributed \ufb01le system")
    assert Fact("GROBID").found_in("Grobid returns bounding boxes")


def test_fact_does_not_match_another_number():
    assert not Fact("64 MB").found_in("We have chosen 128 MB")
    assert not Fact("(N=10)").found_in("A field deployment study (N=6)")


def test_pattern_fact_joins_broken_words_but_keeps_number_ranges():
    assert Fact(r"manages the client cache", pattern=True).found_in("man-\nages the client\ncache")
    assert Fact(r"150\s*-\s*300\s*ms", pattern=True).found_in("from a fixed interval (currently 150-\n300ms)")
    assert not Fact(r"\b64 MB\b", pattern=True).found_in("We have chosen 640 MB")


# --- quote extraction -------------------------------------------------------------------------------


def test_quoted_evidence_reads_each_quote_with_its_markers():
    text = (
        "Extractive answer (sentences quoted from the papers; no chat model is configured):\n"
        "- The Google File System 64 MB: \u201cWe have chosen 64 MB, which is much larger.\u201d [1] "
        "\u201cLazy space allocation avoids waste.\u201d [2]\n"
        "- Bigtable: \u201cTablets are 100-200 MB.\u201d [3, 4] \u201cBoth.\u201d [5][6]"
    )
    quotes = quoted_evidence(text)
    assert [q.refs for q in quotes] == [(1,), (2,), (3, 4), (5, 6)]
    assert quotes[0].text == "We have chosen 64 MB, which is much larger."


def test_text_outside_quotes_and_quotes_without_a_marker_are_not_evidence():
    text = "- The 64 MB paper: \u201cAn unmarked quote about 64 MB.\u201d and then our own words."
    assert quoted_evidence(text) == []


def test_a_quote_may_span_lines():
    assert quoted_evidence("\u201cSystem Precision Recall F1\nMarlin 0.850 0.760 0.802\u201d [1]")[0].refs == (1,)


# --- status ---------------------------------------------------------------------------------------


def test_status_attribute_wins_when_the_answerer_sets_one():
    answer = StatusAnswer(
        text="\u201cWe have chosen 64 MB.\u201d [1]", references=[], extractive=True, status="partly_answered"
    )
    assert answer_status(answer) == "partly_answered"


def test_status_falls_back_to_the_refusal_text():
    assert answer_status(Answer(text=REFUSAL, references=[], extractive=True)) == "not_stated"
    not_stated = "The papers discuss chunkservers but do not state their energy use. Related: \u201cA.\u201d [1]"
    assert answer_status(Answer(text=not_stated, references=[], extractive=True)) == "not_stated"
    assert answer_status(Answer(text="This project has no papers yet.", references=[], extractive=True)) == "no_papers"


def test_status_fallback_ignores_refusal_words_inside_a_quote():
    text = "- Chubby: \u201cThis case is not covered by the lock service and we do not state it.\u201d [1]"
    assert answer_status(Answer(text=text, references=[], extractive=True)) == "answered"


def test_an_unknown_status_value_falls_back_to_the_text():
    answer = StatusAnswer(text=REFUSAL, references=[], extractive=True, status="maybe")
    assert answer_status(answer) == "not_stated"


def test_read_turn_maps_quotes_and_references_to_paper_files():
    answer = StatusAnswer(
        text="\u201cWe have chosen 64 MB.\u201d [1] \u201cBigtable uses GFS.\u201d [2]",
        references=[ref(1, 7, 3), ref(2, 8, 3)],
        extractive=True,
        query="What chunk size does GFS use?",
    )
    read = read_turn(answer, "What size?", {7: GFS, 8: BIGTABLE})
    assert read.cited == ((GFS, 3), (BIGTABLE, 3))
    assert read.quotes == (("We have chosen 64 MB.", (GFS,)), ("Bigtable uses GFS.", (BIGTABLE,)))
    assert read.query == "What chunk size does GFS use?"
    assert read_turn(Answer(text=REFUSAL, references=[], extractive=True), "What size?", {}).query == "What size?"


# --- per-question scores ----------------------------------------------------------------------------

NEEDED = (Needed(GFS, (3,), Fact("64 MB")), Needed(BIGTABLE, (4,), Fact("100-200 MB")))


def test_fact_counts_only_in_a_quote_citing_the_paper_that_needs_it():
    assert fact_quoted_share(NEEDED, turn(("We have chosen 64 MB.", (GFS,)))) == 0.5
    assert fact_quoted_share(NEEDED, turn(("We have chosen 64 MB.", (BIGTABLE,)))) == 0.0
    both = turn(("We have chosen 64 MB.", (GFS,)), ("each approximately 100-200 MB in size", (BIGTABLE,)))
    assert fact_quoted_share(NEEDED, both) == 1.0


def test_a_not_stated_answer_quotes_no_evidence():
    assert fact_quoted_share(NEEDED, turn(("We have chosen 64 MB.", (GFS,)), status="not_stated")) == 0.0


def test_pages_and_papers_cited():
    answer = turn(cited=((GFS, 3), (CHUBBY, 1), (BIGTABLE, 9)))
    assert gold_page_cited(NEEDED, answer)
    assert not needed_papers_at_evidence(NEEDED, answer)  # Bigtable is cited, but not at page 4
    assert needed_papers_at_evidence(NEEDED, turn(cited=((GFS, 3), (BIGTABLE, 4))))
    assert unneeded_references(NEEDED, answer) == (1, 3)
    assert not gold_page_cited(NEEDED, turn(cited=((GFS, 1),)))


def test_followup_is_resolved_only_with_its_paper_cited_and_its_fact_quoted():
    needed = (Needed(CHUBBY, (4,), Fact("list of the cell's members")),)
    quoted = ("It then updates the list of the cell\u2019s members in the cell\u2019s database.", (CHUBBY,))
    assert followup_resolved(needed, turn(quoted, cited=((CHUBBY, 4),)))
    assert not followup_resolved(needed, turn(cited=((CHUBBY, 4),)))
    assert not followup_resolved(
        needed, turn(("joint consensus", ("consensus/raft.pdf",)), cited=(("consensus/raft.pdf", 10),))
    )


def test_summary_counts_refusals_by_kind():
    answerable = Question("a", "fact", "q", NEEDED)
    unanswerable = Question("u", "unanswerable", "How much energy does a chunkserver use?")
    outcomes = [
        score(answerable, turn(cited=((GFS, 3),), status="not_stated")),
        score(unanswerable, turn(status="not_stated")),
        score(Question("u2", "unanswerable", "q"), turn(("A quote.", (GFS,)), cited=((GFS, 2),))),
    ]
    summary = summarise(outcomes)
    assert summary["false_not_stated"] == 1.0
    assert summary["not_stated_unanswerable"] == 0.5
    assert summary["fact_quoted"] == 0.0
    assert summary["unneeded_references"] == 0.0  # references are counted on answerable questions only


def test_targets_compare_in_the_right_direction():
    assert meets("fact_quoted", 0.75) and not meets("fact_quoted", 0.74)
    assert meets("unneeded_references", 0.2) and not meets("unneeded_references", 0.21)
    assert meets("citation_precision", 0.5) is None
    assert meets("fact_quoted", float("nan")) is None


# --- the question set and its generated PDFs -----------------------------------------------------------


def test_question_set_has_the_kinds_the_issue_asks_for():
    questions = load_questions()
    count = {kind: sum(q.kind == kind for q in questions) for kind in {q.kind for q in questions}}
    assert count["unanswerable"] >= 15
    assert count["followup"] >= 10
    assert count["named"] >= 10
    assert count["comparison"] >= 10
    assert count["table"] and count["short_line"] and count["cjk"]
    assert all(len(q.needed) >= 2 for q in questions if q.kind == "comparison")
    assert all(q.followup and q.followup.needed for q in questions if q.kind == "followup")
    assert len({q.id for q in questions}) == len(questions)
    # A holdout big enough to tell, with every kind the targets are about.
    holdout = select_split(questions, "holdout")
    assert len(holdout) >= 30
    assert {"fact", "unanswerable", "followup", "named", "comparison"} <= {q.kind for q in holdout}


def test_a_quick_run_keeps_the_kinds_asked_for_and_refuses_an_unknown_one():
    questions = load_questions()
    quick = select_kinds(questions, ["named", "table"])
    assert quick and {q.kind for q in quick} == {"named", "table"}
    assert select_kinds(questions, []) == questions
    with pytest.raises(ValueError, match="no question of kind"):
        select_kinds(questions, ["nonsense"])


def test_question_set_rejects_an_unknown_split_and_a_missing_fact(tmp_path):
    path = tmp_path / "questions.json"
    path.write_text(json.dumps([{"id": "x", "kind": "fact", "split": "train", "question": "q", "gold": []}]))
    with pytest.raises(ValueError, match="split"):
        load_questions(path)
    path.write_text(
        json.dumps([{"id": "x", "kind": "fact", "question": "q", "gold": [{"paper": "p.pdf", "pages": [1]}]}])
    )
    with pytest.raises(ValueError, match="gold fact"):
        load_questions(path)


def test_check_gold_names_a_fact_that_is_not_on_its_gold_page():
    question = Question("q", "fact", "What chunk size?", (Needed(GFS, (3,), Fact("64 MB"), ("Chunk size",)),))
    pages = {1: ["page one", "page two: 64 MB", "Chunk size is a key parameter. We chose 6-\n4 MB."]}
    assert check_gold([question], {1: GFS}, pages) == []
    pages = {1: ["page one", "page two: 64 MB", "Chunk size is a key parameter."]}
    assert check_gold([question], {1: GFS}, pages) == ["q: '64 MB' is not on storage/gfs.pdf pages [3]"]
    assert check_gold([question], {}, {}) == ["q: no paper storage/gfs.pdf"]


def pdf_pages(data: bytes) -> list[str]:
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        return [page.extract_text() for page in pdf.pages]


def test_generated_cjk_page_reads_back_as_its_chinese_sentences():
    text = pdf_pages(cjk_pdf())[0].replace("\n", "")
    assert "".join(CJK_SENTENCES) in text


def test_generated_table_and_short_lines_read_back():
    assert "Marlin 0.850 0.760 0.802" in pdf_pages(table_pdf())[1]
    assert [page.strip() for page in pdf_pages(short_lines_pdf())] == SHORT_LINES
    assert table_pdf() == table_pdf()  # byte-identical, so a re-run finds the paper already ingested


def test_results_json_writes_a_metric_over_no_questions_as_null():
    nan = float("nan")
    results = {"hybrid": {"answers": {"not_stated": nan, "gold_fact": 0.5}, "kinds": [nan]}}
    written = json.dumps(json_safe(results), allow_nan=False)  # raises on a NaN left in
    assert json.loads(written) == {"hybrid": {"answers": {"not_stated": None, "gold_fact": 0.5}, "kinds": [None]}}
