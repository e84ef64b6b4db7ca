"""The crawl-wide rule for theme defaults (:mod:`blogfeeds.storage.themedefaults`), on a loopback
web crawled by ``scrapy crawl blogs`` into SQLite and MariaDB.

The web: six Hexo blogs of one theme ("Lumen", in no data file) whose footers credit the
theme's repository (``github.com/lumenauthor/...``) and whose lists keep the theme's sample
entry first (the author's blog, ``lumenauthor.example``). The counter-cases: a popular blog all
six list at one place too (no footer credits it: a friend), the same author listed first by a
blog of another platform (one blog of its theme: a friend), and three Jekyll blogs listing their
own theme's author first (credited, at one place, but fewer blogs than
``BLOGFEEDS_THEME_DEFAULT_BLOGS``: friends). The page alone says the same of every case: each
check fails without the crawl's counts. The crawl's counters, ``scrapy stats`` and the
exports say what was dropped and why; edges and GraphML hold the friends only. Each friend
kept is stored with its kind (the Hugo blog lists one friend by its feed), which the exports,
``scrapy stats`` and ``scrapy inspect`` show.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.commands.export import Filters, export
from blogfeeds.extensions.summary import summarize
from blogfeeds.extract.friends import extract_friends
from blogfeeds.extract.page import parse_page
from blogfeeds.storage.db import Store
from tests import blogosphere as bs
from tests.littleweb import LittleWeb

pytestmark = pytest.mark.integration

LUMEN = [f"lumen{i}.example" for i in range(6)]
RIVET = [f"rivet{i}.example" for i in range(3)]
AUTHOR = "https://lumenauthor.example/"
RIVET_AUTHOR = "https://rivetsmith.example/"
POPULAR = "https://popular.example/"
HUGO = "hugofan.example"
FEED_FRIEND = "https://feedfriend.example/feed.xml"
"""A friend the Hugo blog lists by its feed: stored with the kind ``feed``."""
LUMEN_FOOTER = (
    'Powered by <a href="https://hexo.io/">Hexo</a> · Theme '
    '<a href="https://github.com/lumenauthor/hexo-theme-lumen">Lumen</a>'
)
RIVET_FOOTER = 'Theme <a href="https://github.com/rivetsmith/jekyll-rivet">Rivet</a>'


LOGS: dict[str, Path] = {}
"""The log of the crawl into each database."""


def home(title: str, generator: str, friends: list[tuple[str, str]], footer: str) -> str:
    items = "\n".join(
        f'<li class="flink-item"><a href="{url}" target="_blank">{name}</a><p>{name}</p></li>'
        for url, name in friends
    )
    meta = f'<meta name="generator" content="{generator}">' if generator else ""
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{meta}
<title>{title}</title>
<link rel="alternate" type="application/rss+xml" title="{title}" href="/feed.xml"></head>
<body><main><article><h1>{title}</h1><p>Notes on gardens, trains and the sea.</p></article>
<section><h2>Friends</h2><ul class="flink-list">
{items}
</ul></section></main>
<footer><p>© 2026 {title} · {footer}</p></footer></body></html>"""


def web() -> dict[str, dict[str, Any]]:
    pages: dict[str, str] = {}
    for i, host in enumerate(LUMEN):
        mates = [(f"http://{LUMEN[(i + k) % 6]}/", f"Mate {(i + k) % 6}") for k in (1, 2)]
        friends = [(AUTHOR, "Lumen Author"), (POPULAR, "Popular Blog"), *mates]
        pages[host] = home(f"Lumen blog {i}", "Hexo 7.1.1", friends, LUMEN_FOOTER)
    for i, host in enumerate(RIVET):
        mates = [(f"http://{RIVET[(i + 1) % 3]}/", "Rivet mate"), (POPULAR, "Popular Blog")]
        friends = [(RIVET_AUTHOR, "Rivet Smith"), *mates]
        pages[host] = home(f"Rivet blog {i}", "Jekyll v4.3.3", friends, RIVET_FOOTER)
    hugo_friends = [(AUTHOR, "Lumen Author"), (POPULAR, "Popular Blog"), (FEED_FRIEND, "Fed")]
    pages[HUGO] = home("Hugo fan", "Hugo 0.125.0", hugo_friends, LUMEN_FOOTER)
    others = ((AUTHOR, "Lumen Author"), (RIVET_AUTHOR, "Rivet"), (POPULAR, "Popular"))
    for url, title in (*others, (FEED_FRIEND, "Fed")):
        pages[url.split("/")[2]] = home(title, "", [(f"http://{LUMEN[0]}/", "A reader")], "")
    routes: dict[str, dict[str, Any]] = {}
    for host, body in pages.items():
        routes[f"http://{host}/"] = {"body": body, "content_type": bs.HTML}
        routes[f"https://{host}/"] = {"body": body, "content_type": bs.HTML}
        for scheme in ("http", "https"):
            routes[f"{scheme}://{host}/feed.xml"] = {
                "body": bs.feed(len(routes)),
                "content_type": "application/rss+xml; charset=utf-8",
            }
    return routes


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("mariadb", marks=pytest.mark.services)]
)
def crawled(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp(f"themes-{request.param}")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp / 'blogs.sqlite3'}"
        yield _crawl(url, tmp)
        return
    if bs.mariadb_admin() is None:
        pytest.skip("MariaDB unreachable at 127.0.0.1:3306")
    with bs.throwaway_database("themes") as url:
        yield _crawl(url, tmp)


