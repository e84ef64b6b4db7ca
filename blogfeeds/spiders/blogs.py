"""``scrapy crawl blogs``: walk the friend-link graph breadth-first from seed blogs.

Arguments (``-a``): ``start_urls=URL,URL``, ``seeds=FILE`` (one URL a line, or OPML),
``recheck=due|all`` (re-read the stored blogs instead: :mod:`blogfeeds.crawl.checks`).

The spider routes: a home page answered goes to :func:`blogfeeds.crawl.fetch.read_home` (the
extraction, whose further pages are fetched through the downloader), its report becomes one
:class:`~blogfeeds.items.Blog` and a :class:`~blogfeeds.items.FriendLink` per friend
(:func:`blogfeeds.report_items.blog_items`), and each friend is offered to the crawl's
admission (:mod:`blogfeeds.crawl.admission`: depth, caps, ``BLOGFEEDS_MAX_BLOGS``), whose
visits become requests. The crawl order is :mod:`blogfeeds.crawl.order`'s. A blog of the
opt-out list (:mod:`blogfeeds.crawl.optoutfile`) yields nothing, and a friend link to one is
dropped (counted ``blogfeeds/opt_out/friend_link``): not even the edge is stored, nor a page's
claim that it is another address of the page's blog (``blogfeeds/opt_out/claim``).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import scrapy
from scrapy.exceptions import CloseSpider
from scrapy.http import Response
from twisted.python.failure import Failure

from blogfeeds.crawl.admission import Admission, Visit, confirms
from blogfeeds.crawl.checks import (
    NOT_MODIFIED,
    Recheck,
    check,
    failed_check,
    in_its_place,
    moved_check,
    not_modified_check,
    recheck_meta,
    same_page_check,
    unread_check,
    validators,
)
from blogfeeds.crawl.fetch import (
    HomeReader,
    Unread,
    fetch_failed,
    redirects,
    refused_seed,
    unreadable,
)
from blogfeeds.crawl.optoutfile import OptedOut, OptOutFile, opt_out
from blogfeeds.crawl.order import StaleRequest
from blogfeeds.crawl.seeds import check_url, load_seeds
from blogfeeds.extensions.startup import check_settings
from blogfeeds.frontier.defaults import RECOVERED_META
from blogfeeds.frontier.spiders import RedisFrontierMixin
from blogfeeds.items import Blog, FriendLink
from blogfeeds.report_items import address_item, blog_items
from blogfeeds.spiders.arguments import warn_unknown_arguments

logger = logging.getLogger(__name__)


CLAIMED_BY = "blogfeeds_claimed_by"
"""Request meta: the observation of the page claiming the address requested (JSON)."""


def _same(fetch: Any) -> Any:
    return fetch


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class BlogsSpider(RedisFrontierMixin, scrapy.Spider):
    name = "blogs"
    frontier_callbacks = frozenset({"parse_home", "home_failed"})
    # The crawl strategy (blogfeeds.crawl.order) orders blog requests across hosts: one priority
    # queue, not Scrapy's default per-host DownloaderAwarePriorityQueue (a -s setting wins).
    custom_settings = {  # noqa: RUF012 - Scrapy reads it as a class attribute
        "SCHEDULER_PRIORITY_QUEUE": "scrapy.pqueues.ScrapyPriorityQueue"
    }
    uses_crawl_order = True  # StrategyMiddleware applies to this spider
    admission: Admission
    reader: HomeReader
    opted_out: OptOutFile | None = None

    rechecker: Recheck | None = None

    def __init__(
        self,
        start_urls: str | None = None,
        seeds: str | None = None,
        recheck: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        warn_unknown_arguments(kwargs, ("start_urls", "seeds", "recheck"))
        self.start_urls_arg = start_urls
        self.seeds_arg = seeds
        self.recheck_arg = recheck

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> BlogsSpider:
        check_settings(crawler.settings)  # StartupError before any of them is read
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.admission = Admission.from_crawler(crawler)
        spider.reader = HomeReader.from_crawler(crawler)
        spider.opted_out = opt_out(crawler)
        if spider.recheck_arg is not None:
            spider.rechecker = Recheck(spider.recheck_arg, crawler)
        return spider

    async def start(self) -> AsyncIterator[Any]:
        if self.rechecker is not None:
            for request in self._recheck_requests(self.rechecker):
                yield request
            return
        seeds, errors = load_seeds(self.start_urls_arg, self.seeds_arg)
        for error in errors:
            logger.error("Bad seed %s: %s", error.where, error.message)
            self.crawler.stats.inc_value("blogfeeds/bad_seed")
        usable = left_out = 0
        for seed in seeds:
            if self._left_out(seed.url):
                logger.info(
                    "Seed %s is on the opt-out list (BLOGFEEDS_OPT_OUT): not crawled", seed.url
                )
                left_out += 1
            offered = list(self._requests(self.admission.offer(seed.url, 0)))
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
            elif seeds and left_out == len(seeds):
                logger.error("Every seed is on the opt-out list (BLOGFEEDS_OPT_OUT)")
            elif seeds:
                logger.error("None of the %d seeds names a blog", len(seeds))
            raise CloseSpider("no_seeds")
        async for request in self.frontier_seeds():  # seeds pushed to Redis (`scrapy seed`)
            yield request

    def _recheck_requests(self, rechecker: Recheck) -> Iterable[scrapy.Request]:
        """The home pages of the stored blogs to read again, with their validators."""
        try:
            blogs = rechecker.due()
        except ValueError as exc:
            logger.error("%s", exc)
            raise CloseSpider("no_seeds") from None
        frontier = self.frontier()
        for blog in blogs:
            if self._left_out(blog.url) or not rechecker.claim(blog, frontier):
                continue  # an owner asked to be left out, or another worker re-checks it
            for request in self._requests(self.admission.offer(blog.url, 0)):
                meta = {**request.meta, **recheck_meta(blog)}
                yield request.replace(headers=validators(blog), meta=meta)

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
        ValueError when ``url`` cannot be a seed (:func:`blogfeeds.crawl.urls.check_url`). A seed
        read already at a greater depth has its friends offered again, outside the scheduler."""
        problem = check_url(url)
        if problem is not None:
            raise ValueError(problem)
        recovered = bool(meta.pop(RECOVERED_META, False))
        requests = list(self._requests(self.admission.offer(url, 0, recovered=recovered)))
        if not requests:
            self._seen_seed(url)
        for extra in requests[1:]:
            self.crawler.engine.crawl(extra)
        return requests[0] if requests else None

    # --- routing ---------------------------------------------------------------------------

    def _requests(self, visits: Iterable[Visit]) -> Iterable[scrapy.Request]:
        for visit in visits:
            meta = {"blog_id": visit.blog_id, "depth": visit.depth}
            if visit.claimed_by:
                meta[CLAIMED_BY] = visit.claimed_by
            yield scrapy.Request(
                visit.url,
                callback=self.parse_home,
                errback=self.home_failed,
                meta=meta,
                dont_filter=visit.again,
            )

    async def parse_home(self, response: Response) -> AsyncIterator[Any]:
        depth = response.meta.get("depth", 0)
        if response.status == NOT_MODIFIED:  # a re-check's conditional GET: there, unchanged
            self.crawler.stats.inc_value("blogfeeds/recheck/not_modified")
            yield not_modified_check(response)
            return
        same = same_page_check(response)
        if same is not None:  # a re-check answered the very page of the last read
            self.crawler.stats.inc_value("blogfeeds/recheck/same_page")
            yield same
            return
        try:
            bid = self.admission.answered(response.url)
        except ValueError as exc:
            yield self._failed_blog(response.url, response.meta, unreadable(exc))
            return
        hops = redirects(response)
        if self._left_out(response.url, *(hop.url for hop in hops)):
            self.crawler.stats.inc_value("blogfeeds/opt_out/blog_read")  # listed while queued
            return
        # the address requested redirected to another blog: stored, even when that blog was
        # analysed already, for the store to decide whether it is an alias
        address = address_item(
            response.meta["blog_id"], hops[0].url if hops else "", response.url, hops
        )
        if address is not None:
            yield address
        claimed_by = response.meta.get(CLAIMED_BY)
        moved = None if claimed_by else moved_check(response)
        if moved is not None:
            yield moved
        if bid is None:  # a redirect led to a blog already analysed
            return
        mark = self.admission.marker(bid, depth)
        # an address another page claims is recorded only once confirmed (Admission.claimed)
        report = await self.reader.read(response, mark.before if claimed_by is None else _same)
        stand_in = in_its_place(report)
        if stand_in is not None and claimed_by is None:
            # a parking page or a bot wall answers in the blog's place: not read as the blog
            yield check(response.meta["blog_id"], response.url, stand_in, response)
            yield self._failed_blog(
                response.url, response.meta, Unread(stand_in.kind, stand_in.reason)
            )
            return
        if claimed_by is not None and (
            isinstance(report, Unread) or not confirms(claimed_by, report.observation)
        ):
            self.crawler.stats.inc_value("blogfeeds/alias/unconfirmed")
            return
        if isinstance(report, Unread):
            yield unread_check(response, report.status, report.reason)
            yield self._failed_blog(response.url, response.meta, report)
            return
        mark()
        under_path = self.admission.under_path(bid, report.blog_id, depth)
        if self.opted_out is not None and report.observation is not None:
            seen = self.opted_out.scrub(report.observation)
            if seen is not report.observation:
                self.crawler.stats.inc_value("blogfeeds/opt_out/claim")
                report.observation = seen
        blog, links = blog_items(report, fetched_at=_now(), depth=depth)
        links = self._friends(links)
        blog.friend_count = len(links)
        blog.depth = depth = self.admission.read(bid, depth, [link.target_url for link in links])
        yield blog
        if claimed_by is None:
            yield check(bid, response.url, report.health, response, blog=blog, links=links)
        recovered = bool(response.meta.get(RECOVERED_META))
        for link in links:
            yield link
            if self.rechecker is not None and not self.rechecker.follows(link.target_url):
                continue  # a stored friend is re-read when it is due itself
            for request in self._requests(
                self.admission.offer(link.target_url, depth + 1, recovered=recovered)
            ):
                yield request
        if report.observation is not None:
            for request in self._requests(self.admission.claimed(report.observation, depth)):
                yield request
        for request in self._requests(under_path):
            yield request

    def _left_out(self, *urls: str) -> bool:
        return self.opted_out is not None and any(url in self.opted_out for url in urls)

    def _friends(self, links: list[FriendLink]) -> list[FriendLink]:
        """``links`` but those to a blog of the opt-out list (dropped, counted)."""
        if self.opted_out is None:
            return links
        kept = [link for link in links if link.target_url not in self.opted_out]
        if len(kept) < len(links):
            self.crawler.stats.inc_value("blogfeeds/opt_out/friend_link", len(links) - len(kept))
        return kept

    def home_failed(self, failure: Failure) -> Iterator[Any]:
        request = failure.request  # type: ignore[attr-defined]
        if failure.check(StaleRequest):  # a re-pushed copy went first (blogfeeds.crawl.order)
            return
        if failure.check(OptedOut):  # listed after it was queued: nothing of it is stored
            return
        if CLAIMED_BY in request.meta:  # an address a page claimed, unreachable: no blog
            self.crawler.stats.inc_value("blogfeeds/alias/unconfirmed")
            return
        if refused_seed(failure, request.meta):
            # a seed whose own address the SSRF guard refused says nothing of a blog (a local
            # trial without BLOGFEEDS_ALLOW_PRIVATE_TARGETS): not stored, no node stays behind
            self.crawler.stats.inc_value("blogfeeds/seed_refused")
            logger.warning("Seed %s refused, not stored: %s", request.url, failure.value)
            return
        unread = fetch_failed(failure)
        yield failed_check(
            request.meta["blog_id"], request.url, failure, unread.status, unread.reason
        )
        yield self._failed_blog(request.url, request.meta, unread)

    def _failed_blog(self, url: str, meta: dict[str, Any], unread: Unread) -> Blog:
        """The item of a home page that was not read: its status and the reason in the words
        of the log line (stored, and shown on the site's page of the blog)."""
        self.crawler.stats.inc_value(f"blogfeeds/blog_failed/{unread.status}")
        logger.info("Blog %s failed: %s (%s)", url, unread.status, unread.reason)
        return Blog(
            blog_id=meta["blog_id"],  # every request of this spider has it (_requests)
            url=url,
            status=unread.status,
            status_reason=unread.reason,
            fetched_at=_now(),
            depth=meta.get("depth", 0),
            activity="dead",  # unreachable (the next answered crawl reads it again)
        )
