"""Item pipelines built from a real crawler, writing to real SQLite files."""

from __future__ import annotations

import asyncio
import inspect
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.pipelines import ItemPipelineManager
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from blogfeeds.items import Blog, FeedInfo, FriendLink
from blogfeeds.pipelines.blogs import StoragePipeline
from blogfeeds.pipelines.dedupe import BlogDedupePipeline
from blogfeeds.pipelines.spool import read_spool
from blogfeeds.storage.db import Store

HOSTILE = "友情链接 🚀👩‍💻 '; DROP TABLE blogs; -- back\\slash \\\\ %s %(x)s ?"


def run(result: Any) -> Any:
    """Await ``result`` when a pipeline method returned a coroutine."""
    return asyncio.run(result) if inspect.iscoroutine(result) else result


def build(cls: type, tmp_path: Path, **settings: Any) -> Any:
    crawler = get_crawler(
        settings_dict={
            "BLOGFEEDS_DATABASE_URL": f"sqlite:///{tmp_path / 'crawl.sqlite3'}",
            "BLOGFEEDS_SPOOL_PATH": str(tmp_path / "spool.jsonl"),
            **settings,
        }
    )
    return build_from_crawler(cls, crawler)


def rows(tmp_path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(tmp_path / "crawl.sqlite3") as conn:
        return conn.execute(sql).fetchall()


def blog(blog_id: str = "alice.example", **fields: Any) -> Blog:
    feed = FeedInfo(f"https://{blog_id}/feed.xml", "application/rss+xml", "RSS", 9.0, ["+1 a"])
    values: dict[str, Any] = {
        "url": f"https://{blog_id}/",
        "title": "Alice",
        "feed_url": feed.url,
        "feeds": [feed],
        "fetched_at": "2026-11-29T20:36:29Z",
    }
    values.update(fields)
    return Blog(blog_id=blog_id, **values)


def link(source: str = "alice.example", target: str = "bob.example", **fields: Any) -> FriendLink:
    values: dict[str, Any] = {"target_url": f"https://{target}/", **fields}
    return FriendLink(source_blog_id=source, target_blog_id=target, **values)


def crawl(tmp_path: Path, items: list[Any], **settings: Any) -> StoragePipeline:
    pipe = build(StoragePipeline, tmp_path, **settings)
    run(pipe.open_spider())
    for item in items:
        assert run(pipe.process_item(item)) is item
    run(pipe.close_spider())
    return pipe


@contextmanager
def locked(tmp_path: Path) -> Iterator[None]:
    """Hold the SQLite write lock from another connection: every write attempt fails."""
    conn = sqlite3.connect(tmp_path / "crawl.sqlite3", isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def no_wait(pipe: StoragePipeline) -> None:
    """Fail fast on a locked database instead of waiting the 30 s busy timeout."""
    assert pipe.store is not None
    pipe.store.connection.raw.execute("PRAGMA busy_timeout = 0")


# --- BlogDedupePipeline ------------------------------------------------------------------------


def test_dedupe_drops_a_repeated_blog_and_counts_it(tmp_path: Path) -> None:
    pipe = build(BlogDedupePipeline, tmp_path)
    first = blog()
    assert run(pipe.process_item(first)) is first
    with pytest.raises(DropItem, match=r"duplicate blog alice\.example") as dropped:
        run(pipe.process_item(blog(title="again")))
    assert dropped.value.log_level == "DEBUG"
    assert pipe.stats.get_value("blogfeeds/duplicate_blog") == 1
    assert run(pipe.process_item(blog("bob.example"))).blog_id == "bob.example"
    for _ in range(2):  # friend links are not deduplicated here (the database upserts them)
        edge = link()
        assert run(pipe.process_item(edge)) is edge
    assert pipe.stats.get_value("blogfeeds/duplicate_blog") == 1


# --- StoragePipeline ---------------------------------------------------------------------------


def test_items_land_in_the_sqlite_file(tmp_path: Path) -> None:
    pipe = crawl(tmp_path, [blog(), link(name="Bob"), link(target="carol.example"), "other"])
    assert rows(tmp_path, "SELECT blog_id, title, feed_url FROM blogs") == [
        ("alice.example", "Alice", "https://alice.example/feed.xml")
    ]
    assert rows(tmp_path, "SELECT url, reasons, is_main FROM feeds") == [
        ("https://alice.example/feed.xml", '["+1 a"]', 1)
    ]
    assert rows(tmp_path, "SELECT target_blog_id FROM friend_links ORDER BY 1") == [
        ("bob.example",),
        ("carol.example",),
    ]
    assert pipe.stats.get_value("blogfeeds/db/blogs_written") == 1
    assert pipe.stats.get_value("blogfeeds/db/friend_links_written") == 2
    assert not (tmp_path / "spool.jsonl").exists()


def test_recrawl_updates_instead_of_duplicating(tmp_path: Path) -> None:
    crawl(tmp_path, [blog(), link()])
    crawl(tmp_path, [blog(title="Alice v2"), link(name="Bob v2")])
    assert rows(tmp_path, "SELECT blog_id, title FROM blogs") == [("alice.example", "Alice v2")]
    assert rows(tmp_path, "SELECT COUNT(*) FROM feeds") == [(1,)]
    assert rows(tmp_path, "SELECT name FROM friend_links") == [("Bob v2",)]


def test_hostile_text_round_trips_unchanged(tmp_path: Path) -> None:
    feed = FeedInfo(
        f"https://alice.example/{HOSTILE}", "application/rss+xml", HOSTILE, 1.5, [HOSTILE]
    )
    item = blog(title=HOSTILE, abstract=HOSTILE, generator=HOSTILE, feed_url=feed.url, feeds=[feed])
    edge = link(name=HOSTILE, target_url=f"https://bob.example/{HOSTILE}", source_url=HOSTILE)
    crawl(tmp_path, [item, edge])
    with Store.open(f"sqlite:///{tmp_path / 'crawl.sqlite3'}") as store:
        (stored,) = store.blogs()
        (stored_link,) = store.friend_links()
    expected = asdict(item)
    for name in ("url", "title", "abstract", "generator", "feed_url", "fetched_at"):
        assert stored[name] == expected[name]
    assert stored["feeds"][0]["title"] == HOSTILE
    assert stored["feeds"][0]["reasons"] == [HOSTILE]
    for name in ("name", "target_url", "source_url"):
        assert stored_link[name] == getattr(edge, name)
    assert rows(tmp_path, "SELECT COUNT(*) FROM blogs") == [(1,)]


def test_flushes_when_a_batch_is_full(tmp_path: Path) -> None:
    pipe = build(StoragePipeline, tmp_path, BLOGFEEDS_DB_BATCH_SIZE=2)
    run(pipe.open_spider())
    pipe.process_item(blog())
    assert rows(tmp_path, "SELECT COUNT(*) FROM blogs") == [(0,)]
    pipe.process_item(link())
    assert rows(tmp_path, "SELECT COUNT(*) FROM blogs") == [(1,)]
    assert rows(tmp_path, "SELECT COUNT(*) FROM friend_links") == [(1,)]
    pipe.process_item(blog("bob.example"))
    run(pipe.close_spider())
    assert rows(tmp_path, "SELECT COUNT(*) FROM blogs") == [(2,)]


def test_empty_database_url_disables_storage(tmp_path: Path) -> None:
    with pytest.raises(NotConfigured, match="BLOGFEEDS_DATABASE_URL"):
        build(StoragePipeline, tmp_path, BLOGFEEDS_DATABASE_URL="")


def test_blogs_without_feed_dropped_when_not_kept(tmp_path: Path) -> None:
    pipe = build(StoragePipeline, tmp_path, BLOGFEEDS_KEEP_BLOGS_WITHOUT_FEED=False)
    run(pipe.open_spider())
    bare = blog("bare.example", status="no_feed", feed_url=None, feeds=[])
    with pytest.raises(DropItem, match=r"bare\.example") as dropped:
        pipe.process_item(bare)
    assert dropped.value.log_level == "DEBUG"
    down = blog("down.example", status="http_5xx", feed_url=None, feeds=[])  # no feed either
    with pytest.raises(DropItem, match=r"down\.example"):
        pipe.process_item(down)
    pipe.process_item(link("bare.example"))  # its friend links still map the graph
    pipe.process_item(blog())
    run(pipe.close_spider())
    assert pipe.stats.get_value("blogfeeds/dropped_no_feed") == 2
    assert rows(tmp_path, "SELECT blog_id FROM blogs") == [("alice.example",)]
    assert rows(tmp_path, "SELECT source_blog_id FROM friend_links") == [("bare.example",)]


def test_blogs_without_feed_kept_by_default(tmp_path: Path) -> None:
    crawl(tmp_path, [blog("bare.example", status="no_feed", feed_url=None, feeds=[])])
    assert rows(tmp_path, "SELECT blog_id, status, feed_url FROM blogs") == [
        ("bare.example", "no_feed", None)
    ]


def test_failed_batch_is_kept_and_retried_at_the_next_flush(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pipe = build(StoragePipeline, tmp_path, BLOGFEEDS_DB_BATCH_SIZE=2)
    run(pipe.open_spider())
    no_wait(pipe)
    with locked(tmp_path):
        pipe.process_item(blog("a.example"))
        pipe.process_item(blog("b.example"))  # batch full: the write fails
    assert "could not write 2 items (2 blogs, 0 friend links)" in caplog.text
    assert pipe.stats.get_value("blogfeeds/db/write_errors") == 1
    assert rows(tmp_path, "SELECT COUNT(*) FROM blogs") == [(0,)]
    pipe.process_item(blog("c.example"))
    pipe.process_item(link())  # next flush: the kept batch goes first
    assert rows(tmp_path, "SELECT blog_id FROM blogs ORDER BY 1") == [
        ("a.example",),
        ("b.example",),
        ("c.example",),
    ]
    run(pipe.close_spider())
    assert pipe.stats.get_value("blogfeeds/db/blogs_written") == 3
    assert not (tmp_path / "spool.jsonl").exists()


def test_unwritable_items_are_spooled_on_close_and_replayable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pipe = build(StoragePipeline, tmp_path)
    run(pipe.open_spider())
    no_wait(pipe)
    items = [blog(title=HOSTILE), link(name=HOSTILE)]
    for item in items:
        pipe.process_item(item)
    with locked(tmp_path):
        run(pipe.close_spider())
    spool = tmp_path / "spool.jsonl"
    assert str(spool) in caplog.text
    assert pipe.stats.get_value("blogfeeds/db/spooled") == 2
    assert read_spool(spool) == items
    with Store.open(f"sqlite:///{tmp_path / 'crawl.sqlite3'}") as store:
        assert store.count("blogs") == 0
        store.write([i for i in items if isinstance(i, Blog)], [link(name=HOSTILE)])
        assert store.blogs()[0]["title"] == HOSTILE


def test_a_poison_batch_is_spooled_after_max_attempts(tmp_path: Path) -> None:
    """A batch the database always refuses does not block later batches or grow memory."""
    pipe = build(StoragePipeline, tmp_path, BLOGFEEDS_DB_BATCH_SIZE=1, BLOGFEEDS_DB_MAX_ATTEMPTS=2)
    run(pipe.open_spider())
    pipe.process_item(blog(title="lone surrogate \ud800"))  # cannot be encoded: always fails
    pipe.process_item(blog("b.example"))  # second attempt fails too: spooled
    pipe.process_item(blog("c.example"))
    assert pipe.failed == []
    run(pipe.close_spider())
    assert rows(tmp_path, "SELECT blog_id FROM blogs ORDER BY 1") == [
        ("b.example",),
        ("c.example",),
    ]
    assert pipe.stats.get_value("blogfeeds/db/write_errors") == 2
    (spooled,) = read_spool(tmp_path / "spool.jsonl")
    assert isinstance(spooled, Blog)
    assert spooled.title == "lone surrogate \ud800"


def test_read_spool_names_the_bad_line(tmp_path: Path) -> None:
    spool = tmp_path / "bad.jsonl"
    spool.write_text('{"type": "FriendLink", "item": {"source_blog_id": "a"}}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl:1: malformed spool record"):
        read_spool(spool)


def test_project_pipeline_chain_through_scrapy(tmp_path: Path) -> None:
    """Both pipelines through Scrapy's manager with the project's ITEM_PIPELINES: no spider
    argument is required (a deprecation warning would fail this test) and drops propagate."""
    from blogfeeds import settings as project

    crawler = get_crawler(
        settings_dict={
            "ITEM_PIPELINES": project.ITEM_PIPELINES,
            "BLOGFEEDS_DATABASE_URL": f"sqlite:///{tmp_path / 'crawl.sqlite3'}",
        }
    )
    manager = ItemPipelineManager.from_crawler(crawler)

    async def scenario() -> None:
        await manager.open_spider_async()
        await manager.process_item_async(blog())
        with pytest.raises(DropItem):
            await manager.process_item_async(blog(title="duplicate"))
        await manager.process_item_async(link())
        await manager.close_spider_async()

    asyncio.run(scenario())
    assert rows(tmp_path, "SELECT blog_id, title FROM blogs") == [("alice.example", "Alice")]
    assert rows(tmp_path, "SELECT COUNT(*) FROM friend_links") == [(1,)]
    assert crawler.stats.get_value("blogfeeds/duplicate_blog") == 1
