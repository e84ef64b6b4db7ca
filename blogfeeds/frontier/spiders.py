"""The spider side of the frontier: seeds from Redis and waiting for work when idle.

What :class:`RedisFrontierMixin` does instead of scrapy-redis 0.9.1's ``RedisSpider``, and why:

* Scrapy ≥ 2.16 never calls ``start_requests()``: :meth:`RedisFrontierMixin.frontier_seeds` is
  drained by the spider's ``async def start()``;
* ``RedisSpider`` builds seed requests with ``dont_filter=True``, so a seed is fetched twice when
  a page links back to it: seeds here go through the shared dupefilter like every other request;
* a plain spider whose share of the queue is momentarily empty closes at once, and
  ``RedisSpider``'s idle timer starts at import (a class attribute): the mixin waits until it
  has been idle for ``MAX_IDLE_TIME_BEFORE_CLOSE`` seconds in a row (0 = never close);
* a seed popped from ``start_urls`` stays in flight until its request is queued, so a kill
  between the two does not lose it.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from redis.exceptions import RedisError
from scrapy import signals
from scrapy.exceptions import DontCloseSpider

from blogfeeds.frontier import defaults
from blogfeeds.frontier.defaults import LEASE_META
from blogfeeds.frontier.scheduler import Scheduler, redis_enabled
from blogfeeds.frontier.serializer import SEED_META_TYPES, check_meta

logger = logging.getLogger(__name__)


def seed_payload(url: str, meta: dict[str, Any] | None = None) -> str:
    """The JSON a seed is pushed as: ``{"url": URL, "meta": {...}}`` (scrapy-redis's format)."""
    data: dict[str, Any] = {"url": url}
    if meta:
        data["meta"] = meta
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


class RedisFrontierMixin:
    """Spider mixin, inert unless the Redis frontier is on (:func:`redis_enabled`).

    When on (:meth:`frontier` is not None), the spider's ``async def start()`` should end with
    ``async for request in self.frontier_seeds(): yield request``; seeds pushed to
    ``P <name>:start_urls`` while the crawl runs are picked up when the spider is idle. Each seed
    (``{"url": ..., "meta": {...}}``) becomes :meth:`seed_request` and goes through the shared
    dupefilter. An idle spider closes only after ``MAX_IDLE_TIME_BEFORE_CLOSE`` seconds in a row
    idle (no request reaching the downloader, no seed, no other live worker with requests in
    flight); 0 = never (long-running workers). The engine re-checks an idle spider every 5 s, so a
    close comes up to 5 s after the limit. A seed that cannot be read (not JSON, nested too deep,
    meta keys this project does not set, a URL that is not a blog's) is logged, moved to the
    ``bad`` list and counted; the worker goes on. Stats: docs/redis.md.
    """

    crawler: Any
    name: str
    frontier_batch: int = defaults.SEED_BATCH
    frontier_callbacks: frozenset[str] | None = None
    """Names of the methods a request read from Redis may name as callback or errback; None:
    any public method the spider's own class defines
    (:func:`blogfeeds.frontier.serializer.request_from_entry`)."""
    _frontier_on: bool = False
    _idle_since: float | None = None
    _max_idle: float = 0.0

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Any:
        spider = super().from_crawler(crawler, *args, **kwargs)  # type: ignore[misc]
        settings = crawler.settings
        spider._frontier_on = redis_enabled(settings)
        spider._max_idle = settings.getfloat("MAX_IDLE_TIME_BEFORE_CLOSE", 0.0)
        if spider._frontier_on:
            crawler.signals.connect(spider._frontier_idle, signals.spider_idle)
            crawler.signals.connect(spider._frontier_busy, signals.request_reached_downloader)
        return spider

    def frontier(self) -> Scheduler | None:
        """The Redis scheduler when the frontier is on and the crawl has started, else None.

        (A method, not a property: ``Request.to_dict`` reads every attribute of the spider.)
        """
        if not self._frontier_on:
            return None
        try:
            scheduler = self.crawler.engine.scheduler
        except (AttributeError, RuntimeError):  # no crawl running
            return None
        return scheduler if isinstance(scheduler, Scheduler) else None

    def seed_request(self, url: str, meta: dict[str, Any]) -> scrapy.Request | None:
        """The request for one Redis seed; None skips it. Override per spider."""
        return scrapy.Request(url, meta=meta)

    async def frontier_seeds(self) -> AsyncIterator[scrapy.Request]:
        """Requests for every seed waiting in Redis now (nothing when the frontier is off)."""
        for request in self._pull_seeds(unbounded=True):
            yield request

    def _pull_seeds(self, unbounded: bool = False) -> Iterator[scrapy.Request]:
        frontier = self.frontier()
        if frontier is None:
            return
        while True:
            batch = frontier.pop_seeds(self.frontier_batch)
            for lease, data in batch:
                request = self._seed_to_request(frontier, lease, data)
                if request is not None:
                    yield request
            if len(batch) < self.frontier_batch or not unbounded:
                return

    def _seed_to_request(
        self, frontier: Scheduler, lease: str, data: bytes
    ) -> scrapy.Request | None:
        try:
            try:
                payload = json.loads(data)
            except ValueError as exc:
                raise ValueError(
                    f'not JSON ({exc}): push {{"url": ...}}, as scrapy seed does'
                ) from None
            if not isinstance(payload, dict) or not isinstance(payload.get("url"), str):
                raise ValueError('expected a JSON object {"url": ..., "meta": {...}}')
            meta = check_meta(payload.get("meta") or {}, SEED_META_TYPES)
            request = self.seed_request(payload["url"], meta)
        except RedisError:
            raise
        except Exception as exc:  # any failure to read one seed (RecursionError too) is its own
            logger.error(
                "bad seed %r in %s moved to %s: %s",
                data[:200],
                frontier.keys and frontier.keys.start_urls,
                frontier.keys and frontier.keys.bad,
                f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError) else exc,
            )
            self.crawler.stats.inc_value("frontier/bad_seed")
            frontier.quarantine(lease, data, "start_urls", exc, logged=True)
            return None
        if request is None:
            frontier.ack([lease])
            return None
        self.crawler.stats.inc_value("frontier/seeds")
        request.meta[LEASE_META] = lease
        return request

    def _say_waiting(self, frontier: Scheduler | None) -> None:
        """One line when the worker runs out of work: what it waits for and until when (an
        empty frontier otherwise waits in silence)."""
        if frontier is None or frontier.keys is None:
            return
        until = (
            "until stopped (MAX_IDLE_TIME_BEFORE_CLOSE=0; Ctrl-C)"
            if self._max_idle <= 0
            else f"{self._max_idle:g} s (MAX_IDLE_TIME_BEFORE_CLOSE) before closing"
        )
        logger.info(
            "Nothing to crawl: waiting for seeds in Redis list %s (`scrapy seed URL|FILE` "
            "pushes them), %s",
            frontier.keys.start_urls,
            until,
        )

    def _frontier_busy(self, request: Any, spider: Any) -> None:
        self._idle_since = None

    def _frontier_idle(self, spider: Any) -> None:
        frontier = self.frontier()
        if frontier is not None and frontier.redis_down:  # not idle: waiting for Redis
            self._idle_since = None
            raise DontCloseSpider
        scheduled = 0
        for request in self._pull_seeds():
            self.crawler.engine.crawl(request)
            scheduled += 1
        if scheduled or (frontier is not None and frontier.others_working()):
            self._idle_since = None  # not idle while another worker's pages may queue more
            raise DontCloseSpider
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
            self._say_waiting(frontier)
        if self._max_idle <= 0 or now - self._idle_since < self._max_idle:
            raise DontCloseSpider
        logger.info(
            "idle for %.1f s (MAX_IDLE_TIME_BEFORE_CLOSE=%s): closing",
            now - self._idle_since,
            self._max_idle,
        )
