"""Bounded work per page: a page is read up to its first elements, links and text
(:class:`~blogfeeds.extract.page.PageLimits`, ``BLOGFEEDS_ABSTRACT_MAX_TEXT``), the cut is
recorded, no abstract is read when ``BLOGFEEDS_ABSTRACT_CHARS`` is 0, and every CPU-bound
step of :func:`~blogfeeds.extract.blog.extract_blog` goes through the injected runner."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import lxml.etree
import lxml.html
import pytest

from blogfeeds.extract.blog import extract_blog
from blogfeeds.extract.config import ExtractConfig
from blogfeeds.extract.discovery import Fetched, FetchRequest
from blogfeeds.extract.page import _PARSER, PageLimits, parse_page
from blogfeeds.report_items import blog_items
from tests.robustness import link_heavy_page
from tests.test_one_parse import pages


async def _no_fetch(request: FetchRequest) -> Fetched | None:
    return None


def _extract(body: bytes, config: ExtractConfig | None = None, **kwargs: Any) -> Any:
    return asyncio.run(
        extract_blog(
            "http://big.example/",
            body,
            {"Content-Type": "text/html"},
            _no_fetch,
            config or ExtractConfig(),
            **kwargs,
        )
    )


def test_the_chunked_parse_builds_the_tree_of_the_whole_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The chunked parse (taken only by pages that may pass a bound) builds the tree parsing
    the whole string builds (the friend-link cases when ``../shared`` is there, the test web, a
    page of a megabyte in chunks)."""
    monkeypatch.setattr("blogfeeds.extract.page._within", lambda text, limits: False)
    corpus = [
        *pages(),
        ("http://big.example/", link_heavy_page(1) + "<p>\u00e9t\u00e9</p>".encode()),
    ]
    assert len(corpus) >= 7
    for url, body in corpus:
        page = parse_page(url, body, limits=PageLimits(10**9, 10**9))
        whole = lxml.html.document_fromstring(page.text.replace("\x00", ""), parser=_PARSER)
        assert page.truncated == (), url
        assert lxml.etree.tostring(page.tree) == lxml.etree.tostring(whole), url


def test_links_past_the_bound_are_not_read() -> None:
    page = parse_page("http://big.example/", link_heavy_page(1), limits=PageLimits(0, 100))
    links = page.tree.xpath("//a")
    assert page.truncated == ("links",)
    assert len(links) == 100
    assert links[-1].text == "Friend 99"
    assert len(page.text) < 200_000  # what was parsed, not the whole megabyte


def test_elements_past_the_bound_are_not_read() -> None:
    page = parse_page("http://big.example/", link_heavy_page(1), limits=PageLimits(500, 0))
    assert page.truncated == ("elements",)
    assert sum(1 for el in page.tree.iter() if isinstance(el.tag, str)) == 500
    # the tree is still a document: the head and its title are read
    assert page.tree.findtext(".//title") == "All the links"


def test_bounds_of_zero_read_the_whole_page() -> None:
    body = link_heavy_page(0.5)
    page = parse_page("http://big.example/", body, limits=PageLimits(0, 0))
    assert page.truncated == ()
    assert len(page.tree.xpath("//a")) == body.count(b"<a ")


def test_a_huge_link_page_costs_bounded_cpu_and_says_it_was_cut() -> None:
    """The attack's page (8 MB, 150,000 links) cost 33 s of CPU before the bounds."""
    body = link_heavy_page(7.9)
    started = time.process_time()
    report = _extract(body)
    spent = time.process_time() - started
    assert spent < 12, spent  # about 2.5 s here; 33 s when every link was read
    assert report.truncated == ["links"]
    assert report.counters["truncated/links"] == 1
    blog, _ = blog_items(report, fetched_at="2026-01-01T00:00:00Z", depth=0)
    assert blog.truncated == "links"


def test_inspect_shows_what_was_cut() -> None:
    from blogfeeds.commands.inspect import render_text, report_to_dict

    data = report_to_dict(_extract(link_heavy_page(0.1), ExtractConfig(limits=PageLimits(0, 50))))
    assert data["truncated"] == "links"
    assert "Truncated: links" in render_text(data)
    whole = report_to_dict(_extract(link_heavy_page(0.1)))
    assert whole["truncated"] == "" and "Truncated" not in render_text(whole)


def test_the_abstract_reads_the_first_characters_of_text() -> None:
    """The home page's main text (no feed, no post card: trafilatura) reads the first
    ``abstract_text`` characters."""
    filler = " ".join(["word"] * 200)
    body = (
        "<html><head><title>T</title></head><body><div class='body'>"
        f"<p>The opening paragraph of this post says what it is about. {filler}.</p>"
        + "".join(f"<p>Paragraph {i}: {filler}.</p>" for i in range(50))
        + "</div></body></html>"
    ).encode()
    whole = _extract(body)
    cut = _extract(body, ExtractConfig(abstract_text=3000))
    assert whole.truncated == [] and cut.truncated == ["text"]
    assert cut.counters["truncated/text"] == 1
    assert cut.metadata.abstract == whole.metadata.abstract
    assert cut.metadata.abstract.startswith("The opening paragraph")


