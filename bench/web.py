"""A generated blogosphere on loopback for the crawl benchmark: an asyncio forward proxy.

:class:`BenchWeb` serves ``n`` fictional blogs (``http://blog00042.example/``) built from the
real blog sites of the shared corpus (``corpus/pages/sites/``): every page of a real site
becomes a template in which the friend links its own extractor finds are replaced by slots
and the site's own host by the bench blog's host. Blog ``i`` uses template ``i mod T`` and
fills its friend slots with other bench blogs drawn by a seeded generator, so the friend
pages link to each other. Every feed the real home page advertises is served as a small Atom
feed. Pages are rendered from the templates in memory when asked for.

Kinds of blogs, by ``i mod 100``: 7 answers 404 everywhere; 13 and 14 redirect their apex
home page to ``www.`` (301); 21 is slow (every answer waits :data:`SLOW_SECONDS`); the rest
answer at once. ``/robots.txt`` is 404 (allow all); unknown paths and hosts are 404.

Like ``tests/littleweb.py`` it is a forward proxy (absolute-form ``GET http://host/path``,
RFC 9112 §3.2.2), reached through the ``http_proxy`` variables of :meth:`BenchWeb.env`; unlike
it, it runs on one asyncio event loop in a thread (keep-alive, no per-request threads), only
speaks plain http (``CONNECT`` is refused) and keeps counters instead of a hit log:
requests per blog, per status, and in total.

Usage as a script, to serve the web by hand: ``python bench/web.py --blogs 1000``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import gzip
import json
import logging
import os
import random
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import lxml.html  # noqa: E402

from blogfeeds.extract.discovery import discover_feeds  # noqa: E402
from blogfeeds.extract.friends import extract_friends, find_friend_pages  # noqa: E402
from blogfeeds.extract.identity import blog_id  # noqa: E402
from blogfeeds.extract.page import DecodeError, parse_page  # noqa: E402

SLOW_SECONDS = 1.5
"""Delay of every answer of a slow blog."""
DOMAIN = "example"
_SELF = "http://selfhost.invalid"
_SLOT = re.compile(r"http://slot(\d+)\.invalid/")
_HOST = re.compile(r"^(?:www\.)?blog(\d+)\." + DOMAIN + "$")
_REASONS = {
    200: "OK",
    301: "Moved Permanently",
    304: "Not Modified",
    404: "Not Found",
    405: "Method Not Allowed",
}
_ATOM = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<feed xmlns="http://www.w3.org/2005/Atom"><title>{title}</title>'
    '<link href="{home}"/><link rel="self" href="{self}"/><id>{home}</id>'
    "<updated>2026-11-01T00:00:00Z</updated>{entries}</feed>\n"
)
_ENTRY = (
    '<entry><title>Post {n} of {title}</title><link href="{home}{n}/"/><id>{home}{n}/</id>'
    "<updated>2026-10-{day:02d}T00:00:00Z</updated><summary>Notes number {n}.</summary></entry>"
)

logger = logging.getLogger(__name__)


def blog_host(i: int) -> str:
    return f"blog{i:05d}.{DOMAIN}"


def blog_url(i: int) -> str:
    return f"http://{blog_host(i)}/"


@dataclass
class Template:
    """One real site: its pages as chunks (text, slot number or -1 for the own host)."""

    origin: str
    pages: dict[str, list[str | int]] = field(default_factory=dict)
    feeds: set[str] = field(default_factory=set)
    slots: int = 0


def _compile(text: str) -> list[str | int]:
    """Split rendered HTML on the self and slot markers: str chunks, -1 (self), k (slot k)."""
    chunks: list[str | int] = []
    for piece in re.split(r"(http://selfhost\.invalid|http://slot\d+\.invalid/)", text):
        if piece == _SELF:
            chunks.append(-1)
        elif m := _SLOT.fullmatch(piece):
            chunks.append(int(m.group(1)))
        elif piece:
            chunks.append(piece)
    return chunks


def _rewrite(url: str, body: bytes, origin: str, slots: dict[str, int]) -> tuple[str, set[str]]:
    """The page with friend links as slot markers and its own host as the self marker;
    also the feed paths it advertises on its own host."""
    page = parse_page(url, body)
    friends = extract_friends(page).friends
    wanted = set()
    for friend in friends:
        with contextlib.suppress(ValueError):
            wanted.add(blog_id(friend.url))
    own = urlsplit(origin).netloc.lower()
    feeds = set()
    for feed in discover_feeds(page):
        parts = urlsplit(feed.url)
        if parts.netloc.lower() == own:
            feeds.add(parts.path + (f"?{parts.query}" if parts.query else ""))
    for el in page.tree.iter():
        if not isinstance(el.tag, str):
            continue
        for attr in ("href", "src", "content", "action"):
            value = el.get(attr)
            if not value:
                continue
            if el.tag == "a" and attr == "href":
                try:
                    identity = blog_id(page.absolute(value))
                except ValueError:
                    identity = ""
                if identity in wanted:
                    slot = slots.setdefault(identity, len(slots))
                    el.set(attr, f"http://slot{slot}.invalid/")
                    continue
            for scheme in ("https://", "http://", "//"):
                if value.lower().startswith(scheme + own):
                    el.set(attr, _SELF + value[len(scheme) + len(own) :])
                    break
    html = lxml.html.tostring(page.tree, encoding="unicode", doctype="<!DOCTYPE html>")
    return html, feeds


FRIEND_PATH = re.compile(r"^/(?:links?|friends?|blogroll)/$")
MIN_FRIENDS = 5
"""A site's friend page with fewer friend slots borrows a real friend page of the cases."""


