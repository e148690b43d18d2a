"""PDF text extraction under resource limits, and metadata from the extracted text.

pdfminer (under pdfplumber) has no resource caps: a 1 MB PDF can inflate to gigabytes of RAM and a
few kilobytes can take seconds a page. So parsing runs in a child process (`indexing.pdfparse`) with
an address-space limit of `PDF_PARSE_MEMORY_MB` and a wall-clock limit of
`PDF_PARSE_TIMEOUT_SECONDS`, plus `OCR_SECONDS_PER_PAGE` for each page it reads by OCR
(`OCR_ENGINE`); a paper that exceeds either fails alone with that reason. The same child crops the
captioned figures and tables (`indexing.figures`, `FIGURES_MAX_PER_PAPER`), under the same limits.
"""

from __future__ import annotations

import json
import os
import re
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from django.conf import settings

from annotagent.errors import AnnotagentError, ServiceUnavailableError
from indexing import metadata
from indexing.metadata import PaperMetadata
from indexing.pdfparse import MAX_UNMAPPED_SHARE, SCAN_IMAGE_COVERAGE, SCAN_MAX_CHARS, character_counts, clipped
from papers.figures import FigureImage

# A page with fewer text characters than this is `little_text` (still indexed).
MIN_TEXT_CHARS_PER_PAGE = 20
# A page whose drawn glyphs are at least MAX_UNMAPPED_SHARE unmapped (no Unicode, no glyph name) is
# garbled; one of fewer than SCAN_MAX_CHARS characters over images covering SCAN_IMAGE_COVERAGE of it
# is a scan (both in `indexing.pdfparse`, which decides in the child which pages to OCR).
# A Latin-script page of at least DICTIONARY_MIN_WORDS words of which fewer than this share are
# words of the embedding model's vocabulary is garbled (a font that maps glyphs to wrong letters).
MIN_DICTIONARY_SHARE = 0.3
DICTIONARY_MIN_WORDS = 10
# A line at the top or bottom of pages (digits aside) repeated on at least this share of the pages,
# and on at least three, is a running header or footer.
RUNNING_LINE_SHARE = 0.4
RUNNING_LINE_DEPTH = 3


class PdfError(AnnotagentError):
    """The PDF could not be turned into text."""

    code = "pdf_unreadable"


class PdfEncryptedError(PdfError):
    """The PDF is encrypted and needs a password to open."""

    code = "pdf_encrypted"


class PdfNoTextError(PdfError):
    """The PDF has no text layer (scanned or image-only); it needs OCR before it can be indexed."""

    code = "pdf_no_text"


class PdfGarbledError(PdfError):
    """The PDF's text layer cannot be read: its glyphs do not map to letters."""

    code = "pdf_garbled"


class PdfEmptyError(PdfError):
    """The PDF's pages are blank: no text and no images."""

    code = "pdf_empty"


class PdfInterruptedError(ServiceUnavailableError):
    """The parser was stopped from outside (a shutdown), not by the PDF: worth another try."""

    code = "pdf_interrupted"


class PdfResourceError(PdfError):
    """Parsing the PDF took more time or memory than allowed."""

    code = "pdf_too_complex"


class PageStatus:
    """How usable a page's text is. `ok` and `little_text` pages are indexed; `garbled` and
    `image_only` pages are not (their text is left out)."""

    OK = "ok"
    LITTLE_TEXT = "little_text"
    GARBLED = "garbled"
    IMAGE_ONLY = "image_only"
    UNUSABLE = frozenset({GARBLED, IMAGE_ONLY})


