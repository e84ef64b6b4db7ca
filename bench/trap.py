"""A crawler trap on loopback: ``scrapy crawl blogs`` with the default settings (no depth limit)
over a web whose every blog invents new blogs, and its memory over time.

The web (:class:`TrapWeb`, a loopback forward proxy like :class:`bench.web.BenchWeb`) answers
any host of its trap: every home page lists ``--fanout`` friends that did not exist before,
named from a hash of the page's own host, and links an RSS feed, so the friend graph is an
infinite tree. ``--trap suffix`` (the default; the attack of issue 18) puts every blog under a
public suffix, ``t<hash>.github.io``, so each is a registered domain of its own to the PSL;
``--trap domains`` invents registered domains, ``t<hash>.com`` (no per-domain cap can tell
them from a real blogosphere: only the frontier's own bounds hold).

The crawl runs with the project's settings (``DEPTH_LIMIT=0``, politeness included) from one
seed for ``--minutes``, then is stopped with SIGTERM (Scrapy closes gracefully: stats dumped).
Every ``--every`` seconds the bench samples the crawl process's RSS (``/proc``) and prints it
with the pages answered by the web and the frontier size the crawl logs; the run ends with the
peak RSS, the final stats about caps and the floor: peak RSS ≤ 300 MB (issue 18).

Usage, from the repository root::

    python bench/trap.py [--minutes 2] [--trap suffix|domains] [--fanout 20] [--jobdir]
                         [--redis-url URL] [--every 10] [-s NAME=VALUE ...]

``--jobdir`` gives the crawl a ``JOBDIR`` (disk queues); ``--redis-url`` crawls on the Redis
frontier (a private key prefix, deleted afterwards).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT))

from web import BenchWeb, Template  # noqa: E402

RSS_LIMIT_MB = 300.0
SUFFIXES = {"suffix": "github.io", "domains": "com"}
_HOST = re.compile(r"^t([0-9a-f]{1,16})\.(github\.io|com)$")
_PENDING = re.compile(r"frontier (\d+) blogs queued, (\d+) fetched")
_STAT = re.compile(r"^\s*'([^']+)': ([0-9.]+),?$", re.M)


def child(host: str, j: int, suffix: str) -> str:
    return f"t{hashlib.sha1(f'{host}/{j}'.encode()).hexdigest()[:12]}.{suffix}"


class TrapWeb(BenchWeb):
    """Every host of the trap is a blog listing ``fanout`` new ones (module doc)."""

    def __init__(self, suffix: str, fanout: int):
        super().__init__([Template("trap")], 0)
        self.suffix = suffix
        self.fanout = fanout

    def answer(
        self, url: str, headers: Mapping[str, str]
    ) -> tuple[int, list[tuple[str, str]], bytes, float]:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        self.counters.per_kind["all"] += 1
        if not _HOST.match(host):
            return 404, [("Content-Type", "text/plain")], b"no such blog\n", 0.0
        if parts.path == "/feed.xml":
            self.counters.per_kind["feed"] += 1
            body = (
                f'<?xml version="1.0"?><rss version="2.0"><channel><title>{host}</title>'
                f"<link>http://{host}/</link><item><title>Post</title>"
                f"<link>http://{host}/1/</link></item></channel></rss>"
            )
            return 200, [("Content-Type", "application/rss+xml")], body.encode(), 0.0
        if parts.path not in ("", "/"):
            return 404, [("Content-Type", "text/html")], b"<h1>Not Found</h1>", 0.0
        self.counters.per_kind["home"] += 1
        friends = "\n".join(
            f'<li><a href="http://{child(host, j, self.suffix)}/">Friend {j}</a></li>'
            for j in range(self.fanout)
        )
        body = (
            f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>Blog {host}</title>'
            '<link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body>'
            f"<main><h1>{host}</h1><p>Notes on crawling.</p></main>"
            f'<section><h2>友情链接</h2><ul class="flink-list">{friends}</ul></section>'
            "</body></html>"
        )
        return 200, [("Content-Type", "text/html; charset=utf-8")], body.encode(), 0.0


def rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and its children? Only ``pid``: ``VmRSS`` in MB."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=2.0)
    ap.add_argument("--trap", choices=sorted(SUFFIXES), default="suffix")
    ap.add_argument("--fanout", type=int, default=20)
    ap.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    ap.add_argument("--jobdir", action="store_true", help="crawl with a JOBDIR (disk queues)")
    ap.add_argument("--redis-url", default="", help="crawl on the Redis frontier")
    ap.add_argument("-s", dest="settings", action="append", default=[], help="NAME=VALUE")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args(argv)

    suffix = SUFFIXES[args.trap]
    with TrapWeb(suffix, args.fanout) as web, tempfile.TemporaryDirectory(prefix="trap-") as tmp:
        env = web.env()
        env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{Path(tmp) / 'blogs.sqlite3'}"
        env.pop("MYSQL_URL", None)
        env.pop("REDIS_URL", None)
        prefix = f"trap-{uuid.uuid4().hex[:8]}:"
        if args.redis_url:
            env["REDIS_URL"] = args.redis_url
            env["BLOGFEEDS_REDIS_PREFIX"] = prefix
            env["BLOGFEEDS_WORKER_ID"] = f"trap-{os.getpid()}"
        settings = ["LOG_LEVEL=INFO", f"BLOGFEEDS_SPOOL_PATH={Path(tmp) / 'spool.jsonl'}"]
        settings += ["BLOGFEEDS_STRATEGY_LOG_INTERVAL=10", *args.settings]
        if args.jobdir:
            settings.append(f"JOBDIR={Path(tmp) / 'job'}")
        seed = f"http://{child('seed', 0, suffix)}/"
        cmd = [args.python, "-m", "scrapy", "crawl", "blogs", "-a", f"start_urls={seed}"]
        for setting in settings:
            cmd += ["-s", setting]
        log = Path(tmp) / "crawl.log"
        print(
            f"trap {args.trap} (*.{suffix}), fanout {args.fanout}, {args.minutes} min, "
            f"{'JOBDIR' if args.jobdir else 'no JOBDIR'}, "
            f"{'Redis frontier' if args.redis_url else 'Scrapy scheduler'}"
        )
        print(f"{'min':>6} {'RSS MB':>7} {'homes':>7} {'pending':>8} {'fetched':>8}")
        peak = 0.0
        t0 = time.monotonic()
        with log.open("w") as out:
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
            next_sample = 0.0
            while proc.poll() is None:
                now = time.monotonic() - t0
                rss = rss_mb(proc.pid)
                peak = max(peak, rss)
                if now >= next_sample:
                    found = _PENDING.findall(log.read_text(errors="replace")[-20000:])
                    pending, fetched = found[-1] if found else ("-", "-")
                    homes = web.counters.per_kind["home"]
                    print(f"{now / 60:6.2f} {rss:7.1f} {homes:7d} {pending:>8} {fetched:>8}")
                    sys.stdout.flush()
                    next_sample += args.every
                if now > args.minutes * 60:
                    proc.send_signal(signal.SIGTERM)
                    try:
                        proc.wait(120)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    break
                time.sleep(0.5)
        text = log.read_text(errors="replace")
        dump = text.rfind("Dumping Scrapy stats")
        stats = {k: float(v) for k, v in _STAT.findall(text[dump:] if dump >= 0 else "")}
        peak = max(peak, stats.get("memusage/max", 0) / 2**20)
        if args.redis_url:
            with contextlib.suppress(Exception):
                import redis

                client = redis.Redis.from_url(args.redis_url)
                for key in client.scan_iter(f"{prefix}*"):
                    client.delete(key)
        print(f"ran {(time.monotonic() - t0) / 60:.1f} min, exit {proc.returncode}")
        if proc.returncode not in (0, -signal.SIGTERM):
            print(text[-3000:])
        for name in sorted(stats):
            if any(w in name for w in ("cap", "blogs_", "scheduler/enqueued", "response_count")):
                print(f"  {name}: {stats[name]:g}")
        for line in text.splitlines():
            if "cap" in line.lower() and ("INFO" in line or "WARNING" in line):
                print("  log:", line[:200])
        ok = peak <= RSS_LIMIT_MB
        print(
            f"peak RSS {peak:.1f} MB (floor ≤ {RSS_LIMIT_MB:.0f} MB: {'met' if ok else 'NOT met'})"
        )
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
