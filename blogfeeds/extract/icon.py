"""The icon a blog's home page declares, and whether a fetched ``/favicon.ico`` is an image.

The best declared icon (:func:`best_icon`): the largest square icon the page declares (a
``<link>`` whose ``rel`` tokens hold ``icon``: ``shortcut icon``, the misspelt ``short icon``;
by ``sizes``, SVG counting as any size), else its largest ``apple-touch-icon`` (theme
boilerplate often declares ``/apple-touch-icon.png``, sizes and all, that the site never
added: 4 of the 65 development blogs of ``bench/profile_eval.py``); where the best is a PNG
of realfavicongenerator's set (``favicon-32x32.png``, which Hugo's DoIt/LoveIt/FixIt print
whether or not the site has it) the ``favicon.ico`` the page declares beside it; Butterfly
5's default ``/img/favicon.png`` is the ``/img/favicon.ico`` it ships. The caller falls back
to ``/favicon.ico`` when it fetched it and it is an image (:func:`favicon_is_image`); the web
app manifest's icons are not read (another request).

Pure: a function of the parsed page (and the favicon's bytes).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import lxml.html

from blogfeeds.extract.page import Page

_SIZES = re.compile(r"(?<![0-9])([0-9]{1,5})\s*[xX×]\s*([0-9]{1,5})(?![0-9])")
_IMAGE_MAGIC = (b"\x00\x00\x01\x00", b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"BM", b"RIFF")


def _icon_size(link: lxml.html.HtmlElement, href: str) -> int:
    """The side of a declared icon: the largest square of ``sizes``, ``any`` or an SVG as
    1024; without ``sizes`` 180 for an apple-touch-icon, 32 for an icon, 16 for
    ``favicon.ico``."""
    sizes = (link.get("sizes") or "").lower()
    if "any" in sizes or href.lower().split("?")[0].endswith(".svg"):
        return 1024
    squares = [int(w) for w, h in _SIZES.findall(sizes) if w == h]
    if squares:
        return max(squares)
    others = [min(int(w), int(h)) for w, h in _SIZES.findall(sizes)]
    if others:
        return max(others) // 2  # not square: after any square icon of similar size
    rel = (link.get("rel") or "").lower()
    if "apple-touch-icon" in rel:
        return 180
    return 16 if href.lower().split("?")[0].endswith(".ico") else 32


# realfavicongenerator's markup, which themes (Hugo's LoveIt, DoIt, FixIt) print whether or not
# the site generated the files: favicon-32x32.png, favicon-16x16.png beside /favicon.ico.
_GENERATED_SET = re.compile(r"/favicon-\d+x\d+\.png$", re.IGNORECASE)
# Butterfly 5 (its pages define ``window.btf``) keeps ``favicon: /img/favicon.png`` in its
# default configuration but ships ``/img/favicon.ico``: a site that kept the default declares
# a file it lacks.
_BUTTERFLY_DEFAULT = "/img/favicon.png"


def _is_icon_rel(rel: str) -> bool:
    """An icon's ``rel``: one of its tokens is ``icon`` (``shortcut icon``, the misspelt
    ``short icon`` browsers accept too) or an apple-touch-icon; not ``mask-icon``."""
    tokens = rel.split()
    return "icon" in tokens or any(t.startswith("apple-touch-icon") for t in tokens)


def best_icon(page: Page) -> str:
    """The absolute URL of the largest square icon the page declares, or ``""``; where the
    page declares realfavicongenerator's set, its ``favicon.ico`` (the file of the set a site
    has most often: themes print the set for files the site may never have generated)."""
    best: tuple[bool, int, int, str] | None = None
    declared: list[tuple[str, str]] = []
    for order, link in enumerate(page.tree.iter("link")):
        rel = " ".join((link.get("rel") or "").lower().split())
        href = (link.get("href") or "").strip()
        if not _is_icon_rel(rel) or not href or href.startswith(("data:", "#")):
            continue  # "#": a theme's placeholder for an icon left unset
        url = page.absolute(href)
        if not url.startswith(("http://", "https://")) or url.split("#")[0] == page.url:
            continue  # the page itself is no icon
        declared.append((href, url))
        # rel=icon first: a theme's boilerplate declares an apple-touch-icon (sizes and all)
        # that the site often lacks; the icon it declares is the site's own.
        key = ("apple" not in rel, _icon_size(link, href), -order, url)
        if best is None or key[:3] > best[:3]:
            best = key
    if best is None:
        return ""
    paths = [urlsplit(url).path for _, url in declared]
    # only where the set's PNGs are the best declared (≤ 32 px): a site that declares larger
    # icons generated them
    if best[1] <= 32 and any(_GENERATED_SET.search(p) for p in paths):
        for (_, url), path in zip(declared, paths, strict=True):
            if path.lower().endswith("/favicon.ico"):
                return url
    if best[3].endswith(_BUTTERFLY_DEFAULT) and _butterfly5(page):
        return best[3][: -len("png")] + "ico"
    return best[3]


def _butterfly5(page: Page) -> bool:
    return any("window.btf" in (s.text or "") for s in page.tree.iter("script"))


def favicon_is_image(body: bytes, content_type: str) -> bool:
    """Whether a fetched ``/favicon.ico`` is an image (by its type or its first bytes): a
    server's HTML error page with status 200 is not an icon."""
    ctype = content_type.split(";", maxsplit=1)[0].strip().lower()
    if ctype.startswith("text/html") or not body:
        return False
    head = body[:16]
    return ctype.startswith("image/") or head.startswith(_IMAGE_MAGIC) or b"<svg" in body[:512]


class HostIcons:
    """The ``/favicon.ico`` checks of hosts that serve many blogs under paths
    (``cnblogs.com/alice``, ``medium.com/@bob``): the icon is the host's, whichever of its blogs
    asks, so a crawl checks it once per host, not once per blog. Bounded: past ``capacity``
    hosts the oldest answer is forgotten (checked again when asked)."""

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self._icons: dict[str, str] = {}

    def known(self, favicon: str) -> str | None:
        """The icon found for ``favicon`` (``""``: it is none), or None when not checked."""
        return self._icons.get(favicon)

    def record(self, favicon: str, icon: str) -> None:
        if len(self._icons) >= self.capacity:
            del self._icons[next(iter(self._icons))]
        self._icons[favicon] = icon
