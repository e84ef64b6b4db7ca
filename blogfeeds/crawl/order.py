"""Crawl strategies: the order in which ``scrapy crawl blogs`` walks its frontier of blogs.

``BLOGFEEDS_STRATEGY`` names one; each is a priority for a blog's home-page request, higher
first, so it works with Scrapy's scheduler and scrapy-redis's priority queue alike: ``bfs``
(``-depth``, the default), ``dfs`` (``+depth``), ``backlinks`` (in-degree so far; Cho,
Garcia-Molina & Page, WWW 1998), ``opic`` (On-line Page Importance Computation; Abiteboul, Preda
& Cobena, WWW 2003) and ``big-site-first`` (hosts with most pending blogs first; Castillo et
al., WebMedia 2004). docs/strategies.md explains each.

Raising a queued request's priority is a *re-push*: a copy with the higher priority,
``dont_filter=True`` and a fresh token in ``meta[TOKEN_META]``; whichever copy is dispatched
second is stale and :class:`StaleRequestMiddleware` drops it before download. A shorter path to
a queued blog is a re-push too (:mod:`blogfeeds.crawl.depth`). :class:`CrawlOrder` is the pure
bookkeeping; :class:`StrategyMiddleware` and :class:`StaleRequestMiddleware` apply it.
"""

from __future__ import annotations

import logging
import uuid
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware
from scrapy.utils.asyncio import create_looping_call

from blogfeeds.config import STRATEGIES, CrawlSettings, StrategySettings
from blogfeeds.crawl.admission import depth_book
from blogfeeds.crawl.depth import DepthBook
from blogfeeds.crawl.seen import SeenMap
from blogfeeds.frontier.defaults import TOKEN_META
from blogfeeds.items import Blog, FriendLink

logger = logging.getLogger(__name__)

INITIAL_CASH = 1.0
"""OPIC cash every blog starts with."""

CASH_SCALE = 1000
"""OPIC priorities are ``round(cash * CASH_SCALE)`` (Scrapy priorities are integers)."""

OPEN_SOURCES = 4096
"""Crawled blogs whose friend links are still matched (more than the requests in flight)."""

RAISING = frozenset({"backlinks", "opic", "big-site-first"})
"""Strategies whose priorities rise while a blog is queued (re-pushes: module doc); the
frontier keeps their queued requests in memory to copy them."""


