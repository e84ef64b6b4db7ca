"""The shared Redis frontier (blogfeeds.frontier) against the Redis and MariaDB of this machine.

Unit tests drive :class:`~blogfeeds.frontier.scheduler.Scheduler` directly on real Redis keys; the
crawl tests run two ``scrapy crawl blogs`` processes over a generated loopback web of 1,000
blogs (``tests/blogosphere.py``) with MySQL storage. Every test uses its own key prefix and
database, deleted afterwards; all skip with the reason when a server is unreachable.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import scrapy
from scrapy.utils.request import request_from_dict
from scrapy.utils.test import get_crawler

from blogfeeds.frontier.defaults import LEASE_META, FrontierKeys
from blogfeeds.frontier.dupefilter import normalize_url
from blogfeeds.frontier.scheduler import Scheduler
from blogfeeds.frontier.serializer import JsonRequestSerializer
from blogfeeds.frontier.spiders import RedisFrontierMixin
from tests import blogosphere as bs
from tests.littleweb import LittleWeb

pytestmark = pytest.mark.services

N_BLOGS = 1000


@pytest.fixture
def redis() -> Any:
    client = bs.redis_client()
    if client is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    yield client
    client.close()


@pytest.fixture
def prefix(redis: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    with bs.redis_prefix(request.node.name[:40]) as value:
        yield value


@pytest.fixture
def mysql_url(request: pytest.FixtureRequest) -> Iterator[str]:
    pytest.importorskip("pymysql")
    if bs.mariadb_admin() is None:
        pytest.skip("MariaDB unreachable at 127.0.0.1:3306 (.ci/services.sh starts it)")
    with bs.throwaway_database(request.node.name[:20].replace("-", "_")) as url:
        yield url


class TinySpider(RedisFrontierMixin, scrapy.Spider):
    name = "tiny"

    def parse_home(self, response: Any) -> None:
        pass

    def home_failed(self, failure: Any) -> None:
        pass


def scheduler(prefix: str, worker: str = "w1", **settings: Any) -> tuple[Scheduler, Any]:
    crawler = get_crawler(
        TinySpider,
        settings_dict={
            "REDIS_URL": bs.REDIS_URL,
            "SCHEDULER": "blogfeeds.frontier.scheduler.Scheduler",
            "DUPEFILTER_CLASS": "blogfeeds.frontier.dupefilter.RFPDupeFilter",
            "SCHEDULER_SERIALIZER": "blogfeeds.frontier.serializer.JsonRequestSerializer",
            "SCHEDULER_PERSIST": True,
            "BLOGFEEDS_REDIS_PREFIX": prefix,
            "BLOGFEEDS_WORKER_ID": worker,
            "BLOGFEEDS_WORKER_TTL": 0.5,
            **settings,
        },
    )
    spider = TinySpider.from_crawler(crawler)
    sched = Scheduler.from_crawler(crawler)
    sched.open(spider)
    return sched, spider


def home_request(spider: Any, url: str, blog: str, **kwargs: Any) -> scrapy.Request:
    return scrapy.Request(
        url,
        callback=spider.parse_home,
        errback=spider.home_failed,
        meta={"blog_id": blog, "depth": 1},
        **kwargs,
    )


# --- serializer, fingerprints, configuration ----------------------------------------------------


def test_json_serializer_round_trips_our_requests(prefix: str) -> None:
    _, spider = scheduler(prefix)
    request = home_request(spider, "https://例子.example/a?q=博客", "例子.example", priority=-3)
    request.headers["X-Bytes"] = b"\xff\x00 latin-1"
    request.meta.update(redirect_urls=["http://x.example/"], redirect_reasons=[301], n=1.5)
    data = JsonRequestSerializer.dumps(request.to_dict(spider=spider))
    assert b"pickle" not in data and data.startswith(b"{")
    back = request_from_dict(JsonRequestSerializer.loads(data), spider=spider)
    assert back.to_dict(spider=spider) == request.to_dict(spider=spider)
    assert back.callback == spider.parse_home and back.errback == spider.home_failed
    assert back.headers[b"X-Bytes"] == b"\xff\x00 latin-1"
    with pytest.raises(TypeError, match="a request holds a object"):
        JsonRequestSerializer.dumps({"meta": {"thing": object()}})


def test_normalised_urls_and_blog_identity_fingerprints(prefix: str) -> None:
    sched, spider = scheduler(prefix)
    assert normalize_url("HTTP://A.Example:80/?b=2&a=1#top") == "http://a.example/?a=1&b=2"
    assert normalize_url("https://a.example:443") == "https://a.example/"
    fp = sched.df.request_fingerprint
    plain = scrapy.Request("http://a.example/x?b=2&a=1")
    assert fp(plain) == fp(scrapy.Request("HTTP://a.example:80/x?a=1&b=2#f"))
    http = home_request(spider, "http://alice.example/", "alice.example")
    https = home_request(spider, "https://www.alice.example/", "alice.example")
    assert fp(http) == fp(https)  # one blog, one request, on every worker
    redirected = https.replace(url="https://alice.example/blog/")
    redirected.meta["redirect_urls"] = [https.url]
    assert fp(redirected) != fp(https)  # a redirect is followed


def test_scrapys_own_dupefilter_is_refused_with_a_clear_error(prefix: str) -> None:
    crawler = get_crawler(
        TinySpider,
        settings_dict={
            "REDIS_URL": bs.REDIS_URL,
            "SCHEDULER": "blogfeeds.frontier.scheduler.Scheduler",
            "DUPEFILTER_CLASS": "scrapy.dupefilters.RFPDupeFilter",
        },
    )
    with pytest.raises(
        ValueError, match=r"set it to blogfeeds\.frontier\.dupefilter\.RFPDupeFilter"
    ):
        Scheduler.from_crawler(crawler)


@pytest.mark.parametrize("redis_url", ["", bs.REDIS_URL])
def test_settings_switch_on_from_the_environment(redis_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "MYSQL_URL"}}
    if redis_url:
        env["REDIS_URL"] = redis_url
    code = (
        "import json; from blogfeeds import settings as s; print(json.dumps({k: getattr(s, k, "
        "None) for k in ['SCHEDULER', 'DUPEFILTER_CLASS', 'SCHEDULER_PERSIST', "
        "'SCHEDULER_SERIALIZER', 'SCHEDULER_QUEUE_CLASS', 'MYSQL_URL']}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=bs.REPO, env=env, capture_output=True, check=True
    )
    got = json.loads(out.stdout)
    if not redis_url:
        assert set(got.values()) == {None}  # Scrapy's defaults: nothing changes
        return
    assert got == {
        "SCHEDULER": "blogfeeds.frontier.scheduler.Scheduler",
        "DUPEFILTER_CLASS": "blogfeeds.frontier.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": True,
        "SCHEDULER_SERIALIZER": "blogfeeds.frontier.serializer.JsonRequestSerializer",
        "SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.PriorityQueue",
        "MYSQL_URL": None,
    }


# --- scheduler on real Redis keys ---------------------------------------------------------------


def test_enqueue_is_deduplicated_and_dequeue_is_leased(redis: Any, prefix: str) -> None:
    sched, spider = scheduler(prefix)
    keys = FrontierKeys(prefix, "tiny", "w1")
    assert sched.enqueue_request(home_request(spider, "http://a.example/", "a.example"))
    assert not sched.enqueue_request(home_request(spider, "https://www.a.example/", "a.example"))
    assert sched.enqueue_request(home_request(spider, "http://b.example/", "b.example"))
    assert redis.zcard(keys.requests) == 2 and redis.scard(keys.dupefilter) == 2
    assert redis.zrange(keys.requests, 0, 0)[0].startswith(b"{")  # JSON, not pickle
    first = sched.next_request()
    assert first is not None and first.url == "http://a.example/"
    lease = first.meta[LEASE_META]
    assert redis.hget(keys.inflight, lease) is not None  # popped = in flight, atomically
    # a redirect of a popped request replaces it: queued, and the lease released
    redirect = first.replace(url="http://a.example/blog/")
    redirect.meta["redirect_urls"] = [first.url]
    assert sched.enqueue_request(redirect)
    assert redis.hlen(keys.inflight) == 0
    queued = [JsonRequestSerializer.loads(data) for data in redis.zrange(keys.requests, 0, -1)]
    assert [LEASE_META in entry["meta"] for entry in queued] == [False, False]
    # stats calls without spider= (a ScrapyDeprecationWarning would fail this test: -W error)
    assert sched.stats.get_value("frontier/filtered") == 1
    assert sched.stats.get_value("scheduler/enqueued/redis") == 3


def test_a_worker_holding_max_held_requests_leaves_the_rest_queued(redis: Any, prefix: str) -> None:
    keys = FrontierKeys(prefix, "tiny", "w1")
    sched, spider = scheduler(prefix, BLOGFEEDS_FRONTIER_MAX_HELD=2)
    for i in range(3):
        sched.enqueue_request(home_request(spider, f"http://h{i}.example/", f"h{i}.example"))
    # the engine's requests in progress (ExecutionEngine._slot.inprogress)
    held: set[scrapy.Request] = set()
    sched.crawler.engine = SimpleNamespace(_slot=SimpleNamespace(inprogress=held))
    for _ in range(2):
        request = sched.next_request()
        assert request is not None
        held.add(request)
    assert sched.next_request() is None  # two held: the third stays for another worker
    assert redis.zcard(keys.requests) == 1 and sched.has_pending_requests()
    held.pop()  # one finished
    assert sched.next_request() is not None and redis.zcard(keys.requests) == 0
    unbounded, spider = scheduler(prefix, worker="w2", BLOGFEEDS_FRONTIER_MAX_HELD=0)
    unbounded.crawler.engine = SimpleNamespace(_slot=SimpleNamespace(inprogress=held))
    unbounded.enqueue_request(home_request(spider, "http://h9.example/", "h9.example"))
    assert unbounded.next_request() is not None  # 0: no bound of its own


def test_a_killed_workers_in_flight_requests_are_requeued_on_restart(
    redis: Any, prefix: str
) -> None:
    keys = FrontierKeys(prefix, "tiny", "w1")
    sched, spider = scheduler(prefix)
    for i in range(3):
        sched.enqueue_request(home_request(spider, f"http://b{i}.example/", f"b{i}.example"))
    redis.rpush(keys.start_urls, json.dumps({"url": "http://seed.example/"}))
    popped = [sched.next_request(), sched.next_request()]
    seeds = sched.pop_seeds(10)
    assert all(popped) and len(seeds) == 1
    assert redis.zcard(keys.requests) == 1 and redis.hlen(keys.inflight) == 3
    # "kill": no close(); the same worker id starts again once the liveness key expires
    started = time.monotonic()
    again, _ = scheduler(prefix)
    assert time.monotonic() - started >= 0.2  # waited out the predecessor's liveness key
    assert redis.hlen(keys.inflight) == 0
    assert redis.zcard(keys.requests) == 3
    # each marked: the killed run may have recorded its links' offers without queueing them
    assert [json.loads(x) for x in redis.lrange(keys.start_urls, 0, -1)] == [
        {"url": "http://seed.example/", "meta": {"frontier_recovered": True}}
    ]
    queued = [JsonRequestSerializer.loads(x) for x in redis.zrange(keys.requests, 0, -1)]
    assert sorted(e["meta"].get("frontier_recovered", False) for e in queued) == [
        False,
        True,
        True,
    ]
    assert again.stats.get_value("frontier/recovered") == 3
    # another worker id does not take them: each worker recovers only its own
    sched2, _ = scheduler(prefix, worker="w2")
    sched2.next_request()
    assert redis.hlen(FrontierKeys(prefix, "tiny", "w2").inflight) == 1


def test_a_worker_is_not_idle_while_a_live_worker_has_requests_in_flight(
    redis: Any, prefix: str
) -> None:
    busy, spider = scheduler(prefix, worker="w2", BLOGFEEDS_WORKER_TTL=60)
    idle, _ = scheduler(prefix, worker="w1", BLOGFEEDS_WORKER_TTL=60)
    assert not idle.others_working() and not busy.others_working()
    busy.enqueue_request(home_request(spider, "http://a.example/", "a.example"))
    assert busy.next_request() is not None
    assert idle.others_working()  # w2's page may queue more
    assert not busy.others_working()  # its own leases are not another worker's
    redis.delete(FrontierKeys(prefix, "tiny", "w2").liveness)  # w2 died: its leases wait
    assert not idle.others_working()


def test_a_worker_id_in_use_is_refused(prefix: str) -> None:
    scheduler(prefix, BLOGFEEDS_WORKER_TTL=60)  # alive: its liveness key lasts 60 s
    with pytest.raises(RuntimeError, match="in use by a live worker"):
        scheduler(prefix, BLOGFEEDS_WORKER_TTL=0.5)  # gives up after its own TTL + 1 s


# --- crawls --------------------------------------------------------------------------------------


def worker_env(web: LittleWeb, prefix: str, mysql_url: str) -> dict[str, str]:
    env = web.env()
    env.update(REDIS_URL=bs.REDIS_URL, BLOGFEEDS_REDIS_PREFIX=prefix, MYSQL_URL=mysql_url)
    env.pop("BLOGFEEDS_DATABASE_URL", None)
    return env


def worker_cmd(name: str, tmp: Path, *extra: str) -> list[str]:
    return bs.crawl_command(
        f"BLOGFEEDS_WORKER_ID={name}",
        "BLOGFEEDS_WORKER_TTL=3",
        "MAX_IDLE_TIME_BEFORE_CLOSE=3",
        f"BLOGFEEDS_SPOOL_PATH={tmp / f'spool-{name}.jsonl'}",
        *extra,
    )


def seed(env: dict[str, str], *urls: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "scrapy", "seed", *urls],
        cwd=bs.REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert f"pushed {len(urls)} seeds" in out.stdout


def stored(mysql_url: str) -> tuple[Counter[str], int]:
    import pymysql

    conn = pymysql.connect(**bs.MARIADB, database=mysql_url.rsplit("/", 1)[1], charset="utf8mb4")
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT blog_id FROM blogs")
            blogs = Counter(row[0] for row in cursor.fetchall())
            cursor.execute("SELECT COUNT(*) FROM friend_links")
            links = int(cursor.fetchone()[0])
    finally:
        conn.close()
    return blogs, links


def stats_of(log: Path) -> dict[str, Any]:
    text = log.read_text("utf-8", "replace")
    values = dict(re.findall(r"'([\w/.-]+)': (\d+|'[^']*')", text))
    return {k: v.strip("'") for k, v in values.items()}


def assert_clean(log: Path) -> None:
    text = log.read_text("utf-8", "replace")
    assert "Traceback" not in text, text[-3000:]
    assert not re.search(r"Warning: .*(scrapy_redis|blogfeeds[/.]frontier)", text), text[-3000:]
    assert "'finish_reason': 'finished'" in text, text[-3000:]


@pytest.fixture(scope="module")
def little_web() -> Iterator[tuple[bs.Blogosphere, LittleWeb]]:
    web = bs.blogosphere(N_BLOGS)
    with LittleWeb(web.routes) as served:
        yield web, served


def test_two_workers_fetch_every_page_exactly_once(
    little_web: tuple[bs.Blogosphere, LittleWeb],
    redis: Any,
    prefix: str,
    mysql_url: str,
    tmp_path: Path,
) -> None:
    web, served = little_web
    served.clear_hits()
    env = worker_env(served, prefix, mysql_url)
    seed(env, bs.home(0))
    workers = [
        bs.start_worker(worker_cmd(name, tmp_path), env, tmp_path / f"{name}.log")
        for name in ("w1", "w2")
    ]
    for proc in workers:
        assert proc.wait(timeout=300) == 0
    for name in ("w1", "w2"):
        assert_clean(tmp_path / f"{name}.log")
    hits = Counter(hit.url for hit in served.hits())
    assert [url for url, n in hits.items() if n > 1] == []  # exactly once in total
    assert set(web.homes) <= set(hits)
    blogs, links = stored(mysql_url)
    assert set(blogs) == web.blog_ids and max(blogs.values()) == 1
    assert links == web.edges()
    stats = [stats_of(tmp_path / f"{n}.log") for n in ("w1", "w2")]
    both = [int(st.get("scheduler/dequeued/redis", 0)) for st in stats]
    # a blog found again at a lower depth while queued is queued again; the older copy is
    # dropped before download (blogfeeds.crawl.depth), so it is dequeued and never fetched
    stale = sum(int(st.get("blogfeeds/frontier/stale_dropped", 0)) for st in stats)
    assert sum(both) - stale == N_BLOGS and min(both) > 0  # both workers took a share
    keys = FrontierKeys(prefix, "blogs", "w1")
    assert redis.hlen(keys.inflight) == 0 and redis.zcard(keys.requests) == 0
    assert redis.hlen(keys.blog_ids) == N_BLOGS and redis.scard(keys.claims) == 0


def test_a_worker_killed_mid_crawl_then_restarted_loses_nothing(
    little_web: tuple[bs.Blogosphere, LittleWeb],
    redis: Any,
    prefix: str,
    mysql_url: str,
    tmp_path: Path,
) -> None:
    web, served = little_web
    served.clear_hits()
    env = worker_env(served, prefix, mysql_url)
    seed(env, bs.home(0))
    keys = FrontierKeys(prefix, "blogs", "w1")
    workers: list[subprocess.Popen[bytes]] = []
    try:
        # w1 takes the seed alone. Started together, w2 once took it and dequeued all 1,000
        # blogs while w1, idle, found the queue empty each time it asked (every 5 s).
        w1 = bs.start_worker(worker_cmd("w1", tmp_path), env, tmp_path / "w1.log")
        workers.append(w1)
        bs.wait_for(lambda: redis.hlen(keys.inflight) > 0, 60, "w1 to take the seed")
        w2 = bs.start_worker(worker_cmd("w2", tmp_path), env, tmp_path / "w2.log")
        workers.append(w2)
        deadline = time.monotonic() + 120
        while redis.hlen(keys.blog_ids) < N_BLOGS * 0.3 or redis.hlen(keys.inflight) < 5:
            assert time.monotonic() < deadline and w1.poll() is None, "w1 never got going"
            time.sleep(0.02)
        w1.kill()  # SIGKILL: no clean-up of any kind
        w1.wait()
        in_flight = redis.hlen(keys.inflight)
        assert in_flight > 0
        w1b = bs.start_worker(worker_cmd("w1", tmp_path), env, tmp_path / "w1b.log")
        workers.append(w1b)
        assert w1b.wait(timeout=300) == 0 and w2.wait(timeout=300) == 0
    finally:  # a failed wait leaves no worker running into the next test
        for proc in workers:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert_clean(tmp_path / "w1b.log")
    assert "re-queued" in (tmp_path / "w1b.log").read_text("utf-8")
    hits = Counter(hit.url for hit in served.hits())
    assert set(web.homes) <= set(hits)  # at least once
    blogs, links = stored(mysql_url)
    assert set(blogs) == web.blog_ids and max(blogs.values()) == 1
    assert links == web.edges()
    assert redis.hlen(keys.inflight) == 0 and redis.scard(keys.claims) == 0


@pytest.mark.parametrize("older_copy", [False, True], ids=["new", "lowered"])
def test_links_a_killed_worker_offered_but_never_queued_are_crawled_after_its_restart(
    little_web: tuple[bs.Blogosphere, LittleWeb],
    redis: Any,
    prefix: str,
    mysql_url: str,
    tmp_path: Path,
    *,
    older_copy: bool,
) -> None:
    """The state a SIGKILL leaves between recording a friend's depth and queueing its request
    (the race behind a lost blog in the kill test above): the page in flight, its friends' depths
    recorded, none queued. The restarted worker re-reads the page and queues the friends.

    ``lowered``: one friend was queued already, one hop further; the killed run lowered its
    depth (which makes the queued copy stale) and died before queueing the copy at the lower
    depth, so the re-read page's offer must not be dropped as seen by the dupefilter."""
    _, served = little_web
    served.clear_hits()
    keys = FrontierKeys(prefix, "blogs", "w1")
    writer, spider = scheduler(prefix, worker="writer")  # TinySpider has the callbacks' names
    friends = bs.friends_of(0, N_BLOGS)
    if older_copy:
        older = home_request(spider, bs.home(friends[0]), bs.host(friends[0]))
        older.meta.update(depth=2, strategy_token="dead0000-1")  # pushed by a worker gone since
        redis.sadd(keys.dupefilter, writer.df.request_fingerprint(older))
        redis.zadd(keys.requests, {JsonRequestSerializer.dumps(older.to_dict(spider=spider)): 2})
    page = home_request(spider, bs.home(0), bs.host(0))
    page.meta["depth"] = 0
    redis.hset(keys.inflight, "r1", JsonRequestSerializer.dumps(page.to_dict(spider=spider)))
    redis.hset(keys.depths, mapping={bs.host(0): "0", **{bs.host(j): "1" for j in friends}})
    log = tmp_path / "w1.log"
    env = worker_env(served, prefix, mysql_url)
    proc = bs.start_worker(worker_cmd("w1", tmp_path, "DEPTH_LIMIT=1"), env, log)
    assert proc.wait(timeout=120) == 0
    assert_clean(log)
    hits = Counter(hit.url for hit in served.hits())
    assert {bs.home(j) for j in [0, *friends]} <= set(hits)
    assert [url for url, n in hits.items() if n > 1] == []
    blogs, _ = stored(mysql_url)
    assert set(blogs) == {bs.host(j) for j in [0, *friends]}
    stats = stats_of(log)
    assert int(stats["frontier/reoffered"]) == len(friends)
    assert int(stats["blogfeeds/frontier/stale_dropped"]) == int(older_copy)  # the depth-2 copy


