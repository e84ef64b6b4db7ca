"""The friend extractor's measuring pass: one walk over the tree, in document order, that
collects every per-element fact the layers, the owner detection and both container formulas
read (:class:`Scan`).

Per element: its parent, its own visible text and link text (the element's text and its
element children's tails; nothing inside ``script``/``style``/``template``/``noscript``),
whether it is a link, inside page chrome or an owner zone, labelled or preceded by a friend
keyword. Per page: the resolved ``<a href>`` links (:class:`Link`), inline friend runs, inline
scripts, "about this site" headings, data-source URLs, canonical URLs, the title and first
``h1``. The original formula also counts the tails of comments and of the children of
text-less elements: :attr:`Scan.extra_text` keeps those, sparse.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import lxml.etree
import lxml.html

from blogfeeds.extract.friends.datasource import is_data_source
from blogfeeds.extract.friends.feedpairs import feed_pairs
from blogfeeds.extract.friends.filters import (
    Cleaned,
    Filters,
    blog_home_path,
    filters,
    is_feed_link,
    repair_href,
    zone_match,
)
from blogfeeds.extract.friends.keywords import has_keyword, is_label, is_service_heading
from blogfeeds.extract.friends.themes import HEADINGS, text_of
from blogfeeds.extract.identity import (
    InvalidURL,
    blog_id,
    host_blog_id,
    normalize_host,
    path_rule,
)
from blogfeeds.extract.page import Page

_INLINE_LABEL = re.compile(
    r"(?:左邻右舍|友邻|友情链接|友链|朋友们?|邻居|friends|blogroll|links|neighbou?rs)\s*[:：]?\s*$",
    re.IGNORECASE,
)
FIELD_NAME = re.compile(r"(?:名称|昵称|\bname)\s*[:：]", re.IGNORECASE)
"""A labelled name field (``网站名称：``, ``name:``) of a site's details."""
_SEPARATOR = re.compile(r"^[\s、，,;；|/·&+和及与\-–—]*$")
_NO_TEXT_TAGS = frozenset({"script", "style", "template", "noscript"})
_DATA_ATTRS = ("api", "data-api", "data-json", "data-source", "data-url", "data-links")
_ELEMENTS = lxml.etree.XPath("count(descendant-or-self::*)")
_DATA_XPATH = lxml.etree.XPath(" | ".join(f"//@{a}" for a in _DATA_ATTRS))
"""The data-source attributes of the page (their elements are their parents): selecting the
attributes is several times faster in libxml2 than testing six attributes on every element."""
_SCRIPTED_XPATH = lxml.etree.XPath("//@onclick | //@data-href | //@data-url | //@data-link")
_SCRIPTED_URL = re.compile(
    r"""(?:window\.open|location\.assign|location(?:\.href)?\s*=)\s*\(?\s*"""
    r"""(?:'|"|&quot;)(https?://[^'"\s&]+)"""
)


@dataclass
class Link:
    """A resolved ``<a href>``: cleaned URL, blog identity and what the filters say."""

    el: lxml.html.HtmlElement
    node: int
    """Pre-order index of the element."""
    parts: Cleaned
    identity: str
    rels: tuple[str, ...]
    blank: bool
    """``target="_blank"``."""
    counted: bool
    """No query and at most one path level below the blog's root (the formula counts it)."""
    owner_zone: bool
    """Inside an author card, social corner or site switcher."""
    repaired: str = ""
    """The ``href`` as written when it was broken and read as :attr:`url`
    (:func:`~.filters.repair_href`), else ``""``."""
    verdict: str | None = None
    """Why the filters drop it (set after owner detection), or None."""

    @property
    def url(self) -> str:
        return self.parts.url


