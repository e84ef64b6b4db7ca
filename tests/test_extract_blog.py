"""The one extraction entry point: what the crawl stores is what ``scrapy inspect`` shows.

* For every case page of ``<shared>/cases`` (friend links, real friend pages, feed discovery),
  :func:`~blogfeeds.extract.blog.extract_blog` runs twice over the case's little web with the
  same fetch function: once mapped to items as the ``blogs`` spider maps it
  (:func:`~blogfeeds.report_items.blog_items`), once as ``scrapy inspect --json`` prints it
  (:func:`~blogfeeds.commands.inspect.report_to_dict`); the Blog and FriendLinks equal the JSON.
* End to end: a real ``scrapy crawl blogs`` and a real ``scrapy inspect --json`` over the same
  loopback web (:mod:`tests.littleweb`): the stored rows equal the JSON.
* The report itself: friend pages and data sources followed with their outcome, counters,
  noindex and nofollow, a user rule's feed, the friend cap.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.project import get_project_settings

import blogfeeds.extract.blog as blog_module
from blogfeeds.commands.inspect import report_to_dict
from blogfeeds.extract.blog import FetchedPage, extract_blog
from blogfeeds.extract.config import ExtractConfig
from blogfeeds.extract.discovery import Fetched, FetchRequest
from blogfeeds.extract.report import BlogReport
from blogfeeds.extract.userrules import parse_rules
from blogfeeds.items import Blog, FriendLink
from blogfeeds.report_items import blog_items
from tests import cases
from tests.littleweb import LittleWeb

REPO = Path(__file__).resolve().parent.parent
WEB = Path(__file__).resolve().parent / "data" / "web"
HTML = "text/html; charset=utf-8"
CONFIG = ExtractConfig.from_settings(get_project_settings())


def _report(case: cases.Case) -> BlogReport | None:
    web = cases.LittleWeb(case)
    home = web.fetch(case.page_url)
    if home.status != 200:
        return None
    fetch = cases.case_fetch(case)
    return asyncio.run(extract_blog(home.url, home.body, home.headers, fetch, CONFIG))


def stored_view(blog: Blog, links: list[FriendLink]) -> dict[str, Any]:
    """What the crawl stores, in the shape compared below."""
    return {
        # ``type`` labels an export record; it is no field of the blog or the link; the
        # observation is stored apart (blog_observations) and inspect shows it as its claims
        "blog": {
            k: v
            for k, v in dataclasses.asdict(blog).items()
            if k not in ("fetched_at", "depth", "type", "observation")
        },
        "links": [
            {k: v for k, v in dataclasses.asdict(link).items() if k != "type"} for link in links
        ],
    }


def inspect_view(data: dict[str, Any]) -> dict[str, Any]:
    """The same fields read from ``scrapy inspect --json``."""
    return {
        "blog": {
            "blog_id": data["blog_id"],
            "url": data["url"],
            "title": data["title"],
            "abstract": data["abstract"],
            "abstract_source": data["abstract_source"],
            "language": data["language"],
            "language_declared": data["language_declared"],
            "description": data["description"],
            "description_source": data["description_source"],
            "author": data["author"],
            "icon_url": data["icon_url"],
            "avatars": [],
            "last_post_at": data["last_post_at"],
            "posts_per_month": data["posts_per_month"],
            "activity": data["activity"],
            "generator": data["generator"],
            "platform": data["platform"],
            "platform_version": data["platform_version"],
            "feed_url": data["feed_url"],
            "feeds": data["feeds"],
            "friend_count": len(data["friends"]),
            "status": data["status"],
            "status_reason": data["status_reason"],
            "truncated": data["truncated"],
        },
        "links": [
            {
                "source_blog_id": data["blog_id"],
                "target_url": f["url"],
                "target_blog_id": f["blog_id"],
                "name": f["name"],
                "container_score": data["container_score"],
                "source_url": data["friend_source"],
                "avatar": f["avatar"],
                "feed": f["feed"],
                "theme": f["theme"],
                "position": f["position"],
                "credited": f["credited"],
                "kind": f["kind"],
            }
            for f in data["friends"]
            if f["blog_id"] is not None
        ],
    }


@pytest.mark.skipif(cases.shared_dir() is None, reason="shared cases not found")
@pytest.mark.parametrize(
    ("suite", "name"), [(s, n) for s in cases.SUITES for n in cases.case_names(s)]
)
def test_stored_items_equal_the_inspect_json(suite: str, name: str) -> None:
    case = cases.load_case(suite, name)
    crawled, inspected = _report(case), _report(case)
    if crawled is None or inspected is None:
        pytest.skip("the case's page does not answer 200")
    blog, links = blog_items(crawled, fetched_at="2026-01-01T00:00:00Z", depth=0)
    data = json.loads(json.dumps(report_to_dict(inspected), ensure_ascii=False))
    assert stored_view(blog, links) == inspect_view(data)
    assert blog.friend_count == len(crawled.friends) <= CONFIG.max_friends


# --- The report ------------------------------------------------------------------------------

HOME = """<html><head><title>Home</title>{head}</head><body>
<p>A blog about rivers, written slowly over many years by one person.</p>
<a href="/links/">友情链接</a>{body}</body></html>"""
LINKS = """<html><head><title>Links</title>{head}</head><body><h2>友情链接</h2><ul>
<li><a href="https://one.example/">One</a></li><li><a href="https://two.example/">Two</a></li>
<li><a href="https://three.example/">Three</a></li></ul></body></html>"""
OPML = b"""<?xml version="1.0"?><opml version="2.0"><head><title>r</title></head><body>
<outline text="Four" htmlUrl="https://four.example/" xmlUrl="https://four.example/feed"/>
</body></opml>"""
FEED = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>R</title>
<link>https://river.example/</link><item><title>a</title><link>https://river.example/a</link>
</item></channel></rss>"""


