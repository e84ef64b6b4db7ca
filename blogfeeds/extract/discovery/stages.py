"""The stages of feed discovery: components that produce candidates and validate them.

A stage is a component (``{dotted path: order}``, ``BLOGFEEDS_FEED_STAGES`` merged over
:data:`FEED_STAGES_BASE`; ``None`` switches one off). :func:`page_candidates` gathers every
stage's page candidates up front (deduplicated, scored together by the scorers); then
:func:`~blogfeeds.extract.discovery.discover.find_feeds` runs each stage in order while it is
:meth:`Stage.needed`: :class:`LinkHeader`, :class:`LinkElements` (validated together),
:class:`AnchorHints`, :class:`PlatformPaths`, :class:`GuessedPaths` and :class:`OneHop`, from
what the page advertises to what is guessed. :data:`ORIGINAL_FEED_STAGES` is the original
design's one stage: ``<link>`` elements of RSS/Atom type.

What each stage finds and when it stops: docs/feed-discovery.md; your own stage:
docs/scoring.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from blogfeeds.extract.discovery.candidates import (
    FeedCandidate,
    anchor_candidates,
    dedupe,
    header_candidates,
    link_candidates,
)
from blogfeeds.extract.discovery.fetching import HTML_ACCEPT, Fetched
from blogfeeds.extract.discovery.guesses import blog_roots, guess_candidates
from blogfeeds.extract.discovery.platforms import platform_candidates
from blogfeeds.extract.discovery.vocabulary import (
    ADVERTISED,
    ATOM_TYPE,
    FEED_TYPES,
    LINK_HINT,
    MAYBE_TYPES,
    RSS_TYPE,
    same_site,
    url_key,
)
from blogfeeds.extract.page import DecodeError, Page, parse_page

if TYPE_CHECKING:
    from blogfeeds.extract.discovery.discover import DiscoveryRun

_HERE = "blogfeeds.extract.discovery.stages"

FEED_STAGES_BASE: dict[str, int | None] = {
    f"{_HERE}.LinkHeader": 100,
    f"{_HERE}.LinkElements": 200,
    f"{_HERE}.AnchorHints": 300,
    f"{_HERE}.PlatformPaths": 400,
    f"{_HERE}.GuessedPaths": 500,
    f"{_HERE}.OneHop": 600,
}
"""The stages of the ``blogfeeds`` rule set, in order; ``BLOGFEEDS_FEED_STAGES`` is merged over
it."""

ORIGINAL_FEED_STAGES: dict[str, int | None] = {f"{_HERE}.RssAtomLinks": 100}
"""The original design's stage (``BLOGFEEDS_FEED_RULESET = "original"``)."""

MAX_MISSES = 2
"""Guessed paths stop after this many misses in a row of candidates the page does not declare
(404 or 410, or a page that is not a feed; anchors, link hints and platform paths count; a
guessed path misses when it missed at each of the blog's roots): a site that answers so to
everything costs two requests per root, not the budget."""
PLATFORM_MISSES = 1
"""A platform's paths stop after this many of them missed (404 or 410, or not a feed; tried by
any stage): a recognised platform serves its feed at its first path by default, so a miss there
says the blog has none; the other paths are for a blog whose first path answered otherwise
(403, 5xx)."""


def page_candidates(
    page: Page, stages: Iterable[Stage], *, hints: bool = False
) -> list[FeedCandidate]:
    """The unscored page candidates of ``stages``, in stage order, deduplicated
    (:func:`~blogfeeds.extract.discovery.candidates.dedupe`). Without ``hints`` only what the
    page advertises (``Link`` header, ``<link>``, typed ``<a>``)."""
    return dedupe(c for stage in stages for c in stage.candidates(page, hints=hints))


@dataclass(frozen=True)
class Stage:
    """A stage: its page candidates, when it runs, and how it validates."""

    def candidates(self, page: Page, *, hints: bool) -> list[FeedCandidate]:
        """Candidates read from ``page`` alone (``hints``: not only advertised ones)."""
        return []

    def needed(self, run: DiscoveryRun) -> bool:
        """Whether the stage runs: by default while no posts feed has validated."""
        return not run.satisfied()

    async def run(self, run: DiscoveryRun) -> None:
        """Validate this stage's candidates through ``run``."""


@dataclass(frozen=True)
class LinkHeader(Stage):
    """Stage 1: ``Link`` header targets of ``types``."""

    types: frozenset[str] = FEED_TYPES | MAYBE_TYPES

    def candidates(self, page: Page, *, hints: bool) -> list[FeedCandidate]:
        return header_candidates(page, self.types)

    def needed(self, run: DiscoveryRun) -> bool:
        return True

    async def run(self, run: DiscoveryRun) -> None:
        await run.validate_each(ADVERTISED)


