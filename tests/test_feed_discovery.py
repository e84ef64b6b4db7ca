"""The validated feed-discovery pipeline (:func:`find_feeds`) and feed validation.

* Hand-made little webs (same semantics as the case folders, :mod:`tests.cases`), one per
  stage, rule and number: the kinds of input of the held-back cases too (Eleventy
  ``/feed/feed.xml``, ``Link`` header, meta refresh, XSLT preamble, GBK, one hop, 403 retry).
* :func:`sniff_feed` on hand-made bodies and on every real feed of ``<shared>/corpus/feeds``.
* The ``feed-discovery`` case suite, ours and the original rule set side by side on the same
  inputs: passed cases, zero false feeds on the decoys, and the request budget (median and
  p95 requests per blog), against ``tests/quality_floors.json``.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.extract.discovery import (
    ADVERTISED,
    DiscoveryConfig,
    FeedReport,
    Fetched,
    FetchRequest,
    discover_feeds,
    find_feeds,
)
from blogfeeds.extract.feedreader import read_feed, sniff_feed
from blogfeeds.extract.page import parse_page
from blogfeeds.report_items import feed_info
from tests.cases import (
    DEFAULT_UA,
    Case,
    FetchLog,
    LittleWeb,
    case_fetch,
    case_names,
    judge_feeds,
    load_case,
    run_feed_case,
    shared_dir,
)

FLOORS: dict[str, Any] = json.loads(
    Path(__file__).with_name("quality_floors.json").read_text("utf-8")
)
BOT_UA = "Mozilla/5.0 (compatible; blogfeedsbot/0.1)"


def rss(
    title: str = "Blog", n: int = 3, site: str = "https://blog.example", extra: str = ""
) -> str:
    items = "".join(
        f"<item><title>post {i}</title><link>{site}/post-{i}/</link><guid>{site}/post-{i}/</guid>"
        f"<pubDate>Mon, 0{i} Jan 2024 08:00:00 +0000</pubDate>{extra}</item>"
        for i in range(1, n + 1)
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>{title}</title>'
        f"<link>{site}/</link>{items}</channel></rss>"
    )


def atom(title: str = "Blog", n: int = 3, site: str = "https://blog.example") -> str:
    entries = "".join(
        f"<entry><title>e{i}</title><id>{site}/post-{i}/</id><link href='{site}/post-{i}/'/>"
        f"<updated>2024-02-0{i}T10:00:00Z</updated></entry>"
        for i in range(1, n + 1)
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>{title}</title><id>{site}/</id>{entries}</feed>"
    )


def web(
    tmp_path: Path,
    page: str,
    routes: dict[str, dict[str, Any]] | None = None,
    page_url: str = "https://blog.example/",
) -> Case:
    """A little web: ``routes`` values may carry ``body`` (str or bytes), written to a file."""
    (tmp_path / "page.html").write_text(f"<!DOCTYPE html><html>{page}</html>", "utf-8")
    table: dict[str, dict[str, Any]] = {}
    for i, (url, given) in enumerate((routes or {}).items()):
        route = dict(given)
        body = route.pop("body", None)
        if body is not None:
            data = body.encode("utf-8") if isinstance(body, str) else body
            (tmp_path / f"r{i}").write_bytes(data)
            route["file"] = f"r{i}"
        route.setdefault("content_type", "application/rss+xml")
        table[url] = route
    return Case("hand", tmp_path.name, tmp_path, {"page_url": page_url, "routes": table})


def run(case: Case, user_agent: str = DEFAULT_UA) -> tuple[list[str], FeedReport, FetchLog]:
    reported, report, log = asyncio.run(run_feed_case(case, user_agent=user_agent))
    assert report is not None
    return reported, report, log


# --- Stages -----------------------------------------------------------------------------------


def test_advertised_feed_is_validated_with_one_request(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<head><link rel="alternate" type="application/rss+xml" href="./feed.xml" title="T">',
        {"https://blog.example/feed.xml": {"body": rss(n=0)}},
    )
    reported, report, log = run(case)
    assert reported == ["https://blog.example/feed.xml"]
    feed = report.feeds[0]
    assert (feed.type, feed.kind, feed.item_count, feed.source) == ("rss", "main", 0, "link")
    assert "valid rss 2.0, 0 items" in feed.reasons
    assert (report.requests, len(log.requests)) == (1, 1)
    assert report.fetch_seconds >= 0
    assert feed_info(feed).type == "application/rss+xml"


def test_link_header_only(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        "<p>x</p>",
        {
            "https://blog.example/": {
                "file": "page.html",
                "content_type": "text/html",
                "headers": {"Link": '</feed.atom>; rel="alternate"; type="application/atom+xml"'},
            },
            "https://blog.example/feed.atom": {"body": atom()},
        },
    )
    reported, report, _ = run(case)
    assert reported == ["https://blog.example/feed.atom"]
    assert (report.feeds[0].source, report.feeds[0].type) == ("header", "atom")


def test_rel_feed_alternate_token_list(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<link rel="feed alternate" type="application/atom+xml" href="/posts.atom">',
        {"https://blog.example/posts.atom": {"body": atom()}},
    )
    assert run(case)[0] == ["https://blog.example/posts.atom"]


def test_broken_and_non_feed_candidates_are_rejected_with_reasons(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/atom+xml" href="/a.xml">'
        '<link rel="alternate" type="application/json" href="/search.json">'
        '<link rel="alternate" type="application/rss+xml" href="/sitemap.xml">'
        '<link rel="alternate" type="application/rss+xml" href="/gone.xml">'
        '<link rel="alternate" type="application/rss+xml" href="/rss.xml">',
        {
            "https://blog.example/a.xml": {"status": 500, "body": "<html>oops</html>"},
            "https://blog.example/search.json": {
                "body": '[{"t": 1}]',
                "content_type": "application/json",
            },
            "https://blog.example/sitemap.xml": {
                "body": '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>'
            },
            "https://blog.example/rss.xml": {"body": rss()},
        },
    )
    reported, report, _ = run(case)
    assert reported == ["https://blog.example/rss.xml"]
    reasons = {r.url.rsplit("/", 1)[1]: r.reason for r in report.rejected}
    assert reasons == {
        "a.xml": "status 500",
        "search.json": "not a feed (application/json)",
        "sitemap.xml": "not a feed (application/rss+xml)",
        "gone.xml": "status 404",
    }


def test_typed_anchor_and_feed_like_anchors_when_nothing_is_advertised(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<body><a class="rss" href="/?feed=rss2">RSS</a> <a href="/feedback/">feedback</a></body>',
        {"https://blog.example/?feed=rss2": {"body": rss()}},
    )
    reported, report, log = run(case)
    assert reported == ["https://blog.example/?feed=rss2"]
    assert report.feeds[0].source == "anchor"
    assert len(log.requests) == 1


def test_anchors_are_not_fetched_when_the_page_advertises_a_feed(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<head><link rel="alternate" type="application/rss+xml" href="/feed/"></head>'
        '<body><a href="/rss.xml">RSS</a><a href="/tag/rss/">rss</a></body>',
        {
            "https://blog.example/feed/": {"body": rss()},
            "https://blog.example/rss.xml": {"body": rss()},
        },
    )
    reported, report, _ = run(case)
    assert (reported, report.requests) == (["https://blog.example/feed/"], 1)


def test_comments_only_advertised_goes_on_to_anchors(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<head><link rel="alternate" type="application/rss+xml" href="/comments/feed/"></head>'
        '<body><a href="/feed/">Posts RSS</a></body>',
        {
            "https://blog.example/comments/feed/": {"body": rss("Comments for Blog")},
            "https://blog.example/feed/": {"body": rss(n=2, site="https://blog.example/p")},
        },
    )
    reported, report, _ = run(case)
    assert reported == ["https://blog.example/feed/", "https://blog.example/comments/feed/"]
    assert [f.kind for f in report.feeds] == ["main", "comments"]


def test_platform_paths_stop_at_the_first_valid_and_follow_redirects(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<head><meta name="generator" content="WordPress 6.5"></head>',
        {
            "https://blog.example/feed/": {
                "status": 301,
                "location": "https://blog.example/feed/x",
            },
            "https://blog.example/feed/x": {"body": rss()},
            "https://blog.example/?feed=rss2": {"body": rss()},
        },
    )
    reported, report, log = run(case)
    assert reported == ["https://blog.example/feed/x"]
    assert report.feeds[0].aliases == ["https://blog.example/feed/"]
    assert report.platforms == ["WordPress: generator wordpress 6.5"]
    assert len(log.requests) == 1


def test_eleventy_feed_in_a_subfolder_and_its_json_format(tmp_path: Path) -> None:
    json_feed = json.dumps(
        {"version": "https://jsonfeed.org/version/1.1", "title": "Blog", "items": [{"id": "j1"}]}
    )
    case = web(
        tmp_path,
        '<head><meta name="generator" content="Eleventy v2.0.1"></head>',
        {
            "https://blog.example/feed/feed.xml": {"body": atom()},
            "https://blog.example/feed/feed.json": {
                "body": json_feed,
                "content_type": "application/json",
            },
        },
    )
    reported, _, log = run(case)
    assert reported == ["https://blog.example/feed/feed.xml", "https://blog.example/feed/feed.json"]
    assert len(log.requests) == 2


# The home page of Eleventy's starter (11ty/eleventy-base-blog at e37a55c: layouts/base.njk with
# its generator meta commented out, as shipped, and the feed's <link> removed by the owner;
# postslist.njk as rendered).
ELEVENTY_HOME = (
    "<head><title>Eleventy Base Blog</title></head><body>"
    '<a href="#main" id="skip-link" class="visually-hidden">Skip to main content</a>'
    '<header><a href="/" class="home-link">Eleventy Base Blog</a><nav><ul class="nav">'
    '<li class="nav-item"><a href="/" aria-current="page">Home</a></li>'
    '<li class="nav-item"><a href="/blog/">Archive</a></li></ul></nav></header>'
    '<main id="main"><h1>Latest 3 Posts</h1><ol reversed class="postlist">'
    + "".join(
        f'<li class="postlist-item"><a href="/blog/post-{i}/" class="postlist-link">Post {i}</a>'
        f'<time class="postlist-date" datetime="2018-0{i}-01">2018</time></li>'
        for i in (3, 2, 1)
    )
    + "</ol></main></body>"
)


def test_eleventys_starter_without_generator_nor_link_is_recognised_by_its_markup(
    tmp_path: Path,
) -> None:
    case = web(tmp_path, ELEVENTY_HOME, {"https://blog.example/feed/feed.xml": {"body": atom()}})
    reported, report, log = run(case)
    assert reported == ["https://blog.example/feed/feed.xml"]
    assert report.platforms == [
        "Eleventy: markup postlist postlist-date postlist-item postlist-link"
    ]
    assert len(log.requests) <= 2  # the platform's path, then its JSON format


def test_a_post_list_class_alone_is_no_eleventy(tmp_path: Path) -> None:
    """Counter-case: another theme's ``postlist`` (no starter's set) keeps the plain guesses."""
    page = '<body><ul class="postlist"><li><a href="/p/">P</a></li></ul></body>'
    case = web(tmp_path, page, {"https://blog.example/feed/": {"body": atom()}})
    reported, report, _ = run(case)
    assert (reported, report.platforms) == (["https://blog.example/feed/"], [])


def test_a_typed_link_without_rel_beats_an_anchor_that_validates_alike(tmp_path: Path) -> None:
    # The situation of NetNewsWire's and Miniflux's finders: a <link> with a feed type and no
    # rel, and a bare <a href="atom.rss">: what the page declares wins over what it links.
    page = (
        '<head><link type="application/rss+xml" href="/feeds/posts.xml"></head>'
        '<body><a href="atom.rss">Atom</a></body>'
    )
    case = web(
        tmp_path,
        page,
        {
            "https://blog.example/feeds/posts.xml": {"body": rss("Declared")},
            "https://blog.example/feeds/atom.rss": {
                "body": rss("Linked", site="https://b.example")
            },
        },
        page_url="https://blog.example/feeds/",
    )
    reported, report, _ = run(case)
    assert reported[0] == "https://blog.example/feeds/posts.xml"
    assert [f.source for f in report.feeds] == ["link-hint", "anchor"]
    # The same feed at both URLs: the declared URL is the canonical one.
    same = rss("Same")
    case = web(
        tmp_path,
        page,
        {
            "https://blog.example/feeds/posts.xml": {"body": same},
            "https://blog.example/feeds/atom.rss": {"body": same},
        },
        page_url="https://blog.example/feeds/",
    )
    reported, report, _ = run(case)
    assert reported == ["https://blog.example/feeds/posts.xml"]
    assert report.feeds[0].aliases == ["https://blog.example/feeds/atom.rss"]


def test_an_untyped_alternate_is_validated(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<head><link rel="alternate" href="/index.xml"></head>',
        {"https://blog.example/index.xml": {"body": rss(), "content_type": "text/xml"}},
    )
    reported, report, log = run(case)
    assert reported == ["https://blog.example/index.xml"]
    assert (report.feeds[0].source, len(log.requests)) == ("link-hint", 1)


def test_guessing_without_any_hint_tries_only_the_likely_paths(tmp_path: Path) -> None:
    case = web(tmp_path, "<p>x</p>", {"https://blog.example/feed/": {"body": atom()}})
    reported, report, log = run(case)
    assert reported == ["https://blog.example/feed/"]
    assert report.feeds[0].source == "guess"
    assert [u for u, _ in log.requests] == [
        "https://blog.example/atom.xml",
        "https://blog.example/feed/",
    ]
    # A rare path (Eleventy's feed/feed.xml) needs evidence: the generator (test above).
    case = web(tmp_path, "<p>x</p>", {"https://blog.example/feed/feed.xml": {"body": atom()}})
    reported, report, log = run(case)
    assert (reported, len(log.requests), report.budget_exhausted) == ([], 2, False)


def test_a_recognised_platform_gets_its_own_paths_only(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<head><meta name="generator" content="Hugo 0.120"></head>',
        {"https://blog.example/atom.xml": {"body": atom()}},
    )
    reported, report, log = run(case)
    assert reported == []
    assert [u for u, _ in log.requests] == ["https://blog.example/index.xml"]
    assert report.platforms == ["Hugo: generator hugo 0.120"]


def test_a_platform_path_that_misses_ends_the_platform_paths(tmp_path: Path) -> None:
    hexo = '<head><meta name="generator" content="Hexo 7.1.1"></head>'
    case = web(tmp_path, hexo, {"https://blog.example/rss2.xml": {"body": rss()}})
    reported, _, log = run(case)
    assert (reported, [u for u, _ in log.requests]) == ([], ["https://blog.example/atom.xml"])
    # A first path that answers otherwise than a miss (a server error) leaves the next one.
    case = web(
        tmp_path,
        '<head><meta name="generator" content="WordPress 6.5"></head>',
        {
            "https://blog.example/feed/": {"status": 500, "content_type": "text/html"},
            "https://blog.example/?feed=rss2": {"body": rss()},
        },
    )
    reported, _, _ = run(case)
    assert reported == ["https://blog.example/?feed=rss2"]


def test_an_anchor_that_misses_elsewhere_leaves_the_platform_paths(tmp_path: Path) -> None:
    page = (
        '<head><meta name="generator" content="WordPress 6.5"></head>'
        '<body><a href="/rss.xml">RSS</a></body>'
    )
    case = web(tmp_path, page, {"https://blog.example/feed/": {"body": rss()}})
    reported, _, log = run(case)
    assert reported == ["https://blog.example/feed/"]
    assert [u for u, _ in log.requests] == [
        "https://blog.example/rss.xml",
        "https://blog.example/feed/",
    ]
    # An anchor to the platform's own first path that missed is that path's miss.
    hexo = '<head><meta name="generator" content="Hexo 7"></head><body><a href="/atom.xml">x</a>'
    case = web(tmp_path, hexo, {"https://blog.example/rss2.xml": {"body": rss()}})
    reported, _, log = run(case)
    assert (reported, [u for u, _ in log.requests]) == ([], ["https://blog.example/atom.xml"])


def test_anchors_that_miss_count_as_misses(tmp_path: Path) -> None:
    case = web(tmp_path, '<body><a href="/feed.xml">x</a><a href="/rss/">y</a></body>', {})
    reported, _, log = run(case)
    assert reported == []
    assert [u for u, _ in log.requests] == [
        "https://blog.example/feed.xml",
        "https://blog.example/rss/",
    ]


def test_a_site_that_answers_404_to_everything_costs_two_guesses(tmp_path: Path) -> None:
    case = web(tmp_path, "<p>x</p>", {})
    reported, report, log = run(case)
    assert (reported, len(log.requests), report.budget_exhausted) == ([], 2, False)
    assert [r.reason for r in report.rejected] == ["status 404", "status 404"]


def test_path_hosted_blog_is_never_guessed_above_its_prefix(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        "<p>x</p>",
        {
            "https://www.cnblogs.com/alice/rss": {"body": rss("Alice")},
            "https://www.cnblogs.com/atom.xml": {"body": rss("The platform")},
        },
        page_url="https://www.cnblogs.com/alice/",
    )
    reported, _, log = run(case)
    assert reported == ["https://www.cnblogs.com/alice/rss"]
    assert [u for u, _ in log.requests] == ["https://www.cnblogs.com/alice/rss"]
    # A generic guess at a project page of a path-hosted host stays under the project.
    case = web(tmp_path, "<p>x</p>", {}, page_url="https://alice.github.io/notes/p/1/")
    _, _, log = run(case)
    assert all(u.startswith("https://alice.github.io/notes/") for u, _ in log.requests)


def test_guesses_stop_at_the_first_valid_feed(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        "<p>x</p>",
        {
            "https://blog.example/notes/feed/": {"body": rss()},
            "https://blog.example/feed.xml": {"body": rss("Other")},
        },
        page_url="https://blog.example/notes/",
    )
    reported, _, log = run(case)
    assert reported == ["https://blog.example/notes/feed/"]
    assert [u for u, _ in log.requests] == [
        "https://blog.example/notes/atom.xml",
        "https://blog.example/atom.xml",
        "https://blog.example/notes/feed/",
    ]


def test_catch_all_site_yields_nothing_within_budget(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        "<p>app</p>",
        {"*@blog.example": {"file": "page.html", "content_type": "text/html"}},
    )
    reported, report, log = run(case)
    assert reported == []
    assert len(log.requests) == report.requests == 2  # a soft 404: two misses in a row
    assert not report.budget_exhausted
    assert all(r.reason.startswith("not a feed") for r in report.rejected)


def test_one_hop_to_a_feeds_page(tmp_path: Path) -> None:
    feeds_page = (
        "<html><body><ul><li><a href='/feeds/reviews.xml'>Reviews</a></li>"
        "<li><a href='/feeds/all.xml'>Everything</a></li></ul></body></html>"
    )
    case = web(
        tmp_path,
        '<body><footer><a href="/subscribe/">RSS feeds</a></footer></body>',
        {
            "https://blog.example/subscribe/": {"body": feeds_page, "content_type": "text/html"},
            "https://blog.example/feeds/all.xml": {"body": rss("All", n=5)},
            "https://blog.example/feeds/reviews.xml": {
                "body": rss("Reviews", n=1, site="https://blog.example/r")
            },
        },
    )
    reported, report, log = run(case)
    assert reported == [
        "https://blog.example/feeds/all.xml",
        "https://blog.example/feeds/reviews.xml",
    ]
    assert report.feeds[0].source == "hop"
    assert len(log.requests) == 3


def test_one_hop_after_guesses_to_a_subscribe_page(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<body><a href="/follow/">Subscribe</a></body>',
        {
            "https://blog.example/follow/": {
                "body": '<link rel="alternate" type="application/rss+xml" href="/x.rss">',
                "content_type": "text/html",
            },
            "https://blog.example/x.rss": {"body": rss()},
        },
    )
    config = DiscoveryConfig(max_requests=12)
    log = FetchLog()
    page = parse_page(case.page_url, (tmp_path / "page.html").read_bytes(), {})
    report = asyncio.run(find_feeds(page, case_fetch(case, log=log), config=config))
    assert [f.url for f in report.feeds] == ["https://blog.example/x.rss"]
    assert log.requests[-2][0] == "https://blog.example/follow/"


def test_meta_refresh_stub_is_followed_once(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<head><meta http-equiv="refresh" content="0; url=/labs/"></head>',
        {
            "https://blog.example/labs/": {
                "body": '<link rel="alternate" type="application/rss+xml" href="rss/feed.xml">',
                "content_type": "text/html",
            },
            "https://blog.example/labs/rss/feed.xml": {"body": rss()},
        },
    )
    reported, report, log = run(case)
    assert reported == ["https://blog.example/labs/rss/feed.xml"]
    assert report.page_url == "https://blog.example/labs/"
    assert len(log.requests) == 2


def test_cross_host_advertised_feed(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/rss+xml" href="https://feeds.proxy.example/Show">',
        {"https://feeds.proxy.example/Show": {"body": rss()}},
    )
    assert run(case)[0] == ["https://feeds.proxy.example/Show"]


def test_403_to_a_bot_user_agent_is_retried_as_a_browser(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/atom+xml" href="/index.xml">'
        '<link rel="alternate" type="application/atom+xml" href="/comments.xml">',
        {
            "https://blog.example/index.xml": {"body": atom(), "deny_ua": ["bot"]},
            "https://blog.example/comments.xml": {"body": atom("Comments"), "deny_ua": ["bot"]},
        },
    )
    reported, report, log = run(case, user_agent=BOT_UA)
    assert reported[0] == "https://blog.example/index.xml"
    assert "403 to our User-Agent, retried with a browser-like one" in report.feeds[0].reasons
    # the host is remembered: the second feed goes straight to the browser-like agent
    assert [ua == BOT_UA for _, ua in log.requests] == [True, False, False]
    assert not report.blocked


def test_403_retry_can_be_disabled(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/atom+xml" href="/index.xml">',
        {"https://blog.example/index.xml": {"body": atom(), "deny_ua": ["bot"]}},
    )
    page = parse_page(case.page_url, (tmp_path / "page.html").read_bytes(), {})
    config = DiscoveryConfig(retry_user_agent=None, max_requests=1)
    report = asyncio.run(find_feeds(page, case_fetch(case, BOT_UA), config=config))
    assert report.feeds == []
    assert report.rejected[0].reason == "status 403"


def test_network_failure_and_time_cap() -> None:
    page = parse_page(
        "https://blog.example/",
        b'<link rel="alternate" type="application/rss+xml" href="/a.xml">'
        b'<link rel="alternate" type="application/rss+xml" href="/b.xml">',
        {},
    )

    async def down(request: FetchRequest) -> Fetched | None:
        return None

    report = asyncio.run(find_feeds(page, down, config=DiscoveryConfig(max_requests=2)))
    assert [r.reason for r in report.rejected[:2]] == ["network failure or time cap"] * 2

    async def slow(request: FetchRequest) -> Fetched | None:
        await asyncio.sleep(5)
        return Fetched(request.url, 200, {}, rss().encode())

    report = asyncio.run(find_feeds(page, slow, config=DiscoveryConfig(max_fetch_seconds=0.05)))
    assert report.feeds == []
    assert report.requests == 1
    assert report.budget_exhausted
    assert report.fetch_seconds < 1


# --- Classification, aliases, ranking ---------------------------------------------------------


def test_rss_and_atom_with_the_same_items_collapse(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/rss+xml" href="/rss.xml">'
        '<link rel="alternate" type="application/atom+xml" href="/atom.xml">',
        {
            "https://blog.example/rss.xml": {"body": rss()},
            "https://blog.example/atom.xml": {"body": atom()},
        },
    )
    reported, report, _ = run(case)
    assert reported == ["https://blog.example/rss.xml"]
    assert report.feeds[0].aliases == ["https://blog.example/atom.xml"]
    assert any(
        r.startswith("alias https://blog.example/atom.xml: same items")
        for r in report.feeds[0].reasons
    )


def test_format_query_variant_with_the_same_title_collapses(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/atom+xml" href="/feeds/posts/default">'
        '<link rel="alternate" type="application/rss+xml" href="/feeds/posts/default?alt=rss">',
        {
            "https://blog.example/feeds/posts/default": {"body": atom("J")},
            "https://blog.example/feeds/posts/default?alt=rss": {
                "body": rss("J", site="https://o.example")
            },
        },
    )
    reported, report, _ = run(case)
    assert reported == ["https://blog.example/feeds/posts/default"]
    assert report.feeds[0].aliases == ["https://blog.example/feeds/posts/default?alt=rss"]


def test_different_feeds_of_one_site_stay_apart_and_rank_by_recency(tmp_path: Path) -> None:
    old = rss("Blog RSS 1", n=1, site="https://blog.example/old").replace("2024", "2019")
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/rss+xml" href="/old.xml">'
        '<link rel="alternate" type="application/rss+xml" href="/new.xml">',
        {
            "https://blog.example/old.xml": {"body": old},
            "https://blog.example/new.xml": {"body": rss()},
        },
    )
    reported, report, _ = run(case)
    assert reported == ["https://blog.example/new.xml", "https://blog.example/old.xml"]
    assert report.feeds[0].newest is not None and report.feeds[0].newest.year == 2024


def test_wfw_comment_rss_marks_a_comments_feed(tmp_path: Path) -> None:
    extra = "<wfw:commentRss>https://blog.example/x/replies/</wfw:commentRss>"
    main = rss(extra=extra).replace(
        "<rss ", '<rss xmlns:wfw="http://wellformedweb.org/CommentAPI/" '
    )
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/rss+xml" href="/x/replies/" title="Walk">'
        '<link rel="alternate" type="application/rss+xml" href="/feed/" title="Blog">',
        {
            "https://blog.example/x/replies/": {
                "body": rss("Walk", n=1, site="https://blog.example/c")
            },
            "https://blog.example/feed/": {"body": main},
        },
    )
    reported, report, _ = run(case)
    assert reported == ["https://blog.example/feed/", "https://blog.example/x/replies/"]
    assert report.feeds[1].kind == "comments"
    assert "listed as wfw:commentRss" in report.feeds[1].reasons[-1]


def test_podcast_and_category_kinds_rank_after_main(tmp_path: Path) -> None:
    enclosure = '<enclosure url="https://blog.example/a.mp3" type="audio/mpeg" length="1"/>'
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/rss+xml" href="/cast.xml">'
        '<link rel="alternate" type="application/rss+xml" href="/tag/go/feed/">'
        '<link rel="alternate" type="application/rss+xml" href="/posts.xml">',
        {
            "https://blog.example/cast.xml": {
                "body": rss("Cast", site="https://blog.example/c", extra=enclosure)
            },
            "https://blog.example/tag/go/feed/": {
                "body": rss("Go", n=1, site="https://blog.example/g")
            },
            "https://blog.example/posts.xml": {
                "body": rss("Posts", n=2, site="https://blog.example/p")
            },
        },
    )
    _, report, _ = run(case)
    assert [(f.url.rsplit("example", 1)[1], f.kind) for f in report.feeds] == [
        ("/posts.xml", "main"),
        ("/cast.xml", "podcast"),
        ("/tag/go/feed/", "category"),
    ]


def test_self_link_is_recorded_never_trusted(tmp_path: Path) -> None:
    body = rss().replace(
        "<channel>",
        '<channel><atom:link xmlns:atom="http://www.w3.org/2005/Atom" rel="self" href="https://blog.example/feed/"/>',
    )
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/rss+xml" href="/category/film/feed/">',
        {
            "https://blog.example/category/film/feed/": {"body": body},
            "https://blog.example/feed/": {"body": rss()},
        },
    )
    reported, report, log = run(case)
    assert reported == ["https://blog.example/category/film/feed/"]
    assert report.feeds[0].self_url == "https://blog.example/feed/"
    assert len(log.requests) == 1


def test_gbk_feed_title_is_decoded(tmp_path: Path) -> None:
    body = rss("技术论坛 最新主题").replace('encoding="utf-8"', 'encoding="gbk"').encode("gbk")
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/rss+xml" href="forum.php?mod=rss">',
        {"https://blog.example/forum.php?mod=rss": {"body": body, "content_type": "text/xml"}},
    )
    reported, report, _ = run(case)
    assert reported == ["https://blog.example/forum.php?mod=rss"]
    assert report.feeds[0].title == "技术论坛 最新主题"


def test_original_ruleset_fetches_nothing(tmp_path: Path) -> None:
    case = web(
        tmp_path,
        '<link rel="alternate" type="application/rss+xml" href="/sitemap.xml">',
        {"https://blog.example/sitemap.xml": {"body": "<urlset/>"}},
    )
    reported, report, log = asyncio.run(run_feed_case(case, "original"))
    assert reported == ["https://blog.example/sitemap.xml"]
    assert report is not None and not report.feeds[0].validated
    assert log.requests == []


# --- sniff_feed ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "fmt"),
    [
        (b"<rss version='2.0'><channel/></rss>", "rss"),
        (b"\xef\xbb\xbf  \n<?xml version='1.0'?><rss version='0.91'/>", "rss"),
        (b"<?xml version='1.0'?>\n<!-- hi -->\n<?xml-stylesheet href='s.xsl'?><feed/>", "atom"),
        (b"<!DOCTYPE rss [<!ENTITY x 'y'>]><rss/>", "rss"),
        (b"<atom:feed xmlns:atom='http://www.w3.org/2005/Atom'/>", "atom"),
        (b"<rdf:RDF xmlns='http://purl.org/rss/1.0/'><channel/></rdf:RDF>", "rdf"),
        (b"Warning: x in y.php\n<?xml version='1.0'?><rss/>", "rss"),
        ("<?xml version='1.0'?><rss/>".encode("utf-16"), "rss"),
        ("<?xml version='1.0' encoding='utf-16'?><rss/>".encode("utf-16-le"), "rss"),
        (b'{"version": "https://jsonfeed.org/version/1.1", "items": []}', "json"),
        (b'  {"version": "http://jsonfeed.org/version/1"}', "json"),
    ],
)
def test_sniff_feed_finds_the_root(body: bytes, fmt: str) -> None:
    sniff = sniff_feed(body)
    assert sniff is not None and sniff.format == fmt


def test_sniff_feed_skips_a_long_xslt_preamble() -> None:
    body = b"<?xml version='1.0'?><?xml-stylesheet type='text/xsl' href='/s.xsl'?>"
    body += b"<!--" + b" pretty " * 400 + b"-->\n<rss version='2.0'><channel/></rss>"
    sniff = sniff_feed(body, "text/xml")
    assert sniff is not None and (sniff.format, sniff.version) == ("rss", "2.0")


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   ",
        b"<!DOCTYPE html><html><body>rss</body></html>",
        b"<?xml version='1.0'?><urlset/>",
        b"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'/>",
        b'[{"title": "x"}]',
        b'{"version": "1.1", "items": []}',
        b"{not json",
        b"<!-- unterminated",
        b"plain text with no markup",
    ],
)
def test_sniff_feed_rejects_non_feeds(body: bytes) -> None:
    assert sniff_feed(body) is None


def test_sniff_feed_decodes_gbk_declared_as_gb2312() -> None:
    body = "<?xml version='1.0' encoding='gb2312'?><rss><channel><title>镕</title></channel></rss>"
    parsed = read_feed(body.encode("gb18030"))
    assert parsed is not None
    assert (parsed.sniff.encoding, parsed.title) == ("gb18030", "镕")
    http = read_feed(body.replace(" encoding='gb2312'", "").encode("gbk"), "text/xml; charset=GBK")
    assert http is not None and http.title == "镕"


def test_read_json_feed() -> None:
    body = json.dumps(
        {
            "version": "https://jsonfeed.org/version/1.1",
            "title": " J ",
            "home_page_url": "https://blog.example/",
            "feed_url": "https://blog.example/feed.json",
            "items": [
                {
                    "id": "1",
                    "url": "https://blog.example/1",
                    "date_published": "2024-01-02T00:00:00Z",
                },
                {"id": "2", "attachments": [{"url": "a.mp3", "mime_type": "audio/mpeg"}]},
            ],
        }
    ).encode()
    parsed = read_feed(body)
    assert parsed is not None
    assert (parsed.title, parsed.item_count, parsed.self_url) == (
        "J",
        2,
        "https://blog.example/feed.json",
    )
    assert parsed.item_keys == {"1", "2", "https://blog.example/1"}
    assert parsed.newest is not None and parsed.newest.day == 2
    assert not parsed.podcast


def _corpus_feeds() -> list[dict[str, Any]]:
    root = shared_dir()
    if root is None or not (root / "corpus/feeds/feed_labels.jsonl").is_file():
        return []
    lines = (root / "corpus/feeds/feed_labels.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.skipif(not _corpus_feeds(), reason="shared corpus not found")
def test_every_well_formed_real_feed_validates() -> None:
    """Every corpus feed feedparser reads without error (bozo false) is a feed to sniff_feed,
    except feedjira's DuplicateContentAtomFeed.xml, an XHTML page feedparser calls Atom."""
    root = shared_dir()
    assert root is not None
    missed, total = [], 0
    for row in _corpus_feeds():
        if not row["feedparser_version"] or row["bozo"]:
            continue
        data = (root / "corpus" / row["file"]).read_bytes()
        if row["file"].endswith(".gz"):
            data = gzip.decompress(data)
        total += 1
        if sniff_feed(data) is None:
            missed.append(row["file"])
    assert total > 400
    assert missed == ["feeds/feedjira/DuplicateContentAtomFeed.xml"]


