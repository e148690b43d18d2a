"""Asking over the REST API: a JSON answer with references, or server-sent events of the
WebSocket's vocabulary; the same access checks as the WebSocket; clear errors."""

import json
from http import HTTPStatus

import pytest
from asgiref.sync import async_to_sync
from rest_framework.test import APIClient

from chat.models import ChatMessage
from tests.support.sockets import of_type, streamed_text

pytestmark = pytest.mark.django_db

QUESTION = "How does Raft elect a leader?"
REPLY = "A follower that times out becomes a candidate [1]."


def ask_path(project) -> str:
    return f"/api/projects/{project.pk}/chat/"


def sse_events(response) -> list[dict]:
    """The `data:` of every server-sent event, checked against its `event:` line."""

    async def read() -> list[bytes]:
        return [chunk async for chunk in response.streaming_content]

    text = b"".join(async_to_sync(read)()).decode()
    received = []
    for block in text.split("\n\n"):
        if not block:
            continue
        event_line, data_line = block.split("\n")
        event = json.loads(data_line.removeprefix("data: "))
        assert event_line == f"event: {event['type']}"
        received.append(event)
    return received


def test_the_owner_gets_a_json_answer_with_its_references(alice, indexed_project, openai_stub, api_client_for):
    openai_stub.reply = REPLY
    response = api_client_for(alice).post(ask_path(indexed_project), {"question": QUESTION}, format="json")
    assert response.status_code == HTTPStatus.OK
    body = response.json()
    assert body["answer"] == REPLY
    assert body["extractive"] is False
    [reference] = body["references"]
    assert (reference["n"], reference["title"], reference["page"]) == (1, "Raft", 1)
    assert reference["url"].endswith("?page=1")
    saved = list(ChatMessage.objects.filter(chat__project=indexed_project).values_list("role", "text", "state"))
    assert saved == [("user", QUESTION, "complete"), ("assistant", REPLY, "complete")]


def test_event_stream_clients_get_the_websocket_events(alice, indexed_project, openai_stub, api_client_for):
    openai_stub.reply = REPLY
    response = api_client_for(alice).post(
        ask_path(indexed_project), {"question": QUESTION}, format="json", HTTP_ACCEPT="text/event-stream"
    )
    assert response.status_code == HTTPStatus.OK
    assert response["Content-Type"].startswith("text/event-stream")
    received = sse_events(response)
    assert received[0]["type"] == "answer.start"
    assert of_type(received, "answer.citation")[0]["title"] == "Raft"
    assert streamed_text(received) == REPLY
    done = received[-1]
    assert done["type"] == "answer.done"
    assert done["message"]["state"] == "complete"
    assert ChatMessage.objects.get(pk=done["message"]["id"]).text == REPLY


def test_an_outsider_gets_404_and_nothing_is_saved(mallory, indexed_project, api_client_for):
    for accept in ("application/json", "text/event-stream"):
        response = api_client_for(mallory).post(
            ask_path(indexed_project), {"question": QUESTION}, format="json", HTTP_ACCEPT=accept
        )
        assert response.status_code == HTTPStatus.NOT_FOUND
    assert b"event: error" in response.content
    assert not ChatMessage.objects.exists()


def test_an_anonymous_client_cannot_ask(indexed_project):
    response = APIClient().post(ask_path(indexed_project), {"question": QUESTION}, format="json")
    assert response.status_code == HTTPStatus.UNAUTHORIZED


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({}, "invalid_question"),
        ({"question": "   "}, "invalid_question"),
        ({"question": "?!?"}, "invalid_question"),
        ({"question": ["a list"]}, "invalid_question"),
        ({"question": "x" * 5000}, "question_too_long"),
    ],
)
def test_a_bad_question_gets_400_with_its_code(alice, body, code, api_client_for):
    from projects.services import create_project

    project = create_project(owner=alice, name="Empty")
    response = api_client_for(alice).post(ask_path(project), body, format="json")
    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json()["error"]["code"] == code
    assert not ChatMessage.objects.exists()


def test_a_nul_character_is_dropped_from_an_api_question(alice, indexed_project, openai_stub, api_client_for):
    openai_stub.reply = REPLY
    response = api_client_for(alice).post(
        ask_path(indexed_project), {"question": "How does Raft\u0000 elect a leader?"}, format="json"
    )
    assert response.status_code == HTTPStatus.OK
    assert ChatMessage.objects.filter(role="user").get().text == QUESTION


def test_questions_beyond_the_limit_get_429_slow_down(alice, indexed_project, openai_stub, api_client_for, settings):
    settings.USER_QUESTIONS_PER_MINUTE = 1
    client = api_client_for(alice)
    assert client.post(ask_path(indexed_project), {"question": QUESTION}, format="json").status_code == HTTPStatus.OK
    refused = client.post(ask_path(indexed_project), {"question": QUESTION}, format="json")
    assert refused.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert refused.json()["error"]["code"] == "slow_down"


def test_the_schema_documents_asking_with_json_and_event_streams(client):
    schema = client.get("/api/schema/").content.decode()
    ask = schema.split("/api/projects/{id}/chat/:", 1)[1]
    assert "post:" in ask
    assert "text/event-stream" in ask
    assert "AnswerSerializer" not in ask and "Answer" in ask


@pytest.mark.django_db(transaction=True)
async def test_a_client_hanging_up_mid_stream_leaves_the_partial_answer_saved_as_stopped(
    alice, indexed_project, openai_stub
):
    from asgiref.sync import sync_to_async

    from chat.api import event_stream
    from chat.services import AnswerSession

    openai_stub.reply, openai_stub.delay = " ".join(["Raft elects a leader [1]."] * 40), 0.05
    session = AnswerSession(project=indexed_project, user=alice, question=QUESTION)
    stream = event_stream(session, where="test")
    async for chunk in stream:
        if chunk.startswith("event: answer.delta"):
            break
    await stream.aclose()
    answer = await sync_to_async(ChatMessage.objects.get)(role="assistant")
    assert answer.state == ChatMessage.State.STOPPED
    assert answer.text and answer.text in openai_stub.reply
