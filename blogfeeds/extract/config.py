"""How :func:`~blogfeeds.extract.blog.extract_blog` reads a blog: :class:`ExtractConfig`, the
``BLOGFEEDS_*`` settings of extraction read once (feed discovery, friend links, user rules,
page bounds, the abstract, the profile).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from blogfeeds.extract.discovery import DiscoveryConfig
from blogfeeds.extract.friends import FriendConfig
from blogfeeds.extract.icon import HostIcons
from blogfeeds.extract.page import PageLimits
from blogfeeds.extract.settings import (
    ABSTRACT_CHARS,
    ABSTRACT_TEXT,
    ExtractSettings,
    ProfileSettings,
)
from blogfeeds.extract.userrules import RuleSet, load_rules


class SettingsLike(Protocol):
    """What :meth:`ExtractConfig.from_settings` reads (Scrapy's ``Settings`` is one)."""

    def get(self, name: str, default: Any = None) -> Any: ...
    def getint(self, name: str, default: int = 0) -> int: ...
    def getdict(self, name: str, default: Any = None) -> dict[Any, Any]: ...


@dataclass(frozen=True)
class ExtractConfig:
    """How :func:`~blogfeeds.extract.blog.extract_blog` reads a blog (``BLOGFEEDS_*``)."""

    discovery: DiscoveryConfig = field(default_factory=DiscoveryConfig)
    """Feed discovery (``BLOGFEEDS_FEED_*``)."""
    friends: FriendConfig = field(default_factory=FriendConfig)
    """Friend links (``BLOGFEEDS_FRIEND_*``): the ruleset, its layers and scorers."""
    user_rules: RuleSet | None = None
    """User extraction rules (``BLOGFEEDS_RULES_FILE``)."""
    max_pages: int = 3
    """Pages per blog, the home page included (``BLOGFEEDS_MAX_PAGES_PER_BLOG``): friend-link
    pages fetched at most ``max_pages - 1``, data sources at most ``max_pages``."""
    max_friends: int = 500
    """Friend links kept per blog (``BLOGFEEDS_MAX_FRIENDS_PER_PAGE``)."""
    abstract_chars: int = ABSTRACT_CHARS
    """Length of the home page's abstract; 0 = none (``BLOGFEEDS_ABSTRACT_CHARS``)."""
    limits: PageLimits = field(default_factory=PageLimits)
    """How much of each page is read (``BLOGFEEDS_PAGE_MAX_ELEMENTS``, ``..._LINKS``)."""
    abstract_text: int = ABSTRACT_TEXT
    """Characters of the home page's text the abstract reads (``BLOGFEEDS_ABSTRACT_MAX_TEXT``)."""
    abstract_post_page: bool = True
    """Fetch the newest post's page for the abstract (``BLOGFEEDS_ABSTRACT_POST_PAGE``)."""
    profile: ProfileSettings = field(default_factory=ProfileSettings)
    """The blog profile's activity thresholds and favicon check (``BLOGFEEDS_ACTIVITY_*``)."""
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC), compare=False)
    """Now, for the profile's last post (future dates ignored) and activity."""
    host_icons: HostIcons = field(default_factory=HostIcons, compare=False)
    """The favicon checks of path-hosted blogs, shared by every blog this config reads."""

    @classmethod
    def from_settings(cls, settings: SettingsLike, rules_file: str | None = None) -> ExtractConfig:
        """Read the settings once; ``rules_file`` in place of ``BLOGFEEDS_RULES_FILE``.

        Raises :class:`~blogfeeds.extract.userrules.RuleError` for a bad rules file and
        :class:`~blogfeeds.option.StartupError` for a bad setting: the caller says so in its
        own terms.
        """
        crawl = ExtractSettings.from_settings(settings)
        path = rules_file or crawl.rules_file
        return cls(
            discovery=DiscoveryConfig.from_settings(settings),
            friends=FriendConfig.from_settings(settings),
            user_rules=load_rules(path) if path else None,
            max_pages=crawl.max_pages_per_blog,
            max_friends=crawl.max_friends_per_page,
            limits=PageLimits(crawl.page_max_elements, crawl.page_max_links),
            abstract_chars=crawl.abstract_chars,
            abstract_text=crawl.abstract_max_text,
            abstract_post_page=crawl.abstract_post_page,
            profile=ProfileSettings.from_settings(settings),
        )
