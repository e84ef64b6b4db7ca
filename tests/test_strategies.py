"""Crawl strategies: each one's visit order on a fixed friend-link graph.

The graph (seed ``S``; ``P1``..``P3`` are three blogs on one host, ``www.cnblogs.com``)::

    S -> A B C
    A -> D E I J K
    B -> E P1 P2
    C -> E F P3
    E -> G

Orders are worked out by hand below (ties go to the blog queued first: Scrapy's queues are FIFO
within one priority). They are checked twice: on :class:`~blogfeeds.crawl.order.CrawlOrder` with a
model priority queue, and on a real ``scrapy crawl blogs`` against a loopback web, one request
at a time, reading the fetch order from the web's hit log.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import tests.blogosphere as bs
from blogfeeds.crawl.order import STRATEGIES, CrawlOrder, site_of
from tests.littleweb import LittleWeb

REPO = Path(__file__).resolve().parent.parent

GRAPH: dict[str, list[str]] = {
    "S": ["A", "B", "C"],
    "A": ["D", "E", "I", "J", "K"],
    "B": ["E", "P1", "P2"],
    "C": ["E", "F", "P3"],
    "E": ["G"],
}
BLOGS = sorted(set(GRAPH) | {t for targets in GRAPH.values() for t in targets})


def url(blog: str) -> str:
    if blog.startswith("P"):
        return f"http://www.cnblogs.com/{blog.lower()}/"
    return f"http://{blog.lower()}.example/"


EXPECTED = {
    # depth 0, 1, 2 (in discovery order), 3
    "bfs": "S A B C D E I J K P1 P2 F P3 G",
    # deepest first: A's subtree (E before its sibling I because E's child G is deeper), ...
    "dfs": "S A D E G I J K B P1 P2 C F P3",
    # in-degree so far: after S and A every queued blog has 1; B adds a second link to E (2)
    "backlinks": "S A B E C D I J K P1 P2 G F P3",
    # cash: A, B, C get 1 + 1/3; A splits 4/3 over 5 friends (1.267 each), B over 3 (1.444),
    # E collects 1.267 + 0.444 = 1.711 and passes it to its only friend G (2.711)
    "opic": "S A B E G P1 P2 C F P3 D I J K",
    # P1 and P2 make www.cnblogs.com the biggest host (2 pending) as soon as B is read
    "big-site-first": "S A B P2 P1 C D E I J K F P3 G",
}


def simulate(strategy: str, ties: str = "fifo") -> list[str]:
    """Visit order of ``GRAPH`` under ``strategy``. Equal priorities go first queued first
    (``ties="fifo"``: Scrapy's queues) or by URL (``ties="url"``: scrapy-redis's ZSET orders
    equal scores by member, a JSON request that starts with the URL)."""
    frontier = CrawlOrder(strategy)
    queue: list[tuple[int, int | str, str, str]] = []
    seq = itertools.count()
    scheduled = {"S"}
    depth = {"S": 0}

    def push(blog: str, priority: int, token: str) -> None:
        tie = next(seq) if ties == "fifo" else url(blog)
        heapq.heappush(queue, (-priority, tie, blog, token))

    token = frontier.push("S", depth=0, url=url("S"))
    push("S", frontier.pending["S"].priority, token)
    order = []
    while queue:
        _, _, blog, token = heapq.heappop(queue)
        if not frontier.dispatch(blog, token):
            continue
        order.append(blog)
        friends = GRAPH.get(blog, [])
        frontier.crawled(blog, len(friends))
        for target in friends:
            frontier.linked(blog, target)
            if target not in scheduled:
                scheduled.add(target)
                depth[target] = depth[blog] + 1
                token = frontier.push(target, depth=depth[target], url=url(target))
                push(target, frontier.pending[target].priority, token)
            for raised, priority, token in frontier.raised():
                push(raised, priority, token)
    return order


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_frontier_visit_order(strategy: str) -> None:
    assert simulate(strategy) == EXPECTED[strategy].split()


def test_orders_differ() -> None:
    assert len(set(EXPECTED.values())) == len(STRATEGIES) == len(EXPECTED)


def test_unknown_strategy() -> None:
    with pytest.raises(ValueError, match="unknown crawl strategy 'pagerank'"):
        CrawlOrder("pagerank")


def test_repush_and_stale_copies() -> None:
    f = CrawlOrder("backlinks")
    t_s = f.push("s", url="http://s.example/")
    assert f.dispatch("s", t_s)
    f.crawled("s", 1)
    first = f.push("x", depth=1, url="http://x.example/")
    assert f.pending["x"].priority == 0
    f.linked("s", "x")
    f.linked("s", "x")  # the same pair counts once
    [(blog, priority, second)] = f.raised()
    assert (blog, priority, f.indegree["x"]) == ("x", 1, 1)
    assert f.raised() == []
    assert not f.dispatch("x", first)  # the older copy is stale
    assert f.dispatch("x", second)
    assert f.dispatch("x", second)  # a retry or redirect of the fetched copy
    assert not f.dispatch("x", first)
    assert f.dispatch("y", "other-worker-1")  # pushed by another process
    third = f.push("z", depth=1, url="http://z.example/")
    assert f.dispatch("z", "other-worker-2")  # z was queued here too, but Redis kept theirs
    assert not f.dispatch("z", third)
    assert (len(f), f.repushed, f.stale) == (0, 1, 3)


def test_a_copy_at_a_lower_depth_supersedes_the_queued_one_and_hosts_count_once() -> None:
    """A shorter path to a queued blog pushes it again (blogfeeds.crawl.depth): the earlier copy is
    stale, the host's pending count is not doubled; a copy pushed after the blog left the queue
    is stale and leaves nothing pending; a copy the workers' shared claim refuses neither."""
    f = CrawlOrder("big-site-first")
    first = f.push("a", depth=3, url="http://h.example/a")
    second = f.push("a", depth=2, url="http://h.example/a")
    assert f.host_pending == {"h.example": 1} and f.pending["a"].depth == 2
    assert not f.dispatch("a", first)
    assert f.dispatch("a", second)
    assert f.host_pending == {} and len(f) == 0
    third = f.push("a", depth=1, url="http://h.example/a")  # found again while downloading
    assert not f.dispatch("a", third)
    assert len(f) == 0 and f.host_pending == {}
    other = f.push("b", depth=1, url="http://h.example/b")
    assert not f.dispatch("b", other, claim=lambda: False)  # downloaded by another worker
    assert len(f) == 0 and f.host_pending == {} and "b" not in f.dispatched


