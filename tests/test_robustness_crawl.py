"""A hostile little web on loopback: crawler traps, every failure kind, robots directives.

One ``scrapy crawl blogs`` subprocess walks a hub blog whose blogroll links to:

- an infinite calendar (every URL of ``calendar-trap.com`` answers, linking to the next month,
  to more "friend pages" and to endless new blogs with session ids in their URLs);
- blogs failing each way a fetch can fail (404, 500, a timeout, an unresolvable name, a 20 MB
  page, a gzip bomb, an image, an empty page, a redirect to an overlong URL);
- pages with ``noindex`` / ``nofollow`` (meta and ``X-Robots-Tag``), a meta refresh, and a blog
  whose robots.txt forbids its feed, so that feed probes must stay away.

The crawl must finish, with every blog stored under the right status.
"""

from __future__ import annotations

import gzip
import itertools
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests import offline_dns
from tests.littleweb import LittleWeb, Route
from tests.robustness import CrawlRun, crawl_blogs

pytestmark = pytest.mark.integration

HTML = "text/html; charset=utf-8"
PER_BLOG_CAP = 8
_counter = itertools.count()


def blogroll(title: str, friends: list[tuple[str, str]], extra: str = "", head: str = "") -> str:
    items = "\n".join(
        f'<div class="flink-item"><a href="{url}" target="_blank">{name}</a>'
        f"<p>{name} 的博客</p></div>"
        for url, name in friends
    )
    return (
        f'<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8"><title>{title}</title>'
        f"{head}</head><body><main><h1>友情链接</h1>"
        f'<div class="flink-list">{items}</div>{extra}</main></body></html>'
    )


def calendar(url: str) -> Route:
    """Every URL of the calendar host: a month page linking to the next month, to 40 "friend
    pages" (without friends) and, on the home page, to three endless trap blogs."""
    parts = urlsplit(url)
    month = int((parse_qs(parts.query).get("month") or ["0"])[0] or 0)
    nav = "".join(
        f'<a href="/links/page/{k}/?sid={next(_counter)}">友情链接 第 {k} 页</a> '
        for k in range(1, 41)
    )
    nav += f'<a href="/calendar/?month={month + 1}&amp;sid={next(_counter)}">下个月</a>'
    friends: list[tuple[str, str]] = []
    if parts.path == "/":
        friends = [
            (f"http://trap-{i}.example/;jsessionid={next(_counter)}", f"Trap {i}")
            for i in (1, 2, 3)
        ]
    return Route(body=blogroll(f"日历 {month}", friends, extra=nav), content_type=HTML)


def trap_blog(url: str) -> Route:
    """``trap-N.example``: links to N+1..N+3, each with a fresh session id."""
    n = int(urlsplit(url).hostname.split("-")[1].split(".")[0])  # type: ignore[union-attr]
    friends = [
        (f"http://trap-{n + i}.example/;jsessionid={next(_counter)}", f"Trap {n + i}")
        for i in (1, 2, 3)
    ]
    return Route(body=blogroll(f"Trap {n}", friends), content_type=HTML)


LONG = "http://longurl.example/" + "a" * 3000
FAILING = {
    "gone.example": "http_4xx",
    "broken.example": "http_5xx",
    "slow.example": "timeout",
    "nx-host.invalid": "dns",
    "big.example": "too_large",
    "bomb.example": "too_large",
    "image.example": "not_html",
    "empty.example": "decode_error",
    "longredirect.example": "blocked",
}


