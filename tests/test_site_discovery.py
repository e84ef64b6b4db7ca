"""The site's random blog, random post and post search, in Debian's headless Chromium.

A database written directly (the feeds side's ``save_fetch``) holds blogs of known activity:
one posting often, one now and then, one once half a year ago, one quiet for over a year, one
without a feed; posts in English and Chinese, words in titles and in openings, one word past
the opening. The site built from it (``scrapy export site``) is opened from ``file://``; each
draw and each search is compared with what the rules of ``docs/site.md`` say, computed here.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from blogfeeds.site.data import plain_text
from blogfeeds.site.postsearch import tokens
from blogfeeds.storage.feedstore import FeedStore, iso_minutes
from tests.test_site import (
    CHROMEDRIVER,
    CHROMIUM,
    SCREENSHOTS,
    chromium,
    console_errors,
    open_page,
    scrapy,
    set_value,
    shot,
    wait,
)

pytestmark = pytest.mark.integration

NEWEST = "2026-11-30T00:00:00Z"
LONG = "A long opening that goes on about gardens and walls and weather. " * 5 + "zeppelin."
POSTS: dict[str, list[tuple[str, str, str]]] = {
    # blog: [(published, title, summary)], newest first
    "fresh.example": [
        (f"2026-11-{29 - k:02d}T10:00:00Z", f"Fresh note {k}", f"<p>Day {k} in the garden.</p>")
        for k in range(9)
    ]
    + [
        ("2026-10-20T10:00:00Z", "The lighthouse keeper", "<p>On <b>marmalade</b> and tea.</p>"),
        ("2026-10-10T10:00:00Z", "Long one", f"<p>{LONG}</p>"),
    ],
    "steady.example": [
        ("2026-10-31T08:00:00Z", "咖啡馆的早晨", "<p>今天在咖啡馆读书，窗外下雨。</p>"),
        ("2026-06-01T08:00:00Z", "旧文章", "<p>一篇老的文章 about lighthouses.</p>"),
    ],
    "slow.example": [("2026-05-14T12:00:00Z", "Half a year", "<p>Still here, lighthouse.</p>")],
    "archive.example": [  # silent for over a year: drawn never, found by the search
        (f"2024-{1 + k // 28:02d}-{1 + k % 28:02d}T12:00:00Z", f"Archive {k}", "<p>Old.</p>")
        for k in range(25)
    ],
    "quiet.example": [
        ("2025-09-01T12:00:00Z", "Long ago", "<p>The last post, about the garden.</p>"),
        ("2025-08-01T12:00:00Z", "Longer ago", "<p>Marmalade again.</p>"),
    ],
}
WEIGHTS = {"fresh.example": 10, "steady.example": 2, "slow.example": 1, "quiet.example": 0,
           "archive.example": 0, "nofeed.example": 0}  # fmt: skip
"""What the rule gives: 1 + posts of the last 90 days (at most 10 in all); 1 for a post in the
last year; else 0."""


def write_store(url: str) -> None:
    from blogfeeds.extract.feedreader import FeedEntry
    from blogfeeds.items import Blog, FeedFetch, FeedInfo

    blogs = [Blog("nofeed.example", "https://nofeed.example/", title="No feed", status="no_feed",
                  fetched_at=NEWEST)]  # fmt: skip
    for blog_id in POSTS:
        feed = f"https://{blog_id}/feed"
        language = "zh-CN" if blog_id.startswith("steady") else "en"
        blogs.append(Blog(blog_id, f"https://{blog_id}/", title=blog_id.split(".")[0].title(),
                          language=language, feed_url=feed, fetched_at=NEWEST,
                          feeds=[FeedInfo(feed, "application/rss+xml")]))  # fmt: skip
    with FeedStore.open(url) as store:
        store.write(blogs, [])
        store.sync_feeds(iso_minutes("2025-01-01T00:00:00Z"))
        for blog_id, posts in POSTS.items():
            entries = [
                FeedEntry(f"https://{blog_id}/p/{k}", "id", link=f"https://{blog_id}/p/{k}",
                          title=title, published=when, summary=summary)
                for k, (when, title, summary) in enumerate(posts)
            ]  # fmt: skip
            store.save_fetch(FeedFetch(f"https://{blog_id}/feed", NEWEST, "ok", 200,
                                       entries=entries, blog_id=blog_id))  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("discovery")
    db = tmp / "db.sqlite3"
    write_store(f"sqlite:///{db}")
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    scrapy(env, "export", "site", str(tmp / "site"), "--database", f"sqlite:///{db}")
    return tmp / "site"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        missing = "chromium and chromium-driver are not installed (apt-get install them)"
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    driver = chromium("en-US", "en-US,en")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


def landed(driver: Any, site: Path) -> tuple[str, str]:
    """The blog id of the blog page the browser is on, and the URL's fragment."""
    url = driver.current_url
    assert url.startswith((site / "blogs").resolve().as_uri() + "/"), url
    blog_id = driver.find_element("css selector", "article.blog").get_attribute("data-blog-id")
    return blog_id, unquote(url.partition("#")[2])


