"""The layered friend-link extractor (``ruleset="blogfeeds"``, the default).

Layers, in order; every friend says which one found it (``Friend.how``):

1. **Machine-readable blogrolls.** ``<link rel="blogroll">`` OPML (and then the blog's
   ``/.well-known/recommendations.opml``), ``.opml`` links, JSON friend lists and GitHub issue
   lists the page loads (``links.json``, ``data-api``/``api`` attributes, URLs quoted in inline
   scripts) become :attr:`FriendExtraction.data_sources` for the crawler to fetch and read with
   :func:`friends_from_data_source`. XFN 1.1 ``rel`` values on any link (``friend``, ``met``,
   ``co-worker``, ...) mark friends; ``rel="me"`` marks the owner's own sites. Friend lists
   written as object literals in an inline script (``{name: ..., link: "https://..."}``) are
   read on friend-link pages.
2. **Widgets and themes as data** (:mod:`blogfeeds.extract.friends.themes`): WordPress Link
   Manager, Blogger BlogList/LinkList, Butterfly, AnZhiYu, Volantis, Matery, Fluid, NexT, ...
   one card at a time. Among titled widget blocks, only those titled as a blogroll are kept
   when there are any.
3. **The statistical detector**: the original container formula (:mod:`.core`), counting only
   links that survive the filters, extended with repeated-card and page-chrome rules
   (:data:`DEFAULT_FRIEND_RULES`), taking the union of every qualifying container (at least
   :data:`UNION_SHARE` of the best score, not nested in another one), plus keyword-anchored
   inline runs ("左邻右舍：A、B、C"). It runs only when layer 2 found no card.
4. **Filters** (:mod:`blogfeeds.extract.friends.filters`): the owner's own sites (same blog
   identity, ``rel=me``, canonical/``og:url``, IP-address mirrors, links in author cards,
   social corners and site switchers, sites named like the owner, the page's "about this site"
   block), circles (recorded in :attr:`FriendExtraction.circles`), badges, platform and theme
   credits, sponsored/referral links, shorteners, theme placeholders and commercial link swaps.
   Wayback Machine wrappers are unwrapped first.

Friends are deduplicated by blog identity (:func:`~blogfeeds.extract.identity.blog_id`), first
seen first (its name kept); the measuring pass visits every element once.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import lxml.etree
import lxml.html

from blogfeeds.extract.friends.core import (
    Container,
    Friend,
    FriendExtraction,
    LinkRef,
    RulesSpec,
    ScoredContainer,
    affect,
    built_rules,
)
from blogfeeds.extract.friends.filters import (
    Cleaned,
    Filters,
    filters,
    friend_key,
    host_of,
    is_ip_host,
    zone_match,
)
from blogfeeds.extract.friends.themes import (
    HEADINGS,
    ThemeRule,
    bundled_theme_rules,
    heading_before,
    run_rules,
    text_of,
    user_theme_rules,
)
from blogfeeds.extract.identity import blog_id, normalize_host, path_rule
from blogfeeds.extract.page import Page
from blogfeeds.extract.scoring import Adjustment, Reject, apply_rules

DEFAULT_FRIEND_RULES: dict[str, int | None] = {
    "blogfeeds.extract.friends.LinkBalance": 100,
    "blogfeeds.extract.friends.LinkTextRatio": 200,
    "blogfeeds.extract.friends.LinkDensity": 300,
    "blogfeeds.extract.friends.CardRepetition": 400,
    "blogfeeds.extract.friends.ChromeZone": 500,
    "blogfeeds.extract.friends.DistinctFriends": 600,
    "blogfeeds.extract.friends.MinimumScore": 900,
}
"""The statistical layer's rules, mirrored by ``BLOGFEEDS_FRIEND_SCORERS`` in the settings."""

CONTAINER_TAGS = frozenset(
    "div table tbody td ul ol dl section aside article main nav header footer p".split()
)
"""Elements the statistical layer scores (the original three plus sections and paragraphs)."""

UNION_SHARE = 0.2
"""A container qualifies for the union at this share of the best container's score."""

SAME_SITE_PAGES = 3
"""Listed pages of one site (distinct deep URLs) from which it is not a friend but a site the
owner writes on or for (reviews on their other site, a profile's project pages)."""

MAX_IDS = 8
"""Distinct blogs tracked per element (enough for the rules' thresholds; keeps it linear)."""

KEYWORDS = re.compile(
    r"友情链接|友链|友人帐|友人|朋友|伙伴|左邻右舍|友邻|邻居|博客链接|"
    r"\b(?:links|friends?|blogroll|blogs|weblogs|neighbou?rs|webring)\b",
    re.IGNORECASE,
)
"""Friend keywords that label a list (headings, short labels, page titles)."""

BLOGROLL_TITLE = re.compile(
    r"blogroll|\bblogs?\b|weblogs?|blogger|友情链接|友链|友人|博客|朋友|小伙伴|\bfriends?\b",
    re.IGNORECASE,
)
"""Widget block titles that name a list of blogs."""

DEAD_HEADING = re.compile(
    r"失联|失效|无法访问|挂了|消失|已故|\b(?:invalid|dead|lost|broken|defunct|inactive|"
    r"unreachable|offline)\b",
    re.IGNORECASE,
)
"""Group headings under which owners keep friends that no longer answer."""