def hostile_web() -> dict[str, Any]:
    page = "<html><head><title>{t}</title></head><body><p>{t} 的文章。</p></body></html>"
    routes: dict[str, Any] = {
        "*@calendar-trap.com": Route(handler=calendar),
        "http://gone.example/": {"status": 404, "body": "gone"},
        "http://broken.example/": {"status": 500, "body": "oops"},
        "http://slow.example/": {"delay": 4, "body": page.format(t="slow")},
        "http://big.example/": {"body": b"<html>" + b"a" * (20 * 1024 * 1024)},
        "http://bomb.example/": {
            "body": gzip.compress(b"<html>" + b"\0" * (64 * 1024 * 1024), 9),
            "headers": {"Content-Encoding": "gzip"},
        },
        "http://image.example/": {
            "body": b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "content_type": "image/png"
        },
        "http://empty.example/": {"body": b"", "content_type": HTML},
        "http://longredirect.example/": {"status": 302, "location": LONG},
        # robots directives
        "http://diary.example/": {
            "body": blogroll(
                "日记", [(f"http://followed-{i}.example/", f"Followed {i}") for i in (1, 2, 3)],
                head='<meta name="robots" content="noindex">',
            ),
            "content_type": HTML,
        },
        "*@followed-1.example": {"body": page.format(t="followed"), "content_type": HTML},
        "http://private.example/": {
            "body": blogroll("私人", [(f"http://hidden-{i}.example/", "H") for i in (1, 2, 3)]),
            "content_type": HTML,
            "headers": {"X-Robots-Tag": "googlebot: index, blogfeeds: nofollow"},
        },
        "*@hidden-1.example": {"body": page.format(t="hidden"), "content_type": HTML},
        "http://refresh.example/": {
            "body": '<html><head><meta http-equiv="refresh" content="0; url=/blog/"></head></html>',
            "content_type": HTML,
        },
        "http://refresh.example/blog/": {"body": page.format(t="refreshed"), "content_type": HTML},
        # a page refreshing to itself is the page (not a redirect the dupefilter would drop)
        "http://selfrefresh.example/": {
            "body": page.format(t="self").replace(
                "<head>", '<head><meta http-equiv="refresh" content="0; url=/">', 1
            ),
            "content_type": HTML,
        },
        # robots.txt forbids the feed: no probe may fetch it
        "http://robots.example/": {
            "body": (
                '<html><head><title>robots</title><link rel="alternate" '
                'type="application/rss+xml" href="/feed.xml"></head><body><p>hi</p></body></html>'
            ),
            "content_type": HTML,
        },
        "http://robots.example/robots.txt": {
            "body": "User-agent: *\nDisallow: /feed\nDisallow: /atom\nDisallow: /rss\n"
            "Disallow: /index.xml\nDisallow: /?feed\n",
            "content_type": "text/plain",
        },
        "http://robots.example/feed.xml": {
            "body": '<rss version="2.0"><channel><title>t</title></channel></rss>',
            "content_type": "application/rss+xml",
        },
    }  # fmt: skip
    for n in range(1, 200):
        routes[f"*@trap-{n}.example"] = Route(handler=trap_blog)
    # first: a link no request can be made of (its port) must not end the blogroll's offers
    friends = [("http://badport.example:99999/", "Bad port")]
    friends += [(f"http://{host}/", host) for host in FAILING]
    friends += [
        ("http://calendar-trap.com/", "日历"),
        ("http://diary.example/", "Diary"),
        ("http://private.example/", "Private"),
        ("http://refresh.example/", "Refresh"),
        ("http://selfrefresh.example/", "Self refresh"),
        ("http://robots.example/", "Robots"),
    ]
    routes["http://hub.example/"] = {"body": blogroll("Hub", friends), "content_type": HTML}
    return routes


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> CrawlRun:
    tmp = tmp_path_factory.mktemp("hostile")
    with LittleWeb(hostile_web()) as web:
        return crawl_blogs(
            web,
            ["http://hub.example/"],
            tmp,
            env=offline_dns.unproxied("nx-host.invalid"),
            settings={
                # nx-host.invalid fails inside Scrapy's resolver: no DNS query leaves the machine
                **offline_dns.SETTINGS,
                "DOWNLOAD_TIMEOUT": "2",
                "RETRY_TIMES": "1",
                "BLOGFEEDS_RETRY_BACKOFF_BASE": "0.2",
                "BLOGFEEDS_MAX_REQUESTS_PER_BLOG": str(PER_BLOG_CAP),
                "BLOGFEEDS_MAX_PAGES_PER_BLOG": "50",
                "DEPTH_LIMIT": "3",
                "CONCURRENT_REQUESTS": "16",
            },
        )


def test_crawl_finishes_cleanly(run: CrawlRun) -> None:
    assert run.returncode == 0, run.log[-3000:]
    assert run.tracebacks() == []
    assert run.seconds < 180


