"""The checks of ``scrapy crawl blogs``: one :class:`~blogfeeds.items.BlogCheck` per home-page
read, and the re-checks (``-a recheck=due|all``) that read the stored blogs again.

The spider routes; these functions turn what came back (a response, a failure and the response
it may carry, the items read) into the check the store settles (:mod:`blogfeeds.storage.checks`),
through :func:`blogfeeds.extract.health.read_health`. A re-check (:class:`Recheck`) takes its
seeds from the store (``all``, or those whose adaptive interval ran out) and offers them to the
crawl's admission like seeds: politeness, robots.txt, the SSRF guard and the Redis frontier
apply. With Redis each blog is claimed once across workers (``SET NX`` on
``<prefix>blogs:recheck:<blog id>``, expiring after ``BLOGFEEDS_RECHECK_MIN_HOURS``) and
forgotten by the frontier so that it is fetched again. A request carries the last read's
validators and page digest: a 304, or the very same bytes, is an ok check that reads nothing
more. A stored friend is re-read only when due itself; a new friend is crawled.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from scrapy.http import Response

from blogfeeds.config import database_url
from blogfeeds.crawl.fetch import Unread, redirects, response_headers
from blogfeeds.extract.health import NOT_THE_BLOG, Health, read_health
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.page import header_value
from blogfeeds.extract.report import BlogReport
from blogfeeds.frontier.dupefilter import forget_blog
from blogfeeds.health_settings import BlogHealthSettings
from blogfeeds.items import Blog, BlogCheck, FriendLink
from blogfeeds.storage.checks import RECHECK_MODES, Due, due_blogs
from blogfeeds.storage.db import Store

logger = logging.getLogger(__name__)

PERMANENT = frozenset({301, 308})

PAGE_META = "blogfeeds_page"
"""Request meta of a re-check: the digest of the home page's bytes at its last read."""


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ms(response: Response) -> int | None:
    latency = getattr(response, "meta", {}).get("download_latency")  # no request: no meta
    return round(latency * 1000) if isinstance(latency, int | float) else None


def digest(blog: Blog, links: Sequence[FriendLink]) -> str:
    """What a read found that makes a re-check come sooner when it changes: title, main feed
    and the friends listed."""
    text = "\n".join([blog.title, blog.feed_url or "", *sorted(x.target_url for x in links)])
    return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()[:16]


def page_digest(body: bytes) -> str:
    """Of a home page's bytes: the same bytes read the same blog again."""
    return hashlib.sha1(body, usedforsecurity=False).hexdigest()[:16]


def same_page_check(response: Response) -> BlogCheck | None:
    """A re-check answered the very bytes of the last read: the blog is there and unchanged
    (nothing more is read: no feed discovery, no friend page). None when the page differs."""
    last = response.meta.get(PAGE_META)
    if not last or response.status != 200 or response.meta.get("redirect_urls"):
        return None  # a redirect is news (a move) whatever the page it ends on says
    if page_digest(response.body) != last:
        return None
    same = Health("ok", "unchanged (the same page as at the last read)")
    return check(response.meta["blog_id"], response.url, same, response)


def in_its_place(report: BlogReport | Unread) -> Health | None:
    """The health of a home page that answers in the blog's place (a parking page, a bot wall:
    :data:`~blogfeeds.extract.health.NOT_THE_BLOG`), read off the extraction's parse; None when
    the page is the blog's (or was not read)."""
    if isinstance(report, BlogReport) and report.health.kind in NOT_THE_BLOG:
        return report.health
    return None


def moved_check(response: Response) -> BlogCheck | None:
    """The check of the blog requested when a permanent redirect chain led to another blog's
    address, else None."""
    hops = redirects(response)
    if not hops or hops[0].status not in PERMANENT:
        return None
    requested = response.meta["blog_id"]
    try:
        final = blog_id(response.url)
    except ValueError:
        return None
    if final == requested:
        return None
    why = Health("moved", f"HTTP {hops[0].status} to {response.url}", moved_to=response.url)
    return check(requested, hops[0].url, why, response)


def not_modified_check(response: Response) -> BlogCheck:
    """A re-check's conditional GET answered 304: the blog is there and unchanged."""
    same = Health("ok", "not modified (HTTP 304)")
    return check(response.meta["blog_id"], response.url, same, response)


def unread_check(response: Response, status: str, reason: str) -> BlogCheck:
    """A page answered but not read (not HTML, undecodable): a failed read."""
    health = read_health(
        response.url, response.status, None, None, failure=status, failure_reason=reason
    )
    return check(response.meta["blog_id"], response.url, health, response)


