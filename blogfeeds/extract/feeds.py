"""Feed autodiscovery: candidates from a page, scored by ordered rules, validated by content.

Two entry points:

* :func:`discover_feeds` (synchronous, no fetching): the candidates a page alone offers, scored
  and best first. Used by ``scrapy inspect`` and by the original rule set.
* :func:`find_feeds` (async, fetching injected): the staged, validated pipeline. It fetches
  through a caller-supplied :data:`Fetch` (the spider passes one built on
  ``crawler.engine.download_async``, so robots.txt, politeness and redirects apply; tests pass
  an in-memory web) and returns a :class:`FeedReport`.

Stages of :func:`find_feeds`, each adding to one candidate set deduplicated by normalised URL
(scheme and host lower-cased, fragment dropped); every candidate records how it was found
(``source``) and the reasons for its score:

1. ``header``: HTTP ``Link`` header (RFC 8288) with rel ``alternate`` or ``feed`` and a feed type.
2. ``link`` / ``a``: ``<link>``, ``<a>`` and ``<area>`` whose rel tokens include ``alternate`` or
   ``feed`` (HTML Living Standard §4.6.7.1; RSS Autodiscovery, RSS Advisory Board 2006). The type
   is lower-cased with parameters stripped (lxml decodes entities). RSS, Atom, RDF and JSON Feed
   types are feeds; ``application/xml``, ``text/xml``, ``application/json`` are *maybe* (scored
   lower, validated like everything else). ``/wp-json/`` and oEmbed URLs are rejected.
3. ``anchor``: ``<a>`` whose href looks like a feed (``/feed/``, ``rss``, ``atom``, ``index.xml``,
   ``.rss``, ``.atom``, ``?feed=rss2``, ``feed:`` scheme) or whose text, title, class or icon
   says RSS, Atom, Feed or 订阅; on another site only when the host is a feed host
   (FeedBurner, ``feeds.*``). Also ``link-hint``: a ``<link>`` with a feed type whose rel lacks
   ``alternate`` and ``feed`` (``rel="alternative"``).
4. ``platform``: platform fingerprints (generator, asset paths, headers, host) add that
   platform's feed paths: ``blogfeeds/data/feed_platforms.toml``.
5. ``guess``: only when nothing above validated, the paths of
   ``blogfeeds/data/feed_guesses.toml`` (ordered by real site→feed pairs) at the entry path and
   the site root, stopping at the first validated feed; then ``hop``: one same-site page linked
   as RSS / Feeds / 订阅 / Subscribe, whose own feed links become candidates. An anchor that
   turns out to be such an HTML page is hopped the same way.

Each stage runs only while no posts feed has validated (a comments feed alone does not count);
within a stage candidates are validated in score order, platform paths and guesses stop at the
first valid one. The budget (``max_requests``, ``max_fetch_seconds``) cuts everything; guessing
leaves two requests for the final hop when the page links a subscribe page. A meta refresh
(``<meta http-equiv=refresh>``) stub with no advertised feed is followed once. Validation and
reading are :mod:`blogfeeds.extract.feedreader`. Validated feeds are classified (main, comments,
category, podcast), aliases collapsed into one canonical URL (same URL but for a trailing slash,
same item ids, or a format-only query variant such as ``?alt=rss`` with the same title; never on
``rel=self`` alone), and ranked: the same blog's main feed first, then by path depth, newest
item, item count, score.

Rules are configured as ``{dotted path: order}`` (``None`` disables one), the
``BLOGFEEDS_FEED_SCORERS`` setting; see :mod:`blogfeeds.extract.scoring`. A rule with an
``accepts_types`` attribute (a set of MIME types) is a *type rule*: the union over the enabled
rules decides which elements become candidates; ``sources`` likewise decides which stages run.

Two rule sets (``BLOGFEEDS_FEED_RULESET``): :data:`DEFAULT_FEED_RULES` (``"blogfeeds"``, the
pipeline above) and :data:`ORIGINAL_FEED_RULES` (``"original"``: blogfeeds' first design,
exactly: ``<link>`` elements of RSS/Atom type only, scored out of 10, nothing fetched):

========================  =====  ==========================================================
rule                      delta  applies when
========================  =====  ==========================================================
:class:`RssAtomType`       0     type is ``application/rss+xml`` or ``application/atom+xml``
:class:`NoAlternate`      -3     the ``rel`` token list lacks ``alternate``
:class:`CommentsFeed`     -5     ``comment`` occurs in the URL's path, query or fragment
:class:`RpcRsdLink`       -5     ``rpc`` or ``rsd`` occurs there (XML-RPC, Really Simple
                                 Discovery endpoints)
========================  =====  ==========================================================
"""

from __future__ import annotations

import asyncio
import re
import time
import tomllib
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any, ClassVar, Protocol
from urllib.parse import urljoin, urlsplit, urlunsplit

from w3lib.html import get_meta_refresh

from blogfeeds.extract.feedreader import FeedDocument as ParsedFeed
from blogfeeds.extract.feedreader import read_feed
from blogfeeds.extract.identity import registered_domain
from blogfeeds.extract.page import DecodeError, Page, parse_page
from blogfeeds.extract.scoring import Adjustment, Reject, apply_rules, build_rules
from blogfeeds.items import FeedInfo

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

ORIGINAL_FEED_RULES: dict[str, int | None] = {
    "blogfeeds.extract.feeds.RssAtomType": 100,
    "blogfeeds.extract.feeds.NoAlternate": 200,
    "blogfeeds.extract.feeds.CommentsFeed": 300,
    "blogfeeds.extract.feeds.RpcRsdLink": 400,
}
"""The original design's rules (``BLOGFEEDS_FEED_RULESET = "original"``)."""

DEFAULT_FEED_RULES: dict[str, int | None] = {
    "blogfeeds.extract.feeds.FeedTypes": 100,
    "blogfeeds.extract.feeds.AnchorHints": 110,
    "blogfeeds.extract.feeds.PlatformPaths": 120,
    "blogfeeds.extract.feeds.GuessedPaths": 130,
    "blogfeeds.extract.feeds.OneHop": 140,
    "blogfeeds.extract.feeds.NotAFeed": 150,
    "blogfeeds.extract.feeds.NoAlternate": 200,
    "blogfeeds.extract.feeds.CommentsFeed": 300,
    "blogfeeds.extract.feeds.CommentsTitle": 310,
    "blogfeeds.extract.feeds.PerPostFeed": 320,
    "blogfeeds.extract.feeds.RpcRsdLink": 400,
    "blogfeeds.extract.feeds.TaxonomyFeed": 450,
    "blogfeeds.extract.feeds.OtherSite": 500,
}
"""The blogfeeds rule set (``"blogfeeds"``, the default), mirrored by ``BLOGFEEDS_FEED_SCORERS``."""

