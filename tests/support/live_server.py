"""A live Annotagent for tests that need real processes: its own DATA_DIR (SQLite file, media),
`migrate`, Daphne as a subprocess, and signed-in users over HTTP (urllib) and WebSocket
(websockets).

The environment is explicit (the embedded default unless overridden), whatever this shell or
`.env` says.
"""

from __future__ import annotations

import http.cookiejar
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

ROOT = Path(__file__).resolve().parent.parent.parent
DAPHNE = str(Path(sys.executable).with_name("daphne"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def embedded_env(data_dir: Path, **overrides: str) -> dict[str, str]:
    """Explicit env for the subprocesses: the embedded default under *data_dir*, whatever this
    shell or .env says, without a chat model unless *overrides* set one."""
    return {
        **os.environ,
        "DEBUG": "true",
        "DATA_DIR": str(data_dir),
        "DATABASE_URL": "",
        "MONGODB_URI": "",
        "EMBEDDED_MONGO_DIR": "",
        "MEDIA_ROOT": "",
        "TASKS_BACKEND": "django_tasks_db.DatabaseBackend",
        "REDIS_URL": "",
        "OPENAI_API_KEY": "",
        "OPENAI_BASE_URL": "",
        "EMBEDDING_BACKEND": "local",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CSRF_TRUSTED_ORIGINS": "",
        "PYTHONUNBUFFERED": "1",
        **overrides,
    }


def manage(env: dict[str, str], *args: str, timeout: float = 300) -> str:
    """Run `manage.py *args` in environment *env*; returns stdout, asserts success (the assertion
    message holds its output)."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM *process*, then SIGKILL after 15 s."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@dataclass
class LiveServer:
    base_url: str
    data_dir: Path
    env: dict[str, str]
    log: Path

    def url(self, path: str) -> str:
        return self.base_url + path

    def ws_url(self, path: str) -> str:
        return self.base_url.replace("http://", "ws://", 1) + path

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else ""

    def manage(self, *args: str, timeout: float = 300) -> str:
        """Run `manage.py *args` against this server's database; returns stdout, asserts success."""
        return manage(self.env, *args, timeout=timeout)

    def shell(self, code: str) -> str:
        """Run Python *code* in `manage.py shell` against this server's database; returns the last
        line it printed."""
        return manage(self.env, "shell", "-c", code).strip().splitlines()[-1]

    def spawn(self, code: str, log: Path) -> subprocess.Popen[bytes]:
        """Start `manage.py shell -c code` in the background (a second process on the database)."""
        with log.open("wb") as out:
            return subprocess.Popen(
                [sys.executable, "manage.py", "shell", "-c", code],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )


def start_daphne(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    """Daphne serving Annotagent on 127.0.0.1:*port* in environment *env*, its output in *log*;
    wait for it with `wait_for_http`, end it with `stop`."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [DAPHNE, "-b", "127.0.0.1", "-p", str(port), "annotagent.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


@contextmanager
def live_server(base: Path, **overrides: str) -> Iterator[LiveServer]:
    """Migrate a fresh database under *base* and serve it with Daphne; *overrides* are environment
    variables (e.g. REDIS_URL). Stops the server on exit."""
    data_dir = base / "data"
    port = free_port()
    env = embedded_env(data_dir, **overrides)
    server = LiveServer(base_url=f"http://127.0.0.1:{port}", data_dir=data_dir, env=env, log=base / "daphne.log")
    server.manage("migrate", "--noinput", "-v0")
    process = start_daphne(env, port, server.log)
    try:
        wait_for_http(server, process, timeout=60)
        yield server
    finally:
        stop(process)


class _Served(Protocol):
    def url(self, path: str) -> str: ...

    def log_tail(self, lines: int = 40) -> str: ...


def wait_for_http(server: _Served, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """Wait until *server* answers its login page; AssertionError with its log when *process* exits
    first or *timeout* seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"daphne exited early:\n{server.log_tail()}"
        try:
            with urllib.request.urlopen(server.url("/accounts/login/"), timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"daphne did not answer within {timeout} s:\n{server.log_tail()}")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class SignedIn:
    """A user signed in through the login form, with their own cookies (like one browser)."""

    def __init__(self, server: LiveServer, username: str, password: str) -> None:
        self.server = server
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect)
        self.get("/accounts/login/")
        status, _ = self.post("/accounts/login/", {"username": username, "password": password})
        assert status == 302 and self.cookie("sessionid"), f"sign-in as {username} failed ({status})"

    def cookie(self, name: str) -> str:
        return next((c.value or "" for c in self.cookies if c.name == name), "")

    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.cookies)

    def get(self, path: str) -> tuple[int, bytes]:
        return self._open(urllib.request.Request(self.server.url(path)))

    def post(self, path: str, fields: dict[str, str]) -> tuple[int, bytes]:
        body = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": self.cookie("csrftoken")}).encode()
        return self._open(urllib.request.Request(self.server.url(path), data=body, method="POST"))

    def upload(self, path: str, filename: str, data: bytes) -> tuple[int, bytes]:
        """POST *data* as the multipart file field `file` (the upload forms), with the CSRF token."""
        boundary = uuid.uuid4().hex
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n'
                f"{self.cookie('csrftoken')}\r\n"
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
                "Content-Type: application/pdf\r\n\r\n"
            ).encode()
            + data
            + f"\r\n--{boundary}--\r\n".encode()
        )
        request = urllib.request.Request(self.server.url(path), data=body, method="POST")
        request.add_header("Content-Type", f"multipart/form-data; boundary={boundary}")
        return self._open(request)

    def _open(self, request: urllib.request.Request) -> tuple[int, bytes]:
        try:
            with self.opener.open(request, timeout=120) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()
