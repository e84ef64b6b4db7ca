"""Meta refresh without losing the page: a refresh to the page itself is not a redirect.

Scrapy's ``MetaRefreshMiddleware`` turns ``<meta http-equiv="refresh" content="0; url=/">``
into a request for the target; when the target is the page's own URL, that request is the one
just made, the duplicate filter drops it, and the blog vanishes with no item and no log line
(themes print such a self-refresh to reload the page). :class:`SelfAwareMetaRefreshMiddleware`
keeps Scrapy's behaviour for every other target and returns the response itself when the target
is the page's URL (fragment aside). It replaces Scrapy's at the same order (580).
Stat: ``blogfeeds/meta_refresh_to_self``.

Scrapy's test decodes the whole body (``response.text``) to read its first 4,096 characters,
and the response keeps that text as long as it lives: a blog's home page lives until its feed
and friend pages are read, and its text can be four times its bytes. Nothing else of the crawl
reads ``response.text`` (extraction decodes the bytes itself), so a body that cannot hold a
refresh is passed on undecoded (:func:`may_refresh`).
"""

from __future__ import annotations

from typing import Any

from scrapy import Request
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware
from scrapy.http import HtmlResponse, Response
from scrapy.utils.url import strip_url
from w3lib.url import canonicalize_url

REFRESH_WINDOW = 4 * 4096
"""Bytes that hold the 4,096 characters Scrapy's ``get_meta_refresh`` reads, in any encoding of
at most four bytes a character."""


def may_refresh(body: bytes) -> bool:
    """False when the first 4,096 characters of ``body`` cannot hold a meta refresh: its first
    :data:`REFRESH_WINDOW` bytes lack the letters ``refresh`` (any case), which every encoding
    a browser reads writes as those bytes, save UTF-16 and UTF-32, whose ASCII has NUL bytes
    (then True)."""
    head = body[:REFRESH_WINDOW]
    return b"refresh" in head.lower() or b"\x00" in head


def _same_page(a: str, b: str) -> bool:
    return canonicalize_url(strip_url(a)) == canonicalize_url(strip_url(b))


class SelfAwareMetaRefreshMiddleware(MetaRefreshMiddleware):
    """``MetaRefreshMiddleware`` that keeps a page refreshing to itself (module doc)."""

    def __init__(self, settings: Any, stats: Any = None) -> None:
        super().__init__(settings)
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> SelfAwareMetaRefreshMiddleware:
        mw = super().from_crawler(crawler)
        mw.stats = crawler.stats
        return mw

    def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Request | Response:
        if isinstance(response, HtmlResponse) and not may_refresh(response.body):
            return response
        result = super().process_response(request, response)
        if isinstance(result, Request) and _same_page(result.url, response.url):
            if self.stats is not None:
                self.stats.inc_value("blogfeeds/meta_refresh_to_self")
            return response
        return result
