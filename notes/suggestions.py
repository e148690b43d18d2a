"""Copilot tools: their schemas, and turning one tool call into a suggestion, a read result or a
short refusal, within a chat's scope.

A suggestion (stored in a JSON field with the assistant message) is
`{"id": "sug_<8 hex>", "status": "pending"|"accepted"|"rejected", "type": "edit"|"create",
"noteId" (edit; for create, set once accepted), "noteName", "content" (sanitised HTML, `[N]` citations
linked), "description", "diff" (edit: [{"op": " "|"-"|"+", "text"}] of the note's text lines),
"baseVersion" (edit: the note's version when suggested), "preview" (create: the text),
"parentId" and "item" ({"type", "id", "title"}: where a new note goes)}`.

The model never writes a note: `notes.review.accept_suggestion` does, when the user accepts.
"""

from __future__ import annotations

import difflib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from annotagent.errors import AnnotagentError
from annotagent.llm import ToolCall
from notes.models import Note
from notes.sanitize import html_to_text, link_citations, sanitize_html
from notes.services import MAX_NAME_CHARS, NoteItem, check_content, item_of, note_tree

# Characters of a note's text the model sees per note in a notes tree, and of a read_note result.
NOTE_TEXT_CHARS = 2000
READ_NOTE_CHARS = 20_000

SUGGEST_NOTE_EDIT = "suggest_note_edit"
SUGGEST_NOTE_CREATE = "suggest_note_create"
READ_NOTE = "read_note"
LIST_ITEM_NOTES = "list_item_notes"
OUTPUT_TOOLS = {SUGGEST_NOTE_EDIT, SUGGEST_NOTE_CREATE}


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


EDIT_TOOL = _function(
    SUGGEST_NOTE_EDIT,
    "Suggest a full replacement of an existing note's HTML. The user reviews it and accepts or rejects it.",
    {
        "note_id": {"type": "integer", "description": "The id of the note, from the notes tree."},
        "note_name": {"type": "string"},
        "content": {"type": "string", "description": "The note's complete new HTML (p, h1-h3, ul, ol, li, a, ...)."},
        "description": {"type": "string", "description": "One sentence: what changes and why."},
    },
    ["note_id", "note_name", "content", "description"],
)
CREATE_TOOL = _function(
    SUGGEST_NOTE_CREATE,
    "Suggest a new note. The user reviews it and accepts or rejects it.",
    {
        "note_name": {"type": "string"},
        "parent_id": {"type": ["integer", "null"], "description": "A folder id from the notes tree, or null."},
        "content": {"type": "string", "description": "The note's HTML."},
        "description": {"type": "string", "description": "One sentence: what the note is for."},
    },
    ["note_name", "parent_id", "content", "description"],
)
READ_TOOL = _function(
    READ_NOTE,
    "Read the full HTML of a note in scope.",
    {"note_id": {"type": "integer"}},
    ["note_id"],
)
LIST_TOOL = _function(
    LIST_ITEM_NOTES,
    "List the notes tree of the project (item_type 'project') or of one of its papers (item_type 'paper').",
    {"item_type": {"type": "string", "enum": ["project", "paper"]}, "item_id": {"type": "integer"}},
    ["item_type", "item_id"],
)
OUTPUT_TOOL_SCHEMAS = [EDIT_TOOL, CREATE_TOOL]
ALL_TOOL_SCHEMAS = [EDIT_TOOL, CREATE_TOOL, READ_TOOL, LIST_TOOL]


# --- pure helpers ---------------------------------------------------------------------------------


def new_suggestion_id() -> str:
    return f"sug_{secrets.token_hex(4)}"


def line_diff(before: str, after: str) -> list[dict[str, str]]:
    """The line diff of two texts (difflib's ndiff, hint lines dropped): `{"op", "text"}` per line,
    op " " (kept), "-" (removed) or "+" (added)."""
    lines = difflib.ndiff(before.splitlines(), after.splitlines())
    return [{"op": line[0], "text": line[2:]} for line in lines if line[:1] in (" ", "-", "+")]


