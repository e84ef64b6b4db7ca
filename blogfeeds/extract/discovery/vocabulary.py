"""The words of feed discovery: media types, candidate sources, URL word patterns and URL keys."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from blogfeeds.extract.identity import registered_domain

BASE_SCORE = 10.0
"""Starting score of every candidate (the original rule scores out of 10)."""

RSS_TYPE = "application/rss+xml"
ATOM_TYPE = "application/atom+xml"
RDF_TYPE = "application/rdf+xml"
JSON_FEED_TYPE = "application/feed+json"
JSON_TYPE = "application/json"
FEED_TYPES = frozenset(
    {
        RSS_TYPE,
        ATOM_TYPE,
        RDF_TYPE,
        JSON_FEED_TYPE,
        "application/x.atom+xml",
        "application/x-atom+xml",
        "application/rss",
        "text/rss+xml",
        "text/atom+xml",
    }
)
"""Types that declare a feed."""
MAYBE_TYPES = frozenset({"application/xml", "text/xml", JSON_TYPE, ""})
"""Types that may be a feed (``""``: an untyped ``rel=feed``); candidates to validate."""
FORMAT_TYPES = {"rss": RSS_TYPE, "atom": ATOM_TYPE, "rdf": RDF_TYPE, "json": JSON_FEED_TYPE}
"""The MIME type of each feed format, by the format's name in a validated feed."""

ADVERTISED = frozenset({"header", "link", "a"})
"""Sources where the page itself declares a feed."""
LINK_HINT = "link-hint"
"""Source of a ``<link>`` with a feed type whose rel lacks ``alternate`` and ``feed`` (a typo
such as ``rel="alternative"``, or ``rel="service.post"``): validated with the anchors."""
SOURCE_RANK = {"header": 0, "link": 0, "a": 0, LINK_HINT: 1, "anchor": 2}
"""Rank of a source among feeds that validate alike (lower first): what an element declares
beats what an anchor suggests, which beats a platform path, a guess or a hop (rank 3)."""


def media_type(value: str | None) -> str:
    """A MIME type lower-cased with its parameters stripped: ``"Application/RSS+XML; x=1"`` →
    ``"application/rss+xml"``; ``""`` for ``None``."""
    return (value or "").split(";", 1)[0].strip().lower()


def locator(url: str) -> str:
    """The part of a URL after the host (path, query, fragment), lower-cased."""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}#{parts.fragment}".lower()


def url_key(url: str) -> str:
    """The dedupe key of a URL: scheme and host lower-cased, default port and fragment dropped."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port if parts.port not in (None, 80, 443) else None
    except ValueError:  # a malformed host or port: the URL as it is
        return url.strip()
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    netloc = f"{host}:{port}" if port else host
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def site_of(url: str) -> str:
    """The registered domain of a URL's host (``""`` when there is none)."""
    try:
        return registered_domain(urlsplit(url).hostname or "")
    except ValueError:
        return ""


def same_site(a: str, b: str) -> bool:
    """Whether two URLs share a registered domain (PSL; ``*.example`` hosts compare whole)."""
    site = site_of(a)
    return bool(site) and site == site_of(b)


def path_depth(url: str) -> int:
    """Path segments of a URL, plus one for a query."""
    parts = urlsplit(url)
    return len([s for s in parts.path.split("/") if s]) + (1 if parts.query else 0)


# --- Word lists ------------------------------------------------------------------------------

