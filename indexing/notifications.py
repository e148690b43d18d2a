"""Paper status events on the channel layer, for the live status chips.

Every status change, and the progress of a running index build, is sent to the group `paper.<id>`
as a `PaperStatusEvent`. With `REDIS_URL` set the channel layer is Redis (`channels_redis`), so an
event published by the worker process reaches consumers in the web process. On the in-memory layer
an event reaches only consumers of the same process, so the project consumer also polls the
database (see `chat.consumers`).
"""

from __future__ import annotations

import logging
from typing import TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from papers.models import Paper

logger = logging.getLogger(__name__)


class PaperStatusEvent(TypedDict):
    """`type` is "paper.status"; `status` one of pending, indexing, ready, failed; `error` the
    readable failure reason or ""; `progress` the percentage (0..100) of a running build, else None.
    A ready paper with a progress value is being rebuilt while its old chunks serve questions."""

    type: str
    paper_id: int
    status: str
    error: str
    chunk_count: int
    progress: int | None


def paper_group(paper_id: int) -> str:
    return f"paper.{paper_id}"


def status_event(paper: Paper, *, progress: int | None = None) -> PaperStatusEvent:
    return {
        "type": "paper.status",
        "paper_id": paper.pk,
        "status": paper.index_status,
        "error": paper.index_error,
        "chunk_count": paper.chunk_count,
        "progress": progress,
    }


def notify_paper_status(paper: Paper, *, progress: int | None = None) -> None:
    """Publish *paper*'s current status (and *progress*, percent, during a build) from sync code.

    A channel layer that cannot be reached is logged, never raised: indexing must not fail because
    a browser could not be told.
    """
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(paper_group(paper.pk), dict(status_event(paper, progress=progress)))
    except Exception:
        logger.warning("Could not publish the status of paper %s", paper.pk, exc_info=True)
