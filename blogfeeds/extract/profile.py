"""A blog's profile, from the bytes the crawl already has: description, author, icon, last post,
posting rate and activity, and the page's language checked against its text.

Each field has its sources in order, the first that has one wins, and keeps which one it came
from in its ``*_source``; the sources of each field: docs/profile.md. The description is the
blog's own tagline, never the abstract. The icon is :func:`blogfeeds.extract.icon.best_icon`,
else ``/favicon.ico`` when the caller fetched it and it is an image
(:func:`blogfeeds.extract.icon.favicon_is_image`); :func:`activity` follows from the last post
and the thresholds of :class:`ProfileSettings`; the language is the page's declaration
(:func:`blogfeeds.extract.metadata.language`) checked against its text
(:mod:`blogfeeds.extract.language`).

Pure: the caller passes the parsed page, the feed discovery already read and the clock.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import lxml.html
from lxml.cssselect import CSSSelector

from blogfeeds.extract.css import can_match
from blogfeeds.extract.feedreader import FeedDocument
from blogfeeds.extract.feedreader.entries import iso_utc
from blogfeeds.extract.icon import best_icon
from blogfeeds.extract.language import check_language, page_text
from blogfeeds.extract.page import Page
from blogfeeds.extract.settings import ProfileSettings
from blogfeeds.extract.text import collapse

ACTIVITIES = ("active", "slowing", "dormant", "dead")
"""The values of :attr:`Profile.activity` (``""``: no dated post known)."""

SUBTITLE_SELECTORS = (
    "#site-description",
    ".site-description",
    "#site-subtitle",
    ".site-subtitle",
    ".blog-description",
    "#blog-description",
    ".site-desc",
    ".subtitle",
    "#subtitle",
    "header .description",
    "h2.description",
)
"""Theme elements that hold a blog's tagline (WordPress ``site-description``, Hexo NexT
``site-subtitle``, Ghost/Casper ``site-description``, ...), in order."""

_EARLIEST = datetime(1995, 1, 1, tzinfo=UTC)
_MONTH_DAYS = 30.44
_EMAIL = re.compile(r"\s*\(?[\w.+-]+@[\w-]+(?:\.[\w-]+)+\)?\s*")
_URL_IN_TEXT = re.compile(r"https?://\S+")
_NO_AUTHOR = {"", "author", "作者", "admin", "administrator", "your name", "john doe", "name"}
# A footer's copyright line: "© 2019-2024 Ana Lima", "Copyright © 2023, JetGirl. All rights",
# Matery's "Copyright | © | 2023 | 2023 | Ana | Powered by" (each text of the footer apart).
_COPYRIGHT = re.compile(
    r"(?:©|\(c\)|copyright)(?:[\s|,.]*(?:©|\(c\)|\d{4}(?:\s*[-–~]\s*(?:\d{4}|present|now))?))*"
    r"[\s|,.]*(?:by\s+)?(?P<name>[^|©·•,.<>()\n]{1,40}?)\s*"
    r"(?:[|·•,.(]|all rights|powered|版权|保留|$)",
    re.IGNORECASE,
)
# A site named after its owner: "GSBP's Blog", "Ana’s notes", "张三的博客".
_POSSESSIVE = re.compile(
    r"^(?P<name>[^'’\s][^'’]{0,39}?)(?:'s|’s|s'|s’)\s+(?:personal\s+|tech\s+|little\s+)?"
    r"(?:blog|weblog|site|website|homepage|home|notes|space|corner|desk|journal|garden|den)$"
    r"|^(?P<zh>[^的\s]{1,16})的(?:个人|技术|小)?(?:博客|部落格|网站|小站|主页|空间|小窝|笔记|blog)$",
    re.IGNORECASE,
)
_HAN_CHAR = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")
# Generators' placeholders in a feed's description: not the blog's tagline.
_PLACEHOLDER = re.compile(
    r"^(?:recent content (?:on|in) |最近.{0,6}(?:内容|文章)|.{0,40}的最新内容$|"
    r"just another wordpress (?:site|weblog)|my wordpress blog$|blog$)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Profile:
    """What :func:`read_profile` found; every text field is ``""`` when absent."""

    description: str = ""
    description_source: str = ""
    """``feed``, ``meta``, ``og``, ``theme`` or ``""``."""
    author: str = ""
    author_source: str = ""
    """``meta``, ``feed``, ``feed_entries``, ``rel_author``, ``h_card``, ``json_ld``,
    ``byline``, ``copyright``, ``feed_rights``, ``site_name``."""
    icon_url: str = ""
    icon_source: str = ""
    """``declared`` (a ``<link>`` of the page) or ``favicon`` (``/favicon.ico``, fetched)."""
    last_post_at: str = ""
    """ISO 8601 UTC (``2026-11-29T20:36:29Z``)."""
    last_post_source: str = ""
    """``feed`` or ``page``."""
    posts_per_month: float | None = None
    activity: str = ""
    """One of :data:`ACTIVITIES`, ``""`` when no dated post is known."""
    language: str = ""
    """The checked language: the declaration as written when the text agrees (or is too short
    to tell), else the detected ISO 639-1 code."""
    language_declared: str = ""
    language_source: str = ""
    """``declared``, ``detected`` (no declaration) or ``corrected`` (the text overruled it)."""


def read_profile(
    page: Page,
    feed: FeedDocument | None,
    *,
    declared_language: str,
    now: datetime,
    config: ProfileSettings | None = None,
    favicon: str = "",
) -> Profile:
    """The profile of the blog whose home page is ``page`` and main feed ``feed`` (as feed
    discovery read it; ``None`` when none was validated). ``favicon`` is the ``/favicon.ico``
    URL when the caller fetched it and it is an image. Never raises on bad input."""
    config = config or ProfileSettings()
    meta = _meta(page)
    description, description_source = describe(page, feed, meta)
    author, author_source = find_author(page, feed, meta)
    icon = best_icon(page)
    last, last_source = last_post(page, feed, meta, now)
    language, language_source = check_language(declared_language, page_text(page))
    return Profile(
        description=description,
        description_source=description_source,
        author=author,
        author_source=author_source,
        icon_url=icon or favicon,
        icon_source="declared" if icon else "favicon" if favicon else "",
        last_post_at=iso(last) if last else "",
        last_post_source=last_source,
        posts_per_month=posts_per_month(feed, now),
        activity=activity(last, now, config),
        language=language,
        language_declared=declared_language,
        language_source=language_source,
    )


def _meta(page: Page) -> dict[str, str]:
    found: dict[str, str] = {}
    for element in page.tree.iter("meta"):
        content = element.get("content")
        if content is None:
            continue
        for attr in ("name", "property", "itemprop"):
            key = (element.get(attr) or "").strip().lower()
            if key and key not in found and (text := collapse(content)):
                found[key] = text
    return found


def _usable(text: str, title: str) -> bool:
    low = text.strip().lower()
    # one Han character is a word ("白"); one Latin letter or a dash is not a tagline
    long_enough = len(low) >= 2 or bool(_HAN_CHAR.fullmatch(low))
    return long_enough and low != title.strip().lower() and not _PLACEHOLDER.search(low)


def describe(page: Page, feed: FeedDocument | None, meta: dict[str, str]) -> tuple[str, str]:
    """The blog's tagline and where it came from (module docstring), or ``("", "")``."""
    title = feed.title if feed is not None and feed.title else _page_title(page)
    candidates = [
        ("feed", feed.subtitle if feed is not None else ""),
        ("meta", meta.get("description", "")),
        ("og", meta.get("og:description", "")),
    ]
    for source, text in candidates:
        if text and _usable(text, title):
            return text, source
    if (text := json_ld_site_description(page)) and _usable(text, title):
        return text, "json_ld"
    for selector in SUBTITLE_SELECTORS:
        if not can_match(selector, page.class_names):  # a theme's class the page does not use
            continue
        for element in _css(page.tree, selector):
            text = collapse(element.text_content())
            if text and len(text) <= 300 and _usable(text, title):
                return text, "theme"
    if text := _under_title(page, title):
        return text, "theme"
    if text := title_tagline(page, meta, feed):
        return text, "title"
    return "", ""


