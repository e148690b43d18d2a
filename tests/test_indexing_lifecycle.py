"""The chunk index through a paper's life: reprocess swaps atomically, lazy backfill on add, chunks
belong to the paper, embedding provenance, retries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_tasks import default_task_backend

from indexing import store, tasks
from indexing.embeddings import configured_model_name
from indexing.retrieval import retrieve_passages
from indexing.services import index_paper
from papers.models import Paper
from projects.services import (
    add_papers_to_project,
    create_project,
    delete_project,
    remove_paper_from_library,
    remove_paper_from_project,
    reprocess_paper,
)
from tests.support.indexing import (
    closed_port_uri,
    indexed_paper,
    new_paper,
    replace_pdf,
    use_stub_embeddings,
)

pytestmark = pytest.mark.django_db

OLD_TEXT = "Alpha consensus protocols elect a leader by majority vote before replicating the log."
NEW_TEXT = "Beta gossip protocols spread membership updates epidemically without any leader at all."


@pytest.fixture
def stub_embeddings(settings, openai_stub, chunk_store):
    use_stub_embeddings(settings, openai_stub)
    settings.PROJECT_CHAT_MIN_RELEVANCE = -1.0  # stub vectors are random: keep every hit
    return openai_stub


def index_runs() -> list:
    """The index_paper runs queued on the test backend (claim watchers left out)."""
    return [result for result in default_task_backend.results if result.task.name == "index_paper"]


def ask(project, question: str = "How is a leader chosen?") -> list[str]:
    papers = list(Paper.objects.filter(projects=project))
    return [reference.text for reference in retrieve_passages(papers=papers, question=question).references]


def test_a_question_during_reprocess_still_reads_the_old_chunks(alice, stub_embeddings):
    paper = indexed_paper(alice, [OLD_TEXT], title="Consensus")
    project = create_project(owner=alice, name="Distributed systems")
    add_papers_to_project(project=project, papers=[paper], user=alice)
    replace_pdf(paper, [NEW_TEXT])
    seen: dict[str, list[str]] = {}

    def question_mid_build(event):
        if event.stage in ("embedding", "swapping"):
            seen[event.stage] = ask(project)
        if event.stage == "swapping":  # every new chunk is stored, the swap has not happened
            building = Paper.objects.get(pk=paper.pk).index_claim
            assert building != paper.index_version and store.count_chunks(paper.pk, index_version=building) > 0
            assert Paper.objects.get(pk=paper.pk).index_status == "ready"

    index_paper(paper_id=paper.pk, progress=question_mid_build)

    assert seen["embedding"] and all("Alpha" in text for text in seen["embedding"])
    assert seen["swapping"] and all("Alpha" in text for text in seen["swapping"])
    after = ask(project)
    assert after and all("Beta" in text for text in after)
    paper.refresh_from_db()
    assert store.count_chunks(paper.pk) == store.count_chunks(paper.pk, index_version=paper.index_version)


def test_reprocessing_a_ready_paper_queues_a_rebuild_and_keeps_it_searchable(
    alice, stub_embeddings, index_queue, django_capture_on_commit_callbacks
):
    paper = indexed_paper(alice, [OLD_TEXT])

    with django_capture_on_commit_callbacks(execute=True):
        reprocess_paper(paper=paper)

    assert index_queue() == [paper.pk]
    assert Paper.objects.ready(embedding_model=configured_model_name()).filter(pk=paper.pk).exists()


def test_a_failed_rebuild_of_a_ready_paper_keeps_serving_the_old_chunks(alice, stub_embeddings):
    paper = indexed_paper(alice, [OLD_TEXT])
    stub_embeddings.fail_status = 500

    with pytest.raises(Exception, match="embedding model"):
        index_paper(paper_id=paper.pk)

    paper.refresh_from_db()
    assert paper.index_status == "ready"
    assert "previous index is still used" in paper.index_error
    assert store.count_chunks(paper.pk) == paper.chunk_count > 0


def test_adding_a_paper_without_chunks_to_a_project_queues_its_indexing(
    alice, stub_embeddings, index_queue, django_capture_on_commit_callbacks
):
    ready = indexed_paper(alice, [OLD_TEXT], title="Ready")
    failed = new_paper(alice, [NEW_TEXT], title="Failed")
    Paper.objects.filter(pk=failed.pk).update(index_status="failed", index_error="Timed out.")
    failed.refresh_from_db()
    project = create_project(owner=alice, name="P")

    with django_capture_on_commit_callbacks(execute=True):
        add_papers_to_project(project=project, papers=[ready, failed], user=alice)

    assert index_queue() == [failed.pk]
    failed.refresh_from_db()
    assert failed.index_status == "pending"
    references = retrieve_passages(papers=list(project.papers.named_for(alice)), question="leader")
    assert references.indexing == ["Failed.pdf"]
    assert {ref.paper_id for ref in references.references} == {ready.pk}


def test_a_paper_in_several_projects_is_embedded_once_and_keeps_its_chunks_until_it_is_deleted(
    alice, bob, stub_embeddings, django_capture_on_commit_callbacks
):
    paper = indexed_paper(alice, [OLD_TEXT])
    embedded = len(stub_embeddings.embedding_requests)
    first, second = create_project(owner=alice, name="One"), create_project(owner=alice, name="Two")
    bobs = create_project(owner=bob, name="Bob's")
    with django_capture_on_commit_callbacks(execute=True):
        add_papers_to_project(project=first, papers=[paper], user=alice)
        add_papers_to_project(project=second, papers=[paper], user=alice)
        add_papers_to_project(project=bobs, papers=[paper], user=bob)
    assert len(stub_embeddings.embedding_requests) == embedded
    chunks = store.count_chunks(paper.pk)

    with django_capture_on_commit_callbacks(execute=True):
        delete_project(project=first)
        remove_paper_from_project(project=second, paper=paper)
        remove_paper_from_library(user=alice, paper=paper)
    assert store.count_chunks(paper.pk) == chunks > 0  # bob still holds it

    with django_capture_on_commit_callbacks(execute=True):
        remove_paper_from_library(user=bob, paper=paper)
    assert store.count_chunks(paper.pk) == 0


def test_switching_the_embedding_model_never_mixes_vectors(alice, settings, stub_embeddings):
    settings.SENTENCE_EMBEDDING_PREFILL = False  # only chunk embeddings are counted below
    first = indexed_paper(alice, [OLD_TEXT], title="First")
    second = indexed_paper(alice, [NEW_TEXT], title="Second")
    project = create_project(owner=alice, name="P")
    add_papers_to_project(project=project, papers=[first, second], user=alice)

    settings.OPENAI_EMBED_MODEL = "stub-embed-b"  # same dimension, different vector space
    stub_embeddings.embedding_requests.clear()

    assert not Paper.objects.ready(embedding_model=configured_model_name()).exists()
    assert ask(project) == []  # nothing of model a is searched with a question embedded by b
    index_paper(paper_id=first.pk)
    first_only = retrieve_passages(papers=list(project.papers.all()), question="leader")
    assert {ref.paper_id for ref in first_only.references} == {first.pk}
    assert first_only.indexing == ["Second"]

    call_command("backfill_chunks")  # the paper lacking chunks of b is backfilled; the first is not

    assert {request["model"] for request in stub_embeddings.embedding_requests} == {"stub-embed-b"}
    assert set(Paper.objects.ready(embedding_model=configured_model_name()).values_list("pk", flat=True)) == {
        first.pk,
        second.pk,
    }
    models = {key[2] for key in store.chunk_counts_by_paper()}
    assert models == {"stub-embed-b"}
    backfilled_texts = [request["input"] for request in stub_embeddings.embedding_requests if len(request["input"]) > 0]
    assert sum("Alpha" in " ".join(texts) for texts in backfilled_texts) == 1  # the first paper embedded once


def test_a_transient_failure_is_retried_later_with_backoff(alice, settings, stub_embeddings, index_queue):
    paper = new_paper(alice, [OLD_TEXT])
    settings.MONGODB_URI, settings.MONGODB_TIMEOUT_MS = closed_port_uri(), 200

    tasks.index_paper.call(paper_id=paper.pk)

    paper.refresh_from_db()
    assert paper.index_status == "pending"
    assert "not reachable" in paper.index_error and "run 2 of 5" in paper.index_error
    (retry,) = index_runs()
    assert retry.kwargs == {"paper_id": paper.pk, "attempt": 2, "rebuild": False}
    assert timezone.now() + timedelta(seconds=20) < retry.task.run_after < timezone.now() + timedelta(seconds=40)


def test_retries_stop_after_the_last_attempt(alice, settings, stub_embeddings, index_queue):
    paper = new_paper(alice, [OLD_TEXT])
    settings.MONGODB_URI, settings.MONGODB_TIMEOUT_MS = closed_port_uri(), 200

    tasks.index_paper.call(paper_id=paper.pk, attempt=tasks.MAX_ATTEMPTS)

    paper.refresh_from_db()
    assert paper.index_status == "failed"
    assert "not reachable" in paper.index_error
    assert index_runs() == []


def test_a_broken_pdf_fails_at_once_without_retries(alice, stub_embeddings, index_queue, make_pdf):
    paper = new_paper(alice, [OLD_TEXT])
    with open(paper.file.path, "wb") as handle:
        handle.write(make_pdf([OLD_TEXT], user_password="secret"))

    tasks.index_paper.call(paper_id=paper.pk)

    paper.refresh_from_db()
    assert (paper.index_status, paper.index_error) == ("failed", "The PDF is encrypted and needs a password to open.")
    assert index_runs() == []


def test_a_paper_deleted_before_its_turn_is_skipped(alice, stub_embeddings, index_queue):
    paper = new_paper(alice, [OLD_TEXT])
    paper_id = paper.pk
    paper.delete()

    tasks.index_paper.call(paper_id=paper_id)

    assert store.count_chunks(paper_id) == 0
    assert default_task_backend.results == []


def test_a_pending_paper_whose_task_was_lost_is_queued_when_added_to_a_project(
    alice, index_queue, django_capture_on_commit_callbacks
):
    from projects.services import add_papers_to_project, create_project

    paper = new_paper(alice, ["A paper imported before indexing existed. " * 5])
    assert paper.index_status == "pending" and index_queue() == []
    project = create_project(owner=alice, name="Backfill")
    with django_capture_on_commit_callbacks(execute=True):
        add_papers_to_project(project=project, papers=[paper], user=alice)
    assert index_queue() == [paper.pk]


def test_a_queued_task_for_a_paper_already_indexed_does_nothing_unless_asked_to_rebuild(
    alice, settings, openai_stub, chunk_store
):
    from indexing.tasks import index_paper as index_task

    use_stub_embeddings(settings, openai_stub)
    paper = indexed_paper(alice, ["Raft elects a leader with randomized timeouts. " * 10])
    calls = len(openai_stub.embedding_requests)

    first_version = paper.index_version
    index_task.call(paper_id=paper.pk)
    paper.refresh_from_db()
    assert len(openai_stub.embedding_requests) == calls and paper.index_version == first_version

    index_task.call(paper_id=paper.pk, rebuild=True)
    paper.refresh_from_db()
    assert len(openai_stub.embedding_requests) > calls and paper.index_version not in ("", first_version)
