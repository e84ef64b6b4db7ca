"""The cost of a re-check: ``scrapy crawl blogs -a recheck=all`` of unchanged blogs, with the
project's default settings (robots.txt obeyed), on the generated web of ``bench/crawl.py``.

The web is :class:`bench.web.BenchWeb` with validators, as the real web has them for some
blogs: the even blogs send an ``ETag`` and a ``Last-Modified`` with every page and answer a
matching conditional GET with 304; the odd ones send none (the re-check tells them unchanged
by the page's bytes). One blog in three serves a robots.txt (a ``Disallow`` of a path nothing
links to; with an ``ETag`` when the blog is even), the others answer 404. Nothing changes
between the crawls.

Steps: a first crawl of ``--blogs`` blogs (every blog a seed) into a fresh SQLite database,
then the re-check of them all, measured: requests per blog re-checked (the web's answers
during the re-check over ``blogfeeds/recheck/due``), by kind (home page 200 / 304 / other,
robots.txt, feeds, friend pages, other paths), the share of home pages answered 304, the
re-check process's peak RSS, wall time and CPU per blog. Then, as the reference in the same
run (``--no-reference`` skips it), the same re-check without the robots.txt cache
(``BLOGFEEDS_ROBOTS_MAX_AGE_HOURS=0``: every host's robots.txt asked again, as before it).

Floors (issue 37), exit 1 when one fails: at most 1.5 requests per blog re-checked, peak RSS at
most 300 MB.

Usage, from the repository root::

    python bench/recheck.py [--blogs 10000] [--concurrency 32] [--no-reference] [--log-dir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT))

from web import _HOST, BenchWeb, Template, blog_url, load_templates, shared_dir  # noqa: E402

MAX_REQUESTS_PER_BLOG = 1.5
RSS_LIMIT_MB = 300.0
FULL_BLOGS = 10_000
LAST_MODIFIED = "Sun, 01 Nov 2026 00:00:00 GMT"
ROBOTS = b"User-agent: *\nDisallow: /private/\n"
KINDS = (
    "home 200",
    "home 304",
    "home other",
    "robots.txt",
    "feeds",
    "friend pages",
    "other",
)
_STAT = re.compile(r"^\s*'([^']+)': ([0-9.]+),?$", re.M)


class RecheckWeb(BenchWeb):
    """:class:`~bench.web.BenchWeb` with validators on the even blogs, robots.txt on one blog
    in three, and a tally of the answers by kind (:data:`KINDS`)."""

    def __init__(self, templates: list[Template], n: int) -> None:
        super().__init__(templates, n)
        self.tally: Counter[str] = Counter()

    def answer(
        self, url: str, headers: Mapping[str, str]
    ) -> tuple[int, list[tuple[str, str]], bytes, float]:
        status, extra, body, delay = super().answer(url, headers)
        parts = urlsplit(url)
        path = parts.path or "/"
        m = _HOST.match((parts.hostname or "").lower())
        i = int(m.group(1)) if m else -1
        if 0 <= i < self.n and self.kind(i) != "gone":
            if path == "/robots.txt" and i % 3 == 0:
                status, extra, body = 200, [("Content-Type", "text/plain")], ROBOTS
            if status == 200 and i % 2 == 0:
                etag = f'"{hashlib.sha1(body, usedforsecurity=False).hexdigest()[:16]}"'
                extra = [*extra, ("ETag", etag), ("Last-Modified", LAST_MODIFIED)]
                asked = headers.get("if-none-match")
                if asked == etag or (asked is None and headers.get("if-modified-since")):
                    status, body = 304, b""  # never modified since LAST_MODIFIED
        self.tally[self._kind(i, path, status)] += 1
        return status, extra, body, delay

    def _kind(self, i: int, path: str, status: int) -> str:
        if path == "/":
            return f"home {status}" if status in (200, 304) else "home other"
        if path == "/robots.txt":
            return "robots.txt"
        if 0 <= i < self.n:
            template = self.template(i)
            if path in template.feeds:
                return "feeds"
            if path in template.pages:
                return "friend pages"
        return "other"


@dataclass
class Crawl:
    """One crawl process: what it cost and what the web answered meanwhile."""

    name: str
    wall: float = 0.0
    cpu: float = 0.0
    peak_rss_mb: float = 0.0
    returncode: int = 0
    stats: dict[str, float] = field(default_factory=dict)
    tally: Counter[str] = field(default_factory=Counter)
    log_tail: str = ""

    @property
    def requests(self) -> int:
        return sum(self.tally.values())


def _hwm_mb(pid: int) -> float:
    """Peak resident set (VmHWM) of a live process, in MB; 0 when gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def run_crawl(
    web: RecheckWeb,
    name: str,
    database: Path,
    args: list[str],
    settings: dict[str, str],
    *,
    timeout: float,
    log_dir: Path | None,
) -> Crawl:
    crawl = Crawl(name)
    web.tally = Counter()
    env = web.env()
    env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{database}"
    for name_ in ("MYSQL_URL", "REDIS_URL"):
        env.pop(name_, None)
    cmd = [sys.executable, "-m", "scrapy", "crawl", "blogs", *args]
    for key, value in settings.items():
        cmd += ["-s", f"{key}={value}"]
    slug = name.split(maxsplit=1)[0]
    log = database.with_name(f"{slug}.log")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        while proc.poll() is None:
            crawl.peak_rss_mb = max(crawl.peak_rss_mb, _hwm_mb(proc.pid))
            if time.monotonic() - t0 > timeout:
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                break
            time.sleep(0.2)
    crawl.wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    crawl.cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    crawl.returncode = proc.returncode
    text = log.read_text(errors="replace")
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        (log_dir / f"recheck-{slug}.log").write_text(text)
    crawl.log_tail = text[-3000:]
    dump = text.rfind("Dumping Scrapy stats")
    crawl.stats = {k: float(v) for k, v in _STAT.findall(text[dump:] if dump >= 0 else "")}
    crawl.peak_rss_mb = max(crawl.peak_rss_mb, crawl.stats.get("memusage/max", 0) / 2**20)
    crawl.tally = Counter(web.tally)
    return crawl


