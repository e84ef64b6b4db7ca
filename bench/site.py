"""``scrapy export site`` at scale: build time of a generated 100,000-blog database, and the
directory's search time in the browser.

Run: ``nice python bench/site.py [--blogs 100000] [--links 6] [--entries 3] [--keep DIR]``.

1. Generates an SQLite database of ``--blogs`` blogs (five languages, six platforms, one in ten
   without a feed), ``--links`` friend links per blog (targets skewed towards a few popular blogs,
   as blogrolls are), ``--entries`` entries per feed (an opening of about 200 characters of
   Zipf-distributed English words, Chinese for the zh-CN blogs, a rare word in one post of
   about 10,000), a schedule row per feed, and a health history: 1 to 4 weekly checks per blog
   (one blog in 20 ok, then failing, then dead; one in 50 flapping between ok and failing for
   40 checks, more spans than a page keeps), friend links first seen on different days, one in
   ten no longer listed; written with raw ``executemany`` into the schema
   :class:`~blogfeeds.storage.db.Store` creates.
2. Builds the site in-process as ``scrapy export site`` does (:func:`blogfeeds.site.data.load`,
   :func:`blogfeeds.site.build.build_site`); the reference of the same run is reading the
   database (``Store.blogs`` + ``friend_links`` + the entries), so the ratio build / read says
   what the pages cost beyond the data.
3. Opens ``directory.html`` from ``file://`` in headless Chromium (Debian's, through
   ``/usr/bin/chromedriver``): time until the directory is ready, then per search the time from
   the input event to the next painted frame (goal: < 1 s); then ``graph.html`` (the 10,000 most
   linked blogs): time to the first drawing and the longest gap between animation frames while
   ForceAtlas2 runs: the longest gap between 10 ms timer tasks (a frozen main thread shows as a
   long gap) and the frames painted (software WebGL here: SwiftShader, no GPU).
4. Opens ``river.html`` afresh per query (nothing of the index cached) and times a post search
   from the input event to the painted hits (goal: < 1 s), with the bytes of the index files it
   loaded; the index's size on disk; a random blog and a random post drawn from a fresh page.
Screenshots: ``tests/output/screenshots/bench-directory.png``, ``bench-graph.png`` and
``bench-river-search.png``.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from blogfeeds.site.build import SiteOptions, build_site
from blogfeeds.site.data import load
from blogfeeds.storage.db import Store
from blogfeeds.storage.feedstore import FeedStore
from blogfeeds.storage.schema import url_hash

REPO = Path(__file__).resolve().parent.parent
SHOTS = REPO / "tests" / "output" / "screenshots"
LANGS = ("en", "zh-CN", "ja", "de", "fr")
PLATFORMS = (("Hexo 7.3.0", "Hexo"), ("WordPress 6.4.2", "WordPress"), ("Hugo 0.140.0", "Hugo"),
             ("Jekyll v4.3.3", "Jekyll"), ("Ghost 5.0", "Ghost"), ("", ""))  # fmt: skip
WORDS = ("notes", "garden", "code", "travel", "books", "coffee", "rust", "python", "photo",
         "music", "life", "weekly", "dev", "design", "cat", "moon", "river", "web")  # fmt: skip
NOW = "2026-11-30T00:00:00Z"
PROSE = ("the", "of", "and", "a", "to", "in", "is", "that", "it", "for", "on", "with", "as",
         "was", "this", "at", "by", "from", "we", "about", "my", "new", "one", "time", "day",
         "little", "week", "walk", "read", "make", "work", "night", "morning", "city", "light",
         "tea", "bread", "train", "paper", "window", "field", "winter", "letter", "story",
         *WORDS)  # fmt: skip
HANZI = ("咖啡", "旅行", "读书", "代码", "音乐", "摄影", "花园", "月亮", "河流", "生活", "设计",
         "猫", "今天", "早晨", "城市", "工作", "朋友", "记录", "周末", "电影")  # fmt: skip
RARE = "quokka"
POST_QUERIES = ("the", "garden", "garden coffee", "gard", RARE, "12345", "咖啡", "咖啡馆",
                "周末电影", "zzzqxj", "")  # fmt: skip
"""Post searches: the commonest word, a common word, two words, a word's start, a rare word, a
blog's number (three posts), CJK (common, a pair no post has, four characters), no hit, clear."""


def opening(rnd: random.Random, zh: bool, rare: bool) -> str:
    """About 200 characters of prose: Zipf-like English (or Chinese), maybe the rare word."""
    if zh:
        text = "，".join("".join(rnd.choices(HANZI, k=3)) for _ in range(14)) + "。"
    else:
        weights = [1 / (r + 1) for r in range(len(PROSE))]
        text = " ".join(rnd.choices(PROSE, weights, k=36)).capitalize() + "."
    return f"<p>{text}{f' A {RARE}.' if rare else ''}</p>"


