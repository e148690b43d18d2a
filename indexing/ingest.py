"""Bulk ingest for operators: files and folders of PDFs into a user's library (and a project),
indexed before it returns."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction

from annotagent.errors import AnnotagentError
from indexing.services import ProgressCallback, index_paper
from papers.models import Paper
from papers.services import add_paper_to_library, read_upload
from projects.models import Project
from projects.services import add_papers_to_project, create_project


@dataclass
class IngestReport:
    """Outcome per file: `indexed` and `skipped` (already ready) hold papers; `failed` maps a file
    path to the reason."""

    project: Project | None = None
    indexed: list[Paper] = field(default_factory=list)
    skipped: list[Paper] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def find_pdfs(paths: Iterable[Path]) -> list[Path]:
    """Expand folders into the PDFs below them (sorted); files are kept as given."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file()))
        else:
            found.append(path)
    return found


def ingest_paths(
    *,
    user: User,
    paths: Iterable[Path],
    project_name: str | None = None,
    on_file: Callable[[Path, int, int], None] | None = None,
    progress: ProgressCallback | None = None,
) -> IngestReport:
    """Add every PDF under *paths* to *user*'s library and, with *project_name*, to that project
    (created if missing; the project cap applies), then index each paper that is not ready.

    A bad file is recorded in `failed` with its reason and the rest go on.
    """
    report = IngestReport()
    files = find_pdfs(paths)
    if project_name:
        report.project = Project.objects.for_user(user).filter(name=project_name).first()
    for number, path in enumerate(files, start=1):
        if on_file:
            on_file(path, number, len(files))
        try:
            with transaction.atomic():
                if not path.is_file():
                    raise AnnotagentError("No such file.")
                with path.open("rb") as handle:
                    data = read_upload(handle, size=path.stat().st_size)
                paper = add_paper_to_library(user=user, data=data, filename=path.name, queue_indexing=False).paper
                if project_name and report.project is None:  # created with its first good paper
                    report.project = create_project(owner=user, name=project_name)
                if report.project is not None:
                    add_papers_to_project(project=report.project, papers=[paper], user=user)
        except AnnotagentError as exc:
            report.failed[str(path)] = exc.message
            continue
        if Paper.objects.ready().filter(pk=paper.pk).exists():
            report.skipped.append(paper)
            continue
        try:
            report.indexed.append(index_paper(paper_id=paper.pk, progress=progress))
        except AnnotagentError as exc:
            report.failed[str(path)] = exc.message
    return report