def _crawl(url: str, tmp: Path) -> str:
    served = LittleWeb(web()).start()
    try:
        env = served.env()
        env.pop("REDIS_URL", None)
        env.pop("MYSQL_URL", None)
        env["BLOGFEEDS_DATABASE_URL"] = url
        seeds = ",".join(f"http://{h}/" for h in [*LUMEN, *RIVET, HUGO])
        cmd = [
            *bs.crawl_command(f"BLOGFEEDS_SPOOL_PATH={tmp / 'spool.jsonl'}", "DEPTH_LIMIT=1"),
            "-a",
            f"start_urls={seeds}",
        ]
        log = LOGS[url] = tmp / "crawl.log"
        done = subprocess.run(
            cmd, env=env, cwd=bs.REPO, timeout=180, check=False, capture_output=True
        )
        log.write_bytes(done.stdout + done.stderr)
        text = log.read_text("utf-8", "replace")
        assert done.returncode == 0, text[-3000:]
        assert "Traceback" not in text, text[-3000:]
    finally:
        served.stop()
    return url


def links(url: str) -> tuple[set[tuple[str, str]], list[dict[str, Any]], dict[str, int]]:
    with Store.open(url, read_only=True) as store:
        kept = {(row["source_blog_id"], row["target_url"]) for row in store.friend_links()}
        counts = {row["blog_id"]: row["friend_count"] for row in store.blogs()}
        return kept, store.dropped_links(), counts


def test_a_themes_sample_entry_on_many_blogs_is_dropped_with_its_reason(crawled: str) -> None:
    kept, dropped, counts = links(crawled)
    assert not {(source, AUTHOR) for source in LUMEN} & kept
    assert {(d["source_blog_id"], d["target_url"]) for d in dropped} == {
        (source, AUTHOR) for source in LUMEN
    }
    assert {d["reason"] for d in dropped} == {"theme-default"}
    assert all(
        d["detail"] == "platform:Hexo: lumenauthor.example at place 1 on 6 blogs" for d in dropped
    )
    for source in LUMEN:  # the popular blog and two theme mates
        assert counts[source] == 3 == sum(1 for s, _ in kept if s == source)


def test_a_popular_friend_many_list_at_one_place_stays_a_friend(crawled: str) -> None:
    kept, _, _ = links(crawled)
    assert {(source, POPULAR) for source in [*LUMEN, *RIVET, HUGO]} <= kept


def test_a_credited_friend_on_too_few_blogs_of_its_theme_stays_a_friend(crawled: str) -> None:
    kept, _, _ = links(crawled)
    assert (HUGO, AUTHOR) in kept  # the same author, one blog of another platform
    assert {(source, RIVET_AUTHOR) for source in RIVET} <= kept  # three Jekyll blogs


def test_the_page_alone_credits_the_themes_author_and_not_the_popular_friend() -> None:
    body = web()[f"http://{LUMEN[0]}/"]["body"]
    result = extract_friends(parse_page(f"http://{LUMEN[0]}/", body.encode(), {}))
    credited = {f.url: f.credited for f in result.friends}
    assert credited[AUTHOR] is True
    assert credited[POPULAR] is False
    assert not any(credited[f"http://{LUMEN[k]}/"] for k in (1, 2))


def test_the_crawls_counters_count_a_dropped_link_as_dropped_not_written(crawled: str) -> None:
    text = LOGS[crawled].read_text("utf-8", "replace")

    def stat(key: str) -> int:  # from Scrapy's stats dump (a dict's repr)
        found = re.search(rf"'{re.escape(key)}': (\d+)", text)
        assert found, text[-3000:]
        return int(found.group(1))

    assert stat("blogfeeds/db/friend_links_dropped/theme-default") == len(LUMEN)
    kept, _, _ = links(crawled)
    # links written as friends and dropped later by a later blog's write are counted in both;
    # the write that reached the threshold dropped its own link as it wrote it (not written)
    assert len(kept) <= stat("blogfeeds/db/friend_links_written") < len(kept) + len(LUMEN)
    assert "Dropped links, by reason: theme-default 6" in text


