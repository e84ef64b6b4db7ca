"""The friend extractor's result types: a counted link, a measured container and its verdict,
a friend, and the whole extraction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import lxml.html


@dataclass(frozen=True)
class LinkRef:
    """A counted link (http(s), at most one path level, no query) in document order."""

    url: str
    """Absolute URL as linked."""
    external: bool
    """Whether it points to another blog than the page's."""
    weight: int
    """2 for ``target="_blank"``, else 1 (only external links are weighted)."""
    element: lxml.html.HtmlElement = field(repr=False, compare=False)
    """The ``<a>`` element (for its anchor text)."""

    @property
    def name(self) -> str:
        """Anchor text, whitespace collapsed."""
        return " ".join(self.element.text_content().split())


@dataclass
class Container:
    """A ``div``/``table``/``ul`` and the measures the rules read."""

    tag: str
    """Element name (``div``)."""
    description: str
    """Short selector-like description: ``div#links.flink-list``."""
    external: int
    """Weighted count of counted external links (``target=_blank`` counts twice)."""
    internal: int
    """Count of counted links to the page's own blog."""
    links: int
    """Number of ``<a href>`` descendants (counted or not)."""
    tags: int
    """Number of element descendants."""
    link_text: int
    """Non-whitespace visible characters inside ``<a href>`` descendants."""
    text: int
    """Non-whitespace visible characters in the container."""
    element: lxml.html.HtmlElement = field(repr=False, compare=False)
    _refs: Sequence[LinkRef] = field(default=(), repr=False, compare=False)
    _start: int = field(default=0, repr=False, compare=False)
    _end: int = field(default=0, repr=False, compare=False)
    friends: int = 0
    """Layered ruleset only: distinct friend-eligible blogs linked (after the filters)."""
    cards: int = 0
    """Layered ruleset only: child elements that each link exactly one of them (cards)."""
    child_text: int = 0
    """Layered ruleset only: visible characters directly inside the child elements (prose
    around a link; a card keeps its text in its own fields)."""
    fed: int = 0
    """Layered ruleset only: friend links listed with their own feed beside them."""
    anchored: bool = False
    """Layered ruleset only: a friend keyword labels it (its own text or a heading before it)."""
    chrome: bool = False
    """Layered ruleset only: inside page chrome (header, nav, footer, menus, share, comments)."""
    span: tuple[int, int] = field(default=(0, 0), repr=False, compare=False)
    """Layered ruleset only: pre-order index range of the subtree (nesting tests in O(1))."""
    layered: bool = False
    """Measured by the layered ruleset (the rules reading the fields above skip others)."""

    @property
    def external_links(self) -> list[LinkRef]:
        """The counted external links, in document order (built on demand)."""
        return [r for r in self._refs[self._start : self._end] if r.external]

    @property
    def xpath(self) -> str:
        """Absolute XPath of the element (computed on demand)."""
        return str(self.element.getroottree().getpath(self.element))


@dataclass
class ScoredContainer:
    """A container's verdict: its score (0 when rejected) and every reason."""

    container: Container
    score: float
    reasons: list[str]
    rejected: bool = False
    below: float | None = None
    """The score of a container rejected for its score alone (below the minimum, no rule
    found it wrong), else None."""

    @property
    def tag(self) -> str:
        """Element name of the container."""
        return self.container.tag

    @property
    def link_count(self) -> int:
        """Number of ``<a href>`` in the container."""
        return self.container.links

    @property
    def links(self) -> int:
        """Alias of :attr:`link_count`."""
        return self.container.links

    @property
    def path(self) -> str:
        """Absolute XPath of the container (computed on demand)."""
        return self.container.xpath


@dataclass(frozen=True)
class Friend:
    """One friend link.

    ``url`` as linked (layered ruleset: Wayback-unwrapped, fragment, ``index.html`` and tracking
    parameters dropped, host lower-cased); ``name`` as shown; ``score`` the evidence in the
    formula's points (a container's score; 1000 per listed friend for the machine-readable and
    theme layers); ``avatar`` an absolute image URL (lazy-load attributes first) or ``""``; ``how``
    the layer that found it (``container``, ``xfn``, ``widget:wordpress-links``,
    ``theme:butterfly``, ``inline``, ``script``, ``opml``, ``json``); ``rels`` the XFN 1.1
    relationship values on the link; ``listed_as`` is ``"dead"`` when the owner lists it under a
    lost/invalid heading; ``kind`` what the link is (below); ``feed`` the friend's feed when the
    owner listed it beside the site: a known feed, not another friend; ``repaired`` the ``href``
    as written when it was broken in an obvious way (``hhttps://``, ``/example.com``) and read as
    ``url``.
    """

    url: str
    name: str
    score: float
    avatar: str = ""
    how: str = ""
    rels: tuple[str, ...] = ()
    listed_as: str = ""
    kind: str = ""
    """``""`` the friend's site; ``"feed"`` the friend's feed, not its site (Blogger BlogList, OPML
    ``xmlUrl``; the crawl reads the blog from it); ``"gemini"`` or ``"gopher"`` a capsule on
    that protocol, linked through a web proxy (the URL the crawl can read; the capsule is the
    friend). A podcast's feed or page is no friend (excluded, reason ``podcast``)."""
    feed: str = ""
    repaired: str = ""
    credited: bool = False
    """The page's footer credits the friend's owner (:mod:`.credits`): the theme's own site,
    or a friend who wrote the theme; the crawl tells them apart across blogs."""


@dataclass
class FriendExtraction:
    """Result of :func:`extract_friends`."""

    containers: list[ScoredContainer]
    """Every container, best first (rejected ones last, in document order); the layered
    ruleset lists only containers linking at least one candidate friend (the others cannot
    give a friend, and on a typical page they are hundreds)."""
    friends: list[Friend]
    """The friends, deduped (original: the best container's external links by URL)."""
    elements: int = 0
    """Elements visited by the measuring pass (equals the tree's element count)."""
    excluded: list[tuple[str, str]] = field(default_factory=list)
    """Layered ruleset: candidate links dropped by a filter, ``(url, reason)``."""
    circles: list[Friend] = field(default_factory=list)
    """Layered ruleset: webrings / blog circles the blog belongs to (memberships)."""
    data_sources: list[str] = field(default_factory=list)
    """Layered ruleset: machine-readable friend lists the page points to (OPML, JSON,
    issue lists), to be fetched next and read with :func:`friends_from_data_source`."""
    owner_aliases: list[str] = field(default_factory=list)
    """Layered ruleset: other roots of the page's own blog (``rel=me``, mirrors, ...)."""
    ruleset: str = "original"
    """Which ruleset produced it."""
    invalid_urls: list[str] = field(default_factory=list)
    """Layered ruleset: links of the page whose host no host may hold
    (:class:`~blogfeeds.extract.identity.InvalidURL`), each once: never a friend."""

    @property
    def best(self) -> ScoredContainer | None:
        """The winning container, or None when every container was rejected."""
        if self.containers and not self.containers[0].rejected:
            return self.containers[0]
        return None

    @property
    def best_score(self) -> float:
        """The winning container's score, 0.0 when there is none."""
        best = self.best
        return best.score if best is not None else 0.0
