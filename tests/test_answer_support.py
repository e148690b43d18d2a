"""Chat-model answers checked against their passages (chat.support) before they are shown, with the
local OpenAI-compatible stub as the model: support marks, unreadable markers, status."""

import logging

import pytest

from chat.extractive import AnswerSentence, Status
from chat.models import ChatMessage
from chat.services import answer_question
from chat.support import UNREADABLE_NOTE, WEAK_MARK, SentenceBuffer, answer_status
from tests.support.sockets import ask, communicator_for, of_type

SUPPORTED = "A candidate that wins votes from a majority of the cluster becomes the leader [1]."
UNSUPPORTED = "Raft encrypts every log entry with rotating AES keys held by a hardware module [1]."


def test_the_sentence_buffer_releases_whole_sentences_with_their_markers():
    buffer = SentenceBuffer()
    assert buffer.feed("Raft elects a leader [1]") == []
    assert buffer.feed(". Logs ") == ["Raft elects a leader [1]. "]
    assert buffer.feed("follow.[2] Next") == ["Logs follow.[2] "]
    assert buffer.close() == ["Next"]


def test_cjk_sentences_are_released_at_their_own_stop():
    buffer = SentenceBuffer()
    assert buffer.feed("\u9886\u5bfc\u8005\u5fc3\u8df3\u3002[1]\u65e5\u5fd7") == [
        "\u9886\u5bfc\u8005\u5fc3\u8df3\u3002[1]"
    ]


@pytest.mark.parametrize(
    ("sentences", "status"),
    [
        ([AnswerSentence("a", (1,), True)], Status.ANSWERED),
        ([AnswerSentence("a", (1,), True), AnswerSentence("b", (2,), False)], Status.PARTLY_ANSWERED),
        ([AnswerSentence("a", (1,), True), AnswerSentence("not stated", not_stated=True)], Status.PARTLY_ANSWERED),
        ([AnswerSentence("The papers do not state it.", not_stated=True)], Status.NOT_STATED),
        ([], Status.NOT_STATED),
    ],
)
def test_the_status_sums_up_the_sentences(sentences, status):
    assert answer_status(sentences) == status


@pytest.mark.django_db(transaction=True)
def test_a_sentence_its_passage_states_is_shown_as_it_is(alice, indexed_project, openai_stub):
    openai_stub.reply = SUPPORTED
    answer = answer_question(project=indexed_project, user=alice, question="How does Raft elect a leader?")
    assert answer.text == SUPPORTED
    assert answer.status == "answered"
    assert [s.supported for s in answer.sentences] == [True]
    assert [ref.title for ref in answer.references] == ["Raft"]


@pytest.mark.django_db(transaction=True)
def test_a_weakly_supported_claim_is_marked_not_silently_linked(alice, indexed_project, openai_stub):
    openai_stub.reply = f"{SUPPORTED} {UNSUPPORTED}"
    answer = answer_question(project=indexed_project, user=alice, question="How does Raft elect a leader?", chat=True)
    assert answer.text == f"{SUPPORTED} {UNSUPPORTED}{WEAK_MARK}"
    assert [s.supported for s in answer.sentences] == [True, False]
    assert answer.status == "partly_answered"
    message = ChatMessage.objects.filter(role="assistant").get()
    assert message.status == "partly_answered"
    assert [s["supported"] for s in message.sentences] == [True, False]


@pytest.mark.django_db(transaction=True)
def test_marker_variants_streamed_by_the_model_become_citations(alice, indexed_project, openai_stub):
    openai_stub.pieces = [
        "A candidate that wins votes from a majority of the cluster becomes the leader \u3010",
        "1\u2020sou",
        "rce\u3011.",
    ]
    answer = answer_question(project=indexed_project, user=alice, question="How does Raft elect a leader?")
    assert answer.text == SUPPORTED
    assert answer.status == "answered"


@pytest.mark.django_db(transaction=True)
def test_unreadable_markers_keep_the_answer_mark_it_and_log_it(alice, indexed_project, openai_stub, caplog):
    openai_stub.reply = "Raft elects a leader by majority vote {1}. Logs are replicated by the leader {2}."
    with caplog.at_level(logging.WARNING, logger="chat.services"):
        answer = answer_question(project=indexed_project, user=alice, question="How does Raft elect a leader?")
    assert answer.text == openai_stub.reply + UNREADABLE_NOTE
    assert answer.references == []
    assert answer.status == "partly_answered"
    assert "Citations could not be read" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_a_model_that_says_the_papers_do_not_state_it_gets_not_stated(alice, indexed_project, openai_stub):
    openai_stub.reply = "The papers do not state how much energy a Raft server uses."
    answer = answer_question(project=indexed_project, user=alice, question="How much energy does a Raft server use?")
    assert answer.status == "not_stated"
    assert UNREADABLE_NOTE not in answer.text


@pytest.mark.django_db(transaction=True)
async def test_the_status_and_the_hover_card_go_over_the_websocket(alice, indexed_project, openai_stub):
    openai_stub.reply = SUPPORTED
    socket = communicator_for(alice, f"/ws/projects/{indexed_project.pk}/chat/")
    await socket.connect()
    await socket.receive_json_from(timeout=10)
    received = await ask(socket, "How does Raft elect a leader?")
    (citation,) = of_type(received, "answer.citation")
    assert citation["label"] == "Raft"
    assert citation["cite"].startswith("(")
    assert citation["bibtex"].startswith("@misc{")
    (done,) = of_type(received, "answer.done")
    assert done["message"]["status"] == "answered"
    assert done["message"]["sentences"][0]["supported"] is True
    await socket.disconnect()
