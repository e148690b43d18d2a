"""PDF text extraction under resource limits, and metadata from the extracted text.

pdfminer (under pdfplumber) has no resource caps: a 1 MB PDF can inflate to gigabytes of RAM and a
few kilobytes can take seconds a page. So parsing runs in a child process (`indexing.pdfparse`) with
an address-space limit of `PDF_PARSE_MEMORY_MB` and a wall-clock limit of
`PDF_PARSE_TIMEOUT_SECONDS`; a paper that exceeds either fails alone with that reason.
"""

from __future__ import annotations

import json
import re
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from annotagent.errors import AnnotagentError, ServiceUnavailableError

# A page with fewer characters than this counts as having no text layer.
MIN_TEXT_CHARS_PER_PAGE = 20


class PdfError(AnnotagentError):
    """The PDF could not be turned into text."""

    code = "pdf_unreadable"


class PdfEncryptedError(PdfError):
    """The PDF is encrypted and needs a password to open."""

    code = "pdf_encrypted"


class PdfNoTextError(PdfError):
    """The PDF has no text layer (scanned or image-only); it needs OCR before it can be indexed."""

    code = "pdf_no_text"


class PdfInterruptedError(ServiceUnavailableError):
    """The parser was stopped from outside (a shutdown), not by the PDF: worth another try."""

    code = "pdf_interrupted"


class PdfResourceError(PdfError):
    """Parsing the PDF took more time or memory than allowed."""

    code = "pdf_too_complex"


@dataclass(frozen=True)
class PaperText:
    """The text of a paper: `pages[i]` is the normalised text of physical page i + 1."""

    pages: list[str]
    metadata: dict[str, str] = field(default_factory=dict)


# What running out of address space looks like in the child: Python's MemoryError, or the dynamic
# loader failing to map a library.
_OUT_OF_MEMORY = ("MemoryError", "failed to map segment", "Cannot allocate memory")
_STOP_SIGNALS = {-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP}


def _limit_memory() -> None:  # runs in the child, between fork and exec
    limit = settings.PDF_PARSE_MEMORY_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def extract_text(path: Path | str) -> PaperText:
    """Extract the per-page text of the PDF at *path* in a resource-limited child process.

    Raises PdfEncryptedError, PdfNoTextError (no page has text), PdfResourceError (timeout or
    memory limit) or PdfError (corrupt, truncated, not a PDF, a page over `PDF_MAX_PAGE_CHARS`).
    """
    base_dir = Path(__file__).resolve().parent.parent
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "indexing.pdfparse", str(path), str(settings.PDF_MAX_PAGE_CHARS)],
            cwd=base_dir,
            capture_output=True,
            timeout=settings.PDF_PARSE_TIMEOUT_SECONDS,
            preexec_fn=_limit_memory,
            # Its own session: a Ctrl-C or TERM to the worker's process group is the worker's to
            # handle, not a reason to fail the paper.
            start_new_session=True,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise PdfResourceError(
            f"Reading the PDF took longer than {settings.PDF_PARSE_TIMEOUT_SECONDS} s, the limit per paper."
        ) from exc
    if completed.returncode != 0:
        stderr = completed.stderr.decode(errors="replace")
        if completed.returncode in _STOP_SIGNALS:
            raise PdfInterruptedError("Reading the PDF was interrupted; it will be read again.")
        if completed.returncode < 0 or any(sign in stderr for sign in _OUT_OF_MEMORY):
            raise PdfResourceError(
                f"Reading the PDF needed more than {settings.PDF_PARSE_MEMORY_MB} MB of memory, the limit per paper."
            )
        last_line = (stderr.strip().splitlines() or ["the parser stopped"])[-1]
        raise PdfError(f"The PDF could not be read ({last_line[:300]}).")
    result = json.loads(completed.stdout)
    if "error" in result:
        error_class = PdfEncryptedError if result["error"] == "encrypted" else PdfError
        raise error_class(result["message"])
    pages = result["pages"]
    if not pages:
        raise PdfError("The PDF has no pages.")
    if not any(len(page) >= MIN_TEXT_CHARS_PER_PAGE for page in pages):
        raise PdfNoTextError(
            "The PDF has no text layer (it looks scanned or image-only); run OCR on it and upload it again."
        )
    return PaperText(pages=pages, metadata=result.get("metadata", {}))


@dataclass(frozen=True)
class PaperMetadata:
    title: str = ""
    authors: str = ""
    year: int | None = None
    abstract: str = ""
    doi: str = ""


