"""`./run`: the demo on a fresh clone (no ../shared, no .env), served with DEBUG off, and stopped
cleanly: a busy port or SIGTERM leaves no process behind.

Each test runs the script in a copy of the repository (tracked and new files, as a clone would have
them) whose `.venv` links to this one's, in a new session so that every process it starts can be
found afterwards by its session id.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.live_server import free_port
from tests.support.processes import wait_for_no_processes

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
SCRIPT_TIMEOUT = 240

pytestmark = pytest.mark.skipif(not (VENV / "bin" / "daphne").exists(), reason="needs the project's .venv")


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A copy of the repository with no ../shared beside it and no .env."""
    target = tmp_path_factory.mktemp("fresh") / "annotagent"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if name == ".venv" or not source.is_file():
            continue
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / name)
    (target / ".venv").symlink_to(VENV.resolve())
    yield target
    subprocess.run(
        [str(target / ".venv/bin/python"), "manage.py", "chunk_index_server", "stop"],
        cwd=target,
        env=clean_env(SECRET_KEY="x"),
        capture_output=True,
    )


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: none of the test run's settings."""
    keep = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "TMPDIR") if name in os.environ}
    return {**keep, **extra}


def start_serving(clone: Path, port: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["./run", "serve"],
        cwd=clone,
        env=clean_env(PORT=str(port)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def wait_until_serving(base: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + SCRIPT_TIMEOUT
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        try:
            if get(f"{base}/accounts/login/")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError("the server did not answer")


def test_run_without_a_command_prints_only_the_usage_comment():
    result = subprocess.run([str(ROOT / "run")], env=clean_env(), capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    script = (ROOT / "run").read_text().splitlines()
    usage = list(itertools.takewhile(lambda line: line.startswith("#"), script[1:]))
    assert result.stdout.splitlines() == usage
    assert "./run demo" in result.stdout and "./run eval" in result.stdout


def test_the_demo_on_a_fresh_clone_indexes_the_shipped_sample(clone):
    assert not (clone.parent.parent / "shared").exists()
    env = clean_env(SECRET_KEY="test-only")
    python = str(clone / ".venv/bin/python")
    subprocess.run([python, "manage.py", "migrate", "-v0"], cwd=clone, env=env, check=True, timeout=SCRIPT_TIMEOUT)
    built = subprocess.run(
        [python, "manage.py", "demo"], cwd=clone, env=env, capture_output=True, text=True, timeout=SCRIPT_TIMEOUT * 2
    )
    assert built.returncode == 0, built.stderr
    assert "Demo: sample_papers" in built.stdout
    with sqlite3.connect(clone / ".data" / "db.sqlite3") as db:
        rows = db.execute(
            "SELECT p.index_status FROM papers_paper p JOIN projects_projectpaper pp ON pp.paper_id = p.id "
            "JOIN projects_project j ON j.id = pp.project_id WHERE j.name = 'Demo: sample_papers'"
        ).fetchall()
    assert rows == [("ready",)]


def test_a_busy_port_stops_the_demo_and_leaves_no_process(clone):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        process = start_serving(clone, busy.getsockname()[1])
        output, _ = process.communicate(timeout=SCRIPT_TIMEOUT)
    assert process.returncode != 0
    assert "Starting worker" in output  # the worker had started before the server failed
    assert "is in use" in output
    assert wait_for_no_processes(process.pid) == []


def test_the_demo_serves_with_debug_off_and_sigterm_stops_everything(clone):
    port = free_port()
    process = start_serving(clone, port)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base, process)
        dotenv = (clone / ".env").read_text()
        assert re.search(r"^DEBUG=false$", dotenv, re.M)
        assert re.search(r"^SECRET_KEY=\S{40,}$", dotenv, re.M)
        for key in ("SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"):
            assert re.search(rf"^{key}=false$", dotenv, re.M)
        status, page = get(f"{base}/no-such-page/")
        assert status == 404
        assert "URLconf" not in page and "api/schema" not in page
        assert get(f"{base}/static/chat/chat.js")[0] == 200
        status, docs = get(f"{base}/api/docs/")
        assert status == 200
        for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', docs):
            assert get(f"{base}{asset}")[0] == 200, asset
    finally:
        os.kill(process.pid, signal.SIGTERM)
        process.communicate(timeout=SCRIPT_TIMEOUT)
    assert wait_for_no_processes(process.pid) == []
