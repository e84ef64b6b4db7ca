"""One table of extraction quality, ours beside the original rules, on the same inputs.

Suites (all read in place from the shared folder):

* ``feed-discovery``: the bug-derived cases of ``cases/feed-discovery``; ours is
  :func:`blogfeeds.extract.discovery.find_feeds` through each case's little web, the original is
  the page-only ``<link>`` rule (``BLOGFEEDS_FEED_RULESET = "original"``). Passed per the cases
  README; precision and recall over canonical feed URLs (``equivalent`` aliases folded): a
  reported feed is right when expected, wrong when neither expected nor ``allowed_extra``
  (allowed extras count neither way).
* ``labels-feeds``: the pages of ``corpus/labels.jsonl``, page-only
  :func:`~blogfeeds.extract.discovery.discover_feeds` (the labels come from ``<link>``); a page
  passes when our first feed is its labelled main feed (first non-comments one), or when it
  is labelled without feeds and we report none. Precision: right first feeds over pages where
  we report one; recall: right first feeds over pages labelled with feeds.
* ``friend-links``, ``friend-links-real``: ``extract_friends(page, ruleset=...)`` with
  ``"blogfeeds"`` and ``"original"``; passed per the cases README; micro precision and recall
  over friend URLs.

Usage, from the repository root::

    python bench/quality.py [--shared PATH]

The shared folder is ``--shared``, else ``$BLOGFEEDS_SHARED``, else ``../shared`` beside the
repository; the script exits with status 2 when it is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@dataclass
class Row:
    suite: str
    rules: str
    cases: int = 0
    passed: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def feed_case_counts(expected: dict[str, Any], reported: list[str]) -> tuple[int, int, int]:
    """(TP, FP, FN) of one feed-discovery case over canonical URLs."""
    from tests.cases import normalize_url

    aliases = {
        normalize_url(alias): normalize_url(canon)
        for canon, alist in (expected.get("equivalent") or {}).items()
        for alias in alist
    }

    def canon(url: str) -> str:
        n = normalize_url(url)
        return aliases.get(n, n)

    want = {canon(u) for u in expected.get("expected_feeds") or []}
    extra = {canon(u) for u in expected.get("allowed_extra") or []}
    got = {canon(u) for u in reported}
    return len(got & want), len(got - want - extra), len(want - got)


def feed_suite(rules: str) -> Row:
    from tests.cases import case_names, judge_feeds, load_case, run_feed_case

    row = Row("feed-discovery", rules)
    for name in case_names("feed-discovery"):
        case = load_case("feed-discovery", name)
        reported, _, _ = asyncio.run(run_feed_case(case, rules))
        row.cases += 1
        row.passed += judge_feeds(case.expected, reported).passed
        tp, fp, fn = feed_case_counts(case.expected, reported)
        row.tp, row.fp, row.fn = row.tp + tp, row.fp + fp, row.fn + fn
    return row


def label_suite(rules: str) -> Row:
    from blogfeeds.extract.discovery import RULESETS
    from tests.test_feed_labels import label_figures

    f = label_figures(*RULESETS[rules])
    return Row(
        "labels-feeds",
        rules,
        cases=f.with_feeds + f.without_feeds + f.undecodable,
        passed=f.main_first + f.no_feed,
        tp=f.main_first,
        fp=f.wrong_first + (f.without_feeds - f.no_feed),
        fn=f.with_feeds - f.main_first,
    )


def friend_suite(suite: str, rules: str) -> Row:
    from blogfeeds.extract.friends import extract_friends
    from blogfeeds.extract.page import parse_page
    from tests.cases import case_names, judge_friends, load_case

    row = Row(suite, rules)
    for name in case_names(suite):
        case = load_case(suite, name)
        body = (case.path / "page.html").read_bytes()
        page = parse_page(case.page_url, body, {"Content-Type": "text/html"})
        found = extract_friends(page, ruleset=rules).friends
        verdict = judge_friends(case.expected, [(f.url, f.name) for f in found])
        row.cases += 1
        row.passed += verdict.passed
        row.tp, row.fp, row.fn = row.tp + verdict.tp, row.fp + verdict.fp, row.fn + verdict.fn
    return row


def table(rows: list[Row]) -> str:
    lines = [
        "| suite | rules | cases | passed | precision | recall |",
        "|---|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.suite} | {r.rules} | {r.cases} | {r.passed} | {r.precision:.3f} | {r.recall:.3f} |"
        for r in rows
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", help="the shared reference folder")
    args = parser.parse_args(argv)
    shared = Path(args.shared or os.environ.get("BLOGFEEDS_SHARED") or ROOT.parent / "shared")
    if not (shared / "cases").is_dir():
        print(f"shared folder not found: {shared}", file=sys.stderr)
        return 2
    os.environ["BLOGFEEDS_SHARED"] = str(shared)
    rows = []
    for rules in ("blogfeeds", "original"):
        rows.append(feed_suite(rules))
    for rules in ("blogfeeds", "original"):
        rows.append(label_suite(rules))
    for suite in ("friend-links", "friend-links-real"):
        for rules in ("blogfeeds", "original"):
            rows.append(friend_suite(suite, rules))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