_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;])", re.IGNORECASE)
_YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)\b")
_ABSTRACT = re.compile(
    r"\babstract\b[\s.:—-]*(.{80,2500}?)(?:\n\s*(?:1\.?|I\.?)\s+introduction\b|\n\s*introduction\b|"
    r"\n\s*(?:keywords|categories and subject descriptors|ccs concepts)\b)",
    re.IGNORECASE | re.DOTALL,
)
# A title line that ends like this goes on on the next line.
_CONTINUES = re.compile(r"(?:\b(?:and|of|for|the|a|an|in|on|with|to|via|from)|[,:\u2013-])$", re.IGNORECASE)
_JUNK_TITLES = {"administrator", "untitled", "paper.dvi", "microsoft word"}


def _good_meta(value: str) -> bool:
    value = value.strip()
    return len(value) > 3 and not any(junk in value.lower() for junk in _JUNK_TITLES) and not value.endswith(".dvi")


def _looks_like_names(line: str) -> bool:
    """An author line: short, no sentence punctuation at the end, mostly capitalised words."""
    words = re.findall(r"[^\W\d_][\w'.-]*", line)
    if not 2 <= len(words) <= 30 or len(line) > 200 or line.rstrip().endswith((":", ";")):
        return False
    if line.rstrip().endswith(".") and len(words) > 8:  # a sentence, not "Mike Burrows, Google Inc."
        return False
    return sum(word[0].isupper() for word in words) >= 0.6 * len(words)


def _looks_like_title(line: str) -> bool:
    """A first line that reads like a title: a few words, not a sentence (no sentence end inside or
    at the end of it)."""
    if re.search(r"[.!?]\s+[A-Z]", line):
        return False
    return 2 <= len(line.split()) <= 30 and not line.rstrip().endswith((".", ";", ","))


def extract_metadata(text: PaperText) -> PaperMetadata:
    """Title, authors, year, abstract and DOI, from the PDF's info dictionary where it gives them and
    from the first page otherwise. Every field may come back empty."""
    info = text.metadata
    first_page = text.pages[0] if text.pages else ""
    if len(first_page) < 200 and len(text.pages) > 1:
        first_page = first_page + "\n" + text.pages[1]
    lines = [line.strip() for line in first_page.splitlines() if line.strip()]

    # The info dictionary's title when the first page prints it; else the first line (continued
    # while it ends mid-phrase) when it reads like a title; else the info title after all. Info
    # titles are often a file name or a section title ("System Model").
    info_title = info.get("Title", "") if _good_meta(info.get("Title", "")) else ""
    folded_head = re.sub(r"\s+", " ", first_page[:1000]).lower()
    printed = bool(info_title) and re.sub(r"\s+", " ", info_title).lower() in folded_head
    title, author_line = (info_title, 1) if printed else ("", 1)
    if printed:  # the author line follows the lines the printed title takes
        while author_line < len(lines) and len(" ".join(lines[:author_line])) < len(title) - 2:
            author_line += 1
    elif lines and _looks_like_title(lines[0]):
        title = lines[0]
        while author_line < min(len(lines), 3) and _CONTINUES.search(title):
            title = f"{title} {lines[author_line]}"
            author_line += 1
    else:
        title = info_title or (lines[0] if lines else "")
    authors = info.get("Author", "") if _good_meta(info.get("Author", "")) else ""
    if not authors and len(lines) > author_line and _looks_like_names(lines[author_line]):
        authors = lines[author_line]
    # "A ; B ; C" lists authors; "A, B; Affiliation" ends the list at the semicolon.
    authors = authors.replace(" ; ", ", ").split(";")[0].strip()

    head = "\n".join(text.pages[:2])
    doi_match = _DOI.search(head)
    abstract_match = _ABSTRACT.search(first_page)
    abstract = re.sub(r"-\n(?=[a-z])", "", abstract_match.group(1)) if abstract_match else ""
    abstract = re.sub(r"\s+", " ", abstract).strip()

    year = None
    created = re.match(r"(?:D:)?((?:19|20)\d\d)", info.get("CreationDate", ""))
    found = _YEAR.search(head[:3000])
    if created:
        year = int(created.group(1))
    elif found:
        year = int(found.group(1))
    return PaperMetadata(
        title=title[:500],
        authors=authors[:1000],
        year=year,
        abstract=abstract,
        doi=doi_match.group(1) if doi_match else "",
    )
