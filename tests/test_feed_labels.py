"""Feed recall on the labelled real pages of ``<shared>/corpus/labels.jsonl`` (page only).

The labels list each page's feeds from its ``<link rel=alternate>`` elements (WordPress REST
and oEmbed JSON left out), so the page-only :func:`discover_feeds` is measured, with no
fetching:

* main first: for pages labelled with feeds, the labelled main feed (the first one that is not
  a comments feed: ``comment`` in the URL, or a comments title) is our first feed;
* no feed: for pages labelled without feeds, we report none.

Both rule sets run on the same pages; the blogfeeds figures must reach the floors of
``tests/quality_floors.json`` (``labels-feeds``). Pages without a known URL resolve their feeds
against a placeholder origin, the same for the label and for us. A typed ``<link>`` whose rel
lacks ``alternate`` (``rel="alternative"`` on the Hexo pages of 0xA1paca) is a hint that
``find_feeds`` validates: not reported by the page alone, counted separately.

A second test runs the pipeline (:func:`find_feeds`) over the corpus replay on the pages
labelled without a feed and counts, apart, those where it validates one.

Skips when the shared corpus is missing.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from blogfeeds.extract.discovery import (
    LINK_HINT,
    ORIGINAL_FEED_SCORERS,
    ORIGINAL_FEED_STAGES,
    DiscoveryConfig,
    Fetched,
    FetchRequest,
    RulesSpec,
    discover_feeds,
    find_feeds,
)
from blogfeeds.extract.discovery.vocabulary import is_comments_url, url_key
from blogfeeds.extract.page import DecodeError, parse_page
from blogfeeds.extract.scoring import build_rules
from tests.cases import shared_dir

FLOORS: dict[str, Any] = json.loads(
    Path(__file__).with_name("quality_floors.json").read_text("utf-8")
)
PLACEHOLDER = "https://unknown-page.invalid/"
_COMMENT_TITLE = ("comment", "kommentar", "commentaire", "comentario", "commenti", "评论")


@dataclass
class LabelFigures:
    """Counts over the labelled pages for one rule set."""

    with_feeds: int = 0
    main_first: int = 0
    without_feeds: int = 0
    no_feed: int = 0
    wrong_first: int = 0
    """Pages labelled with feeds where our first feed is another URL."""
    hints_only: int = 0
    """Pages labelled without feeds where only a hint (validated by find_feeds) is found."""
    undecodable: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.main_first / self.with_feeds if self.with_feeds else 1.0

    @property
    def specificity(self) -> float:
        return self.no_feed / self.without_feeds if self.without_feeds else 1.0


def labelled_pages() -> list[dict[str, Any]]:
    root = shared_dir()
    path = root / "corpus" / "labels.jsonl" if root else None
    if path is None or not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def labelled_main(row: dict[str, Any], base: str) -> str:
    titles = {link["abs"]: link.get("title") or "" for link in row.get("feed_links_raw") or []}
    feeds = row["feeds"]
    for feed in feeds:
        title = titles.get(feed, "").lower()
        if not is_comments_url(feed) and not any(w in title for w in _COMMENT_TITLE):
            return urljoin(base, feed)
    return urljoin(base, feeds[0])


def label_figures(rules: RulesSpec = None, stages: RulesSpec = None) -> LabelFigures:
    """Run page-only discovery over every labelled page (see the module docstring)."""
    root = shared_dir()
    assert root is not None
    built = build_rules(rules) if isinstance(rules, dict) else rules
    built_stages = build_rules(stages) if isinstance(stages, dict) else stages
    figures = LabelFigures()
    for row in labelled_pages():
        data = (root / "corpus" / row["file"]).read_bytes()
        if row["file"].endswith(".gz"):
            data = gzip.decompress(data)
        base = row.get("url") or PLACEHOLDER
        try:
            page = parse_page(base, data, {})
        except DecodeError:
            figures.undecodable += 1
            continue
        ours = [c.url for c in discover_feeds(page, built, stages=built_stages)]
        if row["feeds"]:
            figures.with_feeds += 1
            want = labelled_main(row, base)
            if ours and url_key(ours[0]) == url_key(want):
                figures.main_first += 1
            else:
                figures.wrong_first += bool(ours)
                figures.misses.append(f"{row['file']}: want {want}, got {ours[:2]}")
        else:
            figures.without_feeds += 1
            if ours:
                figures.misses.append(f"{row['file']}: labelled no feed, got {ours[:2]}")
                continue
            figures.no_feed += 1
            hinted = discover_feeds(page, built, stages=built_stages, hints=True)
            if any(c.source == LINK_HINT for c in hinted):
                figures.hints_only += 1
    return figures


def summary(label: str, f: LabelFigures) -> str:
    return (
        f"labels-feeds [{label}]: main first {f.main_first}/{f.with_feeds} ({f.recall:.3f}), "
        f"no feed {f.no_feed}/{f.without_feeds} ({f.specificity:.3f}), "
        f"link hints left to validation {f.hints_only}, undecodable {f.undecodable}"
    )


@pytest.mark.skipif(not labelled_pages(), reason="shared corpus not found")
def test_feed_labels_ours_beside_original(capsys: pytest.CaptureFixture[str]) -> None:
    ours = label_figures()
    original = label_figures(ORIGINAL_FEED_SCORERS, ORIGINAL_FEED_STAGES)
    with capsys.disabled():
        print("\n" + summary("blogfeeds", ours))
        print(summary("original", original))
    floor = FLOORS["labels-feeds"]
    assert ours.with_feeds > 300 and ours.without_feeds > 250
    assert ours.recall >= floor["main_first"], ours.misses
    assert ours.specificity >= floor["no_feed"], ours.misses


def _replay_table(root: Path) -> dict[str, str]:
    table = {}
    lines = (root / "corpus" / "replay_urls.tsv").read_text("utf-8").splitlines()[1:]
    for line in lines:
        url, _, local = line.partition("\t")
        if url.startswith(("http://", "https://")):
            table[url_key(url)] = local
    return table


@pytest.mark.skipif(not labelled_pages(), reason="shared corpus not found")
def test_validated_feeds_on_pages_labelled_without_one(capsys: pytest.CaptureFixture[str]) -> None:
    """find_feeds over the corpus replay (``replay_urls.tsv``: URL → saved file, else 404) on
    the pages labelled without a feed: feeds it validates there (a guess, an anchor, a
    ``rel="alternative"`` link) are counted separately, and each must be a saved feed file,
    never a saved HTML page."""
    root = shared_dir()
    assert root is not None
    table = _replay_table(root)

    def load(local: str) -> bytes:
        data = (root / "corpus" / local).read_bytes()
        return gzip.decompress(data) if local.endswith(".gz") else data

    async def replay(request: FetchRequest) -> Fetched | None:
        local = table.get(url_key(request.url))
        if local is None:
            return Fetched(request.url, 404, {}, b"")
        return Fetched(request.url, 200, {}, load(local))

    by_source: Counter[str] = Counter()
    pages = 0
    for row in labelled_pages():
        if row["feeds"] or not row.get("url"):
            continue
        page = parse_page(row["url"], load(row["file"]), {})
        report = asyncio.run(find_feeds(page, replay))
        assert report.requests <= DiscoveryConfig().max_requests
        if report.feeds:
            pages += 1
            by_source[report.feeds[0].source] += 1
        for feed in report.feeds:
            assert table[url_key(feed.url)].startswith("feeds/"), feed
    with capsys.disabled():
        print(
            f"\nlabels-feeds: pages labelled without a feed where find_feeds validates one "
            f"(counted apart): {pages} ({dict(sorted(by_source.items()))})"
        )
