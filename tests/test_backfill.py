"""`manage.py backfill_chunks`: resumable, failure-tolerant indexing of the papers that need it."""

from __future__ import annotations

import io
import os
import signal

import pytest
from django.core.management import CommandError, call_command

from indexing import store
from indexing.embeddings import configured_model_name
from indexing.services import index_paper
from papers.models import Paper
from projects.services import add_papers_to_project, create_project
from tests.support.indexing import closed_port_uri, indexed_paper, new_paper, use_stub_embeddings

pytestmark = pytest.mark.django_db

TEXTS = [
    "Paxos reaches agreement among unreliable processors as long as a majority stays up.",
    "Raft splits consensus into leader election, log replication and safety.",
    "Viewstamped replication recovers a primary-backup group after a view change.",
]


@pytest.fixture
def stub(settings, openai_stub, chunk_store):
    use_stub_embeddings(settings, openai_stub)
    settings.EMBED_BATCH_SIZE = 256  # one embedding request per paper
    return openai_stub


def run(*args: str, **options) -> str:
    out = io.StringIO()
    call_command("backfill_chunks", *args, stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


def embedded_texts(stub) -> str:
    return "\n".join(text for request in stub.embedding_requests for text in request["input"])


@pytest.fixture
def ctrl_c_interrupts():
    """SIGINT raises KeyboardInterrupt, as at a terminal, even where this process was started with
    SIGINT ignored (a job a non-interactive shell put in the background)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_an_interrupted_backfill_resumes_without_re_embedding_finished_papers(alice, stub, ctrl_c_interrupts):
    papers = [new_paper(alice, [text]) for text in TEXTS]

    def ctrl_c_on_the_second_paper(body):
        # Its chunks: the first request that holds its text (a finished paper's sentences follow it).
        if any(TEXTS[1] in text for text in body["input"]):
            os.kill(os.getpid(), signal.SIGINT)  # arrives while the command waits for this answer

    stub.on_embedding = ctrl_c_on_the_second_paper
    with pytest.raises(KeyboardInterrupt):
        run()

    statuses = [Paper.objects.get(pk=paper.pk).index_status for paper in papers]
    assert statuses == ["ready", "pending", "pending"]
    assert store.count_chunks(papers[1].pk) == 0  # nothing partial left behind
    assert "interrupted" in Paper.objects.get(pk=papers[1].pk).index_error

    stub.on_embedding = None
    stub.embedding_requests.clear()
    output = run()

    assert "Done 2, skipped 1, failed 0" in output
    assert all(Paper.objects.get(pk=paper.pk).index_status == "ready" for paper in papers)
    texts = embedded_texts(stub)
    assert "Paxos" not in texts and "Raft" in texts and "Viewstamped" in texts


def test_mongo_lost_mid_indexing_fails_the_paper_and_missing_only_completes_it_later(alice, settings, stub):
    paper = new_paper(alice, [TEXTS[0]])
    reachable = settings.MONGODB_URI

    def mongo_goes_away(event):
        if event.stage == "embedding":  # parsing is done; the chunks are about to be written
            settings.MONGODB_URI, settings.MONGODB_TIMEOUT_MS = closed_port_uri(), 200

    with pytest.raises(store.ChunkStoreError):
        index_paper(paper_id=paper.pk, progress=mongo_goes_away)
    settings.MONGODB_URI = reachable

    paper.refresh_from_db()
    assert paper.index_status == "failed"
    assert "is not reachable" in paper.index_error
    assert store.count_chunks(paper.pk) == 0
    assert not Paper.objects.ready(embedding_model=configured_model_name()).exists()

    output = run(missing_only=True)

    assert "Done 1, skipped 0, failed 0" in output
    paper.refresh_from_db()
    assert paper.index_status == "ready"
    assert store.count_chunks(paper.pk) == paper.chunk_count > 0


def test_a_failing_paper_is_reported_the_others_finish_and_the_exit_code_is_non_zero(alice, stub, make_pdf):
    good = new_paper(alice, [TEXTS[0]])
    bad = new_paper(alice, [TEXTS[1]])
    with open(bad.file.path, "wb") as handle:
        handle.write(make_pdf([TEXTS[1]], user_password="secret"))
    err = io.StringIO()

    with pytest.raises(CommandError) as failure:
        call_command("backfill_chunks", stdout=io.StringIO(), stderr=err)

    assert failure.value.returncode == 1
    assert f"paper {bad.pk}: The PDF is encrypted and needs a password to open." in err.getvalue()
    assert Paper.objects.get(pk=good.pk).index_status == "ready"


def test_a_paper_whose_file_is_unreadable_is_skipped_by_later_runs_until_retry_failed(alice, stub, make_pdf):
    bad = new_paper(alice, [TEXTS[1]])
    with open(bad.file.path, "wb") as handle:
        handle.write(make_pdf([TEXTS[1]], user_password="secret"))
    with pytest.raises(CommandError):
        run()
    assert Paper.objects.get(pk=bad.pk).index_error_code == "pdf_encrypted"

    again = run()  # nothing to do: the same bytes would fail the same way, so the run succeeds

    assert f"skipped paper {bad.pk}" in again and "0 paper(s) to index" in again
    # Joining a project does not queue it again either.
    add_papers_to_project(project=create_project(owner=alice, name="Later"), papers=[bad], user=alice)
    assert Paper.objects.get(pk=bad.pk).index_status == "failed"
    # The operator asks for a retry (after fixing the cause: here, the file is readable now).
    with open(bad.file.path, "wb") as handle:
        handle.write(make_pdf([TEXTS[1]]))
    assert "1 paper(s) to index" in run("--retry-failed")
    assert Paper.objects.get(pk=bad.pk).index_status == "ready"
    assert Paper.objects.get(pk=bad.pk).index_error_code == ""


def test_ready_papers_whose_chunks_vanished_are_rebuilt_unless_missing_only(alice, stub):
    paper = indexed_paper(alice, [TEXTS[0]])
    store.delete_chunks(paper.pk)

    assert "0 paper(s) to index" in run("--dry-run", missing_only=True)
    output = run()

    assert "Done 1" in output
    rebuilt = Paper.objects.get(pk=paper.pk)
    assert rebuilt.index_version != paper.index_version
    assert store.count_chunks(paper.pk, index_version=rebuilt.index_version) == paper.chunk_count


def test_a_dry_run_lists_the_papers_of_a_project_without_embedding_anything(alice, stub):
    inside, outside = new_paper(alice, [TEXTS[0]]), new_paper(alice, [TEXTS[1]])
    project = create_project(owner=alice, name="P")
    add_papers_to_project(project=project, papers=[inside], user=alice)

    output = run("--dry-run", project=project.pk)

    assert f"would index paper {inside.pk}" in output and f"paper {outside.pk}" not in output
    assert stub.embedding_requests == []
    assert Paper.objects.get(pk=inside.pk).index_status == "pending"


def test_paper_ids_batch_size_and_model_apply_to_this_run_only(alice, settings, stub):
    first, second = new_paper(alice, [TEXTS[0]]), new_paper(alice, [TEXTS[1]])

    run(paper=[first.pk], batch_size=1, model="stub-embed-b")

    first.refresh_from_db()
    assert first.embedding_model == "stub-embed-b"
    assert Paper.objects.get(pk=second.pk).index_status == "pending"
    assert {request["model"] for request in stub.embedding_requests} == {"stub-embed-b"}
    assert all(len(request["input"]) == 1 for request in stub.embedding_requests)
    assert settings.OPENAI_EMBED_MODEL == "stub-embed-a"
    assert not Paper.objects.ready(
        embedding_model=configured_model_name()
    ).exists()  # the app still searches model a only


def test_an_unreachable_chunk_index_is_a_clear_command_error(alice, settings, stub):
    indexed_paper(alice, [TEXTS[0]])
    settings.MONGODB_URI, settings.MONGODB_TIMEOUT_MS = closed_port_uri(), 200

    with pytest.raises(
        CommandError, match="Could not count chunks: the MongoDB server of MONGODB_URI is not reachable"
    ):
        run()