_FRIEND_PATH = re.compile(
    r"^(?:links?|friends?|flinks?|blogroll|友情链接|友链|友人帐|友人|朋友)(?:\.html?|\.php)?$",
    re.IGNORECASE,
)
_INLINE_LABEL = re.compile(
    r"(?:左邻右舍|友邻|友情链接|友链|朋友们?|邻居|friends|blogroll|links|neighbou?rs)\s*[:：]?\s*$",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(r"^[\s、，,;；|/·&+和及与\-–—]*$")
_XFN = frozenset(
    "friend acquaintance contact met co-worker colleague co-resident neighbor child parent "
    "sibling spouse kin muse crush date sweetheart".split()
)
_NO_TEXT_TAGS = frozenset({"script", "style", "template", "noscript"})
_TAGLINE = re.compile(r"\s+[-–—|]\s+")
_GENERIC_LABELS = frozenset(
    "blog blogs www home site web my me the index main about github gitee wordpress".split()
)
_DATA_FILE = re.compile(
    r"(?:friend|link|flink|blogroll|友链|友情链接)[^/?#]*\.(?:json|opml|ya?ml)(?:[?#]|$)", re.I
)
_ISSUES_API = re.compile(r"^https?://api\.github\.com/repos/[^/]+/([^/?#]+)/issues", re.I)
_ISSUES_PAGE = re.compile(
    r"^https?://(?:www\.)?(github\.com|gitee\.com)/([^/]+)/([^/?#]+)/issues/?(?:[?#].*)?$", re.I
)
_FRIEND_REPO = re.compile(r"friend|link|flink|blogroll|example|site|友链", re.I)
_DATA_ATTRS = ("api", "data-api", "data-json", "data-source", "data-url", "data-links")
_DATA_XPATH = lxml.etree.XPath(" | ".join(f"//@{a}" for a in _DATA_ATTRS))
"""The data-source attributes of the page (their elements are their parents): selecting the
attributes is several times faster in libxml2 than testing six attributes on every element."""
_QUOTED = re.compile(r"""["'`]((?:https?:)?//[^"'`\s<>]+|/[^"'`\s<>]+)["'`]""")
_OBJECT = re.compile(r"\{[^{}]{1,2000}\}")
_URL_KEY = re.compile(
    r"""["']?(?:link|url|href|site|blog|homepage)["']?\s*[:=]\s*["'](https?://[^"'\s]+)["']""",
    re.I,
)
_NAME_KEY = re.compile(
    r"""["']?(?:name|title|nickname|sitename|author)["']?\s*[:=]\s*["']([^"'\n]{1,80})["']""",
    re.I,
)
_AVATAR_KEY = re.compile(
    r"""["']?(?:avatar|img|image|icon|logo)["']?\s*[:=]\s*["']([^"'\s]+)["']""", re.I
)
_FEED_URL = re.compile(
    r"^https?://(?:feeds\d*\.|feedproxy\.)|/(?:feeds?|rss2?|atom)(?:/posts/default)?/?$|"
    r"\.(?:rss|atom|xml)$|/feeds/posts/default",
    re.IGNORECASE,
)
"""A feed URL (FeedBurner-style hosts, ``/feed/``, ``atom.xml``, Blogger's posts feed)."""
_DATED_POST = re.compile(r"/(?:19|20)\d\d/[01]?\d/")
"""A dated path (``/2011/07/``) is a post: a latest-post link, not the friend's blog."""
_TEXT_URL = re.compile(r"https?://[^\s<>\"'，。、；）)]+")


# --- Statistical rules -----------------------------------------------------------------------


@dataclass(frozen=True)
class CardRepetition:
    """Repeated sibling cards, each linking one blog, cancel the density factor (and the text
    factor when the cards' text sits in their own fields, not in prose around the link).

    A friend grid repeats one card per friend (avatar, name, description, a call-to-action
    link): their markup and text lower the link-density and link-text ratios, the repetition
    itself is the evidence. Applies when at least ``minimum`` children are cards and every
    friend blog sits in its own card. Prose means more than ``prose_share`` of the text lies
    directly in the children (a how-to list: "open <a>this tool</a> and upload...").
    """

    minimum: int = 2
    keep: float = 0.1
    prose_share: float = 0.2

    def __call__(self, c: Container, score: float, page: Page) -> Adjustment | None:
        if not c.layered or c.cards < self.minimum or c.cards < c.friends:
            return None
        factor = 1 / affect(1.0, self.keep, c.links / c.tags if c.tags else 1.0, 1.0)
        if c.child_text <= self.prose_share * c.text:
            factor /= affect(1.0, self.keep, c.link_text / c.text if c.text else 1.0, 2.0)
        return Adjustment(score * factor, f"x{factor:.4g} {c.cards} repeated cards")


@dataclass(frozen=True)
class ChromeZone:
    """Rejects a container inside page chrome (header, nav, footer, menus, share, comments)
    unless a friend keyword labels it (old-style 友情链接 footers). Layered containers only."""

    def __call__(self, c: Container, score: float, page: Page) -> None:
        if c.layered and c.chrome and not c.anchored:
            raise Reject("inside page chrome, no friend keyword")


@dataclass(frozen=True)
class DistinctFriends:
    """Rejects a container linking fewer than ``minimum`` distinct friend blogs (1 when a
    friend keyword labels it). Layered containers only."""

    minimum: int = 2

    def __call__(self, c: Container, score: float, page: Page) -> None:
        need = 1 if c.anchored else self.minimum
        if c.layered and c.friends < need:
            raise Reject(f"{c.friends} distinct friend blogs < {need}")


# --- Links and the owner ---------------------------------------------------------------------


@dataclass
class _Link:
    el: lxml.html.HtmlElement
    node: int
    parts: Cleaned
    identity: str
    rels: tuple[str, ...]
    blank: bool
    counted: bool
    owner_zone: bool
    verdict: str | None = None

    @property
    def url(self) -> str:
        return self.parts.url


@dataclass
class _Owner:
    """What the page says about its own blog."""

    identity: str | None
    aliases: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    roots: dict[str, str] = field(default_factory=dict)

    def add(self, url: str) -> None:
        try:
            identity = blog_id(url)
        except ValueError:
            return
        if identity == self.identity:
            return
        self.aliases.add(identity)
        label = _label(identity)
        if label:
            self.names.add(label)
        self.roots.setdefault(identity, _root(url))


def _root(url: str) -> str:
    """``scheme://host/`` of ``url``."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.rpartition('@')[2].lower()}/"


def _label(identity: str) -> str:
    """The name a blog identity is known by: ``alice`` of ``alice.github.io``,
    ``cnblogs.com/alice`` or ``alice.com``; ``""`` when generic or too short."""
    label = identity.rsplit("/", 1)[1] if "/" in identity else identity.split(".", 1)[0]
    label = label.lstrip("@").lower()
    return "" if len(label) < 4 or label in _GENERIC_LABELS else label


def _path_depth(url: str, identity: str) -> int:
    """Path segments beyond the blog's root (``cnblogs.com/alice/p/1`` → 2)."""
    segments = [s for s in urlsplit(url).path.split("/") if s]
    return max(0, len(segments) - identity.count("/"))


# --- The measuring pass ----------------------------------------------------------------------


@dataclass
class _Pass:
    """Everything one walk over the tree collects."""

    nodes: list[lxml.html.HtmlElement] = field(default_factory=list)
    count: int = 0
    """Elements in the tree."""
    parent: list[int] = field(default_factory=list)
    text: list[int] = field(default_factory=list)
    ltext: list[int] = field(default_factory=list)
    is_link: list[bool] = field(default_factory=list)
    chrome: list[bool] = field(default_factory=list)
    anchored: list[bool] = field(default_factory=list)
    labelled: list[bool] = field(default_factory=list)
    links: list[_Link] = field(default_factory=list)
    link_at: dict[int, int] = field(default_factory=dict)
    inline: list[list[lxml.html.HtmlElement]] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    about: list[lxml.html.HtmlElement] = field(default_factory=list)
    data_urls: list[str] = field(default_factory=list)
    canonical: list[str] = field(default_factory=list)
    blogroll_link: bool = False
    title: str = ""
    h1: str = ""


def _join(base: str, href: str) -> str:
    """``href`` resolved against ``base``; ``""`` when it is not a URL (``http://[``)."""
    try:
        return urljoin(base, href.strip())
    except ValueError:
        return ""


def _absolute(page: Page, href: str) -> str:
    """``href`` resolved against the page's base URL; ``""`` when it is not a URL."""
    return _join(page.base_url, href)


def _nonspace(s: str | None) -> int:
    """Characters of ``s`` that are not whitespace (most tails are only an indentation)."""
    if not s or s.isspace():
        return 0
    return len("".join(s.split()))


_LABEL_BLOCKS = frozenset({"b", "strong", "span", "p", "em", "label", "dt"})


def _heading_text(el: lxml.html.HtmlElement, tag: str) -> str | None:
    """Text of a heading-like element (h1-h6; a short ``b``/``strong``/``p``/``dt`` label;
    a ``*title*``/``*label*`` class), or None."""
    if tag in HEADINGS:
        return text_of(el)
    if tag in _LABEL_BLOCKS and len(el) <= 2:
        text = text_of(el)
        return text if len(text) <= 20 else None
    cls = el.get("class")
    if cls and _titled(cls) and tag not in ("a", "ul", "ol"):
        text = text_of(el)
        return text if len(text) <= 40 else None
    return None


_LABEL_TAGS = frozenset({"b", "strong", "span", "em", "label"})


def _inline_run(
    el: lxml.html.HtmlElement, children: list[lxml.html.HtmlElement]
) -> list[lxml.html.HtmlElement]:
    """Links that follow a friend label inside one block ("左邻右舍：A、B、C"), else [].

    A run is two or more consecutive links separated only by punctuation (、 , | /) right
    after a label ending in a friend keyword (and an optional colon).
    """
    armed = bool(el.text and _INLINE_LABEL.search(el.text))
    run: list[lxml.html.HtmlElement] = []
    for child in children:
        if child.tag == "a" and child.get("href"):
            if armed:
                run.append(child)
        else:
            if len(run) >= 2:
                return run
            run = []
            label = text_of(child) if child.tag in _LABEL_TAGS else ""
            armed = 0 < len(label) <= 20 and bool(_INLINE_LABEL.search(label))
        tail = child.tail or ""
        if run and not _SEPARATOR.match(tail):
            if len(run) >= 2:
                return run
            run, armed = [], False
        if tail.strip() and not run:
            armed = bool(_INLINE_LABEL.search(tail))
    return run if len(run) >= 2 else []


def _measure(page: Page, flt: Filters) -> _Pass:
    """Visit every element once, in document order, and collect every per-node fact.

    The hot loop of the layered extractor. Elements come from lxml's own iterator (C), each
    finding its parent's facts by index; an element's tail adds to its parent's text, and a
    heading-like element arms its following siblings (``anchored``). Every class/id token is
    judged once per process (:func:`_token_zones`).
    """
    out = _Pass()
    links = _Resolver(page, flt)
    # Elements carrying a data-source attribute, found by one XPath instead of six lookups each.
    with_data = {attr.getparent() for attr in _DATA_XPATH(page.tree)}
    nodes, parents, texts, ltexts = out.nodes, out.parent, out.text, out.ltext
    is_links, chromes, anchoreds, labelled = out.is_link, out.chrome, out.anchored, out.labelled
    owners: list[bool] = []
    linkeds: list[bool] = []
    armed: list[bool] = []  # a friend-keyword heading precedes the next child of this node
    anchor_children: list[int] = []
    sibling: list[int] = []  # children seen so far
    no_text: list[bool] = []
    headings: list[tuple[int, int, lxml.html.HtmlElement, str]] = []
    index: dict[lxml.html.HtmlElement, int] = {}
    chrome_tags, about_words = flt.chrome_tags, [h.lower() for h in flt.about_headings]
    for i, el in enumerate(page.tree.iter(lxml.etree.Element)):
        tag = el.tag
        parent = el.getparent() if i else None
        if parent is None:
            up, in_link, chrome, owner, anchored = -1, False, False, False, False
        else:
            up = index[parent]
            in_link, chrome, owner = linkeds[up], chromes[up], owners[up]
            anchored = anchoreds[up] or armed[up]
            position = sibling[up]
            sibling[up] = position + 1
            if tag == "a":
                anchor_children[up] += 1
            if tag in HEADINGS or tag in _LABEL_BLOCKS:
                heading = _heading_text(el, tag)
            else:
                cls = el.get("class")
                heading = _heading_text(el, tag) if cls and _titled(cls) else None
            if heading is not None:
                headings.append((up, position, el, heading))
                armed[up] = len(heading) <= 40 and _has_keyword(heading)
        index[el] = i
        nodes.append(el)
        parents.append(up)
        if not (owner and chrome):
            cls, ident = el.get("class"), el.get("id")
            if (cls or ident) and tag not in ("html", "body"):  # body classes describe the page
                for token in [*(cls or "").split(), *([ident] if ident else [])]:
                    in_owner, in_chrome = _token_zones(token)
                    owner = owner or in_owner
                    chrome = chrome or in_chrome
            if not chrome and (tag in chrome_tags or el.get("role") in _CHROME_ROLES):
                chrome = True
        is_link = tag == "a" and el.get("href") is not None
        linked = in_link or is_link
        silent = tag in _NO_TEXT_TAGS
        own_text = 0
        label_kw = False
        if not silent and el.text:
            own_text = _nonspace(el.text)
            if own_text and not linked:
                label_kw = _is_label(el.text)
        texts.append(own_text)
        ltexts.append(own_text if linked else 0)
        is_links.append(is_link)
        chromes.append(chrome)
        owners.append(owner)
        linkeds.append(linked)
        anchoreds.append(anchored)
        armed.append(False)
        anchor_children.append(0)
        sibling.append(0)
        no_text.append(silent)
        labelled.append(label_kw)
        tail = el.tail
        if tail and up >= 0 and not no_text[up] and not tail.isspace():  # the parent's text
            count = _nonspace(tail)
            if count:
                texts[up] += count
                if linkeds[up]:
                    ltexts[up] += count
                elif not labelled[up]:
                    labelled[up] = _is_label(tail)
        if is_link:
            link = links.link(el, i, owner)
            if link is not None:
                out.link_at[i] = len(out.links)
                out.links.append(link)
        elif tag in _FACT_TAGS:
            _note_fact(out, page, el, tag)
        if with_data and el in with_data:
            _note_data(out, page, el)
    # Headings in the order the parents list them (a parent's children before its subtrees).
    headings.sort(key=lambda h: (h[0], h[1]))
    for _, _, el, heading in headings:
        if el.tag == "h1" and not out.h1:
            out.h1 = heading
        lowered = heading.lower()
        if any(h in lowered for h in about_words):
            out.about.append(el)
    for i, count in enumerate(anchor_children):
        if count >= 2 and not no_text[i]:
            el = nodes[i]
            run = _inline_run(el, [c for c in el if isinstance(c.tag, str)])
            if run:
                out.inline.append(run)
    out.count = len(nodes)
    return out


def _is_label(text: str) -> bool:
    """Whether a text segment is a short friend label (at most 12 characters, a keyword)."""
    short = text.strip()
    return bool(short) and len(short) <= 12 and _has_keyword(short)


_KEYWORD_PARTS = (
    "友", "朋友", "伙伴", "左邻右舍", "邻居", "博客链接",
    "links", "friend", "blogroll", "blogs", "weblogs", "neighbo", "webring",
)  # fmt: skip
"""Substrings one of which every :data:`KEYWORDS` match holds (case-folded)."""


def _mentions_keyword(text: str) -> bool:
    """:data:`KEYWORDS` in a long text (an inline script): substring tests first, since the
    regular expression scans a 100 KB script in about 0.3 ms."""
    folded = text.casefold()
    return any(part in folded for part in _KEYWORD_PARTS) and bool(KEYWORDS.search(text))


@functools.lru_cache(maxsize=65536)
def _has_keyword(text: str) -> bool:
    """:data:`KEYWORDS` in a short text (labels and headings repeat across pages and sites:
    "Home", "Tags:", "友情链接", so each is searched once)."""
    return bool(KEYWORDS.search(text))


_CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo"})


@functools.lru_cache(maxsize=65536)
def _token_zones(token: str) -> tuple[bool, bool]:
    """Whether a class/id token marks an owner zone and a chrome zone (:func:`zone_match`
    against the bundled filter table). Cached: themes share their class vocabulary."""
    flt = filters()
    return zone_match((token,), flt.owner_words), zone_match((token,), flt.chrome_words)


@functools.lru_cache(maxsize=65536)
def _titled(cls: str) -> bool:
    """Whether a ``class`` attribute names a title or label (a heading-like element)."""
    return zone_match(cls.split(), ("title", "label"))


_FACT_TAGS = frozenset({"script", "link", "meta", "title"})


def _note_fact(out: _Pass, page: Page, el: lxml.html.HtmlElement, tag: str) -> None:
    """Record what a ``script``, ``link``, ``meta`` or ``title`` element says (inline scripts,
    ``rel=blogroll``, canonical and ``og:url``, the first title)."""
    if tag == "script":
        if not el.get("src") and "ld+json" not in (el.get("type") or ""):
            out.scripts.append(el.text or "")
    elif tag == "link":
        rels = (el.get("rel") or "").lower().split()
        href = (el.get("href") or "").strip()
        if href and "blogroll" in rels:
            out.data_urls.append(_absolute(page, href))
            out.blogroll_link = True
        elif href and "canonical" in rels:
            out.canonical.append(_absolute(page, href))
    elif tag == "meta":
        if (el.get("property") or "").lower() == "og:url" and el.get("content"):
            out.canonical.append(_absolute(page, el.get("content", "")))
    elif tag == "title" and not out.title:
        out.title = text_of(el)


def _note_data(out: _Pass, page: Page, el: lxml.html.HtmlElement) -> None:
    """Record the machine-readable friend lists an element's data attributes point to."""
    for attr in _DATA_ATTRS:
        value = el.get(attr)
        if value and _is_data_source(url := _absolute(page, value), el.get("class") or ""):
            out.data_urls.append(url)


class _Resolver:
    """Resolves the page's ``<a href>`` into :class:`_Link` records, each distinct ``href``
    once (its cleaned URL, blog identity and whether the formula counts it)."""

    def __init__(self, page: Page, flt: Filters) -> None:
        self.page, self.flt = page, flt
        self.cache: dict[str, tuple[Cleaned, str, bool] | None] = {}
        try:
            self.own: str | None = blog_id(page.url)
            host = normalize_host(urlsplit(page.url).hostname or "")
        except ValueError:
            self.own, host = None, ""
        # Links to the page's own host are the page's blog, unless blogs share the host.
        self.own_host = host if self.own is not None and path_rule(host) is None else ""

    def link(self, el: lxml.html.HtmlElement, node: int, owner_zone: bool) -> _Link | None:
        """The link an ``<a href>`` makes, or None (empty, ``#fragment`` or not a web URL)."""
        href = (el.get("href") or "").strip()
        if not href or href.startswith("#"):
            return None
        if href in self.cache:
            hit = self.cache[href]
        else:
            hit = self.cache[href] = self._resolve(href)
        if hit is None:
            return None
        parts, identity, counted = hit
        rels = tuple((el.get("rel") or "").lower().split())
        blank = (el.get("target") or "").strip().lower() == "_blank"
        return _Link(el, node, parts, identity, rels, blank, counted, owner_zone)

    def _resolve(self, href: str) -> tuple[Cleaned, str, bool] | None:
        try:
            clean = self.flt.clean_href(href, self.page.base_url)
            own_host = self.own_host and clean.web and clean.host == self.own_host
            identity = self.own if own_host and self.own else blog_id(clean.url)
        except ValueError:
            return None
        depth = sum(1 for s in clean.path.split("/") if s) - identity.count("/")
        return clean, identity, not clean.query and depth <= 1


def _is_data_source(url: str, context: str = "") -> bool:
    """Whether ``url`` looks like a machine-readable friend list (``context``: class names)."""
    if not url.lower().startswith(("http://", "https://")):
        return False
    path = urlsplit(url).path
    if _DATA_FILE.search(path) or path.lower().endswith(".opml"):
        return True
    m = _ISSUES_API.match(url)
    return bool(m and (_FRIEND_REPO.search(m.group(1)) or KEYWORDS.search(context)))


# --- Owner -----------------------------------------------------------------------------------


def _owner(page: Page, scan: _Pass, flt: Filters) -> _Owner:
    try:
        own: str | None = blog_id(page.url)
    except ValueError:
        own = None
    owner = _Owner(own)
    label = _label(own) if own else ""
    if label:
        owner.names.add(label)
    for url in scan.canonical:
        if url.lower().startswith(("http://", "https://")):
            owner.add(url)
    page_host = host_of(page.url).removeprefix("www.")
    for link in scan.links:
        if link.identity == own and link.parts.host.removeprefix("www.") != page_host:
            owner.roots.setdefault(link.url, _root(link.url))  # another host of the blog
        if "me" in link.rels:
            owner.add(link.url)
        elif link.owner_zone and link.identity != own:
            if link.parts in flt.platforms or link.parts in flt.badges:
                # the owner's profile (github.com/<name>): <name> is an owner name
                seg = [s for s in link.parts.path.split("/") if s]
                if seg and len(seg[0].lstrip("@")) >= 4:
                    owner.names.add(seg[0].lstrip("@").lower())
            else:  # author card, social corner, site switcher: the owner's other sites
                owner.add(link.url)
        elif is_ip_host(link.parts.host):  # an IP:port mirror of the blog
            owner.roots.setdefault(link.url, _root(link.url))
    for heading in scan.about:  # the block right after "本站信息" / "About this site"
        node = heading.getnext()
        while node is not None and not isinstance(node.tag, str):
            node = node.getnext()
        if node is None or node.tag in HEADINGS:
            continue
        for a in node.iter("a"):
            if href := a.get("href"):
                owner.add(_absolute(page, href))
        for url in _TEXT_URL.findall(node.text_content()):
            owner.add(url)
    return owner


def _owner_reason(link: _Link, owner: _Owner) -> str | None:
    if link.identity == owner.identity or link.identity in owner.aliases:
        return "owner"
    if "me" in link.rels:
        return "rel-me"
    if link.owner_zone:
        return "owner-zone"
    if _label(link.identity) in owner.names:
        return "owner-name"
    if is_ip_host(link.parts.host):
        return "ip-address"
    return None


# --- Statistical layer -----------------------------------------------------------------------


def _containers(scan: _Pass, own: str | None) -> list[Container]:
    """Bottom-up sums over the flattened tree (children before parents): linear. Only the
    containers linking at least one candidate friend (a counted link no filter dropped) are
    returned: the others cannot give a friend."""
    n = len(scan.nodes)
    ext = [0] * n
    internal = [0] * n
    links = [1 if x else 0 for x in scan.is_link]
    tags = [0] * n
    ltext = list(scan.ltext)
    text = list(scan.text)
    ids: list[set[str] | None] = [None] * n
    many = [False] * n
    cards = [0] * n
    child_text = [0] * n
    labelled = list(scan.labelled)
    refs: list[LinkRef] = []
    # document-order refs: links are already in document order
    eligible: list[_Link] = []
    for link in scan.links:
        if link.counted and link.verdict is None:
            eligible.append(link)
    ref_of_node: dict[int, int] = {}
    for link in eligible:
        ref_of_node[link.node] = len(refs)
        refs.append(LinkRef(link.url, True, 2 if link.blank else 1, link.el))
    for link in scan.links:
        if not link.counted:
            continue
        if link.verdict is None:
            ext[link.node] = 2 if link.blank else 1
            ids[link.node] = {link.identity}
        elif link.identity == own:  # the blog's own pages (owner's other sites: neutral)
            internal[link.node] = 1
    # ref ranges: refs are in document order, so a subtree's refs are contiguous
    counts = [0] * n
    for node in ref_of_node:
        counts[node] = 1
    ref_start = list(itertools.accumulate(counts, initial=0))  # refs before node i
    for i in range(n - 1, 0, -1):
        up = scan.parent[i]
        ext[up] += ext[i]
        internal[up] += internal[i]
        links[up] += links[i]
        tags[up] += tags[i] + 1
        ltext[up] += ltext[i]
        text[up] += text[i]
        counts[up] += counts[i]
        labelled[up] = labelled[up] or labelled[i]
        child_text[up] += scan.text[i]
        if not scan.is_link[i] and not many[i] and len(ids[i] or ()) == 1:
            cards[up] += 1
        if many[i]:
            many[up] = True
        elif ids[i]:
            merged = ids[up] if ids[up] is not None else set()
            merged |= ids[i]  # type: ignore[operator]
            if len(merged) > MAX_IDS:
                many[up] = True
                ids[up] = None
            else:
                ids[up] = merged
    out = []
    for i, el in enumerate(scan.nodes):
        if not ext[i] or el.tag not in CONTAINER_TAGS:  # links no other blog: no friend here
            continue
        out.append(
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
                _end=ref_start[i] + counts[i],
                friends=MAX_IDS + 1 if many[i] else len(ids[i] or ()),
                cards=cards[i],
                child_text=child_text[i],
                anchored=scan.anchored[i] or labelled[i],
                chrome=scan.chrome[i],
                span=(i, i + 1 + tags[i]),
                layered=True,
            )
        )
    return out


