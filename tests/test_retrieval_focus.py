"""Retrieval with a focus (`indexing.retrieval.Focus`, from the question analysis): the relative bar
against filler papers, named papers first, one slot per compared paper, and the exact-lexical
qualification of a short question."""

from dataclasses import replace

import numpy as np
import pytest

from chat.question import PaperRef, QuestionAnalysis
from chat.services import lexical_query, side_lexical_queries
from indexing import store
from indexing.retrieval import (
    FUNDING_STATEMENT,
    Focus,
    Hit,
    ProjectIndex,
    first_mentions_first,
    leg_candidates,
    paper_versions,
    rank_hits,
    rerank_dense,
    retrieve_passages,
    select_passages,
    with_carried,
)
from indexing.services import index_paper
from papers.services import add_paper_to_library
from projects.services import add_papers_to_project, create_project
from tests.conftest import PAPERS_DIR
from tests.support.indexing import stored_paper


def hits(*spec: tuple[int, float]) -> list[Hit]:
    """Hits from (paper_id, cosine) pairs, chunk_index = position."""
    return [Hit(paper_id=p, chunk_index=i, page_number=1, text=f"t{i}", score=s) for i, (p, s) in enumerate(spec)]


def select(ranked: list[Hit], focus: Focus | None, **options) -> list[int]:
    top_k = options.pop("top_k", 10)
    chosen = select_passages(
        ranked, min_relevance=0.3, top_k=top_k, per_paper=5, focus=focus, relative_bar=0.85, **options
    )
    return [hit.paper_id for hit in chosen]


# --- the relative bar -----------------------------------------------------------------------------

FILLER = hits((1, 0.62), (1, 0.6), (2, 0.58), (1, 0.55), (3, 0.34), (4, 0.31))


def test_papers_far_below_the_best_get_no_slot_once_the_question_is_analysed():
    assert set(select(FILLER, Focus())) == {1, 2}


def test_without_an_analysis_every_qualifying_paper_still_gets_a_slot():
    assert set(select(FILLER, None)) == {1, 2, 3, 4}


def test_a_broad_question_keeps_every_qualifying_paper():
    assert set(select(FILLER, Focus(comparison=True, broad=True))) == {1, 2, 3, 4}
    assert select(FILLER, Focus(paper_ids=(4,), comparison=True, broad=True), top_k=1) == [4]


def test_in_lexical_mode_the_bar_compares_bm25_scores():
    ranked = [
        Hit(paper_id=p, chunk_index=i, page_number=1, text="t", score=float("nan"), bm25=b, lexical_coverage=c)
        for i, (p, b, c) in enumerate([(1, 10.0, 1.0), (2, 9.0, 0.7), (3, 2.0, 0.6)])
    ]
    chosen = select_passages(
        ranked, min_relevance=None, min_lexical_coverage=0.6, top_k=10, per_paper=5, focus=Focus(), relative_bar=0.85
    )
    assert {hit.paper_id for hit in chosen} == {1, 2}


# --- named papers and comparisons -----------------------------------------------------------------


def test_a_named_paper_is_answered_from_alone():
    assert set(select(FILLER, Focus(paper_ids=(3,)))) == {3}


def test_a_named_paper_keeps_its_best_passage_just_under_the_threshold():
    ranked = hits((1, 0.7), (2, 0.28), (2, 0.2))
    assert select(ranked, Focus(paper_ids=(2,)), near_miss=0.05) == [2]
    assert select(ranked, Focus(paper_ids=(2,)), near_miss=0.0) == []


def test_a_comparison_keeps_a_slot_for_every_compared_paper_before_the_rest():
    ranked = hits(*[(1, 0.8 - i * 0.01) for i in range(6)], (5, 0.7), (2, 0.29))
    chosen = select(ranked, Focus(paper_ids=(1, 2), comparison=True), near_miss=0.05, top_k=2)
    assert set(chosen) == {1, 2}


# --- against the chunk index ----------------------------------------------------------------------

