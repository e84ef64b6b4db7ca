"""A blog's home page that redirects permanently to another blog's reaches the spider.

Scrapy's ``RedirectMiddleware`` hands the redirected request to the scheduler, whose duplicate
filter drops it when the target was requested already: a ``user.github.io`` that answers 301
to a custom domain crawled before would leave no trace, and the store would never learn that
it is an alias (:mod:`blogfeeds.storage.nodes`). :class:`AliasRedirectMiddleware` keeps Scrapy's
behaviour and lets through a permanent redirect (301, 308) of a blog's home-page request
(``meta["blog_id"]``) to another blog identity: one more request of a page fetched already,
which the spider reads as a redirect to a blog analysed already (it stores the address only).
It replaces Scrapy's at the same order (600). Stat: ``blogfeeds/alias_redirect``.
"""

from __future__ import annotations

from typing import Any

from scrapy import Request
from scrapy.downloadermiddlewares.redirect import RedirectMiddleware

from blogfeeds.extract.aliases import PERMANENT
from blogfeeds.extract.identity import blog_id


def _identity(url: str) -> str | None:
    try:
        return blog_id(url)
    except ValueError:
        return None


class AliasRedirectMiddleware(RedirectMiddleware):
    """``RedirectMiddleware`` that never filters a blog's permanent move (module doc)."""

    def _redirect(self, redirected: Request, request: Request, reason: Any) -> Request:
        redirected = super()._redirect(redirected, request, reason)
        blog = request.meta.get("blog_id")
        if blog and reason in PERMANENT and _identity(redirected.url) not in (None, blog):
            redirected.dont_filter = True
            self.crawler.stats.inc_value("blogfeeds/alias_redirect")
        return redirected
