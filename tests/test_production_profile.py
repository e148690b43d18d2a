"""The production profile, started for real on this machine (tests/support/production.py, which the
load benchmark starts too): PostgreSQL, the Redis channel layer, two Daphne processes, two `db_worker`
processes and one MongoDB-wire chunk index (the embedded SecantusDB server standing in for Atlas)
shared by all, with the production settings (DEBUG off; HTTPS settings turned off only because the
test speaks plain HTTP to 127.0.0.1).

It shows that a status change made by a worker reaches a browser-like WebSocket held on the other
web process; that two workers indexing at once (different papers, and the same paper queued twice)
never collide; and that a killed worker's paper is picked up again by the other worker on its own.

Skipped, with the reason, when PostgreSQL (DATABASE_URL's server, else 127.0.0.1:5432) or Redis
(TEST_REDIS_URL) does not answer.
"""

from __future__ import annotations

import json
import os
import secrets
import urllib.request
from collections import Counter
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.production import WAIT_SECONDS, Profile, admin_url_for_tests, production_profile, unreachable

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
# Short, so a killed worker's paper is picked up within seconds (renewed every third of it).
CLAIM_SECONDS = 6

# A project paper's pages; the long paper repeats them so its build runs for seconds.
PAGES = [
    "Raft elects a single leader for each term. A follower that hears no heartbeat before its election "
    "timeout becomes a candidate and requests votes; a candidate with votes from a majority leads.",
    "The leader appends client commands to its log and replicates the entries to the followers. An "
    "entry is committed once a majority of servers have stored it.",
]

SETUP = """
import json
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore
from papers.services import add_paper_to_library
from projects.services import add_papers_to_project, create_project
from tests.support.pdfs import make_pdf_bytes

spec = json.loads(open({spec!r}).read())
User = get_user_model()
user = User.objects.filter(username="alice").first() or User.objects.create_user("alice", "a@example.org", "pw-alice-1")
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
papers = [
    add_paper_to_library(user=user, data=make_pdf_bytes(pages, title=title), filename=title + ".pdf").paper
    for title, pages in spec["papers"]
]
project_id = None
if spec["project"]:
    project = create_project(owner=user, name=spec["project"])
    add_papers_to_project(project=project, papers=papers, user=user)  # queues each paper a second time
    project_id = project.pk
print(json.dumps({{"session": session.session_key, "project": project_id, "papers": [p.pk for p in papers]}}))
"""


def setup(profile: Profile, papers: list[tuple[str, list[str]]], project: str = "") -> dict[str, Any]:
    """alice's session, and *papers* (title, pages) generated and added to her library (and to a new
    project named *project*): `{"session", "project", "papers": [id, ...]}`."""
    spec = profile.base / f"spec-{secrets.token_hex(4)}.json"
    spec.write_text(json.dumps({"papers": papers, "project": project}))
    return json.loads(profile.manage("shell", "-c", SETUP.format(spec=str(spec))).strip().splitlines()[-1])


def statuses(profile: Profile, paper_ids: list[int]) -> dict[int, str]:
    rows = profile.sql("SELECT id, index_status FROM papers_paper WHERE id = ANY(%s)", paper_ids)
    return dict(rows)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> Iterator[Profile]:
    admin = admin_url_for_tests()
    problem = unreachable(admin, REDIS_URL)
    if problem:
        pytest.skip(problem)
    name = f"{urlsplit(admin).path.strip('/') or 'annotagent'}_profile"
    with production_profile(
        tmp_path_factory.mktemp("profile"),
        admin_url=admin,
        redis_url=REDIS_URL,
        database=name,
        INDEX_CLAIM_SECONDS=str(CLAIM_SECONDS),
    ) as started:
        yield started


@pytest.fixture(scope="module")
def warm(profile) -> dict[str, Any]:
    """Two papers in alice's project "Profile", each queued twice (upload, then project), indexed by
    the two workers at once, every index task run. Both workers have loaded the embedding model
    afterwards."""
    made = setup(profile, [("Raft one", PAGES * 6), ("Raft two", list(reversed(PAGES)) * 6)], project="Profile")

    def settled() -> bool:
        # A paper is ready after its first task; its second may still wait for a worker's next poll.
        (queued,) = profile.sql(
            "SELECT count(*) FROM django_tasks_database_dbtaskresult "
            "WHERE task_path = 'indexing.tasks.index_paper' AND status IN ('READY', 'RUNNING')"
        )[0]
        return queued == 0 and set(statuses(profile, made["papers"]).values()) == {"ready"}

    profile.wait("both papers ready and every index task run", settled)
    return made


