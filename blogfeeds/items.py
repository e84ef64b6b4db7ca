"""Items yielded by the spiders: plain dataclasses, one module, documented field by field.

Scrapy handles dataclass items natively (``itemadapter``); the feed exports (``-O blogs.jsonl``)
and the storage pipelines read the same fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FeedInfo:
    """One feed candidate kept for a blog (the main feed and its alternates)."""

    url: str
    """Absolute feed URL."""
    type: str
    """Declared MIME type, lower-cased without parameters (``application/rss+xml``), or ``""``."""
    title: str = ""
    """The ``title`` attribute of the advertising element."""
    score: float = 0.0
    """Final score on the extractor's scale (the original ``<link>`` rule scores out of 10)."""
    reasons: list[str] = field(default_factory=list)
    """Every rule that changed the score, in order, e.g. ``"-3 no rel=alternate"``."""


@dataclass
class Blog:
    """One blog, identified by :func:`blogfeeds.extract.identity.blog_id`."""

    blog_id: str
    """Stable identity: registered domain or hosted-platform user part (``alice.github.io``)."""
    url: str
    """Final URL of the home page after redirects."""
    title: str = ""
    """``<title>``, falling back to ``og:site_name``."""
    abstract: str = ""
    """At most 100 characters of the page's main text (trafilatura), else its description."""
    language: str = ""
    """``<html lang>`` or ``content-language`` (BCP 47 as written by the page), or ``""``."""
    generator: str = ""
    """``<meta name=generator>`` content, or ``""``."""
    feed_url: str | None = None
    """Main feed URL, or ``None`` when the blog advertises none."""
    feeds: list[FeedInfo] = field(default_factory=list)
    """Every feed candidate kept, best first (the first is ``feed_url``)."""
    friend_count: int = 0
    """Number of friend links found (the :class:`FriendLink` items of this blog)."""
    status: str = "ok"
    """``ok``, ``no_feed``, ``http_4xx``, ``http_5xx``, ``timeout``, ``dns`` or ``blocked``."""
    fetched_at: str = ""
    """When the home page was fetched: ISO 8601 UTC, e.g. ``2026-11-29T20:36:29Z``."""
    depth: int = 0
    """Friend-link hops from the nearest seed (0 for a seed)."""


@dataclass
class FriendLink:
    """A graph edge: blog ``source_blog_id`` lists ``target_url`` as a friend."""

    source_blog_id: str
    """Identity of the blog whose page lists the link."""
    target_url: str
    """Absolute URL of the friend as linked."""
    target_blog_id: str
    """Identity of the friend's blog."""
    name: str = ""
    """Anchor text (whitespace collapsed)."""
    container_score: float = 0.0
    """Score of the container the link was found in (original formula: points)."""
    source_url: str = ""
    """The page the link was read from (home page or friend-link page)."""
