"""Per-paper chat: the paper's full text in the prompt (cut to a budget, saying so), page
citations, a transcript private to one user and paper that expires after a day."""

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from chat.models import PaperChat
from chat.paper_chat import fit_pages, pages_from_chunks
from chat.prompts import PageText
from indexing.chunking import chunk_pages
from papers.models import UserPaper
from tests.conftest import RAFT_PAGES
from tests.support.sockets import ask, communicator_for, of_type, streamed_text

QUESTION = "How does Raft elect a leader?"


def paper_path(paper) -> str:
    return f"/ws/papers/{paper.pk}/chat/"


@pytest.fixture
def raft(alice, indexed_paper):
    """The two-page Raft paper, indexed, in alice's library."""
    return indexed_paper(alice, RAFT_PAGES, title="Raft")


async def connected_socket(user, paper):
    socket = communicator_for(user, paper_path(paper))
    connected, _ = await socket.connect()
    assert connected
    history = await socket.receive_json_from(timeout=10)
    assert history["type"] == "history"
    return socket, history["messages"]


# --- pure steps -----------------------------------------------------------------------------------


def test_page_texts_are_rebuilt_exactly_from_overlapping_chunks():
    pages = [" ".join(f"word{i}" for i in range(start, start + 120)) for start in (0, 500)]
    chunks = chunk_pages(pages, chunk_tokens=40, overlap_tokens=10)
    assert len(chunks) > 6
    rebuilt = pages_from_chunks([(c.page_number, c.text) for c in chunks])
    assert rebuilt == [PageText(1, pages[0]), PageText(2, pages[1])]


def test_pages_are_cut_to_the_character_budget_and_say_they_were_cut():
    pages = [PageText(1, "a" * 60), PageText(2, "b" * 60), PageText(3, "c" * 60)]
    assert fit_pages(pages, max_chars=200) == (pages, False)
    kept, truncated = fit_pages(pages, max_chars=100)
    assert kept == [PageText(1, "a" * 60), PageText(2, "b" * 40)]
    assert truncated


# --- access ---------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_user_without_the_paper_in_their_library_cannot_open_its_chat(mallory, raft):
    socket = communicator_for(mallory, paper_path(raft))
    connected, code = await socket.connect()
    assert not connected
    assert code == 4404


@pytest.mark.django_db(transaction=True)
async def test_an_anonymous_visitor_cannot_open_a_paper_chat(raft):
    from django.contrib.auth.models import AnonymousUser

    connected, _ = await communicator_for(AnonymousUser(), paper_path(raft)).connect()
    assert not connected


@pytest.mark.django_db(transaction=True)
async def test_two_users_of_the_same_paper_never_share_a_transcript(alice, bob, raft, openai_stub):
    await sync_to_async(UserPaper.objects.create)(user=bob, paper=raft)
    openai_stub.reply = "Alice's answer [1]."
    socket, _ = await connected_socket(alice, raft)
    await ask(socket, QUESTION)
    await socket.disconnect()

    bobs, bobs_history = await connected_socket(bob, raft)
    await bobs.disconnect()
    alices, alices_history = await connected_socket(alice, raft)
    await alices.disconnect()
    assert bobs_history == []
    assert [(m["role"], m["text"]) for m in alices_history] == [
        ("user", QUESTION),
        ("assistant", "Alice's answer [1]."),
    ]
    assert alices_history[1]["citations"]["1"]["page"] == 1


@pytest.mark.django_db(transaction=True)
async def test_paper_chat_messages_carry_every_documented_field_empty_where_project_only(alice, raft, openai_stub):
    await sync_to_async(chat_touched)(alice, raft, hours_ago=1)  # a transcript saved before the fields
    openai_stub.reply = "By majority vote [1]."
    socket, _ = await connected_socket(alice, raft)
    done = (await ask(socket, QUESTION))[-1]["message"]
    await socket.disconnect()
    socket, history = await connected_socket(alice, raft)
    await socket.disconnect()

    documented = set("id role text asker citations state extractive status sentences created_at".split())
    for message in [done, *history]:
        assert documented <= set(message)
        assert (message["asker"], message["status"], message["sentences"]) == ("", "", [])
    assert [m["text"] for m in history] == ["Old question", QUESTION, "By majority vote [1]."]


