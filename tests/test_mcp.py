"""The MCP tools (`mcp_server`) through the SDK's client over its in-memory transport: each tool for
each persona on alice's shared project "Consensus" (alice admin, bob writer, carol reader, mallory
outsider), the default project when no project is named, and the API token that authenticates;
then over streamable HTTP through the ASGI app, with the token as a Bearer header."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.core.management.base import CommandError
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent
from rest_framework.authtoken.models import Token

from chat.models import ChatMessage
from mcp_server.server import TokenError, build_server, user_for_token
from projects.models import Role
from projects.services import add_member

pytestmark = pytest.mark.django_db

PERSONAS = ["alice", "bob", "carol", "mallory"]
ROLES = {"alice": "admin", "bob": "writer", "carol": "reader"}


@pytest.fixture
def lab(alice, bob, carol, mallory, indexed_project):
    """The personas by name and alice's indexed project "Consensus" shared with bob and carol."""
    add_member(project=indexed_project, user=bob, role=Role.WRITER)
    add_member(project=indexed_project, user=carol, role=Role.READER)
    return {"alice": alice, "bob": bob, "carol": carol, "mallory": mallory, "project": indexed_project}


def unpack(result: CallToolResult) -> tuple[bool, Any]:
    """(is_error, the structured result or the error body, which the SDK's text prefixes with "Error
    executing tool <name>: ")."""
    if result.is_error:
        (content,) = result.content
        assert isinstance(content, TextContent)
        text = content.text
        return True, json.loads(text[text.index("{") :])
    return False, result.structured_content


def call(user, tool: str, **arguments: Any) -> tuple[bool, Any]:
    """Call *tool* as *user* through an MCP client session (the JSON-RPC path, as over stdio)."""

    async def run() -> Any:
        async with Client(build_server(user), mode="legacy") as client:
            return await client.call_tool(tool, arguments)

    return unpack(async_to_sync(run)())


def test_the_tools_offered_leave_member_management_out(alice):
    async def run() -> list[str]:
        async with Client(build_server(alice), mode="legacy") as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    assert sorted(async_to_sync(run)()) == ["ask", "project_default_get", "project_get", "project_list", "search"]


@pytest.mark.parametrize("persona", PERSONAS)
def test_project_list_shows_the_shared_project_to_members_only(lab, persona):
    error, result = call(lab[persona], "project_list")
    assert not error
    names = {project["name"]: project for project in result["projects"]}
    assert result["projects"][0]["is_default"] and result["projects"][0]["owner"] == persona
    if persona in ROLES:
        assert names["Consensus"]["role"] == ROLES[persona] and names["Consensus"]["paper_count"] == 2
    else:
        assert "Consensus" not in names
    assert [p for p in result["projects"] if p["is_default"]] == [result["projects"][0]]  # only my own default


@pytest.mark.parametrize("persona", PERSONAS)
def test_project_get_of_the_shared_project(lab, persona):
    error, result = call(lab[persona], "project_get", project_id=lab["project"].pk)
    if persona in ROLES:
        assert not error and (result["id"], result["role"]) == (lab["project"].pk, ROLES[persona])
    else:
        assert error and result["error"]["code"] == "not_found"
        assert "Consensus" not in json.dumps(result)


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("tool", ["project_get", "project_default_get"])
def test_no_project_named_is_my_own_default_project(lab, persona, tool):
    error, result = call(lab[persona], tool)
    assert not error
    assert (result["owner"], result["is_default"], result["role"]) == (persona, True, "admin")


@pytest.mark.parametrize("persona", PERSONAS)
def test_search_the_shared_project(lab, persona):
    error, result = call(
        lab[persona], "search", query="How does a candidate become the leader?", project_id=lab["project"].pk
    )
    if persona in ROLES:
        assert not error and result["project_id"] == lab["project"].pk
        top = result["passages"][0]
        assert (top["title"], top["page"]) == ("Raft", 1)
        assert isinstance(top["score"], float) and "majority" in top["text"]
        assert {p["title"] for p in result["passages"]} <= {"Raft", "Paxos"}
    else:
        assert error and result["error"]["code"] == "not_found"
        assert "Raft" not in json.dumps(result) and "leader" not in json.dumps(result)


@pytest.mark.parametrize("persona", PERSONAS)
def test_ask_the_shared_project_for_a_cited_answer(lab, persona):
    project = lab["project"]
    error, result = call(lab[persona], "ask", question="When is a Paxos value chosen?", project_id=project.pk)
    questions = ChatMessage.objects.filter(chat__project=project, role="user")
    if persona in ROLES:
        assert not error and result["status"] == "answered" and "[1]" in result["answer"]
        first = result["references"][0]
        assert (first["n"], first["title"], first["page"]) == (1, "Paxos", 2)
        assert [message.author for message in questions] == [lab[persona]]  # a turn stamped with the asker
    else:
        assert error and result["error"]["code"] == "not_found"
        assert "Paxos" not in json.dumps(result)
        assert not questions.exists()


