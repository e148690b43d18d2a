"""Notes workflows: who may read and write an item's notes, the tree, create, rename, move, edit,
delete, and saving a cited answer into a note.

Every write sanitises HTML (`notes.sanitize.sanitize_html`) and checks `check_can_write`. Reads go
through `get_item_for_user` and `get_note_for_user`, which raise Http404 for anything the user may
not see, so another user's paper, project or note is indistinguishable from a missing one.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q, QuerySet
from django.http import Http404

from annotagent.errors import AnnotagentError
from notes.models import Note
from notes.sanitize import MAX_NOTE_HTML_CHARS, sanitize_html, text_to_html
from papers.models import Paper
from papers.services import get_paper_for_user
from projects.models import Project
from projects.models import Role as ProjectRole
from projects.services import get_project_for_user

MAX_NAME_CHARS = 200


class NoteError(AnnotagentError):
    """The note request is invalid."""

    code = "invalid_note"


class NotesReadOnlyError(AnnotagentError):
    """You may read these notes but not change them."""

    code = "notes_read_only"
    status = HTTPStatus.FORBIDDEN


class NoteRole(enum.Enum):
    READER = "reader"
    WRITER = "writer"


@dataclass(frozen=True)
class NoteItem:
    """What a tree of notes is attached to: `kind` is a `Note.Scope`; `paper` or `project` is set
    for those kinds; `user` is the owner of a private tree (paper and library notes), None for
    project notes."""

    kind: str
    user: User | None = None
    paper: Paper | None = None
    project: Project | None = None

    @property
    def item_id(self) -> int | None:
        if self.paper is not None:
            return self.paper.pk
        if self.project is not None:
            return self.project.pk
        return None

    @property
    def title(self) -> str:
        if self.paper is not None:
            return self.paper.display_title
        if self.project is not None:
            return self.project.name
        return "Library"

    def notes(self) -> QuerySet[Note]:
        """Every folder and note of this item."""
        if self.kind == Note.Scope.PROJECT:
            return Note.objects.filter(scope=self.kind, project=self.project)
        if self.kind == Note.Scope.PAPER:
            return Note.objects.filter(scope=self.kind, paper=self.paper, user=self.user)
        return Note.objects.filter(scope=self.kind, user=self.user)

    def as_json(self) -> dict[str, Any]:
        return {"type": self.kind, "id": self.item_id, "title": self.title}


def paper_item(user: User, paper: Paper) -> NoteItem:
    return NoteItem(kind=Note.Scope.PAPER, user=user, paper=paper)


def project_item(project: Project) -> NoteItem:
    return NoteItem(kind=Note.Scope.PROJECT, project=project)


def library_item(user: User) -> NoteItem:
    return NoteItem(kind=Note.Scope.LIBRARY, user=user)


def get_item_for_user(user: User, kind: str, item_id: int | None) -> NoteItem:
    """The item *kind* ("paper", "project", "library") number *item_id* that *user* may open.
    Raises Http404 for an unknown kind or an item the user may not see."""
    if kind == Note.Scope.PAPER and item_id is not None:
        return paper_item(user, get_paper_for_user(user, item_id))
    if kind == Note.Scope.PROJECT and item_id is not None:
        return project_item(get_project_for_user(user, item_id))
    if kind == Note.Scope.LIBRARY:
        return library_item(user)
    raise Http404("No such item.")


def item_of(note: Note) -> NoteItem:
    """The item *note* belongs to."""
    return NoteItem(kind=note.scope, user=note.user, paper=note.paper, project=note.project)


def notes_role(user: User, item: NoteItem) -> NoteRole | None:
    """What *user* may do with *item*'s notes: None (not see them), READER or WRITER.

    The one place notes access is decided. Private trees are their owner's. Project notes follow
    the project's roles: its writers and admins write them, its readers read them, non-members see
    nothing.
    """
    if item.kind in (Note.Scope.PAPER, Note.Scope.LIBRARY):
        return NoteRole.WRITER if item.user is not None and item.user.pk == user.pk else None
    if item.project is None:
        return None
    project = Project.objects.for_user(user).filter(pk=item.project.pk).first()
    if project is None or project.member_role is None:
        return None
    return NoteRole.WRITER if project.member_role.allows(ProjectRole.WRITER) else NoteRole.READER


def check_can_write(user: User, item: NoteItem) -> None:
    """Raise Http404 when *user* may not see *item*'s notes, NotesReadOnlyError when they may only
    read them."""
    check_role_writes(notes_role(user, item))


def check_role_writes(role: NoteRole | None) -> None:
    """Raise Http404 for no role, NotesReadOnlyError for a reader."""
    if role is None:
        raise Http404("No such note.")
    if role is not NoteRole.WRITER:
        raise NotesReadOnlyError()


def visible_notes(user: User) -> QuerySet[Note]:
    """Every folder and note *user* may read."""
    projects = Project.objects.for_user(user)
    return Note.objects.filter(
        Q(scope=Note.Scope.PAPER, user=user, paper__library_links__user=user)
        | Q(scope=Note.Scope.PROJECT, project__in=projects)
        | Q(scope=Note.Scope.LIBRARY, user=user)
    ).distinct()


def get_note_for_user(user: User, pk: int) -> Note:
    """A folder or note *user* may read. Raises Http404 for any other."""
    note = visible_notes(user).filter(pk=pk).select_related("paper", "project", "user").first()
    if note is None:
        raise Http404("No such note.")
    return note


# --- the tree -------------------------------------------------------------------------------------


def note_tree(item: NoteItem) -> list[dict[str, Any]]:
    """*item*'s folders and notes as nested nodes `{"id", "name", "isFolder", "parentId",
    "version", "updatedAt", "children": [...]}`, folders first, then by name."""
    nodes: dict[int, dict[str, Any]] = {}
    order = list(item.notes().order_by("-is_folder", "name", "pk"))
    for note in order:
        nodes[note.pk] = {
            "id": note.pk,
            "name": note.name,
            "isFolder": note.is_folder,
            "parentId": note.parent_id,
            "version": note.version,
            "updatedAt": note.updated_at.isoformat(),
            "children": [],
        }
    roots: list[dict[str, Any]] = []
    for note in order:
        parent = nodes.get(note.parent_id) if note.parent_id else None
        (parent["children"] if parent is not None else roots).append(nodes[note.pk])
    return roots


def flatten_tree(tree: list[dict[str, Any]], depth: int = 0) -> list[tuple[int, dict[str, Any]]]:
    """(depth, node) pairs of *tree* in display order."""
    out: list[tuple[int, dict[str, Any]]] = []
    for node in tree:
        out.append((depth, node))
        out.extend(flatten_tree(node["children"], depth + 1))
    return out


# --- writes ---------------------------------------------------------------------------------------


def check_name(name: str) -> str:
    """*name* stripped; raises NoteError when empty or longer than 200 characters."""
    name = (name or "").strip()
    if not name:
        raise NoteError("A note or folder needs a name.")
    if len(name) > MAX_NAME_CHARS:
        raise NoteError(f"Names may be at most {MAX_NAME_CHARS} characters.")
    return name


def check_content(content: str) -> str:
    """*content* sanitised; raises NoteError over `MAX_NOTE_HTML_CHARS`."""
    if len(content or "") > MAX_NOTE_HTML_CHARS:
        raise NoteError(f"A note may hold at most {MAX_NOTE_HTML_CHARS} characters of HTML.")
    return sanitize_html(content or "")


def check_parent(item: NoteItem, parent: Note | None) -> None:
    """Raise NoteError unless *parent* is None or a folder of *item*."""
    if parent is None:
        return
    if not parent.is_folder or not item.notes().filter(pk=parent.pk).exists():
        raise NoteError("The parent must be a folder of the same paper, project or library.")


@transaction.atomic
def create_note(
    *, user: User, item: NoteItem, name: str, parent: Note | None = None, is_folder: bool = False, content: str = ""
) -> Note:
    """A new note (or folder, *is_folder*) named *name* in *item*'s tree, under the folder *parent*.

    Raises Http404 / NotesReadOnlyError (see `check_can_write`), NoteError for an empty or long
    name, a parent that is not a folder of *item*, or oversized content (sanitised before saving).
    """
    check_can_write(user, item)
    check_parent(item, parent)
    return Note.objects.create(
        scope=item.kind,
        user=item.user,
        paper=item.paper,
        project=item.project,
        parent=parent,
        is_folder=is_folder,
        name=check_name(name),
        content="" if is_folder else check_content(content),
        created_by=user,
    )


UNCHANGED: Any = object()


@transaction.atomic
def update_note(
    *, user: User, note: Note, name: str | None = None, content: str | None = None, parent: Any = UNCHANGED
) -> Note:
    """Rename (*name*), edit (*content*, sanitised; the version grows) and/or move (*parent*: a
    folder of the same item, or None for the top level) *note*.

    Raises Http404 / NotesReadOnlyError, NoteError for a bad name or parent, content on a folder,
    or a folder moved into itself or one of its own folders.
    """
    item = item_of(note)
    check_can_write(user, item)
    note = Note.objects.select_for_update().get(pk=note.pk)
    fields = ["updated_at"]
    if name is not None:
        note.name = check_name(name)
        fields.append("name")
    if content is not None:
        if note.is_folder:
            raise NoteError("Folders have no content.")
        cleaned = check_content(content)
        if cleaned != note.content:
            note.content = cleaned
            note.version += 1
            fields += ["content", "version"]
    if parent is not UNCHANGED:
        check_parent(item, parent)
        ancestor = parent
        while ancestor is not None:
            if ancestor.pk == note.pk:
                raise NoteError("A folder cannot go inside itself.")
            ancestor = ancestor.parent
        note.parent = parent
        fields.append("parent")
    note.save(update_fields=fields)
    return note


@transaction.atomic
def delete_note(*, user: User, note: Note) -> int:
    """Delete *note*, and everything in it when it is a folder. Returns how many went."""
    check_can_write(user, item_of(note))
    deleted, by_model = Note.objects.filter(pk=note.pk).delete()
    return by_model.get("notes.Note", deleted)


def count_descendants(note: Note) -> int:
    """How many folders and notes are inside *note* (all depths)."""
    count, frontier = 0, [note.pk]
    while frontier:
        children = list(Note.objects.filter(parent_id__in=frontier).values_list("pk", flat=True))
        count += len(children)
        frontier = children
    return count


def clean_citations(citations: Any) -> dict[str, dict[str, Any]]:
    """The well-formed entries of a citation map `{"N": {"paper_id", "page", "title"}}`."""
    cleaned: dict[str, dict[str, Any]] = {}
    if not isinstance(citations, Mapping):
        return cleaned
    for key, value in citations.items():
        if not str(key).isdigit() or not isinstance(value, Mapping):
            continue
        try:
            paper_id, page = int(value["paper_id"]), int(value["page"])
        except (KeyError, TypeError, ValueError):
            continue
        cleaned[str(key)] = {"paper_id": paper_id, "page": page, "title": str(value.get("title") or "")[:500]}
    return cleaned


def _opening_line(text: str) -> str:
    """The first line of an answer that says something: not a heading line ending in ":" (the
    extractive answer's "Extractive answer (...):"), without list marks, quotes or citations."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = next((line for line in lines if not line.endswith(":")), lines[0] if lines else "")
    line = re.sub(r"\s*\[\d+(?:[,\s\u2013-]+\d+)*\]", "", line)
    return line.lstrip("-*\u2022 ").replace("\u201c", "").replace("\u201d", "")


@dataclass(frozen=True)
class SavedAnswer:
    """`save_answer_to_note`: the `note` that holds the answer; `already` when it held it before
    (a note of the item with the very content the answer makes: nothing was written)."""

    note: Note
    already: bool = False


def _lock_tree(item: NoteItem) -> None:
    """Wait for other writes that look at *item*'s tree first (two saves of one answer at once)."""
    if item.project is not None:
        Project.objects.select_for_update().filter(pk=item.project.pk).first()
    elif item.user is not None:
        User.objects.select_for_update().filter(pk=item.user.pk).first()


@transaction.atomic
def save_answer_to_note(
    *,
    user: User,
    item: NoteItem,
    text: str,
    citations: Any,
    note: Note | None = None,
    name: str = "",
) -> SavedAnswer:
    """Save an answer (*text* with `[N]` markers and its *citations* map) into *item*'s notes: as a
    new note named *name* (default: the answer's first words), or appended to *note*. Each `[N]`
    known to *citations* becomes a link to its paper and page. Saved as a new note again, the same
    answer gives the note of *item* that already holds exactly it (`SavedAnswer.already`).

    Raises NoteError for an empty answer, a folder or a note of another item; Http404 /
    NotesReadOnlyError as `check_can_write`.
    """
    body = text_to_html(text, clean_citations(citations))
    if not body:
        raise NoteError("There is no answer text to save.")
    if note is None:
        check_can_write(user, item)
        _lock_tree(item)
        existing = item.notes().filter(is_folder=False, content=check_content(body)).order_by("pk").first()
        if existing is not None:
            return SavedAnswer(note=existing, already=True)
        default = " ".join(_opening_line(text).split()[:8]) or "Saved answer"
        return SavedAnswer(
            note=create_note(user=user, item=item, name=(name or default)[:MAX_NAME_CHARS], content=body)
        )
    if note.is_folder or item_of(note) != item:
        raise NoteError("Answers are appended to a note of the same paper, project or library.")
    return SavedAnswer(note=update_note(user=user, note=note, content=note.content + body))
