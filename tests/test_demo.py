"""``scrapy demo``: the bundled blogosphere crawled offline, through the package's loopback web
(the one the tests use), its feeds fetched and its site built."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import blogfeeds.demo.web
import tests.littleweb
from blogfeeds.demo.blogosphere import BLOGS, routes
from blogfeeds.storage.feedstore import FeedStore

REPO = Path(__file__).resolve().parent.parent


def test_the_tests_use_the_packages_little_web() -> None:
    assert tests.littleweb.LittleWeb is blogfeeds.demo.web.LittleWeb
    assert tests.littleweb.Route is blogfeeds.demo.web.Route


def test_the_blogosphere_links_blogs_it_serves_and_one_that_is_gone() -> None:
    table = routes(now=1_800_000_000)
    served = {b.host for b in BLOGS}
    listed = {host for b in BLOGS for host in b.friends}
    assert listed - served == {"gone-blog.example"}
    assert all(f"https://{host}/" in table for host in served)
    assert "https://gone-blog.example/" not in table


@pytest.mark.integration
def test_scrapy_demo_crawls_fetches_and_builds_the_site_offline(tmp_path: Path) -> None:
    # a shell set up for a cluster must not reach it: the demo keeps to its own database
    env = {
        **os.environ,
        "REDIS_URL": "redis://127.0.0.1:1/0",
        "BLOGFEEDS_ALLOW_PRIVATE_TARGETS": "0",
    }
    out = tmp_path / "my demo"
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "demo", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = done.stdout
    assert "Crawl summary (finished):\nBlogs: 8, with a feed: 6 (75 %); friend links: 20" in text
    assert "By status: ok 6, http_4xx 1, no_feed 1" in text
    assert (
        "Feeds summary (finished):\nFetched: 6; not modified (304): 0; changed: 0; new entries: 18"
        in text
    )
    assert text.rstrip().splitlines()[-2] == f"Open {(out / 'site' / 'index.html').as_uri()}"
    assert (out / "site" / "index.html").is_file()
    with FeedStore.open(f"sqlite:///{out / 'demo.sqlite3'}", read_only=True) as store:
        assert len(store.blogs()) == 8 and len(store.friend_links()) == 20
    # run again: the demo starts afresh, not on top of the first run
    again = subprocess.run(
        [sys.executable, "-m", "scrapy", "demo", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert again.returncode == 0 and "8 blogs, 20 friend links in all" in again.stdout
