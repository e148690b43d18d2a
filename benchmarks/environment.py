"""A self-contained Django environment for a benchmark run: its own data folder (SQLite, uploaded
PDFs, the embedded MongoDB-wire server), the local embedding model, no chat model (answers are
extractive) and heuristic blurbs, so runs are offline, free and repeatable."""

from __future__ import annotations

import os
from pathlib import Path

import django

BASE_DIR = Path(__file__).resolve().parent.parent
# The shared corpus beside the checkout, unless PAPERS_DIR (as for the tests) says where it is.
PAPERS_DIR = Path(os.environ.get("PAPERS_DIR") or BASE_DIR.parent / "shared" / "papers")
RESULTS_DIR = Path(__file__).resolve().parent / "results"


def configure(data_dir: Path, **overrides: str) -> None:
    """Point Django at *data_dir* and set it up. Call before importing any model.

    Variables the developer's `.env` may set are pinned here (real environment variables win over
    `.env`), so a benchmark measures the same configuration everywhere.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {
        "DJANGO_SETTINGS_MODULE": "annotagent.settings",
        "DEBUG": "true",
        "DATA_DIR": str(data_dir),
        "MEDIA_ROOT": "",
        "EMBEDDED_MONGO_DIR": "",
        "DATABASE_URL": "",
        "MONGODB_URI": "",
        "EMBEDDING_BACKEND": "local",
        "OPENAI_API_KEY": "",
        "CONTEXTUAL_BLURBS": "heuristic",
        "TASKS_BACKEND": "django_tasks.backends.dummy.DummyBackend",
        "REDIS_URL": "",
        "PROJECT_MAX_PAPERS": "1000",
        "LOG_LEVEL": "WARNING",
    }
    env.update(overrides)
    os.environ.update(env)
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def stop_chunk_index() -> None:
    """Stop the embedded server this run started (it would otherwise outlive the run)."""
    from django.conf import settings

    from indexing import store

    store.reset_client()
    store.stop_embedded_server(settings.EMBEDDED_MONGO_DIR)
