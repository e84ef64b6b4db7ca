"""Crawl limits against traps: a URL length cap and a per-blog request cap; credentials hidden.

Blogs are small sites, and the ``blogs`` spider reads only a handful of pages of each (home page,
friend pages, feed candidates), so a site that generates pages without end (calendars,
session ids in URLs, endless pagination, auto-generated subdomains of one registered domain,
which share one blog identity) must never cost more than a bounded number of requests.
:class:`CrawlLimitsMiddleware` sees every request (scheduled, redirected, robots.txt and the
spider's out-of-band fetches) and refuses, with :class:`LimitReached` (an ``IgnoreRequest``:
stored status ``blocked``), a URL longer than ``BLOGFEEDS_MAX_URL_LENGTH`` and a request past
``BLOGFEEDS_MAX_REQUESTS_PER_BLOG`` for one blog identity (the host when the URL has none).
Both are :class:`blogfeeds.config.LimitsSettings`; with both at 0 the middleware is off
(``NotConfigured``). Defaults and stats: docs/security.md.

It also installs :class:`RedactCredentials` on the root log handlers, so that a URL with
``user:password@`` is logged as ``user:***@``.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from typing import Any

from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured

from blogfeeds.config import LimitsSettings
from blogfeeds.extract.identity import blog_id

logger = logging.getLogger(__name__)

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]*):[^/\s@]*@")


def redact_credentials(text: str) -> str:
    """``scheme://user:secret@host`` → ``scheme://user:***@host`` everywhere in ``text``."""
    return _USERINFO.sub(r"\1:***@", text)


class RedactCredentials(logging.Filter):
    """A log filter that hides passwords of URLs in log messages (:func:`redact_credentials`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        if "@" in message and "://" in message:
            redacted = redact_credentials(message)
            if redacted != message:
                record.msg, record.args = redacted, ()
        return True


def install_redaction() -> None:
    """Add :class:`RedactCredentials` to every root handler (once)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactCredentials) for f in handler.filters):
            handler.addFilter(RedactCredentials())


class LimitReached(IgnoreRequest):
    """A crawl limit refused a request; ``kind`` is ``url_too_long`` or ``blog_request_cap``."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


class CrawlLimitsMiddleware:
    """Downloader middleware enforcing the URL length and per-blog request caps (module doc)."""

    def __init__(self, max_url_length: int, max_per_blog: int, stats: Any = None):
        self.max_url_length = max_url_length
        self.max_per_blog = max_per_blog
        self.stats = stats
        self.requests: Counter[str] = Counter()
        install_redaction()

    @classmethod
    def from_crawler(cls, crawler: Any) -> CrawlLimitsMiddleware:
        config = LimitsSettings.from_settings(crawler.settings)
        if config.max_url_length <= 0 and config.max_requests_per_blog <= 0:
            raise NotConfigured("BLOGFEEDS_MAX_URL_LENGTH and _MAX_REQUESTS_PER_BLOG are 0")
        return cls(config.max_url_length, config.max_requests_per_blog, stats=crawler.stats)

    def _refuse(self, request: Request, kind: str, why: str) -> LimitReached:
        if self.stats is not None:
            self.stats.inc_value(f"blogfeeds/limits/{kind}")
        logger.info("Crawl limit refused %s: %s", request.url[:200], why)
        return LimitReached(why, kind)

    def process_request(self, request: Request) -> None:
        if self.max_url_length > 0 and len(request.url) > self.max_url_length:
            raise self._refuse(request, "url_too_long", f"URL of {len(request.url)} characters")
        if self.max_per_blog > 0:
            try:
                key = blog_id(request.url)
            except ValueError:
                return None
            self.requests[key] += 1
            if self.requests[key] > self.max_per_blog:
                raise self._refuse(
                    request, "blog_request_cap", f"over {self.max_per_blog} requests for {key}"
                )
        return None
