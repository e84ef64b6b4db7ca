"""The depth book shared by every worker of the Redis frontier (see :mod:`blogfeeds.crawl.depth`).

Each blog's best depth, the token of the copy of its request that was downloaded, and (with a
``DEPTH_LIMIT``) its friends live in Redis (``P S:depths``, ``P S:friends``); every change is one
Lua script (:mod:`blogfeeds.frontier.scripts`: ``OFFER_DEPTH``, ``READ_DEPTH``,
``CLAIM_DOWNLOAD``), so two workers finding the same blog, or one reading a blog while another
finds a shorter path to it, agree: one lowers the depth, and the friends recorded by the reader
are offered again by the finder. scrapy-redis 0.9.1 has no notion of depth beyond the request's
meta. The process's own book stays in front as a cache: a blog this worker knows at a depth or
lower needs no Redis call (a shared depth only ever falls).

While Redis is unreachable the worker decides alone, as without Redis (the outage is the
scheduler's: :mod:`blogfeeds.frontier.outage`); the shared dupefilter, the blog-id claims and
the database's unique key still keep one blog once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from redis.exceptions import RedisError

from blogfeeds.crawl.depth import DepthBook, Offer
from blogfeeds.frontier import scripts
from blogfeeds.frontier.connection import redis_prefix, server, worker_id
from blogfeeds.frontier.defaults import FrontierKeys

logger = logging.getLogger(__name__)


class RedisDepthBook(DepthBook):
    """:class:`~blogfeeds.crawl.depth.DepthBook` shared through Redis by every worker."""

    def __init__(
        self,
        redis: Any,
        keys: FrontierKeys,
        capacity: int = 0,
        *,
        keep_friends: bool = False,
        crawler: Any = None,
    ) -> None:
        super().__init__(capacity, keep_friends=keep_friends)  # the friends live in Redis
        self.keys = keys
        self.crawler = crawler
        self._redis = redis  # a client, or a function making one at first use

    @cached_property
    def _scripts(self) -> tuple[Any, Any, Any]:
        """``OFFER_DEPTH``, ``READ_DEPTH``, ``CLAIM_DOWNLOAD``, registered at first use (after
        the start-up check of the settings has judged ``REDIS_URL``)."""
        redis = self._redis() if callable(self._redis) else self._redis
        return tuple(
            redis.register_script(script)
            for script in (scripts.OFFER_DEPTH, scripts.READ_DEPTH, scripts.CLAIM_DOWNLOAD)
        )

    @classmethod
    def from_settings(
        cls, settings: Any, crawler: Any, capacity: int = 0, *, keep_friends: bool = False
    ) -> RedisDepthBook:
        spider = getattr(crawler, "spidercls", None)
        keys = FrontierKeys(
            redis_prefix(settings), getattr(spider, "name", "blogs"), worker_id(settings)
        )
        connect = lambda: server(settings)  # noqa: E731
        return cls(connect, keys, capacity, keep_friends=keep_friends, crawler=crawler)

    def _outage(self) -> Any:
        """The frontier scheduler's :class:`~blogfeeds.frontier.outage.RedisOutage` (one log
        line per outage, the ``BLOGFEEDS_REDIS_DOWN_LIMIT``), or None outside a crawl."""
        scheduler = getattr(getattr(self.crawler, "engine", None), "scheduler", None)
        return getattr(scheduler, "outage", None)

    def _failed(self, exc: RedisError) -> None:
        outage = self._outage()
        if outage is not None:
            outage.failed(exc)
        else:
            logger.error("Redis unreachable for blog depths, deciding alone: %s", exc)

    def _answered(self) -> None:
        outage = self._outage()
        if outage is not None:
            outage.reachable()

    def offer(self, blog: str, depth: int) -> Offer | None:
        best = self.depths.get(blog)
        if best is not None and best <= depth:
            return None
        try:
            offer = self._scripts[0]
            answer = offer(keys=[self.keys.depths, self.keys.friends], args=[blog, depth])
        except RedisError as exc:
            self._failed(exc)
            return super().offer(blog, depth)
        self._answered()
        self.depths.put(blog, depth)  # the shared depth is this one or lower
        if answer is None:
            return None
        if answer[0] == 0:
            return Offer(new=True)
        if answer[0] == 1:
            return Offer(new=False)
        lines = answer[1].decode("utf-8")
        return Offer(new=False, friends=tuple(lines.split("\n")) if lines else ())

    def read(self, blog: str, depth: int, friends: Sequence[str]) -> int:
        listed = "\n".join(friends) if self.keep_friends else ""
        try:
            read = self._scripts[1]
            best = int(read(keys=[self.keys.depths, self.keys.friends], args=[blog, depth, listed]))
        except RedisError as exc:
            self._failed(exc)
            return super().read(blog, depth, friends)
        self._answered()
        self.depths.put(blog, best)  # not self.friends: a shorter path asks Redis
        return best

    def claim(self, blog: str, depth: int, token: str) -> bool:
        try:
            answer = self._scripts[2](keys=[self.keys.depths], args=[blog, depth, token])
        except RedisError as exc:
            self._failed(exc)
            return True
        self._answered()
        return bool(answer)
