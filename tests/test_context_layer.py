"""The context layer's pure steps: threshold, per-paper cap, top-K budget, stable numbering."""

import numpy as np
import pytest

from indexing.retrieval import Hit, cosine_top_k, number_references, select_passages


def hits(*spec: tuple[int, float]) -> list[Hit]:
    """Hits from (paper_id, score) pairs, chunk_index = position."""
    return [Hit(paper_id=p, chunk_index=i, page_number=1, text=f"t{i}", score=s) for i, (p, s) in enumerate(spec)]


def test_hits_under_the_threshold_are_dropped():
    chosen = select_passages(hits((1, 0.9), (2, 0.2)), min_relevance=0.3, top_k=10, per_paper=5)
    assert [h.paper_id for h in chosen] == [1]


def test_nothing_qualifies_gives_no_passages():
    assert select_passages(hits((1, 0.1), (2, 0.2)), min_relevance=0.3, top_k=10, per_paper=5) == []


def test_per_paper_cap_leaves_room_for_other_qualifying_papers():
    ranked = hits(*[(1, 0.9 - i * 0.01) for i in range(8)], (2, 0.5), (3, 0.4))
    chosen = select_passages(ranked, min_relevance=0.3, top_k=6, per_paper=3)
    assert [h.paper_id for h in chosen].count(1) == 3
    assert {h.paper_id for h in chosen} == {1, 2, 3}


def test_every_qualifying_paper_gets_a_slot_while_the_budget_allows():
    ranked = hits((1, 0.9), (1, 0.89), (1, 0.88), (2, 0.5), (3, 0.45))
    chosen = select_passages(ranked, min_relevance=0.3, top_k=3, per_paper=5)
    assert [h.paper_id for h in chosen] == [1, 2, 3]


def test_top_k_budget_holds_whatever_the_number_of_papers():
    ranked = hits(*[(p, 0.9 - p * 0.001) for p in range(100)])
    assert len(select_passages(ranked, min_relevance=0.3, top_k=15, per_paper=5)) == 15


def test_selection_keeps_score_order():
    ranked = hits((1, 0.9), (1, 0.8), (2, 0.7), (1, 0.6))
    chosen = select_passages(ranked, min_relevance=0.3, top_k=10, per_paper=5)
    assert [h.score for h in chosen] == sorted((h.score for h in chosen), reverse=True)


def test_references_are_numbered_from_one_in_order_with_titles():
    refs = number_references(hits((7, 0.9), (8, 0.8)), {7: "Raft", 8: "Chubby"})
    assert [(r.n, r.paper_id, r.title) for r in refs] == [(1, 7, "Raft"), (2, 8, "Chubby")]


def test_numbering_is_stable_for_the_same_hits():
    ranked = hits((1, 0.9), (2, 0.9), (3, 0.9))
    first = number_references(select_passages(ranked, min_relevance=0, top_k=3, per_paper=1), {})
    second = number_references(select_passages(ranked, min_relevance=0, top_k=3, per_paper=1), {})
    assert first == second


def test_cosine_top_k_finds_the_nearest_rows_best_first():
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((50, 8)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    found = cosine_top_k(matrix[17], matrix, 3)
    assert found[0][0] == 17
    assert abs(found[0][1] - 1.0) < 1e-5
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)


@pytest.mark.django_db
def test_failed_papers_are_reported_apart_from_papers_still_indexing(alice, add_paper):
    from indexing.retrieval import retrieve_passages
    from papers.models import Paper

    queued = add_paper(alice, title="Queued", index_status=Paper.IndexStatus.PENDING)
    broken = add_paper(alice, title="Broken", index_status=Paper.IndexStatus.FAILED)
    retrieval = retrieve_passages(papers=[queued, broken], question="anything")
    assert retrieval.references == []
    assert retrieval.indexing == ["Queued"]
    assert retrieval.failed == ["Broken"]
