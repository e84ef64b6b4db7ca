"""``scrapy crawl feeds``: fetch every feed that is due, store new entries, plan the next visit.

Which feeds: the main feed of every blog stored by ``scrapy crawl blogs`` (``feeds.is_main =
1``) gets a ``schedule`` row, due at once when new (:meth:`FeedStore.sync_feeds`). Each run
leases the due rows (:meth:`FeedStore.claim_due`, safe with several workers on one database),
fetches them, and writes one :class:`~blogfeeds.items.FeedFetch` per feed through
:class:`blogfeeds.pipelines.feeds.FeedStorePipeline`.

Arguments (``-a``): ``feed=URL`` fetches that one feed now (added to the schedule if unknown),
due or not; ``loop=true`` keeps the spider running: when nothing is left it sleeps until the
next feed comes due (``call_later``, at most ``BLOGFEEDS_FEEDS_MAX_SLEEP`` seconds, so feeds
added by a blogs crawl are picked up), for long-lived workers under scrapyd. Without ``loop``
the spider fetches every feed due when it started, then exits.

Per fetch (all protocol rules live in :mod:`blogfeeds.revisit`, the reading in
:mod:`blogfeeds.extract.entries`):

- conditional GET: the stored ``ETag``/``Last-Modified`` are sent back byte for byte as
  ``If-None-Match``/``If-Modified-Since`` (:func:`~blogfeeds.revisit.conditional_headers`:
  unconditional again after 12 h or 20 revisit intervals, at most 7 days; a lying validator
  dropped); 304 = unchanged;
- one request at a time per host (each host's feeds are fetched one after another, on top of
  ``CONCURRENT_REQUESTS_PER_DOMAIN = 1``); a 429 or 503 with Retry-After pauses the whole host:
  its remaining feeds in this run are released and their ``next_due`` moved past the pause;
  429/503 are never retried at once (``RETRY_HTTP_CODES`` of this spider leaves them out);
- a permanent redirect (every hop 301/308) to a working feed moves the stored feed to the new
  URL; the old one is kept in ``feed_aliases``;
- a body that is not a feed (an HTML page, text, nothing, ill-formed XML without an entry) is
  a failure with status ``html``, ``other``, ``empty`` or ``broken``, never an empty feed;
  failures back off and a feed failing for two weeks becomes ``dead`` (re-checked weekly).

Settings ("Feed revisits" in :mod:`blogfeeds.settings`): ``BLOGFEEDS_REVISIT_POLICY``
(``levels`` | ``estimate``), ``BLOGFEEDS_REVISIT_BUDGET``, ``BLOGFEEDS_REVISIT_LEVEL_MODE``,
``BLOGFEEDS_REVISIT_RANK`` (0..5 or ``auto``), ``BLOGFEEDS_REVISIT_INITIAL_T``,
``BLOGFEEDS_FEEDS_LOOP``, ``BLOGFEEDS_FEEDS_BATCH``, ``BLOGFEEDS_FEEDS_MAX_SLEEP``,
``BLOGFEEDS_NOW`` (virtual start time, ISO 8601, for tests and replays).

Stats (``blogfeeds/feeds/...``): ``claimed``, ``fetched`` (responses), ``not_modified``,
``changed``, ``new_entries`` (rows inserted), ``error/<kind>``, ``html``, ``throttled``,
``host_paused``, ``moved``, ``guid_rewrite``, ``dead``, ``claim_errors`` (claims that
failed), ``release_errors`` (paused hosts' releases that failed), ``level_<n>`` (schedule rows
per level at the end; 0 = never fetched).
"""

from __future__ import annotations

import logging
import math
import os
import secrets
import socket
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any