RULESETS: dict[str, dict[str, int | None]] = {
    "blogfeeds": DEFAULT_FEED_RULES,
    "original": ORIGINAL_FEED_RULES,
}

RulesSpec = Mapping[Any, int | None] | Iterable[Callable[..., Adjustment | None]] | None

ADVERTISED = frozenset({"header", "link", "a"})
"""Sources where the page itself declares a feed."""
LINK_HINT = "link-hint"
"""Source of a ``<link>`` with a feed type whose rel lacks ``alternate`` and ``feed`` (a typo
such as ``rel="alternative"``, or ``rel="service.post"``): validated with the anchors."""


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
    ``guess`` or ``hop`` (stages in the module docstring)."""
    score: float = BASE_SCORE
    """Final score (out of :data:`BASE_SCORE` for the original rules)."""
    reasons: list[str] = field(default_factory=list)
    """``"base 10"`` then one entry per rule that changed the score."""
    hint: str = ""
    """Why an anchor, platform path or guess was taken (``"href"``, ``"text"``, ``"WordPress"``)."""
    order: int = 0
    """Discovery order (document order within a stage)."""


def media_type(value: str | None) -> str:
    """A MIME type lower-cased with its parameters stripped: ``"Application/RSS+XML; x=1"`` →
    ``"application/rss+xml"``; ``""`` for ``None``."""
    return (value or "").split(";", 1)[0].strip().lower()


def _locator(url: str) -> str:
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


def _site(url: str) -> str:
    try:
        return registered_domain(urlsplit(url).hostname or "")
    except ValueError:
        return ""


def same_site(a: str, b: str) -> bool:
    """Whether two URLs share a registered domain (PSL; ``*.example`` hosts compare whole)."""
    site = _site(a)
    return bool(site) and site == _site(b)


# --- Word lists ------------------------------------------------------------------------------

_COMMENT_WORDS = re.compile(
    r"\bcomments?\b|kommentar|commentaires?|comentarios|commenti|reacties|komentarze|"
    r"коммент|评论|評論|留言|コメント|댓글",
    re.IGNORECASE,
)
_TAXONOMY_SEGMENTS = frozenset(
    "category categories tag tags topic topics label labels series author authors "
    "section sections archives-category".split()
)
_TAXONOMY_QUERY = re.compile(r"(^|&)(cat|category|tag|label|author)=", re.IGNORECASE)
_FEED_TOKEN = re.compile(r"(?<![a-z])(rss2?|atom|feeds?|rdf)(?![a-z])", re.IGNORECASE)
_FEED_WORDS = re.compile(r"(?<![a-z])(rss|atom|feeds?)(?![a-z])|订阅|訂閱|購読|구독", re.IGNORECASE)
_SUBSCRIBE_WORDS = re.compile(r"\bsubscribe\b|订阅|訂閱", re.IGNORECASE)
_FEED_CLASS = re.compile(r"(?<![a-z])(rss|atom|feed)(?![a-z])")
_FEED_FILE = re.compile(r"\.(rss|atom|rdf)$|^(index|atom|rss2?|feed|feeds|posts|all)\.(xml|json)$")
_FEED_HOST_LABELS = frozenset({"feeds", "feed", "rss", "atom"})
_FEED_HOST_SITES = frozenset({"feedburner.com", "feedpress.me", "feedblitz.com"})
_READER_SITES = frozenset(
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
_FORMAT_QUERY = re.compile(r"^(alt|format|type|feed|output)=(rss2?|atom|rdf|json|xml)$")


def is_comments_url(url: str) -> bool:
    """``comment`` occurs in the URL after the host."""
    return "comment" in _locator(url)


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


def _feed_host(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host.split(".", 1)[0] in _FEED_HOST_LABELS or _site(url) in _FEED_HOST_SITES


def feed_like_href(url: str) -> bool:
    """Whether the URL's path or query looks like a feed (see stage 3 in the module docstring)."""
    parts = urlsplit(url)
    segments = [s.lower() for s in parts.path.split("/") if s]
    if any(_FEED_TOKEN.fullmatch(s) for s in segments):
        return True
    if segments and (_FEED_FILE.search(segments[-1]) or _FEED_TOKEN.search(segments[-1])):
        return True
    return any(_FEED_TOKEN.search(p) for p in parts.query.lower().split("&") if "=" in p)


# --- Rules -----------------------------------------------------------------------------------


class TypeRule:
    """Accept candidates of ``accepts_types`` from ``sources``; add ``points`` (may be 0)."""

    accepts_types: ClassVar[frozenset[str]] = frozenset()
    sources: ClassVar[frozenset[str]] = frozenset({"link"})
    points: ClassVar[float] = 0.0

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        if c.type not in self.accepts_types or not self.points or c.source not in ADVERTISED:
            return None
        return Adjustment(score + self.points, f"{self.points:+g} type {c.type}")


class RssAtomType(TypeRule):
    """RSS 2.0 and Atom 1.0 (RFC 4287) ``<link>`` types: the original rule, no adjustment."""

    accepts_types = frozenset({RSS_TYPE, ATOM_TYPE})


class RdfType(TypeRule):
    """RSS 1.0 advertised as ``application/rdf+xml`` (not in the original set); -1 because the
    type is also used for non-feed RDF documents."""

    accepts_types = frozenset({RDF_TYPE})
    points = -1.0


class JsonFeedType(TypeRule):
    """JSON Feed 1.1 (``application/feed+json``, also the older ``application/json``); not in
    the original set. Plain ``application/json`` scores -2: it is often a non-feed API."""

    accepts_types = frozenset({JSON_FEED_TYPE, JSON_TYPE})

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        if c.type == JSON_TYPE:
            return Adjustment(score - 2, "-2 type application/json")
        return None


class FeedTypes(TypeRule):
    """Stages 1–2 of the blogfeeds set: ``Link`` header, ``<link>``, ``<a>``/``<area>`` with a
    feed type (:data:`FEED_TYPES`, no adjustment) or a *maybe* type (:data:`MAYBE_TYPES`, -2:
    ``application/xml``, ``text/xml``, ``application/json``, an untyped ``rel=feed``)."""

    accepts_types = FEED_TYPES | MAYBE_TYPES
    sources = frozenset({"header", "link", "a", LINK_HINT})

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        if c.source in ADVERTISED and c.type in MAYBE_TYPES:
            return Adjustment(score - 2, f"-2 maybe type {c.type or '(none)'}: validate")
        return None