def site_of(url: str) -> str:
    """The host name of ``url``, lower-cased, a leading ``www.`` dropped (``""`` if none)."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return host.removeprefix("www.")


@dataclass(slots=True)  # one per queued blog: no instance dict
class _Pending:
    priority: int
    depth: int
    host: str
    token: str
    request: Any = None


class CrawlOrder:
    """The order's bookkeeping under one strategy (one per crawl process).

    Feed it events: :meth:`push` for each new blog queued, :meth:`crawled` for each blog whose
    home page was read (with its number of friends), then :meth:`linked` for each of its friend
    links, :meth:`dispatch` when a queued request leaves the queue. After each event,
    :meth:`raised` lists the queued blogs whose priority must rise (re-push them). State lives
    in memory: O(blogs queued) for every strategy (about 0.25 KB each), O(blogs seen) for the
    in-degrees and cash of ``backlinks`` and ``opic``; the fetched copies are remembered for the
    last ``capacity`` blogs (``BLOGFEEDS_SEEN_CAPACITY``; 0 = all). A resumed crawl
    (``JOBDIR``, Redis) starts the counts afresh. Raises ``ValueError`` on an unknown strategy.
    """

    def __init__(self, strategy: str = "bfs", capacity: int = 0) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(
                f"unknown crawl strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}"
            )
        self.strategy = strategy
        self.pending: dict[str, _Pending] = {}
        """Queued blogs not dispatched yet, by blog id."""
        self.dispatched = SeenMap(capacity)
        """Blog id -> token of the copy that went to the downloader (the last ``capacity`` at
        least: ``BLOGFEEDS_SEEN_CAPACITY``; a stale copy of a blog forgotten is fetched)."""
        self.indegree: dict[str, int] = {}
        self.cash: dict[str, float] = {}
        self.history: dict[str, float] = {}
        """OPIC: cash each crawled blog has had (its importance, unnormalised)."""
        self.host_pending: dict[str, int] = {}
        self._host_pushed_at: dict[str, int] = {}
        self._host_blogs: dict[str, set[str]] = {}
        self._raised: dict[str, int] = {}
        # Recently crawled sources: (OPIC share per link, targets counted). Several blogs' output
        # can interleave (concurrent responses), so links are matched by source, not by order.
        self._sources: OrderedDict[str, tuple[float, set[str]]] = OrderedDict()
        self._prefix = uuid.uuid4().hex[:8]
        self._counter = 0
        self.repushed = 0
        self.stale = 0

    def __len__(self) -> int:
        """Blogs queued and not dispatched yet (the frontier size)."""
        return len(self.pending)

    def _token(self) -> str:
        self._counter += 1
        return f"{self._prefix}-{self._counter}"

    def priority(self, blog: str, depth: int = 0, host: str = "") -> int:
        """The strategy's priority for ``blog`` now (higher is fetched first)."""
        if self.strategy == "bfs":
            return -depth
        if self.strategy == "dfs":
            return depth
        if self.strategy == "backlinks":
            return self.indegree.get(blog, 0)
        if self.strategy == "opic":
            return round(self.cash.get(blog, INITIAL_CASH) * CASH_SCALE)
        return self.host_pending.get(host, 0)

    def push(self, blog: str, *, depth: int = 0, url: str = "", request: Any = None) -> str:
        """Register a newly queued ``blog`` (``url`` names its host) and return its token;
        the priority to queue it with is then ``self.pending[blog].priority``. A blog queued or
        dispatched already gets a new copy (a shorter path to it: :mod:`blogfeeds.crawl.depth`)
        whose token makes the earlier queued copy stale; host counts are not counted twice."""
        host = site_of(url) if url and self.strategy == "big-site-first" else ""
        again = blog in self.pending or blog in self.dispatched
        if self.strategy == "big-site-first" and not again:
            count = self.host_pending.get(host, 0) + 1
            self.host_pending[host] = count
            self._host_blogs.setdefault(host, set()).add(blog)
            if count >= 2 * self._host_pushed_at.get(host, 0):
                self._host_pushed_at[host] = count
                for other in self._host_blogs[host]:
                    if other != blog and other in self.pending:
                        self._raise(other, count)
        token = self._token()
        # bfs and dfs never raise a queued priority, so they keep no request: a JOBDIR's disk
        # queue then holds the only copy of a queued request (not memory)
        keep = request if self.strategy in RAISING else None
        self.pending[blog] = _Pending(self.priority(blog, depth, host), depth, host, token, keep)
        return token

    def crawled(self, blog: str, friends: int) -> None:
        """``blog``'s home page was read; it lists ``friends`` friends (next: :meth:`linked`)."""
        share = 0.0
        if self.strategy == "opic":
            cash = self.cash.get(blog, INITIAL_CASH)
            self.history[blog] = self.history.get(blog, 0.0) + cash
            self.cash[blog] = 0.0
            share = cash / friends if friends > 0 else 0.0
        self._sources[blog] = (share, set())
        self._sources.move_to_end(blog)
        while len(self._sources) > OPEN_SOURCES:
            self._sources.popitem(last=False)

    def linked(self, source: str, target: str) -> None:
        """Crawled blog ``source`` lists ``target`` (each pair counts once per crawl of source;
        a link from a source not announced by :meth:`crawled` is ignored)."""
        opened = self._sources.get(source)
        if opened is None or target == source or target in opened[1]:
            return
        opened[1].add(target)
        if self.strategy == "backlinks":
            self.indegree[target] = self.indegree.get(target, 0) + 1
        elif self.strategy == "opic":
            self.cash[target] = self.cash.get(target, INITIAL_CASH) + opened[0]
        else:
            return
        entry = self.pending.get(target)
        if entry is not None:
            new = self.priority(target, entry.depth, entry.host)
            if new > entry.priority:
                self._raise(target, new)

    def _raise(self, blog: str, priority: int) -> None:
        self._raised[blog] = max(priority, self._raised.get(blog, priority))

    def raised(self) -> list[tuple[str, int, str]]:
        """Queued blogs to re-push since the last call: ``(blog, new priority, new token)``."""
        out = []
        for blog, priority in self._raised.items():
            entry = self.pending.get(blog)
            if entry is None or priority <= entry.priority:
                continue
            entry.priority, entry.token = priority, self._token()
            out.append((blog, priority, entry.token))
        self._raised.clear()
        self.repushed += len(out)
        return out

    def dispatch(self, blog: str, token: str, claim: Callable[[], bool] | None = None) -> bool:
        """A request for ``blog`` with ``token`` leaves the queue: True to fetch it, False when
        it is a stale copy (an older push of a blog re-pushed since, or a copy of a blog
        already fetched). A first copy pushed by another process (a Redis worker, whose
        tokens have another prefix) is fetched unless ``claim`` (asked last, when given: the
        workers' shared say, :class:`blogfeeds.frontier.depths.RedisDepthBook`) refuses it."""
        fetched = self.dispatched.get(blog)
        entry = self.pending.get(blog)
        if fetched is not None:
            ok = fetched == token  # a retry or redirect of the copy that was fetched
        else:  # stale: a copy this process pushed and has re-pushed since
            ours = token.startswith(f"{self._prefix}-")
            ok = entry is None or entry.token == token or not ours
            ok = ok and (claim is None or claim())
        if not ok:
            self.stale += 1
            if entry is not None and entry.token == token:  # its last copy: nothing pending
                if fetched is None:  # fetched by another worker
                    self._settle(blog)
                else:  # a copy pushed after the blog was dispatched (host not counted)
                    del self.pending[blog]
            return False
        if fetched is None:
            self.dispatched.put(blog, token)
            self._settle(blog)
        return True

    def dropped(self, blog: str, token: str) -> None:
        """The scheduler refused the copy of ``blog`` with ``token`` (its duplicate filter: a
        resumed ``JOBDIR`` crawl offers again what its earlier run queued): not pending."""
        entry = self.pending.get(blog)
        if entry is not None and entry.token == token:
            self._settle(blog)

    def _settle(self, blog: str) -> None:
        """``blog`` leaves the pending blogs (and its host's count)."""
        entry = self.pending.pop(blog, None)
        if entry is not None and self.strategy == "big-site-first":
            left = self.host_pending.get(entry.host, 1) - 1
            self._host_blogs.get(entry.host, set()).discard(blog)
            if left > 0:
                self.host_pending[entry.host] = left
                self._host_pushed_at[entry.host] = min(
                    self._host_pushed_at.get(entry.host, 0), left
                )
            else:
                self.host_pending.pop(entry.host, None)
                self._host_pushed_at.pop(entry.host, None)
                self._host_blogs.pop(entry.host, None)


