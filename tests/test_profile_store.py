"""The blog profile in storage: schema version 6 on a database made by version 4 (SQLite and
MariaDB), the profile columns written and read, and ``scrapy crawl feeds``' store keeping the
last post and activity current."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from blogfeeds.extract.feedreader.entries import make_entry
from blogfeeds.items import FeedFetch
from blogfeeds.storage import schema
from blogfeeds.storage.db import Store
from blogfeeds.storage.feedstore import FeedStore
from blogfeeds.storage.schema import url_hash
from tests.test_storage import blog, execute, link, url  # noqa: F401 (url: the fixture)

FEED = "https://old.example/feed.xml"


def test_version_6_adds_the_profile_to_a_version_4_database(
    url: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A database made by the previous schema keeps its rows, gains the profile columns, and
    blogs whose scheduled feed has stored entries get their last post; re-running the step
    after a lost version row changes nothing."""
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:4])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 4)
    with Store.open(url) as store:
        assert store.schema_version() == 4
        columns = ("blog_id", "url", "title", "abstract", "language", "generator", "feed_url")
        columns += ("friend_count", "status", "depth", "first_seen", "fetched_at")
        marks = ", ".join([store.dialect.param] * len(columns))
        p = store.dialect.param
        with store._transaction() as cursor:
            cursor.executemany(
                f"INSERT INTO blogs ({', '.join(columns)}) VALUES ({marks})",
                [
                    (b, f"https://{b}/", "T", "", "en", "", None, 0, "ok", 0, "t", "t")
                    for b in ("old.example", "quiet.example")
                ],
            )
            cursor.execute(
                "INSERT INTO schedule (feed_url_hash, feed_url, blog_id, interval_minutes, "
                f"next_due, status) VALUES ({p}, {p}, {p}, 60, 't', 'ok')",
                (url_hash(FEED), FEED, "old.example"),
            )
            cursor.executemany(
                "INSERT INTO entries (feed_url_hash, guid_hash, guid, published, first_seen) "
                f"VALUES ({p}, {p}, {p}, {p}, 't')",
                [
                    (url_hash(FEED), url_hash(g), g, d)
                    for g, d in (("a", "2026-10-01T00:00:00Z"), ("b", "2026-11-01T00:00:00Z"))
                ],
            )
            cursor.execute(
                "INSERT INTO friend_links (source_blog_id, target_blog_id, target_url, "
                "target_url_hash, name, container_score, source_url, first_seen, last_seen) "
                f"VALUES ('quiet.example', 'old.example', {p}, {p}, 'Old', 1, 's', 't', 't')",
                ("https://old.example/", url_hash("https://old.example/")),
            )
    monkeypatch.undo()
    for _ in range(2):
        with Store.open(url) as store:
            assert store.schema_version() == schema.SCHEMA_VERSION >= 6
            rows = {r["blog_id"]: r for r in store.blogs()}
            old, quiet = rows["old.example"], rows["quiet.example"]
            assert old["last_post_at"] == "2026-11-01T00:00:00Z"
            assert old["posts_per_month"] == pytest.approx(0.98, abs=0.01)
            assert old["activity"] in ("active", "slowing", "dormant", "dead")
            assert (quiet["last_post_at"], quiet["activity"], quiet["description"]) == ("", "", "")
            assert old["avatars"] == [] and store.friend_links()[0]["avatar"] == ""
            execute(store, "DELETE FROM schema_version WHERE version = 6")


def test_profile_columns_round_trip(url: str) -> None:  # noqa: F811
    with Store.open(url) as store:
        written = blog(
            "bob.example",
            description="Notes — 笔记 %s ?",
            description_source="feed",
            author="Bob Ó",
            icon_url="https://bob.example/icon.png",
            last_post_at="2026-11-01T00:00:00Z",
            posts_per_month=2.5,
            activity="active",
            language="zh",
            language_declared="en",
        )
        store.write(
            [written, blog("alice.example")],
            [link("alice.example", "bob.example", avatar="https://alice.example/bob.png")],
        )
        rows = {r["blog_id"]: r for r in store.blogs()}
        row = rows["bob.example"]
        for name in ("description", "description_source", "author", "icon_url"):
            assert row[name] == getattr(written, name)
        assert (row["last_post_at"], row["posts_per_month"], row["activity"]) == (
            "2026-11-01T00:00:00Z",
            2.5,
            "active",
        )
        assert (row["language"], row["language_declared"]) == ("zh", "en")
        assert row["avatars"] == [
            {"url": "https://alice.example/bob.png", "source": "alice.example"}
        ]
        assert rows["alice.example"]["avatars"] == []


def test_crawl_feeds_store_keeps_the_last_post_and_activity_current(url: str) -> None:  # noqa: F811
    with Store.open(url) as store:
        store.write([blog("old.example", last_post_at="2020-01-01T00:00:00Z")], [])
    with FeedStore.open(url) as feeds:
        feeds.add_feed(FEED, 0.0, blog_id="old.example")
        entries = [
            make_entry(
                FEED, guid=g, link=None, title=g, author=None, published=d, updated=None,
                summary=None,
            )
            for g, d in (
                ("a", datetime(2026, 11, 20, 10, tzinfo=UTC)),
                ("b", datetime(2026, 11, 10, 10, tzinfo=UTC)),
            )
        ]  # fmt: skip
        fetch = FeedFetch(
            feed_url=FEED,
            fetched_at="2026-11-30T00:00:00Z",
            status="ok",
            http_status=200,
            entries=entries,
            blog_id="old.example",
        )
        assert feeds.save_fetch(fetch) == 2
        [row] = feeds.query("SELECT last_post_at, posts_per_month, activity FROM blogs")
    assert row["last_post_at"] == "2026-11-20T10:00:00Z"
    assert row["activity"] == "active"
    assert row["posts_per_month"] == pytest.approx(3.04, abs=0.01)


def test_an_unreachable_blog_is_dead_and_keeps_its_profile(url: str) -> None:  # noqa: F811
    with Store.open(url) as store:
        store.write([blog(description="Notes", activity="active")], [])
        store.write([blog(status="timeout", description="", activity="dead")], [])
        [row] = store.blogs()
    assert (row["status"], row["activity"], row["description"]) == ("timeout", "dead", "Notes")
