"""Index builds claim their paper with a lease: two builds of one paper never run at once, a lapsed
claim (its worker killed) is taken over, and the worker that watches a claim picks the paper up."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone
from django_tasks import default_task_backend

from indexing import store, tasks
from indexing.services import ClaimLostError, PaperBusyError, claim_paper, index_paper
from papers.models import Paper
from tests.conftest import RAFT_PAGES
from tests.support.indexing import new_paper

pytestmark = pytest.mark.django_db


def lapsed(paper: Paper, version: str) -> None:
    """Leave *paper* as a killed worker does: claimed for *version*, the lease over, some chunks written."""
    Paper.objects.filter(pk=paper.pk).update(
        index_status="indexing", index_claim=version, index_claimed_until=timezone.now() - timedelta(seconds=1)
    )
    store.write_chunks(
        [
            store.ChunkRecord(paper.pk, paper.sha256, i, 1, f"partial {i}", "", np.ones(384, np.float32), "m", version)
            for i in range(3)
        ]
    )


def queued(task_name: str) -> list:
    return [result for result in default_task_backend.results if result.task.name == task_name]


def test_a_paper_claimed_by_a_running_build_cannot_be_claimed_again(alice, chunk_store):
    paper = new_paper(alice, RAFT_PAGES)
    claim = claim_paper(paper_id=paper.pk)

    with pytest.raises(PaperBusyError) as busy:
        claim_paper(paper_id=paper.pk)
    with pytest.raises(PaperBusyError):
        index_paper(paper_id=paper.pk)

    assert busy.value.code == "paper_being_indexed"
    assert busy.value.claimed_until == claim.claimed_until
    assert Paper.objects.get(pk=paper.pk).index_claim == claim.version


def test_every_build_writes_a_version_of_its_own(alice, chunk_store):
    paper = new_paper(alice, RAFT_PAGES)
    first = index_paper(paper_id=paper.pk).index_version
    second = index_paper(paper_id=paper.pk).index_version

    assert len({first, second}) == 2 and all(len(version) == 32 for version in (first, second))
    assert store.count_chunks(paper.pk) == store.count_chunks(paper.pk, index_version=second)


def test_a_lapsed_claim_is_taken_over_and_its_partial_chunks_removed(alice, chunk_store):
    paper = new_paper(alice, RAFT_PAGES)
    lapsed(paper, "killed-worker-build")

    built = index_paper(paper_id=paper.pk)

    assert (built.index_status, built.index_claim, built.index_claimed_until) == ("ready", "", None)
    assert store.count_chunks(paper.pk, index_version="killed-worker-build") == 0
    assert store.count_chunks(paper.pk) == built.chunk_count > 0


def test_a_build_whose_claim_was_taken_over_never_swaps_in_its_chunks(alice, chunk_store):
    paper = new_paper(alice, RAFT_PAGES)

    def taken_over(event):
        if event.stage == "swapping":  # this build stalled past its lease; another worker took over
            Paper.objects.filter(pk=paper.pk).update(index_claim="the-other-build")

    with pytest.raises(ClaimLostError) as lost:
        index_paper(paper_id=paper.pk, progress=taken_over)

    assert lost.value.code == "index_claim_lost"
    after = Paper.objects.get(pk=paper.pk)
    assert (after.index_version, after.index_claim) == ("", "the-other-build")
    assert store.count_chunks(paper.pk) == 0  # the dropped build's chunks are gone


def test_the_task_watches_its_claim_from_the_moment_it_takes_it(alice, chunk_store, index_queue):
    paper = new_paper(alice, RAFT_PAGES)

    tasks.index_paper.call(paper_id=paper.pk)

    (watcher,) = queued("watch_index_claim")
    built = Paper.objects.get(pk=paper.pk)
    assert watcher.kwargs == {"paper_id": paper.pk, "version": built.index_version}  # the build's own claim
    assert built.index_status == "ready"
    assert watcher.task.run_after > timezone.now()


def test_the_watcher_of_a_lapsed_claim_builds_the_paper_again(alice, chunk_store, index_queue):
    paper = new_paper(alice, RAFT_PAGES)
    lapsed(paper, "killed-worker-build")

    tasks.watch_index_claim.call(paper_id=paper.pk, version="killed-worker-build")

    after = Paper.objects.get(pk=paper.pk)
    assert (after.index_status, after.index_claim) == ("ready", "")
    assert store.count_chunks(paper.pk, index_version="killed-worker-build") == 0


def test_the_watcher_of_a_live_claim_looks_again_when_it_would_lapse(alice, chunk_store, index_queue):
    paper = new_paper(alice, RAFT_PAGES)
    claim = claim_paper(paper_id=paper.pk)

    tasks.watch_index_claim.call(paper_id=paper.pk, version=claim.version)

    (again,) = queued("watch_index_claim")
    assert again.kwargs == {"paper_id": paper.pk, "version": claim.version}
    assert again.task.run_after == claim.claimed_until + tasks.WATCH_GRACE
    assert Paper.objects.get(pk=paper.pk).index_status == "pending"  # not built by the watcher


def test_the_watcher_of_a_finished_build_does_nothing(alice, chunk_store, index_queue):
    paper = new_paper(alice, RAFT_PAGES)
    built = index_paper(paper_id=paper.pk)

    tasks.watch_index_claim.call(paper_id=paper.pk, version="a-build-long-over")

    assert Paper.objects.get(pk=paper.pk).index_version == built.index_version
    assert default_task_backend.results == []


def test_a_rebuild_asked_for_during_a_build_runs_after_it(alice, chunk_store, index_queue):
    paper = new_paper(alice, RAFT_PAGES)
    claim = claim_paper(paper_id=paper.pk)

    tasks.index_paper.call(paper_id=paper.pk, rebuild=True)

    (later,) = queued("index_paper")
    assert later.kwargs == {"paper_id": paper.pk, "rebuild": True}
    assert later.task.run_after == claim.claimed_until + tasks.WATCH_GRACE


@pytest.mark.django_db(transaction=True)  # the claim keeper runs only outside a transaction
def test_work_after_the_swap_is_not_reported_as_a_lost_claim(alice, chunk_store, settings, caplog):
    import time

    from indexing.signals import paper_indexed

    settings.INDEX_CLAIM_SECONDS = 3  # the keeper renews every second
    settings.SENTENCE_EMBEDDING_PREFILL = False

    def slow_warm_up(**kwargs):  # work after the swap, as warming caches is, outlasting a renewal
        time.sleep(1.6)

    paper_indexed.connect(slow_warm_up, weak=False)
    try:
        with caplog.at_level("WARNING", logger="indexing.services"):
            index_paper(paper_id=new_paper(alice, RAFT_PAGES).pk)
    finally:
        paper_indexed.disconnect(slow_warm_up)

    assert "lost its claim" not in caplog.text
