"""Per-domain caps on the blogs a crawl adds: a trap cannot grow the frontier without end.

A friend page anyone can write may invent ``t<hash>.github.io`` blogs, each listing more; each
is its own registered domain to the Public Suffix List, so the cap counts new blogs per
*hosting domain* (:func:`blogfeeds.extract.identity.hosting_domain`: the platform for hosts
under a private suffix, else the registered domain). Once a domain has
``BLOGFEEDS_MAX_BLOGS_PER_DOMAIN`` new blogs, its further blogs found through friend links are
not requested (seeds always are): stats ``blogfeeds/domain_cap/refused`` and
``blogfeeds/domain_cap/domains``, one INFO line per domain. Counts are bounded by
``BLOGFEEDS_SEEN_CAPACITY`` (:class:`~blogfeeds.crawl.seen.SeenMap`); with the Redis frontier
they are shared by every worker (:class:`blogfeeds.frontier.caps.RedisDomainCaps`).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from blogfeeds.crawl.seen import SeenMap
from blogfeeds.extract.identity import hosting_domain

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
