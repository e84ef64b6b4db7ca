"""Items yielded by the spiders: plain dataclasses, one module, documented field by field.

Scrapy handles dataclass items natively (``itemadapter``); the feed exports (``-O blogs.jsonl``)
and the storage pipelines read the same fields. Every item's first field is ``type`` (``blog``,
``friend_link``, ``blog_address``, ``feed_fetch``): one export file holds several kinds of
record, and a reader tells them apart by it. It is not a constructor argument (``init=False``):
it names the class.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from blogfeeds.extract.feedreader import FeedEntry


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

    type: str = field(default="blog", init=False)
    """The record type in an export: always ``blog``."""
    blog_id: str
    """Stable identity: registered domain or hosted-platform user part (``alice.github.io``)."""
    url: str
    """Final URL of the home page after redirects."""
    title: str = ""
    """``<title>``, falling back to ``og:site_name``."""
    abstract: str = ""
    """The opening of the blog's newest post, at most ``BLOGFEEDS_ABSTRACT_CHARS`` (100)
    characters: from the main feed's newest entry, else the home page (its first post card,
    else its main text)."""
    abstract_source: str = ""
    """``feed``, ``page`` or ``""`` (:mod:`blogfeeds.extract.abstract`)."""
    language: str = ""
    """The page's language declaration checked against its text
    (:func:`blogfeeds.extract.profile.check_language`): ``<html lang>`` or
    ``content-language`` as written when the text agrees, else the detected ISO 639-1 code;
    ``""`` when neither tells."""
    language_declared: str = ""
    """The declaration as written (BCP 47), ``""`` when the page declares none."""
    description: str = ""
    """The blog's own tagline (feed subtitle, meta/og description, a theme's subtitle), not
    the abstract; ``""`` when none."""
    description_source: str = ""
    """``feed``, ``meta``, ``og``, ``theme`` or ``""``."""
    author: str = ""
    """The blog's author (meta author, the feed's author, rel=author/h-card, JSON-LD)."""
    icon_url: str = ""
    """The largest square icon the page declares, else ``/favicon.ico`` when it is an image."""
    avatars: list[dict[str, str]] = field(default_factory=list)
    """The pictures other blogs' friend cards show for this blog, ``{"url", "source"}`` (the
    blog whose card shows it): empty in a crawl's own items (a blog's item is read from its
    own page), filled from ``friend_links.avatar`` by the exports."""
    last_post_at: str = ""
    """The newest post's date, ISO 8601 UTC (main feed, else the page); updated by
    ``scrapy crawl feeds``; ``""`` when unknown."""
    posts_per_month: float | None = None
    """Posts a month over the main feed's window (None: fewer than two dated entries)."""
    activity: str = ""
    """``active``, ``slowing``, ``dormant`` or ``dead`` (``BLOGFEEDS_ACTIVITY_*_DAYS``), ``""``
    when no post date is known."""
    generator: str = ""
    """``<meta name=generator>`` content as written (the first of the page), or ``""``."""
    platform: str = ""
    """The platform the page's generators name, one spelling per platform (``WordPress``,
    ``Hexo``; :func:`blogfeeds.extract.platform.platform_of`), or ``""`` when unknown."""
    platform_version: str = ""
    """The platform's version when a generator gives it (``6.4.2``), or ``""``."""
    feed_url: str | None = None
    """Main feed URL, or ``None`` when the blog advertises none."""
    feeds: list[FeedInfo] = field(default_factory=list)
    """Every feed candidate kept, best first (the first is ``feed_url``)."""
    friend_count: int = 0
    """Number of friend links found (the :class:`FriendLink` items of this blog)."""
    status: str = "ok"
    """``ok``, ``no_feed``, ``noindex`` or a failure of :data:`blogfeeds.failures.STATUSES`
    (``http_4xx``, ``http_5xx``, ``timeout``, ``dns``, ``blocked``, ...)."""
    status_reason: str = ""
    """Why the status is what it is, in words, when it is not ``ok`` or ``no_feed``: the
    failure's reason as the crawl log gives it (:func:`blogfeeds.failures.failure_reason`:
    ``HTTP 404``, ``SSRF guard: 127.0.0.1 is a loopback address; ...``, ``DNS lookup failed:
    ...``), what made the page unreadable, or the robots directive's source; ``""`` otherwise."""
    fetched_at: str = ""
    """When the home page was fetched: ISO 8601 UTC, e.g. ``2026-11-29T20:36:29Z``."""
    depth: int = 0
    """Friend-link hops from the nearest seed (0 for a seed)."""
    truncated: str = ""
    """The bounds of page size the home page reached, comma-separated (``links``,
    ``elements``, ``text``, ``friend_page/links``; :attr:`blogfeeds.extract.report.BlogReport.
    truncated`): the blog was read from the first part of the page only. ``""``: read whole."""
    observation: str = ""
    """What the home page says of the blog's addresses: an
    :class:`~blogfeeds.extract.aliases.Observation` as JSON
    (:func:`~blogfeeds.extract.aliases.observation_json`), from which the store finds the
    blog's other addresses; ``""`` for a page not read."""


