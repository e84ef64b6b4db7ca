"""Admission: whether a blog reached through a link is requested, and at which depth.

A blog the opt-out list leaves out (:mod:`.optoutfile`) is never requested (counted
``blogfeeds/opt_out/blog``). Any other is requested when it is new, or known only at a greater hop
depth (:mod:`.depth`), within ``DEPTH_LIMIT``, ``BLOGFEEDS_MAX_BLOGS`` (blogs requested) and its
domain's cap (:mod:`.caps`). A blog read already at a greater depth is not fetched again: its
friends are offered one hop further instead. An address a home page names as its own (canonical,
``og:url``, a moved notice) that the crawl has not seen is requested to confirm it
(:meth:`Admission.claimed`): kept only when :func:`confirms` says one blog, so the node can be the
address the blog prefers even when no friend links it, and a theme's placeholder never becomes a
blog. The books behind it (depths, domain counts) live in this process, or in Redis for every
worker when the Redis frontier is on (:mod:`blogfeeds.frontier.depths`,
:mod:`blogfeeds.frontier.caps`). The spider turns each :class:`Visit` into a request.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from blogfeeds.config import CapsSettings, CrawlSettings
from blogfeeds.crawl.caps import DomainCaps
from blogfeeds.crawl.depth import DepthBook
from blogfeeds.crawl.optoutfile import OptOutFile, opt_out
from blogfeeds.crawl.pathhosts import PathHosts, RedisPathHosts
from blogfeeds.crawl.seen import SeenSet
from blogfeeds.crawl.urls import check_url, crawl_url
from blogfeeds.extract.aliases import (
    BASE,
    CANONICAL,
    ENTRIES,
    MOVED,
    OG_URL,
    Observation,
    claims,
    observation_from,
    observation_json,
    same_blog,
)
from blogfeeds.extract.discovery import Fetch, Fetched, FetchRequest
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.pathblog import prefix_home
from blogfeeds.frontier.caps import RedisDomainCaps
from blogfeeds.frontier.connection import redis_prefix, server
from blogfeeds.frontier.defaults import FrontierKeys
from blogfeeds.frontier.depths import RedisDepthBook
from blogfeeds.frontier.scheduler import redis_enabled

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Visit:
    """A blog's home page to request: ``again`` when it is a copy of a request that the
    duplicate filter has seen (a lower depth, or a link replayed after a worker was killed)."""

    url: str
    blog_id: str
    depth: int
    again: bool = False
    claimed_by: str = ""
    """The observation (JSON) of the home page that names this address as its own: the visit
    confirms it (:func:`confirms`), recorded only then."""


DEFERRED_PER_HOST = 50
DEFERRED_HOSTS = 10_000
"""Bounds of the prefix homes kept to offer again (:meth:`Admission.under_path`)."""
CLAIMS = frozenset({CANONICAL, OG_URL, BASE, MOVED, ENTRIES})
"""The claims :meth:`Admission.claimed` confirms: those naming the address a blog prefers."""


def confirms(claimed_by: str, seen: Observation | None) -> bool:
    """Whether the address observed as ``seen`` is the blog whose observation ``claimed_by``
    named it (:func:`~blogfeeds.extract.aliases.same_blog`)."""
    try:
        return seen is not None and same_blog(observation_from(claimed_by), seen).same
    except ValueError:
        return False


class Admission:
    """The crawl's admission (module doc); one per spider, built by :meth:`from_crawler`."""

    def __init__(
        self,
        stats: Any,
        depths: DepthBook,
        caps: DomainCaps,
        *,
        max_blogs: int = 0,
        depth_limit: int = 0,
        seen_capacity: int = 0,
        verify_claims: int = 0,
        opted_out: OptOutFile | None = None,
        path_hosts: PathHosts | None = None,
    ) -> None:
        self.stats = stats
        self.path_hosts = path_hosts if path_hosts is not None else PathHosts()
        self.opted_out = opted_out
        self.depths = depths
        self.caps = caps
        self.max_blogs = max_blogs
        self.depth_limit = depth_limit
        self.verify_claims = verify_claims
        self.requested = 0  # blogs requested, for BLOGFEEDS_MAX_BLOGS
        self._analysed = SeenSet(seen_capacity)
        self._deferred: dict[str, dict[str, int]] = {}
        """Host identity → prefix homes taken for the host's blog, and their depth."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> Admission:
        crawl = CrawlSettings.from_settings(crawler.settings)
        return cls(
            _Stats(crawler),
            depth_book(crawler),
            domain_caps(crawler),
            max_blogs=crawl.max_blogs,
            depth_limit=crawler.settings.getint("DEPTH_LIMIT"),
            seen_capacity=crawl.seen_capacity,
            verify_claims=crawl.verify_claims,
            opted_out=opt_out(crawler),
            path_hosts=path_hosts(crawler),
        )

    @property
    def full(self) -> bool:
        """``BLOGFEEDS_MAX_BLOGS`` blogs have been requested."""
        return bool(self.max_blogs) and self.requested >= self.max_blogs

    def offer(self, url: str, depth: int, *, recovered: bool = False) -> Iterator[Visit]:
        """The visits a blog reached ``depth`` hops from a seed asks for: its home page when it
        is new or queued at a greater depth; when read already at a greater depth, its friends'
        (one hop further, and so on). A blog beyond a limit is not recorded: a shorter path
        found later still schedules it.

        ``recovered``: the link is on a page a killed worker had in flight; that worker may have
        recorded the blog's depth and died before queueing it, so a blog known at that depth or
        lower is visited again (the shared depth book's download claim drops the copy when
        another one was fetched: :class:`~blogfeeds.crawl.order.StaleRequestMiddleware`)."""
        offers = [(url, depth)]
        while offers:
            url, depth = offers.pop()
            url = crawl_url(url)
            bad = check_url(url)  # a bad port or host: one link must not end the page's offers
            if bad is not None:
                logger.debug("Not a blog to visit: %s", bad)
                self.stats.inc_value("blogfeeds/bad_friend_url")
                continue
            if self.opted_out is not None and url in self.opted_out:
                self.stats.inc_value("blogfeeds/opt_out/blog")
                continue
            bid = self._identity(url)
            best = self.depths.best(bid)
            if best is not None and best <= depth:
                if recovered:
                    yield self._replayed(url, bid, best)
                self._defer(url, bid, depth)
                continue
            if self.depth_limit and depth > self.depth_limit:
                self.stats.inc_value("blogfeeds/beyond_depth_limit")
                continue
            if best is None and self.full:
                self.stats.inc_value("blogfeeds/blog_cap_reached")
                continue
            # BLOGFEEDS_MAX_BLOGS_PER_DOMAIN: a seed is the operator's, never refused (counted)
            if best is None and depth and not self.caps.admits(url):
                continue
            offer = self.depths.offer(bid, depth)
            if offer is None:
                if recovered:
                    yield self._replayed(url, bid, depth)
                continue
            if offer.new:
                self.requested += 1
                self.caps.accepted(url)
                yield Visit(url, bid, depth)
            elif offer.friends is None:  # queued or downloading: this copy supersedes it
                self.stats.inc_value("blogfeeds/depth_lowered/queued")
                yield Visit(url, bid, depth, again=True)
            else:
                self.stats.inc_value("blogfeeds/depth_lowered/read")
                offers.extend((friend, depth + 1) for friend in reversed(offer.friends))

    def claimed(self, seen: Observation, depth: int) -> Iterator[Visit]:
        """Visits confirming the addresses ``seen`` names as its blog's own (:data:`CLAIMS`)
        that no request has reached yet, at most ``BLOGFEEDS_VERIFY_CLAIMS``, at the blog's
        depth; none once ``BLOGFEEDS_MAX_BLOGS`` is reached. Their depth is recorded when
        confirmed (:meth:`marker`), so a friend link to an address that turned out to be
        another site still requests it."""
        if self.full or not self.verify_claims:
            return
        asked = 0
        own = blog_id(seen.home)
        for url in dict.fromkeys(crawl_url(c.target) for c in claims(seen) if c.evidence in CLAIMS):
            if check_url(url) is not None:
                continue
            bid = blog_id(url)
            if bid == own or self.depths.best(bid) is not None or bid in self._analysed:
                continue
            if self.opted_out is not None and url in self.opted_out:
                self.stats.inc_value("blogfeeds/opt_out/blog")
                continue
            self.stats.inc_value("blogfeeds/alias/verify")
            yield Visit(url, bid, depth, again=True, claimed_by=observation_json(seen))
            asked += 1
            if asked >= self.verify_claims:
                return

    def _replayed(self, url: str, bid: str, depth: int) -> Visit:
        self.stats.inc_value("frontier/reoffered")
        return Visit(url, bid, depth, again=True)

    def answered(self, url: str) -> str | None:
        """The blog id of a home page answered at ``url`` (after redirects), or None when a
        redirect led to a blog analysed already (counted). ``ValueError`` when ``url`` names
        no blog."""
        bid = self._identity(url)
        if bid in self._analysed:
            self.stats.inc_value("blogfeeds/duplicate_blog_redirect")
            return None
        return bid

    def _identity(self, url: str) -> str:
        """``url``'s blog id for admission: on a host where a blog under a path was read
        (:meth:`under_path`), a prefix home's path identity, so that another person's blog there
        is requested rather than taken for the first one's."""
        bid = blog_id(url)
        if "/" not in bid:
            found = prefix_home(url)
            if found is not None and found[0] in self.path_hosts:
                return found[1]
        return bid

    def _defer(self, url: str, bid: str, depth: int) -> None:
        """Keep a prefix home taken for its host's blog (``bid``, the host's identity), to be
        offered again if a blog under a path is read on that host (:meth:`under_path`)."""
        if "/" in bid or prefix_home(url) is None:
            return
        waiting = self._deferred.setdefault(bid, {})
        if len(waiting) < DEFERRED_PER_HOST and len(self._deferred) <= DEFERRED_HOSTS:
            waiting.setdefault(url, depth)

    def under_path(self, requested: str, bid: str, depth: int) -> list[Visit]:
        """The home page requested as ``requested`` was read as ``bid``, a blog under a path
        (:func:`~blogfeeds.extract.pathblog.path_blog`) of the host ``requested`` names: the
        host's other prefix homes are requested under their own identity from now on, and this
        blog is known (analysed, at ``depth``) under its own. Returns the visits of the host's
        prefix homes taken for its blog before (in this process)."""
        if bid == requested or "/" not in bid or "/" in requested:
            return []
        self.path_hosts.add(requested)
        self.stats.inc_value("blogfeeds/path_blog")
        if bid not in self._analysed:
            self._analysed.add(bid)
            self.depths.offer(bid, depth)
        waiting = self._deferred.pop(requested, {})
        return [v for url, at in waiting.items() for v in self.offer(url, at)]

    def marker(self, bid: str, depth: int) -> Marker:
        """What marks ``bid`` analysed once its home page is read (:class:`Marker`)."""

        def analysed() -> None:
            self._analysed.add(bid)
            offer = self.depths.offer(bid, depth)  # a redirect made it known here first
            if offer is not None and offer.new:
                self.requested += 1

        return Marker(analysed)

    def read(self, bid: str, depth: int, friends: Sequence[str]) -> int:
        """``bid``'s home page, requested at ``depth``, was read and lists ``friends``: the depth
        to record it at and offer its friends from (lower when a shorter path was found while it
        downloaded). Its friends are recorded first: a shorter path found from now on offers
        them again."""
        return self.depths.read(bid, depth, friends)