def test_each_kept_friend_link_is_stored_with_its_kind(crawled: str) -> None:
    with Store.open(crawled, read_only=True) as store:
        stored = {(r["source_blog_id"], r["target_url"]): r["kind"] for r in store.friend_links()}
    assert stored.pop((HUGO, FEED_FRIEND)) == "feed"
    assert set(stored.values()) == {"site"}
    text = LOGS[crawled].read_text("utf-8", "replace")
    found = re.search(r"Friend links, by kind: site (\d+), feed 1\n", text)
    assert found, text[-3000:]


def test_the_exports_carry_the_dropped_links_and_the_graph_the_friends(crawled: str) -> None:
    with Store.open(crawled, read_only=True) as store:
        stored = store.blogs(), store.friend_links()

    def exported(fmt: str) -> str:
        out = io.BytesIO()
        export(fmt, *stored, Filters(), out)
        return out.getvalue().decode()

    rows = {row["blog_id"]: row for row in map(json.loads, exported("jsonl").splitlines())}
    for source in LUMEN:
        (dropped,) = rows[source]["dropped_links"]
        assert (dropped["target_url"], dropped["reason"]) == (AUTHOR, "theme-default")
        assert dropped["detail"] == "platform:Hexo: lumenauthor.example at place 1 on 6 blogs"
    assert rows[HUGO]["dropped_links"] == []  # the author, a friend of a blog of another theme
    listed = {(f["target_url"], f["kind"]) for f in rows[HUGO]["friend_links"]}
    assert listed == {(AUTHOR, "site"), (POPULAR, "site"), (FEED_FRIEND, "feed")}
    table = {r["blog_id"]: r for r in csv.DictReader(io.StringIO(exported("csv")))}
    assert table[LUMEN[0]]["dropped_links"] == f"{AUTHOR} (theme-default)"
    assert table[HUGO]["dropped_links"] == ""
    assert f"{FEED_FRIEND} (feed)" in table[HUGO]["friend_links"]
    assert f"{AUTHOR} (site)" in table[HUGO]["friend_links"]
    edges = exported("edges")
    assert all(f"{source},lumenauthor.example," not in edges for source in LUMEN)
    assert f"{HUGO},lumenauthor.example," in edges  # the friend stays an edge
    assert f"{HUGO},feedfriend.example,Fed,{FEED_FRIEND},http://{HUGO}/,feed\r\n" in edges
    graph = exported("graphml")
    assert graph.count('target="lumenauthor.example"') == 1
    fed = re.search(r'target="feedfriend\.example">(.*?)</edge>', graph, re.DOTALL)
    assert fed and '<data key="kind">feed</data>' in fed.group(1)


def test_stats_count_the_dropped_links_by_reason(crawled: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "stats", "--json", "--database", crawled],
        cwd=bs.REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["dropped_links"] == {"theme-default": len(LUMEN)}
    assert summary["friend_links_by_kind"]["feed"] == 1
    assert set(summary["friend_links_by_kind"]) == {"site", "feed"}
    with Store.open(crawled, read_only=True) as store:
        blogs = store.blogs()
    hugo = summarize([b for b in blogs if b["blog_id"] == HUGO], [])
    assert hugo.dropped == {} and "Dropped links" not in hugo.render()
    assert "Dropped links, by reason: theme-default 6" in summarize(blogs, []).render()


def test_inspect_shows_the_links_the_crawl_stored_and_dropped_from_a_blog(
    crawled: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    env["BLOGFEEDS_DATABASE_URL"] = crawled

    def inspect(host: str, *more: str) -> str:
        page = tmp_path / f"{host}.html"
        page.write_text(web()[f"http://{host}/"]["body"], "utf-8")
        args = ["--file", str(page), "--url", f"http://{host}/", "--no-fetch", *more]
        done = subprocess.run(
            [sys.executable, "-m", "scrapy", "inspect", *args],
            cwd=bs.REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    detail = "platform:Hexo: lumenauthor.example at place 1 on 6 blogs"
    data = json.loads(inspect(LUMEN[0], "--json"))
    assert data["dropped_by_crawl"] == [
        {"url": AUTHOR, "reason": "theme-default", "detail": detail}
    ]
    assert f"  {AUTHOR}  theme-default ({detail})" in inspect(LUMEN[0])
    hugo = inspect(HUGO)
    assert "Links the crawl dropped" not in hugo  # its link to the author is a friend
    assert "Friend links the crawl stored (3):" in hugo
    assert f"  {FEED_FRIEND}  feed\n" in hugo and f"  {AUTHOR}  site\n" in hugo
    assert json.loads(inspect(HUGO, "--json"))["stored_by_crawl"] == [
        {"url": FEED_FRIEND, "kind": "feed"},  # by URL
        {"url": AUTHOR, "kind": "site"},
        {"url": POPULAR, "kind": "site"},
    ]
