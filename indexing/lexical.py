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

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
# Units a number may carry, written with or without a space ("300 ms", "300ms"), folded to one
# spelling so "300 milliseconds" meets "300ms".
_UNITS = {
    "ns": "ns", "nanoseconds": "ns", "us": "us", "μs": "us", "microseconds": "us", "ms": "ms",
    "msec": "ms", "milliseconds": "ms", "millisecond": "ms", "s": "s", "sec": "s", "secs": "s",
    "seconds": "s", "second": "s", "min": "min", "mins": "min", "minutes": "min", "minute": "min",
    "h": "h", "hr": "h", "hrs": "h", "hours": "h", "hour": "h", "days": "days", "day": "days",
    "b": "b", "bytes": "b", "byte": "b", "kb": "kb", "kib": "kb", "kilobytes": "kb", "mb": "mb",
    "mib": "mb", "megabytes": "mb", "gb": "gb", "gib": "gb", "gigabytes": "gb", "tb": "tb",
    "tib": "tb", "terabytes": "tb", "pb": "pb", "petabytes": "pb", "bits": "bits", "kbps": "kbps",
    "mbps": "mbps", "gbps": "gbps", "hz": "hz", "khz": "khz", "mhz": "mhz", "ghz": "ghz",
    "%": "%", "percent": "%", "k": "k", "m": "m", "x": "x",
}  # fmt: skip
_NUMBER = r"\d+(?:[.,]\d+)*"
_UNIT = "|".join(sorted((re.escape(unit) for unit in _UNITS), key=len, reverse=True))
_TOKEN = re.compile(
    rf"(?P<low>{_NUMBER})\s*(?:-|\u2013|\u2014|~|\s+to\s+)\s*(?P<high>{_NUMBER})(?:\s*(?P<range_unit>{_UNIT}))?(?![^\W_])"
    rf"|(?P<number>{_NUMBER})(?:\s*(?P<unit>{_UNIT}))?(?![^\W_])"
    rf"|(?P<cjk>[{_CJK}]+)"
    rf"|(?P<word>[^\W{_CJK}]+(?:-[^\W{_CJK}]+)*)"
)
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+$")
_STOPWORDS = frozenset(STOPWORDS_EN) | frozenset(
    "about above after again also any been before being below between both can could did does doing down "
    "during each few from further had has have having here how its itself more most must nor only other our "
    "out over own same should some such than that their them then these those through too under until very "
    "was were what when where which while who whom why would you your".split()
)
# Words of a question that say nothing about what it asks ("What fanout do the authors use?"):
# they are searched, but a passage need not contain them to cover the question.
QUESTION_WORDS = frozenset(
    "do author authors paper papers article use uses used using describe describes described say says "
    "said mention mentions mentioned according discuss discusses discussed report reports reported propose "
    "proposes proposed present presents presented".split()
)


def normalise_for_search(text: str) -> str:
    """Ingest normalisation (NFKC, control characters, line-break hyphenation) plus case folding."""
    return dehyphenate(normalise_text(text)).casefold()


def _number(text: str) -> str:
    return text.replace(",", "") if _THOUSANDS.match(text) else text


def _quantity(number: str, unit: str | None) -> list[str]:
    if unit is None:
        return [number] if len(number) > 1 else []
    # A one-letter unit ("s", "m") alone is no term, like any one-letter word.
    folded = _UNITS[unit]
    return [number, *([folded] if len(folded) > 1 or folded == "%" else []), f"{number}{folded}"]


def _cjk_bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of a CJK run (Lucene's CJKBigramFilter); a lone character
    stands for itself."""
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str) -> list[str]:
    """BM25 terms of *text*, in order: normalised words without English stopwords or one-letter
    words; a hyphenated word yields its parts and their concatenation.

    Numbers: "1,000" is "1000"; a number with a unit, spaced or not, yields the number, the unit
    and both joined ("300 ms" and "300ms" -> 300, ms, 300ms; "300 milliseconds" too); a range
    yields both ends, the unit, each end with the unit, and the range ("150-300ms" -> 150, 300, ms,
    150ms, 300ms, 150-300ms). CJK text (Chinese, Japanese, Korean) yields overlapping character
    bigrams, since it has no spaces between words.
    """
    tokens: list[str] = []
    for match in _TOKEN.finditer(normalise_for_search(text)):
        if match.group("low") is not None:
            low, high, unit = _number(match.group("low")), _number(match.group("high")), match.group("range_unit")
            tokens.extend(_quantity(low, unit))
            tokens.extend(term for term in _quantity(high, unit) if unit is None or term != _UNITS[unit])  # unit once
            tokens.append(f"{low}-{high}{_UNITS[unit] if unit else ''}")
        elif match.group("number") is not None:
            tokens.extend(_quantity(_number(match.group("number")), match.group("unit")))
        elif match.group("cjk") is not None:
            tokens.extend(_cjk_bigrams(match.group("cjk")))
        else:
            word = match.group("word")
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
        query terms: a chunk that contains the rare words of the question covers most of it. Words
        that only frame a question (`QUESTION_WORDS`: "authors", "paper", "use") are ranked by, and
        count for a chunk that holds them, but never against one that does not (the larger of the
        two coverages is kept): "What fanout do the authors use?" is covered by "fanout" alone.
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
        # A framing word never counts against a passage, and counts for one that holds it.
        content = np.array([term not in QUESTION_WORDS for term in terms])
        if content.any() and not content.all():
            content_idf = idf * content
            coverage = np.maximum(coverage, (content_idf @ matched) / content_idf.sum())
        return [
            LexicalMatch(row=int(row), bm25=float(scores[row]), coverage=float(cov))
            for row, cov in zip(candidates, coverage, strict=True)
        ]
