"""Persisted BM25 statistics: a paper's pack (chunks, vectors, BM25 statistics) is written with its
chunks, a project's BM25 is merged from its papers' statistics and scores exactly as an index built
from the chunk texts (and as bm25s did), packs follow their chunks, and papers without one are
packed from their chunks (on first use, by `backfill_chunks`, by `check_index --fix`)."""

from __future__ import annotations

import dataclasses
import hashlib
import io

import bm25s
import numpy as np
import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from indexing import lexical, store
from indexing.chunking import chunk_pages
from indexing.embeddings import configured_model_name
from indexing.lexical import LexicalIndex, LexicalStats, document_terms, merge_statistics, tokenize, word_forms
from indexing.pdf import extract_text
from indexing.retrieval import matrix_cache, paper_versions, rank_hits, retrieve_passages
from indexing.services import index_paper
from papers.models import Paper
from tests.conftest import shared_paper
from tests.support.indexing import indexed_paper, replace_pdf, stored_paper, use_stub_embeddings

REAL_PAPERS = ("consensus/paxos-made-simple.pdf", "consensus/chubby.pdf", "storage/gfs.pdf")
QUESTIONS = [
    "How does a proposer choose a value in Paxos?",
    "What is a Chubby session and how is it kept alive with KeepAlive calls?",
    "GFS chunk size 64 MB",
    "master replication of the operation log",
    "What happens when the master fails?",
    "lock-service fault-tolerant client caching",
    "distinguished learner",
    "best pizza recipe",
    "paxos",
    "1,000 machines in 2003",
]
TEXT = "Paxos reaches agreement among unreliable processors as long as a majority stays up."


@pytest.fixture(scope="module")
def real_chunks() -> dict[str, list[dict[str, str]]]:
    """Chunk documents of three real papers, as indexing cuts them (blurbs: the file name)."""
    chunks = {}
    for name in REAL_PAPERS:
        text = extract_text(shared_paper(name))
        spans = chunk_pages(
            text.pages, chunk_tokens=settings.CHUNK_TOKENS, overlap_tokens=settings.CHUNK_OVERLAP_TOKENS
        )
        chunks[name] = [{"text": span.text, "contextualBlurb": f'From "{name}"'} for span in spans]
    return chunks


def bm25s_ranking(reference: bm25s.BM25, question: str, limit: int) -> list[tuple[int, float]]:
    """(row, score) best first, ties by row, as the lexical leg ranks: bm25s's score of each query
    word, the best of its singular, plural and British or American forms (`word_forms`), summed."""
    terms = list(dict.fromkeys(tokenize(question)))
    scores = np.vstack(
        [np.max([reference.get_scores([form]) for form in sorted(word_forms(term))], axis=0) for term in terms]
    ).sum(axis=0)
    rows = np.flatnonzero(scores > 0)
    rows = rows[np.lexsort((rows, -scores[rows]))][:limit]
    return [(int(row), float(scores[row])) for row in rows]


# --- the pure core ----------------------------------------------------------------------------------


def test_an_index_merged_from_per_paper_statistics_scores_exactly_as_bm25s_over_the_same_real_chunks(real_chunks):
    documents = [doc for docs in real_chunks.values() for doc in docs]
    merged = LexicalIndex.from_statistics(
        merge_statistics([LexicalStats.of_documents(docs) for docs in real_chunks.values()])
    )
    rebuilt = LexicalIndex(documents)
    reference = bm25s.BM25(k1=lexical.K1, b=lexical.B, method="lucene")
    reference.index([document_terms(doc) for doc in documents], show_progress=False)

    for question in QUESTIONS:
        found = merged.search(question, limit=50)
        assert found == rebuilt.search(question, limit=50), question  # rows, BM25 and coverage
        assert [(match.row, match.bm25) for match in found] == bm25s_ranking(reference, question, 50), question
    assert len(merged.search("paxos", limit=500)) > 20  # the comparison covers real rankings


def test_merged_statistics_are_those_counted_over_all_the_chunks(real_chunks):
    documents = [doc for docs in real_chunks.values() for doc in docs]
    merged = merge_statistics([LexicalStats.of_documents(docs) for docs in real_chunks.values()])
    counted = LexicalStats.of_documents(documents)

    assert merged.size == counted.size == len(documents)
    assert merged.lengths.sum() == counted.lengths.sum()
    assert dict(zip(merged.terms, merged.document_frequencies.tolist(), strict=True)) == dict(
        zip(counted.terms, counted.document_frequencies.tolist(), strict=True)
    )

    def row(stats: LexicalStats, j: int) -> dict[str, int]:
        span = slice(stats.offsets[j], stats.offsets[j + 1])
        return {
            stats.terms[t]: c for t, c in zip(stats.term_ids[span].tolist(), stats.counts[span].tolist(), strict=True)
        }

    assert all(row(merged, j) == row(counted, j) for j in range(counted.size))


