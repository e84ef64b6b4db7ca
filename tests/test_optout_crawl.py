"""Opt-out end to end, on SQLite and MariaDB: a little web on loopback whose hub links five blogs
that will opt out (two named by an alias the store learnt, one by its ``www`` address, one by
its host, one by a path on a shared host), and blogs that stay.

1. A crawl and a feeds crawl store everything (the five are reachable and stored).
2. A crawl with the opt-out file (aliases named only: the store's aliases complete the list)
   requests nothing of the five, robots.txt and favicons included, follows no link through them
   and yields no item of them; a link to one is dropped and counted.
3. ``scrapy optout`` removes every row of theirs and says so.
4. A re-crawl brings nothing back: no request, no row, no export, no page of the site.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.storage.connection import connect
from tests import blogosphere as bs
from tests.littleweb import LittleWeb
from tests.test_identity_crawl import feed, home, page, posts, rss

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent

NAMED = ["ana.github.io", "https://ben.vercel.app/", "https://www.cai.example/", "dee.example",
         "https://pages.example/~gus/"]  # fmt: skip
"""The five blogs, as the opt-out file names them."""
GONE_HOSTS = {"ana.github.io", "ana-blog.example", "ben.vercel.app", "ben.example",
              "cai.example", "www.cai.example", "dee.example", "zed.example"}  # fmt: skip
"""Hosts no request may reach once they opted out (zed.example: linked only by cai.example)."""
MARKS = ("ana.github.io", "ana-blog.example", "ben.vercel.app", "ben.example", "cai.example",
         "dee.example", "~gus", "%7Egus")  # fmt: skip
"""Text no stored row, item, export or page may hold once they opted out."""
STAYING = {"hub.example", "eve.example", "fay.example", "pages.example/~hal"}


def blogroll(urls: list[str]) -> str:
    items = "".join(
        f'<li class="flink-item"><a href="{url}">Friend {i}</a><p>a friend</p></li>'
        for i, url in enumerate(urls)
    )
    return f'<section><h2>友情链接</h2><ul class="flink-list">{items}</ul></section>'


def blog(
    routes: dict[str, Any],
    url: str,
    title: str,
    friends: Sequence[str] = (),
    head: str = "",
) -> None:
    routes[url] = page(home(title, head=head, body=blogroll(friends) if friends else ""))
    routes[url + "feed.xml"] = feed(rss(title, posts(url, 3)))


def little_web() -> dict[str, Any]:
    routes: dict[str, Any] = {}
    blog(
        routes,
        "https://hub.example/",
        "Hub",
        [
            "https://ana.github.io/",
            "https://ben.example/",
            "https://ben.vercel.app/",
            "https://cai.example/",
            "https://dee.example/",
            "https://pages.example/~gus/",
            "https://pages.example/~hal/",
            "https://eve.example/",
        ],
    )
    # ana moved from github.io to her own domain (a permanent redirect: an alias)
    routes["https://ana.github.io/"] = {"status": 301, "location": "https://ana-blog.example/"}
    blog(routes, "https://ana-blog.example/", "Ana", ["https://hub.example/"])
    # ben's platform copy names the original as canonical, with its feed
    blog(routes, "https://ben.example/", "Ben", ["https://hub.example/"])
    routes["https://ben.vercel.app/"] = page(
        home(
            "Ben",
            head='<link rel="canonical" href="https://ben.example/">',
            feed="https://ben.example/feed.xml",
        )
    )
    blog(routes, "https://cai.example/", "Cai", ["https://zed.example/", "https://hub.example/"])
    blog(routes, "https://zed.example/", "Zed")
    blog(routes, "https://dee.example/", "Dee", ["https://eve.example/"])
    blog(routes, "https://pages.example/~gus/", "Gus")
    blog(routes, "https://pages.example/~hal/", "Hal")
    blog(
        routes,
        "https://eve.example/",
        "Eve",
        ["https://cai.example/", "https://dee.example/", "https://fay.example/"],
    )
    blog(
        routes,
        "https://fay.example/",
        "Fay",
        ["https://ana-blog.example/", "https://hub.example/", "https://eve.example/"],
        # a claim the crawl confirms by a request (Admission.claimed): not of a listed blog
        head='<meta property="og:url" content="https://cai.example/">',
    )
    return routes


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        list(args), cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc


def scrapy(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run(env, bs.crawl_command()[0], "-m", "scrapy", *args)


def crawl(env: dict[str, str], items: Path) -> str:
    cmd = bs.crawl_command("ROBOTSTXT_OBEY=True")
    seeds = "start_urls=https://hub.example/,https://dee.example/"  # a seed opts out too
    proc = run(env, *cmd, "-a", seeds, "-o", f"{items}:jsonlines")
    return proc.stderr


def stored_text(url: str) -> str:
    """Every row of every table, as text."""
    conn = connect(url, read_only=True)
    cursor = conn.raw.cursor()
    try:
        if conn.dialect.name == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        else:
            cursor.execute("SHOW TABLES")
        tables = [str(row[0]) for row in cursor.fetchall()]
        text = []
        for table in tables:
            cursor.execute(f"SELECT * FROM {table}")
            text += [f"{table}: {row!r}" for row in cursor.fetchall()]
        return "\n".join(text)
    finally:
        cursor.close()
        conn.raw.close()


def exported(env: dict[str, str], site: Path) -> str:
    """Every export of the database, and every file of its site, as one text."""
    out = [
        scrapy(env, "export", fmt).stdout for fmt in ("opml", "csv", "jsonl", "graphml", "edges")
    ]
    out.append(scrapy(env, "export", "entries").stdout)
    scrapy(env, "export", "site", str(site))
    out += [p.read_text("utf-8", "replace") for p in sorted(site.rglob("*")) if p.is_file()]
    return "\n".join(out)


def traces(text: str) -> list[str]:
    return [mark for mark in MARKS if mark in text]


def hosts_asked(web: LittleWeb) -> set[str]:
    asked = {h.url.split("/")[2].split(":")[0] for h in web.hits()}
    asked |= {c.rsplit(":", 1)[0] for c in web.connects}
    if any(h.url.startswith("https://pages.example/~gus") for h in web.hits()):
        asked.add("pages.example/~gus")
    return asked


@pytest.fixture(scope="module", params=["sqlite", "mariadb"])
def story(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp(f"optout-{request.param}")
    if request.param == "mariadb":
        if bs.mariadb_admin() is None:
            pytest.skip("MariaDB unreachable at 127.0.0.1:3306 (.ci/services.sh starts it)")
        databases = bs.throwaway_database("optout")
        url = databases.__enter__()
    else:
        databases, url = None, f"sqlite:///{tmp / 'blogs.sqlite3'}"
    try:
        yield tell(url, tmp)
    finally:
        if databases is not None:
            databases.__exit__(None, None, None)


def tell(url: str, tmp: Path) -> dict[str, Any]:
    """The four steps of the module doc; what each saw."""
    listed = tmp / "opt-out.txt"
    seen: dict[str, Any] = {"url": url}
    with LittleWeb(little_web()) as web:
        env = web.env({k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}})
        env["BLOGFEEDS_DATABASE_URL"] = url
        crawl(env, tmp / "items1.jsonl")
        run(env, *bs.crawl_command("RETRY_TIMES=0", spider="feeds"))
        seen["stored_before"] = stored_text(url)
        seen["asked_before"] = hosts_asked(web)

        lines = ["# owners who asked", *NAMED, "ftp://files.example/ # a bad line"]
        listed.write_text("\n".join(lines) + "\n", encoding="utf-8")
        env["BLOGFEEDS_OPT_OUT"] = str(listed)
        web.clear_hits()
        seen["log_listed"] = crawl(env, tmp / "items2.jsonl")
        seen["asked_listed"] = hosts_asked(web)
        seen["items_listed"] = (tmp / "items2.jsonl").read_text("utf-8")
        web.clear_hits()  # every stored feed due: theirs are not fetched
        due = ("BLOGFEEDS_NOW=2030-01-01T00:00:00Z", "RETRY_TIMES=0")
        seen["log_feeds"] = run(env, *bs.crawl_command(*due, spider="feeds")).stderr
        seen["asked_feeds"] = hosts_asked(web)

        # two of the five named again (listed already: not repeated); the rows of every blog
        # the file lists go, the three added to it by hand too
        seen["optout"] = scrapy(env, "optout", *NAMED[:2]).stdout
        seen["file"] = listed.read_text("utf-8")
        seen["stored_purged"] = stored_text(url)

        web.clear_hits()
        seen["log_again"] = crawl(env, tmp / "items3.jsonl")
        seen["asked_again"] = hosts_asked(web)
        seen["items_again"] = (tmp / "items3.jsonl").read_text("utf-8")
        seen["stored_again"] = stored_text(url)
        seen["exported"] = exported(env, tmp / "site")
        seen["blogs_again"] = {
            json.loads(line)["blog_id"]
            for line in scrapy(env, "export", "jsonl").stdout.splitlines()
        }
    return seen


def test_the_five_blogs_are_reachable_and_stored_without_the_list(story: dict[str, Any]) -> None:
    assert traces(story["stored_before"]) == list(MARKS[:-1])
    assert "entries: " in story["stored_before"]
    assert story["asked_before"] >= GONE_HOSTS - {"www.cai.example"} | {"pages.example/~gus"}


def test_a_crawl_with_the_list_requests_nothing_of_them(story: dict[str, Any]) -> None:
    asked = story["asked_listed"]
    assert asked & (GONE_HOSTS | {"pages.example/~gus"}) == set()
    assert {"hub.example", "eve.example", "fay.example", "pages.example"} <= asked
    assert traces(story["items_listed"]) == []
    assert (
        f"{'opt-out.txt'} line 7: not an http(s) address: 'ftp://files.example/'"
        in (story["log_listed"])
    )
    # hub: 6 links to them, eve: 2, fay: 1 (to ana's node, an address the file does not name)
    assert "'blogfeeds/opt_out/friend_link': 9," in story["log_listed"]
    assert "'blogfeeds/opt_out/blog': 1," in story["log_listed"]  # the seed dee.example
    # fay.example's og:url names cai.example: not requested to confirm it, nor stored
    assert "'blogfeeds/opt_out/claim': 1," in story["log_listed"]
    assert "Seed https://dee.example/ is on the opt-out list" in story["log_listed"]


def test_the_feeds_crawl_fetches_none_of_their_feeds(story: dict[str, Any]) -> None:
    # zed.example stays stored (crawl 1): its feed is fetched
    assert story["asked_feeds"] & (GONE_HOSTS | {"pages.example/~gus"}) == {"zed.example"}
    assert {"hub.example", "eve.example"} <= story["asked_feeds"]
    assert "'blogfeeds/opt_out/feed': 5," in story["log_feeds"]


def test_optout_removes_every_row_and_says_what(story: dict[str, Any]) -> None:
    assert traces(story["stored_purged"]) == []
    for bid in ("ana-blog.example", "ana.github.io", "ben.example", "ben.vercel.app",
                "cai.example", "dee.example", "pages.example/~gus"):  # fmt: skip
        assert bid in story["optout"]
    assert "entries " in story["optout"] and "friend_links " in story["optout"]
    # the other addresses stored of the named blogs are listed too: their rows are gone
    assert "ana-blog.example\n" in story["file"] and "ben.example\n" in story["file"]
    assert story["file"].count("ana.github.io") == 1


def test_a_recrawl_brings_nothing_back(story: dict[str, Any]) -> None:
    assert story["asked_again"] & (GONE_HOSTS | {"pages.example/~gus"}) == set()
    assert traces(story["items_again"]) == []
    assert traces(story["stored_again"]) == []
    assert traces(story["exported"]) == []
    assert story["blogs_again"] >= STAYING