@dataclass(frozen=True)
class SourceRule:
    """Enable stage ``source`` (see ``sources``) and subtract ``penalty`` from its candidates."""

    penalty: float = 0.0
    label: str = ""
    sources: ClassVar[frozenset[str]] = frozenset()

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        if c.source not in self.sources:
            return None
        hint = f" ({c.hint})" if c.hint else ""
        return Adjustment(score - self.penalty, f"-{self.penalty:g} {self.label}{hint}")


@dataclass(frozen=True)
class AnchorHints(SourceRule):
    """Stage 3, ``<a>`` that look like feed links: -2 (-3 when only the text says so)."""

    penalty: float = 2.0
    label: str = "anchor"
    sources: ClassVar[frozenset[str]] = frozenset({"anchor"})

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        adj = super().__call__(c, score, page)
        if adj is not None and c.hint == "text":
            return Adjustment(adj.score - 1, f"{adj.reason}, -1 href not feed-like")
        return adj


@dataclass(frozen=True)
class PlatformPaths(SourceRule):
    """Stage 4, a recognised platform's known feed paths: -4."""

    penalty: float = 4.0
    label: str = "platform path"
    sources: ClassVar[frozenset[str]] = frozenset({"platform"})


@dataclass(frozen=True)
class GuessedPaths(SourceRule):
    """Stage 5, guessed well-known paths: -6."""

    penalty: float = 6.0
    label: str = "guessed path"
    sources: ClassVar[frozenset[str]] = frozenset({"guess"})


@dataclass(frozen=True)
class OneHop(SourceRule):
    """Stage 5, feed links found one hop away on a page linked as RSS / Feeds / Subscribe: -2."""

    penalty: float = 2.0
    label: str = "one hop"
    sources: ClassVar[frozenset[str]] = frozenset({"hop"})


class NotAFeed:
    """Reject what only looks advertised: WordPress REST API (``/wp-json/``), oEmbed endpoints,
    a *maybe* type without rel ``alternate``/``feed``, and reader-service subscribe links."""

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        loc = _locator(c.url)
        if "/wp-json/" in loc or "rest_route=" in loc:
            raise Reject("WordPress REST API")
        if "oembed" in loc or "oembed" in c.type:
            raise Reject("oEmbed endpoint")
        linked = c.source in ADVERTISED or c.source == LINK_HINT
        if linked and c.type in MAYBE_TYPES and not {"alternate", "feed"} & set(c.rel):
            raise Reject(f"type {c.type or '(none)'} without rel=alternate")
        if _site(c.url) in _READER_SITES:
            raise Reject("feed reader service")
        return None


@dataclass(frozen=True)
class PenaltyRule:
    """Subtract ``penalty`` when :meth:`applies`; the reason is ``"-<penalty> <label>"``."""

    penalty: float = 0.0
    label: str = ""

    def applies(self, c: FeedCandidate, page: Page) -> bool:
        raise NotImplementedError

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        if not self.applies(c, page):
            return None
        return Adjustment(score - self.penalty, f"-{self.penalty:g} {self.label}")


@dataclass(frozen=True)
class NoAlternate(PenaltyRule):
    """-3 when an advertised candidate's ``rel`` lacks the ``alternate`` token (HTML: rel is a
    case-insensitive token list, so ``rel="Alternate feed"`` qualifies)."""

    penalty: float = 3.0
    label: str = "no rel=alternate"

    def applies(self, c: FeedCandidate, page: Page) -> bool:
        return (c.source in ADVERTISED or c.source == LINK_HINT) and "alternate" not in c.rel


@dataclass(frozen=True)
class CommentsFeed(PenaltyRule):
    """-5 when ``comment`` occurs in the URL after the host: a comments feed, not the posts."""

    penalty: float = 5.0
    label: str = "comments feed"

    def applies(self, c: FeedCandidate, page: Page) -> bool:
        return is_comments_url(c.url)


@dataclass(frozen=True)
class CommentsTitle(PenaltyRule):
    """-5 when the title says comments (English, German, French, Spanish, Italian, Dutch,
    Polish, Russian, Chinese, Japanese, Korean) and the URL did not already."""

    penalty: float = 5.0
    label: str = "title says comments"

    def applies(self, c: FeedCandidate, page: Page) -> bool:
        return bool(_COMMENT_WORDS.search(c.title)) and not is_comments_url(c.url)


@dataclass(frozen=True)
class PerPostFeed(PenaltyRule):
    """-3 for an advertised ``<page path>/feed/`` when the page also advertises a shallower
    feed: WordPress's per-post comments feed on a post page (on a blog's own index, such as
    ``/blog/``, ``/blog/feed/`` is the shallowest feed and keeps its score)."""

    penalty: float = 3.0
    label: str = "per-post feed"

    def applies(self, c: FeedCandidate, page: Page) -> bool:
        path = urlsplit(page.url).path
        if c.source not in ADVERTISED or path.strip("/") == "" or is_taxonomy_url(page.url):
            return False
        base = path if path.endswith("/") else path + "/"
        cand = urlsplit(c.url)
        if cand.netloc.lower() != urlsplit(page.url).netloc.lower() or cand.path not in (
            base + "feed",
            base + "feed/",
        ):
            return False
        depth = _depth(c.url)
        return any(
            _depth(other.url) < depth
            for other in link_candidates(page, FEED_TYPES, frozenset({"link", "a"}))
        )


@dataclass(frozen=True)
class RpcRsdLink(PenaltyRule):
    """-5 when ``rpc`` or ``rsd`` occurs in the URL after the host (XML-RPC and Really Simple
    Discovery endpoints wrongly typed as feeds)."""

    penalty: float = 5.0
    label: str = "rpc/rsd endpoint"

    def applies(self, c: FeedCandidate, page: Page) -> bool:
        loc = _locator(c.url)
        return "rpc" in loc or "rsd" in loc


@dataclass(frozen=True)
class TaxonomyFeed(PenaltyRule):
    """-1 for a category, tag, label or author feed (:func:`is_taxonomy_url`)."""

    penalty: float = 1.0
    label: str = "category/tag feed"

    def applies(self, c: FeedCandidate, page: Page) -> bool:
        return is_taxonomy_url(c.url)


@dataclass(frozen=True)
class OtherSite(PenaltyRule):
    """A feed on another registered domain: -1 when the page advertises it (feed proxies,
    sister sites); an anchor or hop candidate there is rejected unless the host is a feed host
    (``feeds.*``, FeedBurner, FeedPress): a blogroll's RSS icons are other blogs' feeds."""

    penalty: float = 1.0
    label: str = "on another site"

    def applies(self, c: FeedCandidate, page: Page) -> bool:
        if same_site(c.url, page.url):
            return False
        if c.source not in ADVERTISED and not _feed_host(c.url):
            raise Reject("anchor to another site")
        return True


