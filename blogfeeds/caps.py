"""Per-domain caps on the blogs a crawl adds: a trap cannot grow the frontier without end.

A page anyone can write may list blogs that exist only to be crawled: a friend page that
invents ``t<hash>.github.io`` blogs, each of which lists more, grows the frontier for ever when
no ``DEPTH_LIMIT`` bounds the hops (the default). Each such blog is its own registered domain
to the Public Suffix List, so the cap counts blogs per *hosting domain*
(:func:`blogfeeds.extract.identity.hosting_domain`): the platform for hosts under a private
public suffix (all of ``*.github.io`` together), else the registered domain.

:class:`DomainCaps` counts the new blogs the spider accepts per hosting domain; once a domain
has ``BLOGFEEDS_MAX_BLOGS_PER_DOMAIN`` (:class:`blogfeeds.config.CapsConfig`) its further new
blogs found through friend links are not requested (seeds always are, and count): counted in
``blogfeeds/domain_cap/refused``, the domain counted once in
``blogfeeds/domain_cap/domains`` and named in one INFO line. Blogs known already (a shorter
path, a re-push) are not counted again. The per-page cap is the friend links read from one
page (``BLOGFEEDS_MAX_FRIENDS_PER_PAGE``, stat ``blogfeeds/friends_over_cap``).

In one process the counts are kept for the last ``BLOGFEEDS_SEEN_CAPACITY`` domains (at most
twice that: :class:`blogfeeds.seen.SeenMap`), so memory stays bounded; a domain forgotten
counts afresh. With the Redis frontier the counts are shared by every worker
(:class:`RedisDomainCaps`, one ``HINCRBY`` per new blog), so the cap holds for the whole crawl;
each worker may accept one blog past it (it learns the domain is full from its own increment).
"""

from __future__ import annotations

import logging
import weakref
from typing import Any
from urllib.parse import urlsplit

from redis.exceptions import RedisError

from blogfeeds.config import CapsConfig, CrawlConfig
from blogfeeds.extract.identity import hosting_domain
from blogfeeds.seen import SeenMap

logger = logging.getLogger(__name__)


def domain_of(url: str) -> str:
    """The hosting domain of ``url`` (``""`` when it has no host)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return hosting_domain(host) if host else ""


class DomainCaps:
    """New blogs per hosting domain in this process (module doc); ``cap`` 0 = no cap."""

    def __init__(self, cap: int, capacity: int = 0, stats: Any = None) -> None:
        self.cap = cap
        self.stats = stats
        self.counts = SeenMap(capacity)
        self.full: set[str] = set()

    def admits(self, url: str) -> bool:
        """Whether a blog new to this process at ``url`` may be requested (nothing counted: its
        acceptance is :meth:`accepted`); a refusal is counted."""
        if not self.cap:
            return True
        domain = domain_of(url)
        if domain not in self.full:
            return True
        self._inc("blogfeeds/domain_cap/refused")
        return False

    def accepted(self, url: str) -> None:
        """A new blog at ``url`` was requested: count it under its domain."""
        if not self.cap:
            return
        domain = domain_of(url)
        if self._add(domain) >= self.cap and domain not in self.full:
            self.full.add(domain)
            self._inc("blogfeeds/domain_cap/domains")
            logger.info(
                "%s has %d new blogs in this crawl (BLOGFEEDS_MAX_BLOGS_PER_DOMAIN): its further "
                "new blogs are not crawled",
                domain or "(no host)",
                self.cap,
            )

    def _add(self, domain: str) -> int:
        count = int(self.counts.get(domain, 0)) + 1
        self.counts.put(domain, count)
        return count

    def _inc(self, stat: str) -> None:
        if self.stats is not None:
            self.stats.inc_value(stat)


class RedisDomainCaps(DomainCaps):
    """:class:`DomainCaps` counted in Redis for every worker (``P S:domain_blogs``)."""

    def __init__(self, redis: Any, key: str, cap: int, capacity: int = 0, stats: Any = None):
        super().__init__(cap, capacity, stats)
        self._redis = redis  # a client, or a function making one at first use
        self.key = key

    def _add(self, domain: str) -> int:
        try:
            if callable(self._redis):
                self._redis = self._redis()
            return int(self._redis.hincrby(self.key, domain, 1))
        except RedisError as exc:  # an outage: count alone (the scheduler reports it)
            logger.debug("Redis unreachable for domain caps, counting alone: %s", exc)
            return super()._add(domain)


class _Stats:
    """The crawler's stats once the crawl has started (the spider is made before)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    def inc_value(self, key: str) -> None:
        self.crawler.stats.inc_value(key)


_CAPS: weakref.WeakKeyDictionary[Any, DomainCaps] = weakref.WeakKeyDictionary()


def domain_caps(crawler: Any) -> DomainCaps:
    """The crawl's one :class:`DomainCaps`: shared in Redis when the Redis frontier is on."""
    caps = _CAPS.get(crawler)
    if caps is None:
        from blogfeeds.frontier.connection import redis_prefix, server  # noqa: PLC0415
        from blogfeeds.frontier.defaults import FrontierKeys  # noqa: PLC0415
        from blogfeeds.frontier.scheduler import redis_enabled  # noqa: PLC0415 - no cycle

        settings = crawler.settings
        cap = CapsConfig.from_settings(settings).max_blogs_per_domain
        capacity = CrawlConfig.from_settings(settings).seen_capacity
        if redis_enabled(settings) and cap:
            spider = getattr(getattr(crawler, "spidercls", None), "name", "blogs")
            key = FrontierKeys(redis_prefix(settings), spider, "").domain_blogs
            connect = lambda: server(settings)  # noqa: E731
            caps = RedisDomainCaps(connect, key, cap, capacity, _Stats(crawler))
        else:
            caps = DomainCaps(cap, capacity, _Stats(crawler))
        _CAPS[crawler] = caps
    return caps
