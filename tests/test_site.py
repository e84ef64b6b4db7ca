"""``scrapy export site`` and ``scrapy export entries`` end to end, the site checked in a real
browser.

A little web on loopback (:class:`tests.littleweb.LittleWeb`) of :data:`N` blogs in three
languages and platforms (two without a feed, one whose title and entries carry markup and a
``javascript:`` link) is crawled by ``scrapy crawl blogs`` and its feeds by ``scrapy crawl
feeds``; the site built from that database is opened from ``file://`` in Debian's headless
Chromium, driven by Selenium with the driver at ``/usr/bin/chromedriver`` (Selenium Manager is
never asked to download anything). Every page kind is opened, no JavaScript console error is
allowed, and what the pages show is compared with the database. Screenshots of each page kind
go to ``tests/output/screenshots/`` (gitignored) for a person to look at.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import feedparser
import pytest

from blogfeeds.revisit import from_minutes
from blogfeeds.site.avatar import avatar
from blogfeeds.site.build import overview, slug
from blogfeeds.site.data import entry_date, load, plain_text, within_hops
from blogfeeds.site.topics import named, topics_of
from blogfeeds.storage.feedstore import FeedStore, iso_minutes
from blogfeeds.storage.schema import url_hash
from tests import blogosphere as bs
from tests.littleweb import LittleWeb

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
SCREENSHOTS = REPO / "tests" / "output" / "screenshots"
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
N = 16
NO_FEED = {13, 15}
HOSTILE = 7
"""The blog whose title and entries carry markup, and an entry a ``javascript:`` link."""
GONE, GONE_ID = "http://gone.example/", "gone.example"
"""A friend of blog :data:`LISTS_GONE` whose home page answers 404: a blog stored as failed."""
LISTS_GONE = 5
REFUSED, REFUSED_ID = "http://refused.example/", "refused.example"
"""A second seed, redirected to loopback, which the SSRF guard refuses (the guard is on in this
crawl): stored as failed (a seed refused at its own address is not stored at all)."""
FEED_FAILS = 11
"""The blog whose feed answered the crawl but answers 500 to the feeds run."""
LANGS = ("en", "zh-CN", "de")
GENERATORS = ("Hexo 7.3.0", "WordPress 6.4.2", "Hugo 0.140.0")
ENTRIES = 3
DESCRIBED = ("about travel and photos", "on Python code", "读书笔记", "", "")
"""What blog ``i``'s description says after "Notes number i" (the topics it names)."""
POSTS_NAME, POSTS_NAMING = ("", "", "", ": coffee", ": a game"), (0, 0, 0, ENTRIES, 1)
"""What the titles of blog ``i``'s first ``POSTS_NAMING`` posts add: every post of blog 3
(mod 5) names coffee (the topic counts), one post of blog 4 (mod 5) a game (it does not)."""
TOPICS_OF = {0: {"travel", "photo"}, 1: {"code"}, 2: {"books"}, 3: {"food"}, 4: set()}
"""The topics of blog ``i`` by ``i % 5``."""
T_END = iso_minutes("2026-11-30T00:00:00Z")


def title(i: int) -> str:
    return "<script>alert(1)</script> Évil & co" if i == HOSTILE else f"Blog {i} {LANGS[i % 3]}"


def page(i: int) -> str:
    homes = [(bs.home(j), j) for j in bs.friends_of(i, N)]
    if i == LISTS_GONE:
        homes.append((GONE, 99))
    friends = "\n".join(
        f'<li class="flink-item"><a href="{url}">朋友 {j}</a><p>Friend {j}</p></li>'
        for url, j in homes
    )
    feed = (
        "" if i in NO_FEED else '<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
    )
    esc = title(i).replace("&", "&amp;").replace("<", "&lt;")
    return f"""<!DOCTYPE html><html lang="{LANGS[i % 3]}"><head><meta charset="utf-8">
<title>{esc}</title><meta name="generator" content="{GENERATORS[i % 3]}">
<meta name="description" content="Notes number {i} {DESCRIBED[i % len(DESCRIBED)]}">{feed}
</head><body><main><article>
<h1>Hello {i}</h1><p>The first post of blog {i}, about crawling and feeds and friends.</p>
</article><section><h2>友情链接</h2><ul class="flink-list">{friends}</ul></section></main>
</body></html>"""


def post_minutes(i: int, k: int) -> float:
    """Distinct dates: blog ``i``'s ``k``-th newest post."""
    return T_END - 60.0 * (k * N + i + 1)


def feed(i: int) -> str:
    items = []
    for k in range(ENTRIES):
        when = format_datetime(from_minutes(post_minutes(i, k)), usegmt=True)
        link = "javascript:alert(2)" if (i, k) == (HOSTILE, 0) else f"{bs.home(i)}posts/{k}/"
        name = f"Post {k} of blog {i}" + (" <b>bold</b> &amp; <i>x</i>" if i == HOSTILE else "")
        name += POSTS_NAME[i % len(POSTS_NAME)] if k < POSTS_NAMING[i % len(POSTS_NAME)] else ""
        items.append(
            f"<item><title><![CDATA[{name}]]></title><link>{link}</link>"
            f"<guid>{bs.home(i)}posts/{k}/</guid><pubDate>{when}</pubDate>"
            f"<description><![CDATA[<p>Summary {k} of {i} <img src=x onerror=alert(3)></p>]]>"
            "</description></item>"
        )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>Blog {i}</title><link>{bs.home(i)}</link>{''.join(items)}</channel></rss>"
    )


def routes() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i in range(N):
        out[bs.home(i)] = {"body": page(i), "content_type": bs.HTML}
        if i not in NO_FEED:
            out[f"{bs.home(i)}feed.xml"] = {"body": feed(i), "content_type": "application/rss+xml"}
    out[REFUSED] = {"status": 302, "location": "http://127.0.0.1:9/"}
    return out


