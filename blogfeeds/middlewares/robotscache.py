"""robots.txt kept in the store: a host's file is asked once a day, not once per crawl process
(else a re-check of unchanged blogs costs two requests a blog, and every ``scrapy crawl feeds``
run asks every host again).

:class:`CachedRobotsTxtMiddleware` extends the quiet middleware
at the same order and fills Scrapy's per-host parsers from the ``robots_txt`` table
(:mod:`blogfeeds.storage.robots`), shared by both spiders and every worker, under RFC 9309: a
copy serves ``BLOGFEEDS_ROBOTS_MAX_AGE_HOURS`` (24), then is asked again with its validators (a
304 only dates it); a 4xx allows everything; an unreachable file leaves the copy serving. The
store is read and written in a database thread of its own, lookups and writes batched; a store
that fails turns the cache off for the process (one WARNING). Off without a database or with a
maximum age of 0. Stats ``blogfeeds/robots_txt_cache/{fresh,revalidated,stale_served,stored,
errors}``; docs/crawling.md says more.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.http.request import NO_CALLBACK
from scrapy.robotstxt import RobotParser
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThreadPool
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool

from blogfeeds.config import RobotsSettings, database_url
from blogfeeds.middlewares.robots import QuietRobotsTxtMiddleware
from blogfeeds.storage.db import Store
from blogfeeds.storage.robots import (
    RobotsEntry,
    confirm_entries,
    iso,
    read_entries,
    write_entries,
)

logger = logging.getLogger(__name__)

NOT_MODIFIED = 304
_STAT = "blogfeeds/robots_txt_cache"


def _reactor() -> Any:
    """The installed reactor (imported late: Scrapy installs the crawl's first)."""
    from twisted.internet import reactor  # noqa: PLC0415

    return reactor


class RobotsStore:
    """The ``robots_txt`` table of ``database``, reached from one thread of its own: lookups
    asked for while a call runs go together in the next one, with the writes waiting."""

    def __init__(self, database: str, stats: Any) -> None:
        self.database = database
        self.stats = stats
        self.store: Store | None = None
        self.pool: ThreadPool | None = None
        self.broken = False
        self._lookups: dict[str, list[Deferred[RobotsEntry | None]]] = {}
        self._writes: list[RobotsEntry] = []
        self._confirms: dict[str, str] = {}
        self._running: Deferred[None] | None = None

    def lookup(self, host: str) -> Deferred[RobotsEntry | None]:
        """``host``'s cached entry, or None (none, or the store is out of order)."""
        found: Deferred[RobotsEntry | None] = Deferred()
        if self.broken:
            found.callback(None)
            return found
        self._lookups.setdefault(host, []).append(found)
        self._kick()
        return found

    def save(self, entry: RobotsEntry) -> None:
        if not self.broken:
            self._writes.append(entry)
            self._kick()

    def confirm(self, host: str, when: str) -> None:
        if not self.broken:
            self._confirms[host] = when
            self._kick()

    def _kick(self) -> None:
        if self._running is not None or not (self._lookups or self._writes or self._confirms):
            return
        lookups, self._lookups = self._lookups, {}
        writes, self._writes = self._writes, []
        confirms, self._confirms = self._confirms, {}
        if self.pool is None:
            self.pool = ThreadPool(minthreads=1, maxthreads=1, name="blogfeeds-robots-db")
            self.pool.start()
            _reactor().addSystemEventTrigger("during", "shutdown", self._stop)
        call = deferToThreadPool(_reactor(), self.pool, self._work, list(lookups), writes, confirms)
        self._running = call.addBoth(self._done, lookups, len(writes))

    def _work(
        self, hosts: list[str], writes: list[RobotsEntry], confirms: dict[str, str]
    ) -> dict[str, RobotsEntry]:
        """In the database thread: the writes, then the lookups, on the thread's connection."""
        if self.store is None:
            self.store = Store.open(self.database)
        if writes:
            write_entries(self.store, writes)
        for when in sorted(set(confirms.values())):
            confirm_entries(self.store, [h for h, w in confirms.items() if w == when], when)
        return read_entries(self.store, hosts) if hosts else {}

    def _done(
        self,
        result: dict[str, RobotsEntry] | Failure,
        lookups: dict[str, list[Deferred[RobotsEntry | None]]],
        written: int,
    ) -> None:
        self._running = None
        if isinstance(result, Failure):
            self.broken = True
            self.stats.inc_value(f"{_STAT}/errors")
            logger.warning(
                "robots.txt cache off for this process (the store failed: %s); robots.txt is "
                "fetched from each host",
                result.getErrorMessage(),
            )
            found: dict[str, RobotsEntry] = {}
            for host, waiting in self._lookups.items():  # asked meanwhile: nothing either
                lookups.setdefault(host, []).extend(waiting)
            self._lookups, self._writes, self._confirms = {}, [], {}
        else:
            found = result
            if written:
                self.stats.inc_value(f"{_STAT}/stored", written)
        for host, waiting in lookups.items():
            for one in waiting:
                one.callback(found.get(host))
        self._kick()

    async def close(self) -> None:
        """Write what waits, then close the connection and stop the thread."""
        while self._running is not None:
            await maybe_deferred_to_future(self._running)
            # _done kicked the next call: wait for it too
        if self.pool is None or self.pool.joined:  # the reactor stopped first: nothing runs
            return
        store, self.store = self.store, None
        if store is not None:
            await maybe_deferred_to_future(deferToThreadPool(_reactor(), self.pool, store.close))
        self._stop()

    def _stop(self) -> None:
        """Stop the thread (once: at the spider's close, or when the reactor stops first)."""
        if self.pool is not None and not self.pool.joined:
            self.pool.stop()


class CachedRobotsTxtMiddleware(QuietRobotsTxtMiddleware):
    """:class:`~blogfeeds.middlewares.robots.QuietRobotsTxtMiddleware` whose parsers come from
    the store's robots.txt cache when it holds a fresh copy (module doc)."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)  # NotConfigured unless ROBOTSTXT_OBEY
        self.config = RobotsSettings.from_settings(crawler.settings)
        database = database_url(crawler.settings)
        self.cache: RobotsStore | None = None
        self._asked: dict[str, float] = {}
        """When each host's parser was settled (monotonic seconds): older than the maximum
        age, it is settled again."""
        if database and self.config.max_age_hours > 0:
            self.cache = RobotsStore(database, crawler.stats)
            crawler.signals.connect(self._close, signal=signals.spider_closed)

    async def _close(self) -> None:
        if self.cache is not None:
            await self.cache.close()

    async def robot_parser(self, request: Request) -> RobotParser | None:
        if self.cache is None:
            return await super().robot_parser(request)
        url = urlparse_cached(request)
        netloc = url.netloc
        parser = self._parsers.get(netloc)
        settled = self._asked.get(netloc)
        if (
            netloc in self._parsers
            and not isinstance(parser, Deferred)
            and settled is not None
            and time.monotonic() - settled > self.config.max_age_hours * 3600
        ):
            del self._parsers[netloc]  # a long-lived process asks again (§2.4)
        if netloc not in self._parsers:
            self._parsers[netloc] = Deferred()
            self._asked[netloc] = time.monotonic()
            await self._settle(url.scheme, netloc, request)
        parser = self._parsers[netloc]
        if isinstance(parser, Deferred):
            return await maybe_deferred_to_future(parser)
        return parser

    async def _settle(self, scheme: str, netloc: str, request: Request) -> None:
        """Replace the waiting Deferred of ``netloc`` with its parser: from the cache when
        fresh, else from a (conditional) download, the cache keeping what it says."""
        assert self.cache is not None
        host = netloc.lower()
        stats = self._stats
        entry = await maybe_deferred_to_future(self.cache.lookup(host))
        now = datetime.now(UTC)
        if entry is not None and entry.age_hours(now) < self.config.max_age_hours:
            stats.inc_value(f"{_STAT}/fresh")
            await self._use(entry.body, netloc, request)
            return
        headers = {}
        if entry is not None and entry.etag:
            headers["If-None-Match"] = entry.etag
        if entry is not None and entry.last_modified:
            headers["If-Modified-Since"] = entry.last_modified
        robots = Request(
            f"{scheme}://{netloc}/robots.txt",
            headers=headers,
            priority=self.DOWNLOAD_PRIORITY,
            meta={"dont_obey_robotstxt": True},
            callback=NO_CALLBACK,
        )
        try:
            response = await self.crawler.engine.download_async(robots)
        except Exception as exc:
            stats.inc_value("robotstxt/request_count")
            if entry is not None:
                stats.inc_value(f"{_STAT}/stale_served")
                logger.debug("%s failed (%s): its cached copy is used", robots, exc)
                await self._use(entry.body, netloc, request)
                return
            if not isinstance(exc, IgnoreRequest):
                logger.exception(
                    "Error downloading %(request)s: %(f_exception)s",
                    {"request": request, "f_exception": exc},
                    extra={"spider": self.crawler.spider},
                )
            self._robots_error(exc, netloc)
            return
        stats.inc_value("robotstxt/request_count")
        status = response.status
        if status == NOT_MODIFIED and entry is not None:
            stats.inc_value(f"{_STAT}/revalidated")
            self.cache.confirm(host, iso(now))
            await self._use(entry.body, netloc, request, response)
        elif 200 <= status < 300 or (400 <= status < 500 and status != 429):
            body = response.body if status < 300 else b""  # a 4xx allows everything
            self.cache.save(
                RobotsEntry(
                    host,
                    status,
                    body,
                    _header(response, b"ETag"),
                    _header(response, b"Last-Modified"),
                    iso(now),
                )
            )
            await self._use(body, netloc, request, response)
        elif entry is not None:
            stats.inc_value(f"{_STAT}/stale_served")
            await self._use(entry.body, netloc, request, response)
        else:  # unreachable and never cached: as Scrapy does
            await self._parse_robots(response, netloc, request)

    async def _use(
        self, body: bytes, netloc: str, request: Request, response: Response | None = None
    ) -> None:
        """Scrapy's ``_parse_robots`` for ``body`` (a cached copy, or what ``response`` says)."""
        if response is not None:
            self._stats.inc_value("robotstxt/response_count")
            self._stats.inc_value(f"robotstxt/response_status_count/{response.status}")
        parser = build_from_crawler(self._parserimpl, self.crawler, body)
        await self.crawler.signals.send_catch_log_async(
            signal=signals.robots_parsed, robotparser=parser, request=request
        )
        waiting = self._parsers[netloc]
        assert isinstance(waiting, Deferred)
        self._parsers[netloc] = parser
        waiting.callback(parser)


def _header(response: Response, name: bytes) -> str:
    value = response.headers.get(name)
    return value.decode("latin-1").strip() if value else ""
