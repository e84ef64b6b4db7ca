"""A shared Redis frontier for several crawl processes: scrapy-redis 0.9.1 made fit for Scrapy 2.19.

On when ``REDIS_URL`` is in the environment (see ``blogfeeds/settings.py``): ``SCHEDULER`` is
:class:`Scheduler`, ``DUPEFILTER_CLASS`` is :class:`RFPDupeFilter`, the request queue is
scrapy-redis's ``PriorityQueue`` with the :class:`JsonRequestSerializer`, and spiders that mix
in :class:`RedisFrontierMixin` also read seeds pushed to Redis and wait for work when idle.

What scrapy-redis 0.9.1 lacks for Scrapy 2.19, each measured in ``/work/shared/research/stack.md``
§3 and fixed here:

* its ``Scheduler`` passes ``spider=`` to stats calls (a ``ScrapyDeprecationWarning`` on every
  request): :class:`Scheduler` does not;
* ``DUPEFILTER_CLASS`` left at Scrapy's default crashes start-up (``from_settings``):
  :meth:`Scheduler.from_crawler` refuses any dupefilter that is not a scrapy-redis one, with a
  clear message;
* Scrapy ≥ 2.16 never calls ``start_requests()``: :meth:`RedisFrontierMixin.frontier_seeds` is
  drained by the spider's ``async def start()``;
* scrapy-redis builds seed requests with ``dont_filter=True``, so a seed is fetched twice when a
  page links back to it: seeds here go through the dupefilter like every other request;
* a worker whose queue is momentarily empty closes (plain spider) or closes after a timer that
  starts at import (RedisSpider's class attribute): :class:`RedisFrontierMixin` waits until it
  has been idle for ``MAX_IDLE_TIME_BEFORE_CLOSE`` seconds in a row (0 = never close);
* scrapy-redis fingerprints requests itself and ignores ``REQUEST_FINGERPRINTER_CLASS``:
  :class:`RFPDupeFilter` fingerprints the normalised URL, and a blog's home page by its identity.

Beyond scrapy-redis, the frontier is at-least-once under a hard kill (SIGKILL, OOM): a request
popped from the queue is recorded in the worker's *in-flight* hash in the same Lua call, and is
only removed (*acknowledged*) once its callback has finished (child requests enqueued, items
through the pipelines) **and** the storage pipeline reports those items durable (committed or
spooled; :data:`batch_sealed` / :data:`batch_durable`). A worker restarted with the same
``BLOGFEEDS_WORKER_ID`` puts its previous run's in-flight entries back into the queue before it
starts. Enqueueing is one Lua call too (dupefilter ``SADD`` + queue ``ZADD``), so no request is
marked seen without being queued.

Redis keys, for prefix ``P`` (``BLOGFEEDS_REDIS_PREFIX``, default ``blogfeeds:``) and spider
``S``: ``P S:requests`` (queue, ZSET), ``P S:dupefilter`` (SET of SHA-1 hex fingerprints),
``P S:start_urls`` (LIST of JSON seeds), ``P S:inflight:W`` (HASH lease id → encoded request or
seed, per worker ``W``), ``P S:worker:W`` (liveness, a key with a TTL), ``P S:lease_seq``
(counter), ``P S:blog_ids`` (HASH blog id → worker that stored it) and ``P S:claims:W`` (SET of
the blog ids worker ``W`` claimed whose items are not durable yet), both written by
:class:`blogfeeds.pipelines.BlogDedupePipeline`.

Security: anyone who can write to these keys chooses what every worker fetches (and, with
scrapy-redis's default pickle serializer, runs code on every worker); keep Redis private and
password-protected (README, "Many machines with Redis").
"""

from __future__ import annotations

import json
import logging
import socket
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from hashlib import sha1
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import scrapy
from redis.exceptions import RedisError
from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.utils.asyncio import create_looping_call
from scrapy.utils.defer import deferred_from_coro
from scrapy.utils.misc import load_object
from scrapy_redis import connection
from scrapy_redis import dupefilter as redis_dupefilter
from scrapy_redis import queue as redis_queue
from scrapy_redis.scheduler import Scheduler as _RedisScheduler
from w3lib.url import canonicalize_url