_TITLE_SEPARATORS = (" - ", " – ", " — ", " | ", " · ", " :: ", " ~ ")


def title_tagline(page: Page, meta: dict[str, str], feed: FeedDocument | None) -> str:
    """The tagline a home page's ``<title>`` adds to the site's name (WordPress's "Site –
    Tagline", Butterfly's and NexT's "Title - Subtitle"): the rest after the name (from
    ``og:site_name`` or the feed's title; themes put the page's own name in
    ``application-name``) and a separator."""
    title = _page_title(page)
    names = {meta.get("og:site_name", "")}
    if feed is not None:
        names.add(feed.title)
    for name in sorted((n for n in names if n and n != title), key=len, reverse=True):
        for separator in _TITLE_SEPARATORS:
            if title.casefold().startswith(name.casefold() + separator.rstrip()):
                rest = title[len(name) :].strip().removeprefix(separator.strip()).strip()
                if rest and len(rest) <= 200 and _usable(rest, name):
                    return rest
    return ""


def _under_title(page: Page, title: str) -> str:
    """The short line a theme's header puts right after the site's name (``<h1>R &
    Census</h1><h2>explore census data with R</h2>``): the element following the first
    ``<h1>`` whose text is the site title, when it is a heading or a paragraph."""
    names = {collapse(t).casefold() for t in (title, _page_title(page)) if t}
    for h1 in page.tree.iter("h1"):
        if collapse(h1.text_content()).casefold() not in names:
            continue
        following = h1.getnext()
        if following is not None and following.tag in ("h2", "h3", "p", "span", "div"):
            text = collapse(following.text_content())
            if text and len(text) <= 200 and _usable(text, title):
                return text
        return ""
    return ""