@dataclass(frozen=True)
class PageReport:
    """The extraction quality of one page, as stored with the paper (`Paper.page_report`).

    `page` is the 1-based physical page; `status` a PageStatus value; `chars` the non-blank text
    characters kept, `words` the words; `unmapped_share` the share of drawn glyphs with no Unicode
    mapping (0..1); `dictionary_share` the share of words found in the embedding model's vocabulary
    (0..1, None for non-Latin scripts or too few words); `image_coverage` the share of the page
    under images (0..1); `columns` the text columns read; `rotation` the page's /Rotate (degrees);
    `rotated_share` the share of characters not drawn upright; `script` the main script of its
    letters ("Latin", "Arabic", "Han", ...; "" without letters); `printed` the page number printed
    on the page or given by /PageLabels ("" when unknown); `ocr` whether the text was recognised
    from the page image (`indexing.ocr`) rather than read from its text layer, `ocr_confidence` the
    engine's mean line confidence then (0..1).
    """

    page: int
    status: str
    chars: int
    words: int
    unmapped_share: float
    dictionary_share: float | None
    image_coverage: float
    columns: int
    rotation: int
    rotated_share: float
    script: str
    printed: str = ""
    ocr: bool = False
    ocr_confidence: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PaperText:
    """The text of a paper: `pages[i]` is the normalised text of physical page i + 1, without its
    running headers and footers; unusable pages (`PageStatus.UNUSABLE`) are "". `reports[i]` is
    page i + 1's PageReport (empty when built by hand)."""

    pages: list[str]
    metadata: dict[str, str] = field(default_factory=dict)
    reports: list[PageReport] = field(default_factory=list)
    # Page 1's layout (`indexing.pdfparse.HeadLayout`) and the XMP fields, read for metadata.
    head: dict[str, Any] = field(default_factory=dict)
    xmp: dict[str, str] = field(default_factory=dict)
    # The captioned figures and tables, cropped (`indexing.figures`), and why cropping stopped
    # early ("" when it did not).
    figures: list[FigureImage] = field(default_factory=list)
    figure_error: str = ""
    figure_seconds: float = 0.0  # wall time the child spent finding and rendering them

    @property
    def unusable_pages(self) -> list[int]:
        return [report.page for report in self.reports if report.status in PageStatus.UNUSABLE]

    @property
    def ocr_pages(self) -> list[int]:
        """1-based pages whose text was recognised by OCR."""
        return [report.page for report in self.reports if report.ocr]

    @property
    def warning(self) -> str:
        """What a reader must know about the pages left out, or "" when every page was read:
        "pages 3-4 have no text layer ... and are not searched"."""
        parts = []
        for status, reason in _UNUSABLE_REASONS.items():
            pages = [report.page for report in self.reports if report.status == status]
            if pages:
                verb = "has" if len(pages) == 1 else "have"
                parts.append(f"{page_ranges(pages)} {verb} {reason}")
        if not parts:
            return ""
        return "; ".join(parts) + " and " + ("is" if len(self.unusable_pages) == 1 else "are") + " not searched"


_UNUSABLE_REASONS = {
    PageStatus.IMAGE_ONLY: "no text layer (only images)",
    PageStatus.GARBLED: "unreadable text (glyphs that map to no letters)",
}


def page_ranges(pages: list[int]) -> str:
    """ "page 3", "pages 3\u20134", "pages 1, 3 and 5\u20137" (en dashes) for sorted 1-based page numbers."""
    runs: list[list[int]] = []
    for page in pages:
        if runs and page == runs[-1][-1] + 1:
            runs[-1].append(page)
        else:
            runs.append([page])
    names = [str(run[0]) if len(run) == 1 else f"{run[0]}\u2013{run[-1]}" for run in runs]
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return ("page " if len(pages) == 1 else "pages ") + joined


# What running out of address space looks like in the child: Python's MemoryError, or the dynamic
# loader failing to map a library.
_OUT_OF_MEMORY = ("MemoryError", "failed to map segment", "Cannot allocate memory")
_STOP_SIGNALS = {-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP}


def _limit_memory() -> None:  # runs in the child, between fork and exec
    limit = settings.PDF_PARSE_MEMORY_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


ParseProgress = Callable[[int, int, bool], None]
"""Called after each page the parser reads with (page, pages, whether the page was OCR'd)."""


