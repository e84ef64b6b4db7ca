"""The frontier's ``SCHEDULER``: scrapy-redis 0.9.1's scheduler with prefixed keys, atomic
enqueue/dequeue in Lua and in-flight leases. What it changes in scrapy-redis's, and why:

* no ``spider=`` argument to stats calls (deprecated in Scrapy 2.19: one
  ``ScrapyDeprecationWarning`` per request), and no deprecated ``spider.log()`` at open;
* a ``DUPEFILTER_CLASS`` that is not scrapy-redis's (Scrapy's default) makes scrapy-redis crash
  at start-up on ``from_settings``: :meth:`Scheduler.from_crawler` refuses it with a message
  naming the class to use;
* marking a request seen and queueing it is one Lua call (scrapy-redis: two round trips, so a
  kill between them loses the request), and so is popping it and recording it in flight
  (:mod:`blogfeeds.frontier.leases`);
* Redis unreachable mid-crawl holds new requests in memory and keeps the spider open
  (:mod:`blogfeeds.frontier.outage`);
* one worker process per worker id, through a liveness key with a TTL.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import scrapy
from redis.exceptions import RedisError
from scrapy import signals
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.misc import load_object
from scrapy_redis import dupefilter as redis_dupefilter
from scrapy_redis import queue as redis_queue
from scrapy_redis.scheduler import Scheduler as _RedisScheduler

from blogfeeds.config import FrontierSettings
from blogfeeds.frontier import defaults, scripts
from blogfeeds.frontier.connection import redis_prefix, server
from blogfeeds.frontier.defaults import LEASE_META, FrontierKeys
from blogfeeds.frontier.leases import Leases, engine_in_progress
from blogfeeds.frontier.outage import RedisOutage
from blogfeeds.frontier.serializer import BadEntry, request_from_entry
from blogfeeds.frontier.signals import batch_durable, batch_sealed, storage_opened

logger = logging.getLogger(__name__)

_QUEUE_KINDS = {  # the queue kind the Lua scripts are told (blogfeeds.frontier.scripts)
    redis_queue.PriorityQueue: "zset",
    redis_queue.FifoQueue: "fifo",
    redis_queue.LifoQueue: "lifo",
}


def redis_enabled(settings: Any) -> bool:
    """True when ``SCHEDULER`` is :class:`Scheduler` (or a subclass): the Redis frontier is on."""
    path = settings.get("SCHEDULER")
    if not path:
        return False
    try:
        cls = load_object(path) if isinstance(path, str) else path
    except (ImportError, NameError, ValueError):
        return False
    return isinstance(cls, type) and issubclass(cls, Scheduler)


class Scheduler(_RedisScheduler):
    """scrapy-redis's scheduler with prefixed keys, atomic enqueue/dequeue and in-flight leases.

    Settings (``REDIS_URL``, ``BLOGFEEDS_REDIS_PREFIX``, ``BLOGFEEDS_WORKER_ID``,
    ``BLOGFEEDS_FRONTIER_MAX_HELD``, scrapy-redis's ``SCHEDULER_*`` and ``DUPEFILTER_CLASS``) and
    stats: docs/redis.md.

    A queued entry is rebuilt only as far as this project writes requests
    (:func:`~blogfeeds.frontier.serializer.request_from_entry`: no class imported, callbacks
    only the spider's own methods, allow-listed meta keys); any other entry is moved to the
    ``bad`` list (:meth:`quarantine`) and the crawl goes on. Redis unreachable while the crawl
    runs: new requests are held in memory, no request is popped and the spider stays open, until
    ``BLOGFEEDS_REDIS_DOWN_LIMIT`` seconds of outage stop the crawl (``redis_down``); the
    in-flight entries left in Redis are re-queued when the same worker id starts again.
    """

    df: Any
    queue: Any

    def __init__(self, server: Any, *, crawler: Any, **kwargs: Any) -> None:
        super().__init__(server, **kwargs)
        self.crawler = crawler
        self.stats = crawler.stats
        settings = crawler.settings
        config = FrontierSettings.from_settings(settings)
        self.prefix = config.redis_prefix
        self.worker = config.worker
        self.worker_ttl = config.worker_ttl
        self.max_held = config.max_held
        self.keys: FrontierKeys | None = None
        self.kind = "zset"
        self._token = uuid.uuid4().hex
        self._storage = False
        self._ack_timer: Any = None
        self._liveness_timer: Any = None
        self.outage = RedisOutage(crawler, config.redis_down_limit)
        self.leases = Leases(server, crawler, self.outage)
        self._held: list[scrapy.Request] = []  # enqueued while Redis was unreachable
        self._quarantined: set[str] = set()  # kinds of bad entries logged already
        self._dequeue = server.register_script(scripts.DEQUEUE)
        self._enqueue = server.register_script(scripts.ENQUEUE)
        self._pop_seeds = server.register_script(scripts.POP_SEEDS)
        crawler.signals.connect(self._on_storage_opened, storage_opened)
        crawler.signals.connect(self.leases.seal, batch_sealed)
        crawler.signals.connect(self.leases.durable, batch_durable)
        crawler.signals.connect(self._on_spider_opened, signals.spider_opened)

    @classmethod
    def from_crawler(cls, crawler: Any) -> Scheduler:
        settings = crawler.settings
        dupefilter_cls = load_object(settings.get("DUPEFILTER_CLASS"))
        if not (
            isinstance(dupefilter_cls, type)
            and issubclass(dupefilter_cls, redis_dupefilter.RFPDupeFilter)
        ):
            raise ValueError(
                f"DUPEFILTER_CLASS={settings.get('DUPEFILTER_CLASS')!r} cannot share a Redis "
                "frontier: set it to blogfeeds.frontier.dupefilter.RFPDupeFilter (a subclass of "
                "scrapy_redis.dupefilter.RFPDupeFilter)"
            )
        queue_cls = settings.get("SCHEDULER_QUEUE_CLASS") or defaults.QUEUE_CLASS
        if load_object(queue_cls) not in _QUEUE_KINDS:
            raise ValueError(
                f"SCHEDULER_QUEUE_CLASS={queue_cls!r}: use scrapy_redis.queue.PriorityQueue, "
                "FifoQueue or LifoQueue"
            )
        serializer: Any = settings.get("SCHEDULER_SERIALIZER")
        if isinstance(serializer, str):
            serializer = load_object(serializer)
        redis = server(settings)
        redis.ping()  # fail at start-up, with the connection error, when Redis is unreachable
        # scrapy-redis fills in the spider name of its queue and dupefilter keys at open
        template = FrontierKeys(redis_prefix(settings), "%(spider)s", "")
        return cls(
            redis,
            crawler=crawler,
            persist=settings.getbool("SCHEDULER_PERSIST"),
            flush_on_start=settings.getbool("SCHEDULER_FLUSH_ON_START"),
            queue_key=template.requests,
            queue_cls=queue_cls,
            dupefilter_key=template.dupefilter,
            dupefilter_cls=settings.get("DUPEFILTER_CLASS"),
            idle_before_close=settings.getint("SCHEDULER_IDLE_BEFORE_CLOSE"),
            serializer=serializer,
        )

    # --- lifecycle --------------------------------------------------------------------------

    def open(self, spider: Any) -> None:
        # scrapy-redis's open(), without its deprecated spider.log() call
        self.spider = spider
        self.queue = load_object(self.queue_cls)(
            server=self.server,
            spider=spider,
            key=self.queue_key % {"spider": spider.name},
            serializer=self.serializer,
        )
        if not self.df:
            self.df = load_object(self.dupefilter_cls).from_spider(spider)
        self.keys = FrontierKeys(self.prefix, spider.name, self.worker)
        self.leases.keys = self.keys
        self.kind = _QUEUE_KINDS[type(self.queue)]
        if self.flush_on_start:
            self.flush()
        self._claim_worker_id()
        self.leases.recover(self.kind, self.decode, self.queue._encode_request, self.quarantine)
        queued = len(self.queue)
        if queued:
            logger.info("Resuming crawl (%d requests scheduled)", queued)

    def close(self, reason: str) -> None:
        for timer in (self._ack_timer, self._liveness_timer):
            if timer is not None and timer.running:
                timer.stop()
        if not self._storage:
            self.leases.ack(self.leases.completed())
        try:
            if self.keys is not None:
                unacked = self.server.hlen(self.keys.inflight)
                if unacked:
                    logger.warning(
                        "%d in-flight requests of worker %s are not acknowledged (items not "
                        "durable); they are re-queued when this worker id starts again",
                        unacked,
                        self.worker,
                    )
                self._release_worker_id()
            if not self.persist:
                self.flush()
        except RedisError as exc:
            logger.error(
                "Redis unreachable at close (%s): %d held requests dropped; this worker id's "
                "in-flight requests are re-queued when it starts again",
                exc,
                len(self._held),
            )

    def flush(self) -> None:
        super().flush()
        if self.keys is not None:
            keys = self.keys
            self.server.delete(
                keys.inflight,
                keys.start_urls,
                keys.blog_ids,
                keys.claims,
                keys.depths,
                keys.friends,
            )

    def _claim_worker_id(self) -> None:
        """Take the liveness key of our worker id, waiting out a killed predecessor's TTL."""
        assert self.keys is not None
        ttl_ms = int(self.worker_ttl * 1000)
        deadline = time.monotonic() + self.worker_ttl + 1
        warned = False
        while not self.server.set(self.keys.liveness, self._token, nx=True, px=ttl_ms):
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"worker id {self.worker!r} is in use by a live worker "
                    f"({self.keys.liveness}): give each worker its own BLOGFEEDS_WORKER_ID"
                )
            if not warned:
                logger.warning(
                    "worker id %s is taken (a live worker, or a killed one whose key expires "
                    "within %.0f s); waiting",
                    self.worker,
                    self.worker_ttl,
                )
                warned = True
            time.sleep(0.25)

    def _renew_worker_id(self) -> None:
        assert self.keys is not None
        try:
            self.server.set(self.keys.liveness, self._token, px=int(self.worker_ttl * 1000))
        except RedisError as exc:
            self.outage.failed(exc)

    def _release_worker_id(self) -> None:
        assert self.keys is not None
        if self.server.get(self.keys.liveness) == self._token.encode():
            self.server.delete(self.keys.liveness)

    def others_working(self) -> bool:
        """Whether another live worker holds requests in flight, whose pages may still queue
        more; a dead worker's leases do not count (they wait for its restart). False when Redis
        cannot say."""
        assert self.keys is not None
        try:
            for key in self.server.scan_iter(match=self.keys.all_inflight, count=100):
                name = key.decode() if isinstance(key, bytes) else key
                if name == self.keys.inflight:
                    continue
                if self.server.hlen(name) and self.server.exists(self.keys.liveness_of(name)):
                    return True
        except RedisError as exc:
            self.outage.failed(exc)
        return False

    @property
    def redis_down(self) -> bool:
        """Whether the last Redis call failed (an outage in progress)."""
        return self.outage.active

    # --- queue ------------------------------------------------------------------------------

    def enqueue_request(self, request: scrapy.Request) -> bool:
        """Queue ``request`` unless the shared dupefilter has seen it (False); while Redis is
        unreachable, hold it in memory to queue later (True)."""
        assert self.keys is not None
        lease = request.meta.pop(LEASE_META, None)
        if lease is not None:
            self.leases.forget(lease)
        fingerprint = "" if request.dont_filter else self.df.request_fingerprint(request)
        data = self.queue._encode_request(request)
        try:
            added = self._enqueue(
                keys=[self.keys.dupefilter, self.keys.requests, self.keys.inflight],
                args=[fingerprint, self.kind, -request.priority, data, lease or ""],
            )
        except RedisError as exc:
            if lease is not None:  # its in-flight entry goes when it is queued
                request.meta[LEASE_META] = lease
            self._held.append(request)
            self.outage.failed(exc)
            return True
        self.outage.reachable()
        if not added:
            self.df.log(request, self.spider)
            self.stats.inc_value("frontier/filtered")
            return False
        self.stats.inc_value("scheduler/enqueued/redis")
        return True

    def has_pending_requests(self) -> bool:
        """Whether requests are queued (held ones included); True while Redis is unreachable,
        so that the spider stays open and tries again."""
        if self._held:
            return True
        try:
            pending = len(self.queue) > 0
        except RedisError as exc:
            self.outage.failed(exc)
            return True
        self.outage.reachable()
        return pending

    def next_request(self) -> scrapy.Request | None:
        assert self.keys is not None
        try:
            if self._held:  # queued first: Redis may have come back
                held, self._held = self._held, []
                for request in held:
                    self.enqueue_request(request)
                if self._held:  # still unreachable
                    return None
                logger.info("queued the %d requests held while Redis was unreachable", len(held))
            if self._holds_enough():
                return None
            popped = self._dequeue(
                keys=[self.keys.requests, self.keys.inflight, self.keys.lease_seq],
                args=[self.kind],
            )
        except RedisError as exc:
            self.outage.failed(exc)
            return None
        self.outage.reachable()
        if not popped:
            return None
        lease, data = popped[0].decode(), popped[1]
        try:
            request = self.decode(data)
        except Exception as exc:
            self.quarantine(lease, data, self.keys.requests, exc)
            self.stats.inc_value("frontier/bad_request")
            return None
        request.meta[LEASE_META] = lease
        self.leases.track(lease, request)
        self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def _holds_enough(self) -> bool:
        """Whether the engine already holds ``BLOGFEEDS_FRONTIER_MAX_HELD`` requests: the next
        stays queued for any worker (the engine asks again as each request finishes)."""
        if not self.max_held:
            return False
        held = engine_in_progress(self.crawler)
        return held is not None and len(held) >= self.max_held

    def decode(self, data: bytes) -> scrapy.Request:
        """The request of a queued entry; :class:`~blogfeeds.frontier.serializer.BadEntry` (or
        the serializer's error) for an entry this project did not write."""
        return request_from_entry(self.serializer.loads(data), self.spider)

    def quarantine(
        self, lease: str, data: bytes, source: str, exc: Exception, *, logged: bool = False
    ) -> None:
        """Move the in-flight entry ``lease`` (read from ``source``) to the ``bad`` list: it
        could not be decoded or failed the allow-list. Counted under
        ``frontier/quarantined/<kind>``; the first entry of each kind is logged as an ERROR,
        the others at DEBUG (all at DEBUG when the caller has ``logged`` it)."""
        assert self.keys is not None
        kind = exc.kind if isinstance(exc, BadEntry) else type(exc).__name__
        self.stats.inc_value(f"frontier/quarantined/{kind}")
        level = logging.DEBUG if logged or kind in self._quarantined else logging.ERROR
        self._quarantined.add(kind)
        logger.log(
            level,
            "entry %r from %s moved to %s (%s: %.200s); further entries of this kind are "
            "logged at DEBUG",
            data[:120],
            source,
            self.keys.bad,
            kind,
            exc,
        )
        try:
            self.server.pipeline().rpush(self.keys.bad, data).hdel(
                self.keys.inflight, lease
            ).execute()
        except RedisError as error:  # stays in flight: quarantined again at the next start
            self.outage.failed(error)

    def pop_seeds(self, count: int) -> list[tuple[str, bytes]]:
        """Up to ``count`` seeds from ``P S:start_urls`` as ``(lease, JSON bytes)``, recorded
        in flight until the request made from each is queued (:meth:`enqueue_request`) or
        :meth:`ack` is called for it."""
        assert self.keys is not None
        try:
            flat = self._pop_seeds(
                keys=[self.keys.start_urls, self.keys.inflight, self.keys.lease_seq], args=[count]
            )
        except RedisError as exc:
            self.outage.failed(exc)
            return []
        self.outage.reachable()
        return [(flat[i].decode(), flat[i + 1]) for i in range(0, len(flat), 2)]

    # --- acknowledgements -------------------------------------------------------------------

    def ack(self, leases: list[str]) -> None:
        """Forget in-flight entries: their work is done and durable."""
        self.leases.ack(leases)

    def _on_storage_opened(self) -> None:
        self._storage = True

    def _on_spider_opened(self, spider: Any) -> None:
        self._liveness_timer = create_looping_call(self._renew_worker_id)
        self._liveness_timer.start(max(self.worker_ttl / 3, 0.2), now=False)
        if not self._storage:  # no storage pipeline: finished means done
            self._ack_timer = create_looping_call(lambda: self.leases.ack(self.leases.completed()))
            self._ack_timer.start(1.0, now=False)
