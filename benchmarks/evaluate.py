"""Retrieval quality on a labelled question set: `python -m benchmarks.evaluate` (`./run eval`).

The corpus (`../shared/papers/`, read in place) is ingested once into one project under
`.data/eval` (its own SQLite file, PDFs and embedded chunk index) and reused by later runs; pass
`--reindex` after changing chunking or embeddings. Every question in `benchmarks/questions.json`
names its gold passages as (paper file, physical 1-based page) pairs.

Reported per retrieval mode (dense, lexical, hybrid, and hybrid without the per-paper cap):

- recall@K: the share of gold pages among the pages of the top-K references (K = the top-K budget,
  `PROJECT_CHAT_TOP_K`), averaged over questions;
- MRR: mean over questions of 1 / rank of the first reference on a gold page (0 if none);
- cross-paper coverage: the share of cross-paper questions whose references include every gold paper;
- off-topic refusals: the share of off-topic questions that retrieve nothing;
- citation precision: over every `“sentence” [N]` the `ask` answer (extractive: no chat model) cites,
  the share whose cited page's extracted text contains the sentence.

Prints a table and writes `benchmarks/results/evaluation.md` and `.json`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.environment import BASE_DIR, PAPERS_DIR, RESULTS_DIR, configure, stop_chunk_index

QUESTIONS_FILE = Path(__file__).resolve().parent / "questions.json"
MODES = {
    "dense": {"mode": "dense"},
    "lexical": {"mode": "lexical"},
    "hybrid": {"mode": "hybrid"},
    "hybrid, no per-paper cap": {"mode": "hybrid", "uncapped": True},
}
_QUOTE = re.compile(r"“(.+?)” \[(\d+)\]")


@dataclass(frozen=True)
class Question:
    id: str
    kind: str  # fact, exact, paraphrase, cross, offtopic
    text: str
    gold: tuple[tuple[str, int], ...]  # (paper file relative to PAPERS_DIR, physical page)
    evidence: tuple[tuple[str, str], ...] = ()  # (paper file, words printed on one of its gold pages)

    @property
    def gold_papers(self) -> set[str]:
        return {paper for paper, _ in self.gold}


def load_questions(path: Path = QUESTIONS_FILE) -> list[Question]:
    """The labelled set: a JSON list of `{id, kind, question, gold: [{paper, pages: [int], evidence:
    [str]}]}`; each evidence string is printed on one of that paper's gold pages (`check_gold`)."""
    return [
        Question(
            id=item["id"],
            kind=item["kind"],
            text=item["question"],
            gold=tuple((g["paper"], page) for g in item.get("gold", []) for page in g["pages"]),
            evidence=tuple((g["paper"], words) for g in item.get("gold", []) for words in g.get("evidence", [])),
        )
        for item in json.loads(path.read_text())
    ]


