"""Indexing runs from signal hooks: every path that adds a paper (upload, add to a project, many-to-many
and bulk inserts, the ingest and demo commands) leaves its chunks in the chunk index once the
transaction commits, and every path that removes one (library removal, a bulk `QuerySet.delete()`,
one row's delete) takes its chunks with it; deleting a project or unlinking leaves them. Reprocess
rebuilds them. The tasks run on commit (immediate backend) against the embedded chunk index."""

from __future__ import annotations

import hashlib
import io

import pytest
from django.core.management import call_command
from django.db import transaction
from django.urls import reverse
from django_tasks.signals import task_enqueued

from indexing import store
from papers.models import Paper, UserPaper, paper_upload_to
from papers.services import add_paper_to_library
from papers.storage import write_paper_file
from projects.models import Project, ProjectPaper
from projects.services import (
    add_papers_to_project,
    create_project,
    delete_project,
    remove_paper_from_library,
    remove_paper_from_project,
    reprocess_paper,
    upload_paper_to_project,
)
from tests.support.indexing import indexed_paper, new_paper, replace_pdf, use_stub_embeddings
from tests.support.pdfs import make_pdf_bytes
from tests.test_library import pdf_upload

# Real commits: the hooks act on commit, so the test must commit.
pytestmark = pytest.mark.django_db(transaction=True)

RAFT = "Raft elects a single leader per term; a follower that hears no heartbeat becomes a candidate."
GOSSIP = "Gossip protocols spread membership updates epidemically, without any leader at all."


@pytest.fixture
def hooks(settings, openai_stub, chunk_store):
    """Stub embeddings into the embedded chunk index; a queued task runs at once (after commit).
    Yields the list of `index_paper` runs enqueued, as their keyword arguments."""
    use_stub_embeddings(settings, openai_stub)
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend", "QUEUES": ["default"]}}
    enqueued: list[dict] = []

    def record(sender, task_result, **kwargs):
        if task_result.task.name == "index_paper":
            enqueued.append(task_result.kwargs)

    task_enqueued.connect(record, dispatch_uid="test_indexing_hooks")
    yield enqueued
    task_enqueued.disconnect(dispatch_uid="test_indexing_hooks")


def chunks(paper: Paper) -> int:
    """The paper's chunks of its current version in the chunk index."""
    paper.refresh_from_db()
    return store.count_chunks(paper.pk, index_version=paper.index_version) if paper.index_version else 0


def stored_texts(paper_id: int) -> str:
    return " ".join(chunk["text"] for chunk in store.get_collection().find({"paperId": paper_id}))


# --- adding ---------------------------------------------------------------------------------------


def test_an_upload_to_the_library_is_indexed_after_commit(alice, client_for, hooks):
    client_for(alice).post(reverse("papers:upload"), {"file": pdf_upload(make_pdf_bytes([RAFT]))})

    paper = Paper.objects.get()
    assert paper.index_status == "ready" and chunks(paper) > 0


def test_an_upload_through_the_api_is_indexed_after_commit(alice, api_client_for, hooks):
    api_client_for(alice).post("/api/library/", {"file": pdf_upload(make_pdf_bytes([RAFT]))}, format="multipart")

    assert chunks(Paper.objects.get()) > 0


def test_nothing_is_queued_before_commit_and_nothing_after_a_rollback(alice, hooks):
    with pytest.raises(RuntimeError), transaction.atomic():
        paper = add_paper_to_library(user=alice, data=make_pdf_bytes([RAFT]), filename="r.pdf").paper
        assert Paper.objects.get(pk=paper.pk).index_status == "pending"  # not indexed inside the transaction
        raise RuntimeError("roll back")

    assert not Paper.objects.exists()
    assert store.get_collection().count_documents({}) == 0


def test_an_upload_to_a_project_is_queued_once_and_indexed(alice, client_for, hooks):
    project = create_project(owner=alice, name="Consensus")

    client_for(alice).post(reverse("projects:upload", args=[project.pk]), {"file": pdf_upload(make_pdf_bytes([RAFT]))})

    paper = project.papers.get()
    assert chunks(paper) > 0
    assert hooks == [{"paper_id": paper.pk}]  # created and linked in one transaction: one run


