"""Project workflows: create, rename, delete, add and remove papers, and library removal (which
reaches into projects)."""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.http import Http404

from annotagent.errors import AnnotagentError
from papers.models import Paper, UserPaper
from papers.services import AddedPaper, add_paper_to_library
from papers.storage import delete_files, files_removed_on_error
from projects.models import Project, ProjectPaper
from projects.signals import reprocess_requested


class ProjectFullError(AnnotagentError):
    code = "project_full"


class ProjectNameTakenError(AnnotagentError):
    """You already have a project with this name."""

    code = "project_name_taken"


def check_project_name(*, owner: User, name: str, exclude: Project | None = None) -> str:
    """*name* stripped and cut to 200 characters. Raises AnnotagentError when it is empty and
    ProjectNameTakenError when another of *owner*'s projects has it (case-insensitive): commands
    and questions name projects by name, so one name must mean one project."""
    name = name.strip()[:200]
    if not name:
        raise AnnotagentError("A project needs a name.")
    taken = Project.objects.filter(owner=owner, name__iexact=name)
    if exclude is not None:
        taken = taken.exclude(pk=exclude.pk)
    if taken.exists():
        raise ProjectNameTakenError(f"You already have a project named {name!r}.")
    return name


def get_project_for_user(user: User, pk: int) -> Project:
    """A project *user* may see. Raises Http404 for any other, so callers never fetch unscoped."""
    project = Project.objects.for_user(user).filter(pk=pk).first()
    if project is None:
        raise Http404("No such project.")
    return project


@transaction.atomic
def create_project(*, owner: User, name: str, description: str = "") -> Project:
    """A new project of *owner*'s. Raises AnnotagentError for an empty name and
    ProjectNameTakenError for a name *owner* already uses (see `check_project_name`)."""
    name = check_project_name(owner=owner, name=name)
    return Project.objects.create(owner=owner, name=name, description=description.strip())


@transaction.atomic
def update_project(*, project: Project, name: str | None = None, description: str | None = None) -> Project:
    if name is not None:
        project.name = check_project_name(owner=project.owner, name=name, exclude=project)
    if description is not None:
        project.description = description.strip()
    project.save()
    return project


@transaction.atomic
def delete_project(*, project: Project) -> None:
    """Delete *project*, its paper links and its chat. Papers and their chunks stay."""
    project.delete()


def papers_counted(project: Project) -> int:
    """Papers that count against `PROJECT_MAX_PAPERS`: all but the failed ones (a failed paper
    answers nothing, and its owner should not have to remove it to add the fixed file)."""
    return project.project_papers.exclude(paper__index_status=Paper.IndexStatus.FAILED).count()


def room_in(project: Project) -> int:
    """How many more papers *project* can take (never negative)."""
    return max(settings.PROJECT_MAX_PAPERS - papers_counted(project), 0)


def check_room(project: Project, adding: int) -> None:
    """Raise ProjectFullError unless *project* has room for *adding* more papers."""
    held = papers_counted(project)
    if held + adding > settings.PROJECT_MAX_PAPERS:
        room = max(settings.PROJECT_MAX_PAPERS - held, 0)
        raise ProjectFullError(
            f"A project holds at most {settings.PROJECT_MAX_PAPERS} papers; this one has {held}, "
            f"so there is room for {room} more."
        )


def batch_room_notice(*, files: int, room: int, project_name: str) -> str:
    """What to tell a user up front when *files* files are headed for a project with *room* free
    places: "" when they fit, else e.g. "15 files, room for 10 in X: the other 5 go to your
    library only." """
    if files <= room:
        return ""
    rest = files - room
    return (
        f"{files} files, room for {room} in {project_name}: the other {rest} "
        f"{'goes' if rest == 1 else 'go'} to your library only."
    )


@transaction.atomic
def add_papers_to_project(*, project: Project, papers: list[Paper], user: User) -> list[ProjectPaper]:
    """Put *papers* in *project*, adding each to *user*'s library first if needed, all or nothing.

    Papers already in the project are skipped. Raises ProjectFullError when the project would hold
    more than `PROJECT_MAX_PAPERS`; nothing is added then. Each new link sends `post_save` (indexing
    queues a paper without chunks after commit, see `indexing.receivers`).
    """
    Project.objects.select_for_update().filter(pk=project.pk).first()
    present = set(project.project_papers.values_list("paper_id", flat=True))
    new = [paper for paper in dict.fromkeys(papers) if paper.pk not in present]
    check_room(project, len(new))
    links = []
    for paper in new:
        UserPaper.objects.get_or_create(user=user, paper=paper)
        links.append(ProjectPaper.objects.create(project=project, paper=paper))
    if links:
        project.save(update_fields=["updated_at"])
    return links


def add_paper_to_project(*, project: Project, paper: Paper, user: User) -> ProjectPaper:
    """One-paper form of `add_papers_to_project`; returns the (new or existing) link."""
    add_papers_to_project(project=project, papers=[paper], user=user)
    return ProjectPaper.objects.get(project=project, paper=paper)


@transaction.atomic
def remove_paper_from_project(*, project: Project, paper: Paper) -> None:
    """Unlink *paper* from *project*. The library, other projects and the chunk index are untouched."""
    ProjectPaper.objects.filter(project=project, paper=paper).delete()


@transaction.atomic
def remove_paper_from_library(*, user: User, paper: Paper) -> bool:
    """Remove *paper* from *user*'s library, with every link of *user*'s projects to it.

    Other users' libraries and projects are untouched. When no library holds the paper any more,
    the paper row and its file are deleted too (and its chunks, by indexing on the row's
    `post_delete`). Returns whether the paper was deleted.
    """
    ProjectPaper.objects.filter(project__owner=user, paper=paper).delete()
    UserPaper.objects.filter(user=user, paper=paper).delete()
    if UserPaper.objects.filter(paper=paper).exists():
        return False
    file_name = paper.file.name or ""
    paper.delete()
    transaction.on_commit(partial(delete_files, [file_name]))
    return True


def upload_paper_to_project(*, project: Project, user: User, data: bytes, filename: str = "") -> AddedPaper:
    """Add the PDF *data* to *user*'s library and to *project* in one transaction.

    Either both happen or neither: a full project (ProjectFullError) leaves the library as it was,
    and a file stored for a paper row that was rolled back is deleted again. Raises the upload
    errors of `papers.services.add_paper_to_library` before anything is stored.
    """
    with files_removed_on_error(), transaction.atomic():
        added = add_paper_to_library(user=user, data=data, filename=filename)
        add_papers_to_project(project=project, papers=[added.paper], user=user)
    return added


@transaction.atomic
def add_paper_to_new_project(*, owner: User, name: str, paper: Paper) -> Project:
    """Create a project named *name* holding *paper* ("Add to project" -> "new project" in the library)."""
    project = create_project(owner=owner, name=name)
    add_papers_to_project(project=project, papers=[paper], user=owner)
    return project


@transaction.atomic
def reprocess_paper(*, paper: Paper) -> Paper:
    """Ask for *paper* to be read again (retry after a failure, or a staff re-index): sends
    `reprocess_requested`, on which indexing queues a rebuild after commit.

    A paper that is not searchable goes back to `pending` with no failure reason (on *paper* too); a
    paper that is ready stays ready: questions keep reading its old chunks until the new ones are
    complete (see `indexing.services.mark_for_reindex`).
    """
    reprocess_requested.send(sender=Paper, paper=paper)
    return paper
