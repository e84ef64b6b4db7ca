"""Crawl summary: blogs found, with a feed, by platform, by status, and the most linked blogs.

:class:`CrawlSummary` logs it when ``scrapy crawl blogs`` ends, from the items that went
through the pipelines (``item_scraped``: a dropped duplicate is not counted); ``scrapy stats``
prints the same summary for everything stored (:func:`summarize`). Blogs are counted by platform
name (:func:`blogfeeds.extract.platform.platform_of`: ``Hexo 7.3.0`` and ``hexo`` are both
``Hexo``; :func:`platform_label`); in-degree counts distinct blogs that list a blog as a friend
(self-links ignored).
Settings: ``BLOGFEEDS_SUMMARY_ENABLED`` (False: the extension is off), ``BLOGFEEDS_SUMMARY_TOP``
(how many of the most linked blogs), :class:`blogfeeds.config.SummarySettings`.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from blogfeeds.config import CrawlSettings, SummarySettings, database_url
from blogfeeds.items import Blog, FriendLink
from blogfeeds.storage.db import Store
from blogfeeds.storage.url import redact

logger = logging.getLogger(__name__)

UNKNOWN = "(unknown)"
"""The platform label of a blog whose generator names no known platform."""
NONE = "(none)"
"""The platform label of a blog without a generator."""


def platform_label(platform: str | None, generator: str | None) -> str:
    """What a blog counts as in ``By platform``: its platform name, else :data:`UNKNOWN` when
    it has a generator, else :data:`NONE`."""
    return platform or (UNKNOWN if (generator or "").strip() else NONE)


@dataclass
class Summary:
    """Counts over a set of blogs and friend links (see the module docstring)."""

    blogs: int = 0
    with_feed: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_platform: Counter[str] = field(default_factory=Counter)
    by_health: Counter[str] = field(default_factory=Counter)
    """Stored blogs by health (:mod:`blogfeeds.extract.health`; ``(unchecked)`` for none)."""
    links: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    """The friend links by kind (``site``, ``feed``, ``gemini``, ``gopher``: what each is)."""
    dropped: Counter[str] = field(default_factory=Counter)
    """Links the blogs list that the crawl dropped from the map, by reason (``theme-default``:
    :meth:`blogfeeds.storage.db.Store.dropped_links`); not among ``links``."""
    top: list[tuple[str, str, int]] = field(default_factory=list)
    """``(blog_id, title, in-degree)``, most linked first (ties by blog id)."""

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view (``scrapy stats --json``)."""
        return {
            "blogs": self.blogs,
            "with_feed": self.with_feed,
            "friend_links": self.links,
            "friend_links_by_kind": dict(_ranked(self.by_kind)),
            "by_status": dict(_ranked(self.by_status)),
            "by_platform": dict(_ranked(self.by_platform)),
            "by_health": dict(_ranked(self.by_health)),
            "dropped_links": dict(_ranked(self.dropped)),
            "top_in_degree": [{"blog_id": b, "title": t, "in_degree": n} for b, t, n in self.top],
        }

    def render(self, platforms: int = 10) -> str:
        """The summary as log/terminal lines."""
        share = f" ({100 * self.with_feed / self.blogs:.0f} %)" if self.blogs else ""
        lines = [
            f"Blogs: {self.blogs}, with a feed: {self.with_feed}{share}; "
            f"friend links: {self.links}",
            "By status: " + (_counts(_ranked(self.by_status)) or "-"),
            "By platform: " + (_counts(_ranked(self.by_platform)[:platforms]) or "-"),
        ]
        if self.by_health:
            lines.append("By health: " + _counts(_ranked(self.by_health)))
        if self.by_kind:
            lines.append("Friend links, by kind: " + _counts(_ranked(self.by_kind)))
        if self.dropped:
            lines.append("Dropped links, by reason: " + _counts(_ranked(self.dropped)))
        lines += [
            "Most linked (in-degree):",
        ]
        lines += [f"  {n:>5}  {b}  {t}".rstrip() for b, t, n in self.top] or ["  -"]
        return "\n".join(lines)


