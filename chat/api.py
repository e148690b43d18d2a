"""REST API of a project's chat history: read and clear. Asking happens over the WebSocket."""

from __future__ import annotations

from http import HTTPStatus

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotagent.http import AuthenticatedRequest
from chat.models import ChatMessage
from chat.services import chat_history, clear_chat
from projects.services import get_project_for_user


class ChatMessageSerializer(serializers.ModelSerializer[ChatMessage]):
    class Meta:
        model = ChatMessage
        fields = ["id", "role", "text", "citations", "state", "extractive", "created_at"]
        read_only_fields = fields


class ProjectChatView(APIView):
    @extend_schema(responses=ChatMessageSerializer(many=True), summary="The project's chat, oldest first")
    def get(self, request: AuthenticatedRequest, pk: int) -> Response:
        project = get_project_for_user(request.user, pk)
        return Response(ChatMessageSerializer(chat_history(project), many=True).data)

    @extend_schema(responses={204: None}, summary="Clear the project's chat")
    def delete(self, request: AuthenticatedRequest, pk: int) -> Response:
        clear_chat(project=get_project_for_user(request.user, pk))
        return Response(status=HTTPStatus.NO_CONTENT)
