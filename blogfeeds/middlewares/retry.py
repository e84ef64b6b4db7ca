"""Retries with exponential backoff: Scrapy's ``RetryMiddleware`` retries at once; this one waits.

A transient failure (a timeout, a refused or lost connection, a DNS failure, HTTP 408/429/5xx:
``RETRY_HTTP_CODES`` and ``RETRY_EXCEPTIONS``) is retried up to ``RETRY_TIMES`` times, the
``n``-th retry no earlier than ``BLOGFEEDS_RETRY_BACKOFF_BASE * 2**(n-1)`` seconds after the
failure, never more than ``BLOGFEEDS_RETRY_BACKOFF_MAX`` (:class:`blogfeeds.config.RetrySettings`),
with ±25 % jitter. A ``Retry-After`` header (RFC 9110 §10.2.3, seconds or an HTTP date) on a 429/503
asks for longer; it is honoured up to the same maximum. Permanent answers (4xx, robots.txt,
too large) are not retried. The wait happens in ``process_request``, so a waiting retry holds one
of ``CONCURRENT_REQUESTS`` but no connection.

Stats: ``blogfeeds/retry/backoff_ms`` (total planned wait, milliseconds).
"""

from __future__ import annotations

import asyncio
import random
import time
from email.utils import parsedate_to_datetime
from typing import Any

from scrapy import Request
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.http import Response
from scrapy.utils.asyncio import is_asyncio_available
from scrapy.utils.defer import maybe_deferred_to_future

from blogfeeds.config import RetrySettings
from blogfeeds.extract.text import digits_int

NOT_BEFORE = "blogfeeds_retry_not_before"
"""Request meta key: ``time.monotonic()`` before which a retried request is not sent."""


def retry_after_seconds(value: str | bytes | None, now: float | None = None) -> float | None:
    """Seconds asked for by a ``Retry-After`` value (delay-seconds or HTTP-date), or None."""
    if not value:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    seconds = digits_int(text, 100 * 365 * 86_400)
    if seconds is not None:
        return float(seconds)
    try:
        when = parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def backoff_delay(attempt: int, base: float, cap: float, jitter: float = 0.25) -> float:
    """Seconds before retry number ``attempt`` (1-based): ``base * 2**(attempt-1)`` within
    ``[0, cap]``, times a random factor in ``[1 - jitter, 1 + jitter]``."""
    delay = min(cap, base * 2.0 ** min(max(attempt - 1, 0), 30))
    return max(0.0, min(cap, delay * random.uniform(1 - jitter, 1 + jitter)))


class BackoffRetryMiddleware(RetryMiddleware):
    """``RetryMiddleware`` whose retries wait (module doc). Replaces Scrapy's in the settings."""

    def __init__(self, settings: Any):
        super().__init__(settings)
        config = RetrySettings.from_settings(settings)
        self.base = config.backoff_base
        self.cap = config.backoff_max
        self._asked: float | None = None

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Request | Response:
        self._asked = retry_after_seconds(response.headers.get("Retry-After"))
        try:
            return super().process_response(request, response)
        finally:
            self._asked = None

    def _retry(self, request: Request, reason: Any) -> Request | None:
        retry = super()._retry(request, reason)
        if retry is not None and self.base > 0:
            delay = backoff_delay(retry.meta.get("retry_times", 1), self.base, self.cap)
            if self._asked is not None:
                delay = min(self.cap, max(delay, self._asked))
            retry.meta[NOT_BEFORE] = time.monotonic() + delay
            self.crawler.stats.inc_value("blogfeeds/retry/backoff_ms", round(delay * 1000))
        return retry

    async def process_request(self, request: Request) -> None:
        wait = request.meta.get(NOT_BEFORE, 0.0) - time.monotonic()
        if wait > 0:
            if is_asyncio_available():
                await asyncio.sleep(wait)
            else:  # a non-asyncio Twisted reactor
                # imported here: importing the reactor at module level would install one
                from twisted.internet import reactor, task  # noqa: PLC0415

                await maybe_deferred_to_future(task.deferLater(reactor, wait, lambda: None))