def extract_text(path: Path | str, *, progress: ParseProgress | None = None) -> PaperText:
    """Extract the per-page text of the PDF at *path* in a resource-limited child process, with a
    PageReport per page (see `read_paper`). With `OCR_ENGINE` set, pages without readable text are
    recognised by OCR in the same child; pages whose letters the parent's dictionary check finds
    wrong (`garbled` with a text layer) are recognised in a second run. *progress* follows the
    pages as they are read. The first run also crops the captioned figures and tables
    (`PaperText.figures`; none with `FIGURES_MAX_PER_PAPER` 0); a failure there only sets
    `PaperText.figure_error`.

    Raises PdfEncryptedError, PdfNoTextError (every page an image), PdfGarbledError (no page with
    readable text), PdfEmptyError (blank pages only), PdfResourceError (timeout or memory limit) or
    PdfError (corrupt, truncated, not a PDF, a page over `PDF_MAX_PAGE_CHARS`, OCR engine missing).
    """
    with tempfile.TemporaryDirectory(prefix="annotagent-figures-") as figures_dir:
        parsed = _run_parser(path, progress=progress, figures_dir=figures_dir)
        figures = read_figures(parsed, figures_dir)
    text = read_paper(parsed, allow_unusable=True)
    garbled = [r.page for r in text.reports if r.status == PageStatus.GARBLED and not r.ocr]
    if garbled and settings.OCR_ENGINE != "none":
        # OCR changes the text, not the drawings: the figures of the first run stand.
        text = read_paper(_run_parser(path, progress=progress, ocr_pages=garbled))
    else:
        _check_some_page_usable(text.reports)
    return replace(
        text,
        figures=figures,
        figure_error=str(parsed.get("figure_error") or ""),
        figure_seconds=float(parsed.get("figure_seconds") or 0.0),
    )


def read_figures(parsed: dict[str, Any], directory: str) -> list[FigureImage]:
    """The figures a parse result lists (`indexing.pdfparse`), with their PNG files read from
    *directory*. A listed file that is missing or not a plain name in *directory* is skipped."""
    figures: list[FigureImage] = []
    for entry in parsed.get("figures") or []:
        name = str(entry.get("file", ""))
        path = Path(directory) / name
        if not name or Path(name).name != name or not path.is_file():
            continue
        x0, top, x1, bottom = (float(v) for v in entry["bbox"])
        figures.append(
            FigureImage(
                page=int(entry["page"]),
                kind=str(entry["kind"]),
                label=str(entry["label"]),
                caption=str(entry["caption"]),
                bbox=(x0, top, x1, bottom),
                png=path.read_bytes(),
                width=int(entry["width"]),
                height=int(entry["height"]),
            )
        )
    return figures


def _too_slow(ocr_pages: int) -> str:
    limit = f"Reading the PDF took longer than {settings.PDF_PARSE_TIMEOUT_SECONDS} s, the limit per paper"
    if not ocr_pages:
        return limit + "."
    extra = ocr_pages * settings.OCR_SECONDS_PER_PAGE
    return f"{limit} plus {extra} s for the {ocr_pages} page{'s' if ocr_pages > 1 else ''} read by OCR."


def _parser_command(path: Path | str, ocr_pages: Sequence[int], figures_dir: str = "") -> list[str]:
    command = [sys.executable, "-m", "indexing.pdfparse", str(path), str(settings.PDF_MAX_PAGE_CHARS)]
    command += ["--ocr-engine", settings.OCR_ENGINE, "--ocr-dpi", str(settings.OCR_DPI)]
    command += ["--ocr-languages", settings.OCR_LANGUAGES]
    if ocr_pages:
        command += ["--ocr-pages", ",".join(str(page) for page in ocr_pages)]
    if figures_dir and settings.FIGURES_MAX_PER_PAPER > 0:
        command += ["--figures-dir", figures_dir, "--figures-max", str(settings.FIGURES_MAX_PER_PAPER)]
        command += ["--figures-dpi", str(settings.FIGURE_RENDER_DPI)]
        command += ["--figures-max-pixels", str(settings.FIGURE_MAX_PIXELS)]
    return command


