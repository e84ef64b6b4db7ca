"""Item pipeline of ``scrapy crawl feeds``: store each :class:`~blogfeeds.items.FeedFetch`.

Registered only by the feeds spider (its ``custom_settings``), so the blogs spider's pipelines
are untouched. Each fetch is ONE transaction (:meth:`FeedStore.save_fetch`): entries, the
schedule row and its revisit state, a moved URL and its alias, a host pause. A write that fails
is logged and counted (``blogfeeds/feeds/db_errors``) and nothing else happens: the feed's
lease expires (:data:`~blogfeeds.storage.feedstore.LEASE_MINUTES`) and a later run fetches it
again with its old state, so no entry is lost (its id was remembered only in the unsaved state).

Database: ``MYSQL_URL`` if set, else ``BLOGFEEDS_DATABASE_URL``; empty = ``NotConfigured``.
SQLite writes are blocking calls on the reactor thread (a few milliseconds each); MySQL writes
run in a worker thread, one at a time.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from scrapy.exceptions import NotConfigured

from blogfeeds.items import FeedFetch
from blogfeeds.storage.db import redact
from blogfeeds.storage.feedstore import FeedStore

logger = logging.getLogger(__name__)


class FeedStorePipeline:
    """Write :class:`FeedFetch` items; other items pass through. Stat
    ``blogfeeds/feeds/new_entries`` counts entry rows actually inserted."""

    def __init__(self, stats: Any, database_url: str) -> None:
        self.stats = stats
        self.database_url = database_url
        self.threaded = database_url.split(":", 1)[0].lower() in {"mysql", "mysql+pymysql"}
        self.store: FeedStore | None = None
        self._lock: asyncio.Lock | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> FeedStorePipeline:
        settings = crawler.settings
        url = (settings.get("MYSQL_URL") or "").strip()
        url = url or (settings.get("BLOGFEEDS_DATABASE_URL") or "").strip()
        if not url:
            raise NotConfigured("BLOGFEEDS_DATABASE_URL is empty: feed storage is off")
        return cls(crawler.stats, url)

    def open_spider(self) -> None:
        self.store = FeedStore.open(self.database_url)
        logger.info("storing feed revisits in %s", redact(self.database_url))

    def close_spider(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    async def process_item(self, item: Any) -> Any:
        if not isinstance(item, FeedFetch) or self.store is None:
            return item
        try:
            if self.threaded:
                if self._lock is None:
                    self._lock = asyncio.Lock()
                async with self._lock:
                    inserted = await asyncio.to_thread(self.store.save_fetch, item)
            else:
                inserted = self.store.save_fetch(item)
        except Exception:
            logger.exception("cannot store the fetch of %s", item.feed_url)
            self.stats.inc_value("blogfeeds/feeds/db_errors")
            return item
        self.stats.inc_value("blogfeeds/feeds/new_entries", inserted)
        return item
