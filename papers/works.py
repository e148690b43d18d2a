"""Works: the files of a set of papers (one library, one project) that hold the same work.

A work is named by `Paper.doc_key` (`papers.metadata.doc_key`: DOI, else arXiv id, else PMID).
Files that share a key, and are not supplements, are *versions* of the work: a preprint and the
published paper, or a re-download with different bytes. One of them is the *primary*, the one
retrieval reads (so a project never quotes a work twice): the one its owner chose
(`UserPaper.chosen_primary`), else the published one (a venue or a DOI that is not a preprint
server's), else the most recently added. A *supplement* (`Paper.is_supplement`: "Supporting
Information", "Supplementary Material", "Appendix", ...) that shares the key is attached to the
work: never a version, always searched, cited as "Supplement to <title>". A key of "sha256:..."
(the file itself) or "" (not indexed yet) makes a work of one file.

Pure functions: `group_works` reads Paper rows fetched through `PaperQuerySet.named_for` or
`named_by`, which annotate the library entry's `library_added_at` and `library_chosen_primary`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from papers.models import Paper

# What a supplement calls itself, at the start of its title or of a heading line on its first page.
_WHAT = (
    r"(?:online\s+|electronic\s+|web\s+)?"
    r"(?:supporting\s+information"
    r"|supplementa(?:ry|l)\s+(?:materials?|information|data|text|methods|appendix|appendices|figures?|notes?|"
    r"tables?|files?)"
    # "Supplement" and "Appendix" alone only as a heading: "Appendix", "Appendix A", "Supplement to ...".
    r"|(?:supplement|appendix|appendices)(?=\s*$|\s*[:.\u2013\u2014-]|\s+(?:to|for)\b|\s+(?-i:[A-Z]|S?\d+)\b))"
)
_HEADING = re.compile(rf"^\s*(?P<what>{_WHAT})\b\s*(?P<rest>.*)$", re.IGNORECASE)
# "Deep Widgets: Supplementary Material", "Deep Widgets \u2014 Supporting Information".
_TRAILER = re.compile(rf"^(?P<rest>.+?)\s*(?:[:.\u2013\u2014(]|\s-)\s*(?P<what>{_WHAT})\)?\s*$", re.IGNORECASE)
# What joins the heading to the work's title: "for", "to", "of", a designator ("A", "S1"), punctuation.
_CONNECTOR = re.compile(
    r"^(?:(?-i:[A-Z]|S?\d+)\b\s*)?[:.\u2013\u2014-]?\s*(?:(?:for|to|of)\b\s*)?[:\u2013\u2014-]?\s*", re.IGNORECASE
)
# Lines at the top of page 1 that may hold the heading (a running header, the title block).
_HEAD_LINES = 5
_PREPRINT_VENUE = re.compile(
    r"\b(?:arxiv|biorxiv|medrxiv|chemrxiv|psyarxiv|techrxiv|ssrn|research\s+square|preprints?)\b", re.IGNORECASE
)
# arXiv, bioRxiv/medRxiv, SSRN, Research Square, PsyArXiv, ChemRxiv, TechRxiv, Preprints.org.
_PREPRINT_DOI = re.compile(r"^10\.(?:48550|1101|2139|21203|31234|26434|36227|20944)/")


def _work_title(rest: str) -> str:
    """The work's title in what follows a supplement heading ("for: Deep Widgets" -> "Deep Widgets")."""
    return _CONNECTOR.sub("", rest, count=1).strip(" .:;,\u2013\u2014-")


def _reads_as_title(line: str) -> bool:
    words = line.split()
    return (
        2 <= len(words) <= 30
        and not re.search(r"doi|https?:|www\.|@|\barxiv\b", line, re.IGNORECASE)
        and not line.rstrip().endswith((".", ";", ","))
    )


def read_supplement(*, title: str, first_page: str) -> str | None:
    """Whether a file is a supplement, from its *title* and the text of its *first_page*: None when
    it is not; else the title of the work it supplements, "" when it names none.

    A supplement says so at the start of its title or of one of the first lines of page 1
    ("Supporting Information", "Supplementary Materials for", "Online Appendix", "Appendix A",
    "Supplement to"), or at the end of its title ("Deep Widgets: Supplementary Material"). A
    mention further down ("see the Supplementary Material") does not count. The work's title is
    the rest of the heading line ("Supporting Information: Deep Widgets"), else what the title
    leaves once the heading is taken off, else the line after a heading that stands alone (a
    line of "for", "to" or "of" skipped), when it reads as a title.
    """
    lines = [line.strip() for line in first_page.splitlines() if line.strip()][:_HEAD_LINES]
    for index, line in enumerate(lines):
        match = _HEADING.match(line)
        if match is None or len(line.split()) > 30:
            continue
        if rest := _work_title(match["rest"]):
            return rest
        if from_title := supplement_work_title(title):
            return from_title
        following = [line for line in lines[index + 1 :] if line.casefold().strip(" :") not in ("for", "to", "of")]
        return following[0] if following and _reads_as_title(following[0]) else ""
    if _HEADING.match(title) or _TRAILER.match(title):
        return supplement_work_title(title)
    return None


