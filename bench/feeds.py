"""``scrapy crawl feeds`` over ``--feeds`` feeds on loopback (mostly 304s), beside ``scrapy bench``.

The web is :class:`bench.web.FeedWeb`: one RSS feed per fictional host
(``http://feed00042.example/feed.xml``), each with an ``ETag``. A fresh SQLite database (with
``--mysql``: a throwaway database on the MariaDB of ``tests.blogosphere``, dropped afterwards,
where the worker claims its batches in a thread) holds one blog per feed (as ``scrapy crawl
blogs`` stores them). Two runs at virtual times (``BLOGFEEDS_NOW``), initial revisit interval
200 min as in ``tests/test_crawl_feeds.py``:

1. T0: every feed fetched for the first time (200, ETag stored);
2. T0 + 4 h: every feed due again, fetched with a conditional GET; one feed in
   ``--changed-every`` (default 10) has a new version (200, one more item), the rest answer 304.

Politeness is relaxed as in ``bench/crawl.py`` (``DOWNLOAD_DELAY=0``, AutoThrottle off,
``CONCURRENT_REQUESTS=--concurrency``); robots.txt is obeyed and its requests are counted
apart. Printed per run: feeds/min (feed requests answered over the span from the first to the
last one), requests/min with robots.txt, statuses, the crawl process's CPU per feed, the web
server's CPU share, peak RSS, and feeds/min as a ratio to ``scrapy bench`` in the same
invocation (median of ``--bench-runs``). No floor: exit status 1 only when a crawl fails.

Usage, from the repository root::

    python bench/feeds.py [--feeds 10000] [--changed-every 10] [--concurrency 32] [--mysql]
                          [--bench-runs 3] [--no-scrapy-bench] [--log-dir DIR] [-s NAME=VALUE]
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT))

from crawl import _STAT, _hwm_mb, scrapy_bench  # noqa: E402
from web import Counters, FeedWeb, feed_url  # noqa: E402

from blogfeeds.items import Blog, FeedInfo  # noqa: E402
from blogfeeds.storage.feedstore import FeedStore, iso, iso_minutes  # noqa: E402
from tests.blogosphere import throwaway_database  # noqa: E402

T0 = iso_minutes("2024-03-04T00:00:00Z")
HOUR = 60.0
RSS = "application/rss+xml"


def seed_database(url: str, n: int) -> None:
    blogs = [
        Blog(
            blog_id=f"feed{i:05d}.example",
            url=f"http://feed{i:05d}.example/",
            feed_url=feed_url(i),
            feeds=[FeedInfo(feed_url(i), RSS)],
            fetched_at="2024-03-01T00:00:00Z",
        )
        for i in range(n)
    ]
    with FeedStore.open(url) as store:
        for start in range(0, n, 1000):
            store.write(blogs[start : start + 1000], [])


def run(
    web: FeedWeb,
    url: str,
    now: float,
    *,
    concurrency: int,
    python: str,
    log_file: Path | None = None,
    extra: list[str] | None = None,
) -> dict[str, float]:
    web.counters = Counters()
    env = web.env()
    env["BLOGFEEDS_DATABASE_URL"] = url
    env.pop("MYSQL_URL", None)
    env.pop("REDIS_URL", None)
    cmd = [
        python, "-m", "scrapy", "crawl", "feeds",
        "-s", f"BLOGFEEDS_NOW={iso(now)}", "-s", "BLOGFEEDS_REVISIT_INITIAL_T=200",
        "-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False",
        "-s", f"CONCURRENT_REQUESTS={concurrency}", "-s", "LOG_LEVEL=INFO",
        "-s", "LOGSTATS_INTERVAL=10",
    ]  # fmt: skip
    for setting in extra or ():
        cmd += ["-s", setting]
    with tempfile.TemporaryFile("w+") as log:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        web0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        peak = 0.0
        while proc.poll() is None:
            peak = max(peak, _hwm_mb(proc.pid))
            time.sleep(0.5)
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        web1 = resource.getrusage(resource.RUSAGE_SELF)
        log.seek(0)
        text = log.read()
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        log_file.write_text(text)
    dump = text.rfind("Dumping Scrapy stats")
    stats = {k: float(v) for k, v in _STAT.findall(text[dump:] if dump >= 0 else "")}
    c = web.counters
    span = (c.last - c.first) if c.total > 1 else 0.0
    feeds = sum(c.per_blog.values())
    out = {
        "returncode": float(proc.returncode),
        "wall": wall,
        "span": span,
        "feeds": float(feeds),
        "requests": float(c.total),
        "not_modified": float(c.per_kind.get("not_modified", 0)),
        "full": float(c.per_kind.get("full", 0)),
        "feeds_per_min": 60 * feeds / span if span else 0.0,
        "requests_per_min": 60 * c.total / span if span else 0.0,
        "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "web_cpu": (web1.ru_utime + web1.ru_stime) - (web0.ru_utime + web0.ru_stime),
        "peak_rss_mb": max(peak, stats.get("memusage/max", 0) / 2**20),
        "new_entries": stats.get("blogfeeds/feeds/new_entries", 0.0),
    }
    if proc.returncode != 0 or "Traceback" in text:
        print(text[-3000:], file=sys.stderr)
    return out


def show(label: str, r: dict[str, float], bench_ppm: float) -> None:
    ratio = r["feeds_per_min"] / bench_ppm if bench_ppm else 0.0
    feeds = max(r["feeds"], 1.0)
    print(
        f"{label}: {r['feeds']:.0f} feeds ({r['full']:.0f} x 200, {r['not_modified']:.0f} x 304), "
        f"{r['requests']:.0f} requests with robots.txt; {r['new_entries']:.0f} new entries stored"
    )
    print(
        f"  feeds/min {r['feeds_per_min']:.0f} = {ratio:.2f} x scrapy bench; requests/min "
        f"{r['requests_per_min']:.0f}; wall {r['wall']:.0f} s (span {r['span']:.0f} s)"
    )
    wall = max(r["wall"], 1e-9)
    print(
        f"  crawl CPU {1000 * r['cpu'] / feeds:.1f} ms per feed ({100 * r['cpu'] / wall:.0f}% of "
        f"one core); web server CPU {100 * r['web_cpu'] / wall:.0f}% of one core; peak RSS "
        f"{r['peak_rss_mb']:.0f} MB; exit status {r['returncode']:.0f}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--feeds", type=int, default=10_000)
    parser.add_argument("--changed-every", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--mysql", action="store_true", help="MariaDB instead of SQLite")
    parser.add_argument("--no-scrapy-bench", action="store_true")
    parser.add_argument("--bench-runs", type=int, default=3, help="scrapy bench runs (median)")
    parser.add_argument("--log-dir", type=Path, help="keep each run's log in this folder")
    parser.add_argument(
        "-s",
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an extra Scrapy setting for both runs (e.g. BLOGFEEDS_FEEDS_BATCH=1000)",
    )
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    if not (ROOT / "blogfeeds" / "spiders" / "feeds.py").is_file():
        print("no feeds spider (blogfeeds/spiders/feeds.py)", file=sys.stderr)
        return 2
    from extract import machine

    python = sys.executable
    print(f"machine: {machine()}")
    if args.set:
        print("extra settings: " + " ".join(args.set))
    bench_ppm = 0.0
    if not args.no_scrapy_bench:
        bench_ppm = scrapy_bench(python, args.bench_runs)["pages_per_min"]
        print(f"scrapy bench (median of {args.bench_runs}): {bench_ppm:.0f} pages/min")
    with contextlib.ExitStack() as stack:
        if args.mysql:
            db = stack.enter_context(throwaway_database("bench_feeds"))
        else:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-feeds-"))
            db = f"sqlite:///{Path(tmp) / 'feeds.sqlite3'}"
        print(f"database: {db.split(':', 1)[0]}")
        t0 = time.monotonic()
        seed_database(db, args.feeds)
        print(f"database: {args.feeds} blogs with a feed, written in {time.monotonic() - t0:.0f} s")
        with FeedWeb(args.feeds, changed_every=args.changed_every) as web:
            logs = args.log_dir
            common = {"concurrency": args.concurrency, "python": python, "extra": args.set}
            first = run(web, db, T0, log_file=logs and logs / "feeds-run1.log", **common)
            show("run 1 (T0, first fetch)", first, bench_ppm)
            web.bump = 1
            second = run(
                web, db, T0 + 4 * HOUR, log_file=logs and logs / "feeds-run2.log", **common
            )
            show("run 2 (T0 + 4 h, conditional GETs)", second, bench_ppm)
    return 0 if first["returncode"] == 0 and second["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
