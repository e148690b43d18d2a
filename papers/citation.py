"""How a paper is cited to a reader: labels that tell same-titled papers apart, an author-year
in-text citation and a BibTeX entry. Pure functions over strings.

The author string is the paper's `authors` field as extraction or the user wrote it: authors
separated by commas, semicolons or "and" ("Mike Burrows", "Fay Chang, Jeffrey Dean and ..."), or
"Surname, Given; Surname, Given".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from papers.models import Paper


@dataclass(frozen=True)
class PaperLabel:
    """What a citation shows of one paper. `label` is the title, followed by "(Surname Year)" when
    another paper in the same set has the same title."""

    paper_id: int
    title: str
    first_author: str
    year: int | None
    label: str


def first_author_surname(authors: str) -> str:
    """The first author's surname: "Mike Burrows, Jeff Dean" -> "Burrows"; "Lamport, Leslie; Doe,
    Jane" -> "Lamport"; "Guy L. Steele Jr." -> "Steele"; "Zhang A." -> "Zhang" (initials and
    suffixes are not surnames); "" -> ""."""
    authors = authors.strip()
    if not authors:
        return ""
    if ";" in authors:
        first = authors.split(";", 1)[0].strip()
        if "," in first:
            return first.split(",", 1)[0].strip()
    else:
        first = re.split(r",|\band\b|&", authors, maxsplit=1)[0].strip()
    words = [
        w
        for w in first.split()
        if not re.fullmatch(r"(?:Jr|Sr|II|III|IV)\.?", w) and len(w.strip(".,")) > 1 and not w.endswith(".")
    ]
    return words[-1].strip(".,") if words else ""


def _title_key(title: str) -> str:
    return re.sub(r"\W+", " ", unicodedata.normalize("NFKC", title).casefold()).strip()


def paper_labels(papers: Iterable[tuple[int, str, str, int | None]]) -> dict[int, PaperLabel]:
    """Labels for *papers* (`(paper_id, title, authors, year)`), keyed by paper id. Papers sharing a
    title (case, punctuation and spacing ignored) are labelled "Title (Surname Year)"; should that
    still collide, the paper id is added ("Title (Surname Year, #7)")."""
    rows = [(pid, title, first_author_surname(authors), year) for pid, title, authors, year in papers]
    by_title: dict[str, list[int]] = {}
    for pid, title, _, _ in rows:
        by_title.setdefault(_title_key(title), []).append(pid)
    labels: dict[int, PaperLabel] = {}
    for pid, title, author, year in rows:
        label = title
        if len(by_title[_title_key(title)]) > 1:
            who = " ".join(part for part in (author, str(year) if year else "") if part) or f"#{pid}"
            label = f"{title} ({who})"
        labels[pid] = PaperLabel(paper_id=pid, title=title, first_author=author, year=year, label=label)
    seen: dict[str, int] = {}
    for pid in labels:
        seen[labels[pid].label] = seen.get(labels[pid].label, 0) + 1
    for pid, paper in labels.items():
        if seen[paper.label] > 1 and paper.label != paper.title:
            labels[pid] = PaperLabel(pid, paper.title, paper.first_author, paper.year, f"{paper.label[:-1]}, #{pid})")
    return labels


def author_year_citation(
    *, first_author: str, year: int | None, page: int | str | None = None, title: str = "", supplement: bool = False
) -> str:
    """The in-text citation "(Burrows 2006, p. 4)"; of a *supplement*, "(Burrows 2006, supplement,
    p. 4)". *page* is the page as printed where known ("379"), else the PDF's page. No author: the
    title stands in; no year: "n.d." (APA's "no date"); no page: the page part is left out."""
    who = first_author or title or "Anonymous"
    text = f"{who} {year if year else 'n.d.'}"
    if supplement:
        text += ", supplement"
    if page:
        text += f", p. {page}"
    return f"({text})"


def _bibtex_value(text: str) -> str:
    # Braces must balance inside a BibTeX value; a stray one is dropped rather than escaped.
    text = " ".join(text.split())
    depth = 0
    out = []
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                continue
            depth -= 1
        out.append(ch)
    return "".join(out) + "}" * depth


def _authors_list(authors: str) -> list[str]:
    if ";" in authors:
        return [a.strip() for a in authors.split(";") if a.strip()]
    return [a.strip() for a in re.split(r",|\band\b|&", authors) if a.strip()]


def bibtex_entry(
    *,
    title: str,
    authors: str,
    year: int | None,
    doi: str = "",
    paper_id: int | None = None,
    venue: str = "",
    pages: str = "",
    author_list: list[str] | None = None,
) -> str:
    """A BibTeX entry: `@inproceedings` (venue as `booktitle`) for a paper in proceedings,
    `@article` (venue as `journal`) for one in a journal (`csl_type` tells them apart), `@misc`
    without a venue. The key is surname + year + first title word, ASCII lower case
    ("burrows2006chubby"); authors are joined with " and " as BibTeX expects; *pages* become
    `pages` (an en dash as BibTeX's "--"). *author_list*, when given, is
    taken as the authors in order ("Burrows, M." stays one name) instead of splitting *authors*."""
    surname = first_author_surname(authors)
    words = [w for w in re.findall(r"[A-Za-z]+", unicodedata.normalize("NFKD", title)) if len(w) > 3]
    key_parts = [surname, str(year or ""), words[0] if words else ""]
    key = re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKD", "".join(key_parts)).casefold())
    key = key or f"paper{paper_id or ''}"
    fields = [("title", f"{{{_bibtex_value(title)}}}")]
    names = author_list if author_list is not None else _authors_list(authors)
    if names:
        fields.append(("author", _bibtex_value(" and ".join(names))))
    if year:
        fields.append(("year", str(year)))
    if venue:
        fields.append(("howpublished", _bibtex_value(venue)))
    if pages:
        fields.append(("pages", _bibtex_value(re.sub(r"\s*[\u2013-]+\s*", "--", pages))))
    if doi:
        fields.append(("doi", _bibtex_value(doi)))
    kind = "misc"
    if venue:
        # A paper in proceedings is an @inproceedings in its booktitle, one in a journal an @article.
        kind = "inproceedings" if csl_type(venue) == "paper-conference" else "article"
        fields = [
            (("booktitle" if kind == "inproceedings" else "journal") if n == "howpublished" else n, v)
            for n, v in fields
        ]
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{kind}{{{key},\n{body}\n}}"


def paper_bibtex(paper: Paper) -> str:
    """*paper*'s `bibtex_entry` from the metadata its `cited` view gives (the PDF's, with the
    corrections of the library entry it was read through): title, authors in order, year, venue,
    pages, DOI."""
    cited = paper.cited
    return bibtex_entry(
        title=paper.display_title,
        authors="; ".join(cited.authors),
        author_list=cited.authors,
        year=cited.year,
        doi=cited.doi,
        paper_id=paper.pk,
        venue=cited.venue,
        pages=paper.pages,
    )


# Venues that name a journal ("ACM Transactions on ...") win over ones that name a meeting
# ("Proceedings of ...", "OSDI 2006", "NeurIPS"), since journal names also hold acronyms.
_JOURNAL_VENUE = re.compile(r"journal|transactions|letters|review|magazine|bulletin", re.IGNORECASE)
_CONFERENCE_VENUE = re.compile(
    r"(?i:proc\.|proceedings|conference|symposium|workshop|meeting|congress)|\b[A-Z][A-Za-z]*[A-Z]{2,}\b"
)


def csl_type(venue: str) -> str:
    """The CSL item type for a paper published in *venue*: "paper-conference" for proceedings,
    conferences, symposia, workshops and acronym venues ("OSDI 2006") unless the name says journal,
    transactions, letters, review, magazine or bulletin; else "article-journal"
    (CSL 1.0.2 item types, https://docs.citationstyles.org/en/stable/specification.html#appendix-iii-types)."""
    if _JOURNAL_VENUE.search(venue) or not _CONFERENCE_VENUE.search(venue):
        return "article-journal"
    return "paper-conference"


def csl_name(author: str) -> dict[str, str]:
    """A CSL name object: "Leslie Lamport" -> {"family": "Lamport", "given": "Leslie"}; "Lamport,
    Leslie" likewise; a single word -> {"family": word}; "Guy L. Steele Jr." keeps "Jr." as `suffix`."""
    author = " ".join(author.split())
    if "," in author:
        family, given = (part.strip() for part in author.split(",", 1))
        return {"family": family, "given": given} if given else {"family": family}
    words = author.split()
    suffix = words.pop() if len(words) > 2 and re.fullmatch(r"(?:Jr|Sr|II|III|IV)\.?", words[-1]) else ""
    name = {"family": words[-1], "given": " ".join(words[:-1])} if len(words) > 1 else {"family": author}
    if not name.get("given"):
        name.pop("given", None)
    if suffix:
        name["suffix"] = suffix
    return name


def csl_item(
    *, item_id: str, title: str, authors: list[str], year: int | None, venue: str = "", doi: str = "", pages: str = ""
) -> dict[str, object]:
    """One CSL-JSON item (https://github.com/citation-style-language/schema, csl-data.json): `id`,
    `type` (see `csl_type`), `title`, `author` as name objects, `issued` as `{"date-parts": [[year]]}`,
    `container-title`, `DOI` and `page`; empty fields are left out."""
    item: dict[str, object] = {"id": item_id, "type": csl_type(venue), "title": title}
    if authors:
        item["author"] = [csl_name(author) for author in authors]
    if year:
        item["issued"] = {"date-parts": [[year]]}
    if venue:
        item["container-title"] = venue
    if doi:
        item["DOI"] = doi
    if pages:
        item["page"] = pages.replace("\u2013", "-")
    return item


def bibtex_file(entries: Iterable[str]) -> str:
    """*entries* (from `bibtex_entry`) as one .bib file; a key used before gets "b", "c", ... appended
    ("burrows2006chubby", "burrows2006chubbyb") so every key is unique, as BibTeX requires."""
    seen: set[str] = set()
    out = []
    for entry in entries:
        head, rest = entry.split(",", 1)
        kind, key = head.split("{", 1)
        unique, letter = key, ord("b")
        while unique in seen:
            unique, letter = f"{key}{chr(letter)}", letter + 1
        seen.add(unique)
        out.append(f"{kind}{{{unique},{rest}")
    return "\n\n".join(out) + "\n" if out else ""
