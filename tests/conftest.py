"""Shared fixtures: personas, generated PDFs, the embedded chunk index, the OpenAI-compatible stub.

The environment itself is set by the `tests.environment` plugin, before Django loads.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from tests.support.openai_stub import OpenAIStub
from tests.support.pdfs import make_pdf_bytes

# The real papers the tests read in place: PAPERS_DIR, else ../shared/papers next to the repository.
PAPERS_DIR = Path(os.environ.get("PAPERS_DIR") or Path(__file__).resolve().parent.parent.parent / "shared" / "papers")


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
def carol(django_user_model):
    """A third researcher: a reader in alice's shared project (see `team_project`)."""
    return django_user_model.objects.create_user("carol", "carol@example.org", "carol-password-1")


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


SAMPLE_PAPERS = Path(__file__).resolve().parent.parent / "sample_papers"


def shared_paper(relative: str) -> Path:
    """A real paper from ../shared/papers, or the copy `sample_papers/` ships of an openly licensed
    one (S2ORC, CC BY); the test is skipped where neither is on this machine."""
    path = PAPERS_DIR / relative
    shipped = SAMPLE_PAPERS / Path(relative).name
    if not path.exists() and shipped.exists():
        return shipped
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    return path


def shared_case(name: str) -> Path:
    """A small fault PDF from ../shared/cases (beside PAPERS_DIR); skipped where it is absent."""
    path = PAPERS_DIR.parent / "cases" / name
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    return path


# --- the chunk index ------------------------------------------------------------------------------


def pytest_configure(config):
    """SIGTERM (`./run test` stopped, a CI job cancelled) ends the session as Ctrl-C does, so that
    session fixtures are torn down: the chunk-index server a session started, which runs detached,
    is stopped with it."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    """Each test run gets its own PostgreSQL test database, "test_<name>_<pid>": two runs on one
    machine (two clones, or CI beside a developer's run) no longer create, use and drop the same
    "test_<name>" (the second failed every test with "database already exists")."""
    for database in settings.DATABASES.values():
        if database["ENGINE"].endswith("postgresql") and not database.get("TEST", {}).get("NAME"):
            database.setdefault("TEST", {})["NAME"] = f"test_{database['NAME']}_{os.getpid()}"


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's test database, whose teardown first ends the connections threads of this
    session left open on it (an answer pool's worker keeps its own): PostgreSQL refuses to drop a
    database others are connected to, and the test database was left behind with a warning."""
    yield
    from django.db import connection

    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )


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
    `paperchunks` collection for this test, bound to this test's database. Yields the collection.
    Needs database access (the binding reads `indexing.models.Installation`)."""
    from pymongo import MongoClient

    from indexing import fulltext, retrieval, store
    from indexing.embedding_cache import sentence_embeddings

    sentence_embeddings.clear()  # the store is dropped below; so is what this process kept of it
    settings.MONGODB_URI = _embedded_mongo_uri
    settings.MONGODB_DB = "annotagent_test"
    store.reset_client()
    retrieval.matrix_cache.clear()
    fulltext.paper_texts.clear()
    store.get_client().drop_database(settings.MONGODB_DB)  # chunks and the installation binding
    store.ensure_indexes()
    yield store.get_collection()
    # A fresh client: the test may have closed the cached ones or pointed the settings elsewhere.
    with MongoClient(_embedded_mongo_uri) as client:
        client.drop_database("annotagent_test")
    store.reset_client()
    retrieval.matrix_cache.clear()
    fulltext.paper_texts.clear()


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
def _fresh_cache():
    # Rate-limit counters live in Django's cache by user id; on SQLite a later test's user may get
    # an earlier test's id and inherit its count.
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _no_chat_model_by_default(settings):
    settings.OPENAI_API_KEY = ""


@pytest.fixture(autouse=True)
def _no_ocr_by_default(settings):
    # Loading the OCR models takes seconds per parse; the OCR tests turn it on (tests/test_ocr.py).
    settings.OCR_ENGINE = "none"


__all__ = ["PAPERS_DIR", "settings", "shared_case", "shared_paper"]


# --- UI, API and admin helpers ----------------------------------------------------------------------


@pytest.fixture
def api_client_for():
    """`api_client_for(user)`: a DRF client authenticated as *user* with an API token."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    def make(user) -> APIClient:
        client = APIClient()
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


