"""Feed autodiscovery from a page's ``<link>`` elements, scored by ordered rules.

Candidates come from RSS Autodiscovery (RSS Advisory Board, 2006) and the HTML Living
Standard's ``rel="alternate"`` link type (§4.6.7.1): every ``<link href>`` whose ``type``
(lower-cased, MIME parameters stripped, entities already decoded by lxml) is accepted by an
enabled *type rule*. Each candidate starts at :data:`BASE_SCORE` and every enabled rule may
adjust it; the best candidate is the main feed.

The default rules are blogfeeds' original design, exactly: RSS and Atom only, scored out of 10,

========================  =====  ==========================================================
rule                      delta  applies when
========================  =====  ==========================================================
:class:`RssAtomType`       0     type is ``application/rss+xml`` or ``application/atom+xml``
:class:`NoAlternate`      -3     the ``rel`` token list lacks ``alternate``
:class:`CommentsFeed`     -5     ``comment`` occurs in the URL's path, query or fragment
:class:`RpcRsdLink`       -5     ``rpc`` or ``rsd`` occurs there (XML-RPC, Really Simple
                                 Discovery endpoints)
========================  =====  ==========================================================

:class:`RdfType` (RSS 1.0) and :class:`JsonFeedType` (JSON Feed 1.1) exist but are not in the
default set. Rules are configured as ``{dotted path: order}`` (``None`` disables one), the
``BLOGFEEDS_FEED_SCORERS`` setting; see :mod:`blogfeeds.extract.scoring`.

A *type rule* is any rule with an ``accepts_types`` attribute (a set of MIME types): the union
over the enabled rules decides which ``<link>`` elements become candidates, so disabling
:class:`RssAtomType` with no other type rule enabled discovers nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlsplit

from blogfeeds.extract.page import Page
from blogfeeds.extract.scoring import Adjustment, Reject, apply_rules, build_rules
from blogfeeds.items import FeedInfo

BASE_SCORE = 10.0
"""Starting score of every candidate (the original rule scores out of 10)."""

RSS_TYPE = "application/rss+xml"
ATOM_TYPE = "application/atom+xml"
RDF_TYPE = "application/rdf+xml"
JSON_FEED_TYPE = "application/feed+json"
JSON_TYPE = "application/json"

DEFAULT_FEED_RULES: dict[str, int | None] = {
    "blogfeeds.extract.feeds.RssAtomType": 100,
    "blogfeeds.extract.feeds.NoAlternate": 200,
    "blogfeeds.extract.feeds.CommentsFeed": 300,
    "blogfeeds.extract.feeds.RpcRsdLink": 400,
}
"""The original design's rules, mirrored by ``BLOGFEEDS_FEED_SCORERS`` in the settings."""

RulesSpec = Mapping[Any, int | None] | Iterable[Callable[..., Adjustment | None]] | None


@dataclass
class FeedCandidate:
    """One advertised feed, with its score and the reasons for it."""

    url: str
    """Absolute URL (``href`` resolved against the page's base URL)."""
    type: str
    """Declared MIME type, lower-cased, parameters stripped (``application/rss+xml``)."""
    title: str = ""
    """The ``title`` attribute, whitespace collapsed."""
    rel: list[str] = field(default_factory=list)
    """The ``rel`` attribute as a lower-cased token list (``["alternate"]``)."""
    source: str = "link"
    """Where the candidate was found: ``"link"`` for a ``<link>`` element."""
    score: float = BASE_SCORE
    """Final score (out of :data:`BASE_SCORE` for the original rules)."""
    reasons: list[str] = field(default_factory=list)
    """``"base 10"`` then one entry per rule that changed the score."""


def media_type(value: str | None) -> str:
    """A MIME type lower-cased with its parameters stripped: ``"Application/RSS+XML; x=1"`` →
    ``"application/rss+xml"``; ``""`` for ``None``."""
    return (value or "").split(";", 1)[0].strip().lower()


def _locator(url: str) -> str:
    """The part of a URL after the host (path, query, fragment), lower-cased."""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}#{parts.fragment}".lower()


# --- Rules -----------------------------------------------------------------------------------


