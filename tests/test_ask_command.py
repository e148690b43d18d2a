"""`manage.py ask`: the answer, its references and, with --json, why each reference was chosen.

The answer runs in an event loop whose database work happens on another thread, so these tests
commit (`transaction=True`) for that thread to see the data.
"""

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from chat.models import ChatMessage
from indexing.services import index_paper
from projects.services import add_papers_to_project, create_project
from tests.support.indexing import stored_paper

ROOT = Path(__file__).resolve().parent.parent

PAGES = [
    "Raft elects a leader with randomized election timeouts. The leader replicates its log entries to the "
    "followers and commits an entry once a majority of servers has stored it.",
    "Chubby grants the master a lease. Clients keep their sessions alive with KeepAlive calls to the master, "
    "and the lease is renewed as long as the master wins a majority of the replicas.",
]


@pytest.fixture
def project(alice, make_pdf, chunk_store, settings):
    """alice's project "Consensus" holding one indexed two-page paper."""
    settings.CONTEXTUAL_BLURBS = "heuristic"
    paper = stored_paper(alice, make_pdf(PAGES), "c.pdf")
    paper.title = "Consensus notes"
    paper.save()
    index_paper(paper_id=paper.pk)
    project = create_project(owner=alice, name="Consensus")
    add_papers_to_project(project=project, papers=[paper], user=alice)
    return project


def ask(*args: str) -> dict:
    out = StringIO()
    call_command("ask", *args, "--user", "alice", "--project", "Consensus", "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.django_db(transaction=True)
def test_ask_json_shows_each_references_ranks_and_fused_score(project):
    result = ask("How does Raft elect a leader with randomized election timeouts?")
    assert result["mode"] == "hybrid"
    assert result["extractive"] is True  # no chat model is configured in tests
    assert result["status"] in {"answered", "partly_answered"}
    assert result["references"]
    for reference in result["references"]:
        assert {"n", "paper_id", "title", "page", "text"} <= reference.keys()
        assert {"dense_rank", "lexical_rank", "fused_score", "cosine_similarity", "bm25"} <= reference.keys()
    first = result["references"][0]
    assert first["page"] == 1
    assert first["dense_rank"] == 1 and first["lexical_rank"] == 1
    assert first["fused_score"] == pytest.approx(2 / 61)


@pytest.mark.django_db(transaction=True)
def test_ask_in_dense_mode_has_no_lexical_ranks_or_fused_scores(project):
    result = ask("How does Raft elect a leader?", "--mode", "dense")
    assert result["mode"] == "dense"
    assert result["references"]
    assert all(ref["lexical_rank"] is None and ref["fused_score"] is None for ref in result["references"])


@pytest.mark.django_db(transaction=True)
def test_ask_in_lexical_mode_has_no_dense_ranks(project):
    result = ask("KeepAlive lease", "--mode", "lexical")
    assert result["references"]
    assert all(ref["dense_rank"] is None and ref["bm25"] > 0 for ref in result["references"])


@pytest.mark.django_db(transaction=True)
def test_ask_refuses_an_unknown_mode(project):
    with pytest.raises(CommandError):
        ask("leader", "--mode", "sparse")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("question", ["", "   ", "\x00"])
def test_ask_refuses_an_empty_question(project, question):
    with pytest.raises(CommandError, match="non-empty"):
        ask(question)


@pytest.mark.django_db(transaction=True)
def test_ask_without_json_prints_the_answers_status_label(project):
    out = StringIO()
    call_command("ask", "How long is the master lease?", "--user", "alice", "--project", "Consensus", stdout=out)
    lines = out.getvalue().splitlines()
    labels = ("Status: answered", "Status: partly answered", "Status: not stated")
    assert any(line in (f"{label} (project 'Consensus')" for label in labels) for line in lines)


@pytest.mark.django_db(transaction=True)
def test_ask_without_a_project_names_the_default_project_it_asked(project):
    out = StringIO()
    call_command("ask", "How long is the master lease?", "--user", "alice", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["status"] == "no_papers"
    assert result["project"]["name"] != "Consensus"
    out = StringIO()
    call_command("ask", "How long is the master lease?", "--user", "alice", stdout=out)
    assert f"Status: no papers (project {result['project']['name']!r})" in out.getvalue().splitlines()


@pytest.mark.django_db(transaction=True)
def test_ask_with_chat_prints_the_follow_up_as_the_question_it_was_resolved_to(project):
    def plain(question: str) -> list[str]:
        out = StringIO()
        call_command("ask", question, "--user", "alice", "--project", "Consensus", "--chat", stdout=out)
        return out.getvalue().splitlines()

    first = plain("How does Raft elect a leader?")
    assert not any(line.startswith("Asked as:") for line in first)  # a standalone question is asked as written
    follow_up = plain("How does Chubby handle that?")
    asked_as = [line for line in follow_up if line.startswith("Asked as:")]
    assert len(asked_as) == 1
    assert "Chubby" in asked_as[0] and "leader" in asked_as[0]


def test_ask_with_new_starts_a_new_conversation(project):
    def plain(question: str, *flags: str) -> list[str]:
        out = StringIO()
        call_command("ask", question, "--user", "alice", "--project", "Consensus", "--chat", *flags, stdout=out)
        return out.getvalue().splitlines()

    plain("How does Raft elect a leader?")
    follow_up = plain("How does Chubby handle that?", "--new")
    assert not any(line.startswith("Asked as:") for line in follow_up)  # nothing before it to follow up
    assert ChatMessage.objects.filter(chat__project=project).count() == 2  # the new question and its answer
    with pytest.raises(CommandError, match="with --chat"):
        call_command("ask", "Why?", "--user", "alice", "--project", "Consensus", "--new", stdout=StringIO())


def test_ask_exits_quietly_when_its_output_is_closed(tmp_path):
    """`manage.py ask ... | head -4`: the reader is gone before the answer is written. Run as a
    process of its own on a database of its own, buffered and unbuffered (the error then comes at
    the write or at the flush)."""
    env = {
        **os.environ,
        "ENV_FILE": "",
        "DATA_DIR": str(tmp_path / "data"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SUPERUSER_PASSWORD": "carol-password-1",
    }

    def manage(*args: str, **options: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, text=True, timeout=120, **options
        )

    assert manage("migrate", "--noinput", "-v0").returncode == 0
    assert manage("createsuperuser", "--noinput", "--username", "carol", "--email", "c@example.org").returncode == 0
    for buffering in ("", "1"):
        env["PYTHONUNBUFFERED"] = buffering
        reader, writer = os.pipe()
        os.close(reader)
        try:
            asked = manage(
                "ask", "--user", "carol", "How does Raft elect a leader?", stdout=writer, stderr=subprocess.PIPE
            )
        finally:
            os.close(writer)
        assert (asked.returncode, asked.stderr) == (1, "")