def test_random_draws_follow_the_weights(browser: Any, site: Path) -> None:
    """A grid of 1,300 evenly spaced draws gives each blog its share of the weights exactly
    (give or take one), for a blog and for a post; a draw's page is the blog's."""
    open_page(browser, site / "index.html")
    m = 1300
    for kind in ("blog", "post"):
        urls = browser.execute_async_script(
            """const [kind, m, done] = arguments;
            Promise.all([...Array(m).keys()].map(j =>
              window.blogfeedsRandom.pick(kind, (j + 0.5) / m, (j * 7 % m + 0.5) / m)))
              .then(done);""",
            kind,
            m,
        )
        counts = Counter(unquote(u.split("blogs/")[1].split(".html")[0]) for u in urls)
        total = sum(WEIGHTS.values())
        for blog_id, weight in WEIGHTS.items():
            assert abs(counts[blog_id] - m * weight / total) <= 1, (kind, counts)
    # the posts of the blog drawn, evenly: each of fresh's 11 listed posts 100 times in 1,100
    urls = browser.execute_async_script(
        """const [m, done] = arguments;
        Promise.all([...Array(m).keys()].map(j =>
          window.blogfeedsRandom.pick('post', 0.01, (j + 0.5) / m))).then(done);""",
        1100,
    )
    assert all(u.startswith("blogs/fresh.example.html#post-") for u in urls), urls[:3]
    assert Counter(u.partition("#")[2] for u in urls) == {f"post-{k}": 100 for k in range(11)}
    assert console_errors(browser) == []


def test_random_links_land_on_an_active_blog_and_its_post(browser: Any, site: Path) -> None:
    seen: Counter[str] = Counter()
    for n in range(12):
        open_page(browser, site / ("index.html" if n % 2 else "river.html"))
        browser.find_element("id", "random-blog").click()
        wait(
            browser,
            "return !!document.querySelector('article.blog')",
        )
        blog_id, _ = landed(browser, site)
        seen[blog_id] += 1
    assert set(seen) <= {b for b, w in WEIGHTS.items() if w}, seen
    for _ in range(6):
        # from a blog page (its links are relative to blogs/) that has no post: a new page loads
        open_page(browser, site / "blogs" / "nofeed.example.html")
        browser.find_element("id", "random-post").click()
        wait(browser, "return location.hash.startsWith('#post-')")
        blog_id, fragment = landed(browser, site)
        assert WEIGHTS[blog_id] > 0
        target = browser.find_element("id", fragment)
        assert browser.execute_script(
            "return document.querySelector(':target') === arguments[0]", target
        )
        assert target.get_attribute("data-guid").startswith(f"https://{blog_id}/p/")
    shot(browser, "random-post")
    assert console_errors(browser) == []