def test_an_idle_worker_waits_for_work_then_closes(
    little_web: tuple[bs.Blogosphere, LittleWeb],
    redis: Any,
    prefix: str,
    mysql_url: str,
    tmp_path: Path,
) -> None:
    """A worker with an empty queue waits (MAX_IDLE_TIME_BEFORE_CLOSE), takes a seed pushed
    while it waits, and closes once it has been idle that long in a row."""
    _, served = little_web
    env = worker_env(served, prefix, mysql_url)
    log = tmp_path / "idle.log"
    started = time.monotonic()
    proc = bs.start_worker(
        worker_cmd("idle", tmp_path, "MAX_IDLE_TIME_BEFORE_CLOSE=4", "DEPTH_LIMIT=1"), env, log
    )
    time.sleep(3)
    assert proc.poll() is None  # still waiting, not exited
    redis.rpush(f"{prefix}blogs:start_urls", json.dumps({"url": bs.home(1)}))
    assert proc.wait(timeout=60) == 0
    elapsed = time.monotonic() - started
    assert_clean(log)
    assert "idle for" in log.read_text("utf-8")
    blogs, _ = stored(mysql_url)
    assert bs.host(1) in blogs
    assert elapsed >= 3 + 4


def test_a_worker_says_what_it_waits_for_and_a_seen_seed_how_to_recrawl_it(
    little_web: tuple[bs.Blogosphere, LittleWeb],
    prefix: str,
    mysql_url: str,
    tmp_path: Path,
) -> None:
    """A second crawl of a seed the frontier crawled already fetches nothing: it says so, and
    what it waits for; ``scrapy seed --recrawl`` makes it fetched and stored again."""
    _, served = little_web
    env = worker_env(served, prefix, mysql_url)

    def crawl(name: str) -> str:
        log = tmp_path / f"{name}.log"
        cmd = worker_cmd(name, tmp_path, "BLOGFEEDS_MAX_BLOGS=1")
        assert bs.start_worker(cmd, env, log).wait(timeout=90) == 0
        return log.read_text("utf-8", "replace")

    served.clear_hits()
    seed(env, bs.home(1))
    first = crawl("first")
    assert bs.home(1) in served.urls_fetched()
    waiting = (
        f"Nothing to crawl: waiting for seeds in Redis list {prefix}blogs:start_urls "
        "(`scrapy seed URL|FILE` pushes them), 3 s (MAX_IDLE_TIME_BEFORE_CLOSE) before closing"
    )
    assert waiting in first
    served.clear_hits()
    seed(env, bs.home(1))
    again = crawl("again")
    assert bs.home(1) not in served.urls_fetched()
    assert (
        f"Seed {bs.home(1)} was crawled before by this Redis frontier (keys {prefix}blogs:*): "
        f"not fetched again; `scrapy seed --recrawl {bs.home(1)}` crawls it again"
    ) in again
    assert waiting in again
    out = subprocess.run(
        [sys.executable, "-m", "scrapy", "seed", "--recrawl", bs.home(1)],
        cwd=bs.REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    crawl("recrawl")
    assert bs.home(1) in served.urls_fetched()
    assert stored(mysql_url)[0][bs.host(1)] == 1


def test_bad_seeds_in_redis_are_logged_and_counted(
    little_web: tuple[bs.Blogosphere, LittleWeb],
    redis: Any,
    prefix: str,
    mysql_url: str,
    tmp_path: Path,
) -> None:
    """Seeds pushed by hand that are not blogs (another scheme, no URL, not JSON, nested
    100,000 deep) are each logged with the reason, moved to the ``bad`` list and counted in
    ``frontier/bad_seed``; the good seed is crawled. A non-http URL once vanished without a
    word, and the nested seed stopped the worker with ``start_error`` at every start."""
    _, served = little_web
    bad = [{"url": "javascript:alert(1)"}, {"url": "ftp://files.example/"}, {"url": "not a url"}]
    redis.rpush(
        f"{prefix}blogs:start_urls",
        *(json.dumps(b) for b in bad),
        bs.home(2),  # a bare URL, not JSON
        b'{"url": "http://deep.example/", "meta": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        json.dumps({"url": bs.home(1)}),
    )
    log = tmp_path / "bad.log"
    proc = bs.start_worker(
        worker_cmd("bad", tmp_path, "BLOGFEEDS_MAX_BLOGS=1"),
        worker_env(served, prefix, mysql_url),
        log,
    )
    assert proc.wait(timeout=60) == 0
    assert_clean(log)
    text = log.read_text("utf-8")
    for reason in ("not an http(s) URL: 'javascript:", "not an http(s) URL: 'ftp:", "whitespace"):
        assert reason in text
    assert 'not JSON (Expecting value: line 1 column 1 (char 0)): push {"url": ...}' in text
    assert "RecursionError: maximum recursion depth exceeded" in text
    assert "'frontier/bad_seed': 5" in text
    assert redis.llen(f"{prefix}blogs:bad") == 5
    blogs, _ = stored(mysql_url)
    assert set(blogs) == {bs.host(1)}


def test_blog_dedupe_is_shared_and_claims_end_when_durable(redis: Any, prefix: str) -> None:
    from scrapy.exceptions import DropItem

    from blogfeeds.frontier.signals import batch_durable, batch_sealed, storage_opened
    from blogfeeds.items import Blog
    from blogfeeds.pipelines.dedupe import BlogDedupePipeline

    def worker(name: str) -> BlogDedupePipeline:
        crawler = get_crawler(
            settings_dict={
                "REDIS_URL": bs.REDIS_URL,
                "SCHEDULER": "blogfeeds.frontier.scheduler.Scheduler",
                "BLOGFEEDS_REDIS_PREFIX": prefix,
                "BLOGFEEDS_WORKER_ID": name,
            }
        )
        return BlogDedupePipeline.from_crawler(crawler)

    one, two = worker("w1"), worker("w2")
    one.crawler.signals.send_catch_log(storage_opened)
    keys = FrontierKeys(prefix, "blogs", "w1")
    item = Blog(blog_id="alice.example", url="https://alice.example/")
    assert asyncio.run(one.process_item(item)) is item
    assert redis.smembers(keys.claims) == {b"alice.example"}  # claimed, not durable yet
    with pytest.raises(DropItem, match=r"duplicate blog alice\.example") as dropped:
        asyncio.run(two.process_item(Blog(blog_id="alice.example", url="http://alice.example/")))
    assert dropped.value.log_level == "DEBUG"
    assert two.stats.get_value("blogfeeds/duplicate_blog") == 1
    assert redis.hget(keys.blog_ids, "alice.example") == b"w1"
    one.crawler.signals.send_catch_log(batch_sealed, seq=1)
    one.crawler.signals.send_catch_log(batch_durable, seq=1)
    assert redis.scard(keys.claims) == 0


def test_blog_dedupe_stores_a_blog_it_cannot_claim_in_redis(
    prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis unreachable when a blog is first seen: the blog passes (stored once, unclaimed,
    the error logged and counted), and a second sighting in the process is a duplicate."""
    from scrapy.exceptions import DropItem

    from blogfeeds.items import Blog
    from blogfeeds.pipelines.dedupe import BlogDedupePipeline

    crawler = get_crawler(
        settings_dict={
            "REDIS_URL": "redis://127.0.0.1:1/0",  # nothing listens on port 1
            "SCHEDULER": "blogfeeds.frontier.scheduler.Scheduler",
            "BLOGFEEDS_REDIS_PREFIX": prefix,
            "BLOGFEEDS_WORKER_ID": "w1",
        }
    )
    pipe = BlogDedupePipeline.from_crawler(crawler)
    item = Blog(blog_id="alice.example", url="https://alice.example/")
    assert asyncio.run(pipe.process_item(item)) is item
    bob = Blog(blog_id="bob.example", url="https://bob.example/")
    assert asyncio.run(pipe.process_item(bob)) is bob
    assert pipe.stats.get_value("blogfeeds/redis_errors") == 2
    assert caplog.text.count("Cannot claim blog") == 1  # one line for a run of failures
    assert "Cannot claim blog alice.example in Redis" in caplog.text
    with pytest.raises(DropItem, match=r"duplicate blog alice\.example"):
        asyncio.run(pipe.process_item(Blog(blog_id="alice.example", url="http://alice.example/")))
