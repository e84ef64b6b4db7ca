"""``bench/cpu_profile.py``: py-spy's raw stacks of a crawl grouped into parts and owners.

The stacks below are lines of a real ``py-spy record --format raw --threads`` of
``bench/crawl.py``'s crawl, with their middle frames cut.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

_PATH = Path(__file__).resolve().parents[1] / "bench" / "cpu_profile.py"
_SPEC = importlib.util.spec_from_file_location("bench_cpu_profile", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
cpu_profile = importlib.util.module_from_spec(_SPEC)
sys.modules["bench_cpu_profile"] = cpu_profile
_SPEC.loader.exec_module(cpu_profile)

_POOL = (
    "thread (15136): blogfeeds-extract-0;Thread._bootstrap (threading.py:1002);"
    "ThreadWorker.__init__.<locals>.work (twisted/_threads/_threadworker.py:76);"
    "ContextTracker.callWithContext (twisted/python/context.py:81)"
)
_HOME = _POOL + ";analyze_page (blogfeeds/extract/blog.py:518)"
_MAIN = (
    "thread (14988): MainThread;Command.run (blogfeeds/commands/crawl.py:70);"
    "AsyncioSelectorReactor.run (twisted/internet/asyncioreactor.py:254)"
)


def _line(base: str, *frames: str, count: int) -> str:
    return ";".join((base, *frames)) + f" {count}"


_META = "blogfeeds/extract/metadata.py"
_FRIENDS = "blogfeeds/extract/friends"
RAW = [
    _line(
        _HOME,
        f"extract_metadata ({_META}:472)",
        f"_abstract ({_META}:443)",
        "extract (trafilatura/core.py:550)",
        "prune_unwanted_nodes (trafilatura/htmlprocessing.py:70)",
        count=7,
    ),
    _line(
        _HOME,
        "parse_page (blogfeeds/extract/page.py:350)",
        "_bounded_parse (blogfeeds/extract/page.py:290)",
        count=2,
    ),
    _line(
        _HOME,
        "page_friends (blogfeeds/extract/blog.py:300)",
        f"extract_friends ({_FRIENDS}/__init__.py:120)",
        f"extract_layered ({_FRIENDS}/layered.py:110)",
        f"measure ({_FRIENDS}/measure.py:283)",
        count=5,
    ),
    _line(
        _POOL,
        "DiscoveryRun.gather (blogfeeds/extract/discovery/discover.py:200)",
        "link_candidates (blogfeeds/extract/discovery/candidates.py:163)",
        "urlsplit (urllib/parse.py:507)",
        count=1,
    ),
    _line(
        _MAIN,
        "BaseSelectorEventLoop._add_reader (asyncio/selector_events.py:267)",
        "_PollLikeSelector.register (selectors.py:359)",
        count=4,
    ),
    _line(
        _MAIN,
        "BlogsSpider.parse_home (blogfeeds/spiders/blogs.py:210)",
        "urljoin (urllib/parse.py:530)",
        count=1,
    ),
    _line(_MAIN, count=1),
    "not a stack",
]


def _profile() -> Any:
    return cpu_profile.Profile.of(cpu_profile.read_raw(RAW))


def test_owner_is_the_innermost_frame_with_one() -> None:
    owners = _profile().owners
    assert owners == {
        cpu_profile.ABSTRACT_LIB: 7,  # trafilatura called by our abstract
        cpu_profile.PARSER: 2,
        cpu_profile.OURS: 5 + 1 + 1,  # urlsplit goes to its caller, ours
        cpu_profile.FRAMEWORK: 4 + 1,  # the crawl command's own frame owns nothing
    }


def test_parts_are_inclusive_and_threads_are_named() -> None:
    profile = _profile()
    parts = profile.parts
    assert profile.total == 21
    assert parts["Scrapy's reactor thread"] == 6
    assert parts["the extraction thread"] == 15
    assert parts["analyze_page (one page)"] == 14
    assert parts["the abstract"] == parts["trafilatura"] == 7
    assert parts["friend links"] == parts["the measuring pass"] == 5
    assert parts["feed discovery"] == 1
    assert parts["parse"] == 2


def test_the_bound_is_what_is_left_without_our_code() -> None:
    profile = _profile()
    assert profile.kept == pytest.approx(14 / 21)
    last = profile.report(cpu_per_blog_ms=105.0)[-1]
    assert last.startswith("if blogfeeds' own code cost nothing: 70 ms CPU per blog (of 105)")
    assert "1.50x" in last


def test_record_command_reads_every_thread_raw_until_exit(tmp_path: Path) -> None:
    cmd = cpu_profile.record_command(42, tmp_path / "x.raw")
    assert cmd[:2] == ["py-spy", "record"]
    assert {"--threads", "--nonblocking", "raw", "42"} <= set(cmd)
    assert "--duration" not in cmd


def test_the_reactor_waiting_for_io_is_left_out() -> None:
    waiting = _line(
        _MAIN,
        "AsyncioSelectorReactor.doIteration (twisted/internet/asyncioreactor.py:250)",
        "EpollSelector.select (selectors.py:468)",
        count=9,
    )
    profile = cpu_profile.Profile.of(cpu_profile.read_raw([*RAW, waiting]))
    assert (profile.total, profile.idle) == (21, 9)
    assert "9 more of the reactor waiting for I/O" in profile.report()[0]


@pytest.mark.parametrize("count", ["²", "٣", "1" * 13, "-4", "4.0", ""])
def test_a_line_without_a_plain_count_is_skipped(count: str) -> None:
    line = _line(_MAIN, "f (a.py:1)", count=0)[: -len(" 0")] + f" {count}"
    assert list(cpu_profile.read_raw([line])) == []


def test_the_command_line_says_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cpu_profile.main([str(tmp_path / "none.raw")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert cpu_profile.main([str(tmp_path)]) == 2  # a directory
    empty = tmp_path / "empty.raw"
    empty.write_bytes(b"\x00\xff not a stack\n")
    assert cpu_profile.main([str(empty)]) == 1
    assert "no py-spy samples" in capsys.readouterr().err
    raw = tmp_path / "crawl.raw"
    raw.write_text("\n".join(RAW) + "\n", encoding="utf-8")
    assert cpu_profile.main([str(raw), "--cpu-per-blog", "105"]) == 0
    assert "70 ms CPU per blog (of 105)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cpu_profile.main([str(raw), "--cpu-per-blog", "-1"])
