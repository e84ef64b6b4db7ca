"""What each kept friend link is (``site``, ``feed``, ``gemini``, ``gopher``: the extractor's
:attr:`~blogfeeds.extract.friends.model.Friend.kind`), stored in ``friend_links.kind`` (schema
version 15) on SQLite and MariaDB: written, rewritten, kept by a merge of nodes, read as
``site`` from rows stored before, and carried by the exports and ``scrapy stats``."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from blogfeeds.commands.export import Filters, export
from blogfeeds.extensions.summary import summarize
from blogfeeds.items import FriendLink
from blogfeeds.storage import nodes, schema
from blogfeeds.storage.db import Store, utc_now
from tests.test_storage import blog, execute, mariadb_url

FEED = "https://carol.example/feed.xml"
CAPSULE = "https://portal.mozz.us/gemini/dave.example/"
BOB = "https://bob.example/"


@pytest.fixture(params=["sqlite", pytest.param("mariadb", marks=pytest.mark.services)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'kinds.sqlite3'}"
    else:
        yield from mariadb_url("blogfeeds_test_kinds")


def links(source: str = "alice.example") -> list[FriendLink]:
    return [
        FriendLink(source, "https://bob.example/", "bob.example", "Bob"),
        FriendLink(source, FEED, "carol.example", "Carol", kind="feed"),
        FriendLink(source, CAPSULE, "portal.mozz.us/gemini", "Dave", kind="gemini"),
    ]


def kinds(store: Store, source: str = "alice.example") -> dict[str, str]:
    return {
        row["target_url"]: row["kind"]
        for row in store.friend_links()
        if row["source_blog_id"] == source
    }


def test_each_friend_links_kind_is_stored_and_rewritten(url: str) -> None:
    with Store.open(url) as store:
        store.write([blog("alice.example")], links())
        assert kinds(store) == {"https://bob.example/": "site", FEED: "feed", CAPSULE: "gemini"}
        # a later read finds the feed's blog: the same link, now the friend's site
        again = [*links()[:1], FriendLink("alice.example", FEED, "carol.example", "Carol")]
        store.write([], again)
        assert kinds(store)[FEED] == "site"
        mine = store.friend_links(source="alice.example")  # ordered by URL
        assert [r["kind"] for r in mine] == ["site", "site", "gemini"]
        assert store.friend_links(source="bob.example") == []


def test_a_merge_of_nodes_keeps_each_links_kind(url: str) -> None:
    with Store.open(url) as store:
        store.write([blog("alice.example"), blog("alias.example")], links("alias.example"))
        with store._transaction() as cursor:
            nodes.merge(
                cursor, store.dialect, "alias.example", "alice.example", ["redirect"], now=utc_now()
            )
        assert kinds(store, "alias.example") == {}
        assert kinds(store) == {"https://bob.example/": "site", FEED: "feed", CAPSULE: "gemini"}
        # the alias's address finds the node's links
        assert {r["kind"] for r in store.friend_links(source="alias.example")} == {
            "site",
            "feed",
            "gemini",
        }


def test_version_15_reads_the_links_stored_before_as_sites(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database of version 14 keeps its links, each a site (the only kind stored then), and
    gains the index that finds a blog's theme entries; a new write stores the kinds."""
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:14])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 14)
    with Store.open(url) as store:
        assert store.schema_version() == 14
        columns = ("source_blog_id", "target_blog_id", "target_url", "target_url_hash", "name")
        columns += ("container_score", "source_url", "first_seen", "last_seen")
        marks = ", ".join([store.dialect.param] * len(columns))
        with store._transaction() as cursor:
            cursor.execute(
                f"INSERT INTO friend_links ({', '.join(columns)}) VALUES ({marks})",
                ("old.example", "bob.example", BOB, schema.url_hash(BOB), "Bob", 1.0, "", "t", "t"),
            )
    with Store.open(url, read_only=True) as store:  # read as it is, not migrated
        assert store.schema_version() == 14
        assert kinds(store, "old.example") == {"https://bob.example/": "site"}
        assert not _indexed(store)
    monkeypatch.undo()
    for _ in range(2):  # and once more after a lost version row
        with Store.open(url) as store:
            assert store.schema_version() == schema.SCHEMA_VERSION >= 15
            assert kinds(store, "old.example") == {"https://bob.example/": "site"}
            assert _indexed(store)
            execute(store, "DELETE FROM schema_version WHERE version = 15")
    with Store.open(url) as store:
        store.write([blog("alice.example")], links())
        assert kinds(store)[CAPSULE] == "gemini"


def _indexed(store: Store) -> bool:
    """Whether an index of ``theme_entries`` starts with ``source_blog_id``."""
    with store._transaction(write=False) as cursor:
        if store.dialect.name == "mysql":
            cursor.execute(
                "SELECT 1 FROM information_schema.statistics WHERE table_schema = DATABASE() "
                "AND table_name = 'theme_entries' AND column_name = 'source_blog_id' "
                "AND seq_in_index = 1"
            )
            return cursor.fetchone() is not None
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        for (name,) in cursor.fetchall():
            cursor.execute(f"PRAGMA index_info({name})")
            if [r[2] for r in cursor.fetchall()][:1] == ["source_blog_id"]:
                cursor.execute("SELECT tbl_name FROM sqlite_master WHERE name = ?", (name,))
                if cursor.fetchone()[0] == "theme_entries":
                    return True
        return False


def test_the_exports_and_stats_carry_each_friend_links_kind(url: str) -> None:
    with Store.open(url) as store:
        store.write([blog("alice.example"), blog("bob.example")], links())
        stored = store.blogs(), store.friend_links()

    def exported(fmt: str) -> str:
        out = io.BytesIO()
        export(fmt, *stored, Filters(), out, all_targets=True)
        return out.getvalue().decode()

    rows = {row["blog_id"]: row for row in map(json.loads, exported("jsonl").splitlines())}
    assert [(f["target_url"], f["kind"]) for f in rows["alice.example"]["friend_links"]] == [
        ("https://bob.example/", "site"),
        (FEED, "feed"),
        (CAPSULE, "gemini"),
    ]
    assert rows["bob.example"]["friend_links"] == []
    table = {r["blog_id"]: r for r in csv.DictReader(io.StringIO(exported("csv")))}
    assert table["alice.example"]["friend_links"] == (
        f"https://bob.example/ (site) {FEED} (feed) {CAPSULE} (gemini)"
    )
    edges = list(csv.DictReader(io.StringIO(exported("edges"))))
    assert {(e["target_url"], e["kind"]) for e in edges} == {
        ("https://bob.example/", "site"),
        (FEED, "feed"),
        (CAPSULE, "gemini"),
    }
    graph = etree.fromstring(exported("graphml").encode())
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert graph.find("g:key[@id='kind'][@for='edge']", ns) is not None
    on_edges = {
        e.get("target"): e.findtext("g:data[@key='kind']", namespaces=ns)
        for e in graph.iterfind(".//g:edge", ns)
    }
    assert on_edges == {
        "bob.example": "site",
        "carol.example": "feed",
        "portal.mozz.us/gemini": "gemini",
    }
    summary = summarize(*stored)
    assert summary.as_dict()["friend_links_by_kind"] == {"feed": 1, "gemini": 1, "site": 1}
    assert "Friend links, by kind: feed 1, gemini 1, site 1" in summary.render()
