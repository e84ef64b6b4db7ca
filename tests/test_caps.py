"""Bounds of a crawl without a depth limit (:mod:`blogfeeds.crawl.caps`): new blogs per hosting
domain, friend links per page, and the pending requests on disk (``JOBDIR``) or in Redis, on
loopback."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from blogfeeds.crawl.admission import Admission
from blogfeeds.crawl.caps import DomainCaps, domain_of
from blogfeeds.extract.identity import hosting_domain
from blogfeeds.frontier.caps import RedisDomainCaps
from blogfeeds.spiders.blogs import BlogsSpider
from tests import blogosphere as bs
from tests.littleweb import LittleWeb
from tests.robustness import CrawlRun, crawl_blogs

HTML = "text/html; charset=utf-8"


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("t0123abcd.github.io", "github.io"),  # a hosting platform: one domain for all its blogs
        ("alice.github.io", "github.io"),
        ("a.b.blogspot.com", "blogspot.com"),
        ("x.netlify.app", "netlify.app"),
        ("www.cnblogs.com", "cnblogs.com"),  # path-hosted: its registered domain
        ("a.example.com", "example.com"),
        ("b.example.co.uk", "example.co.uk"),
        ("b0001.example", "b0001.example"),  # no public suffix: the host
    ],
)
def test_hosting_domains(host: str, domain: str) -> None:
    assert hosting_domain(host) == domain


def test_a_domain_at_its_cap_admits_no_new_blog(caplog: pytest.LogCaptureFixture) -> None:
    class Stats(dict[str, int]):
        def inc_value(self, key: str) -> None:
            self[key] = self.get(key, 0) + 1

    stats = Stats()
    caps = DomainCaps(3, stats=stats)
    with caplog.at_level(logging.INFO, "blogfeeds.crawl.caps"):
        for i in range(3):
            url = f"http://t{i}.github.io/"
            assert caps.admits(url)
            caps.accepted(url)
        assert not caps.admits("http://t9.github.io/")
        assert not caps.admits("https://other.github.io/x")
        assert caps.admits("http://alice.example.com/")  # another domain
    assert stats == {"blogfeeds/domain_cap/domains": 1, "blogfeeds/domain_cap/refused": 2}
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "github.io has 3 new blogs in this crawl (BLOGFEEDS_MAX_BLOGS_PER_DOMAIN): its further "
        "new blogs are not crawled"
    ]
    assert DomainCaps(0).admits("http://t1.github.io/")  # 0 = no cap
    assert domain_of("http://[bad/") == ""


def test_the_counts_are_bounded_in_memory() -> None:
    caps = DomainCaps(5, capacity=100)
    for i in range(10_000):
        caps.accepted(f"http://blog{i}.com/")
    assert len(caps.counts) <= 200


@pytest.fixture
def redis_key() -> Iterator[str]:
    if bs.redis_client() is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    with bs.redis_prefix("caps") as prefix:
        yield f"{prefix}blogs:domain_blogs"


def test_workers_share_the_counts_in_redis(redis_key: str) -> None:
    workers = [RedisDomainCaps(bs.redis_client, redis_key, 4) for _ in range(2)]
    accepted = 0
    for i in range(20):
        caps = workers[i % 2]
        url = f"http://t{i}.github.io/"
        if caps.admits(url):
            caps.accepted(url)
            accepted += 1
    assert 4 <= accepted <= 4 + 1  # each worker may accept one past it (module doc)
    assert int(bs.redis_client().hget(redis_key, "github.io")) == accepted  # type: ignore[union-attr]
    down = RedisDomainCaps(lambda: __import__("redis").Redis(port=1), redis_key, 2)
    for i in range(3):
        down.accepted(f"http://t{i}.github.io/")  # counted alone during an outage
    assert not down.admits("http://t9.github.io/")


# --- crawls ------------------------------------------------------------------------------------


def blog_page(title: str, friends: list[str]) -> dict[str, Any]:
    items = "".join(f'<li><a href="{url}">Friend {n}</a></li>' for n, url in enumerate(friends))
    body = (
        f"<!DOCTYPE html><html><head><title>{title}</title></head><body><main><h1>{title}</h1>"
        f'<p>Notes.</p></main><section><h2>友情链接</h2><ul class="flink-list">{items}</ul>'
        "</section></body></html>"
    )
    return {"body": body, "content_type": HTML}


def trap_web(fanout: int, levels: int) -> dict[str, dict[str, Any]]:
    """A tree of blogs under github.io from ``t.github.io``, ``fanout`` friends each, plus one
    blog elsewhere linked from the root."""
    routes: dict[str, dict[str, Any]] = {}
    level = ["t"]
    for n in range(levels):
        nxt = []
        for name in level:
            kids = [f"{name}{k}" for k in range(fanout)] if n < levels - 1 else []
            friends = [f"http://{kid}.github.io/" for kid in kids]
            if name == "t":
                friends.append("http://elsewhere.example/")
            routes[f"http://{name}.github.io/"] = blog_page(name, friends)
            nxt += kids
        level = nxt
    routes["http://elsewhere.example/"] = blog_page("elsewhere", [])
    return routes


def crawl(routes: dict[str, Any], seed: str, tmp: Path, frontier: str, **settings: str) -> CrawlRun:
    env: dict[str, str] = {}
    if frontier != "scrapy":
        env = {"REDIS_URL": bs.REDIS_URL, "BLOGFEEDS_REDIS_PREFIX": frontier}
        env["BLOGFEEDS_WORKER_ID"] = "caps"
        settings["MAX_IDLE_TIME_BEFORE_CLOSE"] = "1"
    with LittleWeb(routes) as web:
        run = crawl_blogs(web, [seed], tmp, env=env, settings=settings)
    assert run.returncode == 0, run.log[-3000:]
    assert "Traceback" not in run.log, run.log[-3000:]
    return run


@pytest.fixture(params=["scrapy", "redis"])
def frontier(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "scrapy":
        yield "scrapy"
        return
    if bs.redis_client() is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    with bs.redis_prefix(request.node.name[-30:]) as prefix:
        yield prefix


@pytest.mark.integration
def test_a_trap_domain_stops_at_its_cap(tmp_path: Path, frontier: str) -> None:
    routes = trap_web(fanout=3, levels=4)  # 40 github.io blogs
    run = crawl(
        routes, "http://t.github.io/", tmp_path, frontier, BLOGFEEDS_MAX_BLOGS_PER_DOMAIN="10"
    )
    trapped = {b for b in run.blogs if b.endswith(".github.io")}
    assert len(trapped) == 10  # one worker: exactly the cap
    assert "elsewhere.example" in run.blogs  # another domain is not capped
    assert len({h for h in run.hits if ".github.io/" in h and h.endswith(".io/")}) == 10
    assert run.stat("blogfeeds/domain_cap/domains") == 1
    assert run.stat("blogfeeds/domain_cap/refused") > 0
    assert run.log.count("github.io has 10 new blogs in this crawl") == 1


@pytest.mark.integration
def test_a_page_with_more_friends_than_the_cap(tmp_path: Path, frontier: str) -> None:
    friends = [f"http://f{k}.example/" for k in range(6)]
    routes = {"http://hub.example/": blog_page("hub", friends)}
    routes.update({url: blog_page(url, []) for url in friends})
    run = crawl(
        routes, "http://hub.example/", tmp_path, frontier, BLOGFEEDS_MAX_FRIENDS_PER_PAGE="3"
    )
    assert set(run.blogs) == {"hub.example", "f0.example", "f1.example", "f2.example"}
    assert run.stat("blogfeeds/friends_over_cap") == 3
    assert "lists 3 friends more than BLOGFEEDS_MAX_FRIENDS_PER_PAGE=3" in run.log


@pytest.mark.integration
def test_with_a_jobdir_the_pending_requests_are_on_disk(tmp_path: Path) -> None:
    """Scrapy's scheduler with ``JOBDIR`` keeps every queued request in its disk queues (none
    falls back to memory: they all pickle), so the frontier's requests are not held in memory;
    a crawl stopped early leaves them there."""
    routes = trap_web(fanout=4, levels=4)  # 85 blogs
    jobdir = tmp_path / "job"
    run = crawl(
        routes,
        "http://t.github.io/",
        tmp_path,
        "scrapy",
        JOBDIR=str(jobdir),
        CLOSESPIDER_ITEMCOUNT="30",
        CONCURRENT_REQUESTS="2",
    )
    assert run.stat("scheduler/enqueued/disk") > 30
    assert run.stat("scheduler/enqueued/memory") == 0
    queued = [p for p in (jobdir / "requests.queue").rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in queued) > 0


@pytest.mark.integration
def test_on_the_redis_frontier_the_pending_requests_are_in_redis(tmp_path: Path) -> None:
    """With the Redis frontier every queued request is in Redis (the worker holds none in a
    queue of its own); a crawl stopped early leaves them there for any worker."""
    if bs.redis_client() is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    routes = trap_web(fanout=4, levels=4)
    with bs.redis_prefix("caps-pending") as prefix:
        run = crawl(
            routes,
            "http://t.github.io/",
            tmp_path,
            prefix,
            CLOSESPIDER_ITEMCOUNT="30",
            CONCURRENT_REQUESTS="2",
        )
        client = bs.redis_client()
        assert client is not None
        queued = client.zcard(f"{prefix}blogs:requests")
    assert run.stat("scheduler/enqueued/redis") > 30
    assert run.stat("scheduler/enqueued/memory") == 0
    assert queued > 0


def test_seeds_are_never_refused_but_count() -> None:
    crawler = get_crawler(BlogsSpider, {"BLOGFEEDS_MAX_BLOGS_PER_DOMAIN": 2})
    crawler.stats = MemoryStatsCollector(crawler)
    admission = Admission.from_crawler(crawler)
    seeds = [v for i in range(3) for v in admission.offer(f"http://s{i}.github.io/", 0)]
    assert len(seeds) == 3
    assert list(admission.offer("http://friend.github.io/", 1)) == []
    assert len(list(admission.offer("http://friend.example.com/", 1))) == 1
    assert crawler.stats.get_value("blogfeeds/domain_cap/refused") == 1
