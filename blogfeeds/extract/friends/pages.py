"""Friend-link pages: same-blog links that look like the blog's blogroll page."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

import lxml.etree

from blogfeeds.extract.css import can_match
from blogfeeds.extract.friends.keywords import XFN, is_label
from blogfeeds.extract.friends.themes import ThemeRule, bundled_theme_rules, text_of
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.page import Page

_TEXT_WORDS = re.compile(
    r"友情链接|友链|友人帐|友人|朋友|伙伴|\b(?:links|friends?|blogroll)\b", re.IGNORECASE
)
_PATH_SEGMENT = re.compile(
    r"^(?:links?|friends?|flinks?|blogroll|友情链接|友链|友人帐|友人|朋友)(?:\.html?|\.php)?$",
    re.IGNORECASE,
)
MAX_NAV_TEXT = 20
"""Anchor texts longer than this (characters) are post titles, not menu entries."""


def find_friend_pages(page: Page) -> list[str]:
    """Same-blog links that look like the blog's friend-link page, best first.

    A link qualifies when its anchor text (at most :data:`MAX_NAV_TEXT` characters) names
    one (友情链接, 友链, 友人帐, 友人, 朋友, 伙伴, Links, Friends, Blogroll) or a path segment
    does (``/links/``, ``/friends/``, ``link.html``, ``/友链/``, ...). Text matches rank
    before path-only matches, then shorter paths, then document order. The page itself and
    other blogs are excluded; URLs are returned without fragment, deduped.
    """
    try:
        own = blog_id(page.url)
    except ValueError:
        return []
    here = page.url.split("#", 1)[0]
    base_hit = names_friend_page(urlsplit(page.base_url).path)
    ranked: dict[str, tuple[int, int, int]] = {}
    for order, el in enumerate(page.tree.iter("a")):
        href = (el.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        # Only a short label or a path naming a friend page can qualify: read those first,
        # resolve the URL after (the resolved path's segments are among the href's own, or
        # the base's for a relative path).
        text = el.text if len(el) == 0 else el.text_content()
        label = " ".join((text or "").split())
        text_hit = len(label) <= MAX_NAV_TEXT and bool(_TEXT_WORDS.search(label))
        relative = not href.startswith("/") and "://" not in href
        named = names_friend_page(href.split("?", 1)[0].split("#", 1)[0])
        if not (text_hit or named or (relative and base_hit)):
            continue
        try:
            url = page.absolute(href).split("#", 1)[0]
            parts = urlsplit(url)
            if parts.scheme.lower() not in ("http", "https") or blog_id(url) != own:
                continue
        except ValueError:
            continue
        if url == here:
            continue
        path = unquote(parts.path)
        path_hit = names_friend_page(path)
        if not (text_hit or path_hit):
            continue
        key = (0 if text_hit else 1, len(path), order)
        if url not in ranked or key < ranked[url]:
            ranked[url] = key
    return sorted(ranked, key=ranked.__getitem__)


def names_friend_page(path: str) -> bool:
    """Whether a segment of ``path`` (percent-decoded) names a friend-link page (``/links/``,
    ``/flink/``, ``friends.html``, ``/友链/``)."""
    return any(_PATH_SEGMENT.match(s) for s in unquote(path).split("/") if s)


_LABELS = lxml.etree.XPath("//h1|//h2|//h3|//h4|//h5|//h6|//a[@rel]")


def may_list_friends(page: Page, rules: Iterable[ThemeRule] = ()) -> bool:
    """Whether a page that is not its blog's friend page may list friends of its own (a
    sidebar blogroll beside the friend page): a theme's or a widget's friend cards may be on it
    (``rules`` and the bundled table, by class names), a short heading names friends
    ("友情链接", "Blogroll"), or a link carries an XFN friend value. Read before the measuring
    pass, which costs far more: a home page without any of these lists none of its own."""
    classes = page.class_names
    if any(can_match(rule.cards, classes) for rule in (*rules, *bundled_theme_rules())):
        return True
    for el in _LABELS(page.tree):
        if el.tag == "a":
            if XFN & set((el.get("rel") or "").lower().split()):
                return True
        elif is_label(text_of(el)):
            return True
    return False
