"""Speed and memory: `python -m benchmarks [--quick]` (`./run bench`).

1. The demo project: indexing time per page of the demo cluster (`../shared/papers/consensus`, else
   the sample paper in `sample_papers/`; with --quick one paper), then retrieval time per question,
   cold (the first question reads the project's vectors out of the chunk index) and warm, with and
   without the embedding call.
2. Synthetic projects of 2, 10, 100 and 1,000 papers (60 chunks of ~150 words each, like the
   corpus' chunks; random unit vectors of 384 and 1,536 dimensions): retrieval latency p50/p95
   per question excluding the embedding call, dense and hybrid; the one-off cost of building the
   in-memory index; memory per 10k chunks.
   Then the cold start of such projects of 10, 100 and 1,000 papers (384 dimensions) stored in the
   chunk index: the time until a process's index of the project is ready (vectors and BM25), as
   it was (every chunk read, the texts tokenised and indexed by bm25s) and as it is (one pack per
   paper read, BM25 merged from the papers' stored statistics), and the cost of a pack at indexing.
3. The dense scan's throughput against this machine's memory bandwidth (numpy copy).
4. A common alternative on the same data in the same run: rank-bm25's BM25Okapi (pickled, as RAG
   tools keep it) plus a brute-force numpy scan, when rank-bm25 is installed.

Runs in `.data/bench` with its own embedded chunk index (stopped at the end); prints a report and
writes `benchmarks/results/speed.md` and `.json`.

`--load [--profile production] [--clients N --askers M --questions K]` runs the load benchmark
instead (benchmarks/load.py), `--ocr [--pages N --engine rapidocr|tesseract]` the OCR benchmark
(benchmarks/ocr.py), `--figures [--repeat N] [PDF ...]` what cropping figures adds to parsing
(benchmarks/figures.py).
"""

from __future__ import annotations

import argparse
import gc
import json
import pickle
import platform
import shutil
import statistics
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.environment import BASE_DIR, PAPERS_DIR, RESULTS_DIR, configure, stop_chunk_index

