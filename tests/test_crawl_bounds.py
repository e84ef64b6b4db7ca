"""One page never freezes the crawl: six blogs serve an 8 MB page of 150,000 links while ten
other blogs answer in 0.5 s under a 3 s download timeout. Before the page bounds and the
extraction thread, each big page held the reactor for about 33 s: the slow blogs were stored
as ``timeout`` and the process peaked over 1 GB."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.littleweb import LittleWeb
from tests.robustness import BIG_PAGES_SETTINGS, big_pages_web, crawl_blogs


@pytest.mark.integration
def test_six_huge_link_pages_delay_no_other_download(tmp_path: Path) -> None:
    routes, seeds = big_pages_web(big=6, slow=10)
    settings = {**BIG_PAGES_SETTINGS, "BLOGFEEDS_MAX_BLOGS": str(len(seeds))}
    with LittleWeb(routes) as web:
        run = crawl_blogs(web, seeds, tmp_path, settings=settings, timeout=600)
    assert run.returncode == 0, run.log[-3000:]
    assert not run.tracebacks()
    with sqlite3.connect(tmp_path / "crawl.sqlite3") as db:
        stored = dict(db.execute("SELECT blog_id, status || ':' || truncated FROM blogs"))
    slow = {f"slow{i}.example" for i in range(10)}
    big = {f"big{i}.example" for i in range(6)}
    assert {b: stored.get(b) for b in slow} == dict.fromkeys(slow, "ok:")
    assert {b: stored.get(b) for b in big} == dict.fromkeys(big, "no_feed:links")
    assert run.stat("blogfeeds/blog_failed/timeout") == 0
    assert run.stat("blogfeeds/truncated/links") == 6
    # the reactor was never held as long as a download may take (3 s); each page alone
    # costs about 2.5 s of CPU, so extraction on the reactor thread would not pass this
    assert 0 < run.stat("blogfeeds/reactor/longest_stall_ms") < 3000
    assert 0 < run.stat("blogfeeds/peak_rss_mb") < 400
