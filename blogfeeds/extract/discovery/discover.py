"""Feed discovery: the page-only :func:`discover_feeds` and the validated, async
:func:`find_feeds`, their configuration and their reports.

* :func:`discover_feeds` (synchronous, no fetching): the candidates a page alone offers, scored
  and best first.
* :func:`find_feeds` (async, fetching injected): the stages of
  :mod:`blogfeeds.extract.discovery.stages` over one candidate set deduplicated by normalised
  URL, each candidate validated by content (:mod:`blogfeeds.extract.feedreader`). It fetches
  through a caller-supplied :data:`Fetch` (the spider passes one built on
  ``crawler.engine.download_async``, so robots.txt, politeness and redirects apply; tests pass
  an in-memory web) and returns a :class:`FeedReport`.

The budget (``max_requests``, ``max_fetch_seconds``) cuts everything. Classification, aliases,
ranking and the two rule sets (``BLOGFEEDS_FEED_RULESET``: ``"blogfeeds"``, ``"original"``):
docs/feed-discovery.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from w3lib.html import get_meta_refresh

from blogfeeds.extract.discovery.candidates import FeedCandidate, http_url, subscribe_links
from blogfeeds.extract.discovery.fetching import (
    BROWSER_USER_AGENT,
    HTML_ACCEPT,
    BudgetSpent,
    Fetch,
    Session,
)
from blogfeeds.extract.discovery.platforms import detect_platforms
from blogfeeds.extract.discovery.scorers import (
    FEED_SCORERS_BASE,
    ORIGINAL_FEED_SCORERS,
    PerPostFeed,
    score_candidates,
)
from blogfeeds.extract.discovery.stages import (
    FEED_STAGES_BASE,
    ORIGINAL_FEED_STAGES,
    OneHop,
    page_candidates,
)
from blogfeeds.extract.discovery.vocabulary import (
    ADVERTISED,
    BASE_SCORE,
    COMMENT_WORDS,
    FORMAT_QUERY,
    SOURCE_RANK,
    is_comments_url,
    is_taxonomy_url,
    locator,
    media_type,
    path_depth,
    same_site,
    url_key,
)
from blogfeeds.extract.feedreader import FeedDocument, read_feed
from blogfeeds.extract.page import DecodeError, Page, parse_page
from blogfeeds.extract.runner import Run, inline
from blogfeeds.extract.scoring import SettingsLike, build_rules, build_setting
from blogfeeds.extract.settings import DiscoverySettings

RULESETS: dict[str, tuple[dict[str, int | None], dict[str, int | None]]] = {
    "blogfeeds": (FEED_SCORERS_BASE, FEED_STAGES_BASE),
    "original": (ORIGINAL_FEED_SCORERS, ORIGINAL_FEED_STAGES),
}
"""``BLOGFEEDS_FEED_RULESET`` → (scorers, stages)."""

RulesSpec = Mapping[Any, int | None] | Iterable[Any] | None
"""A ``{dotted path or class: order}`` spec (complete, not merged), a built list, or ``None``
for the defaults."""


@cache
def _default_built(which: str) -> tuple[Any, ...]:
    base = FEED_SCORERS_BASE if which == "scorers" else FEED_STAGES_BASE
    return tuple(build_rules(base))


def _built(spec: RulesSpec, which: str) -> list[Any]:
    if spec is None:
        return list(_default_built(which))
    if isinstance(spec, Mapping):
        return build_rules(spec)
    return list(spec)


def discover_feeds(
    page: Page, rules: RulesSpec = None, *, stages: RulesSpec = None, hints: bool = False
) -> list[FeedCandidate]:
    """Feed candidates offered by ``page`` alone, best first (ties keep document order).

    ``rules`` are the scorers, ``stages`` the stages (each a spec or a built list; default the
    ``blogfeeds`` set; ``ORIGINAL_FEED_SCORERS`` and ``ORIGINAL_FEED_STAGES`` for the original
    design). Without ``hints`` only what the page advertises (``Link`` header, ``<link>``,
    typed ``<a>``) is returned; with ``hints`` also link hints, anchors that look like feeds and
    platform paths, which need validation by :func:`find_feeds`. Nothing is fetched. A scorer
    raising :class:`~blogfeeds.extract.scoring.Reject` drops the candidate. Never raises on odd
    markup.
    """
    scorers = _built(rules, "scorers")
    return score_candidates(
        page_candidates(page, _built(stages, "stages"), hints=hints), scorers, page
    )


# --- Configuration ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DiscoveryConfig:
    """Settings of :func:`find_feeds` (``BLOGFEEDS_FEED_*``)."""

    ruleset: str = "blogfeeds"
    """``"blogfeeds"`` (the stages) or ``"original"`` (page-only ``<link>`` rule, no fetch)."""
    scorers: tuple[Any, ...] = field(default_factory=lambda: _default_built("scorers"))
    """The built scorers, in order (:mod:`blogfeeds.extract.discovery.scorers`)."""
    stages: tuple[Any, ...] = field(default_factory=lambda: _default_built("stages"))
    """The built stages, in order (:mod:`blogfeeds.extract.discovery.stages`)."""
    max_requests: int = 10
    """Requests per blog, retries and the refresh hop included."""
    max_fetch_seconds: float = 10.0
    """Fetch time per blog, seconds; a request running past it is cancelled."""
    retry_user_agent: str | None = BROWSER_USER_AGENT
    """User-Agent of the one retry after a 403; ``None`` disables the retry."""
    max_hops: int = 1
    """Pages linked as RSS / Feeds / Subscribe whose feed links are followed."""

    @classmethod
    def from_settings(cls, settings: SettingsLike) -> DiscoveryConfig:
        """The ``BLOGFEEDS_FEED_*`` settings (:class:`DiscoverySettings`),
        with the user's scorers and stages merged over the ruleset's base (the original ruleset
        ignores them). Components are built with ``from_settings(settings)`` when they define
        it. Raises :class:`~blogfeeds.option.StartupError` on a bad value."""
        opts = DiscoverySettings.from_settings(settings)
        scorers_base, stages_base = RULESETS[opts.ruleset]
        own = opts.ruleset == "blogfeeds"
        return cls(
            ruleset=opts.ruleset,
            scorers=tuple(
                build_setting(
                    "BLOGFEEDS_FEED_SCORERS", opts.scorers if own else {}, settings, scorers_base
                )
            ),
            stages=tuple(
                build_setting(
                    "BLOGFEEDS_FEED_STAGES", opts.stages if own else {}, settings, stages_base
                )
            ),
            max_requests=opts.max_requests,
            max_fetch_seconds=opts.max_fetch_seconds,
            retry_user_agent=opts.retry_user_agent or None,
        )


# --- Reports ---------------------------------------------------------------------------------


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
    document: FeedDocument | None = field(default=None, repr=False, compare=False)
    """The feed as validation read it (its entries, subtitle, author): the blog profile reads
    it rather than fetching the feed again; ``None`` when not validated."""


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


# --- The validated pipeline ------------------------------------------------------------------


@dataclass
class _Found:
    cand: FeedCandidate
    url: str
    parsed: FeedDocument
    content_type: str
    aliases: list[str]
    kind: str = "main"
    kind_reason: str = ""


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
    return bool(diff) and all(FORMAT_QUERY.match(p.lower()) for p in diff)


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
        if COMMENT_WORDS.search(title):
            return "comments", f"title {title[:60]!r} says comments"
    if PerPostFeed().applies(found.cand, page):
        return "comments", "per-post feed (<post>/feed/)"
    if is_taxonomy_url(url):
        return "category", "category/tag URL"
    if parsed.podcast or "podcast" in locator(url):
        return "podcast", "podcast markup or URL"
    return "main", "posts feed"


_KIND_RANK = {"main": 0, "category": 1, "podcast": 1, "other": 1, "comments": 2}


async def find_feeds(
    page: Page, fetch: Fetch, *, config: DiscoveryConfig | None = None, run: Run = inline
) -> FeedReport:
    """The blog's feeds, validated by content, canonical and best first (module docstring).

    ``page`` is the parsed entry page (its final URL after redirects, its response headers);
    ``fetch`` performs one GET (see :class:`FetchRequest`, :class:`Fetched`). At most
    ``config.max_requests`` requests and ``config.max_fetch_seconds`` of fetch time are spent.
    Never raises for a bad response: failures become :attr:`FeedReport.rejected` entries. With
    ``config.ruleset == "original"`` nothing is fetched: the original ``<link>`` candidates are
    returned unvalidated. ``run`` runs the CPU-bound steps (reading the page's candidates, a
    fetched feed, a hopped page: :mod:`~blogfeeds.extract.runner`).
    """
    config = config or DiscoveryConfig()
    if config.ruleset == "original":
        cands = discover_feeds(page, ORIGINAL_FEED_SCORERS, stages=ORIGINAL_FEED_STAGES)
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
    discovery = DiscoveryRun(page, fetch, config, run)
    try:
        await discovery.execute()
    except BudgetSpent:
        pass
    return discovery.report()


class DiscoveryRun:
    """State of one :func:`find_feeds` call, which the stages validate through."""

    def __init__(
        self, page: Page, fetch: Fetch, config: DiscoveryConfig, run: Run = inline
    ) -> None:
        self.page, self.config, self.run = page, config, run
        self.session = Session(fetch, config)
        self.scorers = list(config.scorers)
        self.stages = list(config.stages)
        self.hopper = next((s for s in self.stages if isinstance(s, OneHop)), None)
        self.candidates: list[FeedCandidate] = []
        """The page candidates of every stage, scored, best first."""
        self.found: list[_Found] = []
        self.rejected: list[Rejection] = []
        self.tried: set[str] = set()
        self.hops = 0
        self.misses = 0
        """Candidates the page does not declare (anchors, link hints, platform paths, guesses)
        that missed in a row (404/410, or not a feed): the guesses stop on it."""
        self.missed: set[str] = set()
        """URL keys that missed (404/410, or not a feed)."""
        self.platforms: list[str] = []
        self._subscribe: list[str] | None = None

    # -- fetching and validating one candidate --

    def _reject(self, c: FeedCandidate, reason: str) -> None:
        self.rejected.append(Rejection(c.url, c.source, reason))

    async def validate(self, c: FeedCandidate, *, hop: bool = False) -> _Found | None:
        """Fetch and read ``c`` once (a URL already tried is skipped); with ``hop``, an HTML
        answer is hopped by the :class:`OneHop` stage when it is enabled."""
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
            if resp.status in (404, 410):
                self._missed(c, key)
            self._reject(c, f"status {resp.status}")
            return None
        ctype = resp.header("content-type")
        parsed = await self.run(read_feed, resp.body, ctype)
        if parsed is None:
            self._missed(c, key)
            if hop and self.hopper is not None:
                await self.hopper.follow(self, resp)
            self._reject(c, f"not a feed ({media_type(ctype) or 'no Content-Type'})")
            return None
        self.misses = 0
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

    def _missed(self, c: FeedCandidate, key: str) -> None:
        self.missed.add(key)
        if c.source not in ADVERTISED:  # a miss of what the page declares says nothing more
            self.misses += 1

    async def validate_each(self, sources: frozenset[str], *, hop: bool = False) -> None:
        """Validate the page candidates of ``sources``, by source (:data:`SOURCE_RANK`: a
        ``<link>`` hint before an anchor), then in score order."""
        cands = [c for c in self.candidates if c.source in sources]
        for c in sorted(cands, key=lambda c: SOURCE_RANK.get(c.source, 3)):
            await self.validate(c, hop=hop)

    def satisfied(self) -> bool:
        """Whether a feed other than a comments feed validated."""
        self.classify()
        return any(f.kind != "comments" for f in self.found)

    def classify(self) -> None:
        comment_urls = {url_key(u) for f in self.found for u in f.parsed.comment_feeds}
        for f in self.found:
            f.kind, f.kind_reason = _classify(f, comment_urls, self.page)

    def score(self, cands: list[FeedCandidate], page: Page) -> list[FeedCandidate]:
        """``cands`` scored, best first; rejected ones are reported."""
        rejected: list[tuple[FeedCandidate, str]] = []
        kept = score_candidates(cands, self.scorers, page, rejected)
        for c, reason in rejected:
            self._reject(c, reason)
        return kept

    async def subscribe_links(self) -> list[str]:
        """The page's subscribe links when the :class:`OneHop` stage is enabled."""
        if self._subscribe is None:
            found = await self.run(subscribe_links, self.page) if self.hopper is not None else []
            self._subscribe = found
        return self._subscribe

    # -- the stages --

    async def execute(self) -> None:
        """Gather and score the page candidates of every stage (following a meta refresh when
        the page advertises nothing), then run each stage in order while it is needed."""
        self.candidates = await self.run(self.gather)
        advertised = any(c.source in ADVERTISED for c in self.candidates)
        if not advertised and await self.follow_refresh():
            self.candidates = await self.run(self.gather)
        platforms = await self.run(detect_platforms, self.page)
        self.platforms = [f"{m.platform.name}: {m.evidence}" for m in platforms]
        for stage in self.stages:
            if stage.needed(self):
                await stage.run(self)

    def gather(self) -> list[FeedCandidate]:
        """The page candidates of every stage, scored, best first."""
        return self.score(page_candidates(self.page, self.stages, hints=True), self.page)

    async def follow_refresh(self) -> bool:
        """Follow one ``<meta http-equiv=refresh>`` to a different URL; True when the page was
        replaced by the target."""
        try:
            _, target = get_meta_refresh(self.page.text, self.page.base_url)
        except ValueError:
            return False
        if not target or not http_url(target) or url_key(target) == url_key(self.page.url):
            return False
        resp, _ = await self.session.get(target, accept=HTML_ACCEPT)
        if resp is None or not 200 <= resp.status < 300:
            return False
        try:
            self.page = await self.run(
                parse_page, resp.url, resp.body, resp.headers, self.page.limits
            )
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
                    document=head.parsed,
                )
            )
        order = {id(f): i for i, f in enumerate(feeds)}
        feeds.sort(
            key=lambda f: (
                _KIND_RANK.get(f.kind, 1),
                not same_site(f.url, self.page.url),
                path_depth(f.url),
                -(f.newest.timestamp() if f.newest else float("-inf")),
                -f.item_count,
                SOURCE_RANK.get(f.source, 3),
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