def test_no_abstract_runs_no_trafilatura(monkeypatch: pytest.MonkeyPatch) -> None:
    """``abstract_chars=0``: the abstract is empty, trafilatura is never called and the text
    is not read (no ``text`` cut); the title and the profile's description still are."""
    import trafilatura

    calls: list[object] = []
    extract = trafilatura.extract

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return extract(*args, **kwargs)

    monkeypatch.setattr(trafilatura, "extract", counted)
    filler = " ".join(["word"] * 200)
    body = (
        '<html><head><title>T</title><meta name="description" content="A blog about tea.">'
        "</head><body><div class='body'>"  # no feed, no post card: trafilatura reads it
        + "".join(f"<p>Paragraph {i}: {filler}.</p>" for i in range(50))
        + "</div></body></html>"
    ).encode()
    on = _extract(body, ExtractConfig(abstract_text=3000))
    assert on.metadata.abstract.startswith("Paragraph 0") and calls
    calls.clear()
    off = _extract(body, ExtractConfig(abstract_chars=0, abstract_text=3000))
    assert off.metadata.abstract == "" and calls == []
    assert off.truncated == [] and on.truncated == ["text"]
    assert off.metadata.title == "T"
    assert off.profile.description == "A blog about tea."


def test_the_bounds_are_settings() -> None:
    config = ExtractConfig.from_settings(
        {
            "BLOGFEEDS_PAGE_MAX_ELEMENTS": "700",
            "BLOGFEEDS_PAGE_MAX_LINKS": 70,
            "BLOGFEEDS_ABSTRACT_MAX_TEXT": 7000,
            "BLOGFEEDS_ABSTRACT_CHARS": "0",
        }
    )
    assert config.limits == PageLimits(700, 70)
    assert config.abstract_text == 7000
    assert config.abstract_chars == 0
    assert ExtractConfig.from_settings({}).abstract_chars == 100
    assert ExtractConfig.from_settings({}).limits == PageLimits(50_000, 10_000)


def test_every_cpu_step_goes_through_the_runner() -> None:
    """The page, the feeds fetched and the scoring run where the runner says (a thread here),
    not in the caller's thread."""
    feed = (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>F</title>'
        b"<link>http://big.example/</link><item><title>a</title><guid>1</guid></item>"
        b"</channel></rss>"
    )
    home = (
        b'<html><head><title>Home</title><link rel="alternate" type="application/rss+xml" '
        b'href="/feed.xml"></head><body><p>Hello there, this is my blog.</p></body></html>'
    )

    async def fetch(request: FetchRequest) -> Fetched | None:
        if request.url == "http://big.example/feed.xml":
            return Fetched(request.url, 200, {"Content-Type": "application/rss+xml"}, feed)
        return Fetched(request.url, 404, {}, b"")

    caller = threading.get_ident()
    steps: list[tuple[str, bool]] = []

    async def in_thread(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        def call() -> Any:
            steps.append((getattr(fn, "__name__", repr(fn)), threading.get_ident() != caller))
            return fn(*args, **kwargs)

        return await asyncio.to_thread(call)

    report = asyncio.run(
        extract_blog("http://big.example/", home, {}, fetch, ExtractConfig(), run=in_thread)
    )
    assert [f.url for f in report.feeds] == ["http://big.example/feed.xml"]
    names = [name for name, _ in steps]
    assert {"_read_home", "read_feed", "gather", "detect_platforms"} <= set(names), names
    assert all(elsewhere for _, elsewhere in steps)


@pytest.mark.parametrize("threads", [0, 1])
@pytest.mark.parametrize("name", ["blogs", "feeds"])
def test_the_spiders_run_extraction_where_the_setting_says(threads: int, name: str) -> None:
    from scrapy.utils.test import get_crawler

    from blogfeeds.extract.runner import inline
    from blogfeeds.spiders.blogs import BlogsSpider
    from blogfeeds.spiders.feeds import FeedsSpider
    from blogfeeds.threads import ThreadRunner

    cls = {"blogs": BlogsSpider, "feeds": FeedsSpider}[name]
    crawler = get_crawler(cls, {"BLOGFEEDS_EXTRACT_THREADS": threads})
    spider = cls.from_crawler(crawler)
    run = spider.reader.run if name == "blogs" else spider.run
    if threads:
        assert isinstance(run, ThreadRunner)
        assert run.threads == threads
    else:
        assert run is inline
