"""Extraction quality: `python -m benchmarks.extraction`.

1. The labelled extraction set (tests/support/extraction_cases.py): for each case, the character
   error rate (CER: Levenshtein edits / expected characters, whitespace folded) of every page's
   extracted text against the text a reader sees, and the page classifications expected and got.
   Cases every page of which is unusable must be refused with their error code.
2. The real papers (`../shared/papers`, when present): pages per status, columns read, printed page
   numbers found, words that lose a ligature ("rst", "dierent"), and parse time per page.

Writes `benchmarks/results/extraction.md` and prints it.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.environment import BASE_DIR, PAPERS_DIR, RESULTS_DIR, configure

# Words that read like this have lost an ff/fi/fl ligature glyph.
LOST_LIGATURES = re.compile(r"\b(?:rst|dene[sd]?|specic|buers|dierent|ecient|eciency|signicant|modied)\b")


def folded(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions each cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
        previous = current
    return previous[-1]


def character_error_rate(got: str, expected: str) -> float:
    expected, got = folded(expected), folded(got)
    if not expected:
        return 0.0 if not got else 1.0
    return edit_distance(got, expected) / len(expected)


def labelled_cases(work: Path) -> list[str]:
    from indexing.pdf import PdfError, extract_text
    from tests.support.extraction_cases import CASES, FAILING_CASES

    lines = [
        "| case | CER | pages (expected) | pages (got) | ms |",
        "| --- | ---: | --- | --- | ---: |",
    ]
    total_edits = total_chars = 0
    for name, case in sorted(CASES.items()):
        if any(not needed.exists() for needed in case.needs):
            lines.append(f"| {name} | skipped (no font) | | | |")
            continue
        path = work / f"{name}.pdf"
        path.write_bytes(case.build())
        started = time.perf_counter()
        try:
            text = extract_text(path)
            got_pages, got_statuses = text.pages, [report.status for report in text.reports]
        except PdfError as exc:
            got_pages, got_statuses = [""] * len(case.expected), [f"error {exc.code}"]
        elapsed = 1000 * (time.perf_counter() - started)
        expected, got = " ".join(case.expected), " ".join(got_pages)
        total_edits += edit_distance(folded(got), folded(expected))
        total_chars += len(folded(expected))
        lines.append(
            f"| {name} | {character_error_rate(got, expected):.3f} | {', '.join(case.statuses)} | "
            f"{', '.join(got_statuses)} | {elapsed:.0f} |"
        )
    lines.append(f"| **all** | **{total_edits / max(total_chars, 1):.3f}** | | | |")
    lines += ["", "| refused case | expected error | got |", "| --- | --- | --- |"]
    for name, (build, code) in sorted(FAILING_CASES.items()):
        path = work / f"{name}.pdf"
        path.write_bytes(build())
        try:
            extract_text(path)
            outcome = "indexed (wrong)"
        except PdfError as exc:
            outcome = exc.code
        lines.append(f"| {name} | {code} | {outcome} |")
    return lines


def real_papers() -> list[str]:
    from indexing.pdf import extract_text

    papers = sorted(PAPERS_DIR.glob("*/*.pdf"))
    if not papers:
        return [f"No real papers under {PAPERS_DIR}."]
    lines = [
        "| paper | pages | statuses | columns (pages) | printed pages | lost-ligature words | s/page |",
        "| --- | ---: | --- | --- | --- | ---: | ---: |",
    ]
    for path in papers:
        started = time.perf_counter()
        text = extract_text(path)
        per_page = (time.perf_counter() - started) / len(text.pages)
        statuses = Counter(report.status for report in text.reports)
        columns = Counter(report.columns for report in text.reports)
        printed = [report.printed for report in text.reports if report.printed]
        printed_range = f"{printed[0]}\u2013{printed[-1]}" if printed else "none"
        lost = len(LOST_LIGATURES.findall(" ".join(text.pages).lower()))
        lines.append(
            f"| {path.parent.name}/{path.name} | {len(text.pages)} | "
            f"{', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))} | "
            f"{', '.join(f'{k}: {v}' for k, v in sorted(columns.items()))} | {printed_range} | {lost} | "
            f"{per_page:.2f} |"
        )
    return lines


def main() -> None:
    configure(BASE_DIR / ".data" / "bench-extraction")
    with tempfile.TemporaryDirectory() as work:
        cases = labelled_cases(Path(work))
    report = [
        "# Extraction quality",
        "",
        "`python -m benchmarks.extraction`. CER is Levenshtein edits over expected characters, whitespace",
        "folded; 0 is a perfect reading. Page statuses: ok, little_text (indexed), garbled and image_only",
        "(left out of the index and named in the paper's warning).",
        "",
        "## Labelled extraction set (tests/support/extraction_cases.py)",
        "",
        *cases,
        "",
        "## Real papers",
        "",
        'Lost-ligature words count words such as "rst" or "dierent" (a ligature glyph dropped).',
        "",
        *real_papers(),
        "",
    ]
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "extraction.md").write_text("\n".join(report))
    print("\n".join(report))


if __name__ == "__main__":
    main()
