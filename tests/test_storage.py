"""Storage layer against real databases: SQLite files and, when reachable, the local MariaDB."""

from __future__ import annotations

import fnmatch
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.config import database_setting, database_url
from blogfeeds.items import Blog, FeedInfo, FriendLink
from blogfeeds.storage import schema
from blogfeeds.storage.connection import connect
from blogfeeds.storage.db import Store
from blogfeeds.storage.url import blocking_io, database_file, dialect_of, redact

MARIADB = {"host": "127.0.0.1", "port": 3306, "user": "root", "password": ""}

HOSTILE = [
    "友情链接 · 博客",
    "emoji 🚀👩‍💻 and 𠮷",
    "'; DROP TABLE blogs; --",
    'back\\slash \\n \\\\ "quoted" `tick`',
    "percent %s %(x)s %% ?",
    "NUL-free\ttab\nnewline\r\n",
]


def mariadb_url(prefix: str = "blogfeeds_test") -> Iterator[str]:
    """A throwaway MariaDB database ``<prefix>_<pid>``; skips when MariaDB is down."""
    pymysql = pytest.importorskip("pymysql")
    try:
        admin = pymysql.connect(**MARIADB, charset="utf8mb4", connect_timeout=2)
    except pymysql.Error as exc:
        pytest.skip(f"MariaDB unreachable at 127.0.0.1:3306: {exc}")
    name = f"{prefix}_{os.getpid()}"
    with admin.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {name}")
        cursor.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    try:
        yield f"mysql://root@127.0.0.1:3306/{name}"
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.close()


