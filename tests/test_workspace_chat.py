"""The shared project chat over WebSockets: one thread for all members, live fan-out of questions
and answers through the project's channel group, and roles on connect and on each action."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async

from chat.models import ChatMessage
from projects.models import Role
from projects.services import add_member, add_papers_to_project, create_project, remove_member
from tests.support.sockets import communicator_for, of_type, receive_until, streamed_text

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "How does Raft elect a leader?"


@pytest.fixture
def shared_project(alice, bob, carol, indexed_paper):
    """alice's shared "Consensus lab" with an indexed Raft paper: bob writer, carol reader."""
    from tests.conftest import RAFT_PAGES

    project = create_project(owner=alice, name="Consensus lab")
    add_papers_to_project(project=project, papers=[indexed_paper(alice, RAFT_PAGES, title="Raft")], user=alice)
    add_member(project=project, user=bob, role=Role.WRITER)
    add_member(project=project, user=carol, role=Role.READER)
    return project


async def open_chat(user, project):
    socket = communicator_for(user, f"/ws/projects/{project.pk}/chat/")
    connected, code = await socket.connect()
    assert connected, code
    assert (await socket.receive_json_from(timeout=10))["type"] == "history"
    return socket


async def test_one_member_asks_and_every_member_receives_the_question_and_the_stream(
    alice, bob, shared_project, openai_stub
):
    openai_stub.reply = "A follower that times out becomes a candidate [1]."
    alices, bobs = await open_chat(alice, shared_project), await open_chat(bob, shared_project)

    await alices.send_json_to({"type": "question", "text": QUESTION})
    seen_by_alice = await receive_until(alices, "answer.done")
    seen_by_bob = await receive_until(bobs, "answer.done")

    for seen in (seen_by_alice, seen_by_bob):
        question = of_type(seen, "chat.question")[0]["message"]
        assert (question["text"], question["asker"], question["role"]) == (QUESTION, "alice", "user")
        assert of_type(seen, "answer.start")
        assert streamed_text(seen) == openai_stub.reply
        assert of_type(seen, "answer.citation")[0]["title"] == "Raft"
    assert seen_by_alice[-1]["message"]["id"] == seen_by_bob[-1]["message"]["id"]
    await alices.disconnect()
    await bobs.disconnect()


async def test_the_asker_gets_every_event_even_past_the_channel_layers_capacity(alice, bob, shared_project, settings):
    # A layer that holds 3 messages per channel drops a fast answer's burst (the extractive answer
    # streams its quotes without waiting on a model) for anyone reached through the group; the
    # asker's own socket must still get all of it, in order.
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 3}}
    }
    alices = await open_chat(alice, shared_project)

    await alices.send_json_to({"type": "question", "text": QUESTION})
    seen = await receive_until(alices, "answer.done")

    saved = seen[-1]["message"]
    assert len(seen) > 3  # more than the layer would have held
    assert streamed_text(seen) == saved["text"]
    cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]", saved["text"])})
    assert cited and sorted(event["n"] for event in of_type(seen, "answer.citation")) == cited
    await alices.disconnect()


async def test_a_reader_asks_and_the_question_is_stamped_with_them(alice, carol, shared_project, openai_stub):
    openai_stub.reply = "Votes from a majority [1]."
    alices, carols = await open_chat(alice, shared_project), await open_chat(carol, shared_project)
    await carols.send_json_to({"type": "question", "text": QUESTION, "author": alice.pk, "asker": "alice"})
    seen = await receive_until(alices, "answer.done")
    assert of_type(seen, "chat.question")[0]["message"]["asker"] == "carol"
    await receive_until(carols, "answer.done")
    author = await sync_to_async(
        lambda: ChatMessage.objects.get(chat__project=shared_project, role="user").author.username
    )()
    assert author == "carol"
    await alices.disconnect()
    await carols.disconnect()


async def test_a_reader_cannot_clear_the_chat_on_the_socket(carol, shared_project):
    socket = await open_chat(carol, shared_project)
    await socket.send_json_to({"type": "clear"})
    error = await socket.receive_json_from(timeout=10)
    assert (error["type"], error["code"]) == ("error", "forbidden")
    await socket.disconnect()


async def test_a_writer_clears_the_chat_for_every_member(alice, bob, shared_project, openai_stub):
    openai_stub.reply = "Votes [1]."
    alices, bobs = await open_chat(alice, shared_project), await open_chat(bob, shared_project)
    await alices.send_json_to({"type": "question", "text": QUESTION})
    await receive_until(alices, "answer.done")
    await receive_until(bobs, "answer.done")
    await bobs.send_json_to({"type": "clear"})
    for socket in (alices, bobs):
        assert (await receive_until(socket, "chat.cleared"))[-1]["type"] == "chat.cleared"
        history = await receive_until(socket, "history")
        assert history[-1]["messages"] == []
    await alices.disconnect()
    await bobs.disconnect()


@pytest.mark.parametrize("persona", ["alice", "bob", "carol"])
async def test_every_member_may_open_the_shared_chat(request, persona, shared_project):
    socket = await open_chat(request.getfixturevalue(persona), shared_project)
    await socket.disconnect()


async def test_an_outsider_is_refused(mallory, shared_project):
    socket = communicator_for(mallory, f"/ws/projects/{shared_project.pk}/chat/")
    connected, code = await socket.connect()
    assert not connected
    assert code == 4404


async def test_a_member_removed_while_connected_can_no_longer_ask(carol, shared_project):
    socket = await open_chat(carol, shared_project)
    await sync_to_async(remove_member)(project=shared_project, user=carol)
    await socket.send_json_to({"type": "question", "text": QUESTION})
    error = await socket.receive_json_from(timeout=10)
    assert (error["type"], error["code"]) == ("error", "not_found")
    assert not await sync_to_async(ChatMessage.objects.filter(chat__project=shared_project).exists)()


@pytest.mark.django_db(transaction=False)
def test_a_chunk_index_returning_another_workspaces_passages_never_leaks_them(
    alice, mallory, indexed_paper, chunk_store, settings, monkeypatch
):
    """A chunk index whose paper filter misbehaves (here: Atlas `$vectorSearch` answering with every
    chunk it holds) must not put mallory's private paper in an answer in alice's shared project:
    retrieval filters the read-back candidates by the project's own papers."""
    from chat.services import search_project
    from indexing import store
    from projects.services import get_project_for_user
    from tests.conftest import PAXOS_PAGES, RAFT_PAGES

    lab = create_project(owner=alice, name="Lab")
    add_papers_to_project(project=lab, papers=[indexed_paper(alice, RAFT_PAGES, title="Raft")], user=alice)
    secret = indexed_paper(mallory, PAXOS_PAGES, title="Mallory's Paxos")
    add_papers_to_project(project=get_project_for_user(mallory, None), papers=[secret], user=mallory)

    def every_chunk(query, versions, *, embedding_model, limit):
        return [(chunk, 0.99) for chunk in chunk_store.find({})]

    settings.RETRIEVAL_MODE = "dense"
    monkeypatch.setattr(store, "is_atlas", lambda: True)
    monkeypatch.setattr(store, "vector_search", every_chunk)

    retrieval = search_project(project=lab, query="What do Paxos acceptors promise in a prepare request?")

    assert every_chunk(None, {}, embedding_model="", limit=0)  # the index did return foreign chunks
    assert {ref.paper_id for ref in retrieval.references} <= {p.pk for p in lab.papers.all()}
    assert secret.pk not in {ref.paper_id for ref in retrieval.references}
