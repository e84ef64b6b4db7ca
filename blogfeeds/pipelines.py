"""Item pipelines: drop repeated blogs, then store blogs, feeds and friend links in batches.

Order (``ITEM_PIPELINES``): :class:`BlogDedupePipeline` (100), :class:`StoragePipeline` (300).
Both follow the Scrapy 2.13+ signatures: ``process_item(self, item)``, ``open_spider(self)`` and
``close_spider(self)`` without a spider argument, built by ``from_crawler``.

Two storage backends behind one pipeline: the embedded SQLite file (default; blocking writes of
a few milliseconds on the reactor thread) and MySQL / MariaDB (``MYSQL_URL``; PyMySQL calls run
in a worker thread, retried with backoff when the connection is lost, spooled to a file and the
crawl stopped when the server stays down).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from redis.exceptions import RedisError
from scrapy import signals
from scrapy.exceptions import CloseSpider, DropItem, NotConfigured
from scrapy.utils.asyncio import create_looping_call, is_asyncio_available
from scrapy.utils.defer import deferred_from_coro

from blogfeeds.frontier.connection import redis_prefix, worker_id
from blogfeeds.frontier.defaults import FrontierKeys
from blogfeeds.frontier.scheduler import redis_enabled
from blogfeeds.frontier.scripts import CLAIM_BLOG
from blogfeeds.frontier.signals import batch_durable, batch_sealed, storage_opened
from blogfeeds.items import Blog, FeedInfo, FriendLink
from blogfeeds.seen import SeenSet
from blogfeeds.storage.db import Store, check_url, redact

logger = logging.getLogger(__name__)

StoredItem = Blog | FriendLink
_Opened = TypeVar("_Opened")


class BlogDedupePipeline:
    """Drop a :class:`Blog` whose ``blog_id`` was already seen in this crawl.

    A drop is logged at DEBUG (``DropItem(log_level="DEBUG")``) and counted in the stat
    ``blogfeeds/duplicate_blog``; every other item passes unchanged. The set of seen ids lives in
    memory (≈ 60–100 bytes per id); without Redis the database's unique key on ``blog_id`` is the
    cross-process guard (a repeated blog is an idempotent upsert).

    With the Redis frontier on (:func:`blogfeeds.redis_compat.redis_enabled`), every worker also
    asks Redis: one atomic call per new blog id (a Lua script: ``HSETNX P<spider>:blog_ids
    <blog_id> <worker>``, the ``SADD`` idiom of scrapy-redis's dupefilter, which on success also
    adds the id to the worker's pending set ``P<spider>:claims:<worker>``); 0 = a duplicate. A
    claim leaves the pending set when the storage pipeline reports its batch durable
    (``batch_durable``); a worker restarted after a hard kill releases its pending claims
    (:meth:`blogfeeds.redis_compat.Scheduler.open`) before its unfinished requests are
    re-queued, so whichever worker fetches them again stores those blogs (at-least-once).
    Memory: see the README ("Many machines with Redis").
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
    def from_crawler(cls, crawler):
        settings = crawler.settings
        server = None
        if redis_enabled(settings):
            from scrapy_redis import connection  # noqa: PLC0415 - only with Redis

            server = connection.get_redis_from_settings(settings)
        pipe = cls(
            crawler.stats, server, worker_id(settings), settings.getint("BLOGFEEDS_SEEN_CAPACITY")
        )
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

    async def process_item(self, item):
        if isinstance(item, Blog) and not await self.first_sighting(item.blog_id):
            self.stats.inc_value("blogfeeds/duplicate_blog")
            raise DropItem(f"duplicate blog {item.blog_id}", log_level="DEBUG")
        return item


_TRANSIENT_MYSQL = frozenset(
    {
        1053,  # server shutdown in progress
        1205,  # lock wait timeout: retry the transaction
        1213,  # deadlock (two workers upserting the same rows): retry the transaction
        1927,  # connection was killed (MariaDB)
        2002,  # cannot connect through the socket
        2003,  # cannot connect to the server
        2006,  # server has gone away
        2013,  # lost connection during query
        2055,  # lost connection (extended)
    }
)


async def open_retrying(
    opener: Callable[[str], _Opened], url: str, down_limit: float, stats: Any
) -> _Opened:
    """``opener(url)`` in a worker thread, run again while it fails with a lost or refused
    connection (:func:`is_transient`; 0.2 s apart, doubling to 5 s) for ``down_limit`` seconds.
    Any other error, or the limit, is one ERROR line, the stat ``blogfeeds/db/down`` and
    ``CloseSpider("database_down")`` (exit status 1)."""
    delay = 0.2
    started = time.monotonic()
    while True:
        try:
            return await asyncio.to_thread(opener, url)
        except Exception as exc:
            if not is_transient(exc) or time.monotonic() - started >= down_limit:
                logger.error(
                    "cannot open the database %s (BLOGFEEDS_DB_DOWN_LIMIT %g s): %s",
                    redact(url),
                    down_limit,
                    exc,
                )
                stats.set_value("blogfeeds/db/down", 1)
                raise CloseSpider("database_down") from exc
            logger.warning("database %s unreachable (%s); retrying", redact(url), exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


def is_transient(exc: BaseException) -> bool:
    """Whether a MySQL error is a lost/refused connection or a retryable transaction conflict
    (PyMySQL ``OperationalError``/``InterfaceError`` with a code in :data:`_TRANSIENT_MYSQL`, or
    an ``InterfaceError`` on a closed connection); a retry of the same batch may then succeed."""
    try:
        import pymysql  # noqa: PLC0415 - optional driver
    except ImportError:  # pragma: no cover
        return False
    if isinstance(exc, pymysql.err.InterfaceError):
        return True
    if isinstance(exc, pymysql.err.OperationalError):
        code = exc.args[0] if exc.args else None
        return code in _TRANSIENT_MYSQL
    return isinstance(exc, (ConnectionError, TimeoutError))


class StoragePipeline:
    """Write :class:`Blog` (with its feeds) and :class:`FriendLink` items to the database.

    Settings, read once:

    * ``MYSQL_URL`` (``mysql://user:password@host:port/database``): when set, it is the database
      and wins over ``BLOGFEEDS_DATABASE_URL``.
    * ``BLOGFEEDS_DATABASE_URL``: see :func:`blogfeeds.storage.db.connect`; with no ``MYSQL_URL``
      an empty value disables the pipeline (``NotConfigured``).
    * ``BLOGFEEDS_DB_BATCH_SIZE`` (default 500): items per transaction; a batch is written when it
      is full, every ``BLOGFEEDS_DB_FLUSH_INTERVAL`` seconds (default 2; 0 = off) during a crawl,
      and on close.
    * ``BLOGFEEDS_KEEP_BLOGS_WITHOUT_FEED`` (default True): when False, every blog without a
      feed is dropped, ``no_feed`` and failed fetches alike (``http_5xx``, ``dns``, ...; stat
      ``blogfeeds/dropped_no_feed``); the friend links their pages listed are kept (the graph's
      edges).
    * ``BLOGFEEDS_SPOOL_PATH`` (default ``blogfeeds-spool.jsonl``): JSON Lines file that receives
      items the database refused (see below); :func:`read_spool` reads it, and the next run loads
      it into the database when it opens (then deletes it; records that fail again stay).
    * ``BLOGFEEDS_DB_MAX_ATTEMPTS`` (default 3): write attempts of one batch before it is spooled
      when the error is not a lost connection (a row the database refuses, a locked SQLite file).
    * ``BLOGFEEDS_DB_DOWN_LIMIT`` (seconds, default 60): MySQL only; how long lost or refused
      connections are retried (backoff 0.2 s doubling to 5 s) before the crawl stops.

    SQLite: a batch that fails is logged (ERROR, with its size) and kept; it is retried at each
    later flush and on close. After ``BLOGFEEDS_DB_MAX_ATTEMPTS`` failures, or at close, it is
    appended to the spool file and its path logged, so the crawl loses nothing and memory stays
    bounded while the database is locked. Writes are blocking calls on the reactor thread: a
    500-row SQLite batch takes a few milliseconds.

    MySQL / MariaDB: PyMySQL calls run in a worker thread (``asyncio.to_thread``; the asyncio
    reactor, Scrapy's default, is required), one at a time. ``process_item`` of the item that
    fills a batch awaits its write, which slows scraping while the database is slow (back
    pressure). A lost connection (server restart, ``KILL``, ``wait_timeout``: errors
    2003/2006/2013/...) or a deadlock is retried with backoff; every write is an idempotent
    upsert in one transaction, so a retry after a commit whose reply was lost writes nothing
    twice. When the server stays unreachable for ``BLOGFEEDS_DB_DOWN_LIMIT`` seconds the pipeline
    spools everything it holds and every later item, logs an ERROR naming the spool file, and
    closes the spider with reason ``database_down``. A database unreachable at start-up stops
    the crawl the same way (``CloseSpider``).

    Signals for the Redis frontier (:mod:`blogfeeds.redis_compat`): ``storage_opened`` at open,
    ``batch_sealed(seq)`` when the buffer becomes a batch, ``batch_durable(seq)`` once every batch
    up to ``seq`` is committed or spooled.

    Stats: ``blogfeeds/db/blogs_written``, ``blogfeeds/db/friend_links_written``,
    ``blogfeeds/db/write_errors`` (failed attempts), ``blogfeeds/db/retries`` (MySQL backoff
    waits), ``blogfeeds/db/spooled`` (items), ``blogfeeds/db/spool_loaded`` (items loaded at
    open), ``blogfeeds/db/down`` (1 when the crawl was stopped), and ``blogfeeds/db/lost`` (items,
    only when the spool file cannot be written either).
    """

    def __init__(
        self,
        stats: Any,
        database_url: str,
        *,
        batch_size: int = 500,
        keep_without_feed: bool = True,
        spool_path: str = "blogfeeds-spool.jsonl",
        max_attempts: int = 3,
        flush_interval: float = 2.0,
        down_limit: float = 60.0,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"BLOGFEEDS_DB_BATCH_SIZE must be ≥ 1, got {batch_size}")
        self.stats = stats
        self.database_url = database_url
        self.batch_size = batch_size
        self.keep_without_feed = keep_without_feed
        self.spool_path = Path(spool_path)
        self.max_attempts = max(1, max_attempts)
        self.flush_interval = flush_interval
        self.down_limit = down_limit
        self.threaded = check_url(database_url) == "mysql"
        self.store: Store | None = None
        self.buffer: list[StoredItem] = []
        self.failed: list[tuple[list[StoredItem], int]] = []  # (batch, failed attempts)
        self.crawler: Any = None
        self.down = False
        self._seq = 0
        self._down_since: float | None = None
        self._lock: asyncio.Lock | None = None
        self._timer: Any = None
        self._tasks: set[Any] = set()
        self._last_error: BaseException | None = None

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        url = (settings.get("MYSQL_URL") or "").strip()
        if not url:
            url = (settings.get("BLOGFEEDS_DATABASE_URL") or "").strip()
        if not url:
            raise NotConfigured("BLOGFEEDS_DATABASE_URL is empty: storage is off")
        pipe = cls(
            crawler.stats,
            url,
            batch_size=settings.getint("BLOGFEEDS_DB_BATCH_SIZE", 500),
            keep_without_feed=settings.getbool("BLOGFEEDS_KEEP_BLOGS_WITHOUT_FEED", True),
            spool_path=settings.get("BLOGFEEDS_SPOOL_PATH") or "blogfeeds-spool.jsonl",
            max_attempts=settings.getint("BLOGFEEDS_DB_MAX_ATTEMPTS", 3),
            flush_interval=settings.getfloat("BLOGFEEDS_DB_FLUSH_INTERVAL", 2.0),
            down_limit=settings.getfloat("BLOGFEEDS_DB_DOWN_LIMIT", 60.0),
        )
        pipe.crawler = crawler
        if settings.get("REDIS_URL") and not redis_enabled(settings):
            logger.warning(
                "REDIS_URL is a setting but the Redis frontier is off: it is switched on by the "
                "REDIS_URL environment variable (see blogfeeds/settings.py)"
            )
        crawler.signals.connect(pipe._start_timer, signals.spider_opened)
        return pipe

    # --- lifecycle ------------------------------------------------------------------------------

    def open_spider(self):
        self._send(storage_opened)
        if self.threaded:
            return self._open_threaded()
        self.store = Store.open(self.database_url)
        logger.info("storing items in %s", redact(self.database_url))
        self._load_spool()
        return None

    async def _open_threaded(self) -> None:
        if not is_asyncio_available():
            raise RuntimeError(
                "MySQL storage needs the asyncio reactor (TWISTED_REACTOR = "
                "twisted.internet.asyncioreactor.AsyncioSelectorReactor, Scrapy's default)"
            )
        self._lock = asyncio.Lock()
        self.store = await open_retrying(Store.open, self.database_url, self.down_limit, self.stats)
        logger.info("storing items in %s", redact(self.database_url))
        if not self.spool_path.exists():
            return
        items = await asyncio.to_thread(_read_spool_lenient, self.spool_path)
        loaded, kept = 0, []
        async with self._lock:
            for start in range(0, len(items), self.batch_size):
                batch = items[start : start + self.batch_size]
                outcome = await self._write_retrying(batch)
                if outcome == "down":  # the file stays as it is for the next run
                    self.stats.set_value("blogfeeds/db/down", 1)
                    raise CloseSpider("database_down")
                if outcome == "ok":
                    loaded += len(batch)
                else:
                    kept.extend(batch)
        self._rewrite_spool(kept, loaded)

    def _start_timer(self, spider: Any = None) -> None:
        if self.flush_interval > 0 and self._timer is None:
            self._timer = create_looping_call(self._on_timer)
            self._timer.start(self.flush_interval, now=False)

    def _on_timer(self) -> None:
        if not self.threaded:
            self.flush()
        elif self._lock is not None and not self._lock.locked():
            task = asyncio.ensure_future(self._flush_threaded())
            self._tasks.add(task)
            task.add_done_callback(self._task_done)

    def _task_done(self, task: Any) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("timed database flush failed", exc_info=task.exception())

    def process_item(self, item):
        if isinstance(item, Blog):
            if not self.keep_without_feed and not item.feed_url:
                self.stats.inc_value("blogfeeds/dropped_no_feed")
                raise DropItem(f"blog without feed {item.blog_id}", log_level="DEBUG")
        elif not isinstance(item, FriendLink):
            return item
        self.buffer.append(item)
        if len(self.buffer) >= self.batch_size:
            if self.threaded:
                return self._flush_then(item)
            self.flush()
        return item

    async def _flush_then(self, item: StoredItem) -> StoredItem:
        await self._flush_threaded()
        return item

    def close_spider(self):
        if self._timer is not None and self._timer.running:
            self._timer.stop()
        if self.threaded:
            return self._close_threaded()
        try:
            self.flush(final=True)
        finally:
            if self.store is not None:
                self.store.close()
                self.store = None
        return None

    async def _close_threaded(self) -> None:
        try:
            await self._flush_threaded(final=True)
        finally:
            if self.store is not None:
                store, self.store = self.store, None
                await asyncio.to_thread(store.close)

    # --- batches ------------------------------------------------------------------------------

    def _send(self, signal: object, **kwargs: Any) -> None:
        if self.crawler is not None:
            self.crawler.signals.send_catch_log(signal=signal, **kwargs)

    def _seal(self) -> int:
        """Turn the buffer into a pending batch; number it and tell the frontier."""
        if self.buffer:
            self.failed.append((self.buffer, 0))
            self.buffer = []
        self._seq += 1
        self._send(batch_sealed, seq=self._seq)
        return self._seq

    def flush(self, final: bool = False) -> None:
        """SQLite: write the buffer and every batch that failed before; spool what cannot be
        written. (MySQL flushes are asynchronous: see :meth:`_flush_threaded`.)"""
        if self.threaded:
            raise RuntimeError("MySQL batches are written by _flush_threaded()")
        seq = self._seal()
        pending, self.failed = self.failed, []
        for batch, earlier_failures in pending:
            if self._write(batch):
                continue
            failures = earlier_failures + 1
            if final or failures >= self.max_attempts:
                self._spool(batch, failures)
            else:
                self.failed.append((batch, failures))
        if not self.failed:
            self._send(batch_durable, seq=seq)

    async def _flush_threaded(self, final: bool = False) -> None:
        """MySQL: write every pending batch, one at a time, off the reactor thread."""
        self._seal()
        if self._lock is None:  # open_spider failed or was not called
            self._lock = asyncio.Lock()
        async with self._lock:
            upto = self._seq
            pending, self.failed = self.failed, []
            for batch, earlier_failures in pending:
                outcome = "down" if self.down else await self._write_retrying(batch)
                if outcome == "ok":
                    continue
                if outcome == "down" and not self.down:
                    self._go_down()
                failures = earlier_failures + 1
                if self.down or final or failures >= self.max_attempts:
                    self._spool(batch, failures)
                else:
                    self.failed.append((batch, failures))
            if not self.failed:
                self._send(batch_durable, seq=upto)

    async def _write_retrying(self, batch: list[StoredItem]) -> str:
        """Write ``batch`` in one transaction: ``"ok"``, ``"failed"`` (refused, not a
        connection problem) or ``"down"`` (transient errors retried with backoff until the
        database had been unreachable for ``down_limit`` seconds)."""
        delay = 0.2
        while True:
            try:
                ok = await asyncio.to_thread(self._write, batch, True)
            except _Transient as exc:
                now = time.monotonic()
                if self._down_since is None:
                    self._down_since = now
                if now - self._down_since >= self.down_limit:
                    self._last_error = exc.__cause__ or exc
                    return "down"
                self.stats.inc_value("blogfeeds/db/retries")
                logger.warning(
                    "database %s unreachable (%s); retrying %d items in %.1f s",
                    redact(self.database_url),
                    exc.__cause__,
                    len(batch),
                    delay,
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            if ok:
                self._down_since = None
            return "ok" if ok else "failed"

    def _go_down(self) -> None:
        self.down = True
        self.stats.set_value("blogfeeds/db/down", 1)
        logger.error(
            "database %s unreachable for %.0f s (BLOGFEEDS_DB_DOWN_LIMIT): stopping the crawl; "
            "items held and still arriving go to the spool file %s, which the next run loads "
            "(last error: %s)",
            redact(self.database_url),
            self.down_limit,
            self.spool_path.resolve(),
            self._last_error,
        )
        try:
            engine = self.crawler.engine if self.crawler is not None else None
        except RuntimeError:  # no crawl running (the pipeline used on its own)
            engine = None
        if engine is not None and getattr(engine, "spider", None) is not None:
            task = deferred_from_coro(engine.close_spider_async(reason="database_down"))
            self._tasks.add(task)
            task.addBoth(self._forget, task)

    def _forget(self, result: Any, task: Any) -> Any:
        self._tasks.discard(task)
        return result

    def _write(self, batch: list[StoredItem], raise_transient: bool = False) -> bool:
        blogs = [i for i in batch if isinstance(i, Blog)]
        links = [i for i in batch if isinstance(i, FriendLink)]
        try:
            if self.store is None:
                raise RuntimeError("database is not open (open_spider was not called)")
            n_blogs, n_links = self.store.write(blogs, links)
        except Exception as exc:
            self.stats.inc_value("blogfeeds/db/write_errors")
            if raise_transient and is_transient(exc):
                raise _Transient(str(exc)) from exc
            logger.exception(
                "could not write %d items (%d blogs, %d friend links) to %s; kept for retry",
                len(batch),
                len(blogs),
                len(links),
                redact(self.database_url),
            )
            return False
        self.stats.inc_value("blogfeeds/db/blogs_written", n_blogs)
        self.stats.inc_value("blogfeeds/db/friend_links_written", n_links)
        return True

    # --- spool --------------------------------------------------------------------------------

    def _load_spool(self) -> None:
        """SQLite: write the spool file of an earlier run, then delete it (failures stay)."""
        if not self.spool_path.exists():
            return
        items = _read_spool_lenient(self.spool_path)
        loaded, kept = 0, []
        for start in range(0, len(items), self.batch_size):
            batch = items[start : start + self.batch_size]
            if self._write(batch):
                loaded += len(batch)
            else:
                kept.extend(batch)
        self._rewrite_spool(kept, loaded)

    def _rewrite_spool(self, kept: list[StoredItem], loaded: int) -> None:
        """Replace the loaded spool file by the records refused again (usually none)."""
        self.stats.inc_value("blogfeeds/db/spool_loaded", loaded)
        tmp = self.spool_path.with_name(self.spool_path.name + f".{os.getpid()}.tmp")
        try:
            if kept:
                with tmp.open("w", encoding="utf-8") as spool:
                    for item in kept:
                        spool.write(json.dumps(spool_record(item)) + "\n")
                tmp.replace(self.spool_path)
            else:
                self.spool_path.unlink(missing_ok=True)
        except OSError:
            logger.exception("could not rewrite the spool file %s", self.spool_path)
            return
        logger.warning(
            "spool file %s: %d items loaded into the database, %d kept (refused again)",
            self.spool_path,
            loaded,
            len(kept),
        )

    def _spool(self, batch: list[StoredItem], attempts: int) -> None:
        try:
            self.spool_path.parent.mkdir(parents=True, exist_ok=True)
            with self.spool_path.open("a", encoding="utf-8") as spool:
                for item in batch:
                    spool.write(json.dumps(spool_record(item)) + "\n")  # ASCII: any str survives
        except Exception:
            self.stats.inc_value("blogfeeds/db/lost", len(batch))
            logger.exception(
                "LOST %d items: the database refused them and the spool file %s failed",
                len(batch),
                self.spool_path,
            )
            return
        self.stats.inc_value("blogfeeds/db/spooled", len(batch))
        logger.error(
            "database write failed %d times: %d items appended to the spool file %s",
            attempts,
            len(batch),
            self.spool_path.resolve(),
        )


class _Transient(Exception):
    """A lost connection or retryable conflict, raised out of the writer thread."""


def _read_spool_lenient(path: Path) -> list[StoredItem]:
    """:func:`read_spool`, but a malformed line is logged and skipped instead of raising."""
    items: list[StoredItem] = []
    with path.open(encoding="utf-8") as spool:
        for number, line in enumerate(spool, 1):
            if not line.strip():
                continue
            try:
                items.append(_spool_item(line, f"{path}:{number}"))
            except ValueError as exc:
                logger.error("skipping a spool record: %s", exc)
    return items


def spool_record(item: StoredItem) -> dict[str, Any]:
    """One spool line: ``{"type": "Blog" | "FriendLink", "item": {field: value}}``."""
    return {"type": type(item).__name__, "item": asdict(item)}


def read_spool(path: str | Path) -> list[StoredItem]:
    """The items of a spool file, in order, ready for :meth:`Store.write` (replay).

    Raises ``ValueError`` naming the line of a malformed record.
    """
    items: list[StoredItem] = []
    with Path(path).open(encoding="utf-8") as spool:
        for number, line in enumerate(spool, 1):
            if line.strip():
                items.append(_spool_item(line, f"{path}:{number}"))
    return items


def _spool_item(line: str, where: str) -> StoredItem:
    try:
        record = json.loads(line)
        fields = record["item"]
        if record["type"] == "Blog":
            feeds = [FeedInfo(**feed) for feed in fields.pop("feeds")]
            return Blog(**fields, feeds=feeds)
        if record["type"] == "FriendLink":
            return FriendLink(**fields)
        raise ValueError(f"unknown type {record['type']!r}")
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{where}: malformed spool record: {exc}") from exc
