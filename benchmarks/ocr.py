"""OCR speed, memory and accuracy: `python -m benchmarks --ocr [--pages N] [--engine rapidocr]`
(`./run bench --ocr`).

A generated image-only PDF (N A4 pages, each a 150-dpi image of 30 typed lines, as a scanner makes
them) is read through the production path, `indexing.pdf.extract_text`, in the parser's child
process under its memory limit: wall time, time to the first page (the OCR models load there),
pages per second after it, the child's peak resident memory, and the character error rate of the
recognised text against the typed text. Then, when present, the fault case with two scanned pages
(`../shared/cases/partial-scan.pdf`).

Writes `benchmarks/results/ocr.md` and `.json` and prints the report.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.environment import BASE_DIR, PAPERS_DIR, RESULTS_DIR, configure

LINES_PER_PAGE = 30
WORDS = (
    "replicated state machines keep several servers in agreement about an ordered log of commands "
    "a client submits a command to the group and waits until a majority has stored it durably "
    "network partitions may delay progress but they must never allow two conflicting decisions "
    "the glacier terminus retreated thirty eight metres between the spring and autumn surveys"
).split()


def page_lines(page: int) -> list[str]:
    """The typed lines of page *page* (0-based): deterministic, about 60 characters each."""
    lines = []
    for row in range(LINES_PER_PAGE):
        start = (page * LINES_PER_PAGE + row) * 7 % len(WORDS)
        words: list[str] = []
        while len(" ".join(words)) < 55:
            words.append(WORDS[(start + len(words)) % len(WORDS)])
        lines.append(" ".join(words))
    return lines


def scanned_pdf(pages: int) -> bytes:
    """An image-only PDF of *pages* pages of `page_lines`."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw, ImageFont

    pdf = FPDF()
    font = ImageFont.load_default(size=26)
    for page in range(pages):
        image = Image.new("L", (1240, 1754), 255)
        draw = ImageDraw.Draw(image)
        for row, line in enumerate(page_lines(page)):
            draw.text((110, 120 + 48 * row), line, font=font, fill=0)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        buffer.seek(0)
        pdf.add_page()
        pdf.image(buffer, x=0, y=0, w=210, h=297)
    return bytes(pdf.output())


def measure(path: Path, expected: list[str] | None) -> dict[str, Any]:
    """Read *path* through `extract_text`; time it page by page; the child's peak memory (the
    largest child of this process so far: run one measurement per process for a clean number)."""
    from benchmarks.extraction import edit_distance, folded
    from indexing.pdf import extract_text

    started = time.perf_counter()
    stamps: list[tuple[float, bool]] = []
    text = extract_text(path, progress=lambda page, pages, ocr: stamps.append((time.perf_counter(), ocr)))
    total = time.perf_counter() - started
    ocr_stamps = [stamp for stamp, ocr in stamps if ocr]
    first = ocr_stamps[0] - started if ocr_stamps else 0.0
    steady = (len(ocr_stamps) - 1) / (ocr_stamps[-1] - ocr_stamps[0]) if len(ocr_stamps) > 1 else None
    result: dict[str, Any] = {
        "pages": len(text.pages),
        "ocr_pages": len(text.ocr_pages),
        "seconds": round(total, 2),
        "first_page_seconds": round(first, 2),
        "pages_per_second": round(len(text.pages) / total, 3),
        "pages_per_second_after_first": round(steady, 3) if steady else None,
        "child_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
        "statuses": sorted({report.status for report in text.reports}),
    }
    if expected is not None:
        errors = sum(edit_distance(folded(got), folded(want)) for got, want in zip(text.pages, expected, strict=True))
        result["cer"] = round(errors / sum(len(folded(want)) for want in expected), 4)
    return result


def report(results: dict[str, Any]) -> str:
    lines = [
        "# OCR benchmark",
        "",
        f"Engine `{results['engine']}`, rendering at {results['dpi']} dpi, parser memory limit "
        f"{results['memory_limit_mb']} MB; {results['machine']}, load average {results['load_average_at_start']} "
        "when the run started. Run with `./run bench --ocr`.",
        "",
        "| input | pages | OCR'd | seconds | first page (s, models load) | pages/s | pages/s after the first "
        "| child peak RSS (MB) | CER |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, row in results["runs"].items():
        lines.append(
            f"| {name} | {row['pages']} | {row['ocr_pages']} | {row['seconds']} | {row['first_page_seconds']} "
            f"| {row['pages_per_second']} | {row['pages_per_second_after_first'] or '-'} "
            f"| {row['child_peak_rss_mb']} | {row.get('cer', '-')} |"
        )
    lines += [
        "",
        "CER: character error rate of the recognised text against the typed text (edits / characters, "
        "white space folded). Each OCR'd page adds `OCR_SECONDS_PER_PAGE` to the paper's parse time limit.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks --ocr")
    parser.add_argument("--pages", type=int, default=10, help="pages of the generated scan (default 10)")
    parser.add_argument("--engine", default="rapidocr", choices=["rapidocr", "tesseract"])
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        configure(Path(folder) / "data", OCR_ENGINE=args.engine)
        from django.conf import settings

        scan = Path(folder) / "scan.pdf"
        scan.write_bytes(scanned_pdf(args.pages))
        runs = {
            f"generated scan, {args.pages} pages": measure(scan, [" ".join(page_lines(p)) for p in range(args.pages)])
        }
        case = PAPERS_DIR.parent / "cases" / "partial-scan.pdf"
        if case.exists():
            runs["partial-scan.pdf (pages 3-4 scanned)"] = measure(case, None)
        results = {
            "engine": settings.OCR_ENGINE,
            "dpi": settings.OCR_DPI,
            "memory_limit_mb": settings.PDF_PARSE_MEMORY_MB,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            # Other work on the machine slows OCR (onnxruntime uses every core): say how busy it was.
            "load_average_at_start": round(load, 2),
            "runs": runs,
        }
    text = report(results)
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "ocr.md").write_text(text)
    (RESULTS_DIR / "ocr.json").write_text(json.dumps(results, indent=2) + "\n")
    print(text)
    print(f"Written to {(RESULTS_DIR / 'ocr.md').relative_to(BASE_DIR)}")


if __name__ == "__main__":
    main()
