"""Project chat over the WebSocket: authorisation, streaming, citations, cancel, disconnect,
reconnect, malformed frames. The chat model is the local OpenAI-compatible stub."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from chat.models import ChatMessage
from tests.support.sockets import ask, communicator_for, of_type, receive_until, streamed_text

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "How does Raft elect a leader?"
LONG_REPLY = " ".join(["Raft elects a leader when a follower times out [1]."] * 30)


def project_path(project) -> str:
    return f"/ws/projects/{project.pk}/chat/"


async def wait_for(predicate, timeout: float = 10.0) -> None:
    """Poll *predicate* (sync, may use the ORM) until it is true; fail after *timeout* seconds."""
    check = sync_to_async(predicate)
    for _ in range(int(timeout / 0.05)):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


@sync_to_async
def saved_messages(project) -> list[ChatMessage]:
    return list(ChatMessage.objects.filter(chat__project=project).order_by("created_at", "pk"))


async def connected_socket(user, project):
    socket = communicator_for(user, project_path(project))
    connected, _ = await socket.connect()
    assert connected
    history = await socket.receive_json_from(timeout=10)
    assert history["type"] == "history"
    return socket, history


# --- who may connect ------------------------------------------------------------------------------


async def test_outsider_cannot_open_project_chat(mallory, indexed_project):
    socket = communicator_for(mallory, project_path(indexed_project))
    connected, code = await socket.connect()
    assert not connected
    assert code == 4404


async def test_anonymous_visitor_cannot_open_project_chat(indexed_project):
    from django.contrib.auth.models import AnonymousUser

    socket = communicator_for(AnonymousUser(), project_path(indexed_project))
    connected, _ = await socket.connect()
    assert not connected


async def test_owner_gets_the_saved_history_on_connect(alice, indexed_project):
    socket, history = await connected_socket(alice, indexed_project)
    assert history["messages"] == []
    await socket.disconnect()


# --- streaming and citations ----------------------------------------------------------------------


async def test_answer_streams_as_deltas_with_citations_before_their_first_use(alice, indexed_project, openai_stub):
    openai_stub.reply = "A follower that times out becomes a candidate [1]. A majority elects it [1]."
    socket, _ = await connected_socket(alice, indexed_project)
    received = await ask(socket, QUESTION)
    # The question first, as every member with the project open sees it, stamped with the asker.
    assert received[0]["type"] == "chat.question"
    assert (received[0]["message"]["text"], received[0]["message"]["asker"]) == (QUESTION, "alice")
    received = received[1:]
    assert received[0]["type"] == "answer.start"
    assert received[0]["extractive"] is False
    # Released sentence by sentence, each checked against its passage first (chat.support).
    deltas = of_type(received, "answer.delta")
    assert len(deltas) >= 2
    assert streamed_text(received) == openai_stub.reply
    citation = of_type(received, "answer.citation")[0]
    assert citation["n"] == 1
    assert citation["title"] == "Raft"
    assert citation["page"] == 1
    assert citation["url"].endswith("?page=1")
    first_cited = next(i for i, e in enumerate(received) if e["type"] == "answer.delta" and "[1]" in e["text"])
    assert received.index(citation) < first_cited
    await socket.disconnect()


async def test_the_answer_is_saved_with_its_citation_map(alice, indexed_project, openai_stub):
    openai_stub.reply = "A follower that times out becomes a candidate [1]."
    socket, _ = await connected_socket(alice, indexed_project)
    done = (await ask(socket, QUESTION))[-1]
    await socket.disconnect()
    question, answer = await saved_messages(indexed_project)
    assert (question.role, question.text) == ("user", QUESTION)
    assert answer.state == ChatMessage.State.COMPLETE
    assert answer.citations["1"]["title"] == "Raft"
    assert answer.citations["1"]["page"] == 1
    assert "election timeout" in answer.citations["1"]["text"]
    assert done["message"]["citations"] == answer.citations


async def test_a_marker_split_across_stream_chunks_becomes_one_citation(alice, indexed_project, openai_stub):
    openai_stub.pieces = ["Leaders are elected by a majority [", "1", "]", "."]
    socket, _ = await connected_socket(alice, indexed_project)
    received = await ask(socket, QUESTION)
    await socket.disconnect()
    assert streamed_text(received) == "Leaders are elected by a majority [1]."
    assert [e["n"] for e in of_type(received, "answer.citation")] == [1]


async def test_out_of_range_markers_are_removed_and_never_cited(alice, indexed_project, openai_stub):
    openai_stub.reply = "Leaders are elected by a majority [1][99]. Terms never repeat [42]."
    socket, _ = await connected_socket(alice, indexed_project)
    received = await ask(socket, QUESTION)
    await socket.disconnect()
    assert streamed_text(received) == "Leaders are elected by a majority [1]. Terms never repeat."
    assert [e["n"] for e in of_type(received, "answer.citation")] == [1]
    assert set(received[-1]["message"]["citations"]) == {"1"}


async def test_html_in_passages_and_answers_travels_as_plain_text(alice, indexed_paper, openai_stub):
    from projects.services import add_papers_to_project, create_project

    payload = '<script>alert("x")</script> <img src=x onerror=alert(1)>'
    paper = await sync_to_async(indexed_paper)(
        alice, [f"Leader election in Raft uses randomized timeouts. {payload} Votes need a majority."], title="Evil"
    )
    project = await sync_to_async(create_project)(owner=alice, name="Evil")
    await sync_to_async(add_papers_to_project)(project=project, papers=[paper], user=alice)
    openai_stub.reply = f"The paper contains {payload} [1]."
    socket, _ = await connected_socket(alice, project)
    received = await ask(socket, "How does leader election use timeouts?")
    await socket.disconnect()
    assert streamed_text(received) == openai_stub.reply
    assert payload in of_type(received, "answer.citation")[0]["text"]
    assert payload in received[-1]["message"]["text"]
    # No event carries markup for the client to render: only plain-text fields exist.
    assert {key for event in received for key in event} <= {
        "type",
        "text",
        "extractive",
        "failed",
        "indexing",
        "n",
        "url",
        "paper_id",
        "title",
        "page",
        "message",
        "label",
        "author",
        "year",
        "quote",
        "cite",
        "bibtex",
        "printed",
        "ocr",
    }


# --- cancel, disconnect, reconnect ----------------------------------------------------------------


async def test_cancel_stops_the_model_and_keeps_the_partial_answer_as_stopped(alice, indexed_project, openai_stub):
    openai_stub.reply, openai_stub.delay = LONG_REPLY, 0.05
    socket, _ = await connected_socket(alice, indexed_project)
    await socket.send_json_to({"type": "question", "text": QUESTION})
    await receive_until(socket, "answer.citation")
    await socket.send_json_to({"type": "cancel"})
    done = (await receive_until(socket, "answer.done"))[-1]["message"]
    assert done["state"] == ChatMessage.State.STOPPED
    assert 0 < len(done["text"]) < len(LONG_REPLY)
    await wait_for(lambda: openai_stub.disconnects == 1)
    await socket.disconnect()
    answer = (await saved_messages(indexed_project))[-1]
    assert (answer.state, answer.text) == (ChatMessage.State.STOPPED, done["text"])
    assert answer.citations["1"]["title"] == "Raft"


async def test_a_cancel_right_after_asking_keeps_the_question_before_its_stopped_answer(alice, indexed_project):
    socket, _ = await connected_socket(alice, indexed_project)
    await socket.send_json_to({"type": "question", "text": QUESTION})
    await socket.send_json_to({"type": "cancel"})
    received = await receive_until(socket, "answer.done")
    assert received[0]["type"] == "chat.question"  # every member sees what was asked
    assert received[-1]["message"]["state"] == ChatMessage.State.STOPPED
    await socket.disconnect()
    saved = await saved_messages(indexed_project)
    assert [(m.role, m.text) for m in saved][:1] == [("user", QUESTION)]
    assert [m.role for m in saved] == ["user", "assistant"]


async def test_a_dropped_connection_cancels_generation_and_saves_the_partial_answer(
    alice, indexed_project, openai_stub
):
    openai_stub.reply, openai_stub.delay = LONG_REPLY, 0.05
    socket, _ = await connected_socket(alice, indexed_project)
    await socket.send_json_to({"type": "question", "text": QUESTION})
    await receive_until(socket, "answer.delta")
    await socket.disconnect()
    await wait_for(lambda: openai_stub.disconnects == 1)
    question, answer = await saved_messages(indexed_project)
    assert question.role == "user"
    assert answer.state == ChatMessage.State.STOPPED
    assert 0 < len(answer.text) < len(LONG_REPLY)


async def test_reconnecting_shows_the_saved_history_without_duplicate_or_streaming_turns(
    alice, indexed_project, openai_stub
):
    openai_stub.reply = "A majority elects the leader [1]."
    socket, _ = await connected_socket(alice, indexed_project)
    await ask(socket, QUESTION)
    openai_stub.reply, openai_stub.delay = LONG_REPLY, 0.05
    await socket.send_json_to({"type": "question", "text": "And what is a term?"})
    await receive_until(socket, "answer.delta")
    await socket.disconnect()

    again, history = await connected_socket(alice, indexed_project)
    await again.disconnect()
    turns = [(m["role"], m["state"]) for m in history["messages"]]
    assert turns == [("user", "complete"), ("assistant", "complete"), ("user", "complete"), ("assistant", "stopped")]
    assert history["messages"][1]["text"] == "A majority elects the leader [1]."
    assert history["messages"][1]["citations"]["1"]["page"] == 1


async def test_a_new_question_stops_the_answer_still_streaming(alice, indexed_project, openai_stub):
    openai_stub.reply, openai_stub.delay = LONG_REPLY, 0.05
    socket, _ = await connected_socket(alice, indexed_project)
    await socket.send_json_to({"type": "question", "text": QUESTION})
    await receive_until(socket, "answer.delta")
    openai_stub.delay = 0
    openai_stub.reply = "Short answer [1]."
    await socket.send_json_to({"type": "question", "text": "How does a Raft candidate win an election?"})
    first = (await receive_until(socket, "answer.done"))[-1]["message"]
    second = (await receive_until(socket, "answer.done"))[-1]["message"]
    await socket.disconnect()
    assert (first["state"], second["state"]) == ("stopped", "complete")
    assert second["text"] == "Short answer [1]."
    assert [m.role for m in await saved_messages(indexed_project)] == ["user", "assistant", "user", "assistant"]


async def test_clear_empties_the_thread(alice, indexed_project, openai_stub):
    socket, _ = await connected_socket(alice, indexed_project)
    await ask(socket, QUESTION)
    await socket.send_json_to({"type": "clear"})
    history = await receive_until(socket, "history")
    await socket.disconnect()
    assert history[-1]["messages"] == []
    assert await saved_messages(indexed_project) == []


# --- malformed frames -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "frame",
    [
        "this is not json",
        '["question"]',
        '{"type": "shout"}',
        '{"type": "question"}',
        '{"type": "question", "text": " "}',
        r'{"type": "question", "text": "a lone surrogate \ud800 is not text"}',
    ],
)
async def test_a_malformed_frame_gets_a_clear_error_and_the_connection_stays_open(
    alice, indexed_project, openai_stub, frame
):
    openai_stub.reply = "Still here [1]."
    socket, _ = await connected_socket(alice, indexed_project)
    await socket.send_to(text_data=frame)
    error = await socket.receive_json_from(timeout=10)
    assert error["type"] == "error"
    assert error["code"] == "malformed_frame"
    assert "question" in error["message"]
    received = await ask(socket, QUESTION)
    await socket.disconnect()
    assert received[-1]["message"]["text"] == "Still here [1]."


async def test_a_binary_frame_gets_an_error_and_the_connection_stays_open(alice, indexed_project):
    socket, _ = await connected_socket(alice, indexed_project)
    await socket.send_to(bytes_data=b"\x00\x01")
    error = await socket.receive_json_from(timeout=10)
    assert (error["type"], error["code"]) == ("error", "malformed_frame")
    await socket.send_json_to({"type": "cancel"})
    assert await socket.receive_nothing(timeout=0.2)
    await socket.disconnect()


async def test_a_too_long_question_is_refused_with_its_own_code(alice, indexed_project):
    socket, _ = await connected_socket(alice, indexed_project)
    await socket.send_json_to({"type": "question", "text": "x" * 5000})
    error = await socket.receive_json_from(timeout=10)
    await socket.disconnect()
    assert error["code"] == "question_too_long"


# --- paths, sizes, rates and odd text -------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/ws/projects/-1/chat/", "/ws/projects/1abc/chat/", "/ws/nothing/", "/ws/projects/" + "9" * 30 + "/chat/"]
)
async def test_a_path_that_names_no_chat_is_refused_not_an_error(alice, path):
    socket = communicator_for(alice, path)
    connected, code = await socket.connect()
    assert (connected, code) == (False, 4404)


async def test_a_nul_character_in_a_question_is_dropped_and_the_answer_saved(alice, indexed_project, openai_stub):
    openai_stub.reply = "A majority elects the leader [1]."
    socket, _ = await connected_socket(alice, indexed_project)
    received = await ask(socket, "How does Raft\x00 elect a leader?")
    await socket.disconnect()
    assert of_type(received, "error") == []
    assert received[-1]["message"]["state"] == ChatMessage.State.COMPLETE
    question, answer = await saved_messages(indexed_project)
    assert question.text == "How does Raft elect a leader?"
    assert answer.text == "A majority elects the leader [1]."


async def test_a_deeply_nested_frame_gets_an_error_and_the_connection_stays_open(alice, indexed_project):
    socket, _ = await connected_socket(alice, indexed_project)
    await socket.send_to(text_data="[" * 6000 + "]" * 6000)
    error = await socket.receive_json_from(timeout=10)
    assert (error["type"], error["code"]) == ("error", "malformed_frame")
    await socket.send_to(text_data="{}")
    assert (await socket.receive_json_from(timeout=10))["code"] == "malformed_frame"
    await socket.disconnect()


async def test_a_frame_over_the_size_limit_is_refused_unread(alice, indexed_project, settings):
    settings.CHAT_MAX_FRAME_CHARS = 1000
    socket, _ = await connected_socket(alice, indexed_project)
    await socket.send_json_to({"type": "question", "text": "x" * 2000})
    error = await socket.receive_json_from(timeout=10)
    await socket.disconnect()
    assert error["code"] == "frame_too_large"
    assert await saved_messages(indexed_project) == []


async def test_a_flood_of_frames_gets_one_slow_down_error_and_is_dropped(alice, indexed_project, settings):
    settings.CHAT_SOCKET_FRAME_BURST = 5
    settings.CHAT_SOCKET_FRAMES_PER_SECOND = 0.001
    socket, _ = await connected_socket(alice, indexed_project)
    for _ in range(1000):
        await socket.send_to(text_data='{"type": "shout"}')
    received = [await socket.receive_json_from(timeout=10) for _ in range(6)]
    assert await socket.receive_nothing(timeout=0.5)
    await socket.disconnect()
    assert [event["code"] for event in received] == ["malformed_frame"] * 5 + ["slow_down"]
    assert "Slow down" in received[-1]["message"]


async def test_questions_beyond_the_per_user_limit_get_slow_down(alice, indexed_project, openai_stub, settings):
    settings.USER_QUESTIONS_PER_MINUTE = 2
    openai_stub.reply = "A majority elects the leader [1]."
    socket, _ = await connected_socket(alice, indexed_project)
    await ask(socket, QUESTION)
    await ask(socket, QUESTION)
    await socket.send_json_to({"type": "question", "text": QUESTION})
    error = await socket.receive_json_from(timeout=10)
    await socket.disconnect()
    assert (error["type"], error["code"]) == ("error", "slow_down")
    assert len(await saved_messages(indexed_project)) == 4


# --- history in pages -----------------------------------------------------------------------------


@sync_to_async
def project_with_messages(owner, count: int):
    from chat.services import get_or_create_chat
    from projects.services import create_project

    project = create_project(owner=owner, name="Long thread")
    chat = get_or_create_chat(project)
    for i in range(count):
        ChatMessage.objects.create(chat=chat, role="user", text=f"message {i}")
    return project


async def test_history_comes_in_pages_newest_first_and_older_pages_on_request(alice, settings):
    settings.CHAT_HISTORY_PAGE_SIZE = 3
    project = await project_with_messages(alice, 7)
    socket, history = await connected_socket(alice, project)
    assert [m["text"] for m in history["messages"]] == ["message 4", "message 5", "message 6"]
    assert history["has_more"] is True
    pages = []
    before = history["messages"][0]["id"]
    while True:
        await socket.send_json_to({"type": "older", "before": before})
        page = await socket.receive_json_from(timeout=10)
        assert page["type"] == "history.older"
        pages.append([m["text"] for m in page["messages"]])
        if not page["has_more"]:
            break
        before = page["messages"][0]["id"]
    await socket.disconnect()
    assert pages == [["message 1", "message 2", "message 3"], ["message 0"]]


async def test_an_older_page_request_without_an_id_is_malformed(alice, settings):
    project = await project_with_messages(alice, 1)
    socket, _ = await connected_socket(alice, project)
    await socket.send_json_to({"type": "older", "before": "first"})
    error = await socket.receive_json_from(timeout=10)
    await socket.disconnect()
    assert error["code"] == "malformed_frame"


# --- a crash mid-answer keeps the text written so far ---------------------------------------------


async def test_a_streaming_answer_is_saved_as_it_streams(alice, indexed_project, openai_stub, settings):
    settings.CHAT_PARTIAL_SAVE_SECONDS = 0.1
    openai_stub.reply, openai_stub.delay = LONG_REPLY, 0.05
    socket, _ = await connected_socket(alice, indexed_project)
    await socket.send_json_to({"type": "question", "text": QUESTION})
    await receive_until(socket, "answer.delta")

    def partial_answer_saved() -> bool:
        messages = list(ChatMessage.objects.filter(chat__project=indexed_project, role="assistant"))
        return len(messages) == 1 and messages[0].state == ChatMessage.State.STOPPED and len(messages[0].text) > 0

    # The answer is still streaming (the stub needs ~15 s for the whole reply) when its text is saved.
    await wait_for(partial_answer_saved)
    assert openai_stub.disconnects == 0
    await socket.send_json_to({"type": "cancel"})
    done = (await receive_until(socket, "answer.done"))[-1]["message"]
    await socket.disconnect()
    assert done["state"] == ChatMessage.State.STOPPED
    answers = [m for m in await saved_messages(indexed_project) if m.role == "assistant"]
    assert [(a.pk, a.text) for a in answers] == [(done["id"], done["text"])]
