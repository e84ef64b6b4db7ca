"""Item pipeline of ``scrapy crawl feeds``: store each :class:`~blogfeeds.items.FeedFetch`.

Registered only by the feeds spider (its ``custom_settings``), so the blogs spider's pipelines
are untouched. A fetch is written whole in one transaction (:meth:`FeedStore.save_fetch`). A
write that fails is logged and counted (``blogfeeds/feeds/db_errors``) and nothing else
happens: the feed's lease expires (:data:`~blogfeeds.storage.feedstore.LEASE_MINUTES`) and a
later run fetches it again with its old state, so no entry is lost (its id was remembered only
in the unsaved state). The database (:func:`blogfeeds.config.database_url`) and what happens
when it cannot be reached: docs/storage.md, docs/revisiting.md.

SQLite writes run on the reactor thread. MySQL writes run in a worker thread with group commit:
the fetches that arrive while a transaction runs are written together by the next one (at most
:data:`GROUP_MAX` each), since a commit per fetch cannot keep up with the downloads and the
items waiting for it would hold their responses in memory. A group that fails is written again
one fetch at a time, so only the fetch at fault fails and a lost connection loses nothing.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from scrapy.exceptions import NotConfigured

from blogfeeds.config import StorageSettings, database_url
from blogfeeds.extract.profile import ProfileSettings
from blogfeeds.items import FeedFetch
from blogfeeds.storage.feedstore import FeedStore
from blogfeeds.storage.retry import is_transient, open_retrying
from blogfeeds.storage.url import blocking_io, redact

logger = logging.getLogger(__name__)

GROUP_MAX = 200
"""Fetches written by one MySQL transaction at most."""


class FeedStorePipeline:
    """Write :class:`FeedFetch` items; other items pass through. Stat
    ``blogfeeds/feeds/new_entries`` counts entry rows actually inserted."""

    def __init__(
        self,
        stats: Any,
        database_url: str,
        down_limit: float = 60.0,
        profile: ProfileSettings | None = None,
    ) -> None:
        self.stats = stats
        self.profile = profile or ProfileSettings()  # the activity thresholds
        self.database_url = database_url
        self.down_limit = down_limit  # seconds a MySQL server may stay unreachable at open
        self.threaded = blocking_io(database_url)
        self.store: FeedStore | None = None
        self.waiting: list[tuple[FeedFetch, asyncio.Future[int]]] = []
        self.writer: asyncio.Future[None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> FeedStorePipeline:
        settings = crawler.settings
        url = database_url(settings)
        if not url:
            raise NotConfigured("BLOGFEEDS_DATABASE_URL is empty: feed storage is off")
        down_limit = StorageSettings.from_settings(settings).down_limit
        return cls(crawler.stats, url, down_limit, ProfileSettings.from_settings(settings))

    def open_spider(self) -> Any:
        if self.threaded:
            return self._open_threaded()
        self.store = FeedStore.open(self.database_url)
        self.store.profile = self.profile
        logger.info("storing feed revisits in %s", redact(self.database_url))
        return None

    async def _open_threaded(self) -> None:
        """Open the MySQL store in a worker thread, retrying lost or refused connections for
        ``down_limit`` seconds (:func:`blogfeeds.storage.retry.open_retrying`)."""
        self.store = await open_retrying(
            FeedStore.open, self.database_url, self.down_limit, self.stats
        )
        self.store.profile = self.profile
        logger.info("storing feed revisits in %s", redact(self.database_url))

    async def close_spider(self) -> None:
        try:
            if self.writer is not None:
                await self.writer
        finally:
            if self.store is not None:
                self.store.close()
                self.store = None

    async def process_item(self, item: Any) -> Any:
        if not isinstance(item, FeedFetch) or self.store is None:
            return item
        try:
            if self.threaded:
                inserted = await self._group_commit(item)
            else:
                inserted = self.store.save_fetch(item)
        except Exception as exc:
            if is_transient(exc):  # the server went away: one line, no traceback
                logger.error("cannot store the fetch of %s: %s", item.feed_url, exc)
            else:
                logger.exception("cannot store the fetch of %s", item.feed_url)
            self.stats.inc_value("blogfeeds/feeds/db_errors")
            return item
        self.stats.inc_value("blogfeeds/feeds/new_entries", inserted)
        return item

    async def _group_commit(self, fetch: FeedFetch) -> int:
        """Entries inserted for ``fetch``, once the transaction holding it committed."""
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.waiting.append((fetch, done))
        if self.writer is None or self.writer.done():
            self.writer = asyncio.ensure_future(self._write_waiting())
        return await done

    async def _write_waiting(self) -> None:
        """Write the waiting fetches, a group per transaction, until none is left. Whatever
        ends it early (cancelled at shutdown, a bug) fails every fetch still waiting, so no
        ``process_item`` waits forever."""
        store = self.store
        assert store is not None
        group: list[tuple[FeedFetch, asyncio.Future[int]]] = []
        try:
            while self.waiting:
                group, self.waiting = self.waiting[:GROUP_MAX], self.waiting[GROUP_MAX:]
                await self._write_group(store, group)
        except BaseException as exc:
            for _, done in [*group, *self.waiting]:
                _settle(done, error=exc)
            self.waiting = []
            raise

    @staticmethod
    async def _write_group(
        store: FeedStore, group: list[tuple[FeedFetch, asyncio.Future[int]]]
    ) -> None:
        """One transaction for ``group``; if it fails, one per fetch (a lost connection is
        replaced by the next transaction, so the retry also covers a group of one)."""
        try:
            counts = await asyncio.to_thread(store.save_fetches, [f for f, _ in group])
        except Exception:
            for fetch, done in group:  # again one by one: only the fetch at fault fails
                try:
                    count = (await asyncio.to_thread(store.save_fetches, [fetch]))[0]
                except Exception as one:
                    _settle(done, error=one)
                else:
                    _settle(done, count)
            return
        for (_, done), count in zip(group, counts, strict=True):
            _settle(done, count)


def _settle(done: asyncio.Future[int], count: int = 0, error: BaseException | None = None) -> None:
    if done.done():  # its process_item was cancelled (shutdown)
        return
    if error is not None:
        done.set_exception(error)
    else:
        done.set_result(count)