# --- Candidates from the page ----------------------------------------------------------------


def _rules(rules: RulesSpec) -> list[Callable[..., Adjustment | None]]:
    if rules is None:
        return build_rules(DEFAULT_FEED_RULES)
    if isinstance(rules, Mapping):
        return build_rules(rules)
    return list(rules)


def _http_url(url: str | None) -> bool:
    if not url:
        return False
    try:
        parts = urlsplit(url)
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def _absolute(base: str, href: str) -> str | None:
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


def header_candidates(page: Page, types: frozenset[str]) -> list[FeedCandidate]:
    """Stage 1: ``Link`` header targets with a feed type (resolved against the page URL)."""
    found = []
    for target, params in parse_link_header(page.header("link")):
        rel = params.get("rel", "").lower().split()
        mtype = media_type(params.get("type"))
        if not target or not {"alternate", "feed"} & set(rel) or mtype not in types:
            continue
        if mtype == "" and "feed" not in rel:
            continue
        url = _absolute(page.url, target)
        if url and _http_url(url):
            title = " ".join(params.get("title", "").split())
            found.append(FeedCandidate(url=url, type=mtype, title=title, rel=rel, source="header"))
    return found


def link_candidates(
    page: Page, types: frozenset[str], sources: frozenset[str] = frozenset({"link"})
) -> list[FeedCandidate]:
    """Stage 2: every ``<link href>`` (and, when ``"a"`` is in ``sources``, ``<a>``/``<area>``
    with rel ``alternate`` or ``feed``) whose type is in ``types``, in document order; only
    http(s) URLs; an empty type only with rel ``feed``. With :data:`LINK_HINT` in ``sources``, a
    ``<link>`` whose rel lacks ``alternate`` and ``feed`` gets that source (a hint) instead of
    ``link``. Not deduplicated, not scored."""
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
        if not href or not href.strip() or mtype not in types:
            continue
        if mtype == "" and "feed" not in rel:
            continue
        url = _absolute(page.base_url, href)
        if url is None or not _http_url(url):
            continue
        found.append(
            FeedCandidate(
                url=url,
                type=mtype,
                title=" ".join((el.get("title") or "").split()),
                rel=rel,
                source=source,
            )
        )
    return found


def _anchor_words(el: Any) -> tuple[str, str]:
    """(text, class) of an anchor: its text, title, aria-label and image alt; its own and its
    icons' classes, lower-cased."""
    parts = [el.text_content(), el.get("title") or "", el.get("aria-label") or ""]
    classes = [el.get("class") or ""]
    for child in el.iter():
        if child is el or not isinstance(child.tag, str):
            continue
        parts.append(child.get("alt") or child.get("title") or "")
        classes.append(child.get("class") or "")
        src = child.get("src") or ""
        if src:
            classes.append(src.rsplit("/", 1)[-1])
    return " ".join(" ".join(parts).split()), " ".join(classes).lower()