def _case_pages(cases: Path) -> list[tuple[str, bytes]]:
    """(page_url, page) of the real friend-link cases listing at least :data:`MIN_FRIENDS`."""
    out = []
    for spec_path in sorted(cases.glob("friend-links-real/*/expected.json")):
        spec = json.loads(spec_path.read_text("utf-8"))
        if len(spec.get("expected_friend_links") or []) >= MIN_FRIENDS:
            out.append((spec["page_url"], (spec_path.parent / "page.html").read_bytes()))
    return out


def _borrow(
    borrowed: list[tuple[str, bytes]], offset: int, slots: dict[str, int]
) -> tuple[str, dict[str, int]] | None:
    """The first real case friend page from ``offset`` on giving :data:`MIN_FRIENDS` new
    slots: (its rewritten HTML, the slots with its friends added); None when none does."""
    before = len(slots)
    for k in range(len(borrowed)):
        case_url, case_body = borrowed[(offset + k) % len(borrowed)]
        case_origin = "{0.scheme}://{0.netloc}".format(urlsplit(case_url))
        trial = dict(slots)
        html, _ = _rewrite(case_url, case_body, case_origin, trial)
        if len(trial) - before >= MIN_FRIENDS:
            return html, trial
    return None


def _linked_friend_paths(url: str, body: bytes) -> list[str]:
    """Paths of the same-site friend-link pages the real home page links to."""
    own = urlsplit(url).netloc.lower()
    paths = []
    for link in find_friend_pages(parse_page(url, body)):
        parts = urlsplit(link)
        if parts.netloc.lower() == own:
            paths.append(parts.path or "/")
    return paths


