"""``scrapy crawl blogs``: walk the friend-link graph breadth-first from seed blogs.

Arguments (``-a``): ``start_urls=URL,URL``, ``seeds=FILE`` (one URL a line, or OPML).

For each blog the spider fetches the home page, and when the page links a same-blog blogroll
page (友情链接, links, friends, ...) that one page too (one hop, fetched inside the callback so
that depth counts blog hops only). It yields one :class:`~blogfeeds.items.Blog`, one
:class:`~blogfeeds.items.FriendLink` per friend, and a request for each friend's home page.
All reading of pages happens in :func:`blogfeeds.extract.blog.extract_blog`, whose further
fetches go through the downloader; this module only routes and maps the report to items
(:func:`blogfeeds.report_items.blog_items`).

Depth is the hop distance from the nearest seed, exactly (:mod:`blogfeeds.depths`): a blog
found again through a shorter path has its queued request lowered, or its friends offered again.

Settings: ``BLOGFEEDS_MAX_BLOGS`` (0 = no cap), ``BLOGFEEDS_MAX_BLOGS_PER_DOMAIN``
(:mod:`blogfeeds.caps`), ``BLOGFEEDS_MAX_FRIENDS_PER_PAGE``, ``BLOGFEEDS_MAX_PAGES_PER_BLOG``,
``BLOGFEEDS_FEED_SCORERS``, ``BLOGFEEDS_FRIEND_SCORERS``; ``DEPTH_LIMIT`` bounds the hops
(0 = no limit).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.exceptions import CloseSpider
from scrapy.http import Response, TextResponse
from twisted.python.failure import Failure

from blogfeeds.caps import DomainCaps, domain_caps
from blogfeeds.config import CrawlConfig
from blogfeeds.depths import DepthBook, depth_book
from blogfeeds.extensions.startup import check_settings
from blogfeeds.extract.blog import ExtractConfig, FetchedPage, extract_blog
from blogfeeds.extract.directives import crawl_url
from blogfeeds.extract.discovery import Fetch, Fetched, FetchRequest
from blogfeeds.extract.friends.filters import is_mirror_host
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.page import DecodeError
from blogfeeds.extract.report import BlogReport
from blogfeeds.extract.runner import Run, inline
from blogfeeds.extract.userrules import RuleError
from blogfeeds.failures import failure_reason, failure_status
from blogfeeds.frontier.defaults import RECOVERED_META
from blogfeeds.frontier.spiders import RedisFrontierMixin
from blogfeeds.items import Blog
from blogfeeds.middlewares.ssrf import TargetRefused
from blogfeeds.option import StartupError
from blogfeeds.report_items import blog_items
from blogfeeds.seeds import check_url, load_seeds
from blogfeeds.seen import SeenSet
from blogfeeds.spiders.arguments import warn_unknown_arguments
from blogfeeds.strategies import StaleRequest
from blogfeeds.threads import extract_runner, ranked

logger = logging.getLogger(__name__)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def downloader_fetch(crawler: Any) -> Callable[[FetchRequest], Awaitable[FetchedPage | None]]:
    """The fetch function :func:`~blogfeeds.extract.blog.extract_blog` gets in a crawl: an
    extra page of the current blog (a feed candidate, a friend-link page, a data source)
    through the downloader (robots.txt, redirects, retries and politeness apply), outside the
    scheduler; any status is returned, None on failure."""

    async def fetch(req: FetchRequest) -> FetchedPage | None:
        crawler.stats.inc_value("blogfeeds/extra_page_requests")
        request = scrapy.Request(req.url, headers=req.headers or None, dont_filter=True)
        try:
            response = await crawler.engine.download_async(request)
        except Exception as exc:  # any failure just means "no page"
            logger.debug("Extra page %s failed: %s", req.url, exc)
            crawler.stats.inc_value(f"blogfeeds/extra_page_failed/{failure_status(exc)}")
            return None
        return FetchedPage(
            response.url,
            response.status,
            response_headers(response),
            response.body,
            is_text=isinstance(response, TextResponse),
        )

    return fetch


class _Once:
    """Marks a blog analysed once its home page is read: at its first further request, or when
    its extraction returns. Nothing is awaited before the first request is made, so a redirect
    to the same blog answered while this one's feeds and friends are fetched is a duplicate,
    friends linking it are not requested again, and a home page that could not be read is not
    marked."""

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


def response_headers(response: Response) -> dict[str, str]:
    """Response headers as ``str -> str``, repeated headers joined with ``", "``."""
    return {
        k.decode("latin-1"): b", ".join(v).decode("latin-1") for k, v in response.headers.items()
    }


class BlogsSpider(RedisFrontierMixin, scrapy.Spider):
    name = "blogs"
    frontier_callbacks = frozenset({"parse_home", "home_failed"})
    # The crawl strategy (blogfeeds.strategies) orders blog requests across hosts: one priority
    # queue, not Scrapy's default per-host DownloaderAwarePriorityQueue (a -s setting wins).
    custom_settings = {  # noqa: RUF012 - Scrapy reads it as a class attribute
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue"
    }
    strategy_frontier = True  # StrategyMiddleware applies to this spider
    max_blogs: int = 0
    depth_limit: int = 0
    config: ExtractConfig = ExtractConfig()
    fetch: Fetch
    caps: DomainCaps = DomainCaps(0)
    run: Run = inline

    def __init__(
        self, start_urls: str | None = None, seeds: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        warn_unknown_arguments(kwargs, ("start_urls", "seeds"))
        self.start_urls_arg = start_urls
        self.seeds_arg = seeds
        # Best depth of every blog seen (scheduling-time dedupe) and blog ids analysed; bounded
        # by from_crawler.
        self.depths = DepthBook()
        self._done = SeenSet()
        self._requested = 0  # blogs requested, for BLOGFEEDS_MAX_BLOGS
        # Blogs whose home page was answered, in order: their extraction steps run oldest blog
        # first (blogfeeds.threads.ThreadRunner).
        self._answered = itertools.count(1)

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> BlogsSpider:
        check_settings(crawler.settings)  # StartupError before any of them is read
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        crawl = CrawlConfig.from_settings(settings)
        spider.max_blogs = crawl.max_blogs
        spider.depth_limit = settings.getint("DEPTH_LIMIT")
        spider.depths = depth_book(crawler)
        spider.caps = domain_caps(crawler)
        spider._done = SeenSet(crawl.seen_capacity)
        try:
            spider.config = ExtractConfig.from_settings(settings)
            spider.fetch = downloader_fetch(crawler)
            spider.run = extract_runner(crawler)
        except RuleError as exc:  # before anything opens: one clear line (`scrapy crawl`)
            raise StartupError("BLOGFEEDS_RULES_FILE", str(exc)) from None
        return spider

    async def start(self) -> AsyncIterator[Any]:
        seeds, errors = load_seeds(self.start_urls_arg, self.seeds_arg)
        for error in errors:
            logger.error("Bad seed %s: %s", error.where, error.message)
            self.crawler.stats.inc_value("blogfeeds/bad_seed")
        usable = 0
        for seed in seeds:
            offered = list(self._offer(seed.url, 0))
            if not offered:
                self._seen_seed(seed.url)
            for request in offered:
                usable += 1
                yield request
        # Nothing to crawl (no Redis frontier, no JOBDIR queue to resume): finish reason
        # no_seeds, which `scrapy crawl` turns into exit status 2.
        if not usable and self.frontier() is None and not self._resumed():
            if not seeds and not errors:
                logger.error("No seeds: pass -a start_urls=URL[,URL] or -a seeds=FILE")
            elif seeds:
                logger.error("None of the %d seeds names a blog", len(seeds))
            raise CloseSpider("no_seeds")
        async for request in self.frontier_seeds():  # seeds pushed to Redis (`scrapy seed`)
            yield request

    def _seen_seed(self, url: str) -> None:
        """A seed the Redis frontier has crawled already: it is not fetched again, say so and
        how to re-crawl it (a seed repeated in one crawl without Redis is silently one)."""
        frontier = self.frontier()
        if frontier is None or frontier.keys is None:
            return
        self.crawler.stats.inc_value("blogfeeds/seed_already_crawled")
        logger.info(
            "Seed %s was crawled before by this Redis frontier (keys %s): not fetched again; "
            "`scrapy seed --recrawl %s` crawls it again",
            url,
            frontier.keys.start_urls.rsplit(":", 1)[0] + ":*",
            url,
        )

    def _resumed(self) -> bool:
        """The scheduler holds requests already (a crawl resumed from its ``JOBDIR``)."""
        scheduler = getattr(self.crawler.engine, "scheduler", None)
        return bool(scheduler is not None and scheduler.has_pending_requests())

    def seed_request(self, url: str, meta: dict[str, Any]) -> scrapy.Request | None:
        """A seed popped from the Redis frontier: the blog's home page, like ``-a`` seeds;
        ValueError when ``url`` cannot be a seed (:func:`blogfeeds.seeds.check_url`). A seed
        read already at a greater depth has its friends offered again, outside the scheduler."""
        problem = check_url(url)
        if problem is not None:
            raise ValueError(problem)
        requests = list(self._offer(url, 0, recovered=bool(meta.pop(RECOVERED_META, False))))
        if not requests:
            self._seen_seed(url)
        for extra in requests[1:]:
            self.crawler.engine.crawl(extra)
        return requests[0] if requests else None

    # --- routing ---------------------------------------------------------------------------

    def _offer(self, url: str, depth: int, *, recovered: bool = False) -> Iterator[scrapy.Request]:
        """Requests for a blog reached ``depth`` hops from a seed: its home page when it is new
        or queued at a greater depth; when read already at a greater depth, its friends'
        (one hop further, and so on). Nothing when it is known at that depth or lower, beyond
        ``DEPTH_LIMIT``, over the cap or its domain's cap (:mod:`blogfeeds.caps`). A blog beyond
        a limit is not recorded: a shorter path found later still schedules it.

        ``recovered``: the link is on a page a killed worker had in flight, which may have
        recorded the blog's depth and died before queueing its request; a blog known at that
        depth or lower is then requested again. Not through the dupefilter: the lost request
        may be the copy at a lowered depth of a blog whose older copy the dupefilter has seen
        (and the depth book makes stale). The shared depth book's download claim
        (:class:`~blogfeeds.strategies.StaleRequestMiddleware`) drops the copy when another
        one was fetched or is queued at that depth."""
        offers = [(url, depth)]
        while offers:
            url, depth = offers.pop()
            url = crawl_url(url)  # no credentials, no session ids (blogfeeds.extract.directives)
            bad = check_url(url)  # a bad port or host: one link must not end the page's offers
            if bad is not None:
                logger.debug("Not a blog to visit: %s", bad)
                self.crawler.stats.inc_value("blogfeeds/bad_friend_url")
                continue
            bid = blog_id(url)
            best = self.depths.best(bid)
            if best is not None and best <= depth:
                if recovered:
                    yield self._replayed(url, bid, best)
                continue
            if self.depth_limit and depth > self.depth_limit:
                self.crawler.stats.inc_value("blogfeeds/beyond_depth_limit")
                continue
            if self.max_blogs and self._requested >= self.max_blogs and best is None:
                self.crawler.stats.inc_value("blogfeeds/blog_cap_reached")
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
                self._requested += 1
                self.caps.accepted(url)
                yield self._blog_request(url, bid, depth)
            elif offer.friends is None:  # queued or downloading: this copy supersedes it
                self.crawler.stats.inc_value("blogfeeds/depth_lowered/queued")
                yield self._blog_request(url, bid, depth, dont_filter=True)
            else:
                self.crawler.stats.inc_value("blogfeeds/depth_lowered/read")
                offers.extend((friend, depth + 1) for friend in reversed(offer.friends))

    def _replayed(self, url: str, bid: str, depth: int) -> scrapy.Request:
        self.crawler.stats.inc_value("frontier/reoffered")
        return self._blog_request(url, bid, depth, dont_filter=True)

    def _blog_request(
        self, url: str, bid: str, depth: int, *, dont_filter: bool = False
    ) -> scrapy.Request:
        return scrapy.Request(
            url,
            callback=self.parse_home,
            errback=self.home_failed,
            meta={"blog_id": bid, "depth": depth},
            dont_filter=dont_filter,
        )

    async def parse_home(self, response: Response) -> AsyncIterator[Any]:
        depth = response.meta.get("depth", 0)
        if not isinstance(response, TextResponse):
            self.crawler.stats.inc_value("blogfeeds/not_html")
            kind = response_headers(response).get("Content-Type", "no Content-Type")
            reason = f"not HTML ({kind})"  # as `scrapy inspect` says it
            logger.info("Blog %s failed: not_html (%s)", response.url, reason)
            yield self._failed_blog(response.url, response.meta, "not_html", reason)
            return
        try:
            bid = blog_id(response.url)
        except ValueError as exc:
            yield self._unreadable(response, exc)
            return
        if bid in self._done:  # a redirect led to a blog already analysed
            self.crawler.stats.inc_value("blogfeeds/duplicate_blog_redirect")
            return
        mark = _Once(lambda: self._analysed(bid, depth))
        try:
            report = await extract_blog(
                response.url,
                response.body,
                response_headers(response),
                mark.before(self.fetch),
                self.config,
                run=ranked(self.run, next(self._answered)),
            )
        except (DecodeError, ValueError) as exc:
            yield self._unreadable(response, exc)
            return
        mark()
        self._count(report)
        blog, links = blog_items(report, fetched_at=_now(), depth=depth)
        # the friends are recorded before anything is yielded: a shorter path found from now
        # on offers them again
        blog.depth = depth = self.depths.read(bid, depth, [link.target_url for link in links])
        if not links and is_mirror_host(urlsplit(response.url).hostname or ""):
            self._no_friends_at_an_address(response.url)
        yield blog
        recovered = bool(response.meta.get(RECOVERED_META))
        for link in links:
            yield link
            for request in self._offer(link.target_url, depth + 1, recovered=recovered):
                yield request

    def _no_friends_at_an_address(self, url: str) -> None:
        """Say once why a blogosphere of private IP:port sites has no friend links."""
        self.crawler.stats.inc_value("blogfeeds/no_friends_at_an_address")
        if self.crawler.stats.get_value("blogfeeds/no_friends_at_an_address") == 1:
            logger.warning(
                "Blog %s lists no friends: links to private IP addresses are read as the "
                "blog's own mirrors, and the port is not part of a blog's identity, so blogs "
                "at IP:port addresses are never each other's friends; give each a host name "
                "(docs/crawling.md#trying-it-on-a-local-site)",
                url,
            )

    def _analysed(self, bid: str, depth: int) -> None:
        """``bid``'s home page is read: friends linking it are not requested again (a redirect
        from another blog's URL makes it known here first)."""
        self._done.add(bid)
        offer = self.depths.offer(bid, depth)
        if offer is not None and offer.new:
            self._requested += 1

    def _count(self, report: BlogReport) -> None:
        """The report's counters as stats; its robots directives, unreadable pages and invalid
        URLs (``blogfeeds/invalid_url``) logged."""
        for name, n in report.counters.items():
            self.crawler.stats.inc_value(f"blogfeeds/{name}", n)
        for name in ("noindex", "nofollow"):
            if getattr(report.robots, name):
                logger.info("%s asks %s (%s)", report.url, name, ", ".join(report.robots.sources))
        for page in report.followed:
            if page.outcome == "unreadable":
                logger.warning("Cannot read %s: %s", page.final_url, page.detail)
        for url in report.invalid_urls:
            logger.info("Invalid URL %r on %s: not followed", url, report.friend_source)
        over = report.counters.get("friends_over_cap", 0)
        if over:
            logger.info(
                "%s lists %d friends more than BLOGFEEDS_MAX_FRIENDS_PER_PAGE=%d: not followed",
                report.friend_source or report.url,
                over,
                self.config.max_friends,
            )

    def _unreadable(self, response: Response, exc: Exception) -> Blog:
        self.crawler.stats.inc_value("blogfeeds/decode_error")
        reason = f"cannot read it: {failure_reason(exc)}"
        logger.info("Blog %s failed: decode_error (%s)", response.url, reason)
        return self._failed_blog(response.url, response.meta, "decode_error", reason)

    def home_failed(self, failure: Failure) -> Blog | None:
        request = failure.request  # type: ignore[attr-defined]
        if failure.check(StaleRequest):  # a re-pushed copy went first (blogfeeds.strategies)
            return None
        status, reason = failure_status(failure), failure_reason(failure)
        seed = not request.meta.get("depth") and not request.meta.get("redirect_urls")
        if seed and failure.check(TargetRefused):
            # a seed whose own address the SSRF guard refused says nothing of a blog (a local
            # trial without BLOGFEEDS_ALLOW_PRIVATE_TARGETS): not stored, no node stays behind
            self.crawler.stats.inc_value("blogfeeds/seed_refused")
            logger.warning("Seed %s refused, not stored: %s", request.url, reason)
            return None
        self.crawler.stats.inc_value(f"blogfeeds/blog_failed/{status}")
        logger.info("Blog %s failed: %s (%s)", request.url, status, reason)
        return self._failed_blog(request.url, request.meta, status, reason)

    def _failed_blog(self, url: str, meta: dict[str, Any], status: str, reason: str) -> Blog:
        """The item of a home page that was not read: its status and the reason in the words
        of the log line (stored, and shown on the site's page of the blog)."""
        return Blog(
            blog_id=meta.get("blog_id") or blog_id(url),
            url=url,
            status=status,
            status_reason=reason,
            fetched_at=_now(),
            depth=meta.get("depth", 0),
            activity="dead",  # unreachable (the next answered crawl reads it again)
        )