def generate(path: Path, n: int, links: int, entries: int) -> dict[str, int]:
    """Write the database; returns the rows per table."""
    Store.open(f"sqlite:///{path}").close()  # the schema
    rnd = random.Random(17)
    prose = random.Random(41)  # its own stream: the links stay those of earlier runs
    blogs, feeds, edges, sched, posts, checks = [], [], [], [], [], []
    for i in range(n):
        bid = f"b{i:06d}.example"
        url = f"https://{bid}/"
        gen, platform = PLATFORMS[i % len(PLATFORMS)]
        has_feed = i % 10 != 9
        feed = f"{url}feed.xml" if has_feed else None
        words = " ".join(rnd.sample(WORDS, 2))
        history = health_history(i)
        checks += [(bid, when, kind, status, reason) for when, kind, status, reason in history]
        blogs.append((bid, url, f"Blog {i} {words}", f"Writing about {words}.", LANGS[i % 5], gen,
                      feed, links, "ok" if has_feed else "no_feed", i % 7, NOW, NOW, platform,
                      "", history[-1][1], history[-1][3]))  # fmt: skip
        if feed:
            feeds.append((bid, feed, url_hash(feed), "application/rss+xml", "", 9.0, "[]", 0, 1))
            sched.append((url_hash(feed), feed, bid, 600.0, 0, 3, NOW, "ok", NOW))
            for k in range(entries):
                day = 1 + (i * 7 + k * 3) % 28
                hour = (i + k) % 24
                zh = LANGS[i % 5] == "zh-CN"
                name = (
                    f"第{k}篇：{''.join(prose.sample(HANZI, 2))}" if zh else f"Post {k} of blog {i}"
                )
                summary = opening(prose, zh, (i * 3 + k) % 9973 == 0)
                posts.append((url_hash(feed), url_hash(f"{url}p/{k}"), f"{url}p/{k}", f"{url}p/{k}",
                              f"{name} {words}", "", f"2026-11-{day:02d}T{hour:02d}:00:00Z",
                              None, summary, NOW))  # fmt: skip
        targets: set[int] = set()
        while len(targets) < links:
            t = int(n * rnd.random() ** 3)  # skewed: low ids are the popular blogs
            if t != i:
                targets.add(t)
        for t in sorted(targets):
            turl = f"https://b{t:06d}.example/"
            since = f"2026-{9 + t % 3:02d}-{1 + t % 28:02d}T00:00:00Z"
            seen = since if (i + t) % 10 == 0 else NOW  # one in ten no longer listed
            edges.append((bid, f"b{t:06d}.example", turl, url_hash(turl), f"Friend {t}", 100.0,
                          url, since, seen))  # fmt: skip
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO blogs (blog_id, url, title, abstract, language, generator, feed_url, "
            "friend_count, status, depth, first_seen, fetched_at, platform, platform_version, "
            "health, health_reason) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", blogs)  # fmt: skip
        conn.executemany(
            "INSERT INTO blog_checks (blog_id, checked_at, kind, http_status, reason) "
            "VALUES (?,?,?,?,?)", checks)  # fmt: skip
        conn.executemany(
            "INSERT INTO feeds (blog_id, url, url_hash, type, title, score, reasons, position, "
            "is_main) VALUES (?,?,?,?,?,?,?,?,?)", feeds)  # fmt: skip
        conn.executemany(
            "INSERT INTO friend_links (source_blog_id, target_blog_id, target_url, "
            "target_url_hash, name, container_score, source_url, first_seen, last_seen) "
            "VALUES (?,?,?,?,?,?,?,?,?)", edges)  # fmt: skip
        conn.executemany(
            "INSERT INTO schedule (feed_url_hash, feed_url, blog_id, interval_minutes, "
            "rank_score, level, next_due, status, last_fetch) VALUES (?,?,?,?,?,?,?,?,?)",
            sched)  # fmt: skip
        conn.executemany(
            "INSERT INTO entries (feed_url_hash, guid_hash, guid, link, title, author, "
            "published, updated, summary, first_seen) VALUES (?,?,?,?,?,?,?,?,?,?)",
            posts)  # fmt: skip
    return {"blogs": len(blogs), "links": len(edges), "entries": len(posts), "checks": len(checks)}


