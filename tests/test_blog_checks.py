"""Blog health in the store (blogfeeds.storage.checks), on SQLite and on this machine's MariaDB:
schema version 11, one blog_checks row per read, dead after N failures in a row, a takeover
told from the kept read, the re-check interval, and the history kept bounded."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.health_settings import BlogHealthSettings
from blogfeeds.items import Blog, BlogCheck, FriendLink
from blogfeeds.pipelines.spool import read_spool, replace_spool
from blogfeeds.storage import schema
from blogfeeds.storage.checks import next_hours
from blogfeeds.storage.db import Store
from tests import blogosphere as bs


@pytest.fixture(params=["sqlite", "mysql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        with Store.open(f"sqlite:///{tmp_path / 'b.db'}") as opened:
            yield opened
        return
    pytest.importorskip("pymysql")
    if bs.mariadb_admin() is None:
        pytest.skip("MariaDB unreachable at 127.0.0.1:3306 (.ci/services.sh starts it)")
    name = f"checks_{zlib.crc32(request.node.name.encode())}"
    with bs.throwaway_database(name) as url, Store.open(url) as opened:
        yield opened


def _blog(title: str = "Ada's notes", **fields: Any) -> Blog:
    values: dict[str, Any] = {
        "url": "https://ada.example/",
        "title": title,
        "language": "en",
        "generator": "WordPress 6.4",
        "feed_url": "https://ada.example/feed/",
        "fetched_at": "2026-11-01T00:00:00Z",
    }
    values.update(fields)
    return Blog(blog_id="ada.example", **values)


def _check(kind: str, at: str, **fields: Any) -> BlogCheck:
    values: dict[str, Any] = {
        "reason": kind,
        "http_status": 200,
        "digest": "d1",
        "title": "Ada's notes",
        "generator": "WordPress 6.4",
        "language": "en",
        "feed_url": "https://ada.example/feed/",
    }
    values.update(fields)
    return BlogCheck("ada.example", "https://ada.example/", kind, checked_at=at, **values)


def _checks(store: Store) -> list[tuple[Any, ...]]:
    with store._transaction(write=False) as cursor:
        cursor.execute("SELECT checked_at, kind, http_status FROM blog_checks ORDER BY checked_at")
        return [tuple(row) for row in cursor.fetchall()]


def _row(store: Store) -> dict[str, Any]:
    return next(b for b in store.blogs() if b["blog_id"] == "ada.example")


def test_schema_11_has_the_health_columns_and_the_checks_table(store: Store) -> None:
    assert store.schema_version() == schema.SCHEMA_VERSION >= 11
    assert store.count("blog_checks") == 0
    store.write([_blog()], [])
    row = _row(store)
    assert (row["health"], row["health_reason"], row["moved_to"]) == ("", "", "")


def test_each_read_is_a_check_and_gone_failures_turn_dead_after_n(store: Store) -> None:
    store.health = BlogHealthSettings(dead_after=2)
    store.write([_blog()], [], (), [_check("ok", "2026-11-01T00:00:00Z")])
    assert _row(store)["health"] == "ok"
    failed = _check("failing", "2026-11-02T00:00:00Z", gone=True, http_status=None, reason="DNS")
    store.write([], [], (), [failed])
    assert _row(store)["health"] == "failing"
    again = _check("failing", "2026-11-03T00:00:00Z", gone=True, http_status=None, reason="DNS")
    store.write([], [], (), [again])
    row = _row(store)
    assert row["health"] == "dead" and "2 failed reads in a row" in row["health_reason"]
    assert [kind for _, kind, _ in _checks(store)] == ["ok", "failing", "dead"]
    store.write([], [], (), [_check("ok", "2026-11-04T00:00:00Z")])
    assert _row(store)["health"] == "ok"  # back: the streak starts again


def test_a_takeover_is_parked_and_the_blog_keeps_its_last_read(store: Store) -> None:
    store.write([_blog()], [], (), [_check("ok", "2026-11-01T00:00:00Z")])
    casino = _blog("Casino bonus", language="id", generator="", feed_url=None)
    takeover = {"title": "Casino bonus", "language": "id", "generator": "", "feed_url": ""}
    store.write([casino], [], (), [_check("ok", "2026-11-02T00:00:00Z", **takeover)])
    row = _row(store)
    assert row["health"] == "parked" and "another site answers" in row["health_reason"]
    assert row["title"] == "Ada's notes"  # the blog's last true read is kept
    spam = FriendLink("ada.example", "https://casino.example/", "casino.example", "Casino")
    store.write([casino], [spam], (), [_check("ok", "2026-11-02T12:00:00Z", **takeover)])
    assert store.friend_links() == []  # nor are the friends the other site lists
    store.write([casino], [], (), [_check("ok", "2026-11-03T00:00:00Z", **takeover)])
    assert _row(store)["health"] == "parked"  # and stays parked on the next read


def test_moved_keeps_where_to(store: Store) -> None:
    store.write([_blog()], [], (), [_check("ok", "2026-11-01T00:00:00Z")])
    moved = _check("moved", "2026-11-02T00:00:00Z", moved_to="https://ada.new/", http_status=301)
    store.write([], [], (), [moved])
    assert (_row(store)["health"], _row(store)["moved_to"]) == ("moved", "https://ada.new/")


def test_history_older_than_keep_days_is_deleted(store: Store) -> None:
    store.health = BlogHealthSettings(keep_days=10)
    store.write([_blog()], [], (), [_check("ok", "2026-01-01T00:00:00Z")])
    store.write([], [], (), [_check("ok", "2026-11-01T00:00:00Z")])
    assert [at for at, _, _ in _checks(store)] == ["2026-11-01T00:00:00Z"]


def test_the_interval_doubles_while_unchanged_and_restarts_on_a_change() -> None:
    config = BlogHealthSettings(recheck_min_hours=24, recheck_max_hours=100)
    assert next_hours(None, False, "ok", config) == 24
    assert next_hours(24, False, "ok", config) == 48
    assert next_hours(96, False, "ok", config) == 100
    assert next_hours(96, True, "ok", config) == 24
    assert next_hours(96, False, "failing", config) == 24


def test_next_check_follows_the_interval(store: Store) -> None:
    store.health = BlogHealthSettings(recheck_min_hours=24, recheck_max_hours=720)
    store.write([_blog()], [], (), [_check("ok", "2026-11-01T00:00:00Z")])
    store.write([], [], (), [_check("ok", "2026-11-02T00:00:00Z")])
    assert _row(store)["next_check"] == "2026-11-04T00:00:00Z"  # unchanged: 48 h
    store.write([], [], (), [_check("ok", "2026-11-04T00:00:00Z", digest="d2")])
    assert _row(store)["next_check"] == "2026-11-05T00:00:00Z"  # changed: 24 h


def test_a_check_survives_the_spool(tmp_path: Path) -> None:
    spooled = _check("failing", "2026-11-02T00:00:00Z", gone=True, http_status=None)
    path = tmp_path / "spool.jsonl"
    replace_spool(path, [spooled])
    assert read_spool(path) == [spooled]
