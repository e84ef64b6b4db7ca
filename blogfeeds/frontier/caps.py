"""The per-domain blog counts of :mod:`blogfeeds.crawl.caps`, shared by every worker of the
Redis frontier (``P S:domain_blogs``, one ``HINCRBY`` per new blog): the cap holds for the whole
crawl, each worker accepting at most one blog past it (it learns the domain is full from its
own increment)."""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import RedisError

from blogfeeds.crawl.caps import DomainCaps

logger = logging.getLogger(__name__)


class RedisDomainCaps(DomainCaps):
    """:class:`DomainCaps` counted in Redis for every worker (``P S:domain_blogs``)."""

    def __init__(self, redis: Any, key: str, cap: int, capacity: int = 0, stats: Any = None):
        super().__init__(cap, capacity, stats)
        self._redis = redis  # a client, or a function making one at first use
        self.key = key

    def _add(self, domain: str) -> int:
        try:
            if callable(self._redis):
                self._redis = self._redis()
            return int(self._redis.hincrby(self.key, domain, 1))
        except RedisError as exc:  # an outage: count alone (the scheduler reports it)
            logger.debug("Redis unreachable for domain caps, counting alone: %s", exc)
            return super()._add(domain)
