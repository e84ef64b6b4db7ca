"""The feed schedule shared by many ``scrapy crawl feeds`` workers on one MariaDB database.

Every due feed goes to exactly one worker (:meth:`FeedStore.claim_due`: ``SELECT ... FOR UPDATE
SKIP LOCKED``, then the lease ``UPDATE``), and a worker that dies holding leases gives them back
when they expire (:data:`~blogfeeds.storage.feedstore.LEASE_MINUTES`). Each test uses a
throwaway database (``blogfeeds_test_<pid>_<name>``, dropped afterwards) and skips when MariaDB
is unreachable; the feeds are served by :class:`tests.littleweb.LittleWeb`, whose hit log says
how often each feed was fetched. Times are virtual (``BLOGFEEDS_NOW``).
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.test import get_crawler

from blogfeeds.items import FeedFetch
from blogfeeds.pipelines.feeds import FeedStorePipeline
from blogfeeds.revisit import LevelPolicy, from_minutes
from blogfeeds.storage.connection import connect
from blogfeeds.storage.feedstore import LEASE_MINUTES, FeedStore, iso, iso_minutes
from tests import blogosphere as bs
from tests.littleweb import LittleWeb, Route

pytestmark = [pytest.mark.services, pytest.mark.integration]

pytest.importorskip("pymysql")

T0 = iso_minutes("2024-03-04T00:00:00Z")
SECOND = 1 / 60
RSS_TYPE = "application/rss+xml"


@pytest.fixture
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    admin = bs.mariadb_admin()
    if admin is None:
        pytest.skip("MariaDB unreachable at 127.0.0.1:3306 (.ci/services.sh starts it)")
    admin.close()
    with bs.throwaway_database(request.node.name[:24].replace("-", "_")) as value:
        yield value


def feed_url(i: int) -> str:
    return f"http://feed{i:03d}.example/feed.xml"


def rss(i: int) -> str:
    """Feed ``i``: two entries."""
    items = "".join(
        f"<item><guid>{feed_url(i)}#{k}</guid><title>Post {k}</title><link>{feed_url(i)}#{k}"
        f"</link><pubDate>{format_datetime(from_minutes(T0 - 60 * k), usegmt=True)}</pubDate>"
        "</item>"
        for k in (1, 2)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>Feed {i}</title><link>http://feed{i:03d}.example/</link>{items}</channel></rss>"
    )


def fast(i: int, delay: float = 0.0) -> Route:
    return Route(body=rss(i), content_type=RSS_TYPE, delay=delay)


def schedule_feeds(url: str, n: int, due: float) -> list[str]:
    """``n`` feeds in the schedule, each due at ``due`` (epoch minutes)."""
    with FeedStore.open(url) as store:
        return [store.add_feed(feed_url(i), due) for i in range(n)]


def worker_command(now: float, *settings: str, loop: bool = False) -> list[str]:
    cmd = bs.crawl_command(
        f"BLOGFEEDS_NOW={iso(now)}",
        "BLOGFEEDS_REVISIT_INITIAL_T=200",
        "RETRY_TIMES=0",
        *settings,
        spider="feeds",
    )
    return [*cmd, "-a", "loop=true"] if loop else cmd


def worker_env(web: LittleWeb, url: str, tmp_path: Path, worker_id: str) -> dict[str, str]:
    env = web.env()
    env["MYSQL_URL"] = url  # wins over BLOGFEEDS_DATABASE_URL, which must stay unused
    env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{tmp_path / 'unused.sqlite3'}"
    env["BLOGFEEDS_WORKER_ID"] = worker_id
    return env


def stats_of(log: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"'(blogfeeds/feeds/[^']+)': (\d+)", log)}


def owner_of(log: str) -> str:
    found = re.search(r"Feeds worker (\S+):", log)
    assert found, log[-3000:]
    return found[1]


def count(url: str, where: str, *params: Any) -> int:
    """Schedule rows matching ``where`` (``?`` placeholders for ``params``)."""
    with FeedStore.open(url) as store:
        rows = store.query(f"SELECT COUNT(*) AS n FROM schedule WHERE {where}", params)
        return int(rows[0]["n"])


def feed_hits(web: LittleWeb) -> Counter[str]:
    return Counter(h.url for h in web.hits() if "/feed.xml" in h.url)


def fetched(web: LittleWeb) -> int:
    """Feed requests the web answered so far."""
    return sum(feed_hits(web).values())


@contextmanager
def table_locked(url: str, table: str, when: Callable[[], bool]) -> Iterator[None]:
    """``table`` locked (``LOCK TABLES ... WRITE``) by another session from the moment
    ``when()`` holds (polled, 60 s at most) to the end of the block."""
    locker = connect(url).raw
    try:
        bs.wait_for(when, 60, "the moment to lock " + table)
        with locker.cursor() as cursor:
            cursor.execute(f"LOCK TABLES {table} WRITE")
        yield
    finally:
        with locker.cursor() as cursor:
            cursor.execute("UNLOCK TABLES")
        locker.close()


# --- the claim itself, in one process ------------------------------------------------------------


def fetch_of(url: str, now: float) -> FeedFetch:
    """What the spider stores after a fetch: next visit 200 min later, lease dropped."""
    state = replace(
        LevelPolicy(initial_time=200).initial_state(url, now),
        last_fetch=now,
        next_due=now + 200,
        interval=200.0,
    )
    return FeedFetch(
        feed_url=url, fetched_at=iso(now), status="ok", http_status=200, state=asdict(state),
        level=2, entries=[], moved_to=None, blog_id=None, changed=False, host_pause_until=None,
    )  # fmt: skip


def test_concurrent_claims_are_disjoint_and_never_deadlock(url: str) -> None:
    urls = schedule_feeds(url, 400, T0)
    got: dict[str, list[str]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work(owner: str) -> None:
        mine = got.setdefault(owner, [])
        try:
            with FeedStore.open(url) as store:
                start.wait()
                while True:
                    claims = store.claim_due(T0, 7, owner)
                    if not claims and (store.next_due(T0) or T0 + 1) > T0:
                        return  # nothing due and free (a claim may skip rows locked right now)
                    for claim in claims:  # claim and store interleave across the four workers
                        mine.append(claim.url)
                        store.save_fetch(fetch_of(claim.url, T0))
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"w{k}",)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []  # no deadlock (1213) and no lock wait timeout reached the caller
    claimed = [u for share in got.values() for u in share]
    assert Counter(claimed) == Counter(urls)  # every row once, to one owner
    assert count(url, "last_fetch IS NOT NULL AND lease_owner IS NULL") == 400


def test_a_claim_returns_only_the_rows_it_leased(url: str) -> None:
    urls = schedule_feeds(url, 6, T0)
    with FeedStore.open(url) as store:
        first = store.claim_due(T0, 3, "w")
        second = store.claim_due(T0, 3, "w")  # same owner, same second: same lease_until
        assert [c.url for c in first] == urls[:3] and [c.url for c in second] == urls[3:]
        assert store.release("w", [urls[0]]) == 1
        assert [c.url for c in store.claim_due(T0, 5, "v")] == urls[:1]
        assert store.release("w") == 5


# --- two real workers ----------------------------------------------------------------------------


def test_two_loop_workers_fetch_each_due_feed_once(url: str, tmp_path: Path) -> None:
    n = 200
    urls = [feed_url(i) for i in range(n)]
    FeedStore.open(url).close()  # the schema, before two workers race to make it
    procs: list[subprocess.Popen[bytes]] = []
    logs = [tmp_path / "worker-a.log", tmp_path / "worker-b.log"]
    with LittleWeb({u: fast(i, delay=0.1) for i, u in enumerate(urls)}) as web:
        # Both on one host with the same BLOGFEEDS_WORKER_ID: their lease owners still differ.
        env = worker_env(web, url, tmp_path, "shared")
        cmd = worker_command(
            T0, "BLOGFEEDS_FEEDS_BATCH=10", "BLOGFEEDS_FEEDS_MAX_SLEEP=1", "CONCURRENT_REQUESTS=8",
            "CLOSESPIDER_TIMEOUT=60", loop=True,
        )  # fmt: skip
        try:
            procs = [bs.start_worker(cmd, env, log) for log in logs]
            bs.wait_for(
                lambda: all("Feeds worker" in log.read_text(errors="replace") for log in logs),
                30,
                "both workers up (and polling for due feeds every second)",
            )
            assert schedule_feeds(url, n, T0) == urls  # due at once
            bs.wait_for(
                lambda: count(url, "last_fetch IS NOT NULL AND lease_owner IS NULL") == n,
                45,
                "every feed fetched and no lease left",
            )
            time.sleep(0.5)  # a duplicate fetch would be in flight now: let it land
            hits = feed_hits(web)
        finally:
            for proc in procs:
                proc.send_signal(signal.SIGINT)  # graceful: release leases, dump stats
            for proc in procs:
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    texts = [log.read_text(encoding="utf-8", errors="replace") for log in logs]
    for proc, text in zip(procs, texts, strict=True):
        assert proc.returncode == 0, text[-3000:]
        assert "Traceback" not in text and "'finish_reason': 'shutdown'" in text, text[-3000:]
    assert hits == Counter(urls)  # each feed fetched exactly once in all
    fetched = [stats_of(text).get("blogfeeds/feeds/fetched", 0) for text in texts]
    assert sum(fetched) == n and min(fetched) > 0, fetched  # both workers did part of it
    assert all("blogfeeds/feeds/db_errors" not in stats_of(text) for text in texts)
    owners = [owner_of(text) for text in texts]
    assert owners[0] != owners[1] and all(o.startswith("shared:") for o in owners)
    with FeedStore.open(url) as store:
        rows = store.schedule()
        assert len(rows) == n and {r["status"] for r in rows} == {"ok"}
        assert all(r["last_fetch"] and r["lease_owner"] is None for r in rows)
        assert len(store.entries()) == 2 * n


def test_leases_of_a_killed_worker_expire_and_another_fetches_them(
    url: str, tmp_path: Path
) -> None:
    n = 20
    urls = schedule_feeds(url, n, T0)
    arrived: list[str] = []
    hold = threading.Event()

    def stuck(i: int) -> Route:
        def answer(request_url: str) -> Route:
            arrived.append(request_url)
            hold.wait(60)  # the doomed worker's requests hang until the test ends
            return fast(i)

        return Route(handler=answer)

    with LittleWeb({u: stuck(i) for i, u in enumerate(urls)}) as web:
        try:
            doomed = bs.start_worker(
                worker_command(T0),
                worker_env(web, url, tmp_path, "doomed"),
                tmp_path / "doomed.log",
            )
            try:
                bs.wait_for(
                    lambda: count(url, "lease_owner LIKE ?", "doomed:%") == n, 30, "the claim"
                )
                bs.wait_for(lambda: bool(arrived), 30, "a fetch in flight")
            finally:
                doomed.kill()  # SIGKILL: no release, no stats, nothing stored
                doomed.wait()
            with FeedStore.open(url) as store:
                rows = store.schedule()
            assert all(r["last_fetch"] is None for r in rows)
            lease_until = max(iso_minutes(r["lease_until"]) for r in rows)
            assert T0 + LEASE_MINUTES <= lease_until <= T0 + LEASE_MINUTES + 1

            for i, u in enumerate(urls):
                web.add(u, fast(i))
            web.clear_hits()

            def run(now: float, name: str) -> dict[str, int]:
                log = tmp_path / f"{name}.log"
                proc = bs.start_worker(
                    worker_command(now), worker_env(web, url, tmp_path, name), log
                )
                proc.wait(60)
                text = log.read_text(encoding="utf-8", errors="replace")
                assert proc.returncode == 0 and "Traceback" not in text, text[-3000:]
                return stats_of(text)

            early = run(T0 + 20, "early")  # 20 min later: the leases still hold
            assert early.get("blogfeeds/feeds/claimed", 0) == 0 and feed_hits(web) == Counter()
            assert count(url, "lease_owner LIKE ?", "doomed:%") == n

            late = run(lease_until + 2 * SECOND, "late")  # just after the leases expired
            assert late["blogfeeds/feeds/claimed"] == late["blogfeeds/feeds/fetched"] == n
            assert feed_hits(web) == Counter(urls)  # each once
        finally:
            hold.set()
    with FeedStore.open(url) as store:
        rows = store.schedule()
        assert all(r["last_fetch"] and r["lease_owner"] is None for r in rows)
        assert {r["status"] for r in rows} == {"ok"}
        assert len(store.entries()) == 2 * n


def test_a_refill_claim_waits_for_the_database_in_a_thread(url: str, tmp_path: Path) -> None:
    """While another session holds the ``schedule`` table locked, the worker's refill claim
    (due when fewer than half a batch of its feeds are left) waits in a thread: the feeds it
    already holds keep being fetched. A claim on the reactor thread would freeze every download
    after the 21st answer until the lock is released."""
    n, batch = 80, 40
    schedule_feeds(url, n, T0)
    with LittleWeb({feed_url(i): fast(i, delay=0.2) for i in range(n)}) as web:
        cmd = worker_command(T0, f"BLOGFEEDS_FEEDS_BATCH={batch}", "CONCURRENT_REQUESTS=2")
        log = tmp_path / "worker.log"
        proc = bs.start_worker(cmd, worker_env(web, url, tmp_path, "w"), log)
        try:
            with table_locked(url, "schedule", lambda: fetched(web) >= 4):
                bs.wait_for(
                    lambda: fetched(web) >= batch,
                    20,
                    "the rest of the first batch while the schedule is locked",
                )
        finally:
            if proc.wait(timeout=120) != 0:
                raise AssertionError(log.read_text(errors="replace")[-3000:])
        text = log.read_text(errors="replace")
        assert "Traceback" not in text, text[-3000:]
        assert feed_hits(web) == Counter(feed_url(i) for i in range(n))  # each once


def test_a_paused_host_is_released_in_a_thread(url: str, tmp_path: Path) -> None:
    """A host that answers 429 with Retry-After gets its queued feeds released (due again when
    the pause ends) by a call in the claimer's thread: while another session holds the
    ``schedule`` table locked, the other hosts' feeds keep being fetched. Released on the
    reactor thread, every download froze until the lock was released."""
    n, paused = 40, [f"http://paused.example/f{k}.xml" for k in range(5)]
    schedule_feeds(url, n, T0)
    with FeedStore.open(url) as store:  # due first, so claimed and requested first
        for feed in paused:
            store.add_feed(feed, T0 - 10)
    arrived = threading.Event()

    def throttled(request_url: str) -> Route:
        arrived.set()
        return Route(status=429, headers={"Retry-After": "3600"}, body="", delay=1.0)

    routes = {feed_url(i): fast(i, delay=0.2) for i in range(n)}
    routes[paused[0]] = Route(handler=throttled)
    with LittleWeb(routes) as web:
        cmd = worker_command(T0, "BLOGFEEDS_FEEDS_BATCH=100", "CONCURRENT_REQUESTS=2")
        log = tmp_path / "worker.log"
        proc = bs.start_worker(cmd, worker_env(web, url, tmp_path, "w"), log)
        try:
            with table_locked(url, "schedule", arrived.is_set):
                assert fetched(web) < n // 2  # most feeds are fetched after the 429
                bs.wait_for(lambda: fetched(web) >= n, 30, "every other host while locked")
        finally:
            if proc.wait(timeout=120) != 0:
                raise AssertionError(log.read_text(errors="replace")[-3000:])
        text = log.read_text(errors="replace")
        assert "Traceback" not in text, text[-3000:]
        assert stats_of(text)["blogfeeds/feeds/host_paused"] == len(paused) - 1
        assert [h.url for h in web.hits() if "paused" in h.url] == paused[:1]
    assert count(url, "lease_owner IS NOT NULL") == 0
    pause_end = iso(T0 + 60)
    assert count(url, "feed_url LIKE ? AND next_due >= ?", "http://paused.%", pause_end) == 5


# --- the pipeline's group commit -------------------------------------------------------------


def commits() -> int:
    """The server's count of COMMIT statements (every client's)."""
    admin = bs.mariadb_admin()
    assert admin is not None
    try:
        with admin.cursor() as cursor:
            cursor.execute("SHOW GLOBAL STATUS LIKE 'Com_commit'")
            return int(cursor.fetchone()[1])
    finally:
        admin.close()


def store_fetches(url: str, fetches: list[FeedFetch]) -> dict[str, Any]:
    """Every fetch through a FeedStorePipeline at once, as a busy worker hands them over."""
    crawler = get_crawler(settings_dict={"MYSQL_URL": url})
    pipe = FeedStorePipeline.from_crawler(crawler)

    async def scenario() -> None:
        await pipe.open_spider()  # MySQL: a coroutine (retries an unreachable server)
        await asyncio.gather(*(pipe.process_item(f) for f in fetches))
        await pipe.close_spider()

    asyncio.run(scenario())
    return crawler.stats.get_stats()


def test_the_pipeline_writes_fetches_that_arrive_together_in_few_transactions(url: str) -> None:
    n = 120
    urls = schedule_feeds(url, n, T0)
    with FeedStore.open(url) as store:
        assert len(store.claim_due(T0, n, "w")) == n
    before = commits()
    stats = store_fetches(url, [fetch_of(u, T0) for u in urls])
    assert commits() - before <= 10  # one commit per fetch was 120
    assert stats.get("blogfeeds/feeds/db_errors", 0) == 0
    assert count(url, "last_fetch IS NOT NULL AND lease_owner IS NULL") == n


def test_a_fetch_that_cannot_be_written_fails_alone(url: str) -> None:
    urls = schedule_feeds(url, 30, T0)
    fetches = [fetch_of(u, T0) for u in urls]
    fetches[7] = replace(fetches[7], level="not a level")  # raises inside the transaction
    stats = store_fetches(url, fetches)
    assert stats["blogfeeds/feeds/db_errors"] == 1
    assert count(url, "last_fetch IS NOT NULL") == 29
    assert count(url, "last_fetch IS NULL AND feed_url = ?", urls[7]) == 1


def test_a_worker_whose_connections_are_killed_reconnects_and_loses_nothing(
    url: str, tmp_path: Path
) -> None:
    """Every connection of the worker killed by the server mid-run (a failover, ``KILL``): the
    reactor's, the refill claims' and the pipeline's reconnect on their next transaction; a
    group of fetches whose transaction died is written again, so every feed is stored once."""
    n = 150
    schedule_feeds(url, n, T0)
    name = url.rsplit("/", 1)[1]
    with LittleWeb({feed_url(i): fast(i, delay=0.05) for i in range(n)}) as web:
        cmd = worker_command(T0, "BLOGFEEDS_FEEDS_BATCH=20", "CONCURRENT_REQUESTS=4")
        log = tmp_path / "worker.log"
        proc = bs.start_worker(cmd, worker_env(web, url, tmp_path, "w"), log)
        bs.wait_for(lambda: fetched(web) >= 40, 60, "the first fetches")
        admin = bs.mariadb_admin()
        assert admin is not None
        try:
            with admin.cursor() as cursor:
                cursor.execute(
                    "SELECT id FROM information_schema.processlist WHERE db = %s", (name,)
                )
                ids = [row[0] for row in cursor.fetchall()]
                for connection in ids:
                    cursor.execute(f"KILL CONNECTION {int(connection)}")
        finally:
            admin.close()
        assert len(ids) >= 3  # the reactor's store, the claimer and the pipeline's
        assert proc.wait(timeout=120) == 0, log.read_text(errors="replace")[-3000:]
    text = log.read_text(errors="replace")
    assert "reconnecting" in text  # the kill landed mid-run
    stats = stats_of(text)
    assert stats.get("blogfeeds/feeds/db_errors", 0) == 0, text[-3000:]
    assert feed_hits(web) == Counter(feed_url(i) for i in range(n))
    assert count(url, "last_fetch IS NOT NULL AND lease_owner IS NULL") == n


def test_a_worker_stopped_while_a_claim_waits_releases_that_claim_too(
    url: str, tmp_path: Path
) -> None:
    """SIGINT while a refill claim waits for the database: the worker waits for that claim
    (its ``spider_closed`` handler is a coroutine, not a deprecated Deferred) and then
    releases every lease it holds, the claim's included.

    ``feed_state`` locked by another session stops the claim after it leased its rows (its
    last statement reads that table), and nothing else of the worker waits for it: the
    pipeline, which writes ``feed_state``, is switched off, so every row the worker fetched
    stays leased to it until its final release."""
    n, batch = 80, 40
    schedule_feeds(url, n, T0)
    with LittleWeb({feed_url(i): fast(i, delay=0.05) for i in range(n)}) as web:
        cmd = worker_command(
            T0, f"BLOGFEEDS_FEEDS_BATCH={batch}", "CONCURRENT_REQUESTS=2", "ITEM_PIPELINES={}"
        )
        log = tmp_path / "worker.log"
        proc = bs.start_worker(cmd, worker_env(web, url, tmp_path, "w"), log)
        with table_locked(url, "feed_state", lambda: fetched(web) >= 4):
            bs.wait_for(lambda: fetched(web) >= batch, 20, "the first batch")
            bs.wait_for(lambda: count_leased(url) == n, 20, "the second batch's claim")
            proc.send_signal(signal.SIGINT)
            time.sleep(2.0)  # the worker closes while the claim waits
        assert proc.wait(timeout=60) == 0, log.read_text(errors="replace")[-3000:]
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and "Deprecat" not in text, text[-3000:]
    assert "Closing spider (shutdown)" in text
    assert fetched(web) == batch  # the second batch was claimed, not fetched
    assert count(url, "lease_owner IS NOT NULL") == 0


def count_leased(url: str) -> int:
    """Rows leased to anyone, as another session sees them (uncommitted leases included)."""
    with connect(url).raw as conn, conn.cursor() as cursor:
        cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED")
        cursor.execute("SELECT COUNT(*) FROM schedule WHERE lease_owner IS NOT NULL")
        return int(cursor.fetchone()[0])
