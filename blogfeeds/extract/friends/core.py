"""The original friend-link container formula (``ruleset="original"``), and the shared types.

blogfeeds' original container formula, exactly:

For each ``div``, ``table`` and ``ul`` (a *container*), count its links to other blogs
(*external*; a ``target="_blank"`` link counts twice) and to the page's own blog (*internal*).
Links whose path has more than one non-empty segment or that carry a query are skipped, links
that are not http(s) (``mailto:``, ``javascript:``, ``#top``) are ignored. Then

1. ``points = (external − internal) × 1000``; ``points ≤ 0`` rejects (:class:`LinkBalance`);
2. ``points = affect(points, 0.1, link_text / total_text, 2)`` (:class:`LinkTextRatio`);
3. ``points = affect(points, 0.1, links / all_tags, 1)`` (:class:`LinkDensity`);
4. ``points < 1000`` rejects (:class:`MinimumScore`);

with ``affect(p, keep, ratio, power) = p·keep + p·(1 − keep)·ratio^power`` (``ratio ≥ 1``
keeps ``p``). The best container's external links are the friends. *External* means another
blog identity (:func:`blogfeeds.extract.identity.blog_id`), not another host.

Measures, per container: ``links`` = ``<a href>`` descendants; ``all_tags`` = element
descendants; ``link_text`` / ``total_text`` = non-whitespace characters of visible text (not
``<script>``/``<style>``) inside links / anywhere in the container. A container with no text
has a text ratio of 1. All measures come from one bottom-up pass over the tree (linear in the
page size): nested containers never rescan their subtrees.

Rules are configured as ``{dotted path: order}`` (``None`` disables one), see
:mod:`blogfeeds.extract.scoring`; :data:`ORIGINAL_FRIEND_RULES` is this formula. The layered
default (:mod:`blogfeeds.extract.friends.layers`) reuses these types and rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import lxml.html

from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.page import Page
from blogfeeds.extract.scoring import Adjustment, Reject, apply_rules, build_rules

CONTAINER_TAGS = frozenset({"div", "table", "ul"})
"""Elements scored as friend-link containers (the original design)."""

_NO_TEXT_TAGS = frozenset({"script", "style", "template", "noscript"})

ORIGINAL_FRIEND_RULES: dict[str, int | None] = {
    "blogfeeds.extract.friends.LinkBalance": 100,
    "blogfeeds.extract.friends.LinkTextRatio": 200,
    "blogfeeds.extract.friends.LinkDensity": 300,
    "blogfeeds.extract.friends.MinimumScore": 900,
}
"""The original formula (``ruleset="original"``)."""

RulesSpec = Mapping[Any, int | None] | Iterable[Callable[..., Adjustment | None]] | None


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

    ``url`` as linked (layered ruleset: Wayback-unwrapped, fragment, ``index.html`` and
    tracking parameters dropped, host lower-cased); ``name`` as shown; ``score`` the
    evidence in the formula's points (a container's score; 1000 per listed friend for the
    machine-readable and theme layers); ``avatar`` an absolute image URL (lazy-load
    attributes first) or ``""``; ``how`` the layer that found it (``container``,
    ``xfn``, ``widget:wordpress-links``, ``theme:butterfly``, ``inline``, ``script``,
    ``opml``, ``json``); ``rels`` the XFN relationship values on the link (XFN 1.1);
    ``listed_as`` is ``"dead"`` when the owner lists it under a lost/invalid heading;
    ``kind`` is ``"feed"`` when the owner linked the friend's feed, not its site (Blogger
    BlogList, OPML ``xmlUrl``).
    """

    url: str
    name: str
    score: float
    avatar: str = ""
    how: str = ""
    rels: tuple[str, ...] = ()
    listed_as: str = ""
    kind: str = ""


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


# --- Rules -----------------------------------------------------------------------------------


def affect(points: float, keep: float, ratio: float, power: float) -> float:
    """``points·keep + points·(1 − keep)·ratio^power``; ``ratio ≥ 1`` keeps ``points``.

    ``keep`` is the share of the points a ratio of 0 still leaves (original design: 0.1).
    """
    if ratio >= 1:
        return points
    return points * keep + points * (1 - keep) * ratio**power


@dataclass(frozen=True)
class LinkBalance:
    """``+ (external − internal) × per_link``; rejects when that is ≤ 0."""

    per_link: float = 1000.0

    def __call__(self, c: Container, score: float, page: Page) -> Adjustment:
        points = (c.external - c.internal) * self.per_link
        if points <= 0:
            raise Reject(f"{c.external} external - {c.internal} internal links <= 0")
        return Adjustment(
            score + points,
            f"+{points:g} ({c.external} external - {c.internal} internal) x {self.per_link:g}",
        )


@dataclass(frozen=True)
class LinkTextRatio:
    """``affect(score, keep, link_text / total_text, power)``: mostly link text scores high."""

    keep: float = 0.1
    power: float = 2.0

    def __call__(self, c: Container, score: float, page: Page) -> Adjustment:
        ratio = c.link_text / c.text if c.text else 1.0
        factor = affect(1.0, self.keep, ratio, self.power)
        return Adjustment(score * factor, f"x{factor:.4g} link text {c.link_text}/{c.text}")


@dataclass(frozen=True)
class LinkDensity:
    """``affect(score, keep, links / all_tags, power)``: mostly links scores high."""

    keep: float = 0.1
    power: float = 1.0

    def __call__(self, c: Container, score: float, page: Page) -> Adjustment:
        ratio = c.links / c.tags if c.tags else 1.0
        factor = affect(1.0, self.keep, ratio, self.power)
        return Adjustment(score * factor, f"x{factor:.4g} link density {c.links}/{c.tags} tags")