def test_more_hits_and_a_query_cut_as_the_posts_were(browser: Any, site: Path) -> None:
    """20 hits a page, *More* for the rest; the page cuts a query into the tokens the build
    cut the posts into (words of any script, NFKC, lower case; CJK pairs)."""
    open_page(browser, site / "river.html")
    got = post_search(browser, "archive")
    expected = expected_hits("archive")
    assert len(expected) == 25 and got["guids"] == expected[:20]
    assert got["count"] == "25 posts match"
    browser.find_element("id", "post-more").click()
    wait(browser, "return document.querySelectorAll('#post-hits li').length === 25")
    guids = browser.execute_script(
        "return [...document.querySelectorAll('#post-hits li')].map(li => li.dataset.guid)"
    )
    assert guids == expected and not browser.find_element("id", "post-more").is_displayed()
    for text in (
        "Ünïcode CAFÉ ＡＢＣ１２３ snake_case x² 3.14",
        "東京タワー 한국어 咖啡馆",
        "Ελληνικά и кириллица",
    ):
        cut = browser.execute_script("return window.blogfeedsPosts.tokens(arguments[0])", text)
        assert set(cut) <= tokens(text) and cut
        assert {t for t in tokens(text) if not re.search(r"[\u3040-\ud7af]", t)} <= set(cut)
    assert console_errors(browser) == []


def expected_hits(query: str) -> list[str]:
    """The guids (newest first) of the posts whose title and opening hold every word of
    ``query`` (a word of Latin script at the start of a word; Chinese anywhere)."""
    posts = [(when, f"https://{b}/p/{k}", title, summary)
             for b, ps in POSTS.items() for k, (when, title, summary) in enumerate(ps)]  # fmt: skip
    posts.sort(reverse=True)
    out = []
    for _, guid, title, summary in posts:
        text = unicodedata.normalize("NFKC", f"{title} {plain_text(summary, 280)}").lower()
        words = re.findall(r"\w+", text)
        if all(
            w in text if re.match(r"[\u4e00-\u9fff]", w) else any(x.startswith(w) for x in words)
            for w in query.lower().split()
        ):
            out.append(guid)
    return out


def post_search(driver: Any, query: str) -> dict[str, Any]:
    return driver.execute_async_script(
        """const [q, done] = arguments;
        const input = document.getElementById('post-q');
        document.addEventListener('blogfeeds:posts', () => requestAnimationFrame(() => done({
          guids: [...document.querySelectorAll('#post-hits li')].map(li => li.dataset.guid),
          count: document.getElementById('post-count').textContent,
          river: !document.getElementById('river-pages').hidden,
          loaded: window.blogfeedsPosts.loaded.map(s => s.split('/').pop())})), {once: true});
        input.value = q;
        input.dispatchEvent(new Event('input'));""",
        query,
    )


@pytest.mark.parametrize(
    "query, wanted",
    [
        ("lighthouse", 3),  # a title word, an opening's, and a longer word it begins
        ("Marmalade", 2),  # a word of an opening (markup dropped), any case
        ("咖啡", 1),  # Chinese, in a title
        ("读书", 1),  # Chinese, in an opening
        ("garden", 11),  # many posts
        ("fresh note 4", 1),  # every word must match
        ("zeppelin", 0),  # past the opening: not searched
        ("qwertyuiop", 0),  # a word no post has
        ("咖啡 lighthouse", 0),
    ],
)
def test_post_search_finds_titles_and_openings(
    browser: Any, site: Path, query: str, wanted: int
) -> None:
    open_page(browser, site / "river.html")
    expected = expected_hits(query)
    assert len(expected) == wanted  # the data say what the case is about
    got = post_search(browser, query)
    assert got["guids"] == expected
    assert (
        got["count"]
        == f"{wanted} post{'' if wanted == 1 else 's'} match{'es' if wanted == 1 else ''}"
    )
    assert not got["river"]
    shards = [name for name in got["loaded"] if re.fullmatch(r"s\d+\.js", name)]
    all_shards = len(list((site / "data" / "posts").glob("s*.js")))
    assert len(shards) <= len(query.split()) * 2 < all_shards, got["loaded"]
    if query == "lighthouse":
        shot(browser, "river-search")
        set_value(browser, "ui-lang", "zh")  # the count follows the interface's language
        assert browser.find_element("id", "post-count").text == "3 篇文章匹配"
        set_value(browser, "ui-lang", "en")
    cleared = post_search(browser, "")
    assert cleared["river"]
    assert console_errors(browser) == []