RAFT_MEMBERSHIP = (
    "Cluster membership changes. Raft changes the cluster configuration with joint consensus: the "
    "cluster first switches to a transitional configuration that combines the old and new servers."
)
CHUBBY_MASTER = (
    "Chubby cells. A Chubby cell consists of five replicas. The replicas elect a master with Paxos; "
    "the master lease lasts a few seconds, and clients talk to the master only."
)
GFS_CHUNKS = (
    "Chunk size. We have chosen 64 MB as the chunk size, much larger than typical file system block "
    "sizes. Each chunk replica is stored as a plain Linux file on a chunkserver."
)


@pytest.fixture
def project(alice, make_pdf, chunk_store, settings):
    """`project({title: pages})`: alice's project of indexed papers, returned with its papers."""
    settings.CONTEXTUAL_BLURBS = "heuristic"

    def make(papers: dict[str, list[str]]):
        made = []
        for title, pages in papers.items():
            paper = add_paper_to_library(user=alice, data=make_pdf(pages), filename=f"{title}.pdf").paper
            paper.title = title
            paper.save()
            made.append(index_paper(paper_id=paper.pk))
        project = create_project(owner=alice, name="Systems")
        add_papers_to_project(project=project, papers=made, user=alice)
        return made

    return make


@pytest.mark.django_db
def test_a_named_paper_is_searched_alone(project):
    raft, chubby, gfs = project({"Raft": [RAFT_MEMBERSHIP], "Chubby": [CHUBBY_MASTER], "GFS": [GFS_CHUNKS]})
    question = "How do the replicas agree on a master?"
    unfocused = retrieve_passages(papers=[raft, chubby, gfs], question=question, focus=Focus())
    focused = retrieve_passages(papers=[raft, chubby, gfs], question=question, focus=Focus(paper_ids=(raft.pk,)))
    assert unfocused.references[0].paper_id == chubby.pk
    assert {ref.paper_id for ref in focused.references} == {raft.pk}


@pytest.mark.django_db
def test_compared_papers_are_searched_together(project):
    raft, chubby, gfs = project({"Raft": [RAFT_MEMBERSHIP], "Chubby": [CHUBBY_MASTER], "GFS": [GFS_CHUNKS]})
    papers, question = [raft, chubby, gfs], "How many servers make up a cluster?"
    alone = retrieve_passages(papers=papers, question=question, focus=Focus())
    compared = retrieve_passages(papers=papers, question=question, focus=Focus((raft.pk, chubby.pk), comparison=True))
    assert {ref.paper_id for ref in alone.references} == {raft.pk}  # the others fall under the relative bar
    assert {ref.paper_id for ref in compared.references} == {raft.pk, chubby.pk}


@pytest.mark.django_db
def test_a_short_question_whose_rare_word_a_passage_holds_verbatim_qualifies(alice, chunk_store, settings):
    path = PAPERS_DIR.parent / "cases" / "running-headers.pdf"
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    settings.CONTEXTUAL_BLURBS = "heuristic"
    paper = stored_paper(alice, path.read_bytes(), path.name)
    paper = index_paper(paper_id=paper.pk)
    retrieval = retrieve_passages(papers=[paper], question="What fanout do the authors use?", focus=Focus())
    assert retrieval.references
    assert "fanout of three" in " ".join(retrieval.references[0].text.split())


def test_an_exact_match_as_strong_as_the_best_passes_the_bar_despite_its_cosine():
    ranked = [
        Hit(paper_id=1, chunk_index=0, page_number=1, text="t", score=0.36, bm25=1.0, lexical_coverage=0.2),
        Hit(paper_id=2, chunk_index=1, page_number=1, text="t", score=0.26, bm25=5.0, lexical_coverage=1.0),
        Hit(paper_id=3, chunk_index=2, page_number=1, text="t", score=0.31, bm25=0.5, lexical_coverage=0.1),
    ]
    chosen = select_passages(
        ranked, min_relevance=0.3, min_lexical_coverage=0.6, top_k=10, per_paper=5, focus=Focus(), relative_bar=0.9
    )
    assert {hit.paper_id for hit in chosen} == {1, 2}


