"""Accepting and rejecting suggestions: the only way a copilot's suggestion becomes a note.

A suggestion lives in the message that made it: a per-paper chat message (`PaperChat.messages`,
found by user, paper and message id) or a copilot message (`CopilotMessage`). Accepting checks
again, at that moment, that the user may write the note (or its folder's item), and that an edited
note has not changed since the suggestion was made; the content is sanitised again when applied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.http import Http404

from annotagent.errors import AnnotagentError
from chat.models import PaperChat
from notes.models import CopilotMessage, Note
from notes.sanitize import html_to_text
from notes.services import (
    NoteError,
    check_can_write,
    create_note,
    get_item_for_user,
    get_note_for_user,
    item_of,
    update_note,
)
from notes.suggestions import line_diff
from papers.services import get_paper_for_user
from projects.services import get_project_for_user


class SuggestionConflictError(AnnotagentError):
    """The note changed since this suggestion was made."""

    code = "suggestion_conflict"
    status = HTTPStatus.CONFLICT

    def __init__(self, message: str, suggestion: dict[str, Any]) -> None:
        super().__init__(message)
        self.suggestion = suggestion


class SuggestionStateError(AnnotagentError):
    code = "suggestion_not_pending"
    status = HTTPStatus.CONFLICT


@dataclass
class SuggestionHolder:
    """Where one suggestion is stored: its dict (to change in place) and how to save it."""

    suggestion: dict[str, Any]
    save: Callable[[], None]


def _find(suggestions: Any, suggestion_id: str) -> dict[str, Any]:
    for suggestion in suggestions or []:
        if isinstance(suggestion, dict) and suggestion.get("id") == suggestion_id:
            return suggestion
    raise Http404("No such suggestion.")


def paper_chat_suggestion(*, user: User, paper_id: int, message_id: int, suggestion_id: str) -> SuggestionHolder:
    """A suggestion of *user*'s chat on paper *paper_id*, locked for update. Raises Http404."""
    paper = get_paper_for_user(user, paper_id)
    chat = PaperChat.objects.select_for_update().filter(user=user, paper=paper).first()
    if chat is None:
        raise Http404("No such suggestion.")
    message = next((m for m in chat.messages if m.get("id") == message_id), None)
    if message is None:
        raise Http404("No such suggestion.")
    suggestion = _find(message.get("suggestions"), suggestion_id)
    return SuggestionHolder(suggestion, lambda: chat.save(update_fields=["messages"]))


def copilot_suggestion(*, user: User, message_id: int, suggestion_id: str) -> SuggestionHolder:
    """A suggestion of one of *user*'s copilot messages, locked for update. Raises Http404, also
    when the message's project is no longer visible to the user."""
    message = CopilotMessage.objects.select_for_update().filter(user=user, pk=message_id).first()
    if message is None:
        raise Http404("No such suggestion.")
    if message.project_id is not None:
        get_project_for_user(user, message.project_id)
    suggestion = _find(message.suggestions, suggestion_id)
    return SuggestionHolder(suggestion, lambda: message.save(update_fields=["suggestions"]))


def check_pending(suggestion: dict[str, Any]) -> None:
    if suggestion.get("status") != "pending":
        raise SuggestionStateError(f"This suggestion was already {suggestion.get('status')}.")


def accept_suggestion(*, user: User, locate: Callable[[], SuggestionHolder]) -> tuple[Note, dict[str, Any]]:
    """Apply the suggestion *locate* finds (it runs inside the transaction, so the row is locked)
    as *user*: replace the edited note's content, or create the new note; mark it accepted.
    Returns the note and the suggestion as saved.

    Raises SuggestionStateError when it is not pending; Http404 when the note or item is gone or
    not visible; NotesReadOnlyError when the user may only read it; SuggestionConflictError when
    the note changed since the suggestion (the suggestion is saved with the new diff and base
    version, so accepting again applies it over the current text); NoteError for a parent that is
    no longer a folder of the item.
    """
    with transaction.atomic():
        holder = locate()
        suggestion = holder.suggestion
        check_pending(suggestion)
        note, conflict = _apply(user, suggestion)
        suggestion["status"] = "pending" if conflict else "accepted"
        holder.save()
    if conflict:
        raise SuggestionConflictError(
            f"“{note.name}” changed since this suggestion was made; review the new diff and accept again.",
            suggestion,
        )
    return note, suggestion


def _apply(user: User, suggestion: dict[str, Any]) -> tuple[Note, bool]:
    """Write *suggestion* (in the caller's transaction); (the note, whether it conflicted)."""
    if suggestion["type"] == "edit":
        note = get_note_for_user(user, int(suggestion["noteId"]))
        check_can_write(user, item_of(note))
        note = Note.objects.select_for_update().get(pk=note.pk)
        if note.version != suggestion.get("baseVersion"):
            suggestion["baseVersion"] = note.version
            suggestion["diff"] = line_diff(html_to_text(note.content), html_to_text(suggestion["content"]))
            return note, True
        return update_note(user=user, note=note, content=suggestion["content"]), False
    target = suggestion.get("item") or {}
    item = get_item_for_user(user, str(target.get("type")), target.get("id"))
    parent = None
    if suggestion.get("parentId") is not None:
        parent = Note.objects.filter(pk=suggestion["parentId"]).first()
        if parent is None:
            raise NoteError("The folder this note was meant for no longer exists.")
    note = create_note(user=user, item=item, name=suggestion["noteName"], parent=parent, content=suggestion["content"])
    suggestion["noteId"] = note.pk
    return note, False


@transaction.atomic
def reject_suggestion(*, locate: Callable[[], SuggestionHolder]) -> dict[str, Any]:
    """Mark the pending suggestion *locate* finds rejected. Raises SuggestionStateError otherwise."""
    holder = locate()
    check_pending(holder.suggestion)
    holder.suggestion["status"] = "rejected"
    holder.save()
    return holder.suggestion
