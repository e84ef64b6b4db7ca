"""Extension: each run of a spider is recorded in the database when it closes (table ``runs``,
:mod:`blogfeeds.storage.runs`), so that the site's overview can say what the last crawls and
revisits did.

:class:`RunRecorder` notes the start at ``spider_opened`` and, at ``spider_closed`` (after the
pipelines have closed, so their counts are final), writes one row: the spider, the worker
(``BLOGFEEDS_WORKER_ID``, else the host name), start, end, finish reason and counts. A blogs
crawl's counts are the storage pipeline's (``blogfeeds/db/blogs_written``,
``blogfeeds/db/friend_links_written``) and its failures are the blogs it yielded with a failure
status, by status; a feeds run's are the ``blogfeeds/feeds/*`` stats its summary reads
(``fetched``, ``not_modified``, ``new_entries``, ``error/<kind>``). ``NotConfigured`` without a
database. A run that cannot be recorded (the database went away) is a WARNING: the crawl's own
result stands.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import is_asyncio_available

from blogfeeds.config import FrontierSettings, StorageSettings
from blogfeeds.failures import ANSWERED
from blogfeeds.items import Blog
from blogfeeds.storage.db import Store, utc_now
from blogfeeds.storage.runs import Run, record_run
from blogfeeds.storage.url import blocking_io, redact

logger = logging.getLogger(__name__)

FEEDS = "blogfeeds/feeds/"


class RunRecorder:
    def __init__(self, stats: Any, database_url: str, worker: str) -> None:
        self.stats = stats
        self.database_url = database_url
        self.worker = worker
        self.started = ""
        self.failed_blogs: Counter[str] = Counter()

    @classmethod
    def from_crawler(cls, crawler: Any) -> RunRecorder:
        settings = crawler.settings
        url = StorageSettings.from_settings(settings).url
        if not url:
            raise NotConfigured("no database: runs are not recorded")
        ext = cls(crawler.stats, url, FrontierSettings.from_settings(settings).worker)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Any) -> None:
        self.started = utc_now()

    def item_scraped(self, item: Any) -> None:
        if isinstance(item, Blog) and item.status not in ANSWERED:
            self.failed_blogs[item.status] += 1

    def run(self, spider: str, reason: str) -> Run:
        """The row of this run, closed now for ``reason``."""

        def stat(name: str) -> int:
            value = self.stats.get_value(name, 0)
            return value if isinstance(value, int) else 0

        kinds = Counter(self.failed_blogs)
        for key, value in self.stats.get_stats().items():
            if key.startswith(FEEDS + "error/") and isinstance(value, int) and value > 0:
                kinds[key.removeprefix(FEEDS + "error/")] += value
        return Run(
            spider=spider,
            worker=self.worker,
            started=self.started or utc_now(),
            finished=utc_now(),
            reason=reason or "",
            blogs=stat("blogfeeds/db/blogs_written"),
            friend_links=stat("blogfeeds/db/friend_links_written"),
            feeds_fetched=stat(FEEDS + "fetched"),
            not_modified=stat(FEEDS + "not_modified"),
            new_entries=stat(FEEDS + "new_entries"),
            failures=sum(kinds.values()),
            failures_by_kind=dict(sorted(kinds.items())),
        )

    async def spider_closed(self, spider: Any, reason: str) -> None:
        run = self.run(spider.name, reason)
        if blocking_io(self.database_url) and is_asyncio_available():
            await asyncio.to_thread(self._write, run)
        else:
            self._write(run)

    def _write(self, run: Run) -> None:
        try:
            with Store.open(self.database_url) as store:
                record_run(store, run)
        except Exception as exc:
            logger.warning("could not record this run in %s: %s", redact(self.database_url), exc)