@pytest.mark.django_db
def test_a_paper_searched_alone_gets_the_budget_the_others_would_have_had(project, settings):
    settings.PROJECT_CHAT_TOP_K, settings.PROJECT_CHAT_MAX_CHUNKS_PER_PAPER = 12, 3
    pages = [
        f"Replica placement, part {n}. Chunk replicas are spread across racks for reliability {n}." for n in range(20)
    ]
    others = [f"Rack layout, part {n}. Chunk replicas sit on racks of servers across the hall {n}." for n in range(20)]
    gfs, other = project({"GFS": pages, "Racks": others})
    question = "How are chunk replicas placed across racks?"
    both = retrieve_passages(papers=[gfs, other], question=question, focus=Focus())
    named = retrieve_passages(papers=[gfs, other], question=question, focus=Focus(paper_ids=(gfs.pk,)))
    assert sum(ref.paper_id == gfs.pk for ref in both.references) == 6  # top_k // 2 papers
    assert len(named.references) == 12  # the whole top-k budget
    assert {ref.paper_id for ref in named.references} == {gfs.pk}


@pytest.mark.django_db
def test_a_project_of_one_paper_gets_the_whole_budget_from_it(project, settings):
    settings.PROJECT_CHAT_TOP_K, settings.PROJECT_CHAT_MAX_CHUNKS_PER_PAPER = 12, 3
    pages = [
        f"Replica placement, part {n}. Chunk replicas are spread across racks for reliability {n}." for n in range(20)
    ]
    (gfs,) = project({"GFS": pages})
    alone = retrieve_passages(papers=[gfs], question="How are chunk replicas placed across racks?", focus=Focus())
    assert len(alone.references) == 12


RAFT_ELECTION = (
    "Leader election. A follower that hears no heartbeat within its election timeout becomes a candidate "
    "and asks the other servers for votes with RequestVote RPCs."
)
CHUBBY_CACHE = (
    "Caching. Chubby clients cache file data and metadata in memory; the master invalidates the cached "
    "copies before a file is modified, so a cache is never stale."
)


@pytest.mark.django_db
def test_each_compared_paper_is_searched_with_its_own_query(project, settings):
    raft, chubby = project({"Raft": [RAFT_ELECTION, RAFT_MEMBERSHIP], "Chubby": [CHUBBY_MASTER, CHUBBY_CACHE]})
    settings.PROJECT_CHAT_MIN_RELEVANCE = 0.0
    question = "How do Raft and Chubby each elect a leader?"
    own = ((raft.pk, "How does Raft change its cluster membership?"), (chubby.pk, "How do Chubby clients cache files?"))
    focus = Focus((raft.pk, chubby.pk), comparison=True, queries=own)
    joint = retrieve_passages(papers=[raft, chubby], question=question, focus=replace(focus, queries=()), top_k=2)
    each = retrieve_passages(papers=[raft, chubby], question=question, focus=focus, top_k=2)
    assert {ref.page for ref in joint.references} == {1}  # the election passages
    assert {(ref.paper_id, ref.page) for ref in each.references} == {(raft.pk, 2), (chubby.pk, 2)}


@pytest.mark.django_db
def test_a_paper_with_several_queries_is_searched_with_each(project, settings):
    raft, chubby = project({"Raft": [RAFT_ELECTION, RAFT_MEMBERSHIP], "Chubby": [CHUBBY_MASTER, CHUBBY_CACHE]})
    settings.PROJECT_CHAT_MIN_RELEVANCE = 0.0
    question = "How do Raft and Chubby bear on each other?"
    own = (
        (raft.pk, "How does Raft elect a leader?"),
        (raft.pk, "How does Raft change its cluster membership?"),
        (chubby.pk, "How do Chubby clients cache files?"),
    )
    focus = Focus((raft.pk, chubby.pk), comparison=True, queries=own)
    found = retrieve_passages(papers=[raft, chubby], question=question, focus=focus, top_k=4)
    pages = [(ref.paper_id, ref.page) for ref in found.references]
    assert sorted(pages) == sorted({(raft.pk, 1), (raft.pk, 2), (chubby.pk, 1), (chubby.pk, 2)})  # each chunk once
    assert pages[:3] == [(raft.pk, 1), (raft.pk, 2), (chubby.pk, 2)]  # each query's best first, in turn


