"""Questions about papers' metadata (who, when, where, how many), answered from the database.

"Who is the first author of the Raft paper?", "Which papers were published before 2005?", "Which
venue published Dynamo?", "How many papers here are by Ghemawat?", "List the papers from OSDI",
"Which papers are from 2006?", "Which papers did I write?": the answer comes from the metadata the
asker sees (`Paper.cited`: the PDF's, with the project owner's corrections), cites page 1 of each
paper it names (where the metadata is printed) and says it is "from paper metadata". The chunk
index is never searched for these: ranking passages would answer a lookup with a guess.

Two kinds are answered from a paper's own text instead, without a chat model: where its authors
work (`answer_affiliations`: the affiliation lines of its page 1, labelled "From page 1 of the
paper"), and who wrote a paper the question describes rather than names (`described_paper`: the
caller finds the paper by retrieval).

A question that filters by metadata and then asks about content ("What did the 2006 papers say
about locking?", "What did I write about consensus?") is not answered here: `papers_in_scope`
narrows the papers, and retrieval runs over those.

Without a chat model these are the patterns of the common forms; anything else is left to
retrieval (`answer_from_metadata` returns None). With a chat model, a question of these forms
(`is_metadata_question`, whether or not a pattern could answer it) goes to the model with one tool,
`lookup_metadata` (`answer_with_lookup`): the model looks papers up by first author, author, year
(exact, before, after), venue or text, and writes the answer from the results, citing each paper it
names by the page-1 reference the lookup gave it; the answer is labelled "From paper metadata".
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.template.defaultfilters import pluralize

from annotagent import llm
from chat.extractive import Status
from chat.prompts import Turn, build_metadata_messages
from chat.question import PaperRef, cut_mentions, named_papers
from indexing.metadata import AFFILIATION_WORDS
from indexing.retrieval import Reference
from papers.metadata import MetadataFilter, filter_papers, has_author, parse_year, venue_matches
from papers.models import Paper

LABEL = "From paper metadata"
# Affiliations are read from page 1's text: the metadata records no affiliation.
AFFILIATION_LABEL = "From page 1 of the paper"

_YEAR = r"((?:19|20)\d\d)"
_NAME = r"([A-Z][\w'\u2019.-]*(?:\s+(?:van|von|de|der|da|del|[A-Z][\w'\u2019.-]*))*)"
_PAPERS = re.compile(r"\b(?:papers?|articles?|works|publications?)\b", re.I)
_FIRST_AUTHOR = re.compile(
    r"\b(?:who\s+(?:is|was)\s+the\s+)?(first|lead|main)\s+author(?:\s+(?:of|on)\b|\s*\?*\s*$)", re.I
)
# "Who wrote X?", "Who are the authors of X?", "Who is the author of X?" (the authors, however many).
_AUTHORS = re.compile(
    r"\bwho\s+(?:wrote|authored|(?:(?:are|were)\s+the\s+authors|(?:is|was)\s+the\s+author)(?:\s+of\b|\s*\?*\s*$))",
    re.I,
)
_AUTHORS_OF = re.compile(r"\b(?:list|name|what\s+are)\s+the\s+authors\s+of\b", re.I)
_VENUE_OF = re.compile(
    r"\b(?:(?:which|what)\s+(?:venue|conference|journal|proceedings)\b|where\s+(?:was|is)\b.*\bpublished\b)", re.I
)
_YEAR_OF = re.compile(
    r"\b(?:when\s+(?:was|is)|(?:in\s+)?(?:what|which)\s+year\s+(?:was|is))\b.*\b(?:published|written|out)\b", re.I
)
# What "When was X written?" asks the date of, and the words that name no work but the paper itself.
_YEAR_SUBJECT = re.compile(
    r"\bwhen\s+(?:was|is)\s+(?P<subject>.+?)\s+(?:first\s+|originally\s+|finally\s+)?(?:published|written|out)\b",
    re.I,
)
_THE_PAPER_WORDS = frozenset("the a an this that it its their paper article work study publication".split())
_COUNT = re.compile(r"\bhow\s+many\s+(?:papers|articles|works)\b", re.I)
# "by Ghemawat" filters by author; "by Smith et al." cites one paper, which question analysis names.
# "Which paper did Burrows write?" and "Which papers has Lamport written?" too.
_BY = re.compile(
    rf"\b(?:by|from\s+author|authored\s+by|written\s+by)\s+{_NAME}\b(?!\s+et\s+al\b)"
    rf"|\b(?:did|does|do|has|have)\s+{_NAME}\s+(?:write|written|author|authored|publish|published)\b"
)
_BEFORE = re.compile(rf"\b(?:before|earlier\s+than|prior\s+to)\s+{_YEAR}\b", re.I)
_AFTER = re.compile(rf"\b(?:after|later\s+than|since)\s+{_YEAR}\b", re.I)
# Papers "from 2006", "of 2006", "2006 papers", "published in 2006", "papers in 2006"; not an event's
# year ("How many citations did the papers receive in 2023?" asks about their content).
_IN_YEAR = re.compile(
    r"\b(?:from|of)\s+(?P<year>(?:19|20)\d\d)\b"
    r"|\b(?P<noun>papers?|articles?|works|publications?|published|written|appeared|out)\s+in\s+"
    r"(?P<in_year>(?:19|20)\d\d)\b"
    r"|\b(?P<adjective_year>(?:19|20)\d\d)\s+papers\b",
    re.I,
)
# "from OSDI", "from the Association for Computational Linguistics": capitalised words, joined by the
# small words of a name.
_FROM_VENUE = re.compile(
    r"\b(?:from|at|in|published\s+(?:at|in)|appeared\s+(?:at|in))\s+(?:the\s+)?"
    r"([A-Z][\w-]+(?:\s+(?:(?:for|of|on|and|in|the)\s+)*[A-Z][\w-]+)*)"
)
_MINE = re.compile(r"\b(?:did\s+I\s+(?:write|author)|I\s+(?:wrote|authored)|my\s+(?:own\s+)?papers|by\s+me)\b", re.I)
# A question about the project's papers as a whole, with no filter and no content: "How many papers
# are in this project?", "Which papers are here?", "List the papers", "What papers does this project have?".
_HERE = r"(?:(?:in|of)\s+(?:this|the|my)\s+(?:project|workspace)|(?:in\s+)?here)"
_WHOLE_PROJECT = re.compile(
    rf"^\s*(?:(?:how\s+many|which|what)\s+(?:papers|articles|works|publications)"
    rf"(?:\s+(?:are|is)(?:\s+there)?(?:\s+{_HERE})?|\s+{_HERE}"
    rf"|\s+(?:does|do)\s+(?:this|the|my)\s+(?:project|workspace)\s+(?:have|hold|contain))?"
    rf"|(?:list|show)\s+(?:me\s+)?(?:all\s+)?(?:the\s+)?(?:papers|articles)(?:\s+{_HERE})?"
    rf"|what(?:'s|\s+is)\s+{_HERE})\s*[?.!]?\s*$",
    re.I,
)
# Words that ask about content: a question with one is a filtered retrieval, not a lookup.
_CONTENT = re.compile(r"\b(?:say|says|said|about|describe|explain|discuss|propose|use|handle|compare)\b", re.I)


@dataclass(frozen=True)
class MetadataAnswer:
    """An answer from metadata: `text` with inline citations `[n]`, `references` page 1 of each
    cited paper numbered from 1, `status` a `chat.extractive.Status` value; `by_model` when a chat
    model wrote it from lookups (its sentences are then checked against the references' records)."""

    text: str
    references: list[Reference]
    status: str
    by_model: bool = False


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


def _answer(
    lines: Sequence[tuple[str, Sequence[Paper]]], *, none: str = "", known: Sequence[bool] = ()
) -> MetadataAnswer:
    """Compose the answer from (sentence, papers it cites) pairs; *none* when no sentence. *known*
    (one flag per line, default all True) says which lines give the value asked for: none of them
    makes the answer not stated ("The metadata of X names no venue."), some partly answered."""
    references: list[Reference] = []
    numbers: dict[int, int] = {}
    sentences: list[str] = []
    for sentence, papers in lines:
        marks = []
        for paper in papers:
            if paper.pk not in numbers:
                numbers[paper.pk] = len(references) + 1
                references.append(_page_one(paper, numbers[paper.pk], _summary(paper)))
            marks.append(f"[{numbers[paper.pk]}]")
        sentences.append(f"{sentence} {''.join(marks)}".strip())
    if not sentences:
        return MetadataAnswer(text=f"{LABEL}: {none}", references=[], status=Status.NOT_STATED)
    status = Status.ANSWERED
    if known and not any(known):
        status = Status.NOT_STATED
    elif known and not all(known):
        status = Status.PARTLY_ANSWERED
    return MetadataAnswer(text=f"{LABEL}: " + "\n".join(sentences), references=references, status=status)


def _page_one(paper: Paper, n: int, text: str) -> Reference:
    """Reference *n*: page 1 of *paper*, where its metadata is printed, quoting *text*."""
    return Reference(n=n, paper_id=paper.pk, title=paper.display_title, page=1, text=text, score=math.nan)


def _listing(papers: Sequence[Paper], *, what: str) -> MetadataAnswer:
    if not papers:
        return _answer([], none=f"no paper in this project is {what}.")
    head = f"{_papers(len(papers))} {'is' if len(papers) == 1 else 'are'} {what}:"
    return _answer([(head, []), *((_listed(paper), [paper]) for paper in papers)])


def _papers(count: int) -> str:
    """ "1 paper", "3 papers"."""
    return f"{count} paper{pluralize(count)}"


def _listed(paper: Paper) -> str:
    return f"{paper.display_title} ({_year_text(paper)})"


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
        year = match["year"] or match["in_year"] or match["adjective_year"]
        kept = "papers" if match["adjective_year"] else match["noun"] or ""
        return MetadataFilter(year=int(year)), f"from {year}", without(match, kept)
    if (match := _BY.search(question)) and not _MINE.search(question):
        name = match.group(1) or match.group(2)
        if any(has_author(p.cited.authors, [name]) for p in papers):
            return MetadataFilter(authors=(name,)), f"by {name}", without(match)
    for match in _FROM_VENUE.finditer(question):
        if any(venue_matches(match.group(1), p.cited.venue) for p in papers):
            return MetadataFilter(venue=match.group(1)), f"from {match.group(1)}", without(match)
    return MetadataFilter(), "", question


@dataclass(frozen=True)
class Scope:
    """A content question limited by metadata: the `papers` it is about (maybe none) and the
    `question` to retrieve for, without the metadata words ("2006", "by Ghemawat")."""

    papers: list[Paper]
    question: str


# "Where do the ZooKeeper authors work?", "Which university are the Raft authors from?", "What
# are the affiliations of the GFS authors?": where a paper's authors are, printed on its page 1.
_AFFILIATION = re.compile(
    r"\baffiliat\w*"
    r"|\bwhere\s+(?:do|did|does)\s+(?:the\s+)?(?:[\w!'\u2019-]+\s+){0,6}?authors?\b[^?]*?\bwork\b"
    r"|\bwhere\s+(?:are|were|is|was)\s+(?:the\s+)?(?:[\w!'\u2019-]+\s+){0,6}?authors?\b[^?]*?\bfrom\b"
    r"|\b(?:which|what)\s+(?:company|companies|institutions?|universit(?:y|ies)|organi[sz]ations?|labs?|"
    r"employers?)\b[^?]*?\bauthors?\b"
    r"|\bwho\s+employs?\b[^?]*?\bauthors?\b",
    re.I,
)
# The marks that tie authors to affiliations: Greek letters, daggers, asterisks, superscripts.
_AFFILIATION_MARKS = re.compile(r"[\u0370-\u03ff\u2020\u2021\u2217*\u00a7\u00b6\u00b9\u00b2\u00b3\u2070-\u209f]+")
# Small words an affiliation's name may hold in lower case ("University of Washington").
_NAME_JOINERS = frozenset("of for and & at the de da di du la le von van in on".split())


def affiliation_lines(front_matter: str, title: str) -> list[str]:
    """The lines of a paper's *front_matter* (`indexing.fulltext.front_matter`) that name where its
    authors are: after its *title*, lines in title case that hold an affiliation word ("Stanford
    University", "Google, Inc.") or a company's mark ("Yahoo! Grid"), or are one capitalised word
    ("Google*"), without e-mail addresses, each once. Lines of names and dates are not. Reading stops at the first
    line of prose (front matter without an abstract heading runs into the text)."""
    title_words = set(re.sub(r"\W+", " ", title).casefold().split())
    lines: list[str] = []
    in_title = True
    for raw in front_matter.splitlines():
        # Without e-mail addresses and affiliation marks (a Greek letter before "Allen Institute", daggers).
        unmarked = _AFFILIATION_MARKS.sub(" ", raw)
        line = " ".join(word for word in unmarked.split() if "@" not in word).strip(" ,&")
        words = re.findall(r"[^\W\d_][\w'\u2019!.-]*", line)
        if not words:
            continue
        if in_title and set(re.sub(r"\W+", " ", line).casefold().split()) <= title_words:
            continue  # the title, or a line of it
        in_title = False
        capitalised = sum(word[0].isupper() or word.casefold() in _NAME_JOINERS for word in words)
        if capitalised < 0.8 * len(words):
            if len(words) >= 6:
                break  # prose: the front matter is over
            continue
        folded = {re.sub(r"\W", "", word).casefold() for word in words}
        marked = bool(folded & AFFILIATION_WORDS) or "!" in line or re.search(r"\.com\b", line)
        if (marked or (len(words) == 1 and not re.search(r"\d", line))) and line not in lines:
            lines.append(line)
    return lines


def answer_affiliations(
    question: str,
    papers: Sequence[Paper],
    *,
    front_matter: Callable[[Paper], str],
    previous: Sequence[int] = (),
) -> MetadataAnswer | None:
    """The answer to an affiliation question ("Where do the ZooKeeper authors work?") from the
    front matter of the papers it names (`_named`; *previous* as for `answer_from_metadata`): each
    paper's affiliation lines (`affiliation_lines`) quoted, citing its page 1; "not printed" for a
    paper whose page 1 shows none. None when *question* asks no such thing, names no paper, or no
    named paper's page 1 can be read yet (not indexed).
    *front_matter* reads a paper's page 1 (it reads the chunk index, as the quotes are its text)."""
    if not _AFFILIATION.search(question):
        return None
    named = _named(question, papers, previous)
    if not named:
        return None
    sentences, references = [], []
    readable = [(paper, text) for paper in named if (text := front_matter(paper).strip())]
    if not readable:
        return None  # not indexed yet: retrieval says so
    answered = False
    for n, (paper, text) in enumerate(readable, start=1):
        printed = affiliation_lines(text, paper.display_title)
        references.append(_page_one(paper, n, text))
        if printed:
            answered = True
            quoted = "; ".join(f"\u201c{line}\u201d" for line in printed)
            sentences.append(f"Page 1 of {paper.display_title} gives its authors' affiliations as {quoted}. [{n}]")
        else:
            sentences.append(f"Page 1 of {paper.display_title} prints no affiliation for its authors. [{n}]")
    return MetadataAnswer(
        text=f"{AFFILIATION_LABEL}: " + "\n".join(sentences),
        references=references,
        status=Status.ANSWERED if answered else Status.NOT_STATED,
    )


# "Who wrote the paper about the Yahoo! coordination service?": a paper described, not named.
_DESCRIBED_PAPER = re.compile(
    r"\b(?:the|that|this)\s+(?:paper|article|publication|work|study)\s+(?:about|on|describing|that\s+"
    r"(?:describes|introduces|presents|proposes))\s+(?P<topic>[^?]{3,})",
    re.I,
)


def described_paper(question: str, papers: Sequence[Paper]) -> str | None:
    """What a question about a paper's authors, venue or year says of the paper it means, when it
    describes the paper instead of naming it ("Who wrote the paper about the Yahoo! coordination
    service?" -> "the Yahoo! coordination service"); None otherwise. The caller finds the paper by
    retrieval and passes it as `answer_from_metadata`'s *previous*."""
    asks = (_FIRST_AUTHOR, _AUTHORS, _AUTHORS_OF, _VENUE_OF, _YEAR_OF)
    if not any(pattern.search(question) for pattern in asks):
        return None
    described = _DESCRIBED_PAPER.search(question)
    if described is None or named_papers(question, [_ref(paper) for paper in papers]):
        return None
    return described["topic"].strip()


def _year_of_another_work(question: str, papers: Sequence[Paper]) -> bool:
    """Whether "When was X written?" asks about a work that is not one of *papers*: X says more than
    a paper's name ("When was Lamport's Part-time Parliament first written?", where "Lamport's"
    names Paxos Made Simple), so the paper's year is no answer; the passages may give it."""
    match = _YEAR_SUBJECT.search(question)
    if match is None:
        return False
    rest = cut_mentions(match["subject"], [_ref(paper) for paper in papers])
    return any(word.casefold() not in _THE_PAPER_WORDS for word in re.findall(r"[\w-]+", rest))


def answer_from_metadata(
    question: str, papers: Sequence[Paper], *, author_names: Sequence[str] = (), previous: Sequence[int] = ()
) -> MetadataAnswer | None:
    """The answer to *question* from the metadata of *papers* (a project's papers, fetched with
    `papers_as_added`: as the members who added them have them), or None when it is not a
    metadata question (or one that also asks about content: see `papers_in_scope`). *author_names*
    are the asker's own ("mine"); *previous* the ids of the papers the conversation's last answer
    cited, which "it" and "the paper" mean when the question names none (`_named`). Never reads
    the chunk index."""
    if _FIRST_AUTHOR.search(question) or _AUTHORS.search(question) or _AUTHORS_OF.search(question):
        named = _named(question, papers, previous)
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
        return _answer(lines, known=[bool(paper.cited.authors) for paper in named])
    if _VENUE_OF.search(question) and not _CONTENT.search(question):
        named = _named(question, papers, previous)
        if named:
            lines = [(_venue_sentence(paper), [paper]) for paper in named]
            return _answer(lines, known=[bool(paper.cited.venue) for paper in named])
    if _YEAR_OF.search(question) and not _CONTENT.search(question) and not _year_of_another_work(question, papers):
        named = _named(question, papers, previous)
        if named:
            lines = [(f"{paper.display_title} is from {_year_text(paper)}.", [paper]) for paper in named]
            return _answer(lines, known=[bool(paper.cited.year) for paper in named])
    if _WHOLE_PROJECT.match(question):
        count = len(papers)
        head = f"This project has {_papers(count)}"
        return _answer([(head + (":" if papers else "."), []), *((_listed(paper), [paper]) for paper in papers)])
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
        head = f"{_papers(count)} in this project {'is' if count == 1 else 'are'} {what}"
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


# Words that point back at the paper(s) being talked about: "When was it published?", "Who wrote
# the paper?", "What year were they published?", and a question that ends at "author(s)" ("Who is
# the first author?").
_POINTS_BACK = re.compile(
    r"\b(?:it|its|they|them|their|(?:the|this|that|these|those)\s+(?:paper|article|publication)s?)\b"
    r"|\bauthors?\s*\?*\s*$",
    re.I,
)


def _named(question: str, papers: Sequence[Paper], previous: Sequence[int] = ()) -> list[Paper]:
    """The papers *question* names (`named_papers`); when it names none but points back at one
    (`_POINTS_BACK`), the project's only paper, else the papers of *previous* (ids, the last
    answer's) that are in *papers*; else none."""
    by_id = {paper.pk: paper for paper in papers}
    named = [by_id[pid] for pid in named_papers(question, [_ref(paper) for paper in papers])]
    if named or not _POINTS_BACK.search(question):
        return named
    if len(papers) == 1:
        return list(papers)
    return [by_id[pid] for pid in previous if pid in by_id]


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


def is_metadata_question(question: str) -> bool:
    """Whether *question* asks about metadata in one of the forms `answer_from_metadata` knows (who
    wrote or first-authored a paper, when or where it was published, how many or which papers the
    project holds, or are from a year, by an author or the asker, or from a venue), whether or not a pattern can answer
    it. A question that also asks about content is not one (see `papers_in_scope`)."""
    if _FIRST_AUTHOR.search(question) or _AUTHORS.search(question) or _AUTHORS_OF.search(question):
        return True
    if _WHOLE_PROJECT.match(question):
        return True
    if _CONTENT.search(question):
        return False
    if _VENUE_OF.search(question) or _YEAR_OF.search(question):
        return True
    criteria = (_MINE, _BEFORE, _AFTER, _IN_YEAR, _BY, _FROM_VENUE)
    return bool(_PAPERS.search(question)) and any(pattern.search(question) for pattern in criteria)


# --- the lookup tool (with a chat model) ------------------------------------------------------------

LOOKUP_TOOL_NAME = "lookup_metadata"
# Lookups a model may make for one question; its last call is then offered no tool, so it answers.
MAX_LOOKUPS = 3
# Papers one lookup lists at most (a project holds PROJECT_MAX_PAPERS, 10 by default).
MAX_LISTED = 50

_TEXT_FILTERS = ("first_author", "author", "venue", "text")
_YEAR_FILTERS = ("year", "year_before", "year_after")

LOOKUP_METADATA_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": LOOKUP_TOOL_NAME,
        "description": (
            "List the papers of this project whose metadata matches every filter given (no filter: "
            "all papers), each with the number to cite it by, its title, authors in printed order, "
            "year and venue. Names match in their variants (initials, accents, order)."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "first_author": {"type": "string", "description": "The first author's name or surname."},
                "author": {"type": "string", "description": "Any author's name or surname."},
                "year": {"type": "integer", "description": "Published in this year."},
                "year_before": {"type": "integer", "description": "Published before this year."},
                "year_after": {"type": "integer", "description": "Published after this year."},
                "venue": {"type": "string", "description": "Text in the venue (OSDI, SOSP, a journal)."},
                "text": {"type": "string", "description": "Text in the title, authors or venue."},
            },
            "additionalProperties": False,
        },
    },
}


