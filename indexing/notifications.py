"""Paper status events on the channel layer, for the live status chips.

Every status change is sent to the group `paper.<id>` as `{"type": "paper.status", ...}`. With the
Redis channel layer this crosses processes (worker -> web server); on the in-memory layer it reaches
only consumers in the same process, so the project consumer also polls the database (see
`chat.consumers`).
"""

from __future__ import annotations

import logging
from typing import TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from papers.models import Paper

logger = logging.getLogger(__name__)


class PaperStatusEvent(TypedDict):
    type: str
    paper_id: int
    status: str
    error: str
    chunk_count: int


def paper_group(paper_id: int) -> str:
    return f"paper.{paper_id}"


def status_event(paper: Paper) -> PaperStatusEvent:
    return {
        "type": "paper.status",
        "paper_id": paper.pk,
        "status": paper.index_status,
        "error": paper.index_error,
        "chunk_count": paper.chunk_count,
    }


def notify_paper_status(paper: Paper) -> None:
    """Publish *paper*'s current status. A channel layer that cannot be reached is logged, never
    raised: indexing must not fail because a browser could not be told."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(paper_group(paper.pk), dict(status_event(paper)))
    except Exception:
        logger.warning("Could not publish the status of paper %s", paper.pk, exc_info=True)