def report(crawl: Crawl) -> tuple[float, list[str]]:
    """Print the re-check's cost; (requests per blog, lines)."""
    due = int(crawl.stats.get("blogfeeds/recheck/due", 0))
    per_blog = crawl.requests / due if due else float("inf")
    homes = sum(crawl.tally[k] for k in ("home 200", "home 304", "home other"))
    lines = [
        f"{crawl.name}: {due} blogs re-checked, {crawl.requests} requests, "
        f"{per_blog:.3f} per blog, in {crawl.wall:.1f} s, {1000 * crawl.cpu / max(due, 1):.1f} ms "
        f"CPU per blog, peak RSS {crawl.peak_rss_mb:.0f} MB (exit {crawl.returncode})",
        "  per blog by kind: "
        + ", ".join(f"{k} {crawl.tally[k] / max(due, 1):.3f}" for k in KINDS),
        f"  home pages answered 304: {crawl.tally['home 304'] / max(homes, 1):.1%}",
        "  robots.txt cache: "
        + ", ".join(
            f"{k.rsplit('/', 1)[1]} {int(v)}"
            for k, v in sorted(crawl.stats.items())
            if k.startswith("blogfeeds/robots_txt_cache/")
        ),
    ]
    for line in lines:
        print(line)
    return per_blog, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", help="the shared reference folder")
    parser.add_argument("--blogs", type=int, default=FULL_BLOGS)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per crawl")
    parser.add_argument("--no-reference", action="store_true", help="skip the cache-off run")
    parser.add_argument("--log-dir", type=Path, help="keep each crawl's log in this folder")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    shared = shared_dir(args.shared)
    if not (shared / "corpus" / "replay_urls.tsv").is_file():
        print(f"missing {shared / 'corpus'}", file=sys.stderr)
        return 2
    from extract import machine

    print(f"machine: {machine()}, load {os.getloadavg()[0]:.1f}")
    templates = load_templates(shared / "corpus", shared / "cases")
    print(f"web: {args.blogs} blogs from {len(templates)} real site templates")
    # Politeness relaxed as in bench/crawl.py (every blog is its own host); robots.txt obeyed.
    settings = {
        "DOWNLOAD_DELAY": "0",
        "AUTOTHROTTLE_ENABLED": "False",
        "CONCURRENT_REQUESTS": str(args.concurrency),
        "LOG_LEVEL": "INFO",
        "LOGSTATS_INTERVAL": "60",
    }
    failures: list[str] = []
    with (
        RecheckWeb(templates, args.blogs) as web,
        tempfile.TemporaryDirectory(prefix="recheck-") as tmp_name,
    ):
        tmp = Path(tmp_name)
        database = tmp / "blogs.sqlite3"
        seeds = tmp / "seeds.txt"
        seeds.write_text("".join(blog_url(i) + "\n" for i in range(args.blogs)))
        settings["BLOGFEEDS_SPOOL_PATH"] = str(tmp / "spool.jsonl")
        first = run_crawl(
            web,
            "first",
            database,
            ["-a", f"seeds={seeds}"],
            settings,
            timeout=args.timeout,
            log_dir=args.log_dir,
        )
        print(
            f"first crawl: {int(first.stats.get('blogfeeds/db/blogs_written', 0))} blogs written, "
            f"{first.requests} requests in {first.wall:.1f} s, peak RSS {first.peak_rss_mb:.0f} MB"
        )
        if first.returncode != 0:
            print(first.log_tail, file=sys.stderr)
            return 2
        recheck = run_crawl(
            web,
            "recheck",
            database,
            ["-a", "recheck=all"],
            settings,
            timeout=args.timeout,
            log_dir=args.log_dir,
        )
        per_blog, _ = report(recheck)
        if recheck.returncode != 0:
            failures.append(f"the re-check exited {recheck.returncode}")
            print(recheck.log_tail, file=sys.stderr)
        if per_blog > MAX_REQUESTS_PER_BLOG:
            failures.append(f"{per_blog:.3f} requests per blog > {MAX_REQUESTS_PER_BLOG}")
        if recheck.peak_rss_mb > RSS_LIMIT_MB:
            failures.append(f"peak RSS {recheck.peak_rss_mb:.0f} MB > {RSS_LIMIT_MB:.0f} MB")
        if not args.no_reference:
            reference = run_crawl(
                web,
                "reference (robots.txt cache off)",
                database,
                ["-a", "recheck=all"],
                {**settings, "BLOGFEEDS_ROBOTS_MAX_AGE_HOURS": "0"},
                timeout=args.timeout,
                log_dir=args.log_dir,
            )
            reference_per_blog, _ = report(reference)
            print(
                f"requests per blog: {per_blog / reference_per_blog:.2f}x the re-check without "
                "the robots.txt cache"
            )
    print("floors: " + ("all hold" if not failures else "FAIL: " + "; ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
