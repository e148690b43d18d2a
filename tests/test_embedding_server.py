"""A running web process lends its loaded local model to `manage.py ask` over a Unix socket."""

import socket
import stat

import numpy as np
import pytest

from indexing import embedding_server
from indexing.embeddings import LocalEmbedder, get_embedder

TEXTS = ["How does Raft elect a leader?", "Any two majorities intersect."]


@pytest.fixture
def sockets(settings, tmp_path):
    settings.EMBEDDING_SOCKET_DIR = tmp_path / "embedders"
    yield settings.EMBEDDING_SOCKET_DIR
    embedding_server.stop_embedding_server()
    embedding_server.use_running_server(False)


@pytest.fixture
def no_own_model(monkeypatch):
    """A new local embedder (no model loaded) that fails if it loads one; this process's own
    embedder (the server's) is loaded first."""
    get_embedder().embed(["warm"])

    def refuse():
        raise AssertionError("the model was loaded")

    embedder = LocalEmbedder()
    monkeypatch.setattr(embedder, "_load", refuse)
    return embedder


def test_a_command_gets_its_embeddings_from_the_running_server(sockets, no_own_model):
    path = embedding_server.start_embedding_server()
    assert path is not None and path.parent == sockets
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # only the server's user may connect
    embedding_server.use_running_server()
    vectors = no_own_model.embed(TEXTS)
    np.testing.assert_allclose(vectors, get_embedder().embed(TEXTS), atol=1e-5)


def test_without_the_opt_in_a_process_loads_its_own_model(sockets, no_own_model):
    embedding_server.start_embedding_server()
    with pytest.raises(AssertionError, match="the model was loaded"):
        no_own_model.embed(TEXTS)


def test_a_dead_servers_socket_is_skipped_and_removed(sockets):
    sockets.mkdir(parents=True)
    stale = sockets / "999999.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
        dead.bind(str(stale))  # the file stays, nobody listens: a killed process's socket
    assert embedding_server.request_embeddings(get_embedder().model_name, TEXTS) is None
    assert not stale.exists()


def test_a_server_of_another_model_is_not_used(sockets):
    embedding_server.start_embedding_server()
    assert embedding_server.request_embeddings("another-model", TEXTS) is None


def test_no_socket_for_a_remote_embedding_backend(sockets, settings):
    settings.EMBEDDING_BACKEND = "openai"
    assert embedding_server.start_embedding_server() is None