def _run_parser(
    path: Path | str,
    *,
    progress: ParseProgress | None = None,
    ocr_pages: Sequence[int] = (),
    figures_dir: str = "",
) -> dict[str, Any]:
    """The parse result of `indexing.pdfparse` for *path*, run in a child process under the memory
    limit and a deadline that each OCR'd page moves `OCR_SECONDS_PER_PAGE` later; with
    *figures_dir*, the figures are cropped into it too, and the result gets the child's figures
    message (`figures`, `figure_error`, `figure_seconds`). The child sends the text before it
    renders figures: once the text is in, running out of time or memory costs the figures only
    (`figure_error` says so). Raises as `extract_text` does."""
    base_dir = Path(__file__).resolve().parent.parent
    deadline = time.monotonic() + settings.PDF_PARSE_TIMEOUT_SECONDS
    with tempfile.TemporaryFile() as stderr_file:
        child = subprocess.Popen(
            _parser_command(path, ocr_pages, figures_dir),
            cwd=base_dir,
            stdout=subprocess.PIPE,
            stderr=stderr_file,
            preexec_fn=_limit_memory,
            # Its own session: a Ctrl-C or TERM to the worker's process group is the worker's to
            # handle, not a reason to fail the paper.
            start_new_session=True,
        )
        assert child.stdout is not None
        result: dict[str, Any] | None = None
        figures: dict[str, Any] | None = None
        figures_cut = ""  # why the figures message never came, when the text did
        buffer = b""
        ocr_done = 0
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0 and figures_dir and result is not None and "error" not in result:
                    figures_cut = "cropping figures ran past the time limit of the paper's parse"
                    break
                if remaining <= 0:
                    raise PdfResourceError(_too_slow(ocr_done))
                ready, _, _ = select.select([child.stdout], [], [], min(remaining, 1.0))
                if not ready:
                    continue
                data = os.read(child.stdout.fileno(), 1 << 16)
                if not data:
                    break
                buffer += data
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    try:
                        message = json.loads(line)
                    except ValueError:  # not the parser's (a library printing): the exit code tells
                        continue
                    if "figures" in message and result is not None:
                        figures = message
                        continue
                    if "progress" not in message:
                        result = message
                        continue
                    step = message["progress"]
                    if step["ocr"]:
                        ocr_done += 1
                        deadline += settings.OCR_SECONDS_PER_PAGE
                    if progress is not None:
                        progress(int(step["page"]), int(step["pages"]), bool(step["ocr"]))
            if figures_cut:
                child.kill()
                child.wait()
                returncode = 0
            else:
                returncode = child.wait(timeout=max(deadline - time.monotonic(), 1.0))
        except (PdfResourceError, subprocess.TimeoutExpired) as exc:
            child.kill()
            child.wait()
            if isinstance(exc, PdfResourceError):
                raise
            raise PdfResourceError(_too_slow(ocr_done)) from exc
        except BaseException:
            child.kill()
            child.wait()
            raise
        finally:
            child.stdout.close()
        stderr_file.seek(0)
        stderr = stderr_file.read().decode(errors="replace")
    text_in = result is not None and "error" not in result
    if returncode != 0 and returncode not in _STOP_SIGNALS and figures_dir and text_in and figures is None:
        last_line = (stderr.strip().splitlines() or [f"exit status {returncode}"])[-1]
        figures_cut, returncode = f"cropping figures stopped the parser ({last_line[:300]})", 0
    if returncode != 0:
        if returncode in _STOP_SIGNALS:
            raise PdfInterruptedError("Reading the PDF was interrupted; it will be read again.")
        if returncode < 0 or any(sign in stderr for sign in _OUT_OF_MEMORY):
            raise PdfResourceError(
                f"Reading the PDF needed more than {settings.PDF_PARSE_MEMORY_MB} MB of memory, the limit per paper."
            )
        last_line = (stderr.strip().splitlines() or ["the parser stopped"])[-1]
        raise PdfError(f"The PDF could not be read ({clipped(last_line)}).")
    if result is None:
        raise PdfError("The PDF could not be read (the parser gave no result).")
    if "error" in result:
        error_class = PdfEncryptedError if result["error"] == "encrypted" else PdfError
        raise error_class(result["message"])
    if figures_dir:
        result |= figures or {"figures": [], "figure_error": figures_cut or "the parser sent no figures"}
    return result


