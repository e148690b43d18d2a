"""Follow-up questions end to end: resolved against the project's chat before retrieval, over the
WebSocket, from `manage.py ask --chat`, and rewritten by a chat model (the local stub) when one is
configured. Answers run on another thread, so these tests commit (`transaction=True`)."""

import json
from io import StringIO
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command

from chat.models import ChatMessage
from chat.question import REWRITE_PROMPT
from chat.services import answer_question
from indexing.ingest import ingest_paths
from projects.models import Project
from tests.conftest import shared_paper
from tests.support.sockets import ask, communicator_for, of_type

pytestmark = pytest.mark.django_db(transaction=True)

RAFT_PAGES = [
    "Raft: cluster membership changes. Raft changes the cluster configuration with joint consensus. The "
    "cluster first switches to a transitional configuration that combines the old and new servers.",
    "Raft: leader election. A follower that hears no heartbeat before its election timeout becomes a "
    "candidate and asks the other servers for votes; a majority makes it the leader.",
]
CHUBBY_PAGES = [
    "Chubby: replacing replicas. When a replica fails and does not recover for a few hours, a replacement "
    "system selects a fresh machine and updates the DNS tables, so the cell membership changes.",
    "Chubby: master leases. The master holds a lease renewed while it keeps a majority of the replicas; "
    "clients find the master through DNS and talk only to it.",
]
MEMBERSHIP = "How does Raft handle cluster membership changes?"
FOLLOW_UP = "How does Chubby handle that?"


@pytest.fixture
def small_project(alice, indexed_paper):
    """alice's project "Systems" with two small indexed papers, "Raft" and "Chubby"."""
    from projects.services import add_papers_to_project, create_project

    project = create_project(owner=alice, name="Systems")
    papers = [indexed_paper(alice, RAFT_PAGES, title="Raft"), indexed_paper(alice, CHUBBY_PAGES, title="Chubby")]
    add_papers_to_project(project=project, papers=papers, user=alice)
    return project


def ask_command(*args: str) -> dict:
    out = StringIO()
    call_command("ask", *args, "--user", "alice", "--project", "Systems", "--json", stdout=out)
    return json.loads(out.getvalue())


def titles(result: dict) -> set[str]:
    return {reference["title"] for reference in result["references"]}


# --- manage.py ask --------------------------------------------------------------------------------


def test_ask_without_chat_neither_reads_nor_writes_the_thread(small_project):
    first = ask_command(MEMBERSHIP)
    second = ask_command(FOLLOW_UP)
    assert first["query"] == MEMBERSHIP
    assert second["query"] == FOLLOW_UP  # nothing to follow up: the thread was not used
    assert not ChatMessage.objects.filter(chat__project=small_project).exists()


def test_ask_with_chat_resolves_a_follow_up_against_the_thread_and_appends_to_it(small_project):
    first = ask_command(MEMBERSHIP, "--chat")
    second = ask_command(FOLLOW_UP, "--chat")
    assert titles(first) == {"Raft"}
    assert second["query"] == "How does Chubby handle cluster membership changes?"
    assert titles(second) == {"Chubby"}
    saved = list(ChatMessage.objects.filter(chat__project=small_project).order_by("created_at", "pk"))
    assert [(m.role, m.text) for m in saved[::2]] == [("user", MEMBERSHIP), ("user", FOLLOW_UP)]
    assert saved[3].text == second["answer"]


# --- with a chat model ----------------------------------------------------------------------------


def test_a_chat_model_rewrites_the_follow_up_into_the_query_retrieval_uses(alice, small_project, openai_stub):
    rewrite = "How does Chubby replace failed replicas in its cell?"

    def model(messages: list[dict]) -> str:
        if "standalone question" in messages[-1]["content"]:
            return f"Standalone question: {rewrite}"
        return "It does so as the passages say [1]."

    openai_stub.reply = model
    answer_question(project=small_project, user=alice, question=MEMBERSHIP, chat=True)
    answer = answer_question(project=small_project, user=alice, question=FOLLOW_UP, chat=True)
    prompt = next(r for r in openai_stub.requests if not r.get("stream"))["messages"][-1]["content"]
    assert prompt.startswith(REWRITE_PROMPT.split("\n")[0])
    assert MEMBERSHIP in prompt and FOLLOW_UP in prompt
    assert answer.query == rewrite
    assert {reference.title for reference in answer.references} == {"Chubby"}
    assert openai_stub.requests[-1]["stream"] is True  # the answer itself still streams


def test_a_failing_rewrite_falls_back_to_the_deterministic_one(alice, small_project, openai_stub):
    def model(messages: list[dict]) -> str:
        return "" if "standalone question" in messages[-1]["content"] else "As the passages say [1]."

    openai_stub.reply = model
    answer_question(project=small_project, user=alice, question=MEMBERSHIP, chat=True)
    answer = answer_question(project=small_project, user=alice, question=FOLLOW_UP, chat=True)
    assert answer.query == "How does Chubby handle cluster membership changes?"


def test_a_standalone_question_costs_no_rewrite_call(alice, small_project, openai_stub):
    openai_stub.reply = "As the passages say [1]."
    answer_question(project=small_project, user=alice, question=MEMBERSHIP, chat=True)
    answer_question(project=small_project, user=alice, question="How does Chubby renew the master lease?", chat=True)
    assert all(request.get("stream") for request in openai_stub.requests)


