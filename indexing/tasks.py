"""Background tasks (django-tasks; worker: `manage.py db_worker`).

django-tasks has no retries of its own, so `index_paper` retries transient failures (the chunk
index or the embedding model unreachable) by enqueueing itself again with `run_after` set
`retry_delay(attempt)` seconds ahead and `attempt + 1`, up to `MAX_ATTEMPTS` runs. Permanent failures
(the PDF itself) stop at once. Either way the paper row carries the reason, and the task returns
normally so the worker goes on with the next paper.

A build claims its paper with a lease (`indexing.services.claim_paper`) that its worker renews. As
it claims, the task queues `watch_index_claim` for just after the lease would lapse: any worker runs
that check, which waits again while the claim is renewed, does nothing once the build is over, and
builds the paper again when the claim has lapsed (its worker was killed). So a killed worker's paper
is picked up by the others on their own; no operator command is needed.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.utils import timezone
from django_tasks import task

from annotagent.errors import AnnotagentError
from indexing import services
from indexing.notifications import notify_paper_status
from indexing.services import IndexClaim, PaperBusyError
from papers.models import Paper

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
# Exponential backoff: 30 s, 2 min, 8 min, 32 min between the five runs (about 40 minutes in all,
# long enough to ride out a Mongo restart or a model-API incident).
RETRY_BASE_SECONDS = 30
RETRY_FACTOR = 4
# The claim check runs this long after the claim would lapse, so a renewal in flight is not missed.
WATCH_GRACE = timedelta(seconds=2)


def retry_delay(attempt: int) -> timedelta:
    """How long to wait after failed run number *attempt* (1-based) before the next one."""
    return timedelta(seconds=RETRY_BASE_SECONDS * RETRY_FACTOR ** (attempt - 1))


@task()
def index_paper(paper_id: int, attempt: int = 1, rebuild: bool = False) -> None:
    """Index one paper in the worker (see `indexing.services.index_paper`), retrying transient
    failures with backoff. A paper deleted before its turn is skipped, and so is one already
    searchable unless *rebuild* is asked for: queueing a paper twice costs nothing."""
    try:
        if not rebuild and services.is_searchable(Paper.objects.get(pk=paper_id)):
            logger.info("Paper %s is already indexed; nothing to do.", paper_id)
            return
        services.index_paper(paper_id=paper_id, on_claim=_watch)
    except Paper.DoesNotExist:
        logger.info("Paper %s is gone; nothing to index.", paper_id)
    except PaperBusyError as exc:
        # The running build makes the paper searchable (and its watcher covers a crash); a rebuild
        # asked for meanwhile may want newer settings, so it runs once that build is over.
        if rebuild and index_paper.get_backend().supports_defer:
            index_paper.using(run_after=exc.claimed_until + WATCH_GRACE).enqueue(paper_id=paper_id, rebuild=True)
        logger.info("Paper %s is being indexed by another worker.", paper_id)
    except AnnotagentError as exc:
        if services.is_permanent_failure(exc) or attempt >= MAX_ATTEMPTS:
            logger.warning("Indexing paper %s failed for good (run %s): %s", paper_id, attempt, exc.message)
            return
        _schedule_retry(paper_id, attempt, exc.message, rebuild=rebuild)


def _watch(claim: IndexClaim) -> None:
    if index_paper.get_backend().supports_defer:
        watch_index_claim.using(run_after=claim.claimed_until + WATCH_GRACE).enqueue(
            paper_id=claim.paper_id, version=claim.version
        )


@task()
def watch_index_claim(paper_id: int, version: str) -> None:
    """Check on the build of *paper_id* that claimed it for *version*: nothing to do once that build
    is over (the claim is gone or another's); look again at the claim's new end while its worker
    renews it; index the paper again when the claim has lapsed, its worker being gone."""
    paper = Paper.objects.filter(pk=paper_id).only("index_claim", "index_claimed_until").first()
    if paper is None or paper.index_claim != version:
        return
    claimed_until = paper.index_claimed_until or timezone.now()
    if claimed_until > timezone.now():
        watch_index_claim.using(run_after=claimed_until + WATCH_GRACE).enqueue(paper_id=paper_id, version=version)
        return
    logger.warning("Paper %s: the worker indexing it is gone; indexing it again.", paper_id)
    index_paper.call(paper_id=paper_id, rebuild=True)


def _schedule_retry(paper_id: int, attempt: int, reason: str, *, rebuild: bool) -> None:
    delay = retry_delay(attempt)
    backend = index_paper.get_backend()
    if not backend.supports_defer:
        # A backend without run_after (the immediate one) would retry at once, in a loop.
        logger.warning("Indexing paper %s failed (%s); this task backend cannot retry later.", paper_id, reason)
        return
    paper = Paper.objects.filter(pk=paper_id).first()
    if paper is None:
        return
    note = f"{reason} Trying again in {_minutes(delay)} (run {attempt + 1} of {MAX_ATTEMPTS})."
    if paper.index_status == Paper.IndexStatus.FAILED:
        # Queued again: the chip says so, with the reason, rather than a final "failed".
        Paper.objects.filter(pk=paper_id).update(index_status=Paper.IndexStatus.PENDING, index_error=note)
        paper.index_status, paper.index_error = Paper.IndexStatus.PENDING, note
        notify_paper_status(paper)
    index_paper.using(run_after=timezone.now() + delay).enqueue(paper_id=paper_id, attempt=attempt + 1, rebuild=rebuild)
    logger.info("Indexing paper %s failed (%s); run %s at +%s.", paper_id, reason, attempt + 1, delay)


def _minutes(delay: timedelta) -> str:
    seconds = int(delay.total_seconds())
    return f"{seconds} s" if seconds < 120 else f"{seconds // 60} min"