def read_paper(parsed: dict[str, Any], *, allow_unusable: bool = False) -> PaperText:
    """The PaperText of a parse result (`indexing.pdfparse.parse`): running headers and footers
    taken out of the pages (their page numbers kept as printed numbers), every page classified, the
    text of unusable pages left out.

    Raises PdfError (no pages), PdfNoTextError, PdfGarbledError or PdfEmptyError when no page is
    usable, naming why (unless *allow_unusable*: the caller decides after trying OCR).
    """
    pages: list[str] = parsed["pages"]
    if not pages:
        raise PdfError("The PDF has no pages.")
    facts: list[dict[str, Any]] = parsed.get("facts") or [{} for _ in pages]
    pages, printed = strip_running_lines(pages, columns=[int(f.get("columns", 1)) for f in facts])
    labels = parsed.get("page_labels")
    if labels and len(labels) == len(pages) and labels != [str(n) for n in range(1, len(pages) + 1)]:
        printed = [str(label) for label in labels]
    reports = [
        page_report(number, text, page_facts, printed=label)
        for number, (text, page_facts, label) in enumerate(zip(pages, facts, printed, strict=True), start=1)
    ]
    if not allow_unusable:
        _check_some_page_usable(reports)
    kept = ["" if report.status in PageStatus.UNUSABLE else text for text, report in zip(pages, reports, strict=True)]
    return PaperText(
        pages=kept,
        metadata=parsed.get("metadata", {}),
        reports=reports,
        head=parsed.get("head") or {},
        xmp=parsed.get("xmp") or {},
    )


def _check_some_page_usable(reports: list[PageReport]) -> None:
    if any(report.status == PageStatus.OK for report in reports):
        return
    if any(report.status == PageStatus.LITTLE_TEXT and report.chars for report in reports):
        return  # a short native-text paper ("Retracted.") is indexed as it is
    image_only = [report.page for report in reports if report.status == PageStatus.IMAGE_ONLY]
    garbled = [report.page for report in reports if report.status == PageStatus.GARBLED]
    if image_only and not garbled:
        if any(report.ocr for report in reports):
            raise PdfNoTextError("The PDF has no text layer (its pages are images) and OCR found no text on them.")
        raise PdfNoTextError(
            "The PDF has no text layer (its pages are images, as in a scan); run OCR on it and upload it again."
        )
    if garbled and not image_only:
        raise PdfGarbledError(
            "The PDF's text cannot be read: its fonts do not say which letters their glyphs are "
            f"({page_ranges(garbled)}). Export or print it to PDF again, or run OCR on it."
        )
    if garbled:
        raise PdfGarbledError(
            f"No page of the PDF has readable text: {page_ranges(image_only)} only images (run OCR), "
            f"{page_ranges(garbled)} glyphs that map to no letters."
        )
    raise PdfEmptyError("The PDF's pages are blank: there is no text to index.")


_WORD = re.compile(r"[^\W\d_]{2,}")
# An OCR'd page with more than this share of characters that are neither letters nor digits read
# glyphs that draw no letters (symbols, dingbats): its text is not the page's words.
MAX_OCR_SYMBOL_SHARE = 0.4


def _symbol_share(text: str) -> float:
    visible = re.sub(r"\s", "", text)
    return sum(not char.isalnum() for char in visible) / len(visible) if visible else 0.0


_SCRIPT_NAMES = {"CJK": "Han", "HIRAGANA": "Japanese", "KATAKANA": "Japanese", "HANGUL": "Hangul"}


def main_script(text: str) -> str:
    """The script most of *text*'s letters belong to ("Latin", "Greek", "Arabic", "Hebrew",
    "Cyrillic", "Han", "Japanese", "Hangul", ...), "" without letters."""
    counts = character_counts([text])
    if not counts:
        return ""
    name = counts.most_common(1)[0][0]
    return _SCRIPT_NAMES.get(name, name.title())