@pytest.mark.parametrize("tool", ["search", "ask"])
def test_search_and_ask_without_a_project_stay_in_my_default_project(lab, tool):
    # bob's default project holds no papers: nothing of alice's shared project may come back.
    arguments = {"query": "leader election"} if tool == "search" else {"question": "How is a leader elected?"}
    error, result = call(lab["bob"], tool, **arguments)
    assert not error
    assert (
        result["project_id"]
        == ChatMessage._meta.apps.get_model("projects", "Project").objects.get(owner=lab["bob"], is_default=True).pk
    )
    assert result.get("passages", result.get("references")) == []
    if tool == "ask":
        assert result["status"] == "no_papers"


def test_an_empty_question_is_an_error_with_the_apis_code(lab):
    error, result = call(lab["carol"], "ask", question="   ", project_id=lab["project"].pk)
    assert error and result["error"]["code"] == "invalid_question"


def test_the_api_token_names_the_user(alice):
    token = Token.objects.create(user=alice)
    assert user_for_token(token.key) == alice


@pytest.mark.parametrize("key", ["", "not-a-token"])
def test_a_missing_or_invalid_token_is_refused(alice, key):
    Token.objects.create(user=alice)
    with pytest.raises(TokenError):
        user_for_token(key)
    with pytest.raises(CommandError, match="ANNOTAGENT_TOKEN"):
        call_command("mcp_server", token=key)


def test_the_token_of_an_inactive_user_is_refused(alice):
    token = Token.objects.create(user=alice)
    alice.is_active = False
    alice.save()
    with pytest.raises(CommandError, match="refused"):
        call_command("mcp_server", token=token.key)


def test_the_command_reads_the_token_from_the_environment(monkeypatch):
    monkeypatch.setenv("ANNOTAGENT_TOKEN", "not-a-token")
    with pytest.raises(CommandError, match="refused"):
        call_command("mcp_server")


# --- streamable HTTP, mounted in the ASGI app -----------------------------------------------------


def call_over_http(key: str | None, tool: str, **arguments: Any) -> tuple[bool, Any]:
    """Call *tool* over streamable HTTP at /mcp/ with `Authorization: Bearer <key>`, through the ASGI
    app's router in front of Django (a fresh MCP app, started and stopped within this call)."""
    from django.core.asgi import get_asgi_application

    from mcp_server.http import McpHttpApp, with_mcp

    async def run() -> Any:
        mcp = McpHttpApp()
        app = with_mcp(get_asgi_application(), mcp)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), headers=headers)
        try:
            async with http, Client(streamable_http_client("http://testserver/mcp/", http_client=http)) as client:
                return await client.call_tool(tool, arguments)
        finally:
            await mcp.close()

    return unpack(async_to_sync(run)())


@pytest.mark.parametrize("persona", PERSONAS)
def test_search_over_http_acts_as_the_tokens_user(lab, persona):
    key = Token.objects.create(user=lab[persona]).key
    error, result = call_over_http(key, "search", query="majority quorums", project_id=lab["project"].pk)
    if persona in ROLES:
        assert not error and result["passages"][0]["title"] == "Paxos"
    else:
        assert error and result["error"]["code"] == "not_found" and "Paxos" not in json.dumps(result)


def test_project_default_get_over_http_is_the_callers_own(lab):
    key = Token.objects.create(user=lab["carol"]).key
    error, result = call_over_http(key, "project_default_get")
    assert not error and (result["owner"], result["is_default"]) == ("carol", True)


@pytest.mark.parametrize("authorization", [None, "Bearer not-a-token", "Basic YWxpY2U6cHc="])
def test_http_without_a_valid_token_is_refused_before_the_tools(alice, authorization):
    from annotagent.asgi import application

    async def run() -> httpx2.Response:
        headers = {"Authorization": authorization} if authorization else {}
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=application)) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            return await http.post("http://testserver/mcp/", json=body, headers=headers)

    response = async_to_sync(run)()
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_the_rest_of_http_still_goes_to_django(alice, client):
    from annotagent.asgi import application

    async def run() -> httpx2.Response:
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=application)) as http:
            return await http.get("http://testserver/api/projects/")

    response = async_to_sync(run)()
    assert response.status_code == 401 and response.headers["www-authenticate"].startswith("Token")