logger = logging.getLogger(__name__)

LEASE_META = "frontier_lease"
"""Request meta key holding the in-flight lease id of a request popped from the frontier."""

batch_sealed = object()
"""Signal ``batch_sealed(seq: int)``: the storage pipeline took every item it had buffered into
a batch numbered ``seq`` (ascending). Sent by :class:`blogfeeds.pipelines.StoragePipeline`."""

batch_durable = object()
"""Signal ``batch_durable(seq: int)``: every batch up to ``seq`` is committed or spooled."""

storage_opened = object()
"""Signal ``storage_opened()``: a storage pipeline is on and will send the two signals above."""

DEFAULT_PREFIX = "blogfeeds:"
DEFAULT_WORKER_TTL = 15.0
DEFAULT_REDIS_DOWN_LIMIT = 60.0


def redis_prefix(settings: Any) -> str:
    """``BLOGFEEDS_REDIS_PREFIX`` (default ``blogfeeds:``), put before every Redis key."""
    value = settings.get("BLOGFEEDS_REDIS_PREFIX")
    return DEFAULT_PREFIX if value is None else str(value)


def worker_id(settings: Any) -> str:
    """``BLOGFEEDS_WORKER_ID``, else the host name: the identity whose in-flight requests a
    restarted worker takes back. Several workers on one host need distinct ids."""
    return str(settings.get("BLOGFEEDS_WORKER_ID") or socket.gethostname())


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


@dataclass(frozen=True)
class FrontierKeys:
    """The Redis keys of one spider's frontier (see the module docstring)."""

    prefix: str
    spider: str
    worker: str

    def _key(self, name: str) -> str:
        return f"{self.prefix}{self.spider}:{name}"

    @property
    def requests(self) -> str:
        return self._key("requests")

    @property
    def dupefilter(self) -> str:
        return self._key("dupefilter")

    @property
    def start_urls(self) -> str:
        return self._key("start_urls")

    @property
    def inflight(self) -> str:
        return self._key(f"inflight:{self.worker}")

    @property
    def liveness(self) -> str:
        return self._key(f"worker:{self.worker}")

    @property
    def lease_seq(self) -> str:
        return self._key("lease_seq")

    @property
    def blog_ids(self) -> str:
        return self._key("blog_ids")

    @property
    def claims(self) -> str:
        return self._key(f"claims:{self.worker}")

    @property
    def bad(self) -> str:
        return self._key("bad")

    def all(self) -> list[str]:
        """The keys shared by every worker (not the per-worker ones)."""
        return [
            self.requests,
            self.dupefilter,
            self.start_urls,
            self.lease_seq,
            self.blog_ids,
            self.bad,
        ]


def seed_payload(url: str, meta: dict[str, Any] | None = None) -> str:
    """The JSON a seed is pushed as: ``{"url": URL, "meta": {...}}`` (scrapy-redis's format)."""
    data: dict[str, Any] = {"url": url}
    if meta:
        data["meta"] = meta
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


# --- serializer ------------------------------------------------------------------------------


class JsonRequestSerializer:
    """``SCHEDULER_SERIALIZER`` storing requests as JSON instead of pickle.

    Encodes the dict of ``Request.to_dict()`` without the fields left at ``Request``'s defaults
    (``request_from_dict`` restores them): ``bytes`` become ``{"$b": latin-1 text}`` and a dict
    with non-``str`` keys (headers) ``{"$d": [[key, value], ...]}``; tuples load as lists.
    Raises ``TypeError`` naming the value for anything else (e.g. an object put in ``meta``),
    so a request that JSON cannot carry fails at enqueue instead of being half-stored. Loading
    JSON executes no code, unlike pickle; callbacks are stored by method name and must be
    methods of the spider (Scrapy's rule for any persisted request).
    """

    @staticmethod
    def dumps(obj: Any) -> bytes:
        if isinstance(obj, dict):  # fields at Request's defaults are left out (≈ 30 % smaller)
            obj = {k: v for k, v in obj.items() if k not in _DEFAULTS or v != _DEFAULTS[k]}
        return json.dumps(_to_json(obj), ensure_ascii=False, separators=(",", ":")).encode()

    @staticmethod
    def loads(data: bytes | str) -> Any:
        return _from_json(json.loads(data))


