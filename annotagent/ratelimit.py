"""Per-user and per-socket rate limits, answered with one error: `slow_down` (HTTP 429).

Per-user limits (`check_user_rate`) count in Django's cache (`CACHE_URL`): the
in-process default counts per process, so with several web processes set `CACHE_URL` to Redis for
one shared count. Per-socket limits (`FrameBudget`) live in the consumer's memory: a token bucket.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus

from django.conf import settings
from django.core.cache import cache

from annotagent.errors import AnnotagentError


class RateLimitedError(AnnotagentError):
    """Too many requests in a short time; wait a moment and try again.

    *retry_after* is the number of seconds (>= 1) after which the next try is allowed, when known;
    the API sends it as the `Retry-After` header (RFC 9110, section 10.2.3)."""

    code = "slow_down"
    status = HTTPStatus.TOO_MANY_REQUESTS

    def __init__(self, message: str = "", *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


# action -> (name of the setting holding the limit per window, window length in seconds, noun)
USER_LIMITS: dict[str, tuple[str, int, str]] = {
    "question": ("USER_QUESTIONS_PER_MINUTE", 60, "questions"),
    "upload": ("USER_UPLOADS_PER_MINUTE", 60, "uploads"),
}


def check_user_rate(*, user_id: int, action: str, now: float | None = None) -> None:
    """Count one *action* (`question` or `upload`) by *user_id* at *now* (seconds since the epoch;
    default the current time); raise RateLimitedError when the user has used the setting's
    allowance for the last minute. A limit of 0 disables it.

    A sliding window estimated from two fixed windows (the current count plus the previous
    window's count weighted by how much of it still overlaps the last minute), as Cloudflare
    describes it ("How we built rate limiting capable of scaling to millions of domains", 2017): one
    cache increment and one read per call, and no free burst at a window boundary. Refused
    attempts count too, so a client that keeps hammering stays refused."""
    setting, window, noun = USER_LIMITS[action]
    limit: int = getattr(settings, setting)
    if limit <= 0:
        return
    now = time.time() if now is None else now
    bucket, elapsed = divmod(now, window)
    key = f"ratelimit:{action}:{user_id}:{int(bucket)}"
    cache.add(key, 0, timeout=window * 2)
    try:
        count = cache.incr(key)
    except ValueError:  # evicted between add and incr
        cache.set(key, 1, timeout=window * 2)
        count = 1
    previous = cache.get(f"ratelimit:{action}:{user_id}:{int(bucket) - 1}", 0)
    if count + previous * (1 - elapsed / window) > limit:
        wait = seconds_until_allowed(count=count, previous=previous, elapsed=elapsed, window=window, limit=limit)
        raise RateLimitedError(f"Slow down: at most {limit} {noun} a minute. Try again in {wait} s.", retry_after=wait)


def seconds_until_allowed(*, count: int, previous: int, elapsed: float, window: int, limit: int) -> int:
    """Whole seconds (>= 1) until one more action fits check_user_rate's sliding-window estimate,
    if no other action is counted meanwhile: *count* actions in the current window, *previous* in
    the one before, *elapsed* seconds into the current window of *window* seconds.

    The estimate falls linearly as the previous window's weight shrinks; one more action fits
    once `count + 1 + previous * (1 - e / window) <= limit` (still in this window) or, after it,
    `1 + count * (1 - e / window) <= limit` (in the next window)."""
    if count + 1 <= limit and previous:
        # Still this window: wait for the previous window's weight to fall far enough.
        fits_at = window * (1 - (limit - count - 1) / previous)
        if fits_at <= window:
            return max(1, math.ceil(fits_at - elapsed))
    fits_at = window * (1 - (limit - 1) / count) if count and limit >= 1 else 0.0
    return max(1, math.ceil(window - elapsed + max(0.0, fits_at)))


@dataclass
class FrameBudget:
    """A token bucket for one socket's frames: *burst* frames at once, refilled at *per_second*.

    `take()` is True while the socket is within its budget. Pure but for the clock (*clock* returns
    seconds, monotonic)."""

    burst: int
    per_second: float
    clock: Callable[[], float] = time.monotonic
    tokens: float = field(init=False)
    updated: float = field(init=False)

    def __post_init__(self) -> None:
        self.tokens = float(self.burst)
        self.updated = self.clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(float(self.burst), self.tokens + (now - self.updated) * self.per_second)
        self.updated = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True