@pytest.fixture
def add_paper(make_pdf):
    """`add_paper(user, title="...", authors="...", year=2020, ...)`: a new paper in *user*'s
    library with the metadata indexing would have found (indexing itself is not run)."""
    from papers.services import add_paper_to_library

    def make(user, title: str = "A Test Paper", **fields):
        added = add_paper_to_library(user=user, data=make_pdf([f"{title}. Text on page one."]), filename="t.pdf")
        paper = added.paper
        paper.title = title
        for field, value in fields.items():
            setattr(paper, field, value)
        paper.save()
        return paper

    return make


@pytest.fixture
def index_queue(settings):
    """`index_queue()`: the paper ids queued for indexing during this test (recorded, never run).

    Wrap the action in `django_capture_on_commit_callbacks(execute=True)`: services enqueue on commit.
    """
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend", "QUEUES": ["default"]}}
    from django_tasks import default_task_backend

    default_task_backend.clear()

    def paper_ids() -> list[int]:
        return [result.kwargs["paper_id"] for result in default_task_backend.results]

    return paper_ids


# --- indexed papers (chat tests) ------------------------------------------------------------------

RAFT_PAGES = [
    "Raft: leader election. Raft elects a single leader for each term. A follower that hears no "
    "heartbeat before its election timeout becomes a candidate and requests votes from the other "
    "servers. A candidate that wins votes from a majority of the cluster becomes the leader.",
    "Raft: log replication. The leader appends client commands to its log and replicates the entries "
    "to the followers. An entry is committed once a majority of servers have stored it, and committed "
    "entries are applied to the state machine in log order.",
]
PAXOS_PAGES = [
    "Paxos: choosing a value. In Paxos, proposers send prepare requests with a proposal number to the "
    "acceptors. An acceptor promises never to accept a proposal numbered less than the highest prepare "
    "request it has answered.",
    "Paxos: majority quorums. A value is chosen when a majority of the acceptors have accepted the same "
    "proposal. Any two majorities intersect, so two different values can never both be chosen.",
]


@pytest.fixture
def indexed_paper(chunk_store, make_pdf):
    """`indexed_paper(user, pages, title=...)`: a paper in *user*'s library with one page per string
    of *pages*, indexed for real (local embeddings) into the embedded chunk index."""
    from indexing.services import index_paper
    from tests.support.indexing import stored_paper

    def make(user, pages: list[str], title: str = "A Test Paper"):
        data = make_pdf(pages, title=title)
        paper = stored_paper(user, data, f"{title}.pdf")
        paper.title = title
        paper.save(update_fields=["title"])
        return index_paper(paper_id=paper.pk)

    return make


@pytest.fixture
def team_project(alice, bob, carol):
    """alice's shared project "Lab": alice admin, bob writer, carol reader (mallory is not a member)."""
    from projects.models import Role
    from projects.services import add_member, create_project

    project = create_project(owner=alice, name="Lab")
    add_member(project=project, user=bob, role=Role.WRITER)
    add_member(project=project, user=carol, role=Role.READER)
    return project


@pytest.fixture
def indexed_project(alice, indexed_paper):
    """alice's project "Consensus" with two indexed papers: "Raft" (leader election on page 1, log
    replication on page 2) and "Paxos" (prepare requests on page 1, majority quorums on page 2)."""
    from projects.services import add_papers_to_project, create_project

    project = create_project(owner=alice, name="Consensus")
    papers = [indexed_paper(alice, RAFT_PAGES, title="Raft"), indexed_paper(alice, PAXOS_PAGES, title="Paxos")]
    add_papers_to_project(project=project, papers=papers, user=alice)
    return project
