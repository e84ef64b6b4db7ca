"""Robustness harness shared by the tests and ``bench/robustness.py``: walk every corpus input
through the extractors and record what escaped.

A *clear outcome* is a return value, or the documented error of the function
(:class:`~blogfeeds.extract.page.DecodeError` / ``ValueError`` from :func:`analyze_page`);
anything else is an *exception*, a defect.
"""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import re
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from blogfeeds.extract.blog import analyze_page
from blogfeeds.extract.directives import robots_directives
from blogfeeds.extract.feedreader import read_document, read_feed, sniff_feed
from blogfeeds.extract.friends import friends_from_data_source
from blogfeeds.extract.page import DecodeError
from tests.littleweb import LittleWeb, Route

PAGE_URL = "https://blog.example.com/"
FEED_URL = "https://blog.example.com/feed.xml"


@dataclass
class Outcome:
    """Inputs tried, how many ended in a documented error, and every other exception."""

    tried: int = 0
    clear_errors: int = 0
    exceptions: list[tuple[str, str]] = field(default_factory=list)

    def add(self, other: Outcome) -> None:
        self.tried += other.tried
        self.clear_errors += other.clear_errors
        self.exceptions.extend(other.exceptions)


def read_body(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


def _files(root: Path) -> Iterator[Path]:
    return (p for p in sorted(root.rglob("*")) if p.is_file())


def check_page(body: bytes, url: str = PAGE_URL, content_type: str = "") -> bool:
    """Run every page extractor on ``body``; False when it ended in the documented error."""
    headers = {"Content-Type": content_type} if content_type else {}
    try:
        analysis = analyze_page(url, body, headers)
    except (DecodeError, ValueError):
        return False
    robots_directives(analysis.page)
    return True


def check_feed(body: bytes, url: str = FEED_URL, content_type: str = "") -> bool:
    """Run the feed sniffer, both feed readers and the blogroll reader on ``body``."""
    sniff_feed(body, content_type)
    read_feed(body, content_type)
    read_document(body, content_type, url)
    friends_from_data_source(url, body, content_type)
    return True


_CHECKS: dict[str, Callable[[bytes], bool]] = {"pages": check_page, "feeds": check_feed}


def _check_file(kind: str, root: str, name: str) -> tuple[bool, str | None]:
    """(ended in a documented error, traceback of an escaped exception or None)."""
    try:
        return (not _CHECKS[kind](read_body(Path(root) / name)), None)
    except Exception:
        return (False, traceback.format_exc(limit=6))


def walk(root: Path, kind: str, workers: int = 1) -> Outcome:
    """Check every file under ``root`` (``.gz`` decompressed) as a page or a feed (``kind``),
    in ``workers`` processes (spawned: the caller may run threads)."""
    names = [str(p.relative_to(root)) for p in _files(root)]
    out = Outcome(tried=len(names))
    args = ([kind] * len(names), [str(root)] * len(names), names)
    if workers > 1:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            results = list(pool.map(_check_file, *args, chunksize=8))
    else:
        results = list(map(_check_file, *args))
    for name, (clear, error) in zip(names, results, strict=True):
        out.clear_errors += clear
        if error is not None:
            out.exceptions.append((name, error))
    return out


def walk_corpus(corpus: Path, workers: int = 1) -> dict[str, Outcome]:
    """Every page under ``corpus/pages`` and every feed under ``corpus/feeds``."""
    return {kind: walk(corpus / kind, kind, workers) for kind in ("pages", "feeds")}


# --- a real crawl on loopback -------------------------------------------------------------------

REPO = Path(__file__).resolve().parent.parent


@dataclass
class CrawlRun:
    """What one ``scrapy crawl blogs`` subprocess left: exit code, log, items, the web's hits."""

    returncode: int
    log: str
    blogs: dict[str, dict[str, Any]]
    links: list[dict[str, Any]]
    hits: list[str]
    seconds: float

    def tracebacks(self) -> list[str]:
        """Log records with a traceback (a robots.txt that could not be fetched has none:
        :mod:`blogfeeds.middlewares.robots`)."""
        records = re.split(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[)", self.log)
        return [r for r in records if "Traceback" in r]

    def stat(self, name: str) -> int:
        """A counter from the stats dump at the end of the log (0 when absent)."""
        match = re.search(rf"'{re.escape(name)}': (\d+)", self.log)
        return int(match.group(1)) if match else 0


def crawl_blogs(
    web: LittleWeb,
    seeds: list[str],
    tmp: Path,
    *,
    settings: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    proxy: bool = True,
    timeout: float = 240,
) -> CrawlRun:
    """Run ``scrapy crawl blogs`` on ``seeds`` through ``web`` (as proxy when ``proxy``; else the
    seeds must name the web's port) with fast test settings plus ``settings``."""
    base = web.env() if proxy else dict(os.environ)
    base.update(env or {})
    base["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{tmp / 'crawl.sqlite3'}"
    out = tmp / "items.jsonl"
    merged = {
        "DOWNLOAD_DELAY": "0",
        "AUTOTHROTTLE_ENABLED": "False",
        "LOG_LEVEL": "INFO",
        "BLOGFEEDS_SPOOL_PATH": str(tmp / "spool.jsonl"),
        **(settings or {}),
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", "blogs", "-a", "start_urls=" + ",".join(seeds)]
    cmd += ["-O", str(out)]
    for key, value in merged.items():
        cmd += ["-s", f"{key}={value}"]
    started = time.monotonic()
    proc = subprocess.run(
        cmd, cwd=REPO, env=base, capture_output=True, text=True, timeout=timeout, check=False
    )
    items = (
        [json.loads(line) for line in out.read_text("utf-8").splitlines()] if out.exists() else []
    )
    return CrawlRun(
        returncode=proc.returncode,
        log=proc.stderr,
        blogs={i["blog_id"]: i for i in items if i.get("type") == "blog"},
        links=[i for i in items if "source_blog_id" in i],
        hits=[h.url for h in web.hits()],
        seconds=time.monotonic() - started,
    )


# --- hypothesis strategies: hostile HTML, URLs and feeds --------------------------------------

WEB = Path(__file__).resolve().parent / "data" / "web"
SEED_PAGES = tuple(p.read_bytes() for p in sorted(WEB.glob("*.html")))
SEED_FEEDS = tuple(p.read_bytes() for p in sorted(WEB.glob("*.xml")) + sorted(WEB.glob("*.opml")))

ENCODINGS = ("utf-8", "gb18030", "gbk", "big5", "shift_jis", "euc-jp", "euc-kr", "koi8-r")
ENCODINGS += ("cp1252", "latin-1", "utf-16-le", "utf-16-be", "utf-32-le")
LABELS = (*ENCODINGS, "gb2312", "utf-7", "x-user-defined", "bogus", "", "utf-16", "UTF8 ")

schemes = st.sampled_from(
    ["http", "https", "HTTP", "hTtPs", "javascript", "data", "mailto", "ftp", "file", ""]
)
labels = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,15}[a-z0-9])?", fullmatch=True)
idn_labels = st.text(
    st.characters(categories=("Ll", "Lo", "Nd"), max_codepoint=0x2FFFF), min_size=1, max_size=8
)
hosts = st.one_of(
    st.lists(labels, min_size=1, max_size=4).map(".".join),
    st.tuples(idn_labels, st.sampled_from(["中国", "jp", "com", "рф", "cn", "tw"])).map(".".join),
    st.ip_addresses(v=4).map(str),
    st.ip_addresses(v=6).map(lambda a: f"[{a}]"),
    st.sampled_from(["localhost", "169.254.169.254", "[::1]", "0", "2130706433", "0x7f.1"]),
    st.text(max_size=20),
)
ports = st.one_of(
    st.just(""),
    st.integers(-1, 70_000).map(lambda p: f":{p}"),
    st.text(max_size=4).map(lambda s: f":{s}"),
)
userinfo = st.one_of(st.just(""), st.text(max_size=8).map(lambda s: f"{s}@"))
url_chunks = st.one_of(
    st.text(max_size=12),
    st.from_regex(r"%[0-9A-Fa-f]{2}|%[0-9A-Za-z]?", fullmatch=True),
    st.sampled_from(["/", "//", "../", ";jsessionid=X", "?", "&", "=", "#", "PHPSESSID=1"]),
)
paths = st.lists(url_chunks, max_size=8).map("".join)


@st.composite
def urls(draw: st.DrawFn) -> str:
    """Absolute and broken URLs: IDNs, IPv6 literals, odd ports, credentials, percent-escapes,
    ``javascript:``/``data:``/``mailto:`` links, or any text."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=60))
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(["javascript:", "data:text/html,", "mailto:"])) + draw(paths)
    return (
        f"{draw(schemes)}://{draw(userinfo)}{draw(hosts)}{draw(ports)}"
        f"{draw(st.sampled_from(['', '/']))}{draw(paths)}"
    )


TAGS = ("div", "p", "a", "ul", "li", "span", "table", "td", "section", "nav", "footer", "b")
TAGS += ("head", "body", "title", "meta", "link", "base", "script", "style", "svg", "template")
attr_values = st.one_of(
    st.text(max_size=30),
    urls(),
    st.integers(0, 3).map(lambda n: "x" * (10**n * 7)),  # long values
    st.sampled_from(
        ["noindex, nofollow", "none", "alternate", "friend", "blogroll", "application/rss+xml",
         "0; url=/elsewhere", "text/html; charset=gbk", "utf-16", "x-user-defined"]
    ),
)  # fmt: skip
attr_names = st.sampled_from(
    ["href", "rel", "type", "class", "id", "name", "content", "http-equiv", "charset", "title"]
)


@st.composite
def html_trees(draw: st.DrawFn, depth: int = 0) -> str:
    """Random markup: nested tags with random attributes and text (NUL and controls included)."""
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 3 if depth < 2 else 1))):
        tag = draw(st.sampled_from(TAGS))
        attrs = draw(st.lists(st.tuples(attr_names, attr_values), max_size=3))
        rendered = "".join(f' {k}="{v}"' for k, v in attrs)
        inner = draw(html_trees(depth + 1)) if depth < 3 else ""
        closing = draw(st.sampled_from([f"</{tag}>", "", f"</{tag}", "</x>"]))
        parts.append(f"<{tag}{rendered}>{draw(st.text(max_size=20))}{inner}{closing}")
    return "".join(parts)


@st.composite
def html_documents(draw: st.DrawFn) -> bytes:
    """A generated or real page, encoded in some encoding, then mutated (module docstring)."""
    if SEED_PAGES and draw(st.booleans()):
        body = draw(st.sampled_from(SEED_PAGES))
    else:
        label = draw(st.sampled_from(LABELS))
        head = f'<meta charset="{label}">' if draw(st.booleans()) else ""
        text = f"<html><head>{head}</head><body>{draw(html_trees())}</body></html>"
        body = text.encode(draw(st.sampled_from(ENCODINGS)), errors="replace")
    return draw(mutated(body))


@st.composite
def mutated(draw: st.DrawFn, body: bytes) -> bytes:
    """``body`` after up to three mutations: truncation, inserted bytes (NUL, invalid UTF-8,
    another encoding's bytes), deep nesting, a huge attribute, a BOM, duplication."""
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(body)))
        kind = draw(st.integers(0, 8))
        if kind == 0:
            body = body[:at]
        elif kind == 1:
            body = body[:at] + draw(st.binary(max_size=40)) + body[at:]
        elif kind == 2:
            body = body[:at] + b"\x00" * draw(st.integers(1, 50)) + body[at:]
        elif kind == 3:
            body = body[:at] + b"\xff\xfe\xc3\x28\xe2\x82\xed\xa0\x80" + body[at:]
        elif kind == 4:
            other = draw(st.text(max_size=30)).encode(draw(st.sampled_from(ENCODINGS)), "replace")
            body = body[:at] + other + body[at:]
        elif kind == 5:
            depth = draw(st.sampled_from([100, 1000, 3000]))
            body = body[:at] + b"<div>" * depth + b"<a href='http://x.example/'>x</a>" + body[at:]
        elif kind == 6:
            size = draw(st.sampled_from([1000, 10_000, 300_000]))
            body = body[:at] + b'<a href="http://h.example/' + b"a" * size + b'">' + body[at:]
        elif kind == 7:
            body = draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"])) + body
        else:
            body = body[:at] + body
    return body


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@st.composite
def feed_documents(draw: st.DrawFn) -> bytes:
    """RSS, Atom, RDF and JSON feeds with random fields, real feeds, then mutated."""
    kind = draw(st.integers(0, 4))
    text = st.text(max_size=30)
    if kind == 0 and SEED_FEEDS:
        return draw(mutated(draw(st.sampled_from(SEED_FEEDS))))
    items = draw(st.lists(st.tuples(text, urls(), text, text), max_size=4))
    label = draw(st.sampled_from(LABELS))
    decl = f'<?xml version="1.0" encoding="{label}"?>' if draw(st.booleans()) else ""
    if kind == 1:
        body = "".join(
            f"<item><title>{t}</title><link>{u}</link><guid>{g}</guid><pubDate>{d}</pubDate></item>"
            for t, u, g, d in items
        )
        doc = f'{decl}<rss version="2.0"><channel><title>{draw(text)}</title>{body}</channel></rss>'
    elif kind == 2:
        body = "".join(
            f"<entry><title>{t}</title><link href='{u}'/><id>{g}</id><updated>{d}</updated></entry>"
            for t, u, g, d in items
        )
        doc = f'{decl}<feed xmlns="http://www.w3.org/2005/Atom"><title>x</title>{body}</feed>'
    elif kind == 3:
        entries = [{"id": g, "url": u, "title": t, "date_published": d} for t, u, g, d in items]
        doc = json.dumps(
            {
                "version": "https://jsonfeed.org/version/1.1",
                "title": draw(text),
                "items": entries + draw(st.lists(json_values, max_size=2)),
            }
        )
    else:
        outlines = "".join(
            f'<outline text="{t}" htmlUrl="{u}" xmlUrl="{g}"/>' for t, u, g, _ in items
        )
        doc = f"{decl}<opml><body>{outlines}</body></opml>"
    return draw(mutated(doc.encode(draw(st.sampled_from(ENCODINGS)), errors="replace")))


# --- hostile pages: huge, link-heavy ------------------------------------------------------------


def link_heavy_page(megabytes: float, host: str = "site") -> bytes:
    """An HTML page of about ``megabytes`` MiB of distinct links (``<a href=...>``), about
    19,000 a MiB: 7.9 MiB (under the 8 MiB download cap) hold about 150,000."""
    target = int(megabytes * 1024 * 1024)
    head = (
        '<!doctype html><html><head><meta charset="utf-8"><title>All the links</title></head>'
        "<body><h1>Friends</h1><p>Everyone I know, and everyone they know.</p>\n"
    )
    parts, size, n = [head], len(head), 0
    while size < target:
        line = f'<a href="http://{host}{n}.example/">Friend {n}</a><br>\n'
        parts.append(line)
        size += len(line)
        n += 1
    parts.append("</body></html>")
    return "".join(parts).encode()


def slow_blog(name: str) -> bytes:
    return (
        f"<html><head><title>{name}</title>"
        f'<link rel="alternate" type="application/rss+xml" href="/feed.xml"></head>'
        f"<body><article><p>The slow blog {name} answers in half a second, which is fine."
        f"</p></article></body></html>"
    ).encode()


def slow_feed(name: str) -> bytes:
    return (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>{name}</title>'
        f"<link>http://{name}/</link><item><title>One</title><link>http://{name}/1</link>"
        "<guid>1</guid></item></channel></rss>"
    ).encode()


def big_pages_web(
    big: int = 6, slow: int = 10, megabytes: float = 7.9, delay: float = 0.5
) -> tuple[dict[str, Route], list[str]]:
    """Routes of ``big`` blogs serving a link-heavy page of ``megabytes`` MiB at once, and
    ``slow`` blogs whose home page and feed answer after ``delay`` seconds; the seeds."""
    routes: dict[str, Route] = {}
    seeds = []
    for i in range(big):
        host = f"big{i}.example"
        routes[f"http://{host}/"] = Route(body=link_heavy_page(megabytes, f"b{i}x"))
        seeds.append(f"http://{host}/")
    for i in range(slow):
        host = f"slow{i}.example"
        routes[f"http://{host}/"] = Route(body=slow_blog(host), delay=delay)
        routes[f"http://{host}/feed.xml"] = Route(
            body=slow_feed(host), content_type="application/rss+xml", delay=delay
        )
        seeds.append(f"http://{host}/")
    return routes, seeds


BIG_PAGES_SETTINGS = {
    "DOWNLOAD_TIMEOUT": "3",
    "RETRY_ENABLED": "False",
    "BLOGFEEDS_STALL_TICK": "0.02",
    "CONCURRENT_REQUESTS": "32",
}
"""The crawl of :func:`big_pages_web`: a timeout 6× the slow blogs' delay, no retry to hide a
timeout, the reactor timed every 20 ms. ``BLOGFEEDS_MAX_BLOGS`` (the seeds) is added by the
caller, so that the big pages' friends are not crawled."""
