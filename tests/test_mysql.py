"""MySQL storage against the MariaDB of this machine: schema, utf8mb4, the batching pipeline, lost
connections (``KILL``), a server that stays down (spool, stop, reload) and a crawl whose
database sessions are killed while it runs.

Every test uses its own throwaway database ``blogfeeds_test_<pid>_<name>`` (dropped afterwards)
and skips with the reason when MariaDB is unreachable. "Down" is made real without stopping the
shared server: the pipeline talks to MariaDB through :class:`Forwarder`, a loopback TCP relay
that the test shuts (every connection reset, new ones refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.test import get_crawler

from blogfeeds.items import Blog, FeedInfo, FriendLink
from blogfeeds.pipelines.blogs import StoragePipeline
from blogfeeds.pipelines.spool import read_spool
from blogfeeds.storage import schema
from blogfeeds.storage.db import Store
from tests import blogosphere as bs
from tests.littleweb import LittleWeb

pytestmark = pytest.mark.services

pymysql = pytest.importorskip("pymysql")

TEXT = "博客 友情链接 🚀👩‍💻 𠮷 ‘quotes’ \\ %s"


@pytest.fixture
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    if bs.mariadb_admin() is None:
        pytest.skip("MariaDB unreachable at 127.0.0.1:3306 (.ci/services.sh starts it)")
    with bs.throwaway_database(request.node.name[:24].replace("-", "_")) as value:
        yield value


def query(url: str, sql: str) -> list[tuple[Any, ...]]:
    conn = pymysql.connect(**bs.MARIADB, database=url.rsplit("/", 1)[1], charset="utf8mb4")
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql)
            return list(cursor.fetchall())
    finally:
        conn.close()


def blog(i: int, **fields: Any) -> Blog:
    feed = FeedInfo(f"https://b{i}.example/feed.xml", "application/rss+xml", TEXT, 9.0, [TEXT])
    values: dict[str, Any] = {
        "url": f"https://b{i}.example/",
        "title": f"{TEXT} {i}",
        "abstract": TEXT,
        "feed_url": feed.url,
        "feeds": [feed],
        "fetched_at": "2026-11-29T20:36:29Z",
    }
    values.update(fields)
    return Blog(blog_id=f"b{i}.example", **values)


def link(i: int, j: int) -> FriendLink:
    return FriendLink(f"b{i}.example", f"https://b{j}.example/", f"b{j}.example", TEXT)


def pipeline(url: str, tmp_path: Path, **settings: Any) -> StoragePipeline:
    crawler = get_crawler(
        settings_dict={
            "MYSQL_URL": url,
            "BLOGFEEDS_DATABASE_URL": f"sqlite:///{tmp_path / 'unused.sqlite3'}",
            "BLOGFEEDS_SPOOL_PATH": str(tmp_path / "spool.jsonl"),
            **settings,
        }
    )
    return StoragePipeline.from_crawler(crawler)


async def feed(pipe: StoragePipeline, items: list[Any]) -> None:
    """Items through the pipeline as Scrapy does: a returned coroutine is awaited."""
    for item in items:
        result = pipe.process_item(item)
        if asyncio.iscoroutine(result):
            result = await result
        assert result is item


async def run_pipeline(pipe: StoragePipeline, items: list[Any]) -> None:
    await pipe.open_spider()
    await feed(pipe, items)
    await pipe.close_spider()


class Forwarder:
    """A loopback TCP relay to MariaDB that can be shut: all connections reset, new ones
    refused (what a client sees when the server goes down)."""

    def __init__(self, port: int = 3306) -> None:
        self.target = ("127.0.0.1", port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url_host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            with self.lock:
                self.sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_RDWR)

    def shut(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes accept(): nothing is accepted
        self.listener.close()
        with self.lock:
            for sock in self.sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()


# --- schema ------------------------------------------------------------------------------------


def test_every_table_and_the_connection_are_utf8mb4(url: str) -> None:
    with Store.open(url) as store:
        assert store.schema_version() == schema.SCHEMA_VERSION == schema.MIGRATIONS[-1][0]
        raw = store.connection.raw
        with raw.cursor() as cursor:
            cursor.execute("SELECT @@character_set_connection, @@character_set_client")
            assert cursor.fetchone() == ("utf8mb4", "utf8mb4")
    rows = query(
        url,
        "SELECT table_name, table_collation FROM information_schema.tables "
        "WHERE table_schema = DATABASE() ORDER BY table_name",
    )
    assert set(schema.TABLES) <= {name for name, _ in rows}
    assert {collation for _, collation in rows} == {"utf8mb4_unicode_ci"}


def test_forward_migration_from_version_1_keeps_the_data(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 1)
    with Store.open(url) as store:
        with store._transaction() as cursor:  # a link row of version 1: no avatar column
            cursor.execute(
                "INSERT INTO friend_links (source_blog_id, target_blog_id, target_url, "
                "target_url_hash, name, container_score, source_url, first_seen, last_seen) "
                "VALUES (%s, %s, %s, %s, %s, 0, '', 't', 't')",
                ("b1.example", "b2.example", "https://b2.example/", "0" * 40, TEXT),
            )
        with store._transaction() as cursor:  # a blog row of version 1: no platform columns
            cursor.execute(
                "INSERT INTO blogs (blog_id, url, title, abstract, language, generator, "
                "feed_url, friend_count, status, depth, first_seen, fetched_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    *("b1.example", "https://b1.example/", TEXT, TEXT, "zh", "WordPress 6.4.2"),
                    *(None, 0, "no_feed", 0, "2026-11-29T20:36:29Z", "2026-11-29T20:36:29Z"),
                ),
            )
        assert store.schema_version() == 1
    monkeypatch.undo()
    with Store.open(url) as store:
        assert store.schema_version() == schema.SCHEMA_VERSION >= 4
        assert store.count("blogs") == 1 and store.count("friend_links") == 1
        for table in ("feed_aliases", "entries", "schedule"):
            assert store.count(table) == 0
        [row] = store.blogs()
        assert (row["title"], row["generator"]) == (TEXT, "WordPress 6.4.2")
        assert (row["platform"], row["platform_version"]) == ("WordPress", "6.4.2")
    versions = query(url, "SELECT version FROM schema_version ORDER BY version")
    assert versions == [(v,) for v, _ in schema.MIGRATIONS]


def test_new_tables_take_emoji_and_cjk_and_enforce_their_keys(url: str) -> None:
    with Store.open(url) as store, store._transaction() as cursor:
        cursor.execute(
            "INSERT INTO entries (feed_url_hash, guid_hash, guid, title, first_seen) "
            "VALUES (%s, %s, %s, %s, %s)",
            ("f" * 40, "g" * 40, TEXT, TEXT, "2026-11-29T20:36:29Z"),
        )
        cursor.execute(
            "INSERT INTO schedule (feed_url_hash, feed_url, interval_minutes, next_due, status) "
            "VALUES (%s, %s, %s, %s, %s)",
            ("f" * 40, f"https://b.example/{TEXT}", 60.0, "2026-11-29T21:00:00Z", "ok"),
        )
    assert query(url, "SELECT guid, title FROM entries") == [(TEXT, TEXT)]
    assert query(url, "SELECT rank_score, level, consecutive_failures FROM schedule") == [
        (0.0, 0, 0)
    ]
    with (
        pytest.raises(pymysql.err.IntegrityError),
        Store.open(url) as store,
        store._transaction() as cursor,
    ):
        cursor.execute(
            "INSERT INTO schedule (feed_url_hash, feed_url, interval_minutes, next_due, "
            "status) VALUES (%s, 'x', 1, 'x', 'x')",
            ("f" * 40,),
        )


# --- the pipeline ------------------------------------------------------------------------------


def test_pipeline_batches_upserts_and_round_trips_text(url: str, tmp_path: Path) -> None:
    pipe = pipeline(url, tmp_path, BLOGFEEDS_DB_BATCH_SIZE=10)
    items = [x for i in range(25) for x in (blog(i), link(i, i + 1))]
    asyncio.run(run_pipeline(pipe, items))
    assert query(url, "SELECT COUNT(*) FROM blogs") == [(25,)]
    assert query(url, "SELECT COUNT(*) FROM friend_links") == [(25,)]
    assert query(url, "SELECT title, abstract FROM blogs WHERE blog_id = 'b7.example'") == [
        (f"{TEXT} 7", TEXT)
    ]
    assert query(url, "SELECT name FROM friend_links LIMIT 1") == [(TEXT,)]
    assert pipe.stats.get_value("blogfeeds/db/blogs_written") == 25
    # again: upserts, nothing doubled
    asyncio.run(run_pipeline(pipeline(url, tmp_path), [blog(3, title="new"), link(3, 4)]))
    assert query(url, "SELECT COUNT(*) FROM blogs") == [(25,)]
    assert query(url, "SELECT title FROM blogs WHERE blog_id = 'b3.example'") == [("new",)]


def test_a_killed_session_is_retried_and_the_batch_written_once(url: str, tmp_path: Path) -> None:
    pipe = pipeline(url, tmp_path, BLOGFEEDS_DB_BATCH_SIZE=5)
    admin = bs.mariadb_admin()

    async def scenario() -> None:
        await pipe.open_spider()
        await feed(pipe, [blog(i) for i in range(5)])
        assert pipe.store is not None
        with admin.cursor() as cursor:  # the server drops our session between batches
            cursor.execute(f"KILL {pipe.store.connection.raw.thread_id()}")
        await feed(pipe, [blog(i) for i in range(5, 10)])
        await pipe.close_spider()

    asyncio.run(scenario())
    admin.close()
    assert query(url, "SELECT COUNT(*), COUNT(DISTINCT blog_id) FROM blogs") == [(10, 10)]
    assert query(url, "SELECT COUNT(*) FROM feeds") == [(10,)]
    assert not (tmp_path / "spool.jsonl").exists()


def test_database_down_past_the_limit_spools_and_the_next_run_loads(
    url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    relay = Forwarder()
    via_relay = url.replace("127.0.0.1:3306", relay.url_host)
    pipe = pipeline(via_relay, tmp_path, BLOGFEEDS_DB_BATCH_SIZE=5, BLOGFEEDS_DB_DOWN_LIMIT=1.5)
    first = [blog(i) for i in range(5)]
    rest = [x for i in range(5, 12) for x in (blog(i), link(i, 0))]

    async def scenario() -> float:
        await pipe.open_spider()
        await feed(pipe, first)
        relay.shut()  # the server goes away and stays away
        started = time.monotonic()
        await feed(pipe, rest)
        waited = time.monotonic() - started
        await pipe.close_spider()
        return waited

    waited = asyncio.run(scenario())
    assert 1.5 <= waited < 15
    assert pipe.down and pipe.stats.get_value("blogfeeds/db/down") == 1
    assert pipe.stats.get_value("blogfeeds/db/retries") >= 2
    assert "unreachable for 2 s (BLOGFEEDS_DB_DOWN_LIMIT): stopping the crawl" in caplog.text
    spool = tmp_path / "spool.jsonl"
    assert str(spool) in caplog.text
    assert read_spool(spool) == rest  # everything not written, nothing twice
    assert query(url, "SELECT COUNT(*) FROM blogs") == [(5,)]
    # the next run (the server is back) loads the spool file when it opens, then deletes it
    again = pipeline(url, tmp_path)
    asyncio.run(run_pipeline(again, []))
    assert query(url, "SELECT COUNT(*) FROM blogs") == [(12,)]
    assert query(url, "SELECT COUNT(*) FROM friend_links") == [(7,)]
    assert again.stats.get_value("blogfeeds/db/spool_loaded") == len(rest)
    assert not spool.exists()


def test_a_database_unreachable_at_start_stops_the_crawl_cleanly(tmp_path: Path) -> None:
    relay = Forwarder()
    relay.shut()
    pipe = pipeline(f"mysql://root@{relay.url_host}/nothing", tmp_path, BLOGFEEDS_DB_DOWN_LIMIT=0.5)
    from scrapy.exceptions import CloseSpider

    with pytest.raises(CloseSpider) as stopped:
        asyncio.run(pipe.open_spider())
    assert stopped.value.reason == "database_down"


# --- the record of runs -------------------------------------------------------------------------


def test_a_crawl_and_a_feeds_run_on_mariadb_record_their_runs(url: str, tmp_path: Path) -> None:
    """RunRecorder writes its row off the reactor thread on MySQL: one per run, with what the
    run stored and fetched, and the reason of a failed blog (a friend answering 404)."""
    web = bs.blogosphere(5)
    web.routes[bs.home(0)]["body"] = bs.page(0, 5, [1, 2, 3, 4]).replace(
        "</ul>", '<li class="flink-item"><a href="http://gone.example/">Gone</a></li></ul>'
    )
    with LittleWeb(web.routes) as served:
        env = served.env()
        env["MYSQL_URL"] = url
        for key in ("REDIS_URL", "BLOGFEEDS_DATABASE_URL"):
            env.pop(key, None)
        for spider, args in (("blogs", ["-a", f"start_urls={bs.home(0)}"]), ("feeds", [])):
            cmd = [*bs.crawl_command("RETRY_TIMES=0", spider=spider), *args]
            log = tmp_path / f"{spider}.log"
            assert bs.start_worker(cmd, env, log).wait(timeout=240) == 0
            assert "could not record" not in log.read_text("utf-8", "replace")
    [(links,)] = query(url, "SELECT COUNT(*) FROM friend_links")
    columns = "spider, reason, blogs, friend_links, feeds_fetched, new_entries, failures"
    rows = query(url, f"SELECT {columns}, failures_by_kind FROM runs ORDER BY id")
    assert rows == [
        ("blogs", "finished", 6, links, 0, 0, 1, '{"http_4xx": 1}'),
        ("feeds", "finished", 0, 0, 5, 5, 0, "{}"),
    ]
    assert query(url, "SELECT status, status_reason FROM blogs WHERE blog_id = 'gone.example'") == [
        ("http_4xx", "HTTP 404")
    ]


# --- a crawl whose database sessions are killed while it runs ----------------------------------


def test_sessions_killed_mid_crawl_lose_and_double_nothing(url: str, tmp_path: Path) -> None:
    web = bs.blogosphere(300)
    name = url.rsplit("/", 1)[1]
    kills = 0
    stop = threading.Event()

    def killer() -> None:
        nonlocal kills
        admin = bs.mariadb_admin()
        while not stop.wait(0.15):
            with admin.cursor() as cursor:
                cursor.execute(
                    "SELECT id FROM information_schema.processlist WHERE db = %s AND id <> "
                    "CONNECTION_ID()",
                    (name,),
                )
                for (session,) in cursor.fetchall():
                    with contextlib.suppress(pymysql.err.OperationalError):
                        cursor.execute(f"KILL {session}")
                        kills += 1
        admin.close()

    out = tmp_path / "items.jsonl"
    with LittleWeb(web.routes) as served:
        env = served.env()
        env["MYSQL_URL"] = url
        for key in ("REDIS_URL", "BLOGFEEDS_DATABASE_URL"):
            env.pop(key, None)
        cmd = bs.crawl_command(
            "BLOGFEEDS_DB_BATCH_SIZE=40",
            "BLOGFEEDS_DB_FLUSH_INTERVAL=0.5",
            f"BLOGFEEDS_SPOOL_PATH={tmp_path / 'spool.jsonl'}",
        )
        cmd += ["-a", f"start_urls={bs.home(0)}", "-O", str(out)]
        log = tmp_path / "crawl.log"
        thread = threading.Thread(target=killer, daemon=True)
        proc = bs.start_worker(cmd, env, log)
        thread.start()
        try:
            assert proc.wait(timeout=240) == 0
        finally:
            stop.set()
            thread.join()
    text = log.read_text("utf-8", "replace")
    assert "'finish_reason': 'finished'" in text, text[-3000:]
    assert kills > 0
    retries = re.search(r"'blogfeeds/db/retries': (\d+)", text)
    assert retries and int(retries.group(1)) > 0, "no write was ever interrupted"
    assert not (tmp_path / "spool.jsonl").exists()
    items = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    blog_ids = {i["blog_id"] for i in items if i.get("type") == "blog"}
    edges = {(i["source_blog_id"], i["target_url"]) for i in items if "source_blog_id" in i}
    assert blog_ids == web.blog_ids and len(edges) == web.edges()
    assert query(url, "SELECT COUNT(*), COUNT(DISTINCT blog_id) FROM blogs") == [(300, 300)]
    assert query(url, "SELECT COUNT(*) FROM friend_links") == [(len(edges),)]
    assert query(url, "SELECT COUNT(*) FROM feeds") == [(300,)]


def test_a_crawl_stops_cleanly_when_the_database_stays_down(url: str, tmp_path: Path) -> None:
    """Mid-crawl the server goes away for good: the crawl ends with reason ``database_down``
    and a clear ERROR, every item it produced is either in the database or in the spool file,
    and the next run loads the spool."""
    web = bs.blogosphere(300)
    relay = Forwarder()
    out, spool, log = tmp_path / "items.jsonl", tmp_path / "spool.jsonl", tmp_path / "crawl.log"
    with LittleWeb(web.routes) as served:
        env = served.env()
        env["MYSQL_URL"] = url.replace("127.0.0.1:3306", relay.url_host)
        for key in ("REDIS_URL", "BLOGFEEDS_DATABASE_URL"):
            env.pop(key, None)
        cmd = bs.crawl_command(
            "BLOGFEEDS_DB_BATCH_SIZE=20",
            "BLOGFEEDS_DB_DOWN_LIMIT=2",
            f"BLOGFEEDS_SPOOL_PATH={spool}",
        )
        cmd += ["-a", f"start_urls={bs.home(0)}", "-O", str(out)]
        proc = bs.start_worker(cmd, env, log)
        deadline = time.monotonic() + 60
        while len(served.hits()) < 60:
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text("utf-8")
            time.sleep(0.02)
        relay.shut()
        assert proc.wait(timeout=120) == 1  # finish reason database_down (blogfeeds.commands.crawl)
    text = log.read_text("utf-8", "replace")
    assert "'finish_reason': 'database_down'" in text, text[-3000:]
    assert "(BLOGFEEDS_DB_DOWN_LIMIT): stopping the crawl" in text
    produced = {json.loads(line).get("blog_id") for line in out.read_text("utf-8").splitlines()}
    produced.discard(None)
    in_db = {row[0] for row in query(url, "SELECT blog_id FROM blogs")}
    spooled = {item.blog_id for item in read_spool(spool) if isinstance(item, Blog)}
    assert spooled and produced == in_db | spooled  # nothing lost
    asyncio.run(run_pipeline(pipeline(url, tmp_path, BLOGFEEDS_SPOOL_PATH=str(spool)), []))
    assert {row[0] for row in query(url, "SELECT blog_id FROM blogs")} == produced
    assert not spool.exists()
