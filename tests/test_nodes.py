"""One blog, one node in storage (blogfeeds.storage.nodes), on SQLite and on the local MariaDB:
addresses joined by their stored observations, the alias's rows moved to the node, a database
that already holds split nodes merged on re-crawl, links stored later to an alias on the node."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.commands.export import write_csv, write_graphml, write_jsonl
from blogfeeds.extract.aliases import Hop, Observation, PageSignals, observation_json
from blogfeeds.items import Blog, BlogAddress, FeedInfo, FriendLink
from blogfeeds.storage import nodes
from blogfeeds.storage.db import Store
from blogfeeds.storage.schema import url_hash
from tests import blogosphere as bs

REPO = Path(__file__).resolve().parent.parent
COPY = "https://alice.github.io/"
HOME = "https://alice.example.net.cn/"
FEED = "https://alice.example.net.cn/atom.xml"
POSTS = frozenset(f"https://alice.example.net.cn/p/{i}/" for i in range(6))


@pytest.fixture(params=["sqlite", "mysql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'blogs.sqlite3'}"
        return
    pytest.importorskip("pymysql")
    if bs.mariadb_admin() is None:
        pytest.skip("MariaDB unreachable at 127.0.0.1:3306 (.ci/services.sh starts it)")
    with bs.throwaway_database("nodes") as url:
        yield url


def blog(bid: str, url: str, seen: Observation | None, **fields: Any) -> Blog:
    feeds = fields.pop("feeds", [FeedInfo(url=FEED, type="application/atom+xml")])
    return Blog(
        blog_id=bid,
        url=url,
        title="Alice",
        feed_url=feeds[0].url if feeds else None,
        feeds=feeds,
        fetched_at=fields.pop("fetched_at", "2026-12-01T00:00:00Z"),
        observation=observation_json(seen) if seen else "",
        **fields,
    )


def link(source: str, target_url: str, target: str) -> FriendLink:
    return FriendLink(source_blog_id=source, target_url=target_url, target_blog_id=target)


def copy_seen(**page: str) -> Observation:
    """The github.io copy served with 200: its pages name the original's feed."""
    return Observation(COPY, page=PageSignals(**page), feed_url=FEED, entries=POSTS)


HOME_SEEN = Observation(HOME, feed_url=FEED, entries=POSTS)


def rows(store: Store, sql: str) -> list[tuple[Any, ...]]:
    with store._transaction(write=False) as cursor:
        cursor.execute(sql)
        return [tuple(r) for r in cursor.fetchall()]


def test_a_copy_is_merged_into_the_original_with_its_rows(db_url: str) -> None:
    with Store.open(db_url) as store:
        # the copy first, with a friend, a friend's link to it and a scheduled feed of its own
        copy_feeds = [
            FeedInfo(url=FEED, type="application/atom+xml"),
            FeedInfo(url="https://alice.github.io/rss.xml", type="application/rss+xml"),
        ]
        store.write(
            [blog("alice.github.io", COPY, copy_seen(), feeds=copy_feeds)],
            [
                link("alice.github.io", "https://bob.example.org/", "bob.example.org"),
                link("alice.github.io", "https://carol.example.org/", "carol.example.org"),
                link("bob.example.org", COPY, "alice.github.io"),
            ],
        )
        with store._transaction() as cursor:
            cursor.execute(
                "INSERT INTO schedule (feed_url_hash, feed_url, blog_id, interval_minutes, "
                f"next_due, status) VALUES ({', '.join([store.dialect.param] * 6)})",
                (
                    url_hash("x"),
                    "https://alice.github.io/rss.xml",
                    "alice.github.io",
                    60.0,
                    "",
                    "ok",
                ),
            )
        assert store.count("blog_aliases") == 0
        # then the original (a later first_seen), listing bob too
        store.write(
            [blog("example.net.cn", HOME, HOME_SEEN, fetched_at="2026-12-02T00:00:00Z")],
            [link("example.net.cn", "https://bob.example.org/", "bob.example.org")],
        )
        blogs = store.blogs()
        assert [b["blog_id"] for b in blogs] == ["example.net.cn"]
        [node] = blogs
        assert node["first_seen"] == "2026-12-01T00:00:00Z"  # the copy was seen first
        assert [a["blog_id"] for a in node["aliases"]] == ["alice.github.io"]
        assert node["aliases"][0]["url"] == COPY
        assert set(node["aliases"][0]["evidence"]) >= {"same_feed", "entries"}
        assert [(f["url"], f["is_main"]) for f in node["feeds"]] == [
            (FEED, True),
            ("https://alice.github.io/rss.xml", False),
        ]
        edges = {(e["source_blog_id"], e["target_blog_id"]) for e in store.friend_links()}
        assert edges == {
            ("example.net.cn", "bob.example.org"),
            ("example.net.cn", "carol.example.org"),
            ("bob.example.org", "example.net.cn"),
        }
        assert rows(store, "SELECT blog_id FROM schedule") == [("example.net.cn",)]
        # a friend link stored later to the copy's address is on the node
        store.write([], [link("dave.example.org", COPY, "alice.github.io")])
        targets = {e["target_blog_id"] for e in store.friend_links()}
        assert "alice.github.io" not in targets
        # the copy crawled again: no row of its own comes back, the alias is seen again
        store.write([blog("alice.github.io", COPY, copy_seen())], [])
        assert [b["blog_id"] for b in store.blogs()] == ["example.net.cn"]
        assert store.count("blog_aliases") == 1


