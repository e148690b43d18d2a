"""The production profile started for real on this machine, for the production-profile test and the
load benchmark (`./run bench --load --profile production`): PostgreSQL, the Redis channel layer, two
Daphne processes, two `db_worker` processes and one MongoDB-wire chunk index (the embedded SecantusDB
server standing in for Atlas) shared by all, with the production settings (DEBUG off; HTTPS settings
turned off only because the clients speak plain HTTP to 127.0.0.1).
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tests.support.live_server import DAPHNE, ROOT, free_port, manage
from tests.support.processes import processes_mentioning, wait_for_none

WAIT_SECONDS = 240  # an upper bound for waits on this shared 2-core machine, never a measurement
STOP_SECONDS = 20  # the grace after SIGTERM, then SIGKILL


def admin_url_for_tests() -> str:
    """The PostgreSQL server tests create their databases on: DATABASE_URL's when it names one, else
    127.0.0.1:5432 as `postgres`."""
    url = os.environ.get("DATABASE_URL", "")
    return url if url.startswith(("postgres://", "postgresql://")) else "postgres://postgres@127.0.0.1:5432/postgres"


def unreachable(admin_url: str, redis_url: str) -> str:
    """Why the profile cannot start here ("" when PostgreSQL at *admin_url* and Redis at
    *redis_url* both answer), e.g. "PostgreSQL is not reachable at 127.0.0.1: ..."."""
    import psycopg
    import redis

    problem = _fails(lambda: psycopg.connect(admin_url, connect_timeout=2).close())
    if problem:
        return f"PostgreSQL is not reachable at {urlsplit(admin_url).hostname}: {problem}"
    problem = _fails(lambda: redis.Redis.from_url(redis_url, socket_connect_timeout=2).ping())
    if problem:
        return f"Redis is not reachable at {redis_url}: {problem}"
    return ""


def _fails(check: Callable[[], object]) -> str:
    """ "" when *check* runs, else why not."""
    try:
        check()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return ""


def with_database(url: str, name: str) -> str:
    """*url* (a PostgreSQL URL) naming database *name* instead of its own."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


@dataclass
class Profile:
    """The running topology: its environment, processes and logs (`<base>/<name>.log`), the Daphne
    ports (web1, web2) and a SQL handle on its database."""

    env: dict[str, str]
    base: Path
    database_url: str
    web_ports: list[int] = field(default_factory=list)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def manage(self, *args: str, timeout: float = 300) -> str:
        """`manage.py *args` in the profile's environment; returns stdout, asserts success."""
        return manage(self.env, *args, timeout=timeout)

    def start(self, name: str, command: list[str]) -> None:
        """Start *command* as process *name*, leading a process group of its own (so stopping it
        stops its children, and a Ctrl-C in the terminal is this process's to handle)."""
        with (self.base / f"{name}.log").open("wb") as out:
            self.processes[name] = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, process_group=0
            )

    def kill(self, name: str) -> None:
        """SIGKILL process *name* (no chance to clean up); it is no longer one of `processes`."""
        process = self.processes.pop(name)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def log(self, name: str) -> str:
        path = self.base / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def logs(self) -> str:
        return "\n".join(f"--- {name} ---\n{self.log(name)[-3000:]}" for name in self.processes)

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.database_url, autocommit=True) as connection:
            return list(connection.execute(query, params).fetchall())

    def wait(self, what: str, condition: Callable[[], bool]) -> None:
        """Poll *condition* until true; AssertionError with the logs when a process exits first or
        WAIT_SECONDS pass."""
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            for name, process in self.processes.items():
                assert process.poll() is None, f"{name} exited:\n{self.logs()}"
            if condition():
                return
            time.sleep(0.3)
        raise AssertionError(f"timed out waiting for {what}:\n{self.logs()}")

    def stop(self) -> None:
        """SIGTERM the process group of each running process, then SIGKILL the groups of those still
        running after STOP_SECONDS (a worker finishes its step of a paper first)."""
        running = [process for process in self.processes.values() if process.poll() is None]
        for process in running:
            _signal_group(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        for process in running:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(process.pid, signal.SIGKILL)
                process.wait(timeout=5)


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass


@contextmanager
def production_profile(
    base: Path, *, admin_url: str, redis_url: str, database: str, **overrides: str
) -> Iterator[Profile]:
    """Start the production profile under *base* and yield it once every process answers.

    Creates PostgreSQL database *database* on the server of *admin_url* (dropping a leftover of that
    name first), flushes the Redis database of *redis_url*, starts the embedded chunk index under
    `<base>/mongo`, runs `migrate` and `ensure_indexes`, then two Daphne processes (`web1`, `web2`)
    and two `db_worker` processes (`worker1`, `worker2`), with DATA_DIR `<base>/data`. *overrides*
    are environment variables for every process (e.g. INDEX_CLAIM_SECONDS).

    On exit, also on an exception, Ctrl-C or SystemExit: stops every process and the chunk index,
    drops the database and flushes the Redis database. Raises AssertionError (with the logs) when a
    step fails or a process does not come up within WAIT_SECONDS.
    """
    import psycopg
    import redis

    from indexing.store import ensure_embedded_server, stop_embedded_server

    mongo_dir = base / "mongo"
    profile = Profile(env={}, base=base, database_url=with_database(admin_url, database))
    try:
        with psycopg.connect(admin_url, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            connection.execute(f'CREATE DATABASE "{database}"')
        redis.Redis.from_url(redis_url).flushdb()
        profile.env = {
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
            "DATABASE_URL": profile.database_url,
            "REDIS_URL": redis_url,
            "MONGODB_URI": ensure_embedded_server(mongo_dir),
            "MONGODB_DB": "annotagent_profile",
            "TASKS_BACKEND": "django_tasks_db.DatabaseBackend",
            "DATA_DIR": str(base / "data"),
            "MEDIA_ROOT": str(base / "media"),
            "EMBEDDING_BACKEND": "local",
            "OPENAI_API_KEY": "",
            "OPENAI_BASE_URL": "",
            "CONTEXTUAL_BLURBS": "heuristic",
            "PYTHONUNBUFFERED": "1",
            **overrides,
        }
        profile.manage("migrate", "--noinput", "-v0")
        profile.manage("ensure_indexes")  # a deployment step, as for Atlas
        for n in (1, 2):
            port = free_port()
            profile.web_ports.append(port)
            profile.start(f"web{n}", [DAPHNE, "-b", "127.0.0.1", "-p", str(port), "annotagent.asgi:application"])
            profile.start(f"worker{n}", [sys.executable, "manage.py", "db_worker", "--worker-id", f"worker{n}"])
        for n, port in enumerate(profile.web_ports, start=1):
            profile.wait(f"web{n}", lambda port=port: _http_ok(f"http://127.0.0.1:{port}/accounts/login/"))
        for n in (1, 2):
            profile.wait(f"worker{n}", lambda n=n: "Starting worker" in profile.log(f"worker{n}"))
        yield profile
    finally:
        profile.stop()
        stop_embedded_server(mongo_dir)
        # It stops on its own after SIGTERM; wait for that, so that its folder can be removed.
        wait_for_none(lambda: processes_mentioning(str(mongo_dir)), STOP_SECONDS)
        with psycopg.connect(admin_url, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        redis.Redis.from_url(redis_url).flushdb()


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False