CHUNKS_PER_PAPER = 60
WORDS_PER_CHUNK = 150
VOCABULARY = 30_000
DEMO_QUESTIONS = [
    "How does Raft elect a leader?",
    "What is a Chubby session and how is it kept alive?",
    "How do Raft, Multi-Paxos and Chubby handle leader failure?",
    "What does ZooKeeper say about its relationship to Chubby?",
    "What is a distinguished learner in Paxos?",
    "election timeouts 150-300ms",
    "What guarantee does ZooKeeper provide that Chubby's lock API does not?",
    "How are ballots used in Multi-Paxos?",
    "What are ephemeral znodes?",
    "Why is Raft easier to understand than Paxos?",
]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def timed(function: Callable[[], Any], repeat: int) -> list[float]:
    """Wall-clock seconds of *repeat* calls."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return times


# --- 1. the demo project --------------------------------------------------------------------------


def demo_project(quick: bool) -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    from indexing.embeddings import embed_query
    from indexing.ingest import ingest_paths
    from indexing.management.commands.demo import demo_papers_dir
    from indexing.retrieval import matrix_cache, retrieve_passages

    # The demo's own choice: the shared consensus cluster, else the sample shipped with the code.
    folder = demo_papers_dir(None, defaults=[PAPERS_DIR / "consensus", BASE_DIR / "sample_papers"])
    paths = [min(folder.glob("*.pdf"))] if quick else [folder]
    user, _ = get_user_model().objects.get_or_create(username="bench")
    embed_query("warm up the embedding model")
    started = time.perf_counter()
    report = ingest_paths(user=user, paths=paths, project_name="demo")
    seconds = time.perf_counter() - started
    papers = list(report.project.papers.all())
    pages = sum(paper.page_count for paper in papers)
    chunks = sum(paper.chunk_count for paper in papers)
    result: dict[str, Any] = {
        "papers": len(papers),
        "pages": pages,
        "chunks": chunks,
        "indexing_seconds": seconds,
        "indexing_seconds_per_page": seconds / pages,
    }
    for mode in ("dense", "hybrid"):
        matrix_cache.clear()
        cold = timed(lambda mode=mode: retrieve_passages(papers=papers, question=DEMO_QUESTIONS[0], mode=mode), 1)
        warm = [
            t
            for question in DEMO_QUESTIONS
            for t in timed(lambda q=question, m=mode: retrieve_passages(papers=papers, question=q, mode=m), 3)
        ]
        embed = [t for question in DEMO_QUESTIONS for t in timed(lambda q=question: embed_query(q), 3)]
        result[mode] = {
            "cold_first_question_ms": 1000 * cold[0],
            "warm_p50_ms": 1000 * percentile(warm, 0.5),
            "warm_p95_ms": 1000 * percentile(warm, 0.95),
            "embedding_p50_ms": 1000 * percentile(embed, 0.5),
        }
    return result


# --- 2. synthetic projects ------------------------------------------------------------------------


def synthetic_matrix(papers: int, dimension: int, rng: np.random.Generator) -> Any:
    """Chunks of *papers* papers with Zipf-distributed words and random unit vectors."""
    from indexing.store import ChunkMatrix

    n = papers * CHUNKS_PER_PAPER
    ranks = np.minimum(rng.zipf(1.1, size=n * WORDS_PER_CHUNK), VOCABULARY) - 1
    words = np.array([f"w{i}" for i in range(VOCABULARY)])[ranks].reshape(n, WORDS_PER_CHUNK)
    chunks = [
        {
            "paperId": row // CHUNKS_PER_PAPER + 1,
            "chunkIndex": row % CHUNKS_PER_PAPER,
            "pageNumber": 1 + (row % CHUNKS_PER_PAPER) // 4,
            "text": " ".join(words[row]),
            "contextualBlurb": f'From "Paper {row // CHUNKS_PER_PAPER + 1}"',
            "indexVersion": "v1",
            "paperSha256": f"sha-{row // CHUNKS_PER_PAPER + 1}",
            "embeddingModel": "synthetic",
        }
        for row in range(n)
    ]
    embeddings = rng.standard_normal((n, dimension), dtype=np.float32)
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    return ChunkMatrix(chunks=chunks, embeddings=embeddings)


def synthetic_projects(sizes: list[int], dimensions: list[int], questions: int) -> list[dict[str, Any]]:
    from indexing.embeddings import configured_model_name
    from indexing.retrieval import matrix_cache, number_references, rank_hits, select_passages
    from indexing.store import PaperVersion

    rng = np.random.default_rng(0)
    rows = []
    for dimension in dimensions:
        for papers in sizes:
            matrix_cache.clear()
            gc.collect()
            matrix = synthetic_matrix(papers, dimension, rng)
            versions = {paper_id: PaperVersion("v1", f"sha-{paper_id}") for paper_id in range(1, papers + 1)}
            started = time.perf_counter()
            index = matrix_cache.prime(versions, configured_model_name(), matrix)
            _ = index.lexical
            build = time.perf_counter() - started
            queries = rng.standard_normal((questions, dimension), dtype=np.float32)
            queries /= np.linalg.norm(queries, axis=1, keepdims=True)
            texts = [" ".join(f"w{w}" for w in rng.integers(0, 2000, size=6)) for _ in range(questions)]
            limit = min(max(15 * 4, 5 * papers * 2), 200)
            row: dict[str, Any] = {
                "papers": papers,
                "chunks": len(matrix.chunks),
                "dimension": dimension,
                "build_index_s": build,
            }
            for mode in ("dense", "hybrid"):

                def ask(
                    i: int,
                    mode: str = mode,
                    texts: list[str] = texts,
                    versions: dict[int, PaperVersion] = versions,
                    limit: int = limit,
                    queries: np.ndarray = queries,
                ) -> None:
                    hits, _ = rank_hits(
                        question=texts[i],
                        versions=versions,
                        searched=set(versions),
                        mode=mode,
                        limit=limit,
                        query_embedding=queries[i],
                    )
                    number_references(
                        select_passages(hits, min_relevance=-1.0, min_lexical_coverage=0.0, top_k=15, per_paper=5),
                        {},
                    )

                ask(0)
                latencies = [t for i in range(questions) for t in timed(lambda i=i: ask(i), 1)]
                row[f"{mode}_p50_ms"] = 1000 * percentile(latencies, 0.5)
                row[f"{mode}_p95_ms"] = 1000 * percentile(latencies, 0.95)
            rows.append(row)
            print(f"  {papers:>5} papers, {dimension}-d: {row}", file=sys.stderr, flush=True)
            del matrix, index
            matrix_cache.clear()
    return rows


def cold_project_index(sizes: list[int], dimension: int, repeat: int) -> list[dict[str, Any]]:
    """Seconds until a project's index (vectors and BM25) is ready in a process that has none, for
    synthetic projects of *sizes* papers written to the chunk index (chunks and packs, as indexing
    writes them): `rebuild` reads every chunk, tokenises the texts and indexes them with bm25s (as
    before packs), `merge` reads one pack per paper and merges their statistics (`ProjectIndex` as
    retrieval builds it now). Run in
    this process with its index cache cleared (imports done, Mongo connection open); best of
    *repeat*. Also the time per paper to make and store a pack at indexing."""
    import bm25s

    from indexing import store
    from indexing.lexical import LexicalIndex, document_terms
    from indexing.retrieval import ProjectIndex, matrix_cache

    rng = np.random.default_rng(4)
    model = "synthetic"
    matrix = synthetic_matrix(max(sizes), dimension, rng)
    store.ensure_indexes()
    rows = []
    written = 0
    pack_seconds = 0.0
    for papers in sorted(sizes):
        for paper in range(written, papers):
            window = range(paper * CHUNKS_PER_PAPER, (paper + 1) * CHUNKS_PER_PAPER)
            records = [
                store.ChunkRecord(
                    paper_id=matrix.chunks[i]["paperId"],
                    paper_sha256=matrix.chunks[i]["paperSha256"],
                    chunk_index=matrix.chunks[i]["chunkIndex"],
                    page_number=matrix.chunks[i]["pageNumber"],
                    text=matrix.chunks[i]["text"],
                    contextual_blurb=matrix.chunks[i]["contextualBlurb"],
                    embedding=matrix.embeddings[i],
                    embedding_model=model,
                    index_version="v1",
                )
                for i in window
            ]
            store.write_chunks(records)
            started = time.perf_counter()
            store.write_pack(store.PaperPack.of_records(records))
            pack_seconds += time.perf_counter() - started
        written = max(written, papers)
        versions = {paper_id: store.PaperVersion("v1", f"sha-{paper_id}") for paper_id in range(1, papers + 1)}

        def rebuild(versions: dict[int, store.PaperVersion] = versions) -> tuple[float, float, ProjectIndex]:
            started = time.perf_counter()
            index = ProjectIndex(store.load_chunks(versions, embedding_model=model))
            read = time.perf_counter()
            # BM25 as it was built before packs: every text tokenised, indexed by bm25s.
            corpus = [document_terms(chunk) for chunk in index.chunks]
            bm25s.BM25().index(corpus, show_progress=False)
            Counter(term for terms in corpus for term in set(terms))  # the document frequencies it kept
            return read - started, time.perf_counter() - read, index

        def merge(versions: dict[int, store.PaperVersion] = versions) -> tuple[float, float, ProjectIndex]:
            matrix_cache.clear()
            started = time.perf_counter()
            index = matrix_cache.get(versions, model)
            read = time.perf_counter()
            _ = index.lexical
            return read - started, time.perf_counter() - read, index

        timings: dict[str, list[tuple[float, float]]] = {"rebuild": [], "merge": []}
        for _ in range(repeat):
            for name, build in (("rebuild", rebuild), ("merge", merge)):
                matrix_cache.clear()
                gc.collect()
                read, lexical, _ = build()
                timings[name].append((read, lexical))
        # The two ways give the same index: same rows, vectors and BM25 scores.
        _, _, rebuilt = rebuild()
        _, _, merged = merge()
        assert rebuilt.chunks == merged.chunks and np.array_equal(rebuilt.embeddings, merged.embeddings)
        tokenised = LexicalIndex(rebuilt.chunks)
        for words in ("w1 w7 w400", "w20 w1999", "w3"):
            assert tokenised.search(words, limit=50) == merged.lexical.search(words, limit=50)
        del tokenised
        del rebuilt, merged
        matrix_cache.clear()
        row: dict[str, Any] = {"papers": papers, "chunks": papers * CHUNKS_PER_PAPER, "dimension": dimension}
        for name, runs in timings.items():
            read, lexical = min(runs, key=sum)
            row[f"{name}_read_s"], row[f"{name}_bm25_s"], row[f"{name}_total_s"] = read, lexical, read + lexical
        row["speedup"] = row["rebuild_total_s"] / row["merge_total_s"]
        row["pack_ms_per_paper"] = 1000 * pack_seconds / written
        rows.append(row)
        print(f"  cold index {papers:>5} papers: {row}", file=sys.stderr, flush=True)
    return rows


def memory_per_10k_chunks(dimension: int) -> dict[str, float]:
    """Bytes held by a 10k-chunk project index: chunk records, vectors, BM25 (tracemalloc)."""
    from indexing.retrieval import ProjectIndex

    rng = np.random.default_rng(1)
    gc.collect()
    tracemalloc.start()
    matrix = synthetic_matrix(10_000 // CHUNKS_PER_PAPER + 1, dimension, rng)
    after_records = tracemalloc.get_traced_memory()[0]
    index = ProjectIndex(matrix)
    _ = index.lexical
    total = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    scale = 10_000 / len(matrix.chunks)
    vectors = matrix.embeddings.nbytes
    return {
        "dimension": dimension,
        "total_mb": total * scale / 2**20,
        "vectors_mb": vectors * scale / 2**20,
        "records_mb": (after_records - vectors) * scale / 2**20,
        "bm25_mb": (total - after_records) * scale / 2**20,
    }


# --- 3. scan throughput against memory bandwidth --------------------------------------------------


def bandwidth() -> dict[str, float]:
    rng = np.random.default_rng(2)
    source = np.ones(64 * 2**20, dtype=np.float32)  # 256 MiB, far beyond the caches
    target = np.empty_like(source)
    copy = min(timed(lambda: np.copyto(target, source), 5))
    result = {"memory_copy_gb_s": 2 * source.nbytes / copy / 1e9}  # read + write
    for dimension in (384, 1536):
        matrix = rng.standard_normal((10_000, dimension), dtype=np.float32)
        query = rng.standard_normal(dimension, dtype=np.float32)
        scan = min(timed(lambda m=matrix, q=query: m @ q, 50))  # best case: least disturbed by neighbours
        result[f"scan_10k_{dimension}d_ms"] = 1000 * scan
        result[f"scan_10k_{dimension}d_gb_s"] = matrix.nbytes / scan / 1e9
    big = rng.standard_normal((100_000, 1536), dtype=np.float32)
    query = rng.standard_normal(1536, dtype=np.float32)
    scan = min(timed(lambda: big @ query, 10))
    result["scan_100k_1536d_ms"] = 1000 * scan
    result["scan_100k_1536d_gb_s"] = big.nbytes / scan / 1e9
    result["scan_100k_share_of_bandwidth"] = result["scan_100k_1536d_gb_s"] / result["memory_copy_gb_s"]
    return result


# --- 4. the alternative pipeline ------------------------------------------------------------------


def alternative(sizes: list[int], dimension: int, questions: int) -> list[dict[str, Any]]:
    """rank-bm25 (BM25Okapi over whitespace tokens, pickled) + brute-force numpy, on the same
    synthetic data: per-question latency with the pickle held in memory and with it loaded per
    question (as a script that answers one question per run does)."""
    try:
        from rank_bm25 import BM25Okapi
    except ImportError:
        return []
    rng = np.random.default_rng(3)
    rows = []
    for papers in sizes:
        matrix = synthetic_matrix(papers, dimension, rng)
        started = time.perf_counter()
        bm25 = BM25Okapi([chunk["text"].split() for chunk in matrix.chunks])
        build = time.perf_counter() - started
        blob = pickle.dumps(bm25)
        queries = rng.standard_normal((questions, dimension), dtype=np.float32)
        texts = [[f"w{w}" for w in rng.integers(0, 2000, size=6)] for _ in range(questions)]

        def ask(
            i: int,
            bm25: Any = bm25,
            embeddings: np.ndarray = matrix.embeddings,
            queries: np.ndarray = queries,
            texts: list[list[str]] = texts,
        ) -> None:
            dense = embeddings @ queries[i]
            lexical = bm25.get_scores(texts[i])
            for scores in (dense, lexical):
                np.argsort(-scores)[:60]

        latencies = [t for i in range(questions) for t in timed(lambda i=i: ask(i), 1)]
        unpickle = statistics.median(timed(lambda b=blob: pickle.loads(b), 3))
        rows.append(
            {
                "papers": papers,
                "chunks": len(matrix.chunks),
                "build_s": build,
                "p50_ms": 1000 * percentile(latencies, 0.5),
                "p95_ms": 1000 * percentile(latencies, 0.95),
                "unpickle_ms": 1000 * unpickle,
                "pickle_mb": len(blob) / 2**20,
            }
        )
        print(f"  alternative {papers:>5} papers: {rows[-1]}", file=sys.stderr, flush=True)
    return rows


# --- report ---------------------------------------------------------------------------------------


def render(results: dict[str, Any]) -> str:
    demo = results["demo"]
    lines = [
        f"Machine: {results['machine']}. Mode: {'quick' if results['quick'] else 'full'}.",
        "",
        "## Demo project",
        f"{demo['papers']} papers, {demo['pages']} pages, {demo['chunks']} chunks: indexed in "
        f"{demo['indexing_seconds']:.1f} s, {demo['indexing_seconds_per_page']:.2f} s per page.",
        "",
        "| mode | first question (cold) ms | warm p50 ms | warm p95 ms | of which embedding p50 ms |",
        "|---|---|---|---|---|",
    ]
    for mode in ("dense", "hybrid"):
        row = demo[mode]
        lines.append(
            f"| {mode} | {row['cold_first_question_ms']:.0f} | {row['warm_p50_ms']:.1f} | {row['warm_p95_ms']:.1f} | "
            f"{row['embedding_p50_ms']:.1f} |"
        )
    lines += [
        "",
        "## Synthetic projects: retrieval per question, embedding call excluded",
        f"{CHUNKS_PER_PAPER} chunks of {WORDS_PER_CHUNK} words per paper.",
        "",
        "| papers | chunks | dim | index build s (once) | dense p50 ms | dense p95 ms | hybrid p50 ms "
        "| hybrid p95 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in results["synthetic"]:
        lines.append(
            f"| {row['papers']} | {row['chunks']} | {row['dimension']} | {row['build_index_s']:.2f} | "
            f"{row['dense_p50_ms']:.2f} | {row['dense_p95_ms']:.2f} | {row['hybrid_p50_ms']:.2f} | "
            f"{row['hybrid_p95_ms']:.2f} |"
        )
    lines += [
        "",
        "## Cold project index: a process's first question, index read and built",
        f"The synthetic projects ({CHUNKS_PER_PAPER} chunks of {WORDS_PER_CHUNK} words per paper, 384-d), stored "
        "in the embedded chunk index. Rebuild (before packs): read every chunk with its vector "
        "(`store.load_chunks`), tokenise the texts, index them with bm25s. Merge: read one pack per paper, "
        "merge the papers' BM25 statistics. Timed in the benchmark process with its index cache cleared; best "
        "of the runs. The merged index has the same rows, vectors and BM25 scores as one tokenised from the "
        "texts (checked). Pack at indexing: tokenise a paper's chunks and store its pack.",
        "",
        "| papers | chunks | rebuild: read s | rebuild: BM25 s | rebuild total s | merge: read s | merge: BM25 s "
        "| merge total s | speed-up | pack at indexing ms/paper |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in results.get("cold_index", []):
        lines.append(
            f"| {row['papers']} | {row['chunks']} | {row['rebuild_read_s']:.2f} | {row['rebuild_bm25_s']:.2f} | "
            f"{row['rebuild_total_s']:.2f} | {row['merge_read_s']:.2f} | {row['merge_bm25_s']:.2f} | "
            f"{row['merge_total_s']:.2f} | {row['speedup']:.0f}x | {row['pack_ms_per_paper']:.0f} |"
        )
    lines += ["", "## Memory per 10k chunks", "", "| dim | total MB | vectors MB | records MB | BM25 MB |"]
    lines.append("|---|---|---|---|---|")
    for row in results["memory"]:
        lines.append(
            f"| {row['dimension']} | {row['total_mb']:.1f} | {row['vectors_mb']:.1f} | {row['records_mb']:.1f} | "
            f"{row['bm25_mb']:.1f} |"
        )
    bw = results["bandwidth"]
    lines += [
        "",
        "## Dense scan against memory bandwidth",
        f"numpy copy: {bw['memory_copy_gb_s']:.1f} GB/s (read + write). Scan of 10kx384: "
        f"{bw['scan_10k_384d_ms']:.2f} ms; 10kx1536: {bw['scan_10k_1536d_ms']:.2f} ms "
        f"({bw['scan_10k_1536d_gb_s']:.1f} GB/s, cache-resident in part); 100kx1536: "
        f"{bw['scan_100k_1536d_ms']:.1f} ms ({bw['scan_100k_1536d_gb_s']:.1f} GB/s, "
        f"{100 * bw['scan_100k_share_of_bandwidth']:.0f}% of the copy bandwidth).",
    ]
    if results["alternative"]:
        lines += [
            "",
            "## Alternative pipeline on the same data: rank-bm25 BM25Okapi (pickled) + brute-force numpy",
            "",
            "| papers | chunks | build s | p50 ms | p95 ms | unpickle ms (per question if not kept) | pickle MB |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in results["alternative"]:
            lines.append(
                f"| {row['papers']} | {row['chunks']} | {row['build_s']:.2f} | {row['p50_ms']:.2f} | "
                f"{row['p95_ms']:.2f} | {row['unpickle_ms']:.1f} | {row['pickle_mb']:.1f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if "--load" in argv:
        from benchmarks.load import main as load

        load([arg for arg in argv if arg != "--load"])
        return
    if "--ocr" in argv:
        from benchmarks.ocr import main as ocr

        ocr([arg for arg in argv if arg != "--ocr"])
        return
    if "--figures" in argv:
        from benchmarks.figures import main as figures

        figures([arg for arg in argv if arg != "--figures"])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one demo paper, projects up to 100 papers, 384-d")
    parser.add_argument("--load", action="store_true", help="the load benchmark instead (see --load --help)")
    parser.add_argument("--ocr", action="store_true", help="the OCR benchmark instead (see --ocr --help)")
    parser.add_argument("--figures", action="store_true", help="the figure cropping benchmark (see --figures --help)")
    args = parser.parse_args(argv)
    data_dir = BASE_DIR / ".data" / "bench"
    shutil.rmtree(data_dir, ignore_errors=True)  # indexing is what is measured: start empty
    configure(data_dir)
    sizes = [2, 10, 100] if args.quick else [2, 10, 100, 1000]
    dimensions = [384] if args.quick else [384, 1536]
    questions = 20 if args.quick else 50
    results: dict[str, Any] = {"machine": f"{platform.machine()}, {platform.python_version()}", "quick": args.quick}
    try:
        print("Demo project…", file=sys.stderr, flush=True)
        results["demo"] = demo_project(args.quick)
        print("Cold project index…", file=sys.stderr, flush=True)
        results["cold_index"] = cold_project_index(
            [10, 100] if args.quick else [10, 100, 1000], 384, repeat=1 if args.quick else 2
        )
    finally:
        stop_chunk_index()
    print("Synthetic projects…", file=sys.stderr, flush=True)
    results["synthetic"] = synthetic_projects(sizes, dimensions, questions)
    results["memory"] = [memory_per_10k_chunks(d) for d in dimensions]
    results["bandwidth"] = bandwidth()
    results["alternative"] = alternative(sizes, dimensions[-1], questions)
    report = render(results)
    print(report)
    RESULTS_DIR.mkdir(exist_ok=True)
    name = "speed-quick" if args.quick else "speed"
    (RESULTS_DIR / f"{name}.md").write_text(
        f"# Speed (last run of `./run bench{' --quick' * args.quick}`)\n\n{report}\n"
    )
    (RESULTS_DIR / f"{name}.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