def _describe(el: lxml.html.HtmlElement) -> str:
    out = str(el.tag)
    if el.get("id"):
        out += "#" + el.get("id", "").strip()
    for cls in (el.get("class") or "").split()[:3]:
        out += "." + cls
    return out


def _link_name(el: lxml.html.HtmlElement) -> str:
    """A plain link's text; a card link's first text block (its name, not its description)."""
    if (el.text or "").strip() or len(el) == 0:
        return text_of(el)
    for sub in el.iterdescendants():
        if isinstance(sub.tag, str) and (sub.text or "").strip():
            return text_of(sub)
    return text_of(el)


_NAME_CLASS = re.compile(r"name|title|sitename", re.IGNORECASE)
CARD_DEPTH = 6
"""Levels between a container and a link for the link's ancestor to count as its card."""


def _card_name(container: lxml.html.HtmlElement, link: lxml.html.HtmlElement) -> str:
    """A friend's name in a card: the card's heading or ``*name*``/``*title*`` element when the
    link is a call-to-action button inside a bigger card (Matery-like), else the link's name.

    The card is the link's ancestor that is a child of the container.
    """
    card = link
    for _ in range(CARD_DEPTH):
        up = card.getparent()
        if up is None or up is container:
            break
        card = up
    if card is link or card.getparent() is not container:
        return _link_name(link)
    found: dict[int, str] = {}
    for el in card.iter():
        if el is link or not isinstance(el.tag, str) or el.tag == "a":
            continue
        cls = el.get("class") or ""
        rank = 0 if "name" in cls.lower() else 1 if el.tag in HEADINGS else 2
        if rank == 2 and not _NAME_CLASS.search(cls):
            continue
        if rank not in found and link not in el.iterancestors() and (name := text_of(el)):
            found[rank] = name
    return found[min(found)] if found else _link_name(link)


