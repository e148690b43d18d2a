"""Full-text search of papers: which of some papers hold a search's words, and where (the
library's search box; `papers.fulltext` is the question, registered in `IndexingConfig.ready()`).

A passage (chunk) contains a search when its text holds every search term (`lexical.search_terms`:
words normalised as retrieval normalises them, case folded, common English words and one-letter
words left out; "fault-tolerant" asks for fault and tolerant; no stemming). A paper matches when
one of its current passages does. Its snippet comes from its first passage, in reading order, that
holds the words as one phrase (separated by spaces or punctuation only), else from its first
matching passage, around the first search word in it.

The passages read are those of the given papers only, at the index version and content hash each
paper row names (`store.is_current`). There is no index: each search scans the passages, a cheap
substring and whole-word test (`lexical.may_hold`) first, tokenizing only the passages that pass,
and stops in each paper at the passage it shows. The texts are read without vectors and kept per
paper and index version, with their folded forms, in a per-process cache of their own
(`paper_texts`): a new upload reads one paper, a filter reads nothing more, and libraries being
searched never push projects' indexes out of retrieval's cache.

Measured (`benchmarks`-style, the 13 shared papers repeated; 2 busy cores): 130 papers (14k
passages) in 40-170 ms a search, 650 papers (71k passages) in 120-460 ms; folding the texts on
first read costs about 25 µs a passage.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

from indexing import store
from indexing.chunking import dehyphenate
from indexing.embeddings import configured_model_name
from indexing.lexical import fold_for_scan, may_hold, search_terms, tokenize
from indexing.retrieval import paper_versions
from papers.fulltext import TextMatch
from papers.models import Paper

# Characters of context a snippet shows before and after the matched words.
SNIPPET_BEFORE = 80
SNIPPET_AFTER = 160


# (chunk, its text folded for the scan): one passage as the scan reads it.
Passage = tuple[dict[str, Any], str]


class PaperTexts:
    """Per-process LRU of papers' passages (`Passage`s, in reading order), keyed by paper id, index
    version and content hash (`store.PaperVersion`) and embedding model: a paper re-indexed gets a
    new key, so a stale text is never read. Holds at most *max_passages* passages (whole papers are
    evicted, least recently used first)."""

    def __init__(self, max_passages: int = 100_000) -> None:
        self.max_passages = max_passages
        self._papers: OrderedDict[tuple[int, store.PaperVersion, str], list[Passage]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, versions: dict[int, store.PaperVersion], *, embedding_model: str) -> dict[int, list[Passage]]:
        """Paper id -> its passages, for the papers in *versions*; the ones not held are read from
        the chunk index in one query. Raises ChunkStoreError."""
        keys = {paper_id: (paper_id, version, embedding_model) for paper_id, version in versions.items()}
        found: dict[int, list[Passage]] = {}
        with self._lock:
            for paper_id, key in keys.items():
                if key in self._papers:
                    self._papers.move_to_end(key)
                    found[paper_id] = self._papers[key]
        missing = {paper_id: versions[paper_id] for paper_id in keys if paper_id not in found}
        if missing:
            read: dict[int, list[Passage]] = {paper_id: [] for paper_id in missing}
            matrix = store.load_chunks(missing, embedding_model=embedding_model, with_embeddings=False)
            for chunk in matrix.chunks:  # ordered by paper, then chunk
                if store.is_current(chunk, missing):
                    read[chunk["paperId"]].append((chunk, fold_for_scan(chunk["text"])))
            found.update(read)
            with self._lock:
                for paper_id, passages in read.items():
                    if keys[paper_id] not in self._papers:
                        self._papers[keys[paper_id]] = passages
                        self._size += len(passages)
                while self._size > self.max_passages and len(self._papers) > 1:
                    self._size -= len(self._papers.popitem(last=False)[1])
        return found

    def clear(self) -> None:
        with self._lock:
            self._papers.clear()
            self._size = 0


paper_texts = PaperTexts()


def phrase_pattern(query: str) -> re.Pattern[str] | None:
    """The words of *query* in order, as whole words separated by anything but letters and
    digits, case-insensitively; None when *query* has no word."""
    words = re.findall(r"[^\W_]+", query)
    if not words:
        return None
    return re.compile(r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, words)) + r"(?![^\W_])", re.IGNORECASE)


def first_term(text: str, terms: Sequence[str]) -> tuple[int, int] | None:
    """The span of the earliest whole-word occurrence in *text* of any of *terms*, None when none
    is printed as such (a term made of a number and its unit, say)."""
    spans = [
        match.span()
        for term in terms
        if (match := re.search(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", text, re.IGNORECASE))
    ]
    return min(spans) if spans else None


def cut_snippet(text: str, start: int, end: int) -> tuple[str, str, str]:
    """(before, text[start:end], after): *text* around the span, at most SNIPPET_BEFORE characters
    before and SNIPPET_AFTER after it, cut between words, with "…" where text was left out."""
    low = max(0, start - SNIPPET_BEFORE)
    if low > 0:
        space = text.find(" ", low, start)
        low = space + 1 if space >= 0 else low
    high = min(len(text), end + SNIPPET_AFTER)
    if high < len(text):
        space = text.rfind(" ", end, high)
        high = space if space > end else high
    before = ("…" if low > 0 else "") + text[low:start]
    return before, text[start:end], text[end:high] + ("…" if high < len(text) else "")


def readable(text: str) -> str:
    """A chunk's text as a snippet shows it: line-break hyphenation joined, white space folded."""
    return " ".join(dehyphenate(text).split())


