"""Hybrid retrieval: reciprocal rank fusion (pure), and both legs against a real chunk index.

Papers are small generated PDFs, indexed with the local embedding model through `index_paper`, in
the embedded MongoDB-wire server (`chunk_store`).
"""

import math

import numpy as np
import pytest

from indexing.retrieval import (
    Hit,
    PaperFilter,
    RetrievalModeError,
    fuse_hits,
    is_relevant,
    reciprocal_rank_fusion,
    rerank_dense,
    retrieve_passages,
    select_passages,
    whole_sentence_text,
)
from indexing.services import index_paper
from tests.support.indexing import stored_paper

CONSENSUS = (
    "Consensus algorithms allow a collection of machines to work as a coherent group that can survive "
    "the failures of some of its members. A leader is elected and replicates its log to the followers."
)
STORAGE = (
    "The file system stores large files as fixed-size chunks replicated on several chunkservers. A single "
    "master keeps the metadata and grants leases to primary replicas."
)


# --- reciprocal rank fusion, pure -----------------------------------------------------------------


def test_rrf_fuses_known_ranks_into_a_known_order():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a", "d"]], k=60)
    assert [key for key, _ in fused] == ["a", "c", "b", "d"]
    assert dict(fused)["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert dict(fused)["d"] == pytest.approx(1 / 63)


def test_rrf_ties_keep_the_order_of_first_appearance():
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "a"]], k=60)
    assert [key for key, _ in fused] == ["a", "b"]


def test_a_smaller_k_lets_the_top_ranks_dominate():
    rankings = [["a", "b", "c", "d"], ["d", "c", "b", "a"], ["a", "x", "y", "z"]]
    assert reciprocal_rank_fusion(rankings, k=0)[0][0] == "a"
    assert dict(reciprocal_rank_fusion(rankings, k=0))["a"] == pytest.approx(1 + 1 / 4 + 1)


def hit(paper: int, chunk: int, score: float = math.nan, **ranking) -> Hit:
    return Hit(paper_id=paper, chunk_index=chunk, page_number=1, text=f"{paper}/{chunk}", score=score, **ranking)


def test_fused_hits_keep_both_ranks_and_the_cosine():
    dense = [hit(1, 0, 0.8, dense_rank=1), hit(1, 1, 0.5, dense_rank=2)]
    lexical = [hit(1, 1, lexical_rank=1, bm25=7.0, lexical_coverage=1.0), hit(2, 0, lexical_rank=2, bm25=3.0)]
    fused = fuse_hits(dense, lexical, k=60)
    assert [(h.paper_id, h.chunk_index) for h in fused] == [(1, 1), (1, 0), (2, 0)]
    top = fused[0]
    assert (top.dense_rank, top.lexical_rank, top.score, top.bm25) == (2, 1, 0.5, 7.0)
    assert top.fused_score == pytest.approx(1 / 62 + 1 / 61)
    assert math.isnan(fused[2].score) and fused[2].dense_rank is None


def test_a_strong_lexical_match_qualifies_without_a_cosine_similarity():
    ranked = [hit(1, 0, 0.1, bm25=5.0, lexical_coverage=0.9), hit(2, 0, 0.1, bm25=1.0, lexical_coverage=0.2)]
    chosen = select_passages(ranked, min_relevance=0.3, min_lexical_coverage=0.6, top_k=5, per_paper=5)
    assert [h.paper_id for h in chosen] == [1]


def test_without_a_coverage_bar_only_the_cosine_counts():
    ranked = [hit(1, 0, 0.1, bm25=5.0, lexical_coverage=1.0)]
    assert select_passages(ranked, min_relevance=0.3, top_k=5, per_paper=5) == []


# --- against the chunk index ----------------------------------------------------------------------