def anchor_candidates(page: Page, limit: int = 20) -> list[FeedCandidate]:
    """Stage 3: ``<a href>`` that look like feed links (see the module docstring), document
    order, at most ``limit``. ``hint`` is ``"href"`` (href or ``feed:`` scheme), ``"feed host"``
    (FeedBurner, ``feeds.*``) or ``"text"`` (only the text, title, class or icon says
    RSS/Atom/Feed/订阅)."""
    found: list[FeedCandidate] = []
    page_key = url_key(page.url)
    for el in page.tree.iter("a"):
        href = (el.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        scheme_url = _feed_scheme(href)
        url = _absolute(page.base_url, scheme_url if scheme_url is not None else href)
        if url is None or not _http_url(url) or url_key(url) == page_key:
            continue
        text, classes = _anchor_words(el)
        if scheme_url is not None or feed_like_href(url):
            hint = "href"
        elif _feed_host(url):
            hint = "feed host"
        elif _FEED_WORDS.search(text) or _FEED_CLASS.search(classes):
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
    """Same-site pages linked as RSS / Feeds / 订阅 / Subscribe (for the one-hop stage)."""
    out = []
    for el in page.tree.iter("a"):
        href = (el.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        url = _absolute(page.base_url, href)
        if url is None or not _http_url(url) or not same_site(url, page.url):
            continue
        text = _anchor_words(el)[0]
        if _SUBSCRIBE_WORDS.search(text) or _FEED_WORDS.search(text):
            out.append(url)
    return out


# --- Platforms and guesses (package data) ----------------------------------------------------


@dataclass(frozen=True)
class Platform:
    """One row of ``feed_platforms.toml``."""

    name: str
    generator: tuple[str, ...] = ()
    assets: tuple[str, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    hosts: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()


@cache
def feed_platforms() -> tuple[Platform, ...]:
    """The platform table, ``blogfeeds/data/feed_platforms.toml``."""
    text = resources.files("blogfeeds").joinpath("data/feed_platforms.toml").read_text("utf-8")
    return tuple(
        Platform(
            name=row["name"],
            generator=tuple(row.get("generator", ())),
            assets=tuple(row.get("assets", ())),
            headers=tuple((k.lower(), v) for k, v in row.get("headers", {}).items()),
            hosts=tuple(row.get("hosts", ())),
            paths=tuple(row.get("paths", ())),
            formats=tuple(row.get("formats", ())),
        )
        for row in tomllib.loads(text)["platform"]
    )


@cache
def guess_paths() -> tuple[str, ...]:
    """Guessed feed paths, most likely first: ``blogfeeds/data/feed_guesses.toml``."""
    text = resources.files("blogfeeds").joinpath("data/feed_guesses.toml").read_text("utf-8")
    return tuple(row["path"] for row in tomllib.loads(text)["guess"])


@dataclass(frozen=True)
class PlatformMatch:
    """A platform recognised on a page: which fingerprint matched, and the blog root(s)."""

    platform: Platform
    evidence: str
    roots: tuple[str, ...]


def _asset_urls(page: Page, limit: int = 400) -> list[str]:
    urls = []
    for el in page.tree.iter("link", "script", "img"):
        value = el.get("href") or el.get("src")
        if value:
            urls.append(value.strip())
            if len(urls) >= limit:
                break
    return urls


def detect_platforms(page: Page) -> list[PlatformMatch]:
    """Platforms whose fingerprints match ``page``, in table order (see
    ``feed_platforms.toml``). A same-host asset hit such as ``/blog/wp-content/`` makes
    ``/blog/`` a blog root before the site root."""
    generators = [
        (m.get("content") or "").strip().lower()
        for m in page.tree.iter("meta")
        if (m.get("name") or "").lower() == "generator"
    ]
    assets = [(u, u.lower()) for u in _asset_urls(page)]
    host = (urlsplit(page.url).hostname or "").lower()
    root = urljoin(page.url, "/")
    found = []
    for plat in feed_platforms():
        evidence, roots = "", [root]
        gen = next((g for g in generators for p in plat.generator if g.startswith(p)), None)
        if gen is not None:
            evidence = f"generator {gen}"
        for raw, low in assets:
            marker = next((a for a in plat.assets if a in low), None)
            if marker is None:
                continue
            evidence = evidence or f"asset {marker}"
            absolute = _absolute(page.base_url, raw) or ""
            if marker.startswith("/") and urlsplit(absolute).netloc == urlsplit(page.url).netloc:
                path = urlsplit(absolute).path
                cut = path.lower().find(marker)
                if cut > 0:
                    roots.insert(0, urljoin(page.url, path[: cut + 1]))
            break
        for name, needle in plat.headers:
            if not evidence and needle in page.header(name).lower():
                evidence = f"header {name}"
        if not evidence and any(host == h or host.endswith("." + h) for h in plat.hosts):
            evidence = f"host {host}"
        if evidence:
            found.append(PlatformMatch(plat, evidence, tuple(dict.fromkeys(roots))))
    return found


def _expand(path: str, page: Page) -> str | None:
    if "{user}" not in path:
        return path
    segments = [s for s in urlsplit(page.url).path.split("/") if s]
    return path.replace("{user}", segments[0]) if segments else None


def platform_candidates(page: Page) -> list[FeedCandidate]:
    """Stage 4: each recognised platform's feed paths at its blog root(s), in table order;
    ``hint`` is ``"<platform>: <evidence>"``; format variants carry ``rel=["format"]``."""
    found = []
    for match in detect_platforms(page):
        hint = f"{match.platform.name}: {match.evidence}"
        for kind, paths in (("path", match.platform.paths), ("format", match.platform.formats)):
            for root in match.roots:
                for path in paths:
                    expanded = _expand(path, page)
                    if expanded is None:
                        continue
                    found.append(
                        FeedCandidate(
                            url=urljoin(root, expanded),
                            type="",
                            rel=[kind],
                            source="platform",
                            hint=hint,
                        )
                    )
    return found


def entry_path(url: str) -> str:
    """The directory of ``url`` (``https://x/blog/`` for ``https://x/blog/index.html``)."""
    return urljoin(url, "./")


def guess_candidates(page: Page) -> list[FeedCandidate]:
    """Stage 5: :func:`guess_paths` at the entry path (when not the root), then the site root,
    path by path."""
    roots = list(dict.fromkeys([entry_path(page.url), urljoin(page.url, "/")]))
    return [
        FeedCandidate(url=urljoin(root, path), type="", source="guess", hint=path)
        for path in guess_paths()
        for root in roots
    ]


# --- Page-only discovery ---------------------------------------------------------------------


def _enabled(built: list[Any], attr: str) -> frozenset[str]:
    return frozenset().union(*(getattr(r, attr, frozenset()) for r in built))


def score_candidates(
    candidates: Iterable[FeedCandidate],
    built: list[Any],
    page: Page,
    rejected: list[tuple[FeedCandidate, str]] | None = None,
) -> list[FeedCandidate]:
    """Score ``candidates`` with the built rules, dropping rejected ones (appended to
    ``rejected`` with the reason when given); returns the kept ones, best first (stable)."""
    kept = []
    for cand in candidates:
        try:
            score, reasons = apply_rules(cand, built, page, BASE_SCORE)
        except Reject as exc:
            if rejected is not None:
                rejected.append((cand, str(exc)))
            continue
        cand.score = score
        cand.reasons = [f"base {BASE_SCORE:g}", *reasons]
        kept.append(cand)
    kept.sort(key=lambda c: -c.score)
    return kept


def page_candidates(page: Page, built: list[Any], *, hints: bool = False) -> list[FeedCandidate]:
    """Unscored candidates of the stages the rules enable, deduplicated by :func:`url_key`
    (first kept; a later *feed* type upgrades a first *maybe* type). Stages 1–2 always (as
    enabled); with ``hints``, also :data:`LINK_HINT` links and anchors (3) and platform paths
    (4)."""
    types = _enabled(built, "accepts_types")
    sources = _enabled(built, "sources")
    raw: list[FeedCandidate] = []
    if "header" in sources:
        raw += header_candidates(page, types)
    element_sources = sources & frozenset({"link", "a", LINK_HINT})
    raw += [
        c for c in link_candidates(page, types, element_sources) if hints or c.source != LINK_HINT
    ]
    if hints and "anchor" in sources:
        raw += anchor_candidates(page)
    if hints and "platform" in sources:
        raw += platform_candidates(page)
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


def discover_feeds(
    page: Page, rules: RulesSpec = None, *, hints: bool = False
) -> list[FeedCandidate]:
    """Feed candidates offered by ``page`` alone, best first (ties keep document order).

    ``rules`` is a ``{dotted path or class: order}`` spec (default :data:`DEFAULT_FEED_RULES`;
    :data:`ORIGINAL_FEED_RULES` for the original design) or an already built rule list. Without
    ``hints`` only what the page advertises (``Link`` header, ``<link>``, typed ``<a>``) is
    returned; with ``hints`` also anchors that look like feeds and platform paths, which need
    validation by :func:`find_feeds`. Nothing is fetched. A rule raising
    :class:`~blogfeeds.extract.scoring.Reject` drops the candidate. Never raises on odd markup.
    """
    built = _rules(rules)
    return score_candidates(page_candidates(page, built, hints=hints), built, page)


def to_feed_info(c: FeedCandidate | DiscoveredFeed) -> FeedInfo:
    """The :class:`~blogfeeds.items.FeedInfo` item for a candidate or a discovered feed (whose
    ``type`` becomes the MIME type of its format)."""
    if isinstance(c, DiscoveredFeed):
        mtype = FORMAT_TYPES.get(c.type, c.type)
        return FeedInfo(url=c.url, type=mtype, title=c.title, score=c.score, reasons=c.reasons)
    return FeedInfo(url=c.url, type=c.type, title=c.title, score=c.score, reasons=list(c.reasons))


# --- The validated pipeline ------------------------------------------------------------------


@dataclass(frozen=True)
class FetchRequest:
    """One GET the pipeline asks for. ``headers`` are extra request headers (for example a
    browser-like ``User-Agent`` for the 403 retry); the fetcher adds its own defaults."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Fetched:
    """A response: ``url`` is the final URL after redirects, ``headers`` str → str."""

    url: str
    status: int
    headers: dict[str, str]
    body: bytes

    def header(self, name: str) -> str:
        lname = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == lname), "")


Fetch = Callable[[FetchRequest], Awaitable[Fetched | None]]
"""The injected fetcher: ``None`` means a network failure (DNS, timeout, refused)."""

BROWSER_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0 Safari/537.36"
)
FEED_ACCEPT = (
    "application/rss+xml, application/atom+xml, application/feed+json, "
    "application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8"
)


class SettingsLike(Protocol):
    def get(self, name: str, default: Any = None) -> Any: ...


@dataclass(frozen=True)
class DiscoveryConfig:
    """Settings of :func:`find_feeds` (``BLOGFEEDS_FEED_*``)."""

    ruleset: str = "blogfeeds"
    """``"blogfeeds"`` (the pipeline) or ``"original"`` (page-only ``<link>`` rule, no fetch)."""
    rules: Mapping[Any, int | None] | None = None
    """Rules for the ``blogfeeds`` set (default :data:`DEFAULT_FEED_RULES`)."""
    max_requests: int = 10
    """Requests per blog, retries and the refresh hop included."""
    max_fetch_seconds: float = 10.0
    """Fetch time per blog, seconds; a request running past it is cancelled."""
    retry_user_agent: str | None = BROWSER_USER_AGENT
    """User-Agent of the one retry after a 403; ``None`` disables the retry."""
    max_hops: int = 1
    """Pages linked as RSS / Feeds / Subscribe whose feed links are followed."""

    def page_rules(self) -> Mapping[Any, int | None]:
        """The rule spec for page-only :func:`discover_feeds` under this configuration."""
        if self.ruleset == "original":
            return ORIGINAL_FEED_RULES
        return self.rules if self.rules is not None else DEFAULT_FEED_RULES

    @classmethod
    def from_settings(cls, settings: SettingsLike) -> DiscoveryConfig:
        """Read ``BLOGFEEDS_FEED_RULESET``, ``_SCORERS``, ``_MAX_REQUESTS``,
        ``_MAX_FETCH_SECONDS``, ``_RETRY_USER_AGENT`` (empty disables the retry)."""
        ruleset = str(settings.get("BLOGFEEDS_FEED_RULESET", "blogfeeds") or "blogfeeds")
        if ruleset not in RULESETS:
            raise ValueError(f"BLOGFEEDS_FEED_RULESET must be one of {sorted(RULESETS)}")
        scorers = settings.get("BLOGFEEDS_FEED_SCORERS")
        ua = settings.get("BLOGFEEDS_FEED_RETRY_USER_AGENT", BROWSER_USER_AGENT)
        return cls(
            ruleset=ruleset,
            rules=dict(scorers) if scorers else None,
            max_requests=int(settings.get("BLOGFEEDS_FEED_MAX_REQUESTS", 10)),
            max_fetch_seconds=float(settings.get("BLOGFEEDS_FEED_MAX_FETCH_SECONDS", 10.0)),
            retry_user_agent=str(ua) if ua else None,
        )


@dataclass
class DiscoveredFeed:
    """A validated feed (or, for the original rule set, an unvalidated candidate)."""

    url: str
    """Canonical URL: the advertised or requested URL, or the final URL after a redirect."""
    type: str
    """``"rss"``, ``"atom"``, ``"rdf"`` or ``"json"`` (by content; the declared MIME type for
    the original rule set)."""
    title: str = ""
    """The feed's own title, else the advertising element's."""
    kind: str = "main"
    """``main``, ``comments``, ``category`` (category, tag, label, author), ``podcast``,
    ``other``; ``""`` when not validated."""
    aliases: list[str] = field(default_factory=list)
    """Other URLs serving the same feed (``/feed`` for ``/feed/``, the RSS of an Atom feed,
    a redirecting URL, a matching ``rel=self``)."""
    score: float = BASE_SCORE
    reasons: list[str] = field(default_factory=list)
    """Scoring, validation, classification and alias reasons, in order."""
    source: str = "link"
    """How it was found (:attr:`FeedCandidate.source`)."""
    validated: bool = True
    item_count: int = 0
    newest: datetime | None = None
    """Newest item date (UTC), if any."""
    self_url: str = ""
    """The feed's ``rel=self``, as written (not trusted)."""
    site_url: str = ""
    content_type: str = ""
    """``Content-Type`` of the response (informative only)."""


@dataclass(frozen=True)
class Rejection:
    """A candidate that is not a feed, and why (``"status 404"``, ``"not a feed: HTML"``)."""

    url: str
    source: str
    reason: str


@dataclass
class FeedReport:
    """The result of :func:`find_feeds`."""

    feeds: list[DiscoveredFeed]
    """Validated feeds, canonical, best first; ``feeds[0]`` is the blog's main feed."""
    rejected: list[Rejection]
    requests: int = 0
    """Requests made (403 retries and the refresh hop included)."""
    fetch_seconds: float = 0.0
    """Time spent awaiting the fetcher, seconds."""
    budget_exhausted: bool = False
    """Whether a candidate was left untried for lack of requests or time."""
    page_url: str = ""
    """The page read (after a followed meta refresh)."""
    platforms: list[str] = field(default_factory=list)
    """Platforms recognised on the page (``"WordPress: generator wordpress 6.5"``)."""
    blocked: bool = False
    """Some candidate answered 403 even to the browser-like retry."""

    @property
    def main(self) -> DiscoveredFeed | None:
        return self.feeds[0] if self.feeds else None


class _Budget(Exception):
    pass


@dataclass
class _Found:
    cand: FeedCandidate
    url: str
    parsed: ParsedFeed
    content_type: str
    aliases: list[str]
    kind: str = "main"
    kind_reason: str = ""


class _Session:
    """Requests, time, the 403 retry and per-URL memo for one :func:`find_feeds` call."""

    def __init__(self, fetch: Fetch, config: DiscoveryConfig) -> None:
        self.fetch, self.config = fetch, config
        self.requests, self.seconds = 0, 0.0
        self.exhausted = self.blocked = False
        self.browser_hosts: set[str] = set()

    async def _one(self, url: str, headers: dict[str, str]) -> Fetched | None:
        remaining = self.config.max_fetch_seconds - self.seconds
        if self.requests >= self.config.max_requests or remaining <= 0:
            self.exhausted = True
            raise _Budget
        self.requests += 1
        start = time.monotonic()
        try:
            return await asyncio.wait_for(self.fetch(FetchRequest(url, headers)), remaining)
        except TimeoutError:
            return None
        finally:
            self.seconds += time.monotonic() - start

    async def get(self, url: str, accept: str = FEED_ACCEPT) -> tuple[Fetched | None, str]:
        """Fetch with the 403 retry; returns ``(response, note)``; raises _Budget."""
        host = (urlsplit(url).hostname or "").lower()
        ua = self.config.retry_user_agent
        headers = {"Accept": accept}
        if ua and host in self.browser_hosts:
            headers["User-Agent"] = ua
        resp = await self._one(url, headers)
        if resp is not None and resp.status == 403 and ua and "User-Agent" not in headers:
            resp = await self._one(url, {**headers, "User-Agent": ua})
            if resp is not None and resp.status != 403:
                self.browser_hosts.add(host)
                return resp, "403 to our User-Agent, retried with a browser-like one"
            self.blocked = True
        return resp, ""


def _depth(url: str) -> int:
    parts = urlsplit(url)
    return len([s for s in parts.path.split("/") if s]) + (1 if parts.query else 0)


def _strip_slash(url: str) -> str:
    key = url_key(url)
    parts = urlsplit(key)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), parts.query, ""))


