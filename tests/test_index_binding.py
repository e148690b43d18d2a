"""One chunk index belongs to one Django database.

Paper ids are a database's own: a second database (a reset SQLite file, staging beside production)
gives the same ids to other papers. The index records the installation that made it and refuses
every other; chunks carry their paper's SHA-256, so chunks of another file under a paper's id are
never cited and `check_index` reports them.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command

from indexing import store
from indexing.retrieval import retrieve_passages
from indexing.services import index_paper
from papers.models import Paper
from projects.services import add_papers_to_project, create_project
from tests.conftest import PAXOS_PAGES, RAFT_PAGES
from tests.support.indexing import new_paper
from tests.support.pdfs import make_pdf_bytes

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.django_db


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_second_database_is_refused_by_the_chunk_index_of_the_first(alice, indexed_paper, tmp_path):
    """The test database indexes a paper; a second database (an SQLite file, as after a reset)
    pointed at the same chunk index may neither write to it nor delete from it."""
    ours = indexed_paper(alice, RAFT_PAGES, title="Raft")
    chunks_before = store.count_chunks(ours.pk)
    env = {
        **os.environ,
        "ENV_FILE": "",
        "DEBUG": "true",
        "DATA_DIR": str(tmp_path / "data"),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'second.sqlite3'}",
        "MONGODB_URI": django_settings.MONGODB_URI,
        "MONGODB_DB": django_settings.MONGODB_DB,
        "TASKS_BACKEND": "django_tasks.backends.dummy.DummyBackend",
        "DJANGO_SUPERUSER_PASSWORD": "carol-password-1",
    }
    pdf = tmp_path / "paxos.pdf"
    pdf.write_bytes(make_pdf_bytes(PAXOS_PAGES, title="Paxos"))
    assert manage(env, "migrate", "--noinput", "-v0").returncode == 0
    created = manage(env, "createsuperuser", "--noinput", "--username", "carol", "--email", "c@example.org")
    assert created.returncode == 0

    ingest = manage(env, "ingest_papers", str(pdf), "--user", "carol")
    check = manage(env, "check_index")

    assert ingest.returncode == 1
    assert "The chunk index (MongoDB database 'annotagent_test') belongs to another database" in ingest.stdout
    assert check.returncode == 1 and "[problem] other_database: The chunk index" in check.stdout
    assert store.count_chunks(ours.pk) == chunks_before  # nothing of ours was touched
    assert store.chunk_counts_by_paper().keys() == {
        store.ChunkGroup(ours.pk, ours.index_version, ours.embedding_model, ours.sha256)
    }


def test_indexing_against_the_index_of_another_installation_fails_with_a_stable_code(alice, chunk_store):
    store.get_client()[django_settings.MONGODB_DB][store.META_COLLECTION].update_one(
        {"_id": store.INSTALLATION_DOCUMENT}, {"$set": {"installationId": "another-installation"}}
    )
    store.reset_client()  # a new process: the binding is checked afresh
    paper = new_paper(alice, RAFT_PAGES, title="Raft")

    with pytest.raises(store.ChunkIndexBindingError) as error:
        index_paper(paper_id=paper.pk)

    assert error.value.code == "chunk_index_of_another_database"
    paper.refresh_from_db()
    assert paper.index_status == "failed" and "belongs to another database" in paper.index_error
    assert paper.index_claim == ""  # released for the next attempt
    with pytest.raises(store.ChunkIndexBindingError):
        store.count_chunks(paper.pk)


def test_chunks_of_another_file_under_a_papers_id_are_never_cited_and_are_reported(alice, indexed_paper):
    """The binding bypassed (a fresh database pointed at an old index): the old index holds another
    paper's chunks under the id and version of one of ours. Retrieval drops them on their hash;
    check_index reports them and --fix removes them and rebuilds the paper."""
    raft = indexed_paper(alice, RAFT_PAGES, title="Raft")
    project = create_project(owner=alice, name="Consensus")
    add_papers_to_project(project=project, papers=[raft], user=alice)
    store.delete_chunks(raft.pk)
    foreign = [
        store.ChunkRecord(
            paper_id=raft.pk,
            paper_sha256="0" * 64,  # the other installation's paper, another file
            chunk_index=i,
            page_number=i + 1,
            text=text,
            contextual_blurb="",
            embedding=vector,
            embedding_model=raft.embedding_model,
            index_version=raft.index_version,
        )
        for i, (text, vector) in enumerate(zip(PAXOS_PAGES, _embed(PAXOS_PAGES), strict=True))
    ]
    store.write_chunks(foreign)

    retrieval = retrieve_passages(papers=[raft], question="What do Paxos acceptors promise in a prepare request?")
    assert retrieval.references == []

    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("check_index", stdout=out, stderr=io.StringIO())
    assert "[problem] hash_mismatch: 2 chunk(s) under the ids of 1 paper(s)" in out.getvalue()
    assert f"paper {raft.pk} (Raft): 2 chunk(s)" in out.getvalue()

    call_command("check_index", fix=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert store.count_chunks(raft.pk) == 0
    assert Paper.objects.get(pk=raft.pk).index_status == "pending"  # queued for a rebuild


def _embed(texts: list[str]) -> list[np.ndarray]:
    from indexing.embeddings import get_embedder

    return list(get_embedder().embed(texts))