@pytest.fixture
def indexed(alice, make_pdf, chunk_store, settings):
    """`indexed(pages, title=..., year=..., authors=...)`: a paper made of *pages*, indexed."""
    settings.CONTEXTUAL_BLURBS = "heuristic"

    def make(pages: list[str], *, title: str, year: int | None = None, authors: str = ""):
        paper = stored_paper(alice, make_pdf(pages), f"{title}.pdf")
        paper.title, paper.year, paper.authors = title, year, authors
        paper.save()
        return index_paper(paper_id=paper.pk)

    return make


def pages_of(retrieval, paper) -> set[int]:
    return {ref.page for ref in retrieval.references if ref.paper_id == paper.pk}


@pytest.mark.django_db
def test_the_lexical_leg_finds_an_exact_term_the_dense_leg_misses(indexed):
    # A rare code diluted in a passage about something else: its embedding does not carry the code.
    paper = indexed([CONSENSUS, STORAGE + " Replicas are configured with calibration code QX7731."], title="GFS")
    dense = retrieve_passages(papers=[paper], question="QX7731", mode="dense")
    hybrid = retrieve_passages(papers=[paper], question="QX7731", mode="hybrid")
    assert 2 not in pages_of(dense, paper)
    assert pages_of(hybrid, paper) == {2}
    (reference,) = hybrid.references
    assert reference.lexical_rank == 1 and reference.fused_score is not None


@pytest.mark.django_db
def test_hybrid_references_carry_dense_rank_lexical_rank_and_fused_score(indexed):
    paper = indexed([CONSENSUS, STORAGE], title="Systems")
    retrieval = retrieve_passages(papers=[paper], question="How is a leader elected by consensus?")
    assert retrieval.mode == "hybrid"
    best = retrieval.references[0]
    assert best.page == 1
    assert (best.dense_rank, best.lexical_rank) == (1, 1)
    assert best.fused_score == pytest.approx(2 / 61)


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_a_chunk_of_a_paper_outside_the_project_never_appears(indexed, mode):
    inside = indexed([CONSENSUS], title="Raft")
    outside = indexed([STORAGE + " Chunkservers report to the master via HeartBeat messages."], title="GFS")
    retrieval = retrieve_passages(papers=[inside], question="chunkservers HeartBeat master chunks", mode=mode)
    assert outside.pk not in {ref.paper_id for ref in retrieval.references}


@pytest.mark.django_db
def test_the_lexical_index_is_rebuilt_when_a_paper_is_added(indexed):
    raft = indexed([CONSENSUS], title="Raft")
    assert retrieve_passages(papers=[raft], question="HeartBeat chunkservers", mode="lexical").references == []
    gfs = indexed([STORAGE + " Chunkservers report to the master via HeartBeat messages."], title="GFS")
    retrieval = retrieve_passages(papers=[raft, gfs], question="HeartBeat chunkservers", mode="lexical")
    assert [ref.paper_id for ref in retrieval.references] == [gfs.pk]


@pytest.mark.django_db
def test_filters_restrict_papers_by_id_year_and_author_before_ranking(indexed):
    old = indexed([CONSENSUS], title="Paxos", year=2001, authors="Leslie Lamport")
    new = indexed([CONSENSUS.replace("leader", "leader (Raft)")], title="Raft", year=2014, authors="Diego Ongaro")
    papers = [old, new]
    question = "How does consensus elect a leader?"

    def found(filters: PaperFilter) -> set[int]:
        return {ref.paper_id for ref in retrieve_passages(papers=papers, question=question, filters=filters).references}

    assert found(PaperFilter()) == {old.pk, new.pk}
    assert found(PaperFilter(paper_ids=frozenset({new.pk}))) == {new.pk}
    assert found(PaperFilter(year_from=2010)) == {new.pk}
    assert found(PaperFilter(year_to=2010)) == {old.pk}
    assert found(PaperFilter(author="lamport")) == {old.pk}
    assert found(PaperFilter(author="nobody")) == set()


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["dense", "lexical", "hybrid"])
def test_an_off_topic_question_retrieves_nothing(indexed, mode):
    papers = [indexed([CONSENSUS], title="Raft"), indexed([STORAGE], title="GFS")]
    assert retrieve_passages(papers=papers, question="What is the best pizza recipe?", mode=mode).references == []