# --- the best sentence of a chunk -----------------------------------------------------------------


def test_the_dense_leg_is_reranked_by_each_chunks_best_sentence():
    dense = hits((1, 0.50), (1, 0.45))
    lexical = [Hit(paper_id=2, chunk_index=9, page_number=1, text="t9", score=0.40, lexical_rank=1)]
    # The third candidate (lexical only) holds a sentence close to the question.
    reranked = rerank_dense(leg_candidates(dense, lexical), np.array([0.50, 0.46, 0.80]), limit=3)
    assert [(hit.paper_id, hit.chunk_index, hit.dense_rank) for hit in reranked] == [(2, 9, 1), (1, 0, 2), (1, 1, 3)]
    assert reranked[0].score == 0.40  # the relevance bar still reads the chunk's own cosine


def test_a_chunk_without_known_sentence_vectors_counts_its_own_cosine_twice():
    reranked = rerank_dense(hits((1, 0.50), (1, 0.45)), np.array([np.nan, 0.9]), limit=1)
    assert [hit.chunk_index for hit in reranked] == [1]  # 0.45 + 0.9 beats 0.50 + 0.50


@pytest.mark.django_db
def test_the_answer_steps_sentence_scorer_finds_prefilled_sentences_only(project):
    from chat.services import best_sentence_cosines
    from indexing.embeddings import embed_query

    project({"Raft": [RAFT_ELECTION]})  # indexing pre-fills the candidate sentences' vectors
    query = embed_query("Which RPC does a candidate send to ask for votes?")
    best = best_sentence_cosines([RAFT_ELECTION, "A sentence that was never indexed or embedded here."], query)
    assert 0.3 < best[0] <= 1.0
    assert np.isnan(best[1])


# --- definitions ------------------------------------------------------------------------------------

GROMMET_PAGES = [
    "Loom: a batch scheduler. Loom groups the tasks of a job into grommets, small bundles of tasks that "
    "read one shared input file and run on one worker.",
    *(
        f"Scheduling round {n}. The grommet queue of each worker is drained in order; a grommet that fails is "
        f"retried, and a grommet whose worker is lost goes back to the grommet queue. Each grommet reports "
        f"its grommet statistics to the master after every grommet completes."
        for n in range(1, 6)
    ),
]


def test_a_definition_question_quotes_the_papers_first_mention_of_the_term_where_it_is_defined(alice, indexed_paper):
    from chat.services import answer_question

    project = create_project(owner=alice, name="Schedulers")
    loom = indexed_paper(alice, GROMMET_PAGES, title="Loom")
    add_papers_to_project(project=project, papers=[loom], user=alice)

    answer = answer_question(project=project, user=alice, question="What is a grommet?")

    assert answer.references[0].page == 1
    assert "small bundles of tasks" in answer.text.split("\n")[1]


def test_the_first_mention_leads_the_hits_only_for_the_named_paper(alice, indexed_paper):
    loom = indexed_paper(alice, GROMMET_PAGES, title="Loom")
    plain = retrieve_passages(papers=[loom], question="What is a grommet?", focus=Focus(paper_ids=(loom.pk,)))
    defined = retrieve_passages(
        papers=[loom], question="What is a grommet?", focus=Focus(paper_ids=(loom.pk,), define="grommet")
    )
    assert plain.references[0].page != 1  # the later pages use the word more often
    assert defined.references[0].page == 1


# --- tables and figures -----------------------------------------------------------------------------

QUORUM_PAGES = [
    "Quorum systems for replicated logs. We compare three protocols on clusters of five servers. "
    "The results are summarised in Table 2, and the discussion follows in the next section.",
    "Table 2: Commit latency of the three protocols in milliseconds.\n"
    "Protocol Median P99\n"
    "Raft 4.1 9.8\n"
    "Paxos 4.4 11.2\n"
    "Zab 3.9 10.5\n"
    "All three protocols commit within a few milliseconds on a local network, and their tails differ.",
]