def _ranked(counts: Counter[str]) -> list[tuple[str, int]]:
    """Most first, ties by name and ``(none)``/``(unknown)`` last: the same crawl says the same
    whatever order its blogs came in."""
    return sorted(counts.items(), key=lambda item: (-item[1], item[0].startswith("("), item[0]))


def _counts(pairs: Iterable[tuple[str, int]]) -> str:
    return ", ".join(f"{name} {n}" for name, n in pairs)


class SummaryBuilder:
    """Accumulates blogs and friend links one at a time (a crawl's items or stored rows)."""

    def __init__(self) -> None:
        self.blogs: dict[str, tuple[str, str, bool, str]] = {}
        # target -> its one source, or the set of its sources once there are two: most targets
        # of a crawl are linked once, and a set per target was most of the summary's memory
        self.sources: dict[str, str | set[str]] = {}
        self.links = 0
        self.kinds: Counter[str] = Counter()

    def add_blog(
        self,
        blog_id: str,
        *,
        status: str,
        platform: str = "",
        generator: str = "",
        feed_url: str | None,
        title: str,
    ) -> None:
        """One blog (a later call for the same id replaces the earlier)."""
        label = platform_label(platform, generator)
        self.blogs[blog_id] = (status or "", label, bool(feed_url), title or "")

    def add_link(self, source: str, target: str, kind: str = "site") -> None:
        """One friend link ``source`` → ``target`` (blog ids), of ``kind``."""
        self.links += 1
        self.kinds[kind or "site"] += 1
        if source == target:
            return
        known = self.sources.get(target)
        if known is None:
            self.sources[target] = source
        elif isinstance(known, str):
            if known != source:
                self.sources[target] = {known, source}
        else:
            known.add(source)

    def in_degree(self, target: str) -> int:
        """Distinct blogs linking ``target``."""
        known = self.sources.get(target)
        return 0 if known is None else 1 if isinstance(known, str) else len(known)

    def summary(self, top: int = 10) -> Summary:
        """The counts so far, with the ``top`` most linked blogs."""
        s = Summary(blogs=len(self.blogs), links=self.links, by_kind=Counter(self.kinds))
        for status, plat, has_feed, _ in self.blogs.values():
            s.by_status[status] += 1
            s.by_platform[plat] += 1
            s.with_feed += has_feed
        ranked = sorted(self.sources, key=lambda b: (-self.in_degree(b), b))[: max(0, top)]
        s.top = [(b, self.blogs.get(b, ("", "", False, ""))[3], self.in_degree(b)) for b in ranked]
        return s


def summarize(
    blogs: Iterable[Mapping[str, Any]], links: Iterable[Mapping[str, Any]], top: int = 10
) -> Summary:
    """The summary of stored rows (:meth:`blogfeeds.storage.db.Store.blogs` and
    :meth:`~blogfeeds.storage.db.Store.friend_links` dicts; the dropped links are the blogs')."""
    builder = SummaryBuilder()
    health: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    for row in blogs:
        health[row.get("health") or "(unchecked)"] += 1
        dropped.update(link["reason"] for link in row.get("dropped_links") or ())
        builder.add_blog(
            row["blog_id"],
            status=row.get("status") or "",
            platform=row.get("platform") or "",
            generator=row.get("generator") or "",
            feed_url=row.get("feed_url"),
            title=row.get("title") or "",
        )
    for link in links:
        builder.add_link(link["source_blog_id"], link["target_blog_id"], link.get("kind", ""))
    summary = builder.summary(top)
    summary.by_health = health
    summary.dropped = dropped
    return summary


