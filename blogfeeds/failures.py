"""Turn a failed fetch into a stored status (``http_4xx``, ``timeout``, ``dns``, ``tls``, ...).

Scrapy ≥ 2.14 wraps Twisted's download errors in its own exceptions
(``CannotResolveHostError``, ``DownloadTimeoutError``, ...; ``scrapy.utils._download_handlers``);
both the wrapped and the bare Twisted forms are classified, so the statuses hold on any handler.
"""

from __future__ import annotations

from scrapy.core.downloader.handlers.http11 import TunnelError
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
    UnsupportedURLSchemeError,
)
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import (
    ConnectError,
    ConnectionDone,
    ConnectionLost,
    DNSLookupError,
    TCPTimedOutError,
    TimeoutError,
)
from twisted.python.failure import Failure
from twisted.web._newclient import ResponseFailed, ResponseNeverReceived

STATUSES = (
    "ok",
    "no_feed",
    "noindex",
    "http_4xx",
    "http_5xx",
    "timeout",
    "dns",
    "tls",
    "unreachable",
    "blocked",
    "parked",
    "too_large",
    "not_html",
    "decode_error",
    "error",
)
"""Every value a blog's ``status`` can take. ``noindex``: the page asked not to be indexed
(``<meta name=robots>`` / ``X-Robots-Tag``), so only its identity and URL are kept;
``blocked``: robots.txt, the SSRF guard or a crawl limit refused the request, or a bot wall
answered (:mod:`blogfeeds.extract.health`); ``parked``: a parking or for-sale page answered in
the blog's place; ``too_large``:
the body (or its decompressed form) went past ``DOWNLOAD_MAXSIZE``."""

ANSWERED = frozenset({"ok", "no_feed", "noindex"})
"""Statuses of a home page that was fetched and read; every other status is a failure (its
words are the blog's ``status_reason``)."""

TRANSIENT = frozenset({"http_5xx", "timeout", "dns", "unreachable"})
"""Statuses worth retrying later (with backoff); the others are answers, not accidents."""


def status_for_code(code: int) -> str:
    """``http_4xx`` for 4xx, ``http_5xx`` for 5xx and anything else unexpected."""
    return "http_4xx" if 400 <= code < 500 else "http_5xx"


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc``, its causes, and the reasons Twisted's ``ResponseFailed`` carries (recursively)."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo and len(seen) < 20:
        cur = todo.pop()
        if any(cur is s for s in seen):
            continue
        seen.append(cur)
        if cur.__cause__ is not None:
            todo.append(cur.__cause__)
        for reason in getattr(cur, "reasons", None) or ():
            if isinstance(reason, Failure) and isinstance(reason.value, BaseException):
                todo.append(reason.value)
    return seen


def _is_tls(exc: BaseException) -> bool:
    module = type(exc).__module__
    return module.startswith(("OpenSSL", "ssl")) or "SSL" in type(exc).__name__


def failure_status(failure: Failure | BaseException) -> str:
    """Classify a download failure (an errback's ``Failure`` or an exception).

    Returns one of :data:`STATUSES`: ``http_4xx``/``http_5xx`` (an ``HttpError``), ``blocked``
    (``IgnoreRequest``: robots.txt, the SSRF guard, a crawl limit), ``too_large`` (a body past
    ``DOWNLOAD_MAXSIZE``, compressed or decompressed), ``dns``, ``timeout``, ``tls`` (handshake or
    certificate errors), ``unreachable`` (refused, reset, lost), else ``error``.
    """
    exc = failure.value if isinstance(failure, Failure) else failure
    if exc is None:
        return "error"
    if isinstance(exc, HttpError):
        return status_for_code(exc.response.status)
    if isinstance(exc, IgnoreRequest):
        # HttpCompressionMiddleware refuses a decompression bomb with an IgnoreRequest.
        return "too_large" if "DOWNLOAD_MAXSIZE" in str(exc) else "blocked"
    if isinstance(exc, UnsupportedURLSchemeError):
        return "blocked"
    if isinstance(exc, DownloadCancelledError):
        return "too_large"  # the HTTP handlers cancel a download only past DOWNLOAD_MAXSIZE
    if isinstance(exc, CannotResolveHostError | DNSLookupError):
        return "dns"
    if isinstance(exc, DownloadTimeoutError | TimeoutError | TCPTimedOutError):
        return "timeout"
    chain = _chain(exc)
    if any(_is_tls(e) for e in chain):
        return "tls"
    if isinstance(
        exc,
        DownloadConnectionRefusedError
        | DownloadFailedError
        | ResponseDataLossError
        | ConnectError
        | ConnectionDone
        | ConnectionLost
        | ResponseFailed
        | ResponseNeverReceived
        | TunnelError  # a proxy that would not connect to the host
        | ConnectionError,
    ):
        return "unreachable"
    return "error"


REASON_CHARS = 300
"""A failure reason is cut to this many characters (one log line)."""


def failure_reason(failure: Failure | BaseException) -> str:
    """Why a fetch failed, in words, for the log line beside its status (``failed: blocked
    (SSRF guard: ...)``): the exception's message on one line, cut to :data:`REASON_CHARS`;
    its type name when it has no message."""
    exc = failure.value if isinstance(failure, Failure) else failure
    if exc is None:
        return "no reason given"
    if isinstance(exc, HttpError):
        return f"HTTP {exc.response.status}"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 3] + "..."
