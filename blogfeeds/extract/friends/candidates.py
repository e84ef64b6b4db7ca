"""What the friend layers share: the candidates they propose (:class:`Candidate`) and the
extraction so far (:class:`Found`), which each layer reads and adds to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import lxml.html

from blogfeeds.extract.friends.filters import Filters
from blogfeeds.extract.friends.measure import Link
from blogfeeds.extract.friends.model import ScoredContainer
from blogfeeds.extract.friends.owner import Owner
from blogfeeds.extract.friends.themes import ThemeRule
from blogfeeds.extract.scoring import Adjustment


@dataclass
class Candidate:
    """A link a layer proposes as a friend; the filters and deduplication decide."""

    url: str
    name: str
    how: str
    """The layer that found it (:attr:`~blogfeeds.extract.friends.model.Friend.how`)."""
    score: float
    order: int
    """Document position (pre-order index): candidates are assembled in this order."""
    avatar: str = ""
    rels: tuple[str, ...] = ()
    listed_as: str = ""
    link: Link | None = None
    """The measured link, or None for a URL not linked in the markup."""
    verdict: str | None = None
    """Why the layer itself drops it, or None."""


@dataclass
class Found:
    """The extraction so far: the page's context (owner, filters, theme rules, scorers) and
    what the layers have added (candidates, the links they claimed, containers, sources)."""

    owner: Owner
    filters: Filters
    friend_page: bool
    """The page is a friend-link page (its path or title says so)."""
    friend_path: bool
    """The page's path names a friend-link page (``/links/``): stronger than its title."""
    by_el: dict[lxml.html.HtmlElement, Link]
    """The measured links by their ``<a>`` element."""
    page_host: str = ""
    """The page's host (normalised)."""
    user_rules: list[ThemeRule] = field(default_factory=list)
    """The user's theme-table entries, tried before the bundled ones."""
    scorers: list[Callable[..., Adjustment | None]] = field(default_factory=list)
    """The statistical layer's container scorers, built."""
    candidates: list[Candidate] = field(default_factory=list)
    claimed: set[lxml.html.HtmlElement] = field(default_factory=set)
    """Links a layer has proposed (a later layer does not propose them again)."""
    cards: bool = False
    """A layer found widget or theme cards (the statistical union then proposes nothing)."""
    containers: list[ScoredContainer] = field(default_factory=list)
    """The statistical layer's scored containers, best first."""
    data_sources: list[str] = field(default_factory=list)
    """Machine-readable friend lists the page points to."""
    invalid_urls: list[str] = field(default_factory=list)
    """Links whose host no host may hold (:class:`~blogfeeds.extract.identity.InvalidURL`)."""
