"""Questions about papers' metadata (who, when, where, how many), answered from the database.

"Who is the first author of the Raft paper?", "Which papers were published before 2005?", "Which
venue published Dynamo?", "How many papers here are by Ghemawat?", "List the papers from OSDI",
"Which papers are from 2006?", "Which papers did I write?": the answer comes from the metadata the
asker sees (`Paper.cited`: the PDF's, with the project owner's corrections), cites page 1 of each
paper it names (where the metadata is printed) and says it is "from paper metadata". The chunk
index is never searched for these: ranking passages would answer a lookup with a guess.

A question that filters by metadata and then asks about content ("What did the 2006 papers say
about locking?", "What did I write about consensus?") is not answered here: `papers_in_scope`
narrows the papers, and retrieval runs over those.

Without a chat model these are the patterns of the common forms; anything else is left to
retrieval (`answer_from_metadata` returns None).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from chat.extractive import Status
from chat.question import PaperRef, named_papers
from indexing.retrieval import Reference
from papers.metadata import MetadataFilter, filter_papers, has_author
from papers.models import Paper

LABEL = "From paper metadata"

_YEAR = r"((?:19|20)\d\d)"
_NAME = r"([A-Z][\w'\u2019.-]*(?:\s+(?:van|von|de|der|da|del|[A-Z][\w'\u2019.-]*))*)"
_PAPERS = re.compile(r"\b(?:papers?|articles?|works|publications?)\b", re.I)
_FIRST_AUTHOR = re.compile(r"\b(?:who\s+(?:is|was)\s+the\s+)?(first|lead|main)\s+author\s+(?:of|on)\b", re.I)
_AUTHORS = re.compile(r"\bwho\s+(?:wrote|authored|are\s+the\s+authors\s+of|were\s+the\s+authors\s+of)\b", re.I)
_AUTHORS_OF = re.compile(r"\b(?:list|name|what\s+are)\s+the\s+authors\s+of\b", re.I)
_VENUE_OF = re.compile(
    r"\b(?:(?:which|what)\s+(?:venue|conference|journal|proceedings)\b|where\s+(?:was|is)\b.*\bpublished\b)", re.I
)
_YEAR_OF = re.compile(
    r"\b(?:when\s+(?:was|is)|(?:in\s+)?(?:what|which)\s+year\s+(?:was|is))\b.*\b(?:published|written|out)\b", re.I
)
_COUNT = re.compile(r"\bhow\s+many\s+(?:papers|articles|works)\b", re.I)
_BY = re.compile(rf"\b(?:by|from\s+author|authored\s+by|written\s+by)\s+{_NAME}")
_BEFORE = re.compile(rf"\b(?:before|earlier\s+than|prior\s+to)\s+{_YEAR}\b", re.I)
_AFTER = re.compile(rf"\b(?:after|later\s+than|since)\s+{_YEAR}\b", re.I)
_IN_YEAR = re.compile(rf"\b(?:in|from|of)\s+{_YEAR}\b|\b{_YEAR}\s+papers\b", re.I)
_FROM_VENUE = re.compile(r"\b(?:from|at|in|published\s+(?:at|in)|appeared\s+(?:at|in))\s+(?:the\s+)?([A-Z][\w-]+)")
_MINE = re.compile(r"\b(?:did\s+I\s+(?:write|author)|I\s+(?:wrote|authored)|my\s+(?:own\s+)?papers|by\s+me)\b", re.I)
# Words that ask about content: a question with one is a filtered retrieval, not a lookup.
_CONTENT = re.compile(r"\b(?:say|says|said|about|describe|explain|discuss|propose|use|handle|compare)\b", re.I)


@dataclass(frozen=True)
class MetadataAnswer:
    """An answer from metadata: `text` with inline citations `[n]`, `references` page 1 of each
    cited paper numbered from 1, `status` a `chat.extractive.Status` value."""

    text: str
    references: list[Reference]
    status: str


def _ref(paper: Paper) -> PaperRef:
    cited = paper.cited
    return PaperRef(
        paper_id=paper.pk,
        title=paper.display_title,
        first_author=cited.first_author,
        year=cited.year,
        abstract=paper.abstract[:1500],
    )


def _summary(paper: Paper) -> str:
    """ "Title. Authors. Venue, Year." as the cited passage shows it."""
    cited = paper.cited
    parts = [paper.display_title, cited.authors_text, ", ".join(p for p in (cited.venue, str(cited.year or "")) if p)]
    return ". ".join(part for part in parts if part) + "."


def _answer(lines: Sequence[tuple[str, Sequence[Paper]]], *, none: str = "") -> MetadataAnswer:
    """Compose the answer from (sentence, papers it cites) pairs; *none* when no sentence."""
    references: list[Reference] = []
    numbers: dict[int, int] = {}
    sentences: list[str] = []
    for sentence, papers in lines:
        marks = []
        for paper in papers:
            if paper.pk not in numbers:
                numbers[paper.pk] = len(references) + 1
                references.append(
                    Reference(
                        n=numbers[paper.pk],
                        paper_id=paper.pk,
                        title=paper.display_title,
                        page=1,
                        text=_summary(paper),
                        score=math.nan,
                    )
                )
            marks.append(f"[{numbers[paper.pk]}]")
        sentences.append(f"{sentence} {''.join(marks)}".strip())
    if not sentences:
        return MetadataAnswer(text=f"{LABEL}: {none}", references=[], status=Status.NOT_STATED)
    return MetadataAnswer(text=f"{LABEL}: " + "\n".join(sentences), references=references, status=Status.ANSWERED)


def _listing(papers: Sequence[Paper], *, what: str) -> MetadataAnswer:
    if not papers:
        return _answer([], none=f"no paper in this project is {what}.")
    head = f"{len(papers)} paper{'s' if len(papers) != 1 else ''} {'is' if len(papers) == 1 else 'are'} {what}:"
    lines = [(f"{paper.display_title} ({_year_text(paper)})", [paper]) for paper in papers]
    return _answer([(head, []), *lines])


def _year_text(paper: Paper) -> str:
    return str(paper.cited.year) if paper.cited.year else "year unknown"


def _criteria(question: str, papers: Sequence[Paper], author_names: Sequence[str]) -> tuple[MetadataFilter, str, str]:
    """The metadata filter a question states, how to say it ("from 2006") and the question without
    it ("What did the papers say about locking?"); an empty filter when it states none."""

    def without(match: re.Match[str], replacement: str = "") -> str:
        rest = f"{question[: match.start()]}{replacement}{question[match.end() :]}"
        return re.sub(r"\s+([?.!,])", r"\1", re.sub(r"\s{2,}", " ", rest)).strip()

    if (match := _MINE.search(question)) and author_names:
        return MetadataFilter(authors=tuple(author_names)), "by you", without(match, "is written")
    if match := _BEFORE.search(question):
        return MetadataFilter(year_before=int(match.group(1))), f"from before {match.group(1)}", without(match)
    if match := _AFTER.search(question):
        return MetadataFilter(year_after=int(match.group(1))), f"from after {match.group(1)}", without(match)
    if match := _IN_YEAR.search(question):
        year = match.group(1) or match.group(2)
        return MetadataFilter(year=int(year)), f"from {year}", without(match, "papers" if match.group(2) else "")
    if (match := _BY.search(question)) and not _MINE.search(question):
        name = match.group(1)
        if any(has_author(p.cited.authors, [name]) for p in papers):
            return MetadataFilter(authors=(name,)), f"by {name}", without(match)
    for match in _FROM_VENUE.finditer(question):
        venue = match.group(1)
        if any(venue.casefold() in p.cited.venue.casefold() for p in papers):
            return MetadataFilter(venue=venue), f"from {venue}", without(match)
    return MetadataFilter(), "", question


@dataclass(frozen=True)
class Scope:
    """A content question limited by metadata: the `papers` it is about (maybe none) and the
    `question` to retrieve for, without the metadata words ("2006", "by Ghemawat")."""

    papers: list[Paper]
    question: str


def answer_from_metadata(
    question: str, papers: Sequence[Paper], *, author_names: Sequence[str] = ()
) -> MetadataAnswer | None:
    """The answer to *question* from the metadata of *papers* (a project's papers, fetched with
    `papers_as_added`: as the members who added them have them), or None when it is not a
    metadata question (or one that also asks about content: see `papers_in_scope`). *author_names*
    are the asker's own ("mine"). Never reads the chunk index."""
    if _FIRST_AUTHOR.search(question) or _AUTHORS.search(question) or _AUTHORS_OF.search(question):
        named = _named(question, papers)
        if not named:
            return None
        first_only = bool(_FIRST_AUTHOR.search(question))
        lines = []
        for paper in named:
            cited = paper.cited
            if not cited.authors:
                lines.append((f"The metadata of {paper.display_title} names no authors.", [paper]))
            elif first_only:
                lines.append((f"The first author of {paper.display_title} is {cited.first_author}.", [paper]))
            else:
                lines.append((f"{paper.display_title} is by {_join(cited.authors)}.", [paper]))
        return _answer(lines)
    if _VENUE_OF.search(question) and not _CONTENT.search(question):
        named = _named(question, papers)
        if named:
            return _answer([(_venue_sentence(paper), [paper]) for paper in named])
    if _YEAR_OF.search(question) and not _CONTENT.search(question):
        named = _named(question, papers)
        if named:
            return _answer([(f"{paper.display_title} is from {_year_text(paper)}.", [paper]) for paper in named])
    if _CONTENT.search(question):
        return None
    if not _PAPERS.search(question):
        return None
    criteria, what, _ = _criteria(question, papers, author_names)
    if not criteria:
        return None
    chosen = filter_papers(papers, criteria)
    if _COUNT.search(question):
        count = len(chosen)
        head = f"{count} paper{'s' if count != 1 else ''} in this project {'is' if count == 1 else 'are'} {what}"
        return _answer([(head + (":" if chosen else "."), []), *((paper.display_title, [paper]) for paper in chosen)])
    return _listing(chosen, what=what)


