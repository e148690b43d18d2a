"""Test environment, loaded as a pytest plugin (`-p tests.environment` in pyproject.toml) so it is
set before pytest-django configures Django: tests never touch the developer's `.data` folder or
`.env` choices of model, server or task backend."""

import os
import tempfile

os.environ["DEBUG"] = "true"
os.environ["DATA_DIR"] = tempfile.mkdtemp(prefix="annotagent-tests-")
os.environ["OPENAI_API_KEY"] = ""
os.environ["OPENAI_BASE_URL"] = ""
os.environ["MONGODB_URI"] = ""
os.environ["REDIS_URL"] = ""
os.environ["EMBEDDING_BACKEND"] = "local"
os.environ["TASKS_BACKEND"] = "django_tasks.backends.dummy.DummyBackend"