# --- over the WebSocket, on real papers -----------------------------------------------------------


@pytest.fixture
def consensus_project(alice, chunk_store, settings):
    """alice's project "Consensus" holding the real Raft, Chubby and ZooKeeper papers, indexed."""
    settings.CONTEXTUAL_BLURBS = "heuristic"
    paths = [shared_paper(f"consensus/{name}.pdf") for name in ("raft", "chubby", "zookeeper")]
    report = ingest_paths(user=alice, paths=paths, project_name="Consensus")
    assert not report.failed
    return Project.objects.get(name="Consensus")


async def test_a_follow_up_over_the_socket_is_answered_from_the_paper_it_names(alice, consensus_project):
    socket = communicator_for(alice, f"/ws/projects/{consensus_project.pk}/chat/")
    connected, _ = await socket.connect()
    assert connected
    await socket.receive_json_from(timeout=10)  # history
    first = await ask(socket, MEMBERSHIP)
    second = await ask(socket, FOLLOW_UP)
    await socket.disconnect()
    titles_first = {event["title"] for event in of_type(first, "answer.citation")}
    titles_second = {event["title"] for event in of_type(second, "answer.citation")}
    chubby = await sync_to_async(
        lambda: consensus_project.papers.get(library_links__filename="chubby.pdf").display_title
    )()
    assert titles_first and all("Understandable Consensus" in title for title in titles_first)
    assert titles_second == {chubby}


# --- on the shipped sample paper ----------------------------------------------------------------------

SAMPLE_PAPER = Path(__file__).resolve().parent.parent / "sample_papers" / "s2orc.pdf"


@pytest.fixture
def sample_project(alice, chunk_store, settings):
    """alice's project "Sample" holding the sample paper shipped in the repository (S2ORC), indexed."""
    settings.CONTEXTUAL_BLURBS = "heuristic"
    report = ingest_paths(user=alice, paths=[SAMPLE_PAPER], project_name="Sample")
    assert not report.failed
    return Project.objects.get(name="Sample")


def test_which_of_them_after_a_superlative_reads_the_table_the_previous_answer_quoted(alice, sample_project):
    first = answer_question(
        project=sample_project, user=alice, question="Which filter removes the most papers?", chat=True
    )
    assert "\u201c< 100 chars of text 80.0M\u201d" in first.text
    # "least" alone ranks no table; the follow-up keeps the passage the previous answer quoted.
    second = answer_question(project=sample_project, user=alice, question="Which of them removes the least?", chat=True)
    assert second.query == "Which filter removes the least?"
    assert "\u201cNo title 20k\u201d" in second.text


# --- without a chat model: follow-ups the trial found ---------------------------------------------

TINY_RAFT = [
    "Tiny Raft: leader election. Tiny Raft elects a leader with randomized election timeouts. A follower "
    "that hears no heartbeat within its election timeout becomes a candidate and requests votes. The "
    "election timeout is chosen at random between 150 and 300 ms, so split votes are rare.",
    "Tiny Raft: evaluation. On three servers Tiny Raft replicates 12,000 entries per second. When the "
    "leader fails, a new leader is elected within 400 ms on average.",
]


@pytest.fixture
def tiny_raft(alice, indexed_paper):
    """alice's project "Tiny" with the one small paper "Tiny Raft"."""
    from projects.services import add_papers_to_project, create_project

    project = create_project(owner=alice, name="Tiny")
    add_papers_to_project(project=project, papers=[indexed_paper(alice, TINY_RAFT, title="Tiny Raft")], user=alice)
    return project


def test_a_throughput_follow_up_quotes_the_rate_and_then_it_is_the_system(alice, tiny_raft):
    answer_question(project=tiny_raft, user=alice, question="How does Tiny Raft elect a leader?", chat=True)
    throughput = answer_question(project=tiny_raft, user=alice, question="What is the throughput?", chat=True)
    assert throughput.status == "answered"
    assert "12,000 entries per second" in throughput.text
    failing = answer_question(project=tiny_raft, user=alice, question="What happens when it fails?", chat=True)
    assert "throughput" not in failing.query
    assert "a new leader is elected within 400 ms" in failing.text


def test_a_timeout_follow_up_quotes_the_timeout(alice, tiny_raft):
    answer_question(project=tiny_raft, user=alice, question="How does Tiny Raft elect a leader?", chat=True)
    answer = answer_question(project=tiny_raft, user=alice, question="How long is the timeout?", chat=True)
    assert answer.status == "answered"
    assert "between 150 and 300 ms" in answer.text


def test_a_follow_up_about_a_system_the_project_lacks_says_it_has_no_such_paper(alice, indexed_paper):
    from projects.services import add_papers_to_project, create_project

    project = create_project(owner=alice, name="Only Raft")
    add_papers_to_project(project=project, papers=[indexed_paper(alice, RAFT_PAGES, title="Raft")], user=alice)
    answer_question(project=project, user=alice, question=MEMBERSHIP, chat=True)
    answer = answer_question(project=project, user=alice, question=FOLLOW_UP, chat=True)
    assert answer.status == "not_stated"
    assert answer.text.startswith("This project has no paper called \u201cChubby\u201d")
    assert answer.references == []
