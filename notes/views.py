"""Notes pages: one note (editor, rename, move, delete with confirmation), creating notes and
folders, and the library's notes with the library copilot. The trees on the reader and the project
page come from `notes_tags`."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotagent import llm
from annotagent.errors import AnnotagentError
from annotagent.http import AuthenticatedHttpRequest
from notes.copilot import NO_MODEL
from notes.services import (
    UNCHANGED,
    NoteItem,
    NoteRole,
    count_descendants,
    create_note,
    delete_note,
    flatten_tree,
    get_item_for_user,
    get_note_for_user,
    item_of,
    library_item,
    note_tree,
    notes_role,
    update_note,
)


def item_url(item: NoteItem) -> str:
    """Where an item's notes are shown: the reader, the project page or the library's notes."""
    if item.paper is not None:
        return reverse("papers:reader", args=[item.paper.pk])
    if item.project is not None:
        return reverse("projects:detail", args=[item.project.pk])
    return reverse("notes:library")


def _int_or_none(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


@login_required
@require_http_methods(["GET", "POST"])
def note_detail(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    note = get_note_for_user(request.user, pk)
    item = item_of(note)
    if request.method == "POST":
        parent_id = _int_or_none(request.POST.get("parent"))
        try:
            parent = get_note_for_user(request.user, parent_id) if parent_id else None
            note = update_note(
                user=request.user,
                note=note,
                name=request.POST.get("name"),
                content=None if note.is_folder else request.POST.get("content", ""),
                parent=parent if "parent" in request.POST else UNCHANGED,
            )
        except AnnotagentError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Saved “{note.name}”.")
        return redirect("notes:detail", pk=note.pk)
    tree = note_tree(item)
    folders = [(depth, node) for depth, node in flatten_tree(tree) if node["isFolder"] and node["id"] != note.pk]
    return render(
        request,
        "notes/detail.html",
        {
            "note": note,
            "item": item,
            "item_url": item_url(item),
            "rows": flatten_tree(tree),
            "folders": folders,
            "can_write": notes_role(request.user, item) is NoteRole.WRITER,
        },
    )


@login_required
@require_POST
def note_create(request: AuthenticatedHttpRequest) -> HttpResponse:
    item = get_item_for_user(request.user, request.POST.get("item_type", ""), _int_or_none(request.POST.get("item_id")))
    is_folder = request.POST.get("is_folder") == "1"
    try:
        parent_id = _int_or_none(request.POST.get("parent"))
        parent = get_note_for_user(request.user, parent_id) if parent_id else None
        note = create_note(
            user=request.user, item=item, name=request.POST.get("name", ""), parent=parent, is_folder=is_folder
        )
    except AnnotagentError as exc:
        messages.error(request, exc.message)
        return redirect(item_url(item))
    if is_folder:
        messages.success(request, f"Created the folder “{note.name}”.")
        return redirect(item_url(item))
    return redirect("notes:detail", pk=note.pk)


@login_required
@require_http_methods(["GET", "POST"])
def note_delete(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    note = get_note_for_user(request.user, pk)
    item = item_of(note)
    if request.method == "GET":
        return render(
            request,
            "notes/confirm_delete.html",
            {"note": note, "inside": count_descendants(note), "item_url": item_url(item)},
        )
    name = note.name
    try:
        delete_note(user=request.user, note=note)
    except AnnotagentError as exc:
        messages.error(request, exc.message)
        return redirect("notes:detail", pk=note.pk)
    messages.success(request, f"Deleted “{name}”.")
    return redirect(item_url(item))


@login_required
@require_GET
def library_notes(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(
        request,
        "notes/library.html",
        {"item": library_item(request.user), "model_missing": None if llm.chat_model_configured() else NO_MODEL},
    )
