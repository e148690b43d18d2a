"""The extractive answerer: an answer composed of sentences quoted from the retrieved passages.

Used when no chat model is configured. Every sentence is copied from a passage (whitespace folded)
and cited with that passage's number, so the citation contract holds by construction; papers come
in the order of their best passage, at most `SENTENCES_PER_PAPER` sentences each.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chat.citations import neutralise_paper_markers
from indexing.chunking import dehyphenate, is_heading
from indexing.retrieval import Reference

SENTENCES_PER_PAPER = 2
MIN_SENTENCE_CHARS = 40
MAX_SENTENCE_CHARS = 500
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


@dataclass(frozen=True)
class Sentence:
    n: int
    paper_id: int
    title: str
    text: str


# Bibliography entries: venue, pages, volume or publisher words, or "Surname, I." openings.
_BIBLIOGRAPHY = re.compile(
    r"\b(?:In Proc(?:eedings|\.)|Proceedings of|pp\.|vol\.|arXiv|doi:|ACM Trans|IEEE Trans|Press|et al\.,)"
    r"|^(?:\[ref \d+\]\s*)?[A-Z][a-z]+,\s+[A-Z]\.",
)
# A paper's own reference marker in a quote: a word joiner after "[" keeps it verbatim on screen
# while neither our parser nor the browser reads it as a citation.
_QUOTED_MARKER = re.compile(r"\[ref ([^\]]+)\]")


_CITATION_LINE = re.compile(r"\b(?:19|20)\d\d[a-z]?\b|\bIn Proc|\bProceedings\b|\bpp\.|\bvol\.|\bet al\.")


def looks_like_bibliography(text: str) -> bool:
    """A passage from a reference list: at least 30% of its lines carry a year or venue words.
    Its "sentences" are titles of other works, never evidence for a claim."""
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and sum(bool(_CITATION_LINE.search(line)) for line in lines) >= 0.3 * len(lines)


# A figure or table caption label inside a "sentence": figure text glued to a caption or to prose.
_CAPTION = re.compile(r"\b(?:Figure|Fig\.|Table)\s+\d+:")


def _blocks(text: str) -> list[str]:
    """*text* cut at section-heading lines (`is_heading`, dropped), so a heading is never glued into
    a quote; each block dehyphenated and folded."""
    blocks: list[str] = []
    current: list[str] = []
    for line in text.split("\n"):
        if is_heading(line):
            blocks.append("\n".join(current))
            current = []
        else:
            current.append(line)
    blocks.append("\n".join(current))
    return [dehyphenate(block) for block in blocks if block.strip()]


def is_quotable(text: str) -> bool:
    """A whole prose sentence: starts with a capital (or bracket), ends with a stop, mostly letters
    (not a table row), not a bibliography entry, not a footnote glued to its number ("2We ..."),
    no figure or table caption label inside (figure text glued to prose)."""
    if not MIN_SENTENCE_CHARS <= len(text) <= MAX_SENTENCE_CHARS:
        return False
    if not (text[0].isupper() or text[0] in "([") or text[-1] not in ".!?":
        return False
    letters = sum(ch.isalpha() for ch in text)
    digits = sum(ch.isdigit() for ch in text)
    if letters < 0.6 * len(text) or digits > 0.15 * len(text):
        return False
    return not (_BIBLIOGRAPHY.search(text) or re.match(r"^\d+[A-Z]", text) or _CAPTION.search(text))


def candidate_sentences(references: Sequence[Reference]) -> list[Sentence]:
    """Whole prose sentences of each passage (see `is_quotable`), whitespace folded, hyphenation
    joined, headings left out; a paper's own bibliography markers stay verbatim but inert."""
    sentences = []
    for ref in references:
        if looks_like_bibliography(ref.text):
            continue
        for block in _blocks(ref.text):
            for raw in _SPLIT.split(neutralise_paper_markers(block)):
                text = raw.strip()
                if is_quotable(text):
                    quoted = _QUOTED_MARKER.sub(lambda m: f"[\u2060{m.group(1)}]", text)
                    sentences.append(Sentence(ref.n, ref.paper_id, ref.title, quoted))
    return sentences


def compose_extractive_answer(sentences: Sequence[Sentence], scores: np.ndarray, *, min_score: float) -> str:
    """Pick the best-scoring sentences per paper (scores: cosine similarity to the question, one per
    sentence) and write them up with their `[N]`. Returns "" when no sentence reaches *min_score*."""
    order = sorted(range(len(sentences)), key=lambda i: -float(scores[i]))
    by_paper: dict[int, list[Sentence]] = {}
    seen: set[str] = set()
    for i in order:
        sentence = sentences[i]
        if float(scores[i]) < min_score or sentence.text in seen:
            continue
        picked = by_paper.setdefault(sentence.paper_id, [])
        if len(picked) < SENTENCES_PER_PAPER:
            picked.append(sentence)
            seen.add(sentence.text)
    if not by_paper:
        return ""
    parts = ["Extractive answer (sentences quoted from the papers; no chat model is configured):"]
    for picked in by_paper.values():
        quoted = " ".join(f"“{s.text}” [{s.n}]" for s in picked)
        parts.append(f"- {picked[0].title}: {quoted}")
    return "\n".join(parts)
