"""`manage.py check_index [--fix]`: each planted inconsistency is found, and --fix repairs it."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from indexing import store
from papers.models import Paper
from tests.support.indexing import closed_port_uri, indexed_paper, use_stub_embeddings

pytestmark = pytest.mark.django_db

TEXT = "Paxos reaches agreement among unreliable processors as long as a majority stays up."


@pytest.fixture
def stub(settings, openai_stub, chunk_store):
    use_stub_embeddings(settings, openai_stub)
    return openai_stub


def check(fix: bool = False) -> tuple[str, int]:
    """(output, exit code) of check_index."""
    out = io.StringIO()
    try:
        call_command("check_index", fix=fix, stdout=out, stderr=io.StringIO())
    except CommandError as exc:
        return out.getvalue() + str(exc), exc.returncode
    return out.getvalue(), 0


def plant(paper_id: int, *, version: str, model: str, n: int = 2, first: int = 100, sha256: str | None = None) -> None:
    """Write *n* chunks straight into the store, numbered from *first* (clear of real chunk numbers),
    made from the file *sha256* (default: the paper's own file, when the paper exists)."""
    if sha256 is None:
        sha256 = Paper.objects.filter(pk=paper_id).values_list("sha256", flat=True).first() or "f" * 64
    store.write_chunks(
        [
            store.ChunkRecord(paper_id, sha256, i, 1, f"planted {i}", "", np.ones(32, np.float32), model, version)
            for i in range(first, first + n)
        ]
    )


def test_a_consistent_index_passes(alice, stub):
    indexed_paper(alice, [TEXT])

    output, code = check()

    assert code == 0 and "Chunk index OK: 1 paper(s)" in output


def test_orphan_chunks_are_found_and_deleted(alice, stub):
    indexed_paper(alice, [TEXT])
    plant(9999, version="v1", model="stub-embed-a")

    output, code = check()
    assert code == 1 and "[problem] orphans: 2 chunk(s) of 1 paper(s)" in output

    output, code = check(fix=True)
    assert code == 0 and "[fixed] orphans" in output
    assert store.count_chunks(9999) == 0
    assert check()[1] == 0


def test_a_ready_paper_without_chunks_is_found_and_rebuilt(
    alice, stub, index_queue, django_capture_on_commit_callbacks
):
    paper = indexed_paper(alice, [TEXT])
    store.delete_chunks(paper.pk)

    output, code = check()
    assert code == 1 and f"paper {paper.pk} (" in output and "0 of 1 chunk(s) stored" in output

    with django_capture_on_commit_callbacks(execute=True):
        output, code = check(fix=True)
    assert code == 0 and "[fixed] missing_chunks" in output
    assert index_queue() == [paper.pk]
    assert Paper.objects.get(pk=paper.pk).index_status == "pending"  # out of retrieval until rebuilt

    call_command("backfill_chunks", stdout=io.StringIO(), stderr=io.StringIO())
    assert check()[1] == 0


def test_chunks_of_another_model_beside_the_configured_ones_are_deleted(alice, stub):
    paper = indexed_paper(alice, [TEXT])
    plant(paper.pk, version=paper.index_version, model="stub-embed-old")

    output, code = check()
    assert code == 1 and "[problem] other_model" in output and "stub-embed-old" in output

    output, code = check(fix=True)
    assert code == 0
    assert store.count_chunks(paper.pk, embedding_model="stub-embed-old") == 0
    assert store.count_chunks(paper.pk, embedding_model="stub-embed-a") == paper.chunk_count


def test_a_paper_indexed_only_with_another_model_keeps_its_chunks_and_is_rebuilt(
    alice, settings, stub, index_queue, django_capture_on_commit_callbacks
):
    paper = indexed_paper(alice, [TEXT])
    settings.OPENAI_EMBED_MODEL = "stub-embed-b"

    output, code = check()
    assert code == 1 and "indexed only with another embedding model than stub-embed-b" in output

    with django_capture_on_commit_callbacks(execute=True):
        output, code = check(fix=True)
    assert code == 0
    assert index_queue() == [paper.pk]
    assert store.count_chunks(paper.pk, embedding_model="stub-embed-a") == paper.chunk_count  # kept until rebuilt

    call_command("backfill_chunks", stdout=io.StringIO(), stderr=io.StringIO())
    assert store.count_chunks(paper.pk, embedding_model="stub-embed-a") == 0
    assert check()[1] == 0


def test_chunks_of_superseded_versions_are_deleted_and_a_running_build_is_left_alone(alice, stub):
    from datetime import timedelta

    from django.utils import timezone

    paper = indexed_paper(alice, [TEXT])
    plant(paper.pk, version="superseded", model="stub-embed-a")
    plant(paper.pk, version="running", model="stub-embed-a")  # a build in progress, holding a live claim
    Paper.objects.filter(pk=paper.pk).update(
        index_claim="running", index_claimed_until=timezone.now() + timedelta(minutes=1)
    )

    output, code = check(fix=True)

    assert "[fixed] stale_versions" in output and code == 0
    assert store.count_chunks(paper.pk, index_version="superseded") == 0
    assert store.count_chunks(paper.pk, index_version="running") == 2
    assert store.count_chunks(paper.pk, index_version=paper.index_version) == paper.chunk_count


def test_chunks_of_a_build_whose_claim_lapsed_are_stale(alice, stub):
    from django.utils import timezone

    paper = indexed_paper(alice, [TEXT])
    plant(paper.pk, version="killed", model="stub-embed-a")
    Paper.objects.filter(pk=paper.pk).update(index_claim="killed", index_claimed_until=timezone.now())

    output, code = check(fix=True)

    assert "[fixed] stale_versions" in output and code == 0
    assert store.count_chunks(paper.pk, index_version="killed") == 0


def test_missing_mongo_indexes_are_found_and_created(alice, stub, chunk_store):
    chunk_store.drop_indexes()

    output, code = check()
    assert code == 1 and "Missing Mongo indexes: paperId, paper_version_chunk, embeddingModel" in output

    assert check(fix=True)[1] == 0
    assert store.missing_indexes() == []


def test_an_unreachable_chunk_index_fails_the_check_with_a_clear_reason(settings, stub):
    settings.MONGODB_URI, settings.MONGODB_TIMEOUT_MS = closed_port_uri(), 200

    output, code = check(fix=True)

    assert code == 1
    assert "unreachable: Could not reach the chunk index: the MongoDB server of MONGODB_URI is not reachable" in output


def test_a_paper_left_indexing_by_a_killed_worker_is_found_and_queued_again(
    alice, stub, index_queue, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    paper = indexed_paper(alice, [TEXT])
    Paper.objects.filter(pk=paper.pk).update(index_status="indexing", updated_at=timezone.now() - timedelta(hours=2))

    output, code = check()
    assert code == 1 and "stuck" in output and f"paper {paper.pk} (" in output

    with django_capture_on_commit_callbacks(execute=True):
        output, code = check(fix=True)
    assert code == 0 and "[fixed] stuck" in output
    assert index_queue() == [paper.pk]
    assert Paper.objects.get(pk=paper.pk).index_status == "pending"


def test_a_paper_indexing_right_now_is_not_stuck(alice, stub):
    paper = indexed_paper(alice, [TEXT])
    Paper.objects.filter(pk=paper.pk).update(index_status="indexing")
    assert "stuck" not in check()[0]
