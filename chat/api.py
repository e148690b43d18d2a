"""REST API of a project's chat: read the history, clear it, and ask; and ask or search a project
named by `project_id` (the user's default project when omitted).

Asking answers with JSON (the answer and its references), or, when the client accepts only
`text/event-stream`, with server-sent events of the WebSocket's vocabulary (`chat.events`): one SSE
event per chat event, its `event:` the type and its `data:` the event as JSON.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from http import HTTPStatus
from typing import Any

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import renderers, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotagent.http import AuthenticatedRequest
from chat.events import asker_name
from chat.models import ChatMessage
from chat.services import (
    AnswerSession,
    accept_question,
    answer_question,
    chat_history,
    clear_chat,
    search_for_user,
)
from chat.streaming import answer_events, server_sent_event
from indexing.retrieval import Reference
from projects.models import Project, Role
from projects.services import get_project_for_user

EVENT_STREAM = "text/event-stream"


class ChatMessageSerializer(serializers.ModelSerializer[ChatMessage]):
    asker = serializers.SerializerMethodField(help_text="Who asked (questions only): a member's name.")

    class Meta:
        model = ChatMessage
        fields = [
            "id",
            "role",
            "text",
            "asker",
            "citations",
            "state",
            "extractive",
            "status",
            "sentences",
            "created_at",
        ]
        read_only_fields = fields

    def get_asker(self, message: ChatMessage) -> str:
        return asker_name(message)


class AskSerializer(serializers.Serializer[None]):
    question = serializers.CharField(help_text="At most 4000 characters.")


class ProjectAskSerializer(AskSerializer):
    project_id = serializers.IntegerField(required=False, help_text="The project; my default project when omitted.")


class SearchQuerySerializer(serializers.Serializer[None]):
    q = serializers.CharField(help_text="What to search for.")
    project_id = serializers.IntegerField(required=False, help_text="The project; my default project when omitted.")
    top_k = serializers.IntegerField(required=False, min_value=1, max_value=50)


class PassageSerializer(serializers.Serializer[None]):
    n = serializers.IntegerField()
    paper_id = serializers.IntegerField()
    title = serializers.CharField()
    page = serializers.IntegerField(help_text="1-based physical page of the PDF.")
    url = serializers.CharField(help_text="The reader at that page.")
    text = serializers.CharField()
    score = serializers.FloatField(allow_null=True, help_text="Fused score (hybrid) or cosine similarity.")


class SearchResultSerializer(serializers.Serializer[None]):
    project_id = serializers.IntegerField()
    passages = PassageSerializer(many=True)


class ReferenceSerializer(serializers.Serializer[None]):
    n = serializers.IntegerField(help_text="The number cited as [n] in the answer.")
    paper_id = serializers.IntegerField()
    title = serializers.CharField()
    page = serializers.IntegerField(help_text="1-based physical page of the PDF.")
    url = serializers.CharField(help_text="The reader at that page.")
    text = serializers.CharField(help_text="The cited passage.")


class AnswerSerializer(serializers.Serializer[None]):
    answer = serializers.CharField(help_text="Plain text with [n] citation markers.")
    extractive = serializers.BooleanField(help_text="Quoted from passages without a chat model.")
    references = ReferenceSerializer(many=True, help_text="The cited passages, in order of first citation.")
    status = serializers.CharField(required=False, help_text="How the question was answered, when known.")
    query = serializers.JSONField(required=False, help_text="How the question was read, when known.")


ASK_ERRORS = (
    "Errors: 400 `invalid_question` or `question_too_long`, 404 for a project you are not a member of, "
    "429 `slow_down` beyond USER_QUESTIONS_PER_MINUTE, 503 `service_unavailable`."
)


class EventStreamRenderer(renderers.BaseRenderer):
    """Lets clients negotiate `text/event-stream`; answers are streamed by the view, so only errors
    (a dict from the exception handler) are rendered here, as one `error` event."""

    media_type = EVENT_STREAM
    format = "sse"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        error = data.get("error", {}) if isinstance(data, Mapping) else {}
        event = {"type": "error", "code": error.get("code", "error"), "message": error.get("message", "")}
        return server_sent_event(event).encode()


def answer_json(answer: Any) -> dict[str, Any]:
    """The JSON body of an answer: text, references, and its status and query when it has them."""
    body: dict[str, Any] = {
        "answer": answer.text,
        "extractive": answer.extractive,
        "references": [{"n": ref.n, "url": ref.url, **ref.as_citation()} for ref in answer.references],
    }
    for name in ("status", "query"):
        value = getattr(answer, name, None)
        if value is not None:
            body[name] = value
    return body


async def event_stream(session: AnswerSession, *, where: str) -> AsyncGenerator[str, None]:
    """The server-sent events of *session*; a client that hangs up stops the answer, which is then
    saved as stopped (as a cancel on the WebSocket)."""
    try:
        async with aclosing(answer_events(session, where=where)) as stream:
            async for event in stream:
                yield server_sent_event(event)
    finally:
        if session.saved is None:
            await session.save(state=ChatMessage.State.STOPPED)


class ProjectChatView(APIView):
    renderer_classes = [renderers.JSONRenderer, renderers.BrowsableAPIRenderer, EventStreamRenderer]

    @extend_schema(responses=ChatMessageSerializer(many=True), summary="The project's chat, oldest first (reader)")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk)
        return Response(ChatMessageSerializer(chat_history(project), many=True).data)

    @extend_schema(
        request=AskSerializer,
        responses={
            (200, "application/json"): AnswerSerializer,
            (200, EVENT_STREAM): OpenApiResponse(
                OpenApiTypes.STR,
                description="With `Accept: text/event-stream`: server-sent events of the WebSocket's "
                "vocabulary (answer.start, answer.citation, answer.delta, answer.done, error); each "
                "event's `data` is the event as JSON.",
            ),
        },
        summary="Ask the project's chat a question (reader; saved in its history, stamped with me as the asker)",
        description=ASK_ERRORS,
    )
    def post(self, request: AuthenticatedRequest, pk: int) -> Response | StreamingHttpResponse:
        return ask(request, get_project_for_user(request.user, pk))

    @extend_schema(responses={204: None}, summary="Clear the project's chat (writer)")
    def delete(self, request: AuthenticatedRequest, pk: int) -> Response:
        clear_chat(project=get_project_for_user(request.user, pk, need=Role.WRITER))
        return Response(status=HTTPStatus.NO_CONTENT)


def ask(request: AuthenticatedRequest, project: Project) -> Response | StreamingHttpResponse:
    """Ask *project* (already checked) the request's question as a turn of its chat, as JSON or as
    server-sent events (see the module docstring). The asker is always `request.user`."""
    body = request.data if isinstance(request.data, Mapping) else {}
    question = accept_question(user=request.user, text=body.get("question"))
    assert request.accepted_renderer is not None
    if request.accepted_renderer.media_type == EVENT_STREAM:
        session = AnswerSession(project=project, user=request.user, question=question)
        response = StreamingHttpResponse(event_stream(session, where=request.path), content_type=EVENT_STREAM)
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # proxies must not hold events back
        return response
    return Response(answer_json(answer_question(project=project, user=request.user, question=question, chat=True)))


def _project_id(value: object) -> int | None:
    """The optional `project_id` of a request: None (the default project) or an int."""
    if value in (None, ""):
        return None
    try:
        return int(str(value))
    except ValueError:
        raise serializers.ValidationError({"project_id": "A project id is a number."}) from None


class AskView(APIView):
    renderer_classes = [renderers.JSONRenderer, renderers.BrowsableAPIRenderer, EventStreamRenderer]

    @extend_schema(
        request=ProjectAskSerializer,
        responses={(200, "application/json"): AnswerSerializer},
        summary="Ask a project (reader; `project_id` omitted: my default project); a turn of its chat",
        description=ASK_ERRORS,
    )
    def post(self, request: AuthenticatedRequest) -> Response | StreamingHttpResponse:
        body = request.data if isinstance(request.data, Mapping) else {}
        return ask(request, get_project_for_user(request.user, _project_id(body.get("project_id"))))


class SearchView(APIView):
    @extend_schema(
        parameters=[SearchQuerySerializer],
        responses=SearchResultSerializer,
        summary="Search a project's passages (reader; `project_id` omitted: my default project)",
    )
    def get(self, request: AuthenticatedRequest) -> Response:
        query = SearchQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        project, retrieval = search_for_user(
            user=request.user,
            project_id=query.validated_data.get("project_id"),
            query=query.validated_data["q"],
            top_k=query.validated_data.get("top_k"),
        )
        return Response({"project_id": project.pk, "passages": passages_json(retrieval.references)})


def passages_json(references: Sequence[Reference]) -> list[dict[str, Any]]:
    """The JSON form of searched passages (see PassageSerializer): the cited fields, their number,
    the reader's URL at the page, and the fused score (hybrid) or else the cosine similarity."""
    return [
        {
            **ref.as_citation(),
            "n": ref.n,
            "url": ref.url,
            "score": ref.fused_score if ref.fused_score is not None else ref.cosine_similarity,
        }
        for ref in references
    ]
