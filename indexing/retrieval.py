"""Retrieval, the context layer: question -> numbered passages from a project's ready papers.

The ranking, diversity and numbering steps are pure functions over dataclasses; `retrieve_passages`
is the thin shell that reads the chunk index.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.urls import reverse

from indexing import store
from indexing.embeddings import configured_model_name, embed_query
from papers.models import Paper


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk. `score` is the cosine similarity to the question, in [-1, 1]."""

    paper_id: int
    chunk_index: int
    page_number: int
    text: str
    score: float
    contextual_blurb: str = ""
    dense_rank: int | None = None
    lexical_rank: int | None = None


@dataclass(frozen=True)
class Reference:
    """A numbered passage `[n]`: what a citation points at. `page` is the 1-based physical page."""

    n: int
    paper_id: int
    title: str
    page: int
    text: str
    score: float
    dense_rank: int | None = None
    lexical_rank: int | None = None

    @property
    def url(self) -> str:
        return f"{reverse('papers:reader', args=[self.paper_id])}?page={self.page}"

    def as_citation(self) -> dict[str, object]:
        """The JSON form saved with a message and sent in `answer.citation` events."""
        return {"paper_id": self.paper_id, "title": self.title, "page": self.page, "text": self.text}


@dataclass(frozen=True)
class Retrieval:
    """What a question retrieved: `references` numbered from 1, best first; `indexing` lists the
    titles of project papers not yet searchable (pending, indexing or failed)."""

    references: list[Reference]
    indexing: list[str]
    searched_papers: int


# --- pure core ------------------------------------------------------------------------------------


def cosine_top_k(query: np.ndarray, embeddings: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Exact top-*k* by cosine similarity. *query* (d,) and rows of *embeddings* (n, d) must be unit
    vectors, so cosine similarity is their dot product. Returns (row, score) pairs, best first."""
    if embeddings.size == 0 or k <= 0:
        return []
    scores = embeddings @ query.astype(np.float32)
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.lexsort((top, -scores[top]))]
    return [(int(row), float(scores[row])) for row in top]


def select_passages(hits: Sequence[Hit], *, min_relevance: float, top_k: int, per_paper: int) -> list[Hit]:
    """Best-first selection of at most *top_k* hits scoring at least *min_relevance*, at most
    *per_paper* from any one paper, where every paper with a qualifying hit gets at least one slot
    while the budget allows (papers in the order of their best hit).

    *hits* must be sorted by score, descending. Stable: equal scores keep input order. The result is
    sorted by score, descending.
    """
    qualifying = [hit for hit in hits if hit.score >= min_relevance]
    chosen: set[int] = set()
    per_paper_count: dict[int, int] = {}
    for position, hit in enumerate(qualifying):  # one slot per paper first: cross-paper diversity
        if len(chosen) >= top_k:
            break
        if hit.paper_id not in per_paper_count and per_paper > 0:
            chosen.add(position)
            per_paper_count[hit.paper_id] = 1
    for position, hit in enumerate(qualifying):
        if len(chosen) >= top_k:
            break
        if position in chosen or per_paper_count.get(hit.paper_id, 0) >= per_paper:
            continue
        chosen.add(position)
        per_paper_count[hit.paper_id] = per_paper_count.get(hit.paper_id, 0) + 1
    return [qualifying[position] for position in sorted(chosen)]


def number_references(hits: Sequence[Hit], titles: dict[int, str]) -> list[Reference]:
    """Number *hits* `[1]..[n]` in the given order. *titles* maps paper id -> title."""
    return [
        Reference(
            n=n,
            paper_id=hit.paper_id,
            title=titles.get(hit.paper_id, f"Paper {hit.paper_id}"),
            page=hit.page_number,
            text=hit.text,
            score=hit.score,
            dense_rank=hit.dense_rank,
            lexical_rank=hit.lexical_rank,
        )
        for n, hit in enumerate(hits, start=1)
    ]


# --- the shell: reads the chunk index -------------------------------------------------------------


class _MatrixCache:
    """Per-process LRU of chunk matrices keyed by embedding model and (paper, index version) pairs.

    Reading 10k vectors out of Mongo costs ~100x an exact scan of them, so a project's matrix is
    read once and reused until one of its papers changes version (which changes the key).
    """

    def __init__(self, max_entries: int = 16) -> None:
        self._entries: OrderedDict[tuple[str, frozenset[tuple[int, int]]], store.ChunkMatrix] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def get(self, versions: dict[int, int], embedding_model: str) -> store.ChunkMatrix:
        key = (embedding_model, frozenset(versions.items()))
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        matrix = store.load_chunks(versions, embedding_model=embedding_model)
        with self._lock:
            self._entries[key] = matrix
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return matrix

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


matrix_cache = _MatrixCache()


def dense_hits(query: np.ndarray, versions: dict[int, int], *, limit: int) -> list[Hit]:
    """Best-first chunks of the papers in *versions* (paper id -> index version) by cosine
    similarity: Atlas `$vectorSearch` on Atlas, an exact numpy scan elsewhere. Hits whose paper is
    not in *versions* are dropped after they are read back."""
    model = configured_model_name()
    if store.is_atlas():
        pairs = store.vector_search(query, versions, embedding_model=model, limit=limit)
    else:
        matrix = matrix_cache.get(versions, model)
        pairs = [(matrix.chunks[row], score) for row, score in cosine_top_k(query, matrix.embeddings, limit)]
    hits = []
    for rank, (chunk, score) in enumerate(pairs, start=1):
        if versions.get(chunk["paperId"]) != chunk["indexVersion"]:
            continue
        hits.append(
            Hit(
                paper_id=chunk["paperId"],
                chunk_index=chunk["chunkIndex"],
                page_number=chunk["pageNumber"],
                text=chunk["text"],
                contextual_blurb=chunk.get("contextualBlurb", ""),
                score=score,
                dense_rank=rank,
            )
        )
    return hits


def retrieve_passages(
    *, papers: Sequence[Paper], question: str, top_k: int | None = None, per_paper: int | None = None
) -> Retrieval:
    """Retrieve the numbered passages for *question* from *papers* (a project's papers).

    Only papers `ready` for the configured embedding model are searched. Settings give the defaults:
    `PROJECT_CHAT_TOP_K`, `PROJECT_CHAT_MAX_CHUNKS_PER_PAPER`, `PROJECT_CHAT_MIN_RELEVANCE`.
    Raises ChunkStoreError or EmbeddingError when a backing service fails.
    """
    top_k = settings.PROJECT_CHAT_TOP_K if top_k is None else top_k
    per_paper = settings.PROJECT_CHAT_MAX_CHUNKS_PER_PAPER if per_paper is None else per_paper
    model = configured_model_name()
    ready = [p for p in papers if p.index_status == Paper.IndexStatus.READY and p.embedding_model == model]
    indexing = [p.display_title for p in papers if p not in ready]
    if not ready or not question.strip():
        return Retrieval(references=[], indexing=indexing, searched_papers=len(ready))
    versions = {paper.pk: paper.index_version for paper in ready}
    # Enough candidates that every paper can fill its quota after the cap.
    limit = max(top_k * 4, per_paper * len(ready) * 2)
    hits = dense_hits(embed_query(question), versions, limit=limit)
    selected = select_passages(
        hits, min_relevance=settings.PROJECT_CHAT_MIN_RELEVANCE, top_k=top_k, per_paper=per_paper
    )
    titles = {paper.pk: paper.display_title for paper in ready}
    return Retrieval(references=number_references(selected, titles), indexing=indexing, searched_papers=len(ready))
