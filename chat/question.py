"""Question analysis: what a question asks for, before anything is retrieved.

One pure step shared by retrieval (which papers to search first, which need a slot of their own)
and the answer step (which sentences hold the kind of fact asked for). `analyse_question` is the
entry point; everything here is a pure function over strings and paper descriptions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum


class AnswerType(StrEnum):
    """The kind of fact a question asks for."""

    QUANTITY = "quantity"  # how many, how much, what size/range/latency ...: a number, often with a unit
    ENTITY = "entity"  # who, which system, what name: a named thing
    YES_NO = "yes_no"  # does/is/can ...: a polar question
    MECHANISM = "mechanism"  # how does X do Y, why: a process or reason
    DEFINITION = "definition"  # what is X, define X
    OTHER = "other"


@dataclass(frozen=True)
class PaperRef:
    """What the analysis knows of a searchable paper: its id and the names a question may call it by
    (title, short name such as "Raft" or "GFS", first author's surname)."""

    paper_id: int
    title: str
    first_author: str = ""
    year: int | None = None


@dataclass(frozen=True)
class QuestionAnalysis:
    """The analysed question.

    `query` is the standalone question retrieval and quoting use: the question itself, or its
    rewrite against the conversation when it is a follow-up (`rewritten` then True).
    `named_paper_ids` are the papers the question (or the turn it follows up) names, in the order
    named; `comparison` is True when the question compares or relates several papers or asks
    broadly across them; `answer_type` the kind of fact asked for; `key_terms` the content words
    (lower case) that evidence should contain.
    """

    question: str
    query: str
    answer_type: AnswerType = AnswerType.OTHER
    named_paper_ids: tuple[int, ...] = ()
    comparison: bool = False
    rewritten: bool = False
    key_terms: tuple[str, ...] = field(default=())


_QUANTITY = re.compile(
    r"\b(?:how (?:many|much|long|large|big|fast|often|small|far)|what (?:range|size|number|percentage|fraction|"
    r"share|rate|latency|throughput|ratio|proportion)|at what (?:rate|size)|by how much)\b",
    re.IGNORECASE,
)
_YES_NO = re.compile(r"^(?:does|do|did|is|are|was|were|can|could|will|would|should|has|have|had)\b", re.IGNORECASE)
_MECHANISM = re.compile(r"^(?:how|why)\b|\b(?:how does|how do|how is|how are|why does|why do)\b", re.IGNORECASE)
_DEFINITION = re.compile(r"^(?:what (?:is|are) (?:a |an |the )?\w+(?: \w+)?\??$|define\b|what does .+ mean)", re.I)
_ENTITY = re.compile(r"^(?:who|which|what (?:system|tool|method|dataset|paper|model|algorithm|name))\b", re.I)


def classify_answer_type(question: str) -> AnswerType:
    """The kind of fact *question* asks for, from its wording (English question forms)."""
    text = question.strip()
    if _QUANTITY.search(text):
        return AnswerType.QUANTITY
    if _DEFINITION.search(text):
        return AnswerType.DEFINITION
    if _ENTITY.search(text):
        return AnswerType.ENTITY
    if _YES_NO.search(text):
        return AnswerType.YES_NO
    if _MECHANISM.search(text):
        return AnswerType.MECHANISM
    return AnswerType.OTHER
