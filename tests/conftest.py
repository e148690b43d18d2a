"""Shared fixtures: personas, generated PDFs, the embedded chunk index, the OpenAI-compatible stub.

The environment is set before Django loads its settings: tests never touch the developer's `.data`
folder, and tasks run in-process only where a test asks for it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

_TEST_DATA = Path(tempfile.mkdtemp(prefix="annotagent-tests-"))
os.environ.setdefault("DEBUG", "true")
os.environ["DATA_DIR"] = str(_TEST_DATA)
os.environ.setdefault("OPENAI_API_KEY", "")
os.environ.setdefault("REDIS_URL", "")
os.environ.setdefault("TASKS_BACKEND", "django_tasks.backends.dummy.DummyBackend")

import pytest  # noqa: E402
from django.conf import settings  # noqa: E402
from django.test import Client  # noqa: E402

from tests.support.openai_stub import OpenAIStub  # noqa: E402
from tests.support.pdfs import make_pdf_bytes  # noqa: E402

PAPERS_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "papers"


# --- personas -------------------------------------------------------------------------------------


@pytest.fixture
def alice(django_user_model):
    """Owns the project under test."""
    return django_user_model.objects.create_user("alice", "alice@example.org", "alice-password-1")


@pytest.fixture
def bob(django_user_model):
    """A second researcher with a library of his own."""
    return django_user_model.objects.create_user("bob", "bob@example.org", "bob-password-1")


@pytest.fixture
def mallory(django_user_model):
    """An outsider: must get a 404 for everything of alice's."""
    return django_user_model.objects.create_user("mallory", "mallory@example.org", "mallory-password-1")


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_superuser("staff", "staff@example.org", "staff-password-1")


@pytest.fixture
def client_for():
    """`client_for(user)`: a Django test client signed in as *user*."""

    def make(user) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return make


# --- files ----------------------------------------------------------------------------------------


@pytest.fixture
def make_pdf():
    """`make_pdf(["page 1 text", "page 2 text"], **options) -> bytes` (see tests.support.pdfs)."""
    return make_pdf_bytes


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def shared_paper(relative: str) -> Path:
    """A real paper from ../shared/papers; the test is skipped where the corpus is absent."""
    path = PAPERS_DIR / relative
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    return path


# --- the chunk index ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def _embedded_mongo_uri(tmp_path_factory):
    from indexing.store import ensure_embedded_server, stop_embedded_server

    data_dir = tmp_path_factory.mktemp("mongo")
    uri = ensure_embedded_server(data_dir)
    yield uri
    stop_embedded_server(data_dir)


@pytest.fixture
def chunk_store(_embedded_mongo_uri, settings):
    """A real MongoDB-wire server (embedded SecantusDB, one per test session) with an empty
    `paperchunks` collection for this test. Yields the collection."""
    from indexing import retrieval, store

    settings.MONGODB_URI = _embedded_mongo_uri
    settings.MONGODB_DB = "annotagent_test"
    store.reset_client()
    retrieval.matrix_cache.clear()
    collection = store.get_collection()
    collection.drop()
    store.ensure_indexes()
    yield collection
    collection.drop()
    store.reset_client()
    retrieval.matrix_cache.clear()


# --- the paid network service, faked --------------------------------------------------------------


@pytest.fixture
def openai_stub(settings):
    """A local OpenAI-compatible HTTP server; settings point the SDK at it. See OpenAIStub."""
    with OpenAIStub() as stub:
        settings.OPENAI_API_KEY = "test-key"
        settings.OPENAI_BASE_URL = stub.base_url
        settings.OPENAI_CHAT_MODEL = "stub-chat"
        settings.CONTEXTUAL_BLURBS = "heuristic"
        yield stub


@pytest.fixture(autouse=True)
def _isolated_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def _no_chat_model_by_default(settings):
    settings.OPENAI_API_KEY = ""


__all__ = ["PAPERS_DIR", "settings", "shared_paper"]


@pytest.fixture
def add_paper(make_pdf):
    """`add_paper(user, title="...", authors="...", year=2020)`: a new paper in *user*'s library,
    with the metadata indexing would have found (indexing itself is not run)."""
    from papers.services import add_paper_to_library

    def make(user, title: str = "A Test Paper", **metadata):
        added = add_paper_to_library(user=user, data=make_pdf(f"{title}. Some text on page one."), filename="t.pdf")
        paper = added.paper
        paper.title = title
        for field, value in metadata.items():
            setattr(paper, field, value)
        paper.save()
        return paper

    return make