def little(routes: dict[str, tuple[int, str, bytes]]) -> tuple[Any, list[str]]:
    """A fetch function over ``{url: (status, content type, body)}`` (404 elsewhere) and the
    list of URLs it was asked for."""
    asked: list[str] = []

    async def fetch(request: FetchRequest) -> Fetched | None:
        asked.append(request.url)
        status, ctype, body = routes.get(request.url, (404, "text/plain", b"no"))
        text = ctype.startswith("text/") or "xml" in ctype
        return FetchedPage(request.url, status, {"Content-Type": ctype}, body, is_text=text)

    return fetch, asked


def run(
    routes: dict[str, tuple[int, str, bytes]],
    home: str,
    config: ExtractConfig = CONFIG,
    headers: dict[str, str] | None = None,
) -> tuple[BlogReport, list[str]]:
    fetch, asked = little(routes)
    report = asyncio.run(
        extract_blog("https://river.example/", home.encode(), headers or {}, fetch, config)
    )
    return report, asked


def test_friend_page_and_data_source_are_followed_and_counted() -> None:
    opml = '<link rel="blogroll" type="text/x-opml" href="/blogroll.opml">'
    report, asked = run(
        {
            "https://river.example/feed.xml": (200, "application/rss+xml", FEED),
            "https://river.example/links/": (200, HTML, LINKS.format(head=opml).encode()),
            "https://river.example/blogroll.opml": (200, "text/x-opml", OPML),
        },
        HOME.format(
            head='<link rel="alternate" type="application/rss+xml" href="/feed.xml">', body=""
        ),
    )
    assert [f.url for f in report.feeds] == ["https://river.example/feed.xml"]
    assert report.status == "ok" and report.discovery is not None
    assert [f.url for f in report.friends] == [
        "https://one.example/",
        "https://two.example/",
        "https://three.example/",
        "https://four.example/",
    ]
    assert report.friend_source == "https://river.example/links/"
    assert report.container_score > 0
    assert [(p.kind, p.url, p.outcome, p.friends) for p in report.followed] == [
        ("friend_page", "https://river.example/links/", "used", 3),
        ("data_source", "https://river.example/blogroll.opml", "read", 1),
        ("data_source", "https://river.example/.well-known/recommendations.opml", "failed", 0),
    ]
    assert report.followed[-1].detail == "status 404"
    assert report.counters["friend_page_used"] == 1
    assert report.counters["data_source_friends"] == 1
    assert report.counters["feed_discovery/requests"] == asked.count(
        "https://river.example/feed.xml"
    )
    assert {e.friend.how for e in report.edges()} >= {"opml"}