_DEFAULTS: dict[str, Any] = {
    "body": b"",
    "cookies": {},
    "headers": {},
    "flags": [],
    "cb_kwargs": {},
    "encoding": "utf-8",
    "method": "GET",
    "dont_filter": False,
    "priority": 0,
    "callback": None,
    "errback": None,
}


def _to_json(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, bytes):
        return {"$b": value.decode("latin-1")}
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not {"$b", "$d"} & value.keys():
            return {k: _to_json(v) for k, v in value.items()}
        return {"$d": [[_to_json(k), _to_json(v)] for k, v in value.items()]}
    raise TypeError(f"a request holds a {type(value).__name__} ({value!r:.80}): not JSON-able")


def _from_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    if isinstance(value, dict):
        if value.keys() == {"$b"}:
            return value["$b"].encode("latin-1")
        if value.keys() == {"$d"}:
            return {_hashable(_from_json(k)): _from_json(v) for k, v in value["$d"]}
        return {k: _from_json(v) for k, v in value.items()}
    return value


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


# --- dupefilter ------------------------------------------------------------------------------

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_url(url: str) -> str:
    """The URL the dupefilter compares: w3lib ``canonicalize_url`` (sorted query, no fragment,
    percent-escapes normalised, IDNA host) plus lower-case scheme and host, no default port and
    ``/`` for an empty path."""
    parts = urlsplit(canonicalize_url(url))
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    netloc = host if parts.port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{parts.port}"
    if parts.username or parts.password:
        netloc = parts.netloc.rsplit("@", 1)[0] + "@" + netloc
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


class RFPDupeFilter(redis_dupefilter.RFPDupeFilter):
    """The scrapy-redis dupefilter (a Redis SET of SHA-1 hex fingerprints, ≈ 80 B each) with our
    fingerprint and key prefix.

    Fingerprint: ``sha1("blog " + blog_id)`` for a blog's home-page request (``meta["blog_id"]``
    set and not a redirect), so ``http://a.example/`` and ``https://www.a.example/`` are one
    request on every worker; otherwise ``sha1(method, normalize_url(url), body)``.
    """

    @classmethod
    def from_spider(cls, spider: Any) -> RFPDupeFilter:
        settings = spider.settings
        keys = FrontierKeys(redis_prefix(settings), spider.name, worker_id(settings))
        server = connection.get_redis_from_settings(settings)
        return cls(server, key=keys.dupefilter, debug=settings.getbool("DUPEFILTER_DEBUG"))

    def request_fingerprint(self, request: scrapy.Request) -> str:
        blog = request.meta.get("blog_id")
        if blog and not request.meta.get("redirect_urls"):
            basis = f"blog {blog}"
        else:
            body = (request.body or b"").hex()
            basis = f"{request.method} {normalize_url(request.url)} {body}"
        return sha1(basis.encode("utf-8"), usedforsecurity=False).hexdigest()


# --- scheduler -------------------------------------------------------------------------------

# Pop the head of the queue and record it in-flight, atomically (a kill between the two would
# lose the request: it is in the dupefilter already). KEYS: queue, inflight, lease_seq.
_DEQUEUE = """
local data
if ARGV[1] == 'zset' then
  local head = redis.call('ZRANGE', KEYS[1], 0, 0)
  data = head[1]
  if data then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, 0) end
elseif ARGV[1] == 'fifo' then
  data = redis.call('RPOP', KEYS[1])
else
  data = redis.call('LPOP', KEYS[1])
end
if not data then return false end
local lease = 'r' .. redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[2], lease, data)
return {lease, data}
"""