def page_report(number: int, text: str, facts: dict[str, Any], *, printed: str = "") -> PageReport:
    """Measure and classify one page: *text* is its normalised text, *facts* the parser's
    `PageFacts` for it (missing keys count as zero).

    `image_only`: no text (or under SCAN_MAX_CHARS characters) over images covering the page; a page
    with no text and no image is `little_text` (blank). `garbled`: at least MAX_UNMAPPED_SHARE of
    the glyphs unmapped, or a Latin page whose words are mostly not words. `little_text`: under
    MIN_TEXT_CHARS_PER_PAGE characters. Else `ok`. A page read by OCR (`facts["ocr"]`) is
    `image_only` only when OCR found no text on it; its words are checked against the dictionary
    like any other page's, and it is `garbled` when over MAX_OCR_SYMBOL_SHARE of its characters are
    neither letters nor digits (OCR of glyphs that draw no letters reads punctuation).
    """
    from indexing.chunking import vocabulary

    chars = len(re.sub(r"\s", "", text))
    words = _WORD.findall(text)
    drawn = int(facts.get("chars", 0))
    unmapped_share = int(facts.get("unmapped_chars", 0)) / drawn if drawn else 0.0
    script = main_script(text)
    dictionary_share = None
    if script == "Latin" and len(words) >= DICTIONARY_MIN_WORDS:
        known = vocabulary()
        dictionary_share = sum(word.lower() in known for word in words) / len(words)
    image_coverage = float(facts.get("image_coverage", 0.0))
    ocr = bool(facts.get("ocr", False))
    if ocr:
        scan = chars == 0
    else:
        scan = (chars == 0 and image_coverage > 0) or (image_coverage >= SCAN_IMAGE_COVERAGE and chars < SCAN_MAX_CHARS)
    if unmapped_share >= MAX_UNMAPPED_SHARE:
        status = PageStatus.GARBLED
    elif scan:
        status = PageStatus.IMAGE_ONLY
    elif dictionary_share is not None and dictionary_share < MIN_DICTIONARY_SHARE:
        status = PageStatus.GARBLED
    elif ocr and _symbol_share(text) > MAX_OCR_SYMBOL_SHARE:
        status = PageStatus.GARBLED
    elif chars < MIN_TEXT_CHARS_PER_PAGE:
        status = PageStatus.LITTLE_TEXT
    else:
        status = PageStatus.OK
    return PageReport(
        page=number,
        status=status,
        chars=chars,
        words=len(words),
        unmapped_share=round(unmapped_share, 3),
        dictionary_share=None if dictionary_share is None else round(dictionary_share, 3),
        image_coverage=round(image_coverage, 3),
        columns=int(facts.get("columns", 1)),
        rotation=int(facts.get("rotation", 0)),
        rotated_share=float(facts.get("rotated_share", 0.0)),
        script=script,
        printed=printed,
        ocr=ocr,
        ocr_confidence=float(facts["ocr_confidence"]) if ocr and "ocr_confidence" in facts else None,
    )


def _line_key(line: str) -> str:
    return re.sub(r"\d+", "#", re.sub(r"\s+", " ", line.strip().lower()))


# A page keeps its running lines when dropping them would leave less than this share of its text.
RUNNING_LINE_MIN_KEPT = 0.2