def load_templates(corpus: Path, cases: Path | None = None) -> list[Template]:
    """A template per real site of ``corpus/pages/sites/`` whose home page is ``/``.

    Friend pages are the ``/link/``-like paths and those the real home page links to as its
    friend page. One with fewer than :data:`MIN_FRIENDS` friend slots (friends loaded by
    script, an empty theme demo), or linked but missing from the corpus, is served as the next
    real friend page of ``cases/friend-links-real`` that has enough, so that the web is
    connected like the blogosphere it comes from.
    """
    borrowed = _case_pages(cases) if cases is not None and cases.is_dir() else []
    by_origin: dict[str, list[tuple[str, Path]]] = {}
    with (corpus / "replay_urls.tsv").open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            url, local = row["url"], row["local_file"]
            parts = urlsplit(url)
            if not local.startswith("pages/sites/") or parts.scheme not in ("http", "https"):
                continue
            if parts.hostname in (None, "localhost") or parts.port:
                continue
            by_origin.setdefault(f"{parts.scheme}://{parts.netloc}", []).append(
                (url, corpus / local)
            )
    templates: list[Template] = []
    for origin, rows in sorted(by_origin.items()):
        bodies = []
        for url, path in rows:
            body = path.read_bytes()
            bodies.append(
                (
                    url,
                    urlsplit(url).path or "/",
                    gzip.decompress(body) if path.name.endswith(".gz") else body,
                )
            )
        home = next(((u, b) for u, key, b in bodies if key == "/"), None)
        if home is None:
            continue
        try:
            linked = _linked_friend_paths(*home)
        except (DecodeError, ValueError):
            continue
        t = Template(origin)
        slots: dict[str, int] = {}
        for url, key, body in bodies:
            try:
                before = len(slots)
                html, feeds = _rewrite(url, body, origin, slots)
                friend_page = bool(FRIEND_PATH.match(key)) or key in linked
                if friend_page and len(slots) - before < MIN_FRIENDS and borrowed:
                    got = _borrow(borrowed, len(templates), slots)
                    if got is not None:
                        html, slots = got
            except (DecodeError, ValueError) as exc:
                logger.info("template page %s skipped: %s", url, exc)
                continue
            t.pages.setdefault(key, _compile(html))
            if key == "/":
                t.feeds |= feeds
        for key in linked:  # the home links a friend page the corpus does not hold
            if key not in t.pages and borrowed:
                got = _borrow(borrowed, len(templates) + 1, slots)
                if got is not None:
                    html, slots = got
                    t.pages[key] = _compile(html)
        t.slots = len(slots)
        templates.append(t)
    return templates


@dataclass
class Counters:
    """What the web answered (updated on the event loop thread; read after the crawl)."""

    total: int = 0
    per_blog: Counter[int] = field(default_factory=Counter)
    per_status: Counter[int] = field(default_factory=Counter)
    per_kind: Counter[str] = field(default_factory=Counter)
    first: float = 0.0
    last: float = 0.0
    gaps: list[float] = field(default_factory=list)
    """Seconds between a blog's answer and its next request (the crawler's turnaround)."""
    answered: dict[int, float] = field(default_factory=dict)


