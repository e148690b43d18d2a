"""The lexical leg of retrieval: BM25 over chunk text plus contextual blurb.

BM25 is Robertson & Zaragoza's Okapi BM25 ("The Probabilistic Relevance Framework: BM25 and
Beyond", 2009) in bm25s's default `lucene` variant (k1 = 1.5, b = 0.75), scored as bm25s scores it
(see `LexicalIndex`). Its statistics (IDF, average length) are computed over the chunks the index
is built from, which `retrieval` makes the chunks of one project's ready papers.

An index is made from `LexicalStats`: each chunk's term counts and length, and the document
frequencies of the terms. Statistics are additive, so a paper's statistics are computed once when it
is indexed, stored with its chunks (`indexing.store.PaperPack`), and a project's index is the merge
of its papers' statistics (`merge_statistics`): the same N, document frequencies and average length
as an index tokenised from the project's chunk texts, hence the same scores, without tokenising.

Text is normalised for search exactly as ingest normalises it for extraction and embedding, so a
query and a chunk meet on the same form: NFKC (the ligature "ﬃ" reads "ffi", see
`indexing.pdfparse.normalise_text`), words hyphenated across line breaks joined
(`indexing.chunking.dehyphenate`), then case folded. A hyphenated word also indexes its parts and
their concatenation ("fault-tolerant" -> fault, tolerant, faulttolerant), so a line-break hyphen
inside a word ("effi-\\ncient") still matches "efficient", and "fault tolerant" still matches
"fault-tolerant".

On Atlas, `$search` with a Lucene index could serve this leg natively; it is not wired up (no Atlas
here to test it against), so the in-memory index is used there too, merged from the papers' stored
statistics read without their vectors.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from indexing.chunking import dehyphenate
from indexing.pdfparse import normalise_text
from papers.fulltext import STOPWORDS

# The version of `tokenize`: statistics stored under another version are not used (they are made
# again from the chunk texts). Bump it with any change to what `tokenize` returns (2: typeset accents
# are put back on their letters, `indexing.pdfparse.normalise_text`; 3: a footnote mark glued to
# the word after it, "7pronounced", yields the word too).
TOKENIZER_VERSION = 3
# BM25 parameters: bm25s's defaults, which the index used before it scored on its own.
K1 = 1.5
B = 0.75

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
# Words of a question that say nothing about what it asks ("What fanout do the authors use?"):
# they are searched, but a passage need not contain them to cover the question.
QUESTION_WORDS = frozenset(
    "do author authors paper papers article use uses used using describe describes described say says "
    "said mention mentions mentioned according discuss discusses discussed report reports reported propose "
    "proposes proposed present presents presented happen happens happened happening".split()
)


def plural_stem(term: str) -> str:
    """*term* without an English plural ending, by the S-stemmer of Harman ("How effective is
    suffixing?", JASIS 42(1), 1991): "-ies" -> "-y" unless after "e" or "a", "-es" -> "-e" unless
    after "a", "e" or "o", "-s" -> "" unless after "u" or "s", the first rule that applies. Only
    words of letters longer than three are touched ("GFS", "ms" stay)."""
    if len(term) <= 3 or not term.isalpha():
        return term
    if term.endswith("ies") and term[-4] not in "ea":
        return term[:-3] + "y"
    if term.endswith("es") and term[-3] not in "aeo":
        return term[:-1]
    if term.endswith("s") and term[-2] not in "us":
        return term[:-1]
    return term


def number_forms(term: str) -> set[str]:
    """The singular and plural spellings *term* may stand for, itself included: "leases" ->
    {leases, lease, leasees, ...}; "process" -> {process, processes, ...}. Some are no words; a
    caller keeps those its vocabulary holds."""
    if len(term) <= 3 or not term.isalpha():
        return {term}
    single = plural_stem(term)
    forms = {term, single, single + "s", single + "es"}
    if term.endswith("es"):
        forms.add(term[:-2])  # "processes" -> "process", which the S-stemmer leaves as "processe"
    if single.endswith("y"):
        forms.add(single[:-1] + "ies")
    return forms


# British spellings and the American ones they stand for: (stem, British infix, American infix,
# endings), read as a whole folded word: "licence" -> "license", "modelling" -> "modeling",
# "organised" -> "organized", "analyse" -> "analyze", "centre" -> "center", "catalogue" ->
# "catalog", "behaviour" -> "behavior". A few words become no word at all ("promise" ->
# "promize"); a caller that matches against a vocabulary keeps only the forms it holds, and one
# that maps both sides of a comparison (`american_spelling`) maps them alike.
_SPELLINGS = (
    ("licen|defen|offen|preten", "c", "s", "e|es|ed|ing"),
    ("model|label|travel|cancel|signal|level|channel|fuel|tunnel|total|counsel", "l", "", "ed|ing|er|ers"),
    ("program", "me", "", "|s"),
    ("judg|acknowledg|abridg", "ement", "ment", "|s"),
    (r"\w{3,}", "is", "iz", "e|es|ed|ing|ation|ations|er|ers"),
    (r"\w+", "ys", "yz", "e|es|ed|ing"),
    (r"\w{2,}[bt]", "re", "er", "|s"),
    (r"\w{3,}", "ogue", "og", "|s"),
    (r"\w{3,}", "our", "or", "|s|ed|ing|able|ite|ites|ful"),
)
# The first rule that matches applies, British to American and back (a candidate spelling).
_BRITISH = tuple((re.compile(rf"^({stem}){uk}({ends})$"), rf"\g<1>{us}\g<2>") for stem, uk, us, ends in _SPELLINGS)
_AMERICAN = tuple((re.compile(rf"^({stem}){us}({ends})$"), rf"\g<1>{uk}\g<2>") for stem, uk, us, ends in _SPELLINGS)


def american_spelling(word: str) -> str:
    """*word* (case folded) in American spelling when a British spelling rule matches it
    ("licence" -> "license", "behaviours" -> "behaviors"), else *word*. Words of four letters or
    fewer stay."""
    if len(word) <= 4:
        return word
    for pattern, replacement in _BRITISH:
        if pattern.match(word):
            return pattern.sub(replacement, word)
    return word


def spelling_forms(word: str) -> set[str]:
    """*word* and its spellings on the other side of the Atlantic, candidates a caller filters by
    its vocabulary: "licence" -> {licence, license}; "license" -> {license, licence}."""
    american = american_spelling(word)
    forms = {word, american}
    if len(american) > 4:
        for pattern, replacement in _AMERICAN:
            if pattern.match(american):
                forms.add(pattern.sub(replacement, american))
                break
    return forms


def word_forms(term: str) -> set[str]:
    """The spellings a query word stands for: its singular and plural (`number_forms`), each in
    British and American spelling (`spelling_forms`); "licences" -> {licences, licence, licenses,
    license, ...}. Some are no words; a caller keeps those its vocabulary holds."""
    return {spelled for form in number_forms(term) for spelled in spelling_forms(form)}


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
    150ms, 300ms, 150-300ms). A footnote mark run into its word yields the word as well
    ("7pronounced" -> 7pronounced, pronounced). CJK text (Chinese, Japanese, Korean) yields overlapping character
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
                tokens.extend(part for part in parts if len(part) > 1 and part not in STOPWORDS)
                word = "".join(parts)
            if len(word) > 1 and word not in STOPWORDS:
                tokens.append(word)
            glued = _GLUED_MARK.fullmatch(word)
            if glued is not None and glued[1] not in STOPWORDS:
                tokens.append(glued[1])  # "7pronounced": a footnote mark the PDF set against its word
    return tokens


# A footnote number of one or two digits run into the word after it by the PDF's text layer.
_GLUED_MARK = re.compile(r"\d{1,2}([^\W\d_]{4,})")


@dataclass(frozen=True)
class LexicalMatch:
    """One chunk the query matched. `row` indexes the chunk list the index was built from; `bm25`
    is its BM25 score (> 0); `coverage` is the share of the query's IDF mass that the chunk
    contains, in [0, 1] (see `LexicalIndex.search`)."""

    row: int
    bm25: float
    coverage: float


def document_terms(document: dict[str, Any]) -> list[str]:
    """The BM25 terms of a chunk document (`{"text", "contextualBlurb", ...}`): its blurb and text."""
    return tokenize(f"{document.get('contextualBlurb', '')}\n{document.get('text', '')}")


@dataclass(frozen=True, eq=False)
class LexicalStats:
    """BM25 statistics of a run of chunks (one paper, a part of one, or a project), in row order.

    `terms` is their vocabulary and `document_frequencies[t]` (int64) how many of the chunks hold
    `terms[t]`. Row j holds the distinct terms `term_ids[offsets[j]:offsets[j + 1]]` (indexes into
    `terms`, int32), `counts[...]` times each (int32, >= 1); `lengths[j]` (int32) is its number of
    terms with repeats, BM25's document length. `offsets` is int64 with `size + 1` entries.
    """

    terms: tuple[str, ...]
    document_frequencies: np.ndarray
    lengths: np.ndarray
    offsets: np.ndarray
    term_ids: np.ndarray
    counts: np.ndarray

    @property
    def size(self) -> int:
        """The number of chunks (rows)."""
        return len(self.lengths)

    @classmethod
    def of_terms(cls, rows: Sequence[Sequence[str]]) -> LexicalStats:
        """The statistics of chunks whose terms (`tokenize`) are *rows*."""
        vocabulary: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        ids: list[int] = []
        counts: list[int] = []
        offsets = [0]
        for terms in rows:
            frequencies = Counter(terms)
            ids.extend(map(vocabulary.__getitem__, frequencies))
            counts.extend(frequencies.values())
            offsets.append(len(ids))
        term_ids = np.array(ids, dtype=np.int32)
        return cls(
            terms=tuple(vocabulary),
            document_frequencies=np.bincount(term_ids, minlength=len(vocabulary)).astype(np.int64),
            lengths=np.array([len(terms) for terms in rows], dtype=np.int32),
            offsets=np.array(offsets, dtype=np.int64),
            term_ids=term_ids,
            counts=np.array(counts, dtype=np.int32),
        )

    @classmethod
    def of_documents(cls, documents: Sequence[dict[str, Any]]) -> LexicalStats:
        """The statistics of chunk documents (`document_terms`), tokenising each."""
        return cls.of_terms([document_terms(document) for document in documents])

    def rows(self, start: int, stop: int) -> LexicalStats:
        """The statistics of rows [*start*, *stop*) alone, with their own vocabulary (the terms they
        hold, in this vocabulary's order) and document frequencies."""
        low, high = int(self.offsets[start]), int(self.offsets[stop])
        used, term_ids = np.unique(self.term_ids[low:high], return_inverse=True)
        return LexicalStats(
            terms=tuple(self.terms[t] for t in used.tolist()),
            document_frequencies=np.bincount(term_ids, minlength=len(used)).astype(np.int64),
            lengths=self.lengths[start:stop].copy(),
            offsets=self.offsets[start : stop + 1] - low,
            term_ids=term_ids.astype(np.int32),
            counts=self.counts[low:high].copy(),
        )


def merge_statistics(parts: Sequence[LexicalStats]) -> LexicalStats:
    """The statistics of the rows of all *parts*, in order (part 0's rows first).

    Document frequencies, row count and total length add up, so the result equals
    `LexicalStats.of_terms` over all the rows, up to the order of its vocabulary.
    """
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return LexicalStats.of_terms([])
    vocabulary: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    maps = [
        np.fromiter(map(vocabulary.__getitem__, part.terms), dtype=np.int32, count=len(part.terms)) for part in parts
    ]
    document_frequencies = np.zeros(len(vocabulary), dtype=np.int64)
    for mapping, part in zip(maps, parts, strict=True):
        document_frequencies[mapping] += part.document_frequencies  # a part names each term once
    ends = np.cumsum([int(part.offsets[-1]) for part in parts])
    starts = np.concatenate([[0], ends[:-1]])
    return LexicalStats(
        terms=tuple(vocabulary),
        document_frequencies=document_frequencies,
        lengths=np.concatenate([part.lengths for part in parts]),
        offsets=np.concatenate([[0], *(part.offsets[1:] + start for part, start in zip(parts, starts, strict=True))]),
        term_ids=np.concatenate([mapping[part.term_ids] for mapping, part in zip(maps, parts, strict=True)]),
        counts=np.concatenate([part.counts for part in parts]),
    )


class LexicalIndex:
    """A BM25 index over a fixed list of chunks: built from their documents
    (`{"text", "contextualBlurb", ...}`, tokenised here) or from their statistics
    (`from_statistics`, nothing tokenised).

    Scores are bm25s's `lucene` variant (bm25s 0.3.16, `bm25s/scoring.py`, after Kamphuis et al.,
    "Which BM25 Do You Mean? A Large-Scale Reproducibility Study of Scoring Variants", ECIR 2020),
    computed as bm25s computes them, so they are the scores the index had when bm25s built it:
    term t in chunk d weighs float32(idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))), with
    idf(t) = float32(log(1 + (N - df + 0.5) / (df + 0.5))) (Lucene's IDF), k1 = 1.5, b = 0.75, avgdl
    the mean chunk length; a query's score is the float32 sum of its distinct terms' weights. (The
    factor k1 + 1 of Robertson & Zaragoza's formula is left out, as in bm25s: it scales every score
    alike.)
    """

    def __init__(self, documents: Sequence[dict[str, Any]]) -> None:
        self._index(LexicalStats.of_documents(documents))

    @classmethod
    def from_statistics(cls, statistics: LexicalStats) -> LexicalIndex:
        """The index of the chunks *statistics* describe (row i is their row i)."""
        index = cls.__new__(cls)
        index._index(statistics)
        return index

    def _index(self, statistics: LexicalStats) -> None:
        self.size = statistics.size
        self._vocabulary = {term: t for t, term in enumerate(statistics.terms)}
        self._document_frequency = statistics.document_frequencies
        term_ids = statistics.term_ids
        rows = np.repeat(np.arange(self.size, dtype=np.int32), np.diff(statistics.offsets))
        # Postings per term (CSC): the rows holding term t are rows[offsets[t]:offsets[t + 1]].
        self._offsets = np.zeros(len(self._vocabulary) + 1, dtype=np.int64)
        np.cumsum(np.bincount(term_ids, minlength=len(self._vocabulary)), out=self._offsets[1:])
        order = np.argsort(term_ids, kind="stable")
        self._rows = rows[order]
        self._weights = self._bm25_weights(statistics, rows)[order]

    def _bm25_weights(self, statistics: LexicalStats, rows: np.ndarray) -> np.ndarray:
        """float32 weight of each (row, term) entry of *statistics*, in their order, with the same
        floating-point steps as bm25s (`_build_idf_array`, `_score_tfc_lucene`): IDF as float32
        from a double, the length term in double, the product rounded to float32."""
        if not statistics.term_ids.size:  # no terms at all (and maybe no length to average)
            return np.zeros(0, dtype=np.float32)
        frequencies, inverse = np.unique(statistics.document_frequencies, return_inverse=True)
        idf = np.array([_lucene_idf(int(df), self.size) for df in frequencies], dtype=np.float32)[inverse]
        average_length = int(statistics.lengths.sum(dtype=np.int64)) / self.size
        length_norm = K1 * ((1 - B) + (B * statistics.lengths.astype(np.float64)) / average_length)
        tf = statistics.counts.astype(np.float64)
        return (idf[statistics.term_ids].astype(np.float64) * (tf / (length_norm[rows] + tf))).astype(np.float32)

    def _term_scores(self, term: str) -> np.ndarray:
        """BM25 score of every row for the query *term* alone (float32; 0 where it is absent)."""
        scores = np.zeros(self.size, dtype=np.float32)
        t = self._vocabulary.get(term)
        if t is not None:
            start, stop = self._offsets[t], self._offsets[t + 1]
            scores[self._rows[start:stop]] = self._weights[start:stop]
        return scores

    def _word_scores(self, term: str) -> np.ndarray:
        """Per row, the BM25 weight of the best of *term* and those of its `word_forms` this index
        holds ("licence" scores a chunk printing "license")."""
        forms = [term, *sorted(form for form in word_forms(term) - {term} if form in self._vocabulary)]
        return np.max([self._term_scores(form) for form in forms], axis=0)

    def idf(self, term: str) -> float:
        """Lucene's BM25 IDF, log(1 + (N - df + 0.5) / (df + 0.5)); a term absent from the index
        gets the largest value (df = 0): it is the most informative part of the query."""
        t = self._vocabulary.get(term)
        return _lucene_idf(0 if t is None else int(self._document_frequency[t]), self.size)

    def search(self, query: str, *, limit: int, allowed: np.ndarray | None = None) -> list[LexicalMatch]:
        """The best *limit* chunks for *query* by BM25, best first (ties: lower row first). Each
        query word counts once, by the best weight among its singular and plural forms and their
        British and American spellings (`word_forms`).

        *allowed* is a boolean mask over rows; rows outside it are never ranked (metadata filters
        apply before ranking). Only chunks sharing at least one term with the query are returned.
        `coverage` = sum of IDF of the query terms the chunk contains / sum of IDF of all distinct
        query terms: a chunk that contains the rare words of the question covers most of it. Words
        that only frame a question (`QUESTION_WORDS`: "authors", "paper", "use") are ranked by, and
        count for a chunk that holds them, but never against one that does not (the larger of the
        two coverages is kept): "What fanout do the authors use?" is covered by "fanout" alone.
        """
        terms = list(dict.fromkeys(tokenize(query)))
        if not terms or not self._weights.size or limit <= 0:
            return []
        # A query word matches its singular and plural alike ("How does Chubby use leases?" finds
        # "the master lease"): each word scores by the best of its forms the chunks hold.
        per_term = np.vstack([self._word_scores(term) for term in terms])
        scores = per_term.sum(axis=0)
        if allowed is not None:
            scores = np.where(allowed, scores, 0.0)
        candidates = np.flatnonzero(scores > 0)
        if candidates.size == 0:
            return []
        if candidates.size > limit:
            # The best *limit*; of the chunks tied at the cut, the lowest rows (`flatnonzero` is in row order).
            cut = -np.partition(-scores[candidates], limit - 1)[limit - 1]
            above, tied = candidates[scores[candidates] > cut], candidates[scores[candidates] == cut]
            candidates = np.concatenate([above, tied[: limit - above.size]])
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


def _lucene_idf(document_frequency: int, size: int) -> float:
    """Lucene's BM25 IDF of a term held by *document_frequency* of *size* chunks (bm25s's
    `_score_idf_lucene`, in double precision)."""
    return math.log(1 + (size - document_frequency + 0.5) / (document_frequency + 0.5))


def search_terms(query: str) -> list[str]:
    """The distinct terms a passage must hold to contain *query* (`tokenize`, in order), a
    hyphenated word counting as its parts: "fault-tolerant" asks for fault and tolerant, which a
    passage printing "fault-tolerant" or "fault tolerant" both hold."""
    return list(dict.fromkeys(tokenize(re.sub(r"(?<=[^\W\d_])-(?=[^\W\d_])", " ", query))))


_THOUSANDS_COMMA = re.compile(r"(?<=\d),(?=\d{3})")


def fold_for_scan(text: str) -> str:
    """*text* case folded without hyphens or thousands separators: a form in which every word
    term `tokenize` finds in *text* (letters only, or digits only, but for a unit folded from a
    longer spelling) is a substring, whatever line breaks and hyphens did to it ("effi-\\ncient",
    "fault-tolerant", "1,000"). The cheap first stage of a scan (`may_hold`)."""
    return _THOUSANDS_COMMA.sub("", text.casefold().replace("-\n", "").replace("-", ""))


_UNIT_TERMS = frozenset(_UNITS.values())
_CJK_CHARACTER = re.compile(f"[{_CJK}]")


@cache
def _whole_word(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])")


def may_hold(text: str, folded: str, terms: Sequence[str]) -> bool:
    """False only when *text* (`folded` by `fold_for_scan`) cannot hold all of *terms* as
    `tokenize` finds them: a term of letters only or digits only is missing from *folded*, or a
    term of letters only is not a whole word in any of three forms of *text* (case folded;
    line-break hyphens joined; *folded*). Other terms (a number with its unit, a range, a unit
    folded from another spelling) pass, and a CJK bigram needs only be a substring. A scan checks
    what passes with `tokenize`."""
    checked = [t for t in terms if (t.isalpha() or t.isdigit()) and t not in _UNIT_TERMS]
    if not all(term in folded for term in checked):
        return False
    words = [t for t in checked if t.isalpha() and not _CJK_CHARACTER.search(t)]
    if not words:
        return True
    lowered = text.casefold()
    forms = (lowered, lowered.replace("-\n", ""), folded)
    return all(any(_whole_word(term).search(form) for form in forms) for term in words)