def summary_sentence(suggestions: list[dict[str, Any]]) -> str:
    """ "Here are my suggestions: 2 edits and 1 new note." for a reply made of tool calls only."""
    edits = sum(1 for s in suggestions if s["type"] == "edit")
    creates = len(suggestions) - edits
    parts = []
    if edits:
        parts.append(f"{edits} edit{'s' if edits != 1 else ''}")
    if creates:
        parts.append(f"{creates} new note{'s' if creates != 1 else ''}")
    return f"Here are my suggestions: {' and '.join(parts)}." if parts else ""


def tree_lines(item: NoteItem, *, with_text: bool) -> list[str]:
    """*item*'s notes tree as `[folder] Name (id N)` / `[note] Name (id N)` lines, indented by depth;
    with *with_text*, each note followed by its text up to `NOTE_TEXT_CHARS` characters."""
    notes = {note.pk: note for note in item.notes()} if with_text else {}
    lines: list[str] = []

    def walk(nodes: list[dict[str, Any]], depth: int) -> None:
        for node in nodes:
            pad = "  " * depth
            kind = "folder" if node["isFolder"] else "note"
            lines.append(f"{pad}[{kind}] {node['name']} (id {node['id']})")
            if with_text and not node["isFolder"]:
                text = html_to_text(notes[node["id"]].content)
                if len(text) > NOTE_TEXT_CHARS:
                    text = text[:NOTE_TEXT_CHARS] + " […]"
                for line in (text or "(empty)").splitlines():
                    lines.append(f"{pad}    {line}")
            walk(node["children"], depth + 1)

    walk(note_tree(item), 0)
    return lines


# --- scope and tool calls -------------------------------------------------------------------------


@dataclass
class CopilotScope:
    """What a copilot chat may read and suggest changes to: *items* (each already checked as
    visible to the user); a new note without a parent goes to *primary*. *citations* maps `[N]`
    to its paper and page, so suggested content keeps its citations as links."""

    primary: NoteItem
    items: list[NoteItem]
    citations: dict[str, dict[str, Any]] = field(default_factory=dict)

    def note(self, note_id: Any) -> Note | None:
        """The note or folder numbered *note_id* when it belongs to an item in scope, else None."""
        note = Note.objects.filter(pk=note_id).select_related("paper", "project", "user").first()
        return note if note is not None and item_of(note) in self.items else None

    def item(self, kind: Any, item_id: Any) -> NoteItem | None:
        return next((i for i in self.items if i.kind == kind and i.item_id == item_id), None)


@dataclass
class ToolOutcome:
    """What one tool call came to: *result* is the tool message for the model; *suggestion* the
    suggestion recorded; *refusal* a short explanation for the user when the call was refused."""

    result: str
    suggestion: dict[str, Any] | None = None
    refusal: str | None = None


def _refuse(text: str) -> ToolOutcome:
    return ToolOutcome(result=f"Error: {text}", refusal=text)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _text(arguments: dict[str, Any], key: str) -> str | None:
    value = arguments.get(key)
    return value if isinstance(value, str) else None


def _content(scope: CopilotScope, html: str) -> str:
    return sanitize_html(link_citations(check_content(html), scope.citations))


