"""The settings of extraction (``BLOGFEEDS_*`` read by :mod:`blogfeeds.extract`), declared apart
from the extractors: the settings table (:mod:`blogfeeds.config`) lists them without loading
an extractor, so ``import blogfeeds.settings`` stays light. What each extractor builds from them
is its own ``*Config`` (:class:`~blogfeeds.extract.config.ExtractConfig`,
:class:`~blogfeeds.extract.discovery.DiscoveryConfig`,
:class:`~blogfeeds.extract.friends.FriendConfig`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from blogfeeds.option import SettingsGroup, option

PAGE_MAX_ELEMENTS = 50_000
"""Default of the elements of a page read (:class:`~blogfeeds.extract.page.PageLimits`)."""

PAGE_MAX_LINKS = 10_000
"""Default of the ``<a>`` links of a page read."""

ABSTRACT_CHARS = 100
"""Default abstract length, in characters (not bytes)."""

ABSTRACT_TEXT = 2_000_000
"""Default of the characters of a page's text (its text nodes, scripts included, in document
order) the abstract reads: trafilatura's cost grows with the text, and the largest page of the
corpus holds 1.1 million."""

FEED_RULESETS = ("blogfeeds", "original")
"""Accepted values of ``BLOGFEEDS_FEED_RULESET``."""

FRIEND_RULESETS = ("blogfeeds", "original")
"""Accepted values of ``BLOGFEEDS_FRIEND_RULESET``."""


@dataclass(frozen=True)
class ExtractSettings(SettingsGroup):
    """The options of :class:`ExtractConfig` that are not feed discovery's or friend links'."""

    component: ClassVar[str] = "blogfeeds.extract.blog (extract_blog)"

    max_pages_per_blog: int = option(
        "BLOGFEEDS_MAX_PAGES_PER_BLOG",
        3,
        "Pages fetched per blog for discovery (the home page is one).",
        low=1,
    )
    max_friends_per_page: int = option(
        "BLOGFEEDS_MAX_FRIENDS_PER_PAGE",
        500,
        "Friend links read from one page (the rest are ignored and counted).",
        low=0,
    )
    page_max_elements: int = option(
        "BLOGFEEDS_PAGE_MAX_ELEMENTS",
        PAGE_MAX_ELEMENTS,
        "Elements of a page read, in document order (the rest is not parsed, the blog says "
        "truncated: elements); 0 = all.",
        low=0,
    )
    page_max_links: int = option(
        "BLOGFEEDS_PAGE_MAX_LINKS",
        PAGE_MAX_LINKS,
        "<a> links of a page read, in document order (the rest is not parsed, the blog says "
        "truncated: links); 0 = all.",
        low=0,
    )
    abstract_chars: int = option(
        "BLOGFEEDS_ABSTRACT_CHARS",
        ABSTRACT_CHARS,
        "Characters of a blog's abstract, the opening of its newest post (from the main feed, "
        "else the home page); 0 = no abstract.",
        low=0,
    )
    abstract_post_page: bool = option(
        "BLOGFEEDS_ABSTRACT_POST_PAGE",
        True,
        "Fetch the newest post's page (one request) when the main feed gives only a short "
        "summary of it, or there is no feed: its opening is the abstract.",
    )
    abstract_max_text: int = option(
        "BLOGFEEDS_ABSTRACT_MAX_TEXT",
        ABSTRACT_TEXT,
        "Characters of a page's text the abstract reads, in document order (past it the blog "
        "says truncated: text); 0 = all.",
        low=0,
    )
    rules_file: str = option(
        "BLOGFEEDS_RULES_FILE",
        "",
        "User extraction rules (TOML; docs: user rules); empty = none.",
        env="BLOGFEEDS_RULES_FILE",
    )


@dataclass(frozen=True)
class DiscoverySettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.extract (feed discovery)"

    ruleset: str = option(
        "BLOGFEEDS_FEED_RULESET",
        "blogfeeds",
        'Feed discovery: "blogfeeds" (staged, validated) or "original" (page-only <link> rule).',
        choices=FEED_RULESETS,
    )
    scorers: Mapping[str, int | None] = option(
        "BLOGFEEDS_FEED_SCORERS",
        {},
        "Your feed scorers {dotted path: order}, merged over FEED_SCORERS_BASE; None disables.",
    )
    stages: Mapping[str, int | None] = option(
        "BLOGFEEDS_FEED_STAGES",
        {},
        "Your feed-candidate stages {dotted path: order}, merged over FEED_STAGES_BASE.",
    )
    max_requests: int = option(
        "BLOGFEEDS_FEED_MAX_REQUESTS",
        10,
        "Requests per blog for feed discovery; 0 = the page's own links only.",
        low=0,
    )
    max_fetch_seconds: float = option(
        "BLOGFEEDS_FEED_MAX_FETCH_SECONDS",
        10.0,
        "Seconds of fetch time per blog for feed discovery.",
        low=0,
    )
    retry_user_agent: str = option(
        "BLOGFEEDS_FEED_RETRY_USER_AGENT",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/126.0 Safari/537.36",
        "User-Agent of the one retry after a 403; empty = no retry.",
    )


@dataclass(frozen=True)
class FriendSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.extract (friend links)"

    ruleset: str = option(
        "BLOGFEEDS_FRIEND_RULESET",
        "blogfeeds",
        'Friend links: "blogfeeds" (the layered extractor) or "original" (the container formula).',
        choices=FRIEND_RULESETS,
    )
    scorers: Mapping[str, int | None] = option(
        "BLOGFEEDS_FRIEND_SCORERS",
        {},
        "Your container scorers {dotted path: order}, merged over FRIEND_SCORERS_BASE.",
    )
    layers: Mapping[str, int | None] = option(
        "BLOGFEEDS_FRIEND_LAYERS",
        {},
        "Your friend-link layers {dotted path: order}, merged over FRIEND_LAYERS_BASE.",
    )


@dataclass(frozen=True)
class ProfileSettings(SettingsGroup):
    """The activity thresholds of a blog's profile."""

    component: ClassVar[str] = "blogfeeds.extract.profile (the blog profile)"

    active_days: int = option(
        "BLOGFEEDS_ACTIVITY_ACTIVE_DAYS",
        90,
        "A blog with a post in this many days is `active`.",
        low=1,
    )
    dormant_days: int = option(
        "BLOGFEEDS_ACTIVITY_DORMANT_DAYS",
        365,
        "A blog with no post in this many days is `dormant` (between the two: `slowing`).",
        low=1,
    )
    dead_days: int = option(
        "BLOGFEEDS_ACTIVITY_DEAD_DAYS",
        1095,
        "A blog with no post in this many days (or unreachable) is `dead`.",
        low=1,
    )
    favicon_check: bool = option(
        "BLOGFEEDS_PROFILE_FAVICON_CHECK",
        True,
        "Fetch `/favicon.ico` when the home page declares no icon (one request a blog).",
    )