def test_two_workers_index_at_once_and_never_collide(profile, warm):
    runs = profile.sql(
        "SELECT args_kwargs, worker_ids, status, started_at, finished_at FROM django_tasks_database_dbtaskresult "
        "WHERE task_path = 'indexing.tasks.index_paper'"
    )
    # Each paper is queued by its upload, and again by its project unless it was ready by then (a
    # loaded machine decides which): one task or two per paper, every one of them successful.
    per_paper = Counter(args["kwargs"]["paper_id"] for args, *_ in runs)
    assert set(per_paper) == set(warm["papers"]) and set(per_paper.values()) <= {1, 2}, runs
    assert {status for *_, status, _, _ in runs} == {"SUCCESSFUL"}
    assert {worker for _, workers, *_ in runs for worker in workers} == {"worker1", "worker2"}
    papers = profile.sql(
        "SELECT id, index_version, index_claim, chunk_count FROM papers_paper WHERE id = ANY(%s)", warm["papers"]
    )
    versions = {version for _, version, _, _ in papers}
    assert len(versions) == 2 and "" not in versions  # one version per paper, none shared
    assert {claim for _, _, claim, _ in papers} == {""}  # every claim released
    check = profile.manage("check_index")
    assert f"Chunk index OK: 2 paper(s), {sum(count for *_, count in papers)} chunk(s)" in check


def test_a_workers_status_change_reaches_a_socket_held_by_the_other_web_process(profile, warm):
    from websockets.sync.client import connect

    paper_id = warm["papers"][0]
    token = secrets.token_hex(16)  # a CSRF secret of our own: the cookie and the header must agree
    cookies = f"sessionid={warm['session']}; csrftoken={token}"
    web1, web2 = (f"127.0.0.1:{port}" for port in profile.web_ports)
    with connect(
        f"ws://{web2}/ws/projects/{warm['project']}/chat/",
        additional_headers={"Cookie": cookies, "Origin": f"http://{web2}"},
        open_timeout=30,
    ) as browser:
        request = urllib.request.Request(
            f"http://{web1}/projects/{warm['project']}/papers/{paper_id}/reprocess/",
            data=b"",
            headers={"Cookie": cookies, "X-CSRFToken": token},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as response:  # on web1; follows the redirect
            assert response.status == 200
        events = []
        while not (events and events[-1]["progress"] is None and events[-1]["status"] == "ready"):
            event = json.loads(browser.recv(timeout=WAIT_SECONDS))
            if event["type"] == "paper.status" and event["paper_id"] == paper_id:
                events.append(event)
    # Progress is published by the worker only; the paper stays ready on its old chunks meanwhile.
    assert any(event["progress"] is not None for event in events)
    assert {event["status"] for event in events} == {"ready"}
    assert events[-1]["chunk_count"] > 0


def test_a_killed_workers_paper_is_picked_up_by_the_other_worker(profile, warm):
    long_pages = [f"Section {n}. " + " ".join(PAGES) for n in range(120)]
    (paper_id,) = setup(profile, [("Long paper", long_pages)])["papers"]

    def running() -> list[tuple[Any, ...]]:
        return profile.sql(
            "SELECT worker_ids->>-1 FROM django_tasks_database_dbtaskresult WHERE status = 'RUNNING' "
            "AND (args_kwargs->'kwargs'->>'paper_id')::int = %s",
            paper_id,
        )

    def claimed() -> bool:
        building = profile.sql("SELECT index_claim FROM papers_paper WHERE id = %s", paper_id)[0][0]
        return bool(running() and building)

    profile.wait("a worker to claim the long paper", claimed)
    (victim,) = running()[0]
    (killed_version,) = profile.sql("SELECT index_claim FROM papers_paper WHERE id = %s", paper_id)[0]
    profile.kill(victim)
    assert statuses(profile, [paper_id])[paper_id] == "indexing"  # killed mid-build

    profile.wait("the other worker to index the paper", lambda: statuses(profile, [paper_id])[paper_id] == "ready")

    (version, claim, chunk_count) = profile.sql(
        "SELECT index_version, index_claim, chunk_count FROM papers_paper WHERE id = %s", paper_id
    )[0]
    assert version not in ("", killed_version) and claim == ""
    survivor = "worker2" if victim == "worker1" else "worker1"

    # The survivor took the lapsed claim over: through the claim watcher, or through the paper's
    # second queued index task when that ran after the lease ran out (either order happens).
    def rebuilt_by() -> list[tuple[Any, ...]]:
        return profile.sql(
            "SELECT worker_ids FROM django_tasks_database_dbtaskresult WHERE status = 'SUCCESSFUL' "
            "AND args_kwargs::text ~ %s",
            rf"\m{paper_id}\M",
        )

    # (A task the victim had started and the survivor finished lists both workers, the survivor last.)
    # The task is marked successful just after the paper it built is saved ready: wait for it.
    profile.wait(
        "the survivor's task to be marked successful",
        lambda: any(workers and workers[-1] == survivor for (workers,) in rebuilt_by()),
    )
    profile.manage("check_index")  # asserts success: the killed build's partial chunks are gone too
    assert chunk_count > 0
