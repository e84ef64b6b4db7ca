"""Hostile feeds through the real ``scrapy crawl feeds`` on a loopback web (issue 39): a person
field of 60,000 letters (feedparser's quadratic e-mail regex), dates feedparser and
``datetime`` cannot hold, numbers in non-ASCII digits or of thousands of digits in feeds and
headers, and an unchanged archive longer than the seen summary. Each feed is stored ``ok``
with its entries, the crawl logs no traceback and its reactor never stalls for the feed."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from blogfeeds.extract.feedreader import read_document
from blogfeeds.extract.feedreader.read import bound_persons
from blogfeeds.items import Blog, FeedInfo
from blogfeeds.revisit import from_minutes
from blogfeeds.storage.feedstore import FeedStore
from tests import test_crawl_feeds as crawl

pytestmark = pytest.mark.integration

HOUR = 60.0
LETTERS = "a" * 60_000

AUTHOR = "http://author.example/feed.xml"
FIRST_DAY = "http://first-day.example/feed.json"
OLD = "http://old.example/feed.json"
DIGITS = "http://digits.example/feed.xml"
HUGE = "http://huge.example/feed.xml"
ARCHIVE = "http://archive.example/feed.xml"


def rss(items: str, channel: str = "") -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>T</title>'
        f"<link>http://x.example/</link>{channel}{items}</channel></rss>"
    )


def item(guid: str, extra: str = "") -> str:
    return f"<item><guid>{guid}</guid><title>Post {guid}</title>{extra}</item>"


def archive(n: int) -> str:
    dates = (from_minutes(crawl.T0 - (i + 1) * 24 * HOUR) for i in range(n))
    return rss(
        "".join(
            item(f"p{i}", f"<pubDate>{d:%a, %d %b %Y %H:%M:%S} +0000</pubDate>")
            for i, d in enumerate(dates)
        )
    )


def json_feed(*items: tuple[str, str]) -> dict[str, Any]:
    """A JSON Feed route of ``(id, date_published)`` items."""
    body = {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "Dates",
        "items": [{"id": i, "title": i, "date_published": d} for i, d in items],
    }
    return {"body": json.dumps(body), "content_type": "application/feed+json"}


ROUTES: dict[str, Any] = {
    AUTHOR: crawl.feed_route(
        rss(
            item("a1", f"<author>{LETTERS}</author>")
            + item("a2", f"<dc:creator>{LETTERS}</dc:creator>"),
            f"<managingEditor>{LETTERS}</managingEditor><webMaster>{LETTERS}</webMaster>",
        )
    ),
    FIRST_DAY: json_feed(("first-day", "0001-01-01T00:00:00+01:00"), ("now", "2024-03-01")),
    OLD: json_feed(("old", "0999-06-01T00:00:00Z")),
    DIGITS: crawl.feed_route(
        rss(item("d1"), "<ttl>²</ttl><skipHours><hour>²</hour><hour>3</hour></skipHours>"),
        {"Cache-Control": "max-age=²", "Age": "²"},
    ),
    HUGE: crawl.feed_route(
        rss(item("h1"), f"<ttl>{'9' * 400}</ttl>"),
        {"Cache-Control": f"max-age={'9' * 5000}", "Age": "9" * 5000, "Retry-After": "9" * 5000},
    ),
    ARCHIVE: crawl.feed_route(archive(450)),
}


def stall_ms(log: str) -> int:
    found = re.search(r"'blogfeeds/reactor/longest_stall_ms': (\d+)", log)
    assert found, "the crawl records its longest reactor stall"
    return int(found[1])


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    db: Path = tmp_path_factory.mktemp("hostile") / "feeds.sqlite3"
    blogs = [
        Blog(f"blog{i}.example", f"http://blog{i}.example/", feed_url=u, feeds=[FeedInfo(u, "")])
        for i, u in enumerate(ROUTES)
    ]
    with FeedStore.open(f"sqlite:///{db}") as store:
        store.write(blogs, [])
    with crawl.LittleWeb(ROUTES) as web:
        first = crawl.run(web, db, crawl.T0)
        rows1 = crawl.rows(db)
        second = crawl.run(web, db, crawl.T0 + 4 * HOUR)
        rows2 = crawl.rows(db)
    with FeedStore.open(f"sqlite:///{db}") as store:
        entries = {u: store.entries(u) for u in ROUTES}
    yield {"first": first, "second": second, "rows1": rows1, "rows2": rows2, "entries": entries}


def test_every_hostile_feed_is_stored_with_its_entries(crawled: dict[str, Any]) -> None:
    for url in ROUTES:
        assert crawled["rows1"][url]["status"] == "ok", url
    stored = {u: sorted(e["guid"] for e in es) for u, es in crawled["entries"].items()}
    assert stored[AUTHOR] == ["a1", "a2"]
    assert stored[FIRST_DAY] == ["first-day", "now"]
    assert stored[OLD] == ["old"]
    assert stored[DIGITS] == ["d1"]
    assert stored[HUGE] == ["h1"]
    assert len(stored[ARCHIVE]) == 450


def test_a_person_of_60000_letters_does_not_freeze_the_crawl(crawled: dict[str, Any]) -> None:
    """feedparser's e-mail regex is quadratic in a run of letters (5 to 18 s for 60,000):
    the run is cut before parsing, so the reactor (which reads fetched feeds) never waits."""
    assert stall_ms(crawled["first"]["log"]) < 2000
    authors = [e["author"] or "" for e in crawled["entries"][AUTHOR]]
    assert all(0 < len(a) <= 1000 for a in authors)


def test_the_email_regex_costs_what_a_title_of_the_same_length_costs() -> None:
    """The same 60,000 letters as a title (read in linear time) are the reference."""

    def seconds(body: str) -> float:
        started = time.perf_counter()
        doc = read_document(body.encode(), "application/rss+xml")
        assert doc.is_feed
        return time.perf_counter() - started

    for tag in ("author", "dc:creator", "managingEditor", "itunes:owner"):
        hostile = rss(item("1", f"<{tag}>{LETTERS}</{tag}>"))
        reference = rss(item("1", f"<description>{LETTERS}</description>"))
        assert seconds(hostile) < 10 * seconds(reference) + 0.2, tag
    name = read_document(rss(item("1", "<author>jo@example.com (Jo Li)</author>")).encode())
    assert name.entries[0].author == "jo@example.com (Jo Li)"


def test_a_date_before_year_1_utc_is_no_date(crawled: dict[str, Any]) -> None:
    by_guid = {e["guid"]: e for e in crawled["entries"][FIRST_DAY]}
    assert by_guid["first-day"]["published"] is None
    assert by_guid["now"]["published"] == "2024-03-01T00:00:00Z"


def test_dates_before_year_1000_keep_four_digits(crawled: dict[str, Any]) -> None:
    (entry,) = crawled["entries"][OLD]
    assert entry["published"] == "0999-06-01T00:00:00Z"


def test_non_ascii_and_endless_digits_are_no_numbers(crawled: dict[str, Any]) -> None:
    for url in (DIGITS, HUGE):
        assert crawled["rows1"][url]["state"]["last_success"] is not None
    hints = read_document(ROUTES[DIGITS]["body"].encode(), "application/rss+xml").hints
    assert (hints.skip_hours, hints.ttl) == ({3}, None)


def test_an_unchanged_archive_longer_than_the_seen_summary_is_unchanged(
    crawled: dict[str, Any],
) -> None:
    second = crawled["second"]
    assert second["stats"].get("blogfeeds/feeds/changed", 0) == 0
    assert second["stats"].get("blogfeeds/feeds/new_entries", 0) == 0
    # Unchanged: T grows by 1.2 (a change would shrink it), toward the slower levels.
    before, after = (crawled[r][ARCHIVE]["state"]["level_time"] for r in ("rows1", "rows2"))
    assert after == pytest.approx(1.2 * before)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["author", "dc:creator", "title", "itunes:owner", "x:webMaster"]),
            st.text(alphabet="ab @.<>&;\n", max_size=600),
        ),
        max_size=5,
    )
)
@example([("author", "a" * 300 + " x@y.z " + "b" * 900), ("title", "c" * 400)])
@example([("x:webMaster", "<b>" + "a" * 257)])
def test_only_long_runs_in_persons_are_cut(fields: list[tuple[str, str]]) -> None:
    """Text outside person elements, and every run of at most 256 characters, is kept as
    it is; nothing grows."""
    text = "".join(f"<{tag}>{value}</{tag}>" for tag, value in fields)
    bounded = bound_persons(text)
    assert len(bounded) <= len(text)
    if not re.search(r"[^\s<>&;]{257}", text):
        assert bounded == text
    persons = "".join(f"<{tag}>{value}</{tag}>" for tag, value in fields if tag != "title")
    assert not re.search(r"[^\s<>&;]{257}", bound_persons(persons))
