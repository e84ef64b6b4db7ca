"""A blog's abstract: the opening of its newest post, from the main feed discovery read, else
from the home page's first post card, else its main text; ``abstract_source`` stored beside
it (schema version 9 on a database of version 8, SQLite and MariaDB)."""

from __future__ import annotations

import asyncio

import pytest

from blogfeeds.extract.abstract import card_abstract, feed_abstract, html_text, lead_abstract
from blogfeeds.extract.blog import ExtractConfig, extract_blog
from blogfeeds.extract.discovery import Fetched
from blogfeeds.extract.feedreader import read_feed
from blogfeeds.extract.metadata import cut
from blogfeeds.extract.page import parse_page
from blogfeeds.storage import schema
from blogfeeds.storage.db import Store
from tests.test_storage import blog, execute, url  # noqa: F401 (url: the fixture)

OPENING = "Compost needs air, water and patience; this spring I gave mine all three and learned"
POST = f"{OPENING} a lot about worms, leaves and the smell of rain on a warm balcony."
ABSTRACT = cut(POST, 100)
HOME = "https://garden.example/"


def atom(*entries: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>Garden</title><link href='{HOME}'/>{''.join(entries)}</feed>"
    ).encode()


def entry(title: str, published: str, summary: str = "", content: str = "") -> str:
    parts = f"<title>{title}</title><link href='{HOME}{title}'/><id>{title}</id>"
    parts += f"<published>{published}</published>"
    if summary:
        parts += f"<summary type='html'><![CDATA[{summary}]]></summary>"
    if content:
        parts += f"<content type='html'><![CDATA[{content}]]></content>"
    return f"<entry>{parts}</entry>"


def test_the_newest_entry_opens_the_abstract_and_its_content_wins_over_a_summary() -> None:
    """A hand-written summary (the post's description) is not the post's opening: the
    content is. The newest entry is the one with the latest date, wherever it stands."""
    doc = read_feed(
        atom(
            entry("Older", "2026-01-01T00:00:00Z", "An older post.", "<p>An older post.</p>"),
            entry(
                "Compost",
                "2026-03-01T00:00:00Z",
                summary="What I learned about compost.",
                content=f"<h1>Compost</h1><p>{POST}</p>",
            ),
        )
    )
    assert doc is not None
    assert feed_abstract(doc, 100) == ABSTRACT
    # Only the newest entry keeps its content: a feed's every content doubles what it holds.
    assert [e.content is not None for e in doc.entries] == [False, True]
    assert feed_abstract(doc, 0) == "" and feed_abstract(None, 100) == ""


def test_a_summary_loses_its_read_more_and_code_loses_its_line_numbers() -> None:
    summary = f"<p>{OPENING[:40]} [&#8230;]</p><p><a href='x'>Read more »</a></p>"
    doc = read_feed(atom(entry("Short", "2026-03-01T00:00:00Z", summary=summary)))
    assert doc is not None
    assert feed_abstract(doc, 100) == OPENING[:40]
    code = (
        '<p>Run:</p><figure class="highlight"><table><tr><td class="gutter"><pre>'
        '<span class="line">1</span></pre></td><td class="code"><pre>make</pre></td></tr>'
        "</table></figure>"
    )
    assert html_text(code) == ["Run:", "make"]


def test_html_escaped_twice_is_read_as_html() -> None:
    """A feed that declares its HTML as text: feedparser hands the markup back escaped."""
    assert html_text("&lt;h2&gt;Intro&lt;/h2&gt;&lt;p&gt;First words.&lt;/p&gt;") == [
        "Intro",
        "First words.",
    ]


CARDS = f"""<html><body><nav><a href="/">Home</a><a href="/about/">About</a></nav>
<div class="recent-posts">
 <div class="recent-post-item"><a class="article-title" href="/pinned/">Welcome</a>
  <span class="article-meta sticky">Pinned</span><div class="content">Read this first.</div>
 </div>
 <div class="recent-post-item"><a class="article-title" href="/compost/">Compost</a>
  <div class="article-meta-wrap"><time>2026-03-01</time> | <a href="/c/">Garden</a></div>
  <div class="content">{POST}</div></div>
</div></body></html>"""