def test_a_question_about_a_table_quotes_its_caption_and_rows(alice, indexed_paper):
    from chat.services import answer_question

    project = create_project(owner=alice, name="Quorums")
    paper = indexed_paper(alice, QUORUM_PAGES, title="Quorums")
    add_papers_to_project(project=project, papers=[paper], user=alice)

    answer = answer_question(project=project, user=alice, question="What does Table 2 show?")

    assert answer.status == "answered"
    assert "“Table 2: Commit latency of the three protocols in milliseconds.” [1]" in answer.text
    assert "\n  “Raft 4.1 9.8” [1]" in answer.text and "\n  “Zab 3.9 10.5” [1]" in answer.text
    assert "few milliseconds" not in answer.text  # prose after the table is not one of its rows
    assert {ref.page for ref in answer.references} == {2}


def test_an_extractive_answer_keeps_numbers_in_parentheses_as_the_papers_text(alice, indexed_paper):
    from chat.services import answer_question

    project = create_project(owner=alice, name="Stores")
    pages = [
        "Dynamo: a key-value store. Each key is replicated on N hosts; a read waits for R replies and a write "
        "for W replies. The common (N,R,W) configuration used by several instances of Dynamo is (3,2,2).",
        "Dynamo replicas: a coordinator stores a key on the N healthy hosts that follow it on the ring, and "
        "the R and W settings of a Dynamo instance trade read latency against durability of writes.",
        "Dynamo configurations: an instance with a small W accepts writes quickly, one with a large R reads "
        "consistently, and the N, R and W values of each instance are chosen by its owners.",
    ]
    add_papers_to_project(project=project, papers=[indexed_paper(alice, pages, title="Dynamo")], user=alice)

    answer = answer_question(project=project, user=alice, question="Which (N,R,W) configuration is common in Dynamo?")

    assert "Dynamo is (3,2,2).” [1]" in answer.text.replace("\u2060", "")
    assert "[3]" not in answer.text and "[2]" not in answer.text  # three passages: [3][2] were valid citations


def test_a_funding_statement_leads_from_the_chunk_that_holds_it_whole():
    # Overlapping windows: chunk 1 ends inside the funding sentence, chunk 2 holds all of it.
    texts = [
        "Tessellate compacts tiles in the background without blocking ingest.",
        "It is open source. This research was supported by the National Science Foundation under grant",
        "This research was supported by the National Science Foundation under grant CNS-2107786 and by Fastly.",
    ]
    version = store.PaperVersion("v1", "abc")
    chunks = [
        {"paperId": 7, "chunkIndex": i, "pageNumber": 2, "text": text, "indexVersion": "v1", "paperSha256": "abc"}
        for i, text in enumerate(texts)
    ]
    index = ProjectIndex(store.ChunkMatrix(chunks=chunks, embeddings=np.zeros((3, 0), dtype=np.float32)))
    args = ([], FUNDING_STATEMENT, index, [7], None, {7: version})
    (whole,) = first_mentions_first(*args, whole_sentence=True)
    assert whole.chunk_index == 2 and whole.lexical_coverage == 1.0
    (cut,) = first_mentions_first(*args)  # a term or caption: its first chunk, wherever it ends
    assert cut.chunk_index == 1


@pytest.mark.django_db
def test_the_lexical_leg_searches_the_lexical_query_when_one_is_given(project):
    filler = "The service keeps running through failures of its machines and its network links. " * 25
    overview = [
        f"Dynamo overview {n}. Dynamo is a store; Dynamo runs Dynamo nodes for Dynamo users. {filler}" for n in range(4)
    ]
    placement = (
        f"Replica placement. Each key is kept at its coordinator and at the successor nodes on the ring. {filler}"
    )
    dynamo, _, _ = project({"Dynamo": [*overview, placement], "Raft": [RAFT_MEMBERSHIP], "GFS": [GFS_CHUNKS]})

    def first_hit(lexical_question: str) -> str:
        hits, _ = rank_hits(
            question="What is Dynamo?",
            versions=paper_versions([dynamo]),
            searched={dynamo.pk},
            mode="lexical",
            limit=10,
            lexical_question=lexical_question,
        )
        return hits[0].text

    assert "successor nodes" not in first_hit("")
    assert "successor nodes" in first_hit("Where is each key kept?")


