"""What a blog's home page says of its addresses: its canonical, ``og:url``, ``rel=me`` links,
``<base href>`` on another host, a notice that it moved, a mirror menu, and a digest of its text
(:class:`PageSignals`, read by :func:`page_signals`). The evidence these are weighed as:
:mod:`blogfeeds.extract.aliases`.

Pure: a function of a parsed page, no Scrapy, items or storage.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from blogfeeds.extract.addresskeys import address_host, elsewhere, path_depth
from blogfeeds.extract.page import Page
from blogfeeds.extract.text import collapse

PAGE_CHARS = 400
"""Fewest letters (not counting spaces) of a home page's text whose digest counts for
:data:`~blogfeeds.extract.aliases.SAME_PAGE` (with the same feed entries: a build for
``localhost`` served twice, whose entries on the placeholder count for nothing else): a
theme's empty front page, a web server's welcome page have fewer; a blog's front page with its
newest posts has more (three Chinese blogs of identity_eval with their posts' titles: about
720)."""
NOTICE_CHARS = 300
"""Longest text of an element read as a moved notice or a mirror menu."""
NOTICE_LEVELS = 3
"""Enclosing blocks read for a notice's links (a menu's title sits beside its submenu)."""
# Matched against lower-cased text (a case-blind pattern scans several times slower).
MOVED_WORDS = re.compile(
    r"moved\s+to|has\s+moved|have\s+moved|new\s+(?:home|address|domain|blog)\b|migrated\s+to|"
    r"relocated\s+to|now\s+(?:lives|living|at)\b|umgezogen|"
    r"mudou-se|mudou\s+para|se\s+mudou|novo\s+endere[çc]o|se\s+ha\s+mudado|nueva\s+direcci[óo]n|"
    r"a\s+d[ée]m[ée]nag[ée]|nouvelle\s+adresse|"
    r"迁移至|迁移到|迁至|搬家|搬迁至|搬到|已迁移|新地址|新域名|新博客|移至|"
    r"移転|引っ越(?:し|しました)"
)
MIRROR_WORDS = re.compile(r"\bmirrors?\b|镜像|備用|备用站|备用地址|国内访问|國內訪問|ミラー")
_ANY_WORDS = re.compile(f"{MOVED_WORDS.pattern}|{MIRROR_WORDS.pattern}")
_NOTICE_TAGS = ("p", "div", "li", "span", "section", "aside", "header", "h1", "h2", "h3", "h4")


@dataclass(frozen=True)
class PageSignals:
    """What a blog's home page says of its addresses, every URL absolute (``""`` or ``()``
    when absent)."""

    canonical: str = ""
    og_url: str = ""
    rel_me: tuple[str, ...] = ()
    base: str = ""
    """The ``<base href>`` of the page when it names the home of another host: the address the
    build was configured for (a static site's ``baseURL``), a claim like the canonical's."""
    moved_to: str = ""
    """The home-page link of a notice that the blog moved."""
    mirrors: tuple[str, ...] = ()
    """Home-page links of a mirror menu (镜像) to other hosts."""
    text_digest: str = ""
    """A digest of the page's text and the sites it links, when it holds at least
    :data:`PAGE_CHARS` letters and was read whole (not cut at a bound of
    :class:`~blogfeeds.extract.page.PageLimits`)."""


def page_signals(page: Page) -> PageSignals:
    """The canonical, ``og:url``, ``rel=me`` links, ``<base href>`` on another host, moved
    notice and mirror menu of a home page."""
    canonical = og_url = ""
    rel_me: list[str] = []
    for element in page.tree.iter("link", "a", "meta"):
        if element.tag == "meta":
            prop = (element.get("property") or element.get("name") or "").strip().lower()
            if prop == "og:url" and not og_url:
                og_url = _absolute(page, element.get("content"))
            continue
        rels = (element.get("rel") or "").lower().split()
        if element.tag == "link" and "canonical" in rels and not canonical:
            canonical = _absolute(page, element.get("href"))
        if "me" in rels and (href := _absolute(page, element.get("href"))):
            rel_me.append(href)
    moved, mirrors, digest = _notices(page)
    base = page.base_url if page.base_url != page.url else ""
    return PageSignals(
        canonical=canonical,
        og_url=og_url,
        rel_me=tuple(dict.fromkeys(rel_me)),
        # another host's home only: a base on a CDN or under a deep path is no address of a blog
        base=base if elsewhere(page.url, base) and path_depth(base) <= 1 else "",
        moved_to=next(iter(moved), ""),
        mirrors=tuple(mirrors),
        text_digest=digest,
    )


def _absolute(page: Page, value: str | None) -> str:
    value = (value or "").strip()
    if not value:
        return ""
    url = page.absolute(value)
    return url if url.startswith(("http://", "https://")) else ""


def _notices(page: Page) -> tuple[list[str], list[str], str]:
    """The links of moved notices and of mirror menus: links to another host's home (a path of
    at most one segment) in the blocks whose own text holds :data:`MOVED_WORDS` or
    :data:`MIRROR_WORDS` (the outermost of the :data:`NOTICE_LEVELS` nearest enclosing
    elements of :data:`_NOTICE_TAGS` whose text stays within :data:`NOTICE_CHARS`: a menu's
    title sits beside its submenu); and the page's text digest (:attr:`PageSignals.text_digest`).
    Page order; each text node is read once."""
    own = address_host(page.url)
    found: tuple[list[str], list[str]] = ([], [])
    chars = 0
    hrefs: list[str] = []
    texts: list[tuple[str, Any]] = []
    lines: list[str] = []
    for element in page.tree.iter():
        tag = element.tag
        if not isinstance(tag, str) or tag in ("script", "style"):
            continue
        if tag == "a" and (href := element.get("href")):
            hrefs.append(href)
        tail = element.tail
        for text, holder in (
            (element.text, element),
            # the parent looked up only for a tail that holds words (most are indentation)
            (tail, element.getparent() if tail and not tail.isspace() else None),
        ):
            if not text or holder is None or text.isspace():
                continue
            words = text.split()
            line = " ".join(words)
            chars += len(line) - len(words) + 1
            lines.append(line)
            texts.append((text, holder))
    joined = "\n".join(lines)
    # One scan of the whole text first: a text's match is one in its line of ``joined`` (the
    # words' patterns span whitespace with ``\s+``, and a line ends at a non-word character),
    # so a page with none in ``joined`` (most pages) has no notice.
    for text, holder in texts if _ANY_WORDS.search(joined.lower()) else ():
        low = text.lower()
        if not _ANY_WORDS.search(low):  # one scan for both, on most texts the only one
            continue
        for words, links in zip((MOVED_WORDS, MIRROR_WORDS), found, strict=True):
            block = _notice_block(holder) if words.search(low) else None
            for a in block.iter("a") if block is not None else ():
                url = _absolute(page, a.get("href"))
                if url and address_host(url) != own and path_depth(url) <= 1 and url not in links:
                    links.append(url)
    # a page cut at a bound was not read whole: its text says nothing of the page's identity
    if chars < PAGE_CHARS or page.truncated:
        return found[0], found[1], ""
    digest = hashlib.sha1(usedforsecurity=False)
    if lines:  # each text's words and a newline, in page order
        digest.update(f"{joined}\n".encode("utf-8", "surrogatepass"))
    digest.update("\n".join(_sites_linked(own, hrefs)).encode("utf-8", "surrogatepass"))
    return found[0], found[1], digest.hexdigest()


def _sites_linked(own: str, hrefs: list[str]) -> list[str]:
    """The other hosts a page links at most twice (its friends and profiles; not its own pages,
    nor the address a copy's absolute links name throughout), sorted: two blogs of one template
    share their text, not whom they link."""
    counts: dict[str, int] = {}
    for href in hrefs:
        if "//" in href[:8]:
            host = address_host(href)
            counts[host] = counts.get(host, 0) + 1
    return sorted(h for h, n in counts.items() if h and h != own and n <= 2)


def _notice_block(element: Any) -> Any:
    """The outermost of the :data:`NOTICE_LEVELS` nearest notice blocks at or above
    ``element`` whose text is at most :data:`NOTICE_CHARS` long, or None."""
    block = None
    levels = 0
    node = element
    while node is not None and levels < NOTICE_LEVELS:
        if node.tag in _NOTICE_TAGS or node.tag == "a":
            if len(collapse(node.text_content())) > NOTICE_CHARS:
                break
            block = node
            levels += node.tag != "a"
        node = node.getparent()
    return block