def test_the_first_post_card_gives_the_opening_without_title_meta_or_pinned_posts() -> None:
    page = parse_page(HOME, CARDS.encode())
    assert card_abstract(page, 100) == ABSTRACT
    assert card_abstract(parse_page(HOME, b"<p>No cards at all, just text.</p>"), 100) == ""


def serve(pages: dict[str, bytes]):  # type: ignore[no-untyped-def]
    async def fetch(request):  # type: ignore[no-untyped-def]
        body = pages.get(request.url)
        if body is None:
            return Fetched(request.url, 404, {"Content-Type": "text/html"}, b"")
        return Fetched(request.url, 200, {"Content-Type": "application/atom+xml"}, body)

    return fetch


def test_extract_blog_takes_the_feed_first_and_runs_no_page_extraction() -> None:
    home = (
        b"<html><head><title>Garden</title><link rel='alternate' type='application/atom+xml' "
        b"href='/atom.xml'></head><body><main><div><p>Welcome to my garden, a place of "
        b"slow notes about plants, soil and the seasons of a small balcony.</p></div>"
        b"</main></body></html>"
    )
    feed = atom(entry("Compost", "2026-03-01T00:00:00Z", content=f"<p>{POST}</p>"))
    config = ExtractConfig()
    report = asyncio.run(extract_blog(HOME, home, {}, serve({f"{HOME}atom.xml": feed}), config))
    assert (report.metadata.abstract, report.metadata.abstract_source) == (ABSTRACT, "feed")
    assert "abstract/page" not in report.counters
    feedless = asyncio.run(extract_blog(HOME, home, {}, serve({}), config))
    assert feedless.metadata.abstract_source == "page"
    assert feedless.metadata.abstract.startswith("Welcome to my garden")
    assert feedless.counters["abstract/page"] == 1
    none = asyncio.run(extract_blog(HOME, home, {}, serve({}), ExtractConfig(abstract_chars=0)))
    assert (none.metadata.abstract, none.metadata.abstract_source) == ("", "")


def test_version_9_adds_the_abstract_source_to_a_version_8_database(
    url: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A database made before keeps its blogs and abstracts, with no source until a re-crawl;
    a new crawl stores the source."""
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:8])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 8)
    with Store.open(url) as store:
        assert store.schema_version() == 8
        columns = ("blog_id", "url", "title", "abstract", "language", "generator", "feed_url")
        columns += ("friend_count", "status", "depth", "first_seen", "fetched_at")
        marks = ", ".join([store.dialect.param] * len(columns))
        with store._transaction() as cursor:
            cursor.execute(
                f"INSERT INTO blogs ({', '.join(columns)}) VALUES ({marks})",
                (
                    *("old.example", "https://old.example/", "T", "Kept.", "en", "", None),
                    *(0, "ok", 0, "t", "t"),
                ),
            )
    monkeypatch.undo()
    for _ in range(2):
        with Store.open(url) as store:
            assert store.schema_version() == schema.SCHEMA_VERSION >= 9
            old = next(r for r in store.blogs() if r["blog_id"] == "old.example")
            assert (old["abstract"], old["abstract_source"]) == ("Kept.", "")
            execute(store, "DELETE FROM schema_version WHERE version = 9")
    with Store.open(url) as store:
        store.write([blog("new.example", abstract=ABSTRACT, abstract_source="feed")], [])
        new = next(r for r in store.blogs() if r["blog_id"] == "new.example")
        assert (new["abstract"], new["abstract_source"]) == (ABSTRACT, "feed")


def test_a_short_summary_gives_way_to_the_post_card_that_opens_the_post() -> None:
    """A feed whose entry has only a short hand-written summary: the home page's card of that
    post shows its opening, and wins; a card that opens with the post's title does not."""
    doc = read_feed(atom(entry("spring", "2026-03-01T00:00:00Z", summary="On compost.")))
    assert doc is not None
    home = f"""<html><body><main><article><h2><a href="/spring">spring</a></h2>
        <p>{POST}</p></article></main></body></html>"""
    assert lead_abstract(doc, parse_page(HOME, home.encode()), 100) == (ABSTRACT, "page")
    titled = home.replace("<h2>", "<div>").replace("</h2>", "</div>")
    assert lead_abstract(doc, parse_page(HOME, titled.encode()), 100) == ("On compost.", "feed")
    assert lead_abstract(None, parse_page(HOME, home.encode()), 100) == (ABSTRACT, "page")
