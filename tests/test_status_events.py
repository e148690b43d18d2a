"""Paper status events reach the chips: through the channel layer group `paper.<id>`, across
processes with Redis."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from channels.layers import get_channel_layer
from django.conf import settings as django_settings

from indexing.notifications import paper_group
from tests.support.indexing import new_paper, use_stub_embeddings

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
BASE_DIR = Path(__file__).resolve().parent.parent


def drain(channel: str) -> list[dict]:
    """Every message waiting on *channel* of the current layer."""
    layer = get_channel_layer()

    async def receive_all() -> list[dict]:
        messages = []
        while True:
            try:
                messages.append(await asyncio.wait_for(layer.receive(channel), timeout=0.2))
            except TimeoutError:
                return messages

    return asyncio.run(receive_all())


@pytest.mark.django_db
def test_indexing_publishes_indexing_progress_and_ready_to_the_papers_group(alice, settings, openai_stub, chunk_store):
    use_stub_embeddings(settings, openai_stub)
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    paper = new_paper(alice, ["Raft splits consensus into leader election, log replication and safety."])
    layer = get_channel_layer()
    channel = asyncio.run(layer.new_channel())
    asyncio.run(layer.group_add(paper_group(paper.pk), channel))

    from indexing.services import index_paper

    index_paper(paper_id=paper.pk)

    events = drain(channel)
    assert events[0]["status"] == "indexing" and events[0]["progress"] is None
    progress = [event["progress"] for event in events if event["progress"] is not None]
    assert progress == sorted(progress) and progress[0] == 0 and progress[-1] >= 90
    assert events[-1] == {
        "type": "paper.status",
        "paper_id": paper.pk,
        "status": "ready",
        "error": "",
        "chunk_count": 1,
        "progress": None,
    }


def test_a_status_published_by_another_process_arrives_through_redis(settings):
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}}
    }

    async def subscribe_then_receive() -> dict:
        layer = get_channel_layer()
        channel = await layer.new_channel()
        await layer.group_add(paper_group(424242), channel)
        # The worker's side: a separate Python process publishing from sync code, as index_paper does.
        publisher = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            "import django; django.setup(); "
            "from papers.models import Paper; from indexing.notifications import notify_paper_status; "
            "notify_paper_status(Paper(pk=424242, index_status='failed', index_error='Encrypted.'))",
            cwd=BASE_DIR,
            env={
                **os.environ,
                "DJANGO_SETTINGS_MODULE": "annotagent.settings",
                "DEBUG": "true",
                "REDIS_URL": REDIS_URL,
                "DATA_DIR": str(django_settings.DATA_DIR),
            },
            stdout=subprocess.DEVNULL,
        )
        assert await publisher.wait() == 0
        try:
            return await asyncio.wait_for(layer.receive(channel), timeout=5)
        finally:
            await layer.group_discard(paper_group(424242), channel)

    event = asyncio.run(subscribe_then_receive())

    assert event == {
        "type": "paper.status",
        "paper_id": 424242,
        "status": "failed",
        "error": "Encrypted.",
        "chunk_count": 0,
        "progress": None,
    }