class LookupArgumentsError(ValueError):
    """The model's arguments to lookup_metadata are not usable; the message tells it why."""


def lookup_criteria(arguments: str) -> MetadataFilter:
    """The MetadataFilter of a lookup_metadata call from the model's JSON *arguments* ("" or "{}":
    no filter). Years may be integers or numeric strings. Raises LookupArgumentsError for text that
    is not a JSON object, an unknown filter, or a value of the wrong type."""
    try:
        values = json.loads(arguments or "{}")
    except ValueError as exc:
        raise LookupArgumentsError(f"The arguments are not JSON: {exc}.") from exc
    if not isinstance(values, dict):
        raise LookupArgumentsError("The arguments must be a JSON object.")
    unknown = sorted(set(values) - {*_TEXT_FILTERS, *_YEAR_FILTERS})
    if unknown:
        raise LookupArgumentsError(f"Unknown filters: {', '.join(unknown)}.")
    fields: dict[str, Any] = {}
    for name in _TEXT_FILTERS:
        value = values.get(name)
        if value is not None and not isinstance(value, str):
            raise LookupArgumentsError(f"{name} must be a string.")
        fields[name] = (value or "").strip()
    for name in _YEAR_FILTERS:
        value = values.get(name)
        try:
            if isinstance(value, bool) or not isinstance(value, int | str | None):
                raise ValueError(value)
            fields[name] = parse_year(value)
        except ValueError:
            raise LookupArgumentsError(f"{name} must be a year such as 2006, not {value!r}.") from None
    author = fields.pop("author")
    return MetadataFilter(**fields, authors=(author,) if author else ())


