"""The production profile, started for real on this machine: PostgreSQL, the Redis channel layer, two
Daphne processes, two `db_worker` processes and one MongoDB-wire chunk index (the embedded SecantusDB
server standing in for Atlas) shared by all, with the production settings (DEBUG off; HTTPS settings
turned off only because the test speaks plain HTTP to 127.0.0.1).

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
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.support.live_server import free_port

ROOT = Path(__file__).resolve().parent.parent
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
# Short, so a killed worker's paper is picked up within seconds (renewed every third of it).
CLAIM_SECONDS = 6
WAIT_SECONDS = 240  # an upper bound for waits on this shared 2-core machine, never a measurement

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


def _answers(check: Callable[[], object]) -> str:
    """ "" when *check* runs, else why not."""
    try:
        check()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return ""


def _admin_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    return url if url.startswith(("postgres://", "postgresql://")) else "postgres://postgres@127.0.0.1:5432/postgres"


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


@dataclass
class Profile:
    """The running topology: its environment, processes and logs, and a SQL handle on its database."""

    env: dict[str, str]
    base: Path
    database_url: str
    web_ports: list[int] = field(default_factory=list)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def manage(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self, name: str, command: list[str]) -> None:
        out = (self.base / f"{name}.log").open("wb")
        self.processes[name] = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT)

    def log(self, name: str) -> str:
        path = self.base / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self) -> str:
        return "\n".join(f"--- {name} ---\n{self.log(name)[-3000:]}" for name in self.processes)

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.database_url, autocommit=True) as connection:
            return list(connection.execute(query, params).fetchall())

    def setup(self, papers: list[tuple[str, list[str]]], project: str = "") -> dict[str, Any]:
        spec = self.base / f"spec-{secrets.token_hex(4)}.json"
        spec.write_text(json.dumps({"papers": papers, "project": project}))
        result = self.manage("shell", "-c", SETUP.format(spec=str(spec)))
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    def wait(self, what: str, condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            for name, process in self.processes.items():
                assert process.poll() is None or name.startswith("killed"), f"{name} exited:\n{self.logs()}"
            if condition():
                return
            time.sleep(0.3)
        raise AssertionError(f"timed out waiting for {what}:\n{self.logs()}")

    def statuses(self, paper_ids: list[int]) -> dict[int, str]:
        rows = self.sql("SELECT id, index_status FROM papers_paper WHERE id = ANY(%s)", paper_ids)
        return dict(rows)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> Iterator[Profile]:
    import psycopg
    import redis

    admin = _admin_url()
    problem = _answers(lambda: psycopg.connect(admin, connect_timeout=2).close())
    if problem:
        pytest.skip(f"PostgreSQL is not reachable at {urlsplit(admin).hostname}: {problem}")
    problem = _answers(lambda: redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping())
    if problem:
        pytest.skip(f"Redis is not reachable at {REDIS_URL}: {problem}")

    from indexing.store import ensure_embedded_server, stop_embedded_server

    base = tmp_path_factory.mktemp("profile")
    name = f"{urlsplit(admin).path.strip('/') or 'annotagent'}_profile"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    redis.Redis.from_url(REDIS_URL).flushdb()
    mongo_dir = base / "mongo"
    env = {
        **os.environ,
        "ENV_FILE": "",
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        # The production defaults, but for plain HTTP on 127.0.0.1 (a TLS proxy does HTTPS in production).
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "SECURE_HSTS_SECONDS": "0",
        "DATABASE_URL": _with_database(admin, name),
        "REDIS_URL": REDIS_URL,
        "MONGODB_URI": ensure_embedded_server(mongo_dir),
        "MONGODB_DB": "annotagent_profile",
        "TASKS_BACKEND": "django_tasks_db.DatabaseBackend",
        "DATA_DIR": str(base / "data"),
        "MEDIA_ROOT": str(base / "media"),
        "EMBEDDING_BACKEND": "local",
        "OPENAI_API_KEY": "",
        "OPENAI_BASE_URL": "",
        "CONTEXTUAL_BLURBS": "heuristic",
        "INDEX_CLAIM_SECONDS": str(CLAIM_SECONDS),
        "PYTHONUNBUFFERED": "1",
    }
    profile = Profile(env=env, base=base, database_url=env["DATABASE_URL"])
    try:
        migrated = profile.manage("migrate", "--noinput", "-v0")
        assert migrated.returncode == 0, migrated.stderr
        indexes = profile.manage("ensure_indexes")  # a deployment step, as for Atlas
        assert indexes.returncode == 0, indexes.stderr
        daphne = str(Path(sys.executable).with_name("daphne"))
        for n in (1, 2):
            port = free_port()
            profile.web_ports.append(port)
            profile.start(f"web{n}", [daphne, "-b", "127.0.0.1", "-p", str(port), "annotagent.asgi:application"])
            profile.start(f"worker{n}", [sys.executable, "manage.py", "db_worker", "--worker-id", f"worker{n}"])
        for n, port in enumerate(profile.web_ports, start=1):
            profile.wait(f"web{n}", lambda port=port: _http_ok(f"http://127.0.0.1:{port}/accounts/login/"))
        for n in (1, 2):
            profile.wait(f"worker{n}", lambda n=n: "Starting worker" in profile.log(f"worker{n}"))
        yield profile
    finally:
        for process in profile.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in profile.processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        stop_embedded_server(mongo_dir)
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def warm(profile) -> dict[str, Any]:
    """Two papers in alice's project "Profile", each queued twice (upload, then project), indexed by
    the two workers at once. Both workers have loaded the embedding model afterwards."""
    made = profile.setup([("Raft one", PAGES * 6), ("Raft two", list(reversed(PAGES)) * 6)], project="Profile")
    profile.wait("both papers ready", lambda: set(profile.statuses(made["papers"]).values()) == {"ready"})
    return made


def test_two_workers_index_at_once_and_never_collide(profile, warm):
    runs = profile.sql(
        "SELECT args_kwargs, worker_ids, status, started_at, finished_at FROM django_tasks_database_dbtaskresult "
        "WHERE task_path = 'indexing.tasks.index_paper'"
    )
    assert len(runs) == 4 and {status for *_, status, _, _ in runs} == {"SUCCESSFUL"}
    assert {worker for _, workers, *_ in runs for worker in workers} == {"worker1", "worker2"}
    papers = profile.sql(
        "SELECT id, index_version, index_claim, chunk_count FROM papers_paper WHERE id = ANY(%s)", warm["papers"]
    )
    versions = {version for _, version, _, _ in papers}
    assert len(versions) == 2 and "" not in versions  # one version per paper, none shared
    assert {claim for _, _, claim, _ in papers} == {""}  # every claim released
    check = profile.manage("check_index")
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"Chunk index OK: 2 paper(s), {sum(count for *_, count in papers)} chunk(s)" in check.stdout


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
    (paper_id,) = profile.setup([("Long paper", long_pages)])["papers"]

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
    process = profile.processes.pop(victim)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    profile.processes[f"killed-{victim}"] = process
    assert profile.statuses([paper_id])[paper_id] == "indexing"  # killed mid-build

    profile.wait("the other worker to index the paper", lambda: profile.statuses([paper_id])[paper_id] == "ready")

    (version, claim, chunk_count) = profile.sql(
        "SELECT index_version, index_claim, chunk_count FROM papers_paper WHERE id = %s", paper_id
    )[0]
    assert version not in ("", killed_version) and claim == ""
    survivor = "worker2" if victim == "worker1" else "worker1"
    # The survivor took the lapsed claim over: through the claim watcher, or through the paper's
    # second queued index task when that ran after the lease ran out (either order happens).
    rebuilt_by = profile.sql(
        "SELECT worker_ids FROM django_tasks_database_dbtaskresult WHERE status = 'SUCCESSFUL' "
        "AND args_kwargs::text ~ %s",
        rf"\m{paper_id}\M",
    )
    # (A task the victim had started and the survivor finished lists both workers, the survivor last.)
    assert any(workers and workers[-1] == survivor for (workers,) in rebuilt_by), (survivor, rebuilt_by)
    check = profile.manage("check_index")  # the killed build's partial chunks are gone too
    assert check.returncode == 0, check.stdout + check.stderr
    assert chunk_count > 0