def test_statistics_cut_into_parts_merge_back_to_the_same_index(real_chunks):
    documents = real_chunks["consensus/chubby.pdf"]
    whole = LexicalStats.of_documents(documents)
    cut = [whole.rows(0, 7), whole.rows(7, 8), whole.rows(8, whole.size)]

    assert [part.size for part in cut] == [7, 1, whole.size - 8]
    merged, rebuilt = LexicalIndex.from_statistics(merge_statistics(cut)), LexicalIndex(documents)
    for question in QUESTIONS:
        assert merged.search(question, limit=30) == rebuilt.search(question, limit=30)


def test_the_tokenizer_version_changes_with_what_tokenize_returns():
    # Stored statistics are read only under the tokenizer version they were made by: a change to
    # `tokenize` that keeps the version would merge old terms with new queries.
    sample = (
        "The ﬁle system's fault-\ntolerant master (1,000 chunkservers, 64 MB chunks, 150-300ms timeouts, "
        "99.9% uptime) serves 本系统把文件切分 clients; see Table 3: Marlin 0.850 F1 (Saier and Fa\u00a8rber). "
        "7pronounced \u201cstork\u201d"
    )
    fingerprint = hashlib.sha256("\n".join(tokenize(sample)).encode()).hexdigest()[:16]
    assert (lexical.TOKENIZER_VERSION, fingerprint) == (3, "7615b22f6016a1ad"), (
        f"tokenize changed (fingerprint {fingerprint}): bump TOKENIZER_VERSION and record the new fingerprint"
    )


# --- against the chunk index ------------------------------------------------------------------------


@pytest.fixture
def stub(settings, openai_stub, chunk_store):
    use_stub_embeddings(settings, openai_stub)
    settings.PROJECT_CHAT_MIN_RELEVANCE = -1.0  # stub vectors are random: keep every hit
    return openai_stub


def pack_of(paper: Paper) -> store.PaperPack | None:
    return store.load_packs(paper_versions([paper]), embedding_model=paper.embedding_model).get(paper.pk)


def real_paper(user, name: str) -> Paper:
    return index_paper(paper_id=stored_paper(user, shared_paper(name).read_bytes(), name.split("/")[-1]).pk)


def run(command: str, *args: str, **options) -> tuple[str, int]:
    out = io.StringIO()
    try:
        call_command(command, *args, stdout=out, stderr=io.StringIO(), **options)
    except CommandError as exc:
        return out.getvalue() + str(exc), exc.returncode
    return out.getvalue(), 0


@pytest.mark.django_db
def test_indexing_a_paper_stores_its_pack_with_exactly_its_chunks(alice, stub):
    paper = indexed_paper(alice, [TEXT, "Raft elects a leader by randomised timeouts.", "Chubby grants leases."])

    pack = pack_of(paper)
    chunks = store.load_chunks(paper_versions([paper]), embedding_model=paper.embedding_model)

    assert pack is not None and pack.size == paper.chunk_count == len(chunks.chunks) > 0
    assert pack.chunk_documents() == chunks.chunks
    assert np.array_equal(pack.embeddings, chunks.embeddings)


@pytest.mark.django_db
def test_a_project_index_read_from_packs_ranks_real_papers_as_one_rebuilt_from_their_chunks(alice, stub):
    papers = [real_paper(alice, name) for name in REAL_PAPERS[:2]]
    versions, model = paper_versions(papers), configured_model_name()
    query = np.random.default_rng(0).standard_normal(stub.dimension).astype(np.float32)

    def ranked(question: str, mode: str) -> str:
        hits, ran = rank_hits(
            question=question, versions=versions, searched=set(versions), mode=mode, limit=60, query_embedding=query
        )
        assert ran == mode
        return repr(hits)  # NaN cosines (lexical mode) compare equal as text

    assert all(pack_of(paper) is not None for paper in papers)
    merged = {(q, mode): ranked(q, mode) for q in QUESTIONS for mode in ("lexical", "hybrid")}
    matrix_cache.clear()
    matrix_cache.prime(versions, model, store.load_chunks(versions, embedding_model=model))  # the old way
    rebuilt = {(q, mode): ranked(q, mode) for q in QUESTIONS for mode in ("lexical", "hybrid")}

    assert merged == rebuilt
    assert "lexical_rank=1" in merged[("paxos", "lexical")]


@pytest.mark.django_db
def test_reindexing_a_paper_replaces_its_pack_and_deleting_it_removes_it(
    alice, stub, django_capture_on_commit_callbacks
):
    paper = indexed_paper(alice, [TEXT])
    old = paper.index_version
    replace_pdf(paper, ["Gossip protocols spread membership updates epidemically."])

    paper = index_paper(paper_id=paper.pk)

    groups = store.pack_rows_by_paper([paper.pk])
    assert {group.index_version for group in groups} == {paper.index_version} != {old}
    pack = pack_of(paper)
    assert pack is not None and "Gossip" in pack.texts[0]

    with django_capture_on_commit_callbacks(execute=True):
        Paper.objects.get(pk=paper.pk).delete()
    assert store.pack_rows_by_paper([paper.pk]) == {}


