"""PDF -> per-page text and per-page facts with pdfplumber, meant to run in a child process (see
`indexing.pdf`).

This module imports no Django: it is executed as `python -m indexing.pdfparse PATH MAX_PAGE_CHARS`
under a memory limit and a timeout, and writes one JSON object to stdout:
`{"pages": [str, ...], "facts": [PageFacts, ...], "page_labels": [str, ...] | null,
"metadata": {...}, "xmp": {...}, "head": HeadLayout}` or `{"error": code, "message": str}`.
With `--figures-dir DIR`, a second object follows the result, once figures are rendered:
`{"figures": [{"page", "kind", "label", "caption", "bbox", "file", "width", "height"}, ...],
"figure_error": str, "figure_seconds": float}`, each `file` a PNG in DIR (see `indexing.figures`),
`figure_error` why figures stopped being cropped ("" when nothing went wrong), `figure_seconds`
the wall time spent finding and rendering them.

What it does to the text, page by page:

- Glyphs without a Unicode mapping are looked up in the font itself: an embedded CFF program's
  built-in encoding names its glyphs ("fi", "quotedblleft"), and those names are mapped through the
  Adobe Glyph List. A glyph the font does not name stays unmapped: it is counted
  (`PageFacts.unmapped_chars`) and dropped from the text, never guessed.
- Characters drawn twice at (almost) the same place, "fake bold", are kept once.
- Columns are found from the page's own whitespace: a vertical empty band that splits most text
  lines (`find_gutters`), wherever it lies; full-width rows (titles, abstracts, wide figures) are
  read whole and the rows between them column by column.
- Rotated text (a landscape table on a portrait page) is read along its own baseline.
- Right-to-left runs (Arabic, Hebrew) come out in logical order (python-bidi), and form fields add
  their values ("Name: Ada").
- Everything is NFKC-normalised, so ligatures such as U+FB01 "ﬁ" read as "fi".
- With an OCR engine (`--ocr-engine`, see `indexing.ocr`), a page without readable text (an image of
  text, or glyphs that mostly map to no letters: `needs_ocr`) is rendered and recognised instead,
  and its facts say so (`PageFacts.ocr`). Pages named with `--ocr-pages` are recognised whatever
  their text layer holds (the parent's dictionary check found its letters wrong).

While it works, the child writes one progress line per page before the result,
`{"progress": {"page": n, "pages": total, "ocr": bool}}`, so the parent can report it and allow
OCR'd pages their time.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import re
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

# Word gaps are judged relative to glyph size: fixed x_tolerance splits words in kerned PDFs
# ("Distrib uted") or glues them in tight ones ("consensusalgorithm"); 0.15 of the glyph size
# reads every paper of our test corpus correctly.
X_TOLERANCE_RATIO = 0.15
MIN_WORDS_FOR_COLUMNS = 40
# A gutter splits at least this share of the text rows that reach across it, and at least
# MIN_SPLIT_ROWS rows.
GUTTER_ROW_SHARE = 0.5
MIN_SPLIT_ROWS = 5
# A column holds prose: on average at least this many words per row on each side of a gutter
# (a results table's cells hold one or two, so tables are not cut into columns).
MIN_WORDS_PER_COLUMN_ROW = 3.0
# Overprinted characters closer than this (points) are one character (pdfplumber's dedupe_chars).
DEDUPE_TOLERANCE = 1.0

# A page is unreadable (and read by OCR when an engine is set) when at least MAX_UNMAPPED_SHARE of
# its glyphs map to no letter, or when it holds no text over images, or fewer than SCAN_MAX_CHARS
# characters over images covering at least SCAN_IMAGE_COVERAGE of it (a scan with a stamp or a
# "Downloaded from" line). `indexing.pdf.page_report` classifies with the same thresholds.
MAX_UNMAPPED_SHARE = 0.5
SCAN_IMAGE_COVERAGE = 0.6
SCAN_MAX_CHARS = 200

_CID = re.compile(r"\(cid:\d+\)")
_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")


class PageFacts(TypedDict):
    """What one page holds, measured while reading it.

    `chars`: characters drawn (after fake-bold dedupe); `unmapped_chars`: of those, glyphs with no
    Unicode mapping; `image_coverage`: share of the page area under images (0..1, overlaps counted
    once per image); `columns`: text columns found (1 for one column); `rotation`: the page's
    /Rotate in degrees; `rotated_share`: share of characters not drawn upright; `form_fields`:
    form-field values added to the text.
    """

    chars: int
    unmapped_chars: int
    image_coverage: float
    columns: int
    rotation: int
    rotated_share: float
    form_fields: int
    ocr: bool
    ocr_confidence: float


def needs_ocr(text: str, facts: PageFacts) -> bool:
    """Whether a page's text layer is unreadable by the glyph and image facts alone (see
    MAX_UNMAPPED_SHARE); the dictionary check needs the vocabulary and runs in the parent."""
    drawn = facts["chars"]
    if drawn and facts["unmapped_chars"] / drawn >= MAX_UNMAPPED_SHARE:
        return True
    chars = len(re.sub(r"\s", "", text))
    coverage = facts["image_coverage"]
    return (chars == 0 and coverage > 0) or (coverage >= SCAN_IMAGE_COVERAGE and chars < SCAN_MAX_CHARS)


# A spacing accent typeset over a letter ("Fa\u00a8rber", "Me\u00b4ry", "na\u00a8\u0131ve" as TeX
# draws them) is, after NFKC, a space and a combining mark: the mark goes back on its letter, on the
# dotless i or j it stands before (TeX's \"\i is "ï"), else on the letter before it.
_LOOSE_ACCENT = re.compile(r"(?P<base>[^\W\d_]) (?P<mark>[\u0300-\u036f])(?P<dotless>[\u0131\u0237])?")
_DOTTED = {"\u0131": "i", "\u0237": "j"}


def _attach_accent(match: re.Match[str]) -> str:
    if match["dotless"]:
        return match["base"] + _DOTTED[match["dotless"]] + match["mark"]
    return match["base"] + match["mark"]


def normalise_text(text: str) -> str:
    """Drop unmapped glyph codes ("(cid:12)"), NFKC-normalise, put typeset accents back on their
    letters ("Fa¨rber" -> "Färber"), drop control characters and soft hyphens, collapse runs of
    spaces. Newlines are kept."""
    text = _CID.sub("", text)
    text = unicodedata.normalize("NFKC", text)
    if _LOOSE_ACCENT.search(text):
        text = unicodedata.normalize("NFC", _LOOSE_ACCENT.sub(_attach_accent, text))
    text = text.replace("\u00ad", "")
    text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", text)
    text = re.sub(r"[ \t\u00a0]+", " ", text)
    return re.sub(r" *\n *", "\n", text).strip()


def logical_order(text: str) -> str:
    """Lines holding right-to-left letters, which PDF text comes out of in visual (left-to-right
    drawing) order, put into logical order with the Unicode bidi algorithm (python-bidi). Run it
    before NFKC, so that a lam-alef ligature glyph expands in the right order."""
    if not _RTL.search(text):
        return text
    from bidi import get_display

    return "\n".join(get_display(line) if _RTL.search(line) else line for line in text.split("\n"))


# --- fonts: glyph names for unmapped codes -----------------------------------------------------------


def _program_encoding(font_file: bytes) -> dict[int, str]:
    """Code -> Unicode from an embedded CFF font program's built-in encoding, for the glyph names
    the Adobe Glyph List knows. Empty when the program has no such encoding (CID-keyed fonts)."""
    from fontTools.cffLib import CFFFontSet
    from pdfminer.encodingdb import name2unicode

    cff = CFFFontSet()
    cff.decompile(io.BytesIO(font_file), None)
    encoding = cff[cff.fontNames[0]].Encoding
    if not isinstance(encoding, list):  # "StandardEncoding" / "ExpertEncoding": pdfminer has them
        return {}
    mapped = {}
    for code, name in enumerate(encoding):
        if name and name != ".notdef":
            try:
                mapped[code] = name2unicode(name)
            except (KeyError, ValueError):
                continue
    return mapped


def _resource_manager() -> Any:
    """A pdfminer resource manager that completes simple fonts' encodings from their embedded
    programs. pdfminer reads the built-in encoding of embedded Type 1 programs (FontFile) but not of
    CFF ones (FontFile3), so a Ghostscript/dvips PDF without ToUnicode maps loses its "fi"/"fl"
    ligatures and quotes (bigtable.pdf and mapreduce.pdf of our test corpus)."""
    from pdfminer.pdffont import PDFSimpleFont
    from pdfminer.pdfinterp import PDFResourceManager
    from pdfminer.pdftypes import resolve1, stream_value

    class FontRepairingResourceManager(PDFResourceManager):
        def __init__(self) -> None:
            super().__init__()
            self._repaired: set[int] = set()

        def get_font(self, objid: object, spec: Mapping[str, object]) -> Any:
            font = super().get_font(objid, spec)
            if id(font) in self._repaired or not isinstance(font, PDFSimpleFont) or font.unicode_map:
                return font
            self._repaired.add(id(font))
            descriptor = resolve1(spec.get("FontDescriptor")) or {}
            program = resolve1(descriptor.get("FontFile3")) if isinstance(descriptor, dict) else None
            if program is None:
                return font
            try:
                built_in = _program_encoding(stream_value(program).get_data())
            except Exception:  # a damaged font program: keep pdfminer's reading
                return font
            # The font's /Encoding, where given, overrides the program's; else the program's is it.
            # A new dict: pdfminer shares one dict per named encoding between all its fonts.
            if "Encoding" in spec:
                font.cid2unicode = {**built_in, **font.cid2unicode}
            else:
                font.cid2unicode = {**font.cid2unicode, **built_in}
            return font

    return FontRepairingResourceManager()


# --- layout ---------------------------------------------------------------------------------------


def _rows(words: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Words grouped into text rows (vertically overlapping words), top to bottom."""
    grouped: list[list[dict[str, Any]]] = []
    for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
        if grouped and word["top"] < max(w["bottom"] for w in grouped[-1]) - 1:
            grouped[-1].append(word)
        else:
            grouped.append([word])
    return grouped


