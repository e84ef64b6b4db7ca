"""Who the page's own blog is: its identity, other roots (``rel=me``, canonical and
``og:url``, author cards, social corners, site switchers, private-address mirrors, the "about this
site" block) and the names it goes by; links to any of them are not friends."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import lxml.html

from blogfeeds.extract.friends.filters import Filters, is_mirror_host, normal_host, zone_match
from blogfeeds.extract.friends.measure import FIELD_NAME, Link, Scan, absolute
from blogfeeds.extract.friends.themes import HEADINGS
from blogfeeds.extract.identity import blog_id, path_rule
from blogfeeds.extract.page import Page

_GENERIC_LABELS = frozenset(
    "blog blogs www home site web my me the index main about github gitee wordpress".split()
)
_TEXT_URL = re.compile(r"https?://[^\s<>\"'，。、；）)]+")


@dataclass
class Owner:
    """What the page says about its own blog."""

    identity: str | None
    aliases: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    roots: dict[str, str] = field(default_factory=dict)
    pages: set[str] = field(default_factory=set)
    """The owner's own pages on sites that are not theirs (a profile linked from the author
    card): those URLs, not their sites."""
    info_links: set[lxml.html.HtmlElement] = field(default_factory=set)
    """Links inside site-info blocks (:func:`site_info_blocks`): those links are no friends;
    the same site linked elsewhere on the page may be."""
    user_host: str = ""
    """The page's host when it is one user's (``alice.github.io``, whose paths are that
    user's project sites): every site on it is the owner's."""

    def add(self, url: str) -> None:
        try:
            identity = blog_id(url)
        except ValueError:
            return
        if identity == self.identity:
            return
        self.aliases.add(identity)
        label = label_of(identity)
        if label:
            self.names.add(label)
        self.roots.setdefault(identity, _root(url))


def _root(url: str) -> str:
    """``scheme://host/`` of ``url``."""
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.rpartition('@')[2].lower()}/"


def label_of(identity: str) -> str:
    """The name a blog identity is known by: ``alice`` of ``alice.github.io``,
    ``cnblogs.com/alice`` or ``alice.com``; ``""`` when generic or too short."""
    label = identity.rsplit("/", 1)[1] if "/" in identity else identity.split(".", 1)[0]
    label = label.lstrip("@").lower()
    return "" if len(label) < 4 or label in _GENERIC_LABELS else label


def path_depth(url: str, identity: str) -> int:
    """Path segments beyond the blog's root (``cnblogs.com/alice/p/1`` → 2)."""
    segments = [s for s in urlsplit(url).path.split("/") if s]
    return max(0, len(segments) - identity.count("/"))


def owner_of(page: Page, scan: Scan, flt: Filters) -> Owner:
    """The page's own blog, from the measured links and the page's own statements."""
    try:
        own: str | None = blog_id(page.url)
    except ValueError:
        own = None
    owner = Owner(own)
    host = normal_host(page.url)
    rule = path_rule(host) if host else None
    if rule is not None and rule.project_pages:
        owner.user_host = host
    if own and "/" in own:
        # A blog under a path (a project site alice.github.io/notes, cnblogs.com/alice, a
        # ~user directory) lives on a host that is its owner's user site or the platform's:
        # never a friend of it.
        owner.aliases.add(own.split("/", 1)[0])
    label = label_of(own) if own else ""
    if label:
        owner.names.add(label)
    for url in scan.canonical:
        if url.lower().startswith(("http://", "https://")):
            owner.add(url)
    for link in look_alike_zone_links(scan, flt):
        link.owner_zone = False  # a friend's card styled as an author card
    page_host = normal_host(page.url).removeprefix("www.")
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
            elif path_depth(link.url, link.identity) <= 1:
                # author card, social corner, site switcher: the owner's other sites
                owner.add(link.url)
            else:  # a page deeper on a site (luogu.com.cn/user/1): the owner's profile
                owner.pages.add(link.url)  # there, not the site
        elif is_mirror_host(link.parts.host):  # a private-address mirror of the blog
            owner.roots.setdefault(link.url, _root(link.url))
    for heading in scan.about:  # the block right after "本站信息" / "About this site"
        node = heading.getnext()
        while node is not None and not isinstance(node.tag, str):
            node = node.getnext()
        if node is None or node.tag in HEADINGS:
            continue
        for a in node.iter("a"):
            if href := a.get("href"):
                owner.add(absolute(page, href))
        for url in _TEXT_URL.findall(" ".join(node.itertext())):  # <li>s end URLs too
            owner.add(url)
    for block in site_info_blocks(scan):
        owner.info_links.update(block.iter("a"))
    return owner


