"""This worker's leases on due feeds (:meth:`FeedStore.claim_due`, safe with several workers on
one database): the first claim, refills in batches, claims when the spider is idle (loop mode:
sleep until the next feed is due), releases of a paused host's feeds, and every lease released
at the end."""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Callable
from typing import Any

from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.utils.asyncio import CallLaterResult, call_later
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred, DeferredLock
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from blogfeeds.feedcrawl.clock import VirtualClock
from blogfeeds.feedcrawl.config import FeedsConfig
from blogfeeds.storage.feedstore import LEASE_MINUTES, FeedStore, ScheduledFeed

logger = logging.getLogger(__name__)

IDLE_CLAIM_ATTEMPTS = 3
"""Failed claims in a row (one per 5-second idle heartbeat) after which a run that is not in
loop mode ends with finish reason ``database_down`` (exit status 1)."""

Deliver = Callable[[list[ScheduledFeed]], int]
"""Where claimed feeds go: queues them, schedules their requests, returns how many."""

Sleeping = Callable[[float | None, float], None]
"""Told when a loop worker goes to sleep: the next due time (epoch minutes, None when nothing
is scheduled) and the seconds until it wakes."""


def lease_owner(worker: str) -> str:
    """The ``lease_owner`` of this process's claims: ``worker:pid:random`` (≤ 255 characters).

    Unique per process even when two workers share ``BLOGFEEDS_WORKER_ID`` and a pid (two
    containers started alike both run their crawl as the same pid), so one worker never reads
    back or releases another's leases."""
    return f"{worker[:200]}:{os.getpid()}:{secrets.token_hex(4)}"


