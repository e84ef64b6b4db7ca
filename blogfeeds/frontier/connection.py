"""The Redis server, key prefix and worker identity of the frontier, from the crawl's settings."""

from __future__ import annotations

from typing import Any

from scrapy_redis import connection

from blogfeeds.config import FrontierSettings


def server(settings: Any) -> Any:
    """The Redis client for ``REDIS_URL`` (and scrapy-redis's ``REDIS_PARAMS``)."""
    return connection.get_redis_from_settings(settings)


def redis_prefix(settings: Any) -> str:
    """``BLOGFEEDS_REDIS_PREFIX``, put before every Redis key."""
    return FrontierSettings.from_settings(settings).redis_prefix


def worker_id(settings: Any) -> str:
    """:attr:`FrontierSettings.worker`."""
    return FrontierSettings.from_settings(settings).worker
