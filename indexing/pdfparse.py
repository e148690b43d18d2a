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
# A page is two-column when at most this share of its body lines crosses the vertical centre.
GUTTER_CROSSING_SHARE = 0.08
MIN_WORDS_FOR_COLUMNS = 40


def normalise_text(text: str) -> str:
    """NFKC-normalise, drop control characters, collapse runs of spaces. Newlines are kept."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\u00ad", "")
    text = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", text)
    text = re.sub(r"[ \t\u00a0]+", " ", text)
    return re.sub(r" *\n *", "\n", text).strip()


def _extract(page: Any) -> str:
    return page.extract_text(x_tolerance_ratio=X_TOLERANCE_RATIO) or ""


def page_text(page: Any) -> str:
    """The reading-order text of one pdfplumber page."""
    words = page.extract_words(x_tolerance_ratio=X_TOLERANCE_RATIO)
    if len(words) < MIN_WORDS_FOR_COLUMNS:
        return _extract(page)
    mid = (page.bbox[0] + page.bbox[2]) / 2
    crossing = [w for w in words if w["x0"] < mid - 2 and w["x1"] > mid + 2]
    if not crossing:
        header_bottom = page.bbox[1]
    else:
        # Full-width material (title, authors) sits above the columns: cut below the last line of it
        # that lies in the top third; crossings lower down mean a one-column page.
        top_third = page.bbox[1] + (page.bbox[3] - page.bbox[1]) / 3
        header = [w for w in crossing if w["bottom"] <= top_third]
        body_crossing = len(crossing) - len(header)
        lines_below = {round(w["top"]) for w in words if not header or w["top"] > max(h["bottom"] for h in header)}
        if body_crossing > GUTTER_CROSSING_SHARE * max(len(lines_below), 1):
            return _extract(page)
        header_bottom = max((w["bottom"] for w in header), default=page.bbox[1])
    x0, top, x1, bottom = page.bbox
    parts = []
    if header_bottom > top:
        parts.append(_extract(page.crop((x0, top, x1, header_bottom + 0.5))))
    parts.append(_extract(page.crop((x0, header_bottom + 0.5, mid, bottom))))
    parts.append(_extract(page.crop((mid, header_bottom + 0.5, x1, bottom))))
    return "\n".join(part for part in parts if part)


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
