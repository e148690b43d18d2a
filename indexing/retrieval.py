"""Retrieval, the context layer: question -> numbered passages from a project's ready papers.

Two legs rank the same project-scoped chunk set: dense (cosine similarity of embeddings; Atlas
`$vectorSearch` on Atlas, an exact numpy scan elsewhere) and lexical (BM25, `indexing.lexical`).
Both are restricted to the project's ready papers, and to the papers a `PaperFilter` admits, before
they rank anything; hits are checked against those papers again after they are read back. In
`hybrid` mode (the default) the two rankings are fused by reciprocal rank fusion; `dense` and
`lexical` use one leg (`RETRIEVAL_MODE`, `manage.py ask --mode`).

The relevance threshold `PROJECT_CHAT_MIN_RELEVANCE` is a cosine similarity and keeps that meaning
in every mode. Fused scores are rank-based and say nothing about absolute relevance, so they are
not thresholded. A hit qualifies when

- dense: its cosine similarity >= `PROJECT_CHAT_MIN_RELEVANCE` (the foundation's rule), or, where
  the answer step re-ranks the dense leg by sentences (`rerank_dense`), its best sentence's cosine
  >= that bar + `SENTENCE_MARGIN` (a chunk's vector averages all it says; one sentence of it may
  answer the question outright);
- lexical: it is a strong lexical match: the query terms it contains carry at least
  `RETRIEVAL_MIN_LEXICAL_COVERAGE` of the query's IDF mass (`LexicalIndex.search`);
- hybrid: either of the two.

Lexical coverage leaves out the words that only frame a question ("authors", "use"), so a short
question whose rare terms a passage holds verbatim ("What fanout do the authors use?") qualifies even
when its cosine similarity falls just under the bar.

A `Focus` (from the question analysis, `chat.question`) says what the question needs. Papers it
names are searched alone (a comparison of named papers keeps one slot for each) unless it asks
broadly across the papers, when every paper with a qualifying passage gets a slot, named ones
first. Otherwise only papers whose best passage comes close to the best passage overall
(`RETRIEVAL_PAPER_RELATIVE_BAR`, by cosine similarity or by lexical coverage) get slots, so a paper
with one weakly qualifying chunk is not quoted as filler. Without a focus every paper with a
qualifying hit gets a slot.

A word the project never uses has the largest IDF, so an off-topic question ("best pizza recipe")
leaves every chunk far below the coverage bar, while a question naming a rare exact term (a
method, a dataset, a number) that the embedding misses still qualifies through it.

The ranking, fusion, diversity and numbering steps are pure functions over dataclasses;
`retrieve_passages` is the thin shell that reads the chunk index (the papers' packs, which
`indexing.services.read_project_chunks` makes from their chunks where they are missing).
"""

from __future__ import annotations

import itertools
import logging
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import numpy as np
from django.conf import settings
from django.urls import reverse

from indexing import store
from indexing.embeddings import configured_model_name, embed_query
from indexing.lexical import LexicalIndex, merge_statistics
from indexing.services import read_project_chunks
from papers.models import Paper

logger = logging.getLogger(__name__)

MODES = ("hybrid", "dense", "lexical")
# Each leg contributes at most this many candidates to fusion and selection; enough to fill a
# top-15 budget under a per-paper cap in practice, and it bounds the per-question Python work for
# projects of thousands of papers.
MAX_CANDIDATES = 200
# How far above the relevance bar a chunk's best sentence must be for the chunk to qualify by it: a
# short sentence is closer to a question than the chunk that holds it.
SENTENCE_MARGIN = 0.15

_Key = TypeVar("_Key", bound=Hashable)


