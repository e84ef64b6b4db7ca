"""The items a crawl stores for a :class:`~blogfeeds.extract.report.BlogReport`: one mapping,
used by the ``blogs`` spider and by ``scrapy inspect --json`` (which shows what is stored); and
the item of an address that redirected to another blog (:func:`address_item`)."""

from __future__ import annotations

from blogfeeds.extract.aliases import Hop, Observation, observation_json
from blogfeeds.extract.discovery import DiscoveredFeed, FeedCandidate
from blogfeeds.extract.discovery.vocabulary import FORMAT_TYPES
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.report import BlogReport
from blogfeeds.items import Blog, BlogAddress, FeedInfo, FriendLink


def feed_info(c: FeedCandidate | DiscoveredFeed) -> FeedInfo:
    """The :class:`~blogfeeds.items.FeedInfo` item for a candidate or a discovered feed (whose
    ``type`` becomes the MIME type of its format)."""
    if isinstance(c, DiscoveredFeed):
        mtype = FORMAT_TYPES.get(c.type, c.type)
        return FeedInfo(url=c.url, type=mtype, title=c.title, score=c.score, reasons=c.reasons)
    return FeedInfo(url=c.url, type=c.type, title=c.title, score=c.score, reasons=list(c.reasons))


def status_reason(report: BlogReport) -> str:
    """Why an answered page is not stored as ``ok``, in the words of the crawl's log line
    ("<url> asks noindex (meta)"); ``""`` otherwise."""
    return f"asks noindex ({', '.join(report.robots.sources)})" if report.robots.noindex else ""


def blog_items(report: BlogReport, fetched_at: str, depth: int) -> tuple[Blog, list[FriendLink]]:
    """The items the crawl stores for a report: the blog, and one link per friend whose URL
    names a blog (``scrapy inspect --json`` shows the same fields)."""
    feeds = [feed_info(feed) for feed in report.feeds]
    meta = report.metadata
    prof = report.profile
    blog = Blog(
        blog_id=report.blog_id,
        url=report.url,
        title=meta.title,
        abstract=meta.abstract,
        abstract_source=meta.abstract_source,
        language=prof.language,
        language_declared=prof.language_declared,
        description=prof.description,
        description_source=prof.description_source,
        author=prof.author,
        icon_url=prof.icon_url,
        last_post_at=prof.last_post_at,
        posts_per_month=prof.posts_per_month,
        activity=prof.activity,
        generator=meta.generator,
        platform=meta.platform,
        platform_version=meta.platform_version,
        feed_url=feeds[0].url if feeds else None,
        feeds=feeds,
        friend_count=len(report.friends),
        status=report.status,
        status_reason=status_reason(report),
        fetched_at=fetched_at,
        depth=depth,
        truncated=",".join(report.truncated),
        observation=observation_json(report.observation) if report.observation else "",
    )
    links = [
        FriendLink(
            source_blog_id=report.blog_id,
            target_url=edge.friend.url,
            target_blog_id=edge.blog_id,
            name=edge.friend.name,
            container_score=round(report.container_score, 3),  # no float noise (2999.9999...)
            source_url=report.friend_source,
            avatar=edge.friend.avatar,
            feed=edge.friend.feed,
            theme=list_theme(edge.friend.how, meta.platform),
            position=position,
            credited=edge.friend.credited,
            kind=edge.friend.kind or "site",
        )
        for position, edge in enumerate(report.edges())
        if edge.blog_id is not None
    ]
    return blog, links


def list_theme(how: str, platform: str) -> str:
    """The theme a friend's list comes from (:attr:`~blogfeeds.items.FriendLink.theme`): the
    theme or widget rule that found it, else ``platform:<platform>``, else ``""``."""
    if how.startswith(("theme:", "widget:")):
        return how
    return f"platform:{platform}" if platform else ""


def address_item(
    blog_id: str, url: str, final_url: str, redirects: tuple[Hop, ...]
) -> BlogAddress | None:
    """The item of the address ``url`` (identity ``blog_id``) whose ``redirects`` ended on
    ``final_url``, another blog's home page; None when they stayed on the blog's own identity
    (http to https, ``www.``) or there were none."""
    if not redirects or blog_id == _blog_id_or_none(final_url):
        return None
    seen = Observation(url=url, final_url=final_url, redirects=redirects)
    return BlogAddress(blog_id=blog_id, url=url, observation=observation_json(seen))


def _blog_id_or_none(url: str) -> str | None:
    try:
        return blog_id(url)
    except ValueError:
        return None