class TypeRule:
    """Accept candidates of ``accepts_types``; add ``points`` (may be 0) to their score."""

    accepts_types: ClassVar[frozenset[str]] = frozenset()
    points: ClassVar[float] = 0.0

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        if c.type not in self.accepts_types or not self.points:
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


@dataclass(frozen=True)
class PenaltyRule:
    """Subtract ``penalty`` when :meth:`applies`; the reason is ``"-<penalty> <label>"``."""

    penalty: float = 0.0
    label: str = ""

    def applies(self, c: FeedCandidate) -> bool:
        raise NotImplementedError

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        if not self.applies(c):
            return None
        return Adjustment(score - self.penalty, f"-{self.penalty:g} {self.label}")


@dataclass(frozen=True)
class NoAlternate(PenaltyRule):
    """-3 when ``rel`` lacks the ``alternate`` token (HTML: rel is a case-insensitive token
    list, so ``rel="Alternate feed"`` qualifies)."""

    penalty: float = 3.0
    label: str = "no rel=alternate"

    def applies(self, c: FeedCandidate) -> bool:
        return "alternate" not in c.rel


@dataclass(frozen=True)
class CommentsFeed(PenaltyRule):
    """-5 when ``comment`` occurs in the URL after the host: a comments feed, not the posts."""

    penalty: float = 5.0
    label: str = "comments feed"

    def applies(self, c: FeedCandidate) -> bool:
        return "comment" in _locator(c.url)


@dataclass(frozen=True)
class RpcRsdLink(PenaltyRule):
    """-5 when ``rpc`` or ``rsd`` occurs in the URL after the host (XML-RPC and Really Simple
    Discovery endpoints wrongly typed as feeds)."""

    penalty: float = 5.0
    label: str = "rpc/rsd endpoint"

    def applies(self, c: FeedCandidate) -> bool:
        loc = _locator(c.url)
        return "rpc" in loc or "rsd" in loc


# --- Discovery -------------------------------------------------------------------------------


def _rules(rules: RulesSpec) -> list[Callable[..., Adjustment | None]]:
    if rules is None:
        return build_rules(DEFAULT_FEED_RULES)
    if isinstance(rules, Mapping):
        return build_rules(rules)
    return list(rules)


def link_candidates(page: Page, types: frozenset[str]) -> list[FeedCandidate]:
    """Every ``<link href>`` with a type in ``types``, in document order, deduped by URL
    (first kept); only http(s) URLs. Scores are not set yet."""
    found: list[FeedCandidate] = []
    seen: set[str] = set()
    for el in page.tree.iter("link"):
        href = el.get("href")
        mtype = media_type(el.get("type"))
        if not href or not href.strip() or mtype not in types:
            continue
        url = page.absolute(href)
        if urlsplit(url).scheme.lower() not in ("http", "https") or url in seen:
            continue
        seen.add(url)
        found.append(
            FeedCandidate(
                url=url,
                type=mtype,
                title=" ".join((el.get("title") or "").split()),
                rel=(el.get("rel") or "").lower().split(),
            )
        )
    return found


def discover_feeds(page: Page, rules: RulesSpec = None) -> list[FeedCandidate]:
    """Feed candidates advertised by ``page``, best first (ties keep document order).

    ``rules`` is a ``{dotted path or class: order}`` spec (default :data:`DEFAULT_FEED_RULES`)
    or an already built rule list. A rule raising :class:`~blogfeeds.extract.scoring.Reject`
    drops the candidate. Never raises on odd markup: links without ``href``, with an unknown
    type or a non-http(s) URL are skipped.
    """
    built = _rules(rules)
    types = frozenset().union(*(getattr(r, "accepts_types", frozenset()) for r in built))
    scored: list[FeedCandidate] = []
    for cand in link_candidates(page, types):
        try:
            score, reasons = apply_rules(cand, built, page, BASE_SCORE)
        except Reject:
            continue
        cand.score = score
        cand.reasons = [f"base {BASE_SCORE:g}", *reasons]
        scored.append(cand)
    scored.sort(key=lambda c: -c.score)  # stable: ties stay in document order
    return scored


def to_feed_info(c: FeedCandidate) -> FeedInfo:
    """The :class:`~blogfeeds.items.FeedInfo` item for a candidate."""
    return FeedInfo(url=c.url, type=c.type, title=c.title, score=c.score, reasons=list(c.reasons))
