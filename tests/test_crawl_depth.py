"""Depth is hop distance, exactly: ``scrapy crawl blogs`` on generated webs where every blog's
distance from the seeds is known, on Scrapy's scheduler and on the Redis frontier (two workers).

Each web (:func:`random_web`) is 60 blogs of :mod:`tests.blogosphere` pages with random
blogrolls, a few of them slow to answer and a few linked by nobody (unreachable); three seeds.
The orders that reach a blog through a long path first: ``dfs`` (one request at a time, and 16),
and ``bfs`` with 16 concurrent requests and slow blogs; the limited cases fail when a blog keeps
the depth it was first found at. With ``DEPTH_LIMIT=N`` every blog within N hops of a seed is
stored and none beyond; with no limit every reachable blog; no URL is fetched twice (the
loopback web's log). Unit tests drive the depth book (in memory, and its scripts on
real Redis) and the depth middleware.
"""

from __future__ import annotations

import random
import sqlite3
from collections import Counter, deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from blogfeeds.crawl.depth import DepthBook, HopDepthMiddleware, Offer
from blogfeeds.frontier.defaults import FrontierKeys
from blogfeeds.frontier.depths import RedisDepthBook
from tests import blogosphere as bs
from tests.littleweb import LittleWeb

pytestmark = pytest.mark.integration

N_BLOGS = 60
UNREACHABLE = 4  # the last blogs: linked by nobody
SEEDS = (0, 1, 2)


@dataclass
class Web:
    friends: dict[int, list[int]]
    slow: set[int]

    def distances(self) -> dict[str, int]:
        """Hop distance of every reachable blog from the nearest seed (breadth-first)."""
        dist = dict.fromkeys(SEEDS, 0)
        queue = deque(SEEDS)
        while queue:
            i = queue.popleft()
            for j in self.friends[i]:
                if j not in dist:
                    dist[j] = dist[i] + 1
                    queue.append(j)
        return {bs.host(i): d for i, d in dist.items()}

    def routes(self) -> dict[str, dict[str, Any]]:
        routes: dict[str, dict[str, Any]] = {}
        for i, listed in self.friends.items():
            routes[bs.home(i)] = {"body": bs.page(i, N_BLOGS, listed), "content_type": bs.HTML}
            routes[f"{bs.home(i)}feed.xml"] = {"body": bs.feed(i), "content_type": "text/xml"}
            if i in self.slow:
                routes[bs.home(i)]["delay"] = 1.2
        return routes


def random_web(seed: int) -> Web:
    """Blogrolls of 2-3 friends drawn among the reachable blogs (the seeds excepted, so that
    paths are long); one blog in six answers slowly."""
    rng = random.Random(seed)
    linkable = range(len(SEEDS), N_BLOGS - UNREACHABLE)
    friends = {
        i: rng.sample([j for j in linkable if j != i], rng.randint(2, 3)) for i in range(N_BLOGS)
    }
    slow = {i for i in range(N_BLOGS) if rng.random() < 1 / 6}
    return Web(friends, slow)


def stored_depths(dbs: list[Path]) -> Counter[str]:
    blogs: Counter[str] = Counter()
    for db in dbs:
        with sqlite3.connect(db) as conn:
            blogs.update(row[0] for row in conn.execute("SELECT blog_id FROM blogs"))
    return blogs


def crawl(web: Web, tmp: Path, settings: list[str], redis_prefix: str = "") -> LittleWeb:
    """Crawl ``web`` from :data:`SEEDS`: one process, or two workers sharing ``redis_prefix``."""
    served = LittleWeb(web.routes()).start()
    seeds = "start_urls=" + ",".join(bs.home(i) for i in SEEDS)
    try:
        workers = ["w1", "w2"] if redis_prefix else ["local"]
        procs = []
        for name in workers:
            env = served.env()
            env.pop("REDIS_URL", None)
            env.pop("MYSQL_URL", None)
            env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{tmp / name}.sqlite3"
            extra = [f"BLOGFEEDS_SPOOL_PATH={tmp / name}.spool"]
            if redis_prefix:
                env.update(REDIS_URL=bs.REDIS_URL, BLOGFEEDS_REDIS_PREFIX=redis_prefix)
                extra += [f"BLOGFEEDS_WORKER_ID={name}", "MAX_IDLE_TIME_BEFORE_CLOSE=1"]
            cmd = [*bs.crawl_command(*settings, *extra), "-a", seeds]
            procs.append(bs.start_worker(cmd, env, tmp / f"{name}.log"))
        for name, proc in zip(workers, procs, strict=True):
            assert proc.wait(timeout=180) == 0, (tmp / f"{name}.log").read_text()[-3000:]
            log = (tmp / f"{name}.log").read_text("utf-8", "replace")
            assert "Traceback" not in log, log[-3000:]
    finally:
        served.stop()
    return served


CASES = [  # (strategy, CONCURRENT_REQUESTS, DEPTH_LIMIT, web seed)
    ("dfs", 1, 3, 11),
    ("dfs", 16, 3, 25),
    ("bfs", 16, 3, 17),
    ("bfs", 16, 0, 29),
]


