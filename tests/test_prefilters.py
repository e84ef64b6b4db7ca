"""The cheap tests that skip work before a costly one: each must never skip a page or an anchor
the costly test would accept (they exist for speed, issue 19; the outputs must not move)."""

from __future__ import annotations

import csv
import gzip

import lxml.html
import pytest

from blogfeeds.extract.css import can_match, required_classes
from blogfeeds.extract.discovery.candidates import absolute
from blogfeeds.extract.discovery.vocabulary import MAYBE_FEED_URL, feed_like_href, is_feed_host
from blogfeeds.extract.page import parse_page
from tests.cases import shared_dir

FEED_URLS = [
    "https://a.example/feed/",
    "https://a.example/feeds/posts/default",
    "https://a.example/RSS",
    "https://a.example/rss2",
    "https://a.example/atom.xml",
    "https://a.example/index.xml",
    "https://a.example/posts.json",
    "https://a.example/all.json",
    "https://a.example/blog.rdf",
    "https://a.example/x.atom",
    "https://a.example/?feed=rss2",
    "https://feeds.example.org/x",
    "https://RSS.example.org/",
    "https://feeds.feedburner.com/x",
    "https://feedpress.me/x",
    "https://x.feedblitz.com/",
]


@pytest.mark.parametrize("url", FEED_URLS)
def test_a_url_the_feed_tests_accept_passes_the_url_prefilter(url: str) -> None:
    assert feed_like_href(url) or is_feed_host(url)
    assert MAYBE_FEED_URL.search(url)


def test_no_anchor_of_the_corpus_that_the_feed_tests_accept_fails_the_url_prefilter() -> None:
    root = shared_dir()
    if root is None:
        pytest.skip("the shared corpus is absent")
    corpus = root / "corpus"
    accepted = 0
    with (corpus / "replay_urls.tsv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    for row in rows[:400]:
        path = corpus / row["local_file"]
        if not path.is_file() or not row["url"].startswith("http"):
            continue
        body = path.read_bytes()
        body = gzip.decompress(body) if path.name.endswith(".gz") else body
        try:
            tree = lxml.html.fromstring(body)
        except (lxml.etree.ParserError, ValueError):
            continue
        for href in tree.xpath("//a/@href"):
            url = absolute(row["url"], str(href))
            if url and (feed_like_href(url) or is_feed_host(url)):
                accepted += 1
                assert MAYBE_FEED_URL.search(url), url
    assert accepted > 50  # the corpus holds feed links: the test reads them


def test_required_classes_of_compound_and_grouped_selectors() -> None:
    assert required_classes(".a .b > li, ul.c") == (frozenset({"a", "b"}), frozenset({"c"}))
    assert required_classes("#x, h2") == (frozenset(), frozenset())
    assert required_classes("li:not(.a)") == (frozenset(),)
    assert required_classes("((") is None


def test_a_selector_is_skipped_only_when_the_page_lacks_its_classes() -> None:
    page = parse_page(
        "https://a.example/",
        b'<html><body><header class="top  site-header"><p class="description">x</p>'
        b'</header><p class="top">y</p></body></html>',
    )
    classes = page.class_names
    assert classes == {"top", "site-header", "description"}
    assert can_match("header .description", classes)
    assert can_match("h2.description, .subtitle", classes)
    assert not can_match(".site-description, .blog-description", classes)
    assert can_match("#site-description", classes)  # ids are not prefiltered
    assert can_match("((", classes)  # unknown: run it, its compile reports the error