def health_history(i: int) -> list[tuple[str, str, int | None, str]]:
    """Blog ``i``'s checks, oldest first: ``(checked_at, kind, http_status, reason)``, the last
    at :data:`NOW`, 12 hours (flapping) or a week apart."""
    if i % 50 == 7:  # flapping: 40 checks, a span each
        kinds, step = ["ok" if k % 2 else "failing" for k in range(40)], timedelta(hours=12)
    elif i % 20 == 3:  # gone
        kinds, step = ["ok", "ok", "failing", "dead"], timedelta(days=7)
    else:
        kinds, step = ["ok"] * (1 + i % 4), timedelta(days=7)
    end = datetime.fromisoformat(NOW)
    out: list[tuple[str, str, int | None, str]] = []
    for k, kind in enumerate(kinds):
        when = (end - step * (len(kinds) - 1 - k)).strftime("%Y-%m-%dT%H:%M:%SZ")
        if kind == "ok":
            out.append((when, kind, 200, "read"))
        else:
            out.append((when, kind, None, "DNS lookup failed: no results (1 failed read in a row)"))
    return out


def browser() -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=1280,900", "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader"):  # fmt: skip
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


PAINT = """
const done = arguments[arguments.length - 1];
const el = document.getElementById(arguments[0]);
const t0 = performance.now();
el.value = arguments[1];
el.dispatchEvent(new Event('input'));
requestAnimationFrame(() => requestAnimationFrame(() => done([performance.now() - t0,
  window.blogfeedsDirectory.matches().length, window.blogfeedsDirectory.lastMs])));
"""
POST_PAINT = """
const [q, done] = arguments;
const input = document.getElementById('post-q');
const t0 = performance.now();
document.addEventListener('blogfeeds:posts', () => requestAnimationFrame(() =>
  requestAnimationFrame(() => done([performance.now() - t0, window.blogfeedsPosts.matches(),
    window.blogfeedsPosts.lastMs, window.blogfeedsPosts.loaded.slice()]))), {once: true});
input.value = q;
input.dispatchEvent(new Event('input'));
"""
RANDOM = """
const [kind, done] = arguments;
const t0 = performance.now();
window.blogfeedsRandom.pick(kind).then(url => done([performance.now() - t0, url]));
"""
FRAMES = """
const done = arguments[arguments.length - 1];
let last = performance.now(), worst = 0, frames = 0; const end = last + arguments[0];
function task() { const now = performance.now(); worst = Math.max(worst, now - last); last = now;
  if (now < end) setTimeout(task, 10); else done([worst, frames, window.blogfeedsGraph.layout]); }
function frame() { frames++; if (performance.now() < end) requestAnimationFrame(frame); }
setTimeout(task, 10); requestAnimationFrame(frame);
"""
"""Longest gap between 10 ms timer tasks (a frozen main thread shows as a long gap) and the
frames painted, while the layout runs."""