class BenchWeb:
    """``n`` generated blogs behind a loopback forward proxy (see the module docstring).

    ``templates`` come from :func:`load_templates`; ``seed`` fixes the friend graph. Use as a
    context manager; ``proxy_url`` and ``env()`` as in ``tests/littleweb.py``.
    """

    def __init__(self, templates: list[Template], n: int, *, seed: int = 1, degree: int = 0):
        if not templates:
            raise ValueError("no templates: the corpus has no site with a home page")
        self.templates = templates
        self.n = n
        self.seed = seed
        self.degree = degree
        self.counters = Counters()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self._friends: dict[int, list[int]] = {}

    # -- the generated web -----------------------------------------------------------------

    @staticmethod
    def kind(i: int) -> str:
        """``gone`` (404), ``redirect`` (apex -> www), ``slow`` or ``ok``."""
        r = i % 100
        return {7: "gone", 13: "redirect", 14: "redirect", 21: "slow"}.get(r, "ok")

    def template(self, i: int) -> Template:
        return self.templates[i % len(self.templates)]

    def friends(self, i: int) -> list[int]:
        """The bench blogs in blog ``i``'s friend slots (seeded, never ``i`` itself)."""
        got = self._friends.get(i)
        if got is None:
            t = self.template(i)
            k = t.slots if not self.degree else min(t.slots, self.degree)
            rng = random.Random(self.seed * 1_000_003 + i)
            got = []
            while len(got) < k and self.n > 1:
                j = rng.randrange(self.n)
                if j != i and j not in got:
                    got.append(j)
            self._friends[i] = got
        return got

    def render(self, i: int, host: str, chunks: list[str | int]) -> bytes:
        friends = self.friends(i)
        out = []
        for chunk in chunks:
            if isinstance(chunk, str):
                out.append(chunk)
            elif chunk < 0:
                out.append(f"http://{host}")
            else:
                out.append(blog_url(friends[chunk % len(friends)]) if friends else "#")
        return "".join(out).encode("utf-8")

    def feed(self, i: int, host: str, path: str) -> bytes:
        home = f"http://{host}/"
        entries = "".join(
            _ENTRY.format(n=n, title=blog_host(i), home=home, day=1 + n) for n in range(5)
        )
        return _ATOM.format(
            title=blog_host(i), home=home, self=home + path.lstrip("/"), entries=entries
        ).encode("utf-8")

    def answer(
        self, url: str, headers: Mapping[str, str]
    ) -> tuple[int, list[tuple[str, str]], bytes, float]:
        """(status, headers, body, delay) for a GET of ``url`` (request ``headers`` with
        lower-cased names)."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        m = _HOST.match(host)
        i = int(m.group(1)) if m else -1
        if i < 0 or i >= self.n:
            return 404, [("Content-Type", "text/plain")], b"no such blog\n", 0.0
        c = self.counters
        c.per_blog[i] += 1
        if i in c.answered:
            c.gaps.append(time.monotonic() - c.answered[i])
        kind = self.kind(i)
        self.counters.per_kind[kind] += 1
        delay = SLOW_SECONDS if kind == "slow" else 0.0
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        if kind == "gone":
            return 404, [("Content-Type", "text/html")], b"<h1>Not Found</h1>", delay
        if kind == "redirect" and not host.startswith("www.") and path == "/":
            return 301, [("Location", f"http://www.{host}/")], b"", delay
        t = self.template(i)
        chunks = t.pages.get(path)
        if chunks is not None:
            body = self.render(i, host, chunks)
            return 200, [("Content-Type", "text/html; charset=utf-8")], body, delay
        if path in t.feeds:
            body = self.feed(i, host, path)
            return 200, [("Content-Type", "application/atom+xml; charset=utf-8")], body, delay
        return 404, [("Content-Type", "text/html")], b"<h1>Not Found</h1>", delay

    # -- the proxy ---------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = [*lines[0].split(" "), "", "", ""][:3]
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    if name:
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                if length:
                    await reader.readexactly(length)
                if method == "CONNECT":
                    writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                    await writer.drain()
                    return
                url = target if "://" in target else f"http://{headers.get('host', '')}{target}"
                status, extra, body, delay = self.answer(url, headers)
                c = self.counters
                c.total += 1
                c.per_status[status] += 1
                c.last = time.monotonic()
                c.first = c.first or c.last
                if delay:
                    await asyncio.sleep(delay)
                out = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
                out += [f"{k}: {v}" for k, v in extra]
                out.append(f"Content-Length: {len(body)}")
                close = headers.get("connection", "").lower() == "close"
                if close:
                    out.append("Connection: close")
                payload = ("\r\n".join(out) + "\r\n\r\n").encode("latin-1")
                send_body = method != "HEAD" and status != 304
                writer.write(payload + (body if send_body else b""))
                await writer.drain()
                if (m := _HOST.match(urlsplit(url).hostname or "")) is not None:
                    c.answered[int(m.group(1))] = time.monotonic()
                if close:
                    return
        except (ConnectionError, OSError):
            return
        finally:
            writer.close()

    def start(self) -> Self:
        started = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._server = loop.run_until_complete(
                asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024)
            )
            self._port = self._server.sockets[0].getsockname()[1]
            started.set()
            loop.run_forever()
            self._server.close()
            loop.run_until_complete(self._server.wait_closed())
            loop.close()

        self._thread = threading.Thread(target=run, name="benchweb", daemon=True)
        self._thread.start()
        started.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._loop = self._thread = self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default ``os.environ``) with the proxy variables Scrapy reads, and the SSRF
        guard's DNS check off: the web's names are fictional, and resolving them would measure
        this machine's resolver (here: one lookup in 20 waits out a 5 s timeout), not the
        crawler. No DNS query leaves the machine."""
        env = dict(os.environ if base is None else base)
        for name in ("http_proxy", "https_proxy"):
            env[name] = env[name.upper()] = self.proxy_url
        env["no_proxy"] = env["NO_PROXY"] = ""
        env["BLOGFEEDS_ALLOW_PRIVATE_TARGETS"] = "1"
        return env