def metadata_record(paper: Paper) -> str:
    """What a model-written metadata answer cites for *paper* (the reference's text, against which
    its sentences are checked): "Title. Authors: A (first author), B. Year: 2006. Venue: OSDI 2006."."""
    cited = paper.cited
    parts = [paper.display_title]
    if cited.authors:
        parts.append(f"Authors: {cited.authors[0]} (first author){''.join(', ' + a for a in cited.authors[1:])}")
    parts.append(f"Year: {cited.year or 'unknown'}")
    if cited.venue:
        parts.append(f"Venue: {cited.venue}")
    return ". ".join(parts) + "."


class MetadataLookup:
    """The lookup_metadata tool over one question's papers (a project's, as `answer_from_metadata`
    takes them). Each paper a lookup lists gets a page-1 reference, numbered from 1 in the order
    the lookups first list them (`references`); `lookups` counts the calls answered."""

    def __init__(self, papers: Sequence[Paper]) -> None:
        self.papers = list(papers)
        self.references: list[Reference] = []
        self._numbers: dict[int, int] = {}
        self.lookups = 0

    def run(self, arguments: str) -> str:
        """The tool result (JSON text) for the model's *arguments*: `{"count", "papers": [{"n",
        "title", "authors", "year", "venue"}], "more"}` (at most MAX_LISTED papers; `more` counts
        the rest), or `{"error": ...}` for arguments it cannot use."""
        try:
            criteria = lookup_criteria(arguments)
        except LookupArgumentsError as exc:
            return json.dumps({"error": str(exc)})
        self.lookups += 1
        found = filter_papers(self.papers, criteria)
        listed = []
        for paper in found[:MAX_LISTED]:
            if paper.pk not in self._numbers:
                self._numbers[paper.pk] = len(self.references) + 1
                self.references.append(_page_one(paper, self._numbers[paper.pk], metadata_record(paper)))
            cited = paper.cited
            listed.append(
                {
                    "n": self._numbers[paper.pk],
                    "title": paper.display_title,
                    "authors": cited.authors,
                    "year": cited.year,
                    "venue": cited.venue,
                }
            )
        return json.dumps({"count": len(found), "papers": listed, "more": len(found) - len(listed)}, ensure_ascii=False)


