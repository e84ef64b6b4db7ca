"""Crawl speed with our Redis scheduler vs stock scrapy-redis, and Redis memory per entry.

Run: ``python bench/redis_frontier.py [--blogs 1000]`` (Redis on 127.0.0.1:6379; keys under a
throwaway prefix, deleted afterwards). One run prints:

* **pages/min** of one ``scrapy crawl blogs`` process over the same generated loopback web
  (``tests/blogosphere.py``: ``--blogs`` one-page blogs plus their feeds, served by
  ``tests/littleweb.py``; no politeness delays, SQLite storage) with (a) Scrapy's own scheduler,
  (b) stock scrapy-redis 0.9.1 (``scrapy_redis.scheduler.Scheduler``, its dupefilter and pickle)
  and (c) ours (``blogfeeds.frontier.scheduler.Scheduler``: prefixed keys, atomic Lua
  enqueue/dequeue, in-flight leases, JSON). The clock runs from the first to the last page
  served (the idle wait before a worker closes is not counted), polled every 20 ms; best of
  ``--rounds`` (2), the order reversed every round (a noisy 2-core VM). Ratio (c)/(b), target
  ≥ 0.8.
* **bytes per queued request** (``MEMORY USAGE`` of the queue ZSET / entries) for a blog
  home-page request encoded as JSON (ours) and as pickle (stock), per dupefilter fingerprint,
  and per blog identity in ``blog_ids`` (the cross-machine host dedupe), each also per million.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import scrapy
from scrapy.utils.test import get_crawler
from scrapy_redis import picklecompat

from blogfeeds.frontier.dupefilter import RFPDupeFilter
from blogfeeds.frontier.serializer import JsonRequestSerializer
from blogfeeds.frontier.spiders import RedisFrontierMixin
from tests import blogosphere as bs
from tests.littleweb import LittleWeb

SAMPLE = 100_000


def crawl(web: bs.Blogosphere, served: LittleWeb, mode: str, prefix: str) -> float:
    """Pages per minute of one crawl in ``mode`` (``scrapy``, ``stock``, ``ours``)."""
    served.clear_hits()
    env = served.env()
    for key in ("REDIS_URL", "MYSQL_URL"):
        env.pop(key, None)
    tmp = Path(tempfile.mkdtemp(prefix="bench-redis-"))
    settings = [
        f"BLOGFEEDS_DATABASE_URL=sqlite:///{tmp / 'db.sqlite3'}",
        f"BLOGFEEDS_SPOOL_PATH={tmp / 'spool.jsonl'}",
        "LOG_LEVEL=WARNING",
    ]
    if mode == "stock":
        env["REDIS_URL"] = bs.REDIS_URL
        settings += [
            "SCHEDULER=scrapy_redis.scheduler.Scheduler",
            "DUPEFILTER_CLASS=scrapy_redis.dupefilter.RFPDupeFilter",
            f"SCHEDULER_QUEUE_KEY={prefix}stock:%(spider)s:requests",
            f"SCHEDULER_DUPEFILTER_KEY={prefix}stock:%(spider)s:dupefilter",
            "SCHEDULER_SERIALIZER=scrapy_redis.picklecompat",
            "SCHEDULER_PERSIST=False",
        ]
    elif mode == "ours":
        env["REDIS_URL"] = bs.REDIS_URL
        env["BLOGFEEDS_REDIS_PREFIX"] = f"{prefix}ours:{tmp.name}:"  # a fresh frontier
        settings += ["MAX_IDLE_TIME_BEFORE_CLOSE=1", "BLOGFEEDS_WORKER_ID=bench"]
    cmd = [*bs.crawl_command(*settings), "-a", f"start_urls={bs.home(0)}"]
    proc = bs.start_worker(cmd, env, tmp / "crawl.log")
    first = last = None
    count = 0
    while proc.poll() is None:
        now, seen = time.monotonic(), len(served.hits())
        if seen and first is None:
            first = now
        if seen > count:
            count, last = seen, now
        time.sleep(0.02)
    seen = len(served.hits())
    if seen > count:
        count, last = seen, time.monotonic()
    if proc.returncode != 0 or first is None or last is None:
        raise SystemExit(f"{mode} crawl failed: see {tmp / 'crawl.log'}")
    homes = sum(1 for h in served.hits() if h.url.endswith(".example/"))
    if homes != web.n:
        raise SystemExit(f"{mode} crawl fetched {homes}/{web.n} blogs: see {tmp / 'crawl.log'}")
    return count / (last - first) * 60


class _Spider(RedisFrontierMixin, scrapy.Spider):
    name = "blogs"

    def parse_home(self, response: Any) -> None:
        pass

    def home_failed(self, failure: Any) -> None:
        pass


def memory(client: Any, prefix: str) -> dict[str, float]:
    """Bytes per entry of the structures a crawl keeps in Redis."""
    crawler = get_crawler(_Spider, settings_dict={"REDIS_URL": bs.REDIS_URL})
    spider = _Spider.from_crawler(crawler)
    dupefilter = RFPDupeFilter(client, key=f"{prefix}mem:dupefilter")
    out: dict[str, float] = {}
    for name, serializer in (("json", JsonRequestSerializer), ("pickle", picklecompat)):
        key = f"{prefix}mem:{name}"
        pipe = client.pipeline(transaction=False)
        for i in range(SAMPLE):
            request = scrapy.Request(
                f"https://blog{i}.example.com/",
                callback=spider.parse_home,
                errback=spider.home_failed,
                meta={
                    "blog_id": f"blog{i}.example.com",
                    "depth": 3,
                    "strategy_token": f"9f3a2c1e-{i}",
                },
                priority=-3,
            )
            pipe.zadd(key, {serializer.dumps(request.to_dict(spider=spider)): 3})
            if name == "json":
                pipe.sadd(dupefilter.key, dupefilter.request_fingerprint(request))
                pipe.hsetnx(f"{prefix}mem:blog_ids", f"blog{i}.example.com", "worker-01")
            if i % 5000 == 4999:
                pipe.execute()
        pipe.execute()
        out[f"request/{name}"] = client.memory_usage(key, samples=0) / SAMPLE
    out["fingerprint"] = client.memory_usage(dupefilter.key, samples=0) / SAMPLE
    out["blog_id"] = client.memory_usage(f"{prefix}mem:blog_ids", samples=0) / SAMPLE
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blogs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    client = bs.redis_client()
    if client is None:
        raise SystemExit("Redis unreachable at 127.0.0.1:6379")
    web = bs.blogosphere(args.blogs)
    prefix = f"bfbench:{os.getpid()}:"
    try:
        speed = dict.fromkeys(("scrapy", "stock", "ours"), 0.0)
        with LittleWeb(web.routes) as served:
            for round_ in range(args.rounds):  # best of each; the order alternates
                modes = list(speed) if round_ % 2 == 0 else list(reversed(speed))
                for mode in modes:
                    speed[mode] = max(speed[mode], crawl(web, served, mode, prefix))
        mem = memory(client, prefix)
    finally:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    pages = 2 * args.blogs
    print(f"crawl of {args.blogs} blogs ({pages} pages: home + feed), one process:")
    print(f"  Scrapy's own scheduler      {speed['scrapy']:8,.0f} pages/min")
    print(f"  stock scrapy-redis 0.9.1    {speed['stock']:8,.0f} pages/min")
    print(f"  blogfeeds.frontier          {speed['ours']:8,.0f} pages/min")
    print(f"  ratio ours / stock: {speed['ours'] / speed['stock']:.2f}x (target >= 0.8)")
    print(f"Redis memory per entry ({SAMPLE:,} entries each), and per million:")
    for name, label in (
        ("request/json", "queued request, JSON (ours)"),
        ("request/pickle", "queued request, pickle (stock)"),
        ("fingerprint", "dupefilter fingerprint"),
        ("blog_id", "blog identity (blog_ids)"),
    ):
        print(f"  {label:32} {mem[name]:7.0f} B   {mem[name] * 1e6 / 2**20:7.0f} MiB/million")
    print(json.dumps({"pages_per_min": speed, "bytes_per_entry": mem}))


if __name__ == "__main__":
    main()