def test_a_permanent_redirect_makes_an_alias_even_to_a_blog_stored_before(db_url: str) -> None:
    with Store.open(db_url) as store:
        store.write(
            [blog("example.net.cn", HOME, HOME_SEEN)],
            [link("bob.example.org", COPY, "alice.github.io")],
        )
        moved = Observation(COPY, HOME, (Hop(COPY, 301),))
        address = BlogAddress("alice.github.io", COPY, observation_json(moved))
        store.write([], [], [address])
        [alias] = store.blogs()[0]["aliases"]
        assert (alias["blog_id"], alias["evidence"]) == ("alice.github.io", ["redirect"])
        assert {e["target_blog_id"] for e in store.friend_links()} == {"example.net.cn"}


def test_a_temporary_redirect_and_a_look_alike_stay_apart(db_url: str) -> None:
    other = "https://bob.github.io/"
    with Store.open(db_url) as store:
        store.write([blog("example.net.cn", HOME, HOME_SEEN)], [])
        moved = Observation(COPY, HOME, (Hop(COPY, 302),))
        store.write([], [], [BlogAddress("alice.github.io", COPY, observation_json(moved))])
        # the same theme, title and description; a feed of its own with other posts
        look_alike = Observation(
            other,
            feed_url=other + "atom.xml",
            entries=frozenset(f"{other}p/{i}/" for i in range(6)),
        )
        store.write([blog("bob.github.io", other, look_alike, feeds=[])], [])
        assert {b["blog_id"] for b in store.blogs()} == {"example.net.cn", "bob.github.io"}
        assert store.count("blog_aliases") == 0


def test_split_nodes_of_an_earlier_crawl_merge_on_recrawl(db_url: str) -> None:
    with Store.open(db_url) as store:
        # an earlier crawl stored both addresses as blogs, without observations
        store.write(
            [blog("alice.github.io", COPY, None), blog("example.net.cn", HOME, None)],
            [
                link("alice.github.io", "https://bob.example.org/", "bob.example.org"),
                link("bob.example.org", COPY, "alice.github.io"),
                link("bob.example.org", HOME, "example.net.cn"),
            ],
        )
        assert store.count("blogs") == 2
        # the re-crawl reads both again (the copy's canonical names the original)
        store.write(
            [
                blog("alice.github.io", COPY, copy_seen(canonical=HOME)),
                blog("example.net.cn", HOME, HOME_SEEN),
            ],
            [],
        )
        [node] = store.blogs()
        assert node["blog_id"] == "example.net.cn"
        assert "canonical" in node["aliases"][0]["evidence"]
        edges = sorted((e["source_blog_id"], e["target_url"]) for e in store.friend_links())
        # bob's two links (one per address) stay two rows, both on the node
        assert edges == sorted(
            [
                ("bob.example.org", COPY),
                ("bob.example.org", HOME),
                ("example.net.cn", "https://bob.example.org/"),
            ]
        )
        assert {e["target_blog_id"] for e in store.friend_links()} == {
            "bob.example.org",
            "example.net.cn",
        }


def test_nodes_decided_by_two_stores_of_one_database(db_url: str) -> None:
    """Two workers (two connections) each store one address: the second finds the first's."""
    with Store.open(db_url) as one, Store.open(db_url) as two:
        one.write([blog("alice.github.io", COPY, copy_seen())], [])
        two.write([blog("example.net.cn", HOME, HOME_SEEN)], [])
        assert [b["blog_id"] for b in one.blogs()] == ["example.net.cn"]


def test_exports_carry_the_aliases_and_name_the_node(db_url: str) -> None:
    with Store.open(db_url) as store:
        store.write(
            [blog("alice.github.io", COPY, copy_seen()), blog("example.net.cn", HOME, HOME_SEEN)],
            [link("bob.example.org", COPY, "alice.github.io")],
        )
        blogs, links = store.blogs(), store.friend_links()
    lines = io.StringIO()
    write_jsonl(blogs, lines)
    [row] = [json.loads(line) for line in lines.getvalue().splitlines()]
    assert [(a["url"], a["blog_id"]) for a in row["aliases"]] == [(COPY, "alice.github.io")]
    table = io.StringIO()
    write_csv(blogs, table)
    [stored] = list(csv.DictReader(io.StringIO(table.getvalue())))
    assert stored["aliases"] == COPY
    graph = io.BytesIO()
    write_graphml(blogs, links, graph)
    assert b'target="example.net.cn"' in graph.getvalue()
    assert b'<data key="aliases">https://alice.github.io/</data>' in graph.getvalue()
    assert b'<node id="alice.github.io"' not in graph.getvalue()


