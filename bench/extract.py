"""Extraction cost per page against the cost of parsing it, over every page of the corpus.

For every HTML page under ``corpus/pages/`` (``.html``, ``.htm``, and the same gzipped), in
process CPU time (``time.process_time``, the minimum of ``--repeat`` runs per page, which
resists the noise of a shared VM):

* decode: ``w3lib`` decoding of the bytes (:func:`blogfeeds.extract.page.decode_html`),
  reported apart and left out of (a), (b) and (c);
* (a) parse: ``lxml.html.document_fromstring`` of the decoded text (the parser
  :func:`~blogfeeds.extract.page.parse_page` uses), the reference;
* (b) one :func:`~blogfeeds.extract.page.parse_page` shared by the page-level pieces of
  :func:`~blogfeeds.extract.blog.extract_blog`, with its default configuration
  (:class:`~blogfeeds.extract.config.ExtractConfig`): blog identity, title, page-only feed
  autodiscovery (``discover_feeds``, the candidates ``find_feeds`` starts from: nothing is
  fetched here), friend links (``extract_friends``) and friend-link pages
  (``find_friend_pages``);
* (c) (b) plus the abstract of the page (trafilatura, :func:`blogfeeds.extract.metadata.abstract`);
  and, on the home pages the labels give a feed, (b) plus the abstract as a crawl takes it
  there: the opening of the main feed's newest entry
  (:func:`blogfeeds.extract.abstract.feed_abstract`), whose cost is the mean over the
  corpus's feed files (``corpus/feeds/``; the pages' own feeds are not in the corpus), each
  read first as feed discovery reads it (not timed: discovery's cost);
* the friend extractor's measuring pass alone (its walk over every element), to print what
  (b)/(a) would be if that pass cost nothing (the bound of rewriting it in C), and if friend
  links cost nothing at all.

Printed: median and p95 per page of each, the ratios (b)/(a) at the median and at the p95
(floor: ≤ 2), pages/s per core of (c) (floor: ≥ 50), each extractor's share of (b), the
process's peak RSS, and the container scorer's cost per element on synthetic pages of growing
size (floor: linear, the largest page's cost per element ≤ 2 × the smallest's). ``--digest``
also prints a SHA-256 of every extractor's output, to show that a speed fix changed nothing
(``--dump FILE``: the outputs themselves, a JSON line per page, to diff two versions).

Usage, from the repository root::

    python bench/extract.py [--shared PATH] [--repeat 3] [--limit N] [--digest] [--dump FILE]
                            [--check]

``--check`` exits with status 1 when a floor fails. The shared folder is ``--shared``, else
``$BLOGFEEDS_SHARED``, else ``../shared`` beside the repository (exit status 2 when missing).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gzip
import hashlib
import json
import logging
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import lxml.html  # noqa: E402

from blogfeeds.extract.abstract import feed_abstract  # noqa: E402
from blogfeeds.extract.config import ExtractConfig  # noqa: E402
from blogfeeds.extract.discovery import discover_feeds  # noqa: E402
from blogfeeds.extract.feedreader import read_feed  # noqa: E402
from blogfeeds.extract.friends import extract_friends, find_friend_pages  # noqa: E402
from blogfeeds.extract.friends.filters import filters  # noqa: E402
from blogfeeds.extract.friends.measure import measure as measure_friends  # noqa: E402
from blogfeeds.extract.identity import blog_id  # noqa: E402
from blogfeeds.extract.metadata import ABSTRACT_CHARS, abstract, main_text, title  # noqa: E402
from blogfeeds.extract.page import _PARSER, DecodeError, Page, decode_html, parse_page  # noqa: E402

RATIO_FLOOR = 2.0
"""(b) at most this many times (a), at the median and at the p95."""
PAGES_PER_SECOND_FLOOR = 50.0
"""(c) at least this many pages per second of one core."""
LINEAR_FLOOR = 2.0
"""Largest synthetic page's cost per element at most this many times the smallest's."""
EXTRACTORS = ("identity", "title", "feeds", "friends", "friend_pages")
CONFIG = ExtractConfig()
"""What ``extract_blog`` runs with when no setting changes it."""


def page_feeds(page: Page) -> list[Any]:
    """The page-only feed candidates under :data:`CONFIG` (nothing fetched)."""
    return discover_feeds(page, CONFIG.discovery.scorers, stages=CONFIG.discovery.stages)


def friends_of(page: Page) -> Any:
    """The page's friend links under :data:`CONFIG`, as ``extract_blog`` reads them."""
    return extract_friends(page, config=CONFIG.friends)