@dataclass
class Scan:
    """Everything one walk over the tree collects; per-element lists are indexed in pre-order."""

    nodes: list[lxml.html.HtmlElement] = field(default_factory=list)
    index: dict[lxml.html.HtmlElement, int] = field(default_factory=dict)
    """Pre-order index of each element (the inverse of :attr:`nodes`)."""
    count: int = 0
    """Elements in the tree."""
    parent: list[int] = field(default_factory=list)
    text: list[int] = field(default_factory=list)
    ltext: list[int] = field(default_factory=list)
    is_link: list[bool] = field(default_factory=list)
    chrome: list[bool] = field(default_factory=list)
    anchored: list[bool] = field(default_factory=list)
    labelled: list[bool] = field(default_factory=list)
    service: list[bool] = field(default_factory=list)
    """Inside a section whose heading names tools, resources or thanks, and no friend keyword
    (:data:`~.keywords.SERVICE_HEADING`): its links are not friends."""
    extra_text: dict[int, int] = field(default_factory=dict)
    """Characters of the tails of comments and of the children of text-less elements, by
    parent (the original formula counts them as the parent's text)."""
    extra_ltext: dict[int, int] = field(default_factory=dict)
    """The part of :attr:`extra_text` inside a link."""
    links: list[Link] = field(default_factory=list)
    link_at: dict[int, int] = field(default_factory=dict)
    inline: list[list[lxml.html.HtmlElement]] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    about: list[lxml.html.HtmlElement] = field(default_factory=list)
    data_urls: list[str] = field(default_factory=list)
    canonical: list[str] = field(default_factory=list)
    blogroll_link: bool = False
    title: str = ""
    h1: str = ""
    invalid_urls: list[str] = field(default_factory=list)
    """Links whose host no host may hold (:class:`~blogfeeds.extract.identity.InvalidURL`),
    each once, in document order: no link is made of them."""

    name_fields: list[lxml.html.HtmlElement] = field(default_factory=list)
    """Elements whose own text names a site's name field (``网站名称：``, ``name:``): where
    site-info blocks start (:func:`.owner.site_info_blocks`)."""

    @functools.cached_property
    def feeds(self) -> frozenset[int]:
        """Nodes of the links to feeds (:func:`~.filters.is_feed_link`), judged once a page."""
        return frozenset(link.node for link in self.links if is_feed_link(link.el, link.url))

    @functools.cached_property
    def fed(self) -> frozenset[int]:
        """Nodes of the links listed with their own feed beside them (:mod:`.feedpairs`)."""
        if not self.feeds:
            return frozenset()
        feeds = [i for i, link in enumerate(self.links) if link.node in self.feeds]
        pairs = feed_pairs([(link.el, link.url) for link in self.links], feeds)
        return frozenset(self.links[i].node for i in pairs)


def join_url(base: str, href: str) -> str:
    """``href`` resolved against ``base``; ``""`` when it is not a URL (``http://[``)."""
    try:
        return urljoin(base, href.strip())
    except ValueError:
        return ""


def absolute(page: Page, href: str) -> str:
    """``href`` resolved against the page's base URL; ``""`` when it is not a URL."""
    return join_url(page.base_url, href)


def describe(el: lxml.html.HtmlElement) -> str:
    """Short selector-like description: ``div#links.flink-list`` (three classes at most)."""
    out = str(el.tag)
    if el.get("id"):
        out += "#" + el.get("id", "").strip()
    for cls in (el.get("class") or "").split()[:3]:
        out += "." + cls
    return out


def _nonspace(s: str | None) -> int:
    """Characters of ``s`` that are not whitespace (most tails are only an indentation)."""
    if not s or s.isspace():
        return 0
    return len("".join(s.split()))


_LABEL_BLOCKS = frozenset({"b", "strong", "span", "p", "em", "label", "dt"})
_HEADING_LIKE = HEADINGS | _LABEL_BLOCKS


def _heading_text(el: lxml.html.HtmlElement, tag: str) -> str | None:
    """Text of a heading-like element (h1-h6; a short ``b``/``strong``/``p``/``dt`` label;
    a ``*title*``/``*label*`` class), or None."""
    if tag in HEADINGS:
        return text_of(el)
    # An own text already too long ends the test before the children's text is read.
    own = el.text
    children = len(el)
    if tag in _LABEL_BLOCKS and children <= 2:
        if own and len(own) > 20 and _nonspace(own) > 20:
            return None
        # text_of, with the text already read when there is no child (most labels)
        text = " ".join(own.split()) if own and not children else text_of(el)
        return text if len(text) <= 20 else None
    cls = el.get("class")
    short = not own or len(own) <= 40 or _nonspace(own) <= 40
    if cls and _titled(cls) and tag not in ("a", "ul", "ol") and short:
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