def test_every_failure_kind_is_stored_with_its_status(run: CrawlRun) -> None:
    statuses = {bid: b["status"] for bid, b in run.blogs.items()}
    for bid, status in FAILING.items():
        assert statuses.get(bid) == status, bid
    assert run.stat("blogfeeds/blog_failed/too_large") == 2
    failed = re.findall(r"\] INFO: Blog (\S+) failed: (\w+) \(", run.log)
    hop = {"longredirect.example": "longurl.example"}  # the line names the request that failed
    for host, status in FAILING.items():  # each failed blog is one INFO line with its status
        where = hop.get(host, host)
        assert any(said == status and where in url for url, said in failed), host
    assert run.stat("blogfeeds/limits/url_too_long") >= 1
    assert LONG not in run.hits


def test_transient_failures_are_retried_with_backoff(run: CrawlRun) -> None:
    assert run.hits.count("http://broken.example/") == 2  # RETRY_TIMES=1
    assert run.hits.count("http://gone.example/") == 1  # 404 is an answer, not retried
    assert run.stat("blogfeeds/retry/backoff_ms") > 0


def test_infinite_calendar_is_bounded(run: CrawlRun) -> None:
    calendar_hits = [h for h in run.hits if "calendar-trap.com" in h]
    assert 2 <= len(calendar_hits) <= PER_BLOG_CAP
    assert run.stat("blogfeeds/limits/blog_request_cap") >= 1
    assert run.blogs["calendar-trap.com"]["status"] in ("ok", "no_feed")


def test_endless_blogs_with_session_ids_are_bounded(run: CrawlRun) -> None:
    traps = sorted(bid for bid in run.blogs if bid.startswith("trap-"))
    assert 3 <= len(traps) <= 9  # depth 1..3 from the calendar, each one blog once
    assert not [h for h in run.hits if "jsessionid" in h]
    trap_hits = [h for h in run.hits if "trap-" in h and not h.endswith("/robots.txt")]
    assert len(trap_hits) == len(set(trap_hits))


def test_noindex_keeps_identity_only_and_still_follows(run: CrawlRun) -> None:
    diary = run.blogs["diary.example"]
    assert diary["status"] == "noindex"
    assert not diary.get("title") and not diary.get("feeds")
    assert "followed-1.example" in run.blogs


def test_nofollow_yields_no_friends_to_follow(run: CrawlRun) -> None:
    assert run.blogs["private.example"]["status"] in ("ok", "no_feed")
    assert run.blogs["private.example"]["friend_count"] == 0
    assert not [link for link in run.links if link["source_blog_id"] == "private.example"]
    assert not [h for h in run.hits if "hidden-" in h]
    assert run.stat("blogfeeds/robots/nofollow") == 1
    assert run.stat("blogfeeds/robots/noindex") == 1


def test_meta_refresh_is_followed(run: CrawlRun) -> None:
    assert run.blogs["refresh.example"]["url"] == "http://refresh.example/blog/"


def test_a_page_refreshing_to_itself_is_stored(run: CrawlRun) -> None:
    assert run.blogs["selfrefresh.example"]["status"] in ("ok", "no_feed")
    assert run.stat("blogfeeds/meta_refresh_to_self") == 1


def test_a_friend_url_with_a_bad_port_is_dropped_and_the_rest_followed(run: CrawlRun) -> None:
    hub_links = [
        link["target_url"] for link in run.links if link["source_blog_id"] == "hub.example"
    ]
    assert not [url for url in hub_links if "99999" in url]
    assert "http://robots.example/" in hub_links  # the last of the blogroll
    assert not [h for h in run.hits if "badport" in h]


def test_robots_txt_applies_to_feed_probes(run: CrawlRun) -> None:
    robots_hits = sorted({h for h in run.hits if "robots.example" in h})
    # the page declares no icon: /favicon.ico (allowed) is the profile's one request
    assert robots_hits == [
        "http://robots.example/",
        "http://robots.example/favicon.ico",
        "http://robots.example/robots.txt",
    ]
    assert run.blogs["robots.example"]["status"] == "no_feed"
