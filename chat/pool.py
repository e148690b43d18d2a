"""The answer pool: a bounded thread pool for retrieval and answer-model work.

`sync_to_async` runs functions on one thread shared by every consumer of the process by default
(`thread_sensitive=True`), which Django's database connections need. Model and retrieval work put
there queued every answer behind every other answer's database saves: answers came out one after
another whatever the number of clients. Work that needs no database (question analysis, retrieval,
the extractive answer, support checks: everything that embeds) runs here instead, on
`ANSWER_POOL_THREADS` threads, while the short database calls stay on the shared thread.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

P = ParamSpec("P")
R = TypeVar("R")

_executor: ThreadPoolExecutor | None = None
_size = 0
_lock = threading.Lock()


def answer_pool() -> ThreadPoolExecutor:
    """The process's answer pool, built on first use with `ANSWER_POOL_THREADS` threads (built
    again, the old one finishing its work, when the setting changes: tests override it)."""
    global _executor, _size
    with _lock:
        if _executor is None or _size != settings.ANSWER_POOL_THREADS:
            if _executor is not None:
                _executor.shutdown(wait=False)
            _size = settings.ANSWER_POOL_THREADS
            _executor = ThreadPoolExecutor(max_workers=_size, thread_name_prefix="answer")
        return _executor


def in_answer_pool(func: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """*func* as a coroutine function that runs in the answer pool. *func* must not rely on the
    caller's database connection or transaction; a connection it opens anyway (a first binding
    check of the chunk index) is closed when it returns, so pool threads hold none."""

    @functools.wraps(func)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        finally:
            for connection in connections.all(initialized_only=True):
                connection.close()

    return sync_to_async(run, thread_sensitive=False, executor=answer_pool())