class StaleRequest(IgnoreRequest):
    """A queued copy of a blog's request made obsolete by a re-push (never downloaded)."""


_ORDERS: weakref.WeakKeyDictionary[Any, CrawlOrder] = weakref.WeakKeyDictionary()


def crawl_order(crawler: Any) -> CrawlOrder:
    """The crawl's one :class:`CrawlOrder` (shared by both middlewares), built from
    ``BLOGFEEDS_STRATEGY`` on first use; ``StartupError`` on an unknown strategy."""
    order = _ORDERS.get(crawler)
    if order is None:
        strategy = StrategySettings.from_settings(crawler.settings).strategy
        capacity = CrawlSettings.from_settings(crawler.settings).seen_capacity
        order = _ORDERS[crawler] = CrawlOrder(strategy, capacity)
    return order


def _require_blogs_spider(crawler: Any) -> None:
    """``NotConfigured`` unless the spider opts in (``uses_crawl_order = True``: ``blogs``)."""
    if not getattr(crawler.spidercls, "uses_crawl_order", False):
        # no message: Scrapy logs a NotConfigured reason at WARNING, and this is expected
        raise NotConfigured


class StrategyMiddleware(BaseSpiderMiddleware):
    """Spider middleware: sets the priority of every blog home-page request by the strategy
    and re-pushes queued blogs whose priority rose.

    Order it below ``DepthMiddleware`` (900) and ``UrlLengthMiddleware`` (800) in
    ``SPIDER_MIDDLEWARES``, so that it sees the depth and only requests that will be queued;
    its priority overrides ``DEPTH_PRIORITY``'s for blog requests. Settings:
    ``BLOGFEEDS_STRATEGY`` (one of :data:`STRATEGIES`), ``BLOGFEEDS_STRATEGY_LOG_INTERVAL``
    (seconds between frontier-size log lines; 0 = only at open and close).
    """

    def __init__(self, crawler: Any) -> None:
        _require_blogs_spider(crawler)
        super().__init__(crawler)
        self.order = crawl_order(crawler)
        self.interval = StrategySettings.from_settings(crawler.settings).log_interval
        self._task: Any = None
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self.request_dropped, signal=signals.request_dropped)

    def request_dropped(self, request: Request) -> None:
        blog, token = request.meta.get("blog_id"), request.meta.get(TOKEN_META)
        if blog and token:
            self.order.dropped(blog, str(token))

    def spider_opened(self, spider: Any) -> None:
        self.crawler.stats.set_value("blogfeeds/strategy", self.order.strategy)
        logger.info("Crawl strategy: %s", self.order.strategy)
        queue = str(self.crawler.settings.get("SCHEDULER_PRIORITY_QUEUE", ""))
        scheduler = str(self.crawler.settings.get("SCHEDULER", ""))
        if queue.endswith("DownloaderAwarePriorityQueue") and "redis" not in scheduler:
            logger.warning(
                "SCHEDULER_PRIORITY_QUEUE is %s: it takes hosts in turn, so the %s strategy "
                "only orders blogs within a host; use scrapy.pqueues.ScrapyPriorityQueue",
                queue,
                self.order.strategy,
            )
        if self.interval > 0:
            self._task = create_looping_call(self.log_frontier)
            self._task.start(self.interval, now=False)

    def spider_closed(self, spider: Any) -> None:
        if self._task is not None and self._task.running:
            self._task.stop()
        self.log_frontier()

    def log_frontier(self) -> None:
        f = self.order
        stats = self.crawler.stats
        stats.set_value("blogfeeds/frontier/pending", len(f))
        stats.set_value("blogfeeds/frontier/repushed", f.repushed)
        stats.set_value("blogfeeds/frontier/stale_dropped", f.stale)
        logger.info(
            "Strategy %s: frontier %d blogs queued, %d fetched; %d re-pushed, %d stale dropped",
            f.strategy,
            len(f),
            f.dispatched.added,
            f.repushed,
            f.stale,
        )

    # --- output processing ------------------------------------------------------------------

    def _request(self, request: Request) -> Request:
        blog = request.meta.get("blog_id")
        if not blog or TOKEN_META in request.meta:
            return request
        depth = int(request.meta.get("depth", 0))
        request.meta[TOKEN_META] = self.order.push(
            blog, depth=depth, url=request.url, request=request
        )
        request.priority = self.order.pending[blog].priority
        return request

    def _item(self, item: Any) -> None:
        if isinstance(item, Blog):
            self.order.crawled(item.blog_id, item.friend_count)
        elif isinstance(item, FriendLink):
            self.order.linked(item.source_blog_id, item.target_blog_id)

    def _process(self, obj: Any) -> Iterator[Any]:
        """``obj`` (priority set, if a blog request), then the re-pushes it caused."""
        if isinstance(obj, Request):
            yield self._request(obj)
        else:
            self._item(obj)
            yield obj
        for blog, priority, token in self.order.raised():
            original = self.order.pending[blog].request
            if original is None:
                continue
            yield original.replace(
                priority=priority, dont_filter=True, meta={**original.meta, TOKEN_META: token}
            )

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for obj in start:
            for out in self._process(obj):
                yield out

    def process_spider_output(
        self, response: Any, result: Iterable[Any], spider: Any = None
    ) -> Iterator[Any]:
        for obj in result:
            yield from self._process(obj)

    async def process_spider_output_async(
        self, response: Any, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        async for obj in result:
            for out in self._process(obj):
                yield out


class StaleRequestMiddleware:
    """Downloader middleware: drops a stale copy of a re-pushed blog request before it is
    downloaded (:class:`StaleRequest`, counted in ``blogfeeds/frontier/stale_dropped``).

    Order it before ``RobotsTxtMiddleware`` (100) in ``DOWNLOADER_MIDDLEWARES``.
    """

    def __init__(self, crawler: Any, order: CrawlOrder, depths: DepthBook | None = None) -> None:
        self.crawler = crawler
        self.order = order
        self.depths = depths or DepthBook()

    @classmethod
    def from_crawler(cls, crawler: Any) -> StaleRequestMiddleware:
        _require_blogs_spider(crawler)
        return cls(crawler, crawl_order(crawler), depth_book(crawler))

    def process_request(self, request: Request) -> None:
        blog, token = request.meta.get("blog_id"), request.meta.get(TOKEN_META)
        if not blog or not token:
            return
        depth = int(request.meta.get("depth", 0))
        claim = lambda: self.depths.claim(blog, depth, str(token))  # noqa: E731
        if not self.order.dispatch(blog, str(token), claim):
            raise StaleRequest(f"stale copy of {blog}: a re-push or an earlier copy went first")