class Marker:
    """Marks a blog analysed once, at its extraction's first further request (:meth:`before`)
    or when the extraction returns (a call). Nothing is awaited before that request is made,
    so a redirect to this blog answered while its feeds and friends are fetched is a duplicate;
    a home page that could not be read is not marked."""

    def __init__(self, action: Callable[[], None]) -> None:
        self.action: Callable[[], None] | None = action

    def __call__(self) -> None:
        if self.action is not None:
            self.action()
            self.action = None

    def before(self, fetch: Fetch) -> Fetch:
        """``fetch``, marking when a request is made (not when it is first awaited)."""

        def marking(req: FetchRequest) -> Awaitable[Fetched | None]:
            self()
            return fetch(req)

        return marking


class _Stats:
    """The crawler's stats once the crawl has started (the spider is made before)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    def inc_value(self, key: str) -> None:
        self.crawler.stats.inc_value(key)


_BOOKS: weakref.WeakKeyDictionary[Any, DepthBook] = weakref.WeakKeyDictionary()
_CAPS: weakref.WeakKeyDictionary[Any, DomainCaps] = weakref.WeakKeyDictionary()


def depth_book(crawler: Any) -> DepthBook:
    """The crawl's one depth book (the spider's and the stale-request middleware's): shared in
    Redis when the Redis frontier is on; friends kept when ``DEPTH_LIMIT`` is set."""
    book = _BOOKS.get(crawler)
    if book is None:
        settings = crawler.settings
        capacity = CrawlSettings.from_settings(settings).seen_capacity
        keep = settings.getint("DEPTH_LIMIT") > 0
        if redis_enabled(settings):
            book = RedisDepthBook.from_settings(settings, crawler, capacity, keep_friends=keep)
        else:
            book = DepthBook(capacity, keep_friends=keep)
        _BOOKS[crawler] = book
    return book


def path_hosts(crawler: Any) -> PathHosts:
    """The hosts where a blog under a path was read (:mod:`blogfeeds.crawl.pathhosts`): shared
    in Redis when the Redis frontier is on."""
    settings = crawler.settings
    if redis_enabled(settings):
        spider = getattr(getattr(crawler, "spidercls", None), "name", "blogs")
        key = FrontierKeys(redis_prefix(settings), spider, "").path_hosts
        return RedisPathHosts(lambda: server(settings), key)
    return PathHosts()


def domain_caps(crawler: Any) -> DomainCaps:
    """The crawl's one :class:`~blogfeeds.crawl.caps.DomainCaps`: shared in Redis when the Redis
    frontier is on."""
    caps = _CAPS.get(crawler)
    if caps is None:
        settings = crawler.settings
        cap = CapsSettings.from_settings(settings).max_blogs_per_domain
        capacity = CrawlSettings.from_settings(settings).seen_capacity
        if redis_enabled(settings) and cap:
            spider = getattr(getattr(crawler, "spidercls", None), "name", "blogs")
            key = FrontierKeys(redis_prefix(settings), spider, "").domain_blogs
            connect = lambda: server(settings)  # noqa: E731
            caps = RedisDomainCaps(connect, key, cap, capacity, _Stats(crawler))
        else:
            caps = DomainCaps(cap, capacity, _Stats(crawler))
        _CAPS[crawler] = caps
    return caps
