"""Robustness report: inputs tried, exceptions, faults injected, items lost.

Three parts, each printed as it finishes and summed at the end:

* ``corpus``: every page under ``corpus/pages`` and every feed under ``corpus/feeds`` of the
  shared folder through the extractors (``tests/robustness.py``: ``walk_corpus``);
* ``fuzz``: hypothesis-generated hostile inputs (mutated and generated HTML, random URLs,
  random and mutated feeds; the strategies of ``tests/robustness.py``) through the page
  extractors, the identity code, the URL cleaner and the feed readers. Exceptions are counted,
  not raised, so every example runs;
* ``crawl``: the hostile loopback web of ``tests/test_robustness_crawl.py`` (an infinite calendar,
  endless trap blogs, and one blog per failure kind: 404, 500, timeout, DNS, 20 MB page, gzip bomb,
  image, empty page, overlong redirect, noindex, nofollow, meta refresh, robots.txt) crawled by a
  real ``scrapy crawl blogs``. Faults injected = blogs served a failure or a trap; items lost =
  blogs linked from the hub that are missing from the export or from the SQLite database.

Usage, from the repository root::

    python bench/robustness.py [--examples 10000] [--shared PATH] [--skip-crawl]

Exit status 1 when an exception escaped or an item was lost; 2 when the shared folder is missing.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
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

from blogfeeds.extract.directives import crawl_url  # noqa: E402
from blogfeeds.extract.identity import blog_id, registered_domain, split_url  # noqa: E402
from blogfeeds.extract.page import decode_html  # noqa: E402
from tests.littleweb import LittleWeb  # noqa: E402
from tests.robustness import (  # noqa: E402
    check_feed,
    check_page,
    crawl_blogs,
    feed_documents,
    html_documents,
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

    def line(self) -> str:
        return (
            f"{self.name:<8} inputs {self.tried:>6}  exceptions {len(self.exceptions):>3}  "
            f"faults injected {self.faults:>3}  items lost {self.lost:>3}  ({self.seconds:.0f} s)"
        )


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", help="the shared reference folder")
    parser.add_argument("--examples", type=int, default=10_000, help="fuzz examples in all")
    parser.add_argument("--skip-crawl", action="store_true", help="no loopback crawl")
    args = parser.parse_args(argv)
    shared = Path(args.shared or os.environ.get("BLOGFEEDS_SHARED") or ROOT.parent / "shared")
    if not (shared / "corpus").is_dir():
        print(f"shared folder not found: {shared}", file=sys.stderr)
        return 2
    parts = [corpus_part(shared)]
    print(parts[-1].line(), flush=True)
    parts.append(fuzz_part(args.examples))
    print(parts[-1].line(), flush=True)
    if not args.skip_crawl:
        parts.append(crawl_part())
        print(parts[-1].line(), flush=True)
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