@pytest.fixture
def redis_prefix(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "scrapy":
        yield ""
        return
    if bs.redis_client() is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    with bs.redis_prefix(request.node.name[-30:]) as prefix:
        yield prefix


@pytest.mark.parametrize("redis_prefix", ["scrapy", "redis"], indirect=True)
@pytest.mark.parametrize(("strategy", "concurrency", "limit", "seed"), CASES)
def test_every_blog_within_the_limit_and_none_beyond_each_fetched_once(  # noqa: PLR0917
    redis_prefix: str, strategy: str, concurrency: int, limit: int, seed: int, tmp_path: Path
) -> None:
    web = random_web(seed)
    distances = web.distances()
    settings = [
        f"BLOGFEEDS_STRATEGY={strategy}",
        f"CONCURRENT_REQUESTS={concurrency}",
        f"DEPTH_LIMIT={limit}",
    ]
    served = crawl(web, tmp_path, settings, redis_prefix)
    dbs = sorted(tmp_path.glob("*.sqlite3"))
    blogs = stored_depths(dbs)
    expected = {b for b, d in distances.items() if not limit or d <= limit}
    assert sorted(set(blogs) - expected) == [], "stored beyond the limit"
    assert sorted(expected - set(blogs)) == [], "within the limit, never stored"
    assert [b for b, n in blogs.items() if n > 1] == []
    hits = Counter((hit.method, hit.url) for hit in served.hits())
    assert [hit for hit, n in hits.items() if n > 1] == []
    for db in dbs:  # a stored depth is never below the distance (and at most the limit)
        with sqlite3.connect(db) as conn:
            for blog, depth in conn.execute("SELECT blog_id, depth FROM blogs"):
                assert distances[blog] <= depth <= (limit or depth), blog


# --- the depth book, in memory and in Redis ------------------------------------------------------


def _book(kind: str, prefix: str, keep_friends: bool = True) -> DepthBook:
    if kind == "memory":
        return DepthBook(keep_friends=keep_friends)
    keys = FrontierKeys(prefix, "blogs", "w1")
    return RedisDepthBook(bs.redis_client(), keys, keep_friends=keep_friends)


@pytest.mark.parametrize("redis_prefix", ["scrapy", "redis"], indirect=True)
def test_a_depth_is_set_if_lower_and_says_what_lowering_asks_for(redis_prefix: str) -> None:
    kind = "redis" if redis_prefix else "memory"
    book, other = _book(kind, redis_prefix), _book(kind, redis_prefix)
    if kind == "memory":
        other = book  # one process: one book
    assert book.offer("a", 3) == Offer(new=True)
    assert other.offer("a", 3) is None and other.offer("a", 4) is None
    assert other.offer("a", 2) == Offer(new=False)  # queued: a copy at depth 2
    assert book.offer("a", 2) is None
    if kind == "redis":  # in one process the re-push tokens decide (blogfeeds.crawl.order)
        assert book.claim("a", 3, "t1") is False  # the copy queued at 3 is stale
        assert other.claim("a", 2, "t2") is True
        assert book.claim("a", 2, "t3") is False  # one copy is downloaded
        assert other.claim("a", 2, "t2") is True  # its retries and redirects go through
    assert book.read("a", 2, ["http://x.example/", "http://y.example/"]) == 2
    assert other.offer("a", 1) == Offer(
        new=False, friends=("http://x.example/", "http://y.example/")
    )
    assert book.read("b", 0, ["http://a.example/"]) == 0  # a seed: its friends never needed
    assert book.offer("b", 0) is None


@pytest.mark.parametrize("redis_prefix", ["redis"], indirect=True)
def test_a_blog_read_while_a_shorter_path_is_found_reads_at_the_shorter_depth(
    redis_prefix: str,
) -> None:
    reader, finder = _book("redis", redis_prefix), _book("redis", redis_prefix)
    assert reader.offer("a", 3) == Offer(new=True)
    assert reader.claim("a", 3, "t1")
    assert finder.offer("a", 1) == Offer(new=False)  # downloading: its copy will be stale
    assert finder.claim("a", 1, "t2") is False
    assert reader.read("a", 3, ["http://x.example/"]) == 1
    assert finder.offer("a", 0) == Offer(new=False, friends=("http://x.example/",))


@pytest.mark.parametrize("redis_prefix", ["scrapy", "redis"], indirect=True)
def test_without_a_limit_a_read_blog_is_remembered_without_its_friends(redis_prefix: str) -> None:
    book = _book("redis" if redis_prefix else "memory", redis_prefix, keep_friends=False)
    assert book.offer("a", 2) == Offer(new=True)
    assert book.read("a", 2, ["http://x.example/"]) == 2
    assert book.offer("a", 1) == Offer(new=False, friends=())  # read: no copy to queue


def test_a_request_keeps_the_depth_the_spider_gave_it() -> None:
    middleware = HopDepthMiddleware.from_crawler(get_crawler(settings_dict={"DEPTH_LIMIT": 3}))
    response = HtmlResponse("http://a.example/", request=Request("http://a.example/"))
    response.meta["depth"] = 3

    def processed(url: str, **meta: int) -> Request | None:
        return middleware.get_processed_request(Request(url, meta=meta), response)

    kept = processed("http://b.example/", depth=1)  # a shorter path, out of another blog
    assert kept is not None and kept.meta["depth"] == 1
    assert processed("http://c.example/") is None  # no depth of its own: 3 + 1, beyond
    assert processed("http://d.example/", depth=4) is None  # DEPTH_LIMIT still applies