@dataclass(frozen=True)
class MinimumScore:
    """Rejects a container scoring below ``minimum`` (one external link's worth)."""

    minimum: float = 1000.0

    def __call__(self, c: Container, score: float, page: Page) -> None:
        if score < self.minimum:
            raise Reject(f"score {score:.6g} < {self.minimum:g}")


# --- The measuring pass ----------------------------------------------------------------------


def _nonspace(s: str | None) -> int:
    return len("".join(s.split())) if s else 0


def _describe(el: lxml.html.HtmlElement) -> str:
    out = str(el.tag)
    if el.get("id"):
        out += "#" + el.get("id", "").strip()
    for cls in (el.get("class") or "").split()[:3]:
        out += "." + cls
    return out


def _classify(el: lxml.html.HtmlElement, page: Page, own: str | None) -> LinkRef | None:
    """The counted link of an ``<a href>``, or None when it is ignored or skipped."""
    href = (el.get("href") or "").strip()
    if not href or href.startswith("#"):
        return None
    try:
        url = page.absolute(href)
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https"):
            return None
        if parts.query or sum(1 for s in parts.path.split("/") if s) > 1:
            return None
        target = blog_id(url)
    except ValueError:
        return None
    external = target != own
    blank = (el.get("target") or "").strip().lower() == "_blank"
    return LinkRef(url=url, external=external, weight=2 if external and blank else 1, element=el)


def scan_containers(page: Page) -> tuple[list[Container], int]:
    """Measure every container of ``page`` in one pass; return ``(containers, elements)``.

    The tree is flattened once in document order (iteratively, any depth), then each
    element's counts are added to its parent's in reverse order (children before parents).
    ``elements`` is the number of elements visited.
    """
    try:
        own: str | None = blog_id(page.url)
    except ValueError:
        own = None
    nodes: list[lxml.html.HtmlElement] = []
    parent: list[int] = []
    ext: list[int] = []
    internal: list[int] = []
    links: list[int] = []
    tags: list[int] = []
    ltext: list[int] = []
    text: list[int] = []
    refs: list[LinkRef] = []
    ref_start: list[int] = []
    ref_count: list[int] = []

    stack: list[tuple[lxml.html.HtmlElement, int, bool]] = [(page.tree, -1, False)]
    while stack:
        el, up, in_link = stack.pop()
        i = len(nodes)
        nodes.append(el)
        parent.append(up)
        tag = el.tag if isinstance(el.tag, str) else ""
        is_link = tag == "a" and el.get("href") is not None
        own_text = 0 if tag in _NO_TEXT_TAGS else _nonspace(el.text)
        children = []
        for child in el:
            own_text += _nonspace(child.tail)
            if isinstance(child.tag, str):
                children.append(child)
        text.append(own_text)
        ltext.append(own_text if in_link or is_link else 0)
        links.append(1 if is_link else 0)
        tags.append(0)
        ref_start.append(len(refs))
        ref = _classify(el, page, own) if is_link else None
        if ref is not None:
            refs.append(ref)
        ref_count.append(1 if ref is not None else 0)
        ext.append(ref.weight if ref is not None and ref.external else 0)
        internal.append(1 if ref is not None and not ref.external else 0)
        for child in reversed(children):
            stack.append((child, i, in_link or is_link))

    for i in range(len(nodes) - 1, 0, -1):
        up = parent[i]
        ext[up] += ext[i]
        internal[up] += internal[i]
        links[up] += links[i]
        tags[up] += tags[i] + 1
        ltext[up] += ltext[i]
        text[up] += text[i]
        ref_count[up] += ref_count[i]

    containers = [
        Container(
            tag=str(el.tag),
            description=_describe(el),
            external=ext[i],
            internal=internal[i],
            links=links[i],
            tags=tags[i],
            link_text=ltext[i],
            text=text[i],
            element=el,
            _refs=refs,
            _start=ref_start[i],
            _end=ref_start[i] + ref_count[i],
        )
        for i, el in enumerate(nodes)
        if el.tag in CONTAINER_TAGS
    ]
    return containers, len(nodes)


# --- Extraction ------------------------------------------------------------------------------


def built_rules(
    rules: RulesSpec, default: Mapping[Any, int | None]
) -> list[Callable[..., Adjustment | None]]:
    """``rules`` built (``None`` means ``default``)."""
    if rules is None:
        return build_rules(default)
    if isinstance(rules, Mapping):
        return build_rules(rules)
    return list(rules)


def extract_original(page: Page, rules: RulesSpec = None) -> FriendExtraction:
    """Score every container of ``page`` and return the best one's external links as friends.

    ``rules`` is a ``{dotted path or class: order}`` spec (default :data:`ORIGINAL_FRIEND_RULES`)
    or an already built rule list; scoring starts at 0. Friends are deduped by URL (first
    anchor text kept) and never include the page's own blog. Never raises on odd markup.
    """
    built = built_rules(rules, ORIGINAL_FRIEND_RULES)
    containers, elements = scan_containers(page)
    scored: list[ScoredContainer] = []
    for c in containers:
        try:
            score, reasons = apply_rules(c, built, page, 0.0)
        except Reject as exc:
            scored.append(ScoredContainer(c, 0.0, list(getattr(exc, "reasons", [])), True))
            continue
        scored.append(ScoredContainer(c, score, reasons))
    scored.sort(key=lambda s: (s.rejected, -s.score))  # stable: ties keep document order
    friends: list[Friend] = []
    if scored and not scored[0].rejected:
        best = scored[0]
        seen: set[str] = set()
        for ref in best.container.external_links:
            if ref.url not in seen:
                seen.add(ref.url)
                friends.append(Friend(ref.url, ref.name, best.score, how="container"))
    return FriendExtraction(containers=scored, friends=friends, elements=elements)