def scrapy(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The database of a crawl and a feeds run of the little web, and the site built from it."""
    tmp = tmp_path_factory.mktemp("site")
    db = tmp / "blogfeeds.sqlite3"
    with LittleWeb(routes()) as web:
        env = web.env({k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}})
        env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{db}"
        # the guard's address check on: the little web's hosts are names the proxy resolves,
        # the loopback seed is refused
        env["BLOGFEEDS_ALLOW_PRIVATE_TARGETS"] = "0"
        crawl = subprocess.run(
            [*bs.crawl_command(), "-a", f"start_urls={bs.home(0)},{REFUSED}"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert crawl.returncode == 0, crawl.stderr[-3000:]
        web.add(f"{bs.home(FEED_FAILS)}feed.xml", {"status": 500, "body": "down"})
        feeds = subprocess.run(
            bs.crawl_command("RETRY_TIMES=0", spider="feeds"),
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert feeds.returncode == 0, feeds.stderr[-3000:]
    site = tmp / "site"
    built = scrapy(env, "export", "site", str(site), "--page-size", "10", "--title", "Little web")
    circle = tmp / "circle"
    scrapy(env, "export", "site", str(circle), "--around", bs.host(1), "--hops", "1")
    with FeedStore.open(f"sqlite:///{db}", read_only=True) as store:
        blogs = {b["blog_id"]: b for b in store.blogs()}
        links = store.friend_links()
        entries = store.entries()
        schedule = store.schedule()
        runs = store.query("SELECT * FROM runs ORDER BY id")
    feed_blog = {url_hash(r["feed_url"]): r["blog_id"] for r in schedule}
    for e in entries:
        e["blog_id"] = feed_blog[e["feed_url_hash"]]
        e["date"] = entry_date(e)
    entries.sort(key=lambda e: (e["date"], e["guid"]), reverse=True)
    yield {
        "db": db, "env": env, "site": site, "circle": circle, "blogs": blogs, "links": links,
        "entries": entries, "built": built.stderr, "schedule": schedule, "runs": runs,
        "crawl_log": crawl.stderr, "feeds_log": feeds.stderr,
    }  # fmt: skip


def test_the_crawl_stored_what_the_site_is_built_from(crawled: dict[str, Any]) -> None:
    blogs = crawled["blogs"]
    assert set(blogs) == {bs.host(i) for i in range(N)} | {GONE_ID, REFUSED_ID}
    assert len(crawled["entries"]) == ENTRIES * (N - len(NO_FEED) - 1)  # FEED_FAILS: none
    assert f"site: {N + 2} blog pages" in crawled["built"] and "file://" in crawled["built"]


def test_failures_are_stored_with_the_reason_the_log_gives(crawled: dict[str, Any]) -> None:
    """A blog's failure and a feed's are stored in the words of the crawl's log line."""
    blogs = crawled["blogs"]
    gone, refused = blogs[GONE_ID], blogs[REFUSED_ID]
    assert (gone["status"], gone["status_reason"]) == ("http_4xx", "HTTP 404")
    assert refused["status"] == "blocked"
    assert refused["status_reason"] == (
        "SSRF guard: 127.0.0.1 is a loopback address; set BLOGFEEDS_ALLOW_PRIVATE_TARGETS=1 "
        "for a local test site"
    )
    for blog in (gone, refused):
        line = f"Blog {blog['url']} failed: {blog['status']} ({blog['status_reason']})"
        assert line in crawled["crawl_log"]
    assert all(b["status_reason"] == "" for k, b in blogs.items() if k not in (GONE_ID, REFUSED_ID))
    rows = {r["blog_id"]: r for r in crawled["schedule"]}
    failing = rows[bs.host(FEED_FAILS)]
    assert (failing["status"], failing["consecutive_failures"]) == ("http_5xx", 1)
    assert failing["last_error"] == "HTTP 500"
    assert all(r["last_error"] is None for k, r in rows.items() if k != bs.host(FEED_FAILS))


def test_each_run_is_recorded_when_it_closes(crawled: dict[str, Any]) -> None:
    """One row per run: the crawl's stored blogs and failed ones by status, the revisit's
    fetches, new entries and failures by kind, as the stats of each run said."""
    blogs, entries = crawled["blogs"], crawled["entries"]
    crawl, feeds = crawled["runs"]
    assert (crawl["spider"], crawl["reason"], feeds["spider"], feeds["reason"]) == (
        "blogs", "finished", "feeds", "finished"
    )  # fmt: skip
    assert crawl["started"] <= crawl["finished"] <= feeds["started"] <= feeds["finished"]
    assert crawl["blogs"] == len(blogs) and crawl["friend_links"] == len(crawled["links"])
    assert (crawl["failures"], json.loads(crawl["failures_by_kind"])) == (
        2, {"blocked": 1, "http_4xx": 1}
    )  # fmt: skip
    with_feed = sum(1 for b in blogs.values() if b["feed_url"])
    assert (feeds["feeds_fetched"], feeds["not_modified"]) == (with_feed, 0)
    assert feeds["new_entries"] == len(entries)
    assert (feeds["failures"], json.loads(feeds["failures_by_kind"])) == (1, {"http_5xx": 1})
    assert f"new entries: {len(entries)}" in crawled["feeds_log"]  # the run's own summary


def test_every_page_is_written_and_links_stay_inside(crawled: dict[str, Any]) -> None:
    site: Path = crawled["site"]
    for name in ("index.html", "directory.html", "river.html", "graph.html", "river.atom",
                 "river.json", "feeds.opml", "data/directory.js", "data/graph.js",
                 "assets/vendor/graph-libs.min.js", "assets/vendor/LICENSES.txt"):  # fmt: skip
        assert (site / name).is_file(), name
    pages = sorted(p.name for p in (site / "blogs").iterdir())
    assert pages == sorted(f"{slug(b)}.html" for b in crawled["blogs"])
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert "<script>alert(1)" not in text, html  # the web's markup is escaped
        assert 'href="javascript:' not in text and "onerror=alert" not in text, html
        assert "http://cdn" not in text and "https://cdn" not in text and "//unpkg" not in text


def test_entries_export_filters_by_blog_date_and_hops(crawled: dict[str, Any]) -> None:
    env, entries = crawled["env"], crawled["entries"]
    everything = scrapy(env, "export", "entries").stdout.splitlines()
    assert [json.loads(line)["guid"] for line in everything] == [e["guid"] for e in entries]
    one = scrapy(env, "export", "entries", "--blog", bs.host(2)).stdout.splitlines()
    assert {json.loads(line)["blog_id"] for line in one} == {bs.host(2)} and len(one) == ENTRIES
    since = entries[4]["date"]
    recent = scrapy(env, "export", "entries", "--since", since).stdout.splitlines()
    assert [json.loads(line)["guid"] for line in recent] == [e["guid"] for e in entries[:5]]
    day = entries[-1]["date"][:10]
    old = scrapy(env, "export", "entries", "--until", day).stdout.splitlines()
    assert [json.loads(line)["guid"] for line in old] == [
        e["guid"] for e in entries if e["date"][:10] <= day
    ]
    circle = within_hops(crawled["links"], bs.host(1), 1)
    near = scrapy(env, "export", "entries", "--around", bs.host(1), "--hops", "1")
    rows = [json.loads(line) for line in near.stdout.splitlines()]
    assert {r["blog_id"] for r in rows} == set(circle) - {
        bs.host(i) for i in {*NO_FEED, FEED_FAILS}
    }
    assert [r["guid"] for r in rows] == [e["guid"] for e in entries if e["blog_id"] in circle]
    table = scrapy(env, "export", "entries", "--format", "csv", "--blog", bs.host(HOSTILE))
    read = list(csv.DictReader(io.StringIO(table.stdout)))
    assert [r["guid"] for r in read] == [
        e["guid"] for e in entries if e["blog_id"] == bs.host(HOSTILE)
    ]
    assert all(not r["title"].startswith(("=", "+", "-", "@")) for r in read)
    bad = subprocess.run(
        [sys.executable, "-m", "scrapy", "export", "entries", "--around", "nobody.example"],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and "no such blog is stored" in bad.stderr


def test_entries_csv_neutralises_formulas(tmp_path: Path) -> None:
    from blogfeeds.commands.export import write_entries

    out = io.StringIO()
    write_entries([{"title": "=HYPERLINK(1)", "guid": "@x", "summary": "+1"}], out, "csv")
    row = next(csv.DictReader(io.StringIO(out.getvalue())))
    assert (row["title"], row["guid"], row["summary"]) == ("'=HYPERLINK(1)", "'@x", "'+1")
    raw = io.StringIO()
    write_entries([{"title": "=1"}], raw, "csv", raw=True)
    assert next(csv.DictReader(io.StringIO(raw.getvalue())))["title"] == "=1"


RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def check_json_feed(feed: dict[str, Any]) -> None:
    """What JSON Feed 1.1 requires (jsonfeed.org/version/1.1): feedparser 6.0 reads no JSON Feed,
    so its rules are checked here."""
    assert feed["version"] == "https://jsonfeed.org/version/1.1"
    assert isinstance(feed["title"], str) and isinstance(feed["items"], list)
    for item in feed["items"]:
        assert isinstance(item["id"], str) and item["id"]
        assert isinstance(item.get("content_text", item.get("content_html")), str)
        for key in ("date_published", "date_modified"):
            if key in item:
                assert RFC3339.match(item[key]), item[key]
        if "url" in item:
            assert item["url"].startswith(("http://", "https://"))
        for author in item.get("authors", []):
            assert isinstance(author["name"], str)
        assert all(k in JSON_FEED_ITEM_KEYS or k.startswith("_") for k in item), item


JSON_FEED_ITEM_KEYS = {
    "id", "url", "external_url", "title", "content_html", "content_text", "summary", "image",
    "banner_image", "date_published", "date_modified", "authors", "tags", "language",
    "attachments",
}  # fmt: skip


def test_atom_and_json_feed_read_back_entry_for_entry(crawled: dict[str, Any]) -> None:
    site, entries = crawled["site"], crawled["entries"]
    atom = feedparser.parse((site / "river.atom").read_bytes())
    assert not atom.bozo, atom.get("bozo_exception")
    assert atom.version == "atom10"
    assert [e.id for e in atom.entries] == [e["guid"] for e in entries]
    for got, stored in zip(atom.entries, entries, strict=True):
        assert got.title == plain_text(stored["title"])
        if stored["link"].startswith("http"):
            assert got.link == stored["link"]
        else:  # the javascript: link is left out
            assert not got.get("link", "").startswith("javascript")
        assert time.strftime("%Y-%m-%dT%H:%M:%SZ", got.updated_parsed) == stored["date"]
        assert got.source.title == crawled["blogs"][stored["blog_id"]]["title"]
    feed = json.loads((site / "river.json").read_text(encoding="utf-8"))
    check_json_feed(feed)
    assert [i["id"] for i in feed["items"]] == [e["guid"] for e in entries]
    for item, stored in zip(feed["items"], entries, strict=True):
        assert (
            item["title"] == plain_text(stored["title"])
            and item["date_published"] == stored["date"]
        )
        assert item.get("url") == (stored["link"] if stored["link"].startswith("http") else None)
        assert "<" not in item["content_text"]  # the summary as text


def test_the_opml_lists_every_main_feed(crawled: dict[str, Any]) -> None:
    from lxml import etree

    root = etree.parse(str(crawled["site"] / "feeds.opml")).getroot()
    feeds = {o.get("xmlUrl") for o in root.iter("outline")}
    assert feeds == {b["feed_url"] for b in crawled["blogs"].values() if b["feed_url"]}


# --- in the browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium from Debian's packages, driven by Selenium; skipped where not installed
    (CI installs both: .ci/services.sh)."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        missing = "chromium and chromium-driver are not installed (apt-get install them)"
        if os.environ.get("CI"):  # .ci/services.sh installs them: CI must run these tests
            pytest.fail(missing)
        pytest.skip(missing)
    driver = chromium("en-US", "en-US,en")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        yield driver
    finally:
        driver.quit()


def chromium(lang: str, accept: str) -> Any:
    """Headless Chromium through Selenium, its languages ``accept`` (as a browser set to them
    sends and ``navigator.languages`` gives)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)  # with the driver's path: no Selenium Manager
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1280,900", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                "--disable-background-networking", "--no-first-run", f"--lang={lang}"):  # fmt: skip
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"intl.accept_languages": accept})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # Selenium Manager (which may download a browser or driver) is never needed here: should a
    # Selenium release call it anyway, it fails loudly instead.
    saved = os.environ.get("SE_MANAGER_PATH")
    os.environ["SE_MANAGER_PATH"] = "/nonexistent/selenium-manager"
    try:
        driver = webdriver.Chrome(options=options, service=Service(str(CHROMEDRIVER)))
    finally:
        if saved is None:
            del os.environ["SE_MANAGER_PATH"]
        else:
            os.environ["SE_MANAGER_PATH"] = saved
    driver.set_page_load_timeout(60)
    return driver


@pytest.fixture(scope="module")
def browser_zh(browser: Any) -> Iterator[Any]:
    """A second Chromium whose languages are Chinese (``navigator.languages``: zh-CN, zh)."""
    driver = chromium("zh-CN", "zh-CN,zh")
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver: Any, path: Path) -> None:
    driver.get(path.resolve().as_uri())


def console_errors(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def wait(driver: Any, script: str, seconds: float = 30) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        value = driver.execute_script(script)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {script}")
        time.sleep(0.1)


def shot(driver: Any, name: str) -> None:
    """A screenshot of the whole page (the window grown to the page's height, at most 4000 px)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, min(max(height + 140, 900), 4000))
    try:
        driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))
    finally:
        driver.set_window_size(1280, 900)


def test_overview_page(browser: Any, crawled: dict[str, Any]) -> None:
    open_page(browser, crawled["site"] / "index.html")
    assert browser.find_element("id", "n-blogs").text == str(len(crawled["blogs"]))
    assert browser.find_element("id", "n-entries").text == str(len(crawled["entries"]))
    assert browser.find_element("id", "n-links").text == str(len(crawled["links"]))
    platforms = browser.find_element("id", "by-platform").text
    assert "Hexo" in platforms and "WordPress" in platforms and "Hugo" in platforms
    # the last runs, one table per spider, as the database's runs table holds them
    for run in crawled["runs"]:
        rows = browser.find_elements("css selector", f"#runs-{run['spider']} tbody tr")
        assert [r.get_attribute("data-started") for r in rows] == [run["started"]]
        cell = {
            td.get_attribute("class"): td.text for td in rows[0].find_elements("css selector", "td")
        }
        assert cell["reason"] == run["reason"] == "finished"
        kinds = ", ".join(
            f"{k} {n}" for k, n in sorted(json.loads(run["failures_by_kind"]).items())
        )
        assert cell["failures"] == f"{run['failures']} ({kinds})"
        if run["spider"] == "blogs":
            assert (cell["num blogs"], cell["num links"]) == (
                str(run["blogs"]), str(run["friend_links"])
            )  # fmt: skip
        else:
            assert (cell["num fetched"], cell["num new-entries"]) == (
                str(run["feeds_fetched"]), str(run["new_entries"])
            )  # fmt: skip
    shot(browser, "overview")
    assert console_errors(browser) == []


def directory_ids(driver: Any) -> list[str]:
    return driver.execute_script("return window.blogfeedsDirectory.matches()")


def set_value(driver: Any, element_id: str, value: str) -> None:
    driver.execute_script(
        "var el = document.getElementById(arguments[0]); el.value = arguments[1];"
        "el.dispatchEvent(new Event(el.tagName === 'SELECT' ? 'change' : 'input'));",
        element_id,
        value,
    )


def test_directory_lists_every_blog_and_narrows(browser: Any, crawled: dict[str, Any]) -> None:
    blogs = crawled["blogs"]
    open_page(browser, crawled["site"] / "directory.html")
    wait(browser, "return !!window.blogfeedsDirectory")
    assert sorted(directory_ids(browser)) == sorted(blogs)
    rows = browser.find_elements("css selector", "#rows tr")
    assert (
        len(rows) == len(blogs)
        and f"{len(blogs)} blogs" in browser.find_element("id", "count").text
    )
    shot(browser, "directory")
    # sorted by in-degree, most linked first
    degree = dict.fromkeys(blogs, 0)
    for source, target in {(x["source_blog_id"], x["target_blog_id"]) for x in crawled["links"]}:
        if source != target and target in degree:
            degree[target] += 1
    assert [degree[b] for b in directory_ids(browser)] == sorted(degree.values(), reverse=True)
    # search
    set_value(browser, "q", "blog 1")
    expected = {b for b, row in blogs.items() if "blog 1" in (row["title"] or "").lower()}
    assert set(directory_ids(browser)) == expected and expected
    shot(browser, "directory-search")
    set_value(browser, "q", "")
    # language, platform, status, has-feed, minimum in-degree
    set_value(browser, "lang", "zh")
    assert set(directory_ids(browser)) == {b for b, r in blogs.items() if r["language"] == "zh-CN"}
    set_value(browser, "lang", "")
    set_value(browser, "platform", "WordPress")
    assert set(directory_ids(browser)) == {
        b for b, r in blogs.items() if r["platform"] == "WordPress"
    }
    set_value(browser, "platform", "")
    set_value(browser, "status", "no_feed")
    assert set(directory_ids(browser)) == {bs.host(i) for i in NO_FEED}
    set_value(browser, "status", "")
    browser.find_element("id", "has-feed").click()
    assert set(directory_ids(browser)) == {b for b, r in blogs.items() if r["feed_url"]}
    browser.find_element("id", "has-feed").click()
    top = max(degree.values())
    set_value(browser, "min-in", str(top))
    assert set(directory_ids(browser)) == {b for b, d in degree.items() if d >= top}
    set_value(browser, "min-in", "0")
    set_value(browser, "sort", "title")
    titles = [(blogs[b]["title"] or b).lower() for b in directory_ids(browser)]
    assert titles == sorted(titles)
    # a page at a time: 5 a page, the pages hold every match once, in order
    browser.execute_script("window.blogfeedsDirectory.setPageSize(5)")
    paged: list[str] = []
    for n in range(1, 5):
        assert browser.find_element("id", "page-of").text == f"Page {n} of 4"
        rows = browser.find_elements("css selector", "#rows tr")
        paged += [r.get_attribute("data-blog-id") for r in rows]
        assert browser.find_element("id", "next").is_enabled() == (n < 4)
        if n < 4:
            browser.find_element("id", "next").click()
    assert paged == directory_ids(browser)
    browser.find_element("id", "prev").click()
    assert browser.find_element("id", "page-of").text == "Page 3 of 4"
    assert console_errors(browser) == []


def test_blog_page_matches_the_database(browser: Any, crawled: dict[str, Any]) -> None:
    blogs, links, entries = crawled["blogs"], crawled["links"], crawled["entries"]
    for i in (1, HOSTILE, next(iter(NO_FEED))):
        blog_id = bs.host(i)
        open_page(browser, crawled["site"] / "blogs" / f"{slug(blog_id)}.html")
        assert browser.find_element("css selector", "h1 .name").text == blogs[blog_id]["title"]
        if i == 1:  # its feed was fetched once by the feeds run and answered 200: no 304 yet
            cells = [td.text for td in browser.find_elements("css selector", "tbody td")]
            assert "0 %" in cells, cells
        lists = {x["target_blog_id"] for x in links if x["source_blog_id"] == blog_id} - {blog_id}
        listed = {x["source_blog_id"] for x in links if x["target_blog_id"] == blog_id} - {blog_id}
        got = {
            li.get_attribute("data-blog-id")
            for li in browser.find_elements("css selector", "#friends li[data-blog-id]")
        }
        assert got == lists
        got = {
            li.get_attribute("data-blog-id")
            for li in browser.find_elements("css selector", "#listed-by li[data-blog-id]")
        }
        assert got == listed
        shown = [
            li.get_attribute("data-guid")
            for li in browser.find_elements("css selector", "#entries li[data-guid]")
        ]
        assert shown == [e["guid"] for e in entries if e["blog_id"] == blog_id]
        for a in browser.find_elements("css selector", "#friends a, #listed-by a"):
            href = a.get_attribute("href")
            assert href.startswith(("file://", "http://b")), href
        shot(browser, f"blog-{i}")
        assert console_errors(browser) == []
    # a friend link opens the friend's page
    open_page(browser, crawled["site"] / "blogs" / f"{slug(bs.host(1))}.html")
    browser.find_element("css selector", "#friends a").click()
    assert "/blogs/" in browser.current_url
    assert console_errors(browser) == []


def test_blog_pages_show_failures_with_reasons(browser: Any, crawled: dict[str, Any]) -> None:
    """The home page's failure (status and reason) and each scheduled feed's (failures in a
    row, the last status and error) as the database holds them; none on a healthy blog."""
    blogs = crawled["blogs"]
    schedule = {r["blog_id"]: r for r in crawled["schedule"]}
    for blog_id in (GONE_ID, REFUSED_ID, bs.host(FEED_FAILS), bs.host(1)):
        blog = blogs[blog_id]
        open_page(browser, crawled["site"] / "blogs" / f"{slug(blog_id)}.html")
        home = browser.find_elements("css selector", "#failures li.home-failure")
        feeds = browser.find_elements("css selector", "#failures li.feed-failure")
        said = f"{blog['status']} ({blog['status_reason']})"
        if blog["status_reason"]:
            assert [li.get_attribute("data-status") for li in home] == [blog["status"]]
            assert said in home[0].text
            assert browser.find_element("id", "status").text == said
        else:
            assert home == [] and browser.find_element("id", "status").text == blog["status"]
        row = schedule.get(blog_id)
        if row is not None and row["consecutive_failures"]:
            assert [li.get_attribute("data-feed") for li in feeds] == [row["feed_url"]]
            assert feeds[0].get_attribute("data-failures") == str(row["consecutive_failures"])
            assert f"{row['status']} ({row['last_error']})" in feeds[0].text
        else:
            assert feeds == []
        if not home and not feeds:
            assert browser.find_element("id", "failures").text.startswith("None")
        assert console_errors(browser) == []
    open_page(browser, crawled["site"] / "blogs" / f"{slug(REFUSED_ID)}.html")
    shot(browser, "blog-refused")
    open_page(browser, crawled["site"] / "blogs" / f"{slug(bs.host(FEED_FAILS))}.html")
    shot(browser, "blog-feed-failing")


def test_river_order_and_pagination(browser: Any, crawled: dict[str, Any]) -> None:
    entries = crawled["entries"]
    seen: list[str] = []
    open_page(browser, crawled["site"] / "river.html")
    shot(browser, "river")
    pages = 0
    while True:
        pages += 1
        items = browser.find_elements("css selector", "#river li[data-guid]")
        assert 0 < len(items) <= 10
        seen += [li.get_attribute("data-guid") for li in items]
        assert console_errors(browser) == []
        nxt = browser.find_elements("id", "next")
        if not nxt:
            break
        nxt[0].click()
    assert seen == [e["guid"] for e in entries]
    assert pages == -(-len(entries) // 10)
    browser.find_element("id", "prev").click()
    assert browser.current_url.endswith(f"river-{pages - 1}.html" if pages > 2 else "river.html")
    # the friend circle of blog 1
    circle = within_hops(crawled["links"], bs.host(1), 1)
    open_page(browser, crawled["circle"] / "river.html")
    guids = [
        li.get_attribute("data-guid")
        for li in browser.find_elements("css selector", "#river li[data-guid]")
    ]
    assert guids == [e["guid"] for e in entries if e["blog_id"] in circle][:50]
    shot(browser, "river-circle")
    assert console_errors(browser) == []


def test_graph_has_one_node_per_blog(browser: Any, crawled: dict[str, Any]) -> None:
    open_page(browser, crawled["site"] / "graph.html")
    wait(browser, "return !!window.blogfeedsGraph")
    order = browser.execute_script("return window.blogfeedsGraph.graph.order")
    nodes = browser.execute_script("return window.blogfeedsGraph.graph.nodes()")
    assert order == len(crawled["blogs"]) and sorted(nodes) == sorted(crawled["blogs"])
    pairs = {
        (x["source_blog_id"], x["target_blog_id"])
        for x in crawled["links"]
        if x["source_blog_id"] != x["target_blog_id"] and x["target_blog_id"] in crawled["blogs"]
    }
    assert browser.execute_script("return window.blogfeedsGraph.graph.size") == len(pairs)
    wait(browser, "return window.blogfeedsGraph.layoutDone", 30)
    shot(browser, "graph")
    set_value(browser, "graph-q", bs.host(3))
    assert browser.execute_script("return window.blogfeedsGraph.focus()") == bs.host(3)
    time.sleep(0.6)
    shot(browser, "graph-search")
    assert console_errors(browser) == []
    # clicking a node opens its blog's page (a fresh page: the search moved the camera)
    open_page(browser, crawled["site"] / "graph.html")
    wait(browser, "return !!window.blogfeedsGraph && window.blogfeedsGraph.layoutDone", 30)
    time.sleep(0.5)
    x, y = browser.execute_script(
        "const r = window.blogfeedsGraph.renderer;"
        "const g = window.blogfeedsGraph.graph;"
        "const p = r.graphToViewport(g.getNodeAttributes(arguments[0])); return [p.x, p.y];",
        bs.host(0),
    )
    from selenium.webdriver.common.action_chains import ActionChains

    container = browser.find_element("id", "graph")
    width, height = container.size["width"], container.size["height"]
    ActionChains(browser).move_to_element_with_offset(
        container, int(x - width / 2), int(y - height / 2)
    ).click().perform()
    wait(browser, f"return location.href.endsWith('/blogs/{slug(bs.host(0))}.html')", 10)
    assert console_errors(browser) == []


# --- what a reader sees: avatars, latest posts, topics, paths, languages -----------------------

UNITS = (("year", 31536000), ("month", 2592000), ("week", 604800), ("day", 86400),
         ("hour", 3600), ("minute", 60), ("second", 1))  # fmt: skip
LAST = {"day": "yesterday", "week": "last week", "month": "last month", "year": "last year"}


def ago(iso: str, late: float = 0.0) -> str:
    """ "3 days ago" in English as ``Intl.RelativeTimeFormat`` says it, ``late`` s from now."""
    seconds = datetime.fromisoformat(iso).timestamp() - time.time() - late
    unit, size = next((u, s) for u, s in UNITS if abs(seconds) >= s or u == "second")
    n = -round(seconds / size)
    if n == 1 and unit in LAST:
        return LAST[unit]
    return f"{n} {unit}{'s' if n != 1 else ''} ago"


def said_ago(text: str, iso: str) -> bool:
    return text in {ago(iso), ago(iso, 30)}


def newest_entries(crawled: dict[str, Any]) -> dict[str, dict[str, Any]]:
    newest: dict[str, dict[str, Any]] = {}
    for e in crawled["entries"]:  # newest first
        newest.setdefault(e["blog_id"], e)
    return newest


def expected_topics(crawled: dict[str, Any]) -> dict[str, set[str]]:
    titles: dict[str, list[str]] = {}
    for e in crawled["entries"]:
        titles.setdefault(e["blog_id"], []).append(plain_text(e["title"]))
    return {
        b: set(topics_of(r["description"] or "", r["abstract"] or "", titles.get(b, [])))
        for b, r in crawled["blogs"].items()
    }


ROWS = """return [...document.querySelectorAll('#rows tr')].map(tr => {
  const q = s => tr.querySelector(s);
  return {id: tr.dataset.blogId, post: q('.latest .post') ? q('.latest .post').textContent : '',
    when: q('.latest time') ? q('.latest time').textContent : '',
    at: q('.latest time') ? q('.latest time').getAttribute('datetime') : '',
    letter: q('.avatar').textContent, hue: q('.avatar').style.getPropertyValue('--hue'),
    feed: q('a.feed-url') ? q('a.feed-url').getAttribute('href') : '', lang: q('a.title').lang,
    font: getComputedStyle(q('a.title')).fontFamily,
    topics: [...tr.querySelectorAll('.topics .chip')].map(a => a.getAttribute('href'))};
});"""


def test_directory_for_readers(browser: Any, crawled: dict[str, Any]) -> None:
    """Each row: the avatar, the latest post's title and how long ago, the feed to copy, the
    topics, the title in its own language (a Chinese title in a Chinese font); the activity and
    topic categories narrow the list, as links."""
    from selenium.webdriver.common.keys import Keys

    blogs, newest, topics = crawled["blogs"], newest_entries(crawled), expected_topics(crawled)
    assert {bs.host(i): topics[bs.host(i)] for i in (0, 1, 2, 3, 4, 13)} == {
        bs.host(0): {"travel", "photo"}, bs.host(1): {"code"}, bs.host(2): {"books"},
        bs.host(3): {"food"}, bs.host(4): set(), bs.host(13): set(),
    }  # fmt: skip
    open_page(browser, crawled["site"] / "directory.html")
    browser.execute_script("localStorage.clear()")
    open_page(browser, crawled["site"] / "directory.html")
    wait(browser, "return !!window.blogfeedsDirectory")
    rows = {r["id"]: r for r in browser.execute_script(ROWS)}
    assert set(rows) == set(blogs)
    for blog_id, row in rows.items():
        blog = blogs[blog_id]
        assert (row["letter"], int(row["hue"])) == tuple(avatar(blog_id, blog["title"]).values())
        assert row["post"] == (
            plain_text(newest[blog_id]["title"], 120) if blog_id in newest else ""
        )
        assert row["at"] == (blog["last_post_at"] or "")
        assert not row["at"] or said_ago(row["when"], row["at"]), row
        assert row["feed"] == (blog["feed_url"] or "")
        assert row["lang"] == (blog["language"] or "")
        assert set(row["topics"]) == {f"#topic={k}" for k in topics[blog_id]}
        # a Chinese title in a Chinese font first, on this English page
        assert row["font"].startswith('"Noto Sans CJK SC"') == row["lang"].startswith("zh"), row
    assert browser.find_element("id", "count").text == f"{len(blogs)} blogs"
    shot(browser, "directory")
    # the feed's address to copy: pasted back into the search box
    feed = blogs[bs.host(1)]["feed_url"]
    browser.find_element("css selector", f'tr[data-blog-id="{bs.host(1)}"] button.copy').click()
    wait(browser, f"return document.querySelector('tr[data-blog-id=\"{bs.host(1)}\"] button.copy')"
         ".textContent === 'Copied'")  # fmt: skip
    box = browser.find_element("id", "q")
    box.click()
    box.send_keys(Keys.CONTROL, "v")
    assert box.get_attribute("value") == feed
    set_value(browser, "q", "")
    # categories: activity, topic (a link), each narrowing to the blogs that have it
    set_value(browser, "activity", "active")
    assert set(directory_ids(browser)) == {b for b, r in blogs.items() if r["activity"] == "active"}
    set_value(browser, "activity", "")
    chip = browser.find_element(
        "css selector", '#browse a.chip[data-facet="topic"][data-value="code"]'
    )
    chip.click()
    assert set(directory_ids(browser)) == {b for b, t in topics.items() if "code" in t}
    assert browser.current_url.endswith("#topic=code")
    shot(browser, "directory-topic")
    browser.get((crawled["site"] / "directory.html").resolve().as_uri() + "#topic=books")
    wait(browser, "return !!window.blogfeedsDirectory")
    assert set(directory_ids(browser)) == {b for b, t in topics.items() if "books" in t}
    assert console_errors(browser) == []


def test_the_interface_follows_the_browsers_language(
    browser: Any, browser_zh: Any, crawled: dict[str, Any]
) -> None:
    """A browser set to Chinese gets the interface in Chinese, one set to English in English;
    the switcher changes it, and the choice holds on the next page."""
    site = crawled["site"]
    open_page(browser_zh, site / "directory.html")
    browser_zh.execute_script("localStorage.clear()")
    for name, path in (("directory", "directory.html"), ("river", "river.html"),
                       ("blog-1", f"blogs/{slug(bs.host(1))}.html")):  # fmt: skip
        open_page(browser_zh, site / path)
        assert browser_zh.execute_script("return document.documentElement.lang") == "zh"
        nav = [a.text for a in browser_zh.find_elements("css selector", "header nav a")]
        assert nav == ["概览", "博客目录", "最新文章", "关系图", "随机博客", "随机文章"]
        times = browser_zh.find_elements("css selector", "time.rel")
        assert times and all(t.text.endswith("天前") for t in times[:3]), [t.text for t in times]
        shot(browser_zh, f"{name}-zh")
        assert console_errors(browser_zh) == []
    open_page(browser_zh, site / "directory.html")
    wait(browser_zh, "return !!window.blogfeedsDirectory")
    assert browser_zh.find_element("id", "count").text == f"{len(crawled['blogs'])} 个博客"
    set_value(browser_zh, "ui-lang", "en")
    assert browser_zh.find_element("id", "count").text == f"{len(crawled['blogs'])} blogs"
    open_page(browser_zh, site / "river.html")  # the choice is kept
    assert browser_zh.find_element("css selector", "h1").text == "River"
    set_value(browser_zh, "ui-lang", "zh")
    assert browser_zh.find_element("css selector", "h1").text == "最新文章"
    open_page(browser, site / "river.html")
    assert browser.execute_script("return document.documentElement.lang") == "en"


def shortest(links: list[dict[str, Any]], start: str) -> dict[str, int]:
    return within_hops(links, start, 10**6)


def path_shown(driver: Any) -> list[str]:
    wait(driver, "return document.querySelector('#connect-out p') !== null")
    return [
        li.get_attribute("data-blog-id") for li in driver.find_elements("css selector", "#path li")
    ]


def ask_path(driver: Any, target: str) -> list[str]:
    box = driver.find_element("id", "connect-q")
    box.clear()
    box.send_keys(target)
    driver.find_element("id", "connect-go").click()
    wait(driver, "return window.blogfeedsConnect.ready()")
    return path_shown(driver)


def test_blog_page_for_readers(browser: Any, crawled: dict[str, Any]) -> None:
    """Plurals, the last change, a feedless blog's own words, friends with avatars, topics and
    why, and the shortest friend path to another blog."""
    blogs, links, site = crawled["blogs"], crawled["links"], crawled["site"]
    pairs = {(x["source_blog_id"], x["target_blog_id"]) for x in links}
    topics = expected_topics(crawled)
    one = bs.host(1)
    assert (
        blogs[one]["depth"] == 1 and blogs[GONE_ID]["in_degree"]
        if "in_degree" in blogs[GONE_ID]
        else True
    )
    open_page(browser, site / "blogs" / f"{slug(one)}.html")
    assert browser.find_element("id", "depth").text == "1 hop from a seed"
    lists = len({t for s, t in pairs if s == one and t != one})
    assert browser.find_element("id", "out-degree").text == f"{lists} blogs"
    cells = browser.find_elements("css selector", "#revisits td.last-change")
    newest = newest_entries(crawled)[one]["date"]
    assert [c.find_element("tag name", "time").get_attribute("datetime") for c in cells] == [newest]
    assert "newest entry" in cells[0].text
    for li in browser.find_elements("css selector", "#friends li[data-blog-id]"):
        friend = li.get_attribute("data-blog-id")
        face = avatar(friend, (blogs.get(friend) or {}).get("title") or li.text)
        assert li.find_element("css selector", ".avatar").text == face["letter"]
    assert {
        a.get_attribute("data-topic") for a in browser.find_elements("css selector", "#topics a")
    } == topics[one]
    assert "description" in browser.find_element("id", "topics-why").text
    # the shortest friend path, to the blog farthest from this one
    dist = shortest(links, one)
    far = max((b for b in dist if b in blogs), key=lambda b: (dist[b], b))
    shown = ask_path(browser, blogs[far]["url"])
    assert shown[0] == one and shown[-1] == far and len(shown) - 1 == dist[far] >= 2
    assert all((a, b) in pairs for a, b in itertools.pairwise(shown))
    assert browser.find_element("css selector", "#connect-out p").text.startswith(
        f"{dist[far]} hops"
    )
    shot(browser, "blog-1")
    assert console_errors(browser) == []
    # listed once: "1 blog"; no path from it, one the other way
    open_page(browser, site / "blogs" / f"{slug(GONE_ID)}.html")
    assert browser.find_element("id", "in-degree").text == "1 blog"
    assert ask_path(browser, bs.host(LISTS_GONE)) == [bs.host(LISTS_GONE), GONE_ID]
    assert "the other way" in browser.find_element("css selector", "#connect-out p").text
    open_page(browser, site / "blogs" / f"{slug(REFUSED_ID)}.html")
    assert ask_path(browser, bs.host(1)) == []
    assert browser.find_element("css selector", "#connect-out p").text.startswith("No chain")
    # a blog without a feed says so
    feedless = bs.host(next(iter(NO_FEED)))
    open_page(browser, site / "blogs" / f"{slug(feedless)}.html")
    assert browser.find_element("id", "no-entries").text == (
        "This blog has no feed: blogfeeds cannot follow its posts."
    )
    assert "scrapy crawl feeds" not in browser.page_source
    shot(browser, f"blog-{next(iter(NO_FEED))}")
    assert console_errors(browser) == []


def test_river_for_readers(browser: Any, crawled: dict[str, Any]) -> None:
    """Each entry: its blog's avatar, how long ago in the reader's zone, the post's opening,
    in the blog's language."""
    blogs = crawled["blogs"]
    by_guid = {e["guid"]: e for e in crawled["entries"]}
    open_page(browser, crawled["site"] / "river.html")
    items = browser.find_elements("css selector", "#river li[data-guid]")
    assert items
    for li in items:
        entry = by_guid[li.get_attribute("data-guid")]
        blog = blogs[entry["blog_id"]]
        assert (
            li.find_element("css selector", ".avatar").text
            == avatar(entry["blog_id"], blog["title"])["letter"]
        )
        when = li.find_element("css selector", "time.rel")
        assert when.get_attribute("datetime") == entry["date"] and said_ago(
            when.text, entry["date"]
        )
        assert when.get_attribute("title")  # the local date and time
        opening = li.find_element("css selector", ".opening")
        assert opening.text == plain_text(entry["summary"], 280)
        assert opening.get_attribute("lang") == blog["language"]
        assert li.find_element("css selector", ".title").get_attribute("lang") == blog["language"]
    shot(browser, "river")
    assert console_errors(browser) == []


EDGE_PIXELS = """
const [png, r, done] = arguments;
const img = new Image();
img.onload = () => {
  const c = document.createElement('canvas');
  c.width = img.width; c.height = img.height;
  const g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  const d = g.getImageData(r.x + 4, r.y + 4, r.width - 8, r.height - 8).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) {
    const lum = 0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2];
    const grey = Math.max(d[i], d[i + 1], d[i + 2]) - Math.min(d[i], d[i + 1], d[i + 2]) < 40;
    if (grey && lum > 60 && lum < 200) n++;
  }
  done(n);
};
img.src = 'data:image/png;base64,' + png;
"""
"""Pixels of the graph's box grey and dark enough to see on its background (an edge's)."""


def test_graph_edges_at_every_zoom_and_orphans_labelled(
    browser: Any, crawled: dict[str, Any]
) -> None:
    links = crawled["links"]
    linked = {x["source_blog_id"] for x in links} | {x["target_blog_id"] for x in links}
    open_page(browser, crawled["site"] / "graph.html")
    wait(browser, "return !!window.blogfeedsGraph && window.blogfeedsGraph.layoutDone", 30)
    orphans = browser.execute_script("return window.blogfeedsGraph.orphans")
    assert orphans == sorted(set(crawled["blogs"]) - linked) == [REFUSED_ID]
    graph = "window.blogfeedsGraph.graph"
    assert browser.execute_script(
        f"return {graph}.getNodeAttribute(arguments[0], 'forceLabel')", REFUSED_ID
    )
    assert browser.execute_script(
        f"const g = {graph}; const y = g.getNodeAttribute(arguments[0], 'y');"
        "return g.filterNodes(n => n !== arguments[0]).every(n => g.getNodeAttribute(n, 'y') > y);",
        REFUSED_ID,
    )  # below the others: sigma's y grows upwards
    browser.execute_script("window.blogfeedsGraph.renderer.setSetting('renderLabels', false)")
    box = browser.find_element("id", "graph")
    counts = {}
    for ratio in (4, 1, 0.25):
        browser.execute_script(
            "const r = window.blogfeedsGraph.renderer;"
            "r.getCamera().setState({x: 0.5, y: 0.5, ratio: arguments[0]}); r.refresh();",
            ratio,
        )
        time.sleep(0.3)
        counts[ratio] = browser.execute_async_script(
            EDGE_PIXELS, browser.get_screenshot_as_base64(), box.rect
        )
    assert all(n > 200 for n in counts.values()), counts
    browser.execute_script("window.blogfeedsGraph.renderer.setSetting('renderLabels', true)")
    browser.execute_script(
        "window.blogfeedsGraph.renderer.getCamera().setState({x: 0.5, y: 0.5, ratio: 1})"
    )
    time.sleep(0.3)
    shot(browser, "graph")
    assert console_errors(browser) == []


# --- the same site from SQLite and MariaDB; the data helpers -------------------------------------


DAY0, DAY1, DAY2 = "2026-10-01T00:00:00Z", "2026-10-15T00:00:00Z", "2026-11-01T00:00:00Z"
"""The health checks of :func:`write_store`: every blog read well at ``DAY0``; ``d.example``
again at ``DAY1``, then its host gone (``dead``) at ``DAY2``, when the others read well again."""


def write_store(url: str) -> None:
    """Four blogs (one with a ' title, one without feed, one whose host is gone), links, and
    entries via a feeds save; health checks (:data:`DAY0`): ``d.example`` ok, ok, then dead;
    ``a.example`` lists ``b.example`` since ``DAY0``, ``c.example`` since its last read (``DAY2``,
    added then) and no longer ``d.example`` (last seen ``DAY0``)."""
    from blogfeeds.extract.feedreader import FeedEntry
    from blogfeeds.health_settings import BlogHealthSettings
    from blogfeeds.items import Blog, BlogCheck, FeedFetch, FeedInfo, FriendLink

    blogs = [
        Blog("a.example", "https://a.example/", title="A's «notes» 🚀", language="fr",
             feed_url="https://a.example/feed",
             feeds=[FeedInfo("https://a.example/feed", "application/rss+xml")],
             fetched_at="2026-11-01T00:00:00Z"),
        Blog("b.example", "https://b.example/", title="B", feed_url="https://b.example/atom",
             feeds=[FeedInfo("https://b.example/atom", "application/atom+xml")],
             fetched_at="2026-11-01T00:00:00Z"),
        Blog("c.example", "https://c.example/", title="C", status="no_feed",
             fetched_at="2026-11-01T00:00:00Z"),
        Blog("d.example", "https://d.example/", status="dns", fetched_at="2026-11-01T00:00:00Z",
             status_reason="DNS lookup failed: no results for hostname lookup: d.example."),
    ]  # fmt: skip
    links = [
        FriendLink("a.example", "https://b.example/", "b.example", "B"),
        FriendLink("b.example", "https://c.example/", "c.example", "C"),
        FriendLink("c.example", "https://a.example/", "a.example", "A"),
        FriendLink("a.example", "https://c.example/", "c.example", "C"),
        FriendLink("a.example", "https://d.example/", "d.example", "D"),
    ]
    gone = "DNS lookup failed: no results for hostname lookup: d.example."
    checks = [
        [BlogCheck(b.blog_id, b.url, "ok", "read", DAY0, http_status=200) for b in blogs],
        [BlogCheck("d.example", "https://d.example/", "ok", "read", DAY1, http_status=200)],
        [BlogCheck("d.example", "https://d.example/", "failing", gone, DAY2, gone=True)]
        + [BlogCheck(b.blog_id, b.url, "ok", "read", DAY2, http_status=200) for b in blogs[:3]],
    ]  # fmt: skip
    from blogfeeds.storage.runs import Run, record_run

    with FeedStore.open(url) as store:
        store.write(blogs, links)
        store.health = BlogHealthSettings(dead_after=1)
        for batch in checks:
            store.write((), (), checks=batch)
        raw = store.connection.raw
        cursor = raw.cursor()
        p = store.dialect.param
        cursor.execute(f"UPDATE friend_links SET first_seen = {p}, last_seen = {p}", (DAY0, DAY2))
        cursor.executemany(
            f"UPDATE friend_links SET first_seen = {p}, last_seen = {p} "
            f"WHERE source_blog_id = 'a.example' AND target_blog_id = {p}",
            [(DAY2, DAY2, "c.example"), (DAY0, DAY0, "d.example")],
        )
        raw.commit()
        record_run(store, Run("blogs", "w1", "2026-11-01T00:00:00Z", "2026-11-01T00:02:05Z",
                              "finished", blogs=4, friend_links=3, failures=1,
                              failures_by_kind={"dns": 1}))  # fmt: skip
        record_run(store, Run("feeds", "w1", "2026-11-10T00:00:00Z", "2026-11-10T00:00:03Z",
                              "finished", feeds_fetched=2, new_entries=3))  # fmt: skip
        store.sync_feeds(iso_minutes("2026-11-02T00:00:00Z"))
        for blog, days in (("a.example", (3, 5)), ("b.example", (4,))):
            feed_url = next(b.feed_url for b in blogs if b.blog_id == blog)
            assert feed_url is not None
            entries = [
                FeedEntry(f"https://{blog}/p/{d}", "id", link=f"https://{blog}/p/{d}",
                          title=f"{blog} day {d}", published=f"2026-11-{d:02d}T12:00:00Z",
                          summary="<p>x</p>")
                for d in days
            ]  # fmt: skip
            store.save_fetch(
                FeedFetch(
                    feed_url, "2026-11-10T00:00:00Z", "ok", 200, entries=entries, blog_id=blog
                )
            )


def normalised_site(site: Path) -> dict[str, str]:
    """The site's text files with the build time taken out."""
    out = {}
    for path in sorted(site.rglob("*")):
        if path.is_file() and path.suffix in {".html", ".js", ".atom", ".json"}:
            text = path.read_text(encoding="utf-8")
            out[str(path.relative_to(site))] = re.sub(r"<footer>.*?</footer>", "", text, flags=re.S)
    return out


@pytest.mark.services
def test_the_site_from_mariadb_equals_the_site_from_sqlite(tmp_path: Path) -> None:
    if bs.mariadb_admin() is None:
        pytest.skip("MariaDB does not answer at 127.0.0.1:3306")
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    sqlite_url = f"sqlite:///{tmp_path / 'site.sqlite3'}"
    write_store(sqlite_url)
    scrapy(env, "export", "site", str(tmp_path / "from-sqlite"), "--database", sqlite_url)
    with bs.throwaway_database("site") as mysql_url:
        write_store(mysql_url)
        scrapy(env, "export", "site", str(tmp_path / "from-mysql"), "--database", mysql_url)
        rows = scrapy(env, "export", "entries", "--database", mysql_url).stdout.splitlines()
    assert [json.loads(r)["title"] for r in rows] == [
        "a.example day 5", "b.example day 4", "a.example day 3"
    ]  # fmt: skip
    sqlite_site = normalised_site(tmp_path / "from-sqlite")
    assert sqlite_site == normalised_site(tmp_path / "from-mysql")
    assert "A&#39;s «notes» 🚀" in sqlite_site["blogs/a.example.html"]
    assert (
        "dns (DNS lookup failed: no results for hostname lookup: d.example.)"
        in (sqlite_site["blogs/d.example.html"])
    )
    assert '<td class="failures">1 (dns 1)</td>' in sqlite_site["index.html"]
    # the health read from MariaDB as from SQLite (the sites are equal): the timeline, the
    # friends' dates, the overview's kinds and changes
    assert '<tr class="health-dead" data-kind="dead">' in sqlite_site["blogs/d.example.html"]
    assert f'<time class="since" datetime="{DAY2}">' in sqlite_site["blogs/a.example.html"]
    assert f'<time class="gone" datetime="{DAY0}">' in sqlite_site["blogs/a.example.html"]
    assert 'data-blog-id="d.example" data-from="ok" data-to="dead"' in sqlite_site["index.html"]
    assert '<td class="num new-entries">3</td>' in sqlite_site["index.html"]


@pytest.mark.parametrize("backend", ["sqlite", "mariadb"])
def test_a_friend_no_longer_listed_is_no_edge(tmp_path: Path, backend: str) -> None:
    """``a.example``'s last read no longer listed ``d.example``: the link is kept (the blog page
    says since when it is gone) but no export, count or graph takes it for an edge."""
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    with contextlib.ExitStack() as stack:
        if backend == "sqlite":
            url = f"sqlite:///{tmp_path / 'links.sqlite3'}"
        elif bs.mariadb_admin() is None:
            pytest.skip("MariaDB does not answer at 127.0.0.1:3306")
        else:
            url = stack.enter_context(bs.throwaway_database("edges"))
        write_store(url)
        with FeedStore.open(url, read_only=True) as store:
            edges = {(x["source_blog_id"], x["target_blog_id"]) for x in store.friend_links()}
            every = store.friend_links(removed=True)
        exported = scrapy(env, "export", "edges", "--database", url).stdout
        graph = scrapy(env, "export", "graphml", "--database", url).stdout
    assert ("a.example", "b.example") in edges and ("a.example", "d.example") not in edges
    gone = {(x["source_blog_id"], x["target_blog_id"]): x["removed"] for x in every}
    assert gone[("a.example", "d.example")] == DAY0 and gone[("a.example", "b.example")] == ""
    assert "b.example" in exported and "d.example" not in exported.split("a.example", 1)[-1]
    assert 'source="a.example" target="d.example"' not in graph
    assert 'source="a.example" target="b.example"' in graph


def directory_of(site: Path) -> dict[str, Any]:
    data = (site / "data" / "directory.js").read_text(encoding="utf-8")
    return json.loads(data.split("=", 1)[1].strip().rstrip(";"))


def test_health_timeline_friends_since_and_the_overviews_changes(tmp_path: Path) -> None:
    """The blog page's health timeline (spans, HTTP status, reason), its friends' "since" and a
    removed friend, the directory's health column, the overview's kinds and changes."""
    db = tmp_path / "health.sqlite3"
    write_store(f"sqlite:///{db}")
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    site = tmp_path / "site"
    scrapy(env, "export", "site", str(site), "--database", f"sqlite:///{db}")
    page = (site / "blogs" / "d.example.html").read_text(encoding="utf-8")
    rows = re.findall(r'<tr class="health-\w+" data-kind="(\w+)">(.*?)</tr>', page, flags=re.S)
    spans = [
        (
            kind,
            *re.findall(r'<time datetime="([^"]+)">', row),
            re.findall(r'class="num">(\d+)<', row),
        )
        for kind, row in rows
    ]
    assert spans == [("dead", DAY2, ["1"]), ("ok", DAY0, DAY1, ["2"])]  # a span of 1: one time
    assert "DNS lookup failed: no results for hostname lookup: d.example." in rows[0][1]
    assert "<td>200</td>" in rows[1][1] and '"hk_dead">dead<' in rows[0][1]
    assert '"n_checks" data-p="{&#34;n&#34;: 3}">3 checks<' in page
    # a.example's friends: b since DAY0, c since DAY2 (added at the last read), d removed
    page = (site / "blogs" / "a.example.html").read_text(encoding="utf-8")
    friends = page.split('id="friends"', 1)[1].split("</ul>", 1)[0]
    items = re.findall(r'<li data-blog-id="([^"]+)"( class="removed")?>(.*?)</li>', friends)
    assert [(i[0], bool(i[1])) for i in items] == [
        ("b.example", False), ("c.example", False), ("d.example", True)
    ]  # fmt: skip
    shown = {i[0]: i[2] for i in items}
    assert f'<time class="since" datetime="{DAY0}">since 2026-10-01</time>' in shown["b.example"]
    assert f'<time class="since" datetime="{DAY2}">since 2026-11-01</time>' in shown["c.example"]
    removed = f'<time class="gone" datetime="{DAY0}">no longer listed; last seen 2026-10-01</time>'
    assert removed in shown["d.example"]
    assert "since" not in shown["d.example"]
    listed_by = (site / "blogs" / "d.example.html").read_text(encoding="utf-8")
    assert '<li data-blog-id="a.example" class="removed">' in listed_by
    assert 'id="timeline"' in page and 'id="timeline-earlier"' not in page  # a: ok, ok
    # the directory's data: every kind, each blog's
    directory = directory_of(site)
    assert directory["kinds"] == ["ok", "dead", "failing", "blocked", "parked", "moved", "empty"]
    health = directory["columns"].index("health")
    assert {r[0]: r[health] for r in directory["rows"]} == {
        "a.example": "ok", "b.example": "ok", "c.example": "ok", "d.example": "dead"
    }  # fmt: skip
    # the overview: blogs per kind, the change at the last check linked to the blog's page
    index = (site / "index.html").read_text(encoding="utf-8")
    counts = index.split('id="by-health"', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'<tr data-kind="(\w+)">.*?<td class="num">(\d+)</td>', counts) == [
        ("ok", "3"), ("dead", "1")
    ]  # fmt: skip
    assert 'href="directory.html#health=dead"' in counts
    changes = index.split('id="health-changes"', 1)[1].split("</section>", 1)[0]
    assert re.findall(
        r'<li data-blog-id="([^"]+)" data-from="(\w+)" data-to="(\w+)">', changes
    ) == [("d.example", "ok", "dead")]
    assert '<a href="blogs/d.example.html"' in changes
    assert 'data-from="ok" data-to="dead" data-n="1"' in changes


def test_a_timeline_folds_checks_into_bounded_spans() -> None:
    from blogfeeds.site.timeline import Change, Row, fold

    rows: list[Row] = [("a", f"2026-11-{d:02d}T00:00:00Z", "ok" if d % 2 else "failing", 200, "")
            for d in range(1, 26)]  # fmt: skip
    rows += [("b", "2026-11-01T00:00:00Z", "ok", 200, "read"),
             ("b", "2026-11-02T00:00:00Z", "ok", 304, "same")]  # fmt: skip
    rows += [("c", "2026-11-01T00:00:00Z", "dead", None, "gone")]  # one check: no change
    rows += [
        ("d", "2026-11-01T00:00:00Z", "ok", 200, ""),
        ("d", "2026-11-03T00:00:00Z", "moved", 301, ""),
    ]
    timelines, changes = fold(rows, 3, {"a", "b", "c"})
    assert set(timelines) == {"a", "b", "c"}
    a = timelines["a"]
    assert (len(a.spans), a.earlier, a.checks) == (3, 22, 25)
    assert [s.first[8:10] for s in a.spans] == ["25", "24", "23"]
    b = timelines["b"].spans
    assert len(b) == 1 and (b[0].first, b[0].last, b[0].checks) == (
        "2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z", 2
    )  # fmt: skip
    assert (b[0].http_status, b[0].reason) == (304, "same")  # the span's last check
    assert changes == [Change("a", "failing", "ok", "2026-11-25T00:00:00Z")]
    _, changes = fold(rows, 1)
    assert [c.blog_id for c in changes] == ["a", "d"]  # the newest first


def test_within_hops_follows_listed_links() -> None:
    links = [
        {"source_blog_id": "a", "target_blog_id": "b"},
        {"source_blog_id": "b", "target_blog_id": "c"},
        {"source_blog_id": "c", "target_blog_id": "d"},
        {"source_blog_id": "x", "target_blog_id": "a"},  # lists a: not a's friend
    ]
    assert within_hops(links, "a", 0) == {"a": 0}
    assert within_hops(links, "a", 2) == {"a": 0, "b": 1, "c": 2}


def test_entry_date_and_slugs() -> None:
    seen = "2026-11-10T00:00:00Z"
    assert entry_date({"published": "2026-11-03T08:00:00+08:00", "first_seen": seen}) == (
        "2026-11-03T00:00:00Z"
    )
    assert entry_date({"updated": "2026-11-04T00:00:00Z", "first_seen": seen}).startswith(
        "2026-11-04"
    )
    assert entry_date({"published": "2030-01-01T00:00:00Z", "first_seen": seen}) == seen
    assert entry_date({"published": "garbage", "first_seen": seen}) == seen
    assert slug("b0001.example") == "b0001.example"
    odd = [
        slug(s) for s in ("alice.github.io/blog", "alice.github.io_blog", "../x", "", "é.example")
    ]
    assert len(set(odd)) == len(odd)
    assert all("/" not in s and not s.startswith(".") and s for s in odd)


def test_a_version_1_database_builds_a_site_without_entries(tmp_path: Path) -> None:
    """A database from before the feed-revisit tables is read as it is: blogs and graph, an
    empty river, and the database unchanged."""
    from blogfeeds.storage.schema import DIALECTS, pending_migrations

    path = tmp_path / "v1.sqlite3"
    raw = sqlite3.connect(path, isolation_level=None)
    for statement in dict(pending_migrations(0, DIALECTS["sqlite"]))[1]:
        raw.execute(statement)
    raw.execute("INSERT INTO schema_version VALUES (1, '2026-01-01T00:00:00Z')")
    raw.execute(
        "INSERT INTO blogs (blog_id, url, title, abstract, language, generator, feed_url, "
        "friend_count, status, depth, first_seen, fetched_at) VALUES ('old.example', "
        "'https://old.example/', 'Old', '', 'en', 'Hexo 5', NULL, 0, 'no_feed', 0, "
        "'2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')"
    )
    raw.close()
    before = path.read_bytes()
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    scrapy(env, "export", "site", str(tmp_path / "site"), "--database", f"sqlite:///{path}")
    assert (tmp_path / "site" / "blogs" / "old.example.html").is_file()
    assert "No entries stored yet" in (tmp_path / "site" / "river.html").read_text()
    assert path.read_bytes() == before


def test_profile_columns_are_shown(tmp_path: Path) -> None:
    """``description``, ``author``, ``icon_url`` and ``last_post_at`` of the blog profile appear
    on the blog page and in the directory's data; no icon is loaded (see
    :func:`test_no_page_makes_the_viewer_request_an_icon`): the avatar is a placeholder."""
    db = tmp_path / "profile.sqlite3"
    write_store(f"sqlite:///{db}")
    with sqlite3.connect(db) as raw:
        raw.execute(
            "UPDATE blogs SET description = 'Essays on <b>gardens</b>', author = 'Ann', "
            "icon_url = 'https://a.example/icon.png', last_post_at = '2026-11-20T00:00:00Z' "
            "WHERE blog_id = 'a.example'"
        )
        raw.execute("UPDATE blogs SET icon_url = 'javascript:alert(1)' WHERE blog_id = 'b.example'")
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    site = tmp_path / "site"
    scrapy(env, "export", "site", str(site), "--database", f"sqlite:///{db}")
    page = (site / "blogs" / "a.example.html").read_text(encoding="utf-8")
    assert "Essays on &lt;b&gt;gardens&lt;/b&gt;" in page and ">Ann<" in page
    assert "2026-11-20 00:00:00 UTC" in page
    assert "icon.png" not in page and '<span class="avatar"' in page
    assert "javascript:" not in (site / "blogs" / "b.example.html").read_text(encoding="utf-8")
    data = (site / "data" / "directory.js").read_text(encoding="utf-8")
    directory = json.loads(data.split("=", 1)[1].strip().rstrip(";"))
    assert {"description", "author", "icon_url"} <= set(directory["columns"])
    row = next(r for r in directory["rows"] if r[0] == "a.example")
    assert row[directory["columns"].index("last")] == "2026-11-20T00:00:00Z"
    assert row[directory["columns"].index("description")] == "Essays on gardens"


def test_the_overview_counts_feeds_no_blog_is_known_for(tmp_path: Path) -> None:
    """``scrapy crawl feeds -a feed=URL`` schedules a feed without a blog: its failures and
    fetches are the revisit side's, and the overview counts them."""
    url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    with FeedStore.open(url) as store:
        store.add_feed("http://lone.example/feed.xml", 0.0)
        store.connection.raw.execute(
            "UPDATE schedule SET consecutive_failures = 2, last_fetch = '2026-11-30T00:00:00Z'"
        )
        store.connection.raw.commit()
        data = load(store, [], [])
    shown = overview(data)
    assert (shown["feeds_scheduled"], shown["feeds_failing"]) == (1, 1)
    assert shown["feed_last"] == "2026-11-30T00:00:00Z"


def export_site(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "export", "site", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_a_rebuild_deletes_only_what_the_site_wrote(tmp_path: Path) -> None:
    """A folder holding files of its own is refused; with --force the site is written beside
    them; a rebuild removes the pages it no longer writes and nothing else."""
    db = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    write_store(db)
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    site = tmp_path / "site"
    theirs = {"data/thesis.csv": "a,b\n", "blogs/draft.md": "# draft", "river-notes.html": "<p>"}
    for name, text in theirs.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    refused = export_site(env, str(site), "--database", db)
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert "--force" in refused.stderr and "Traceback" not in refused.stderr
    assert sorted(p.name for p in site.rglob("*") if p.is_file()) == sorted(
        Path(n).name for n in theirs
    )
    assert export_site(env, str(site), "--database", db, "--force").returncode == 0
    assert (site / "blogs" / "c.example.html").is_file()
    assert export_site(env, str(site), "--database", db, "--has-feed").returncode == 0
    assert not (site / "blogs" / "c.example.html").exists()  # no feed: no longer selected
    assert (site / "blogs" / "a.example.html").is_file() and (site / "feeds.opml").is_file()
    for name, text in theirs.items():
        assert (site / name).read_text() == text
    (site / ".blogfeeds-site").write_text("../outside.txt\n/etc/hostname\n")
    (tmp_path / "outside.txt").write_text("kept")
    assert export_site(env, str(site), "--database", db).returncode == 0
    assert (tmp_path / "outside.txt").read_text() == "kept"


class CountingServer:
    """A loopback HTTP server that answers a PNG to any GET and counts the requests."""

    def __init__(self) -> None:
        import http.server
        import threading

        hits: list[str] = []
        self.hits = hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.end_headers()
                self.wfile.write(b"\x89PNG\r\n\x1a\n")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_no_page_makes_the_viewer_request_an_icon(browser: Any, tmp_path: Path) -> None:
    """A page declaring ``<link rel=icon href=http://192.168.1.1/x.png>`` must not make every
    viewer's browser request into its own network: the site shows no icon it did not check
    (the crawl does not fetch declared icons), so Chromium requests nothing."""
    db = tmp_path / "db.sqlite3"
    write_store(f"sqlite:///{db}")
    local = CountingServer()
    try:
        with sqlite3.connect(db) as raw:
            raw.execute("UPDATE blogs SET icon_url = ?", (f"{local.url}/x.png",))
        env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
        site = tmp_path / "site"
        scrapy(env, "export", "site", str(site), "--database", f"sqlite:///{db}")
        for page in ("blogs/a.example.html", "directory.html", "index.html", "river.html"):
            open_page(browser, site / page)
            wait(browser, "return document.readyState === 'complete'")
        time.sleep(0.5)
        assert local.hits == []
    finally:
        local.close()


def test_the_directory_filters_by_health(browser: Any, tmp_path: Path) -> None:
    """The directory's health filter: every blog by default, the kinds with their counts, one
    kind at a time (also from the address's ``#health=``), the blog page's timeline readable."""
    db = tmp_path / "db.sqlite3"
    write_store(f"sqlite:///{db}")
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    site = tmp_path / "site"
    scrapy(env, "export", "site", str(site), "--database", f"sqlite:///{db}")
    open_page(browser, site / "directory.html")
    wait(browser, "return !!window.blogfeedsDirectory")
    every = {"a.example", "b.example", "c.example", "d.example"}
    assert set(directory_ids(browser)) == every
    options = browser.execute_script(
        "return [...document.getElementById('health').options].map(o => [o.value, o.text])"
    )
    assert options == [["", "any"], ["ok", "ok (3)"], ["dead", "dead (1)"]]
    set_value(browser, "health", "dead")
    assert directory_ids(browser) == ["d.example"]
    assert browser.find_element("css selector", "#rows tr td.platform").text.endswith("dead")
    assert "health=dead" in browser.current_url
    set_value(browser, "health", "ok")
    assert set(directory_ids(browser)) == every - {"d.example"}
    set_value(browser, "health", "")
    assert set(directory_ids(browser)) == every
    open_page(browser, site / "index.html")
    browser.find_element("css selector", '#by-health a[href="directory.html#health=dead"]').click()
    wait(browser, "return !!window.blogfeedsDirectory")
    assert directory_ids(browser) == ["d.example"]
    open_page(browser, site / "blogs" / "d.example.html")
    rows = browser.find_elements("css selector", "#timeline tbody tr")
    assert [r.get_attribute("data-kind") for r in rows] == ["dead", "ok"]
    assert "DNS lookup failed" in rows[0].text and rows[1].find_elements("tag name", "time")
    shot(browser, "blog-health")
    assert console_errors(browser) == []
    open_page(browser, site / "blogs" / "a.example.html")
    said = {
        li.get_attribute("data-blog-id"): li.text
        for li in browser.find_elements("css selector", "#friends li")
    }
    day = "return new Date(arguments[0]).toLocaleDateString('en-US', {dateStyle: 'medium'})"
    assert said["c.example"].endswith(f"since {browser.execute_script(day, DAY2)}")  # Nov 1, 2026
    assert said["d.example"].endswith(
        f"no longer listed; last seen {browser.execute_script(day, DAY0)}"
    )


def test_only_valid_http_uris_leave_the_site(browser: Any, tmp_path: Path) -> None:
    """Entry links and a blog address holding markup (a JSON Feed ``url`` of
    ``http://evil2.test/j2"><script>``, an RSS ``<link>`` of ``" onmouseover="``) leave in
    ``river.atom`` and ``river.json`` as valid absolute http(s) URIs (percent-encoded) or not at
    all; the river page in Chromium has no handler attribute and no script from them."""
    from lxml import etree

    from blogfeeds.extract.feedreader import FeedEntry
    from blogfeeds.items import FeedFetch

    db = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    write_store(db)
    hostile = [
        'http://evil2.test/j2"><script>alert(1)</script>',
        'https://a.example/p/" onmouseover="alert(2)',
        'http://evil3"><b>x</b>.test/',
        "javascript:alert(4)",
    ]
    entries = [
        FeedEntry(f"h{i}", "id", link=link, title=f"hostile {i}",
                  published=f"2026-11-2{i}T12:00:00Z")
        for i, link in enumerate(hostile)
    ]  # fmt: skip
    with FeedStore.open(db) as store:
        store.save_fetch(
            FeedFetch("https://a.example/feed", "2026-11-29T00:00:00Z", "ok", 200,
                      entries=entries, blog_id="a.example")
        )  # fmt: skip
        store.connection.raw.execute(
            "UPDATE blogs SET url = 'https://a.example/\" onmouseover=\"alert(5)' "
            "WHERE blog_id = 'a.example'"
        )
        store.connection.raw.commit()
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    site = tmp_path / "site"
    scrapy(env, "export", "site", str(site), "--database", db)
    uri = re.compile(r"https?://[A-Za-z0-9.\-\[\]:]+(/[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*)?")
    atom_ns = {"a": "http://www.w3.org/2005/Atom"}
    atom = etree.parse(str(site / "river.atom"))
    hrefs = atom.xpath("//a:entry//a:link/@href", namespaces=atom_ns)
    feed = json.loads((site / "river.json").read_text(encoding="utf-8"))
    urls = [i["url"] for i in feed["items"] if "url" in i]
    urls += [i["_blogfeeds"]["blog_url"] for i in feed["items"] if i["_blogfeeds"]["blog_url"]]
    for link in [*hrefs, *urls]:
        assert uri.fullmatch(link), link
    assert "http://evil2.test/j2%22%3E%3Cscript%3Ealert(1)%3C/script%3E" in hrefs
    assert len(feed["items"]) == 7 and len(urls) == 5 + 7  # evil3 and javascript: left out
    open_page(browser, site / "river.html")
    wait(browser, "return document.readyState === 'complete'")
    handlers = (
        "return [...document.querySelectorAll('*')].filter(e => [...e.attributes].some("
        "a => a.name.startsWith('on'))).length + document.querySelectorAll('main script').length"
    )
    assert browser.execute_script(handlers) == 0
    # the same posts found by the river's search, drawn by its script
    set_value(browser, "post-q", "hostile")
    wait(browser, "return document.querySelectorAll('#post-hits li').length === 4")
    links = browser.execute_script(
        "return [...document.querySelectorAll('#post-hits a.title')].map(a => a.href)"
    )
    assert "http://evil2.test/j2%22%3E%3Cscript%3Ealert(1)%3C/script%3E" in links
    assert all(uri.fullmatch(link) for link in links) and len(links) == 2, links
    assert browser.execute_script(handlers) == 0


def test_topics_are_the_words_a_blog_names() -> None:
    """A topic comes from the description or abstract, or from two post titles; each says
    where its word was found; a word inside another word names nothing."""
    assert topics_of("Notes on travel and 摄影", "", []) == {
        "photo": [("description", "摄影", 1)], "travel": [("description", "travel", 1)]
    }  # fmt: skip
    assert topics_of("", "I said nothing; a rusty gate", []) == {}  # "said", "rusty"
    assert topics_of("", "", ["Coffee in Lisbon", "A day"]) == {}  # one post title: no topic
    assert topics_of("", "", ["Coffee in Lisbon", "More coffee", "A day"]) == {
        "food": [("posts", "coffee", 2)]
    }
    # a topic the description names counts its post titles too; "AI" beside Chinese is a word
    assert topics_of("Rust", "", ["用AI写代码"]) == {
        "code": [("description", "rust", 1), ("posts", "代码", 1)]
    }
    assert named("用AI写代码") == {"ai": "ai", "code": "代码"}
    assert topics_of("", "我的日常与编程笔记", ["Python tips"]) == {
        "code": [("abstract", "编程", 1), ("posts", "python", 1)],
        "life": [("abstract", "日常", 1)],
    }


def test_messages_plurals_and_languages() -> None:
    from blogfeeds.site.build import content_lang
    from blogfeeds.site.i18n import MESSAGES, say, tag

    assert (say("n_blogs", n=1), say("n_blogs", n=2)) == ("1 blog", "2 blogs")
    assert say("hops_from_seed", "zh", n=1) == "距种子 1 跳"
    assert say("hops_from_seed", n=1) == "1 hop from a seed"
    assert (
        str(tag("n_blogs", n=1)) == '<span data-t="n_blogs" data-p="{&#34;n&#34;: 1}">1 blog</span>'
    )
    # every language says every message, with the same parameters
    for lang, messages in MESSAGES.items():
        assert set(messages) == set(MESSAGES["en"]), lang
        for key, message in messages.items():
            forms = message.values() if isinstance(message, dict) else [message]
            english = MESSAGES["en"][key]
            english_forms = english.values() if isinstance(english, dict) else [english]
            wanted = {n for f in english_forms for n in re.findall(r"\{(\w+)\}", f)}
            assert all(set(re.findall(r"\{(\w+)\}", f)) == wanted for f in forms), (lang, key)
    assert (
        content_lang({"language": "zh-CN"}) == "zh-CN"
        and content_lang({"language": "zh_TW"}) == "zh-TW"
    )
    assert content_lang({"language": '"><script>'}) == "" and content_lang(None) == ""
    assert avatar("a.example", "  «Ève» notes") == {
        "letter": "È",
        "hue": avatar("a.example")["hue"],
    }
    assert avatar("1.example", "")["letter"] == "1"
