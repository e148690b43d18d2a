"""Annotagent settings: every value comes from the environment (django-environ).

Each variable is listed, with a safe development value, in `.env.example`. A `.env` file in the
project root is read when present; real environment variables win over it.
"""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# ENV_FILE names another settings file; empty reads none (the environment alone, as in production).
_env_file = env.str("ENV_FILE", default=str(BASE_DIR / ".env"))
if _env_file:
    environ.Env.read_env(_env_file, overwrite=False)

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
    "drf_spectacular_sidecar",
    "channels",
    "django_tasks",
    "django_tasks_db",
    "template_partials",
    "papers",
    "projects",
    "indexing",
    "chat",
    "notes",
    "mcp_server",
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
    "annotagent.middleware.ForbiddenErrorMiddleware",
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
SQLITE_BUSY_TIMEOUT_SECONDS = env.int("SQLITE_BUSY_TIMEOUT_SECONDS", default=30)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server, the task worker and commands share one SQLite file. A deferred transaction
    # that reads and then writes cannot wait for the write lock (SQLite answers "database is
    # locked" at once), so every transaction takes the write lock up front (IMMEDIATE) and waits
    # up to the busy timeout for it; WAL lets readers go on while one process writes.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": SQLITE_BUSY_TIMEOUT_SECONDS,
            "transaction_mode": "IMMEDIATE",
            "init_command": (
                f"PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_SECONDS * 1000};"
            ),
        }
    )
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
# A PDF whose structure PDFium cannot open, or with more pages than this, is refused at upload.
PDF_MAX_PAGES = env.int("PDF_MAX_PAGES", default=2000)
# Bytes of PDF files one user's library may hold (a shared file counts in every library); 0: no quota.
LIBRARY_QUOTA_BYTES = env.int("LIBRARY_QUOTA_BYTES", default=2 * 1024 * 1024 * 1024)
# Papers a project may hold; failed papers do not count.
PROJECT_MAX_PAPERS = env.int("PROJECT_MAX_PAPERS", default=10)
# Bibliographic lookup by DOI while indexing (indexing.lookup): none (default: no network), crossref
# or openalex; the contact address goes in the User-Agent, as both services ask.
METADATA_LOOKUP = env.str("METADATA_LOOKUP", default="none")
METADATA_LOOKUP_URL = env.str("METADATA_LOOKUP_URL", default="")
METADATA_LOOKUP_MAILTO = env.str("METADATA_LOOKUP_MAILTO", default="")
METADATA_LOOKUP_TIMEOUT_SECONDS = env.float("METADATA_LOOKUP_TIMEOUT_SECONDS", default=5.0)

# Channels: Redis in production; in-process otherwise.
REDIS_URL = env.str("REDIS_URL", default="")
# Connections one process may hold to Redis; past it, callers wait up to REDIS_POOL_TIMEOUT_SECONDS
# for a free one instead of failing with "Too many connections".
REDIS_MAX_CONNECTIONS = env.int("REDIS_MAX_CONNECTIONS", default=50)
REDIS_POOL_TIMEOUT_SECONDS = env.float("REDIS_POOL_TIMEOUT_SECONDS", default=20.0)


# Messages a channel may hold before the layer drops new ones: a member's socket receives every
# streamed event of every other member's answer through the project's group.
CHANNEL_CAPACITY = env.int("CHANNEL_CAPACITY", default=1000)


def redis_channel_layer(url: str) -> dict:
    """The channel layer on the Redis at *url* (see `annotagent.redis_layer`).

    No socket timeout: the layer's receive loop blocks in BZPOPMIN for up to 5 s, which redis-py 8's
    default 5 s read timeout cuts off (the consumer then dies with code 1011). Dead peers are found by
    TCP keepalive and by a PING on connections idle for more than 30 s instead.
    """
    return {
        "BACKEND": "annotagent.redis_layer.RedisChannelLayer",
        "CONFIG": {
            "hosts": [
                {
                    "address": url,
                    "socket_timeout": None,
                    "socket_connect_timeout": 5,
                    "socket_keepalive": True,
                    "health_check_interval": 30,
                    "max_connections": REDIS_MAX_CONNECTIONS,
                    "timeout": REDIS_POOL_TIMEOUT_SECONDS,
                }
            ],
            "capacity": CHANNEL_CAPACITY,
        },
    }