# --- The case suite: ours beside the original -------------------------------------------------


def suite_results(ruleset: str) -> dict[str, tuple[bool, list[str], int, bool, list[str]]]:
    """``{case: (passed, false feeds, requests, page advertises a feed, problems)}``."""
    out = {}
    for name in case_names("feed-discovery"):
        case = load_case("feed-discovery", name)
        reported, _, log = asyncio.run(run_feed_case(case, ruleset))
        verdict = judge_feeds(case.expected, reported)
        banned = {u.rstrip("/") for u in case.expected.get("not_expected") or []}
        false = [u for u in reported if u.rstrip("/") in banned]
        if not case.expected.get("expected_feeds"):
            false = reported
        resp = LittleWeb(case).fetch(case.page_url)
        page = parse_page(resp.url, resp.body, resp.headers)
        advertised = any(c.source in ADVERTISED for c in discover_feeds(page))
        out[name] = (verdict.passed, false, len(log.requests), advertised, verdict.problems)
    return out


@pytest.mark.skipif(not case_names("feed-discovery"), reason="shared cases not found")
def test_feed_discovery_suite_ours_beside_original(capsys: pytest.CaptureFixture[str]) -> None:
    ours, original = suite_results("blogfeeds"), suite_results("original")
    advertised = [r[2] for r in ours.values() if r[3]]
    guessing = [r[2] for r in ours.values() if not r[3]]
    every = sorted(r[2] for r in ours.values())
    p95 = every[min(len(every) - 1, int(0.95 * len(every)))]
    with capsys.disabled():
        for label, res in (("blogfeeds", ours), ("original", original)):
            passed = sum(r[0] for r in res.values())
            false = sum(len(r[1]) for r in res.values())
            print(f"\nfeed-discovery [{label}]: {passed}/{len(res)} passed, {false} false feeds")
        print(
            f"feed-discovery requests per blog: median {statistics.median(advertised):g} when the "
            f"page advertises a feed ({len(advertised)} cases), median "
            f"{statistics.median(guessing):g} / max {max(guessing)} otherwise; p95 {p95} overall"
        )
    floor = FLOORS["feed-discovery"]
    failing = {n: r[4] for n, r in ours.items() if not r[0]}
    assert sum(r[0] for r in ours.values()) >= floor["passed"], failing
    assert not failing or set(failing).isdisjoint(floor["passing"]), failing
    assert sum(len(r[1]) for r in ours.values()) == 0
    assert sum(r[0] for r in original.values()) == floor["original_passed"]
    assert statistics.median(advertised) <= floor["median_requests_advertised"]
    assert p95 <= floor["p95_requests"]