def shared_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    env = os.environ.get("BLOGFEEDS_SHARED")
    return Path(env) if env else ROOT.parent / "shared"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine() -> str:
    """One line naming the machine the figures come from."""
    return (
        f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"lxml {'.'.join(map(str, lxml.etree.LXML_VERSION))}"
    )


def is_html(path: Path) -> bool:
    name = path.name.lower().removesuffix(".gz")
    return name.endswith((".html", ".htm"))


def homes_with_feed(corpus: Path) -> set[str]:
    """The home pages (``page_kind`` ``home``) whose labels list a feed."""
    labels = corpus / "labels.jsonl"
    if not labels.is_file():
        return set()
    rows = [json.loads(line) for line in labels.read_text("utf-8").splitlines()]
    return {r["file"] for r in rows if r.get("page_kind") == "home" and r.get("feeds")}


def feed_abstract_cost(corpus: Path, repeat: int) -> tuple[float, int]:
    """Mean CPU seconds of :func:`feed_abstract` over the corpus's feeds with an entry (the
    minimum of ``repeat`` runs each), and how many feeds that is."""
    costs = []
    for path in sorted((corpus / "feeds").rglob("*")):
        if not path.is_file() or path.suffix not in (".xml", ".rss", ".atom", ".json", ""):
            continue
        try:
            doc = read_feed(path.read_bytes())
        except Exception:  # a corpus of hostile feeds: discovery would reject it too
            continue
        if doc is None or not doc.entries:
            continue
        best = min(timed(lambda: feed_abstract(doc, ABSTRACT_CHARS))[0] for _ in range(repeat))  # noqa: B023
        costs.append(best)
    return (statistics.fmean(costs) if costs else 0.0), len(costs)


def page_urls(corpus: Path) -> dict[str, str]:
    """local file -> original http(s) URL (``replay_urls.tsv``, then ``labels.jsonl``)."""
    urls: dict[str, str] = {}
    labels = corpus / "labels.jsonl"
    if labels.is_file():
        for line in labels.read_text("utf-8").splitlines():
            row = json.loads(line)
            if str(row.get("url", "")).startswith(("http://", "https://")):
                urls[row["file"]] = row["url"]
    replay = corpus / "replay_urls.tsv"
    if replay.is_file():
        with replay.open(encoding="utf-8", newline="") as f:
            for rec in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                if rec["url"].startswith(("http://", "https://")):
                    urls.setdefault(rec["local_file"], rec["url"])
    return urls


@dataclass
class Sample:
    """CPU seconds of one page (minimum over the repeats)."""

    name: str
    size: int
    decode: float = float("inf")
    parse: float = float("inf")
    full_parse: float = float("inf")
    parts: dict[str, float] = field(default_factory=dict)
    abstract: float = float("inf")
    measuring: float = float("inf")
    """The friend extractor's measuring pass alone (a part of ``parts["friends"]``)."""

    @property
    def b(self) -> float:
        return self.full_parse + sum(self.parts.values())

    @property
    def c(self) -> float:
        return self.b + self.abstract


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def clean_text(text: str) -> str:
    """What :func:`parse_page` hands lxml (NULs and an XML declaration removed)."""
    cleaned = text.replace("\x00", "")
    if cleaned.lstrip().startswith("<?xml"):
        cleaned = cleaned.split("?>", 1)[-1]
    return cleaned


def digest_of(page: Page, url: str) -> dict[str, Any]:
    """Everything the extractors return, as plain data (for ``--digest``)."""
    friends = friends_of(page)
    return {
        "id": blog_id(url),
        "title": title(page),
        "feeds": [(f.url, f.score, f.type) for f in page_feeds(page)],
        "friends": [
            (f.url, f.name, round(f.score, 6), f.avatar, f.how, f.rels, f.listed_as, f.kind)
            for f in friends.friends
        ],
        "containers": [
            (s.container.description, round(s.score, 6), s.rejected, s.reasons)
            for s in friends.containers
        ],
        "excluded": friends.excluded,
        "circles": [f.url for f in friends.circles],
        "data_sources": friends.data_sources,
        "aliases": friends.owner_aliases,
        "friend_pages": find_friend_pages(page),
    }