def clean_name(name: str) -> str:
    """Whitespace collapsed; a long ``Name - tagline`` title (over 40 characters) keeps Name."""
    name = " ".join(name.split())
    if len(name) > 40:
        head = _TAGLINE.split(name, 1)[0]
        if 2 <= len(head) < len(name):
            return head
    return name


# --- Candidates ------------------------------------------------------------------------------


@dataclass
class _Candidate:
    url: str
    name: str
    how: str
    score: float
    order: int
    avatar: str = ""
    rels: tuple[str, ...] = ()
    listed_as: str = ""
    link: _Link | None = None
    verdict: str | None = None


def _script_lists(scripts: Iterable[str], base: str) -> list[list[tuple[str, str, str]]]:
    """``[(url, name, avatar)]`` per inline script that lists ≥ 2 named absolute links."""
    lists = []
    for body in scripts:
        items = []
        for obj in _OBJECT.findall(body):
            url = _URL_KEY.search(obj) if "://" in obj else None  # the URL key needs "://"
            name = _NAME_KEY.search(obj) if url else None
            if url and name:
                avatar = _AVATAR_KEY.search(obj)
                items.append(
                    (url.group(1), name.group(1), _join(base, avatar.group(1)) if avatar else "")
                )
        if len(items) >= 2:
            lists.append(items)
    return lists


