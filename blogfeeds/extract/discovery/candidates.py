"""Feed candidates and where a page offers them: the ``Link`` header, ``<link>``/``<a>``
elements with a feed type, and anchors that look like feed links."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from blogfeeds.extract.discovery.vocabulary import (
    BASE_SCORE,
    FEED_CLASS,
    FEED_TYPES,
    FEED_WORDS,
    LINK_HINT,
    MAYBE_FEED_URL,
    MAYBE_TYPES,
    SUBSCRIBE_WORDS,
    feed_like_href,
    feed_plausible_path,
    is_feed_host,
    media_type,
    same_site,
    url_key,
)
from blogfeeds.extract.page import Page
from blogfeeds.extract.text import collapse


@dataclass
class FeedCandidate:
    """One possible feed, with how it was found, its score and the reasons for it."""

    url: str
    """Absolute URL (``href`` resolved against the page's base URL)."""
    type: str
    """Declared MIME type, lower-cased, parameters stripped (``application/rss+xml``), or ``""``."""
    title: str = ""
    """The ``title`` attribute (or anchor text), whitespace collapsed."""
    rel: list[str] = field(default_factory=list)
    """The ``rel`` attribute as a lower-cased token list (``["alternate"]``)."""
    source: str = "link"
    """How it was found: ``header``, ``link``, ``a``, ``link-hint``, ``anchor``, ``platform``,
    ``guess`` or ``hop`` (:mod:`blogfeeds.extract.discovery.stages`)."""
    score: float = BASE_SCORE
    """Final score (out of :data:`BASE_SCORE` for the original rules)."""
    reasons: list[str] = field(default_factory=list)
    """``"base 10"`` then one entry per rule that changed the score."""
    hint: str = ""
    """Why an anchor, platform path or guess was taken (``"href"``, ``"text"``, ``"WordPress"``)."""
    order: int = 0
    """Discovery order (document order within a stage)."""


def dedupe(raw: Iterable[FeedCandidate]) -> list[FeedCandidate]:
    """``raw`` deduplicated by :func:`url_key`: the first is kept (its ``order`` set), and a
    later *feed* type upgrades a first *maybe* type."""
    seen: dict[str, FeedCandidate] = {}
    for cand in raw:
        key = url_key(cand.url)
        first = seen.get(key)
        if first is None:
            cand.order = len(seen)
            seen[key] = cand
        elif first.type in MAYBE_TYPES and cand.type in FEED_TYPES:
            first.type = cand.type
    return list(seen.values())


def http_url(url: str | None) -> bool:
    """An http(s) URL with a host."""
    if not url:
        return False
    try:
        parts = urlsplit(url)
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def absolute(base: str, href: str) -> str | None:
    """``href`` resolved against ``base``; None when malformed (``//[not-an-ip]/``)."""
    try:
        return urljoin(base, href.strip())
    except ValueError:
        return None


def _feed_scheme(href: str) -> str | None:
    """``feed:https://x/y`` → ``https://x/y``; ``feed://x/y`` → ``http://x/y``; else None."""
    if not href.lower().startswith("feed:"):
        return None
    rest = href[5:]
    if rest.startswith("//"):
        return "http:" + rest
    return rest


_LINK_HEADER = re.compile(r"<([^>]*)>([^<]*)")
_LINK_PARAM = re.compile(r';\s*([\w*.-]+)\s*=\s*(?:"([^"]*)"|([^;,\s]*))')


def parse_link_header(value: str) -> list[tuple[str, dict[str, str]]]:
    """``Link`` header (RFC 8288) → ``[(target, {param: value})]``; lenient, never raises."""
    out = []
    for match in _LINK_HEADER.finditer(value or ""):
        params = {
            m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3)
            for m in _LINK_PARAM.finditer(match.group(2))
        }
        out.append((match.group(1).strip(), params))
    return out


def style_sheet(rel: list[str]) -> bool:
    """Whether a link with these rel tokens is a style sheet: ``stylesheet`` without ``feed``
    (``rel="alternate stylesheet"`` is an alternative style sheet in HTML whatever its type;
    ``rel="feed stylesheet"`` still names a feed, as browsers read it)."""
    return "stylesheet" in rel and "feed" not in rel


def header_candidates(page: Page, types: frozenset[str]) -> list[FeedCandidate]:
    """``Link`` header targets with rel ``alternate`` or ``feed`` and a type in ``types``
    (resolved against the page URL)."""
    found = []
    for target, params in parse_link_header(page.header("link")):
        rel = params.get("rel", "").lower().split()
        mtype = media_type(params.get("type"))
        if not target or not {"alternate", "feed"} & set(rel) or mtype not in types:
            continue
        if style_sheet(rel):
            continue
        if mtype == "" and "feed" not in rel:
            continue
        url = absolute(page.url, target)
        if url and http_url(url):
            title = collapse(params.get("title", ""))
            found.append(FeedCandidate(url=url, type=mtype, title=title, rel=rel, source="header"))
    return found


