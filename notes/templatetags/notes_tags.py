"""The notes panel (an item's tree with forms to add notes and folders) and the project copilot
panel, included by the reader and the project page."""

from __future__ import annotations

from typing import Any

from django import template

from annotagent import llm
from notes.copilot import NO_MODEL
from notes.services import NoteRole, flatten_tree, get_item_for_user, note_tree, notes_role

register = template.Library()


@register.inclusion_tag("notes/_panel.html", takes_context=True)
def notes_panel(context: dict[str, Any], item_type: str, item_id: int | None = None) -> dict[str, Any]:
    """The tree of *item_type* number *item_id* for the signed-in user (who may open it)."""
    user = context["request"].user
    item = get_item_for_user(user, item_type, item_id)
    role = notes_role(user, item)
    rows = flatten_tree(note_tree(item))
    return {
        "item": item,
        "rows": rows,
        "folders": [(depth, node) for depth, node in rows if node["isFolder"]],
        "can_write": role is NoteRole.WRITER,
        "role": role.value if role else "",
        "csrf_token": context.get("csrf_token"),
        # The paper chat suggests notes only with a chat model; say so where its notes are.
        "model_missing": NO_MODEL if item_type == "paper" and not llm.chat_model_configured() else None,
    }


@register.inclusion_tag("notes/_copilot.html", takes_context=True)
def copilot_panel(context: dict[str, Any], project_id: int) -> dict[str, Any]:
    """The project notes copilot: its form, or one sentence on configuring a chat model."""
    return {
        "project_id": project_id,
        "model_missing": None if llm.chat_model_configured() else NO_MODEL,
        "csrf_token": context.get("csrf_token"),
    }