def _data_sources(page: Page, scan: _Pass) -> list[str]:
    found = list(scan.data_urls)
    if scan.blogroll_link:
        parts = urlsplit(page.url)
        found.append(f"{parts.scheme}://{parts.netloc}/.well-known/recommendations.opml")
    for link in scan.links:
        if link.url.lower().split("?")[0].endswith(".opml"):
            found.append(link.url)
        m = _ISSUES_PAGE.match(link.url)
        if m and _FRIEND_REPO.search(m.group(3)):
            found.append(link.url)
            if m.group(1).lower() == "github.com":
                found.append(f"https://api.github.com/repos/{m.group(2)}/{m.group(3)}/issues")
    for body in scan.scripts:
        for raw in _QUOTED.findall(body):
            lowered = raw.lower()  # every data source names one of these: resolve only those
            if any(mark in lowered for mark in _DATA_MARKS) and _is_data_source(
                url := _absolute(page, raw)
            ):
                found.append(url)
    return list(dict.fromkeys(found))


_DATA_MARKS = (".json", ".opml", ".yml", ".yaml", "api.github.com")
"""Substrings one of which every URL :func:`_is_data_source` accepts contains."""


def _is_friend_page(page: Page, scan: _Pass) -> bool:
    path = urlsplit(page.url).path
    if any(_FRIEND_PATH.match(s) for s in unquote(path).split("/") if s):
        return True
    return bool(KEYWORDS.search(scan.title[:60]) or KEYWORDS.search(scan.h1[:40]))


