"""Key names and default values of the Redis frontier (like ``scrapy_redis.defaults``).

Every key of a spider's frontier is ``P S:name`` for the prefix ``P`` (``BLOGFEEDS_REDIS_PREFIX``)
and the spider name ``S``; per-worker keys end with the worker id ``W``
(``BLOGFEEDS_WORKER_ID``). :class:`FrontierKeys` spells them all.
"""

from __future__ import annotations

from dataclasses import dataclass

REDIS_PREFIX = "blogfeeds:"
"""``BLOGFEEDS_REDIS_PREFIX``: put before every key, so that crawls (and tests) share one Redis."""

WORKER_TTL = 15.0
"""``BLOGFEEDS_WORKER_TTL``: seconds a killed worker's id stays taken (its liveness key's TTL)."""

REDIS_DOWN_LIMIT = 60.0
"""``BLOGFEEDS_REDIS_DOWN_LIMIT``: seconds of Redis outage before the crawl stops."""

QUEUE_CLASS = "scrapy_redis.queue.PriorityQueue"
"""``SCHEDULER_QUEUE_CLASS`` when unset (scrapy-redis's default)."""

MAX_HELD = 64
"""``BLOGFEEDS_FRONTIER_MAX_HELD``: requests one worker holds at a time. Scrapy stops taking
requests only when its scraper holds 5 MB of responses (``SCRAPER_SLOT_MAX_ACTIVE_SIZE``, a
response counted as 1 KB at least), and the one extraction thread is slower than the
downloads: on a web of 1,000 small blogs, one worker had 728 in flight while the shared queue
held 0 to 27, and the other worker, asking every 5 s while idle, once found it empty each time.
Twice ``CONCURRENT_REQUESTS`` (32) keeps the downloads and the extraction thread busy."""

SEED_BATCH = 100
"""Seeds popped from ``P S:start_urls`` per Redis call."""

LEASE_META = "frontier_lease"
"""Request meta key holding the in-flight lease id of a request popped from the frontier."""

RECOVERED_META = "frontier_recovered"
"""Request (and seed) meta key set on what a restarted worker re-queued from its previous run's
in-flight entries: that run may have recorded offers (blog depths) whose requests it was killed
before queueing, so the page's links are offered again and the depth book's download claim
decides (:meth:`blogfeeds.crawl.admission.Admission.offer`)."""

TOKEN_META = "strategy_token"
"""Request meta key: which push of a blog this request is (a re-push makes the earlier copy
stale: :mod:`blogfeeds.crawl.order`)."""


def glob_escape(text: str) -> str:
    """``text`` matched literally in a Redis glob pattern (SCAN ``MATCH``, ``KEYS``): a prefix
    may hold ``[``, ``*``, ``?`` or ``\\``, which the pattern would read as wildcards."""
    return "".join("\\" + c if c in "\\*?[]" else c for c in text)


@dataclass(frozen=True)
class FrontierKeys:
    """The Redis keys of one spider's frontier.

    ``requests`` (the queue: a ZSET, or a LIST for FIFO/LIFO queues), ``dupefilter`` (SET of
    SHA-1 hex fingerprints), ``start_urls`` (LIST of JSON seeds), ``inflight`` (HASH lease id →
    encoded request or seed, per worker), ``liveness`` (``worker:W``, a key with a TTL held by
    the live worker of that id), ``lease_seq`` (counter of lease ids), ``blog_ids`` (HASH blog
    id → worker that stored it), ``claims`` (SET of the blog ids worker ``W`` claimed whose items
    are not durable yet), ``bad`` (LIST of requests that could not be decoded), ``depths`` (HASH
    blog id → best depth, then a space and the re-push token of the copy downloaded) and
    ``friends`` (HASH blog id → its friends' URLs, one a line, once read; '' without a
    ``DEPTH_LIMIT``) and ``domain_blogs`` (HASH hosting domain → new blogs accepted under it,
    for ``BLOGFEEDS_MAX_BLOGS_PER_DOMAIN``) and ``path_hosts`` (SET of the hosts where a blog
    under a path was read: :mod:`blogfeeds.crawl.pathhosts`).
    """

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
    def all_inflight(self) -> str:
        """SCAN pattern of every worker's in-flight hash (``inflight`` of worker ``*``)."""
        return glob_escape(self._key("inflight:")) + "*"

    def liveness_of(self, inflight_key: str) -> str:
        """The liveness key of the worker whose in-flight hash is ``inflight_key``."""
        return self._key("worker:" + inflight_key.rsplit("inflight:", 1)[1])

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

    @property
    def depths(self) -> str:
        return self._key("depths")

    @property
    def friends(self) -> str:
        return self._key("friends")

    @property
    def domain_blogs(self) -> str:
        return self._key("domain_blogs")

    @property
    def path_hosts(self) -> str:
        return self._key("path_hosts")

    def all(self) -> list[str]:
        """The keys shared by every worker (not the per-worker ones)."""
        return [
            self.requests,
            self.dupefilter,
            self.start_urls,
            self.lease_seq,
            self.blog_ids,
            self.bad,
            self.depths,
            self.friends,
            self.domain_blogs,
            self.path_hosts,
        ]