import scrapy
from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.http import Response
from scrapy.utils.asyncio import CallLaterResult, call_later
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred, DeferredLock
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from blogfeeds.config import database_url
from blogfeeds.extensions.startup import StartupError, check_settings
from blogfeeds.extract.entries import FeedEntry, read_entries
from blogfeeds.failures import failure_status, status_for_code
from blogfeeds.items import Entry, FeedFetch
from blogfeeds.revisit import (
    DAY,
    POLICIES,
    EstimatingPolicy,
    FeedState,
    FetchOutcome,
    HostPauses,
    LevelPolicy,
    cache_lifetime,
    conditional_headers,
    is_guid_rewrite,
    level_of,
    make_policy,
    parse_retry_after,
    remember_ids,
    split_new_ids,
    to_minutes,
)
from blogfeeds.revisit.core import classify
from blogfeeds.revisit.estimate import RANK_WEIGHT
from blogfeeds.revisit.hints import header
from blogfeeds.seeds import check_url
from blogfeeds.storage.feedstore import LEASE_MINUTES, FeedStore, ScheduledFeed, host_of, iso
from blogfeeds.storage.url import blocking_io

logger = logging.getLogger(__name__)

#: Statuses handed to the callback instead of HttpErrorMiddleware (3xx go to the redirect
#: middleware; listing them here would switch redirects off).
HANDLED_STATUSES = [304, *range(400, 600)]
PERMANENT_REDIRECTS = frozenset({301, 308})
IDLE_CLAIM_ATTEMPTS = 3
"""Failed claims in a row (one per 5-second idle heartbeat) after which a run that is not in
loop mode ends with finish reason ``database_down`` (exit status 1)."""


def _truthy(value: Any) -> bool:
    return str(value).strip().lower() in {"1", "true", "yes", "on"}


def lease_owner(worker: str) -> str:
    """The ``lease_owner`` of this process's claims: ``worker:pid:random`` (≤ 255 characters).

    Unique per process even when two workers share ``BLOGFEEDS_WORKER_ID`` and a pid (two
    containers started alike both run their crawl as the same pid), so one worker never reads
    back or releases another's leases."""
    return f"{worker[:200]}:{os.getpid()}:{secrets.token_hex(4)}"


class VirtualClock:
    """Epoch minutes now: real time, or ``start`` (epoch minutes) plus the real time elapsed
    since the clock was made (tests run ``scrapy crawl feeds`` at chosen virtual times)."""

    def __init__(self, start: float | None = None) -> None:
        self.base = start if start is not None else time.time() / 60.0
        self.t0 = time.monotonic()

    def now(self) -> float:
        return self.base + (time.monotonic() - self.t0) / 60.0

    @classmethod
    def from_iso(cls, value: str | None) -> VirtualClock:
        """A clock starting at ISO 8601 ``value`` (naive = UTC); real time when empty.
        ValueError on an unreadable value."""
        if not value or not value.strip():
            return cls()
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        return cls(to_minutes(when))


@dataclass(frozen=True)
class _Read:
    """What one response came to: the policy's input, the stored status, and the entries."""

    outcome: FetchOutcome
    status: str
    entries: list[FeedEntry] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    changed: bool = False


def _level(policy: LevelPolicy | EstimatingPolicy, state: FeedState) -> int:
    """Level 1..5 of a state: the level policy's level of *T* and rank; for the estimating
    policy the highest level whose interval is ≤ the planned interval."""
    if isinstance(policy, LevelPolicy):
        return level_of(state.level_time, state.rank)
    return level_of(state.interval)