_SITE_TYPES = {"website", "blog", "webpage", "organization", "person"}


def json_ld_site_description(page: Page) -> str:
    """The ``description`` of the page's JSON-LD ``WebSite``/``Blog`` node, ``""`` when none."""
    for node in _json_ld_nodes(page):
        kind = node.get("@type")
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(isinstance(k, str) and k.lower() in _SITE_TYPES for k in kinds):
            continue
        value = node.get("description")
        if isinstance(value, str) and (text := collapse(value)):
            return text
    return ""


def _json_ld_nodes(page: Page) -> Iterable[dict[str, Any]]:
    for script in page.tree.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        try:
            data = json.loads(script.text or "")
        except (ValueError, RecursionError):
            continue
        yield from _walk(data, 0)


def _page_title(page: Page) -> str:
    element = page.tree.find(".//title")
    return collapse(element.text_content()) if element is not None else ""


@cache
def _selector(css: str) -> Any:
    return CSSSelector(css)


def _css(tree: lxml.html.HtmlElement, css: str) -> list[lxml.html.HtmlElement]:
    return list(_selector(css)(tree))


def _person(value: str) -> str:
    """An author value without its e-mail address and URLs; ``""`` when nothing else is left,
    or when it is a theme's placeholder (``作者``, ``Your Name``)."""
    name = collapse(_URL_IN_TEXT.sub(" ", _EMAIL.sub(" ", value))).strip(" ,;:()|-–—")
    if name.casefold() in _NO_AUTHOR or name.startswith(("http://", "https://")):
        return ""
    return name if len(name) <= 200 else ""


def find_author(page: Page, feed: FeedDocument | None, meta: dict[str, str]) -> tuple[str, str]:
    """The blog's author and where it came from (module docstring), or ``("", "")``."""
    for key in ("author", "article:author"):
        if name := _person(meta.get(key, "")):
            return name, "meta"
    if feed is not None:
        if name := _person(feed.author):
            return name, "feed"
        names = Counter(_person(e.author) for e in feed.entries if e.author)
        names.pop("", None)
        if names:
            name, count = names.most_common(1)[0]
            if count * 5 >= len(feed.entries) * 4:
                return name, "feed_entries"
    for link in page.tree.iter("a", "link"):
        rels = (link.get("rel") or "").lower().split()
        if "author" in rels and (name := _person(link.text_content() if link.tag == "a" else "")):
            return name, "rel_author"
    for card in _css(page.tree, ".h-card") if can_match(".h-card", page.class_names) else ():
        names_el = _css(card, ".p-name")
        text = collapse(names_el[0].text_content()) if names_el else ""
        if name := _person(text):
            return name, "h_card"
    if name := json_ld_author(page):
        return name, "json_ld"
    if name := byline(page):
        return name, "byline"
    if name := copyright_holder(page):
        return owner(name) or name, "copyright"
    # Hugo's RSS template prints the site's ``copyright`` setting as the channel's <copyright>
    if feed is not None and (name := copyright_name(feed.rights)):
        return owner(name) or name, "feed_rights"
    for title in (meta.get("og:site_name", ""), _page_title(page)):
        # a page's title names the site after the page: "friends | Ana's blog"
        for part in re.split(r"\s[-–—|·~]\s", title):
            if name := owner(part):
                return name, "site_name"
    return "", ""