def _format_variant(a: str, b: str) -> bool:
    """Same URL but for format-selecting query parameters (``?alt=rss``, ``type=atom``)."""
    pa, pb = urlsplit(url_key(a)), urlsplit(url_key(b))
    if (pa.netloc, pa.path.rstrip("/")) != (pb.netloc, pb.path.rstrip("/")):
        return False
    qa = {p for p in pa.query.split("&") if p}
    qb = {p for p in pb.query.split("&") if p}
    diff = qa ^ qb
    return bool(diff) and all(_FORMAT_QUERY.match(p.lower()) for p in diff)


def _same_feed(a: _Found, b: _Found) -> str:
    """Why two validated feeds are one (``""`` when they are not); judged by content."""
    ta, tb = a.parsed.title.lower(), b.parsed.title.lower()
    if _strip_slash(a.url) == _strip_slash(b.url) and ta == tb:
        return "same URL but for a trailing slash, same title"
    ka, kb = a.parsed.item_keys, b.parsed.item_keys
    if ka and kb and len(ka & kb) / len(ka | kb) >= 0.8:
        return f"same items ({len(ka & kb)} shared ids/links)"
    if ta and ta == tb and _format_variant(a.url, b.url):
        return "format variant of the same URL, same title"
    return ""


def _classify(found: _Found, comment_urls: set[str], page: Page) -> tuple[str, str]:
    url, parsed = found.url, found.parsed
    urls = {url_key(u) for u in [url, *found.aliases]}
    if is_comments_url(url):
        return "comments", "URL says comment"
    if urls & comment_urls:
        return "comments", "listed as wfw:commentRss of another feed"
    for title in (parsed.title, found.cand.title):
        if _COMMENT_WORDS.search(title):
            return "comments", f"title {title[:60]!r} says comments"
    if PerPostFeed().applies(found.cand, page):
        return "comments", "per-post feed (<post>/feed/)"
    if is_taxonomy_url(url):
        return "category", "category/tag URL"
    if parsed.podcast or "podcast" in _locator(url):
        return "podcast", "podcast markup or URL"
    return "main", "posts feed"


