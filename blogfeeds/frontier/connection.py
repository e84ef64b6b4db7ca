"""The Redis server, key prefix and worker identity of the frontier, from the crawl's settings."""

from __future__ import annotations

import socket
from typing import Any

from scrapy_redis import connection

from blogfeeds.frontier import defaults


def server(settings: Any) -> Any:
    """The Redis client for ``REDIS_URL`` (and scrapy-redis's ``REDIS_PARAMS``)."""
    return connection.get_redis_from_settings(settings)


def redis_prefix(settings: Any) -> str:
    """``BLOGFEEDS_REDIS_PREFIX`` (default ``blogfeeds:``), put before every Redis key."""
    value = settings.get("BLOGFEEDS_REDIS_PREFIX")
    return defaults.REDIS_PREFIX if value is None else str(value)


def worker_id(settings: Any) -> str:
    """``BLOGFEEDS_WORKER_ID``, else the host name: the identity whose in-flight requests a
    restarted worker takes back. Several workers on one host need distinct ids."""
    return str(settings.get("BLOGFEEDS_WORKER_ID") or socket.gethostname())