BLOGROLL = """<h3>Blogroll</h3><ul><li><a href="https://five.example/">Five</a></li>
<li><a href="https://six.example/">Six</a></li><li><a href="https://seven.example/">Seven</a></li>
</ul>"""


def test_a_friend_pages_own_friend_page_links_are_not_looked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # They were looked for on every friend page and never followed.
    looked: list[str] = []
    find = blog_module.find_friend_pages

    def counted(page: Any) -> Any:
        looked.append(page.url)
        return find(page)

    monkeypatch.setattr(blog_module, "find_friend_pages", counted)
    routes = {"https://river.example/links/": (200, HTML, LINKS.format(head="").encode())}
    report, _ = run(routes, HOME.format(head="", body=""))
    assert report.friend_source == "https://river.example/links/"
    assert looked == ["https://river.example/"]


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pages the friend extractor runs on, in order."""
    pages: list[str] = []
    extract = blog_module.extract_friends

    def counted(page: Any, **kwargs: Any) -> Any:
        pages.append(page.url)
        return extract(page, **kwargs)

    monkeypatch.setattr(blog_module, "extract_friends", counted)
    return pages


@pytest.mark.parametrize("links_page", [True, False])
def test_the_home_pages_own_list_is_united_with_the_friend_pages(
    links_page: bool, read: list[str]
) -> None:
    # Issue 40: a home page's sidebar blogroll was dropped whenever a friend page listed
    # friends; the two lists may differ, and both are the owner's.
    routes = {"https://river.example/links/": (200, HTML, LINKS.format(head="").encode())}
    report, _ = run(routes if links_page else {}, HOME.format(head="", body=BLOGROLL))
    home = ["https://five.example/", "https://six.example/", "https://seven.example/"]
    if links_page:
        assert read == ["https://river.example/links/", "https://river.example/"]
        assert report.friend_source == "https://river.example/links/"
        assert [f.url for f in report.friends] == [
            "https://one.example/",
            "https://two.example/",
            "https://three.example/",
            *home,
        ]
        assert report.counters["home_friends_united"] == 3
    else:
        assert read == ["https://river.example/"]
        assert report.friend_source == "https://river.example/"
        assert [f.url for f in report.friends] == home
        assert report.friend_extraction.best is not None


def test_a_home_page_without_a_titled_list_of_its_own_is_not_read_beside_a_friend_page(
    read: list[str],
) -> None:
    # The home page's measuring pass costs as much as the friend page's: a home page with no
    # friend heading, no theme or widget cards and no XFN link is not read for friends.
    routes = {"https://river.example/links/": (200, HTML, LINKS.format(head="").encode())}
    body = '<ul><li><a href="https://five.example/">Five</a></li></ul>'
    report, _ = run(routes, HOME.format(head="", body=body))
    assert read == ["https://river.example/links/"]
    assert len(report.friends) == 3


def _real_case_page(case: str) -> bytes:
    shared = cases.shared_dir()
    if shared is None:
        pytest.skip("needs the shared folder (../shared)")
    return (shared / "cases" / "friend-links-real" / case / "page.html").read_bytes()


@pytest.mark.parametrize("same_list", [False, True])
def test_a_real_sidebar_blogroll_and_a_real_friend_page_are_united(same_list: bool) -> None:
    """python.org's blog home (Blogger BlogList sidebar, 13 blogs) with a link to a friend
    page, served with blinkfox's real Matery friend page: the blog's friends are both lists.
    Counter-case: a friend page that repeats the sidebar's list adds nothing twice."""
    home = _real_case_page("en_blogger_bloglist_python").replace(
        b"<body", b'<a href="/p/links.html">Links</a><body', 1
    )
    links = home if same_list else _real_case_page("zh_matery_blinkfox")
    fetch, _ = little({"http://blog.python.org/p/links.html": (200, HTML, links)})
    report = asyncio.run(extract_blog("http://blog.python.org/", home, {}, fetch, CONFIG))
    got = [f.url for f in report.friends]
    assert report.friend_source == "http://blog.python.org/p/links.html"
    assert "http://eli.thegreenplace.net/" in got and "http://jessenoller.com/feed/" in got
    assert len(got) == len(set(got))
    if same_list:
        assert "home_friends_united" not in report.counters
    else:
        assert "https://sunhwee.com" in got
        assert report.counters["home_friends_united"] == 13


