"""A blog's health from one read (blogfeeds.extract.health): real parking, placeholder and
bot-wall pages (those of permissively licensed sources in ``data/health/real``, the others
rebuilt outside the repository by ``bench/health_pages.py`` and skipped when absent), real thin
blog pages, and the failure, move, takeover and empty rules."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from blogfeeds.extract.blog import extract_blog
from blogfeeds.extract.config import ExtractConfig
from blogfeeds.extract.discovery.fetching import FetchRequest
from blogfeeds.extract.health import SHORT_PAGE_WORDS, Known, assess, page_text, recognise, signs
from tests.littleweb import find_shared

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import health_pages

DATA = Path(__file__).parent / "data" / "health"
"""Pages written for these tests: a parking lander and a challenge wall of the usual kind."""
REAL = health_pages.default_out()
MANIFEST = health_pages.rows()


def test_every_real_page_names_its_source() -> None:
    assert len([r for r in MANIFEST if r["kind"] == "parked"]) >= 30
    assert len([r for r in MANIFEST if r["kind"] == "blocked"]) >= 30
    assert all(row["source_repo"] and row["source_path"] and row["licence"] for row in MANIFEST)
    copied = [row for row in MANIFEST if row["copy"] == "tests"]
    assert copied and all(health_pages.page_path(row, REAL).is_file() for row in copied)


@pytest.mark.parametrize("row", MANIFEST, ids=[row["file"] for row in MANIFEST])
def test_a_real_parking_or_wall_page_is_its_kind_whatever_the_status(row: dict[str, str]) -> None:
    path = health_pages.page_path(row, REAL)
    if not path.is_file():
        pytest.skip(f"real pages not built: python bench/health_pages.py build (into {REAL})")
    body = path.read_bytes()
    for status in (200, 403, 503):
        health = assess(
            "https://blog.example/", status, {}, body, failure="" if status == 200 else "http_4xx"
        )
        assert health.kind == row["kind"], health
        assert row["sign"] in health.reason


def _thin_blog_pages(limit: int) -> list[tuple[str, bytes]]:
    """The blog pages of the shared corpus with the fewest visible words (a home, friends or
    archive page: short, yet a blog), at least a few words each."""
    shared = find_shared()
    if shared is None:
        pytest.skip("the shared corpus (../shared or BLOGFEEDS_SHARED) is absent")
    from blogfeeds.extract.health import page_text

    corpus = shared / "corpus"
    pages = []
    for line in (corpus / "labels.jsonl").read_text("utf-8").splitlines():
        label = json.loads(line)
        if label.get("page_kind") not in ("home", "friends", "archive"):
            continue
        body = (corpus / label["file"]).read_bytes()
        words = page_text(label["url"], body).words
        if words >= 5:
            pages.append((words, label["url"], body))
    pages.sort(key=lambda p: p[0])
    return [(url, body) for _, url, body in pages[:limit]]


@pytest.mark.parametrize(("name", "kind"), [("parking.html", "parked"), ("wall.html", "blocked")])
def test_the_written_parking_and_wall_pages_are_their_kinds(name: str, kind: str) -> None:
    body = (DATA / name).read_bytes()
    assert assess("https://blog.example/", 200, {}, body).kind == kind


def test_thin_real_blog_pages_are_not_parked_or_blocked() -> None:
    pages = _thin_blog_pages(30)
    assert len(pages) == 30
    wrong = [
        (url, health.reason)
        for url, body in pages
        if (health := assess(url, 200, {}, body)).kind in ("parked", "blocked")
    ]
    precision = 1 - len(wrong) / len(pages)
    assert precision >= 0.98, wrong


def test_no_corpus_page_is_a_kind_of_wall() -> None:
    shared = find_shared()
    if shared is None:
        pytest.skip("the shared corpus (../shared or BLOGFEEDS_SHARED) is absent")
    corpus = shared / "corpus"
    labels = [
        json.loads(line) for line in (corpus / "labels.jsonl").read_text("utf-8").splitlines()
    ]
    walls = [
        (label["file"], found[1])
        for label in labels
        if (found := recognise(label["url"], 200, {}, (corpus / label["file"]).read_bytes()))
    ]
    assert walls == []


LONG_POST = (
    "<html><head><title>Notes on buying domains</title></head><body><article>"
    + "<p>Someone wrote to me: this domain is for sale, buy this domain today. </p>"
    + "<p>I kept writing about my garden and the weather and other things. </p>" * 60
    + "</article></body></html>"
).encode()


def test_a_long_post_quoting_a_parking_page_is_ok() -> None:
    assert assess("https://blog.example/", 200, {}, LONG_POST).kind == "ok"


def test_a_challenge_header_alone_is_blocked() -> None:
    health = assess(
        "https://blog.example/", 403, {"cf-mitigated": "challenge"}, None, failure="http_4xx"
    )
    assert health.kind == "blocked" and "Cloudflare" in health.reason


def test_gone_failures_are_failing_then_dead_after_n_in_a_row() -> None:
    first = assess("https://b.example/", None, None, None, failure="dns", dead_after=3)
    assert (first.kind, first.failures) == ("failing", 1)
    second = assess("https://b.example/", None, None, None, failure="dns", failures_before=1)
    assert second.kind == "failing"
    third = assess(
        "https://b.example/", 404, {}, b"<h1>Not found</h1>", failure="http_4xx", failures_before=2
    )
    assert (third.kind, third.failures) == ("dead", 3)
    assert "3 failed reads in a row" in third.reason


def test_a_server_error_or_rate_limit_stays_failing() -> None:
    for status, failure in ((503, "http_5xx"), (429, "http_4xx"), (None, "timeout")):
        health = assess("https://b.example/", status, {}, None, failure=failure, failures_before=9)
        assert health.kind == "failing", (status, health)


def test_refused_reads_are_blocked() -> None:
    robots = assess(
        "https://b.example/",
        None,
        None,
        None,
        failure="blocked",
        failure_reason="Forbidden by robots.txt",
    )
    assert robots.kind == "blocked" and "robots.txt" in robots.reason
    legal = assess("https://b.example/", 451, {}, b"<p>no</p>", failure="http_4xx")
    assert legal.kind == "blocked"


def test_a_permanent_redirect_to_another_blog_is_moved_unless_it_lands_on_parking() -> None:
    page = (
        b"<html><head><title>New home</title></head><body><p>My blog, now here.</p></body></html>"
    )
    moved = assess("https://old.example/", 200, {}, page, moved_to="https://new.example/")
    assert (moved.kind, moved.moved_to) == ("moved", "https://new.example/")
    parked = (DATA / "parking.html").read_bytes()
    landed = assess("https://old.example/", 200, {}, parked, moved_to="https://hugedomains.com/")
    assert landed.kind == "parked"


BEFORE = Known("Ada's notes", "WordPress 6.4", "en-GB", "https://ada.example/feed/")
PAGE = b"<html><head><title>x</title></head><body><p>Some text long enough here.</p></body></html>"


def test_a_takeover_changes_title_generator_language_and_feed() -> None:
    now = Known("Casino bonus 2026", "", "id", "")
    health = assess("https://ada.example/", 200, {}, PAGE, before=BEFORE, now=now)
    assert health.kind == "parked" and "another site answers" in health.reason


def test_a_redesign_keeping_the_title_is_ok() -> None:
    now = Known("Ada's Notes", "Hugo 0.120", "de", "https://ada.example/index.xml")
    assert assess("https://ada.example/", 200, {}, PAGE, before=BEFORE, now=now).kind == "ok"


def test_a_javascript_only_page_is_empty() -> None:
    body = (
        b'<html><head><title>App</title><script src="/app.js"></script></head>'
        b'<body><div id="root"></div></body></html>'
    )
    health = assess("https://b.example/", 200, {}, body)
    assert health.kind == "empty" and "JavaScript" in health.reason


def test_every_sign_is_parked_or_blocked_and_named() -> None:
    assert {s.kind for s in signs()} == {"parked", "blocked"}
    assert len({s.name for s in signs()}) == len(signs())


def test_a_long_home_page_whose_first_post_title_says_for_sale_is_ok() -> None:
    body = (
        "<html><head><title>Ada's notes</title></head><body>"
        "<article><h1>My old bike is for sale</h1>"
        + "<p>It served me well on every ride to the coast and back again. </p>" * 60
        + "</article></body></html>"
    ).encode()
    assert assess("https://ada.example/", 200, {}, body).kind == "ok"
    short = b"<html><head><title>bike.example</title></head><body><h1>bike.example is for sale</h1>"
    assert assess("https://bike.example/", 200, {}, short + b"</body></html>").kind == "parked"


def test_the_markup_prefilter_holds_a_literal_of_every_pattern() -> None:
    """A page is scanned for a service's markup only when it holds one of the patterns'
    literals; each literal is in every text its pattern matches."""
    from blogfeeds.extract.health import _literal, _markup_needles

    assert _markup_needles() is not None
    assert _literal(r"img\d?\.wsimg\.com/parking-lander") == ".wsimg.com/parking-lander"
    assert _literal(r"id=[\"']ddg-(?:l10n|captcha|origin)") == "ddg-"
    assert _literal(r"ab{0,3}cdef") == "cdef" and _literal("sedo|bodis") == ""
    assert _literal(r"\bparklogic\.com") == "parklogic.com"


@pytest.mark.parametrize(("name", "kind"), [("parking.html", "parked"), ("wall.html", "blocked")])
def test_the_extraction_reads_a_stand_in_page_off_its_parse_and_fetches_nothing(
    name: str, kind: str
) -> None:
    asked: list[str] = []

    async def fetch(request: FetchRequest) -> None:
        asked.append(request.url)

    body = (DATA / name).read_bytes()
    report = asyncio.run(extract_blog("https://blog.example/", body, {}, fetch, ExtractConfig()))
    assert report.health.kind == kind
    assert report.health == assess("https://blog.example/", 200, {}, body)
    assert asked == [] and report.feeds == [] and report.friends == []
    assert report.counters[f"health/{kind}_page"] == 1


def test_a_long_page_is_read_only_as_far_as_its_health_needs() -> None:
    words = "".join(f"<p>w{i} x</p>" for i in range(5 * SHORT_PAGE_WORDS))
    body = f"<html><title>t</title><body><h1>h</h1>{words}</body></html>".encode()
    long = page_text("https://blog.example/", body)
    assert SHORT_PAGE_WORDS <= long.words < SHORT_PAGE_WORDS + 5 and long.title == "t"
    assert long.h1 == ""  # on a long page, a post's title: not read
    # words split over elements count once joined, as a reader sees them
    short = page_text("https://blog.example/", b"<p>a<b>b</b>c <i>d</i> <script>x y</script></p>")
    assert (short.text, short.words) == ("abc d", 2)


def test_a_platform_no_site_page_sent_as_404_is_gone_not_parked() -> None:
    body = (
        b"<html><head><title>Site not found &middot; GitHub Pages</title></head><body>"
        b"<h1>404</h1><p>There isn't a GitHub Pages site here.</p></body></html>"
    )
    url = "https://blog.example/"
    assert assess(url, 200, {}, body).kind == "parked"
    first = assess(url, 404, {}, body, failure="http_4xx", dead_after=2)
    assert first.kind == "failing" and first.gone and "Hosting placeholder" in first.reason
    second = assess(url, 404, {}, body, failure="http_4xx", failures_before=1, dead_after=2)
    assert second.kind == "dead"
