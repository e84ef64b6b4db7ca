"""The robots.txt cache in the store (blogfeeds.middlewares.robotscache), on a loopback web with
robots.txt obeyed, on SQLite and on MariaDB: a first crawl stores one row per host; a re-check
within the maximum age asks no robots.txt and still obeys a cached Disallow, nor does a feeds
run; an expired copy is
asked again conditionally (304: dated, not downloaded again); an unreachable robots.txt (503, a
dropped connection) leaves the cached copy serving, Disallow included; a cache that cannot write
turns itself off; the table keeps one row per host, its body bounded."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.storage.db import Store
from blogfeeds.storage.robots import (
    MAX_BODY,
    RobotsEntry,
    confirm_entries,
    read_entries,
    write_entries,
)
from tests import blogosphere as bs
from tests.littleweb import LittleWeb

pytestmark = pytest.mark.integration

N = 8
TAGGED, CLOSED, DROPPED = 0, 4, 5
"""Blog 0's robots.txt has an ETag and a Last-Modified; 4 and 5 shut everything (Disallow: /)."""
TAGGED_ROBOTS = "User-agent: *\nDisallow: /private/\n"
CLOSED_ROBOTS = "User-agent: *\nDisallow: /\n"
LONG_AGO = "2020-01-01T00:00:00Z"


def _robots(i: int) -> str:
    return f"{bs.home(i)}robots.txt"


def _web_routes() -> dict[str, dict[str, Any]]:
    routes = bs.blogosphere(N).routes
    routes[_robots(TAGGED)] = {
        "body": TAGGED_ROBOTS,
        "content_type": "text/plain",
        "headers": {"ETag": '"robots-v1"', "Last-Modified": "Sun, 29 Nov 2026 08:00:00 GMT"},
    }
    for i in (CLOSED, DROPPED):
        routes[_robots(i)] = {"body": CLOSED_ROBOTS, "content_type": "text/plain"}
    return routes  # the other hosts answer 404: allow all