def measure(page: Page, flt: Filters | None = None) -> Scan:
    """Visit every node of ``page`` once, in document order, and collect every per-element fact.

    The hot loop of the friend extractor. Nodes come from lxml's own iterator (C), each finding
    its parent's facts by index; an element's tail adds to its parent's text, and a
    heading-like element arms its following siblings (``anchored``). Every class/id token is
    judged once per process (:func:`_token_zones`). ``flt``: the filter table (default the
    bundled one).
    """
    flt = flt or filters()
    out = Scan()
    links = _Resolver(page, flt)
    # Elements carrying a data-source attribute, found by one XPath instead of six lookups each.
    with_data = {attr.getparent() for attr in _DATA_XPATH(page.tree)}
    scripted = _scripted_links(page)
    nodes, parents, texts, ltexts = out.nodes, out.parent, out.text, out.ltext
    is_links, chromes, anchoreds, labelled = out.is_link, out.chrome, out.anchored, out.labelled
    owners: list[bool] = []
    linkeds: list[bool] = []
    services = out.service
    no_text: list[bool] = []
    # Read and written by index as the children come: allocated once (counted in C).
    size = int(_ELEMENTS(page.tree))
    armed = [False] * size  # a friend-keyword heading precedes the next child of this node
    serving = [0] * size  # rank (1-7) of a service heading before the next child, or 0
    anchor_children = [0] * size
    sibling = [0] * size  # children seen so far
    headings: list[tuple[int, int, lxml.html.HtmlElement, str]] = []
    index = out.index
    extra_text, extra_ltext = out.extra_text, out.extra_ltext
    chrome_tags, about = flt.chrome_tags, _about_pattern(flt.about_headings)
    # Not the element's iter(): one iterator over the whole tree, comments included.
    for el in lxml.etree.ElementDepthFirstIterator(page.tree):
        tag = el.tag
        i = len(nodes)
        if tag.__class__ is not str:  # a comment or processing instruction: only its tail
            tail = el.tail
            if tail and not tail.isspace():
                up = index[el.getparent()]
                count = _nonspace(tail)
                extra_text[up] = extra_text.get(up, 0) + count
                if linkeds[up]:
                    extra_ltext[up] = extra_ltext.get(up, 0) + count
            continue
        parent = el.getparent() if i else None
        if parent is None:
            up, in_link, chrome, owner, anchored, service = -1, False, False, False, False, False
            cls = el.get("class")
            facts = _class_facts(cls) if cls else _NO_FACTS
        else:
            up = index[parent]
            in_link, chrome, owner = linkeds[up], chromes[up], owners[up]
            anchored = anchoreds[up] or armed[up]
            service = services[up] or serving[up] > 0
            position = sibling[up]
            sibling[up] = position + 1
            if tag == "a":
                anchor_children[up] += 1
            cls = el.get("class")
            facts = _class_facts(cls) if cls else _NO_FACTS
            heading = _heading_text(el, tag) if tag in _HEADING_LIKE or facts[2] else None
            if heading is not None:
                headings.append((up, position, el, heading))
                armed[up] = len(heading) <= 40 and has_keyword(heading)
                if tag in HEADINGS:  # a card's description ("翻译服务") is no section heading
                    rank = int(tag[1])
                    if len(heading) <= 40 and not armed[up] and is_service_heading(heading):
                        serving[up] = min(serving[up], rank) if serving[up] else rank
                        # A section's own header block (``<header>``, ``div.x__header``) holds
                        # its heading: the section's later children are what it heads.
                        if (
                            rank > 1
                            and position == 0
                            and parents[up] >= 0
                            and _header_block(parent)
                        ):
                            grand = parents[up]
                            serving[grand] = min(serving[grand], rank) if serving[grand] else rank
                    elif rank <= serving[up]:
                        serving[up] = 0  # a heading of the same rank or higher ends it
        index[el] = i
        nodes.append(el)
        parents.append(up)
        if not (owner and chrome):
            ident = el.get("id")
            if (cls or ident) and tag not in ("html", "body"):  # body classes describe the page
                if cls:
                    owner, chrome = owner or facts[0], chrome or facts[1]
                if ident:
                    in_owner, in_chrome = _token_zones(ident)
                    owner, chrome = owner or in_owner, chrome or in_chrome
            if not chrome and (tag in chrome_tags or el.get("role") in CHROME_ROLES):
                chrome = True
        is_link = tag == "a" and el.get("href") is not None
        target = scripted.get(el) if scripted and not (is_link or in_link) else None
        linked = in_link or is_link or target is not None
        silent = tag in _NO_TEXT_TAGS
        own_text = 0
        label_kw = False
        text = el.text  # each read of el.text makes a new string
        if text and not silent and not text.isspace():
            own_text = len("".join(text.split()))  # _nonspace, inline: the hot loop
            if not linked:
                label_kw = is_label(text)
                if (":" in text or "：" in text) and FIELD_NAME.search(text):
                    out.name_fields.append(el)
        texts.append(own_text)
        ltexts.append(own_text if linked else 0)
        is_links.append(is_link)
        chromes.append(chrome)
        owners.append(owner)
        linkeds.append(linked)
        anchoreds.append(anchored)
        services.append(service)
        no_text.append(silent)
        labelled.append(label_kw)
        tail = el.tail
        if tail and up >= 0 and not tail.isspace():  # the parent's text
            count = len("".join(tail.split()))
            if no_text[up]:
                extra_text[up] = extra_text.get(up, 0) + count
                if linkeds[up]:
                    extra_ltext[up] = extra_ltext.get(up, 0) + count
            elif count:
                texts[up] += count
                if linkeds[up]:
                    ltexts[up] += count
                elif not labelled[up]:
                    labelled[up] = is_label(tail)
        if target is not None:
            is_link = True
            is_links[-1] = True
        if is_link:
            link = links.link(el, i, owner, target)
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
        if about is not None and about.search(heading.lower()):
            out.about.append(el)
    for i, count in enumerate(anchor_children):
        if count >= 2 and not no_text[i]:
            el = nodes[i]
            run = _inline_run(el, [c for c in el if isinstance(c.tag, str)])
            if run:
                out.inline.append(run)
    out.count = len(nodes)
    out.invalid_urls = links.invalid
    return out


