"""The cheap tests that skip work before a costly one: each must never skip a page or an anchor
the costly test would accept (they exist for speed, issue 19; the outputs must not move)."""

from __future__ import annotations

import csv
import gzip

import lxml.html
import pytest
from scrapy import Request, Spider
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from blogfeeds.extract.css import can_match, required_classes
from blogfeeds.extract.discovery.candidates import absolute
from blogfeeds.extract.discovery.vocabulary import MAYBE_FEED_URL, feed_like_href, is_feed_host
from blogfeeds.extract.page import parse_page
from blogfeeds.middlewares.refresh import SelfAwareMetaRefreshMiddleware, may_refresh
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


def _corpus_anchors() -> list[tuple[str, str]]:
    """``(page URL, href)`` of every anchor on the first 400 replayed pages of the corpus."""
    root = shared_dir()
    if root is None:
        pytest.skip("the shared corpus is absent")
    corpus = root / "corpus"
    anchors = []
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
        anchors += [(row["url"], str(href)) for href in tree.xpath("//a/@href")]
    return anchors


def test_no_anchor_of_the_corpus_that_the_feed_tests_accept_fails_the_url_prefilter() -> None:
    accepted = 0
    for base, href in _corpus_anchors():
        url = absolute(base, href)
        if url and (feed_like_href(url) or is_feed_host(url)):
            accepted += 1
            assert MAYBE_FEED_URL.search(url), url
    assert accepted > 50  # the corpus holds feed links: the test reads them


JOINS = [
    ("https://a.example/blog/r", "ss.xml"),
    ("https://a.example/fe/", "../ed/"),
    ("https://a.example/x/", "./at/../om"),
    ("https://a.example/r?ss", ""),
    ("https://a.example/r?x", "?ss"),
    ("https://a.example/r", "#ss"),
    ("https://a.example/a.", "xml"),
    ("https://a.example/a", ".xml"),
    ("https://r.example/", "//ss.example/"),
    ("https://a.example/p;r", "ss"),
    ("HTTPS://A.example/", "HTTPS://B.example/F/EED"),
]


@pytest.mark.parametrize(("base", "href"), JOINS)
def test_a_feed_token_of_a_joined_url_is_in_the_base_or_the_href(base: str, href: str) -> None:
    """``anchor_candidates`` tests the base and the href before joining them: urljoin puts
    their parts together at characters no token holds."""
    url = absolute(base, href)
    if url and MAYBE_FEED_URL.search(url):
        assert MAYBE_FEED_URL.search(base) or MAYBE_FEED_URL.search(href), (base, href, url)


def test_no_anchor_of_the_corpus_gains_a_feed_token_by_joining() -> None:
    gained, from_base = [], 0
    for base, href in _corpus_anchors():
        url = absolute(base, href)
        if not url or not MAYBE_FEED_URL.search(url) or MAYBE_FEED_URL.search(href):
            continue
        if MAYBE_FEED_URL.search(base):
            from_base += 1
        else:
            gained.append((base, href))
    assert not gained
    assert from_base > 0  # tokens that only the base brings: the base must be tested too


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


def _meta_refresh_middlewares() -> tuple[MetaRefreshMiddleware, SelfAwareMetaRefreshMiddleware]:
    crawler = get_crawler(Spider, {"METAREFRESH_MAXDELAY": 30})
    crawler.spider = crawler._create_spider("refresh")
    return (
        MetaRefreshMiddleware.from_crawler(crawler),
        SelfAwareMetaRefreshMiddleware.from_crawler(crawler),
    )


REFRESH_PAGES = [
    ('<meta http-equiv="refresh" content="0; url=/next/">', "utf-8"),
    ('<META HTTP-EQUIV="REFRESH" CONTENT="0;URL=/next/">', "utf-8"),
    ('<meta http-equiv="Refresh" content="1; url=/next/"><p>你好</p>', "gb18030"),
    ('<meta http-equiv="refresh" content="0; url=/next/">', "utf-16"),
    ('<meta http-equiv="refresh" content="0; url=/next/">', "utf-32"),
]


@pytest.mark.parametrize(("head", "encoding"), REFRESH_PAGES)
def test_a_meta_refresh_passes_the_refresh_prefilter(head: str, encoding: str) -> None:
    html = f"<html><head>{head}</head><body>x</body></html>"
    response = HtmlResponse(
        "https://a.example/",
        body=html.encode(encoding),
        headers={"Content-Type": f"text/html; charset={encoding}"},
    )
    assert may_refresh(response.body)
    request = Request("https://a.example/")
    for mw in _meta_refresh_middlewares():
        result = mw.process_response(request, response)
        assert isinstance(result, Request) and result.url == "https://a.example/next/"


def test_no_corpus_page_changes_its_meta_refresh_answer() -> None:
    """Scrapy's middleware and ours answer alike on every page of the corpus: the same
    redirect, or the response itself; a page the prefilter passes on is never decoded."""
    root = shared_dir()
    if root is None:
        pytest.skip("the shared corpus is absent")
    corpus = root / "corpus"
    scrapy_mw, ours = _meta_refresh_middlewares()
    with (corpus / "replay_urls.tsv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    skipped = 0
    for row in rows:
        path = corpus / row["local_file"]
        if not path.is_file() or not row["url"].startswith("http"):
            continue
        body = path.read_bytes()
        body = gzip.decompress(body) if path.name.endswith(".gz") else body
        request = Request(row["url"])
        expected = scrapy_mw.process_response(request, HtmlResponse(row["url"], body=body))
        response = HtmlResponse(row["url"], body=body)
        got = ours.process_response(request, response)
        if isinstance(expected, Request):
            assert isinstance(got, Request) and got.url == expected.url, row["url"]
        else:
            assert got is response, row["url"]
        if not may_refresh(body):
            skipped += 1
            assert response._cached_ubody is None, row["url"]  # never decoded
    assert skipped > 400  # the prefilter is what runs on most pages