def test_interleaved_sources() -> None:
    """Two blogs' outputs interleave (concurrent responses): links count by their source."""
    f = CrawlOrder("opic")
    f.crawled("a", 2)
    f.crawled("b", 4)
    f.linked("a", "x")
    f.linked("b", "x")
    f.linked("a", "y")
    f.linked("c", "y")  # c was never announced: ignored
    assert f.cash == {"a": 0.0, "b": 0.0, "x": 1.0 + 0.5 + 0.25, "y": 1.5}


def test_opic_cash_is_conserved() -> None:
    f = CrawlOrder("opic")
    f.push("s", url="http://s.example/")
    f.crawled("s", 4)
    for t in "abcd":
        f.linked("s", t)
    assert f.history["s"] == 1.0
    assert f.cash["s"] == 0.0
    assert [f.cash[t] for t in "abcd"] == [1.25] * 4
    f.crawled("a", 0)  # lists nobody: keeps nothing
    assert f.cash["a"] == 0.0
    assert f.history["a"] == 1.25


def test_big_site_first_doubling() -> None:
    f = CrawlOrder("big-site-first")
    for n in range(1, 6):
        f.push(f"cnblogs.com/u{n}", url=f"https://www.cnblogs.com/u{n}/")
        raised = {blog: p for blog, p, _ in f.raised()}
        if n == 2:
            assert raised == {"cnblogs.com/u1": 2}
        elif n == 4:
            assert raised == {f"cnblogs.com/u{i}": 4 for i in (1, 2, 3)}
        else:  # 3 and 5: not doubled since the last re-push
            assert raised == {}
    assert [f.pending[f"cnblogs.com/u{n}"].priority for n in range(1, 6)] == [4, 4, 4, 4, 5]
    assert f.host_pending == {"cnblogs.com": 5}
    f.push("solo.example", url="http://solo.example/")
    assert f.pending["solo.example"].priority == 1
    assert site_of("https://WWW.CnBlogs.com/u1/") == "cnblogs.com"