def _crawl(
    web: LittleWeb, database: str, tmp: Path, name: str, *args: str, spider: str = "blogs"
) -> dict[str, int]:
    """One ``scrapy crawl SPIDER`` with robots.txt obeyed; its stats."""
    env = web.env()
    env["BLOGFEEDS_DATABASE_URL"] = database
    cmd = [
        *bs.crawl_command(
            "ROBOTSTXT_OBEY=True",
            "RETRY_TIMES=0",
            "BLOGFEEDS_RECHECK_MIN_HOURS=0",
            spider=spider,
        ),
        *args,
    ]
    proc = subprocess.run(
        cmd, cwd=bs.REPO, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    (tmp / f"{name}.log").write_text(proc.stderr, "utf-8")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return {k: int(float(v)) for k, v in re.findall(r"'([^']+)': ([0-9.]+),?\n", proc.stderr)}


def _entries(database: str) -> dict[str, RobotsEntry]:
    with Store.open(database) as store:
        return read_entries(store, [bs.host(i) for i in range(N)])


def _age(database: str) -> None:
    """Every cached copy confirmed long ago (older than any maximum age)."""
    with Store.open(database) as store, store._transaction() as cursor:
        cursor.execute(f"UPDATE robots_txt SET fetched_at = {store.dialect.param}", (LONG_AGO,))


def _robots_hits(web: LittleWeb) -> list[Any]:
    return [h for h in web.hits() if h.url.endswith("/robots.txt")]


def _hosts_hit(web: LittleWeb) -> set[str]:
    return {h.url.split("/")[2] for h in web.hits()}


def scenario(database: str, tmp: Path) -> None:
    with LittleWeb(_web_routes()) as web:
        first = _crawl(web, database, tmp, "first", "-a", f"start_urls={bs.home(0)}")
        hits = _robots_hits(web)
        assert len(hits) == N, [h.url for h in hits]  # one per host
        assert first.get("robotstxt/forbidden", 0) >= 2  # blogs 4 and 5
        entries = _entries(database)
        assert set(entries) == {bs.host(i) for i in range(N)}
        tagged = entries[bs.host(TAGGED)]
        assert (tagged.status, tagged.body) == (200, TAGGED_ROBOTS.encode())
        assert tagged.etag == '"robots-v1"'
        assert tagged.last_modified == "Sun, 29 Nov 2026 08:00:00 GMT"
        assert entries[bs.host(1)].status == 404 and entries[bs.host(1)].body == b""

        # within the maximum age: no robots.txt asked, the cached Disallow still obeyed
        web.clear_hits()
        again = _crawl(web, database, tmp, "again", "-a", "recheck=all")
        assert _robots_hits(web) == []
        assert again["blogfeeds/robots_txt_cache/fresh"] == N
        assert again.get("robotstxt/forbidden", 0) >= 2
        assert not {bs.host(CLOSED), bs.host(DROPPED)} & _hosts_hit(web)
        assert _hosts_hit(web) >= {bs.host(i) for i in range(N) if i not in (CLOSED, DROPPED)}

        # the feeds spider shares the cache: the feeds of the hosts, and no robots.txt
        web.clear_hits()
        feeds = _crawl(web, database, tmp, "feeds", spider="feeds")
        assert [h.url for h in web.hits() if h.url.endswith("/feed.xml")]
        assert _robots_hits(web) == []
        assert feeds["blogfeeds/robots_txt_cache/fresh"] >= 1

        # expired: asked again with its validators; a 304 dates the copy and keeps the body
        _age(database)
        web.clear_hits()
        expired = _crawl(web, database, tmp, "expired", "-a", "recheck=all")
        hits = _robots_hits(web)
        assert len(hits) == N
        (tagged_hit,) = [h for h in hits if h.url == _robots(TAGGED)]
        assert tagged_hit.headers.get("If-None-Match") == '"robots-v1"'
        assert tagged_hit.status == 304
        assert expired["blogfeeds/robots_txt_cache/revalidated"] == 1
        entries = _entries(database)
        assert entries[bs.host(TAGGED)].body == TAGGED_ROBOTS.encode()
        assert all(e.fetched_at > LONG_AGO for e in entries.values())

        # unreachable (503; no answer at all): the cached copy keeps serving, Disallow included
        _age(database)
        web.add(_robots(CLOSED), {"status": 503, "body": "Service Unavailable"})
        web.add(_robots(DROPPED), {"drop": True})
        web.clear_hits()
        down = _crawl(web, database, tmp, "down", "-a", "recheck=all")
        assert down["blogfeeds/robots_txt_cache/stale_served"] == 2
        assert down.get("robotstxt/forbidden", 0) >= 2
        closed = {bs.host(CLOSED), bs.host(DROPPED)}
        # (a dropped connection that was reused is retried once by Twisted's pool)
        to_closed = {h.url for h in web.hits() if h.url.split("/")[2] in closed}
        assert to_closed == {_robots(CLOSED), _robots(DROPPED)}
        entries = _entries(database)
        for i in (CLOSED, DROPPED):
            assert entries[bs.host(i)].body == CLOSED_ROBOTS.encode()
            assert entries[bs.host(i)].fetched_at == LONG_AGO  # not confirmed: asked next time


def test_robots_txt_cache_on_sqlite(tmp_path: Path) -> None:
    scenario(f"sqlite:///{tmp_path / 'blogs.sqlite3'}", tmp_path)


@pytest.fixture
def mariadb() -> Iterator[str]:
    if bs.mariadb_admin() is None:
        pytest.skip("MariaDB unreachable at 127.0.0.1:3306 (.ci/services.sh starts it)")
    with bs.throwaway_database("robots") as url:
        yield url


def test_robots_txt_cache_on_mariadb(mariadb: str, tmp_path: Path) -> None:
    scenario(mariadb, tmp_path)


def test_a_failing_cache_turns_itself_off_and_the_crawl_goes_on(tmp_path: Path) -> None:
    """robots_txt replaced by a view (read, never written): the first write fails, the cache is
    off for the process with one WARNING, and robots.txt is fetched and obeyed as without it."""
    database = f"sqlite:///{tmp_path / 'blogs.sqlite3'}"
    with Store.open(database) as store, store._transaction() as cursor:
        cursor.execute("DROP TABLE robots_txt")
        cursor.execute(
            "CREATE VIEW robots_txt AS SELECT url AS host, 200 AS status, x'' AS body, "
            "NULL AS etag, NULL AS last_modified, fetched_at FROM blogs"
        )
    with LittleWeb(_web_routes()) as web:
        stats = _crawl(web, database, tmp_path, "broken", "-a", f"start_urls={bs.home(0)}")
        assert len(_robots_hits(web)) == N
        assert stats["blogfeeds/robots_txt_cache/errors"] == 1
        assert stats.get("robotstxt/forbidden", 0) >= 2
        assert stats["blogfeeds/db/blogs_written"] == N
    log = (tmp_path / "broken.log").read_text("utf-8")
    assert log.count("robots.txt cache off for this process") == 1


def _table_keeps_one_bounded_row_per_host(database: str) -> None:
    big = b"User-agent: *\n" + b"Disallow: /x\n" * 50_000  # 650 kB
    with Store.open(database) as store:
        write_entries(
            store, [RobotsEntry("a.example", 200, b"old", '"1"', "", "2026-01-01T00:00:00Z")]
        )
        write_entries(
            store,
            [
                RobotsEntry("a.example", 200, big, '"2"', "x" * 100, "2026-01-02T00:00:00Z"),
                RobotsEntry("b.example:8080", 404, b"", "", "", "2026-01-02T00:00:00Z"),
                RobotsEntry("c" * 300, 200, b"", "", "", "2026-01-02T00:00:00Z"),  # too long
            ],
        )
        confirm_entries(store, ["b.example:8080"], "2026-01-03T00:00:00Z")
        found = read_entries(store, ["a.example", "b.example:8080", "c" * 300, "d.example"])
        assert store.count("robots_txt") == 2
    a, b = found["a.example"], found["b.example:8080"]
    assert (a.body, a.etag, a.last_modified) == (big[:MAX_BODY], '"2"', "")
    assert (b.status, b.body, b.fetched_at) == (404, b"", "2026-01-03T00:00:00Z")


def test_the_table_keeps_one_bounded_row_per_host_on_sqlite(tmp_path: Path) -> None:
    _table_keeps_one_bounded_row_per_host(f"sqlite:///{tmp_path / 'robots.sqlite3'}")


def test_the_table_keeps_one_bounded_row_per_host_on_mariadb(mariadb: str) -> None:
    _table_keeps_one_bounded_row_per_host(mariadb)


def test_a_long_running_process_asks_an_expired_robots_txt_again(tmp_path: Path) -> None:
    """A maximum age of 1.8 s and a home page answering after 3 s: the blog's next page (its
    feed) finds the host's robots.txt expired, and it is asked again, conditionally (304)."""
    database = f"sqlite:///{tmp_path / 'blogs.sqlite3'}"
    routes = _web_routes()
    routes[bs.home(TAGGED)]["delay"] = 3
    with LittleWeb(routes) as web:
        stats = _crawl(
            web,
            database,
            tmp_path,
            "expiring",
            "-a",
            f"start_urls={bs.home(TAGGED)}",
            "-s",
            "BLOGFEEDS_ROBOTS_MAX_AGE_HOURS=0.0005",
        )
        asked = [h for h in _robots_hits(web) if h.url == _robots(TAGGED)]
        assert len(asked) >= 2  # more when the machine is slow enough to expire it again
        assert [h.status for h in asked] == [200] + [304] * (len(asked) - 1)
        assert asked[1].headers.get("If-None-Match") == '"robots-v1"'
        assert [h.url for h in web.hits() if h.url == f"{bs.home(TAGGED)}feed.xml"]
    assert stats["blogfeeds/robots_txt_cache/revalidated"] >= 1