class Claims:
    """Claims of ``config.batch`` feeds at a time for ``owner``, on ``store`` (the reactor
    thread) or, for refills on MySQL, on ``claimer`` (its own connection, in a worker thread).

    Outside loop mode claims take the feeds due when the run started (``started``, epoch
    minutes: a run fetches what was due then, and ends); in loop mode the feeds due now.
    Leases always run from the time of the claim. ``single``: one feed given on the command
    line, no further claims. ``stats`` counts ``claim_errors`` and ``release_errors``
    (Scrapy's stats collector)."""

    def __init__(
        self,
        store: FeedStore,
        claimer: FeedStore | None,
        config: FeedsConfig,
        *,
        owner: str,
        clock: VirtualClock,
        started: float,
        stats: Any,
        single: bool = False,
    ) -> None:
        self.store = store
        self.claimer = claimer
        self.config = config
        self.batch = config.batch
        self.owner = owner
        self.clock = clock
        self.stats = stats
        self.run_start = None if config.loop else started
        self.single = single
        self.drained = False  # the last claim got less than a batch: no refill until idle
        self.lock = DeferredLock()  # one call at a time on the claimer's connection
        self.pending: Deferred[None] | None = None  # the refill claim waiting in that thread
        self.timer: CallLaterResult | None = None  # loop mode: the next wake
        self.idle_failures = 0  # failed idle claims in a row (not loop mode)
        self.closing = False
        self.on_sleep: Sleeping | None = None
        self.final_due: float | None = None  # after close(): the next due time, and
        self.scheduled: int | None = None  # the number of schedule rows
        self.backlog: list[str] = []  # -a all=true: the feeds not claimed yet, due or not

    def first(self, now: float, feed_url: str | None = None) -> list[ScheduledFeed]:
        """The run's first claim: ``feed_url`` alone (scheduled if unknown), else the due feeds
        after scheduling the main feeds of newly stored blogs."""
        rank = self.config.rank
        if feed_url:
            url = self.store.add_feed(feed_url, now, rank=0 if rank == "auto" else int(rank))
            claims = self.store.claim_due(now, 1, self.owner, urls=[url])
            if not claims:
                logger.warning("Feed %s is being fetched by another worker", url)
            return claims
        added = self.store.sync_feeds(now, rank)
        if added:
            logger.info("%d new feeds scheduled", added)
        if self.config.everything:
            rows = self.store.query("SELECT feed_url FROM schedule ORDER BY next_due, feed_url")
            self.backlog = [row["feed_url"] for row in reversed(rows)]
            logger.info("Fetching all %d scheduled feeds now, due or not (-a all)", len(rows))
        return self.store.claim_due(now, self.batch, self.owner, **self._which(now))

    def _which(self, now: float) -> dict[str, Any]:
        """What the next claim takes: the next batch of the backlog (``-a all``), else the
        feeds due by the run's start (loop mode: by ``now``)."""
        if self.backlog:
            batch = [self.backlog.pop() for _ in range(min(self.batch, len(self.backlog)))]
            return {"urls": batch}
        return {"due_by": now if self.run_start is None else self.run_start}

    def more(self, now: float) -> list[ScheduledFeed]:
        """The next batch, claimed on the reactor thread; raises what the store raises."""
        if self.single:
            return []
        claims = self.store.claim_due(now, self.batch, self.owner, **self._which(now))
        self.drained = len(claims) < self.batch and not self.backlog
        return claims

    def refill(self, now: float, in_flight: int, deliver: Deliver) -> list[ScheduledFeed]:
        """The next batch, claimed as soon as fewer than half a batch of claimed feeds remain
        (``in_flight``), so the downloader never drains between batches (``spider_idle``, the
        other trigger, comes only on the engine's 5-second heartbeat: 50 feeds every 5 s).
        After a claim that got less than a batch, nothing is due: no more claims until the
        next idle.

        On MySQL the claim waits for the server in a worker thread and its feeds go to
        ``deliver`` when it returns (the downloads in flight go on meanwhile); this returns [].
        On SQLite, a local file, it is a call of about a millisecond on the reactor thread,
        like the pipeline's writes, and returns the feeds."""
        if self.single or self.drained or self.pending is not None:
            return []
        if in_flight >= max(1, self.batch // 2):
            return []
        if self.claimer is None:
            try:
                return self.more(now)
            except Exception as exc:  # the next answer or spider_idle claims again
                self.error(str(exc))
                return []
        claim = self._in_claimer(
            self.claimer.claim_due, now, self.batch, self.owner, **self._which(now)
        )
        self.pending = claim.addCallback(self._claimed, deliver)
        self.pending.addErrback(self._claim_failed)
        return []

    def _in_claimer(self, call: Any, *args: Any, **kwargs: Any) -> Deferred[Any]:
        """``call(*args, **kwargs)`` in a worker thread once every earlier call has returned
        (the claimer's connection serves one call at a time); fires with its result."""
        return self.lock.run(deferToThread, call, *args, **kwargs)

    def _claimed(self, claims: list[ScheduledFeed], deliver: Deliver) -> None:
        self.pending = None
        if self.closing:  # close() releases every lease once this claim is done
            return
        self.drained = len(claims) < self.batch and not self.backlog
        deliver(claims)

    def _claim_failed(self, failure: Failure) -> None:
        """A refill claim in the claimer's thread (or the delivery of its feeds) that failed:
        the next answer or ``spider_idle`` claims again."""
        self.pending = None
        self.error(failure.getErrorMessage())

    def on_idle(self, deliver: Deliver) -> None:
        """``spider_idle``: claim more, raising ``DontCloseSpider`` while there is work left
        (a refill claim on its way, feeds claimed, a loop worker) and ``CloseSpider``
        (``database_down``) after :data:`IDLE_CLAIM_ATTEMPTS` failed claims in a row."""
        if self.pending is not None:  # its requests are on their way
            raise DontCloseSpider
        self.drained = False
        if self.config.loop:
            if self.timer is None:
                self._wake(deliver)
            raise DontCloseSpider
        # Feeds due when this run started that other claims left (more than one batch).
        try:
            scheduled = deliver(self.more(self.clock.now()))
        except Exception as exc:
            self.error(str(exc))
            self.idle_failures += 1
            if self.idle_failures >= IDLE_CLAIM_ATTEMPTS:
                raise CloseSpider("database_down") from exc
            raise DontCloseSpider from exc  # claimed again on the next idle heartbeat (5 s)
        self.idle_failures = 0
        if scheduled:
            raise DontCloseSpider

    def _wake(self, deliver: Deliver) -> None:
        """Loop mode: fetch what is due now, else sleep until the next feed is due. A database
        error is logged and counted (``claim_errors``), and the worker tries again after
        ``BLOGFEEDS_FEEDS_MAX_SLEEP`` seconds: a long-lived worker outlives a database restart."""
        self.timer = None
        if self.closing:
            return
        now, max_sleep = self.clock.now(), self.config.max_sleep
        try:
            self.store.sync_feeds(now, self.config.rank)
            scheduled = deliver(self.more(now))
            due = None if scheduled else self.store.next_due(now)
        except Exception as exc:
            self.error(str(exc))
            self.timer = call_later(max_sleep, self._wake, deliver)
            return
        if scheduled:
            return  # spider_idle comes again once they are done
        delay = max_sleep if due is None else min(max((due - now) * 60.0, 0.0), max_sleep)
        if self.on_sleep is not None:
            self.on_sleep(due, delay)
        self.timer = call_later(delay + 0.05, self._wake, deliver)

    def error(self, message: str) -> None:
        """Log and count (``claim_errors``) a claim that failed."""
        self.stats.inc_value("blogfeeds/feeds/claim_errors")
        logger.error("Cannot claim feeds: %s", message)

    def release_paused(self, host: str, urls: list[str], until: float) -> None:
        """Release a paused host's queued feeds, due again when the pause ends (epoch minutes
        ``until``), not before; on MySQL in the claimer's thread, after any claim in flight. A
        release that fails is logged and counted (``release_errors``): the leases expire after
        ``LEASE_MINUTES``."""

        def failed(message: str) -> None:
            self.stats.inc_value("blogfeeds/feeds/release_errors")
            logger.error("Cannot release the feeds of paused host %s: %s", host, message)

        if self.claimer is not None:
            release = self._in_claimer(self.claimer.release, self.owner, urls, until)
            release.addErrback(lambda failure: failed(failure.getErrorMessage()))
            return
        try:
            self.store.release(self.owner, urls, not_before=until)
        except Exception as exc:
            failed(str(exc))

    async def close(self) -> None:
        """Release every lease this worker holds, count the schedule rows per level
        (``level_<n>``), note the next due time (``final_due``) and close the stores; with a
        refill claim or a release in flight (a close by signal or by a CLOSESPIDER limit), once
        it has committed, so that a claim's leases are released too."""
        self.closing = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.claimer is not None:
            # Every earlier claim and release on the claimer's connection has returned.
            await maybe_deferred_to_future(self.lock.acquire())
            self.lock.release()
            self.claimer.close()
            self.claimer = None
        try:
            self.store.release(self.owner)
            levels = self.store.level_counts()
            for level, count in sorted(levels.items()):
                self.stats.set_value(f"blogfeeds/feeds/level_{level}", count)
            self.scheduled = sum(levels.values())
            self.final_due = self.store.next_due(self.clock.now())
        except Exception as exc:
            logger.error(
                "Cannot release this worker's leases (they expire in %d minutes): %s",
                LEASE_MINUTES,
                exc,
            )
        finally:
            self.store.close()
