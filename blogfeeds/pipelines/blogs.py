"""Store blogs (with their feeds) and friend links in batches: the storage pipeline of
``scrapy crawl blogs`` (``ITEM_PIPELINES`` 300, after
:class:`~blogfeeds.pipelines.dedupe.BlogDedupePipeline`).

Scrapy 2.13+ signatures: ``process_item(self, item)``, ``open_spider(self)`` and
``close_spider(self)`` without a spider argument, built by ``from_crawler``. One pipeline for
every backend (:mod:`blogfeeds.storage`): an embedded database is written on the reactor thread
(blocking writes of a few milliseconds); a database server
(:func:`~blogfeeds.storage.url.blocking_io`) in a worker thread, retried with backoff when the
connection is lost, spooled to a file (:mod:`blogfeeds.pipelines.spool`) and the crawl stopped
when the server stays down.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Generator
from pathlib import Path
from typing import Any

from scrapy import signals
from scrapy.exceptions import CloseSpider, DropItem, NotConfigured
from scrapy.utils.asyncio import create_looping_call, is_asyncio_available
from scrapy.utils.defer import deferred_from_coro

from blogfeeds.config import StorageSettings, database_url
from blogfeeds.frontier.scheduler import redis_enabled
from blogfeeds.frontier.signals import batch_durable, batch_sealed, storage_opened
from blogfeeds.health_settings import BlogHealthSettings
from blogfeeds.items import Blog, BlogAddress, BlogCheck, FriendLink
from blogfeeds.pipelines.spool import StoredItem, append_spool, read_spool, replace_spool
from blogfeeds.storage.db import Store
from blogfeeds.storage.retry import is_transient, open_retrying
from blogfeeds.storage.url import blocking_io, redact
from blogfeeds.theme_default_settings import ThemeDefaultSettings

logger = logging.getLogger(__name__)

Steps = Generator[list[StoredItem], str | None, None]
"""A flush or a spool load: yields each batch to write and is sent back how that went
(``"ok"``, ``"failed"`` or ``"down"``, see :meth:`StoragePipeline._write_retrying`), so the
bookkeeping is written once for the writes on the reactor thread (:meth:`StoragePipeline._run`)
and those in a worker thread (:meth:`StoragePipeline._run_threaded`)."""


class StoragePipeline:
    """Write :class:`Blog` (with its feeds), :class:`FriendLink` and :class:`BlogAddress` items
    to the database.

    Settings (read once): docs/settings.md; failures and stats: docs/storage.md. Nothing is lost: a
    batch that fails is retried at later flushes, then spooled (:mod:`blogfeeds.pipelines.spool`)
    for the next run. SQLite writes block the reactor thread for a few milliseconds a batch;
    PyMySQL calls run one at a time in a worker thread, and the item that fills a batch awaits
    its write (back pressure). Every write is an idempotent upsert in one transaction.

    Signals for the Redis frontier (:mod:`blogfeeds.frontier.signals`): ``storage_opened`` at open,
    ``batch_sealed(seq)`` when the buffer becomes a batch, ``batch_durable(seq)`` once every batch
    up to ``seq`` is committed or spooled.
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
        self.threaded = blocking_io(database_url)
        self.store: Store | None = None
        self.health = BlogHealthSettings()
        self.theme_defaults = ThemeDefaultSettings()
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
    def from_crawler(cls, crawler: Any) -> StoragePipeline:
        settings = crawler.settings
        url = database_url(settings)
        if not url:
            raise NotConfigured("BLOGFEEDS_DATABASE_URL is empty: storage is off")
        config = StorageSettings.from_settings(settings)
        pipe = cls(
            crawler.stats,
            url,
            batch_size=config.batch_size,
            keep_without_feed=config.keep_blogs_without_feed,
            spool_path=config.spool_path or StorageSettings.spool_path,
            max_attempts=config.max_attempts,
            flush_interval=config.flush_interval,
            down_limit=config.down_limit,
        )
        pipe.crawler = crawler
        pipe.health = BlogHealthSettings.from_settings(settings)
        pipe.theme_defaults = ThemeDefaultSettings.from_settings(settings)
        if settings.get("REDIS_URL") and not redis_enabled(settings):
            logger.warning(
                "REDIS_URL is a setting but the Redis frontier is off: it is switched on by the "
                "REDIS_URL environment variable (see blogfeeds/settings.py)"
            )
        crawler.signals.connect(pipe._start_timer, signals.spider_opened)
        return pipe

    # --- lifecycle ------------------------------------------------------------------------------

    def open_spider(self) -> Coroutine[Any, Any, None] | None:
        self._send(storage_opened)
        if self.threaded:
            return self._open_threaded()
        self.store = Store.open(self.database_url)
        self.store.health = self.health
        self.store.theme_defaults = self.theme_defaults
        logger.info("storing items in %s", redact(self.database_url))
        if self.spool_path.exists():
            self._run(self._loading(read_spool(self.spool_path, skip_malformed=True)))
        return None

    async def _open_threaded(self) -> None:
        if not is_asyncio_available():
            raise RuntimeError(
                "MySQL storage needs the asyncio reactor (TWISTED_REACTOR = "
                "twisted.internet.asyncioreactor.AsyncioSelectorReactor, Scrapy's default)"
            )
        self._lock = asyncio.Lock()
        self.store = await open_retrying(Store.open, self.database_url, self.down_limit, self.stats)
        self.store.health = self.health
        self.store.theme_defaults = self.theme_defaults
        logger.info("storing items in %s", redact(self.database_url))
        if not self.spool_path.exists():
            return
        items = await asyncio.to_thread(read_spool, self.spool_path, skip_malformed=True)
        async with self._lock:
            await self._run_threaded(self._loading(items))

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

    def process_item(self, item: Any) -> Any:
        if isinstance(item, Blog):
            if not self.keep_without_feed and not item.feed_url:
                self.stats.inc_value("blogfeeds/dropped_no_feed")
                raise DropItem(f"blog without feed {item.blog_id}", log_level="DEBUG")
        elif not isinstance(item, FriendLink | BlogAddress | BlogCheck):
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

    def close_spider(self) -> Coroutine[Any, Any, None] | None:
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

    def _seal(self) -> None:
        """Turn the buffer into a pending batch; number it and tell the frontier."""
        if self.buffer:
            self.failed.append((self.buffer, 0))
            self.buffer = []
        self._seq += 1
        self._send(batch_sealed, seq=self._seq)

    def flush(self, final: bool = False) -> None:
        """SQLite: write the buffer and every batch that failed before; spool what cannot be
        written. (MySQL flushes are asynchronous: see :meth:`_flush_threaded`.)"""
        if self.threaded:
            raise RuntimeError("MySQL batches are written by _flush_threaded()")
        self._seal()
        self._run(self._flushing(final))

    async def _flush_threaded(self, final: bool = False) -> None:
        """MySQL: write every pending batch, one at a time, off the reactor thread."""
        self._seal()
        if self._lock is None:  # open_spider failed or was not called
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._run_threaded(self._flushing(final))

    def _flushing(self, final: bool) -> Steps:
        """Write every pending batch (the sealed buffer after those that failed before). A
        batch that fails is kept for the next flush, or spooled after ``max_attempts``
        failures, at close (``final``) and once the database is down. When none is left
        pending, every batch sealed so far is durable (``batch_durable``)."""
        upto = self._seq
        pending, self.failed = self.failed, []
        for batch, earlier_failures in pending:
            outcome = "down" if self.down else (yield batch)
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

    def _loading(self, items: list[StoredItem]) -> Steps:
        """Write the items of an earlier run's spool file, a batch at a time, then replace the
        file by the records refused again (usually none). With the database down the file
        stays as it is for the next run and the crawl stops."""
        loaded, kept = 0, []
        for start in range(0, len(items), self.batch_size):
            batch = items[start : start + self.batch_size]
            outcome = yield batch
            if outcome == "down":
                self.stats.set_value("blogfeeds/db/down", 1)
                raise CloseSpider("database_down")
            if outcome == "ok":
                loaded += len(batch)
            else:
                kept.extend(batch)
        self._rewrite_spool(kept, loaded)

    def _run(self, steps: Steps) -> None:
        """Write each batch ``steps`` yields here, on the reactor thread (SQLite)."""
        outcome = None
        while True:
            try:
                batch = steps.send(outcome)
            except StopIteration:
                return
            outcome = "ok" if self._write(batch) else "failed"

    async def _run_threaded(self, steps: Steps) -> None:
        """Write each batch ``steps`` yields in a worker thread, retrying lost connections
        (:meth:`_write_retrying`; MySQL)."""
        outcome = None
        while True:
            try:
                batch = steps.send(outcome)
            except StopIteration:
                return
            outcome = await self._write_retrying(batch)

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
        addresses = [i for i in batch if isinstance(i, BlogAddress)]
        checks = [i for i in batch if isinstance(i, BlogCheck)]
        try:
            if self.store is None:
                raise RuntimeError("database is not open (open_spider was not called)")
            written = self.store.write(blogs, links, addresses, checks)
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
        self.stats.inc_value("blogfeeds/db/blogs_written", written.blogs)
        # a link dropped as it was written is no friend link written; a drop of earlier links
        # (an entry reaching a theme default's threshold) is counted by reason all the same
        self.stats.inc_value("blogfeeds/db/friend_links_written", written.friend_links)
        for reason, n in written.dropped.items():
            self.stats.inc_value(f"blogfeeds/db/friend_links_dropped/{reason}", n)
        return True

    # --- spool --------------------------------------------------------------------------------

    def _rewrite_spool(self, kept: list[StoredItem], loaded: int) -> None:
        """Replace the loaded spool file by the records refused again (usually none)."""
        self.stats.inc_value("blogfeeds/db/spool_loaded", loaded)
        try:
            replace_spool(self.spool_path, kept)
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
            append_spool(self.spool_path, batch)
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
