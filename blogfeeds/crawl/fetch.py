"""Reading a blog's home page inside a crawl: the one path of ``scrapy crawl blogs`` and
``scrapy inspect``.

:func:`downloader_fetch` is the fetch function extraction gets (its further pages go through the
downloader: robots.txt, redirects, retries, politeness); :class:`HomeReader` runs
:func:`~blogfeeds.extract.blog.extract_blog` on an answered home page (:func:`read_page`), and
says why a page could not be read (:class:`Unread`) in the words the crawl logs and stores.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.http import Response, TextResponse

from blogfeeds.extract.aliases import Hop
from blogfeeds.extract.blog import FetchedPage, extract_blog
from blogfeeds.extract.config import ExtractConfig
from blogfeeds.extract.discovery import Fetch, FetchRequest
from blogfeeds.extract.friends.filters import is_mirror_host
from blogfeeds.extract.page import DecodeError
from blogfeeds.extract.report import BlogReport
from blogfeeds.extract.runner import Run, inline
from blogfeeds.extract.userrules import RuleError
from blogfeeds.failures import failure_reason, failure_status
from blogfeeds.middlewares.ssrf import TargetRefused
from blogfeeds.option import StartupError
from blogfeeds.threads import extract_runner, ranked

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Unread:
    """A home page that was answered but not read: the status stored (``not_html``,
    ``decode_error``) and the reason, as the log, the database and ``scrapy inspect`` say it."""

    status: str
    reason: str


def response_headers(response: Response) -> dict[str, str]:
    """Response headers as ``str -> str``, repeated headers joined with ``", "``."""
    return {
        k.decode("latin-1"): b", ".join(v).decode("latin-1") for k, v in response.headers.items()
    }


def redirects(response: Response) -> tuple[Hop, ...]:
    """The redirects Scrapy's ``RedirectMiddleware`` followed to ``response``: each URL left
    and the status it answered (0 for a meta refresh, which is no HTTP status)."""
    urls = response.meta.get("redirect_urls") or []
    reasons = response.meta.get("redirect_reasons") or []
    return tuple(
        Hop(url, reason if isinstance(reason, int) else 0)
        for url, reason in zip(urls, reasons, strict=False)
    )


def unreadable(exc: Exception) -> Unread:
    """The page's bytes could not be read as HTML (or its URL names no blog)."""
    return Unread("decode_error", f"cannot read it: {failure_reason(exc)}")


def refused_seed(failure: Any, meta: dict[str, Any]) -> bool:
    """Whether ``failure`` is the SSRF guard refusing a seed's own address: that says nothing of
    a blog (a local trial without ``BLOGFEEDS_ALLOW_PRIVATE_TARGETS``), so nothing is stored."""
    seed = not meta.get("depth") and not meta.get("redirect_urls")
    return seed and bool(failure.check(TargetRefused))


def fetch_failed(failure: Any) -> Unread:
    """The home page could not be fetched (a DNS error, a timeout, an error status, ...)."""
    return Unread(failure_status(failure), failure_reason(failure))


def not_html(response: Response) -> Unread | None:
    """:class:`Unread` when Scrapy did not take ``response`` for text, else None."""
    if isinstance(response, TextResponse):
        return None
    kind = response_headers(response).get("Content-Type", "no Content-Type")
    return Unread("not_html", f"not HTML ({kind})")