def strip_running_lines(pages: list[str], *, columns: Sequence[int] | None = None) -> tuple[list[str], list[str]]:
    """Take running headers and footers out of *pages* and read printed page numbers from them.

    A running line is a line whose text, with every number read as "#", recurs on at least
    RUNNING_LINE_SHARE of the pages (and at least three), among the first or last
    RUNNING_LINE_DEPTH lines of a page or, on a page of two or more *columns* (per page, from the
    parse), among short lines of three to eight words anywhere (a footer read at the foot of the
    left column): "To appear in OSDI 2004",
    "Journal X · page 3 of 6", a bare "4970".
    The printed number of a page is the number in its running lines that sits at the offset from
    the physical page number most pages agree on ("4970" on page 2 -> offset 4968); pages without
    one get physical + offset (none below 1: front matter before page 1).
    A page whose running lines would take more than four fifths of its text keeps them all: text that
    repeats on every page and makes up the page is content (`RUNNING_LINE_MIN_KEPT`). Nor is a
    recurring line that a sentence wraps into or out of at most of its places (`_prose_keys`): the
    same paragraph on every page, the same sentence opening pages 1 to 3. A recurring line that holds
    whole sentences and stands alone ("Licensed for personal use only.") still reads as a running line.
    Returns (pages, printed numbers as strings, "" where unknown).
    """
    count = len(pages)
    no_numbers = [""] * count
    if count < 3:
        return pages, no_numbers
    columns = list(columns or [])
    edges = [_candidate_lines(text, columns=columns[i] if i < len(columns) else 1) for i, text in enumerate(pages)]
    seen: Counter[str] = Counter()
    for lines in edges:
        seen.update({_line_key(lines_text) for _, lines_text in lines})
    needed = max(3, RUNNING_LINE_SHARE * count)
    running = {key for key, times in seen.items() if times >= needed and key}
    if running:
        running -= _prose_keys(pages, edges)
    if not running:
        return pages, no_numbers
    stripped: list[str] = []
    numbers: list[list[int]] = []
    for text, lines in zip(pages, edges, strict=True):
        drop = {index for index, line in lines if _line_key(line) in running}
        all_lines = text.split("\n")
        kept = sum(len(line.strip()) for index, line in enumerate(all_lines) if index not in drop)
        if kept < RUNNING_LINE_MIN_KEPT * len(text.replace("\n", "").strip()):
            # Most of the page would go: its text repeats on every page (a form, a repeated notice),
            # which is the page's content, not a header or footer.
            drop = set()
        numbers.append([int(n) for index in drop for n in re.findall(r"(?<![\d.])\d{1,5}(?![\d.])", all_lines[index])])
        stripped.append("\n".join(line for index, line in enumerate(all_lines) if index not in drop))
    offsets = Counter(n - page for page, found in enumerate(numbers, start=1) for n in set(found))
    if not offsets:
        return stripped, no_numbers
    offset, support = offsets.most_common(1)[0]
    if support < max(2, count // 2):
        return stripped, no_numbers
    return stripped, [str(page + offset) if page + offset >= 1 else "" for page in range(1, count + 1)]


# A line fills its page's measure when it is at least this share of the page's long lines (the
# length at the top quartile); a sentence wraps only out of a full line.
FULL_LINE_SHARE = 0.7


def _prose_keys(pages: Sequence[str], edges: Sequence[Sequence[tuple[int, str]]]) -> set[str]:
    """The keys (`_line_key`) of the candidate running lines (*edges*, per page) of *pages* that a
    sentence wraps into or out of (`_wraps`) at half or more of their places: wrapped prose that
    recurs (the same paragraph on every page, the same sentence opening pages 1 to 3), not a running
    header or footer, which stands alone above or below the body."""
    places: Counter[str] = Counter()
    prose: Counter[str] = Counter()
    for text, candidates in zip(pages, edges, strict=True):
        lines = text.split("\n")
        lengths = sorted(len(line.strip()) for line in lines if line.strip())
        measure = lengths[-max(1, len(lengths) // 4)] if lengths else 0
        for index, line in candidates:
            key = _line_key(line)
            places[key] += 1
            prose[key] += (index > 0 and _wraps(lines[index - 1], line, measure)) or (
                index + 1 < len(lines) and _wraps(line, lines[index + 1], measure)
            )
    return {key for key, times in places.items() if prose[key] * 2 >= times}


def _wraps(line: str, following: str, measure: int) -> bool:
    """Whether a sentence runs on from *line* into the *following* line of a page whose long lines
    are *measure* characters: *line* fills the measure (FULL_LINE_SHARE) and ends no sentence, and
    *following* goes on in lower case and itself fills the measure or ends the sentence."""
    line, following = line.strip(), following.strip()
    if not line or not following or line[-1] in ".!?:" or not following[0].islower():
        return False
    full = FULL_LINE_SHARE * measure
    return len(line) >= full and (len(following) >= full or following.rstrip(")]\"'\u201d\u2019")[-1:] in ".!?;:")


def _candidate_lines(text: str, *, columns: int = 1) -> list[tuple[int, str]]:
    """(index, line) of the lines of *text* that may be running lines (see strip_running_lines):
    the page's first and last lines; on a page of *columns* >= 2 also short lines anywhere (a
    column's foot sits mid-text). On a one-column page a short line in the middle is body text,
    however often it recurs ("juvenile corals per square metre.")."""
    lines = text.split("\n")
    depth = min(RUNNING_LINE_DEPTH, len(lines) // 2)
    edges = set(range(depth)) | set(range(len(lines) - depth, len(lines)))
    return [
        (index, line)
        for index, line in enumerate(lines)
        if line.strip() and (index in edges or (columns >= 2 and 3 <= len(_WORD.findall(line)) <= 8))
    ]


def extract_metadata(text: PaperText) -> PaperMetadata:
    """Title, authors, year, venue, identifiers, abstract and keywords of *text* (see
    `indexing.metadata`); every field may come back empty."""
    return metadata.extract_metadata(
        pages=text.pages,
        info=text.metadata,
        xmp=text.xmp,
        head_rows=text.head.get("rows", []),
        margin=str(text.head.get("margin", "")),
    )