def owner(site_name: str) -> str:
    """The owner a site's name gives (``GSBP's Blog``: ``GSBP``; ``张三的博客``: ``张三``),
    ``""`` when it names none."""
    match = _POSSESSIVE.match(collapse(site_name))
    if not match or re.match(r"(?:the|my|our|a)\s", match.group("name") or "", re.IGNORECASE):
        return ""
    return _person(match.group("name") or match.group("zh") or "")


def _taxonomy(element: lxml.html.HtmlElement) -> bool:
    """Whether an element holds a link to a category or tag page."""
    for link in element.iter("a"):
        marks = f"{link.get('href') or ''} {link.get('class') or ''}".lower()
        if any(w in marks for w in ("categor", "/tags/", "/tag/", "post-tag")):
            return True
    return False


def byline(page: Page) -> str:
    """The name the post cards' bylines give (elements whose class names an author, such as
    ``publish-author``, ``post-author``): the most frequent one, when it is on at least two
    cards or is the only one."""
    names: Counter[str] = Counter()
    for element in page.tree.iter():
        if not isinstance(element.tag, str) or element.tag in ("img", "i", "meta", "link"):
            continue
        classes = (element.get("class") or "").lower()
        if "author" not in classes or "avatar" in classes or "description" in classes:
            continue
        if _taxonomy(element):  # Hexo Matery's "publish-author" holds the category when set
            continue
        text = collapse(element.text_content())
        name = _person(text) if 0 < len(text) <= 40 else ""
        if name and not name[0].isdigit():
            names[name] += 1
    if not names:
        return ""
    (name, count), *rest = names.most_common(2)
    return name if count >= 2 or not rest else ""


def copyright_holder(page: Page) -> str:
    """The name of a footer's copyright line (``© 2019–2024 Ana Lima``), ``""`` when none:
    read from ``<footer>`` and elements whose class or id says footer or copyright."""
    for element in page.tree.iter():
        if not isinstance(element.tag, str):
            continue
        marks = f"{element.get('class') or ''} {element.get('id') or ''}".lower()
        if element.tag != "footer" and "footer" not in marks and "copyright" not in marks:
            continue
        # one text a piece: "Ana<a>Hexo</a>" is "Ana | Hexo", not "AnaHexo"
        text = " | ".join(t.strip() for t in element.itertext() if t.strip())
        if name := copyright_name(text):
            return name
    return ""


def copyright_name(text: str) -> str:
    """The holder a copyright line names (``Copyright © 2023, JetGirl.``), ``""`` when none."""
    for match in _COPYRIGHT.finditer(collapse(text)):
        name = _person(match.group("name"))
        if name and not name[0].isdigit() and "powered" not in name.lower():
            return name
    return ""


def json_ld_author(page: Page) -> str:
    """The first ``author`` name of the page's JSON-LD (``{"author": {"name": ...}}``, a list
    of them, or a plain string); ``""`` when none or the JSON is bad."""
    for node in _json_ld_nodes(page):
        author = node.get("author")
        for one in author if isinstance(author, list) else [author]:
            value = one.get("name") if isinstance(one, dict) else one
            if isinstance(value, str) and (name := _person(value)):
                return name
    return ""


def _walk(data: Any, depth: int) -> Iterable[dict[str, Any]]:
    if depth > 6:
        return
    if isinstance(data, dict):
        yield data
        for value in data.values():
            if isinstance(value, (dict, list)):
                yield from _walk(value, depth + 1)
    elif isinstance(data, list):
        for value in data:
            yield from _walk(value, depth + 1)


def plausible(when: datetime | None, now: datetime) -> datetime | None:
    """``when`` unless it is after ``now`` + 1 day or before 1995 (a clock or a template's
    placeholder, not a post)."""
    if when is None or when < _EARLIEST or when > now + timedelta(days=1):
        return None
    return when


def feed_dates(feed: FeedDocument | None, now: datetime) -> list[datetime]:
    """Each entry's date (published, else updated), plausible ones only, newest first."""
    if feed is None:
        return []
    dates = []
    for entry in feed.entries:
        when = plausible(iso_utc(entry.published or entry.updated or ""), now)
        if when is not None:
            dates.append(when)
    return sorted(dates, reverse=True)


