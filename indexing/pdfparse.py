"""PDF -> per-page text with pdfplumber, meant to run in a child process (see `indexing.pdf`).

This module imports no Django: it is executed as `python -m indexing.pdfparse PATH` under a memory
limit and a timeout, and writes one JSON object to stdout:
`{"pages": [str, ...], "metadata": {...}}` or `{"error": code, "message": str}`.

Text is Unicode-normalised with NFKC, so ligatures such as U+FB01 "ﬁ" read as "fi". Two-column
pages are read column by column (left, then right) below any full-width header, rather than line by
line across the gutter.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from typing import Any

# Word gaps are judged relative to glyph size: fixed x_tolerance splits words in kerned PDFs
# ("Distrib uted") or glues them in tight ones ("consensusalgorithm"); 0.15 of the glyph size
# reads every paper of our test corpus correctly.
X_TOLERANCE_RATIO = 0.15
MIN_WORDS_FOR_COLUMNS = 40


# Glyphs that pdfminer cannot map to Unicode come out as "(cid:N)". Type 1 fonts embedded by
# Ghostscript/dvips without a ToUnicode map (bigtable.pdf and mapreduce.pdf of our test corpus) use
# codes 2 and 3 for the fi/fl ligatures and Windows-1252 codes for quotes and dashes.
_UNMAPPED_GLYPHS = {
    2: "fi",
    3: "fl",
    145: "\u2018",
    146: "\u2019",
    147: "\u201c",
    148: "\u201d",
    150: "\u2013",
    151: "\u2014",
}
_CID = re.compile(r"\(cid:(\d+)\)")


def normalise_text(text: str) -> str:
    """Map unmapped glyph codes we know ("(cid:2)" -> "fi"; others are dropped), NFKC-normalise,
    drop control characters, collapse runs of spaces. Newlines are kept."""
    text = _CID.sub(lambda m: _UNMAPPED_GLYPHS.get(int(m.group(1)), ""), text)
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\u00ad", "")
    text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", text)
    text = re.sub(r"[ \t\u00a0]+", " ", text)
    return re.sub(r" *\n *", "\n", text).strip()


def _extract(page: Any) -> str:
    return page.extract_text(x_tolerance_ratio=X_TOLERANCE_RATIO) or ""


def _region_text(page: Any, top: float, bottom: float, left: float, right: float) -> str:
    """Text of the characters whose centre lies in the box; each character belongs to one box."""

    def inside(obj: dict[str, Any]) -> bool:
        if obj.get("object_type") != "char":
            return False
        x, y = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
        return left <= x < right and top <= y < bottom

    return page.filter(inside).extract_text(x_tolerance_ratio=X_TOLERANCE_RATIO) or ""


def _spans_centre(row: list[dict[str, Any]], mid: float) -> bool:
    """Whether a row of words runs across the page's vertical centre: a word straddles it, or the
    gap around it is an ordinary word space (under 0.6 of the text height) rather than a gutter, as
    in a centred title "The Google | File System"."""
    if any(w["x0"] < mid - 2 and w["x1"] > mid + 2 for w in row):
        return True
    left = [w for w in row if w["x1"] <= mid + 2]
    right = [w for w in row if w["x0"] >= mid - 2]
    if not left or not right:
        return False
    before, after = max(left, key=lambda w: w["x1"]), min(right, key=lambda w: w["x0"])
    height = max(before["bottom"] - before["top"], after["bottom"] - after["top"])
    return after["x0"] - before["x1"] < 0.6 * height


def page_text(page: Any) -> str:
    """The reading-order text of one pdfplumber page.

    The page is cut into horizontal bands: rows with a word across the vertical centre are
    full-width (titles, one-column text, figure captions, page numbers); runs of rows without one
    are two-column and read left column first. A one-column page is one full-width band.
    """
    words = page.extract_words(x_tolerance_ratio=X_TOLERANCE_RATIO)
    if len(words) < MIN_WORDS_FOR_COLUMNS:
        return _extract(page)
    x0, page_top, x1, page_bottom = page.bbox
    mid = (x0 + x1) / 2
    grouped: list[list[dict[str, Any]]] = []
    for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
        if grouped and word["top"] < max(w["bottom"] for w in grouped[-1]) - 1:
            grouped[-1].append(word)
        else:
            grouped.append([word])
    rows = [(min(w["top"] for w in row), max(w["bottom"] for w in row), _spans_centre(row, mid)) for row in grouped]
    bands: list[list[float | bool]] = []  # [top, bottom, two_column]
    for top, bottom, crossing in rows:
        if bands and bands[-1][2] == (not crossing):
            bands[-1][1] = bottom
        else:
            bands.append([top, bottom, not crossing])
    parts = []
    for index, (top, bottom, two_column) in enumerate(bands):
        upper = page_top if index == 0 else (float(bands[index - 1][1]) + float(top)) / 2
        lower = page_bottom + 1 if index == len(bands) - 1 else (float(bottom) + float(bands[index + 1][0])) / 2
        if two_column:
            parts.append(_region_text(page, upper, lower, x0, mid))
            parts.append(_region_text(page, upper, lower, mid, x1 + 1))
        else:
            parts.append(_region_text(page, upper, lower, x0, x1 + 1))
    return "\n".join(part for part in parts if part.strip())


def _is_encryption_error(exc: BaseException) -> bool:
    name = type(exc).__name__
    return "password" in str(exc).lower() or name.startswith("PDFEncrypt") or name == "PDFPasswordIncorrect"


def parse(path: str, *, max_page_chars: int) -> dict[str, Any]:
    """Parse the PDF at *path*. Returns the JSON-ready result described in the module docstring."""
    import pdfplumber
    from pdfminer.pdfdocument import PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError

    try:
        with pdfplumber.open(path) as pdf:
            metadata = {str(k): str(v) for k, v in (pdf.metadata or {}).items() if isinstance(v, (str, int, float))}
            pages = []
            for page in pdf.pages:
                text = normalise_text(page_text(page))
                if len(text) > max_page_chars:
                    return {
                        "error": "page_too_large",
                        "message": f"Page {page.page_number} holds {len(text):,} characters of text, more than "
                        f"the {max_page_chars:,} a page may hold.",
                    }
                pages.append(text)
    except PDFPasswordIncorrect:
        return {"error": "encrypted", "message": "The PDF is encrypted and needs a password to open."}
    except PDFSyntaxError as exc:
        return {"error": "corrupt", "message": f"The file is not a readable PDF ({exc})."}
    except Exception as exc:  # pdfminer raises many unrelated types for damaged files
        # pdfplumber wraps pdfminer's errors in PdfminerException(original): look inside.
        causes = [exc, *(arg for arg in exc.args if isinstance(arg, BaseException))]
        if any(_is_encryption_error(cause) for cause in causes):
            return {"error": "encrypted", "message": "The PDF is encrypted and needs a password to open."}
        detail = "; ".join(f"{type(cause).__name__}: {cause}".rstrip(": ") for cause in causes)
        return {"error": "corrupt", "message": f"The PDF could not be read ({detail})."}
    return {"pages": pages, "metadata": metadata}


if __name__ == "__main__":
    result = parse(sys.argv[1], max_page_chars=int(sys.argv[2]))
    sys.stdout.write(json.dumps(result))
