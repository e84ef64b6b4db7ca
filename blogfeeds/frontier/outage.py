"""Redis unreachable while a crawl runs (a restart, a network partition).

With scrapy-redis 0.9.1 every failed Redis call is an error with a traceback in the log, the
requests enqueued meanwhile are lost, and the spider finishes as if its work were done. Our
scheduler reports each call to a :class:`RedisOutage` instead: it logs the outage once, holds
new requests and keeps the spider open while it lasts, and stops the crawl past a limit.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from redis.exceptions import RedisError
from scrapy.utils.defer import deferred_from_coro

logger = logging.getLogger(__name__)


class RedisOutage:
    """Whether Redis is unreachable, since when, and when to give up.

    :meth:`failed` after a Redis call raised: the first one logs one ERROR line and counts
    ``frontier/redis_outages``; once the outage has lasted ``limit`` seconds
    (``BLOGFEEDS_REDIS_DOWN_LIMIT``) it closes the spider with finish reason ``redis_down``.
    :meth:`reachable` after a call succeeded ends the outage.
    """

    def __init__(self, crawler: Any, limit: float) -> None:
        self.crawler = crawler
        self.limit = limit
        self._since: float | None = None  # monotonic time of the outage's first error
        self._stopping = False

    @property
    def active(self) -> bool:
        """Whether the last Redis call failed (an outage in progress)."""
        return self._since is not None

    def failed(self, exc: RedisError) -> None:
        """Note a failed Redis call: log the outage's start once; past ``limit`` seconds, stop
        the crawl (finish reason ``redis_down``)."""
        now = time.monotonic()
        if self._since is None:
            self._since = now
            self.crawler.stats.inc_value("frontier/redis_outages")
            logger.error(
                "Redis unreachable (%s): holding new requests and retrying; the crawl stops "
                "after %.0f s (BLOGFEEDS_REDIS_DOWN_LIMIT)",
                exc,
                self.limit,
            )
        elif now - self._since >= self.limit and not self._stopping:
            self._stopping = True
            logger.error(
                "Redis unreachable for %.0f s: stopping the crawl (finish reason redis_down); "
                "start the same BLOGFEEDS_WORKER_ID again to re-queue what was in flight",
                now - self._since,
            )
            deferred_from_coro(self.crawler.engine.close_spider_async(reason="redis_down"))

    def reachable(self) -> None:
        """A Redis call succeeded: end the outage, if any."""
        if self._since is not None:
            logger.info("Redis reachable again after %.1f s", time.monotonic() - self._since)
            self._since = None
