"""Bulk ingest for operators: files and folders of PDFs into a user's library (and a project),
indexed before it returns."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from annotagent.errors import AnnotagentError
from indexing.embeddings import configured_model_name
from indexing.services import ProgressCallback, index_paper, indexed_by_caller
from papers.models import Paper
from papers.services import add_paper_to_library, read_upload
from papers.storage import files_removed_on_error
from projects.models import Project, Role
from projects.services import (
    ProjectFullError,
    add_papers_to_project,
    batch_room_notice,
    create_project,
    get_project_for_user,
    room_in,
)


@dataclass
class IngestReport:
    """Outcome per file: `indexed` and `skipped` (already ready) hold papers; `failed` maps a file
    path to the reason; `library_only` holds papers that did not fit in the project (they are in
    the library), announced up front by `notice`."""

    project: Project | None = None
    indexed: list[Paper] = field(default_factory=list)
    skipped: list[Paper] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    library_only: list[Paper] = field(default_factory=list)
    notice: str = ""


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
    project: Project | None = None,
    on_file: Callable[[Path, int, int], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    progress: ProgressCallback | None = None,
    force: bool = False,
) -> IngestReport:
    """Add every PDF under *paths* to *user*'s library and, with *project_name*, to that project
    (the user's own of that name, created if missing) or to *project* (one the caller resolved;
    Http404 or a role error when *user* may not add to it), then index each paper that is not ready.

    When the files outnumber the project's room, `on_notice` hears so before the first file (e.g.
    "15 files, room for 10 ...") and the files past the cap go to the library only
    (`report.library_only`). A bad file is recorded in `failed` with its reason and the rest go on;
    nothing of it stays in storage. With *force*, papers that are ready are rebuilt too (as
    reprocess does: new chunks under a new index version, the old ones deleted once they are live).
    """
    report = IngestReport()
    files = find_pdfs(paths)
    if project is not None:
        # A project the caller resolved (by id, or a shared one by name): adding needs a writer.
        report.project = get_project_for_user(user, project.pk, need=Role.WRITER)
        project_name = project.name
    elif project_name:
        # The user's own project of that name, checked like every other path: adding needs a writer.
        found = Project.objects.for_user(user).filter(owner=user, name=project_name).first()
        report.project = get_project_for_user(user, found.pk, need=Role.WRITER) if found else None
    if project_name:
        room = room_in(report.project) if report.project else settings.PROJECT_MAX_PAPERS
        report.notice = batch_room_notice(files=len(files), room=room, project_name=project_name)
    if report.notice and on_notice:
        on_notice(report.notice)
    for number, path in enumerate(files, start=1):
        if on_file:
            on_file(path, number, len(files))
        try:
            with files_removed_on_error(), transaction.atomic():
                if not path.is_file():
                    raise AnnotagentError("No such file.")
                with path.open("rb") as handle:
                    data = read_upload(handle, size=path.stat().st_size)
                with indexed_by_caller():  # indexed below, outside the transaction
                    paper = add_paper_to_library(user=user, data=data, filename=path.name).paper
                if project_name and report.project is None:  # created with its first good paper
                    report.project = create_project(owner=user, name=project_name)
                if report.project is not None:
                    try:
                        with transaction.atomic():
                            add_papers_to_project(project=report.project, papers=[paper], user=user)
                    except ProjectFullError:
                        report.library_only.append(paper)
        except AnnotagentError as exc:
            report.failed[str(path)] = exc.message
            continue
        if not force and Paper.objects.ready(embedding_model=configured_model_name()).filter(pk=paper.pk).exists():
            report.skipped.append(paper)
            continue
        try:
            report.indexed.append(index_paper(paper_id=paper.pk, progress=progress))
        except AnnotagentError as exc:
            report.failed[str(path)] = exc.message
    return report
