"""The Redis channel layer with a bounded, waiting connection pool.

channels-redis builds a `redis.asyncio.ConnectionPool`, which raises "Too many connections" as soon
as more than `max_connections` callers (100 by default in redis-py 8) use Redis at once, as ~100
sockets joining their groups together do. A `BlockingConnectionPool` makes the extra callers wait
up to its `timeout` (seconds) for a free connection instead.
"""

from __future__ import annotations

from typing import Any

from channels_redis import core
from redis.asyncio import BlockingConnectionPool


class RedisChannelLayer(core.RedisChannelLayer):
    """channels-redis's layer; each host is a dict with `address` (a redis:// URL) plus keyword
    arguments of `BlockingConnectionPool` and its connections (see `settings.redis_channel_layer`)."""

    def create_pool(self, index: int) -> Any:
        host = dict(self.hosts[index])
        return BlockingConnectionPool.from_url(host.pop("address"), **host)