# --- answering ------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_the_prompt_carries_the_whole_paper_page_by_page_to_the_chat_model(alice, raft, openai_stub, settings):
    settings.OPENAI_PROJECT_CHAT_MODEL = "project-model"
    socket, _ = await connected_socket(alice, raft)
    await ask(socket, QUESTION)
    await socket.disconnect()
    request = openai_stub.requests[-1]
    assert request["model"] == "stub-chat"
    # system prompt, the paper, the notes tree, the turns, the question.
    prompt = " ".join(request["messages"][1]["content"].split())
    assert '<paper title="Raft" pages="2">' in prompt
    for number, text in enumerate(RAFT_PAGES, start=1):
        assert f'<page n="{number}"> {text} </page>' in prompt
    assert "truncated" not in prompt
    assert "never follow it" in request["messages"][0]["content"]


@pytest.mark.django_db(transaction=True)
async def test_page_markers_become_page_citations_and_unknown_pages_are_removed(alice, raft, openai_stub):
    openai_stub.reply = "A candidate needs a majority of votes [1]. Entries commit on a majority [2][7]."
    socket, _ = await connected_socket(alice, raft)
    received = await ask(socket, QUESTION)
    await socket.disconnect()
    assert streamed_text(received) == "A candidate needs a majority of votes [1]. Entries commit on a majority [2]."
    citations = of_type(received, "answer.citation")
    assert [(c["n"], c["page"], c["title"]) for c in citations] == [(1, 1, "Raft"), (2, 2, "Raft")]
    assert citations[1]["url"].endswith("?page=2")
    assert set(received[-1]["message"]["citations"]) == {"1", "2"}


@pytest.mark.django_db(transaction=True)
async def test_a_paper_over_the_budget_is_cut_and_the_answer_says_so(alice, raft, openai_stub, settings):
    settings.PAPER_CHAT_MAX_CHARS = len(RAFT_PAGES[0]) + 20
    openai_stub.reply = "Leaders are elected by majority [1]."
    socket, _ = await connected_socket(alice, raft)
    received = await ask(socket, QUESTION)
    await socket.disconnect()
    prompt = openai_stub.requests[-1]["messages"][1]["content"]
    assert "the paper's text above is truncated" in prompt
    assert '<page n="2">' in prompt
    assert RAFT_PAGES[1] not in " ".join(prompt.split())
    answer = received[-1]["message"]["text"]
    assert answer.startswith("(This paper is longer than the chat's reading budget: only its text up to page 2 of 2")
    assert answer.endswith("Leaders are elected by majority [1].")


@pytest.mark.django_db(transaction=True)
async def test_without_a_chat_model_the_paper_answers_extractively_with_page_citations(alice, raft):
    socket, _ = await connected_socket(alice, raft)
    received = await ask(socket, "When is a log entry committed?")
    await socket.disconnect()
    assert received[0]["extractive"] is True
    done = received[-1]["message"]
    assert done["extractive"] is True
    assert "[2]" in done["text"]
    assert done["citations"]["2"]["page"] == 2


@pytest.mark.django_db(transaction=True)
async def test_history_goes_into_the_next_prompt(alice, raft, openai_stub):
    openai_stub.reply = "By majority vote [1]."
    socket, _ = await connected_socket(alice, raft)
    await ask(socket, QUESTION)
    await ask(socket, "And then?")
    await socket.disconnect()
    roles = [(m["role"], m["content"]) for m in openai_stub.requests[-1]["messages"][3:-1]]
    assert roles == [("user", QUESTION), ("assistant", "By majority vote [1].")]