class HomeReader:
    """Reads the crawl's home pages: the extraction settings, the downloader's fetch function
    and the extraction threads, whose steps run oldest blog first
    (:class:`blogfeeds.threads.ThreadRunner`)."""

    def __init__(self, crawler: Any, config: ExtractConfig, fetch: Fetch, run: Run = inline):
        self.crawler = crawler  # its stats are set when the crawl starts, after this is made
        self.config = config
        self.fetch = fetch
        self.run = run
        self._answered = itertools.count(1)

    @classmethod
    def from_crawler(cls, crawler: Any) -> HomeReader:
        try:
            config = ExtractConfig.from_settings(crawler.settings)
        except RuleError as exc:  # before anything opens: one clear line (`scrapy crawl`)
            raise StartupError("BLOGFEEDS_RULES_FILE", str(exc)) from None
        return cls(crawler, config, downloader_fetch(crawler), extract_runner(crawler))

    async def read(
        self, response: Response, marking: Callable[[Fetch], Fetch] = lambda fetch: fetch
    ) -> BlogReport | Unread:
        """What the crawl reads of the home page ``response``; ``marking`` wraps the fetch
        function extraction gets. The report's counters are counted, its notes logged."""
        unread = not_html(response)
        if unread is not None:
            return unread
        run = ranked(self.run, next(self._answered))
        headers = response_headers(response)
        report = await read_page(
            response.url, response.body, headers, marking(self.fetch), self.config, run=run
        )
        if isinstance(report, BlogReport):
            self._count(report)
        return report

    def _count(self, report: BlogReport) -> None:
        """The report's counters as stats; its robots directives, unreadable pages and invalid
        URLs logged."""
        for name, n in report.counters.items():
            self.crawler.stats.inc_value(f"blogfeeds/{name}", n)
        for name in ("noindex", "nofollow"):
            if getattr(report.robots, name):
                logger.info("%s asks %s (%s)", report.url, name, ", ".join(report.robots.sources))
        for page in report.followed:
            if page.outcome == "unreadable":
                logger.warning("Cannot read %s: %s", page.final_url, page.detail)
        for url in report.invalid_urls:
            logger.info("Invalid URL %r on %s: not followed", url, report.friend_source)
        if not report.friends and is_mirror_host(urlsplit(report.url).hostname or ""):
            self._no_friends_at_an_address(report.url)
        over = report.counters.get("friends_over_cap", 0)
        if over:
            logger.info(
                "%s lists %d friends more than BLOGFEEDS_MAX_FRIENDS_PER_PAGE=%d: not followed",
                report.friend_source or report.url,
                over,
                self.config.max_friends,
            )

    def _no_friends_at_an_address(self, url: str) -> None:
        """Say once why a blogosphere of private IP:port sites has no friend links."""
        stats = self.crawler.stats
        stats.inc_value("blogfeeds/no_friends_at_an_address")
        if stats.get_value("blogfeeds/no_friends_at_an_address") == 1:
            logger.warning(
                "Blog %s lists no friends: links to private IP addresses are read as the "
                "blog's own mirrors, and the port is not part of a blog's identity, so blogs "
                "at IP:port addresses are never each other's friends; give each a host name "
                "(docs/crawling.md#trying-it-on-a-local-site)",
                url,
            )


async def read_page(
    url: str,
    body: bytes,
    headers: dict[str, str],
    fetch: Fetch,
    config: ExtractConfig,
    *,
    run: Run = inline,
) -> BlogReport | Unread:
    """:func:`~blogfeeds.extract.blog.extract_blog`, or why the page cannot be read."""
    try:
        return await extract_blog(url, body, headers, fetch, config, run=run)
    except (DecodeError, ValueError) as exc:
        return unreadable(exc)


def downloader_fetch(crawler: Any) -> Callable[[FetchRequest], Awaitable[FetchedPage | None]]:
    """The fetch function extraction gets in a crawl: an extra page of the current blog (a feed
    candidate, a friend-link page, a data source) through the downloader, outside the
    scheduler; any status is returned, None on failure."""

    async def fetch(req: FetchRequest) -> FetchedPage | None:
        crawler.stats.inc_value("blogfeeds/extra_page_requests")
        request = scrapy.Request(req.url, headers=req.headers or None, dont_filter=True)
        try:
            response = await crawler.engine.download_async(request)
        except Exception as exc:  # any failure just means "no page"
            logger.debug("Extra page %s failed: %s", req.url, exc)
            crawler.stats.inc_value(f"blogfeeds/extra_page_failed/{failure_status(exc)}")
            return None
        return FetchedPage(
            response.url,
            response.status,
            response_headers(response),
            response.body,
            is_text=isinstance(response, TextResponse),
        )

    return fetch