@dataclass(frozen=True)
class LinkElements(Stage):
    """Stage 2: ``<link>`` (and ``<a>``/``<area>`` with rel ``alternate``/``feed``) of
    ``types``; ``sources`` says which (``link``, ``a``, ``link-hint``)."""

    types: frozenset[str] = FEED_TYPES | MAYBE_TYPES
    sources: frozenset[str] = frozenset({"link", "a", LINK_HINT})

    def candidates(self, page: Page, *, hints: bool) -> list[FeedCandidate]:
        found = link_candidates(page, self.types, self.sources)
        return found if hints else [c for c in found if c.source != LINK_HINT]

    def needed(self, run: DiscoveryRun) -> bool:
        return True

    async def run(self, run: DiscoveryRun) -> None:
        await run.validate_each(ADVERTISED)


@dataclass(frozen=True)
class RssAtomLinks(LinkElements):
    """The original design's stage: ``<link>`` elements of type ``application/rss+xml`` or
    ``application/atom+xml`` (RSS 2.0, Atom 1.0), whatever their rel."""

    types: frozenset[str] = frozenset({RSS_TYPE, ATOM_TYPE})
    sources: frozenset[str] = frozenset({"link"})


@dataclass(frozen=True)
class AnchorHints(Stage):
    """Stage 3: anchors that look like feed links, validated with the link hints."""

    def candidates(self, page: Page, *, hints: bool) -> list[FeedCandidate]:
        return anchor_candidates(page) if hints else []

    async def run(self, run: DiscoveryRun) -> None:
        await run.validate_each(frozenset({"anchor", LINK_HINT}), hop=True)


@dataclass(frozen=True)
class PlatformPaths(Stage):
    """Stage 4: platform paths in table order until one validates (or :data:`PLATFORM_MISSES`
    miss in a row), then that platform's format variants."""

    def candidates(self, page: Page, *, hints: bool) -> list[FeedCandidate]:
        return platform_candidates(page) if hints else []

    async def run(self, run: DiscoveryRun) -> None:
        # In table order, a path already tried by another stage (an anchor to /atom.xml) in its
        # place: its miss counts.
        scored = {url_key(c.url): c for c in run.candidates if c.source == "platform"}
        hit, misses = "", 0
        for c in platform_candidates(run.page):
            key = url_key(c.url)
            if "format" in c.rel:
                if c.hint == hit and key in scored:
                    await run.validate(scored[key])
                continue
            if hit or misses >= PLATFORM_MISSES:
                continue
            fresh = key not in run.tried and key in scored
            if fresh and await run.validate(scored[key]) and run.satisfied():
                hit = c.hint
            misses += key in run.missed


@dataclass(frozen=True)
class GuessedPaths(Stage):
    """Stage 5: when no platform was recognised (a recognised one has its own paths, stage 4),
    guessed paths until one validates or :data:`MAX_MISSES` paths missed in a row at every
    root; two requests are left for the hop (the page and one feed) when there is a page to hop
    to."""

    def needed(self, run: DiscoveryRun) -> bool:
        return not run.found and not run.platforms

    async def run(self, run: DiscoveryRun) -> None:
        reserve = 2 if await run.subscribe_links() and run.hops < run.config.max_hops else 0
        misses = MAX_MISSES * len(blog_roots(run.page.url))  # a path missed at every root
        for c in run.score(guess_candidates(run.page), run.page):
            if run.misses >= misses:
                break
            if run.session.requests >= run.config.max_requests - reserve:
                run.session.exhausted = True
                break
            if await run.validate(c) and run.satisfied():
                return


@dataclass(frozen=True)
class OneHop(Stage):
    """Stage 6: the feed links of one same-site page linked as RSS / Feeds / Subscribe (also
    of an anchor candidate that is an HTML page), at most ``config.max_hops`` pages."""

    def needed(self, run: DiscoveryRun) -> bool:
        return not run.found

    async def run(self, run: DiscoveryRun) -> None:
        for url in await run.subscribe_links():
            if run.hops >= run.config.max_hops:
                break
            if url_key(url) in run.tried:
                continue
            run.tried.add(url_key(url))
            resp, _ = await run.session.get(url, accept=HTML_ACCEPT)
            if resp is not None and 200 <= resp.status < 300:
                await self.follow(run, resp)

    async def follow(self, run: DiscoveryRun, resp: Fetched) -> None:
        """Validate the feed links of the same-site HTML page ``resp`` (source ``hop``)."""
        if run.hops >= run.config.max_hops or not same_site(resp.url, run.page.url):
            return
        try:
            hop_page = await run.run(parse_page, resp.url, resp.body, resp.headers, run.page.limits)
        except DecodeError:
            return
        run.hops += 1
        found = await run.run(page_candidates, hop_page, run.stages, hints=True)
        cands = [c for c in found if c.source != "platform" and url_key(c.url) not in run.tried]
        for c in cands:
            c.hint, c.source = f"{c.source} on {resp.url}", "hop"
        for c in await run.run(run.score, cands, hop_page):
            await run.validate(c)