if REDIS_URL:
    CHANNEL_LAYERS = {"default": redis_channel_layer(REDIS_URL)}
else:
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": CHANNEL_CAPACITY}}
    }

# Cache: per-user rate limits count here. The in-process default counts per process; with several web
# processes use Redis (redis://127.0.0.1:6379/1) so they share one count.
CACHES = {"default": env.cache_url("CACHE_URL", default="locmemcache://")}

# Rate limits, per user (0 turns one off) and per chat socket (a token bucket of frames).
USER_QUESTIONS_PER_MINUTE = env.int("USER_QUESTIONS_PER_MINUTE", default=20)
USER_UPLOADS_PER_MINUTE = env.int("USER_UPLOADS_PER_MINUTE", default=60)
CHAT_SOCKET_FRAME_BURST = env.int("CHAT_SOCKET_FRAME_BURST", default=20)
CHAT_SOCKET_FRAMES_PER_SECOND = env.float("CHAT_SOCKET_FRAMES_PER_SECOND", default=1.0)
# A chat frame larger than this (characters of JSON text) is refused unread.
CHAT_MAX_FRAME_CHARS = env.int("CHAT_MAX_FRAME_CHARS", default=16_384)
# Messages per history page: the socket sends the newest page on connect, older pages on request.
CHAT_HISTORY_PAGE_SIZE = env.int("CHAT_HISTORY_PAGE_SIZE", default=50)
# A streaming answer is saved (as stopped, until it completes) at most this often, so a crash keeps its text.
CHAT_PARTIAL_SAVE_SECONDS = env.float("CHAT_PARTIAL_SAVE_SECONDS", default=1.0)

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
# Threads torch uses inside one local-model call (0: torch's default, one per core). Each answer-pool
# thread may run the model at once, so ANSWER_POOL_THREADS x this should not exceed the cores.
EMBED_TORCH_THREADS = env.int("EMBED_TORCH_THREADS", default=1)
# Each web process lends its local model to `manage.py ask` on a Unix socket in this folder.
EMBEDDING_SOCKET_DIR = env_path("EMBEDDING_SOCKET_DIR", DATA_DIR / "embedders")
# Sentence embeddings kept in each process (least recently used go first) in front of the chunk
# index's `sentenceembeddings`; 20,000 MiniLM vectors ~ 30 MB.
SENTENCE_EMBEDDING_CACHE_ENTRIES = env.int("SENTENCE_EMBEDDING_CACHE_ENTRIES", default=20_000)
# Embed each newly indexed paper's candidate sentences in the worker, so answers need not.
SENTENCE_EMBEDDING_PREFILL = env.bool("SENTENCE_EMBEDDING_PREFILL", default=True)

# Chat models: any OpenAI-compatible endpoint. No API key means the extractive answerer.
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="") or None
OPENAI_CHAT_MODEL = env.str("OPENAI_CHAT_MODEL", default="gpt-4o-mini")
OPENAI_PROJECT_CHAT_MODEL = env.str("OPENAI_PROJECT_CHAT_MODEL", default="")
OPENAI_TIMEOUT_SECONDS = env.float("OPENAI_TIMEOUT_SECONDS", default=60.0)

# Indexing.
PDF_PARSE_TIMEOUT_SECONDS = env.int("PDF_PARSE_TIMEOUT_SECONDS", default=180)
# A worker's claim on the paper it indexes lasts this long unless renewed (it renews every third of
# it); a killed worker's paper is picked up by another worker once the claim lapses.
INDEX_CLAIM_SECONDS = env.int("INDEX_CLAIM_SECONDS", default=60)
if INDEX_CLAIM_SECONDS < 3:
    raise ImproperlyConfigured("INDEX_CLAIM_SECONDS must be at least 3.")
PDF_PARSE_MEMORY_MB = env.int("PDF_PARSE_MEMORY_MB", default=2048)
PDF_MAX_PAGE_CHARS = env.int("PDF_MAX_PAGE_CHARS", default=200_000)
# OCR of pages without readable text (indexing/ocr.py): "rapidocr" (models ship in its wheel, so it
# works after the plain pip set-up), "tesseract" (the system program) or "none".
OCR_ENGINE = env.str("OCR_ENGINE", default="rapidocr")
if OCR_ENGINE not in ("rapidocr", "tesseract", "none"):
    raise ImproperlyConfigured("OCR_ENGINE must be rapidocr, tesseract or none.")