def _url_caches() -> list[Any]:
    """Memo caches of the extractors, per URL and per class token or label (cleared before
    every timed run: a crawl sees each page once, so a repeat must not find the previous run's
    answers; a crawl does find other pages' class names and labels, so this is conservative)."""
    import blogfeeds.extract.friends.filters as filters_module
    import blogfeeds.extract.friends.keywords as keywords_module
    import blogfeeds.extract.friends.measure as measure_module
    import blogfeeds.extract.identity as identity_module

    found = []
    for module, name in (
        (identity_module, "blog_id"),
        (identity_module, "registered_domain"),
        (identity_module, "path_rule"),
        (filters_module, "normal_host"),
        (filters_module, "is_mirror_host"),
        (measure_module, "_token_zones"),
        (measure_module, "_titled"),
        (keywords_module, "has_keyword"),
    ):
        fn = getattr(module, name, None)
        if hasattr(fn, "cache_clear"):
            found.append(fn)
    return found


_CACHES = _url_caches()


def cold() -> None:
    for fn in _CACHES:
        fn.cache_clear()


def measure(url: str, body: bytes, repeat: int, name: str) -> Sample | None:
    s = Sample(name, len(body))
    text = ""
    for _ in range(repeat):
        spent, (_, text) = timed(lambda: decode_html(body, ""))
        s.decode = min(s.decode, spent)
    cleaned = clean_text(text)
    if not cleaned.strip():
        return None
    for _ in range(repeat):
        cold()
        spent, _ = timed(lambda: lxml.html.document_fromstring(cleaned, parser=_PARSER))
        s.parse = min(s.parse, spent)
        try:
            spent, page = timed(lambda: parse_page(url, text))
        except DecodeError:
            return None
        s.full_parse = min(s.full_parse, spent)
        steps: dict[str, Callable[[], Any]] = {
            "identity": lambda: blog_id(url),
            "title": lambda: title(page),  # noqa: B023
            "feeds": lambda: page_feeds(page),  # noqa: B023
            "friends": lambda: friends_of(page),  # noqa: B023
            "friend_pages": lambda: find_friend_pages(page),  # noqa: B023
        }
        for key, fn in steps.items():
            spent, _ = timed(fn)
            s.parts[key] = min(s.parts.get(key, float("inf")), spent)
        spent, _ = timed(lambda: abstract(page))  # noqa: B023
        s.abstract = min(s.abstract, spent)
        cold()
        spent, _ = timed(lambda: measure_friends(page, filters()))  # noqa: B023
        s.measuring = min(s.measuring, spent, s.parts["friends"])
    return s


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))]


def ms(x: float) -> str:
    return f"{1000 * x:7.2f}"


# --- Linearity of the container scorer ---------------------------------------------------------

_CARD = (
    '<div class="card"><a href="https://friend{i}.example/" target="_blank">'
    '<img src="/a{i}.png"><span class="name">Friend {i}</span></a>'
    "<p>A few words about friend {i}'s blog.</p></div>"
)


def synthetic_pages() -> dict[str, list[str]]:
    """Pages of growing size in three shapes: a flat blogroll (one ``<ul>`` of n links), a
    friend grid of n cards, and nested containers (n levels, links and text at each)."""
    sizes = [50, 100, 200, 400, 800, 1600]
    flat = [
        "<html><head><title>Links</title></head><body><h2>友情链接</h2><ul>"
        + "".join(f'<li><a href="https://blog{i}.example/">Blog {i}</a></li>' for i in range(n))
        + "</ul></body></html>"
        for n in sizes
    ]
    grid = [
        "<html><head><title>Friends</title></head><body><h2>Friends</h2>"
        '<div class="flinks">'
        + "".join(_CARD.format(i=i) for i in range(n))
        + "</div></body></html>"
        for n in sizes
    ]
    depths = [10, 20, 40, 80, 160]  # libxml2's default nesting limit is 256
    nested = [
        "<html><head><title>Links</title></head><body>"
        + "".join(
            f'<div class="level{i}"><p>Level {i} text.</p>'
            f'<a href="https://blog{i}a.example/">A{i}</a> <a href="https://blog{i}b.example/">B{i}</a>'
            f'<a href="/post/{i}/">post {i}</a>'
            for i in range(d)
        )
        + "</div>" * d
        + "</body></html>"
        for d in depths
    ]
    return {"flat blogroll": flat, "card grid": grid, "nested": nested}


