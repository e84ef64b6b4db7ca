"""Data-driven quality suites over ``<shared>/cases`` (feed discovery, friend links).

Each case folder is judged with the README's pass definition (:mod:`tests.cases`).

* One test per case: every case must pass, unless its suite in ``tests/quality_floors.json``
  lists it under ``known_failures`` with the reason (then it is an expected failure, and it
  fails when it passes, so that the list stays true). A crash always fails.
* One test per suite: prints ``<suite>: N/M passed`` (and micro precision/recall for the
  friend suites) and asserts the pinned floors. Raise the floors when the extractors improve.

Skips cleanly when the shared directory is absent (``BLOGFEEDS_SHARED`` or ``../shared``).
"""

from __future__ import annotations

import asyncio
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.extract.friends import extract_friends
from blogfeeds.extract.page import parse_page
from tests.cases import Verdict, case_names, judge_feeds, judge_friends, load_case, run_feed_case
from tests.cases import shared_dir as _shared_dir

FLOORS: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).with_name("quality_floors.json")).read_text("utf-8")
)
FRIEND_SUITES = ("friend-links", "friend-links-real")

pytestmark = pytest.mark.skipif(
    _shared_dir() is None, reason="shared cases not found (set BLOGFEEDS_SHARED or ../shared)"
)


@cache
def feed_result(name: str) -> tuple[Verdict, tuple[str, ...]]:
    """Fetch the case's page through its little web, run feed autodiscovery (find_feeds, with
    its validation fetches through the same web), judge the feeds."""
    case = load_case("feed-discovery", name)
    reported, _, _ = asyncio.run(run_feed_case(case))
    return judge_feeds(case.expected, reported), tuple(reported)


@cache
def friend_result(
    suite: str, name: str, ruleset: str = "blogfeeds", fold_www: bool = True
) -> tuple[Verdict, tuple[tuple[str, str], ...]]:
    """Parse the case's page at ``page_url``, extract friends with ``ruleset``, judge them.

    The page is served as ``text/html`` without a charset so its own declaration decides
    (``table-footer-links-legacy`` is GB2312, as it declares). ``fold_www=False`` is the
    README's judge exactly (see :func:`tests.cases.judge_friends`).
    """
    case = load_case(suite, name)
    body = (case.path / "page.html").read_bytes()
    page = parse_page(case.page_url, body, {"Content-Type": "text/html"})
    reported = tuple((f.url, f.name) for f in extract_friends(page, ruleset=ruleset).friends)
    return judge_friends(case.expected, list(reported), fold_www=fold_www), reported


def friend_figures(suite: str, ruleset: str, fold_www: bool = True) -> dict[str, Any]:
    """Passed cases, micro precision and recall of ``ruleset`` over a friend suite."""
    results = {n: friend_result(suite, n, ruleset, fold_www)[0] for n in case_names(suite)}
    tp = sum(v.tp for v in results.values())
    fp = sum(v.fp for v in results.values())
    fn = sum(v.fn for v in results.values())
    return {
        "passed": sorted(n for n, v in results.items() if v.passed),
        "failing": {n: v.problems for n, v in results.items() if not v.passed},
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "counts": (tp, fp, fn),
    }


def _check_case(suite: str, name: str, verdict: Verdict, reported: object) -> None:
    known = FLOORS[suite].get("known_failures", {})
    if verdict.passed:
        if name in known:
            pytest.fail(f"{suite}/{name} passes: remove it from known_failures")
        return
    detail = f"{suite}/{name}: {'; '.join(verdict.problems)} (reported {reported})"
    if name not in known:
        pytest.fail(f"failing case (list it in known_failures with a reason if expected): {detail}")
    pytest.xfail(f"known failure ({known[name]}): {detail}")


@pytest.mark.parametrize("name", case_names("feed-discovery"))
def test_feed_discovery_case(name: str) -> None:
    verdict, reported = feed_result(name)
    _check_case("feed-discovery", name, verdict, reported)


@pytest.mark.parametrize(("suite", "name"), [(s, n) for s in FRIEND_SUITES for n in case_names(s)])
def test_friend_links_case(suite: str, name: str) -> None:
    verdict, reported = friend_result(suite, name)
    _check_case(suite, name, verdict, reported)


def _report(capsys: pytest.CaptureFixture[str], line: str) -> None:
    with capsys.disabled():
        print(f"\n{line}")


def test_feed_discovery_suite(capsys: pytest.CaptureFixture[str]) -> None:
    names = case_names("feed-discovery")
    results = {n: feed_result(n)[0] for n in names}
    passed = sorted(n for n, v in results.items() if v.passed)
    _report(capsys, f"feed-discovery: {len(passed)}/{len(names)} passed")
    floor = FLOORS["feed-discovery"]
    failing = {n: v.problems for n, v in results.items() if not v.passed}
    assert len(passed) >= floor["passed"], f"below floor {floor['passed']}: {failing}"


@pytest.mark.parametrize("suite", FRIEND_SUITES)
def test_friend_links_suite(suite: str, capsys: pytest.CaptureFixture[str]) -> None:
    names = case_names(suite)
    ours = friend_figures(suite, "blogfeeds")
    original = friend_figures(suite, "original")
    strict = friend_figures(suite, "blogfeeds", fold_www=False)
    lines = []
    for label, fig in (("blogfeeds", ours), ("original", original)):
        tp, fp, fn = fig["counts"]
        lines.append(
            f"{suite} [{label}]: {len(fig['passed'])}/{len(names)} passed, micro precision "
            f"{fig['precision']:.3f} recall {fig['recall']:.3f} (TP {tp}, FP {fp}, FN {fn})"
        )
    lines.append(
        f"{suite} [blogfeeds, README judge without www folding]: "
        f"{len(strict['passed'])}/{len(names)} passed"
    )
    _report(capsys, "\n".join(lines))
    floor = FLOORS[suite]
    assert len(ours["passed"]) >= floor["passed"], (
        f"below floor {floor['passed']}: {ours['failing']}"
    )
    assert ours["precision"] >= floor["precision"], (
        f"precision {ours['precision']:.3f} < {floor['precision']}"
    )
    assert ours["recall"] >= floor["recall"], f"recall {ours['recall']:.3f} < {floor['recall']}"