def answer_with_lookup(
    question: str,
    papers: Sequence[Paper],
    *,
    model: str,
    history: Sequence[Turn] = (),
    author_names: Sequence[str] = (),
) -> MetadataAnswer | None:
    """The chat model's answer to the metadata *question* about *papers*, written from the
    lookup_metadata tool's results: up to MAX_LOOKUPS completions offering the tool, each tool call
    answered, then the model's text, labelled "From paper metadata" on a line of its own, with the
    references the lookups gave (status answered, or not stated when no lookup listed a paper).
    None when the model answered without looking anything up: it did not take the question for a
    metadata question, and retrieval should answer it. Raises ChatModelError."""
    lookup = MetadataLookup(papers)
    messages: list[dict[str, Any]] = list(
        build_metadata_messages(question=question, history=history, author_names=author_names)
    )
    for call_number in range(MAX_LOOKUPS + 1):
        tools = [LOOKUP_METADATA_TOOL] if call_number < MAX_LOOKUPS else None
        reply = llm.complete_with_tools(messages, model=model, tools=tools, max_tokens=800)
        if not reply.tool_calls or tools is None:
            break
        messages.append(reply.as_message())
        for call in reply.tool_calls:
            result = (
                lookup.run(call.arguments)
                if call.name == LOOKUP_TOOL_NAME
                else json.dumps({"error": f"There is no tool {call.name!r}; use {LOOKUP_TOOL_NAME}."})
            )
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    if not lookup.lookups:
        return None
    text = reply.text.strip() or "The lookup gave no answer."
    status = Status.ANSWERED if lookup.references else Status.NOT_STATED
    return MetadataAnswer(text=f"{LABEL}:\n{text}", references=lookup.references, status=status, by_model=True)
