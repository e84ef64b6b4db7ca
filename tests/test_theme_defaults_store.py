"""The store's side of the crawl-wide rule for theme defaults
(:mod:`blogfeeds.storage.themedefaults`) on SQLite and MariaDB: the threshold counts blogs,
reaching it drops the earlier links too, a re-read keeps the entry dropped with the source's
friend count right, and the rule reads only the first places and credited links."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from blogfeeds.crawl.optout import OptOutList, parse_address
from blogfeeds.items import Blog, FriendLink
from blogfeeds.storage import nodes
from blogfeeds.storage.db import Store, utc_now
from blogfeeds.storage.optout import OptOutStore
from blogfeeds.theme_default_settings import ThemeDefaultSettings
from tests.test_storage import mariadb_url

THEME = "theme:lumen"
AUTHOR = "https://lumenauthor.example/"


@pytest.fixture(params=["sqlite", pytest.param("mariadb", marks=pytest.mark.services)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'themes.sqlite3'}"
        with OptOutStore.open(url) as opened:
            opened.theme_defaults = ThemeDefaultSettings(blogs=3, places=2)
            yield opened
        return
    for url in mariadb_url("blogfeeds_test_themes"):
        with OptOutStore.open(url) as opened:
            opened.theme_defaults = ThemeDefaultSettings(blogs=3, places=2)
            yield opened


def read(store: Store, i: int, *, position: int = 0, credited: bool = True) -> None:
    """Blog ``i`` read: it lists the theme's author at ``position`` and one friend of its own."""
    source = f"b{i}.example"
    links = [
        FriendLink(
            source,
            AUTHOR,
            "lumenauthor.example",
            "Lumen",
            theme=THEME,
            position=position,
            credited=credited,
        ),
        FriendLink(
            source,
            f"https://own{i}.example/",
            f"own{i}.example",
            "Own",
            theme=THEME,
            position=position + 1,
        ),
    ]
    blog = Blog(
        source, f"https://{source}/", status="ok", friend_count=2, fetched_at="2026-12-05T20:00:00Z"
    )
    store.write([blog], links)


def authors(store: Store) -> set[str]:
    return {r["source_blog_id"] for r in store.friend_links() if r["target_url"] == AUTHOR}


def test_reaching_the_threshold_drops_the_earlier_links_too(store: Store) -> None:
    read(store, 1)
    read(store, 2)
    assert authors(store) == {"b1.example", "b2.example"}  # two blogs: friends so far
    read(store, 3)
    assert authors(store) == set()
    dropped = store.dropped_links()
    assert {d["source_blog_id"] for d in dropped} == {"b1.example", "b2.example", "b3.example"}
    assert {d["detail"] for d in dropped} == {f"{THEME}: lumenauthor.example at place 1 on 3 blogs"}
    counts = {b["blog_id"]: b["friend_count"] for b in store.blogs()}
    assert counts == {"b1.example": 1, "b2.example": 1, "b3.example": 1}


def test_a_reread_keeps_the_entry_dropped_and_the_count_right(store: Store) -> None:
    for i in (1, 2, 3):
        read(store, i)
    read(store, 2)
    assert authors(store) == set()
    assert len(store.dropped_links()) == 3
    assert {b["blog_id"]: b["friend_count"] for b in store.blogs()}["b2.example"] == 1


def test_uncredited_or_later_links_are_never_counted(store: Store) -> None:
    for i in (1, 2, 3):
        read(store, i, credited=False)
    for i in (4, 5, 6):
        read(store, i, position=2)  # beyond the first two places
    assert authors(store) == {f"b{i}.example" for i in range(1, 7)}
    assert store.dropped_links() == []


def test_an_opted_out_blog_leaves_no_count_nor_dropped_link(store: Store) -> None:
    for i in (1, 2, 3):
        read(store, i)
    assert isinstance(store, OptOutStore)
    store.purge(OptOutList.of([parse_address("https://b2.example/")]))
    assert {d["source_blog_id"] for d in store.dropped_links()} == {"b1.example", "b3.example"}
    with store._transaction(write=False) as cursor:
        cursor.execute("SELECT COUNT(*) FROM theme_entries WHERE source_blog_id = 'b2.example'")
        assert cursor.fetchone()[0] == 0


def test_a_blog_found_an_alias_counts_once_and_its_dropped_links_move(store: Store) -> None:
    for i in (1, 2, 3):
        read(store, i)
    with store._transaction() as cursor:
        nodes.merge(cursor, store.dialect, "b2.example", "b1.example", ("redirect",), now="t")
        cursor.execute("SELECT DISTINCT source_blog_id FROM theme_entries")
        assert {str(r[0]) for r in cursor.fetchall()} == {"b1.example", "b3.example"}
    assert sorted(d["source_blog_id"] for d in store.dropped_links()) == [
        "b1.example",
        "b3.example",
    ]


def reread(store: Store, i: int, *, author: bool) -> None:
    """Blog ``i`` read again later: its list holds its own friend, and the theme's author only
    when ``author``."""
    source = f"b{i}.example"
    own = FriendLink(
        source, f"https://own{i}.example/", f"own{i}.example", "Own", theme=THEME, position=author
    )
    sample = FriendLink(source, AUTHOR, "lumenauthor.example", "Lumen", theme=THEME, credited=True)
    links = [sample, own] if author else [own]
    time.sleep(1.1)  # the store's clock counts seconds: what it wrote before is older
    later = utc_now()
    blog = Blog(
        source, f"https://{source}/", status="ok", friend_count=len(links), fetched_at=later
    )
    store.write([blog], links)


def entries(store: Store) -> set[str]:
    with store._transaction(write=False) as cursor:
        cursor.execute("SELECT source_blog_id FROM theme_entries")
        return {str(r[0]) for r in cursor.fetchall()}


def test_a_blog_that_no_longer_lists_an_entry_stops_counting_toward_it(store: Store) -> None:
    read(store, 1)
    read(store, 2)
    reread(store, 2, author=False)  # b2's owner replaced the theme's sample by friends
    assert entries(store) == {"b1.example"}
    read(store, 3)
    assert authors(store) == {"b1.example", "b3.example"}  # two blogs list it now: friends
    assert store.dropped_links() == []


def test_a_blog_still_listing_an_entry_keeps_counting_and_below_it_is_a_friend_again(
    store: Store,
) -> None:
    for i in (1, 2, 3):
        read(store, i)
    reread(store, 2, author=True)  # still listed: still three blogs, still dropped
    assert authors(store) == set()
    assert {d["source_blog_id"] for d in store.dropped_links()} == {
        f"b{i}.example" for i in (1, 2, 3)
    }
    reread(store, 3, author=False)  # b3 stopped listing it: two blogs are below the threshold
    assert entries(store) == {"b1.example", "b2.example"}
    reread(store, 1, author=True)  # b1's next read finds it a friend again
    assert authors(store) == {"b1.example"}
    assert {d["source_blog_id"] for d in store.dropped_links()} == {"b2.example", "b3.example"}


def test_a_write_says_what_it_stored_and_what_it_dropped_by_reason(store: Store) -> None:
    read(store, 1)
    read(store, 2)
    source = "b3.example"
    links = [
        FriendLink(source, AUTHOR, "lumenauthor.example", theme=THEME, credited=True),
        FriendLink(source, "https://own3.example/", "own3.example", theme=THEME, position=1),
    ]
    written = store.write([Blog(source, f"https://{source}/", status="ok")], links)
    # b3's own friend stored; its sample entry dropped as written, with b1's and b2's
    assert (written.blogs, written.friend_links, written.dropped) == (1, 1, {"theme-default": 3})
