"""``scrapy crawl feeds``: fetch every feed that is due, store new entries, plan the next visit.

Which feeds: the main feed of every blog stored by ``scrapy crawl blogs`` (``feeds.is_main =
1``) gets a ``schedule`` row, due at once when new (:meth:`FeedStore.sync_feeds`). Each run
leases the due rows (:meth:`FeedStore.claim_due`, safe with several workers on one database),
fetches them, and writes one :class:`~blogfeeds.items.FeedFetch` per feed through
:class:`blogfeeds.pipelines.feeds.FeedStorePipeline`. Arguments (``feed=URL``, ``loop=true``),
what each fetch does, settings (:class:`blogfeeds.feedcrawl.config.FeedsConfig`) and stats:
docs/revisiting.md.

The spider routes: the protocol rules live in :mod:`blogfeeds.revisit`, the reading of a
response in :mod:`blogfeeds.feedcrawl.response` and :mod:`blogfeeds.extract.feedreader`, claims
and host queues in :mod:`blogfeeds.feedcrawl`. A feed is read in the crawl's extraction threads
(``BLOGFEEDS_EXTRACT_THREADS``, as the ``blogs`` spider reads pages), so a big feed never holds
the reactor.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import replace
from typing import Any

import scrapy
from scrapy import signals
from scrapy.http import Response
from twisted.python.failure import Failure

from blogfeeds.config import WebSubSettings, database_url
from blogfeeds.crawl.optoutfile import OptedOut
from blogfeeds.crawl.urls import check_url
from blogfeeds.extensions.startup import check_settings
from blogfeeds.extract.runner import Run, inline
from blogfeeds.failures import failure_reason, failure_status
from blogfeeds.feedcrawl.claims import Claims, lease_owner
from blogfeeds.feedcrawl.clock import VirtualClock
from blogfeeds.feedcrawl.config import FeedsConfig
from blogfeeds.feedcrawl.hostqueue import HostQueues
from blogfeeds.feedcrawl.item import fetch_item
from blogfeeds.feedcrawl.response import FetchRead, permanent_move, read_response
from blogfeeds.feedcrawl.summary import Tally, next_due_text
from blogfeeds.items import FeedFetch
from blogfeeds.middlewares.ssrf import TargetRefused
from blogfeeds.option import StartupError
from blogfeeds.revisit import EstimatingPolicy, FeedState, LevelPolicy, conditional_headers
from blogfeeds.revisit.core import classify
from blogfeeds.revisit.push import with_push
from blogfeeds.spiders.arguments import warn_unknown_arguments
from blogfeeds.storage.feedstore import FeedStore, ScheduledFeed, iso, slot_of
from blogfeeds.storage.url import blocking_io
from blogfeeds.threads import extract_runner

logger = logging.getLogger(__name__)

#: Statuses handed to the callback instead of HttpErrorMiddleware (3xx go to the redirect
#: middleware; listing them here would switch redirects off).
HANDLED_STATUSES = [304, *range(400, 600)]


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
        # (Scrapy's 5 MB is thousands of small feeds).
        "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 500_000,
    }

    def __init__(self, feed: str | None = None, loop: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        warn_unknown_arguments(kwargs, ("feed", "loop", "all"))
        self.feed_arg = feed
        self.config = FeedsConfig()
        self.store: FeedStore | None = None
        self.claimer: FeedStore | None = None  # MySQL: refill claims, used in a worker thread
        self.claims: Claims | None = None
        self.hosts = HostQueues()
        self.policy: LevelPolicy | EstimatingPolicy = self.config.make_policy()
        self.clock = VirtualClock()
        self.database_url = ""
        self.owner = ""
        self.run_tally: Tally | None = None  # what this run did
        self.pass_tally: Tally | None = None  # loop mode: what this pass did
        self.summary: str | None = None  # logged last, when the engine has stopped
        self.said_due: float | None = None  # loop mode: the due time last logged
        self.websub = WebSubSettings()
        self.run: Run = inline  # the crawl's extraction threads once from_crawler has run

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> FeedsSpider:
        """The spider, its settings read; a bad one is a ``StartupError`` naming it (types and
        ranges by :func:`~blogfeeds.extensions.startup.check_settings`, then
        :meth:`FeedsConfig.from_settings`), as is an ``-a feed=`` that is not an http(s) URL,
        before anything is opened."""
        s = crawler.settings
        check_settings(s)
        config = FeedsConfig.from_settings(s, loop=kwargs.get("loop"), everything=kwargs.get("all"))
        feed = kwargs.get("feed")
        bad_feed = None if feed is None else check_url(feed)
        if bad_feed is not None:  # never stored: it would fail on every run
            raise StartupError("-a feed", bad_feed)
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.config = config
        spider.policy = config.make_policy()
        spider.run = extract_runner(crawler)  # before the clock: its warm-up takes a second
        spider.clock = VirtualClock(config.start)
        spider.database_url = database_url(s)
        spider.owner = lease_owner(config.worker)
        spider.websub = WebSubSettings.from_settings(s)
        crawler.signals.connect(spider.on_idle, signals.spider_idle)
        crawler.signals.connect(spider.on_closed, signals.spider_closed)
        # After Scrapy's stats dump (logged when spider_closed handlers are done): the summary
        # is the last thing a user reads.
        crawler.signals.connect(spider.log_summary, signals.engine_stopped)
        return spider

    # --- start: the first claim -----------------------------------------------------------------

    async def start(self) -> AsyncIterator[Any]:
        if not self.database_url:
            logger.error("scrapy crawl feeds needs a database: set BLOGFEEDS_DATABASE_URL")
            return
        self.store = FeedStore.open(self.database_url)
        if blocking_io(self.database_url) and not self.feed_arg:
            self.claimer = FeedStore.open(self.database_url)
        now = self.clock.now()
        self.claims = Claims(
            self.store,
            self.claimer,
            self.config,
            owner=self.owner,
            clock=self.clock,
            started=now,
            stats=self.crawler.stats,
            single=bool(self.feed_arg),
        )
        self.run_tally = Tally(self.crawler.stats)
        self.pass_tally = Tally(self.crawler.stats)
        self.claims.on_sleep = self.on_sleep
        logger.info("Feeds worker %s: %s", self.owner, self._task(now))
        if isinstance(self.policy, EstimatingPolicy):
            self.policy.warm(self.store.states())
        for request in self._enqueue(self.claims.first(now, self.feed_arg)):
            yield request

    def _task(self, now: float) -> str:
        """What this run does, for its first line."""
        if self.feed_arg:
            task = f"fetching {self.feed_arg} now"
        elif self.config.loop:
            task = "fetching feeds as they come due, until stopped (loop)"
        else:
            task = f"fetching the feeds due at {iso(now)}, then exiting"
        if self.config.start is not None:  # the time set, not the clock's: it runs from there
            task += f"; virtual time {iso(self.config.start)} (BLOGFEEDS_NOW)"
        return task

    # --- per-host queues ------------------------------------------------------------------------

    def _enqueue(self, claims: Iterable[ScheduledFeed]) -> Iterator[scrapy.Request]:
        """Queue claimed feeds by host; yield the first request of every idle host."""
        self.crawler.stats.inc_value("blogfeeds/feeds/claimed", self.hosts.add(claims))
        for host in self.hosts.idle_hosts():
            request = self._next_for_host(host)
            if request is not None:
                yield request

    def _deliver(self, claims: list[ScheduledFeed]) -> int:
        """Queue feeds claimed outside a callback and schedule their requests; how many."""
        requests = list(self._enqueue(claims))
        for request in requests:
            self.crawler.engine.crawl(request)
        return len(requests)

    def _next_for_host(self, host: str) -> scrapy.Request | None:
        """The next request of ``host``, or None (queue empty, or the host paused: its queued
        feeds are released, due again when the pause ends)."""
        now = self.clock.now()
        paused = self.hosts.drop_paused(host, now)
        if paused is not None and self.claims is not None:
            urls, until = paused
            self.crawler.stats.inc_value("blogfeeds/feeds/host_paused", len(urls))
            self.claims.release_paused(host, urls, until)
        feed = self.hosts.next(host)
        return None if feed is None else self._request(feed, now)

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

    def _refill(self) -> list[scrapy.Request]:
        if self.claims is None:
            return []
        claims = self.claims.refill(self.clock.now(), len(self.hosts.inflight), self._deliver)
        return list(self._enqueue(claims))

    # --- responses ------------------------------------------------------------------------------

    async def parse_feed(self, response: Response) -> list[Any]:
        feed: ScheduledFeed = response.meta["feed"]
        state: FeedState = response.meta["state"]
        now = self.clock.now()
        self.crawler.stats.inc_value("blogfeeds/feeds/fetched")
        try:  # in the extraction threads: a big feed does not hold the reactor
            read = await self.run(
                read_response,
                feed.url,
                state,
                now,
                status=response.status,
                headers=response.headers,
                body=response.body,
                url=response.url,
                conditional=bool(response.meta.get("conditional")),
            )
        except Exception as exc:  # a bug must not stall the host's queue nor keep the lease
            logger.exception("Cannot read feed %s", feed.url)
            reason = f"cannot read it: {failure_reason(exc)}"
            read = FetchRead.failure(now, "parse_error", reason, response.status)
        redirects = response.meta.get("redirect_reasons") or []
        moved_to = permanent_move(feed.url, response.url, redirects, read.status)
        if moved_to is not None:
            self.crawler.stats.inc_value("blogfeeds/feeds/moved")
            logger.info("Feed %s moved permanently to %s", feed.url, moved_to)
        return [self._finish(feed, state, read, moved_to), *self._after(feed.url)]

    def feed_failed(self, failure: Failure) -> list[Any]:
        request = failure.request  # type: ignore[attr-defined]
        feed: ScheduledFeed = request.meta["feed"]
        kind, reason = failure_status(failure), failure_reason(failure)
        if failure.check(OptedOut):
            # the opt-out list names it (blogfeeds.middlewares.optout): not requested, nothing
            # recorded; `scrapy optout` removes its schedule
            self.crawler.stats.inc_value("blogfeeds/opt_out/feed")
            self.hosts.answered(feed.url)
            return self._after(feed.url)
        if failure.check(TargetRefused):
            # Our own guard refused the address (a local trial without
            # BLOGFEEDS_ALLOW_PRIVATE_TARGETS): nothing is known of the feed, so its plan stays
            # (no back-off); it stays leased until the run ends, then is due as before.
            self.crawler.stats.inc_value("blogfeeds/feeds/refused")
            logger.info("Feed %s not fetched, its schedule unchanged: %s", feed.url, reason)
            self.hosts.answered(feed.url)
            return self._after(feed.url)
        logger.info("Feed %s failed: %s (%s)", feed.url, kind, reason)
        read = FetchRead.failure(self.clock.now(), kind, reason)
        return [self._finish(feed, request.meta["state"], read, None), *self._after(feed.url)]

    def _after(self, url: str) -> list[scrapy.Request]:
        """The requests that follow an answer: the host's next feed, then a refill."""
        request = self._next_for_host(slot_of(url))
        return ([request] if request is not None else []) + self._refill()

    def _finish(
        self, feed: ScheduledFeed, state: FeedState, read: FetchRead, moved_to: str | None
    ) -> FeedFetch:
        """The item the pipeline stores, counted; a host that asked for a pause is paused."""
        item, new_state = fetch_item(
            self.policy,
            feed,
            state,
            read,
            moved_to=moved_to,
            owner=self.owner,
            adjust=self._safety_net(feed, read.outcome.fetched_at),
        )
        stats = self.crawler.stats
        for name in read.counts:
            stats.inc_value(f"blogfeeds/feeds/{name}")
        if classify(read.outcome) == "throttled":
            host = slot_of(feed.url)
            self.hosts.pause(host, new_state)
            stats.inc_value("blogfeeds/feeds/throttled")
            for tally in (self.run_tally, self.pass_tally):
                if tally is not None:
                    tally.pause(host, item.host_pause_until)
            logger.info("Host %s asked for a pause until %s", host, item.host_pause_until)
        if new_state.dead:
            stats.inc_value("blogfeeds/feeds/dead")
        if read.changed:
            stats.inc_value("blogfeeds/feeds/changed")
        self.hosts.answered(feed.url)
        return item

    def _safety_net(self, feed: ScheduledFeed, now: float) -> Any:
        """With WebSub on and a live subscription, the plan that polls ``feed`` only as a
        safety net (:mod:`blogfeeds.revisit.push`); the budget of the estimating policy counts
        the feed at that rate, so the fetches it saves go to the feeds without a hub."""
        if not self.websub.on or feed.push_until is None or feed.push_until <= now:
            return None
        websub, policy = self.websub, self.policy

        def adjust(state: FeedState) -> FeedState:
            moved = with_push(
                state,
                now,
                feed.push_until,
                feed.last_push,
                safety=websub.safety_interval,
                factor=websub.overdue_factor,
            )
            if moved is not state and isinstance(policy, EstimatingPolicy):
                assert moved.next_due is not None
                policy.budget.set_fixed(moved.feed_id, 1.0 / max(moved.next_due - now, 1.0))
            if moved is not state:
                self.crawler.stats.inc_value("blogfeeds/feeds/safety_net")
            return moved

        return adjust

    # --- idle: more feeds, or sleep until the next one is due -----------------------------------

    def on_idle(self) -> None:
        if self.claims is not None:
            self.claims.on_idle(self._deliver)

    def on_sleep(self, due: float | None, delay: float) -> None:
        """Loop mode, going to sleep: the pass summary after a pass that claimed feeds, else
        one line when the next due time changed (every wake-up finds the same one)."""
        if self.pass_tally is None:
            return
        now = self.clock.now()
        nap = f"; sleeping {round(delay)} s, then checking again"
        if self.pass_tally.active():
            summary = self.pass_tally.since()
            summary.next_due, summary.now = due, now
            logger.info("%s%s", summary.render("Feeds pass summary"), nap)
            self.pass_tally.restart()
        elif due != self.said_due:
            logger.info("%s%s", next_due_text(due, now), nap)
        else:
            logger.debug("%s%s", next_due_text(due, now), nap)
        self.said_due = due

    async def on_closed(self, reason: str) -> None:
        """Release every lease this worker holds and close the stores, once any claim or
        release in flight has committed (Scrapy awaits this handler); then the run's summary
        (its ``next_due`` in the stats)."""
        if self.claims is not None:
            claims, self.claims = self.claims, None
            await claims.close()
            if self.run_tally is not None:
                summary = self.run_tally.since()
                summary.next_due, summary.now = claims.final_due, self.clock.now()
                summary.scheduled = claims.scheduled
                for key, value in summary.as_stats().items():
                    self.crawler.stats.set_value(key, value)
                self.summary = summary.render(f"Feeds summary ({reason})")
        self.store = self.claimer = None

    def log_summary(self) -> None:
        if self.summary is not None:
            logger.info("%s", self.summary)