def find_gutters(rows: Sequence[Sequence[dict[str, Any]]]) -> list[tuple[float, float]]:
    """The vertical empty bands (x0, x1), in points, left to right, that split text rows into columns.

    A band is a run of x positions where, of the rows that reach across it (words on both sides or
    a word over it), at least GUTTER_ROW_SHARE have no word over it (and at least MIN_SPLIT_ROWS),
    at least as wide as half the median text height, with on average MIN_WORDS_PER_COLUMN_ROW
    words per row on each side. Found from the rows' own whitespace, so an off-centre gutter, three
    columns and full-width blocks above the columns are all found.
    """
    if not rows:
        return []
    left = int(min(w["x0"] for row in rows for w in row))
    right = int(max(w["x1"] for row in rows for w in row)) + 1
    heights = sorted(w["bottom"] - w["top"] for row in rows for w in row)
    min_width = max(3.0, 0.5 * heights[len(heights) // 2])
    width = right - left
    split = [0] * width
    reach = [0] * width
    covered = [0] * width
    for row in rows:
        spans = sorted((w["x0"], w["x1"]) for w in row)
        start, end = spans[0][0], spans[-1][1]
        for x in range(int(start) - left, min(int(end) - left + 1, width)):
            reach[x] += 1
        for x0, x1 in spans:
            for x in range(int(x0) - left, min(int(x1) - left + 1, width)):
                covered[x] += 1
        for (_, gap_start), (gap_end, _) in itertools.pairwise(spans):
            for x in range(int(gap_start) + 1 - left, min(int(gap_end) - left, width)):
                split[x] += 1
    in_band = [
        reach[x] > 0 and split[x] >= MIN_SPLIT_ROWS and split[x] >= GUTTER_ROW_SHARE * reach[x] for x in range(width)
    ]
    bands: list[tuple[float, float]] = []
    x = 0
    while x < width:
        if not in_band[x]:
            x += 1
            continue
        start = x
        while x < width and in_band[x]:
            x += 1
        if x - start >= min_width and _holds_prose(rows, (float(left + start), float(left + x))):
            bands.append(_core(covered, start, x, left))
    return bands


def _core(covered: list[int], start: int, end: int, left: int) -> tuple[float, float]:
    """The emptiest part of the band [start, end): the widest run of x positions that the fewest
    rows' words cover (plus one row of slack). The band's edges can reach into a column's indented
    lines (a reference list's labels, a hanging indent); its core cannot."""
    least = min(covered[start:end]) + 1
    best = (start, start)
    x = start
    while x < end:
        if covered[x] > least:
            x += 1
            continue
        run = x
        while x < end and covered[x] <= least:
            x += 1
        if x - run > best[1] - best[0]:
            best = (run, x)
    return float(left + best[0]), float(left + best[1])


def _holds_prose(rows: Sequence[Sequence[dict[str, Any]]], band: tuple[float, float]) -> bool:
    """Whether the rows split by *band* hold, on average, MIN_WORDS_PER_COLUMN_ROW words on each
    side of it, counting only the words up to the next gap half as wide as the band (so a reference
    list's "[5]" labels are not a column)."""
    wide = (band[1] - band[0]) / 2
    sides: list[list[int]] = [[], []]
    for row in rows:
        before = sorted((w for w in row if w["x1"] <= band[0]), key=lambda w: w["x0"])
        after = sorted((w for w in row if w["x0"] >= band[1]), key=lambda w: w["x0"])
        if not before or not after or len(before) + len(after) != len(row):
            continue
        sides[0].append(_run_length([(-w["x1"], -w["x0"]) for w in reversed(before)], wide))
        sides[1].append(_run_length([(w["x0"], w["x1"]) for w in after], wide))
    return all(side and sum(side) / len(side) >= MIN_WORDS_PER_COLUMN_ROW for side in sides)


def _run_length(spans: list[tuple[float, float]], wide: float) -> int:
    """How many of *spans* (ordered away from a gutter) follow each other with gaps under *wide*."""
    count = 1
    for (_, end), (start, _) in itertools.pairwise(spans):
        if start - end >= wide:
            break
        count += 1
    return count


def _crosses(row: Sequence[dict[str, Any]], gutters: Sequence[tuple[float, float]]) -> bool:
    """Whether a row runs across a gutter: a word straddles the gutter's middle (where the columns
    are cut), or the row's gap there is an ordinary word space (under 0.6 of the text height), as
    in a centred title. A ragged line that only reaches into the gutter does not cross it."""
    for g0, g1 in gutters:
        cut = (g0 + g1) / 2
        if any(w["x0"] < cut - 1 and w["x1"] > cut + 1 for w in row):
            return True
        before = [w for w in row if w["x1"] <= cut + 1]
        after = [w for w in row if w["x0"] >= cut - 1]
        if before and after:
            last, first = max(before, key=lambda w: w["x1"]), min(after, key=lambda w: w["x0"])
            height = max(last["bottom"] - last["top"], first["bottom"] - first["top"])
            if first["x0"] - last["x1"] < 0.6 * height:
                return True
    return False


def _holding_prose(
    rows: Sequence[Sequence[dict[str, Any]]], clear: Sequence[bool], centre: tuple[float, float]
) -> list[bool]:
    """Which *rows* to read as two columns split at the page *centre*, on a page where
    `find_gutters` found no gutter: of the runs of rows that leave the centre *clear*, those whose
    rows hold prose on both sides of the run's own empty band (`_holds_prose`). A table whose cell
    gap falls on the centre ("5  240  7", its words far apart) is no pair of columns: its rows stay
    whole."""
    flags = list(clear)
    for columnar, run in itertools.groupby(range(len(rows)), key=lambda index: clear[index]):
        indexes = list(run)
        if not columnar:
            continue
        cut = (centre[0] + centre[1]) / 2
        band_rows = [rows[index] for index in indexes]
        left = max((w["x1"] for row in band_rows for w in row if w["x1"] <= cut + 1), default=cut)
        right = min((w["x0"] for row in band_rows for w in row if w["x0"] >= cut - 1), default=cut)
        if not _holds_prose(band_rows, (min(left, cut - 1), max(right, cut + 1))):
            for index in indexes:
                flags[index] = False
    return flags


def _text_of(page: Any, **options: Any) -> str:
    return page.extract_text(x_tolerance_ratio=X_TOLERANCE_RATIO, **options) or ""


def _region_text(page: Any, top: float, bottom: float, left: float, right: float, **options: Any) -> str:
    """Text of the characters whose centre lies in the box; each character belongs to one box."""

    def inside(obj: dict[str, Any]) -> bool:
        if obj.get("object_type") != "char":
            return False
        x, y = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
        return left <= x < right and top <= y < bottom

    return _text_of(page.filter(inside), **options)


def _rotated_options(page: Any) -> tuple[dict[str, str], float]:
    """pdfplumber reading directions for the page's rotated characters, and their share of all
    characters. Text turned 90° anticlockwise reads bottom to top, its lines left to right; text
    turned clockwise reads top to bottom, its lines right to left."""
    chars = page.chars
    rotated = [c for c in chars if not c.get("upright", True)]
    if not rotated:
        return {}, 0.0
    upward = sum(1 for c in rotated if c["matrix"][1] > 0)
    options = (
        {"char_dir_rotated": "btt", "line_dir_rotated": "ltr"}
        if upward >= len(rotated) / 2
        else {"char_dir_rotated": "ttb", "line_dir_rotated": "rtl"}
    )
    return options, len(rotated) / len(chars)


def _rotated_text(page: Any) -> str:
    """The text of a page drawn mostly at 90 degrees (a landscape table on a portrait page), read
    along its baseline: every character is placed where it would be were the page turned upright,
    and the page's text is read from those places."""
    from pdfplumber.utils import extract_text

    width, height = page.width, page.height
    upright = []
    for char in page.chars:
        if char["matrix"][1] > 0:  # anticlockwise: reads bottom to top, lines go left to right
            x0, x1, top, bottom = height - char["bottom"], height - char["top"], char["x0"], char["x1"]
        else:  # clockwise: reads top to bottom, lines go right to left
            x0, x1, top, bottom = char["top"], char["bottom"], width - char["x1"], width - char["x0"]
        upright.append({**char, "x0": x0, "x1": x1, "top": top, "bottom": bottom, "doctop": top, "upright": True})
    return extract_text(upright, x_tolerance_ratio=X_TOLERANCE_RATIO) or ""


def page_text(page: Any) -> tuple[str, int]:
    """The reading-order text of one pdfplumber page (before normalisation), and its column count.

    The page is cut into horizontal bands: rows that cross a gutter are full-width (titles,
    one-column text, wide captions, page numbers); runs of rows that cross none are read column by
    column, left to right. A one-column page is one full-width band.
    """
    options, rotated_share = _rotated_options(page)
    if rotated_share > 0.5:
        return _rotated_text(page), 1
    words = page.extract_words(x_tolerance_ratio=X_TOLERANCE_RATIO, **options)
    if len(words) < MIN_WORDS_FOR_COLUMNS:
        return _text_of(page, **options), 1
    rows = _rows([w for w in words if w.get("upright", True)])
    x0, page_top, x1, page_bottom = page.bbox
    # Without an empty band, the page centre (the usual two-column gutter) is tried row by row.
    found = find_gutters(rows)
    gutters = found or [((x0 + x1) / 2 - 1.0, (x0 + x1) / 2 + 1.0)]
    clear = [not _crosses(row, gutters) for row in rows]
    columnar_rows = sum(clear)
    flags = clear if found else _holding_prose(rows, clear, gutters[0])
    bands: list[list[Any]] = []  # [top, bottom, columnar]
    for row, columnar in zip(rows, flags, strict=True):
        top, bottom = min(w["top"] for w in row), max(w["bottom"] for w in row)
        if bands and bands[-1][2] == columnar:
            bands[-1][1] = bottom
        else:
            bands.append([top, bottom, columnar])
    cuts = [x0, *((g0 + g1) / 2 for g0, g1 in gutters), x1 + 1]
    parts: list[str] = []
    for index, (top, bottom, columnar) in enumerate(bands):
        upper = page_top if index == 0 else (float(bands[index - 1][1]) + float(top)) / 2
        lower = page_bottom + 1 if index == len(bands) - 1 else (float(bottom) + float(bands[index + 1][0])) / 2
        if columnar:
            parts.extend(_region_text(page, upper, lower, a, b, **options) for a, b in itertools.pairwise(cuts))
        else:
            parts.append(_region_text(page, upper, lower, x0, x1 + 1, **options))
    # Reported columns: a one-column page's short lines leave the centre clear too, so the centre
    # counts as a gutter only when most rows leave it clear.
    columns = len(cuts) - 1 if columnar_rows > len(rows) / 2 else 1
    return "\n".join(part for part in parts if part.strip()), columns


def _image_coverage(page: Any) -> float:
    x0, top, x1, bottom = page.bbox
    area = max((x1 - x0) * (bottom - top), 1.0)
    covered = 0.0
    for image in page.images:
        width = min(image["x1"], x1) - max(image["x0"], x0)
        height = min(image["bottom"], bottom) - max(image["top"], top)
        if width > 0 and height > 0:
            covered += width * height
    return round(min(covered / area, 1.0), 3)


def _form_values(page: Any) -> list[str]:
    """ "Field: value" for each filled form field (AcroForm widget) drawn on the page."""
    from pdfminer.pdftypes import resolve1

    def text(value: Any) -> str:
        value = resolve1(value)
        if isinstance(value, bytes):
            if value.startswith(b"\xfe\xff"):
                return value[2:].decode("utf-16-be", errors="replace")
            return value.decode("latin-1")
        name = getattr(value, "name", None)  # a checkbox state: /Yes, /Off
        return "" if name in (None, "Off") else str(name)

    found = []
    for annot in page.annots:
        data = annot.get("data") or {}
        if resolve1(data.get("Subtype")) is None or getattr(resolve1(data.get("Subtype")), "name", "") != "Widget":
            continue
        field = data
        while "V" not in field and isinstance(resolve1(field.get("Parent")), dict):
            field = resolve1(field["Parent"])
        value = text(field.get("V")) if "V" in field else ""
        if value.strip():
            label = text(field.get("T") or data.get("T") or b"")
            found.append(f"{label}: {value}" if label else value)
    return found


def overprinted(chars: Sequence[dict[str, Any]]) -> set[int]:
    """Indexes of characters that repeat an earlier one (same text and size) within DEDUPE_TOLERANCE
    points: fake bold, drawn twice with a tiny offset. pdfplumber's `dedupe_chars()` does the same,
    several times slower on a dense page; this one looks up neighbouring grid cells."""
    cells: dict[tuple[str, int, int, int], list[tuple[float, float]]] = {}
    repeats = set()
    for index, char in enumerate(chars):
        size = round(char.get("size", 0))
        x, y = char["x0"], char["top"]
        cell = (char["text"], size, int(x // DEDUPE_TOLERANCE), int(y // DEDUPE_TOLERANCE))
        near = (
            point
            for dx in (-1, 0, 1)
            for dy in (-1, 0, 1)
            for point in cells.get((cell[0], size, cell[2] + dx, cell[3] + dy), ())
        )
        if any(abs(x - px) <= DEDUPE_TOLERANCE and abs(y - py) <= DEDUPE_TOLERANCE for px, py in near):
            repeats.add(index)
        else:
            cells.setdefault(cell, []).append((x, y))
    return repeats


def read_page(page: Any) -> tuple[str, PageFacts]:
    """The normalised text of one pdfplumber page and the facts about it (see PageFacts)."""
    repeats = {id(page.chars[i]) for i in overprinted(page.chars)}
    if repeats:
        page = page.filter(lambda obj: id(obj) not in repeats)
    chars = page.chars
    unmapped = sum(1 for c in chars if _CID.fullmatch(c["text"]))
    raw, columns = page_text(page)
    fields = _form_values(page)
    if fields:
        raw = "\n".join([raw, *fields])
    _, rotated_share = _rotated_options(page)
    facts: PageFacts = {
        "chars": len(chars),
        "unmapped_chars": unmapped,
        "image_coverage": _image_coverage(page),
        "columns": columns,
        "rotation": int(page.rotation or 0) % 360,
        "rotated_share": round(rotated_share, 3),
        "form_fields": len(fields),
        "ocr": False,
        "ocr_confidence": 0.0,
    }
    return normalise_text(logical_order(raw)), facts


# Page-edge bands (points) where arXiv stamps and line numbers sit: not part of the title block.
MARGIN = 40.0
# Words further apart than this many glyph sizes on one row belong to different blocks (authors
# set side by side in columns: "Joseph Chee Chang      Amy X. Zhang").
SEGMENT_GAP_RATIO = 1.2


class HeadRow(TypedDict):
    """One printed row of a first page: `top` and `size` in points, `segments` the row's text
    split where a wide gap separates blocks set side by side."""

    top: float
    size: float
    segments: list[str]


class HeadLayout(TypedDict):
    """The first page's layout for metadata: its upright rows inside the margins, top to bottom
    (`rows`), and the text drawn rotated or in the margins (`margin`: an arXiv stamp, read in both
    directions since a vertical stamp's order depends on its rotation)."""

    rows: list[HeadRow]
    margin: str


def _low(values: Sequence[float], share: float = 0.01) -> float:
    """The value *share* of the way up *values* sorted (its 1st percentile by default)."""
    ordered = sorted(values)
    return float(ordered[int(share * (len(ordered) - 1))])


def head_layout(page: Any) -> HeadLayout:
    """The HeadLayout of *page* (one pdfplumber page): words grouped into rows of one glyph size."""
    x0, _, x1, _ = page.bbox
    words = page.extract_words(x_tolerance_ratio=X_TOLERANCE_RATIO, extra_attrs=["size"])
    upright = [w for w in words if w.get("upright", True)]
    # Words with letters: line numbers in a review copy's margin are digits alone.
    lettered = [w for w in upright if re.search(r"[^\W\d_]", w["text"])]
    if lettered:
        # A page set with narrow margins (1 cm) starts its lines inside MARGIN: the margin is then
        # what lies outside nearly all of its text, so a title's first and last words stay in it.
        left = min(MARGIN, _low([w["x0"] - x0 for w in lettered]) - 1)
        right = min(MARGIN, _low([x1 - w["x1"] for w in lettered]) - 1)
        x0, x1 = x0 + max(left, 0.0), x1 - max(right, 0.0)
    else:
        x0, x1 = x0 + MARGIN, x1 - MARGIN
    inside = [w for w in upright if x0 <= w["x0"] and w["x1"] <= x1]
    grouped: dict[tuple[int, float], list[dict[str, Any]]] = {}
    for word in inside:
        grouped.setdefault((round(word["top"] / 2), round(float(word["size"]), 1)), []).append(word)
    rows: list[HeadRow] = []
    for (_, size), row in sorted(grouped.items(), key=lambda item: min(w["top"] for w in item[1])):
        row.sort(key=lambda w: w["x0"])
        segments: list[list[str]] = [[]]
        for index, word in enumerate(row):
            if index and word["x0"] - row[index - 1]["x1"] > SEGMENT_GAP_RATIO * size:
                segments.append([])
            segments[-1].append(normalise_text(word["text"]))
        rows.append(
            {"top": round(min(w["top"] for w in row), 1), "size": size, "segments": [" ".join(s) for s in segments]}
        )
    edge = [c for c in page.chars if not c.get("upright", True) or c["x0"] < x0 or c["x1"] > x1]
    forward = "".join(c["text"] for c in sorted(edge, key=lambda c: (round(c["x0"]), c["top"])))
    backward = "".join(c["text"] for c in sorted(edge, key=lambda c: (round(c["x0"]), -c["top"])))
    return {"rows": rows, "margin": normalise_text(f"{forward}\n{backward}")}


def _xmp(pdf: Any) -> dict[str, str]:
    """Dublin Core and PRISM fields of the document's XMP packet (title, creator, date, doi,
    publicationName, ...), each as text (lists joined by "; "); {} when there is none or it
    does not parse."""
    from defusedxml import ElementTree
    from pdfminer.pdftypes import resolve1

    try:
        stream = resolve1(pdf.doc.catalog.get("Metadata"))
        root = ElementTree.fromstring(stream.get_data())
    except Exception:  # no packet, a damaged stream or malformed XML: the packet is optional
        return {}
    wanted = {"title", "creator", "date", "description", "subject", "doi", "publicationName", "coverDate", "identifier"}
    found: dict[str, str] = {}
    for element in root.iter():
        name = element.tag.rsplit("}", 1)[-1]
        if name not in wanted or name in found:
            continue
        items = [" ".join(li.itertext()).strip() for li in element.iter() if li.tag.endswith("}li")]
        value = "; ".join(item for item in items if item) or (element.text or "").strip()
        if value:
            found[name] = normalise_text(value)
    return found


def _page_labels(pdf: Any, count: int) -> list[str] | None:
    """The printed page labels of the PDF's /PageLabels, or None when it has none."""
    try:
        labels = list(pdf.doc.get_page_labels())
    except Exception:  # PDFNoPageLabels, or a malformed number tree
        return None
    return [str(label) for label in labels[:count]]


def _is_encryption_error(exc: BaseException) -> bool:
    name = type(exc).__name__
    return "password" in str(exc).lower() or name.startswith("PDFEncrypt") or name == "PDFPasswordIncorrect"


def ocr_text(lines: Sequence[Any]) -> tuple[str, int]:
    """The reading-order text of a page's OCR lines (`indexing.ocr.OcrLine`), and its column count.

    Lines are cut into words and read with the same column finder as text layers: runs of rows
    that cross no gutter are read column by column, other rows whole.
    """
    from indexing.ocr import lines_to_words

    words = lines_to_words(lines)
    if not words:
        return "", 1
    rows = _rows(words)
    gutters = find_gutters(rows) if len(words) >= MIN_WORDS_FOR_COLUMNS else []
    if not gutters:
        return "\n".join(_row_text(row) for row in rows), 1
    cuts = [float("-inf"), *((g0 + g1) / 2 for g0, g1 in gutters), float("inf")]
    parts: list[str] = []
    columnar: list[list[dict[str, Any]]] = []

    def flush() -> None:
        for a, b in itertools.pairwise(cuts):
            column = [w for row in columnar for w in row if a <= (w["x0"] + w["x1"]) / 2 < b]
            parts.extend(_row_text(row) for row in _rows(column))
        columnar.clear()

    columnar_rows = 0
    for row in rows:
        if _crosses(row, gutters):
            flush()
            parts.append(_row_text(row))
        else:
            columnar.append(row)
            columnar_rows += 1
    flush()
    return "\n".join(parts), (len(cuts) - 1 if columnar_rows > len(rows) / 2 else 1)


def _row_text(row: Sequence[dict[str, Any]]) -> str:
    return " ".join(w["text"] for w in sorted(row, key=lambda w: w["x0"]))


@dataclass(frozen=True)
class OcrOptions:
    """How the child runs OCR: `engine` one of `indexing.ocr.ENGINES`; `dpi` the rendering
    resolution; `languages` tesseract's language list; `pages` 1-based pages to recognise whatever
    their text layer holds."""

    engine: str = "none"
    dpi: int = 200
    languages: str = "eng"
    pages: frozenset[int] = frozenset()


@dataclass(frozen=True)
class FigureOptions:
    """Where and how the child crops figures (`indexing.figures`): PNG files go into `directory`,
    at most `max_figures` of them, rendered at `dpi` with neither side over `max_pixels`."""

    directory: str
    max_figures: int = 50
    dpi: int = 150
    max_pixels: int = 1600


class FigureCropper:
    """The figure crops of one parse: regions are found while each page is loaded (`add_page`),
    rendered once the text is out (`crop`). Neither step fails the parse: the first error stops
    the figures, and the message says why."""

    def __init__(self, options: FigureOptions) -> None:
        from indexing.figures import FigureFinder

        self.options = options
        self.finder: Any = FigureFinder() if options.max_figures > 0 else None
        self.error = ""
        self.seconds = 0.0  # spent finding and rendering figures

    def add_page(self, page: Any) -> None:
        if self.finder is None:
            return
        started = time.perf_counter()
        try:
            self.finder.add_page(page)
        except Exception as exc:  # a layout the finder cannot handle: the text is still read
            self.error, self.finder = f"page {page.page_number}: {type(exc).__name__}: {exc}", None
        self.seconds += time.perf_counter() - started

    def crop(self, path: str) -> dict[str, Any]:
        """Render the figures found into the options' directory: the figures message (see the
        module docstring)."""
        from indexing.figures import render_figures

        written: list[dict[str, Any]] = []
        started = time.perf_counter()
        try:
            if self.finder is not None:
                regions = self.finder.regions(max_figures=self.options.max_figures)
                images = render_figures(path, regions, dpi=self.options.dpi, max_pixels=self.options.max_pixels)
                for index, image in enumerate(images):
                    name = f"figure-{index:03d}.png"
                    with open(f"{self.options.directory}/{name}", "wb") as file:
                        file.write(image.png)
                    written.append(
                        {
                            "page": image.page,
                            "kind": image.kind,
                            "label": image.label,
                            "caption": image.caption,
                            "bbox": list(image.bbox),
                            "file": name,
                            "width": image.width,
                            "height": image.height,
                        }
                    )
        except Exception as exc:
            self.error, written = f"rendering: {type(exc).__name__}: {exc}", []
        self.seconds += time.perf_counter() - started
        return {"figures": written, "figure_error": self.error, "figure_seconds": round(self.seconds, 3)}


def parse(
    path: str,
    *,
    max_page_chars: int,
    ocr: OcrOptions | None = None,
    progress: Callable[[int, int, bool], None] | None = None,
    figures: FigureCropper | None = None,
) -> dict[str, Any]:
    """Parse the PDF at *path*. Returns the JSON-ready result described in the module docstring.

    With *ocr* naming an engine, unreadable pages (`needs_ocr`, or listed in `ocr.pages`) are
    rendered and recognised; the engine is loaded at the first such page. *progress* is called
    after each page with (page, pages, whether it was OCR'd). *figures* is shown each page while
    it is loaded, to find the captioned figures and tables on it (`FigureCropper.crop` renders
    them after).
    """
    import pdfplumber
    from pdfminer.pdfdocument import PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError

    ocr = ocr or OcrOptions()
    engine: Any = None
    try:
        with pdfplumber.open(path) as pdf:
            pdf.rsrcmgr = _resource_manager()
            metadata = {str(k): str(v) for k, v in (pdf.metadata or {}).items() if isinstance(v, (str, int, float))}
            xmp = _xmp(pdf)
            head: HeadLayout = {"rows": [], "margin": ""}
            pages: list[str] = []
            facts: list[PageFacts] = []
            total = len(pdf.pages)
            for page in pdf.pages:
                if page.page_number == 1:
                    head = head_layout(page)
                text, page_facts = read_page(page)
                number = page.page_number
                recognised = ocr.engine != "none" and (number in ocr.pages or needs_ocr(text, page_facts))
                if recognised:
                    if engine is None:
                        from indexing.ocr import make_engine

                        engine = make_engine(ocr.engine, languages=ocr.languages)
                    text, page_facts = _recognise(engine, path, number, page_facts, dpi=ocr.dpi)
                if len(text) > max_page_chars:
                    return {
                        "error": "page_too_large",
                        "message": f"Page {page.page_number} holds {len(text):,} characters of text, more than "
                        f"the {max_page_chars:,} a page may hold.",
                    }
                pages.append(text)
                facts.append(page_facts)
                if figures is not None:
                    figures.add_page(page)
                page.close()  # frees the page's layout objects: memory stays flat on long papers
                if progress is not None:
                    progress(number, total, recognised)
            page_labels = _page_labels(pdf, len(pages))
    except PDFPasswordIncorrect:
        return {"error": "encrypted", "message": "The PDF is encrypted and needs a password to open."}
    except PDFSyntaxError as exc:
        return {"error": "corrupt", "message": f"The file is not a readable PDF ({clipped(str(exc))})."}
    except Exception as exc:  # pdfminer raises many unrelated types for damaged files
        from indexing.ocr import OcrUnavailableError

        if isinstance(exc, OcrUnavailableError):
            return {"error": "ocr_unavailable", "message": str(exc)}
        # pdfplumber wraps pdfminer's errors in PdfminerException(original): look inside.
        causes = [exc, *(arg for arg in exc.args if isinstance(arg, BaseException))]
        if any(_is_encryption_error(cause) for cause in causes):
            return {"error": "encrypted", "message": "The PDF is encrypted and needs a password to open."}
        detail = "; ".join(f"{type(cause).__name__}: {cause}".rstrip(": ") for cause in causes)
        return {"error": "corrupt", "message": f"The PDF could not be read; it is damaged ({clipped(detail)})."}
    return {
        "pages": pages,
        "facts": facts,
        "page_labels": page_labels,
        "metadata": metadata,
        "xmp": xmp,
        "head": head,
    }


# How much of a parser's own error text a user is shown: enough to name the fault.
MAX_DETAIL_CHARS = 160


def clipped(detail: str, limit: int = MAX_DETAIL_CHARS) -> str:
    """*detail* (a parser's error text, which for a damaged file may dump kilobytes of its bytes) on
    one line and at most *limit* characters, cut at a word with "…" when longer."""
    detail = " ".join(detail.split())
    if len(detail) <= limit:
        return detail
    return detail[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "\u2026"


def _recognise(engine: Any, path: str, number: int, facts: PageFacts, *, dpi: int) -> tuple[str, PageFacts]:
    """The OCR text of page *number* and its facts: glyph counts are the recognised text's (no
    glyph of it is unmapped), the image and rotation facts the page's."""
    from indexing.ocr import render_page

    lines = engine.recognise(render_page(path, number - 1, dpi=dpi))
    raw, columns = ocr_text(lines)
    text = normalise_text(logical_order(raw))
    confidence = sum(line.confidence for line in lines) / len(lines) if lines else 0.0
    recognised: PageFacts = {
        **facts,
        "chars": len(text),
        "unmapped_chars": 0,
        "columns": columns,
        "ocr": True,
        "ocr_confidence": round(confidence, 3),
    }
    return text, recognised


def character_counts(pages: Sequence[str]) -> Counter[str]:
    """Characters of *pages* by Unicode script-ish class (the first word of the character's name:
    LATIN, ARABIC, CJK, HIRAGANA, ...), letters only. Used to name a page's script."""
    counts: Counter[str] = Counter()
    for text in pages:
        for char in text:
            if char.isalpha():
                counts[unicodedata.name(char, "UNKNOWN").split()[0]] += 1
    return counts


def _write_progress(page: int, pages: int, recognised: bool) -> None:
    sys.stdout.write(json.dumps({"progress": {"page": page, "pages": pages, "ocr": recognised}}) + "\n")
    sys.stdout.flush()


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m indexing.pdfparse")
    parser.add_argument("path")
    parser.add_argument("max_page_chars", type=int)
    parser.add_argument("--ocr-engine", default="none")
    parser.add_argument("--ocr-dpi", type=int, default=200)
    parser.add_argument("--ocr-languages", default="eng")
    parser.add_argument("--ocr-pages", default="", help="comma-separated 1-based pages to OCR in any case")
    parser.add_argument("--figures-dir", default="", help="crop figures to PNG files in this directory")
    parser.add_argument("--figures-max", type=int, default=50)
    parser.add_argument("--figures-dpi", type=int, default=150)
    parser.add_argument("--figures-max-pixels", type=int, default=1600)
    args = parser.parse_args(argv)
    options = OcrOptions(
        engine=args.ocr_engine,
        dpi=args.ocr_dpi,
        languages=args.ocr_languages,
        pages=frozenset(int(n) for n in args.ocr_pages.split(",") if n.strip()),
    )
    cropper = None
    if args.figures_dir:
        cropper = FigureCropper(
            FigureOptions(
                directory=args.figures_dir,
                max_figures=args.figures_max,
                dpi=args.figures_dpi,
                max_pixels=args.figures_max_pixels,
            )
        )
    result = parse(
        args.path, max_page_chars=args.max_page_chars, ocr=options, progress=_write_progress, figures=cropper
    )
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    # The text is out first: rendering figures can then run out of time or memory without costing it.
    if cropper is not None and "error" not in result:
        sys.stdout.write(json.dumps(cropper.crop(args.path)) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