# Mark seen and queue in one step; release the lease of the request it replaces (a redirect or
# retry of a popped request, or a seed). KEYS: dupefilter, queue, inflight.
# ARGV: fingerprint ('' = dont_filter), kind, score, data, lease ('' = none).
_ENQUEUE = """
local added = 1
if ARGV[1] ~= '' then added = redis.call('SADD', KEYS[1], ARGV[1]) end
if added == 1 then
  if ARGV[2] == 'zset' then
    redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
  else
    redis.call('LPUSH', KEYS[2], ARGV[4])
  end
end
if ARGV[5] ~= '' then redis.call('HDEL', KEYS[3], ARGV[5]) end
return added
"""

# Pop up to ARGV[1] seeds and record them in-flight. KEYS: start_urls, inflight, lease_seq.
_POP_SEEDS = """
local out = {}
for i = 1, tonumber(ARGV[1]) do
  local data = redis.call('LPOP', KEYS[1])
  if not data then break end
  local lease = 's' .. redis.call('INCR', KEYS[3])
  redis.call('HSET', KEYS[2], lease, data)
  out[#out + 1] = lease
  out[#out + 1] = data
end
return out
"""

# First sighting of a blog id anywhere: record it, and remember it as pending (not durable) for
# this worker. KEYS: blog_ids, claims. ARGV: blog id, worker.
CLAIM_BLOG = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('SADD', KEYS[2], ARGV[1])
  return 1
end
return 0
"""

# A restarted worker forgets the claims whose items its predecessor never made durable, so that
# the replayed requests (fetched by any worker) store them. KEYS: blog_ids, claims. ARGV: worker.
_RELEASE_CLAIMS = """
local ids = redis.call('SMEMBERS', KEYS[2])
for _, id in ipairs(ids) do
  if redis.call('HGET', KEYS[1], id) == ARGV[1] then redis.call('HDEL', KEYS[1], id) end