def linearity(repeat: int) -> list[tuple[str, list[tuple[int, float]], float]]:
    """(shape, [(elements, µs per element)], largest/smallest cost per element)."""
    out = []
    for shape, docs in synthetic_pages().items():
        points = []
        for doc in docs:
            page = parse_page("https://owner.example/links/", doc)
            elements = sum(1 for _ in page.tree.iter())
            best = float("inf")
            for _ in range(repeat):
                cold()
                best = min(best, timed(lambda: friends_of(page))[0])  # noqa: B023
            points.append((elements, 1e6 * best / elements))
        out.append((shape, points, points[-1][1] / points[0][1]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", help="the shared reference folder")
    parser.add_argument("--repeat", type=int, default=3, help="runs per page (minimum kept)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N pages")
    parser.add_argument("--digest", action="store_true", help="print a SHA-256 of the outputs")
    parser.add_argument(
        "--dump", type=Path, help="write every page's extractor outputs to this JSON-lines file"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a floor fails")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)  # trafilatura warns about pages it discards

    corpus = shared_dir(args.shared) / "corpus"
    pages_dir = corpus / "pages"
    if not pages_dir.is_dir():
        print(f"missing {pages_dir}", file=sys.stderr)
        return 2
    urls = page_urls(corpus)
    files = sorted(p for p in pages_dir.rglob("*") if p.is_file() and is_html(p))
    if args.limit:
        files = files[: args.limit]
    bodies = []
    for path in files:
        rel = str(path.relative_to(corpus))
        body = path.read_bytes()
        if path.name.endswith(".gz"):
            body = gzip.decompress(body)
        bodies.append((urls.get(rel) or f"https://corpus.invalid/{rel}", body, rel))
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    # One-time costs (tables, the suffix trie, jusText's stop lists) once, untimed: a crawl
    # pays them once per process.
    for url, body, _ in bodies[:5]:
        with contextlib.suppress(DecodeError):
            warm = parse_page(url, body)
            friends_of(warm), page_feeds(warm), find_friend_pages(warm)
            abstract(warm), main_text(warm, precise=False)  # the full extraction: jusText too
    samples: list[Sample] = []
    skipped = 0
    wall0 = time.perf_counter()
    for url, body, rel in bodies:
        sample = measure(url, body, max(1, args.repeat), rel)
        if sample is None:
            skipped += 1
        else:
            samples.append(sample)
    wall = time.perf_counter() - wall0
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if not samples:
        print("no pages measured", file=sys.stderr)
        return 2

    a = [s.parse for s in samples]
    b = [s.b for s in samples]
    c = [s.c for s in samples]
    dec = [s.decode for s in samples]
    rows = [
        ("decode (w3lib, apart)", dec),
        ("(a) lxml parse", a),
        ("(b) parse + extractors", b),
        ("(c) (b) + abstract", c),
    ]
    print(f"machine: {machine()}")
    print(f"pages: {len(samples)} measured, {skipped} skipped (empty or not HTML)")
    print(f"repeats per page: {args.repeat} (minimum CPU time kept); wall {wall:.0f} s")
    print(f"{'per page, CPU ms':28} {'median':>7} {'p95':>7} {'mean':>7} {'pages/s/core':>12}")
    for label, values in rows:
        print(
            f"{label:28} {ms(quantile(values, 0.5))} {ms(quantile(values, 0.95))} "
            f"{ms(statistics.fmean(values))} {1 / statistics.fmean(values):12.1f}"
        )
    print("share of (b), CPU ms:")
    parts = {"parse_page": [s.full_parse for s in samples]}
    parts.update({k: [s.parts[k] for s in samples] for k in EXTRACTORS})
    total_b = sum(b)
    for key, values in parts.items():
        print(
            f"  {key:26} {ms(quantile(values, 0.5))} {ms(quantile(values, 0.95))} "
            f"{ms(statistics.fmean(values))} {100 * sum(values) / total_b:11.1f}%"
        )
    med_ratio = quantile(b, 0.5) / quantile(a, 0.5)
    p95_ratio = quantile(b, 0.95) / quantile(a, 0.95)
    extract_only = [s.b - s.full_parse for s in samples]
    rate_c = 1 / statistics.fmean(c)
    print(
        f"(b)/(a): median {med_ratio:.2f}, p95 {p95_ratio:.2f} (floor <= {RATIO_FLOOR:g}); "
        f"extractors alone / (a): median {quantile(extract_only, 0.5) / quantile(a, 0.5):.2f}, "
        f"p95 {quantile(extract_only, 0.95) / quantile(a, 0.95):.2f}"
    )
    for what, free in (
        ("the friend extractor's measuring pass", [s.b - s.measuring for s in samples]),
        ("friend links", [s.b - s.parts["friends"] for s in samples]),
    ):
        print(
            f"(b)/(a) if {what} cost nothing: median {quantile(free, 0.5) / quantile(a, 0.5):.2f}"
            f", p95 {quantile(free, 0.95) / quantile(a, 0.95):.2f}"
        )
    print(f"(c) pages/s per core: {rate_c:.1f} (floor >= {PAGES_PER_SECOND_FLOOR:g})")
    homes = homes_with_feed(corpus)
    feed_cost, feeds = feed_abstract_cost(corpus, max(1, args.repeat))
    with_feed = [s.b + feed_cost for s in samples if s.name in homes]
    traf = [s.c for s in samples if s.name in homes]
    if with_feed:
        print(
            f"(c) on the {len(with_feed)} home pages with a feed, the abstract from the feed "
            f"({ms(feed_cost).strip()} ms, mean over {feeds} corpus feeds): "
            f"{1 / statistics.fmean(with_feed):.1f} pages/s per core; "
            f"with trafilatura there: {1 / statistics.fmean(traf):.1f}"
        )
    print(f"peak RSS: {rss_peak:.0f} MB ({rss_loaded:.0f} MB with the corpus loaded)")
    worst = sorted(samples, key=lambda s: -s.b)[:3]
    print("slowest (b): " + ", ".join(f"{s.name} {ms(s.b).strip()} ms" for s in worst))

    print("container scorer (extract_friends) on synthetic pages, µs per element:")
    linear_ok = True
    for shape, points, growth in linearity(max(1, args.repeat)):
        series = " ".join(f"{n}:{us:.1f}" for n, us in points)
        ok = growth <= LINEAR_FLOOR
        linear_ok &= ok
        print(f"  {shape:14} {series}  largest/smallest {growth:.2f} {'ok' if ok else 'FAIL'}")

    if args.digest or args.dump:
        h = hashlib.sha256()
        dump = args.dump.open("w", encoding="utf-8") if args.dump else None
        for url, body, rel in bodies:
            try:
                page = parse_page(url, body)
            except DecodeError:
                continue
            line = json.dumps(digest_of(page, url), ensure_ascii=False)
            h.update(line.encode())
            if dump is not None:
                dump.write(json.dumps({"page": rel, **json.loads(line)}, ensure_ascii=False) + "\n")
        if dump is not None:
            dump.close()
        print(f"digest of extractor outputs: {h.hexdigest()}")

    failures = []
    if med_ratio > RATIO_FLOOR or p95_ratio > RATIO_FLOOR:
        failures.append(f"(b)/(a) {med_ratio:.2f} / {p95_ratio:.2f} > {RATIO_FLOOR:g}")
    if rate_c < PAGES_PER_SECOND_FLOOR:
        failures.append(f"(c) {rate_c:.1f} pages/s < {PAGES_PER_SECOND_FLOOR:g}")
    if not linear_ok:
        failures.append("container scorer not linear")
    print("floors: " + ("all hold" if not failures else "FAIL: " + "; ".join(failures)))
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