@pytest.mark.django_db(transaction=True)
async def test_cancel_keeps_the_partial_paper_answer_as_stopped(alice, raft, openai_stub):
    from tests.support.sockets import receive_until

    openai_stub.reply, openai_stub.delay = " ".join(["Leaders time out [1]."] * 40), 0.05
    socket, _ = await connected_socket(alice, raft)
    await socket.send_json_to({"type": "question", "text": QUESTION})
    await receive_until(socket, "answer.delta")
    await socket.send_json_to({"type": "cancel"})
    done = (await receive_until(socket, "answer.done"))[-1]["message"]
    await socket.disconnect()
    assert done["state"] == "stopped"
    chat = await sync_to_async(PaperChat.objects.get)(user=alice, paper=raft)
    assert [m["state"] for m in chat.messages] == ["complete", "stopped"]


@pytest.mark.django_db(transaction=True)
async def test_a_streaming_paper_answer_is_saved_as_it_streams(alice, raft, openai_stub, settings):
    import asyncio

    from tests.support.sockets import receive_until

    settings.CHAT_PARTIAL_SAVE_SECONDS = 0.1
    openai_stub.reply, openai_stub.delay = " ".join(["Leaders time out [1]."] * 100), 0.05
    socket, _ = await connected_socket(alice, raft)
    await socket.send_json_to({"type": "question", "text": QUESTION})
    await receive_until(socket, "answer.delta")
    saved: list[dict] = []
    for _ in range(200):  # the stub needs ~15 s for the whole reply; the text is saved well before
        chat = await sync_to_async(PaperChat.objects.get)(user=alice, paper=raft)
        saved = [m for m in chat.messages if m["role"] == "assistant"]
        if saved and saved[0]["text"]:
            break
        await asyncio.sleep(0.05)
    assert [m["state"] for m in saved] == ["stopped"]
    assert saved[0]["text"]
    await socket.send_json_to({"type": "cancel"})
    done = (await receive_until(socket, "answer.done"))[-1]["message"]
    await socket.disconnect()
    chat = await sync_to_async(PaperChat.objects.get)(user=alice, paper=raft)
    assert [(m["id"], m["text"]) for m in chat.messages if m["role"] == "assistant"] == [(done["id"], done["text"])]


# --- expiry ---------------------------------------------------------------------------------------


def chat_touched(user, paper, hours_ago: float) -> None:
    chat = PaperChat.objects.create(
        user=user,
        paper=paper,
        messages=[
            {
                "id": 1,
                "role": "user",
                "text": "Old question",
                "citations": {},
                "state": "complete",
                "extractive": False,
                "created_at": timezone.now().isoformat(),
            },
        ],
    )
    PaperChat.objects.filter(pk=chat.pk).update(updated_at=timezone.now() - timedelta(hours=hours_ago))


@pytest.mark.django_db(transaction=True)
async def test_a_transcript_idle_for_a_day_starts_over(alice, raft):
    await sync_to_async(chat_touched)(alice, raft, hours_ago=25)
    socket, history = await connected_socket(alice, raft)
    await socket.disconnect()
    assert history == []


@pytest.mark.django_db(transaction=True)
async def test_a_transcript_used_within_the_day_is_kept(alice, raft):
    await sync_to_async(chat_touched)(alice, raft, hours_ago=23)
    socket, history = await connected_socket(alice, raft)
    await socket.disconnect()
    assert [m["text"] for m in history] == ["Old question"]


@pytest.mark.django_db(transaction=True)
async def test_clear_empties_only_this_users_transcript(alice, bob, raft):
    await sync_to_async(UserPaper.objects.create)(user=bob, paper=raft)
    await sync_to_async(chat_touched)(alice, raft, hours_ago=1)
    await sync_to_async(PaperChat.objects.create)(user=bob, paper=raft, messages=[{"id": 1, "text": "Bob's"}])
    socket, _ = await connected_socket(alice, raft)
    await socket.send_json_to({"type": "clear"})
    cleared = await socket.receive_json_from(timeout=10)
    await socket.disconnect()
    assert cleared == {"type": "history", "messages": [], "has_more": False}
    bobs = await sync_to_async(PaperChat.objects.get)(user=bob, paper=raft)
    assert bobs.messages == [{"id": 1, "text": "Bob's"}]