def _text_match(paper: Paper, chunk: dict[str, Any], query: str, terms: Sequence[str]) -> TextMatch:
    """The TextMatch of *chunk*: its readable text around *query* as a phrase, else around its
    first search word."""
    text = readable(chunk["text"])
    pattern = phrase_pattern(query)
    found = pattern.search(text) if pattern else None
    before, match, after = cut_snippet(text, *(found.span() if found else first_term(text, terms) or (0, 0)))
    page = int(chunk["pageNumber"])
    return TextMatch(page=page, page_label=paper.page_label(page), before=before, match=match, after=after)


def first_passage(passages: Iterable[Passage], query: str, terms: Sequence[str]) -> dict[str, Any] | None:
    """Of one paper's *passages* (in reading order), the first chunk that holds every term and
    *query* as a phrase, else the first that holds every term; None when none does. Cheap tests
    come first (`lexical.may_hold`, the phrase), and the passages are read only as far as needed."""
    wanted = set(terms)
    pattern = phrase_pattern(query)
    fallback: dict[str, Any] | None = None
    for chunk, folded in passages:
        if not may_hold(chunk["text"], folded, terms):
            continue
        phrase = bool(pattern and pattern.search(chunk["text"]))
        if fallback is not None and not phrase:
            continue  # only a passage with the phrase can do better now
        if wanted <= set(tokenize(chunk["text"])):
            if phrase:
                return chunk
            fallback = chunk
    return fallback


def _has_passages(paper: Paper, model: str) -> bool:
    """Whether *paper* has current passages for embedding *model*: it is ready, indexed by it."""
    return paper.index_status == Paper.IndexStatus.READY and paper.embedding_model == model


def find_in_papers(papers: Sequence[Paper], query: str) -> dict[int, TextMatch]:
    """Paper id -> where its text contains *query*, for those of *papers* (ready for the configured
    embedding model: the others have no current passages) whose text does; see the module
    docstring. Raises ChunkStoreError when the chunk index cannot be read."""
    terms = search_terms(query)
    model = configured_model_name()
    ready = {p.pk: p for p in papers if _has_passages(p, model)}
    if not terms or not ready:
        return {}
    texts = paper_texts.get(paper_versions(ready.values()), embedding_model=model)
    found: dict[int, TextMatch] = {}
    for paper_id, passages in texts.items():
        passage = first_passage(passages, query, terms)
        if passage is not None:
            found[paper_id] = _text_match(ready[paper_id], passage, query, terms)
    return found


# Where a paper's front matter ends: its abstract, or its first numbered section.
_FRONT_MATTER_END = re.compile(r"^\s*(?:abstract\b|1\.?\s+introduction\b)", re.IGNORECASE | re.MULTILINE)


def front_matter(paper: Paper) -> str:
    """The text of *paper*'s page 1 before its abstract (title, authors, affiliations, as printed,
    one line per line), "" when the paper has no current passages for the configured embedding
    model or page 1 holds none. Raises ChunkStoreError when the chunk index cannot be read."""
    model = configured_model_name()
    if not _has_passages(paper, model):
        return ""
    passages = paper_texts.get(paper_versions([paper]), embedding_model=model).get(paper.pk, [])
    first = next((chunk["text"] for chunk, _ in passages if chunk.get("pageNumber") == 1), "")
    end = _FRONT_MATTER_END.search(first)
    return first[: end.start()] if end else first[:1500]
