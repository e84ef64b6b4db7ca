"""The :class:`~blogfeeds.items.BlogCheck` of each home-page read of ``scrapy crawl blogs``.

The spider routes; these functions turn what came back (a response, a failure and the
response it may carry, the items read) into the check the store settles
(:mod:`blogfeeds.storage.checks`), through :func:`blogfeeds.extract.health.read_health`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from scrapy.http import Response

from blogfeeds.crawl.fetch import redirects, response_headers
from blogfeeds.extract.health import Health, read_health
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.page import header_value
from blogfeeds.items import Blog, BlogCheck, FriendLink

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


def page_health(response: Response) -> Health:
    """What the page answered says alone: a parking page or a bot wall, JavaScript only, or ok."""
    body = response.body if response.body else b""
    return read_health(response.url, response.status, response_headers(response), body)


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
