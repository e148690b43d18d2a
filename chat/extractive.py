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
from indexing.chunking import dehyphenate
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


def candidate_sentences(references: Sequence[Reference]) -> list[Sentence]:
    """Whole sentences of each passage, whitespace folded and hyphenation joined; fragments cut at a
    passage edge (no capital start or no final stop) and very short or long ones are left out."""
    sentences = []
    for ref in references:
        for raw in _SPLIT.split(neutralise_paper_markers(dehyphenate(ref.text))):
            text = raw.strip()
            if not MIN_SENTENCE_CHARS <= len(text) <= MAX_SENTENCE_CHARS:
                continue
            if not (text[0].isupper() or text[0] in "([") or text[-1] not in ".!?":
                continue
            sentences.append(Sentence(ref.n, ref.paper_id, ref.title, text))
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
