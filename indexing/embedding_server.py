"""A running web server lends its loaded local model to short-lived commands over a Unix socket.

Importing torch and loading the local model is most of a new process's time (`manage.py ask`:
about 7 s of 10). Each web process (`annotagent.asgi`) listens on `<EMBEDDING_SOCKET_DIR>/<pid>.sock`
(`start_embedding_server`); a command that calls `use_running_server()` first (`manage.py ask`) gets
its embeddings from whichever socket answers (`request_embeddings`) and loads the model itself only
when none does. The socket's file mode is 0600: only the server's user may connect.

Protocol, one request per connection: the client sends one JSON line `{"model": name, "texts":
[...]}`; the server answers one JSON line, `{"rows": n, "dimension": d}` followed by the n x d
float32 little-endian vector bytes, or `{"error": reason}`.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import socket
import socketserver
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from django.conf import settings

logger = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 8 * 1024 * 1024
MAX_TEXTS = 2048
# A server loads its model on its first request (seconds); later requests take milliseconds.
REPLY_TIMEOUT_SECONDS = 120.0
CONNECT_TIMEOUT_SECONDS = 1.0

_server: socketserver.ThreadingUnixStreamServer | None = None
_use_running_server = False


def use_running_server(enabled: bool = True) -> None:
    """Let this process's local embedder ask a running web server before loading its own model."""
    global _use_running_server
    _use_running_server = enabled


def prefers_running_server() -> bool:
    return _use_running_server


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        from indexing.embeddings import get_embedder

        try:
            request = json.loads(self.rfile.readline(MAX_REQUEST_BYTES))
            texts = request["texts"]
            embedder = get_embedder()
            if request.get("model") != embedder.model_name:
                raise ValueError(f"this server embeds with {embedder.model_name}")
            if not isinstance(texts, list) or len(texts) > MAX_TEXTS or not all(isinstance(t, str) for t in texts):
                raise ValueError(f"texts must be a list of at most {MAX_TEXTS} strings")
            vectors = np.ascontiguousarray(embedder.embed(texts), dtype="<f4")
        except Exception as exc:  # the client falls back to its own model; the server goes on
            logger.warning("An embedding request failed: %s", exc)
            self.wfile.write(json.dumps({"error": str(exc)}).encode() + b"\n")
            return
        rows, dimension = vectors.shape
        self.wfile.write(json.dumps({"rows": rows, "dimension": dimension}).encode() + b"\n" + vectors.tobytes())


def socket_dir() -> Path:
    return Path(settings.EMBEDDING_SOCKET_DIR)


def start_embedding_server() -> Path | None:
    """Serve this process's local model on `<EMBEDDING_SOCKET_DIR>/<pid>.sock` from a daemon thread
    (once per process). Returns the socket's path; None when there is nothing to lend (another
    embedding backend) or the socket cannot be made (logged)."""
    global _server
    if settings.EMBEDDING_BACKEND != "local":
        return None
    path = socket_dir() / f"{os.getpid()}.sock"
    if _server is not None:
        if Path(str(_server.server_address)) == path:
            return path
        stop_embedding_server()  # EMBEDDING_SOCKET_DIR changed since (tests): serve at the new place
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)  # a dead process of the same pid
        old_umask = os.umask(0o177)
        try:
            server = socketserver.ThreadingUnixStreamServer(str(path), _Handler)
        finally:
            os.umask(old_umask)
    except OSError:
        logger.warning("Could not serve embeddings on %s", path, exc_info=True)
        return None
    server.daemon_threads = True
    _server = server
    atexit.register(path.unlink, missing_ok=True)
    threading.Thread(target=server.serve_forever, name="embedding-server", daemon=True).start()
    return path


def stop_embedding_server() -> None:
    """Stop serving and remove the socket (tests; a process that exits leaves a stale file, which
    clients remove)."""
    global _server
    if _server is None:
        return
    _server.shutdown()
    _server.server_close()
    Path(str(_server.server_address)).unlink(missing_ok=True)
    _server = None


def request_embeddings(model_name: str, texts: Sequence[str]) -> np.ndarray | None:
    """*texts* embedded by a running server's *model_name* model: shape (len(texts), dimension),
    float32; None when no server answers (socket files of dead processes are removed)."""
    directory = socket_dir()
    if not directory.is_dir():
        return None
    candidates = sorted(
        directory.glob("*.sock"),
        key=lambda path: path.stat().st_mtime if path.exists() else 0,
        reverse=True,
    )
    for path in candidates:
        try:
            return _ask(path, model_name, texts)
        except (ConnectionRefusedError, FileNotFoundError):
            path.unlink(missing_ok=True)  # its process is gone
        except (OSError, ValueError) as exc:
            logger.info("The embedding server at %s did not answer: %s", path, exc)
    return None


def _ask(path: Path, model_name: str, texts: Sequence[str]) -> np.ndarray:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(CONNECT_TIMEOUT_SECONDS)
        conn.connect(str(path))
        conn.settimeout(REPLY_TIMEOUT_SECONDS)
        conn.sendall(json.dumps({"model": model_name, "texts": list(texts)}).encode() + b"\n")
        reply = conn.makefile("rb")
        header = json.loads(reply.readline(64 * 1024) or b"{}")
        if "rows" not in header:
            raise ValueError(header.get("error", "no reply"))
        rows, dimension = int(header["rows"]), int(header["dimension"])
        data = reply.read(rows * dimension * 4)
    if rows != len(texts) or len(data) != rows * dimension * 4:
        raise ValueError("a short reply")
    return np.frombuffer(data, dtype="<f4").reshape(rows, dimension).astype(np.float32)