@pytest.mark.django_db
def test_a_hyphenated_question_finds_the_word_hyphenated_across_a_line_break(indexed):
    paper = indexed([CONSENSUS, "The lock service is fault-\ntolerant and its design is effi-\ncient."], title="Chubby")
    for question in ("fault-tolerant", "efficient"):
        retrieval = retrieve_passages(papers=[paper], question=question, mode="lexical")
        assert pages_of(retrieval, paper) == {2}, question


@pytest.mark.django_db
def test_a_question_with_a_ligature_finds_the_plain_word(indexed):
    paper = indexed([CONSENSUS, "Both designs are efficient under load."], title="Chubby")
    retrieval = retrieve_passages(papers=[paper], question="eﬃcient", mode="lexical")
    assert pages_of(retrieval, paper) == {2}


@pytest.mark.django_db
def test_an_unknown_mode_is_refused(indexed):
    paper = indexed([CONSENSUS], title="Raft")
    with pytest.raises(RetrievalModeError):
        retrieve_passages(papers=[paper], question="leader", mode="sparse")


def test_a_chunk_qualifies_by_its_best_sentence_well_above_the_bar():
    chunk = Hit(paper_id=1, chunk_index=0, page_number=1, text="t", score=0.25)
    (ranked,) = rerank_dense([chunk], np.array([0.5]), limit=5)
    assert ranked.sentence_score == 0.5
    assert is_relevant(ranked, min_relevance=0.3, min_lexical_coverage=None)
    (near,) = rerank_dense([chunk], np.array([0.4]), limit=5)  # within the margin: the chunk's own cosine decides
    assert not is_relevant(near, min_relevance=0.3, min_lexical_coverage=None)
    assert not is_relevant(chunk, min_relevance=0.3, min_lexical_coverage=None)


# --- passages completed to whole sentences --------------------------------------------------------

PAGE = (
    "Chubby is a lock service. In addition, both GFS and Bigtable use Chubby as a well-known and available "
    "location to store a small amount of meta-data; in effect they use Chubby as the root of their "
    "distributed data structures. Some services use locks to partition work between several servers."
)


def test_a_sentence_cut_at_either_edge_of_a_chunk_is_completed_from_its_neighbours():
    first, middle, last = PAGE[:150], PAGE[110:260], PAGE[220:]
    assert whole_sentence_text(first, None, middle) == PAGE[: PAGE.index("structures.") + len("structures.")]
    completed = whole_sentence_text(middle, first, last)
    assert completed.startswith("In addition, both GFS and Bigtable use Chubby")
    assert completed.endswith("to partition work between several servers.")


def test_a_chunk_whose_edges_fall_between_sentences_or_whose_neighbours_do_not_overlap_is_kept():
    whole = "Chubby is a lock service. It stores small files."
    assert whole_sentence_text(whole, "Before it. " + whole[:60], whole + " After it.") == whole
    cut = PAGE[:150]
    assert whole_sentence_text(cut, None, "An unrelated chunk of another part of the page that shares no text.") == cut


@pytest.mark.django_db
def test_retrieved_passages_hold_whole_sentences_where_chunks_cut_them(indexed, settings):
    settings.CHUNK_TOKENS, settings.CHUNK_OVERLAP_TOKENS = 32, 8
    paper = indexed([PAGE + " " + STORAGE], title="Chubby")
    retrieval = retrieve_passages(papers=[paper], question="root of their distributed data structures", mode="hybrid")
    assert retrieval.references
    sentence = (
        "In addition, both GFS and Bigtable use Chubby as a well-known and available location to store a small "
        "amount of meta-data; in effect they use Chubby as the root of their distributed data structures."
    )
    assert any(sentence in " ".join(reference.text.split()) for reference in retrieval.references)
