"""Optical character recognition of page images, for pages without a readable text layer.

This module imports no Django: it runs inside the parser's child process (`indexing.pdfparse`),
under the same memory and time limits as the parse. Two engines, chosen by `OCR_ENGINE`:

- `rapidocr`: RapidOCR on ONNX Runtime (Apache-2.0). Its detection and recognition models
  (PP-OCR, Apache-2.0) ship inside the `rapidocr` wheel, so nothing is downloaded at run time and
  it works after a plain `pip install -r requirements.txt`.
- `tesseract`: the system's `tesseract` program (Debian: `apt-get install tesseract-ocr`), with
  the languages of `OCR_LANGUAGES` ("eng", "eng+deu").

A page is rendered with pdfium (pypdfium2, which pdfplumber already depends on) at `OCR_DPI`.
"""

from __future__ import annotations

import io
import logging
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

ENGINES = ("rapidocr", "tesseract", "none")


class OcrUnavailableError(Exception):
    """The configured OCR engine cannot run on this machine (not installed)."""


@dataclass(frozen=True)
class OcrLine:
    """One line of recognised text: its box in image pixels (x0, top, x1, bottom) and the engine's
    confidence (0..1)."""

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    confidence: float


class OcrEngine(Protocol):
    name: str

    def recognise(self, image: Any) -> list[OcrLine]:
        """The text lines of a PIL image, in no particular order."""
        ...


class RapidOcrEngine:
    """RapidOCR with its bundled models. Built once per process: loading the models takes seconds."""

    name = "rapidocr"

    def __init__(self) -> None:
        try:
            from rapidocr import RapidOCR
        except ImportError as exc:
            raise OcrUnavailableError("OCR_ENGINE=rapidocr needs the rapidocr and onnxruntime packages.") from exc
        # Its log goes to stderr, which the parent reads only to explain a failure. The line
        # orientation classifier is off: on upright scans it turned some lines of typed text upside
        # down (2 of 30 lines of the OCR benchmark's page read as "ma e s r ing"; none without it),
        # and a page that is turned as a whole is rotated by its /Rotate before rendering.
        self._engine = RapidOCR(params={"Global.log_level": "error", "Global.use_cls": False})
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)

    def recognise(self, image: Any) -> list[OcrLine]:
        import numpy as np

        # With detection, classification and recognition all on (the default), the output is a
        # RapidOCROutput: boxes, texts and scores.
        result: Any = self._engine(np.asarray(image.convert("RGB")))
        if result.boxes is None or result.txts is None:
            return []
        lines = []
        for box, text, score in zip(result.boxes, result.txts, result.scores or (), strict=False):
            xs, ys = [float(p[0]) for p in box], [float(p[1]) for p in box]
            if text.strip():
                lines.append(OcrLine(text, min(xs), min(ys), max(xs), max(ys), float(score)))
        return lines


class TesseractEngine:
    """The system `tesseract` program, run once per page (its TSV output gives word boxes)."""

    name = "tesseract"

    def __init__(self, languages: str = "eng") -> None:
        program = shutil.which("tesseract")
        if program is None:
            raise OcrUnavailableError(
                "OCR_ENGINE=tesseract needs the tesseract program (apt-get install tesseract-ocr)."
            )
        self._program = program
        self._languages = languages

    def recognise(self, image: Any) -> list[OcrLine]:
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        completed = subprocess.run(
            [self._program, "stdin", "stdout", "-l", self._languages, "tsv"],
            input=buffer.getvalue(),
            capture_output=True,
            check=False,
        )
        if completed.returncode != 0:
            raise OcrUnavailableError(f"tesseract failed: {completed.stderr.decode(errors='replace')[-300:]}")
        return tesseract_lines(completed.stdout.decode("utf-8", errors="replace"))


def tesseract_lines(tsv: str) -> list[OcrLine]:
    """Lines (block, paragraph, line) of tesseract's TSV output, words joined by spaces."""
    grouped: dict[tuple[str, str, str], list[list[str]]] = {}
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) < 12 or cells[0] != "5" or not cells[11].strip():
            continue
        grouped.setdefault((cells[2], cells[3], cells[4]), []).append(cells)
    lines = []
    for words in grouped.values():
        left = [float(w[6]) for w in words]
        top = [float(w[7]) for w in words]
        right = [float(w[6]) + float(w[8]) for w in words]
        bottom = [float(w[7]) + float(w[9]) for w in words]
        confidence = sum(max(float(w[10]), 0.0) for w in words) / len(words) / 100
        text = " ".join(w[11].strip() for w in words)
        lines.append(OcrLine(text, min(left), min(top), max(right), max(bottom), confidence))
    return lines


def make_engine(name: str, *, languages: str = "eng") -> OcrEngine | None:
    """The engine called *name* (one of ENGINES); None for "none". Raises OcrUnavailableError when
    it is not installed, ValueError for an unknown name."""
    if name == "none":
        return None
    if name == "rapidocr":
        return RapidOcrEngine()
    if name == "tesseract":
        return TesseractEngine(languages)
    raise ValueError(f"Unknown OCR engine {name!r}: choose one of {', '.join(ENGINES)}.")


def render_page(path: str, index: int, *, dpi: int) -> Any:
    """Page *index* (0-based) of the PDF at *path* as a greyscale PIL image at *dpi*."""
    import pypdfium2

    document = pypdfium2.PdfDocument(path)
    try:
        page = document[index]
        bitmap = page.render(scale=dpi / 72, grayscale=True)
        image = bitmap.to_pil()
        page.close()
        return image
    finally:
        document.close()


def lines_to_words(lines: Sequence[OcrLine]) -> list[dict[str, Any]]:
    """Word boxes in the shape of pdfplumber's `extract_words` ("text", "x0", "x1", "top",
    "bottom"), each line's width shared out among its words by their lengths, so the parser's column
    finder (`indexing.pdfparse.find_gutters`) can read OCR'd pages too."""
    words = []
    for line in lines:
        parts = line.text.split()
        total = sum(len(part) for part in parts) + max(len(parts) - 1, 0)
        if not total:
            continue
        width = (line.x1 - line.x0) / total
        x = line.x0
        for part in parts:
            words.append({"text": part, "x0": x, "x1": x + len(part) * width, "top": line.top, "bottom": line.bottom})
            x += (len(part) + 1) * width
    return words
