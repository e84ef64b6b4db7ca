"""Every failure kind maps to its stored status; crawl limits and retry backoff as units.

The exceptions are the ones Scrapy 2.19's HTTP/1.1 handler raises (``wrap_twisted_exceptions``
wraps Twisted's; TLS errors arrive as OpenSSL errors inside ``ResponseNeverReceived``).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from OpenSSL import SSL
from scrapy import Request
from scrapy.core.downloader.handlers.http11 import TunnelError
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler
from twisted.internet.error import DNSLookupError
from twisted.python.failure import Failure
from twisted.web._newclient import ResponseNeverReceived

from blogfeeds.failures import REASON_CHARS, STATUSES, TRANSIENT, failure_reason, failure_status
from blogfeeds.middlewares.limits import CrawlLimitsMiddleware, LimitReached
from blogfeeds.middlewares.retry import (
    NOT_BEFORE,
    BackoffRetryMiddleware,
    backoff_delay,
    retry_after_seconds,
)
from blogfeeds.middlewares.ssrf import TargetRefused


def _wrapped(outer: Exception, inner: BaseException) -> Exception:
    outer.__cause__ = inner
    return outer


def _tls_failure() -> Exception:
    never = ResponseNeverReceived([Failure(SSL.Error([("SSL routines", "", "wrong version")]))])
    return _wrapped(DownloadFailedError(str(never)), never)


CASES: list[tuple[str, Any]] = [
    ("http_4xx", HttpError(Response("http://a.example/", status=404), "404")),
    ("http_4xx", HttpError(Response("http://a.example/", status=429), "429")),
    ("http_5xx", HttpError(Response("http://a.example/", status=503), "503")),
    ("dns", _wrapped(CannotResolveHostError("x"), DNSLookupError("x"))),
    ("dns", DNSLookupError("x")),
    ("timeout", DownloadTimeoutError("Getting x took longer than 20 seconds.")),
    ("tls", _tls_failure()),
    ("unreachable", DownloadConnectionRefusedError("refused")),
    ("unreachable", ResponseDataLossError()),
    ("unreachable", DownloadFailedError("connection lost")),
    ("unreachable", TunnelError("Could not open CONNECT tunnel with proxy 127.0.0.1:8080")),
    ("too_large", DownloadCancelledError("Cancelling download of x: expected size 1e9")),
    ("too_large", IgnoreRequest("... exceeded DOWNLOAD_MAXSIZE (8388608 B) during decompression")),
    ("blocked", IgnoreRequest("Forbidden by robots.txt")),
    ("blocked", TargetRefused("SSRF guard: loopback", "loopback")),
    ("blocked", LimitReached("over 50 requests", "blog_request_cap")),
    ("error", RuntimeError("something else")),
]


@pytest.mark.parametrize(
    ("status", "exc"), CASES, ids=[f"{s}-{type(e).__name__}" for s, e in CASES]
)
def test_failure_status(status: str, exc: Exception) -> None:
    assert failure_status(exc) == status
    assert failure_status(Failure(exc)) == status
    assert status in STATUSES


def test_failure_reason_is_one_line_saying_why() -> None:
    refused = TargetRefused("SSRF guard: a resolves to 127.0.0.1 (loopback); set X", "loopback")
    assert failure_reason(Failure(refused)) == str(refused)
    assert failure_reason(HttpError(Response("http://a.example/", status=404), "")) == "HTTP 404"
    assert failure_reason(ResponseDataLossError()) == "ResponseDataLossError"
    long = failure_reason(RuntimeError("line one\nline two " + "x" * 1000))
    assert long.startswith("line one line two") and len(long) == REASON_CHARS


def test_every_failure_kind_of_the_issue_is_a_status() -> None:
    wanted = {"http_4xx", "http_5xx", "timeout", "dns", "tls", "blocked", "too_large"}
    assert wanted | {"not_html", "decode_error"} <= set(STATUSES)
    assert TRANSIENT.issubset(STATUSES) and "http_4xx" not in TRANSIENT


# --- crawl limits -------------------------------------------------------------------------------


def limits(**settings: Any) -> tuple[CrawlLimitsMiddleware, Any]:
    crawler = get_crawler(settings_dict=settings)
    return build_from_crawler(CrawlLimitsMiddleware, crawler), crawler


def test_per_blog_request_cap_counts_every_url_of_the_blog() -> None:
    mw, crawler = limits(BLOGFEEDS_MAX_REQUESTS_PER_BLOG=3)
    for url in ("http://a.com/", "http://www.a.com/x", "http://cal.a.com/?m=1"):
        mw.process_request(Request(url))  # one registered domain: one blog
    with pytest.raises(LimitReached) as refused:
        mw.process_request(Request("http://day-2.a.com/"))
    assert refused.value.kind == "blog_request_cap"
    mw.process_request(Request("http://b.com/"))  # other blogs are not affected
    assert crawler.stats.get_value("blogfeeds/limits/blog_request_cap") == 1


def test_url_length_cap() -> None:
    mw, crawler = limits(BLOGFEEDS_MAX_URL_LENGTH=100)
    mw.process_request(Request("http://a.com/" + "x" * 80))
    with pytest.raises(LimitReached):
        mw.process_request(Request("http://a.com/" + "x" * 90))
    assert crawler.stats.get_value("blogfeeds/limits/url_too_long") == 1


# --- retry backoff ------------------------------------------------------------------------------


def test_backoff_grows_and_is_capped() -> None:
    delays = [backoff_delay(n, 1.0, 30.0, jitter=0) for n in range(1, 8)]
    assert delays == [1, 2, 4, 8, 16, 30, 30]
    assert all(0.75 <= backoff_delay(1, 1.0, 30.0) <= 1.25 for _ in range(50))


def test_retry_after_values() -> None:
    assert retry_after_seconds("120") == 120
    assert retry_after_seconds(b"Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def test_retried_requests_wait_and_honour_retry_after() -> None:
    crawler = get_crawler(settings_dict={"BLOGFEEDS_RETRY_BACKOFF_BASE": 0.5})
    crawler.spider = crawler._create_spider("robust")
    mw = build_from_crawler(BackoffRetryMiddleware, crawler)
    request = Request("http://a.example/")
    before = time.monotonic()
    retry = mw.process_response(
        request, Response(request.url, status=503, headers={"Retry-After": "7"}, request=request)
    )
    assert isinstance(retry, Request)
    assert 7 <= retry.meta[NOT_BEFORE] - before <= 8
    again = mw.process_exception(retry, DownloadTimeoutError("slow"))
    assert isinstance(again, Request)
    assert 0.75 <= again.meta[NOT_BEFORE] - time.monotonic() <= 1.3  # 2nd retry: 2 x 0.5 s
    assert mw.process_response(request, Response(request.url, status=404)).status == 404


# --- robots.txt failures ------------------------------------------------------------------------


def test_robots_txt_download_failure_becomes_a_quiet_ignore() -> None:
    from blogfeeds.middlewares.robots import QuietRobotsTxtMiddleware

    crawler = get_crawler(settings_dict={"ROBOTSTXT_OBEY": True})
    mw = build_from_crawler(QuietRobotsTxtMiddleware, crawler)
    robots = Request("http://nx.invalid/robots.txt", meta={"dont_obey_robotstxt": True})
    dns = _wrapped(CannotResolveHostError("nx.invalid"), DNSLookupError("nx.invalid"))
    with pytest.raises(IgnoreRequest, match=r"robots\.txt failed: dns"):
        mw.process_exception(robots, dns)
    assert crawler.stats.get_value("blogfeeds/robots_txt_failed/dns") == 1
    # the blog's own requests, and errors that are not download failures, are left alone
    assert mw.process_exception(Request("http://nx.invalid/"), dns) is None
    assert mw.process_exception(robots, ValueError("a bug")) is None
