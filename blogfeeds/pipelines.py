"""Item pipelines: drop repeated blogs, then store blogs, feeds and friend links in batches.

Order (``ITEM_PIPELINES``): :class:`BlogDedupePipeline` (100), :class:`StoragePipeline` (300).
Both follow the Scrapy 2.13+ signatures: ``process_item(self, item)``, ``open_spider(self)`` and
``close_spider(self)`` without a spider argument, built by ``from_crawler``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict
from pathlib import Path
from typing import Any

from scrapy.exceptions import DropItem, NotConfigured

from blogfeeds.items import Blog, FeedInfo, FriendLink
from blogfeeds.storage.db import Store, redact

logger = logging.getLogger(__name__)

StoredItem = Blog | FriendLink


class BlogDedupePipeline:
    """Drop a :class:`Blog` whose ``blog_id`` was already seen in this crawl.

    A drop is logged at DEBUG (``DropItem(log_level="DEBUG")``) and counted in the stat
    ``blogfeeds/duplicate_blog``; every other item passes unchanged. The set of seen ids lives in
    memory (≈ 60–100 bytes per id). A cross-machine variant overrides :meth:`first_sighting`,
    e.g. with an atomic Redis ``SADD`` (it returns 1 only for the first worker).
    """

    def __init__(self, stats: Any) -> None:
        self.stats = stats
        self.seen: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats)

    async def first_sighting(self, blog_id: str) -> bool:
        """Record ``blog_id``; True the first time it is seen."""
        if blog_id in self.seen:
            return False
        self.seen.add(blog_id)
        return True

    async def process_item(self, item):
        if isinstance(item, Blog) and not await self.first_sighting(item.blog_id):
            self.stats.inc_value("blogfeeds/duplicate_blog")
            raise DropItem(f"duplicate blog {item.blog_id}", log_level="DEBUG")
        return item


class StoragePipeline:
    """Write :class:`Blog` (with its feeds) and :class:`FriendLink` items to the database.

    Settings, read once:

    * ``BLOGFEEDS_DATABASE_URL``: see :func:`blogfeeds.storage.db.connect`; empty disables the
      pipeline (``NotConfigured``).
    * ``BLOGFEEDS_DB_BATCH_SIZE`` (default 500): items per transaction; a batch is written when it
      is full and on close.
    * ``BLOGFEEDS_KEEP_BLOGS_WITHOUT_FEED`` (default True): when False, blogs with status
      ``no_feed`` are dropped (stat ``blogfeeds/dropped_no_feed``); their friend links are kept.
    * ``BLOGFEEDS_SPOOL_PATH`` (default ``blogfeeds-spool.jsonl``): JSON Lines file that receives
      items the database refused (see below); :func:`read_spool` loads it back.
    * ``BLOGFEEDS_DB_MAX_ATTEMPTS`` (default 3): write attempts of one batch before it is spooled.

    A batch that fails is logged (ERROR, with its size) and kept; it is retried at each later
    flush (every time another batch fills up) and on close. After ``BLOGFEEDS_DB_MAX_ATTEMPTS``
    failures, or at close, it is appended to the spool file and its path logged, so the crawl
    loses nothing and memory stays bounded while the database is down.

    Stats: ``blogfeeds/db/blogs_written``, ``blogfeeds/db/friend_links_written``,
    ``blogfeeds/db/write_errors`` (failed attempts), ``blogfeeds/db/spooled`` (items), and
    ``blogfeeds/db/lost`` (items, only when the spool file cannot be written either).
    Writes are blocking DB-API calls on the reactor thread: a 500-row SQLite batch takes a few
    milliseconds.
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
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"BLOGFEEDS_DB_BATCH_SIZE must be ≥ 1, got {batch_size}")
        self.stats = stats
        self.database_url = database_url
        self.batch_size = batch_size
        self.keep_without_feed = keep_without_feed
        self.spool_path = Path(spool_path)
        self.max_attempts = max(1, max_attempts)
        self.store: Store | None = None
        self.buffer: list[StoredItem] = []
        self.failed: list[tuple[list[StoredItem], int]] = []  # (batch, failed attempts)

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        url = settings.get("BLOGFEEDS_DATABASE_URL") or ""
        if not url.strip():
            raise NotConfigured("BLOGFEEDS_DATABASE_URL is empty: storage is off")
        return cls(
            crawler.stats,
            url.strip(),
            batch_size=settings.getint("BLOGFEEDS_DB_BATCH_SIZE", 500),
            keep_without_feed=settings.getbool("BLOGFEEDS_KEEP_BLOGS_WITHOUT_FEED", True),
            spool_path=settings.get("BLOGFEEDS_SPOOL_PATH") or "blogfeeds-spool.jsonl",
            max_attempts=settings.getint("BLOGFEEDS_DB_MAX_ATTEMPTS", 3),
        )

    def open_spider(self):
        self.store = Store.open(self.database_url)
        logger.info("storing items in %s", redact(self.database_url))

    def process_item(self, item):
        if isinstance(item, Blog):
            if not self.keep_without_feed and item.status == "no_feed":
                self.stats.inc_value("blogfeeds/dropped_no_feed")
                raise DropItem(f"blog without feed {item.blog_id}", log_level="DEBUG")
        elif not isinstance(item, FriendLink):
            return item
        self.buffer.append(item)
        if len(self.buffer) >= self.batch_size:
            self.flush()
        return item

    def close_spider(self):
        try:
            self.flush(final=True)
        finally:
            if self.store is not None:
                self.store.close()
                self.store = None

    def flush(self, final: bool = False) -> None:
        """Write the buffer and every batch that failed before; spool what cannot be written."""
        if self.buffer:
            self.failed.append((self.buffer, 0))
            self.buffer = []
        pending, self.failed = self.failed, []
        for batch, earlier_failures in pending:
            if self._write(batch):
                continue
            failures = earlier_failures + 1
            if final or failures >= self.max_attempts:
                self._spool(batch, failures)
            else:
                self.failed.append((batch, failures))

    def _write(self, batch: list[StoredItem]) -> bool:
        blogs = [i for i in batch if isinstance(i, Blog)]
        links = [i for i in batch if isinstance(i, FriendLink)]
        try:
            if self.store is None:
                raise RuntimeError("database is not open (open_spider was not called)")
            n_blogs, n_links = self.store.write(blogs, links)
        except Exception:
            self.stats.inc_value("blogfeeds/db/write_errors")
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
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                fields = record["item"]
                if record["type"] == "Blog":
                    feeds = [FeedInfo(**feed) for feed in fields.pop("feeds")]
                    items.append(Blog(**fields, feeds=feeds))
                elif record["type"] == "FriendLink":
                    items.append(FriendLink(**fields))
                else:
                    raise ValueError(f"unknown type {record['type']!r}")
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: malformed spool record: {exc}") from exc
    return items