_KIND_RANK = {"main": 0, "category": 1, "podcast": 1, "other": 1, "comments": 2}


async def find_feeds(
    page: Page, fetch: Fetch, *, config: DiscoveryConfig | None = None
) -> FeedReport:
    """The blog's feeds, validated by content, canonical and best first (module docstring).

    ``page`` is the parsed entry page (its final URL after redirects, its response headers);
    ``fetch`` performs one GET (see :class:`FetchRequest`, :class:`Fetched`). At most
    ``config.max_requests`` requests and ``config.max_fetch_seconds`` of fetch time are spent.
    Never raises for a bad response: failures become :attr:`FeedReport.rejected` entries. With
    ``config.ruleset == "original"`` nothing is fetched: the original ``<link>`` candidates are
    returned unvalidated.
    """
    config = config or DiscoveryConfig()
    if config.ruleset == "original":
        cands = discover_feeds(page, ORIGINAL_FEED_RULES)
        feeds = [
            DiscoveredFeed(
                url=c.url,
                type=c.type,
                title=c.title,
                kind="",
                score=c.score,
                reasons=list(c.reasons),
                source=c.source,
                validated=False,
            )
            for c in cands
        ]
        return FeedReport(feeds=feeds, rejected=[], page_url=page.url)
    run = _Run(page, fetch, config)
    try:
        await run.execute()
    except _Budget:
        pass
    return run.report()