class RetrievalModeError(ValueError):
    """An unknown retrieval mode was asked for."""


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk.

    `score` is its cosine similarity to the question, in [-1, 1], or NaN when the dense leg did not
    score it (lexical mode; lexical-only hits on Atlas). `dense_rank` and `lexical_rank` are its
    1-based ranks in each leg (None: not among that leg's candidates); `bm25` its BM25 score;
    `lexical_coverage` the share of the query's IDF mass it contains; `fused_score` its reciprocal
    rank fusion score (hybrid mode only).
    """

    paper_id: int
    chunk_index: int
    page_number: int
    text: str
    score: float
    contextual_blurb: str = ""
    dense_rank: int | None = None
    lexical_rank: int | None = None
    bm25: float | None = None
    lexical_coverage: float = 0.0
    fused_score: float | None = None
    # The cosine similarity of the chunk's best sentence to the question (`rerank_dense`), NaN when
    # not scored: a passage one sentence of which answers the question qualifies by it.
    sentence_score: float = math.nan


@dataclass(frozen=True)
class Reference:
    """A numbered passage `[n]`: what a citation points at. `page` is the 1-based physical page.
    The ranking fields are the hit's (see `Hit`), kept so an operator can see why it was chosen."""

    n: int
    paper_id: int
    title: str
    page: int
    text: str
    score: float
    dense_rank: int | None = None
    lexical_rank: int | None = None
    bm25: float | None = None
    lexical_coverage: float = 0.0
    fused_score: float | None = None

    @property
    def url(self) -> str:
        return f"{reverse('papers:reader', args=[self.paper_id])}?page={self.page}"

    @property
    def cosine_similarity(self) -> float | None:
        """`score`, or None when the dense leg did not score this passage."""
        return None if math.isnan(self.score) else self.score

    def as_citation(self) -> dict[str, object]:
        """The JSON form saved with a message and sent in `answer.citation` events."""
        return {"paper_id": self.paper_id, "title": self.title, "page": self.page, "text": self.text}

    def ranking(self) -> dict[str, object]:
        """Why this passage was chosen: its ranks, scores and the mode-independent evidence."""
        return {
            "dense_rank": self.dense_rank,
            "lexical_rank": self.lexical_rank,
            "fused_score": self.fused_score,
            "cosine_similarity": self.cosine_similarity,
            "bm25": self.bm25,
            "lexical_coverage": self.lexical_coverage,
        }


@dataclass(frozen=True)
class Retrieval:
    """What a question retrieved: `references` numbered from 1, best first; `indexing` lists the
    titles of project papers not yet searchable because they are queued or being indexed, `failed`
    those whose indexing failed; `mode` is the mode that actually ran (`dense` when the lexical leg
    was unavailable)."""

    references: list[Reference]
    indexing: list[str]
    searched_papers: int
    mode: str = "dense"
    failed: list[str] = field(default_factory=list)
    # The question's embedding when a dense leg computed it, for callers that need it again.
    query_embedding: np.ndarray | None = None


@dataclass(frozen=True)
class Focus:
    """What the question needs, from its analysis: `paper_ids` the papers it names (or the turn it
    follows up named), in the order named; `comparison` True when it compares or relates papers or
    asks across them; `broad` True when it asks across the project's papers, not only named ones;
    `queries` each named paper's own query (`chat.question.paper_queries`)."""

    paper_ids: tuple[int, ...] = ()
    comparison: bool = False
    broad: bool = False
    # (paper id, query): a named paper's own side of the question, searched for that paper alone.
    queries: tuple[tuple[int, str], ...] = ()
    # What a definition question asks to define ("znode"): see `first_mentions_first`.
    define: str = ""
    # The table or figure the question asks about ("Table 3"): its caption's chunk leads.
    caption: str = ""
    # The question asks who funded the work: the chunk with the funding statement leads.
    funding: bool = False
    # The question without the names of the papers it names, for the lexical leg when only those
    # papers are searched: there every chunk is of a named paper, and its name, rare in the project
    # (a high IDF), would rank chunks by how often they repeat it rather than by the question.
    lexical_query: str = ""
    # Each of `queries` without its own paper's name, for that side's lexical leg (as `lexical_query`).
    lexical_queries: tuple[tuple[int, str], ...] = ()
    # The sentences the previous answer quoted, for a follow-up: see `with_carried`.
    carried: tuple[str, ...] = ()


@dataclass(frozen=True)
class PaperFilter:
    """Metadata restrictions on which papers a question searches; every given field must hold.

    `paper_ids`: only these papers; `year_from`/`year_to`: inclusive publication-year range (a
    paper of unknown year fails a year restriction); `author`: case-insensitive substring of the
    paper's author list.
    """

    paper_ids: frozenset[int] | None = None
    year_from: int | None = None
    year_to: int | None = None
    author: str | None = None

    def admits(self, paper: Paper) -> bool:
        if self.paper_ids is not None and paper.pk not in self.paper_ids:
            return False
        if self.year_from is not None and (paper.year is None or paper.year < self.year_from):
            return False
        if self.year_to is not None and (paper.year is None or paper.year > self.year_to):
            return False
        return not (self.author and self.author.casefold() not in paper.authors.casefold())


# --- pure core ------------------------------------------------------------------------------------


def top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """Row indices of the *k* largest finite *scores*, best first (ties: lower row first)."""
    candidates = np.flatnonzero(np.isfinite(scores))
    if candidates.size == 0 or k <= 0:
        return candidates[:0]
    if candidates.size > k:
        candidates = candidates[np.argpartition(-scores[candidates], k - 1)[:k]]
    return candidates[np.lexsort((candidates, -scores[candidates]))]


def cosine_top_k(query: np.ndarray, embeddings: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Exact top-*k* by cosine similarity. *query* (d,) and rows of *embeddings* (n, d) must be unit
    vectors, so cosine similarity is their dot product. Returns (row, score) pairs, best first."""
    if embeddings.size == 0 or k <= 0:
        return []
    scores = embeddings @ query.astype(np.float32)
    return [(int(row), float(scores[row])) for row in top_rows(scores, k)]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[_Key]], *, k: int) -> list[tuple[_Key, float]]:
    """Fuse best-first *rankings* of keys: score(key) = sum over rankings of 1 / (k + rank), with
    1-based ranks; a key absent from a ranking gets nothing from it.

    Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and individual Rank
    Learning Methods", SIGIR 2009, who found k = 60 robust. Returns (key, score) pairs by score,
    descending; ties keep the order of first appearance (earlier rankings first).
    """
    fused: dict[_Key, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda item: -item[1])


def fuse_hits(dense: Sequence[Hit], lexical: Sequence[Hit], *, k: int) -> list[Hit]:
    """One best-first list of hits from the two legs' best-first lists, by reciprocal rank fusion
    over chunks (paper, chunk index). A chunk found by both legs keeps both ranks and the known
    cosine similarity; every hit gets its `fused_score`."""
    by_key: dict[tuple[int, int], Hit] = {}
    for hit in lexical:
        by_key[(hit.paper_id, hit.chunk_index)] = hit
    for hit in dense:
        key = (hit.paper_id, hit.chunk_index)
        other = by_key.get(key)
        if other is not None:
            hit = replace(
                hit, lexical_rank=other.lexical_rank, bm25=other.bm25, lexical_coverage=other.lexical_coverage
            )
        by_key[key] = hit
    fused = reciprocal_rank_fusion(
        [[(h.paper_id, h.chunk_index) for h in dense], [(h.paper_id, h.chunk_index) for h in lexical]], k=k
    )
    return [replace(by_key[key], fused_score=score) for key, score in fused]


def is_relevant(hit: Hit, *, min_relevance: float | None, min_lexical_coverage: float | None) -> bool:
    """Whether *hit* clears the relevance bar: cosine similarity >= *min_relevance*, or lexical
    coverage >= *min_lexical_coverage*. A bar given as None is not used."""
    if min_relevance is not None and hit.score >= min_relevance:  # NaN (unscored) compares False
        return True
    if min_relevance is not None and hit.sentence_score >= min_relevance + SENTENCE_MARGIN:
        return True
    return min_lexical_coverage is not None and hit.bm25 is not None and hit.lexical_coverage >= min_lexical_coverage


def _strength(hit: Hit) -> float:
    return hit.score if not math.isnan(hit.score) else -math.inf


def papers_near_the_best(
    hits: Sequence[Hit], *, relative_bar: float, min_lexical_coverage: float | None = None
) -> set[int]:
    """The papers whose best hit is close to the best hit overall: best cosine similarity >=
    *relative_bar* x the best cosine similarity (cosines of relevant passages are positive), or,
    among hits that are strong lexical matches (coverage >= *min_lexical_coverage*), best lexical
    coverage >= *relative_bar* x the best coverage: an exact match of the question's rare terms
    counts as much as a close embedding. Where no hit has a cosine (lexical mode), BM25 scores are
    compared the same way."""
    near: set[int] = set()
    scored = [hit for hit in hits if not math.isnan(hit.score)]
    top = max((hit.score for hit in scored), default=0.0)
    if top > 0:
        near |= {hit.paper_id for hit in scored if hit.score >= relative_bar * top}
    else:
        bm25 = [hit for hit in hits if hit.bm25 is not None]
        top_bm25 = max((hit.bm25 or 0.0 for hit in bm25), default=0.0)
        near |= {hit.paper_id for hit in bm25 if (hit.bm25 or 0.0) >= relative_bar * top_bm25}
    if min_lexical_coverage is not None:
        lexical = [hit for hit in hits if hit.bm25 is not None and hit.lexical_coverage >= min_lexical_coverage]
        top_coverage = max((hit.lexical_coverage for hit in lexical), default=0.0)
        near |= {hit.paper_id for hit in lexical if hit.lexical_coverage >= relative_bar * top_coverage}
    return near if (scored or any(hit.bm25 is not None for hit in hits)) else {hit.paper_id for hit in hits}


def select_passages(
    hits: Sequence[Hit],
    *,
    min_relevance: float | None,
    top_k: int,
    per_paper: int,
    min_lexical_coverage: float | None = None,
    focus: Focus | None = None,
    relative_bar: float = 0.0,
    near_miss: float = 0.0,
) -> list[Hit]:
    """Best-first selection of at most *top_k* relevant hits (see `is_relevant`), at most
    *per_paper* from any one paper, where every paper that gets slots gets at least one while the
    budget allows (papers in the order of their best hit).

    Which papers get slots: without a *focus*, every paper with a relevant hit. With one, the papers
    it names always do (their best hit qualifies even *near_miss* under *min_relevance*), and
    before the others; a broad question also gives every other paper with a relevant hit a slot, a
    question naming papers gives none; otherwise only papers near the best (`papers_near_the_best`
    with *relative_bar*) get slots.

    *hits* must be in ranking order, best first (by cosine, BM25 or fused score, whichever the mode
    ranks by). Stable: the result keeps the input order.
    """
    keep = [is_relevant(hit, min_relevance=min_relevance, min_lexical_coverage=min_lexical_coverage) for hit in hits]
    needed: tuple[int, ...] = ()
    if focus is not None:
        best_of: dict[int, int] = {}
        for position, hit in enumerate(hits):
            best_of.setdefault(hit.paper_id, position)
        needed = tuple(pid for pid in focus.paper_ids if pid in best_of)
        floor = (min_relevance - near_miss) if min_relevance is not None else None
        for pid in needed:
            papers_hits = [keep[p] for p, hit in enumerate(hits) if hit.paper_id == pid]
            if not any(papers_hits) and floor is not None and _strength(hits[best_of[pid]]) >= floor:
                keep[best_of[pid]] = True
    qualifying = [hit for hit, kept in zip(hits, keep, strict=True) if kept]
    if focus is not None and not focus.broad:
        if needed:
            qualifying = [hit for hit in qualifying if hit.paper_id in needed]
        else:
            near = papers_near_the_best(
                qualifying, relative_bar=relative_bar, min_lexical_coverage=min_lexical_coverage
            )
            qualifying = [hit for hit in qualifying if hit.paper_id in near]
    chosen: set[int] = set()
    per_paper_count: dict[int, int] = {}
    order = sorted(range(len(qualifying)), key=lambda p: (qualifying[p].paper_id not in needed, p))
    for position in order:  # one slot per paper first (named papers before others): diversity
        hit = qualifying[position]
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


# A sentence's end: a stop (with any closing quote or bracket) before white space and a capital or
# bracket, or at the end of the text; not the stop of "e.g.", "i.e.", "et al." or "Fig.".
_SENTENCE_END = re.compile(
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\bal)(?<!\bFig)(?<!\bcf)(?<!\bvs)[.!?][\"'\u201d\u2019)\]]*(?=\s+[A-Z(\[]|\s*$)"
)
# The characters of a chunk's edge matched against its neighbour to find where the two overlap.
OVERLAP_PROBE_CHARS = 40
# A passage is completed by at most this many characters at either end.
MAX_COMPLETION_CHARS = 400


def _overlap(left: str, right: str) -> int:
    """Where *right* starts inside *left* when *left*'s end is *right*'s start (chunks overlap by
    some tokens: both are slices of one page text), or -1."""
    probe = right[:OVERLAP_PROBE_CHARS]
    at = left.rfind(probe) if len(probe) == OVERLAP_PROBE_CHARS else -1
    while at >= 0:
        if right.startswith(left[at:]):
            return at
        at = left.rfind(probe, 0, at)
    return -1


def _ends_sentence(text: str) -> bool:
    return _SENTENCE_END.search(text.rstrip()[-4:] + " ") is not None if text.strip() else True


def whole_sentence_text(text: str, before: str | None, after: str | None) -> str:
    """*text* (a chunk) with the sentences its edges cut completed from the chunks *before* and
    *after* it on the same page (None: none there), each by at most MAX_COMPLETION_CHARS: a
    200-token window cuts a sentence at each end ("... in effect they use Chubby" | "as a name
    service ..."), which could then never be quoted. Unchanged where an edge already falls between
    sentences, or where a neighbour does not overlap it."""
    head = tail = ""
    if after is not None and not _ends_sentence(text) and (at := _overlap(text, after)) >= 0:
        rest = after[len(text) - at :]
        end = _SENTENCE_END.search(rest[:MAX_COMPLETION_CHARS])
        if end is not None:
            tail = rest[: end.end()]
    if before is not None and (at := _overlap(before, text)) >= 0:
        lead = before[:at]
        if lead.strip() and not _ends_sentence(lead):
            ends = list(_SENTENCE_END.finditer(lead[-MAX_COMPLETION_CHARS:]))
            if ends:
                head = lead[-MAX_COMPLETION_CHARS:][ends[-1].end() :].lstrip()
    return head + text + tail


def with_whole_sentences(hits: Sequence[Hit], index: ProjectIndex) -> list[Hit]:
    """*hits* with their texts completed to whole sentences from the neighbouring chunks of
    *index* on the same page (`whole_sentence_text`); a hit whose neighbours the index lacks keeps
    its text."""
    out = []
    for hit in hits:
        neighbours: list[str | None] = []
        for step in (-1, 1):
            row = index.row_of(hit.paper_id, hit.chunk_index + step)
            chunk = index.chunks[row] if row is not None else None
            neighbours.append(chunk["text"] if chunk is not None and chunk["pageNumber"] == hit.page_number else None)
        text = whole_sentence_text(hit.text, *neighbours)
        out.append(replace(hit, text=text) if text != hit.text else hit)
    return out


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
            bm25=hit.bm25,
            lexical_coverage=hit.lexical_coverage,
            fused_score=hit.fused_score,
        )
        for n, hit in enumerate(hits, start=1)
    ]


# --- the shell: reads the chunk index -------------------------------------------------------------


class ProjectIndex:
    """The searchable form of one set of papers at given index versions, held in memory.

    `chunks[i]` is chunk metadata (no vector); `embeddings[i]` its unit vector (an empty (n, 0)
    matrix when read without vectors, as for the lexical leg on Atlas); `paper_ids[i]` its paper.
    The BM25 index over the same rows is built on first use, once: merged from the papers' stored
    statistics when the matrix carries them (read from packs), else tokenised from the chunk texts.
    """

    def __init__(self, matrix: store.ChunkMatrix) -> None:
        self.chunks = matrix.chunks
        self.embeddings = matrix.embeddings
        self.paper_ids = np.array([chunk["paperId"] for chunk in self.chunks], dtype=np.int64)
        self._statistics = matrix.lexical
        self._lexical: LexicalIndex | None = None
        self._rows: dict[tuple[int, int], int] | None = None
        self._lock = threading.Lock()

    @property
    def lexical(self) -> LexicalIndex:
        with self._lock:
            if self._lexical is None:
                if self._statistics:
                    self._lexical = LexicalIndex.from_statistics(merge_statistics(self._statistics))
                    self._statistics = ()  # merged: the per-paper copies are not needed again
                else:
                    self._lexical = LexicalIndex(self.chunks)
            return self._lexical

    def row_of(self, paper_id: int, chunk_index: int) -> int | None:
        """The row of chunk *chunk_index* of paper *paper_id*, or None when the index lacks it."""
        with self._lock:
            if self._rows is None:
                self._rows = {(chunk["paperId"], chunk["chunkIndex"]): row for row, chunk in enumerate(self.chunks)}
        return self._rows.get((paper_id, chunk_index))

    def allowed_rows(self, paper_ids: set[int]) -> np.ndarray:
        """Boolean mask of the rows whose paper is in *paper_ids*."""
        return np.isin(self.paper_ids, np.fromiter(paper_ids, dtype=np.int64, count=len(paper_ids)))


# (embedding model, the (paper id, version) pairs, whether vectors were read)
_CacheKey = tuple[str, frozenset[tuple[int, store.PaperVersion]], bool]


class _IndexCache:
    """Per-process LRU of `ProjectIndex`es keyed by embedding model and (paper, index version)
    pairs, and whether vectors were read.

    A project's index is read from its papers' packs (one document per paper: chunk texts,
    vectors, BM25 statistics; `services.read_project_chunks`) and its BM25 merged from their
    statistics, once, and reused until one of its papers is added, removed or changes version
    (which changes the key, so a stale index is never used: the next question builds a fresh one
    with fresh IDF). Each worker process holds its own copy; nothing is rebuilt per question.
    """

    def __init__(self, max_entries: int = 16) -> None:
        self._entries: OrderedDict[_CacheKey, ProjectIndex] = OrderedDict()
        self._lock = threading.Lock()
        self.max_entries = max_entries

    def get(
        self, versions: dict[int, store.PaperVersion], embedding_model: str, *, with_embeddings: bool = True
    ) -> ProjectIndex:
        key = (embedding_model, frozenset(versions.items()), with_embeddings)
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
        index = ProjectIndex(
            read_project_chunks(versions=versions, embedding_model=embedding_model, with_embeddings=with_embeddings)
        )
        with self._lock:
            self._entries[key] = index
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return index

    def prime(
        self, versions: dict[int, store.PaperVersion], embedding_model: str, matrix: store.ChunkMatrix
    ) -> ProjectIndex:
        """Hold *matrix* as the index of *versions* without reading the store (benchmarks use it
        for synthetic projects; a warm-up could use it after indexing)."""
        index = ProjectIndex(matrix)
        with self._lock:
            self._entries[(embedding_model, frozenset(versions.items()), True)] = index
        return index

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


matrix_cache = _IndexCache()


def _hit(chunk: dict[str, Any], score: float, **ranking: Any) -> Hit:
    return Hit(
        paper_id=chunk["paperId"],
        chunk_index=chunk["chunkIndex"],
        page_number=chunk["pageNumber"],
        text=chunk["text"],
        contextual_blurb=chunk.get("contextualBlurb", ""),
        score=score,
        **ranking,
    )


def _belongs(chunk: dict[str, Any], versions: dict[int, store.PaperVersion]) -> bool:
    """The read-back check: the chunk is of a searched paper, at the version the paper row names,
    made from that paper's file (`store.is_current`)."""
    return store.is_current(chunk, versions)


def paper_versions(papers: Iterable[Paper]) -> dict[int, store.PaperVersion]:
    """Paper id -> the index version and content hash its current chunks carry."""
    return {paper.pk: store.PaperVersion(paper.index_version, paper.sha256) for paper in papers}


def dense_hits(query: np.ndarray, versions: dict[int, store.PaperVersion], *, limit: int) -> list[Hit]:
    """Best-first chunks of the papers in *versions* (paper id -> index version and hash) by cosine
    similarity: Atlas `$vectorSearch` on Atlas (filtered by paper natively), an exact numpy scan
    elsewhere. Hits whose paper is not in *versions* are dropped after they are read back."""
    model = configured_model_name()
    if store.is_atlas():
        pairs = store.vector_search(query, versions, embedding_model=model, limit=limit)
    else:
        index = matrix_cache.get(versions, model)
        pairs = [(index.chunks[row], score) for row, score in cosine_top_k(query, index.embeddings, limit)]
    hits: list[Hit] = []
    for chunk, score in pairs:
        if _belongs(chunk, versions):
            hits.append(_hit(chunk, score, dense_rank=len(hits) + 1))
    return hits


def _local_legs(
    question: str,
    query: np.ndarray | None,
    versions: dict[int, store.PaperVersion],
    searched: set[int],
    *,
    limit: int,
    lexical: bool,
) -> tuple[list[Hit], list[Hit] | None]:
    """The legs over the in-memory index of the project (*versions*), restricted to the papers in
    *searched* before ranking. The dense leg runs when *query* is given, the lexical one when
    *lexical* is; the lexical result is None when its index could not be built or searched (logged).
    Lexical hits carry their cosine similarity when the dense leg ran."""
    index = matrix_cache.get(versions, configured_model_name())
    allowed = index.allowed_rows(searched)
    searched_versions = {paper_id: versions[paper_id] for paper_id in searched}
    cosine: np.ndarray | None = None
    dense: list[Hit] = []
    if query is not None and index.embeddings.size:
        cosine = index.embeddings @ query.astype(np.float32)
        for row in top_rows(np.where(allowed, cosine, -np.inf), limit):
            chunk = index.chunks[row]
            if _belongs(chunk, searched_versions):
                dense.append(_hit(chunk, float(cosine[row]), dense_rank=len(dense) + 1))
    if not lexical:
        return dense, []
    try:
        matches = index.lexical.search(question, limit=limit, allowed=allowed)
    except Exception:  # BM25 adds recall; its failure must never fail a question
        logger.warning(
            "The lexical index of papers %s failed; searching by embeddings only", sorted(versions), exc_info=True
        )
        return dense, None
    hits: list[Hit] = []
    for match in matches:
        chunk = index.chunks[match.row]
        if not _belongs(chunk, searched_versions):
            continue
        score = float(cosine[match.row]) if cosine is not None else math.nan
        hits.append(_hit(chunk, score, lexical_rank=len(hits) + 1, bm25=match.bm25, lexical_coverage=match.coverage))
    return dense, hits


def _atlas_lexical(question: str, versions: dict[int, store.PaperVersion], *, limit: int) -> list[Hit] | None:
    """The lexical leg on Atlas: BM25 over the searched papers' chunk texts, read without vectors
    and kept in memory like the local index. (Atlas `$search` could do this server-side; not wired.)"""
    try:
        index = matrix_cache.get(versions, configured_model_name(), with_embeddings=False)
        matches = index.lexical.search(question, limit=limit)
    except Exception:
        logger.warning(
            "The lexical index of papers %s failed; searching by embeddings only", sorted(versions), exc_info=True
        )
        return None
    hits: list[Hit] = []
    for match in matches:
        chunk = index.chunks[match.row]
        if _belongs(chunk, versions):
            hits.append(
                _hit(chunk, math.nan, lexical_rank=len(hits) + 1, bm25=match.bm25, lexical_coverage=match.coverage)
            )
    return hits


SentenceScorer = Callable[[Sequence[str], np.ndarray], np.ndarray]
"""`(chunk texts, query embedding) -> array`: per chunk, the highest cosine similarity of one of its
sentences to the query, NaN where its sentences' vectors are not known."""


def leg_candidates(dense: Sequence[Hit], lexical: Sequence[Hit]) -> list[Hit]:
    """The hits of both legs: *dense*, then the *lexical* hits not in it."""
    seen = {(hit.paper_id, hit.chunk_index) for hit in dense}
    return [*dense, *(hit for hit in lexical if (hit.paper_id, hit.chunk_index) not in seen)]


def rerank_dense(candidates: Sequence[Hit], best_sentence: np.ndarray, *, limit: int) -> list[Hit]:
    """The dense leg re-ranked over *candidates* (both legs' hits: `leg_candidates`) by chunk
    cosine + best sentence cosine (*best_sentence*, one per candidate in that order; a NaN counts
    the chunk's own cosine twice), at most *limit*, with new `dense_rank`s.

    A chunk's vector averages everything it says; a question that paraphrases one of its sentences
    is closer to that sentence than to the chunk. Measured on this project's evaluation set
    (dense leg alone, 81 gold passages): gold passage in the top 15 0.58 -> 0.65, top 5 0.31 -> 0.48.
    Hits without a cosine (lexical-only hits on Atlas) stay out of the dense leg."""
    combined = []
    for hit, sentence in zip(candidates, best_sentence, strict=True):
        if math.isnan(hit.score):
            continue
        best = hit.score if math.isnan(sentence) else float(sentence)
        combined.append((hit.score + best, replace(hit, sentence_score=best)))
    combined.sort(key=lambda item: -item[0])
    return [replace(hit, dense_rank=rank) for rank, (_, hit) in enumerate(combined[:limit], start=1)]


# A definition or table question puts the first mention of its term (the caption) first in this many
# papers at most when it names none (the first papers holding one, in the order of their best hits).
FIRST_MENTION_PAPERS = 2


def term_pattern(term: str) -> re.Pattern[str]:
    """A whole-word, case-folded match of *term*, a plural "s" or "es" allowed ("znode", "znodes")."""
    return re.compile(rf"(?<!\w){re.escape(term)}(?:s|es)?(?!\w)", re.IGNORECASE)


def caption_pattern(label: str) -> re.Pattern[str]:
    """A caption line of *label* ("Table 3" -> a line opening "Table 3:", "Table 3.", "TABLE 3 |";
    "Figure 2" also "Fig. 2")."""
    kind, number = label.split()
    kinds = r"Fig(?:ure|\.)" if kind == "Figure" else kind
    return re.compile(rf"^\s*{kinds}\s*{number}\s*[:.|]", re.IGNORECASE | re.MULTILINE)


# A funding statement or acknowledgement: "This research was supported by the National Science
# Foundation under grant ...", "funded in part by ...", "Acknowledgements".
FUNDING_STATEMENT = re.compile(
    r"\b(?:supported|funded|sponsored|financed)(?:\s+(?:in\s+part|partly|partially))?\s+by\b"
    r"|\backnowledge?ments?\b|\bwe\s+thank\b",
    re.IGNORECASE,
)


def first_mentions_first(
    hits: Sequence[Hit],
    pattern: re.Pattern[str],
    index: ProjectIndex,
    papers: Sequence[int],
    query: np.ndarray | None,
    index_versions: dict[int, store.PaperVersion],
    *,
    limit: int | None = None,
    whole_sentence: bool = False,
) -> list[Hit]:
    """*hits* with, before them, the first chunk of each of *papers* (paper ids, in that order; at
    the versions *index_versions* names, as every leg checks) that *pattern* matches; with
    *whole_sentence*, only where the sentence it matches in ends inside the chunk (a funding
    statement cut at the chunk's end is whole in the next, overlapping chunk).

    For a term (`term_pattern`): a paper defines a thing where it first names it ("... a set of
    data nodes (znodes)" on page 2, where later pages use "znode" without a definition and BM25,
    weighing every use alike, ranks them higher). For a table or figure (`caption_pattern`): the
    chunk holding its caption. The chunk keeps its hit from the legs when it has one (a new one
    gets its cosine similarity to *query*, NaN without it), with full lexical coverage: it holds
    what was asked about, so it qualifies. At most *limit* papers (the first of *papers* with a
    match) get one."""
    wanted = set(papers)
    first: dict[int, int] = {}
    for row, chunk in enumerate(index.chunks):
        pid = chunk["paperId"]
        if pid not in wanted or (pid in first and index.chunks[first[pid]]["chunkIndex"] <= chunk["chunkIndex"]):
            continue
        if not _belongs(chunk, index_versions):
            continue
        match = pattern.search(chunk["text"])
        if match and (not whole_sentence or re.search(r"[.!?](?:\s|$)", chunk["text"][match.end() :])):
            first[pid] = row
    known = {(hit.paper_id, hit.chunk_index): hit for hit in hits}
    front: list[Hit] = []
    for pid in papers:
        if pid not in first:
            continue
        if limit is not None and len(front) >= limit:
            break
        chunk = index.chunks[first[pid]]
        hit = known.get((pid, chunk["chunkIndex"]))
        if hit is None:
            scored = query is not None and index.embeddings.size
            cosine = float(index.embeddings[first[pid]] @ query) if scored else math.nan
            hit = _hit(chunk, cosine, bm25=0.0)
        # It holds what the question asks about, whatever its other words: it qualifies (`is_relevant`).
        front.append(replace(hit, bm25=hit.bm25 or 0.0, lexical_coverage=1.0))
    keys = {(hit.paper_id, hit.chunk_index) for hit in front}
    return [*front, *(hit for hit in hits if (hit.paper_id, hit.chunk_index) not in keys)]


# A follow-up keeps at most this many of the passages the previous answer quoted.
MAX_CARRIED = 3


def with_carried(selected: Sequence[Hit], hits: Sequence[Hit], quotes: Sequence[str]) -> list[Hit]:
    """*selected* (the chosen passages) with, after them, the candidates of *hits* that hold one of
    *quotes* (the previous answer's quoted sentences, in its order; whitespace folded) and are not
    selected, at most MAX_CARRIED: a follow-up ("Which of them removes the least?" after "Which
    filter removes the most papers?") is about what the previous answer quoted, whose passage its
    own words ("least") may not rank. Added beyond the top-K, not in place of a selected passage:
    that may hold the new fact."""
    chosen = {(hit.paper_id, hit.chunk_index) for hit in selected}
    folded = [(hit, " ".join(hit.text.split())) for hit in hits if (hit.paper_id, hit.chunk_index) not in chosen]
    extra: list[Hit] = []
    for quote in dict.fromkeys(" ".join(q.split()) for q in quotes):
        hit = next((h for h, text in folded if quote and quote in text and h not in extra), None)
        if hit is not None and len(extra) < MAX_CARRIED:
            extra.append(hit)
    return [*selected, *extra]


def rank_hits(
    *,
    question: str,
    versions: dict[int, store.PaperVersion],
    searched: set[int],
    mode: str,
    limit: int,
    query_embedding: np.ndarray | None = None,
    sentence_scorer: SentenceScorer | None = None,
    lexical_question: str = "",
) -> tuple[list[Hit], str]:
    """The ranked candidate hits for *question* over the papers in *searched* (a subset of
    *versions*, the project's ready papers), at most *limit* per leg, in *mode*. Returns (hits best
    first, the mode that ran): `lexical` and `hybrid` fall back to `dense`, with a warning logged,
    when the lexical leg is unavailable. *query_embedding* is the question's embedding when the
    caller has it (benchmarks time retrieval without the model). Raises RetrievalModeError for an
    unknown mode; ChunkStoreError or EmbeddingError when a backing service fails.
    *sentence_scorer*, when given, re-ranks the dense leg by its chunks' best sentences
    (`rerank_dense`). *lexical_question*, when given, is what the lexical leg searches instead of
    *question*.
    """
    if mode not in MODES:
        raise RetrievalModeError(f"Unknown retrieval mode {mode!r}: use one of {', '.join(MODES)}.")
    atlas = store.is_atlas()
    searched_versions = {paper_id: versions[paper_id] for paper_id in searched}

    def legs(query: np.ndarray | None, lexical: bool) -> tuple[list[Hit], list[Hit] | None]:
        words = lexical_question or question
        if not atlas:
            return _local_legs(words, query, versions, searched, limit=limit, lexical=lexical)
        dense = dense_hits(query, searched_versions, limit=limit) if query is not None else []
        return dense, _atlas_lexical(words, searched_versions, limit=limit) if lexical else []

    query = None if mode == "lexical" else query_embedding if query_embedding is not None else embed_query(question)
    dense, lexical = legs(query, mode != "dense")
    if lexical is None:
        if query is None:
            dense, _ = legs(embed_query(question), False)
        return dense, "dense"
    if sentence_scorer is not None and query is not None and mode != "lexical":
        pool = leg_candidates(dense, lexical)
        dense = rerank_dense(pool, sentence_scorer([hit.text for hit in pool], query), limit=limit)
    if mode == "dense":
        return dense, mode
    if mode == "lexical":
        return lexical, mode
    return fuse_hits(dense, lexical, k=settings.RETRIEVAL_RRF_K), mode


def retrieve_passages(
    *,
    papers: Sequence[Paper],
    question: str,
    top_k: int | None = None,
    per_paper: int | None = None,
    mode: str | None = None,
    filters: PaperFilter | None = None,
    focus: Focus | None = None,
    sentence_scorer: SentenceScorer | None = None,
) -> Retrieval:
    """Retrieve the numbered passages for *question* from *papers* (a project's papers).

    *question* is the standalone query (a follow-up already resolved). A *focus* with `define` or
    `caption` puts the chunk where the term is first named, or the caption's chunk, first
    (`first_mentions_first`). *sentence_scorer* re-ranks
    the dense leg by each chunk's best sentence (`rerank_dense`; the answer step supplies it). *focus* says which papers
    the question names and whether it compares: named papers are searched alone unless it
    compares one of them with the rest, and `select_passages` gives them their slots. The papers
    searched share the top-k budget (top_k // their number each, never under *per_paper*): a
    project of one paper, or one named paper, gets all top_k passages from it.

    Only papers `ready` for the configured embedding model, and admitted by *filters*, are
    searched; both legs are restricted to them before ranking. Settings give the defaults:
    `RETRIEVAL_MODE` (hybrid, dense or lexical), `RETRIEVAL_RRF_K`, `PROJECT_CHAT_TOP_K`,
    `PROJECT_CHAT_MAX_CHUNKS_PER_PAPER`, `PROJECT_CHAT_MIN_RELEVANCE`,
    `RETRIEVAL_MIN_LEXICAL_COVERAGE`, `RETRIEVAL_PAPER_RELATIVE_BAR`, `RETRIEVAL_NAMED_NEAR_MISS`;
    the module docstring says how relevance is judged per mode.
    Raises RetrievalModeError for an unknown mode; ChunkStoreError or EmbeddingError when a backing
    service fails.
    """
    top_k = settings.PROJECT_CHAT_TOP_K if top_k is None else top_k
    per_paper = settings.PROJECT_CHAT_MAX_CHUNKS_PER_PAPER if per_paper is None else per_paper
    mode = mode or settings.RETRIEVAL_MODE
    if mode not in MODES:
        raise RetrievalModeError(f"Unknown retrieval mode {mode!r}: use one of {', '.join(MODES)}.")
    model = configured_model_name()
    ready = [p for p in papers if p.index_status == Paper.IndexStatus.READY and p.embedding_model == model]
    failed = [p.display_title for p in papers if p not in ready and p.index_status == Paper.IndexStatus.FAILED]
    indexing = [p.display_title for p in papers if p not in ready and p.index_status != Paper.IndexStatus.FAILED]
    searched = {paper.pk for paper in ready if filters is None or filters.admits(paper)}
    if not searched or not question.strip():
        return Retrieval(references=[], indexing=indexing, searched_papers=len(searched), mode=mode, failed=failed)
    # The index is keyed by all the project's ready papers, so a filter reuses it (as a row mask).
    versions = paper_versions(ready)
    ranked = searched
    named = {pid for pid in focus.paper_ids if pid in searched} if focus is not None else set()
    if named and not (focus is not None and focus.broad):
        ranked = named  # "According to the ZooKeeper paper, ...", "How do GFS and Bigtable ...?"
    # The budget papers not searched would have had goes to the searched ones, shared: the passage
    # holding the fact is often not among a paper's best five by similarity ("How many people took
    # part in its lab study?" is answered by a paper's 13th-ranked passage), and a project of one
    # paper searches that paper for all top_k passages.
    per_paper = max(per_paper, top_k // len(ranked))
    limit = min(max(top_k * 4, per_paper * len(ranked) * 2), MAX_CANDIDATES)
    query = None if mode == "lexical" else embed_query(question)
    own_queries = [(pid, text) for pid, text in (focus.queries if focus is not None else ()) if pid in ranked]
    with_own = {pid for pid, _ in own_queries}
    if ranked == named and len(with_own) >= 2:
        # Each side of a comparison is searched with its own query (a paper may have several: one
        # per other paper when the question relates them), the rankings taking turns.
        searches = own_queries + [(pid, question) for pid in ranked if pid not in with_own]
        order = list(focus.paper_ids if focus else ())
        # Searched alone, a paper's own name is in most of its chunks: its lexical leg goes without it.
        side_words = (text for _, text in focus.lexical_queries) if focus else iter(())
        without_name = dict(zip(focus.queries if focus else (), side_words, strict=False))
        rankings = []
        for pid, text in sorted(searches, key=lambda search: order.index(search[0])):
            own = None if mode == "lexical" else embed_query(text)
            paper_hits, ran = rank_hits(
                question=text,
                versions=versions,
                searched={pid},
                mode=mode,
                limit=limit,
                query_embedding=own,
                sentence_scorer=sentence_scorer,
                lexical_question=without_name.get((pid, text), ""),
            )
            rankings.append(paper_hits)
        first: dict[tuple[int, int], Hit] = {}  # each chunk once, where it first came
        for turn in itertools.zip_longest(*rankings):
            for hit in turn:
                if hit is not None:
                    first.setdefault((hit.paper_id, hit.chunk_index), hit)
        hits = list(first.values())
    else:
        hits, ran = rank_hits(
            question=question,
            versions=versions,
            searched=ranked,
            mode=mode,
            limit=limit,
            query_embedding=query,
            sentence_scorer=sentence_scorer,
            lexical_question=focus.lexical_query if focus is not None and ranked == named else "",
        )
        # (pattern, whether the sentence it matches must end in the chunk)
        wanted = [(caption_pattern(focus.caption), False)] if focus is not None and focus.caption else []
        if focus is not None and focus.define:
            wanted.append((term_pattern(focus.define), False))
        if focus is not None and focus.funding:
            wanted.append((FUNDING_STATEMENT, True))
        if wanted:
            index = matrix_cache.get(versions, model, with_embeddings=not store.is_atlas())
            order = list(focus.paper_ids) if focus and ranked == named else [h.paper_id for h in hits]
            order += sorted(ranked)  # a caption may be in a paper no leg ranked
            papers_first = [pid for pid in dict.fromkeys(order) if pid in ranked]
            for pattern, whole in wanted:
                limit = len(named) or FIRST_MENTION_PAPERS
                hits = first_mentions_first(
                    hits, pattern, index, papers_first, query, versions, limit=limit, whole_sentence=whole
                )
    selected = select_passages(
        hits,
        min_relevance=settings.PROJECT_CHAT_MIN_RELEVANCE if ran != "lexical" else None,
        min_lexical_coverage=settings.RETRIEVAL_MIN_LEXICAL_COVERAGE if ran != "dense" else None,
        top_k=top_k,
        per_paper=per_paper,
        focus=focus,
        relative_bar=settings.RETRIEVAL_PAPER_RELATIVE_BAR,
        near_miss=settings.RETRIEVAL_NAMED_NEAR_MISS,
    )
    if focus is not None and focus.carried:
        selected = with_carried(selected, hits, focus.carried)
    titles = {paper.pk: paper.display_title for paper in ready}
    if selected:
        selected = with_whole_sentences(
            selected, matrix_cache.get(versions, model, with_embeddings=not store.is_atlas())
        )
    return Retrieval(
        references=number_references(selected, titles),
        indexing=indexing,
        searched_papers=len(searched),
        mode=ran,
        failed=failed,
        query_embedding=query,
    )