def test_an_upload_to_a_project_through_the_service_is_indexed(alice, hooks):
    project = create_project(owner=alice, name="Consensus")

    added = upload_paper_to_project(project=project, user=alice, data=make_pdf_bytes([RAFT]), filename="r.pdf")

    assert chunks(added.paper) > 0 and hooks == [{"paper_id": added.paper.pk}]


def test_a_library_paper_without_chunks_is_indexed_when_added_to_a_project(alice, hooks):
    paper = new_paper(alice, [RAFT])  # pending, its task lost
    assert chunks(paper) == 0

    add_papers_to_project(project=create_project(owner=alice, name="P"), papers=[paper], user=alice)

    assert chunks(paper) > 0


def test_the_web_add_to_project_form_indexes_a_paper_without_chunks(alice, client_for, hooks):
    paper = new_paper(alice, [RAFT])
    project = create_project(owner=alice, name="P")

    client_for(alice).post(reverse("projects:add_papers", args=[project.pk]), {"papers": [paper.pk]})

    assert ProjectPaper.objects.filter(project=project, paper=paper).exists()
    assert chunks(paper) > 0


def test_a_many_to_many_add_indexes_a_paper_without_chunks(alice, hooks):
    paper = new_paper(alice, [RAFT])
    project = create_project(owner=alice, name="P")

    project.papers.add(paper)  # through-model bulk_create: no post_save

    assert chunks(paper) > 0


def test_a_bulk_created_project_link_indexes_a_paper_without_chunks(alice, hooks):
    paper = new_paper(alice, [RAFT])
    project = create_project(owner=alice, name="P")

    ProjectPaper.objects.bulk_create([ProjectPaper(project=project, paper=paper)])

    assert chunks(paper) > 0


def test_a_bulk_created_paper_is_indexed(alice, hooks):
    data = make_pdf_bytes([RAFT])
    digest = hashlib.sha256(data).hexdigest()
    write_paper_file(Paper(sha256=digest), data)

    (paper,) = Paper.objects.bulk_create(
        [Paper(sha256=digest, file=paper_upload_to(Paper(sha256=digest), ""), file_size=len(data), page_count=1)]
    )

    assert chunks(paper) > 0


def test_linking_a_ready_paper_queues_nothing(alice, hooks):
    paper = indexed_paper(alice, [RAFT])
    version = paper.index_version

    add_papers_to_project(project=create_project(owner=alice, name="P"), papers=[paper], user=alice)

    paper.refresh_from_db()
    assert paper.index_version == version and hooks == []


def test_the_ingest_command_leaves_chunks_for_library_and_project(alice, hooks, tmp_path):
    (tmp_path / "raft.pdf").write_bytes(make_pdf_bytes([RAFT]))
    (tmp_path / "gossip.pdf").write_bytes(make_pdf_bytes([GOSSIP]))

    call_command("ingest_papers", str(tmp_path / "raft.pdf"), "--user", "alice", stdout=io.StringIO())
    call_command(
        "ingest_papers", str(tmp_path / "gossip.pdf"), "--user", "alice", "--project", "Gossip", stdout=io.StringIO()
    )

    assert all(chunks(paper) > 0 for paper in Paper.objects.all()) and Paper.objects.count() == 2
    assert Project.objects.get(name="Gossip").papers.get().chunk_count > 0


def test_the_demo_command_leaves_chunks_for_its_papers(hooks, tmp_path, settings):
    (tmp_path / "raft.pdf").write_bytes(make_pdf_bytes([RAFT]))
    settings.DEMO_PAPERS_DIR = tmp_path

    call_command("demo", stdout=io.StringIO(), stderr=io.StringIO())

    paper = Paper.objects.get()
    assert paper.projects.exists() and chunks(paper) > 0


# --- removing -------------------------------------------------------------------------------------