def test_pages_that_fail_are_reported_with_their_outcome() -> None:
    report, _ = run(
        {
            "https://river.example/links/": (200, "image/png", b"\x89PNG"),
        },
        HOME.format(head="", body='<a href="/friends/">Friends</a>'),
    )
    outcomes = {p.url: p.outcome for p in report.followed}
    assert outcomes["https://river.example/links/"] == "not_html"
    assert report.counters["not_html"] == 1
    assert (
        "https://river.example/friends/" not in outcomes
        or outcomes["https://river.example/friends/"] == "failed"
    )
    assert report.status == "no_feed" and report.rejected
    assert all(r.reason for r in report.rejected)


def test_noindex_keeps_identity_and_nofollow_records_no_friends() -> None:
    robots = '<meta name="robots" content="noindex, nofollow">'
    report, asked = run({}, HOME.format(head=robots, body=""))
    assert asked == []
    assert (report.status, report.metadata.title, report.feeds, report.friends) == (
        "noindex",
        "",
        [],
        [],
    )
    assert report.counters == {"robots/noindex": 1, "robots/nofollow": 1}
    blog, links = blog_items(report, fetched_at="t", depth=1)
    assert (blog.blog_id, blog.status, blog.feed_url, links) == (
        "river.example",
        "noindex",
        None,
        [],
    )


def test_a_user_rule_feed_is_kept_unfetched() -> None:
    rules = parse_rules('[[rule]]\nname = "btn"\nblog = "river.example"\nfeed = { css = "a.sub" }')
    config = dataclasses.replace(CONFIG, user_rules=rules, max_pages=1)
    report, asked = run(
        {}, HOME.format(head="", body='<a class="sub" href="/f.xml">RSS</a>'), config
    )
    # max_pages=1: no friend page either; the page declares no icon: /favicon.ico is checked
    assert asked == ["https://river.example/favicon.ico"]
    assert [f.url for f in report.feeds] == ["https://river.example/f.xml"]
    assert report.discovery is None and report.rules_fired == {"feed": "btn"}
    assert report.counters == {
        "rule_fired/btn/feed": 1,
        "abstract/page": 1,  # a rule's feed is not read: the abstract is the page's
        "profile/favicon_requests": 1,
    }
    blog, _ = blog_items(report, fetched_at="t", depth=0)
    assert blog.feed_url == "https://river.example/f.xml" and blog.status == "ok"


def test_a_url_that_is_a_feed_resolves_to_its_blog_with_that_feed_as_main() -> None:
    feed = FEED.replace(b"river.example/</link>", b"river.example/home/</link>", 1)
    fetch, asked = little(
        {
            "https://river.example/home/": (200, HTML, HOME.format(head="", body="").encode()),
        }
    )
    report = asyncio.run(
        extract_blog(
            "https://river.example/rss",
            feed,
            {"Content-Type": "application/rss+xml"},
            fetch,
            CONFIG,
        )
    )
    assert asked[0] == "https://river.example/home/"
    assert (report.url, report.status) == ("https://river.example/home/", "ok")
    assert (report.feeds[0].url, report.feeds[0].source) == ("https://river.example/rss", "seed")
    assert report.counters["feed_as_seed"] == 1
    assert "site link https://river.example/home/" in report.feeds[0].reasons[0]
    blog, _ = blog_items(report, fetched_at="t", depth=0)
    assert (blog.blog_id, blog.feed_url) == ("river.example", "https://river.example/rss")


def test_a_feed_whose_site_link_fails_is_read_as_it_was() -> None:
    feed = FEED.replace(b"river.example/</link>", b"river.example/home/</link>", 1)
    fetch, asked = little({})
    report = asyncio.run(extract_blog("https://river.example/rss", feed, {}, fetch, CONFIG))
    assert asked[0] == "https://river.example/home/"
    assert report.url == "https://river.example/rss"
    assert "feed_as_seed" not in report.counters