def check(
    bid: str,
    url: str,
    health: Health,
    response: Response | None = None,
    *,
    blog: Blog | None = None,
    links: Sequence[FriendLink] = (),
) -> BlogCheck:
    """The check of blog ``bid`` read at ``url``: ``health``, the response's status, final URL,
    time and validators, and what the read found (``blog`` and its ``links``)."""
    headers = response_headers(response) if response is not None else {}
    return BlogCheck(
        blog_id=bid,
        url=url,
        kind=health.kind,
        reason=health.reason,
        checked_at=now(),
        http_status=response.status if response is not None else None,
        final_url=response.url if response is not None else "",
        response_ms=_ms(response) if response is not None else None,
        moved_to=health.moved_to,
        gone=health.gone,
        etag=header_value(headers, "etag") if blog is not None else "",
        last_modified=header_value(headers, "last-modified") if blog is not None else "",
        title=blog.title if blog is not None else "",
        generator=blog.generator if blog is not None else "",
        language=blog.language if blog is not None else "",
        feed_url=(blog.feed_url or "") if blog is not None else "",
        digest=digest(blog, links) if blog is not None else "",
        page_digest=page_digest(response.body) if blog is not None and response is not None else "",
    )


def failed_check(bid: str, url: str, failure: Any, status: str, reason: str) -> BlogCheck:
    """The check of a read that failed: the response an error status came with, if any."""
    response = getattr(getattr(failure, "value", None), "response", None)
    if not isinstance(response, Response):
        response = None
    health = read_health(
        url,
        response.status if response is not None else None,
        response_headers(response) if response is not None else None,
        response.body if response is not None else None,
        failure=status,
        failure_reason=reason,
    )
    return check(bid, url, health, response)


NOT_MODIFIED = 304


class Recheck:
    """The re-check of one crawl: which blogs, claimed how, with which validators."""

    def __init__(self, mode: str, crawler: Any) -> None:
        if mode not in RECHECK_MODES:
            raise ValueError(f"-a recheck={mode}: expected one of {', '.join(RECHECK_MODES)}")
        self.mode = mode
        self.crawler = crawler
        self.config = BlogHealthSettings.from_settings(crawler.settings)
        self.known: set[str] = set()
        self.rechecked: set[str] = set()

    def due(self) -> list[Due]:
        """The blogs to read again, from the store (``ValueError`` when none is configured)."""
        url = database_url(self.crawler.settings)
        if not url:
            raise ValueError("-a recheck needs the store: set BLOGFEEDS_DATABASE_URL")
        with Store.open(url) as store:
            blogs, self.known = due_blogs(store, self.mode, now())
        self.crawler.stats.set_value("blogfeeds/recheck/due", len(blogs))
        logger.info("Re-check (%s): %d of %d stored blogs", self.mode, len(blogs), len(self.known))
        return blogs

    def claim(self, blog: Due, frontier: Any) -> bool:
        """Whether this worker re-checks ``blog`` (always without the Redis frontier)."""
        if frontier is None or frontier.keys is None:
            self.rechecked.add(blog.blog_id)
            return True
        keys = frontier.keys
        key = f"{keys.prefix}{keys.spider}:recheck:{blog.blog_id}"
        ttl = max(1, round(self.config.recheck_min_hours * 3600))
        if not frontier.server.set(key, keys.worker, nx=True, ex=ttl):
            self.crawler.stats.inc_value("blogfeeds/recheck/claimed_elsewhere")
            return False
        forget_blog(frontier.server, keys, blog.blog_id)
        self.rechecked.add(blog.blog_id)
        return True

    def follows(self, url: str) -> bool:
        """Whether a friend at ``url`` is crawled: a new blog, or one this re-check reads."""
        try:
            bid = blog_id(url)
        except ValueError:
            return True  # the admission says why it is no blog
        return bid not in self.known or bid in self.rechecked


def recheck_meta(blog: Due) -> dict[str, object]:
    """The meta of a re-check's request: a 304 reaches the spider, and the last page's digest
    tells an unchanged page from its bytes when the server sends no validators."""
    meta: dict[str, object] = {"handle_httpstatus_list": [NOT_MODIFIED]}
    if blog.page_digest:
        meta[PAGE_META] = blog.page_digest
    return meta


def validators(blog: Due) -> dict[str, str]:
    """The conditional-GET headers of ``blog``'s last read."""
    headers = {}
    if blog.etag:
        headers["If-None-Match"] = blog.etag
    if blog.last_modified:
        headers["If-Modified-Since"] = blog.last_modified
    return headers