class FeedsSpider(scrapy.Spider):
    name = "feeds"
    custom_settings = {  # noqa: RUF012 - Scrapy reads it as a class attribute
        "ITEM_PIPELINES": {"blogfeeds.pipelines.feeds.FeedStorePipeline": 300},
        # Requests carry FeedState objects: Scrapy's own scheduler, even when REDIS_URL is set
        # (the cluster-wide part is the database lease, FeedStore.claim_due).
        "SCHEDULER": "scrapy.core.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter",
        # 429/503 pause the host (Retry-After); never retried at once.
        "RETRY_HTTP_CODES": [500, 502, 504, 522, 524, 408],
        "METAREFRESH_ENABLED": False,
        "DEPTH_LIMIT": 0,
        # Feeds answer faster than a database server stores them: fetches waiting for their
        # write hold their responses, so download no further ahead than 500 KB of them
        # (Scrapy's 5 MB is thousands of small feeds: 10,000-feed MySQL run, peak RSS 307 MB,
        # now 173 MB, and faster).
        "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 500_000,
    }

    def __init__(self, feed: str | None = None, loop: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.feed_arg = feed
        self.loop_arg = loop
        self.loop = False
        self.store: FeedStore | None = None
        self.policy: LevelPolicy | EstimatingPolicy = make_policy()
        self.clock = VirtualClock()
        self.rank: int | str = 0
        self.batch = 500
        self.max_sleep = 60.0
        self.database_url = ""
        self.owner = ""
        self.pauses = HostPauses()
        self.queues: dict[str, deque[ScheduledFeed]] = {}
        self.active: set[str] = set()  # hosts with a request in flight
        self.inflight: set[str] = set()  # feed URLs claimed and not yet answered
        self.run_start = 0.0
        self.timer: CallLaterResult | None = None
        self.drained = False  # the last claim got less than a batch: no refill until idle
        self.claimer: FeedStore | None = None  # MySQL: refill claims, used in a worker thread
        self.claimer_lock = DeferredLock()  # one call at a time on the claimer's connection
        self.claim: Deferred[None] | None = None  # the refill claim waiting in that thread
        self.closing = False
        self.idle_failures = 0  # failed idle claims in a row (not loop mode)

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> FeedsSpider:
        """The spider, its settings read; a bad one is a ``StartupError`` naming it (types and
        ranges by :func:`~blogfeeds.extensions.startup.check_settings`, then the policy name,
        the rank and ``BLOGFEEDS_NOW``), as is an ``-a feed=`` that is not an http(s) URL,
        before anything is opened."""
        s = crawler.settings
        check_settings(s)
        policy = s.get("BLOGFEEDS_REVISIT_POLICY", "levels")
        if policy not in POLICIES:
            problem = f"unknown revisit policy {policy!r}; expected one of {', '.join(POLICIES)}"
            raise StartupError("BLOGFEEDS_REVISIT_POLICY", problem)
        rank = str(s.get("BLOGFEEDS_REVISIT_RANK", 0)).strip().lower()
        if rank != "auto":
            try:
                number = int(rank or 0)
            except ValueError:
                number = -1
            if not 0 <= number <= 5:
                problem = f"must be 0..5 or 'auto', got {rank!r}"
                raise StartupError("BLOGFEEDS_REVISIT_RANK", problem)
        now = s.get("BLOGFEEDS_NOW") or ""
        try:
            clock = VirtualClock.from_iso(now)
            iso(clock.now() + 400 * DAY)  # a year of revisits ahead must still be a date
        except (ValueError, OverflowError, OSError):
            problem = (
                f"{now!r} is not an ISO 8601 time from 1970 to 9998 (e.g. 2026-01-31T12:00:00Z)"
            )
            raise StartupError("BLOGFEEDS_NOW", problem) from None
        feed = kwargs.get("feed")
        bad_feed = None if feed is None else check_url(feed)
        if bad_feed is not None:  # never stored: it would fail on every run
            raise StartupError("-a feed", bad_feed)
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.policy = make_policy(
            policy,
            budget_per_feed_day=s.getfloat("BLOGFEEDS_REVISIT_BUDGET", 3.0),
            level_mode=s.getbool("BLOGFEEDS_REVISIT_LEVEL_MODE", False),
            initial_time=s.getfloat("BLOGFEEDS_REVISIT_INITIAL_T", 1000.0),
        )
        spider.rank = "auto" if rank == "auto" else int(rank or 0)
        spider.loop = (
            _truthy(spider.loop_arg)
            if spider.loop_arg is not None
            else s.getbool("BLOGFEEDS_FEEDS_LOOP", False)
        )
        spider.batch = max(1, s.getint("BLOGFEEDS_FEEDS_BATCH", 50))
        spider.max_sleep = max(1.0, s.getfloat("BLOGFEEDS_FEEDS_MAX_SLEEP", 60.0))
        spider.clock = clock
        spider.database_url = database_url(s)
        spider.owner = lease_owner(s.get("BLOGFEEDS_WORKER_ID") or socket.gethostname())
        crawler.signals.connect(spider.on_idle, signals.spider_idle)
        crawler.signals.connect(spider.on_closed, signals.spider_closed)
        return spider

    # --- start, claims and per-host queues ------------------------------------------------------

    async def start(self) -> AsyncIterator[Any]:
        if not self.database_url:
            logger.error("scrapy crawl feeds needs a database: set BLOGFEEDS_DATABASE_URL")
            return
        self.store = FeedStore.open(self.database_url)
        if blocking_io(self.database_url) and not self.feed_arg:
            self.claimer = FeedStore.open(self.database_url)
        now = self.run_start = self.clock.now()
        logger.info("Feeds worker %s, virtual time %s", self.owner, iso(now))
        if isinstance(self.policy, EstimatingPolicy):
            self._warm_budget(self.policy)
        if self.feed_arg:
            rank = 0 if self.rank == "auto" else int(self.rank)
            url = self.store.add_feed(self.feed_arg, now, rank=rank)
            claims = self.store.claim_due(now, 1, self.owner, urls=[url])
            if not claims:
                logger.warning("Feed %s is being fetched by another worker", url)
        else:
            added = self.store.sync_feeds(now, self.rank)
            if added:
                logger.info("%d new feeds scheduled", added)
            claims = self.store.claim_due(now, self.batch, self.owner)
        for request in self._enqueue(claims):
            yield request

    def _warm_budget(self, policy: EstimatingPolicy) -> None:
        """Register every stored feed's rate with the fetch budget, so that κ reflects the whole
        population and not only the feeds fetched in this run (profile ignored: flat demand)."""
        assert self.store is not None
        for state in self.store.states():
            if state.rate:
                policy.budget.set_law(
                    state.feed_id, math.sqrt(RANK_WEIGHT**state.rank * state.rate / DAY)
                )

    def _due_by(self, now: float) -> float:
        """Claims take the feeds due at this time: now in loop mode, else when the run started
        (a run fetches what was due then, and ends). Leases always run from ``now``."""
        return now if self.loop else self.run_start

    def _claim_more(self) -> list[scrapy.Request]:
        """Claim the next batch on the reactor thread and return its first requests; raises what
        the store raises."""
        if self.store is None or self.feed_arg:
            return []
        now = self.clock.now()
        claims = self.store.claim_due(now, self.batch, self.owner, due_by=self._due_by(now))
        self.drained = len(claims) < self.batch
        return list(self._enqueue(claims))

    def _refill(self) -> list[scrapy.Request]:
        """The next batch, claimed as soon as fewer than half a batch of claimed feeds remain,
        so the downloader never drains between batches (``spider_idle``, the other trigger,
        comes only on the engine's 5-second heartbeat: 50 feeds every 5 s). After a claim that
        got less than a batch, nothing is due: no more claims until the next idle.

        On MySQL the claim waits for the server in a worker thread (its own connection, one
        claim at a time) and its requests are scheduled when it returns: the downloads in
        flight go on meanwhile. On SQLite, a local file, it is a call of about a millisecond
        on the reactor thread, like the pipeline's writes."""
        if self.feed_arg or self.drained or self.claim is not None:
            return []
        if len(self.inflight) >= max(1, self.batch // 2):
            return []
        if self.claimer is None:
            try:
                return self._claim_more()
            except Exception as exc:  # the next answer or spider_idle claims again
                self._claim_error(str(exc))
                return []
        now = self.clock.now()
        claim = self._in_claimer(
            self.claimer.claim_due, now, self.batch, self.owner, due_by=self._due_by(now)
        )
        self.claim = claim.addCallback(self._claimed)
        self.claim.addErrback(self._claim_failed)
        return []

    def _in_claimer(self, call: Any, *args: Any, **kwargs: Any) -> Deferred[Any]:
        """``call(*args, **kwargs)`` in a worker thread once every earlier call has returned
        (the claimer's connection serves one call at a time); fires with its result."""
        return self.claimer_lock.run(deferToThread, call, *args, **kwargs)

    def _claimed(self, claims: list[ScheduledFeed]) -> None:
        self.claim = None
        if self.closing:  # on_closed releases every lease once this claim is done
            return
        self.drained = len(claims) < self.batch
        for request in self._enqueue(claims):
            self.crawler.engine.crawl(request)

    def _claim_failed(self, failure: Failure) -> None:
        """A refill claim in the claimer's thread (or the scheduling of its requests) that
        failed: the next answer or ``spider_idle`` claims again."""
        self.claim = None
        self._claim_error(failure.getErrorMessage())

    def _claim_error(self, message: str) -> None:
        """Log and count (``claim_errors``) a claim that failed."""
        self.crawler.stats.inc_value("blogfeeds/feeds/claim_errors")
        logger.error("Cannot claim feeds: %s", message)

    def _enqueue(self, claims: Iterable[ScheduledFeed]) -> Iterator[scrapy.Request]:
        """Queue claimed feeds by host; yield the first request of every idle host."""
        self.crawler.stats.inc_value("blogfeeds/feeds/claimed", 0)
        for feed in claims:
            if feed.url in self.inflight:
                continue
            self.inflight.add(feed.url)
            self.crawler.stats.inc_value("blogfeeds/feeds/claimed")
            self.queues.setdefault(host_of(feed.url), deque()).append(feed)
        for host in list(self.queues):
            if host not in self.active:
                request = self._next_for_host(host)
                if request is not None:
                    yield request

    def _next_for_host(self, host: str) -> scrapy.Request | None:
        """The next request of ``host``, or None (queue empty, or the host paused: its queued
        feeds are released, due again when the pause ends; on MySQL in the claimer's thread,
        after any claim in flight)."""
        queue = self.queues.get(host)
        now = self.clock.now()
        paused_until = self.pauses.delay(host, now)
        if queue and paused_until > now:
            urls = [f.url for f in queue]
            self.crawler.stats.inc_value("blogfeeds/feeds/host_paused", len(urls))
            self.inflight.difference_update(urls)
            queue.clear()
            self._release_paused(host, urls, paused_until)
        if not queue:
            self.queues.pop(host, None)
            self.active.discard(host)
            return None
        self.active.add(host)
        return self._request(queue.popleft(), now)

    def _release_paused(self, host: str, urls: list[str], until: float) -> None:
        """Release a paused host's queued feeds, due again when the pause ends (epoch minutes
        ``until``), not before; on MySQL in the claimer's thread, after any claim in flight. A
        release that fails is logged and counted (``release_errors``): the leases expire after
        ``LEASE_MINUTES``."""

        def failed(message: str) -> None:
            self.crawler.stats.inc_value("blogfeeds/feeds/release_errors")
            logger.error("Cannot release the feeds of paused host %s: %s", host, message)

        if self.claimer is not None:
            release = self._in_claimer(self.claimer.release, self.owner, urls, until)
            release.addErrback(lambda failure: failed(failure.getErrorMessage()))
        elif self.store is not None:
            try:
                self.store.release(self.owner, urls, not_before=until)
            except Exception as exc:
                failed(str(exc))

    def _request(self, feed: ScheduledFeed, now: float) -> scrapy.Request:
        state = feed.state or self.policy.initial_state(feed.url, now, rank=feed.rank)
        state = replace(state, rank=feed.rank)  # the stored, user-settable RssRank wins
        validators = conditional_headers(state, now)
        headers = {k: v.encode("latin-1", "replace") for k, v in validators.items()}
        return scrapy.Request(
            feed.url,
            headers=headers,
            callback=self.parse_feed,
            errback=self.feed_failed,
            dont_filter=True,
            meta={
                "feed": feed,
                "state": state,
                "conditional": bool(validators),
                "handle_httpstatus_list": HANDLED_STATUSES,
            },
        )

    # --- responses ------------------------------------------------------------------------------

    def parse_feed(self, response: Response) -> Iterator[Any]:
        feed: ScheduledFeed = response.meta["feed"]
        state: FeedState = response.meta["state"]
        now = self.clock.now()
        self.crawler.stats.inc_value("blogfeeds/feeds/fetched")
        try:
            read = self._read(response, feed, state, now)
        except Exception:  # a bug must not stall the host's queue nor keep the lease
            logger.exception("Cannot read feed %s", feed.url)
            self.crawler.stats.inc_value("blogfeeds/feeds/error/parse_error")
            outcome = FetchOutcome(fetched_at=now, status=response.status, error="parse_error")
            read = _Read(outcome, "parse_error")
        moved_to = None
        redirects = response.meta.get("redirect_reasons") or []
        if (
            redirects
            and all(r in PERMANENT_REDIRECTS for r in redirects)
            and read.status in {"ok", "not_modified"}
            and response.url != feed.url
        ):
            moved_to = response.url
            self.crawler.stats.inc_value("blogfeeds/feeds/moved")
            logger.info("Feed %s moved permanently to %s", feed.url, moved_to)
        yield self._finish(feed, state, read, moved_to)
        request = self._next_for_host(host_of(feed.url))
        if request is not None:
            yield request
        yield from self._refill()

    def _read(self, response: Response, feed: ScheduledFeed, state: FeedState, now: float) -> _Read:
        """The fetch outcome of one response: 304, a feed (new entries by id), not a feed, or
        an HTTP error (429/503 + Retry-After: throttled)."""
        stats = self.crawler.stats
        h = response.headers
        common: dict[str, Any] = {
            "fetched_at": now,
            "status": response.status,
            "conditional": bool(response.meta.get("conditional")),
            "etag": header(h, "ETag"),
            "last_modified": header(h, "Last-Modified"),
            "max_age": cache_lifetime(h, now),
            "retry_after": parse_retry_after(header(h, "Retry-After"), now),
        }
        if response.status == 304:
            stats.inc_value("blogfeeds/feeds/not_modified")
            return _Read(FetchOutcome(**common), "not_modified")
        if not 200 <= response.status < 300:
            outcome = FetchOutcome(**common)
            if classify(outcome) == "throttled":
                return _Read(outcome, "throttled")
            status = status_for_code(response.status)
            stats.inc_value(f"blogfeeds/feeds/error/{status}")
            return _Read(outcome, status)
        doc = read_entries(response.body, h, response.url)
        if not doc.is_feed:
            stats.inc_value(f"blogfeeds/feeds/{doc.kind}")
            stats.inc_value(f"blogfeeds/feeds/error/{doc.kind}")
            logger.warning("Feed %s gave no readable feed (%s)", feed.url, doc.kind)
            return _Read(FetchOutcome(**common, error=doc.kind), doc.kind)
        unique = doc.unique_entries()
        ids = [e.key for e in unique]
        new = [e for e, fresh in zip(unique, split_new_ids(state, ids), strict=True) if fresh]
        new_dates = [e.date for e in new]
        all_dates = [e.date for e in unique]
        outcome = FetchOutcome(
            **common,
            new_entry_dates=new_dates,
            all_entry_dates=all_dates,
            ttl=doc.hints.ttl,
            skip_hours=doc.hints.skip_hours,
            skip_days=doc.hints.skip_days,
            update_period=doc.hints.update_period,
        )
        entries = new
        if is_guid_rewrite(new_dates, all_dates, state.newest_claimed):
            # Old entries re-keyed (http -> https GUIDs): store only those newer than anything
            # seen, as the policies count them (blogfeeds.revisit.hints.is_guid_rewrite).
            stats.inc_value("blogfeeds/feeds/guid_rewrite")
            logger.info("Feed %s re-keyed its entries (GUID rewrite)", feed.url)
            newest = state.newest_claimed or now
            entries = [e for e in new if e.date is not None and e.date > newest]
        changed = bool(entries) and state.last_success is not None
        return _Read(outcome, "ok", entries, ids, changed)

    def feed_failed(self, failure: Failure) -> list[Any]:
        request = failure.request  # type: ignore[attr-defined]
        feed: ScheduledFeed = request.meta["feed"]
        state: FeedState = request.meta["state"]
        kind = failure_status(failure)
        self.crawler.stats.inc_value(f"blogfeeds/feeds/error/{kind}")
        logger.info("Feed %s failed: %s", feed.url, kind)
        outcome = FetchOutcome(fetched_at=self.clock.now(), status=0, error=kind)
        out: list[Any] = [self._finish(feed, state, _Read(outcome, kind), None)]
        nxt = self._next_for_host(host_of(feed.url))
        if nxt is not None:
            out.append(nxt)
        return out + self._refill()

    def _finish(
        self, feed: ScheduledFeed, state: FeedState, read: _Read, moved_to: str | None
    ) -> FeedFetch:
        """Apply the policy and build the item the pipeline stores."""
        stats = self.crawler.stats
        outcome, status = read.outcome, read.status
        new_state = self.policy.next_state(state, outcome)
        if read.ids:
            new_state = remember_ids(new_state, read.ids)
        pause_until = None
        if classify(outcome) == "throttled":
            host = host_of(feed.url)
            self.pauses.note(host, new_state)
            stats.inc_value("blogfeeds/feeds/throttled")
            until = new_state.host_pause_until
            pause_until = iso(until) if until is not None else None
            logger.info("Host %s asked for a pause until %s", host, pause_until)
        if new_state.dead:
            status = "dead"
            stats.inc_value("blogfeeds/feeds/dead")
        if read.changed:
            stats.inc_value("blogfeeds/feeds/changed")
        self.inflight.discard(feed.url)
        fetched_at = iso(outcome.fetched_at)
        url = moved_to or feed.url
        return FeedFetch(
            feed_url=feed.url,
            fetched_at=fetched_at,
            status=status,
            http_status=outcome.status,
            state=asdict(new_state),
            level=_level(self.policy, new_state),
            entries=[
                Entry(
                    feed_url=url,
                    guid=e.key,
                    link=e.link,
                    title=e.title,
                    author=e.author,
                    published=e.published,
                    updated=e.updated,
                    summary=e.summary,
                    first_seen=fetched_at,
                )
                for e in read.entries
            ],
            moved_to=moved_to,
            blog_id=feed.blog_id,
            changed=read.changed,
            host_pause_until=pause_until,
            lease_owner=self.owner,
        )

    # --- idle: more feeds, or sleep until the next one is due -----------------------------------

    def on_idle(self) -> None:
        if self.store is None:
            return
        if self.claim is not None:  # its requests are on their way
            raise DontCloseSpider
        self.drained = False
        if self.loop:
            if self.timer is None:
                self._wake()
            raise DontCloseSpider
        # Feeds due when this run started that other claims left (more than one batch).
        try:
            requests = self._claim_more()
        except Exception as exc:
            self._claim_error(str(exc))
            self.idle_failures += 1
            if self.idle_failures >= IDLE_CLAIM_ATTEMPTS:
                raise CloseSpider("database_down") from exc
            raise DontCloseSpider from exc  # claimed again on the next idle heartbeat (5 s)
        self.idle_failures = 0
        if requests:
            for request in requests:
                self.crawler.engine.crawl(request)
            raise DontCloseSpider

    def _wake(self) -> None:
        """Loop mode: fetch what is due now, else sleep until the next feed is due. A database
        error is logged and counted (``claim_errors``), and the worker tries again after
        ``BLOGFEEDS_FEEDS_MAX_SLEEP`` seconds: a long-lived worker outlives a database restart."""
        self.timer = None
        if self.store is None:
            return
        now = self.clock.now()
        try:
            self.store.sync_feeds(now, self.rank)
            requests = self._claim_more()
            due = None if requests else self.store.next_due(now)
        except Exception as exc:
            self._claim_error(str(exc))
            self.timer = call_later(self.max_sleep, self._wake)
            return
        for request in requests:
            self.crawler.engine.crawl(request)
        if requests:
            return  # spider_idle comes again once they are done
        delay = self.max_sleep if due is None else min(max((due - now) * 60.0, 0.0), self.max_sleep)
        self.timer = call_later(delay + 0.05, self._wake)

    async def on_closed(self, reason: str) -> None:
        """Release every lease this worker holds and close the stores; with a refill claim or a
        release in flight (a close by signal or by a CLOSESPIDER limit), once it has committed,
        so that a claim's leases are released too (Scrapy awaits this handler)."""
        self.closing = True
        if self.claimer is not None:
            # Every earlier claim and release on the claimer's connection has returned.
            await maybe_deferred_to_future(self.claimer_lock.acquire())
            self.claimer_lock.release()
            self.claimer.close()
            self.claimer = None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.store is None:
            return
        try:
            self.store.release(self.owner)
            for level, count in sorted(self.store.level_counts().items()):
                self.crawler.stats.set_value(f"blogfeeds/feeds/level_{level}", count)
        except Exception as exc:
            logger.error(
                "Cannot release this worker's leases (they expire in %d minutes): %s",
                LEASE_MINUTES,
                exc,
            )
        finally:
            self.store.close()
            self.store = None