def test_the_site_lists_a_blog_once_with_its_other_addresses(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'site.sqlite3'}"
    with Store.open(url) as store:
        store.write(
            [blog("alice.github.io", COPY, copy_seen()), blog("example.net.cn", HOME, HOME_SEEN)],
            [],
        )
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "export", "site", str(site), "--database", url],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (site / "blogs").iterdir()) == ["example.net.cn.html"]
    page = (site / "blogs" / "example.net.cn.html").read_text(encoding="utf-8")
    assert f'<a href="{COPY}" rel="nofollow noopener">{COPY}</a>' in page


def test_two_workers_writing_at_once_agree(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers store the two addresses at once, the first holding its transaction open after
    its comparisons: the second must see the first's address (on MySQL it waits for the named
    lock; two transactions side by side would each miss the other's and stay two nodes). Other
    blogs sit between the two's ids, so that InnoDB's gap locks do not serialise them alone."""
    inside = threading.Event()
    record = nodes.record

    def slow_record(cursor: Any, dialect: Any, observed: Any, ids: Any, now: str) -> None:
        record(cursor, dialect, observed, ids, now)
        if any(bid == "alice.github.io" for bid, _ in observed):
            inside.set()
            time.sleep(1.0)

    monkeypatch.setattr(nodes, "record", slow_record)

    def worker() -> None:  # a store per thread, as a worker has its own
        with Store.open(db_url) as one:
            one.write([blog("alice.github.io", COPY, copy_seen())], [])

    with Store.open(db_url) as store:  # the schema, and other blogs between the two's ids
        others = ["b.example", "m.example", "z.example"]
        store.write([blog(o, f"https://{o}/", Observation(f"https://{o}/")) for o in others], [])
    first = threading.Thread(target=worker)
    first.start()
    assert inside.wait(10)
    with Store.open(db_url) as two:
        two.write([blog("example.net.cn", HOME, HOME_SEEN)], [])
        first.join()
        assert [b["blog_id"] for b in two.blogs()] == sorted([*others, "example.net.cn"])


def test_friend_links_to_a_blog_under_a_path_are_on_it_in_either_order(db_url: str) -> None:
    """Two people under plain paths of one host: a link stored before a path blog is written
    moves to it; a link stored after goes to it; a link to the host's root stays the host's."""
    shared = "https://blogs.hostshare.example/"
    oli, pia = shared + "oli/", shared + "pia/"

    def path_blog(bid: str, url: str) -> Blog:
        feed = FeedInfo(url=url + "atom.xml", type="application/atom+xml")
        seen = Observation(url, feed_url=url + "atom.xml")
        return blog(bid, url, seen, feeds=[feed])

    host = "blogs.hostshare.example"
    with Store.open(db_url) as store:
        store.write(
            [],
            [
                link("bob.example.org", oli, host),
                link("bob.example.org", shared + "oli/posts/1/", host),
                link("bob.example.org", shared, host),
            ],
        )
        store.write([path_blog(f"{host}/oli", oli)], [link(f"{host}/oli", oli, host)])
        store.write([], [link("carol.example.org", pia, host)])
        store.write([path_blog(f"{host}/pia", pia)], [link("dave.example.org", pia, host)])
        edges = {
            (e["source_blog_id"], e["target_url"], e["target_blog_id"])
            for e in store.friend_links()
        }
    assert edges == {
        ("bob.example.org", oli, f"{host}/oli"),
        ("bob.example.org", shared + "oli/posts/1/", f"{host}/oli"),
        ("bob.example.org", shared, host),
        ("carol.example.org", pia, f"{host}/pia"),
        ("dave.example.org", pia, f"{host}/pia"),
    }


def test_version_14_finds_a_copy_of_a_build_stored_with_the_old_keys(db_url: str) -> None:
    """A build for ``localhost`` stored before version 14 (its page key without the entries,
    the only key a copy shares with it: its entries are on the placeholder) is still found by
    its copy read after the upgrade: the migration computes every stored address's keys anew."""
    built = frozenset(f"http://localhost:4000/2024/0{i}/01/note/" for i in range(1, 6))
    signals = PageSignals(text_digest="d" * 40)
    original = Observation(HOME, page=signals, entries=built)
    with Store.open(db_url) as store:
        store.write([blog("example.net.cn", HOME, original, feeds=[])], [])
        with store._transaction() as cursor:  # the keys as version 12 wrote them
            cursor.execute("DELETE FROM alias_keys WHERE blog_id = 'example.net.cn'")
            cursor.execute(
                f"INSERT INTO alias_keys (key_hash, blog_id) VALUES ({store.dialect.param}, "
                "'example.net.cn')",
                (url_hash(f"page {signals.text_digest}"),),
            )
            cursor.execute("DELETE FROM schema_version WHERE version >= 14")
    with Store.open(db_url) as store:
        copy = Observation(COPY, page=signals, entries=built)
        store.write([blog("alice.github.io", COPY, copy, feeds=[])], [])
        [node] = store.blogs()
        assert [a["blog_id"] for a in node["aliases"]] == ["alice.github.io"]
        assert node["aliases"][0]["evidence"] == ["same_page"]
