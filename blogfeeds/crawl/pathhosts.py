"""The hosts where the crawl read a blog under a path (:mod:`blogfeeds.extract.pathblog`).

Admission keys a request by blog identity, and ``host/alice/`` and ``host/bob/`` share the
host's until one of them is read: once a blog under a path was read on a host, the other
prefix homes of that host are requested under their own path identity, so the second person's
blog is read rather than dropped as the first one's duplicate. The hosts live in this process,
or in Redis for every worker (``P S:path_hosts``, a SET) when the Redis frontier is on.
"""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import RedisError

logger = logging.getLogger(__name__)


class PathHosts:
    """Host identities where a blog under a path was read, in this process."""

    def __init__(self) -> None:
        self._hosts: set[str] = set()

    def add(self, host: str) -> None:
        self._hosts.add(host)

    def __contains__(self, host: str) -> bool:
        return host in self._hosts


class RedisPathHosts(PathHosts):
    """:class:`PathHosts` shared in Redis by every worker (one ``SADD`` per host learnt, one
    ``SISMEMBER`` per prefix home offered on a host this worker has not seen as one)."""

    def __init__(self, redis: Any, key: str) -> None:
        super().__init__()
        self._redis = redis  # a client, or a function making one at first use
        self.key = key

    def _client(self) -> Any:
        if callable(self._redis):
            self._redis = self._redis()
        return self._redis

    def add(self, host: str) -> None:
        super().add(host)
        try:
            self._client().sadd(self.key, host)
        except RedisError as exc:  # an outage: this worker still knows it
            logger.debug("Redis unreachable for path hosts: %s", exc)

    def __contains__(self, host: str) -> bool:
        if super().__contains__(host):
            return True
        try:
            found = bool(self._client().sismember(self.key, host))
        except RedisError as exc:
            logger.debug("Redis unreachable for path hosts: %s", exc)
            return False
        if found:
            super().add(host)
        return found