def in_browser(site: Path) -> dict[str, Any]:
    driver = browser()
    out: dict[str, Any] = {}
    try:
        driver.set_script_timeout(120)
        t0 = time.monotonic()
        driver.get((site / "directory.html").as_uri())
        while not driver.execute_script("return !!window.blogfeedsDirectory"):
            time.sleep(0.05)
        out["directory_ready_s"] = time.monotonic() - t0
        out["directory_ready_in_page_ms"] = driver.execute_script(
            "return window.blogfeedsDirectory.readyMs"
        )
        searches = {}
        for q in ("blog 4", "garden coffee", "b012345", "zzz-nothing", "e", ""):
            ms, hits, filter_ms = driver.execute_async_script(PAINT, "q", q)
            searches[q or "(cleared)"] = {"ms_to_paint": round(ms, 1), "hits": hits,
                                          "filter_ms": round(filter_ms, 1)}  # fmt: skip
        out["searches"] = searches
        SHOTS.mkdir(parents=True, exist_ok=True)
        driver.execute_async_script(PAINT, "q", "garden")
        driver.save_screenshot(str(SHOTS / "bench-directory.png"))
        errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        t0 = time.monotonic()
        driver.get((site / "graph.html").as_uri())
        while not driver.execute_script("return !!window.blogfeedsGraph"):
            time.sleep(0.05)
        out["graph_ready_s"] = time.monotonic() - t0
        out["graph_ready_in_page_ms"] = driver.execute_script(
            "return window.blogfeedsGraph.readyMs"
        )
        worst, frames, mode = driver.execute_async_script(FRAMES, 8000)
        out["graph_layout"] = mode
        out["graph_longest_task_gap_ms_during_layout"] = round(worst, 1)
        out["graph_frames_painted_in_8_s_of_layout"] = frames
        while not driver.execute_script("return window.blogfeedsGraph.layoutDone"):
            time.sleep(0.5)
        out["graph_nodes"] = driver.execute_script("return window.blogfeedsGraph.graph.order")
        driver.save_screenshot(str(SHOTS / "bench-graph.png"))
        errors += [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        out.update(post_searches(driver, site))
        errors += [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        out["console_errors"] = errors
    finally:
        driver.quit()
    return out


def post_searches(driver: Any, site: Path) -> dict[str, Any]:
    """Each of :data:`POST_QUERIES` on a freshly opened river page; random draws."""
    searches = {}
    for q in POST_QUERIES:
        driver.get((site / "river.html").as_uri())
        ms, hits, search_ms, loaded = driver.execute_async_script(POST_PAINT, q)
        size = sum(Path(unquote(urlsplit(src).path)).stat().st_size for src in loaded)
        searches[q or "(cleared)"] = {"ms_to_paint": round(ms, 1), "hits": hits,
                                      "search_ms": round(search_ms, 1), "files": len(loaded),
                                      "kB_loaded": round(size / 1e3, 1)}  # fmt: skip
        if q == "garden":
            driver.save_screenshot(str(SHOTS / "bench-river-search.png"))
    posts = site / "data" / "posts"
    shards = [p.stat().st_size for p in posts.glob("s*.js")]
    rows = [p.stat().st_size for p in posts.glob("d*.js")]
    draws = {}
    for kind in ("blog", "post"):
        driver.get((site / "index.html").as_uri())
        ms, url = driver.execute_async_script(RANDOM, kind)
        draws[kind] = {"ms": round(ms, 1), "url": url}
    chances = [p.stat().st_size for p in (site / "data").glob("random-*.js")]
    return {
        "post_searches": searches,
        "post_index": {
            "MB_total": round((sum(shards) + sum(rows)) / 1e6, 1),
            "token_shards": len(shards),
            "MB_shards": round(sum(shards) / 1e6, 1),
            "kB_largest_shard": round(max(shards, default=0) / 1e3, 1),
            "row_chunks": len(rows),
            "MB_rows": round(sum(rows) / 1e6, 1),
            "kB_per_row_chunk": round(sum(rows) / max(len(rows), 1) / 1e3, 1),
            "kB_index": round((posts / "index.js").stat().st_size / 1e3, 1),
        },
        "random": {
            "draws": draws,
            "kB_totals": round((site / "data" / "random.js").stat().st_size / 1e3, 1),
            "shards": len(chances),
            "kB_largest_shard": round(max(chances, default=0) / 1e3, 1),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blogs", type=int, default=100_000)
    parser.add_argument("--links", type=int, default=6)
    parser.add_argument("--entries", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build the site here and keep it")
    parser.add_argument(
        "--build-only", action="store_true", help="build the site, skip the browser's figures"
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-site-"))
    try:
        db = tmp / "bench.sqlite3"
        t0 = time.monotonic()
        rows = generate(db, args.blogs, args.links, args.entries)
        print(f"generated {rows} in {time.monotonic() - t0:.1f} s", flush=True)
        url = f"sqlite:///{db}"
        t0, c0 = time.monotonic(), time.process_time()
        with FeedStore.open(url, read_only=True) as store:
            blogs, links = store.blogs(), store.friend_links()
            store.entries()
        read_s, read_cpu = time.monotonic() - t0, time.process_time() - c0
        from blogfeeds.commands.export import Filters, select, write_opml

        site = args.keep or tmp / "site"
        t0, c0 = time.monotonic(), time.process_time()
        with FeedStore.open(url, read_only=True) as store:
            blogs, every = store.blogs(), store.friend_links(removed=True)
            links = [link for link in every if not link["removed"]]
            data = load(store, select(blogs, links, Filters()), every)
        report = build_site(data, site, SiteOptions())
        with open(site / "feeds.opml", "wb") as fh:
            write_opml(data.blogs, fh, "bench")
        build_s, build_cpu = time.monotonic() - t0, time.process_time() - c0
        size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
        print(f"read the database: {read_s:.1f} s wall, {read_cpu:.1f} s CPU (reference)")
        print(f"build the site:    {build_s:.1f} s wall, {build_cpu:.1f} s CPU "
              f"({build_cpu / read_cpu:.1f} x the read); {report.line()}")  # fmt: skip
        print(f"site size: {size / 1e6:.0f} MB, directory data "
              f"{(site / 'data' / 'directory.js').stat().st_size / 1e6:.1f} MB, graph data "
              f"{(site / 'data' / 'graph.js').stat().st_size / 1e6:.1f} MB")  # fmt: skip
        if args.build_only:
            return 0
        figures = in_browser(site)
        print(json.dumps(figures, indent=1, ensure_ascii=False))
        slowest = max(s["ms_to_paint"] for s in figures["searches"].values())
        print(f"slowest directory search to paint: {slowest:.0f} ms (goal < 1000 ms)")
        posts = max(s["ms_to_paint"] for s in figures["post_searches"].values())
        print(f"slowest post search to paint: {posts:.0f} ms (goal < 1000 ms)")
        fast = slowest < 1000 and posts < 1000
        return 0 if fast and not figures["console_errors"] else 1
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            shutil.rmtree(tmp / "bench.sqlite3", ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
