"""Drop a repeated blog: once per crawl, and with the Redis frontier once across workers.

First of ``ITEM_PIPELINES`` (100), before :class:`~blogfeeds.pipelines.blogs.StoragePipeline`
(300); Scrapy 2.13+ signatures (``process_item(self, item)``), built by ``from_crawler``.
"""

from __future__ import annotations

import logging
from typing import Any

from redis.exceptions import RedisError
from scrapy.exceptions import DropItem

from blogfeeds.config import CrawlSettings
from blogfeeds.crawl.seen import SeenSet
from blogfeeds.frontier.connection import redis_prefix, worker_id
from blogfeeds.frontier.defaults import FrontierKeys
from blogfeeds.frontier.scheduler import redis_enabled
from blogfeeds.frontier.scripts import CLAIM_BLOG
from blogfeeds.frontier.signals import batch_durable, batch_sealed, storage_opened
from blogfeeds.items import Blog

logger = logging.getLogger(__name__)


class BlogDedupePipeline:
    """Drop a :class:`Blog` whose ``blog_id`` was already seen in this crawl.

    A drop is logged at DEBUG and counted in ``blogfeeds/duplicate_blog``; every other item passes
    unchanged. The seen ids live in memory (≈ 60–100 bytes per id); without Redis the database's
    unique key on ``blog_id`` is the cross-process guard (a repeated blog is an idempotent upsert).

    With the Redis frontier on (:func:`~blogfeeds.frontier.scheduler.redis_enabled`), every worker
    also claims each new blog id in Redis with one atomic Lua call (``HSETNX P<spider>:blog_ids
    <blog_id> <worker>``, the ``SADD`` idiom of scrapy-redis's dupefilter, also adding the id to
    the worker's pending set ``P<spider>:claims:<worker>``); 0 = a duplicate. A claim leaves the
    pending set when the storage pipeline reports its batch durable (``batch_durable``); a worker
    restarted after a hard kill releases its pending claims
    (:meth:`blogfeeds.frontier.scheduler.Scheduler.open`) before its unfinished requests are
    re-queued, so whichever worker fetches them again stores those blogs (at-least-once).
    """

    def __init__(self, stats: Any, server: Any = None, worker: str = "", capacity: int = 0) -> None:
        self.stats = stats
        self.seen = SeenSet(capacity)  # BLOGFEEDS_SEEN_CAPACITY
        self.server = server
        self.worker = worker
        self.keys: FrontierKeys | None = None
        self.crawler: Any = None
        self.prefix = ""
        self._claim: Any = None
        self._storage = False
        self._pending: list[str] = []  # claimed since the last batch_sealed
        self._unclaimed = 0  # blogs stored without a claim since Redis last answered
        self._sealed: list[tuple[int, list[str]]] = []

    @classmethod
    def from_crawler(cls, crawler: Any) -> BlogDedupePipeline:
        settings = crawler.settings
        server = None
        if redis_enabled(settings):
            from scrapy_redis import connection  # noqa: PLC0415 - only with Redis

            server = connection.get_redis_from_settings(settings)
        capacity = CrawlSettings.from_settings(settings).seen_capacity
        pipe = cls(crawler.stats, server, worker_id(settings), capacity)
        pipe.crawler = crawler
        pipe.prefix = redis_prefix(settings)
        if server is not None:
            pipe._claim = server.register_script(CLAIM_BLOG)
            crawler.signals.connect(pipe._on_storage_opened, storage_opened)
            crawler.signals.connect(pipe._on_sealed, batch_sealed)
            crawler.signals.connect(pipe._on_durable, batch_durable)
        return pipe

    def _on_storage_opened(self) -> None:
        self._storage = True

    def _redis_keys(self) -> FrontierKeys:
        if self.keys is None:
            spider = getattr(self.crawler, "spider", None)
            name = spider.name if spider is not None else "blogs"
            self.keys = FrontierKeys(self.prefix, name, self.worker)
        return self.keys

    async def first_sighting(self, blog_id: str) -> bool:
        """Record ``blog_id``; True the first time it is seen (in this process, then in Redis).

        When Redis fails (connection lost, timeout), the blog counts as seen first here: it is
        stored, once per process, without a claim (the database's unique ``blog_id`` keeps one
        row). Each such blog is counted (``blogfeeds/redis_errors``); the first of a run of
        failures is logged (ERROR), and the next claim that works says how many were stored
        unclaimed."""
        if blog_id in self.seen:
            return False
        first = True
        if self.server is not None:
            try:
                first = self._claim_in_redis(blog_id)
            except RedisError as exc:
                self.stats.inc_value("blogfeeds/redis_errors")
                if not self._unclaimed:
                    logger.error(
                        "Cannot claim blog %s in Redis, storing blogs unclaimed until it "
                        "answers: %s",
                        blog_id,
                        exc,
                    )
                self._unclaimed += 1
            else:
                if self._unclaimed:
                    logger.info("Redis claims resumed; %d blogs stored unclaimed", self._unclaimed)
                    self._unclaimed = 0
        self.seen.add(blog_id)
        return first

    def _claim_in_redis(self, blog_id: str) -> bool:
        keys = self._redis_keys()
        if not self._storage:  # nothing will report items durable: no pending claims
            return bool(self.server.hsetnx(keys.blog_ids, blog_id, self.worker))
        if not self._claim(keys=[keys.blog_ids, keys.claims], args=[blog_id, self.worker]):
            return False
        self._pending.append(blog_id)
        return True

    def _on_sealed(self, seq: int) -> None:
        self._sealed.append((seq, self._pending))
        self._pending = []

    def _on_durable(self, seq: int) -> None:
        done = [bid for s, ids in self._sealed if s <= seq for bid in ids]
        self._sealed = [(s, ids) for s, ids in self._sealed if s > seq]
        if done and self.server is not None:
            keys = self._redis_keys()
            for start in range(0, len(done), 1000):
                try:
                    self.server.srem(keys.claims, *done[start : start + 1000])
                except RedisError:  # ended with the next durable batch (the outage is logged)
                    self._sealed.insert(0, (seq, done[start:]))
                    return

    async def process_item(self, item: Any) -> Any:
        if isinstance(item, Blog) and not await self.first_sighting(item.blog_id):
            self.stats.inc_value("blogfeeds/duplicate_blog")
            raise DropItem(f"duplicate blog {item.blog_id}", log_level="DEBUG")
        return item