_FIELD_ADDRESS = re.compile(r"(?:地址|链接|网址|\burl|\blink)\s*[:：]", re.IGNORECASE)
_BLOCKS = frozenset({"p", "div", "li", "ul", "blockquote", "pre", "code", "td", "dd", "section"})
INFO_BLOCK_TEXT = 600
"""Characters at most in a site-info block: a few labelled fields, not a page section."""


def site_info_blocks(scan: Scan) -> list[lxml.html.HtmlElement]:
    """Blocks that give a site's details as labelled fields, a name and an address at least
    (``网站名称：X 网站地址：https://x.org/``, ``name: X url: ...``): the owner's details for
    friends to copy, or the format an application must follow; a link there is no friend.
    Found from the elements naming a name field (:attr:`Scan.name_fields`) up to their nearest
    block."""
    found: dict[lxml.html.HtmlElement, None] = {}
    for el in scan.name_fields:
        block = el
        while block is not None and block.tag not in _BLOCKS:
            block = block.getparent()
        if block is None or block in found:
            continue
        content = " ".join(block.itertext())  # <br>-separated fields keep their bounds
        if len(content) > INFO_BLOCK_TEXT:
            continue
        if FIELD_NAME.search(content) and _FIELD_ADDRESS.search(content):
            found[block] = None
    return list(found)


LOOK_ALIKE_ZONES = 3
"""Owner zones of one tag and class, each linking other sites, from which they are cards."""


def look_alike_zone_links(scan: Scan, flt: Filters) -> list[Link]:
    """Links in owner zones that are cards of a list: :data:`LOOK_ALIKE_ZONES` or more
    elements of one tag and class (``div.flex.author``), each an owner zone and not itself a
    link (a menu's items are), together linking at least as many sites (not platforms) as they
    are. A page has one author card (a second copy for small screens, a social corner of
    platforms); a theme that styles every friend's card as an "author" card lists friends."""
    zoned = [link for link in scan.links if link.owner_zone]
    if len({link.identity for link in zoned}) < LOOK_ALIKE_ZONES:
        return []  # most pages: one author card, a few sites
    groups: dict[tuple[str, str], dict[lxml.html.HtmlElement, list[Link]]] = {}
    for link in zoned:
        zone = _zone_of(link.el, flt)
        if zone is not None and zone.tag != "a":  # a menu's items are links, not cards
            key = (str(zone.tag), zone.get("class") or "")
            groups.setdefault(key, {}).setdefault(zone, []).append(link)
    out: list[Link] = []
    for zones in groups.values():
        sites = {
            link.identity
            for links in zones.values()
            for link in links
            if link.parts not in flt.platforms and link.parts not in flt.badges
        }
        if len(zones) >= LOOK_ALIKE_ZONES and len(sites) >= len(zones):
            out.extend(link for links in zones.values() for link in links)
    return out


def _zone_of(el: lxml.html.HtmlElement, flt: Filters) -> lxml.html.HtmlElement | None:
    """The nearest element from ``el`` up whose class or id names an owner zone."""
    for node in (el, *el.iterancestors()):
        tokens = [*(node.get("class") or "").split(), node.get("id") or ""]
        if zone_match(tokens, flt.owner_words):
            return node
    return None


def owner_reason(link: Link, owner: Owner) -> str | None:
    """Why ``link`` points to the owner (``owner``, ``rel-me``, ...), or None."""
    if link.identity == owner.identity or link.identity in owner.aliases:
        return "owner"
    if link.url in owner.pages:
        return "owner"
    if owner.user_host and link.parts.host == owner.user_host:
        return "owner"  # the owner's user site or another of their project sites
    if "me" in link.rels:
        return "rel-me"
    if link.el in owner.info_links:
        return "site-info"
    if link.owner_zone:
        return "owner-zone"
    if label_of(link.identity) in owner.names:
        return "owner-name"
    if is_mirror_host(link.parts.host):
        return "ip-address"
    return None
