"""The last guard of the opt-out list (docs/opt-out.md): a request to an address the list
leaves out never reaches its host, whatever made it (a home page queued before the list
changed, a redirect, robots.txt, a feed, a friend page, a favicon). It is refused with
:class:`OptedOut` (an ``IgnoreRequest``) and counted (``blogfeeds/opt_out/request``); the spiders
store nothing of it. Off (``NotConfigured``) when ``BLOGFEEDS_OPT_OUT`` is empty.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request
from scrapy.exceptions import NotConfigured

from blogfeeds.crawl.optoutfile import OptedOut, OptOutFile, opt_out

logger = logging.getLogger(__name__)


class OptOutMiddleware:
    """Downloader middleware refusing requests to opted-out addresses (module doc)."""

    def __init__(self, listed: OptOutFile, stats: Any) -> None:
        self.listed = listed
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> OptOutMiddleware:
        listed = opt_out(crawler)
        if listed is None:
            raise NotConfigured  # no message: Scrapy would warn of a setting left at its default
        return cls(listed, crawler.stats)

    def process_request(self, request: Request) -> None:
        feed = request.meta.get("feed")  # the feeds spider's: a feed may live on another host
        bid = request.meta.get("blog_id") or getattr(feed, "blog_id", None)
        if request.url in self.listed or self.listed.has_blog(bid):
            self.stats.inc_value("blogfeeds/opt_out/request")
            logger.debug("Not requested, opted out: %s", request.url)
            raise OptedOut(f"opted out: {request.url}")