def test_friends_over_the_cap_are_counted() -> None:
    config = dataclasses.replace(CONFIG, max_friends=2)
    report, _ = run(
        {"https://river.example/links/": (200, HTML, LINKS.format(head="").encode())},
        HOME.format(head="", body=""),
        config,
    )
    assert len(report.friends) == 2
    assert report.counters["friends_over_cap"] == 1


# --- End to end: a real crawl and a real inspect over one loopback web -----------------------

LOOPBACK: dict[str, dict[str, Any]] = {
    "http://alpha.example/": {"file": "alpha-home.html", "content_type": HTML},
    "http://alpha.example/links/": {"file": "alpha-links.html", "content_type": HTML},
    "http://alpha.example/atom.xml": {
        "file": "alpha-atom.xml",
        "content_type": "application/atom+xml",
    },
    "https://gamma-example.com/blog/": {"file": "gamma-home.html", "content_type": HTML},
    "https://gamma-example.com/blog/friends.html": {
        "file": "gamma-friends.html",
        "content_type": HTML,
    },
    "https://gamma-example.com/blog/blogroll.opml": {
        "file": "gamma-blogroll.opml",
        "content_type": "text/x-opml",
    },
}


def _scrapy(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _stored(db: Path) -> dict[str, Any]:
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        (row,) = con.execute("SELECT * FROM blogs").fetchall()
        blog = {
            k: row[k]
            for k in (
                "blog_id", "url", "title", "abstract", "abstract_source", "language", "generator",
                "platform", "platform_version", "feed_url", "friend_count", "status", "truncated",
            )
        }  # fmt: skip
        for name in (
            "language_declared", "description", "description_source", "author", "icon_url",
            "last_post_at", "activity", "status_reason",
        ):  # fmt: skip
            blog[name] = row[name] or ""
        blog["posts_per_month"] = row["posts_per_month"]
        blog["avatars"] = []
        feeds = con.execute(
            "SELECT url, type, title, score, reasons FROM feeds ORDER BY position"
        ).fetchall()
        blog["feeds"] = [{**dict(f), "reasons": json.loads(f["reasons"])} for f in feeds]
        links = con.execute(
            "SELECT source_blog_id, target_url, target_blog_id, name, container_score, "
            "source_url, avatar, kind FROM friend_links ORDER BY id"
        ).fetchall()
        rows = [{**dict(link), "avatar": link["avatar"] or ""} for link in links]
        return {"blog": blog, "links": rows}
    finally:
        con.close()


@pytest.mark.integration
@pytest.mark.parametrize("url", ["http://alpha.example/", "https://gamma-example.com/blog/"])
def test_a_real_crawl_stores_what_inspect_json_shows(url: str, tmp_path: Path) -> None:
    db = tmp_path / "blogfeeds.sqlite3"
    with LittleWeb(LOOPBACK, root=WEB) as web:
        env = web.env()
        env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{db}"
        crawl = _scrapy(
            "crawl", "blogs", "-a", f"start_urls={url}",
            "-s", "BLOGFEEDS_MAX_BLOGS=1", "-s", "DOWNLOAD_DELAY=0",
            "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "LOG_LEVEL=INFO", env=env,
        )  # fmt: skip
        inspect = _scrapy("inspect", "--json", "--nolog", url, env=env)
    assert crawl.returncode == 0, crawl.stderr[-3000:]
    assert inspect.returncode == 0, inspect.stderr[-3000:]
    data = json.loads(inspect.stdout)
    stored = _stored(db)
    shown = inspect_view(data)
    for link in shown["links"]:
        # item fields, not friend_links columns: a friend's known feed, and what the
        # crawl-wide rule for theme defaults reads (blogfeeds.storage.themedefaults)
        for field in ("feed", "theme", "position", "credited"):
            del link[field]
    assert stored == shown
    assert stored["links"], "the blog lists friends"
    if url.startswith("https://gamma"):  # its friends page, and the OPML blogroll it links
        assert [p["outcome"] for p in data["followed"]][:2] == ["used", "read"]
        assert stored["links"][0]["source_url"] == "https://gamma-example.com/blog/friends.html"
    else:
        assert stored["blog"]["feed_url"] == "http://alpha.example/atom.xml"