end
redis.call('DEL', KEYS[2])
return #ids
"""

_QUEUE_KINDS = {
    redis_queue.PriorityQueue: "zset",
    redis_queue.FifoQueue: "fifo",
    redis_queue.LifoQueue: "lifo",
}


class Scheduler(_RedisScheduler):
    """scrapy-redis's scheduler with prefixed keys, atomic enqueue/dequeue and in-flight leases.

    Settings: ``REDIS_URL`` (and scrapy-redis's ``REDIS_PARAMS``), ``BLOGFEEDS_REDIS_PREFIX``,
    ``BLOGFEEDS_WORKER_ID``, ``BLOGFEEDS_WORKER_TTL`` (seconds, default 15: how long a killed
    worker's id stays taken), ``SCHEDULER_PERSIST`` (keep the queue and dupefilter at close),
    ``SCHEDULER_FLUSH_ON_START``, ``SCHEDULER_QUEUE_CLASS`` (scrapy-redis ``PriorityQueue``,
    ``FifoQueue`` or ``LifoQueue``), ``SCHEDULER_SERIALIZER`` (a module or a dotted path to an
    object with ``loads``/``dumps``), ``DUPEFILTER_CLASS`` (a scrapy-redis ``RFPDupeFilter``).

    Stats: ``scheduler/enqueued/redis``, ``scheduler/dequeued/redis``,
    ``frontier/filtered``, ``frontier/acked``, ``frontier/recovered``, ``frontier/bad_request``,
    ``frontier/redis_outages``.

    Redis unreachable while the crawl runs (a restart, a network partition): one ERROR line;
    new requests are held in memory and queued when Redis answers again, acknowledgements wait,
    no request is popped, and the spider stays open. After ``BLOGFEEDS_REDIS_DOWN_LIMIT``
    seconds (default 60) of outage the crawl stops with finish reason ``redis_down`` (exit status
    1): the held requests are dropped, and the in-flight entries left in Redis are re-queued
    when the same worker id starts again.
    """

    df: Any
    queue: Any

    def __init__(self, server: Any, *, crawler: Any, **kwargs: Any) -> None:
        super().__init__(server, **kwargs)
        self.crawler = crawler
        self.stats = crawler.stats
        settings = crawler.settings
        self.prefix = redis_prefix(settings)
        self.worker = worker_id(settings)
        self.worker_ttl = settings.getfloat("BLOGFEEDS_WORKER_TTL", DEFAULT_WORKER_TTL)
        self.keys: FrontierKeys | None = None
        self.kind = "zset"
        self._token = uuid.uuid4().hex
        self._leases: dict[str, scrapy.Request] = {}
        self._sealed: list[tuple[int, list[str]]] = []
        self._storage = False
        self._ack_timer: Any = None
        self._liveness_timer: Any = None
        self.down_limit = settings.getfloat("BLOGFEEDS_REDIS_DOWN_LIMIT", DEFAULT_REDIS_DOWN_LIMIT)
        self._down_since: float | None = None  # monotonic time of the outage's first error
        self._held: list[scrapy.Request] = []  # enqueued while Redis was unreachable
        self._unacked: list[str] = []  # leases whose acknowledgement failed
        self._stopping = False
        self._dequeue = server.register_script(_DEQUEUE)
        self._enqueue = server.register_script(_ENQUEUE)
        self._pop_seeds = server.register_script(_POP_SEEDS)
        crawler.signals.connect(self._on_storage_opened, storage_opened)
        crawler.signals.connect(self._on_batch_sealed, batch_sealed)
        crawler.signals.connect(self._on_batch_durable, batch_durable)
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
                "frontier: set it to blogfeeds.redis_compat.RFPDupeFilter (a subclass of "
                "scrapy_redis.dupefilter.RFPDupeFilter)"
            )
        queue_cls = settings.get("SCHEDULER_QUEUE_CLASS") or "scrapy_redis.queue.PriorityQueue"
        if load_object(queue_cls) not in _QUEUE_KINDS:
            raise ValueError(
                f"SCHEDULER_QUEUE_CLASS={queue_cls!r}: use scrapy_redis.queue.PriorityQueue, "
                "FifoQueue or LifoQueue"
            )
        serializer: Any = settings.get("SCHEDULER_SERIALIZER")
        if isinstance(serializer, str):
            serializer = load_object(serializer)
        server = connection.get_redis_from_settings(settings)
        server.ping()  # fail at start-up, with the connection error, when Redis is unreachable
        prefix = redis_prefix(settings)
        return cls(
            server,
            crawler=crawler,
            persist=settings.getbool("SCHEDULER_PERSIST"),
            flush_on_start=settings.getbool("SCHEDULER_FLUSH_ON_START"),
            queue_key=f"{prefix}%(spider)s:requests",
            queue_cls=queue_cls,
            dupefilter_key=f"{prefix}%(spider)s:dupefilter",
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
        self.kind = _QUEUE_KINDS[type(self.queue)]
        if self.flush_on_start:
            self.flush()
        self._claim_worker_id()
        self._recover()
        queued = len(self.queue)
        if queued:
            logger.info("Resuming crawl (%d requests scheduled)", queued)

    def close(self, reason: str) -> None:
        for timer in (self._ack_timer, self._liveness_timer):
            if timer is not None and timer.running:
                timer.stop()
        if not self._storage:
            self._ack(self._completed())
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
            self.server.delete(
                self.keys.inflight, self.keys.start_urls, self.keys.blog_ids, self.keys.claims
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
            self._outage(exc)

    # --- Redis outages ------------------------------------------------------------------------

    def _outage(self, exc: RedisError) -> None:
        """Note a failed Redis call: log the outage's start once; past ``down_limit`` seconds,
        stop the crawl (finish reason ``redis_down``)."""
        now = time.monotonic()
        if self._down_since is None:
            self._down_since = now
            self.stats.inc_value("frontier/redis_outages")
            logger.error(
                "Redis unreachable (%s): holding new requests and retrying; the crawl stops "
                "after %.0f s (BLOGFEEDS_REDIS_DOWN_LIMIT)",
                exc,
                self.down_limit,
            )
        elif now - self._down_since >= self.down_limit and not self._stopping:
            self._stopping = True
            logger.error(
                "Redis unreachable for %.0f s: stopping the crawl (finish reason redis_down); "
                "start the same BLOGFEEDS_WORKER_ID again to re-queue what was in flight",
                now - self._down_since,
            )
            deferred_from_coro(self.crawler.engine.close_spider_async(reason="redis_down"))

    def _reachable(self) -> None:
        """A Redis call succeeded: end the outage, if any."""
        if self._down_since is not None:
            logger.info("Redis reachable again after %.1f s", time.monotonic() - self._down_since)
            self._down_since = None

    @property
    def redis_down(self) -> bool:
        """Whether the last Redis call failed (an outage in progress)."""
        return self._down_since is not None

    def _release_worker_id(self) -> None:
        assert self.keys is not None
        if self.server.get(self.keys.liveness) == self._token.encode():
            self.server.delete(self.keys.liveness)

    def _recover(self) -> None:
        """Put the previous run's in-flight entries of this worker id back to be fetched again."""
        assert self.keys is not None
        released = self.server.eval(
            _RELEASE_CLAIMS, 2, self.keys.blog_ids, self.keys.claims, self.worker
        )
        if released:
            logger.warning(
                "worker %s: released %d blog ids whose items its previous run had not stored",
                self.worker,
                released,
            )
        entries = self.server.hgetall(self.keys.inflight)
        if not entries:
            return
        requests = seeds = 0
        for lease, data in entries.items():
            pipe = self.server.pipeline(transaction=True)
            if lease.startswith(b"s"):
                pipe.lpush(self.keys.start_urls, data)
                seeds += 1
            else:
                if self.kind == "zset":
                    try:
                        priority = self.queue._decode_request(data).priority
                    except Exception:
                        priority = 0
                    pipe.zadd(self.keys.requests, {data: -priority})
                else:
                    pipe.lpush(self.keys.requests, data)
                requests += 1
            pipe.hdel(self.keys.inflight, lease)
            pipe.execute()
        self.stats.inc_value("frontier/recovered", requests + seeds)
        logger.warning(
            "worker %s: re-queued %d requests and %d seeds left in flight by its previous run "
            "(killed before they were acknowledged)",
            self.worker,
            requests,
            seeds,
        )

    # --- queue ------------------------------------------------------------------------------

    def enqueue_request(self, request: scrapy.Request) -> bool:
        """Queue ``request`` unless the shared dupefilter has seen it (False); while Redis is
        unreachable, hold it in memory to queue later (True)."""
        assert self.keys is not None
        lease = request.meta.pop(LEASE_META, None)
        if lease is not None:
            self._leases.pop(lease, None)
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
            self._outage(exc)
            return True
        self._reachable()
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
            self._outage(exc)
            return True
        self._reachable()
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
            popped = self._dequeue(
                keys=[self.keys.requests, self.keys.inflight, self.keys.lease_seq],
                args=[self.kind],
            )
        except RedisError as exc:
            self._outage(exc)
            return None
        self._reachable()
        if not popped:
            return None
        lease, data = popped[0].decode(), popped[1]
        try:
            request = self.queue._decode_request(data)
        except Exception:
            logger.exception(
                "undecodable request in %s moved to %s", self.keys.requests, self.keys.bad
            )
            self.stats.inc_value("frontier/bad_request")
            self.server.pipeline().rpush(self.keys.bad, data).hdel(
                self.keys.inflight, lease
            ).execute()
            return None
        request.meta[LEASE_META] = lease
        self._leases[lease] = request
        self.stats.inc_value("scheduler/dequeued/redis")
        return request

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
            self._outage(exc)
            return []
        self._reachable()
        return [(flat[i].decode(), flat[i + 1]) for i in range(0, len(flat), 2)]

    # --- acknowledgements -------------------------------------------------------------------

    def ack(self, leases: list[str]) -> None:
        """Forget in-flight entries: their work is done and durable."""
        self._ack(leases)

    def _ack(self, leases: list[str]) -> None:
        """Remove in-flight entries; those Redis did not take wait for the next call."""
        leases = self._unacked + leases
        self._unacked = []
        if not leases or self.keys is None:
            return
        for start in range(0, len(leases), 1000):
            chunk = leases[start : start + 1000]
            try:
                self.server.hdel(self.keys.inflight, *chunk)
            except RedisError as exc:
                self._unacked = leases[start:]
                self._outage(exc)
                return
            self.stats.inc_value("frontier/acked", len(chunk))

    def _completed(self) -> list[str]:
        """Leases of popped requests the engine has finished with (downloaded, callback done,
        children queued, items through the pipelines), removed from the tracking map.

        Reads the engine's set of requests in progress (``ExecutionEngine._slot.inprogress``,
        Scrapy 2.13–2.19); without it nothing counts as finished (safe: re-fetched after a kill).
        """
        try:
            slot = getattr(self.crawler.engine, "_slot", None)
        except RuntimeError:  # no engine: nothing runs
            return []
        in_progress = getattr(slot, "inprogress", None)
        if in_progress is None:
            return []
        done = [lease for lease, req in self._leases.items() if req not in in_progress]
        for lease in done:
            del self._leases[lease]
        return done

    def _on_storage_opened(self) -> None:
        self._storage = True

    def _on_spider_opened(self, spider: Any) -> None:
        self._liveness_timer = create_looping_call(self._renew_worker_id)
        self._liveness_timer.start(max(self.worker_ttl / 3, 0.2), now=False)
        if not self._storage:  # no storage pipeline: finished means done
            self._ack_timer = create_looping_call(lambda: self._ack(self._completed()))
            self._ack_timer.start(1.0, now=False)

    def _on_batch_sealed(self, seq: int) -> None:
        self._sealed.append((seq, self._completed()))

    def _on_batch_durable(self, seq: int) -> None:
        ready = [lease for s, leases in self._sealed if s <= seq for lease in leases]
        self._sealed = [(s, leases) for s, leases in self._sealed if s > seq]
        self._ack(ready)


# --- spider mixin ----------------------------------------------------------------------------


class RedisFrontierMixin:
    """Spider mixin, inert unless the Redis frontier is on (:func:`redis_enabled`).

    When on (:meth:`frontier` is not None), the spider's ``async def start()`` should end with
    ``async for request in self.frontier_seeds(): yield request``; seeds pushed to
    ``P <name>:start_urls`` while the crawl runs are picked up when the spider is idle. Each seed
    (``{"url": ..., "meta": {...}}``) becomes :meth:`seed_request` and goes through the shared
    dupefilter. An idle spider does not close until it has been idle (no request reaching the
    downloader, no seed) for ``MAX_IDLE_TIME_BEFORE_CLOSE`` seconds in a row; 0 = never (long-
    running workers, stopped by SIGINT/SIGTERM or scrapyd's cancel). The engine re-checks an idle
    spider every 5 s, so a close comes up to 5 s after the limit.

    Stats: ``frontier/seeds``, ``frontier/bad_seed``.
    """

    crawler: Any
    name: str
    frontier_batch: int = 100
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
            meta = payload.get("meta") or {}
            if not isinstance(meta, dict):
                raise ValueError('"meta" must be a JSON object')
            request = self.seed_request(payload["url"], dict(meta))
        except ValueError as exc:
            logger.error(
                "bad seed %r in %s: %s", data[:200], frontier.keys and frontier.keys.start_urls, exc
            )
            self.crawler.stats.inc_value("frontier/bad_seed")
            frontier.ack([lease])
            return None
        if request is None:
            frontier.ack([lease])
            return None
        self.crawler.stats.inc_value("frontier/seeds")
        request.meta[LEASE_META] = lease
        return request

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
        if scheduled:
            self._idle_since = None
            raise DontCloseSpider
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
        if self._max_idle <= 0 or now - self._idle_since < self._max_idle:
            raise DontCloseSpider
        logger.info(
            "idle for %.1f s (MAX_IDLE_TIME_BEFORE_CLOSE=%s): closing",
            now - self._idle_since,
            self._max_idle,
        )
