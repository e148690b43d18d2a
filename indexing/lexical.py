"""The lexical leg of retrieval: BM25 over chunk text plus contextual blurb, with bm25s.

BM25 is Robertson & Zaragoza's Okapi BM25 ("The Probabilistic Relevance Framework: BM25 and
Beyond", 2009) as implemented by bm25s in its default `lucene` variant (k1 = 1.5, b = 0.75). Its
statistics (IDF, average length) are computed over the chunks the index is built from, which
`retrieval` makes the chunks of one project's ready papers.

Text is normalised for search exactly as ingest normalises it for extraction and embedding, so a
query and a chunk meet on the same form: NFKC (the ligature "ﬃ" reads "ffi", see
`indexing.pdfparse.normalise_text`), words hyphenated across line breaks joined
(`indexing.chunking.dehyphenate`), then case folded. A hyphenated word also indexes its parts and
their concatenation ("fault-tolerant" -> fault, tolerant, faulttolerant), so a line-break hyphen
inside a word ("effi-\\ncient") still matches "efficient", and "fault tolerant" still matches
"fault-tolerant".

On Atlas, `$search` with a Lucene index could serve this leg natively; it is not wired up (no Atlas
here to test it against), so the in-memory index is used there too, built from chunk texts read
without their vectors.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from indexing.chunking import dehyphenate
from indexing.pdfparse import normalise_text

# A decimal number stays one token ("99.9", "1,000"); a word keeps its inner hyphens for expansion.
_TOKEN = re.compile(r"\d+(?:[.,]\d+)+|\w+(?:-\w+)*")
_STOPWORDS = frozenset(STOPWORDS_EN) | frozenset(
    "about above after again also any been before being below between both can could did does doing down "
    "during each few from further had has have having here how its itself more most must nor only other our "
    "out over own same should some such than that their them then these those through too under until very "
    "was were what when where which while who whom why would you your".split()
)


def normalise_for_search(text: str) -> str:
    """Ingest normalisation (NFKC, control characters, line-break hyphenation) plus case folding."""
    return dehyphenate(normalise_text(text)).casefold()


def tokenize(text: str) -> list[str]:
    """BM25 terms of *text*, in order: normalised words without English stopwords or one-letter
    words; a hyphenated word yields its parts and their concatenation."""
    tokens: list[str] = []
    for word in _TOKEN.findall(normalise_for_search(text)):
        parts = word.split("-")
        if len(parts) > 1:
            tokens.extend(part for part in parts if len(part) > 1 and part not in _STOPWORDS)
            word = "".join(parts)
        if len(word) > 1 and word not in _STOPWORDS:
            tokens.append(word)
    return tokens


@dataclass(frozen=True)
class LexicalMatch:
    """One chunk the query matched. `row` indexes the chunk list the index was built from; `bm25`
    is its BM25 score (> 0); `coverage` is the share of the query's IDF mass that the chunk
    contains, in [0, 1] (see `LexicalIndex.search`)."""

    row: int
    bm25: float
    coverage: float


class LexicalIndex:
    """A BM25 index over a fixed list of chunk documents (`{"text", "contextualBlurb", ...}`)."""

    def __init__(self, documents: Sequence[dict[str, Any]]) -> None:
        corpus = [tokenize(f"{doc.get('contextualBlurb', '')}\n{doc.get('text', '')}") for doc in documents]
        self.size = len(corpus)
        self._bm25 = bm25s.BM25()
        # bm25s refuses an empty vocabulary; an index of no terms matches nothing.
        self._empty = not any(corpus)
        if not self._empty:
            self._bm25.index(corpus, show_progress=False)
        document_frequency: Counter[str] = Counter()
        for tokens in corpus:
            document_frequency.update(set(tokens))
        self._document_frequency = document_frequency

    def idf(self, term: str) -> float:
        """Lucene's BM25 IDF, log(1 + (N - df + 0.5) / (df + 0.5)); a term absent from the index
        gets the largest value (df = 0): it is the most informative part of the query."""
        df = self._document_frequency.get(term, 0)
        return math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    def search(self, query: str, *, limit: int, allowed: np.ndarray | None = None) -> list[LexicalMatch]:
        """The best *limit* chunks for *query* by BM25, best first (ties: lower row first).

        *allowed* is a boolean mask over rows; rows outside it are never ranked (metadata filters
        apply before ranking). Only chunks sharing at least one term with the query are returned.
        `coverage` = sum of IDF of the query terms the chunk contains / sum of IDF of all distinct
        query terms: a chunk that contains the rare words of the question covers most of it.
        """
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or self._empty or limit <= 0:
            return []
        per_term = np.vstack([self._bm25.get_scores([term]) for term in terms])
        scores = per_term.sum(axis=0)
        if allowed is not None:
            scores = np.where(allowed, scores, 0.0)
        candidates = np.flatnonzero(scores > 0)
        if candidates.size == 0:
            return []
        if candidates.size > limit:
            candidates = candidates[np.argpartition(-scores[candidates], limit - 1)[:limit]]
        candidates = candidates[np.lexsort((candidates, -scores[candidates]))]
        idf = np.array([self.idf(term) for term in terms])
        matched = per_term[:, candidates] > 0
        coverage = (idf @ matched) / idf.sum()
        return [
            LexicalMatch(row=int(row), bm25=float(scores[row]), coverage=float(cov))
            for row, cov in zip(candidates, coverage, strict=True)
        ]