CHROME_ROLES = frozenset({"navigation", "banner", "contentinfo"})
"""ARIA roles of page chrome (like the ``chrome_tags`` of the filter table)."""


@functools.lru_cache(maxsize=65536)
def _token_zones(token: str) -> tuple[bool, bool]:
    """Whether a class/id token marks an owner zone and a chrome zone (:func:`zone_match`
    against the bundled filter table). Cached: themes share their class vocabulary."""
    flt = filters()
    return zone_match((token,), flt.owner_words), zone_match((token,), flt.chrome_words)


@functools.lru_cache(maxsize=65536)
def _class_facts(cls: str) -> tuple[bool, bool, bool]:
    """What a ``class`` attribute says: an owner zone and a chrome zone (:func:`_token_zones`
    over its tokens) and a title or label (:func:`_titled`). Cached by the whole attribute: a
    theme repeats the same few attributes on every card, so one lookup serves each element."""
    zones = [_token_zones(token) for token in cls.split()]
    return any(o for o, _ in zones), any(c for _, c in zones), _titled(cls)


_NO_FACTS = (False, False, False)
""":func:`_class_facts` of an element without a ``class``."""


@functools.lru_cache(maxsize=64)
def _about_pattern(headings: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex finding any of the "about this site" headings (lower-cased) in a lower-cased
    heading, or None when there are none (every heading of a page is tested)."""
    words = sorted({h.lower() for h in headings if h})
    return re.compile("|".join(map(re.escape, words))) if words else None


def _header_block(el: lxml.html.HtmlElement) -> bool:
    """Whether ``el`` is a block that heads a section (``header``, a ``*header*``/``*head*``
    class): its heading names the section's content."""
    if el.tag == "header":
        return True
    cls = el.get("class")
    return bool(cls) and any("head" in token.lower() for token in cls.split())


@functools.lru_cache(maxsize=65536)
def _titled(cls: str) -> bool:
    """Whether a ``class`` attribute names a title or label (a heading-like element)."""
    return zone_match(cls.split(), ("title", "label"))


_FACT_TAGS = frozenset({"script", "link", "meta", "title"})


def _note_fact(out: Scan, page: Page, el: lxml.html.HtmlElement, tag: str) -> None:
    """Record what a ``script``, ``link``, ``meta`` or ``title`` element says (inline scripts,
    ``rel=blogroll``, canonical and ``og:url``, the first title)."""
    if tag == "script":
        if not el.get("src") and "ld+json" not in (el.get("type") or ""):
            out.scripts.append(el.text or "")
    elif tag == "link":
        rels = (el.get("rel") or "").lower().split()
        href = (el.get("href") or "").strip()
        if href and "blogroll" in rels:
            out.data_urls.append(absolute(page, href))
            out.blogroll_link = True
        elif href and "canonical" in rels:
            out.canonical.append(absolute(page, href))
    elif tag == "meta":
        if (el.get("property") or "").lower() == "og:url" and el.get("content"):
            out.canonical.append(absolute(page, el.get("content", "")))
    elif tag == "title" and not out.title:
        out.title = text_of(el)


def _scripted_links(page: Page) -> dict[lxml.html.HtmlElement, str]:
    """Cards that link without ``<a>``: an element whose ``onclick`` opens an absolute URL
    (``window.open('https://…')``, ``location.href='…'``) or whose ``data-href``/``data-url``/
    ``data-link`` is one (not a machine-readable list, :func:`is_data_source`). Read as links
    to that URL."""
    found: dict[lxml.html.HtmlElement, str] = {}
    for attr in _SCRIPTED_XPATH(page.tree):
        el, value = attr.getparent(), str(attr).strip()
        if el.tag == "a" or el in found:
            continue
        if attr.attrname == "onclick":
            m = _SCRIPTED_URL.search(value)
            url = m.group(1) if m else ""
        else:
            url = value if value.lower().startswith(("http://", "https://")) else ""
        if url and not is_data_source(url, el.get("class") or ""):
            found[el] = url
    return found


def _note_data(out: Scan, page: Page, el: lxml.html.HtmlElement) -> None:
    """Record the machine-readable friend lists an element's data attributes point to."""
    for attr in _DATA_ATTRS:
        value = el.get(attr)
        if value and is_data_source(url := absolute(page, value), el.get("class") or ""):
            out.data_urls.append(url)


class _Resolver:
    """Resolves the page's ``<a href>`` into :class:`Link` records, each distinct ``href``
    once (its cleaned URL, blog identity and whether the formula counts it)."""

    def __init__(self, page: Page, flt: Filters) -> None:
        self.page, self.flt = page, flt
        self.cache: dict[str, tuple[Cleaned, str, bool, str] | None] = {}
        self.invalid: list[str] = []
        try:
            self.own: str | None = blog_id(page.url)
            host = normalize_host(urlsplit(page.url).hostname or "")
        except ValueError:
            self.own, host = None, ""
        # Links to the page's own host are the page's blog, unless blogs share the host (a
        # platform of the table, or a page under a ~user or account path of its own).
        shared = self.own is None or "/" in self.own or path_rule(host) is not None
        self.own_host = "" if shared else host

    def link(
        self, el: lxml.html.HtmlElement, node: int, owner_zone: bool, href: str | None = None
    ) -> Link | None:
        """The link an ``<a href>`` (or a scripted card's ``href``) makes, or None (empty,
        ``#fragment`` or not a web URL)."""
        href = (el.get("href") if href is None else href or "").strip()
        if not href or href.startswith("#"):
            return None
        if href in self.cache:
            hit = self.cache[href]
        else:
            hit = self.cache[href] = self._resolve(href)
        if hit is None:
            return None
        parts, identity, counted, repaired = hit
        rels = tuple((el.get("rel") or "").lower().split())
        blank = (el.get("target") or "").strip().lower() == "_blank"
        return Link(el, node, parts, identity, rels, blank, counted, owner_zone, repaired)

    def _resolve(self, href: str) -> tuple[Cleaned, str, bool, str] | None:
        fixed = repair_href(href)
        try:
            clean = self.flt.clean_href(fixed or href, self.page.base_url)
            own_host = self.own_host and clean.web and clean.host == self.own_host
            if own_host and self.own:
                identity = self.own
            elif clean.web:
                identity = host_blog_id(clean.host, clean.path)
            else:
                return None  # mailto:, javascript: (blog_id's ValueError)
        except InvalidURL:
            self.invalid.append(join_url(self.page.base_url, href))
            return None
        except ValueError:
            return None
        segments = [s for s in clean.path.split("/") if s]
        depth = len(segments) - identity.count("/")
        # a blog's home under a path is a site's home, however deep (user.github.io/zh/posts/)
        home = depth <= 1 or blog_home_path(segments[-depth:], clean.path.endswith("/"))
        return clean, identity, not clean.query and home, href if fixed else ""