@pytest.mark.django_db
def test_a_paper_without_a_pack_is_packed_from_its_chunks_on_first_use_and_answers_the_same(alice, stub):
    paper = indexed_paper(alice, [TEXT, "Raft elects a leader by randomised timeouts."])
    before = retrieve_passages(papers=[paper], question="Raft leader randomised timeouts", mode="lexical")
    (group,) = store.pack_rows_by_paper([paper.pk])
    store.delete_pack(group)  # as for a paper indexed before packs were written
    matrix_cache.clear()

    after = retrieve_passages(papers=[paper], question="Raft leader randomised timeouts", mode="lexical")

    assert repr(after.references) == repr(before.references) and after.references
    assert store.pack_rows_by_paper([paper.pk]) == {group: paper.chunk_count}  # the next process reads it


@pytest.mark.django_db
def test_a_pack_stored_in_parts_reads_back_whole_and_one_missing_part_makes_it_again(alice, stub, monkeypatch):
    monkeypatch.setattr(store, "PACK_PART_BYTES", 3000)  # a part per chunk or two
    paper = real_paper(alice, REAL_PAPERS[0])
    parts = list(store.get_collection().database[store.PACK_COLLECTION].find({"paperId": paper.pk}))
    assert len(parts) > 2 and all(part["parts"] == len(parts) for part in parts)

    pack = pack_of(paper)
    chunks = store.load_chunks(paper_versions([paper]), embedding_model=paper.embedding_model)
    assert pack is not None and pack.chunk_documents() == chunks.chunks
    assert np.array_equal(pack.embeddings, chunks.embeddings)
    assert LexicalIndex.from_statistics(pack.lexical).search("proposer value", limit=20) == LexicalIndex(
        chunks.chunks
    ).search("proposer value", limit=20)

    store.get_collection().database[store.PACK_COLLECTION].delete_one({"paperId": paper.pk, "part": 1})
    assert pack_of(paper) is None
    assert retrieve_passages(papers=[paper], question="proposer value", mode="lexical").references
    assert store.pack_rows_by_paper([paper.pk]) == {
        store.PackGroup(
            paper.pk, paper.index_version, paper.embedding_model, paper.sha256, lexical.TOKENIZER_VERSION
        ): paper.chunk_count
    }


@pytest.mark.django_db
def test_a_pack_of_another_tokenizer_version_is_not_read(alice, stub):
    paper = indexed_paper(alice, [TEXT])
    (group,) = store.pack_rows_by_paper([paper.pk])
    store.delete_pack(group)
    old = dataclasses.replace(pack_from_chunks(paper), tokenizer_version=0, lexical=LexicalStats.of_terms([["x"]]))
    store.write_pack(old)

    assert pack_of(paper) is None
    assert retrieve_passages(papers=[paper], question="majority of processors", mode="lexical").references
    assert pack_of(paper) is not None


def pack_from_chunks(paper: Paper) -> store.PaperPack:
    matrix = store.load_chunks(paper_versions([paper]), embedding_model=paper.embedding_model)
    return store.PaperPack.of_chunks(matrix.chunks, matrix.embeddings)


@pytest.mark.django_db
def test_backfill_packs_papers_indexed_before_packs_without_embedding_anything(alice, stub):
    papers = [indexed_paper(alice, [TEXT]), indexed_paper(alice, ["Raft elects a leader."])]
    for group in store.pack_rows_by_paper([paper.pk for paper in papers]):
        store.delete_pack(group)
    stub.embedding_requests.clear()

    dry, _ = run("backfill_chunks", dry_run=True)
    assert "2 indexed paper(s) to pack" in dry and f"would pack paper {papers[0].pk}" in dry
    assert store.pack_rows_by_paper([paper.pk for paper in papers]) == {}

    output, code = run("backfill_chunks")

    assert code == 0 and "Packed 2 paper(s)." in output and "Done 0, skipped 2, failed 0" in output
    assert all(pack_of(paper) is not None for paper in papers)
    assert stub.embedding_requests == []
    assert "to pack" not in run("backfill_chunks")[0]  # nothing left to do


@pytest.mark.django_db
def test_check_index_finds_missing_and_stale_packs_and_fix_repairs_them(alice, stub):
    paper = indexed_paper(alice, [TEXT])
    other = indexed_paper(alice, ["Raft elects a leader."])
    (group,) = store.pack_rows_by_paper([paper.pk])
    store.delete_pack(group)
    store.write_pack(dataclasses.replace(pack_from_chunks(other), index_version="superseded"))
    store.write_pack(dataclasses.replace(pack_from_chunks(other), paper_id=9999))

    output, code = run("check_index")

    assert code == 1
    assert "missing_packs: 1 ready paper(s) without a complete pack" in output and "no pack" in output
    assert "stale_packs: 2 pack(s)" in output and "version superseded" in output and "paper 9999" in output

    output, code = run("check_index", fix=True)

    assert code == 0 and "[fixed] missing_packs" in output and "[fixed] stale_packs" in output
    assert pack_of(paper) is not None and pack_of(other) is not None
    output, code = run("check_index")
    assert code == 0 and "pack" not in output
