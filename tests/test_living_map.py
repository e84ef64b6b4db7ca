"""An ageing web: a generated blogosphere crawled once, then changed (blogs gone, 404, 5xx, a
domain parked with a real parking page, a blog moved by 301, a real bot wall, friends added and
removed), then re-checked with ``-a recheck=all``: every kind right, no healthy blog called
dead or parked, the move merged, the friend-list changes dated; a second re-check of the
unchanged blogs is answered by conditional GET (304)."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests import blogosphere as bs
from tests.littleweb import LittleWeb

pytestmark = pytest.mark.integration

N = 30
DATA = Path(__file__).parent / "data" / "health"
GONE, MISSING, BROKEN, PARKED, MOVED, WALLED, REFRIENDED, COPIED = 3, 4, 5, 6, 7, 8, 9, 10
CHANGED = {GONE, MISSING, BROKEN, PARKED, MOVED, WALLED, COPIED}
NEW_HOME = "http://b0007-moved.example/"
COPY_HOME = "http://b0010-new.example/"
NEW_FRIEND = "http://newcomer.example/"


def _run(web: LittleWeb, db: Path, tmp: Path, name: str, *args: str) -> str:
    env = web.env()
    env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{db}"
    cmd = [
        *bs.crawl_command("BLOGFEEDS_HEALTH_DEAD_AFTER=1", "BLOGFEEDS_RECHECK_MIN_HOURS=0"),
        *args,
    ]
    proc = subprocess.run(
        cmd, cwd=bs.REPO, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    (tmp / f"{name}.log").write_text(proc.stderr, "utf-8")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stderr


def _age(web: LittleWeb, sphere: bs.Blogosphere) -> None:
    """The web a while later."""
    web.add(bs.home(GONE), {"drop": True})
    web.add(bs.home(MISSING), {"status": 404, "body": "Not Found", "content_type": "text/plain"})
    web.add(bs.home(BROKEN), {"status": 503, "body": "Service Unavailable"})
    parked = (DATA / "parking.html").read_bytes()
    web.add(bs.home(PARKED), {"body": parked, "content_type": bs.HTML})
    web.add(bs.home(MOVED), {"status": 301, "location": NEW_HOME})
    web.add(NEW_HOME, {"body": bs.page(MOVED, N), "content_type": bs.HTML})
    web.add(f"{NEW_HOME}feed.xml", sphere.routes[f"{bs.home(MOVED)}feed.xml"])
    wall = (DATA / "wall.html").read_bytes()
    web.add(bs.home(WALLED), {"status": 403, "body": wall, "content_type": bs.HTML})
    friends = [*bs.friends_of(REFRIENDED, N)[1:], 0]
    page = bs.page(REFRIENDED, N, friends).replace(
        "</ul>", f'<li class="flink-item"><a href="{NEW_FRIEND}">新朋友</a><p>New</p></li></ul>'
    )
    web.add(bs.home(REFRIENDED), {"body": page, "content_type": bs.HTML})
    # the old host still serves a copy, whose feed is the new host's (and links it)
    new_feed = bs.feed(COPIED).replace(bs.home(COPIED), COPY_HOME)
    web.add(COPY_HOME, {"body": bs.page(COPIED, N), "content_type": bs.HTML})
    web.add(f"{COPY_HOME}feed.xml", {"body": new_feed, "content_type": "application/rss+xml"})
    copy = bs.page(COPIED, N).replace('href="/feed.xml"', f'href="{COPY_HOME}feed.xml"')
    copy = copy.replace("</ul>", f'<li><a href="{COPY_HOME}">new home</a></li></ul>')
    web.add(bs.home(COPIED), {"body": copy, "content_type": bs.HTML})
    web.add(NEW_FRIEND, {"body": bs.page(99, N, [0, 1]).replace("Blog 99", "Newcomer")})


@pytest.fixture(scope="module")
def aged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("living")
    db = tmp / "blogs.sqlite3"
    sphere = bs.blogosphere(N)
    for i in range(0, N, 2):  # validators on half the blogs: their second re-check is a 304
        route = sphere.routes[bs.home(i)]
        route["headers"] = {"ETag": f'"b{i}-v1"'}
    with LittleWeb(sphere.routes) as web:
        _run(web, db, tmp, "first", "-a", f"start_urls={bs.home(0)}")
        with sqlite3.connect(db) as conn:
            first = dict(conn.execute("SELECT blog_id, health FROM blogs").fetchall())
            links_before = conn.execute(
                "SELECT source_blog_id, target_blog_id, first_seen, last_seen FROM friend_links"
            ).fetchall()
        _age(web, sphere)
        log = _run(web, db, tmp, "recheck", "-a", "recheck=all")
        with sqlite3.connect(db) as src, sqlite3.connect(tmp / "rechecked.sqlite3") as copy:
            src.backup(copy)  # the site's view after one re-check
        src.close()
        copy.close()
        web.clear_hits()
        again = _run(web, db, tmp, "again", "-a", "recheck=all")
        hits = web.hits()
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    blogs = {r["blog_id"]: dict(r) for r in conn.execute("SELECT * FROM blogs")}
    checks = [dict(r) for r in conn.execute("SELECT * FROM blog_checks ORDER BY id")]
    aliases = {r["alias_id"]: r["node_id"] for r in conn.execute("SELECT * FROM blog_aliases")}
    links = [dict(r) for r in conn.execute("SELECT * FROM friend_links")]
    conn.close()
    return {
        "rechecked": tmp / "rechecked.sqlite3",
        "first": first,
        "links_before": links_before,
        "blogs": blogs,
        "checks": checks,
        "aliases": aliases,
        "links": links,
        "log": log,
        "again": again,
        "hits": hits,
    }


def _kind_after_recheck(aged: dict[str, Any], bid: str) -> str:
    """The health the first re-check gave ``bid`` (its checks: first crawl, re-check, again)."""
    kinds = [c["kind"] for c in aged["checks"] if c["blog_id"] == bid]
    assert len(kinds) >= 2, (bid, kinds)
    return kinds[1]


def test_the_first_crawl_finds_every_blog_healthy(aged: dict[str, Any]) -> None:
    assert set(aged["first"]) == {bs.host(i) for i in range(N)}
    assert set(aged["first"].values()) == {"ok"}


def test_every_changed_blog_has_its_kind(aged: dict[str, Any]) -> None:
    expected = {
        GONE: "dead",
        MISSING: "dead",
        BROKEN: "failing",
        PARKED: "parked",
        MOVED: "moved",
        WALLED: "blocked",
        REFRIENDED: "ok",
        COPIED: "moved",
    }
    got = {i: _kind_after_recheck(aged, bs.host(i)) for i in expected}
    assert got == expected, "\n".join(
        f"{bs.host(i)}: {c['kind']} {c['reason']}"
        for c in aged["checks"]
        for i in expected
        if c["blog_id"] == bs.host(i)
    )


def test_no_unchanged_blog_is_called_anything_but_ok(aged: dict[str, Any]) -> None:
    for i in set(range(N)) - CHANGED:
        assert _kind_after_recheck(aged, bs.host(i)) == "ok", bs.host(i)
        assert aged["blogs"][bs.host(i)]["health"] == "ok"


def test_a_parked_or_walled_blog_keeps_its_last_true_read(aged: dict[str, Any]) -> None:
    for i in (PARKED, WALLED):
        row = aged["blogs"][bs.host(i)]
        assert row["title"] == f"博客 {i} 🚀 Blog {i}", row["title"]
        assert row["health_reason"]
    assert "Parking service" in aged["blogs"][bs.host(PARKED)]["health_reason"]
    assert "Cloudflare" in aged["blogs"][bs.host(WALLED)]["health_reason"]


def test_the_moved_blog_is_one_blog_under_its_new_address(aged: dict[str, Any]) -> None:
    moved = [c for c in aged["checks"] if c["blog_id"] == bs.host(MOVED) and c["kind"] == "moved"]
    assert moved and NEW_HOME.rstrip("/") in moved[0]["reason"]
    assert aged["aliases"].get(bs.host(MOVED)) == "b0007-moved.example"
    assert bs.host(MOVED) not in aged["blogs"]
    targets = {link["target_blog_id"] for link in aged["links"]}
    assert bs.host(MOVED) not in targets and "b0007-moved.example" in targets


def test_an_old_host_serving_a_copy_is_merged_into_the_new_one(aged: dict[str, Any]) -> None:
    assert aged["aliases"].get(bs.host(COPIED)) == "b0010-new.example"
    assert bs.host(COPIED) not in aged["blogs"]


def test_friend_changes_are_dated(aged: dict[str, Any]) -> None:
    src = bs.host(REFRIENDED)
    listed = {
        link["target_blog_id"]: link for link in aged["links"] if link["source_blog_id"] == src
    }
    assert listed["newcomer.example"]["first_seen"] > min(r[2] for r in aged["links_before"])
    dropped = bs.host(bs.friends_of(REFRIENDED, N)[0])
    kept = bs.host(bs.friends_of(REFRIENDED, N)[1])
    assert listed[dropped]["last_seen"] < listed[kept]["last_seen"]  # no longer listed since
    assert "newcomer.example" in aged["blogs"]  # a new friend is crawled


def test_the_site_shows_the_timelines_the_friends_since_and_the_changes(
    aged: dict[str, Any], tmp_path: Path
) -> None:
    """The site of the web after its re-check: the gone blog's timeline (ok, then dead), the
    re-friended blog's new friend with its date and the dropped one as removed, the overview's
    kinds and the changes its last checks made."""
    db = aged["rechecked"]
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "scrapy", "export", "site", str(site), "--database",
         f"sqlite:///{db}"],
        cwd=bs.REPO, env=env, capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    blogs = {r["blog_id"]: r["health"] for r in conn.execute("SELECT blog_id, health FROM blogs")}
    checks = [dict(r) for r in conn.execute("SELECT * FROM blog_checks ORDER BY checked_at, id")]
    links = [dict(r) for r in conn.execute("SELECT * FROM friend_links")]
    conn.close()
    page = (site / "blogs" / f"{bs.host(GONE)}.html").read_text(encoding="utf-8")
    kinds = re.findall(r'<tr class="health-\w+" data-kind="(\w+)"', page)
    assert kinds == ["dead", "ok"]
    page = (site / "blogs" / f"{bs.host(REFRIENDED)}.html").read_text(encoding="utf-8")
    friends = page.split('id="friends"', 1)[1].split("</ul>", 1)[0]
    items = dict(re.findall(r'<li data-blog-id="([^"]+)"(?: class="removed")?>(.*?)</li>', friends))
    listed = {x["target_blog_id"]: x for x in links if x["source_blog_id"] == bs.host(REFRIENDED)}
    since = f'<time class="since" datetime="{listed["newcomer.example"]["first_seen"]}">since '
    assert since in items["newcomer.example"]
    dropped = bs.host(bs.friends_of(REFRIENDED, N)[0])
    assert re.findall(r'<li data-blog-id="([^"]+)" class="removed"', friends) == [dropped]
    assert f'<time class="gone" datetime="{listed[dropped]["last_seen"]}">' in items[dropped]
    index = (site / "index.html").read_text(encoding="utf-8")
    counts = index.split('id="by-health"', 1)[1].split("</table>", 1)[0]
    shown = dict(re.findall(r'<tr data-kind="(\w+)">.*?<td class="num">(\d+)</td>', counts))
    stored: dict[str, int] = {}
    for health in blogs.values():
        stored[health or "unchecked"] = stored.get(health or "unchecked", 0) + 1
    assert {k: int(n) for k, n in shown.items()} == stored and len(stored) >= 4
    by_blog: dict[str, list[str]] = {}
    for check in checks:
        by_blog.setdefault(check["blog_id"], []).append(check["kind"])
    changed = {
        (b, k[-2], k[-1])
        for b, k in by_blog.items()
        if len(k) > 1 and k[-1] != k[-2] and b in blogs
    }
    changes = index.split('id="health-changes"', 1)[1].split("</section>", 1)[0]
    found = re.findall(r'<li data-blog-id="([^"]+)" data-from="(\w+)" data-to="(\w+)">', changes)
    assert set(found) == changed
    assert {(bs.host(GONE), "ok", "dead"), (bs.host(PARKED), "ok", "parked")} <= changed


def test_a_second_recheck_of_unchanged_blogs_reads_one_page_each(aged: dict[str, Any]) -> None:
    unchanged = {bs.host(i) for i in set(range(N)) - CHANGED - {REFRIENDED}}
    theirs = [h for h in aged["hits"] if urlsplit(h.url).hostname in unchanged]
    # one request each (the floor is 1.5): a 304 where the server sends validators,
    # else the same bytes as the last read, and no feed or friend page after either
    assert sorted(urlsplit(h.url).hostname for h in theirs) == sorted(unchanged)
    with_etag = {bs.host(i) for i in range(0, N, 2)} & unchanged
    assert {urlsplit(h.url).hostname for h in theirs if h.status == 304} == with_etag
    assert "blogfeeds/recheck/same_page" in aged["again"]


def test_two_redis_workers_recheck_each_blog_once(tmp_path: Path) -> None:
    if bs.redis_client() is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    n = 20
    db = tmp_path / "blogs.sqlite3"
    sphere = bs.blogosphere(n)
    with LittleWeb(sphere.routes) as web, bs.redis_prefix("recheck") as prefix:
        _run(web, db, tmp_path, "first", "-a", f"start_urls={bs.home(0)}")
        web.clear_hits()
        procs = []
        for name in ("w1", "w2"):
            env = web.env()
            env.pop("MYSQL_URL", None)
            env.update(
                BLOGFEEDS_DATABASE_URL=f"sqlite:///{db}",
                REDIS_URL=bs.REDIS_URL,
                BLOGFEEDS_REDIS_PREFIX=prefix,
            )
            settings = [
                f"BLOGFEEDS_WORKER_ID={name}",
                "MAX_IDLE_TIME_BEFORE_CLOSE=1",
                f"BLOGFEEDS_SPOOL_PATH={tmp_path / name}.spool",
            ]
            cmd = [*bs.crawl_command(*settings), "-a", "recheck=all"]
            procs.append(bs.start_worker(cmd, env, tmp_path / f"{name}.log"))
        for name, proc in zip(("w1", "w2"), procs, strict=True):
            assert proc.wait(timeout=180) == 0, (tmp_path / f"{name}.log").read_text()[-3000:]
        homes = [h.url for h in web.hits() if h.url.endswith(".example/")]
    assert sorted(homes) == sorted(bs.home(i) for i in range(n))  # each once, none missed
    logs = [(tmp_path / f"{w}.log").read_text("utf-8", "replace") for w in ("w1", "w2")]
    assert all("Traceback" not in log for log in logs)
    assert sum("blogfeeds/recheck/claimed_elsewhere" in log for log in logs) >= 1
    with sqlite3.connect(db) as conn:
        kinds = conn.execute("SELECT blog_id, COUNT(*) FROM blog_checks GROUP BY blog_id")
        assert {count for _, count in kinds} == {2}  # the first crawl's check and one re-check
