"""What cropping figures costs indexing: `python -m benchmarks --figures [--repeat N] [PDF ...]`
(`./run bench --figures`).

Each paper (default: every PDF under `PAPERS_DIR`) is read through the production path,
`indexing.pdf.extract_text`, in the parser's child under its limits, *repeat* times with figures
on (`FIGURES_MAX_PER_PAPER`, `FIGURE_RENDER_DPI`, `FIGURE_MAX_PIXELS` as configured) and as many
times with them off. Reported per paper: pages, figures and tables cropped, the child's own time
finding and rendering them (`PaperText.figure_seconds`, the fastest run: the machine may be shared),
the parse's wall time with and without figures (fastest runs), and the PNG bytes written.

Writes `benchmarks/results/figures.md` and `.json` and prints the report.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.environment import BASE_DIR, PAPERS_DIR, RESULTS_DIR, configure


def measure(path: Path, *, repeat: int) -> dict[str, Any]:
    """Figures on and off for *path*, *repeat* runs each (see the module docstring)."""
    from django.conf import settings

    from indexing.pdf import extract_text

    configured = settings.FIGURES_MAX_PER_PAPER
    on: list[float] = []
    off: list[float] = []
    cropping: list[float] = []
    text = None
    for _ in range(repeat):
        for enabled, times in ((True, on), (False, off)):
            settings.FIGURES_MAX_PER_PAPER = configured if enabled else 0
            started = time.perf_counter()
            result = extract_text(path)
            times.append(time.perf_counter() - started)
            if enabled:
                text = result
                cropping.append(result.figure_seconds)
    settings.FIGURES_MAX_PER_PAPER = configured
    assert text is not None
    return {
        "pages": len(text.pages),
        "figures": sum(figure.kind == "figure" for figure in text.figures),
        "tables": sum(figure.kind == "table" for figure in text.figures),
        "figure_seconds": round(min(cropping), 3),
        "parse_seconds_with": round(min(on), 2),
        "parse_seconds_without": round(min(off), 2),
        "png_kib": round(sum(len(figure.png) for figure in text.figures) / 1024),
        "figure_error": text.figure_error,
    }


def report(results: dict[str, Any]) -> str:
    lines = [
        "# Figure cropping benchmark",
        "",
        f"{results['machine']}, load average {results['load_average_at_start']} when the run started; "
        f"at most {results['max_figures']} figures per paper at {results['dpi']} dpi, at most "
        f"{results['max_pixels']} px a side; fastest of {results['repeat']} runs. Run with `./run bench --figures`.",
        "",
        "| paper | pages | figures | tables | cropping (s, in the child) | parse with (s) | parse without (s) "
        "| PNG (KiB) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, row in results["runs"].items():
        lines.append(
            f"| {name} | {row['pages']} | {row['figures']} | {row['tables']} | {row['figure_seconds']} "
            f"| {row['parse_seconds_with']} | {row['parse_seconds_without']} | {row['png_kib']} |"
        )
    errors = {name: row["figure_error"] for name, row in results["runs"].items() if row["figure_error"]}
    lines += ["", *(f"- {name}: cropping stopped: {error}" for name, error in errors.items())]
    lines += [
        "Cropping time is measured inside the parser's child (finding captions and regions on each "
        "loaded page, then rendering with PDFium); the parse times are wall times of the whole child "
        "and vary with the machine's load more than cropping adds."
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks --figures")
    parser.add_argument("--repeat", type=int, default=3, help="runs per paper and setting (default 3)")
    parser.add_argument("papers", nargs="*", type=Path, help=f"PDFs (default: every PDF under {PAPERS_DIR})")
    args = parser.parse_args(argv)
    papers = args.papers or sorted(PAPERS_DIR.rglob("*.pdf"))
    if not papers:
        raise SystemExit(f"No PDFs to read: name some, or put papers in {PAPERS_DIR}.")
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        configure(Path(folder) / "data", OCR_ENGINE="none")
        from django.conf import settings

        results = {
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "load_average_at_start": round(load, 2),
            "max_figures": settings.FIGURES_MAX_PER_PAPER,
            "dpi": settings.FIGURE_RENDER_DPI,
            "max_pixels": settings.FIGURE_MAX_PIXELS,
            "repeat": args.repeat,
            "runs": {path.name: measure(path, repeat=args.repeat) for path in papers},
        }
    text = report(results)
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "figures.md").write_text(text)
    (RESULTS_DIR / "figures.json").write_text(json.dumps(results, indent=2) + "\n")
    print(text)
    print(f"Written to {(RESULTS_DIR / 'figures.md').relative_to(BASE_DIR)}")


if __name__ == "__main__":
    main()