def papers_in_scope(question: str, papers: Sequence[Paper], *, author_names: Sequence[str] = ()) -> Scope | None:
    """The papers a content question limits itself to by metadata ("What did the 2006 papers say
    about locking?" -> the papers from 2006; "What did I write about consensus?" -> the asker's),
    with the question to retrieve for; None when it sets no such limit."""
    if not _CONTENT.search(question):
        return None
    criteria, _, rest = _criteria(question, papers, author_names)
    if not criteria:
        return None
    return Scope(papers=filter_papers(papers, criteria), question=rest)


# "the paper", "this article": in a project of one paper, that paper.
_THE_PAPER = re.compile(r"\b(?:the|this)\s+(?:paper|article|publication)\b(?!s)", re.I)


def _named(question: str, papers: Sequence[Paper]) -> list[Paper]:
    by_id = {paper.pk: paper for paper in papers}
    named = [by_id[pid] for pid in named_papers(question, [_ref(paper) for paper in papers])]
    if not named and len(papers) == 1 and _THE_PAPER.search(question):
        return list(papers)
    return named


def _join(names: Sequence[str]) -> str:
    if len(names) <= 2:
        return " and ".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _venue_sentence(paper: Paper) -> str:
    cited = paper.cited
    if not cited.venue:
        return f"The metadata of {paper.display_title} names no venue."
    year = f" ({cited.year})" if cited.year and str(cited.year) not in cited.venue else ""
    return f"{paper.display_title} was published in {cited.venue}{year}."
