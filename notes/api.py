"""REST API of notes (tree, read, create, update, delete, save an answer), of the copilots (the
project copilot and the library copilot: history and ask) and of suggestions (accept, reject).

Another user's note, paper or project answers 404; a note the user may only read answers 403
(`notes_read_only`). Errors are `{"error": {"code", "message"}}` (see `annotagent.exceptions`).
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotagent.http import AuthenticatedRequest
from chat.services import MAX_QUESTION_CHARS
from notes import copilot, review
from notes.models import CopilotMessage, Note
from notes.services import (
    UNCHANGED,
    create_note,
    delete_note,
    get_item_for_user,
    get_note_for_user,
    item_of,
    note_tree,
    notes_role,
    save_answer_to_note,
    update_note,
    visible_notes,
)
from papers.models import Paper
from projects.models import Project
from projects.services import get_project_for_user

ITEM_TYPES = [choice for choice, _ in Note.Scope.choices]


def note_json(note: Note) -> dict[str, Any]:
    return {
        "id": note.pk,
        "name": note.name,
        "isFolder": note.is_folder,
        "parentId": note.parent_id,
        "content": note.content,
        "version": note.version,
        "item": item_of(note).as_json(),
        "updatedAt": note.updated_at.isoformat(),
    }


def copilot_message_json(message: CopilotMessage) -> dict[str, Any]:
    return {
        "id": message.pk,
        "role": message.role,
        "text": message.text,
        "citations": message.citations,
        "suggestions": message.suggestions,
        "state": "complete",
        "created_at": message.created_at.isoformat(),
    }


class ItemSerializer(serializers.Serializer[Any]):
    item_type = serializers.ChoiceField(choices=ITEM_TYPES)
    item_id = serializers.IntegerField(required=False, allow_null=True, default=None)


class NoteCreateSerializer(ItemSerializer):
    name = serializers.CharField(max_length=200)
    parent_id = serializers.IntegerField(required=False, allow_null=True, default=None)
    is_folder = serializers.BooleanField(required=False, default=False)
    content = serializers.CharField(required=False, allow_blank=True, default="", trim_whitespace=False)


class NoteUpdateSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=200, required=False)
    content = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    parent_id = serializers.IntegerField(required=False, allow_null=True)


class SaveAnswerSerializer(ItemSerializer):
    text = serializers.CharField(trim_whitespace=False)
    citations = serializers.DictField(required=False, default=dict)
    note_id = serializers.IntegerField(required=False, allow_null=True, default=None)
    name = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)


class QuestionSerializer(serializers.Serializer[Any]):
    text = serializers.CharField(max_length=MAX_QUESTION_CHARS)


class MentionSerializer(serializers.Serializer[Any]):
    type = serializers.ChoiceField(choices=["paper", "note", "project"])
    id = serializers.IntegerField()
    full_text = serializers.BooleanField(required=False, default=False)


class LibraryQuestionSerializer(QuestionSerializer):
    mentions = MentionSerializer(many=True, required=False, default=list)


def _valid(serializer_class: type[serializers.Serializer[Any]], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _parent(request: AuthenticatedRequest, parent_id: int | None) -> Note | None:
    return None if parent_id is None else get_note_for_user(request.user, parent_id)


class NoteTreeView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("item_type", str, enum=ITEM_TYPES), OpenApiParameter("item_id", int)],
        responses={200: dict},
        summary="The notes tree of a paper (yours), a project or your library",
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        data = _valid(ItemSerializer, request.query_params)
        item = get_item_for_user(request.user, data["item_type"], data["item_id"])
        role = notes_role(request.user, item)
        return Response({"item": item.as_json(), "role": role.value if role else None, "tree": note_tree(item)})


class NoteListView(APIView):
    @extend_schema(request=NoteCreateSerializer, responses={201: dict}, summary="Create a note or folder")
    def post(self, request: AuthenticatedRequest) -> Response:
        data = _valid(NoteCreateSerializer, request.data)
        item = get_item_for_user(request.user, data["item_type"], data["item_id"])
        note = create_note(
            user=request.user,
            item=item,
            name=data["name"],
            parent=_parent(request, data["parent_id"]),
            is_folder=data["is_folder"],
            content=data["content"],
        )
        return Response(note_json(note), status=HTTPStatus.CREATED)


class NoteDetailView(APIView):
    @extend_schema(responses={200: dict}, summary="A note with its sanitised HTML")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        return Response(note_json(get_note_for_user(request.user, pk)))

    @extend_schema(request=NoteUpdateSerializer, responses={200: dict}, summary="Rename, move or edit a note")
    def patch(self, request: AuthenticatedRequest, pk: int) -> Response:
        note = get_note_for_user(request.user, pk)
        data = _valid(NoteUpdateSerializer, request.data)
        parent = _parent(request, data["parent_id"]) if "parent_id" in data else UNCHANGED
        note = update_note(
            user=request.user, note=note, name=data.get("name"), content=data.get("content"), parent=parent
        )
        return Response(note_json(note))

    @extend_schema(responses={204: None}, summary="Delete a note, or a folder with everything in it")
    def delete(self, request: AuthenticatedRequest, pk: int) -> Response:
        delete_note(user=request.user, note=get_note_for_user(request.user, pk))
        return Response(status=HTTPStatus.NO_CONTENT)


class SaveAnswerView(APIView):
    @extend_schema(
        request=SaveAnswerSerializer,
        responses={201: dict, 200: dict},
        summary="Save an answer as a new note (201; 200 with the note that already holds it) or append it (200)",
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        data = _valid(SaveAnswerSerializer, request.data)
        item = get_item_for_user(request.user, data["item_type"], data["item_id"])
        target = get_note_for_user(request.user, data["note_id"]) if data["note_id"] is not None else None
        saved = save_answer_to_note(
            user=request.user, item=item, text=data["text"], citations=data["citations"], note=target, name=data["name"]
        )
        created = target is None and not saved.already
        return Response(note_json(saved.note), status=HTTPStatus.CREATED if created else HTTPStatus.OK)


class MentionsView(APIView):
    @extend_schema(responses={200: dict}, summary="What the library copilot can be given as context")
    def get(self, request: AuthenticatedRequest) -> Response:
        user = request.user
        items = [{"type": "paper", "id": p.pk, "title": p.display_title} for p in Paper.objects.in_library_of(user)]
        items += [{"type": "project", "id": p.pk, "title": p.name} for p in Project.objects.for_user(user)]
        items += [
            {"type": "note", "id": n.pk, "title": n.name} for n in visible_notes(user).filter(is_folder=False)[:500]
        ]
        return Response({"items": items})


class ProjectCopilotView(APIView):
    @extend_schema(responses={200: dict}, summary="Your project copilot messages, oldest first")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk)
        messages = copilot.copilot_history(request.user, project)
        return Response({"messages": [copilot_message_json(m) for m in messages]})

    @extend_schema(request=QuestionSerializer, responses={201: dict}, summary="Ask the project notes copilot")
    def post(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk)
        data = _valid(QuestionSerializer, request.data)
        message = copilot.ask_project_copilot(user=request.user, project=project, question=data["text"])
        return Response(copilot_message_json(message), status=HTTPStatus.CREATED)


class LibraryCopilotView(APIView):
    @extend_schema(responses={200: dict}, summary="Your library copilot messages, oldest first")
    def get(self, request: AuthenticatedRequest) -> Response:
        messages = copilot.copilot_history(request.user, None)
        return Response({"messages": [copilot_message_json(m) for m in messages]})

    @extend_schema(
        request=LibraryQuestionSerializer, responses={201: dict}, summary="Ask the library copilot with @-mentions"
    )
    def post(self, request: AuthenticatedRequest) -> Response:
        data = _valid(LibraryQuestionSerializer, request.data)
        mentions = [copilot.Mention(kind=m["type"], id=m["id"], full_text=m["full_text"]) for m in data["mentions"]]
        message = copilot.ask_library_copilot(user=request.user, question=data["text"], mentions=mentions)
        return Response(copilot_message_json(message), status=HTTPStatus.CREATED)


def _decide(request: AuthenticatedRequest, action: str, locate: Callable[[], review.SuggestionHolder]) -> Response:
    if action == "reject":
        return Response({"suggestion": review.reject_suggestion(locate=locate)})
    if action != "accept":
        raise Http404("No such action.")
    try:
        note, suggestion = review.accept_suggestion(user=request.user, locate=locate)
    except review.SuggestionConflictError as exc:
        return Response(
            {"error": {"code": exc.code, "message": exc.message}, "suggestion": exc.suggestion},
            status=HTTPStatus.CONFLICT,
        )
    return Response({"note": note_json(note), "suggestion": suggestion})


class PaperSuggestionView(APIView):
    @extend_schema(request=None, responses={200: dict, 409: dict}, summary="Accept or reject a paper chat suggestion")
    def post(self, request: AuthenticatedRequest, paper_id: int, message_id: int, sid: str, action: str) -> Response:
        return _decide(
            request,
            action,
            lambda: review.paper_chat_suggestion(
                user=request.user, paper_id=paper_id, message_id=message_id, suggestion_id=sid
            ),
        )


class CopilotSuggestionView(APIView):
    @extend_schema(request=None, responses={200: dict, 409: dict}, summary="Accept or reject a copilot suggestion")
    def post(self, request: AuthenticatedRequest, message_id: int, sid: str, action: str) -> Response:
        return _decide(
            request,
            action,
            lambda: review.copilot_suggestion(user=request.user, message_id=message_id, suggestion_id=sid),
        )
