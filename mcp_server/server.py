"""Annotagent's tools for agents over the Model Context Protocol (the official `mcp` SDK).

An edge like the REST API: every tool acts as one authenticated user, the user of a DRF API token
(`user_for_token`): over stdio the one the server was started with (`build_server(user)`), over HTTP
the one `mcp_server.http` authenticated for the request (`build_server()`). Each tool resolves the
project it names (or the user's default project when `project_id` is omitted) with
`projects.services.get_project_for_user`, and calls the same services and JSON shapes as
`/api/projects/`, `/api/search/` and `/api/ask/`.

Tools: `project_list`, `project_get`, `project_default_get`, `search`, `ask`. Member management is
deliberately not offered. A failed call returns an MCP tool error whose text is the API's error body,
`{"error": {"code": ..., "message": ...}}`: `not_found` for a project the user is not a member of
(exactly as for one that does not exist), `forbidden`, `invalid_question`, `slow_down`, ...
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.http import Http404
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from annotagent.errors import AnnotagentError
from chat.api import answer_json, passages_json
from chat.services import accept_question, answer_question, search_for_user
from projects.api import ProjectSerializer
from projects.models import Project
from projects.services import ensure_default_project, get_project_for_user

_T = TypeVar("_T")

INSTRUCTIONS = (
    "Annotagent holds a researcher's papers grouped into projects. Use `search` for the passages of a "
    "project's papers (paper, page, score) and `ask` for an answer citing them as [n]; both take an "
    "optional project_id (see `project_list`), the user's default project when omitted."
)


class TokenError(Exception):
    """The API token is missing, unknown, or its user is inactive."""


def user_for_token(key: str | None) -> User:
    """The active user of the DRF API token *key* (as `Authorization: Token <key>` on the API).

    Raises TokenError with a message fit for an operator."""
    if not key or not key.strip():
        raise TokenError("No API token given (get one at /api/auth/token/).")
    try:
        user, _ = TokenAuthentication().authenticate_credentials(key.strip())
    except AuthenticationFailed as error:
        raise TokenError(f"The API token was refused: {error.detail}") from None
    return user


def _error(code: str, message: str) -> ToolError:
    return ToolError(json.dumps({"error": {"code": code, "message": message}}))


async def _run(fn: Callable[[], _T]) -> _T:
    """Run the synchronous *fn* (ORM, services) in Django's thread for sync code, mapping our errors
    to tool errors with the API's codes."""
    try:
        return await sync_to_async(fn)()
    except Http404:
        raise _error("not_found", "No such project.") from None
    except AnnotagentError as error:
        raise _error(error.code, error.message) from None


def project_json(project: Project) -> dict[str, Any]:
    """A project as `GET /api/projects/<id>/` shows it (with the user's role)."""
    return dict(ProjectSerializer(project).data)


def request_user(ctx: Context) -> User:
    """The user `mcp_server.http` authenticated for the HTTP request carrying this tool call (its
    ASGI scope's `user`). Raises a `not_authenticated` tool error when there is none."""
    request = ctx.request_context.request
    user = getattr(request, "scope", {}).get("user") if request is not None else None
    if not isinstance(user, User):
        raise _error("not_authenticated", "No API token was given with the request.")
    return user


def build_server(user: User | None = None) -> MCPServer:
    """An MCP server whose tools act as *user* (already authenticated; stdio), or, without one, as the
    user authenticated for each HTTP request (see `request_user`)."""
    server = MCPServer(name="annotagent", instructions=INSTRUCTIONS)

    def caller(ctx: Context) -> User:
        return user if user is not None else request_user(ctx)

    @server.tool()
    async def project_list(ctx: Context) -> dict[str, Any]:
        """The projects I am a member of, my default project first, each with my role
        (admin, writer or reader), its paper count and member count."""

        me = caller(ctx)

        def run() -> dict[str, Any]:
            ensure_default_project(me)
            projects = Project.objects.for_user(me).default_first().select_related("owner")
            return {"projects": [project_json(project) for project in projects]}

        return await _run(run)

    @server.tool()
    async def project_get(ctx: Context, project_id: int | None = None) -> dict[str, Any]:
        """One project I am a member of (my default project when project_id is omitted), with my role."""
        me = caller(ctx)
        return await _run(lambda: project_json(get_project_for_user(me, project_id)))

    @server.tool()
    async def project_default_get(ctx: Context) -> dict[str, Any]:
        """My default private project ("My papers")."""
        me = caller(ctx)
        return await _run(lambda: project_json(get_project_for_user(me, None)))

    @server.tool()
    async def search(
        ctx: Context, query: str, project_id: int | None = None, top_k: int | None = None
    ) -> dict[str, Any]:
        """The passages of a project's papers that best match *query*: each with its paper (paper_id,
        title), 1-based PDF page, text, reader URL and score (fused hybrid score, or cosine
        similarity). project_id omitted: my default project. top_k: 1 to 50 passages."""
        if top_k is not None and not 1 <= top_k <= 50:
            raise _error("invalid", "top_k is between 1 and 50.")
        me = caller(ctx)

        def run() -> dict[str, Any]:
            project, retrieval = search_for_user(user=me, project_id=project_id, query=query, top_k=top_k)
            return {"project_id": project.pk, "passages": passages_json(retrieval.references)}

        return await _run(run)

    @server.tool()
    async def ask(ctx: Context, question: str, project_id: int | None = None) -> dict[str, Any]:
        """Ask a project a question; the answer cites its passages as [n]. Returns `answer` (text with
        [n] markers), `status` (answered, partly_answered, not_stated, no_papers), `references` (n,
        paper_id, title, page, text, url) and `extractive`. The question and answer become a turn of
        the project's chat, asked by me. project_id omitted: my default project."""
        me = caller(ctx)

        def run() -> dict[str, Any]:
            project = get_project_for_user(me, project_id)
            checked = accept_question(user=me, text=question)
            answer = answer_question(project=project, user=me, question=checked, chat=True)
            return {"project_id": project.pk, **answer_json(answer)}

        return await _run(run)

    return server
