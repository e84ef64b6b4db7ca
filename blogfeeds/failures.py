"""Turn a failed fetch into a stored status (``http_4xx``, ``timeout``, ``dns``, ...)."""

from __future__ import annotations

from scrapy.exceptions import IgnoreRequest
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import (
    ConnectError,
    DNSLookupError,
    TCPTimedOutError,
    TimeoutError,
)
from twisted.python.failure import Failure
from twisted.web._newclient import ResponseNeverReceived

STATUSES = (
    "ok",
    "no_feed",
    "http_4xx",
    "http_5xx",
    "timeout",
    "dns",
    "unreachable",
    "blocked",
    "not_html",
    "decode_error",
    "error",
)
"""Every value a blog's ``status`` can take."""


def status_for_code(code: int) -> str:
    """``http_4xx`` for 4xx, ``http_5xx`` for 5xx and anything else unexpected."""
    return "http_4xx" if 400 <= code < 500 else "http_5xx"


def failure_status(failure: Failure | BaseException) -> str:
    """Classify a download failure (an errback's ``Failure`` or an exception)."""
    exc = failure.value if isinstance(failure, Failure) else failure
    if isinstance(exc, HttpError):
        return status_for_code(exc.response.status)
    if isinstance(exc, IgnoreRequest):
        return "blocked"  # robots.txt, or a middleware refusing the URL
    if isinstance(exc, DNSLookupError):
        return "dns"
    if isinstance(exc, TimeoutError | TCPTimedOutError):
        return "timeout"
    if isinstance(exc, ConnectError | ResponseNeverReceived | ConnectionError):
        return "unreachable"
    return "error"