class CrawlSummary:
    """Extension: the :class:`Summary` of the crawl's items (only when it scraped a blog): its
    totals go to the stats when the spider closes (``blogfeeds/summary/*``, in Scrapy's stats
    dump), and it is logged when the engine has stopped, after that dump, so that it is the
    last thing a user reads (Scrapy 2.19 sends ``spider_closed``, dumps the stats, logs
    "Spider closed", then sends ``engine_stopped``). ``NotConfigured`` when
    ``BLOGFEEDS_SUMMARY_ENABLED`` is False."""

    def __init__(self, crawler: Any, top: int) -> None:
        self.crawler = crawler
        self.top = top
        self.builder = SummaryBuilder()
        self.text: str | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> CrawlSummary:
        config = SummarySettings.from_settings(crawler.settings)
        if not config.enabled:
            raise NotConfigured("BLOGFEEDS_SUMMARY_ENABLED is False")
        ext = cls(crawler, config.top)
        crawler.signals.connect(ext.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(ext.engine_stopped, signal=signals.engine_stopped)
        return ext

    def item_scraped(self, item: Any) -> None:
        if isinstance(item, Blog):
            self.builder.add_blog(
                item.blog_id,
                status=item.status,
                platform=item.platform,
                generator=item.generator,
                feed_url=item.feed_url,
                title=item.title,
            )
        elif isinstance(item, FriendLink):
            self.builder.add_link(item.source_blog_id, item.target_blog_id, item.kind)

    def spider_closed(self, spider: Any, reason: str) -> None:
        # a friend-link crawl says what it did even when it fetched nothing; another spider
        # (`crawl feeds`, which logs its own summary) only when it scraped blogs. After no_seeds
        # there was nothing to crawl: the error logged says why.
        crawled = getattr(spider, "name", "") == "blogs" and reason != "no_seeds"
        if not crawled and not self.builder.blogs:
            return
        summary = self.builder.summary(self.top)
        stats = self.crawler.stats
        # links the storage took off the map as it wrote them (the pipelines have closed)
        prefix = "blogfeeds/db/friend_links_dropped/"
        for key, n in stats.get_stats().items():
            if key.startswith(prefix):
                summary.dropped[key.removeprefix(prefix)] += n
        stats.set_value("blogfeeds/summary/blogs", summary.blogs)
        stats.set_value("blogfeeds/summary/with_feed", summary.with_feed)
        stats.set_value("blogfeeds/summary/friend_links", summary.links)
        self.text = (
            f"Crawl summary ({reason}):\n{summary.render()}{self._stopped(summary)}"
            f"{self._database(summary)}"
        )

    def _stopped(self, summary: Summary) -> str:
        """Why the crawl left blogs unvisited: a bound (``BLOGFEEDS_MAX_BLOGS``), the SSRF
        guard refusing seeds, or everything crawled before."""
        stats, settings = self.crawler.stats, self.crawler.settings
        lines = ""
        capped = stats.get_value("blogfeeds/blog_cap_reached", 0)
        if capped:
            cap = CrawlSettings.from_settings(settings).max_blogs
            lines += (
                f"\nStopped by BLOGFEEDS_MAX_BLOGS={cap}: {capped} links to further blogs "
                "not followed (0 = no cap)"
            )
        refused = stats.get_value("blogfeeds/seed_refused", 0)
        if refused:
            lines += (
                f"\n{refused} seeds refused by the SSRF guard, not stored: set "
                "BLOGFEEDS_ALLOW_PRIVATE_TARGETS=1 for a local test site"
            )
        seen = stats.get_value("dupefilter/filtered", 0)
        if not summary.blogs and seen:
            jobdir = settings.get("JOBDIR")
            lines += f"\nNothing fetched: {seen} already crawled" + (
                f" by JOBDIR {jobdir} (a finished job); another JOBDIR, or none, crawls again"
                if jobdir
                else " (the duplicate filter)"
            )
        return lines

    def _database(self, summary: Summary) -> str:
        """The line saying where the blogs went and what else that database holds: it keeps
        every crawl's blogs (a first try's failed seed too), and ``scrapy stats`` counts them
        all. Read when the pipelines have closed (before ``spider_closed``); "" when storage
        is off or the database cannot be read."""
        url = database_url(self.crawler.settings)
        if not url:
            return ""
        try:
            with Store.open(url, read_only=True) as store:
                blogs, links = store.count("blogs"), store.count("friend_links")
        except Exception as exc:  # the crawl's own errors said why; the summary stands
            logger.debug("cannot count the stored blogs: %s", exc)
            return ""
        earlier = blogs - summary.blogs
        more = f" ({earlier} from earlier crawls)" if earlier > 0 else ""
        return (
            f"\nDatabase {redact(url)}: {blogs} blogs{more}, {links} friend links in all; "
            "`scrapy stats` summarises them; another BLOGFEEDS_DATABASE_URL starts afresh"
        )

    def engine_stopped(self) -> None:
        if self.text is not None:
            logger.info("%s", self.text)