def ingest_corpus(*, reindex: bool) -> Any:
    """The evaluation project holding every paper of the corpus, indexed (reused across runs)."""
    from django.contrib.auth import get_user_model

    from indexing.ingest import ingest_paths
    from indexing.services import index_paper

    user, _ = get_user_model().objects.get_or_create(username="eval")
    started = time.perf_counter()

    def on_file(path: Path, number: int, total: int) -> None:
        print(f"  [{number}/{total}] {path.relative_to(PAPERS_DIR)}", file=sys.stderr, flush=True)

    report = ingest_paths(user=user, paths=[PAPERS_DIR], project_name="corpus", on_file=on_file)
    if report.failed:
        raise SystemExit(f"Ingest failed: {report.failed}")
    if reindex:
        from django.conf import settings

        (Path(settings.DATA_DIR) / "pages.json").unlink(missing_ok=True)  # extraction may have changed
        for paper in report.skipped:
            index_paper(paper_id=paper.pk)
    if report.indexed or reindex:
        print(f"  indexed in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return report.project


def _fold(text: str) -> str:
    """Letters, digits and punctuation only: white space and hyphens (which line breaks add and
    dehyphenation removes) are dropped, and quoted "[ref N]" markers read as the page's "[N]"."""
    return re.sub(r"[\s\-\u00ad\u2060]+", "", re.sub(r"\[ref ([^\]]+)\]", r"[\1]", text))


def corpus_pages(papers: list[Any]) -> tuple[dict[int, str], dict[int, list[str]]]:
    """(paper id -> file relative to PAPERS_DIR, paper id -> its pages' extracted text, folded).

    The text is the app's own extraction (`indexing.pdf.extract_text`), cached in the data folder
    by file hash because pdfplumber takes seconds a paper.
    """
    import hashlib

    from django.conf import settings

    from indexing.pdf import extract_text

    cache_file = Path(settings.DATA_DIR) / "pages.json"
    cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    by_sha = {paper.sha256: paper for paper in papers}
    file_of: dict[int, str] = {}
    pages: dict[int, list[str]] = {}
    for path in sorted(PAPERS_DIR.rglob("*.pdf")):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        paper = by_sha.get(digest)
        if paper is None:
            continue
        file_of[paper.pk] = str(path.relative_to(PAPERS_DIR))
        if digest not in cache:
            cache[digest] = extract_text(path).pages
        pages[paper.pk] = [_fold(text) for text in cache[digest]]
    cache_file.write_text(json.dumps(cache))
    return file_of, pages


def check_gold(questions: list[Question], file_of: dict[int, str], pages: dict[int, list[str]]) -> list[str]:
    """Problems with the labels: evidence words not printed on any gold page of their paper."""
    text_of = {file_of[paper_id]: texts for paper_id, texts in pages.items()}
    problems = []
    for question in questions:
        for paper, words in question.evidence:
            gold_pages = [page for gold_paper, page in question.gold if gold_paper == paper]
            texts = text_of.get(paper, [])
            if not any(page <= len(texts) and _fold(words) in texts[page - 1] for page in gold_pages):
                problems.append(f"{question.id}: {words!r} is not on {paper} pages {gold_pages}")
    return problems


def evaluate(project: Any, questions: list[Question], *, with_answers: bool) -> dict[str, dict[str, float]]:
    """Run every question in every mode; return metrics per mode (see the module docstring).
    Raises SystemExit when a gold label does not match the extracted text."""
    from django.conf import settings
    from django.test.utils import override_settings

    from chat.services import answer_question
    from indexing.retrieval import retrieve_passages

    papers = list(project.papers.all())
    file_of, page_texts = corpus_pages(papers)
    problems = check_gold(questions, file_of, page_texts)
    if problems:
        raise SystemExit("Gold labels do not match the papers:\n" + "\n".join(problems))
    top_k = settings.PROJECT_CHAT_TOP_K
    results: dict[str, dict[str, float]] = {}
    for label, spec in MODES.items():
        per_paper = top_k if spec.get("uncapped") else None
        recall, reciprocal, covered, refused, timings = [], [], [], [], []
        cited = correct = 0
        for question in questions:
            started = time.perf_counter()
            retrieval = retrieve_passages(papers=papers, question=question.text, mode=spec["mode"], per_paper=per_paper)
            timings.append(time.perf_counter() - started)
            found = [(file_of.get(ref.paper_id, "?"), ref.page) for ref in retrieval.references]
            if question.kind == "offtopic":
                refused.append(not found)
                continue
            recall.append(len(set(question.gold) & set(found)) / len(set(question.gold)))
            rank = next((i for i, hit in enumerate(found, start=1) if hit in question.gold), None)
            reciprocal.append(1 / rank if rank else 0.0)
            if question.kind == "cross":
                covered.append(question.gold_papers <= {paper for paper, _ in found})
        if with_answers:
            overrides: dict[str, Any] = {"RETRIEVAL_MODE": spec["mode"]}
            if per_paper is not None:
                overrides["PROJECT_CHAT_MAX_CHUNKS_PER_PAPER"] = per_paper
            with override_settings(**overrides):
                for question in questions:
                    answer = answer_question(project=project, user=project.owner, question=question.text)
                    references = {ref.n: ref for ref in answer.references}
                    for sentence, n in _QUOTE.findall(answer.text):
                        ref = references[int(n)]
                        cited += 1
                        correct += _fold(sentence) in page_texts[ref.paper_id][ref.page - 1]
        timings.sort()
        results[label] = {
            "recall_at_k": _mean(recall),
            "mrr": _mean(reciprocal),
            "cross_paper_coverage": _mean(covered),
            "offtopic_refused": _mean(refused),
            "citation_precision": correct / cited if cited else float("nan"),
            "citations": cited,
            "retrieval_ms_p50": 1000 * timings[len(timings) // 2],
        }
    return results


def _mean(values: list[Any]) -> float:
    return sum(values) / len(values) if values else float("nan")


def render(results: dict[str, dict[str, float]], questions: list[Question], top_k: int) -> str:
    kinds: dict[str, int] = {}
    for question in questions:
        kinds[question.kind] = kinds.get(question.kind, 0) + 1
    lines = [
        f"Questions: {len(questions)} ({', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items()))}); K = {top_k}.",
        "",
        f"| mode | recall@{top_k} | MRR | cross-paper coverage | off-topic refused | citation precision "
        "(citations) | retrieval p50 ms (with embedding) |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, row in results.items():
        lines.append(
            f"| {label} | {row['recall_at_k']:.3f} | {row['mrr']:.3f} | {row['cross_paper_coverage']:.3f} | "
            f"{row['offtopic_refused']:.3f} | {row['citation_precision']:.3f} ({row['citations']}) | "
            f"{row['retrieval_ms_p50']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reindex", action="store_true", help="re-index every paper (after chunking changes)")
    parser.add_argument("--no-answers", action="store_true", help="skip the ask answers (citation precision)")
    parser.add_argument("--ingest-only", action="store_true", help="build the evaluation project and stop")
    parser.add_argument("--keep-server", action="store_true", help="leave the embedded chunk index running")
    args = parser.parse_args(argv)
    configure(BASE_DIR / ".data" / "eval")
    from django.conf import settings

    try:
        project = ingest_corpus(reindex=args.reindex)
        if args.ingest_only:
            return
        questions = load_questions()
        results = evaluate(project, questions, with_answers=not args.no_answers)
    finally:
        if not args.keep_server:
            stop_chunk_index()
    table = render(results, questions, settings.PROJECT_CHAT_TOP_K)
    print(table)
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "evaluation.md").write_text(
        "# Retrieval evaluation (last run of `./run eval`)\n\nMetrics are defined in `benchmarks/evaluate.py`; "
        "the questions and their gold pages are in `benchmarks/questions.json`.\n\n" + table + "\n"
    )
    (RESULTS_DIR / "evaluation.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
