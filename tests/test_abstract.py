"""A blog's abstract: the opening of its newest post, from the main feed discovery read, else
from the home page's first post card, else its main text; ``abstract_source`` stored beside
it (schema version 9 on a database of version 8, SQLite and MariaDB)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from scrapy.settings import Settings

from blogfeeds.extract.abstract import (
    card_abstract,
    feed_abstract,
    html_text,
    lead_abstract,
    post_link,
    post_opening,
)
from blogfeeds.extract.blog import extract_blog
from blogfeeds.extract.config import ExtractConfig
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
    # A summary cut at the post's first heading: the card carries it on, and wins.
    cut_at = read_feed(atom(entry("spring", "2026-03-01T00:00:00Z", summary=OPENING[:24])))
    assert cut_at is not None
    assert lead_abstract(cut_at, parse_page(HOME, home.encode()), 100) == (ABSTRACT, "page")
    same = home.replace(POST, OPENING[:24])
    assert lead_abstract(cut_at, parse_page(HOME, same.encode()), 100) == (OPENING[:24], "feed")


DESCRIPTION = "What I learned about compost this spring, in short."
POST_PAGE = f"""<html><head><title>Compost | Garden</title></head><body>
<header><h1 class="post-title">Compost</h1></header>
<article class="post"><h1 class="post-title">Compost</h1>
 <div class="post-meta"><time>2026-03-01</time> · <span class="author">Ann</span></div>
 <div class="post-body"><div class="toc"><a href="#a">Air</a></div><p>{POST}</p>
  <figure class="highlight"><p class="code-caption"><a class="code-caption-copy">Copy Code</a>
  </p><pre>mix</pre></figure><p class="post-copyright">CC BY 4.0</p></div>
</article></body></html>"""


def test_the_post_page_wins_over_a_summary_that_is_a_description() -> None:
    """A summary-only feed whose summary is the post's hand-written description: the post's
    own page opens the post (its body, without the theme's title, meta line, table of
    contents and copy button); a summary the body opens with, longer there, gives way too."""
    doc = read_feed(atom(entry("Compost", "2026-03-01T00:00:00Z", summary=DESCRIPTION)))
    assert doc is not None
    home = parse_page(HOME, b"<html><body><p>Garden notes.</p></body></html>")
    post = parse_page(f"{HOME}Compost", POST_PAGE.encode())
    assert post_link(doc, home) == f"{HOME}Compost"
    assert post_opening(post, "Compost") == f"{POST} mix"
    assert lead_abstract(doc, home, 100, post) == (ABSTRACT, "page")
    assert lead_abstract(doc, home, 100) == (DESCRIPTION, "feed")
    cut_summary = read_feed(atom(entry("Compost", "2026-03-01T00:00:00Z", summary=OPENING[:30])))
    assert lead_abstract(cut_summary, home, 100, post) == (ABSTRACT, "page")


def test_a_summary_that_opens_the_post_stays_and_content_needs_no_post_page() -> None:
    """The body shows a line before the post's opening (a meta line no class names): the
    summary, found whole right after it, is the opening and stays. A feed with content needs
    no request; a link to another host is not followed."""
    doc = read_feed(atom(entry("Compost", "2026-03-01T00:00:00Z", summary=f"<p>{POST}</p>")))
    assert doc is not None
    home = parse_page(HOME, b"<html><body><p>Garden notes.</p></body></html>")
    noisy = POST_PAGE.replace('<div class="post-body">', '<div class="post-body"><p>4 min</p>')
    post = parse_page(f"{HOME}Compost", noisy.encode())
    assert lead_abstract(doc, home, 100, post) == (ABSTRACT, "feed")
    full = read_feed(atom(entry("Compost", "2026-03-01T00:00:00Z", "x", f"<p>{POST}</p>")))
    assert full is not None and post_link(full, home) == ""
    assert lead_abstract(full, home, 100, post) == (ABSTRACT, "feed")
    away = read_feed(
        atom(entry("Compost", "2026-03-01T00:00:00Z", summary="x")).replace(
            f"{HOME}Compost".encode(), b"https://elsewhere.example/Compost"
        )
    )
    assert away is not None and post_link(away, home) == ""
    # A feed without a separate summary puts the whole post in its only text: long, it is
    # taken for the post's.
    whole = read_feed(atom(entry("Compost", "2026-03-01T00:00:00Z", f"<p>{POST * 4}</p>")))
    assert whole is not None and post_link(whole, home) == ""


def test_a_byline_the_theme_puts_in_the_feed_is_no_opening() -> None:
    content = f"<h1>Compost</h1><p>作者：Ann（ann@garden.example）</p><p>{POST}</p>"
    doc = read_feed(atom(entry("Compost", "2026-03-01T00:00:00Z", "x", content)))
    assert doc is not None and feed_abstract(doc, 100) == ABSTRACT
    # A line that only opens with a word like it stays.
    said = f"<p>Author: a word that names the one who writes, {POST}</p>"
    doc = read_feed(atom(entry("Compost", "2026-03-01T00:00:00Z", "x", said)))
    assert doc is not None and feed_abstract(doc, 100).startswith("Author: a word")


def test_extract_blog_fetches_the_newest_post_page_only_for_a_summary() -> None:
    home = (
        b"<html><head><link rel='alternate' type='application/atom+xml' href='/atom.xml'>"
        b"</head><body><p>Garden notes.</p></body></html>"
    )
    pages = {
        f"{HOME}atom.xml": atom(entry("Compost", "2026-03-01T00:00:00Z", summary=DESCRIPTION)),
        f"{HOME}Compost": POST_PAGE.encode(),
    }
    asked: list[str] = []

    async def fetch(request):  # type: ignore[no-untyped-def]
        asked.append(request.url)
        body = pages.get(request.url)
        ctype = "application/atom+xml" if request.url.endswith(".xml") else "text/html"
        return Fetched(request.url, 200 if body else 404, {"Content-Type": ctype}, body or b"")

    report = asyncio.run(extract_blog(HOME, home, {}, fetch, ExtractConfig()))
    assert (report.metadata.abstract, report.metadata.abstract_source) == (ABSTRACT, "page")
    assert asked.count(f"{HOME}Compost") == 1 and report.counters["abstract/post_page"] == 1
    pages[f"{HOME}atom.xml"] = atom(
        entry("Compost", "2026-03-01T00:00:00Z", DESCRIPTION, f"<p>{POST}</p>")
    )
    asked.clear()
    report = asyncio.run(extract_blog(HOME, home, {}, fetch, ExtractConfig()))
    assert report.metadata.abstract_source == "feed" and f"{HOME}Compost" not in asked
    assert "abstract/post_page" not in report.counters
    # BLOGFEEDS_ABSTRACT_POST_PAGE = False: the summary's feed, no request for the post
    pages[f"{HOME}atom.xml"] = atom(entry("Compost", "2026-03-01T00:00:00Z", summary=DESCRIPTION))
    asked.clear()
    config = ExtractConfig.from_settings(Settings({"BLOGFEEDS_ABSTRACT_POST_PAGE": False}))
    report = asyncio.run(extract_blog(HOME, home, {}, fetch, config))
    assert f"{HOME}Compost" not in asked and "abstract/post_page" not in report.counters
    assert report.metadata.abstract_source == "feed"


LIST = """<html><body>
<div class="post-card"><a href="/featured/"><span class="card-title">Featured</span></a>
 <div class="summary">A featured post from long ago, pinned by the theme's carousel.</div></div>
