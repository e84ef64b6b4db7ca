"""``scrapy crawl blogs``: walk the friend-link graph breadth-first from seed blogs.

Arguments (``-a``): ``start_urls=URL,URL``, ``seeds=FILE`` (one URL a line, or OPML).

For each blog the spider fetches the home page, and when the page links a same-blog blogroll
page (友情链接, links, friends, ...) that one page too (one hop, fetched inside the callback so
that depth counts blog hops only). It yields one :class:`~blogfeeds.items.Blog`, one
:class:`~blogfeeds.items.FriendLink` per friend, and a request for each friend's home page.
All reading of pages happens in :mod:`blogfeeds.extract`; this module only routes.

Settings: ``BLOGFEEDS_MAX_BLOGS`` (0 = no cap), ``BLOGFEEDS_MAX_PAGES_PER_BLOG``,
``BLOGFEEDS_FEED_SCORERS``, ``BLOGFEEDS_FRIEND_SCORERS``; ``DEPTH_LIMIT`` bounds the hops.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import scrapy
from scrapy.exceptions import CloseSpider
from scrapy.http import Response, TextResponse
from twisted.python.failure import Failure

from blogfeeds.extensions.startup import StartupError, check_settings
from blogfeeds.extract.blog import PageAnalysis, analyze_page
from blogfeeds.extract.directives import RobotsDirectives, crawl_url, robots_directives
from blogfeeds.extract.discovery import (
    DiscoveryConfig,
    Fetched,
    FetchRequest,
    find_feeds,
    to_feed_info,
)
from blogfeeds.extract.friends import Friend, friends_from_data_source
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.metadata import ABSTRACT_CHARS, PageMetadata
from blogfeeds.extract.page import DecodeError
from blogfeeds.extract.scoring import build_rules
from blogfeeds.extract.userrules import RuleError, RuleSet, load_rules
from blogfeeds.failures import failure_status
from blogfeeds.frontier.spiders import RedisFrontierMixin
from blogfeeds.items import Blog, FriendLink
from blogfeeds.seeds import check_url, load_seeds
from blogfeeds.seen import SeenSet
from blogfeeds.strategies import StaleRequest

logger = logging.getLogger(__name__)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _headers(response: Response) -> dict[str, str]:
    """Response headers as ``str -> str``, repeated headers joined with ``", "``."""
    return {
        k.decode("latin-1"): b", ".join(v).decode("latin-1") for k, v in response.headers.items()
    }


class BlogsSpider(RedisFrontierMixin, scrapy.Spider):
    name = "blogs"
    # The crawl strategy (blogfeeds.strategies) orders blog requests across hosts: one priority
    # queue, not Scrapy's default per-host DownloaderAwarePriorityQueue (a -s setting wins).
    custom_settings = {  # noqa: RUF012 - Scrapy reads it as a class attribute
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue"
    }
    strategy_frontier = True  # StrategyMiddleware applies to this spider
    max_blogs: int = 0
    depth_limit: int = 0
    max_pages: int = 3
    discovery: DiscoveryConfig
    friend_rules: list[Any] | None = None
    friend_ruleset: str = "blogfeeds"
    user_rules: RuleSet | None = None
    max_friends: int = 500

    def __init__(
        self, start_urls: str | None = None, seeds: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.start_urls_arg = start_urls
        self.seeds_arg = seeds
        # Blog ids requested (scheduling-time dedupe) and analysed; bounded by from_crawler.
        self._scheduled = SeenSet()
        self._done = SeenSet()
        # trafilatura warns "discarding data" for every page without main text: not news here.
        logging.getLogger("trafilatura").setLevel(logging.ERROR)

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> BlogsSpider:
        check_settings(crawler.settings)  # StartupError before any of them is read
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        spider.max_blogs = settings.getint("BLOGFEEDS_MAX_BLOGS")
        spider.depth_limit = settings.getint("DEPTH_LIMIT")
        capacity = settings.getint("BLOGFEEDS_SEEN_CAPACITY")
        spider._scheduled, spider._done = SeenSet(capacity), SeenSet(capacity)
        spider.max_pages = max(1, settings.getint("BLOGFEEDS_MAX_PAGES_PER_BLOG", 3))
        spider.discovery = DiscoveryConfig.from_settings(settings)
        spider.friend_rules = build_rules(settings.getdict("BLOGFEEDS_FRIEND_SCORERS")) or None
        spider.friend_ruleset = settings.get("BLOGFEEDS_FRIEND_RULESET", "blogfeeds")
        spider.max_friends = max(0, settings.getint("BLOGFEEDS_MAX_FRIENDS_PER_PAGE", 500))
        rules_file = settings.get("BLOGFEEDS_RULES_FILE")
        try:
            spider.user_rules = load_rules(rules_file) if rules_file else None
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
            request = self._blog_request(seed.url, depth=0)
            if request is not None:
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

    def _resumed(self) -> bool:
        """The scheduler holds requests already (a crawl resumed from its ``JOBDIR``)."""
        scheduler = getattr(self.crawler.engine, "scheduler", None)
        return bool(scheduler is not None and scheduler.has_pending_requests())

    def seed_request(self, url: str, meta: dict[str, Any]) -> scrapy.Request | None:
        """A seed popped from the Redis frontier: the blog's home page, like ``-a`` seeds;
        ValueError when ``url`` cannot be a seed (:func:`blogfeeds.seeds.check_url`)."""
        problem = check_url(url)
        if problem is not None:
            raise ValueError(problem)
        return self._blog_request(url, depth=0)

    # --- routing ---------------------------------------------------------------------------

    def _blog_request(self, url: str, depth: int | None = None) -> scrapy.Request | None:
        """A request for a blog's home page ``depth`` hops from a seed, or None when it is
        known, beyond ``DEPTH_LIMIT`` or over the cap. A blog beyond the limit is not marked
        as known: a shorter path found later still schedules it."""
        url = crawl_url(url)  # no credentials, no session ids (blogfeeds.extract.directives)
        try:
            bid = blog_id(url)
        except ValueError:
            return None
        if bid in self._scheduled:
            return None
        if self.depth_limit and depth is not None and depth > self.depth_limit:
            self.crawler.stats.inc_value("blogfeeds/beyond_depth_limit")
            return None
        if self.max_blogs and self._scheduled.added >= self.max_blogs:
            self.crawler.stats.inc_value("blogfeeds/blog_cap_reached")
            return None
        self._scheduled.add(bid)
        meta: dict[str, Any] = {"blog_id": bid}
        if depth is not None:
            meta["depth"] = depth
        return scrapy.Request(url, callback=self.parse_home, errback=self.home_failed, meta=meta)

    async def parse_home(self, response: Response) -> AsyncIterator[Any]:
        analysis = self._analyze(response)
        if analysis is None:
            yield self._failed_blog(
                response.url,
                response.meta,
                "not_html" if not isinstance(response, TextResponse) else "decode_error",
            )
            return
        if analysis.blog_id in self._done:  # a redirect led to a blog already analysed
            self.crawler.stats.inc_value("blogfeeds/duplicate_blog_redirect")
            return
        self._done.add(analysis.blog_id)
        self._scheduled.add(analysis.blog_id)
        for what, rule in analysis.rules.items():  # user rules that fired (BLOGFEEDS_RULES_FILE)
            self.crawler.stats.inc_value(f"blogfeeds/rule_fired/{rule}/{what}")

        robots = self._robots(analysis)
        feeds = []
        if not robots.noindex and "feed" in analysis.rules:  # a user rule names the feed
            feeds = [to_feed_info(feed) for feed in analysis.feeds]
        elif not robots.noindex:  # noindex: keep the blog's identity, not its content
            report = await find_feeds(
                analysis.page, self._fetch_for_discovery, config=self.discovery
            )
            self.crawler.stats.inc_value("blogfeeds/feed_discovery/requests", report.requests)
            if report.budget_exhausted:
                self.crawler.stats.inc_value("blogfeeds/feed_discovery/budget_exhausted")
            feeds = [to_feed_info(feed) for feed in report.feeds]
        friends, friend_source, container_score = (
            ([], response.url, 0.0) if robots.nofollow else await self._friends(analysis)
        )
        meta = PageMetadata("", "", "", "") if robots.noindex else analysis.metadata
        yield Blog(
            blog_id=analysis.blog_id,
            url=response.url,
            title=meta.title,
            abstract=meta.abstract,
            language=meta.language,
            generator=meta.generator,
            feed_url=feeds[0].url if feeds else None,
            feeds=feeds,
            friend_count=len(friends),
            status="noindex" if robots.noindex else "ok" if feeds else "no_feed",
            fetched_at=_now(),
            depth=response.meta.get("depth", 0),
        )
        for friend in friends:
            try:
                target_id = blog_id(friend.url)
            except ValueError:
                continue
            yield FriendLink(
                source_blog_id=analysis.blog_id,
                target_url=friend.url,
                target_blog_id=target_id,
                name=friend.name,
                container_score=round(container_score, 3),  # no float noise (2999.9999...)
                source_url=friend_source,
            )
            request = self._blog_request(friend.url, depth=response.meta.get("depth", 0) + 1)
            if request is not None:
                yield request

    def _robots(self, analysis: PageAnalysis) -> RobotsDirectives:
        """The page's noindex/nofollow (meta robots, X-Robots-Tag), counted and logged."""
        robots = robots_directives(analysis.page)
        for name in ("noindex", "nofollow"):
            if getattr(robots, name):
                self.crawler.stats.inc_value(f"blogfeeds/robots/{name}")
                logger.info("%s asks %s (%s)", analysis.page.url, name, ", ".join(robots.sources))
        return robots

    async def _friends(self, analysis: PageAnalysis) -> tuple[list[Friend], str, float]:
        """Friend links from the blog's blogroll page if it has one, else from the home page,
        plus the machine-readable lists (OPML, JSON) that page points to.

        Returns ``(friends, page they were read from, container score)``.
        """
        found, source = analysis.friends, analysis.page.url
        for url in analysis.friend_pages[: self.max_pages - 1]:
            response = await self._fetch(url)
            # a friend-link page: its friends are read, its abstract never (no trafilatura)
            sub = self._analyze(response, abstract=False) if response is not None else None
            if sub is not None and robots_directives(sub.page).nofollow:
                self.crawler.stats.inc_value("blogfeeds/robots/nofollow_friend_page")
                continue
            if sub is not None and (sub.friends.friends or sub.friends.data_sources):
                self.crawler.stats.inc_value("blogfeeds/friend_page_used")
                found, source = sub.friends, sub.page.url
                break
        friends = list(found.friends)
        known = {f.url for f in friends}
        for url in found.data_sources[: self.max_pages]:
            response = await self._fetch(url)
            if response is None:
                continue
            content_type = _headers(response).get("Content-Type", "")
            listed = friends_from_data_source(response.url, response.body, content_type)
            self.crawler.stats.inc_value("blogfeeds/data_source_friends", len(listed))
            for friend in listed:
                if friend.url not in known:
                    known.add(friend.url)
                    friends.append(friend)
        if len(friends) > self.max_friends:  # BLOGFEEDS_MAX_FRIENDS_PER_PAGE
            self.crawler.stats.inc_value(
                "blogfeeds/friends_over_cap", len(friends) - self.max_friends
            )
            friends = friends[: self.max_friends]
        return friends, source, found.best_score

    async def _download(self, url: str, headers: dict[str, str] | None = None) -> Response | None:
        """Fetch an extra page of the current blog through the downloader (robots.txt,
        redirects, retries and politeness apply), outside the scheduler; None on failure."""
        self.crawler.stats.inc_value("blogfeeds/extra_page_requests")
        request = scrapy.Request(url, headers=headers, dont_filter=True)
        try:
            return await self.crawler.engine.download_async(request)
        except Exception as exc:  # any failure just means "no page"
            logger.debug("Extra page %s failed: %s", url, exc)
            self.crawler.stats.inc_value(f"blogfeeds/extra_page_failed/{failure_status(exc)}")
            return None

    async def _fetch(self, url: str) -> Response | None:
        """A same-blog page (friend-link page), or None unless it answered 2xx."""
        response = await self._download(url)
        if response is None or not 200 <= response.status < 300:
            return None
        return response

    async def _fetch_for_discovery(self, req: FetchRequest) -> Fetched | None:
        """The fetcher :func:`find_feeds` validates candidates with (any status returned)."""
        response = await self._download(req.url, req.headers)
        if response is None:
            return None
        return Fetched(response.url, response.status, _headers(response), response.body)

    def _analyze(self, response: Response, abstract: bool = True) -> PageAnalysis | None:
        if not isinstance(response, TextResponse):
            self.crawler.stats.inc_value("blogfeeds/not_html")
            return None
        try:
            return analyze_page(
                response.url,
                response.body,
                _headers(response),
                friend_rules=self.friend_rules,
                friend_ruleset=self.friend_ruleset,
                page_feeds=False,
                user_rules=self.user_rules,
                abstract_chars=ABSTRACT_CHARS if abstract else 0,
            )
        except (DecodeError, ValueError) as exc:
            logger.warning("Cannot read %s: %s", response.url, exc)
            self.crawler.stats.inc_value("blogfeeds/decode_error")
            return None

    def home_failed(self, failure: Failure) -> Blog | None:
        request = failure.request  # type: ignore[attr-defined]
        if failure.check(StaleRequest):  # a re-pushed copy went first (blogfeeds.strategies)
            return None
        status = failure_status(failure)
        self.crawler.stats.inc_value(f"blogfeeds/blog_failed/{status}")
        logger.info("Blog %s failed: %s", request.url, status)
        return self._failed_blog(request.url, request.meta, status)

    def _failed_blog(self, url: str, meta: dict[str, Any], status: str) -> Blog:
        return Blog(
            blog_id=meta.get("blog_id") or blog_id(url),
            url=url,
            status=status,
            fetched_at=_now(),
            depth=meta.get("depth", 0),
        )