# --- a real crawl ------------------------------------------------------------------------------


def _page(blog: str) -> str:
    items = "".join(
        f'<li><a rel="friend" href="{url(t)}">Blog {t}</a></li>' for t in GRAPH.get(blog, [])
    )
    return (
        f'<!doctype html><html lang="en"><head><title>Blog {blog}</title></head><body>'
        f"<h1>Blog {blog}</h1><article><p>Notes kept by {blog}.</p></article>"
        f"<h2>Friends</h2><ul>{items}</ul></body></html>"
    )


# One process runs the five crawls side by side (one crawler each, Scrapy's own engine and the
# project's settings, as `scrapy crawl blogs` builds them), so the test pays Scrapy's start-up once.
RUNNER = """
import json, sys
from scrapy.crawler import Crawler, CrawlerProcess
from scrapy.utils.project import get_project_settings
from blogfeeds.spiders.blogs import BlogsSpider

jobs = json.loads(sys.argv[1])
process = CrawlerProcess(get_project_settings())
for n, job in enumerate(jobs):
    settings = get_project_settings()
    settings.setdict(job["settings"], priority="cmdline")
    process.crawl(Crawler(BlogsSpider, settings, init_reactor=n == 0), start_urls=job["seed"])
process.start()
sys.exit(1 if process.bootstrap_failed else 0)
"""

COMMON = {
    "CONCURRENT_REQUESTS": 1,
    "DOWNLOAD_DELAY": 0,
    "AUTOTHROTTLE_ENABLED": False,
    "DEPTH_LIMIT": 5,
    # one blog at a time: the next request leaves the queue after the last one's output
    "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 1,
    "BLOGFEEDS_FEED_RULESET": "original",
    "ROBOTSTXT_OBEY": False,
    "MAX_IDLE_TIME_BEFORE_CLOSE": 1,
    "LOG_LEVEL": "INFO",
}


def _agent(strategy: str) -> str:
    return f"blogfeeds-test/{strategy}"


@dataclass
class Batch:
    proc: subprocess.Popen[str]
    web: LittleWeb
    prefix: str = ""
    hits: dict[str, list[str]] = field(default_factory=dict)
    log: str = ""


def _start(tmp: Path, prefix: str = "") -> Batch:
    """Crawl ``GRAPH`` once per strategy in one subprocess; with ``prefix``, through Redis."""
    routes = {url(b): {"body": _page(b), "content_type": "text/html; charset=utf-8"} for b in BLOGS}
    web = LittleWeb(routes).start()
    env = web.env()
    env["BLOGFEEDS_ALLOW_PRIVATE_TARGETS"] = "1"
    env.pop("REDIS_URL", None)
    env.pop("MYSQL_URL", None)
    if prefix:
        env["REDIS_URL"] = bs.REDIS_URL
    jobs = []
    for strategy in STRATEGIES:
        settings: dict[str, Any] = {
            **COMMON,
            "BLOGFEEDS_STRATEGY": strategy,
            "USER_AGENT": _agent(strategy),
            "BLOGFEEDS_DATABASE_URL": f"sqlite:///{tmp}/{strategy}{prefix and '-redis'}.sqlite3",
        }
        if prefix:
            settings["BLOGFEEDS_REDIS_PREFIX"] = f"{prefix}{strategy}:"
            settings["BLOGFEEDS_WORKER_ID"] = strategy
        jobs.append({"seed": url("S"), "settings": settings})
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, json.dumps(jobs)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return Batch(proc, web, prefix)


