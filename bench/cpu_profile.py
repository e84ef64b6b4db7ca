"""Where a crawl's CPU goes: py-spy's samples of the crawl process, grouped into parts.

``bench/crawl.py --profile FILE`` records the crawl with py-spy (50 samples a second, every
thread, raw output) and prints this module's report; ``python bench/cpu_profile.py FILE``
prints it again from the raw file. py-spy counts a thread when it is running or ready to run,
so on an otherwise idle machine a share of the samples is a share of the crawl's CPU (both
threads: Scrapy's reactor and the extraction worker); profile a crawl alone. Not ``--gil``:
lxml parses without the GIL, and that time would go uncounted.

Two views:

* **Parts** (inclusive, so they overlap): the share of samples with a given function on the
  stack (the abstract, friend links, the measuring pass, ...), or in a given thread.
* **Owners** (exclusive, summing to 100 %): each sample goes to the code that was running,
  the innermost frame that belongs to an owner: blogfeeds' own code, the libraries the
  project keeps for what they do (trafilatura for the abstract, lxml's parser), or the
  framework (Scrapy, Twisted, asyncio, and whatever runs outside any owner). The standard
  library and lxml's Python helpers are not owners: their time goes to whoever called them.

The owners give a bound: if blogfeeds' own code cost nothing, a blog would still cost the
framework's, trafilatura's and the parser's share of today's CPU.

Usage, from the repository root::

    python bench/cpu_profile.py FILE.raw [--cpu-per-blog MS]
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

RATE = 50
"""Samples a second: enough for a crawl of minutes, little enough not to slow it."""

# A frame of py-spy's raw output: "function (path/to/file.py:line)".
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^():]*)(?::\d+)?\)$")
_COUNT = re.compile(r"[0-9]{1,12}")  # a day at 50 samples a second is 7 digits


@dataclass(frozen=True)
class Sample:
    """One stack (outermost frame first) and how many times py-spy saw it."""

    thread: str
    frames: tuple[tuple[str, str], ...]
    """``(function, file)`` pairs."""
    count: int


def read_raw(lines: Iterable[str]) -> Iterator[Sample]:
    """Samples of py-spy's ``--format raw --threads`` output: ``thread (id): name;frame;...
    count`` per line. A line that is not such a stack is skipped."""
    for line in lines:
        stack, _, count = line.rstrip("\r\n").rpartition(" ")
        if not stack or not _COUNT.fullmatch(count):
            continue
        thread, *frames = stack.split(";")
        parsed = []
        for frame in frames:
            m = _FRAME.match(frame)
            parsed.append((m["func"], m["file"]) if m else (frame, ""))
        yield Sample(thread.rpartition(": ")[2], tuple(parsed), int(count))


def record_command(pid: int, out: Path, py_spy: str = "py-spy") -> list[str]:
    """The py-spy command recording process ``pid`` until it exits, into ``out``."""
    return [
        py_spy, "record", "--pid", str(pid), "--rate", str(RATE), "--format", "raw",
        "--threads", "--nonblocking", "--output", str(out),
    ]  # fmt: skip


@dataclass(frozen=True)
class Part:
    """A named part of the crawl: a function on the stack (``func`` in a file whose path ends
    with ``file``), any function of the files under ``file`` (no ``func``), or a thread
    (name prefix)."""

    label: str
    func: str = ""
    file: str = ""
    thread: str = ""

    def holds(self, sample: Sample) -> bool:
        if self.thread:
            return self.thread in sample.thread
        if not self.func:
            return any(self.file in p for _, p in sample.frames)
        return any(f == self.func and p.endswith(self.file) for f, p in sample.frames)


PARTS = (
    Part("Scrapy's reactor thread", thread="MainThread"),
    # blogfeeds-extract-N, and PoolThread-blogfeeds-extract-N in code older than the ranked
    # runner (crawl.py --project)
    Part("the extraction thread", thread="blogfeeds-extract"),
    Part("analyze_page (one page)", "analyze_page", "blogfeeds/extract/blog.py"),
    Part("the abstract", "_abstract", "blogfeeds/extract/metadata.py"),
    Part("trafilatura", "extract", "trafilatura/core.py"),
    Part("friend links", "extract_friends", "blogfeeds/extract/friends/__init__.py"),
    Part("the measuring pass", "measure", "blogfeeds/extract/friends/measure.py"),
    Part("theme cards", "ThemeCards.friends", "blogfeeds/extract/friends/widgets.py"),
    Part("feed discovery", file="blogfeeds/extract/discovery/"),
    Part("the profile", "read_profile", "blogfeeds/extract/profile.py"),
    Part("parse", "parse_page", "blogfeeds/extract/page.py"),
    Part("feed reading", "read_feed", "blogfeeds/extract/feedreader/read.py"),
)
"""The parts the report lists, in this order."""

FRAMEWORK, OURS, ABSTRACT_LIB, PARSER = (
    "the framework (Scrapy, Twisted, asyncio)",
    "blogfeeds' own code",
    "trafilatura (the abstract)",
    "lxml's parser",
)
_LIBRARIES = ("trafilatura/", "justext/", "readability_lxml", "readability/", "htmldate/")
_FRAMEWORK_FILES = ("scrapy/", "twisted/", "asyncio/", "selectors.py", "threading.py")


def owner(sample: Sample) -> str:
    """The owner of the innermost frame that has one (see the module's docstring)."""
    for func, path in reversed(sample.frames):
        if func == "_bounded_parse" and path.endswith("blogfeeds/extract/page.py"):
            return PARSER  # lxml's C parser fed by our loop: its time is the parse
        if "blogfeeds/" in path and not path.endswith("blogfeeds/commands/crawl.py"):
            return OURS
        if any(lib in path for lib in _LIBRARIES):
            return ABSTRACT_LIB
        if any(fw in path for fw in _FRAMEWORK_FILES):
            return FRAMEWORK
    return FRAMEWORK


def waiting_for_io(sample: Sample) -> bool:
    """Whether the sample is the reactor waiting for I/O (``epoll_wait`` under the selector):
    py-spy, not stopping the process, sometimes counts that wait as running."""
    return bool(sample.frames) and sample.frames[-1] == ("EpollSelector.select", "selectors.py")


@dataclass
class Profile:
    total: int
    """Samples counted (the idle ones left out)."""
    parts: dict[str, int]
    owners: dict[str, int]
    idle: int = 0

    @classmethod
    def of(cls, samples: Iterable[Sample]) -> Profile:
        total = waiting = 0
        parts = dict.fromkeys((p.label for p in PARTS), 0)
        owners = dict.fromkeys((FRAMEWORK, ABSTRACT_LIB, PARSER, OURS), 0)
        for sample in samples:
            if waiting_for_io(sample):
                waiting += sample.count
                continue
            total += sample.count
            owners[owner(sample)] += sample.count
            for part in PARTS:
                if part.holds(sample):
                    parts[part.label] += sample.count
        return cls(total, parts, owners, waiting)

    def share(self, count: int) -> float:
        return count / self.total if self.total else 0.0

    @property
    def kept(self) -> float:
        """Share of the samples that are not blogfeeds' own code."""
        return 1.0 - self.share(self.owners[OURS])

    def report(self, cpu_per_blog_ms: float = 0.0) -> list[str]:
        lines = [
            f"py-spy: {self.total} samples ({self.total / RATE:.0f} s of samples; {self.idle} "
            "more of the reactor waiting for I/O, left out)"
        ]
        lines.append("parts (inclusive, they overlap):")
        lines += [f"  {100 * self.share(n):5.1f} %  {label}" for label, n in self.parts.items()]
        lines.append("owners (exclusive):")
        lines += [f"  {100 * self.share(n):5.1f} %  {label}" for label, n in self.owners.items()]
        if cpu_per_blog_ms and self.kept:
            lines.append(
                f"if blogfeeds' own code cost nothing: {cpu_per_blog_ms * self.kept:.0f} ms CPU "
                f"per blog (of {cpu_per_blog_ms:.0f}), at most {1 / self.kept:.2f}x the blogs "
                "per core"
            )
        return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("raw", type=Path, help="py-spy's raw output (--format raw --threads)")
    parser.add_argument("--cpu-per-blog", type=float, default=0.0, help="ms, for the bound")
    args = parser.parse_args(argv)
    if not math.isfinite(args.cpu_per_blog) or args.cpu_per_blog < 0:
        parser.error("--cpu-per-blog: milliseconds, 0 or more")
    try:
        with args.raw.open(encoding="utf-8", errors="replace") as lines:
            profile = Profile.of(read_raw(lines))
    except OSError as exc:
        print(f"cannot read {args.raw}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if not profile.total:
        print(f"no py-spy samples in {args.raw} (--format raw --threads)", file=sys.stderr)
        return 1
    print("\n".join(profile.report(args.cpu_per_blog)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
