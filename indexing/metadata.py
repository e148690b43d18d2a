"""Bibliographic metadata of a paper from its PDF: pure functions over the parse result.

Sources, best first for each field:

- title: the largest-font block at the top of page 1 (`HeadLayout` rows, above the abstract);
  the info dictionary or XMP title only when page 1 prints no title block (info titles are often
  a file name, a template's section title or cut short).
- authors: an ACM "Reference Format" line (exact order); else the XMP `dc:creator` list or the
  info `/Author`, kept only for names whose surname page 1 prints and written as page 1 writes
  them; else the rows between the title and the abstract in the largest type after the title,
  split on commas, "and" and wide gaps, with affiliation markers (digits, *, †, Greek letters),
  e-mail addresses and affiliations ("Google Inc.", "Stanford University") left out.
- year: printed on the paper before any file date: the ACM reference line, a copyright line
  ("Copyright 2003 ACM", "© 2023"), the venue line ("SOSP'03", "To appear in OSDI 2006",
  "Proceedings ... 2020"), a date under the title ("March 25, 2011", "Draft of October 7, 2013")
  or a byline ending with its year ("Ada Brenner, 1998"),
  the arXiv stamp; only then XMP/info dates (a scan's creation date is the scan's year).
- venue, volume, pages: "In Proceedings of ...", "Proceedings of the ..., pages 4969-4983", an ACM
  conference line ("SOSP'03, October 19-22, 2003" -> "SOSP 2003"), "To appear in OSDI 2004", a
  journal line ("Journal of the ACM, Vol. 32, No. 2"); "arXiv" for an arXiv preprint with no other.
- DOI, arXiv id, PMID: patterns on page 1 and in its margins (the arXiv stamp), then XMP.

Every field may come back empty; nothing here guesses from the body's references.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

FIELDS = ("title", "authors", "year", "venue", "volume", "pages", "doi", "arxiv_id", "pmid", "abstract", "keywords")


@dataclass(frozen=True)
class PaperMetadata:
    """What a PDF says about itself. `authors` in printed order; `pages` a printed range
    ("4969-4983"); `arxiv_id` without its version ("2302.07302"); `sources` maps each non-empty
    field to where it came from ("pdf" here; "lookup" or "user" later)."""

    title: str = ""
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str = ""
    volume: str = ""
    pages: str = ""
    doi: str = ""
    arxiv_id: str = ""
    pmid: str = ""
    abstract: str = ""
    keywords: tuple[str, ...] = ()
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def authors_text(self) -> str:
        """The authors as one string, "A, B, C" (the form `papers.citation` reads)."""
        return ", ".join(self.authors)


_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;)\]])", re.IGNORECASE)
_ARXIV = re.compile(r"arXiv:\s*(\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?", re.IGNORECASE)
_ARXIV_DATE = re.compile(r"arXiv:\S+\s*\[[^\]]*\]\s*\d{1,2}\s*[A-Z][a-z]{2}\s*((?:19|20)\d\d)")
_PMID = re.compile(r"\bPMID:?\s*(\d{5,9})\b")
_YEAR = re.compile(r"\b(19[4-9]\d|20[0-4]\d)\b")
_MONTHS = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DATE_LINE = re.compile(
    rf"^\(?(?:[A-Za-z]+ of )?(?:{_MONTHS}\s+\d{{1,2}},?\s+|\d{{1,2}}\s+{_MONTHS}\s+|{_MONTHS}\s+)((?:19|20)\d\d)\)?$"
)
# A byline that ends with its year: "Ada Brenner, 1998", "J. Smith and K. Lee (2004)".
_BYLINE_YEAR = re.compile(r"^[A-Z][^\d]{2,120}?(?:,\s*|\s+\()((?:19|20)\d\d)\)?$")
_COPYRIGHT = re.compile(r"(?:Copyright|©|\(c\)|\bc)\s*(?:\(c\)\s*)?((?:19|20)\d\d)\b", re.IGNORECASE)
# "SOSP'03, October 19-22, 2003, Bolton Landing" / "SOSP 2007, Oct., 2004" / "CHI '23, April ...".
_CONFERENCE_LINE = re.compile(r"^([A-Z][A-Za-z]*[A-Z][A-Za-z]*)\s*['\u2019\u2018]?\s*(\d{4}|\d{2})\b,")
_TO_APPEAR = re.compile(
    r"To appear in (?:the )?([A-Z][A-Za-z]+(?: [A-Z][A-Za-z]+)?)\s*['\u2019]?\s*((?:19|20)\d\d|\d\d)\b"
)
_PROCEEDINGS = re.compile(
    r"(?:^|\bIn )(Proceedings of (?:the )?[^\n]+?)(?:,\s*pages\s*(\d+\s*[\u2013-]\s*\d+)|,|\.|\n|$)", re.MULTILINE
)
_SHORT_VENUE = re.compile(r"\(([A-Z][A-Za-z]*[A-Z][A-Za-z]*)\s*['\u2019\u2018]\s*(\d{2})\)")
# "Journal of X, Vol. 9", "Journal of X, vol. 9, 2023", "Journal of X, 2019".
_JOURNAL = re.compile(
    r"((?:Journal of|ACM Transactions on|IEEE Transactions on|Communications of the)[^,\n]{3,80}),?\s*"
    r"(?:[Vv]ol(?:ume|\.)?\s*(\d+)|(?=(?:19|20)\d\d\b))",
)
_ACM_REFERENCE = re.compile(
    r"ACM Reference Format:\s*(.+?)\.\s*((?:19|20)\d\d)\.\s*(.+?)\.\s*In\s+(.+?)(?=\s*\(|,\s*[A-Z][a-z]+ \d|\.)",
    re.DOTALL,
)
_ABSTRACT = re.compile(
    r"\babstract\b[\s.:—-]*(.{80,2500}?)(?:\n\s*(?:1\.?|I\.?)\s+introduction\b|\n\s*introduction\b|"
    r"\n\s*(?:keywords|categories and subject descriptors|ccs concepts|index terms|journal of|proceedings of|"
    r"copyright|permission to make)\b|\Z)",
    re.IGNORECASE | re.DOTALL,
)
_KEYWORDS = re.compile(r"^(?:Keywords|KEYWORDS|Index Terms|Key words)\s*[:.—-]?\s*(.{3,300}?)$", re.MULTILINE)
_ABSTRACT_ROW = re.compile(r"^\s*(?:abstract|a b s t r a c t)\b", re.IGNORECASE)
_BODY_START = re.compile(r"^\s*(?:1\.?|I\.)?\s*introduction\b", re.IGNORECASE)
# Affiliation markers printed beside names: digits, symbols, Greek letters, superscript letters.
_MARKERS = re.compile(r"[\d*†‡§¶‖#\u2217⋆✉\u0370-\u03ff\u2070-\u209f]+")
_NAME_SEPARATORS = re.compile(r"\s*(?:,\s*and\s+|,|;|\s+and\s+|\s*&\s*)\s*")
_AFFILIATION_WORDS = {
    "university", "universität", "université", "universidad", "institute", "institut", "inc", "corp",
    "corporation", "laboratory", "laboratories", "lab", "labs", "research", "department", "dept",
    "school", "college", "center", "centre", "faculty", "google", "microsoft", "amazon", "yahoo",
    "ibm", "intel", "usa", "abstract", "draft", "technologies", "foundation", "group", "ltd", "gmbh",
    "systems", "computer", "science", "engineering", "hospital", "ai", "company", "uk", "proceedings",
}  # fmt: skip
# The words of `_AFFILIATION_WORDS` that name where people work, for affiliation lines.
AFFILIATION_WORDS = frozenset(_AFFILIATION_WORDS - {"abstract", "draft", "proceedings", "usa", "uk"})
_PARTICLES = {"van", "von", "der", "den", "de", "da", "del", "della", "di", "du", "la", "le", "bin", "ibn", "y", "dos"}
_JUNK_TITLES = {"administrator", "untitled", "paper.dvi", "microsoft word", "system model"}
# A title line that ends like this goes on on the next line (the no-layout fallback).
_CONTINUES = re.compile(r"(?:\b(?:and|of|for|the|a|an|in|on|with|to|via|from)|[,:\u2013-])$", re.IGNORECASE)


_PLAIN_PUNCTUATION = str.maketrans("\u2019\u2018“”\u2013—", "''\"\"--")


def fold(text: str) -> str:
    """*text* for comparison: NFKC, typographic quotes and dashes made plain, case folded,
    whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text)
    text = text.translate(_PLAIN_PUNCTUATION)
    return re.sub(r"\s+", " ", text).strip().casefold()