def _finish(batch: Batch) -> Batch:
    try:
        _, batch.log = batch.proc.communicate(timeout=180)
    finally:
        batch.web.stop()
    by_url = {url(b): b for b in BLOGS}
    for strategy in STRATEGIES:
        batch.hits[strategy] = [
            by_url[h.url]
            for h in batch.web.hits()
            if h.url in by_url and h.user_agent == _agent(strategy)
        ]
    return batch


@pytest.fixture(scope="module")
def crawls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Batch]]:
    """Every strategy crawled with Scrapy's scheduler and, when Redis answers, scrapy-redis's;
    the two batches run side by side, each against its own little web."""
    tmp = tmp_path_factory.mktemp("strategies")
    with contextlib.ExitStack() as stack:
        started = {"scrapy": _start(tmp)}
        if bs.redis_client() is not None:
            started["redis"] = _start(tmp, stack.enter_context(bs.redis_prefix("strategies")))
        yield {key: _finish(batch) for key, batch in started.items()}


def _check(batch: Batch, strategy: str, expected: list[str]) -> None:
    assert batch.proc.returncode == 0, batch.log[-3000:]
    assert batch.hits[strategy] == expected  # every blog fetched once, in this order
    assert f"Crawl strategy: {strategy}" in batch.log
    assert f"Strategy {strategy}: frontier 0 blogs queued, {len(BLOGS)} fetched" in batch.log
    assert "Traceback" not in batch.log
    # the crawl summary (blogfeeds.extensions.summary) closes every crawl's log
    assert batch.log.count(f"Blogs: {len(BLOGS)}, with a feed: 0 (0 %); friend links: 15") == 5


@pytest.mark.integration
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_crawl_visit_order(crawls: dict[str, Batch], strategy: str) -> None:
    _check(crawls["scrapy"], strategy, EXPECTED[strategy].split())


@pytest.mark.integration
@pytest.mark.services
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_crawl_visit_order_redis(crawls: dict[str, Batch], strategy: str) -> None:
    if "redis" not in crawls:
        pytest.skip(bs.REDIS_UNREACHABLE)
    _check(crawls["redis"], strategy, simulate(strategy, ties="url"))


def test_redis_ties_by_url() -> None:
    # depth 2 of the breadth-first walk in URL order; F no longer comes after P2
    assert simulate("bfs", ties="url") == "S A B C D E F I J K P1 P2 P3 G".split()


def test_only_raising_strategies_keep_queued_requests_in_memory() -> None:
    """bfs and dfs never re-push for a priority, so a JOBDIR's disk queue holds the only copy of
    a queued request; the others keep it to copy it."""
    request = object()
    for strategy in STRATEGIES:
        frontier = CrawlOrder(strategy)
        frontier.push("a.example", depth=1, url="http://a.example/", request=request)
        kept = frontier.pending["a.example"].request
        assert (kept is request) == (strategy in ("backlinks", "opic", "big-site-first"))


def test_the_fetched_copies_are_remembered_within_the_capacity() -> None:
    frontier = CrawlOrder("bfs", capacity=100)
    for i in range(10_000):
        blog = f"b{i}.example"
        token = frontier.push(blog, depth=1, url=f"http://{blog}/")
        assert frontier.dispatch(blog, token)
        assert frontier.dispatch(blog, token)  # a retry of the copy fetched
    assert len(frontier.dispatched) <= 200 and frontier.dispatched.added == 10_000
    assert len(frontier) == 0
