"""Metadata extraction accuracy on the hand-written test set: `python -m benchmarks.metadata`
(`./run eval --metadata` runs only this; a full `./run eval` runs it too).

`benchmarks/metadata_truth.json` holds, for each real paper of `../shared/papers/`, its title,
authors in order, year and venue as read by hand from page 1. Each PDF is parsed as indexing parses
it (`indexing.pdf.extract_text`, `extract_metadata`: no database, no chunk index), and compared:

- title exact: equal after NFKC, plain quotes and dashes, case folding and whitespace collapsing;
- authors F1: precision and recall of the extracted names against the true ones, a name matching
  when surname and first initial agree (`papers.metadata.same_person`: "Daniel Weld" is "Daniel S.
  Weld"), averaged over papers;
- authors exact: the same names in the same order;
- first author: the first extracted name is the first true author;
- year: equal;
- venue: an extracted venue containing one of the paper's `venue_aliases` ("SOSP"), or both empty
  when the file states no venue (a draft).

Targets (issue 14): first author and year >= 95%, title exact >= 90%. Writes
`benchmarks/results/metadata.md` and `.json`.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from benchmarks.environment import BASE_DIR, PAPERS_DIR, RESULTS_DIR, configure

TRUTH = Path(__file__).resolve().parent / "metadata_truth.json"
TARGETS = {"title_exact": 0.90, "first_author": 0.95, "year": 0.95}
METRICS = ("title_exact", "authors_f1", "authors_exact", "first_author", "year", "venue")


def authors_f1(found: list[str], truth: list[str]) -> float:
    """F1 of *found* against *truth* names, each true name matched at most once (`same_person`)."""
    from papers.metadata import same_person

    if not found and not truth:
        return 1.0
    unmatched = list(truth)
    hits = 0
    for name in found:
        match = next((t for t in unmatched if same_person(name, t) and same_person(t, name)), None)
        if match is not None:
            unmatched.remove(match)
            hits += 1
    if not hits:
        return 0.0
    precision, recall = hits / len(found), hits / len(truth)
    return 2 * precision * recall / (precision + recall)


def score_paper(found: dict[str, Any], truth: dict[str, Any]) -> dict[str, float]:
    """The metrics of one paper (see the module docstring); *found* has title, authors, year, venue."""
    from indexing.metadata import fold
    from papers.metadata import same_person

    authors: list[str] = found["authors"]
    venue = fold(found["venue"])
    aliases = [fold(alias) for alias in truth["venue_aliases"]]
    return {
        "title_exact": float(fold(found["title"]) == fold(truth["title"])),
        "authors_f1": authors_f1(authors, truth["authors"]),
        "authors_exact": float(
            len(authors) == len(truth["authors"])
            and all(same_person(a, t) for a, t in zip(authors, truth["authors"], strict=True))
        ),
        "first_author": float(bool(authors) and same_person(authors[0], truth["authors"][0])),
        "year": float(found["year"] == truth["year"]),
        "venue": float(any(alias in venue for alias in aliases) if aliases else not venue),
    }


def evaluate_metadata(papers_dir: Path = PAPERS_DIR) -> dict[str, Any]:
    """Extract every test-set paper's metadata and score it: `{"papers": [...], "summary": {...}}`."""
    from indexing.pdf import extract_metadata, extract_text

    truth = json.loads(TRUTH.read_text())["papers"]
    rows = []
    started = time.perf_counter()
    for entry in truth:
        metadata = extract_metadata(extract_text(papers_dir / entry["file"]))
        found = {
            "title": metadata.title,
            "authors": list(metadata.authors),
            "year": metadata.year,
            "venue": metadata.venue,
            "doi": metadata.doi,
            "arxiv_id": metadata.arxiv_id,
        }
        rows.append({"file": entry["file"], "found": found, "scores": score_paper(found, entry)})
    summary = {metric: sum(row["scores"][metric] for row in rows) / len(rows) for metric in METRICS}
    return {"papers": rows, "summary": summary, "seconds": round(time.perf_counter() - started, 1)}


def render(results: dict[str, Any]) -> str:
    summary = results["summary"]
    lines = [
        f"Papers: {len(results['papers'])} (`benchmarks/metadata_truth.json`), {results['seconds']} s.",
        "",
        "| field | accuracy | target |",
        "|---|---|---|",
    ]
    for metric in METRICS:
        target = f">= {TARGETS[metric]:.0%}" if metric in TARGETS else ""
        lines.append(f"| {metric.replace('_', ' ')} | {summary[metric]:.1%} | {target} |")
    lines += ["", "| paper | title | authors F1 | first author | year | venue found |", "|---|---|---|---|---|---|"]
    for row in results["papers"]:
        scores, found = row["scores"], row["found"]
        lines.append(
            f"| {row['file']} | {'ok' if scores['title_exact'] else found['title']} | {scores['authors_f1']:.2f} "
            f"| {'ok' if scores['first_author'] else ', '.join(found['authors'][:1]) or '-'} "
            f"| {found['year'] if not scores['year'] else 'ok'} | {found['venue'] or '-'}"
            f"{'' if scores['venue'] else ' (wrong)'} |"
        )
    return "\n".join(lines)


def write_results(results: dict[str, Any]) -> None:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "metadata.md").write_text(
        "# Metadata extraction accuracy (last run of `./run eval --metadata`)\n\nMetrics are defined in "
        "`benchmarks/metadata.py`.\n\n" + render(results) + "\n"
    )
    (RESULTS_DIR / "metadata.json").write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None, *, configured: bool = False) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    if not PAPERS_DIR.is_dir():
        raise SystemExit(f"the papers of the metadata test set are not at {PAPERS_DIR}: set PAPERS_DIR")
    if not configured:
        configure(BASE_DIR / ".data" / "eval")
    results = evaluate_metadata()
    write_results(results)
    print(render(results))
    return results


if __name__ == "__main__":
    main()