def handle_tool_call(call: ToolCall, *, scope: CopilotScope, read_tools: bool) -> ToolOutcome:
    """Run one tool call within *scope*: output tools become suggestions, read tools (when
    *read_tools*) return notes; anything invalid (unknown tool, malformed JSON, a note or folder
    outside the scope, a parent that is not a folder) becomes a refusal. Never raises for bad
    arguments and never writes a note."""
    known = OUTPUT_TOOLS | ({READ_NOTE, LIST_ITEM_NOTES} if read_tools else set())
    if call.name not in known:
        return _refuse(f"There is no tool named {call.name[:60]!r}.")
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError:
        return _refuse(f"The arguments of {call.name} were not valid JSON.")
    if not isinstance(arguments, dict):
        return _refuse(f"The arguments of {call.name} must be a JSON object.")
    try:
        if call.name == SUGGEST_NOTE_EDIT:
            return _suggest_edit(arguments, scope)
        if call.name == SUGGEST_NOTE_CREATE:
            return _suggest_create(arguments, scope)
        if call.name == READ_NOTE:
            return _read_note(arguments, scope)
        return _list_notes(arguments, scope)
    except AnnotagentError as exc:  # oversized content, a bad name: told, never raised
        return _refuse(exc.message)


def _suggest_edit(arguments: dict[str, Any], scope: CopilotScope) -> ToolOutcome:
    note_id = _int(arguments.get("note_id"))
    content, description = _text(arguments, "content"), _text(arguments, "description")
    if note_id is None or content is None:
        return _refuse("suggest_note_edit needs an integer note_id and the note's content.")
    note = scope.note(note_id)
    if note is None or note.is_folder:
        return _refuse(f"Note {note_id} is not one of the notes this chat can see, so it was not edited.")
    cleaned = _content(scope, content)
    suggestion = {
        "id": new_suggestion_id(),
        "status": "pending",
        "type": "edit",
        "noteId": note.pk,
        "noteName": note.name,
        "content": cleaned,
        "description": (description or "").strip()[:500],
        "baseVersion": note.version,
        "diff": line_diff(html_to_text(note.content), html_to_text(cleaned)),
    }
    return ToolOutcome(
        result=f"Suggestion {suggestion['id']} recorded: the user will review it.", suggestion=suggestion
    )


def _suggest_create(arguments: dict[str, Any], scope: CopilotScope) -> ToolOutcome:
    name, content, description = (
        _text(arguments, "note_name"),
        _text(arguments, "content"),
        _text(arguments, "description"),
    )
    if not name or not name.strip() or content is None:
        return _refuse("suggest_note_create needs a note_name and the note's content.")
    raw_parent = arguments.get("parent_id")
    item, parent_id = scope.primary, None
    if raw_parent is not None:
        parent_id = _int(raw_parent)
        parent = scope.note(parent_id) if parent_id is not None else None
        if parent is None or not parent.is_folder:
            return _refuse(f"{raw_parent!s:.40} is not a folder this chat can see; the note was not suggested.")
        item = item_of(parent)
    cleaned = _content(scope, content)
    suggestion = {
        "id": new_suggestion_id(),
        "status": "pending",
        "type": "create",
        "noteName": name.strip()[:MAX_NAME_CHARS],
        "content": cleaned,
        "description": (description or "").strip()[:500],
        "parentId": parent_id,
        "item": item.as_json(),
        "preview": html_to_text(cleaned),
    }
    return ToolOutcome(
        result=f"Suggestion {suggestion['id']} recorded: the user will review it.", suggestion=suggestion
    )


def _read_note(arguments: dict[str, Any], scope: CopilotScope) -> ToolOutcome:
    note_id = _int(arguments.get("note_id"))
    note = scope.note(note_id) if note_id is not None else None
    if note is None or note.is_folder:
        return _refuse(f"Note {arguments.get('note_id')!s:.40} is not one of the notes this chat can see.")
    return ToolOutcome(result=f'<note id="{note.pk}" name="{note.name}">\n{note.content[:READ_NOTE_CHARS]}\n</note>')


def _list_notes(arguments: dict[str, Any], scope: CopilotScope) -> ToolOutcome:
    item = scope.item(arguments.get("item_type"), _int(arguments.get("item_id")))
    if item is None:
        return _refuse("That item is not in this chat's scope.")
    return ToolOutcome(result="\n".join(tree_lines(item, with_text=False)) or "(no notes yet)")
