"""Test environment, loaded as a pytest plugin (`-p tests.environment` in pyproject.toml) so it is
set before pytest-django configures Django: tests never touch the developer's `.data` folder or
`.env` choices of model, server or task backend. A test that reaches the chunk index without the
`chunk_store` fixture falls back to an embedded server under the temporary data folder (never the
`.env`'s `EMBEDDED_MONGO_DIR`), stopped when the session ends, when the folder is removed."""

import os
import shutil
import tempfile

os.environ["DEBUG"] = "true"
os.environ["DATA_DIR"] = tempfile.mkdtemp(prefix="annotagent-tests-")
os.environ["EMBEDDED_MONGO_DIR"] = os.path.join(os.environ["DATA_DIR"], "mongo")
os.environ["OPENAI_API_KEY"] = ""
os.environ["OPENAI_BASE_URL"] = ""
os.environ["MONGODB_URI"] = ""
os.environ["REDIS_URL"] = ""
os.environ["EMBEDDING_BACKEND"] = "local"
os.environ["TASKS_BACKEND"] = "django_tasks.backends.dummy.DummyBackend"


def pytest_sessionfinish(session, exitstatus):
    """Stop an embedded chunk index a test started under the temporary data folder, if any, and
    remove the folder."""
    from indexing.store import stop_embedded_server

    stop_embedded_server(os.environ["EMBEDDED_MONGO_DIR"])
    shutil.rmtree(os.environ["DATA_DIR"], ignore_errors=True)