def last_post(
    page: Page, feed: FeedDocument | None, meta: dict[str, str], now: datetime
) -> tuple[datetime | None, str]:
    """The newest post's date and its source (``feed`` or ``page``), or ``(None, "")``."""
    dates = feed_dates(feed, now)
    if dates:
        return dates[0], "feed"
    found = [plausible(iso_utc(meta.get("article:published_time", "")), now)]
    found += [
        plausible(iso_utc(t.get("datetime") or ""), now)
        for t in page.tree.iter("time")
        if not _updated(t)
    ]
    dated = [d for d in found if d is not None]
    if not dated:  # themes that print the date as text: "<span class=post-date>2024-07-02"
        dated = [d for d in _dated_texts(page, now) if d is not None]
    if not dated:  # posts under a dated permalink: Hexo's default /2024/07/02/<slug>/
        dated = [d for d in _dated_links(page, now) if d is not None]
    return (max(dated), "page") if dated else (None, "")


_DATED_PATH = re.compile(r"/((?:19|20)\d\d)/(\d\d)/(\d\d)/[^/?#]+")


def _dated_links(page: Page, now: datetime) -> list[datetime | None]:
    """The days of the page's links to posts of its own site under a dated permalink
    (``/2024/07/02/slug/``; not an archive's ``/2024/07/``)."""
    hosts = {urlsplit(page.url).netloc.lower(), urlsplit(page.base_url).netloc.lower()}
    found: list[datetime | None] = []
    for link in page.tree.iter("a"):
        url = page.absolute((link.get("href") or "").strip())
        parts = urlsplit(url)
        if parts.netloc.lower() not in hosts or not (match := _DATED_PATH.search(parts.path)):
            continue
        y, m, d = (int(g) for g in match.groups())
        try:
            found.append(plausible(datetime(y, m, d, tzinfo=UTC), now))
        except ValueError:
            continue
    return found


_UPDATED = ("updated", "modified", "更新", "修改", "datemodified")
_TEXT_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d)\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})(?!\d)")


def _updated(element: lxml.html.HtmlElement) -> bool:
    """A date element that says it is an update, not a publication (Butterfly's
    ``title="更新于 …"``, ``itemprop=dateModified``, ``class=post-updated``)."""
    marks = " ".join(element.get(a) or "" for a in ("title", "class", "itemprop", "id")).lower()
    parent = element.getparent()
    if parent is not None:
        marks += " " + (parent.get("class") or "").lower() + " " + (parent.get("title") or "")
    return any(word in marks for word in _UPDATED)


def _dated_texts(page: Page, now: datetime) -> list[datetime | None]:
    """Dates written as text in elements whose class says date or time (not update)."""
    found: list[datetime | None] = []
    for element in page.tree.iter():
        if not isinstance(element.tag, str) or element.tag in ("script", "style"):
            continue
        marks = (element.get("class") or "").lower()
        if not any(w in marks for w in ("date", "time", "publish")) or _updated(element):
            continue
        for y, m, d in _TEXT_DATE.findall(element.text_content()[:200]):
            try:
                found.append(plausible(datetime(int(y), int(m), int(d), tzinfo=UTC), now))
            except ValueError:
                continue
    return found


def posts_per_month(feed: FeedDocument | None, now: datetime) -> float | None:
    """Posts a month over the feed's window, or None with fewer than two dated entries."""
    return rate(feed_dates(feed, now))


def rate(dates: list[datetime]) -> float | None:
    """Posts a month between the oldest and the newest of ``dates`` (newest first): dated
    posts − 1 over the months between them; None with fewer than two."""
    if len(dates) < 2:
        return None
    months = max((dates[0] - dates[-1]).total_seconds() / 86400 / _MONTH_DAYS, 1 / _MONTH_DAYS)
    return round((len(dates) - 1) / months, 2)


def activity(last: datetime | None, now: datetime, config: ProfileSettings | None = None) -> str:
    """``active``, ``slowing``, ``dormant`` or ``dead`` by the age of the last post; ``""``
    when there is none (an unreachable blog is ``dead``: the store says so)."""
    if last is None:
        return ""
    config = config or ProfileSettings()
    age = (now - last).total_seconds() / 86400
    if age <= config.active_days:
        return "active"
    if age >= config.dead_days:
        return "dead"
    if age >= config.dormant_days:
        return "dormant"
    return "slowing"


def iso(when: datetime) -> str:
    """``when`` as ISO 8601 UTC with a ``Z``."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