@pytest.fixture(params=["sqlite", pytest.param("mariadb", marks=pytest.mark.services)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'test.sqlite3'}"
    else:
        yield from mariadb_url()


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    with Store.open(url) as opened:
        yield opened


def execute(store: Store, sql: str) -> None:
    """Run raw SQL in its own transaction (test set-up only)."""
    with store._transaction() as cursor:
        cursor.execute(sql)


def blog(blog_id: str = "alice.example", **fields: object) -> Blog:
    base = Blog(
        blog_id=blog_id,
        url=f"https://{blog_id}/",
        title="Alice",
        abstract="About Alice",
        language="en",
        generator="Hugo 0.140",
        feed_url=f"https://{blog_id}/index.xml",
        feeds=[
            FeedInfo(f"https://{blog_id}/index.xml", "application/rss+xml", "RSS", 9.5, ["+1 x"]),
            FeedInfo(f"https://{blog_id}/atom.xml", "application/atom+xml", "Atom", 7.0, []),
        ],
        friend_count=2,
        status="ok",
        fetched_at="2026-11-29T20:36:29Z",
        depth=1,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def link(
    source: str = "alice.example", target: str = "bob.example", **fields: object
) -> FriendLink:
    base = FriendLink(
        source_blog_id=source,
        target_url=f"https://{target}/",
        target_blog_id=target,
        name="Bob",
        container_score=12.5,
        source_url=f"https://{source}/links/",
    )
    return replace(base, **fields)  # type: ignore[arg-type]


# --- schema and migrations ---------------------------------------------------------------------


def test_schema_created_and_version_stored(store: Store) -> None:
    # version 9 is another branch's (renumbered at merge): a row per migration
    assert store.schema_version() == schema.SCHEMA_VERSION == schema.MIGRATIONS[-1][0]
    for table in schema.TABLES:
        assert store.count(table) == (len(schema.MIGRATIONS) if table == "schema_version" else 0)


def test_reopen_and_ensure_schema_are_idempotent(url: str) -> None:
    for _ in range(2):
        with Store.open(url) as store:
            assert store.ensure_schema() == schema.SCHEMA_VERSION
            assert store.count("schema_version") == len(schema.MIGRATIONS)


def test_migration_rerun_after_lost_version_row(store: Store) -> None:
    """A migration interrupted after its DDL (MySQL commits DDL) is re-run without error."""
    store.write([blog()], [link()])
    execute(store, "DELETE FROM schema_version")
    assert store.schema_version() == 0
    assert store.ensure_schema() == schema.SCHEMA_VERSION
    assert store.count("blogs") == 1  # existing data untouched


def test_forward_migration_applied_once(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    current = schema.SCHEMA_VERSION
    nxt = (current + 1, ["{create_index} blogs_depth ON blogs (depth)"])
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, nxt])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", current + 1)
    assert store.ensure_schema() == current + 1
    assert store.ensure_schema() == current + 1
    assert store.count("schema_version") == len(schema.MIGRATIONS)
    monkeypatch.undo()
    with pytest.raises(
        ValueError, match=f"schema version {current + 1} is newer than this code's {current}"
    ):
        store.ensure_schema()


def test_version_4_names_the_platform_of_every_stored_generator(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blogs stored before the platform columns get the platform of their generator (only the
    stored first one: a plugin's gives the platform without a version); re-running the
    migration after a lost version row changes nothing."""
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:3])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 3)
    generators = {
        "a.example": "Wordpress",
        "b.example": "WordPress 6.4.2",
        "c.example": "Site Kit by Google 1.111.1",
        "d.example": "Me :)",
        "e.example": "",
    }
    with Store.open(url) as store:
        assert store.schema_version() == 3
        columns = ("blog_id", "url", "title", "abstract", "language", "generator", "feed_url")
        columns += ("friend_count", "status", "depth", "first_seen", "fetched_at")
        marks = ", ".join([store.dialect.param] * len(columns))
        with store._transaction() as cursor:
            cursor.executemany(
                f"INSERT INTO blogs ({', '.join(columns)}) VALUES ({marks})",
                [
                    (bid, f"https://{bid}/", "T", "", "en", gen, None, 0, "no_feed", 0, "t", "t")
                    for bid, gen in generators.items()
                ],
            )
    monkeypatch.undo()
    expected = {
        "a.example": ("WordPress", ""),
        "b.example": ("WordPress", "6.4.2"),
        "c.example": ("WordPress", ""),
        "d.example": ("", ""),
        "e.example": ("", ""),
    }
    for _ in range(2):
        with Store.open(url) as store:
            assert store.schema_version() == schema.SCHEMA_VERSION >= 4
            rows = {r["blog_id"]: r for r in store.blogs()}
            assert {b: (r["platform"], r["platform_version"]) for b, r in rows.items()} == expected
            assert {b: r["generator"] for b, r in rows.items()} == generators
            execute(store, "DELETE FROM schema_version WHERE version = 4")


def test_blogs_store_generator_platform_and_version(store: Store) -> None:
    store.write([blog(generator="Hexo 7.3.0", platform="Hexo", platform_version="7.3.0")], [])
    [row] = store.blogs()
    assert (row["generator"], row["platform"], row["platform_version"]) == (
        "Hexo 7.3.0",
        "Hexo",
        "7.3.0",
    )
    store.write([blog(generator="Hugo", platform="Hugo", platform_version="")], [])
    [row] = store.blogs()
    assert (row["generator"], row["platform"], row["platform_version"]) == ("Hugo", "Hugo", "")


def test_blogs_store_the_page_bounds_reached(store: Store) -> None:
    """Schema version 5: ``truncated`` says a blog was read from the first part of its page; a
    later read of the whole page clears it, a failed fetch keeps it."""
    store.write([blog(truncated="links,text")], [])
    assert [r["truncated"] for r in store.blogs()] == ["links,text"]
    store.write([blog(status="timeout", fetched_at="2026-01-02T00:00:00Z")], [])
    assert [r["truncated"] for r in store.blogs()] == ["links,text"]
    store.write([blog(truncated="")], [])
    assert [r["truncated"] for r in store.blogs()] == [""]


def test_blogs_store_why_a_fetch_failed(store: Store) -> None:
    """Schema version 8: ``status_reason`` holds the failure's words; a failed re-crawl replaces
    it and keeps what the last answered crawl read, an answered one clears it."""
    why = "SSRF guard: 127.0.0.1 is a loopback address; set X for a local test site"
    store.write([Blog("127.0.0.1", "http://127.0.0.1:9/", status="blocked", status_reason=why)], [])
    assert [(r["status"], r["status_reason"]) for r in store.blogs()] == [("blocked", why)]
    store.write([blog()], [])
    assert [r["status_reason"] for r in store.blogs() if r["blog_id"] == "alice.example"] == [""]
    store.write([blog(status="http_5xx", status_reason="HTTP 503", feeds=[], title="")], [])
    row = next(r for r in store.blogs() if r["blog_id"] == "alice.example")
    assert (row["status"], row["status_reason"], row["title"]) == ("http_5xx", "HTTP 503", "Alice")
    assert len(row["feeds"]) == 2
    store.write([blog()], [])
    row = next(r for r in store.blogs() if r["blog_id"] == "alice.example")
    assert (row["status"], row["status_reason"]) == ("ok", "")


def test_version_8_adds_reasons_and_runs_to_a_version_7_database(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database of version 7 keeps its rows, gains ``status_reason``, ``last_error`` and an
    empty ``runs`` table; a re-run after a lost version row changes nothing; a read-only reader
    of the version 7 database sees the new columns as empty."""
    from blogfeeds.storage.feedstore import FeedStore
    from blogfeeds.storage.runs import Run, latest_runs, record_run

    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:7])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 7)
    with FeedStore.open(url) as store:
        assert store.schema_version() == 7
        columns = ("blog_id", "url", "title", "abstract", "language", "generator", "feed_url")
        columns += ("friend_count", "status", "depth", "first_seen", "fetched_at")
        marks = ", ".join([store.dialect.param] * len(columns))
        row = ("alice.example", "https://alice.example/", "Alice", "", "en", "", None, 0)
        execute_params = (*row, "timeout", 0, "t", "t")
        with store._transaction() as cursor:
            cursor.execute(
                f"INSERT INTO blogs ({', '.join(columns)}) VALUES ({marks})", execute_params
            )
        store.add_feed("https://alice.example/index.xml", 0.0, blog_id="alice.example")
    with FeedStore.open(url, read_only=True) as old:
        assert [r["status_reason"] for r in old.blogs()] == [""]
        assert [r["last_error"] for r in old.schedule()] == [None]
        assert latest_runs(old, "blogs") == []
    monkeypatch.undo()
    assert schema.SCHEMA_VERSION >= 8
    for _ in range(2):
        with FeedStore.open(url) as store:
            assert store.schema_version() == schema.SCHEMA_VERSION
            [row] = store.blogs()
            assert (row["status"], row["status_reason"], row["title"]) == ("timeout", "", "Alice")
            assert [r["last_error"] for r in store.schedule()] == [None]
            assert store.count("runs") == 0
            execute(store, "DELETE FROM schema_version WHERE version = 8")
    with FeedStore.open(url) as store:
        record_run(store, Run("blogs", "w", "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "x"))
        assert store.count("runs") == 1


def test_runs_are_recorded_and_read_latest_first(store: Store) -> None:
    from blogfeeds.storage.runs import Run, latest_runs, record_run

    first = Run(
        "blogs", "node1", "2026-11-30T00:00:00Z", "2026-11-30T01:00:00Z", "finished",
        blogs=200, friend_links=900, failures=3, failures_by_kind={"dns": 2, "http_4xx": 1},
    )  # fmt: skip
    later = replace(first, started="2026-12-01T00:00:00Z", finished="2026-12-01T00:30:00Z",
                    reason="shutdown", failures=0, failures_by_kind={})  # fmt: skip
    feeds = Run(
        "feeds", "w" * 300, "2026-12-01T02:00:00Z", "2026-12-01T02:00:09Z", "r" * 100,
        feeds_fetched=40, not_modified=30, new_entries=12, failures=1,
        failures_by_kind={"http_5xx": 1},
    )  # fmt: skip
    for run in (first, later, feeds):
        record_run(store, run)
    assert latest_runs(store, "blogs") == [later, first]
    assert latest_runs(store, "blogs", limit=1) == [later]
    # texts longer than their columns are cut (MySQL in strict mode refuses them otherwise)
    assert latest_runs(store, "feeds") == [replace(feeds, worker="w" * 255, reason="r" * 64)]
    assert latest_runs(store, "nothing") == []


def test_mysql_ddl_fits_key_limits() -> None:
    """Every MySQL key is ≤ 3072 bytes (utf8mb4 = 4 bytes/char): URLs are keyed by hash."""
    steps = [s for _, version in schema.MIGRATIONS for s in version if isinstance(s, str)]
    ddl = "\n".join(schema.MYSQL.render(s) for s in steps)
    assert "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4" in ddl
    assert "ROW_FORMAT=DYNAMIC" in ddl
    assert "UNIQUE (source_blog_id, target_url_hash)" in ddl
    assert "{" not in ddl


def test_upsert_statements_per_dialect() -> None:
    cols, key, update = ("a", "b", "c"), ("a",), ("b",)
    assert schema.SQLITE.upsert("t", cols, key, update) == (
        "INSERT INTO t (a, b, c) VALUES (?, ?, ?) ON CONFLICT(a) DO UPDATE SET b=excluded.b"
    )
    assert schema.MYSQL.upsert("t", cols, key, update) == (
        "INSERT INTO t (a, b, c) VALUES (%s, %s, %s) ON DUPLICATE KEY UPDATE b=VALUES(b)"
    )


# --- upsert semantics --------------------------------------------------------------------------


def test_blog_upsert_updates_in_place_and_keeps_first_seen(store: Store) -> None:
    assert store.upsert_blogs([blog()]) == 1
    execute(store, "UPDATE blogs SET first_seen = '2001-01-01T00:00:00Z'")
    store.upsert_blogs([blog(title="Alice, renamed", depth=0, fetched_at="2026-12-01T00:00:00Z")])
    rows = store.blogs()
    assert len(rows) == 1
    assert rows[0]["title"] == "Alice, renamed"
    assert rows[0]["depth"] == 0
    assert rows[0]["fetched_at"] == "2026-12-01T00:00:00Z"
    assert rows[0]["first_seen"] == "2001-01-01T00:00:00Z"


def test_first_seen_is_the_first_stored_fetch(store: Store) -> None:
    store.upsert_blogs([blog(fetched_at="2026-11-29T20:36:29Z")])
    store.upsert_blogs([blog(fetched_at="2026-12-01T00:00:00Z")])
    failed = Blog(
        "new.example", "https://new.example/", status="dns", fetched_at="2026-11-30T01:02:03Z"
    )
    store.upsert_blogs([failed])
    alice, new = store.blogs()
    assert (alice["first_seen"], alice["fetched_at"]) == (
        "2026-11-29T20:36:29Z",
        "2026-12-01T00:00:00Z",
    )
    assert new["first_seen"] == new["fetched_at"] == "2026-11-30T01:02:03Z"
    store.upsert_blogs([Blog("undated.example", "https://undated.example/", status="dns")])
    assert store.blogs()[2]["first_seen"]  # no fetch time: the write time


def test_feeds_replaced_with_the_new_list(store: Store) -> None:
    store.upsert_blogs([blog(), blog("bob.example")])
    assert store.count("feeds") == 4
    new = FeedInfo("https://alice.example/feed/", "application/rss+xml", "New", 8.0, ["-2 y"])
    store.upsert_blogs([blog(feed_url=new.url, feeds=[new, new])])  # repeated candidate: once
    alice, bob = store.blogs()
    assert alice["feeds"] == [
        {
            "url": new.url,
            "type": "application/rss+xml",
            "title": "New",
            "score": 8.0,
            "reasons": ["-2 y"],
            "is_main": True,
        }
    ]
    assert [f["url"] for f in bob["feeds"]] == [
        "https://bob.example/index.xml",
        "https://bob.example/atom.xml",
    ]
    assert [f["is_main"] for f in bob["feeds"]] == [True, False]
    store.upsert_blogs([blog(status="no_feed", feed_url=None, feeds=[])])
    assert store.blogs()[0]["feeds"] == []
    assert store.count("feeds") == 2


def test_failed_recrawl_keeps_what_was_known(store: Store) -> None:
    store.upsert_blogs([blog()])
    failed = Blog("alice.example", "https://alice.example/", status="timeout", fetched_at="T2")
    store.upsert_blogs([failed])
    (row,) = store.blogs()
    assert (row["status"], row["fetched_at"], row["title"]) == ("timeout", "T2", "Alice")
    assert len(row["feeds"]) == 2
    store.upsert_blogs([Blog("new.example", "https://new.example/", status="dns")])
    assert store.count("blogs") == 2  # an unknown failing blog is still recorded


def test_repeated_blog_in_one_batch_keeps_the_last(store: Store) -> None:
    assert store.upsert_blogs([blog(title="first"), blog(title="last")]) == 1
    (row,) = store.blogs()
    assert row["title"] == "last"
    assert store.count("feeds") == 2


def test_friend_link_upsert(store: Store) -> None:
    store.upsert_friend_links([link(), link(target="carol.example")])
    execute(store, "UPDATE friend_links SET first_seen = '2001-01-01T00:00:00Z'")
    assert store.upsert_friend_links([link(name="Bob (new name)"), link(source="x.example")]) == 2
    rows = store.friend_links()
    assert [(r["source_blog_id"], r["target_blog_id"]) for r in rows] == [
        ("alice.example", "bob.example"),
        ("alice.example", "carol.example"),
        ("x.example", "bob.example"),
    ]
    assert rows[0]["name"] == "Bob (new name)"
    assert rows[0]["first_seen"] == "2001-01-01T00:00:00Z"
    assert rows[0]["last_seen"] != "2001-01-01T00:00:00Z"


def test_long_urls_are_keys(store: Store) -> None:
    """URLs longer than any MySQL key prefix stay distinct (keyed by SHA-1)."""
    stem = "https://bob.example/" + "p" * 3000
    store.upsert_friend_links([link(target_url=stem + "/a"), link(target_url=stem + "/b")])
    assert sorted(r["target_url"][-2:] for r in store.friend_links()) == ["/a", "/b"]
    long_feed = FeedInfo(stem + ".xml", "application/rss+xml")
    store.upsert_blogs([blog(feed_url=long_feed.url, feeds=[long_feed])])
    assert store.blogs()[0]["feeds"][0]["url"] == long_feed.url


@pytest.mark.parametrize("text", HOSTILE)
def test_text_round_trips_unchanged(store: Store, text: str) -> None:
    feed = FeedInfo(f"https://alice.example/{text}", "application/rss+xml", text, 1.0, [text])
    store.write(
        [blog(title=text, abstract=text, generator=text, feeds=[feed], feed_url=feed.url)],
        [link(name=text, target_url=f"https://bob.example/{text}")],
    )
    (row,) = store.blogs()
    assert (row["title"], row["abstract"], row["generator"]) == (text, text, text)
    assert row["feeds"][0]["title"] == text
    assert row["feeds"][0]["reasons"] == [text]
    assert store.friend_links()[0]["name"] == text
    assert store.count("blogs") == 1


def test_a_failing_row_rolls_back_the_whole_call(store: Store) -> None:
    """One transaction per call: a row the driver cannot encode leaves nothing half-written."""
    with pytest.raises(UnicodeEncodeError):
        store.write([blog(), blog("bad.example", title="lone surrogate \ud800")], [link()])
    assert [store.count(t) for t in ("blogs", "feeds", "friend_links")] == [0, 0, 0]
    store.write([blog()], [link()])  # the connection is still usable
    assert store.count("blogs") == 1


def test_count_rejects_unknown_tables(store: Store) -> None:
    with pytest.raises(ValueError, match="unknown table 'blogs; DROP TABLE blogs'"):
        store.count("blogs; DROP TABLE blogs")


# --- URLs --------------------------------------------------------------------------------------


def test_sqlite_relative_absolute_and_memory_urls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    with Store.open("sqlite:///data/rel.sqlite3") as store:
        store.upsert_blogs([blog()])
    assert (tmp_path / "data" / "rel.sqlite3").is_file()
    with sqlite3.connect(tmp_path / "data" / "rel.sqlite3") as conn:
        assert conn.execute("SELECT blog_id FROM blogs").fetchall() == [("alice.example",)]
    absolute = tmp_path / "abs.sqlite3"
    assert str(absolute).startswith("/")
    with Store.open(f"sqlite:///{absolute}") as store:  # sqlite:////tmp/... (four slashes)
        assert store.schema_version() == schema.SCHEMA_VERSION
    assert absolute.is_file()
    with Store.open("sqlite:///:memory:") as store:
        store.upsert_blogs([blog()])
        assert store.count("blogs") == 1
    assert not (tmp_path / ":memory:").exists()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgres://u:secret@h/db", "unsupported database URL 'postgres://u:\\*\\*\\*@h/db'"),
        ("blogfeeds.sqlite3", "unsupported database URL"),
        ("sqlite://", "malformed SQLite URL"),
        ("sqlite:///", "malformed SQLite URL"),
        ("mysql:///db", "malformed MySQL URL"),
        ("mysql://root@127.0.0.1/", "malformed MySQL URL"),
    ],
)
def test_bad_urls_raise_value_error(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dialect_of(url)
    with pytest.raises(ValueError, match=message):
        connect(url)
    with pytest.raises(ValueError, match=message):
        blocking_io(url)


def test_a_missing_directory_is_refused_not_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as caught:
        Store.open("sqlite:///nodir/x/db.sqlite3")
    assert str(caught.value) == (
        f"the directory 'nodir/x' (relative to {tmp_path}) does not exist: create it first, "
        "or give an absolute path: sqlite:////nodir/x/db.sqlite3"
    )
    with pytest.raises(FileNotFoundError, match=r"^the directory '/\S+/gone' does not exist: c"):
        Store.open(f"sqlite:///{tmp_path / 'gone' / 'db.sqlite3'}")
    assert list(tmp_path.iterdir()) == []


def test_dialect_of_opens_nothing(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "x.sqlite3"
    assert dialect_of(f"sqlite:///{path}").name == "sqlite"
    assert not path.parent.exists()
    assert dialect_of("mysql://bf:pw@127.0.0.1:1/blogs").name == "mysql"  # nothing listens there
    with pytest.raises(ValueError, match=r"malformed MySQL URL 'mysql://bf:\*\*\*@h:x/b'"):
        dialect_of("mysql://bf:pw@h:x/b")


def test_what_a_url_says_of_its_backend(tmp_path: Path) -> None:
    assert not blocking_io(f"sqlite:///{tmp_path}/x.sqlite3")
    assert blocking_io("mysql+pymysql://bf:pw@127.0.0.1:1/blogs")
    assert database_file(f"sqlite:///{tmp_path}/x.sqlite3") == f"{tmp_path}/x.sqlite3"
    assert database_file("sqlite:///rel/x.sqlite3") == "rel/x.sqlite3"
    assert database_file("sqlite:///:memory:") is None
    assert database_file("mysql://bf:pw@127.0.0.1:1/blogs") is None
    assert not (tmp_path / "x.sqlite3").exists()


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"MYSQL_URL": " mysql://h/db ", "BLOGFEEDS_DATABASE_URL": "sqlite:///x"}, "MYSQL_URL"),
        ({"MYSQL_URL": " ", "BLOGFEEDS_DATABASE_URL": "sqlite:///x"}, "BLOGFEEDS_DATABASE_URL"),
        ({"MYSQL_URL": None, "BLOGFEEDS_DATABASE_URL": ""}, ""),
    ],
)
def test_mysql_url_wins_and_empty_means_no_storage(settings: dict[str, Any], expected: str) -> None:
    name, url = database_setting(settings)
    assert name == expected
    assert url == (settings[name].strip() if name else "")
    assert database_url(settings) == url
    assert database_url(settings, " sqlite:///given ") == "sqlite:///given"