_FEED_HOST = re.compile(r"^feed(\d+)\." + DOMAIN + "$")
_RSS_ITEM = (
    "<item><title>Post {n}</title><link>http://{host}/{n}/</link><guid>http://{host}/{n}/</guid>"
    "<pubDate>{date}</pubDate><description>Notes number {n}.</description></item>"
)


def feed_url(i: int) -> str:
    return f"http://feed{i:05d}.{DOMAIN}/feed.xml"


class FeedWeb(BenchWeb):
    """``n`` RSS feeds (:func:`feed_url`) for the feeds benchmark, one host each.

    Feed ``i`` is at version :attr:`version` (1 at first) or, when ``i % changed_every == 0``,
    at ``version + bump``; a version is an ETag (``"v<version>"``) and one more item. A
    conditional GET whose ``If-None-Match`` names the current ETag gets 304.
    """

    def __init__(self, n: int, *, changed_every: int = 10):
        super().__init__([Template("feeds", {"/": []})], n)
        self.version = 1
        self.bump = 0
        self.changed_every = changed_every

    def current(self, i: int) -> int:
        return self.version + (self.bump if i % self.changed_every == 0 else 0)

    def answer(
        self, url: str, headers: Mapping[str, str]
    ) -> tuple[int, list[tuple[str, str]], bytes, float]:
        parts = urlsplit(url)
        m = _FEED_HOST.match((parts.hostname or "").lower())
        i = int(m.group(1)) if m else -1
        if i < 0 or i >= self.n or parts.path != "/feed.xml":
            return 404, [("Content-Type", "text/plain")], b"not found\n", 0.0
        self.counters.per_blog[i] += 1
        version = self.current(i)
        etag = f'"v{version}"'
        extra = [("ETag", etag), ("Content-Type", "application/rss+xml; charset=utf-8")]
        if headers.get("if-none-match") == etag:
            self.counters.per_kind["not_modified"] += 1
            return 304, extra, b"", 0.0
        self.counters.per_kind["full"] += 1
        host = parts.hostname or ""
        items = "".join(
            _RSS_ITEM.format(n=n, host=host, date=f"Mon, {1 + n % 28:02d} Jan 2024 00:00:00 GMT")
            for n in range(version + 4, 0, -1)
        )
        body = (
            '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
            f"<title>Feed {i}</title><link>http://{host}/</link>{items}</channel></rss>"
        ).encode()
        return 200, extra, body, 0.0


def shared_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    env = os.environ.get("BLOGFEEDS_SHARED")
    return Path(env) if env else ROOT.parent / "shared"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", help="the shared reference folder")
    parser.add_argument("--blogs", type=int, default=1000)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    corpus = shared_dir(args.shared) / "corpus"
    if not (corpus / "replay_urls.tsv").is_file():
        print(f"missing {corpus}", file=sys.stderr)
        return 2
    templates = load_templates(corpus, corpus.parent / "cases")
    with BenchWeb(templates, args.blogs) as web:
        print(f"{len(templates)} templates, {args.blogs} blogs; proxy {web.proxy_url}")
        print(f"try: curl -x {web.proxy_url} {blog_url(0)}")
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