def extract_layered(
    page: Page,
    rules: RulesSpec = None,
    *,
    user_rules: Sequence[ThemeRule | Mapping[str, Any]] | None = None,
) -> FriendExtraction:
    """Run every layer over ``page`` (see the module docstring); never raises on odd markup.

    ``rules`` are the statistical layer's scoring rules (default :data:`DEFAULT_FRIEND_RULES`);
    ``user_rules`` are extra theme-table entries, tried before the bundled ones; when they find
    a card, the bundled entries and the statistical layer do not run.
    """
    flt = filters()
    scan = _measure(page, flt)
    owner = _owner(page, scan, flt)
    own = owner.identity
    for link in scan.links:
        link.verdict = _owner_reason(link, owner) or flt.url_verdict(link.parts, link.rels)
    built: list[Callable[..., Adjustment | None]] = built_rules(rules, DEFAULT_FRIEND_RULES)
    by_el = {link.el: link for link in scan.links}
    friend_page = _is_friend_page(page, scan)

    # Layer 1 and 2: cards of widgets and themes, XFN, inline runs, script lists.
    cands: list[_Candidate] = []
    # User rules first; the bundled table runs only when none of them found a card.
    users = user_theme_rules(user_rules)
    cards = list(run_rules(users, page.tree, page.text)) if users else []
    cards = cards or list(run_rules(bundled_theme_rules(), page.tree, page.text))
    titled = [c for c in cards if c.group_title is not None]
    blogroll_groups = any(
        c.rule.blog_list or BLOGROLL_TITLE.search(c.group_title or "") for c in titled
    )
    group_sizes: dict[tuple[str, str], int] = {}
    for card in titled:
        key = (card.rule.name, card.group_id)
        group_sizes[key] = group_sizes.get(key, 0) + 1
    claimed: set[lxml.html.HtmlElement] = set()
    for card in cards:
        hit = by_el.get(card.link)
        claimed.add(card.link)
        if hit is None:
            continue
        title = card.group_title
        drop = ""
        if title is not None and not card.rule.blog_list and not BLOGROLL_TITLE.search(title):
            if blogroll_groups:
                drop = "not-a-blogroll-block"
            elif len(group_sizes) >= 3 and group_sizes[(card.rule.name, card.group_id)] == 1:
                drop = "single-link-block"
        if drop:
            cands.append(_Candidate(hit.url, card.name, card.rule.how, 0, hit.node, link=hit))
            cands[-1].verdict = drop
            continue
        dead = DEAD_HEADING.search(heading_before(card.link, levels=5))
        cands.append(
            _Candidate(
                hit.url,
                card.name,
                card.rule.how,
                1000.0,
                hit.node,
                avatar=_absolute(page, card.avatar) if card.avatar else "",
                rels=tuple(r for r in hit.rels if r in _XFN),
                listed_as="dead" if dead else "",
                link=hit,
            )
        )
    found_cards = bool(cards)
    for link in scan.links:
        if link.el not in claimed and _XFN.intersection(link.rels):
            claimed.add(link.el)
            rels = tuple(r for r in link.rels if r in _XFN)
            cands.append(
                _Candidate(
                    link.url, text_of(link.el), "xfn", 1000.0, link.node, rels=rels, link=link
                )
            )
    for run in scan.inline:
        for a in run:
            hit = by_el.get(a)
            if hit is not None and a not in claimed:
                claimed.add(a)
                cands.append(_Candidate(hit.url, text_of(a), "inline", 1000.0, hit.node, link=hit))
    if friend_page or any(_mentions_keyword(s) for s in scan.scripts):
        for items in _script_lists(scan.scripts, page.base_url):
            for url, name, avatar in items:
                try:
                    parts = Cleaned.of(flt.clean_url(page.absolute(url)))
                    identity = blog_id(parts.url)
                except ValueError:
                    continue
                clean = parts.url
                pseudo = _Link(page.tree, len(scan.nodes), parts, identity, (), False, True, False)
                pseudo.verdict = _owner_reason(pseudo, owner) or flt.verdict(parts, name)
                cands.append(
                    _Candidate(
                        clean, name, "script", 1000.0, len(scan.nodes), avatar=avatar, link=pseudo
                    )
                )

    # Layer 3: the statistical detector (always scored, used when no card was found).
    containers = _containers(scan, own)
    scored: list[ScoredContainer] = []
    for c in containers:
        try:
            score, reasons = apply_rules(c, built, page, 0.0)
        except Reject as exc:
            scored.append(ScoredContainer(c, 0.0, list(getattr(exc, "reasons", [])), True))
            continue
        scored.append(ScoredContainer(c, score, reasons))
    scored.sort(key=lambda s: (s.rejected, -s.score))
    if not found_cards:
        accepted: list[ScoredContainer] = []
        best = scored[0].score if scored and not scored[0].rejected else 0.0
        for s in scored:
            if s.rejected or s.score < UNION_SHARE * best:
                break
            c = s.container
            if not (friend_page or c.anchored):
                continue
            lo, hi = c.span
            if any(
                a.container.span[0] <= lo < a.container.span[1] or lo <= a.container.span[0] < hi
                for a in accepted
            ):
                continue
            accepted.append(s)
        for s in accepted:
            lo, hi = s.container.span
            for link in scan.links:  # what the formula did not count, and why
                if not lo <= link.node < hi or link.el in claimed or link.identity == own:
                    continue
                reason = link.verdict
                if reason is None and not link.counted:
                    path = link.parts.path
                    reason = "post" if _DATED_POST.search(path) else "deep-link-or-query"
                if reason is not None:
                    claimed.add(link.el)
                    cand = _Candidate(link.url, text_of(link.el), "container", 0.0, link.node)
                    cand.verdict = reason
                    cands.append(cand)
            for ref in s.container.external_links:
                hit = by_el.get(ref.element)
                if hit is None or ref.element in claimed:
                    continue
                claimed.add(ref.element)
                heading = heading_before(ref.element, levels=5)
                cand = _Candidate(
                    hit.url,
                    _card_name(s.container.element, ref.element),
                    "container",
                    s.score,
                    hit.node,
                    rels=tuple(r for r in hit.rels if r in _XFN),
                    listed_as="dead" if DEAD_HEADING.search(heading) else "",
                    link=hit,
                )
                lowered = heading.lower()
                if any(w in lowered for w in flt.commercial_words):
                    cand.verdict = "sponsored"
                cands.append(cand)

    return _assemble(page, cands, scan=scan, owner=owner, scored=scored, flt=flt)


