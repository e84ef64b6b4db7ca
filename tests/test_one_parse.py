"""One parse per page: every extractor of a crawled page reads ``page.tree``, none parses again.

The page extractors (blog identity, title, feed autodiscovery, friend links, the friend-page
finder, the page's health; ``bench/extract.py``'s (b)) run on real pages with lxml's parser
entry points replaced by counting wrappers; no call may reach them. The wrappers are proven by
a deliberate parse.
"""

from __future__ import annotations

import gc
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lxml.etree
import pytest

from blogfeeds.extract.discovery import discover_feeds
from blogfeeds.extract.friends import extract_friends, find_friend_pages
from blogfeeds.extract.health import page_text_of
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.metadata import title
from blogfeeds.extract.page import Page, parse_page
from tests.cases import case_names, load_case

DATA = Path(__file__).parent / "data"
#: Every way into libxml2's parsers from Python (lxml.html's functions call these; parse_page
#: feeds a pull parser).
ENTRY_POINTS = (
    "fromstring",
    "fromstringlist",
    "HTML",
    "XML",
    "parse",
    "iterparse",
    "HTMLPullParser",
    "XMLPullParser",
)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Calls of lxml's parser entry points while the test runs, by name."""
    calls: Counter[str] = Counter()
    for name in ENTRY_POINTS:
        real = getattr(lxml.etree, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(lxml.etree, name, counted)
    yield calls


def case_pages() -> list[tuple[str, bytes]]:
    """(URL, body) of the friend-link cases of ``../shared``; none without it."""
    return [
        (load_case(suite, name).page_url, (load_case(suite, name).path / "page.html").read_bytes())
        for suite in ("friend-links", "friend-links-real")
        for name in case_names(suite)
    ]


def web_pages() -> list[tuple[str, bytes]]:
    """(URL, body) of the test web's pages (``tests/data``)."""
    paths = sorted([*DATA.glob("web/*.html"), *DATA.glob("pages/*.html")])
    return [(f"https://{path.stem}.example/", path.read_bytes()) for path in paths]


def pages() -> list[tuple[str, bytes]]:
    """:func:`case_pages` (when ``../shared`` is there) and :func:`web_pages`."""
    return case_pages() + web_pages()


SECTIONS = b"""<html><body><main>
<section><header class="links__header"><h2>Friends</h2></header><div class="grid">
<a href="https://one.example/">One</a><a href="https://two.example/">Two</a></div></section>
<section><header class="links__header"><h2>Sponsors</h2></header><div class="grid">
<a href="https://cloud.example/">Cloud</a></div></section></main></body></html>"""
"""A links page whose groups are sections with a header block (one names services)."""


def extract_all(page: Page) -> None:
    blog_id(page.url)
    title(page)
    discover_feeds(page)
    extract_friends(page)
    find_friend_pages(page)
    page_text_of(page)  # the page's health, read in the crawl before anything else


CORPORA = [
    pytest.param(web_pages, id="test-web"),
    pytest.param(
        case_pages,
        id="shared-cases",
        marks=pytest.mark.skipif(not case_names("friend-links"), reason="shared cases not found"),
    ),
]


def test_the_counter_sees_a_parse(parses: Counter[str]) -> None:
    parse_page("https://a.example/", b"<html><body><p>one</p></body></html>", {})
    assert sum(parses.values()) == 1


@pytest.mark.parametrize("corpus", CORPORA)
def test_extractors_never_parse_the_page_again(
    parses: Counter[str], corpus: Callable[[], list[tuple[str, bytes]]]
) -> None:
    found = corpus()
    assert len(found) >= 5
    for url, body in found:
        page = parse_page(url, body, {"Content-Type": "text/html"})
        before = sum(parses.values())
        extract_all(page)
        assert sum(parses.values()) == before, (url, parses)


@pytest.mark.parametrize("corpus", CORPORA)
def test_no_element_outlives_its_page(corpus: Callable[[], list[tuple[str, bytes]]]) -> None:
    """A crawl reads thousands of pages: a cache keyed on elements keeps every tree alive."""
    alive = []
    for url, body in [*corpus(), ("https://sections.example/links/", SECTIONS)]:
        page = parse_page(url, body, {"Content-Type": "text/html"})
        elements = list(page.tree.iter())  # one proxy each, the extractors' own while alive
        refs = [weakref.ref(el) for el in elements]
        extract_all(page)
        del page, elements
        gc.collect()
        alive += [url for ref in refs if ref() is not None][:1]
    assert alive == []
