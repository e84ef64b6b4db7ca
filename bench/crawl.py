"""``scrapy crawl blogs`` over a generated web of blogs on loopback, beside ``scrapy bench``.

The web is :class:`bench.web.BenchWeb`: ``--blogs`` fictional blogs (default 20,000) built
from the real blog sites of the shared corpus, whose friend pages link to each other, with
feeds, 404 blogs, redirects and slow hosts. The crawl starts from ``--seeds`` of them (default
one in 50) and runs with the project's settings except politeness, relaxed the same way for
every run: ``DOWNLOAD_DELAY=0``, AutoThrottle off, ``CONCURRENT_REQUESTS=--concurrency``
(per-domain concurrency stays 1: every blog is its own host). robots.txt is obeyed (and
counted), blogs are stored in a fresh SQLite database.

Runs, in one invocation: ``scrapy bench`` (Scrapy's own ceiling on this machine, run outside
the project so that its defaults apply), then the crawl on Scrapy's scheduler (``local``), then
on the Redis frontier (``redis``: ``REDIS_URL``, ``blogfeeds.frontier``; a private key
prefix, deleted afterwards). Printed per crawl: requests/min (requests answered by the web
over the span from the first to the last one), blogs stored per second, requests per blog
(median, mean and 95th percentile over the blogs requested; robots.txt, feed validation and
friend-page hops included), the crawl process's CPU time per blog and peak RSS, the web
server's CPU share, and the floors: requests/min ≥ 0.6 × ``scrapy bench``, Redis ≥ 0.8 ×
local, peak RSS ≤ 300 MB, 20,000 blogs within 30 minutes (time scaled to 20,000 blogs for
smaller runs).

Usage, from the repository root::

    python bench/crawl.py [--blogs 20000] [--mode both|local|redis] [--concurrency 32]
                          [--seeds N] [--no-scrapy-bench] [--redis-url URL] [--check]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import math
import os
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT))

from cpu_profile import RATE, Profile, read_raw, record_command  # noqa: E402
from web import BenchWeb, Counters, blog_url, load_templates, shared_dir  # noqa: E402

SCRAPY_BENCH_SHARE = 0.6
REDIS_SHARE = 0.8
RSS_LIMIT_MB = 300.0
FULL_BLOGS = 20_000
FULL_MINUTES = 30.0
_STAT = re.compile(r"^\s*'([^']+)': ([0-9.]+),?$", re.M)


def scrapy_bench(python: str, runs: int = 1) -> dict[str, float]:
    """``scrapy bench`` outside the project (Scrapy's defaults): the run with the median
    pages/min of ``runs``, its stats, and ``cpu_ms_per_page`` (Scrapy and its bench server)."""
    results = sorted(
        (_scrapy_bench_once(python) for _ in range(max(1, runs))), key=lambda r: r["pages_per_min"]
    )
    return results[len(results) // 2]


def _scrapy_bench_once(python: str) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory(prefix="scrapy-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        env.pop("SCRAPY_SETTINGS_MODULE", None)
        proc = subprocess.run(
            [python, "-m", "scrapy", "bench"],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    stats = {k: float(v) for k, v in _STAT.findall(proc.stderr)}
    pages = stats.get("response_received_count", 0.0)
    elapsed = stats.get("elapsed_time_seconds", 0.0)
    stats["pages_per_min"] = 60 * pages / elapsed if elapsed else 0.0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    stats["cpu_ms_per_page"] = 1000 * cpu / pages if pages else 0.0
    return stats


@dataclass
class Run:
    mode: str
    blogs_in_web: int
    seeds: int
    wall: float = 0.0
    span: float = 0.0
    requests: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    per_blog: list[int] = field(default_factory=list)
    gaps: list[float] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    redis_calls: dict[str, int] = field(default_factory=dict)
    stored: dict[str, int] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=dict)
    cpu: float = 0.0
    sys_cpu: float = 0.0
    """The part of :attr:`cpu` spent in the kernel (sockets, the GIL's futex, page faults)."""
    web_cpu: float = 0.0
    peak_rss_mb: float = 0.0
    load: float = 0.0
    returncode: int = 0
    log_tail: str = ""
    timed_out: bool = False
    source: str = ""
    """SHA-256 prefix of the project's Python sources when the crawl started."""
    results: str = ""
    """SHA-256 prefix of what the crawl stored (:func:`stored_results`)."""
    profile: Profile | None = None
    """Where the crawl's CPU went (``--profile``)."""

    @property
    def requests_per_min(self) -> float:
        return 60 * self.requests / self.span if self.span else 0.0

    @property
    def blogs(self) -> int:
        return sum(self.stored.values())

    @property
    def blogs_per_s(self) -> float:
        """Blogs stored per second of the span the web was busy (start-up and the Redis
        worker's idle wait before closing left out)."""
        return self.blogs / self.span if self.span else 0.0

    @property
    def minutes_for_full(self) -> float:
        return FULL_BLOGS / self.blogs_per_s / 60 if self.blogs_per_s else float("inf")


def _hwm_mb(pid: int) -> float:
    """Peak resident set (VmHWM) of a live process, in MB; 0 when gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def source_digest(project: Path) -> str:
    """The first 12 hex digits of a SHA-256 over ``project/blogfeeds/**/*.py`` (paths and
    contents, sorted): two crawls with the same digest ran the same code."""
    digest = hashlib.sha256()
    for path in sorted((project / "blogfeeds").rglob("*.py")):
        digest.update(str(path.relative_to(project)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


# Columns that say when or in which order a blog was reached, not what was read from it.
_UNSTABLE = {"id", "depth", "first_seen", "last_seen", "fetched_at", "checked_at", "next_check"}


def stored_results(con: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """What a crawl stored, per blog id: its ``blogs`` row, its feeds and its friend links
    (every column but :data:`_UNSTABLE`), rows sorted, so that two crawls of the same web by
    different code compare equal when they stored the same."""
    found: dict[str, dict[str, Any]] = {}
    for table, key in (
        ("blogs", "blog_id"),
        ("feeds", "blog_id"),
        ("friend_links", "source_blog_id"),
    ):
        try:
            cur = con.execute(f"SELECT * FROM {table}")
        except sqlite3.Error:
            continue
        names = [d[0] for d in cur.description]
        for row in cur:
            record = {n: v for n, v in zip(names, row, strict=True) if n not in _UNSTABLE}
            blog = found.setdefault(str(record[key]), {})
            if table == "blogs":
                blog["blog"] = record
            else:
                blog.setdefault(table, []).append(record)
    for blog in found.values():
        for table in ("feeds", "friend_links"):
            if table in blog:
                blog[table] = sorted(blog[table], key=repr)
    return dict(sorted(found.items()))


def _redis_calls(url: str) -> dict[str, int]:
    """Commands Redis has run so far, by name (``INFO commandstats``; every client counts)."""
    import redis

    try:
        info = redis.Redis.from_url(url).info("commandstats")
    except Exception:  # Redis down: the crawl itself reports it
        return {}
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in info.items()}


def _redis_cleanup(url: str, prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    keys = list(client.scan_iter(match=prefix + "*", count=1000))
    for i in range(0, len(keys), 500):
        client.delete(*keys[i : i + 500])


def crawl(
    web: BenchWeb,
    mode: str,
    *,
    seeds: int,
    concurrency: int,
    redis_url: str,
    python: str,
    timeout: float,
    log_dir: Path | None = None,
    logstats: int = 60,
    project: Path = ROOT,
    results_file: Path | None = None,
    profile_file: Path | None = None,
    extra_settings: dict[str, str] | None = None,
) -> Run:
    run = Run(mode, web.n, seeds)
    web.counters = Counters()
    with tempfile.TemporaryDirectory(prefix=f"crawl-{mode}-") as tmp_name:
        tmp = Path(tmp_name)
        seed_file = tmp / "seeds.txt"
        seed_file.write_text("".join(blog_url(i) + "\n" for i in range(seeds)))
        db = tmp / "blogs.sqlite3"
        env = web.env()
        env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{db}"
        env.pop("MYSQL_URL", None)
        env.pop("REDIS_URL", None)
        prefix = f"bench-{uuid.uuid4().hex[:8]}:"
        settings = {
            "DOWNLOAD_DELAY": "0",
            "AUTOTHROTTLE_ENABLED": "False",
            "CONCURRENT_REQUESTS": str(concurrency),
            "DEPTH_LIMIT": "3",
            "LOG_LEVEL": "INFO",
            "LOGSTATS_INTERVAL": str(logstats),
            "BLOGFEEDS_SPOOL_PATH": str(tmp / "spool.jsonl"),
        }
        if mode == "redis":
            env["REDIS_URL"] = redis_url
            env["BLOGFEEDS_REDIS_PREFIX"] = prefix
            env["BLOGFEEDS_WORKER_ID"] = f"bench-{os.getpid()}"
            settings["MAX_IDLE_TIME_BEFORE_CLOSE"] = "5"
        settings.update(extra_settings or {})
        cmd = [python, "-m", "scrapy", "crawl", "blogs", "-a", f"seeds={seed_file}"]
        for key, value in settings.items():
            cmd += ["-s", f"{key}={value}"]
        log = tmp / "crawl.log"
        calls0 = _redis_calls(redis_url) if mode == "redis" else {}
        run.source = source_digest(project)
        children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.monotonic()
        with log.open("w") as out:
            proc = subprocess.Popen(cmd, cwd=project, env=env, stdout=out, stderr=subprocess.STDOUT)
            spy = None
            if profile_file is not None:  # py-spy stops when the crawl exits
                with profile_file.with_name(profile_file.name + ".log").open("w") as spy_log:
                    spy = subprocess.Popen(
                        record_command(proc.pid, profile_file, py_spy() or "py-spy"),
                        stdout=spy_log,
                        stderr=subprocess.STDOUT,
                    )
            while proc.poll() is None:
                run.peak_rss_mb = max(run.peak_rss_mb, _hwm_mb(proc.pid))
                if time.monotonic() - t0 > timeout:
                    run.timed_out = True
                    proc.terminate()  # Scrapy shuts down gracefully: stats still dumped
                    try:
                        proc.wait(60)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    break
                time.sleep(0.5)
        run.wall = time.monotonic() - t0
        if mode == "redis":
            calls1 = _redis_calls(redis_url)
            run.redis_calls = {k: v - calls0.get(k, 0) for k, v in calls1.items()}
            run.redis_calls = {k: v for k, v in run.redis_calls.items() if v > 0}
        run.load = os.getloadavg()[1]  # 5-minute load average at the end
        run.returncode = proc.returncode
        children1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self1 = resource.getrusage(resource.RUSAGE_SELF)
        run.cpu = (children1.ru_utime + children1.ru_stime) - (
            children0.ru_utime + children0.ru_stime
        )
        run.sys_cpu = children1.ru_stime - children0.ru_stime
        run.web_cpu = (self1.ru_utime + self1.ru_stime) - (self0.ru_utime + self0.ru_stime)
        if spy is not None and profile_file is not None:  # waited for after the CPU is read
            run.profile = _read_profile(spy, profile_file)
        text = log.read_text(errors="replace")
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
            (log_dir / f"crawl-{mode}.log").write_text(text)
        run.log_tail = text[-3000:]
        dump = text.rfind("Dumping Scrapy stats")
        run.stats = {k: float(v) for k, v in _STAT.findall(text[dump:] if dump >= 0 else "")}
        run.peak_rss_mb = max(run.peak_rss_mb, run.stats.get("memusage/max", 0) / 2**20)
        c = web.counters
        run.requests = c.total
        run.span = (c.last - c.first) if c.total > 1 else 0.0
        run.statuses = dict(c.per_status)
        run.per_blog = list(c.per_blog.values())
        run.gaps = list(c.gaps)
        if db.is_file():
            with contextlib.closing(sqlite3.connect(db)) as con:
                run.stored = dict(
                    con.execute("SELECT status, COUNT(*) FROM blogs GROUP BY status").fetchall()
                )
                for table in ("blogs", "feeds", "friend_links"):
                    with contextlib.suppress(sqlite3.Error):
                        run.rows[table] = con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                lines = [
                    json.dumps({"blog_id": k, **v}, sort_keys=True, ensure_ascii=False)
                    for k, v in stored_results(con).items()
                ]
            run.results = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]
            if results_file is not None:
                results_file.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        if mode == "redis":
            with contextlib.suppress(Exception):
                _redis_cleanup(redis_url, prefix)
    return run


def py_spy() -> str | None:
    """py-spy beside this interpreter (the virtualenv's), else on ``PATH``."""
    here = shutil.which("py-spy", path=str(Path(sys.executable).parent))
    return here or shutil.which("py-spy")


def _read_profile(spy: subprocess.Popen[bytes], raw: Path) -> Profile | None:
    """What py-spy recorded, once it ended with the crawl; None (said on stderr) when it
    recorded nothing: the crawl's own figures are kept either way."""
    try:
        spy.wait(60)
    except subprocess.TimeoutExpired:
        spy.kill()
        spy.wait()
    try:
        with raw.open(encoding="utf-8", errors="replace") as lines:
            profile = Profile.of(read_raw(lines))
    except OSError:
        profile = None
    if profile is None or not profile.total:
        print(f"py-spy recorded nothing (see {raw}.log)", file=sys.stderr)
        return None
    return profile


def _percentile(values: list[int], pct: float) -> float:
    """The ``pct``-th percentile of ``values`` (nearest rank)."""
    ranked = sorted(values)
    return float(ranked[max(0, math.ceil(len(ranked) * pct / 100) - 1)]) if ranked else 0.0


def report(run: Run, bench_ppm: float, local: Run | None) -> list[str]:
    """Print one crawl's figures; return its failed floors."""
    per_blog = run.per_blog or [0]
    ratio = run.requests_per_min / bench_ppm if bench_ppm else 0.0
    print(f"--- crawl on the {run.mode} scheduler ---")
    print(
        f"blogs in the web {run.blogs_in_web}, seeds {run.seeds}; "
        f"blogs stored {run.blogs} {dict(sorted(run.stored.items()))}"
    )
    print(
        f"wall {run.wall:.0f} s, request span {run.span:.0f} s; requests {run.requests} "
        f"(statuses {dict(sorted(run.statuses.items()))})"
    )
    print(
        f"requests/min {run.requests_per_min:.0f} = "
        + (f"{ratio:.2f} x scrapy bench; " if bench_ppm else "(scrapy bench not run); ")
        + f"blogs/s {run.blogs_per_s:.2f}; 20,000 blogs in {run.minutes_for_full:.1f} min"
    )
    print(
        f"requests per blog: median {statistics.median(per_blog):.0f}, "
        f"mean {statistics.fmean(per_blog):.2f}, p95 {_percentile(per_blog, 95):.0f} "
        f"(over {len(run.per_blog)} blogs requested)"
    )
    blogs = max(run.blogs, 1)
    print(
        f"crawl CPU {run.cpu:.0f} s ({1000 * run.cpu / blogs:.0f} ms per blog, "
        f"{1000 * run.cpu / max(run.requests, 1):.1f} ms per request, "
        f"{100 * run.sys_cpu / run.cpu if run.cpu else 0:.0f}% of it in the kernel, "
        f"{100 * run.cpu / run.wall if run.wall else 0:.0f}% of one core); web server CPU "
        f"{run.web_cpu:.0f} s ({100 * run.web_cpu / run.wall if run.wall else 0:.0f}% of one core)"
    )
    print(
        f"on one whole core: 20,000 blogs in {FULL_BLOGS * run.cpu / blogs / 60:.1f} min of CPU; "
        f"machine load (5-min average) {run.load:.1f} on {os.cpu_count()} cores"
    )
    if run.rows:
        print(
            "rows written per blog stored: "
            + ", ".join(f"{t} {n / blogs:.2f}" for t, n in sorted(run.rows.items()))
        )
    if run.redis_calls:
        total = sum(run.redis_calls.values())
        top = sorted(run.redis_calls.items(), key=lambda kv: -kv[1])[:6]
        print(
            f"Redis commands per blog stored: {total / blogs:.1f} ("
            + ", ".join(f"{k} {v / blogs:.1f}" for k, v in top)
            + "; every client of this Redis counts)"
        )
    if run.gaps:
        gaps = sorted(run.gaps)
        median, p90 = gaps[len(gaps) // 2], gaps[int(0.9 * (len(gaps) - 1))]
        print(
            "crawler turnaround between a blog's answer and its next request: median "
            f"{1000 * median:.0f} ms, p90 {1000 * p90:.0f} ms"
        )
    print(
        f"peak RSS {run.peak_rss_mb:.0f} MB; exit status {run.returncode}; "
        f"project sources {run.source}; stored results {run.results}"
    )
    if run.profile is not None:
        print("\n".join(run.profile.report(1000 * run.cpu / blogs)))
        seconds = run.profile.total / RATE
        print(
            f"py-spy seconds per CPU second: {seconds / run.cpu if run.cpu else 0:.2f} "
            "(over 1: the crawl waited for a core, and the shares are less sure)"
        )
    failures = []
    if run.timed_out:
        failures.append(f"{run.mode}: stopped after the --timeout of {run.wall:.0f} s")
    if run.returncode != 0 or not run.blogs:
        failures.append(f"{run.mode}: the crawl failed (see its log)")
        print(run.log_tail, file=sys.stderr)
    if bench_ppm and ratio < SCRAPY_BENCH_SHARE:
        failures.append(
            f"{run.mode}: requests/min {ratio:.2f} x scrapy bench < {SCRAPY_BENCH_SHARE}"
        )
    if run.peak_rss_mb > RSS_LIMIT_MB:
        failures.append(f"{run.mode}: peak RSS {run.peak_rss_mb:.0f} MB > {RSS_LIMIT_MB:g}")
    if run.minutes_for_full > FULL_MINUTES:
        failures.append(
            f"{run.mode}: 20,000 blogs in {run.minutes_for_full:.1f} min > {FULL_MINUTES:g}"
        )
    if local is not None and local.requests_per_min:
        share = run.requests_per_min / local.requests_per_min
        same = "same" if run.source == local.source else "DIFFERENT (edited between the crawls)"
        print(f"redis / local requests/min: {share:.2f} ({same} project sources)")
        if share < REDIS_SHARE:
            failures.append(f"redis: {share:.2f} x local < {REDIS_SHARE}")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", help="the shared reference folder")
    parser.add_argument("--blogs", type=int, default=FULL_BLOGS)
    parser.add_argument("--seeds", type=int, default=0, help="default: blogs / 50")
    parser.add_argument("--mode", choices=("both", "local", "redis"), default="both")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument(
        "--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    )
    parser.add_argument("--no-scrapy-bench", action="store_true")
    parser.add_argument("--bench-runs", type=int, default=3, help="scrapy bench runs (median)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds per crawl")
    parser.add_argument(
        "--project", type=Path, default=ROOT, help="crawl with the project in this folder"
    )
    parser.add_argument("--log-dir", type=Path, help="keep each crawl's log in this folder")
    parser.add_argument(
        "--results",
        type=Path,
        help="write what each crawl stored, a JSON line per blog, to FILE.<mode>.jsonl "
        "(to diff two crawls of the same web)",
    )
    parser.add_argument("--logstats", type=int, default=60, help="LOGSTATS_INTERVAL, seconds")
    parser.add_argument(
        "--profile",
        type=Path,
        help="record each crawl with py-spy into FILE.<mode>.raw and print where its CPU went "
        "(bench/cpu_profile.py)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Scrapy setting for each crawl (repeatable), e.g. BLOGFEEDS_ABSTRACT_CHARS=0",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a floor fails")
    args = parser.parse_args(argv)
    extra = dict(item.split("=", 1) for item in args.set if "=" in item)
    if len(extra) != len(args.set):
        parser.error("--set takes NAME=VALUE")
    logging.disable(logging.WARNING)
    shared = shared_dir(args.shared)
    if not (shared / "corpus" / "replay_urls.tsv").is_file():
        print(f"missing {shared / 'corpus'}", file=sys.stderr)
        return 2
    python = sys.executable
    if args.profile and not py_spy():
        print("--profile needs py-spy (pip install -r requirements-dev.txt)", file=sys.stderr)
        return 2
    if args.profile:
        args.profile.parent.mkdir(parents=True, exist_ok=True)
    seeds = args.seeds or max(1, args.blogs // 50)

    from extract import machine

    print(f"machine: {machine()}")
    bench_ppm = 0.0
    if not args.no_scrapy_bench:
        stats = scrapy_bench(python, args.bench_runs)
        bench_ppm = stats["pages_per_min"]
        print(
            f"scrapy bench (median of {args.bench_runs}): {bench_ppm:.0f} pages/min "
            f"({stats.get('response_received_count', 0):.0f} pages in "
            f"{stats.get('elapsed_time_seconds', 0):.1f} s, {stats['cpu_ms_per_page']:.1f} ms CPU "
            f"per page with its server); floor for the crawl: "
            f"{SCRAPY_BENCH_SHARE * bench_ppm:.0f} requests/min"
        )
    templates = load_templates(shared / "corpus", shared / "cases")
    print(f"web: {args.blogs} blogs from {len(templates)} real site templates")
    failures: list[str] = []
    local: Run | None = None
    with BenchWeb(templates, args.blogs) as web:
        modes = ["local", "redis"] if args.mode == "both" else [args.mode]
        for mode in modes:
            run = crawl(
                web,
                mode,
                seeds=seeds,
                concurrency=args.concurrency,
                redis_url=args.redis_url,
                python=python,
                timeout=args.timeout,
                log_dir=args.log_dir,
                logstats=args.logstats,
                project=args.project,
                results_file=args.results.with_suffix(f".{mode}.jsonl") if args.results else None,
                profile_file=Path(f"{args.profile}.{mode}.raw") if args.profile else None,
                extra_settings=extra,
            )
            failures += report(run, bench_ppm, local if mode == "redis" else None)
            if mode == "local":
                local = run
    print("floors: " + ("all hold" if not failures else "FAIL: " + "; ".join(failures)))
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
