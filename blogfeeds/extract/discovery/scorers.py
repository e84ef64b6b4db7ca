"""The feed scorers: each adjusts a candidate's score (with a reason) or rejects it.

A scorer is a rule of :mod:`blogfeeds.extract.scoring`: ``scorer(candidate, score, page)``
returns an :class:`~blogfeeds.extract.scoring.Adjustment` or ``None``, or raises
:class:`~blogfeeds.extract.scoring.Reject`. Scorers only score: which candidates exist and
what is fetched are the stages (:mod:`blogfeeds.extract.discovery.stages`), so disabling a
scorer never stops a fetch. :data:`FEED_SCORERS_BASE` is the default list; the
``BLOGFEEDS_FEED_SCORERS`` setting is merged over it (Scrapy's ``*_BASE`` semantics): the
default scorers keep running, lower orders first, and ``None`` disables one. What each default
does: docs/feed-discovery.md; writing your own (a class with ``from_settings`` gets its weights
from settings): docs/scoring.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlsplit

from blogfeeds.extract.discovery.candidates import FeedCandidate, link_candidates
from blogfeeds.extract.discovery.vocabulary import (
    ADVERTISED,
    BASE_SCORE,
    COMMENT_WORDS,
    FEED_TYPES,
    LINK_HINT,
    MAYBE_TYPES,
    READER_SITES,
    is_comments_url,
    is_feed_host,
    is_taxonomy_url,
    locator,
    path_depth,
    same_site,
    site_of,
)
from blogfeeds.extract.page import Page
from blogfeeds.extract.scoring import Adjustment, Reject, apply_rules

_HERE = "blogfeeds.extract.discovery.scorers"

FEED_SCORERS_BASE: dict[str, int | None] = {
    f"{_HERE}.MaybeType": 100,
    f"{_HERE}.AnchorPenalty": 110,
    f"{_HERE}.PlatformPenalty": 120,
    f"{_HERE}.GuessPenalty": 130,
    f"{_HERE}.HopPenalty": 140,
    f"{_HERE}.NotAFeed": 150,
    f"{_HERE}.NoAlternate": 200,
    f"{_HERE}.CommentsFeed": 300,
    f"{_HERE}.CommentsTitle": 310,
    f"{_HERE}.PerPostFeed": 320,
    f"{_HERE}.RpcRsdLink": 400,
    f"{_HERE}.TaxonomyFeed": 450,
    f"{_HERE}.OtherSite": 500,
}
"""The scorers of the ``blogfeeds`` rule set, in order; ``BLOGFEEDS_FEED_SCORERS`` is merged
over it."""

ORIGINAL_FEED_SCORERS: dict[str, int | None] = {
    f"{_HERE}.NoAlternate": 200,
    f"{_HERE}.CommentsFeed": 300,
    f"{_HERE}.RpcRsdLink": 400,
}
"""The original design's scorers (``BLOGFEEDS_FEED_RULESET = "original"``): out of 10, -3
without rel=alternate, -5 comments, -5 rpc/rsd."""


def score_candidates(
    candidates: Iterable[FeedCandidate],
    built: list[Any],
    page: Page,
    rejected: list[tuple[FeedCandidate, str]] | None = None,
) -> list[FeedCandidate]:
    """Score ``candidates`` with the built scorers, dropping rejected ones (appended to
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


@dataclass(frozen=True)
class MaybeType:
    """-2 for an advertised candidate or a link hint of a *maybe* type (:data:`MAYBE_TYPES`:
    ``application/xml``, ``text/xml``, ``application/json``, an untyped ``rel=feed`` or
    ``rel=alternate``)."""

    penalty: float = 2.0

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        if (c.source in ADVERTISED or c.source == LINK_HINT) and c.type in MAYBE_TYPES:
            return Adjustment(
                score - self.penalty, f"-{self.penalty:g} maybe type {c.type or '(none)'}: validate"
            )
        return None


@dataclass(frozen=True)
class SourcePenalty:
    """Subtract ``penalty`` from the candidates of stage ``source``: the less a stage's
    candidates are declared by the page, the lower they start."""

    penalty: float = 0.0
    label: str = ""
    source: ClassVar[str] = ""

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        if c.source != self.source:
            return None
        hint = f" ({c.hint})" if c.hint else ""
        return Adjustment(score - self.penalty, f"-{self.penalty:g} {self.label}{hint}")


@dataclass(frozen=True)
class AnchorPenalty(SourcePenalty):
    """``<a>`` that look like feed links: -2 (-3 when only the text says so)."""

    penalty: float = 2.0
    label: str = "anchor"
    source: ClassVar[str] = "anchor"

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        adj = super().__call__(c, score, page)
        if adj is not None and c.hint == "text":
            return Adjustment(adj.score - 1, f"{adj.reason}, -1 href not feed-like")
        return adj


@dataclass(frozen=True)
class PlatformPenalty(SourcePenalty):
    """A recognised platform's known feed paths: -4."""

    penalty: float = 4.0
    label: str = "platform path"
    source: ClassVar[str] = "platform"


@dataclass(frozen=True)
class GuessPenalty(SourcePenalty):
    """Guessed well-known paths: -6."""

    penalty: float = 6.0
    label: str = "guessed path"
    source: ClassVar[str] = "guess"


@dataclass(frozen=True)
class HopPenalty(SourcePenalty):
    """Feed links found one hop away on a page linked as RSS / Feeds / Subscribe: -2."""

    penalty: float = 2.0
    label: str = "one hop"
    source: ClassVar[str] = "hop"


@dataclass(frozen=True)
class NotAFeed:
    """Reject what only looks advertised: WordPress REST API (``/wp-json/``), oEmbed endpoints,
    a *maybe* type without rel ``alternate``/``feed``, and reader-service subscribe links."""

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        loc = locator(c.url)
        if "/wp-json/" in loc or "rest_route=" in loc:
            raise Reject("WordPress REST API")
        if "oembed" in loc or "oembed" in c.type:
            raise Reject("oEmbed endpoint")
        linked = c.source in ADVERTISED or c.source == LINK_HINT
        if linked and c.type in MAYBE_TYPES and not {"alternate", "feed"} & set(c.rel):
            raise Reject(f"type {c.type or '(none)'} without rel=alternate")
        if site_of(c.url) in READER_SITES:
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
    """-5 when the title says comments (:data:`COMMENT_WORDS`) and the URL did not already."""

    penalty: float = 5.0
    label: str = "title says comments"

    def applies(self, c: FeedCandidate, page: Page) -> bool:
        return bool(COMMENT_WORDS.search(c.title)) and not is_comments_url(c.url)


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
        depth = path_depth(c.url)
        return any(
            path_depth(other.url) < depth
            for other in link_candidates(page, FEED_TYPES, frozenset({"link", "a"}))
        )


@dataclass(frozen=True)
class RpcRsdLink(PenaltyRule):
    """-5 when ``rpc`` or ``rsd`` occurs in the URL after the host (XML-RPC and Really Simple
    Discovery endpoints wrongly typed as feeds)."""

    penalty: float = 5.0
    label: str = "rpc/rsd endpoint"

    def applies(self, c: FeedCandidate, page: Page) -> bool:
        loc = locator(c.url)
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
        if c.source not in ADVERTISED and not is_feed_host(c.url):
            raise Reject("anchor to another site")
        return True
