"""The support check of chat-model answers: each cited sentence is checked against the passages it
cites before it is shown, and a weakly supported one is marked, never silently linked.

`SentenceBuffer` holds streamed text (markers already normalised by `chat.citations`) until a
sentence is complete; `claim_support` measures how far a passage supports a sentence (lexical
overlap and embedding similarity); `check_sentence` turns a sentence into what is shown and the
`AnswerSentence` saved with the answer; `answer_status` sums the sentences up. All pure: the
embedding function is passed in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from chat.citations import NOT_STATED_PHRASE
from chat.extractive import AnswerSentence, Status, candidate_sentences, terms
from indexing.retrieval import Reference

# A claim is supported when this share of its terms is in the cited passages ...
STRONG_LEXICAL_SUPPORT = 0.6
# ... or when this share is, and its embedding is this close to a sentence of them (cosine).
WEAK_LEXICAL_SUPPORT = 0.3
DENSE_SUPPORT = 0.55
# Fewer content terms than this: no claim to check ("Sure.", "In short:").
MIN_CLAIM_TERMS = 3
WEAK_MARK = " (weakly supported by the cited passage)"
UNREADABLE_NOTE = "\n\n(Citations could not be read: the chat model's source markers were not understood.)"

# A sentence ends at a stop (closing quotes may follow, then its markers) before white space and
# the next sentence's first character, or at a newline; a CJK stop needs no space after it.
_BOUNDARY = re.compile(
    r"[.!?][\"'\u201d\u2019)]*(?:\s*\[\d+\])*\s+(?=[^\s\[])|[\u3002\uff01\uff1f](?:\[\d+\])*(?=[^\[])|\n+"
)
_MARKERS = re.compile(r"\s*\[(\d+)\]")


@dataclass
class SentenceBuffer:
    """Streamed text in, whole sentences out (each with its trailing white space)."""

    _text: str = field(default="")

    def feed(self, text: str) -> list[str]:
        self._text += text
        out = []
        position = 0
        for match in _BOUNDARY.finditer(self._text):
            out.append(self._text[position : match.end()])
            position = match.end()
        self._text = self._text[position:]
        return out

    def close(self) -> list[str]:
        rest, self._text = self._text, ""
        return [rest] if rest else []


def claim_support(
    claim: str, passages: Sequence[Reference], embed: Callable[[Sequence[str]], np.ndarray]
) -> tuple[float, float]:
    """`(lexical, dense)` support of *claim* (plain text, no markers) by *passages*: the share of
    its content terms found in them, in [0, 1], and the best cosine similarity between its embedding
    and a sentence of theirs (0 when they hold no sentence)."""
    own = set(terms(claim))
    passage_terms: set[str] = set()
    for passage in passages:
        passage_terms.update(terms(passage.text))
    lexical = len(own & passage_terms) / len(own) if own else 0.0
    # A claim about who funded the work is supported by an acknowledgement sentence.
    sentences = [s.text for s in candidate_sentences(passages, acknowledgements=True)] or [p.text for p in passages]
    if not sentences:
        return lexical, 0.0
    vectors = embed([claim, *sentences])
    return lexical, float(np.max(vectors[1:] @ vectors[0]))


def is_supported(lexical: float, dense: float) -> bool:
    return lexical >= STRONG_LEXICAL_SUPPORT or (lexical >= WEAK_LEXICAL_SUPPORT and dense >= DENSE_SUPPORT)


def check_sentence(
    sentence: str, references: dict[int, Reference], embed: Callable[[Sequence[str]], np.ndarray]
) -> tuple[str, AnswerSentence | None]:
    """What to show for one streamed *sentence* and the `AnswerSentence` saved for it (None for a
    sentence with no claim). A cited sentence the cited passages do not support gets `WEAK_MARK`
    after its markers; an uncited claim is saved unsupported."""
    cited = tuple(int(n) for n in _MARKERS.findall(sentence) if int(n) in references)
    plain = _MARKERS.sub("", sentence).strip()
    if NOT_STATED_PHRASE.search(plain):
        return sentence, AnswerSentence(text=plain, citations=cited, supported=True, not_stated=True)
    if len(terms(plain)) < MIN_CLAIM_TERMS:
        return sentence, None
    if not cited:
        return sentence, AnswerSentence(text=plain, supported=False)
    lexical, dense = claim_support(plain, [references[n] for n in cited], embed)
    if is_supported(lexical, dense):
        return sentence, AnswerSentence(text=plain, citations=cited, supported=True)
    body = sentence.rstrip()
    return body + WEAK_MARK + sentence[len(body) :], AnswerSentence(text=plain, citations=cited, supported=False)


def answer_status(sentences: Sequence[AnswerSentence]) -> Status:
    """answered: every claim supported and nothing said to be missing; partly answered: some claim
    supported, or claims but none supported; not stated: the answer only says the papers do not
    state it (or says nothing checkable)."""
    claims = [s for s in sentences if not s.not_stated]
    missing = any(s.not_stated for s in sentences)
    if not claims:
        return Status.NOT_STATED
    if all(s.supported for s in claims) and not missing:
        return Status.ANSWERED
    return Status.PARTLY_ANSWERED
