"""Reading papers by their metadata: author-name matching and filters. Pure functions over the
metadata a viewer sees (`Paper.cited`).

Name matching (`same_person`) accepts the variants a name is printed in: initials ("S. Ghemawat",
"S Ghemawat"), diacritics ("Altinbüken" = "Altinbuken"), order ("Ghemawat, Sanjay") and case; the
surname must agree and the given names must not contradict (first initials equal when both give
one).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from papers.fulltext import STOPWORDS

if TYPE_CHECKING:
    from papers.models import Paper

_SUFFIX = re.compile(r"^(?:jr|sr|ii|iii|iv)\.?$", re.IGNORECASE)
_PARTICLES = {"van", "von", "der", "den", "de", "da", "del", "della", "di", "du", "la", "le"}
_WORD = re.compile(r"[^\W_]+")


def _plain(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    # "i" (dotless i) has no decomposition; ASCII readers write it as "i".
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("\u0131", "i").replace("ø", "o")


def search_words(text: str) -> list[str]:
    """The distinct words of *text* a metadata search looks for, in order: plain lower case (no
    diacritics), split at anything but letters and digits ("Fault-Tolerant" -> fault, tolerant),
    without common English words (`papers.fulltext.STOPWORDS`) or one-letter words, which the
    full-text search leaves out too. [] when *text* has no other word ("the", "of a")."""
    words = (word for word in _WORD.findall(_plain(text)) if len(word) > 1 and word not in STOPWORDS)
    return list(dict.fromkeys(words))


@dataclass(frozen=True)
class NameParts:
    """A name as (`given`, `surname`), both plain lower case: given names as words ("s", "sanjay")."""

    given: tuple[str, ...]
    surname: str


def name_parts(name: str) -> NameParts:
    """Split *name* ("Sanjay Ghemawat", "Ghemawat, S.", "Robbert van Renesse") into NameParts."""
    plain = _plain(name)
    if "," in plain:
        last, _, first = plain.partition(",")
        given = re.findall(r"[a-z]+", first)
        return NameParts(tuple(given), " ".join(re.findall(r"[a-z'-]+", last)))
    words = [w for w in re.findall(r"[a-z][a-z'-]*", plain) if not _SUFFIX.match(w)]
    if not words:
        return NameParts((), "")
    surname_words = [words[-1]]
    index = len(words) - 2
    while index > 0 and words[index] in _PARTICLES:
        surname_words.insert(0, words[index])
        index -= 1
    return NameParts(tuple(words[: index + 1]), " ".join(surname_words))


def same_person(a: str, b: str) -> bool:
    """Whether names *a* and *b* may name the same person (see the module docstring). A bare
    surname ("Ghemawat") matches any name with that surname."""
    left, right = name_parts(a), name_parts(b)
    if not left.surname or left.surname.split()[-1] != right.surname.split()[-1]:
        return False
    if not left.given or not right.given:
        return True
    first_left, first_right = left.given[0], right.given[0]
    if len(first_left) > 1 and len(first_right) > 1:
        return first_left == first_right
    return first_left[0] == first_right[0]


def has_author(authors: Iterable[str], names: Iterable[str]) -> bool:
    """Whether any of *authors* is any of *names* (`same_person`)."""
    wanted = list(names)
    return any(same_person(name, author) for author in authors for name in wanted)


# A run of capitalised words in a venue, with the small words between them ("Association for
# Computational Linguistics"), whose initials may be its acronym ("ACL").
_VENUE_NAME = re.compile(r"[A-Z][a-z]+(?:\s+(?:(?:for|of|on|and|in|the)\s+)*[A-Z][a-z]+)+")
_ACRONYM = re.compile(r"[A-Z]{2,8}")


def venue_matches(name: str, venue: str) -> bool:
    """Whether *venue* is the venue a reader calls *name*: *name* inside it, case and accents
    aside ("osdi" in "OSDI 2006"), or, for an acronym of 2 to 8 capitals ("ACL"), the initials of
    consecutive capitalised words of one of its names ("Association for Computational Linguistics"
    in "Proceedings of the 58th Annual Meeting of the Association for Computational Linguistics")."""
    if _plain(name) in _plain(venue):
        return True
    if not _ACRONYM.fullmatch(name):
        return False
    for run in _VENUE_NAME.finditer(venue):
        initials = [word[0] for word in run.group(0).split() if word[0].isupper()]
        if name in "".join(initials):  # "Annual Meeting of the [Association ...]"
            return True
    return False


@dataclass(frozen=True)
class MetadataFilter:
    """Criteria over the metadata a viewer sees; each empty one admits everything. `year_before`
    and `year_after` are exclusive; `venue` matches as `venue_matches` says (inside the venue, or
    as its acronym); `text`
    matches when the title, authors and venue hold each of its `search_words` as a whole word (a
    text of common words only, "the", matches nothing, as in the full-text search); `authors`
    admits papers with any of the names."""

    first_author: str = ""
    authors: tuple[str, ...] = ()
    year: int | None = None
    year_before: int | None = None
    year_after: int | None = None
    venue: str = ""
    text: str = ""

    def __bool__(self) -> bool:
        return any(getattr(self, name) for name in self.__dataclass_fields__)

    def admits(self, paper: Paper) -> bool:
        cited = paper.cited
        if self.first_author and not (cited.authors and same_person(self.first_author, cited.authors[0])):
            return False
        if self.authors and not has_author(cited.authors, self.authors):
            return False
        if self.year is not None and cited.year != self.year:
            return False
        if self.year_before is not None and not (cited.year and cited.year < self.year_before):
            return False
        if self.year_after is not None and not (cited.year and cited.year > self.year_after):
            return False
        if self.venue and not venue_matches(self.venue, cited.venue):
            return False
        if self.text.strip():
            wanted = search_words(self.text)
            held = _WORD.findall(_plain(" ".join([paper.display_title, cited.authors_text, cited.venue])))
            if not wanted or not set(wanted) <= set(held):
                return False
        return True


def filter_papers(papers: Iterable[Paper], criteria: MetadataFilter) -> list[Paper]:
    """The papers of *papers* that *criteria* admits, in their order."""
    return [paper for paper in papers if criteria.admits(paper)]


def parse_year(value: str | int | None) -> int | None:
    """A year from user input ("2006", 2006), None for "" or None. Raises ValueError for anything
    else or a year outside 1000..2100."""
    if value is None or value == "":
        return None
    try:
        year = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not a year.") from None
    if not 1000 <= year <= 2100:
        raise ValueError(f"{year} is not a year.")
    return year


def author_names_of(values: Sequence[str] | str) -> list[str]:
    """Author names from a list or from one string ("A, B and C" or one name a line)."""
    if isinstance(values, str):
        separator = r"\n|;" if ("\n" in values or ";" in values) else r",|\band\b"
        values = re.split(separator, values)
    return [re.sub(r"\s+", " ", value).strip() for value in values if value.strip()]


def doc_key(*, doi: str = "", arxiv_id: str = "", pmid: str = "", sha256: str) -> str:
    """The key of the work a file holds: "doi:10.1145/3149.214121" (lower case, without a
    resolver prefix), else "arxiv:2302.07302" (without version), else "pmid:12345", else
    "sha256:<hex>" (the file itself). Two files with the same DOI, arXiv id or PMID hold one work."""
    doi = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", doi.strip(), flags=re.IGNORECASE).lower()
    if doi:
        return f"doi:{doi}"
    if arxiv_id.strip():
        return "arxiv:" + re.sub(r"v\d+$", "", arxiv_id.strip().lower())
    if pmid.strip():
        return f"pmid:{pmid.strip()}"
    return f"sha256:{sha256}"
