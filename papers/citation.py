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


def author_year_citation(*, first_author: str, year: int | None, page: int | str | None = None, title: str = "") -> str:
    """The in-text citation "(Burrows 2006, p. 4)". *page* is the page as printed where known
    ("379"), else the PDF's page. No author: the title stands in; no year: "n.d." (APA's "no
    date"); no page: the page part is left out."""
    who = first_author or title or "Anonymous"
    text = f"{who} {year if year else 'n.d.'}"
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


def bibtex_entry(*, title: str, authors: str, year: int | None, doi: str = "", paper_id: int | None = None) -> str:
    """A BibTeX `@misc` entry. The key is surname + year + first title word, ASCII lower case
    ("burrows2006chubby"); authors are joined with " and " as BibTeX expects."""
    surname = first_author_surname(authors)
    words = [w for w in re.findall(r"[A-Za-z]+", unicodedata.normalize("NFKD", title)) if len(w) > 3]
    key_parts = [surname, str(year or ""), words[0] if words else ""]
    key = re.sub(r"[^a-z0-9]", "", unicodedata.normalize("NFKD", "".join(key_parts)).casefold())
    key = key or f"paper{paper_id or ''}"
    fields = [("title", f"{{{_bibtex_value(title)}}}")]
    if authors.strip():
        fields.append(("author", _bibtex_value(" and ".join(_authors_list(authors)))))
    if year:
        fields.append(("year", str(year)))
    if doi:
        fields.append(("doi", _bibtex_value(doi)))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@misc{{{key},\n{body}\n}}"