def link_candidates(
    page: Page, types: frozenset[str], sources: frozenset[str] = frozenset({"link"})
) -> list[FeedCandidate]:
    """Every ``<link href>`` (and, when ``"a"`` is in ``sources``, ``<a>``/``<area>`` with rel
    ``alternate`` or ``feed``) whose type is in ``types``, in document order; only http(s)
    URLs; an empty type only with rel ``feed``. With :data:`LINK_HINT` in ``sources``, a
    ``<link>`` whose rel lacks ``alternate`` and ``feed`` gets that source (a hint) instead of
    ``link``. An untyped element counts with rel ``feed``; an untyped ``<link rel=alternate>``
    that is no translation or media variant and whose path may be a feed's is a hint too (it
    may be a feed: validated with the anchors). A style sheet (:func:`style_sheet`) is never a
    feed. Not deduplicated, not scored."""
    found: list[FeedCandidate] = []
    tags = ("link", "a", "area") if "a" in sources else ("link",)
    for el in page.tree.iter(*tags):
        source = "link" if el.tag == "link" else "a"
        rel = (el.get("rel") or "").lower().split()
        if source == "link" and LINK_HINT in sources and not {"alternate", "feed"} & set(rel):
            source = LINK_HINT
        if source not in sources:
            continue
        if source == "a" and not {"alternate", "feed"} & set(rel):
            continue
        href = el.get("href")
        mtype = media_type(el.get("type"))
        if not href or not href.strip() or mtype not in types or style_sheet(rel):
            continue
        url = absolute(page.base_url, href)
        if url is None or not http_url(url):
            continue
        if mtype == "" and "feed" not in rel:
            if source != "link" or LINK_HINT not in sources:
                continue
            if not _untyped_feed_alternate(el, rel, url):
                continue
            source = LINK_HINT
        found.append(
            FeedCandidate(
                url=url,
                type=mtype,
                title=collapse(el.get("title") or ""),
                rel=rel,
                source=source,
            )
        )
    return found


def _untyped_feed_alternate(el: Any, rel: list[str], url: str) -> bool:
    """An untyped ``rel=alternate`` that may be a feed: not a translation (``hreflang``), a
    media variant (``media``) or a path no feed has (:func:`feed_plausible_path`)."""
    if "alternate" not in rel or el.get("hreflang") is not None or el.get("media") is not None:
        return False
    return feed_plausible_path(url)


def _anchor_words(el: Any) -> tuple[str, str]:
    """(text, class) of an anchor: its text, title, aria-label and image alt; its own and its
    icons' classes, lower-cased."""
    title, label, cls = el.get("title") or "", el.get("aria-label") or "", el.get("class") or ""
    if len(el) == 0:  # most anchors: their own text is all of it (no XPath call)
        return collapse(f"{el.text or ''} {title} {label}"), cls.lower()
    parts, classes = [el.text_content(), title, label], [cls]
    for child in el.iter():
        if child is el or not isinstance(child.tag, str):
            continue
        parts.append(child.get("alt") or child.get("title") or "")
        classes.append(child.get("class") or "")
        src = child.get("src") or ""
        if src:
            classes.append(src.rsplit("/", 1)[-1])
    return collapse(" ".join(parts)), " ".join(classes).lower()


def anchor_candidates(page: Page, limit: int = 20) -> list[FeedCandidate]:
    """``<a href>`` that look like feed links, document order, at most ``limit``. ``hint`` is
    ``"href"`` (a feed-like href or the ``feed:`` scheme), ``"feed host"`` (FeedBurner,
    ``feeds.*``) or ``"text"`` (only the text, title, class or icon says RSS/Atom/Feed/订阅)."""
    found: list[FeedCandidate] = []
    page_key = url_key(page.url)
    base_may = MAYBE_FEED_URL.search(page.base_url) is not None
    for el in page.tree.iter("a"):
        href = (el.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        scheme_url = _feed_scheme(href)
        words = None
        # Most anchors of a page say nothing of feeds in URL or words: they end here, before
        # the URL tests, which cost more than the words. The joined URL is not needed to tell:
        # urljoin puts together parts of the base and of the href at "/", ":", "?", "#" or
        # ";", which no token of MAYBE_FEED_URL holds, so a token in it is in one of them
        # (tests/test_prefilters.py).
        if scheme_url is None and not base_may and not MAYBE_FEED_URL.search(href):
            words = _anchor_words(el)
            if not (FEED_WORDS.search(words[0]) or FEED_CLASS.search(words[1])):
                continue
        url = absolute(page.base_url, scheme_url if scheme_url is not None else href)
        if url is None:
            continue
        if words is None and scheme_url is None and not MAYBE_FEED_URL.search(url):
            words = _anchor_words(el)
            if not (FEED_WORDS.search(words[0]) or FEED_CLASS.search(words[1])):
                continue
        if not http_url(url) or url_key(url) == page_key:
            continue
        if not feed_plausible_path(url, pages=True):
            continue
        text, classes = words or _anchor_words(el)
        if scheme_url is not None or feed_like_href(url):
            hint = "href"
        elif is_feed_host(url):
            hint = "feed host"
        elif FEED_WORDS.search(text) or FEED_CLASS.search(classes):
            hint = "text"
        else:
            continue
        rel = (el.get("rel") or "").lower().split()
        found.append(
            FeedCandidate(url=url, type="", title=text[:200], rel=rel, source="anchor", hint=hint)
        )
        if len(found) >= limit:
            break
    return found


def subscribe_links(page: Page) -> list[str]:
    """Same-site pages or feeds linked as RSS / Feeds / 订阅 / Subscribe (for the one-hop
    stage); never a file no feed or page is (``/feed.jpg``)."""
    out = []
    for el in page.tree.iter("a"):
        href = (el.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        text = _anchor_words(el)[0]  # before the URL: few anchors say subscribe
        if not (SUBSCRIBE_WORDS.search(text) or FEED_WORDS.search(text)):
            continue
        url = absolute(page.base_url, href)
        if (
            url is not None
            and http_url(url)
            and same_site(url, page.url)
            and feed_plausible_path(url, pages=True)  # an image or a script is no page
        ):
            out.append(url)
    return out