def supplement_work_title(title: str) -> str:
    """*title* without the words that make it a supplement's: "Supporting Information for Deep
    Widgets" -> "Deep Widgets", "Deep Widgets \u2014 Supplementary Material" -> "Deep Widgets",
    "Supporting Information" -> ""; a title without them comes back as it is."""
    if match := _HEADING.match(title):
        return _work_title(match["rest"])
    if match := _TRAILER.match(title):
        return match["rest"].strip(" .:;,\u2013\u2014-")
    return title.strip()


def supplement_label(title: str) -> str:
    """How a supplement is named and cited: "Supplement to <the work's title>" (see
    `supplement_work_title`), "" when *title* names no work."""
    work = supplement_work_title(title)
    return f"Supplement to {work}" if work else ""


def is_work_key(key: str) -> bool:
    """Whether *key* (a `Paper.doc_key`) can be shared by other files: a DOI, arXiv id or PMID."""
    return bool(key) and not key.startswith("sha256:")


def published_rank(paper: Paper) -> tuple[bool, bool, bool]:
    """(has a venue, has a DOI, carries no arXiv id), as the viewer sees the paper (`Paper.cited`),
    venue and DOI not counting when they are a preprint server's ("arXiv", 10.48550/..., bioRxiv's
    10.1101/...): a preprint sharing the published DOI, its venue unread, still carries the arXiv
    stamp the published file lacks."""
    cited = paper.cited
    doi = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", cited.doi.strip(), flags=re.IGNORECASE)
    return (
        bool(cited.venue.strip()) and not _PREPRINT_VENUE.search(cited.venue),
        bool(doi) and not _PREPRINT_DOI.match(doi),
        not paper.arxiv_id,
    )


def _primary_rank(paper: Paper) -> tuple[bool, bool, bool, bool, float, int]:
    added: datetime | None = getattr(paper, "library_added_at", None)
    return (
        bool(getattr(paper, "library_chosen_primary", False)),
        *published_rank(paper),
        added.timestamp() if added is not None else float("-inf"),
        paper.pk,
    )


@dataclass(frozen=True)
class Work:
    """One work of a set: `primary`, the file retrieval reads; `versions`, its other files (best
    first: they would be primary next); `supplements`, attached and always searched. `key` is the
    shared `doc_key` ("" for a file standing alone); `chosen` is True when the owner chose the
    primary, False when the rule did (see the module docstring). A supplement whose work is not in
    the set is a work of its own: its `primary` is the supplement."""

    key: str
    primary: Paper
    versions: tuple[Paper, ...] = ()
    supplements: tuple[Paper, ...] = ()
    chosen: bool = False

    @property
    def files(self) -> tuple[Paper, ...]:
        return (self.primary, *self.versions, *self.supplements)

    @property
    def searched(self) -> tuple[Paper, ...]:
        """The files retrieval reads: the primary and the supplements, never another version."""
        return (self.primary, *self.supplements)


def group_works(papers: Iterable[Paper]) -> list[Work]:
    """The works of *papers*, in the order of each work's first file in *papers*. Files that
    share a work key (`is_work_key`) form one work; the primary is the best by
    (chosen by the owner, `published_rank`, added last, higher id)."""
    groups: dict[str | int, list[Paper]] = {}
    for paper in papers:
        groups.setdefault(paper.doc_key if is_work_key(paper.doc_key) else paper.pk, []).append(paper)
    works: list[Work] = []
    for key, files in groups.items():
        versions = sorted((p for p in files if not p.is_supplement), key=_primary_rank, reverse=True)
        supplements = tuple(p for p in files if p.is_supplement)
        shared = key if isinstance(key, str) else ""
        if not versions:
            works.append(Work(key=shared, primary=supplements[0], supplements=supplements[1:]))
            continue
        chosen = bool(getattr(versions[0], "library_chosen_primary", False))
        works.append(
            Work(key=shared, primary=versions[0], versions=tuple(versions[1:]), supplements=supplements, chosen=chosen)
        )
    return works


def searched_papers(papers: Iterable[Paper]) -> list[Paper]:
    """*papers* without the versions that are not their work's primary (see `group_works`), in
    their order: what retrieval over the set reads."""
    papers = list(papers)
    kept = {paper.pk for work in group_works(papers) for paper in work.searched}
    return [paper for paper in papers if paper.pk in kept]