def _ascii_fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", fold(text)) if not unicodedata.combining(c))


def surname(name: str) -> str:
    """The surname of a name as written: "Robbert van Renesse" -> "Renesse"; "Lamport, Leslie" ->
    "Lamport"; "" for no name. Folded (see `fold`) and without diacritics."""
    name = name.strip()
    if "," in name:
        return _ascii_fold(name.split(",", 1)[0].split()[-1]) if name.split(",", 1)[0].split() else ""
    words = [w for w in name.split() if not re.fullmatch(r"(?:Jr|Sr|II|III|IV)\.?", w)]
    return _ascii_fold(words[-1].strip(".,")) if words else ""


def _good_meta(value: str) -> bool:
    value = value.strip()
    return len(value) > 3 and not any(junk in value.lower() for junk in _JUNK_TITLES) and not value.endswith(".dvi")


def _name_case(name: str) -> str:
    """ "LUCY LU WANG" -> "Lucy Lu Wang"; mixed-case names are kept as printed."""
    if name.upper() != name:
        return name
    return " ".join(w if len(w.rstrip(".")) == 1 else w.capitalize() for w in name.split())


def is_name(text: str, *, words_min: int = 2) -> bool:
    """Whether *text* reads as one person's name: 2-5 words (*words_min* may lower it), capitalised
    but for particles ("van", "de"), no digits, no e-mail, no affiliation word ("University")."""
    words = text.split()
    if not words_min <= len(words) <= 5 or "@" in text or any(ch.isdigit() for ch in text):
        return False
    if any(re.sub(r"\W", "", w).casefold() in _AFFILIATION_WORDS for w in words):
        return False
    for index, word in enumerate(words):
        if word.casefold() in _PARTICLES and 0 < index < len(words) - 1:
            continue
        if not re.fullmatch(r"[^\W\d_][\w'\u2019.-]*", word) or not word[0].isupper():
            return False
    return True