@dataclass
class BlogAddress:
    """An address answered by permanent or temporary redirects to another blog's home page:
    what it says of itself is its redirect chain (the store decides from it whether the address
    is an alias of that blog)."""

    type: str = field(default="blog_address", init=False)
    """The record type in an export: always ``blog_address``."""
    blog_id: str
    """Identity of the address requested."""
    url: str
    """The address requested."""
    observation: str
    """Its :class:`~blogfeeds.extract.aliases.Observation` as JSON: the redirects and where
    they ended."""


@dataclass
class BlogCheck:
    """One read of a blog's home page, as health (:mod:`blogfeeds.extract.health`): the store
    keeps it in ``blog_checks`` and sets the blog's ``health`` from it and its history."""

    type: str = field(default="blog_check", init=False)
    """The record type in an export: always ``blog_check``."""
    blog_id: str
    url: str
    """The address read."""
    kind: str
    """This read's health alone (:data:`blogfeeds.extract.health.KINDS`); the store turns a
    failure into ``dead`` after ``BLOGFEEDS_HEALTH_DEAD_AFTER`` in a row."""
    reason: str
    checked_at: str
    http_status: int | None = None
    final_url: str = ""
    response_ms: int | None = None
    moved_to: str = ""
    gone: bool = False
    """The failure says the host is gone (DNS, refused, 404/410)."""
    etag: str = ""
    last_modified: str = ""
    title: str = ""
    """What this read found (title, generator, language, main feed, friends' digest): a
    takeover changes them all; any change makes the next check come sooner."""
    generator: str = ""
    language: str = ""
    feed_url: str = ""
    digest: str = ""
    page_digest: str = ""
    """Of the home page's bytes: a re-check answered the same bytes reads nothing more."""


@dataclass
class FriendLink:
    """A graph edge: blog ``source_blog_id`` lists ``target_url`` as a friend."""

    type: str = field(default="friend_link", init=False)
    """The record type in an export: always ``friend_link``."""
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
    avatar: str = ""
    """The picture the friend card shows for the friend (absolute URL), or ``""``."""
    feed: str = ""
    """The friend's feed when the page lists it beside the friend's site (not stored in the
    database yet: the feed is found again when the friend's blog is read)."""
    theme: str = ""
    """The theme the list comes from, as the extraction tells it: the theme or widget rule that
    found the friend (``theme:butterfly``), else the platform of the blog's generator
    (``platform:Hexo``), else ``""``: what the crawl-wide rule for theme defaults groups blogs
    by (:mod:`blogfeeds.storage.themedefaults`)."""
    position: int = 0
    """The friend's place in the page's list, from 0."""
    credited: bool = False
    """The page's footer credits the friend's owner (:mod:`blogfeeds.extract.friends.credits`)."""
    kind: str = "site"
    """What the link is (:attr:`blogfeeds.extract.friends.model.Friend.kind`): ``site`` the
    friend's site, ``feed`` its feed, ``gemini`` or ``gopher`` a capsule read through a web
    proxy."""


@dataclass
class FeedFetch:
    """One revisit of a feed by ``scrapy crawl feeds``: its new schedule state and new entries."""

    type: str = field(default="feed_fetch", init=False)
    """The record type in an export: always ``feed_fetch``."""
    feed_url: str
    """The URL the feed was scheduled under (the key of its ``schedule`` row)."""
    fetched_at: str
    """ISO 8601 UTC of the fetch (the spider's clock, which tests may set)."""
    status: str
    """``ok``, ``not_modified`` (304), ``throttled`` (429/503), ``html`` (the URL now serves a web
    page), ``other``/``empty`` (not a feed), ``broken`` (ill-formed XML without an entry: a
    truncated download), ``dead``, or a failure status of
    :mod:`blogfeeds.failures` (``http_4xx``, ``http_5xx``, ``timeout``, ``dns``, ...)."""
    http_status: int = 0
    """Final HTTP status, 0 when no response arrived."""
    state: dict[str, object] = field(default_factory=dict)
    """The feed's :class:`blogfeeds.revisit.FeedState` after this fetch, as a dict."""
    level: int = 0
    """The level (1..5) whose interval is nearest below the planned revisit interval."""
    entries: list[FeedEntry] = field(default_factory=list)
    """Entries not seen before, as the feed reader read them, stored under their dedupe ``key``
    with ``fetched_at`` as first seen (they may still exist in storage: the store ignores known
    keys)."""
    moved_to: str | None = None
    """New URL after a permanent redirect (301/308) to a working feed; the old URL becomes an
    alias."""
    blog_id: str | None = None
    changed: bool = False
    """The revisit policy counted new entries (never on a first fetch or a GUID rewrite)."""
    host_pause_until: str | None = None
    """ISO 8601 UTC until which the feed's host asked for no requests (429/503 Retry-After)."""
    hubs: list[str] | None = None
    """WebSub hubs the feed announced (:mod:`blogfeeds.extract.feedreader.websub`), ``[]`` for
    none; None when the fetch read no feed (nothing learnt)."""
    topic: str = ""
    """The feed's WebSub topic (its ``rel=self`` URL, else the fetched URL) when ``hubs`` is set."""
    error: str = ""
    """Why the fetch failed, in words (``HTTP 500``, ``DNS lookup failed: ...``, ``a web page, not
    a feed (text/html)``); ``""`` when the feed answered (``ok``, ``not_modified``)."""
    lease_owner: str | None = None
    """The worker that fetched the feed under its lease. When the lease expired and another
    worker leased the feed since, the store keeps that worker's schedule row and state and adds
    only the entries; None: stored whatever the lease."""