<article class="container articles"><div class="row">
 <div class="article"><a href="/older/"><span class="card-title">Older</span></a>
  <div class="summary">An older post about seeds and the first frost of autumn here.</div>
  <div class="publish-info"><span class="publish-date">2026-01-02</span></div></div>
 <div class="article"><a href="/compost/"><span class="card-title">Compost</span></a>
  <div class="summary">{post}</div>
  <div class="publish-info"><span class="publish-date">2026-03-01</span>
   <a href="/categories/garden/">Garden</a></div></div>
</div></article></body></html>"""


def test_the_newest_card_by_its_day_skipping_featured_ones_and_meta_lines() -> None:
    """A theme that shows featured posts first and lists the others unsorted: the card of the
    latest day is the newest post; its publish line (a class naming it) is no text of it.
    An element around several cards is their list, not a card."""
    page = parse_page(HOME, LIST.format(post=POST).encode())
    assert card_abstract(page, 100) == ABSTRACT
    assert post_link(None, page) == f"{HOME}compost/"
    undated = parse_page(HOME, LIST.format(post=POST).replace("2026-", "").encode())
    assert card_abstract(undated, 100).startswith("A featured post")


PAGES = Path(__file__).resolve().parent / "data" / "pages"
B10G = "https://b10g.b10c.me/"
B10G_POST = f"{B10G}The-300MB-default-maxmempool-problem/"


def test_a_feed_on_a_preview_host_gives_the_home_page_own_link_to_the_post() -> None:
    """A real build whose feed names its preview server (``localhost:4000``) while its pages
    link relatively: the post the home page links to at the same path, on the blog's own
    host, is the page to read. A link the home page does not show is not followed."""
    home = parse_page(B10G, (PAGES / "b10g-home.html").read_bytes())
    post = parse_page(B10G_POST, (PAGES / "b10g-post.html").read_bytes())
    raw = (PAGES / "b10g-feed.xml").read_bytes()
    # The feed as a build that writes only each post's excerpt (no content) gives it.
    doc = read_feed(re.sub(rb"<content\b.*?</content>", b"", raw, flags=re.S))
    assert doc is not None and doc.entries[0].link.startswith("http://localhost:4000/")
    assert post_link(doc, home) == B10G_POST
    opening = "Unconfirmed transaction are quite a hassle for bitcoin users. I recently came"
    text, source = lead_abstract(doc, home, 100, post)
    assert text.startswith(opening) and source == "page"
    elsewhere = (PAGES / "b10g-home.html").read_bytes().replace(b"maxmempool", b"mempool")
    assert post_link(doc, parse_page(B10G, elsewhere)) == ""


def test_a_theme_subtitle_in_the_post_article_is_no_opening() -> None:
    """A post page without a body container (its ``<article>`` read) shows the front
    matter's subtitle under the title (LoveIt and DoIt ``single-subtitle``): not the post's
    text. A heading of the post's own stays."""
    page = f"""<html><head><title>Compost</title></head><body><main><article class="single">
      <h1 class="single-title">Compost</h1><h2 class="single-subtitle">{DESCRIPTION}</h2>
      <div class="content" id="content"><h2 id="air">Air</h2><p>{POST}</p></div>
      </article></main></body></html>"""
    post = parse_page(f"{HOME}Compost", page.encode())
    assert post_opening(post, "Compost") == f"Air {POST}"
