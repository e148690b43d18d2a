"""Project workflows: the one authorisation check (`get_project_for_user`), default projects,
members and roles, create/rename/archive/delete, add and remove papers, and library removal (which
reaches into projects)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import Http404
from django.utils import timezone

from annotagent.errors import AnnotagentError, ForbiddenError
from papers.citation import bibtex_file, csl_item, paper_bibtex
from papers.models import Paper, UserPaper
from papers.services import Upload, UploadBatch, add_paper_to_library, upload_each
from papers.storage import delete_files, files_removed_on_error, paper_file_names
from papers.works import searched_papers
from projects.models import Project, ProjectMembership, ProjectPaper, Role, papers_as_added, user_label
from projects.signals import reprocess_requested


class ProjectFullError(AnnotagentError):
    code = "project_full"


class DefaultProjectError(AnnotagentError):
    """Your default project is private to you: it cannot be shared, archived or deleted."""

    code = "default_project"


class LastAdminError(AnnotagentError):
    """A project needs at least one admin: make another member admin first."""

    code = "last_admin"


class MemberError(AnnotagentError):
    code = "invalid_member"


DEFAULT_PROJECT_NAME = "My papers"

# What each role may do, in the words of the 403 message.
_ACTIONS = {
    Role.READER: "read this project",
    Role.WRITER: "change this project's papers or chat (writers and admins may)",
    Role.ADMIN: "manage this project (admins may)",
}


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


def get_project_for_user(user: User, pk: int | None, *, need: Role = Role.READER) -> Project:
    """The project *pk* (or *user*'s default project when *pk* is None), checked for *need*.

    The one authorisation step of every view, API, consumer, command and task that reaches project
    data. Raises Http404 when *user* is not a member (exactly as for a project that does not exist)
    and ForbiddenError (code `forbidden`, HTTP 403) when their role is below *need*. The returned
    project carries the viewer's `role` (see `ProjectQuerySet.for_user`).
    """
    if pk is None:
        ensure_default_project(user)
        project = Project.objects.for_user(user).filter(owner=user, is_default=True).first()
    else:
        project = Project.objects.for_user(user).filter(pk=pk).first()
    if project is None:
        raise Http404("No such project.")
    check_role(project, need)
    return project


def check_role(project: Project, need: Role) -> None:
    """Raise ForbiddenError unless *project* (fetched by `get_project_for_user`) allows *need*."""
    role = project.member_role
    if role is None or not role.allows(need):
        who = f"a {role.label.lower()}" if role else "not a member"
        raise ForbiddenError(f"You are {who} in {project.name}: you cannot {_ACTIONS[need]}.")


@transaction.atomic
def ensure_default_project(user: User) -> Project:
    """*user*'s default private project ("My papers"), created with its admin membership when it
    does not exist yet. Idempotent: called on account creation, and as a safety net wherever a
    request names no project."""
    project = Project.objects.filter(owner=user, is_default=True).first()
    if project is None:
        taken = {name.lower() for name in Project.objects.filter(owner=user).values_list("name", flat=True)}
        name, n = DEFAULT_PROJECT_NAME, 1
        while name.lower() in taken:
            n += 1
            name = f"{DEFAULT_PROJECT_NAME} ({n})"
        project = Project.objects.create(owner=user, name=name, is_default=True)
    ProjectMembership.objects.get_or_create(project=project, user=user, defaults={"role": Role.ADMIN})
    return project


@transaction.atomic
def create_project(*, owner: User, name: str, description: str = "") -> Project:
    """A new project of *owner*'s. Raises AnnotagentError for an empty name and
    ProjectNameTakenError for a name *owner* already uses (see `check_project_name`)."""
    name = check_project_name(owner=owner, name=name)
    project = Project.objects.create(owner=owner, name=name, description=description.strip())
    ProjectMembership.objects.create(project=project, user=owner, role=Role.ADMIN)
    project.role = Role.ADMIN  # type: ignore[attr-defined]
    return project


@transaction.atomic
def update_project(*, project: Project, name: str | None = None, description: str | None = None) -> Project:
    """Rename and/or describe *project* (the caller checked `Role.ADMIN`). Names are unique among
    the projects of its owner (see `check_project_name`)."""
    if name is not None:
        project.name = check_project_name(owner=project.owner, name=name, exclude=project)
    if description is not None:
        project.description = description.strip()
    project.save()
    return project


@transaction.atomic
def delete_project(*, project: Project) -> None:
    """Delete *project*, its memberships, paper links and chat (the caller checked `Role.ADMIN`).

    Raises DefaultProjectError for a default project. Papers that no library and no other project
    holds any more are deleted with their files and chunks.
    """
    if project.is_default:
        raise DefaultProjectError()
    paper_ids = list(project.project_papers.values_list("paper_id", flat=True))
    project.delete()
    for paper in Paper.objects.filter(pk__in=paper_ids):
        _delete_if_orphaned(paper)


@transaction.atomic
def set_project_archived(*, project: Project, archived: bool) -> Project:
    """Archive *project* (it moves to the end of the projects list, read as before) or bring it back.
    Raises DefaultProjectError for a default project."""
    if project.is_default:
        raise DefaultProjectError()
    project.archived_at = timezone.now() if archived else None
    project.save(update_fields=["archived_at", "updated_at"])
    return project


# --- members ---------------------------------------------------------------------------------------


def find_user(identifier: str) -> User:
    """The user whose username or e-mail address is *identifier* (case-insensitive).
    Raises MemberError when there is none, or when the e-mail address is not unique."""
    identifier = identifier.strip()
    users = list(User.objects.filter(Q(username__iexact=identifier) | Q(email__iexact=identifier))[:2])
    if not identifier or not users:
        raise MemberError(f"No user with the username or e-mail address {identifier!r}.")
    exact = [u for u in users if u.username.lower() == identifier.lower()]
    if len(users) > 1 and not exact:
        raise MemberError(f"More than one user has the e-mail address {identifier!r}; give the username.")
    return (exact or users)[0]


def _check_role_name(role: str) -> Role:
    if role not in Role.values:
        raise MemberError(f"Unknown role {role!r}: choose admin, writer or reader.")
    return Role(role)


@transaction.atomic
def add_member(*, project: Project, user: User, role: str = Role.READER) -> ProjectMembership:
    """Make *user* a member of *project* in *role* (the caller checked `Role.ADMIN`).

    Raises DefaultProjectError for a default project, MemberError for an unknown role or a user
    who already is a member.
    """
    checked = _check_role_name(role)
    if project.is_default:
        raise DefaultProjectError()
    Project.objects.select_for_update().filter(pk=project.pk).first()
    if ProjectMembership.objects.filter(project=project, user=user).exists():
        raise MemberError(f"{user_label(user)} is already a member of {project.name}.")
    return ProjectMembership.objects.create(project=project, user=user, role=checked)


def _check_not_last_admin(project: Project, member: ProjectMembership) -> None:
    if member.role != Role.ADMIN:
        return
    if not project.memberships.filter(role=Role.ADMIN).exclude(pk=member.pk).exists():
        raise LastAdminError()


@transaction.atomic
def set_member_role(*, project: Project, user: User, role: str) -> ProjectMembership:
    """Give *user* (a member) *role* in *project*. Raises MemberError for an unknown role or a
    non-member, LastAdminError when it would leave the project without an admin."""
    checked = _check_role_name(role)
    Project.objects.select_for_update().filter(pk=project.pk).first()
    member = ProjectMembership.objects.filter(project=project, user=user).first()
    if member is None:
        raise MemberError(f"{user_label(user)} is not a member of {project.name}.")
    if checked != Role.ADMIN:
        _check_not_last_admin(project, member)
    member.role = checked
    member.save(update_fields=["role", "updated_at"])
    return member


@transaction.atomic
def remove_member(*, project: Project, user: User) -> None:
    """Take *user* out of *project* (an admin removing a member, or a member leaving).

    Raises MemberError for a non-member, LastAdminError for the last admin, DefaultProjectError for
    the owner of a default project. The papers they added stay in the project.
    """
    Project.objects.select_for_update().filter(pk=project.pk).first()
    member = ProjectMembership.objects.filter(project=project, user=user).first()
    if member is None:
        raise MemberError(f"{user_label(user)} is not a member of {project.name}.")
    if project.is_default:
        raise DefaultProjectError()
    _check_not_last_admin(project, member)
    member.delete()


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
        failed = project.project_papers.count() - held
        besides = f" (and {failed} that could not be indexed, which do not count)" if failed else ""
        raise ProjectFullError(
            f"A project holds at most {settings.PROJECT_MAX_PAPERS} papers; this one has {held}{besides}, "
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
    Each new link records *user* as `added_by` (the caller checked `Role.WRITER`).

    Papers already in the project are skipped (one link per paper and project, whoever adds it).
    Raises ProjectFullError when the project would hold more than `PROJECT_MAX_PAPERS`, whoever
    adds; nothing is added then. Each new link sends `post_save` (indexing queues a paper without
    chunks after commit, see `indexing.receivers`).
    """
    Project.objects.select_for_update().filter(pk=project.pk).first()
    present = set(project.project_papers.values_list("paper_id", flat=True))
    new = [paper for paper in dict.fromkeys(papers) if paper.pk not in present]
    check_room(project, len(new))
    links = []
    for paper in new:
        UserPaper.objects.get_or_create(user=user, paper=paper)
        links.append(ProjectPaper.objects.create(project=project, paper=paper, added_by=user))
    if links:
        project.save(update_fields=["updated_at"])
    return links


def add_paper_to_project(*, project: Project, paper: Paper, user: User) -> ProjectPaper:
    """One-paper form of `add_papers_to_project`; returns the (new or existing) link."""
    add_papers_to_project(project=project, papers=[paper], user=user)
    return ProjectPaper.objects.get(project=project, paper=paper)


@transaction.atomic
def remove_paper_from_project(*, project: Project, paper: Paper) -> bool:
    """Unlink *paper* from *project* (the caller checked `Role.WRITER`). Libraries and other projects
    are untouched; when none of them holds the paper any more, it is deleted with its file and
    chunks. Returns whether the paper was deleted."""
    ProjectPaper.objects.filter(project=project, paper=paper).delete()
    return _delete_if_orphaned(paper)


def private_projects_of(user: User) -> QuerySet[Project]:
    """*user*'s projects that nobody else is a member of."""
    shared = ProjectMembership.objects.exclude(user=user).values("project_id")
    return Project.objects.for_user(user).exclude(pk__in=shared)


@transaction.atomic
def remove_paper_from_library(*, user: User, paper: Paper) -> bool:
    """Remove *paper* from *user*'s library and from *user*'s private projects.

    Shared projects keep it (the project holds it for its members until a writer removes it there);
    other users' libraries are untouched. When no library and no project holds the paper any more,
    the paper row and its file are deleted too (and its chunks, by indexing on the row's
    `post_delete`). Returns whether the paper was deleted.
    """
    ProjectPaper.objects.filter(project__in=private_projects_of(user), paper=paper).delete()
    UserPaper.objects.filter(user=user, paper=paper).delete()
    return _delete_if_orphaned(paper)


def _delete_if_orphaned(paper: Paper) -> bool:
    # The row lock keeps a concurrent upload of the same bytes from linking to a row deleted here.
    Paper.objects.select_for_update().filter(pk=paper.pk).first()
    if UserPaper.objects.filter(paper=paper).exists() or ProjectPaper.objects.filter(paper=paper).exists():
        return False
    file_names = paper_file_names(paper)
    paper.delete()
    transaction.on_commit(partial(delete_files, file_names))
    return True


@dataclass(frozen=True)
class UploadedToProject:
    """An upload into a project: the library's result, and whether the project already held the
    paper (then nothing was linked: "already in this project")."""

    paper: Paper
    already_in_library: bool
    already_in_project: bool


def upload_paper_to_project(*, project: Project, user: User, data: bytes, filename: str = "") -> UploadedToProject:
    """Add the PDF *data* to *user*'s library and to *project* in one transaction (the caller
    checked `Role.WRITER`); the project link records *user* as `added_by`.

    Either both happen or neither: a full project (ProjectFullError) leaves the library as it was,
    and a file stored for a paper row that was rolled back is deleted again. Raises the upload
    errors of `papers.services.add_paper_to_library` before anything is stored.
    """
    with files_removed_on_error(), transaction.atomic():
        added = add_paper_to_library(user=user, data=data, filename=filename)
        linked = add_papers_to_project(project=project, papers=[added.paper], user=user)
    return UploadedToProject(
        paper=added.paper, already_in_library=added.already_in_library, already_in_project=not linked
    )


def add_uploads_to_project(*, project: Project, user: User, files: Iterable[Upload]) -> UploadBatch:
    """Upload each of *files* into *user*'s library and *project* (`upload_paper_to_project`, one
    file at a time: see `papers.services.upload_each`; the caller checked `Role.WRITER`). A bad
    file, an exhausted upload rate or a full project refuses that file only; nothing of a refused
    file is stored. An outcome's `already` is True when the project already held the paper."""

    def add(data: bytes, filename: str) -> tuple[Paper, bool, bool]:
        added = upload_paper_to_project(project=project, user=user, data=data, filename=filename)
        return added.paper, added.already_in_library, added.already_in_project

    return upload_each(user=user, files=files, add=add)


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


def get_project_paper_for_user(
    user: User, pk: int, paper_id: int, *, need: Role = Role.READER
) -> tuple[Project, Paper]:
    """*project* (checked for *need*, see `get_project_for_user`) and its paper *paper_id*, named
    and corrected as the member who added it has it, as every member sees it in the project (see
    `projects.models.papers_as_added`). Raises Http404 when the project does not hold it."""
    project = get_project_for_user(user, pk, need=need)
    paper = papers_as_added(project).filter(pk=paper_id).first()
    if paper is None:
        raise Http404("No such paper in this project.")
    return project, paper


def get_readable_paper_for_user(user: User, pk: int) -> Paper:
    """A paper *user* may read: in their library, or held by a project they are a member of (any
    role). Raises Http404 for any other. Reading never puts the paper in their library."""
    projects = Project.objects.for_user(user).values("pk")
    paper = (
        Paper.objects.filter(Q(library_links__user=user) | Q(project_links__project__in=projects), pk=pk)
        .named_for(user)
        .first()
    )
    if paper is None:
        raise Http404("No such paper.")
    return paper


@dataclass(frozen=True)
class ReferenceFile:
    """A project's reference list as a download: `content` (UTF-8 text), `content_type` and `filename`."""

    content: str
    content_type: str
    filename: str


REFERENCE_FORMATS = ("bib", "json")


def export_project_references(*, user: User, pk: int, fmt: str) -> ReferenceFile:
    """The papers of project *pk* as BibTeX (*fmt* "bib") or CSL-JSON ("json", an array of items
    per the CSL-JSON schema), in the order they were added, with the metadata every member sees on
    the project page (as the member who added each paper has corrected it: `papers_as_added`).
    A work is one entry however many versions of it the project holds: the primary, the version
    questions read (`papers_to_search`); its supplements are entries of their own, as they are
    cited ("Supplement to <title>").

    Any member may export; raises Http404 for a non-member (as for a missing project) and ValueError
    for a format not in REFERENCE_FORMATS.
    """
    if fmt not in REFERENCE_FORMATS:
        raise ValueError(f"Unknown reference format {fmt!r}.")
    project = get_project_for_user(user, pk)
    papers = searched_papers(papers_as_added(project).order_by("project_links__added_at", "pk"))
    stem = f"project-{project.pk}-references"
    if fmt == "bib":
        entries = [paper_bibtex(paper) for paper in papers]
        return ReferenceFile(bibtex_file(entries), "application/x-bibtex; charset=utf-8", f"{stem}.bib")
    items = [
        csl_item(
            item_id=f"paper-{paper.pk}",
            title=paper.display_title,
            authors=paper.cited.authors,
            year=paper.cited.year,
            venue=paper.cited.venue,
            doi=paper.cited.doi,
            pages=paper.pages,
        )
        for paper in papers
    ]
    return ReferenceFile(
        json.dumps(items, ensure_ascii=False, indent=2), "application/vnd.citationstyles.csl+json", f"{stem}.json"
    )