def _assemble(
    page: Page,
    cands: list[_Candidate],
    *,
    scan: _Pass,
    owner: _Owner,
    scored: list[ScoredContainer],
    flt: Filters,
) -> FriendExtraction:
    cands.sort(key=lambda c: c.order)  # stable: document order, then layer order
    repeats: dict[tuple[str, str], int] = {}
    for c in cands:
        pair = (c.url, " ".join(c.name.split()))
        repeats[pair] = repeats.get(pair, 0) + 1
    deep_urls: dict[str, set[str]] = {}
    for c in cands:
        if c.link is not None and c.verdict is None and _path_depth(c.url, c.link.identity) >= 1:
            deep_urls.setdefault(friend_key(c.url), set()).add(c.url)
    friends: list[Friend] = []
    excluded: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for c in cands:
        name = clean_name(c.name)
        reason = c.verdict
        if reason is None and c.link is not None:
            reason = c.link.verdict
        if reason is None:
            reason = flt.name_verdict(name)
            if reason is None and c.link is None:
                reason = flt.url_verdict(c.url, c.rels)
        if reason is None and _DATED_POST.search(urlsplit(c.url).path):
            reason = "post"
        if reason is None and len(deep_urls.get(friend_key(c.url), ())) >= SAME_SITE_PAGES:
            reason = "same-site-pages"
        if reason is None and repeats[(c.url, " ".join(c.name.split()))] >= flt.repeats:
            reason = "placeholder"
        if reason is not None:
            if reason != "circle":
                excluded.append((c.url, reason))
            continue
        key = friend_key(c.url)
        if key in seen:
            first = friends[seen[key]]
            if c.rels and not set(c.rels) <= set(first.rels):
                friends[seen[key]] = _merge_rels(first, c.rels)
            if c.url != first.url:
                excluded.append((c.url, f"duplicate of {first.url}"))
            continue
        seen[key] = len(friends)
        kind = "feed" if _FEED_URL.search(c.url) else ""
        friends.append(Friend(c.url, name, c.score, c.avatar, c.how, c.rels, c.listed_as, kind))
    _rescale(friends)
    circles: list[Friend] = []
    circle_seen: set[str] = set()
    for link in scan.links:
        if link.url in circle_seen or link.verdict not in (None, "circle"):
            continue
        name = text_of(link.el)
        if link.verdict == "circle" or flt.name_verdict(name) == "circle":
            circle_seen.add(link.url)
            circles.append(Friend(link.url, name, 0.0, how="circle"))
    return FriendExtraction(
        containers=scored,
        friends=friends,
        elements=scan.count,
        excluded=list(dict.fromkeys(excluded)),
        circles=circles,
        data_sources=_data_sources(page, scan),
        owner_aliases=sorted(set(owner.roots.values())),
        ruleset="blogfeeds",
    )


def _rescale(friends: list[Friend]) -> None:
    """Friends found by a list layer score 1000 per friend that layer found (the formula's
    per-link points); the statistical layer keeps its container's score."""
    counts: dict[str, int] = {}
    for f in friends:
        counts[f.how] = counts.get(f.how, 0) + 1
    for i, f in enumerate(friends):
        if f.how != "container":
            friends[i] = replace(f, score=1000.0 * counts[f.how])


def _merge_rels(friend: Friend, rels: tuple[str, ...]) -> Friend:
    return replace(friend, rels=tuple(dict.fromkeys((*friend.rels, *rels))))
