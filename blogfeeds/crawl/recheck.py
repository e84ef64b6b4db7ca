"""``scrapy crawl blogs -a recheck=due|all``: the stored blogs a crawl reads again.

A re-check is a crawl whose seeds come from the store (:func:`blogfeeds.storage.checks.
due_blogs`): ``all`` every stored blog, ``due`` those whose adaptive interval has run out. Each
is offered to the crawl's admission like a seed, so the politeness, robots.txt, SSRF guard and
Redis frontier of a first crawl apply. With the Redis frontier each blog is claimed once across
the workers of one re-check (``SET NX`` on ``<prefix>blogs:recheck:<blog id>``, expiring after
``BLOGFEEDS_RECHECK_MIN_HOURS``), and the frontier forgets it
(:func:`~blogfeeds.frontier.dupefilter.forget_blog`) so that its home page is fetched again.
A request carries the validators of the last read (conditional GET): a 304 answer, or the very
bytes of the last read, is a check that says the blog is there and unchanged, and reads nothing
more (no feed discovery, no friend page). A friend already stored is
re-read only when it is due itself; a new friend is crawled as in a first crawl.
"""

from __future__ import annotations

import logging
from typing import Any

from blogfeeds.config import database_url
from blogfeeds.crawl.checks import PAGE_META, now
from blogfeeds.extract.identity import blog_id
from blogfeeds.frontier.dupefilter import forget_blog
from blogfeeds.health_settings import BlogHealthSettings
from blogfeeds.storage.checks import RECHECK_MODES, Due, due_blogs
from blogfeeds.storage.db import Store

logger = logging.getLogger(__name__)

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