COMMENT_WORDS = re.compile(
    r"\bcomments?\b|kommentar|commentaires?|comentarios|commenti|reacties|komentarze|"
    r"коммент|评论|評論|留言|コメント|댓글",
    re.IGNORECASE,
)
"""A title that says comments (English, German, French, Spanish, Italian, Dutch, Polish,
Russian, Chinese, Japanese, Korean)."""
_TAXONOMY_SEGMENTS = frozenset(
    "category categories tag tags topic topics label labels series author authors "
    "section sections archives-category".split()
)
_TAXONOMY_QUERY = re.compile(r"(^|&)(cat|category|tag|label|author)=", re.IGNORECASE)
_FEED_TOKEN = re.compile(r"(?<![a-z])(rss2?|atom|feeds?|rdf)(?![a-z])", re.IGNORECASE)
FEED_WORDS = re.compile(r"(?<![a-z])(rss|atom|feeds?)(?![a-z])|订阅|訂閱|購読|구독", re.IGNORECASE)
"""Anchor text that says RSS, Atom, Feed or subscribe (Chinese, Japanese, Korean)."""
SUBSCRIBE_WORDS = re.compile(r"\bsubscribe\b|订阅|訂閱", re.IGNORECASE)
FEED_CLASS = re.compile(r"(?<![a-z])(rss|atom|feed)(?![a-z])")
"""A class name or icon file name that says RSS, Atom or Feed."""
_FEED_FILE = re.compile(r"\.(rss|atom|rdf)$|^(index|atom|rss2?|feed|feeds|posts|all)\.(xml|json)$")
_FEED_HOST_LABELS = frozenset({"feeds", "feed", "rss", "atom"})
_FEED_HOST_SITES = frozenset({"feedburner.com", "feedpress.me", "feedblitz.com"})
MAYBE_FEED_URL = re.compile(r"rss|atom|feed|rdf|\.xml|\.json", re.IGNORECASE)
"""What every URL :func:`feed_like_href` or :func:`is_feed_host` accepts holds (the tokens,
feed file names and feed hosts above): a URL without it needs its anchor's words to say feed.
Change it with them (``tests/test_prefilters.py`` checks it)."""
READER_SITES = frozenset(
    {
        "feedly.com",
        "inoreader.com",
        "newsblur.com",
        "theoldreader.com",
        "netvibes.com",
        "feedspot.com",
        "bloglines.com",
        "follow.is",
        "rsshub.app",
    }
)
"""Feed-reader services: their subscribe links are not the blog's feeds."""
FORMAT_QUERY = re.compile(r"^(alt|format|type|feed|output)=(rss2?|atom|rdf|json|xml)$")
"""A query parameter that only selects a feed format (``alt=rss``)."""


def is_comments_url(url: str) -> bool:
    """``comment`` occurs in the URL after the host."""
    return "comment" in locator(url)


def is_taxonomy_url(url: str) -> bool:
    """A category, tag, label or author feed: a taxonomy path segment, Blogger's ``/-/``, or a
    ``cat=``/``tag=`` query."""
    parts = urlsplit(url)
    segments = [s.lower() for s in parts.path.split("/") if s]
    return (
        bool(_TAXONOMY_SEGMENTS & set(segments))
        or "-" in segments
        or bool(_TAXONOMY_QUERY.search(parts.query))
    )


def is_feed_host(url: str) -> bool:
    """A host that serves feeds for other sites (``feeds.*``, FeedBurner, FeedPress)."""
    host = (urlsplit(url).hostname or "").lower()
    return host.split(".", 1)[0] in _FEED_HOST_LABELS or site_of(url) in _FEED_HOST_SITES


_FILE_EXTENSIONS = frozenset(
    "jpg jpeg png gif webp avif svg ico bmp tif tiff css js mjs map pdf zip gz mp3 mp4 webm "
    "woff woff2 ttf".split()
)
_PAGE_EXTENSIONS = frozenset("html htm xhtml shtml txt md".split())


def _extension(url: str) -> str:
    last = urlsplit(url).path.rsplit("/", 1)[-1].lower()
    return last.rsplit(".", 1)[1] if "." in last else ""


def feed_plausible_path(url: str, *, pages: bool = False) -> bool:
    """Whether the URL's last path segment could name a feed: no extension, a feed one
    (``.xml``, ``.rss``, ``.atom``, ``.rdf``, ``.json``) or a server script's; never an image,
    style sheet, script or document (``/feed.jpg``), nor, unless ``pages``, a page
    (``/rss.html``: a page about the feed, which the one-hop stage may read)."""
    ext = _extension(url)
    return ext not in _FILE_EXTENSIONS and (pages or ext not in _PAGE_EXTENSIONS)


def feed_like_href(url: str) -> bool:
    """Whether the URL's path or query looks like a feed (``/feed/``, ``rss``, ``atom``,
    ``index.xml``, ``.rss``, ``.atom``, ``?feed=rss2``) with a path a feed can have
    (:func:`feed_plausible_path`)."""
    if not feed_plausible_path(url):
        return False
    parts = urlsplit(url)
    segments = [s.lower() for s in parts.path.split("/") if s]
    if any(_FEED_TOKEN.fullmatch(s) for s in segments):
        return True
    if segments and (_FEED_FILE.search(segments[-1]) or _FEED_TOKEN.search(segments[-1])):
        return True
    return any(_FEED_TOKEN.search(p) for p in parts.query.lower().split("&") if "=" in p)
