"""Theme and widget rules as data: friend cards found by CSS selectors, fields per card.

The table is ``blogfeeds/data/friend_themes.toml`` (its header documents the format); users
add entries in the same format (``user_rules``). Each entry's selectors run once per page
(compiled to XPath once per process); fields are read per card, so an optional field that is
missing in one card never shifts another card's fields (hexo-circle-of-friends#47).
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import lxml.html
from lxml.cssselect import CSSSelector

from blogfeeds.extract.css import can_match
from blogfeeds.extract.page import Page

LAZY_ATTRIBUTES = (
    "data-lazy-src",
    "data-src",
    "data-original",
    "data-lateloadsrc",
    "data-lazyload",
    "data-url",
    "src",
)
"""Image attributes read for an avatar, in order (lazy-load first; ``data:`` URIs skipped)."""


@dataclass(frozen=True)
class ThemeRule:
    """One entry of the theme table (see the table's header for the meaning of each key)."""

    name: str
    cards: str
    kind: str = "theme"
    fingerprint: tuple[str, ...] = ()
    require_fingerprint: bool = False
    link: tuple[str, ...] = ()
    names: tuple[str, ...] = ("text",)
    avatar: tuple[str, ...] = ()
    group: str = ""
    group_title: str = ""
    blog_list: bool = False
    _compiled: dict[str, CSSSelector] = field(default_factory=dict, repr=False, compare=False)

    @property
    def how(self) -> str:
        """``theme:<name>`` or ``widget:<name>``."""
        return f"{self.kind}:{self.name}"

    def select(self, css: str) -> CSSSelector:
        """``css`` compiled once (HTML translator: case-insensitive tag names)."""
        sel = self._compiled.get(css)
        if sel is None:
            sel = self._compiled[css] = CSSSelector(css, translator="html")
        return sel


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(str(v) for v in value if str(v))


def rule_from_mapping(entry: Mapping[str, Any]) -> ThemeRule:
    """A :class:`ThemeRule` from one table entry; raises ``ValueError`` on a bad entry.

    Selectors are compiled here, so a syntax error is reported when the rule is loaded.
    """
    try:
        rule = ThemeRule(
            name=str(entry["name"]),
            cards=str(entry["cards"]),
            kind=str(entry.get("kind", "theme")),
            fingerprint=_strings(entry.get("fingerprint")),
            require_fingerprint=bool(entry.get("require_fingerprint", False)),
            link=_strings(entry.get("link")),
            names=_strings(entry.get("friend_name")) or ("text",),
            avatar=_strings(entry.get("avatar")),
            group=str(entry.get("group", "")),
            group_title=str(entry.get("group_title", "")),
            blog_list=bool(entry.get("blog_list", False)),
        )
    except KeyError as exc:
        raise ValueError(f"friend theme rule without {exc.args[0]!r}: {dict(entry)!r}") from exc
    try:
        for css in (rule.cards, *rule.link, *rule.avatar, rule.group, rule.group_title):
            if css:
                rule.select(css)
        for css in rule.names:
            if not css.startswith("@") and css != "text":
                rule.select(css)
    except Exception as exc:  # cssselect raises SelectorSyntaxError / ExpressionError
        raise ValueError(f"friend theme rule {rule.name!r}: bad selector: {exc}") from exc
    return rule


def load_theme_rules(text: str) -> list[ThemeRule]:
    """Parse a theme table (TOML text with ``[[theme]]`` entries)."""
    raw = tomllib.loads(text)
    return [rule_from_mapping(entry) for entry in raw.get("theme", [])]


@functools.cache
def bundled_theme_rules() -> tuple[ThemeRule, ...]:
    """The bundled table ``blogfeeds/data/friend_themes.toml``, loaded once."""
    text = resources.files("blogfeeds").joinpath("data/friend_themes.toml").read_text("utf-8")
    return tuple(load_theme_rules(text))


def user_theme_rules(user_rules: Iterable[ThemeRule | Mapping[str, Any]] | None) -> list[ThemeRule]:
    """User rules given as :class:`ThemeRule` objects or table entries (mappings)."""
    return [r if isinstance(r, ThemeRule) else rule_from_mapping(r) for r in user_rules or ()]


# --- Reading one card ------------------------------------------------------------------------


def text_of(el: lxml.html.HtmlElement) -> str:
    """Visible text of ``el``, whitespace collapsed."""
    if len(el) == 0:  # no child nodes: its text is all there is (no XPath call)
        return " ".join((el.text or "").split())
    return " ".join(el.text_content().split())


def image_url(img: lxml.html.HtmlElement) -> str:
    """The real image URL of an ``<img>`` (lazy-load attributes first), or ``""``."""
    for attr in LAZY_ATTRIBUTES:
        value = (img.get(attr) or "").strip()
        if value and not value.startswith("data:"):
            return value.split()[0] if attr.endswith("srcset") else value
    return ""


@dataclass
class Card:
    """What a rule read from one card."""

    rule: ThemeRule
    link: lxml.html.HtmlElement
    name: str
    avatar: str
    group_title: str | None
    group_id: str = ""
    """Identifies the card's group block on the page (its document path)."""


def _first(rule: ThemeRule, css: str, root: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    for el in rule.select(css)(root):
        return el
    return None


def _card_link(
    rule: ThemeRule, card: lxml.html.HtmlElement, usable: Callable[[lxml.html.HtmlElement], bool]
) -> lxml.html.HtmlElement | None:
    """The card's link: the first of the rule's link selectors that ``usable`` accepts, else
    the first (a card may lead with its person's profile, a Wikipedia page, before the blog)."""
    if not rule.link and card.tag == "a":
        return card if card.get("href") else None
    first = None
    for css in rule.link or ("a",):
        for el in rule.select(css)(card):
            if el.tag == "a" and el.get("href"):
                if usable(el):
                    return el
                first = first if first is not None else el
    return first


def _card_name(rule: ThemeRule, card: lxml.html.HtmlElement, link: lxml.html.HtmlElement) -> str:
    for how in rule.names:
        if how == "text":
            value = text_of(link)
        elif how.startswith("@"):
            value = " ".join((link.get(how[1:]) or "").split())
        else:
            el = _first(rule, how, card)
            value = text_of(el) if el is not None else ""
        if value:
            return value
    return ""


def _card_avatar(rule: ThemeRule, card: lxml.html.HtmlElement) -> str:
    for css in rule.avatar:
        for el in rule.select(css)(card):
            img = el if el.tag == "img" else next(iter(el.iter("img")), None)
            if img is not None and (url := image_url(img)):
                return url
    return ""


def _group_of(
    rule: ThemeRule, card: lxml.html.HtmlElement, groups: set[lxml.html.HtmlElement]
) -> tuple[str | None, str]:
    """``(title, id)`` of the card's group block; ``(None, "")`` when the rule has no groups
    or none holds the card. ``groups`` is every element matching the rule's group selector."""
    if not rule.group:
        return None, ""
    el = card.getparent()
    while el is not None:
        if el in groups:
            title = _first(rule, rule.group_title, el) if rule.group_title else None
            ident = str(el.getroottree().getpath(el))
            return (text_of(title) if title is not None else heading_before(el)), ident
        el = el.getparent()
    return None, ""


HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


def heading_before(el: lxml.html.HtmlElement, levels: int = 4, siblings: int = 6) -> str:
    """Text of the nearest heading before ``el``: its previous siblings, then its ancestors'.

    Bounded (``levels`` ancestors x ``siblings`` siblings), so it costs O(1) per card.
    """
    node: lxml.html.HtmlElement | None = el
    for _ in range(levels):
        if node is None:
            break
        prev = node.getprevious()
        for _ in range(siblings):
            if prev is None:
                break
            if isinstance(prev.tag, str) and prev.tag in HEADINGS:
                return text_of(prev)
            prev = prev.getprevious()
        node = node.getparent()
    return ""


def run_rules(
    rules: Sequence[ThemeRule],
    page: Page,
    usable: Callable[[lxml.html.HtmlElement], bool] = lambda el: True,
) -> Iterator[Card]:
    """Every card each rule finds in ``page``; a card's link is the first ``usable`` one.

    Rules whose fingerprint (read in the page's text) is present run first; an ``<a>`` already
    read by an earlier rule is not read again. Rules whose card selector needs a class no
    element of the page carries are skipped before their XPath runs
    (:func:`~blogfeeds.extract.css.can_match`).
    """
    tree, classes = page.tree, page.class_names
    viable = [rule for rule in rules if can_match(rule.cards, classes)]
    if not viable:
        return
    lowered = page.text.lower()
    found: dict[tuple[str, ...], bool] = {}

    def present(rule: ThemeRule) -> bool:
        hit = found.get(rule.fingerprint)
        if hit is None:
            hit = found[rule.fingerprint] = any(m.lower() in lowered for m in rule.fingerprint)
        return hit

    ordered = sorted(viable, key=lambda r: 0 if present(r) else 1)  # stable
    seen: set[lxml.html.HtmlElement] = set()
    for rule in ordered:
        if rule.require_fingerprint and not present(rule):
            continue
        groups: set[lxml.html.HtmlElement] | None = None
        for card in rule.select(rule.cards)(tree):
            link = _card_link(rule, card, usable)
            if link is None or link in seen:
                continue
            seen.add(link)
            if groups is None:
                groups = set(rule.select(rule.group)(tree)) if rule.group else set()
            title, group_id = _group_of(rule, card, groups)
            yield Card(
                rule=rule,
                link=link,
                name=_card_name(rule, card, link),
                avatar=_card_avatar(rule, card),
                group_title=title,
                group_id=group_id,
            )
