"""Consistency of the chunk index with the papers: the checks and repairs of `check_index`.

`check_index` compares the `paperchunks` collection with the `Paper` rows and reports, per kind,
what is wrong; with `fix=True` it repairs what is safe to repair:

- unreachable: the chunk index does not answer (nothing else is checked);
- other_database: the chunk index is bound to another Django database (`store.check_binding`;
  nothing else is checked, nothing is fixed: point this database at its own index);
- missing_indexes: required Mongo indexes absent (fix: create them);
- vector_index: on Atlas, the vector search index is absent or has the wrong dimension or filter
  fields (fix: create or redefine it);
- orphans: chunks whose paper row no longer exists (fix: delete them);
- hash_mismatch: chunks stored under an existing paper's id but made from another file (their
  content hash is not the paper's): another database's paper of the same id, or chunks written
  before records carried the hash. Retrieval never reads them (fix: delete them; a ready paper left
  without chunks is then queued for a rebuild by missing_chunks);
- missing_chunks: papers `ready` for the configured model without their chunks in the store, or
  with a count other than `Paper.chunk_count` (fix: queue a rebuild);
- other_model: papers whose current chunks are of a model other than the configured one. Such
  chunks are deleted only where the same index version also holds the configured model's chunks
  (they are dead weight there); a paper whose only chunks are of another model keeps them (they
  are what it has, and serve again if the model is switched back) and is queued for a rebuild with
  the configured model, whose completion replaces them;
- stuck: papers `indexing` with no live claim (`Paper.index_claimed_until` passed or unset) and
  no change for longer than a build may take (`stuck_after` seconds; default
  PDF_PARSE_TIMEOUT_SECONDS + 10 minutes). Workers pick up lapsed claims on their own
  (`indexing.tasks.watch_index_claim`); this catches papers with no worker watching them (fix:
  queue them again);
- orphan_files: stored PDFs no paper holds (fix: delete them; see `check_paper_files`);
- stale_versions: chunks of index versions other than the paper's current one and the one a live
  claim is writing, left by a build whose clean-up failed or whose worker died (fix: delete them);
- missing_packs: ready papers with their full set of chunks whose pack (`store.PaperPack`: the
  chunks, vectors and BM25 statistics a project index is read from) is missing, has parts missing,
  holds another number of chunks, or was made by another tokenizer version. Retrieval makes such a
  pack from the chunks when it first needs it, at the cost of reading every chunk (fix: make them
  now);
- stale_packs: packs no current paper version reads: of a paper that is gone, of another file, of
  an index version other than the current one and a live claim's, or of another tokenizer version
  (fix: delete them; the chunks stay).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from indexing import store
from indexing.embeddings import configured_model_name, get_embedder
from indexing.lexical import TOKENIZER_VERSION
from indexing.services import is_searchable, mark_for_reindex, pack_papers
from papers.models import Paper
from papers.storage import delete_files, orphan_files


@dataclass
class Finding:
    """One kind of problem: `details` are human-readable lines; `fixed` says whether a repair ran."""

    kind: str
    summary: str
    details: list[str] = field(default_factory=list)
    fixed: bool = False


@dataclass
class IndexHealth:
    """The outcome of `check_index`. `ok` is True when nothing is wrong (or everything was fixed)."""

    findings: list[Finding] = field(default_factory=list)
    papers: int = 0
    chunks: int = 0

    @property
    def ok(self) -> bool:
        return all(finding.fixed for finding in self.findings)

    def add(self, kind: str, summary: str, details: list[str] | None = None) -> Finding:
        finding = Finding(kind, summary, details or [])
        self.findings.append(finding)
        return finding


def check_index(*, fix: bool = False, stuck_after: float | None = None) -> IndexHealth:
    """Check the chunk index against the paper rows; with *fix*, repair what is safe (see the module
    docstring). Rebuilds are queued as tasks after commit (`mark_for_reindex`), not run here.
    *stuck_after* (seconds) is how long a paper may stay `indexing` unchanged; 0 when no worker
    runs, so any `indexing` paper is stuck.

    Never raises for an unreachable chunk index: that is reported as the finding `unreachable`.
    """
    health = IndexHealth()
    try:
        store.ping()
    except store.ChunkStoreError as exc:
        health.add("unreachable", exc.message)
        return health
    try:
        store.check_binding()
    except store.ChunkIndexBindingError as exc:
        health.add("other_database", exc.message)
        return health

    missing = store.missing_indexes()
    if missing:
        finding = health.add("missing_indexes", f"Missing Mongo indexes: {', '.join(missing)}.")
        if fix:
            store.ensure_indexes()
            finding.fixed = True

    if store.is_atlas():
        dimension = get_embedder().dimension
        problem = store.vector_index_problem(dimension)
        if problem:
            finding = health.add("vector_index", problem)
            if fix:
                store.create_vector_index(dimension)
                finding.fixed = True

    model = configured_model_name()
    papers = {paper.pk: paper for paper in Paper.objects.all()}
    counts = store.chunk_counts_by_paper()
    health.papers, health.chunks = len(papers), sum(counts.values())
    # (version, model) -> count per paper id, of the chunks made from that paper's file (all the
    # chunks of a paper id without a row); chunk counts of another file per paper id.
    by_paper: dict[int, dict[tuple[str, str], int]] = defaultdict(dict)
    mismatched: dict[int, int] = defaultdict(int)
    for group, n in counts.items():
        owner = papers.get(group.paper_id)
        if owner is not None and group.paper_sha256 != owner.sha256:
            mismatched[group.paper_id] += n
            continue
        versions = by_paper[group.paper_id]
        versions[(group.index_version, group.embedding_model)] = (
            versions.get((group.index_version, group.embedding_model), 0) + n
        )

    _check_orphans(health, by_paper, papers, fix=fix)
    _check_hash_mismatch(health, mismatched, papers, fix=fix)
    _check_missing_chunks(health, by_paper, papers, model, fix=fix)
    _check_other_models(health, by_paper, papers, model, fix=fix)
    _check_stale_versions(health, by_paper, papers, fix=fix)
    packs = store.pack_rows_by_paper()
    _check_missing_packs(health, by_paper, packs, papers, fix=fix)
    _check_stale_packs(health, packs, papers, fix=fix)
    _check_stuck(health, papers, stuck_after=stuck_after, fix=fix)
    check_paper_files(health, fix=fix)
    return health


def _check_stuck(health: IndexHealth, papers: dict[int, Paper], *, stuck_after: float | None, fix: bool) -> None:
    if stuck_after is None:
        stuck_after = settings.PDF_PARSE_TIMEOUT_SECONDS + 600
    cutoff = timezone.now() - timedelta(seconds=stuck_after)
    stuck = [
        p
        for p in papers.values()
        if p.index_status == Paper.IndexStatus.INDEXING and not _live_claim(p) and p.updated_at <= cutoff
    ]
    if not stuck:
        return
    finding = health.add(
        "stuck",
        f"{len(stuck)} paper(s) have been indexing for longer than a build takes; their worker is gone.",
        [f"paper {p.pk} ({p.display_title}): indexing since {p.updated_at:%Y-%m-%d %H:%M:%S}" for p in stuck],
    )
    if fix:
        for paper in stuck:
            mark_for_reindex(paper=paper)
        finding.fixed = True


def _check_orphans(health: IndexHealth, by_paper: dict, papers: dict[int, Paper], *, fix: bool) -> None:
    orphans = {pid: sum(groups.values()) for pid, groups in by_paper.items() if pid not in papers}
    if not orphans:
        return
    finding = health.add(
        "orphans",
        f"{sum(orphans.values())} chunk(s) of {len(orphans)} paper(s) that no longer exist.",
        [f"paper {pid}: {n} chunk(s)" for pid, n in sorted(orphans.items())],
    )
    if fix:
        for pid in orphans:
            store.delete_chunks(pid)
        finding.fixed = True


def _live_claim(paper: Paper) -> str:
    """The version a running build of *paper* writes, or "" when no claim is live."""
    live = paper.index_claimed_until is not None and paper.index_claimed_until > timezone.now()
    return paper.index_claim if live else ""


def _check_hash_mismatch(
    health: IndexHealth, mismatched: dict[int, int], papers: dict[int, Paper], *, fix: bool
) -> None:
    if not mismatched:
        return
    finding = health.add(
        "hash_mismatch",
        f"{sum(mismatched.values())} chunk(s) under the ids of {len(mismatched)} paper(s) were made from "
        "another file (another database's papers, or chunks older than content hashes); they are never cited.",
        [f"paper {pid} ({papers[pid].display_title}): {n} chunk(s)" for pid, n in sorted(mismatched.items())],
    )
    if fix:
        for pid in mismatched:
            store.delete_chunks_not_of(pid, paper_sha256=papers[pid].sha256)
        finding.fixed = True


def _check_missing_chunks(
    health: IndexHealth, by_paper: dict, papers: dict[int, Paper], model: str, *, fix: bool
) -> None:
    broken = []
    for paper in papers.values():
        if not is_searchable(paper):
            continue
        stored = by_paper.get(paper.pk, {}).get((paper.index_version, model), 0)
        if stored != paper.chunk_count or stored == 0:
            broken.append((paper, stored))
    if not broken:
        return
    finding = health.add(
        "missing_chunks",
        f"{len(broken)} ready paper(s) without their full set of chunks.",
        [f"paper {p.pk} ({p.display_title}): {n} of {p.chunk_count} chunk(s) stored" for p, n in broken],
    )
    if fix:
        for paper, _ in broken:
            _requeue(paper)
        finding.fixed = True


def _check_other_models(
    health: IndexHealth, by_paper: dict, papers: dict[int, Paper], model: str, *, fix: bool
) -> None:
    mixed: list[tuple[Paper, list[str]]] = []
    superseded: list[tuple[Paper, list[str]]] = []
    for pid, groups in by_paper.items():
        owner = papers.get(pid)
        if owner is None:
            continue
        paper = owner
        current = {chunk_model for (version, chunk_model) in groups if version == paper.index_version}
        others = current - {model}
        if not others:
            continue
        (mixed if model in current else superseded).append((paper, sorted(others)))
    if mixed:
        finding = health.add(
            "other_model",
            f"{len(mixed)} paper(s) hold chunks of another embedding model next to those of {model}.",
            [f"paper {p.pk} ({p.display_title}): {', '.join(m)}" for p, m in mixed],
        )
        if fix:
            for paper, _ in mixed:
                store.delete_chunks_of_other_models(paper.pk, embedding_model=model)
            finding.fixed = True
    if superseded:
        finding = health.add(
            "other_model",
            f"{len(superseded)} paper(s) are indexed only with another embedding model than {model}; "
            "they are not searchable until rebuilt (their old chunks are kept until then).",
            [f"paper {p.pk} ({p.display_title}): {', '.join(m)}" for p, m in superseded],
        )
        if fix:
            for paper, _ in superseded:
                _requeue(paper)
            finding.fixed = True


def _check_stale_versions(health: IndexHealth, by_paper: dict, papers: dict[int, Paper], *, fix: bool) -> None:
    stale = []
    for pid, groups in by_paper.items():
        paper = papers.get(pid)
        if paper is None:
            continue
        keep = {paper.index_version, _live_claim(paper)}
        versions = sorted({version for (version, _) in groups if version not in keep})
        if versions:
            stale.append((paper, versions))
    if not stale:
        return
    finding = health.add(
        "stale_versions",
        f"{len(stale)} paper(s) keep chunks of superseded index versions.",
        [f"paper {p.pk} ({p.display_title}): version(s) {', '.join(map(str, v))}" for p, v in stale],
    )
    if fix:
        for paper, versions in stale:
            for version in versions:
                store.delete_chunks_of_version(paper.pk, version)
        finding.fixed = True


def _check_missing_packs(
    health: IndexHealth,
    by_paper: dict,
    packs: dict[store.PackGroup, int | None],
    papers: dict[int, Paper],
    *,
    fix: bool,
) -> None:
    unpacked = []
    for paper in papers.values():
        if not is_searchable(paper):
            continue
        stored = by_paper.get(paper.pk, {}).get((paper.index_version, paper.embedding_model), 0)
        if stored != paper.chunk_count or stored == 0:
            continue  # missing_chunks: its rebuild writes the pack
        group = store.PackGroup(paper.pk, paper.index_version, paper.embedding_model, paper.sha256, TOKENIZER_VERSION)
        if packs.get(group) != paper.chunk_count:
            unpacked.append((paper, packs.get(group)))
    if not unpacked:
        return
    finding = health.add(
        "missing_packs",
        f"{len(unpacked)} ready paper(s) without a complete pack; retrieval reads their chunks one by one.",
        [
            f"paper {p.pk} ({p.display_title}): "
            + ("no pack" if rows is None else f"pack of {rows} of {p.chunk_count} chunk(s)")
            for p, rows in unpacked
        ],
    )
    if fix:
        pack_papers(papers=[paper for paper, _ in unpacked])
        finding.fixed = True


def _check_stale_packs(
    health: IndexHealth, packs: dict[store.PackGroup, int | None], papers: dict[int, Paper], *, fix: bool
) -> None:
    stale = []
    for group in packs:
        paper = papers.get(group.paper_id)
        current = (
            paper is not None
            and group.paper_sha256 == paper.sha256
            and group.index_version in {paper.index_version, _live_claim(paper)}
            and group.tokenizer_version == TOKENIZER_VERSION
        )
        if not current:
            stale.append(group)
    if not stale:
        return
    finding = health.add(
        "stale_packs",
        f"{len(stale)} pack(s) that no current paper version reads.",
        [
            f"paper {g.paper_id}: version {g.index_version}, tokenizer version {g.tokenizer_version}"
            for g in sorted(stale)
        ],
    )
    if fix:
        for group in stale:
            store.delete_pack(group)
        finding.fixed = True


def _requeue(paper: Paper) -> None:
    # A ready paper whose chunks are gone must leave retrieval now, not after the rebuild.
    if paper.index_status == Paper.IndexStatus.READY:
        Paper.objects.filter(pk=paper.pk).update(index_status=Paper.IndexStatus.PENDING, index_error="")
        paper.index_status = Paper.IndexStatus.PENDING
    mark_for_reindex(paper=paper)


def check_paper_files(health: IndexHealth, *, fix: bool) -> None:
    """orphan_files: stored PDFs that no paper row holds, left by an upload whose transaction
    failed after writing (fix: delete them). Files younger than `papers.storage.ORPHAN_GRACE` are
    left alone: their upload may still be committing."""
    orphans = orphan_files()
    if not orphans:
        return
    finding = health.add("orphan_files", f"{len(orphans)} stored file(s) belong to no paper.", orphans)
    if fix:
        delete_files(orphans)
        finding.fixed = True