def test_removing_the_last_library_entry_deletes_the_chunks(alice, bob, hooks):
    paper = indexed_paper(alice, [RAFT])
    with open(paper.file.path, "rb") as handle:
        assert add_paper_to_library(user=bob, data=handle.read(), filename="mine.pdf").paper == paper
    project = create_project(owner=alice, name="P")
    add_papers_to_project(project=project, papers=[paper], user=alice)

    remove_paper_from_library(user=alice, paper=paper)
    assert chunks(paper) > 0  # bob's library still holds it

    paper_id = paper.pk  # a deleted instance loses its pk
    remove_paper_from_library(user=bob, paper=paper)
    assert not Paper.objects.filter(pk=paper_id).exists()
    assert store.count_chunks(paper_id) == 0


def test_removing_from_the_library_through_the_web_deletes_the_chunks(alice, client_for, hooks):
    paper = indexed_paper(alice, [RAFT])

    client_for(alice).post(reverse("papers:remove", args=[paper.pk]))

    assert not Paper.objects.filter(pk=paper.pk).exists()
    assert store.count_chunks(paper.pk) == 0


def test_a_bulk_queryset_delete_of_papers_deletes_their_chunks(alice, hooks):
    first, second = indexed_paper(alice, [RAFT], title="Raft"), indexed_paper(alice, [GOSSIP], title="Gossip")
    kept = indexed_paper(alice, ["A third paper about quorum systems and their intersections."], title="Kept")

    Paper.objects.filter(pk__in=[first.pk, second.pk]).delete()

    assert store.count_chunks(first.pk) == 0 and store.count_chunks(second.pk) == 0
    assert chunks(kept) > 0


def test_deleting_one_paper_row_deletes_its_chunks(alice, hooks):
    paper = indexed_paper(alice, [RAFT])

    Paper.objects.get(pk=paper.pk).delete()

    assert store.count_chunks(paper.pk) == 0


def test_a_rolled_back_delete_keeps_the_chunks(alice, hooks):
    paper = indexed_paper(alice, [RAFT])

    with pytest.raises(RuntimeError), transaction.atomic():
        Paper.objects.filter(pk=paper.pk).delete()
        raise RuntimeError("roll back")

    assert chunks(paper) > 0


def test_deleting_a_project_or_unlinking_a_paper_keeps_the_chunks(alice, hooks):
    first, second = indexed_paper(alice, [RAFT], title="Raft"), indexed_paper(alice, [GOSSIP], title="Gossip")
    project = create_project(owner=alice, name="P")
    add_papers_to_project(project=project, papers=[first, second], user=alice)

    remove_paper_from_project(project=project, paper=first)
    delete_project(project=project)  # the cascade takes the links, not the papers

    assert ProjectPaper.objects.count() == 0 and UserPaper.objects.count() == 2
    assert chunks(first) > 0 and chunks(second) > 0


# --- reprocess ------------------------------------------------------------------------------------


def test_reprocess_rebuilds_the_chunks_from_the_file(alice, hooks):
    paper = indexed_paper(alice, [RAFT])
    old_version = paper.index_version
    replace_pdf(paper, [GOSSIP])

    reprocess_paper(paper=paper)

    paper.refresh_from_db()
    assert paper.index_version != old_version and chunks(paper) > 0
    assert "Gossip" in stored_texts(paper.pk) and "Raft" not in stored_texts(paper.pk)
    assert hooks == [{"paper_id": paper.pk, "rebuild": True}]


def test_reprocess_from_the_project_page_rebuilds_a_failed_paper(alice, client_for, hooks):
    paper = new_paper(alice, [RAFT])
    project = create_project(owner=alice, name="P")
    with transaction.atomic():  # linked while failed: the link's hook leaves it queued, not indexed
        Paper.objects.filter(pk=paper.pk).update(index_status="indexing")
        add_papers_to_project(project=project, papers=[paper], user=alice)
    Paper.objects.filter(pk=paper.pk).update(index_status="failed", index_error="Parsing timed out.")
    assert chunks(paper) == 0

    client_for(alice).post(reverse("projects:reprocess", args=[project.pk, paper.pk]))

    paper.refresh_from_db()
    assert paper.index_status == "ready" and paper.index_error == "" and chunks(paper) > 0