def test_redact_hides_only_the_password() -> None:
    assert redact("mysql://bf:s3cret@db:3306/bf") == "mysql://bf:***@db:3306/bf"
    assert redact("sqlite:///x.sqlite3") == "sqlite:///x.sqlite3"


@pytest.mark.services
def test_mariadb_connection_killed_between_batches_reconnects() -> None:
    """The server dropping the connection (KILL, wait_timeout: 2013/2006) costs no batch."""
    pymysql = pytest.importorskip("pymysql")
    for url in mariadb_url():
        with Store.open(url) as store:
            store.upsert_blogs([blog()])
            admin = pymysql.connect(**MARIADB)
            with admin.cursor() as cursor:
                cursor.execute(f"KILL {store.connection.raw.thread_id()}")
            admin.close()
            assert store.upsert_blogs([blog("bob.example")]) == 1
            assert store.count("blogs") == 2


def test_git_ignores_the_files_of_a_crawl_database(tmp_path: Path) -> None:
    """A crawl in the checkout leaves the database and, while it runs, SQLite's WAL files."""
    url = f"sqlite:///{tmp_path / 'blogfeeds.sqlite3'}"
    with Store.open(url) as store:
        store.write([Blog(blog_id="a.example", url="https://a.example/")], [])
        made = sorted(p.name for p in tmp_path.iterdir())  # open: the WAL files are there
    assert made == ["blogfeeds.sqlite3", "blogfeeds.sqlite3-shm", "blogfeeds.sqlite3-wal"]
    ignore = (Path(__file__).resolve().parents[1] / ".gitignore").read_text("utf-8").split()
    assert all(any(fnmatch.fnmatch(name, rule) for rule in ignore) for name in made), ignore