def split_names(text: str) -> list[str]:
    """The names in an author string or segment ("A, B, and C", "A and B", "A ; B"), markers
    and the trailing comma of "TAL AUGUST," removed, ALL-CAPS names title-cased; pieces that are
    not names are kept out (see `is_name`)."""
    text = _MARKERS.sub(" ", text)
    pieces = [re.sub(r"\s+", " ", piece).strip(" ,;") for piece in _NAME_SEPARATORS.split(text)]
    return [_name_case(piece) for piece in pieces if piece]


def _block_names(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Names from the author rows, in reading order; a name broken across two rows ("... Avinash"
    / "Lakshman, ...") is joined."""
    names: list[str] = []
    dangling = ""
    for row in rows:
        found_in_row: list[str] = []
        for segment in row["segments"]:
            pieces = split_names(segment)
            if dangling and pieces and is_name(f"{dangling} {pieces[0]}"):
                found_in_row.append(f"{dangling} {pieces[0]}")
                pieces = pieces[1:]
                dangling = ""
            for index, piece in enumerate(pieces):
                if is_name(piece):
                    found_in_row.append(piece)
                elif index == len(pieces) - 1 and is_name(piece, words_min=1) and not segment.rstrip().endswith(","):
                    dangling = piece
        if not found_in_row and names and not dangling:
            break  # the affiliations begin
        names.extend(found_in_row)
    return names


def body_size(rows: Sequence[dict[str, Any]]) -> float:
    """The glyph size most of page 1's text is set in (points; 0 without rows)."""
    weight: dict[float, int] = {}
    for row in rows:
        weight[row["size"]] = weight.get(row["size"], 0) + sum(len(s) for s in row["segments"])
    return max(weight, key=lambda size: weight[size]) if weight else 0.0


def _title_rows(rows: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The rows of the title block (the largest type above the abstract) and the index of the
    first row after it; ([], 0) when there is none."""
    end = next(
        (
            i
            for i, row in enumerate(rows)
            if _ABSTRACT_ROW.match(row["segments"][0]) or _BODY_START.match(" ".join(row["segments"]))
        ),
        min(len(rows), 30),
    )
    head = [row for row in rows[:end] if len(re.sub(r"\W", "", " ".join(row["segments"]))) >= 3]
    if not head:
        return [], 0
    size = max(row["size"] for row in head)
    if size <= body_size(rows) + 0.5:
        return [], 0  # page 1 sets nothing larger than its text: no title block to read
    start = next(i for i, row in enumerate(rows) if row in head and row["size"] >= size - 0.3)
    block = [rows[start]]
    for row in rows[start + 1 : end]:
        if abs(row["size"] - size) > 0.3 or row["top"] - block[-1]["top"] > 2.6 * size:
            break
        block.append(row)
    return block, start + len(block)


def _join_rows(rows: Iterable[dict[str, Any]]) -> str:
    text = ""
    for row in rows:
        line = " ".join(row["segments"]).strip()
        if text.endswith("-") and line[:1].islower():
            text = text[:-1] + line
        else:
            text = f"{text} {line}".strip()
    return text


def title_from_layout(rows: Sequence[dict[str, Any]]) -> str:
    """The title block's text, "" when page 1 has none that reads as a title (one short word such
    as "Page", or a sentence). A trailing page number ("THE SIEGE OF VICKSBURG. 49") is dropped."""
    block, _ = _title_rows(rows)
    title = re.sub(r"[.\s]+\d{1,4}$", "", _join_rows(block)).strip()
    if len(title.split()) < 2 and len(title) < 12:
        return ""
    if re.search(r"[.!?]\s+[a-z]", title) or len(title) > 400:
        return ""
    return title


def authors_from_layout(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The names printed between the title block and the abstract (see the module docstring)."""
    _, after = _title_rows(rows)
    block: list[dict[str, Any]] = []
    for row in rows[after:]:
        text = " ".join(row["segments"])
        if _ABSTRACT_ROW.match(text) or _BODY_START.match(text) or max(len(s) for s in row["segments"]) > 90:
            break
        block.append(row)
    sizes = [row["size"] for row in block if any(is_name(n) for s in row["segments"] for n in split_names(s))]
    if not sizes:
        return []
    size = max(sizes)
    return _block_names([row for row in block if row["size"] >= size - 0.6])


def _verified_names(value: str, page_text: str) -> list[str]:
    """Names of an XMP/info author string that page 1 prints (by surname): "Administrator" and
    "Stanford University" are left out."""
    printed = _ascii_fold(page_text)
    return [name for name in split_names(value) if is_name(name) and surname(name) in printed]


def _acm_reference(page: str) -> re.Match[str] | None:
    return _ACM_REFERENCE.search(page)


def choose_authors(*, layout: list[str], meta: list[str], acm: list[str]) -> list[str]:
    """The author list from the three readings: ACM's reference line when present; else the
    metadata list (order and completeness are the author's), each name written as page 1 writes it
    when the layout has the same surname; else the layout's names."""
    if acm:
        return acm
    if meta and len(meta) >= len(layout):
        by_surname = {surname(name): name for name in layout}
        return [by_surname.get(surname(name), name) for name in meta]
    return layout


def _first_page_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _two_digit_year(digits: str) -> int:
    value = int(digits)
    if len(digits) == 4:
        return value
    return 2000 + value if value < 50 else 1900 + value


def find_venue(page: str, *, acm: re.Match[str] | None) -> tuple[str, str, str, int | None]:
    """(venue, volume, pages, year printed with the venue) from page 1's text; "" and None where
    it says nothing. Conference lines become "ACRONYM YEAR" ("SOSP 2003")."""
    if acm is not None:
        venue = re.sub(r"\s+", " ", acm.group(4)).strip()
        tail = page[acm.end() : acm.end() + 200]
        short = _SHORT_VENUE.search(tail)
        year = int(acm.group(2))
        return (f"{short.group(1)} {_two_digit_year(short.group(2))}" if short else venue), "", "", year
    for line in _first_page_lines(page):
        conference = _CONFERENCE_LINE.match(line)
        if conference and len(conference.group(1)) <= 12:
            year = _two_digit_year(conference.group(2))
            return f"{conference.group(1)} {year}", "", "", year
    if appear := _TO_APPEAR.search(page):
        year = _two_digit_year(appear.group(2))
        return f"{appear.group(1)} {year}", "", "", year
    if proceedings := _PROCEEDINGS.search(page):
        venue = re.sub(r"\s+", " ", proceedings.group(1)).strip()
        rest = page[proceedings.start() : proceedings.start() + 400]
        years = _YEAR.findall(rest)
        pages = re.sub(r"\s+", "", proceedings.group(2) or "")
        return venue, "", pages, int(years[0]) if years else None
    if journal := _JOURNAL.search(page):
        rest = page[journal.start() : journal.start() + 200]
        years = _YEAR.findall(rest)
        return journal.group(1).strip(), journal.group(2) or "", "", int(years[0]) if years else None
    return "", "", "", None


def find_year(page: str, *, head_rows: Sequence[dict[str, Any]], venue_year: int | None, margin: str) -> int | None:
    """The year printed on page 1 (see the module docstring), None when it prints none."""
    copyright_years = [int(m.group(1)) for m in _COPYRIGHT.finditer(page)]
    if copyright_years:
        return copyright_years[0]
    if venue_year:
        return venue_year
    _, after = _title_rows(head_rows)
    for row in head_rows[after : after + 12]:
        for segment in row["segments"]:
            if match := _DATE_LINE.match(segment.strip()) or _BYLINE_YEAR.match(segment.strip()):
                return int(match.group(1))
    if match := _ARXIV_DATE.search(margin):
        return int(match.group(1))
    return None


def file_year(info: dict[str, str], xmp: dict[str, str]) -> int | None:
    """The year of the file's own date (XMP `dc:date`, else the info /CreationDate), None without."""
    for value in (xmp.get("date", ""), info.get("CreationDate", "")):
        if match := re.match(r"(?:D:)?((?:19|20)\d\d)", value.strip()):
            return int(match.group(1))
    return None


def _looks_like_title(line: str) -> bool:
    """A first line that reads like a title: a few words, not a sentence (no sentence end inside or
    at the end of it)."""
    if re.search(r"[.!?]\s+[A-Z]", line):
        return False
    return 2 <= len(line.split()) <= 30 and not line.rstrip().endswith((".", ";", ","))


def _fallback_title_authors(lines: list[str], info: dict[str, str]) -> tuple[str, str]:
    """Title and author line from plain text (no layout): the info title when page 1 prints it,
    else the first line (continued while it ends mid-phrase) when it reads like a title."""
    info_title = info.get("Title", "") if _good_meta(info.get("Title", "")) else ""
    folded_head = fold(" ".join(lines)[:1000])
    author_line = 1
    if info_title and fold(info_title) in folded_head:
        title = info_title
        while author_line < len(lines) and len(" ".join(lines[:author_line])) < len(title) - 2:
            author_line += 1
    elif lines and _looks_like_title(lines[0]):
        title = lines[0]
        while author_line < min(len(lines), 3) and _CONTINUES.search(title):
            title = f"{title} {lines[author_line]}"
            author_line += 1
    else:
        title = info_title or (lines[0] if lines else "")
    return title, lines[author_line] if len(lines) > author_line else ""


# A footnote marker after a name and its comma: "We introduce S2ORC,1 a large corpus".
_FOOTNOTE_AFTER_COMMA = re.compile(r"(?<=[^\W\d_]),\d{1,2}(?=\s+[a-z])")


def clean_abstract(text: str) -> str:
    """An abstract as page 1 prints it, made readable: line-break hyphens joined as the index joins
    them (`indexing.chunking.dehyphenate`: "implemen-\ntation" -> "implementation", but
    "automatically-\ndetected" keeps its hyphen) and footnote markers after a name's comma dropped
    ("S2ORC,1 a large corpus" -> "S2ORC, a large corpus")."""
    from indexing.chunking import dehyphenate  # the tokenizer's vocabulary, loaded only when needed

    return _FOOTNOTE_AFTER_COMMA.sub(",", dehyphenate(text)).strip()


def extract_metadata(
    *,
    pages: Sequence[str],
    info: dict[str, str],
    xmp: dict[str, str] | None = None,
    head_rows: Sequence[dict[str, Any]] = (),
    margin: str = "",
) -> PaperMetadata:
    """The PaperMetadata of a parsed PDF: *pages* its page texts, *info* its info dictionary,
    *xmp* its XMP fields (`indexing.pdfparse._xmp`), *head_rows* and *margin* page 1's layout
    (`indexing.pdfparse.HeadLayout`). Pure; every field may be empty."""
    xmp = xmp or {}
    first = pages[0] if pages else ""
    if len(first) < 200 and len(pages) > 1:
        first = f"{first}\n{pages[1]}"
    lines = _first_page_lines(first)
    stamp = f"{margin}\n{first}"

    meta_title = next((t for t in (xmp.get("title", "").split("; ")[0], info.get("Title", "")) if _good_meta(t)), "")
    title = title_from_layout(head_rows)
    author_line = ""
    if not title:
        title, author_line = _fallback_title_authors(lines, info)
        if not title and meta_title:
            title = meta_title
    elif meta_title and fold(meta_title) == fold(title):
        title = meta_title

    acm = _acm_reference(first)
    acm_names = [n for n in split_names(acm.group(1)) if is_name(n)] if acm else []
    meta_names = _verified_names(xmp.get("creator", ""), first) or _verified_names(info.get("Author", ""), first)
    layout_names = authors_from_layout(head_rows)
    if not layout_names and author_line:
        layout_names = [n for n in split_names(author_line) if is_name(n)]
    authors = choose_authors(layout=layout_names, meta=meta_names, acm=acm_names)

    # Running footers ("To appear in OSDI 2006") are stripped from the page text; the rows keep them.
    rows_text = "\n".join(" ".join(row["segments"]) for row in head_rows)
    venue, volume, page_range, venue_year = find_venue(first, acm=acm)
    if not venue:
        venue, volume, page_range, venue_year = find_venue(rows_text, acm=None)
    arxiv = _ARXIV.search(margin) or _ARXIV.search(first[:600])
    if not venue and arxiv:
        venue = "arXiv"
    year = find_year(first, head_rows=head_rows, venue_year=venue_year, margin=margin) or file_year(info, xmp)

    doi_match = _DOI.search(stamp)
    doi = doi_match.group(1) if doi_match else xmp.get("doi", "")
    pmid = _PMID.search(first)
    abstract_match = _ABSTRACT.search(first)
    abstract = clean_abstract(abstract_match.group(1)) if abstract_match else ""
    keywords_match = _KEYWORDS.search(first)
    keyword_text = xmp.get("subject", "") if ";" in xmp.get("subject", "") else ""
    keyword_text = keyword_text or (keywords_match.group(1) if keywords_match else "")
    keywords = tuple(k.strip(" .") for k in re.split(r"[;,·]", keyword_text) if k.strip(" ."))

    found = PaperMetadata(
        title=re.sub(r"\s+", " ", title).strip()[:500],
        authors=tuple(authors),
        year=year,
        venue=venue[:300],
        volume=volume,
        pages=page_range,
        doi=doi.rstrip(".")[:255],
        arxiv_id=arxiv.group(1) if arxiv else "",
        pmid=pmid.group(1) if pmid else "",
        abstract=re.sub(r"\s+", " ", abstract).strip(),
        keywords=keywords[:20],
    )
    sources = {name: "pdf" for name in FIELDS if getattr(found, name)}
    return PaperMetadata(**{**{name: getattr(found, name) for name in FIELDS}, "sources": sources})