class _Run:
    """State of one :func:`find_feeds` call (the stages are methods, in order)."""

    def __init__(self, page: Page, fetch: Fetch, config: DiscoveryConfig) -> None:
        self.page, self.config = page, config
        self.session = _Session(fetch, config)
        self.built = _rules(config.page_rules())
        self.sources = _enabled(self.built, "sources")
        self.found: list[_Found] = []
        self.rejected: list[Rejection] = []
        self.tried: set[str] = set()
        self.hops = 0
        self.platforms: list[str] = []

    # -- fetching and validating one candidate --

    def _reject(self, c: FeedCandidate, reason: str) -> None:
        self.rejected.append(Rejection(c.url, c.source, reason))

    async def validate(self, c: FeedCandidate, *, hop: bool = False) -> _Found | None:
        key = url_key(c.url)
        if key in self.tried:
            return None
        self.tried.add(key)
        resp, note = await self.session.get(c.url)
        if note:
            c.reasons.append(note)
        if resp is None:
            self._reject(c, "network failure or time cap")
            return None
        if not 200 <= resp.status < 300:
            self._reject(c, f"status {resp.status}")
            return None
        ctype = resp.header("content-type")
        parsed = read_feed(resp.body, ctype)
        if parsed is None:
            if hop:
                await self.hop(c, resp)
            self._reject(c, f"not a feed ({media_type(ctype) or 'no Content-Type'})")
            return None
        final_key = url_key(resp.url)
        aliases = [c.url] if final_key != key else []
        for other in self.found:
            if url_key(other.url) == final_key:
                other.aliases += [u for u in aliases if u not in other.aliases]
                return other
        self.tried.add(final_key)
        fmt = parsed.sniff.format
        version = f" {parsed.sniff.version}" if parsed.sniff.version else ""
        c.reasons.append(f"valid {fmt}{version}, {parsed.item_count} items")
        if aliases:
            c.reasons.append(f"redirected to {resp.url}")
        found = _Found(c, resp.url if aliases else c.url, parsed, ctype, aliases)
        self.found.append(found)
        return found

    def satisfied(self) -> bool:
        """Whether a feed other than a comments feed validated."""
        self.classify()
        return any(f.kind != "comments" for f in self.found)

    def classify(self) -> None:
        comment_urls = {url_key(u) for f in self.found for u in f.parsed.comment_feeds}
        for f in self.found:
            f.kind, f.kind_reason = _classify(f, comment_urls, self.page)

    def score(self, cands: list[FeedCandidate], page: Page) -> list[FeedCandidate]:
        rejected: list[tuple[FeedCandidate, str]] = []
        kept = score_candidates(cands, self.built, page, rejected)
        for c, reason in rejected:
            self._reject(c, reason)
        return kept

    async def hop(self, via: FeedCandidate, resp: Fetched) -> None:
        """Read the feed links of one same-site HTML page (anchor or subscribe link)."""
        if "hop" not in self.sources or self.hops >= self.config.max_hops:
            return
        if not same_site(resp.url, self.page.url):
            return
        try:
            hop_page = parse_page(resp.url, resp.body, resp.headers)
        except DecodeError:
            return
        self.hops += 1
        cands = [
            c
            for c in page_candidates(hop_page, self.built, hints=True)
            if c.source != "platform" and url_key(c.url) not in self.tried
        ]
        for c in cands:
            c.hint, c.source = f"{c.source} on {resp.url}", "hop"
        for c in self.score(cands, hop_page):
            await self.validate(c)

    # -- the stages --

    async def execute(self) -> None:
        cands = self.score(page_candidates(self.page, self.built, hints=True), self.page)
        if not any(c.source in ADVERTISED for c in cands):
            followed = await self.follow_refresh()
            if followed:
                cands = self.score(page_candidates(self.page, self.built, hints=True), self.page)
        self.platforms = [f"{m.platform.name}: {m.evidence}" for m in detect_platforms(self.page)]
        for c in [c for c in cands if c.source in ADVERTISED]:
            await self.validate(c)
        if not self.satisfied():
            for c in [c for c in cands if c.source in ("anchor", LINK_HINT)]:
                await self.validate(c, hop=True)
        if self.satisfied():
            return
        await self.platform_stage([c for c in cands if c.source == "platform"])
        if self.found:
            return
        subscribe = subscribe_links(self.page) if "hop" in self.sources else []
        # Keep two requests for the hop (the page and one feed) when there is a page to hop to.
        reserve = 2 if subscribe and self.hops < self.config.max_hops else 0
        if "guess" in self.sources:
            for c in self.score(guess_candidates(self.page), self.page):
                if self.session.requests >= self.config.max_requests - reserve:
                    self.session.exhausted = True
                    break
                if await self.validate(c) and self.satisfied():
                    return
        if self.found or "hop" not in self.sources:
            return
        for url in subscribe:
            if self.hops >= self.config.max_hops:
                break
            if url_key(url) in self.tried:
                continue
            self.tried.add(url_key(url))
            resp, _ = await self.session.get(url, accept="text/html,*/*;q=0.8")
            if resp is not None and 200 <= resp.status < 300:
                await self.hop(FeedCandidate(url=url, type="", source="hop"), resp)

    async def platform_stage(self, cands: list[FeedCandidate]) -> None:
        """Paths in table order until one validates, then that platform's format variants."""
        hit = ""
        for c in cands:
            if "format" in c.rel:
                if c.hint == hit:
                    await self.validate(c)
                continue
            if hit:
                continue
            if await self.validate(c) and self.satisfied():
                hit = c.hint

    async def follow_refresh(self) -> bool:
        """Follow one ``<meta http-equiv=refresh>`` to a different URL; True when the page was
        replaced by the target."""
        try:
            _, target = get_meta_refresh(self.page.text, self.page.base_url)
        except ValueError:
            return False
        if not target or not _http_url(target) or url_key(target) == url_key(self.page.url):
            return False
        resp, _ = await self.session.get(target, accept="text/html,*/*;q=0.8")
        if resp is None or not 200 <= resp.status < 300:
            return False
        try:
            self.page = parse_page(resp.url, resp.body, resp.headers)
        except DecodeError:
            return False
        return True

    # -- collapsing, ranking, reporting --

    def report(self) -> FeedReport:
        self.classify()
        groups: list[list[_Found]] = []
        notes: dict[int, list[str]] = {}
        # Canonical = first validated in stage/score order: the advertised URL wins.
        for f in self.found:
            for group in groups:
                why = _same_feed(group[0], f)
                if why:
                    group.append(f)
                    notes.setdefault(id(group[0]), []).append(f"alias {f.url}: {why}")
                    break
            else:
                groups.append([f])
        feeds = []
        for group in groups:
            head = group[0]
            aliases = list(dict.fromkeys(u for f in group for u in [f.url, *f.aliases]))
            aliases = [u for u in aliases if u != head.url]
            self_url = head.parsed.self_url
            reasons = [*head.cand.reasons, f"kind {head.kind}: {head.kind_reason}"]
            if self_url and url_key(self_url) != url_key(head.url):
                reasons.append(f"rel=self {self_url} differs (kept the fetched URL)")
            reasons += notes.get(id(head), [])
            feeds.append(
                DiscoveredFeed(
                    url=head.url,
                    type=head.parsed.sniff.format,
                    title=head.parsed.title or head.cand.title,
                    kind=head.kind,
                    aliases=aliases,
                    score=head.cand.score,
                    reasons=reasons,
                    source=head.cand.source,
                    item_count=head.parsed.item_count,
                    newest=head.parsed.newest,
                    self_url=self_url,
                    site_url=head.parsed.site_url,
                    content_type=head.content_type,
                )
            )
        order = {id(f): i for i, f in enumerate(feeds)}
        feeds.sort(
            key=lambda f: (
                _KIND_RANK.get(f.kind, 1),
                not same_site(f.url, self.page.url),
                _depth(f.url),
                -(f.newest.timestamp() if f.newest else float("-inf")),
                -f.item_count,
                -f.score,
                order[id(f)],
            )
        )
        return FeedReport(
            feeds=feeds,
            rejected=self.rejected,
            requests=self.session.requests,
            fetch_seconds=round(self.session.seconds, 6),
            budget_exhausted=self.session.exhausted,
            page_url=self.page.url,
            platforms=self.platforms,
            blocked=self.session.blocked,
        )
