"""Annotagent settings: every value comes from the environment (django-environ).

Each variable is listed, with a safe development value, in `.env.example`. A `.env` file in the
project root is read when present; real environment variables win over it.
"""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=False)


def env_path(name: str, default: Path) -> Path:
    """A folder setting: empty means *default*; relative paths are relative to the project root."""
    value = env.str(name, default="")
    if not value:
        return default
    path = Path(value).expanduser()
    return path if path.is_absolute() else BASE_DIR / path


# Local state of the embedded default: SQLite, the embedded MongoDB-wire server, uploaded PDFs.
DATA_DIR = env_path("DATA_DIR", BASE_DIR / ".data")
DATA_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off (see .env.example).")
    SECRET_KEY = "insecure-development-key-only-for-debug"

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1"])
if "*" in ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must name hosts; '*' is refused.")
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "channels",
    "django_tasks",
    "django_tasks_db",
    "template_partials",
    "papers",
    "projects",
    "indexing",
    "chat",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
]

ROOT_URLCONF = "annotagent.urls"
ASGI_APPLICATION = "annotagent.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": environ.Env.db_url_config(env.str("DATABASE_URL", default="") or f"sqlite:///{DATA_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server, the task worker and commands share one SQLite file: wait for locks.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 30
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "projects:list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"  # filled by collectstatic; made here so WhiteNoise finds it in tests
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
MEDIA_ROOT = env_path("MEDIA_ROOT", DATA_DIR / "media")
MEDIA_URL = "media/"

# Uploads: PDFs are read whole to hash them, so the cap bounds memory too.
UPLOAD_MAX_BYTES = env.int("UPLOAD_MAX_BYTES", default=50 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
PROJECT_MAX_PAPERS = env.int("PROJECT_MAX_PAPERS", default=10)

# Channels: Redis in production; in-process otherwise.
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Background tasks (django-tasks backport of Django 6's Tasks API); worker: `manage.py db_worker`.
TASKS = {
    "default": {
        "BACKEND": env.str("TASKS_BACKEND", default="") or "django_tasks_db.DatabaseBackend",
        "QUEUES": ["default"],
    }
}

# MongoDB: the chunk index. Unset MONGODB_URI starts the embedded SecantusDB server under DATA_DIR.
MONGODB_URI = env.str("MONGODB_URI", default="")
MONGODB_DB = env.str("MONGODB_DB", default="annotagent")
MONGODB_TIMEOUT_MS = env.int("MONGODB_TIMEOUT_MS", default=5000)
MONGODB_ATLAS_VECTOR_INDEX = env.str("MONGODB_ATLAS_VECTOR_INDEX", default="paperchunks_embedding")
EMBEDDED_MONGO_DIR = env_path("EMBEDDED_MONGO_DIR", DATA_DIR / "mongo")

# Embeddings: "local" (all-MiniLM-L6-v2, offline) or "openai".
EMBEDDING_BACKEND = env.str("EMBEDDING_BACKEND", default="local")
LOCAL_EMBED_MODEL = env.str("LOCAL_EMBED_MODEL", default="") or "all-MiniLM-L6-v2"
OPENAI_EMBED_MODEL = env.str("OPENAI_EMBED_MODEL", default="text-embedding-3-small")
EMBED_BATCH_SIZE = env.int("EMBED_BATCH_SIZE", default=64)

# Chat models: any OpenAI-compatible endpoint. No API key means the extractive answerer.
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="") or None
OPENAI_CHAT_MODEL = env.str("OPENAI_CHAT_MODEL", default="gpt-4o-mini")
OPENAI_PROJECT_CHAT_MODEL = env.str("OPENAI_PROJECT_CHAT_MODEL", default="")
OPENAI_TIMEOUT_SECONDS = env.float("OPENAI_TIMEOUT_SECONDS", default=60.0)

# Indexing.
PDF_PARSE_TIMEOUT_SECONDS = env.int("PDF_PARSE_TIMEOUT_SECONDS", default=180)
PDF_PARSE_MEMORY_MB = env.int("PDF_PARSE_MEMORY_MB", default=2048)
PDF_MAX_PAGE_CHARS = env.int("PDF_MAX_PAGE_CHARS", default=200_000)
CHUNK_TOKENS = env.int("CHUNK_TOKENS", default=200)
CHUNK_OVERLAP_TOKENS = env.int("CHUNK_OVERLAP_TOKENS", default=40)
# "auto": from the chat model when one is configured, else heuristic. "heuristic" never calls a model.
CONTEXTUAL_BLURBS = env.str("CONTEXTUAL_BLURBS", default="auto")

# Retrieval: the context layer.
PROJECT_CHAT_TOP_K = env.int("PROJECT_CHAT_TOP_K", default=15)
PROJECT_CHAT_MAX_CHUNKS_PER_PAPER = env.int("PROJECT_CHAT_MAX_CHUNKS_PER_PAPER", default=5)
PROJECT_CHAT_MIN_RELEVANCE = env.float("PROJECT_CHAT_MIN_RELEVANCE", default=0.3)
# hybrid (dense + BM25 fused by reciprocal rank fusion), dense or lexical; see indexing.retrieval.
RETRIEVAL_MODE = env.str("RETRIEVAL_MODE", default="hybrid")
# RRF's k: score = sum of 1 / (k + rank); 60 after Cormack, Clarke & Büttcher (SIGIR 2009).
RETRIEVAL_RRF_K = env.int("RETRIEVAL_RRF_K", default=60)
# A BM25 hit is relevant on its own when it holds this share of the question's IDF mass.
RETRIEVAL_MIN_LEXICAL_COVERAGE = env.float("RETRIEVAL_MIN_LEXICAL_COVERAGE", default=0.6)
# A paper the question neither names nor compares gets passages only when its best cosine similarity
# is at least this share of the best overall (no filler from weakly related papers).
RETRIEVAL_PAPER_RELATIVE_BAR = env.float("RETRIEVAL_PAPER_RELATIVE_BAR", default=0.9)
# A paper the question names keeps its best passage even this far under PROJECT_CHAT_MIN_RELEVANCE.
RETRIEVAL_NAMED_NEAR_MISS = env.float("RETRIEVAL_NAMED_NEAR_MISS", default=0.05)
PROJECT_CHAT_HISTORY_TOKENS = env.int("PROJECT_CHAT_HISTORY_TOKENS", default=2000)
# A project's thread keeps its newest messages only (no time-based expiry); older ones are deleted on save.
PROJECT_CHAT_MAX_MESSAGES = env.int("PROJECT_CHAT_MAX_MESSAGES", default=200)
# Per-paper chat: characters of the paper's text put in the prompt (the rest is cut, and the answer says so).
PAPER_CHAT_MAX_CHARS = env.int("PAPER_CHAT_MAX_CHARS", default=60_000)

# The demo: a folder of PDFs ingested by `./run demo`.
DEMO_PAPERS_DIR = env_path("DEMO_PAPERS_DIR", BASE_DIR.parent / "shared" / "papers" / "consensus")
DEMO_USERNAME = env.str("DEMO_USERNAME", default="demo")
DEMO_PASSWORD = env.str("DEMO_PASSWORD", default="annotagent-demo")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "annotagent.exceptions.api_exception_handler",
}
SPECTACULAR_SETTINGS = {"TITLE": "Annotagent API", "VERSION": "1.0.0"}

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "frame-src": ["'self'"],
        "object-src": ["'self'"],
    }
}
X_FRAME_OPTIONS = "SAMEORIGIN"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}
