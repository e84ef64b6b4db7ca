"""The little blogosphere ``scrapy demo`` serves: seven blogs, in English and Chinese, linked as
real ones are, on real-looking host names that only :class:`~blogfeeds.demo.web.LittleWeb`
answers.

The kinds of page a crawl meets first: a Hexo Butterfly 友链 page of friend cards, a WordPress
sidebar blogroll, a Hugo links page, a list under 友情链接 on the home page; RSS, Atom and JSON
Feed; a blog without a feed; and a link to a blog that is gone (404). Posts are dated from the
time the pages are made, so the site shows a living blogosphere.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from email.utils import formatdate
from html import escape
from typing import Any

SEED = "https://hanna-writes.example/"


@dataclass(frozen=True)
class DemoBlog:
    host: str
    title: str
    lang: str
    description: str
    theme: str
    """``butterfly`` (friends on ``/link/``), ``wordpress`` (sidebar blogroll), ``hugo``
    (friends on ``/links/``), ``plain`` (友情链接 on the home page)."""
    friends: tuple[str, ...]
    feed: str
    """``rss``, ``atom``, ``json`` or ``""`` (no feed)."""
    posts: tuple[str, ...]

    @property
    def url(self) -> str:
        return f"https://{self.host}/"


BLOGS = (
    DemoBlog(
        "hanna-writes.example", "Hanna Writes", "en",
        "Notes on slow travel, film cameras and the small web.", "wordpress",
        ("lin-yu.example", "zhou-notes.example", "marco-codes.example"), "rss",
        ("Developing film at home", "A week on the night trains", "Why I still keep a blogroll"),
    ),
    DemoBlog(
        "lin-yu.example", "林语的小站", "zh-CN",
        "读书、写代码，偶尔拍拍照片。", "butterfly",
        ("hanna-writes.example", "zhou-notes.example", "kai-lab.example", "mei-garden.example"),
        "atom", ("用 Hexo 搭博客的第五年", "周末读完了《长安的荔枝》", "给老相机换了电池"),
    ),
    DemoBlog(
        "zhou-notes.example", "周的笔记", "zh-CN",
        "后端工程师的学习笔记与生活记录。", "plain",
        ("lin-yu.example", "mei-garden.example", "gone-blog.example"), "rss",
        ("PostgreSQL 索引的一点体会", "搬家到新城市", "年终总结"),
    ),
    DemoBlog(
        "marco-codes.example", "Marco Codes", "en",
        "Small programs, kept small.", "hugo",
        ("hanna-writes.example", "kai-lab.example"), "",
        ("A tiny static site generator", "Reading old Unix manuals", "Plain text forever"),
    ),
    DemoBlog(
        "kai-lab.example", "Kai's Lab", "en",
        "Electronics, synths and the occasional soldering burn.", "hugo",
        ("marco-codes.example", "lin-yu.example", "oskar-sketches.example"), "json",
        ("Building a tiny synth", "Reflow with a toaster oven", "Notes from a repair café"),
    ),
    DemoBlog(
        "mei-garden.example", "梅的花园", "zh-CN",
        "种花、做饭和慢慢生活。", "butterfly",
        ("lin-yu.example", "zhou-notes.example", "oskar-sketches.example"), "atom",
        ("阳台上的番茄熟了", "第一次做桂花糕", "春天的种子清单"),
    ),
    DemoBlog(
        "oskar-sketches.example", "Oskar Sketches", "en",
        "A drawing a day, and what I learnt from it.", "wordpress",
        ("kai-lab.example", "mei-garden.example"), "rss",
        ("Day 300: hands again", "Ink, water, patience", "Sketching on the tram"),
    ),
)  # fmt: skip


def routes(now: float | None = None) -> dict[str, dict[str, Any]]:
    """The route table of :class:`~blogfeeds.demo.web.LittleWeb` for the demo (posts dated
    back from ``now``, epoch seconds; default the clock)."""
    now = time.time() if now is None else now
    table: dict[str, dict[str, Any]] = {}
    titles = {b.host: b.title for b in BLOGS}
    for n, blog in enumerate(BLOGS):
        dates = [now - 86400 * (1 + n + 9 * k) for k in range(len(blog.posts))]
        table[blog.url] = _html(_home(blog, titles, dates))
        if blog.theme in ("butterfly", "hugo"):
            page = "link/" if blog.theme == "butterfly" else "links/"
            table[blog.url + page] = _html(_friends_page(blog, titles))
        table[blog.url + "avatar.svg"] = {"body": _avatar(blog, n), "content_type": SVG}
        for k, title in enumerate(blog.posts):
            table[_post_url(blog, k)] = _html(_post(blog, title, dates[k]))
        if blog.feed:
            body, kind = _feed(blog, dates)
            table[blog.url + FEED_PATHS[blog.feed]] = {"body": body, "content_type": kind}
    return table


SVG = "image/svg+xml"
FEED_PATHS = {"rss": "feed/", "atom": "atom.xml", "json": "feed.json"}
FEED_TYPES = {
    "rss": "application/rss+xml",
    "atom": "application/atom+xml",
    "json": "application/feed+json",
}
GENERATORS = {
    "butterfly": "Hexo 7.3.0",
    "wordpress": "WordPress 6.6.2",
    "hugo": "Hugo 0.134.2",
    "plain": "",
}


def _html(body: str) -> dict[str, Any]:
    return {"body": body, "content_type": "text/html; charset=utf-8"}


def _post_url(blog: DemoBlog, k: int) -> str:
    return f"{blog.url}posts/{len(blog.posts) - k}/"


def _head(blog: DemoBlog, title: str) -> str:
    generator = GENERATORS[blog.theme]
    meta = f'<meta name="generator" content="{generator}">' if generator else ""
    feed = (
        f'<link rel="alternate" type="{FEED_TYPES[blog.feed]}" title="{escape(blog.title)}" '
        f'href="/{FEED_PATHS[blog.feed]}">'
        if blog.feed
        else ""
    )
    return (
        f'<!DOCTYPE html><html lang="{blog.lang}"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title>"
        f'<meta name="description" content="{escape(blog.description)}">{meta}{feed}'
        '<link rel="icon" href="/avatar.svg"></head>'
    )


def _list(blog: DemoBlog, titles: dict[str, str]) -> str:
    return "".join(
        f'<li><a href="https://{host}/">{escape(titles.get(host, host))}</a></li>'
        for host in blog.friends
    )


def _home(blog: DemoBlog, titles: dict[str, str], dates: list[float]) -> str:
    posts = "".join(
        f'<article><h2><a href="{_post_url(blog, k)}">{escape(title)}</a></h2>'
        f"<time>{formatdate(dates[k], usegmt=True)}</time></article>"
        for k, title in enumerate(blog.posts)
    )
    links = {
        "butterfly": '<nav><a href="/">首页</a> <a href="/link/">友链</a></nav>',
        "hugo": '<nav><a href="/">Home</a> <a href="/links/">Links</a></nav>',
    }.get(blog.theme, "")
    side = ""
    if blog.theme == "wordpress":
        side = (
            '<aside id="secondary" class="widget-area"><section class="widget widget_links">'
            f'<h2 class="widget-title">Blogroll</h2><ul class="xoxo blogroll">{_list(blog, titles)}'
            "</ul></section></aside>"
        )
    elif blog.theme == "plain":
        side = f'<section class="friends"><h2>友情链接</h2><ul>{_list(blog, titles)}</ul></section>'
    return (
        f"{_head(blog, blog.title)}<body><header><h1>{escape(blog.title)}</h1>"
        f"<p>{escape(blog.description)}</p>{links}</header><main>{posts}</main>{side}"
        "<footer>© 2026</footer></body></html>"
    )


def _friends_page(blog: DemoBlog, titles: dict[str, str]) -> str:
    if blog.theme == "butterfly":
        cards = "".join(
            f'<div class="flink-list-item"><a href="https://{host}/" title="{name}" '
            f'target="_blank"><div class="flink-item-icon"><img src="https://{host}/avatar.svg" '
            f'alt=""></div><div class="flink-item-name">{name}</div>'
            '<div class="flink-item-desc">朋友的博客</div></a></div>'
            for host, name in ((h, escape(titles.get(h, h))) for h in blog.friends)
        )
        main = (
            '<div id="article-container"><div class="flink"><h2>友情链接</h2>'
            f'<div class="flink-list">{cards}</div></div></div>'
        )
        title = f"友链 | {blog.title}"
    else:
        main = f"<h1>Links</h1><p>Blogs I read.</p><ul>{_list(blog, titles)}</ul>"
        title = f"Links | {blog.title}"
    return f"{_head(blog, title)}<body><main>{main}</main></body></html>"


def _post(blog: DemoBlog, title: str, date: float) -> str:
    return (
        f"{_head(blog, f'{title} | {blog.title}')}<body><article><h1>{escape(title)}</h1>"
        f"<time>{formatdate(date, usegmt=True)}</time><p>{escape(blog.description)}</p>"
        "</article></body></html>"
    )


def _avatar(blog: DemoBlog, n: int) -> str:
    hue = n * 47 % 360
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64">'
        f'<circle cx="32" cy="32" r="32" fill="hsl({hue},55%,55%)"/>'
        f'<text x="32" y="42" font-size="28" text-anchor="middle" fill="#fff">'
        f"{escape(blog.title[0])}</text></svg>"
    )


def _feed(blog: DemoBlog, dates: list[float]) -> tuple[str, str]:
    """The blog's feed (RSS 2.0, Atom or JSON Feed 1.1) and its Content-Type."""
    posts = [(title, _post_url(blog, k), dates[k]) for k, title in enumerate(blog.posts)]
    if blog.feed == "json":
        items = [
            {
                "id": url,
                "url": url,
                "title": title,
                "content_text": blog.description,
                "date_published": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(date)),
            }
            for title, url, date in posts
        ]
        feed = {
            "version": "https://jsonfeed.org/version/1.1",
            "title": blog.title,
            "home_page_url": blog.url,
            "feed_url": blog.url + FEED_PATHS["json"],
            "items": items,
        }
        return json.dumps(feed, ensure_ascii=False), FEED_TYPES["json"]
    if blog.feed == "atom":
        entries = "".join(
            f'<entry><id>{url}</id><title>{escape(title)}</title><link href="{url}"/>'
            f"<updated>{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(date))}</updated>"
            f"<summary>{escape(blog.description)}</summary></entry>"
            for title, url, date in posts
        )
        updated = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(max(dates)))
        return (
            '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
            f"<title>{escape(blog.title)}</title><id>{blog.url}</id><updated>{updated}</updated>"
            f'<link href="{blog.url}"/><link rel="self" href="{blog.url}{FEED_PATHS["atom"]}"/>'
            f"{entries}</feed>"
        ), FEED_TYPES["atom"]
    rss_items = "".join(
        f"<item><title>{escape(title)}</title><link>{url}</link><guid>{url}</guid>"
        f"<pubDate>{formatdate(date, usegmt=True)}</pubDate>"
        f"<description>{escape(blog.description)}</description></item>"
        for title, url, date in posts
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>{escape(blog.title)}</title><link>{blog.url}</link>"
        f"<description>{escape(blog.description)}</description>{rss_items}</channel></rss>"
    ), FEED_TYPES["rss"]