OCR_DPI = env.int("OCR_DPI", default=200)
OCR_LANGUAGES = env.str("OCR_LANGUAGES", default="eng")  # tesseract's -l: "eng", "eng+deu"
# Each OCR'd page adds this to the PDF_PARSE_TIMEOUT_SECONDS budget of its paper.
OCR_SECONDS_PER_PAGE = env.int("OCR_SECONDS_PER_PAGE", default=30)
# Figures and tables cropped from their pages at indexing (indexing/figures.py): at most this many
# per paper (0: none), rendered at FIGURE_RENDER_DPI with neither side over FIGURE_MAX_PIXELS.
FIGURES_MAX_PER_PAPER = env.int("FIGURES_MAX_PER_PAPER", default=50)
FIGURE_RENDER_DPI = env.int("FIGURE_RENDER_DPI", default=150)
FIGURE_MAX_PIXELS = env.int("FIGURE_MAX_PIXELS", default=1600)
if FIGURES_MAX_PER_PAPER < 0 or not 36 <= FIGURE_RENDER_DPI <= 600 or not 64 <= FIGURE_MAX_PIXELS <= 8000:
    raise ImproperlyConfigured(
        "FIGURES_MAX_PER_PAPER must be at least 0, FIGURE_RENDER_DPI 36..600 and FIGURE_MAX_PIXELS 64..8000."
    )
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
# Threads of each web process that run retrieval and the answer model (the embedding model, the
# extractive answer), so one answer never waits behind another's database save on the one thread
# database calls share.
ANSWER_POOL_THREADS = env.int("ANSWER_POOL_THREADS", default=2)
if ANSWER_POOL_THREADS < 1:
    raise ImproperlyConfigured("ANSWER_POOL_THREADS must be at least 1.")

# The demo: a folder of PDFs ingested by `./run demo`. Unset: ../shared/papers/consensus when it holds
# PDFs, else the sample paper shipped in sample_papers/ (see `manage.py demo`).
DEMO_PAPERS_DIR = env_path("DEMO_PAPERS_DIR", BASE_DIR) if env.str("DEMO_PAPERS_DIR", default="") else None
DEMO_DEFAULT_PAPERS_DIRS = [BASE_DIR.parent / "shared" / "papers" / "consensus", BASE_DIR / "sample_papers"]
DEMO_USERNAME = env.str("DEMO_USERNAME", default="demo")
DEMO_PASSWORD = env.str("DEMO_PASSWORD", default="annotagent-demo")

REST_FRAMEWORK = {
    # Token first: an anonymous API request gets 401 with `WWW-Authenticate: Token` (DRF answers
    # 403 when the first class, as SessionAuthentication does, names no challenge).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "annotagent.exceptions.api_exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Annotagent API",
    "VERSION": "1.0.0",
    # Swagger UI from drf-spectacular-sidecar's static files: no CDN, so the CSP allows it offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two choice sets share the field name "role": a member's role in a project and a chat turn's.
    "ENUM_NAME_OVERRIDES": {"ProjectRoleEnum": "projects.models.Role", "ChatRoleEnum": "chat.models.ChatMessage.Role"},
}

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
# Nothing is framed: the reader draws the PDF with PDF.js (papers/static/papers/reader.js).
X_FRAME_OPTIONS = "DENY"

# HTTPS. On by default whenever DEBUG is off, so `manage.py check --deploy` is clean with the
# production settings; the local demo (plain HTTP on 127.0.0.1) turns them off in its .env.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
# One year, the value the browsers' preload list asks for; 0 sends no HSTS header.
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
# Behind a TLS-terminating proxy: "HTTP_X_FORWARDED_PROTO,https". Only set it when the proxy always
# sets (or strips) that header, or any client can claim to be on HTTPS. Empty: no proxy header.
_proxy_ssl_header = env.list("SECURE_PROXY_SSL_HEADER", default=[])
if _proxy_ssl_header and len(_proxy_ssl_header) != 2:
    raise ImproperlyConfigured("SECURE_PROXY_SSL_HEADER must be HEADER,VALUE, e.g. HTTP_X_FORWARDED_PROTO,https.")
SECURE_PROXY_SSL_HEADER = (_proxy_ssl_header[0], _proxy_ssl_header[1]) if _proxy_ssl_header else None

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}
