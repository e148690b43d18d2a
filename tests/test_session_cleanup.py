"""A test session stopped by SIGTERM (`./run test` stopped, a CI job cancelled) leaves no chunk-index
server behind (the server the session started runs detached, and only the session's teardown stops
it) and no temporary data folder."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

WAITING_TEST = """
import os
import time
from urllib.parse import urlsplit

import pytest


@pytest.mark.django_db
def test_waits(chunk_store, _embedded_mongo_uri):
    print("DATA_DIR", os.environ["DATA_DIR"], flush=True)
    print("PORT", urlsplit(_embedded_mongo_uri).port, flush=True)
    time.sleep(300)
"""


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_a_session_stopped_by_sigterm_stops_its_chunk_index_server_and_removes_its_data_folder(tmp_path):
    (tmp_path / "test_waiting.py").write_text(WAITING_TEST)
    command = [sys.executable, "-m", "pytest", "-c", str(BASE_DIR / "pyproject.toml"), "--rootdir", str(BASE_DIR)]
    command += ["-p", "tests.conftest", "-p", "no:cacheprovider", "-s", "-q", str(tmp_path / "test_waiting.py")]
    # A database of its own: this session's test database is in use.
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    process = subprocess.Popen(
        command, cwd=BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    port = None
    data_dir = None
    said: list[str] = []
    # A thread reads the child's output: a line may wait in the pipe's buffer, unseen by select().
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    try:
        deadline = time.monotonic() + 120
        while port is None and process.poll() is None and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=5)
            except queue.Empty:
                continue  # the child is still starting (Django, the chunk-index server)
            said.append(line)
            if line.startswith("DATA_DIR "):
                data_dir = Path(line.split(maxsplit=1)[1].strip())
            if line.startswith("PORT "):
                port = int(line.split()[1])
        assert port is not None and _accepts(port), "the session did not start its chunk-index server:\n" + "".join(
            said[-40:]
        )
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:  # a failure above: end the session as gently as it allows
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    for _ in range(20):
        if not _accepts(port):
            break
        time.sleep(0.5)
    assert not _accepts(port)
    assert data_dir is not None and not data_dir.exists(), "the session left its temporary data folder"
