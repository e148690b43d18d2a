"""The Redis channel layer as production runs it (`REDIS_URL`): idle sockets stay open, and many
sockets at once wait for a pooled connection instead of failing.

Uses the Redis at TEST_REDIS_URL; skipped when none answers there.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest
from django.utils.module_loading import import_string

from annotagent.settings import redis_channel_layer
from tests.support.live_server import SignedIn, live_server

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
IDLE_SECONDS = 60


@pytest.fixture
def redis_url() -> str:
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    return REDIS_URL


def layer_on(url: str):
    config = redis_channel_layer(url)
    return import_string(config["BACKEND"])(**config["CONFIG"])


def test_two_hundred_sockets_joining_groups_at_once_wait_for_the_bounded_pool(redis_url):
    layer = layer_on(redis_url)

    async def join(n: int) -> str:
        channel = await layer.new_channel()
        await layer.group_add(f"paper.{n}", channel)
        return channel

    async def run() -> list[int]:
        try:
            # What 200 sockets connecting together do: each joins its papers' groups at once.
            channels = await asyncio.gather(*(join(n) for n in range(200)))
            heard = []
            # Sent in rounds of 50: one process's channels share one Redis list of capacity 100.
            for start in range(0, 200, 50):
                rounds = range(start, start + 50)
                await asyncio.gather(*(layer.group_send(f"paper.{n}", {"type": "x", "paper_id": n}) for n in rounds))
                messages = await asyncio.gather(*(layer.receive(channels[n]) for n in rounds))
                heard += [message["paper_id"] for message in messages]
            return heard
        finally:
            await layer.flush()

    assert asyncio.run(asyncio.wait_for(run(), 60)) == list(range(200))


@pytest.mark.slow
def test_an_idle_project_socket_stays_open_for_a_minute_on_redis_and_still_answers(redis_url, tmp_path):
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with live_server(tmp_path, REDIS_URL=redis_url) as server:
        ids = json.loads(
            server.shell(
                "import json\n"
                "from django.contrib.auth.models import User\n"
                "from papers.models import Paper, UserPaper\n"
                "from projects.models import Project, ProjectPaper\n"
                "alice = User.objects.create_user('alice', password='alice-password-1')\n"
                "from projects.services import create_project\n"
                "project = create_project(owner=alice, name='Consensus')\n"
                "paper = Paper.objects.create(sha256='0' * 64, file='papers/00/none.pdf')\n"
                "UserPaper.objects.create(user=alice, paper=paper)\n"
                "ProjectPaper.objects.create(project=project, paper=paper)\n"
                "print(json.dumps({'project': project.pk, 'paper': paper.pk}))\n"
            )
        )
        alice = SignedIn(server, "alice", "alice-password-1")
        with connect(
            server.ws_url(f"/ws/projects/{ids['project']}/chat/"),
            additional_headers={"Cookie": alice.cookie_header(), "Origin": server.base_url},
            open_timeout=30,
        ) as socket:
            assert json.loads(socket.recv(timeout=30))["type"] == "history"
            idle_until = time.monotonic() + IDLE_SECONDS
            while (left := idle_until - time.monotonic()) > 0:
                try:
                    frame = socket.recv(timeout=left)
                except TimeoutError:
                    break
                except ConnectionClosed as closed:
                    pytest.fail(f"the server closed the idle socket ({closed}):\n{server.log_tail()}")
                assert json.loads(frame)["type"] == "paper.status"  # nothing else may arrive unasked

            # The server's receive loop on Redis still delivers group messages ...
            async def publish() -> None:
                layer = layer_on(redis_url)
                await layer.group_send(
                    f"paper.{ids['paper']}",
                    {
                        "type": "paper.status",
                        "paper_id": ids["paper"],
                        "status": "ready",
                        "error": "",
                        "chunk_count": 3,
                    },
                )
                await layer.flush()

            asyncio.run(publish())
            event = json.loads(socket.recv(timeout=30))
            assert (event["type"], event["paper_id"], event["status"]) == ("paper.status", ids["paper"], "ready")
            # ... and the consumer still answers frames.
            socket.send(json.dumps({"type": "ping"}))
            reply = json.loads(socket.recv(timeout=30))
            assert (reply["type"], reply["code"]) == ("error", "malformed_frame")