def test_a_question_about_one_named_paper_searches_words_without_its_name():
    papers = [
        PaperRef(1, "Dynamo: Amazon's Highly Available Key-value Store"),
        PaperRef(2, "Bigtable: A Distributed Storage System for Structured Data"),
    ]
    query = "How does Dynamo place its replicas, unlike Bigtable?"
    assert lexical_query(QuestionAnalysis(question=query, query=query, named_paper_ids=(1,)), papers) == (
        "How does place its replicas, unlike Bigtable?"
    )
    # Two named papers, or a question that is nothing but the name, keep the whole question.
    assert lexical_query(QuestionAnalysis(question=query, query=query, named_paper_ids=(1, 2)), papers) == ""
    assert (
        lexical_query(
            QuestionAnalysis(question="What is Dynamo?", query="What is Dynamo?", named_paper_ids=(1,)), papers
        )
        == ""
    )


@pytest.mark.django_db
def test_each_side_of_a_comparison_searches_its_lexical_leg_with_its_lexical_query(project, settings):
    filler = "The service keeps running through failures of its machines and its network links. " * 25
    overview = [f"Dynamo overview {n}. Dynamo is a store; Dynamo runs Dynamo nodes. {filler}" for n in range(4)]
    placement = f"Replica placement. Each key is kept at its coordinator and the successor nodes. {filler}"
    dynamo, raft = project({"Dynamo": [*overview, placement], "Raft": [RAFT_MEMBERSHIP]})
    settings.PROJECT_CHAT_MIN_RELEVANCE = 0.0
    settings.PROJECT_CHAT_MAX_CHUNKS_PER_PAPER = 1
    question = "What are Dynamo and Raft?"
    own = ((dynamo.pk, "What is Dynamo?"), (raft.pk, "What is Raft?"))
    focus = Focus((dynamo.pk, raft.pk), comparison=True, queries=own)
    words = ((dynamo.pk, "Where is each key kept?"), (raft.pk, ""))

    def dynamo_texts(focus: Focus) -> list[str]:
        found = retrieve_passages(papers=[dynamo, raft], question=question, focus=focus, top_k=2, mode="lexical")
        return [ref.text for ref in found.references if ref.paper_id == dynamo.pk]

    assert not any("successor nodes" in text for text in dynamo_texts(focus))
    assert any("successor nodes" in text for text in dynamo_texts(replace(focus, lexical_queries=words)))


def test_side_lexical_queries_cut_each_sides_own_name():
    papers = [
        PaperRef(1, "Dynamo: Amazon's Highly Available Key-value Store"),
        PaperRef(2, "Bigtable: A Distributed Storage System for Structured Data"),
    ]
    queries = ((1, "How does Dynamo version data?"), (2, "Bigtable?"))
    analysis = QuestionAnalysis(question="q", query="q", named_paper_ids=(1, 2), paper_queries=queries)
    assert side_lexical_queries(analysis, papers) == ((1, "How does version data?"), (2, ""))


# --- a follow-up keeps what the previous answer quoted ----------------------------------------------


def test_a_follow_up_keeps_the_passages_the_previous_answer_quoted_beside_its_own():
    ranked = [
        Hit(paper_id=1, chunk_index=i, page_number=i + 1, text=text, score=0.5)
        for i, text in enumerate(["prose about filters", "Filter Number of papers\nNo title 20k", "other", "more"])
    ]
    selected = [ranked[0], ranked[2]]
    quotes = ("Filter  Number of papers", "a sentence no candidate holds")
    assert [hit.chunk_index for hit in with_carried(selected, ranked, quotes)] == [0, 2, 1]
    assert with_carried(selected, ranked, ("prose about filters",)) == selected  # already selected
    assert with_carried(selected, ranked, ()) == selected
