"""The feed reader (blogfeeds.extract.feedreader) as ``scrapy crawl feeds`` reads: every real
feed of the shared corpus, then one hand-made document per rule (dedupe keys, encodings,
not-a-feed, JSON Feed, hints, one parse)."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import feedparser
import lxml.etree
import pytest

from blogfeeds.extract.feedreader import feed_encoding, read_document, read_feed
from blogfeeds.extract.feedreader.entries import SUMMARY_MAX, canonical_link, entry_key
from blogfeeds.extract.feedreader.hints import rss_hints
from blogfeeds.revisit import to_minutes
from blogfeeds.revisit.hints import header
from tests.littleweb import find_shared


def _labels() -> Iterator[tuple[dict[str, Any], bytes]]:
    shared = find_shared()
    if shared is None:
        pytest.skip("the shared corpus (../shared or $BLOGFEEDS_SHARED) is not available")
    corpus = shared / "corpus"
    path = corpus / "feeds" / "feed_labels.jsonl"
    if not path.is_file():
        pytest.skip("corpus/feeds/feed_labels.jsonl is missing")
    for line in path.read_text("utf-8").splitlines():
        label = json.loads(line)
        file = corpus / label["file"]
        if label["file"].endswith(".jsonl") or not file.is_file():
            continue
        body = file.read_bytes()
        if file.name.endswith(".gz"):
            body = gzip.decompress(body)
        yield label, body


def test_every_corpus_feed_reads_and_counts_agree_with_feedparser() -> None:
    """No exception on any file; XML entry counts equal feedparser's (feed_labels.jsonl); a
    JSON Feed yields one entry per item object; labelled HTML is flagged, never a feed."""
    files = mismatches = 0
    entries = 0
    problems: list[str] = []
    for label, body in _labels():
        files += 1
        doc = read_document(body, "", "https://corpus.example/feed")
        entries += len(doc.entries)
        if label["kind"] == "json":
            if doc.is_feed:
                items = [
                    i for i in json.loads(body.decode("utf-8-sig"))["items"] if isinstance(i, dict)
                ]
                if len(doc.entries) != len(items):
                    problems.append(f"{label['file']}: {len(doc.entries)} != {len(items)} items")
            continue
        if label["kind"] == "html" and doc.kind != "html":
            problems.append(f"{label['file']}: HTML read as {doc.kind}")
        if len(doc.entries) != label["entries"]:
            mismatches += 1
            problems.append(f"{label['file']}: {len(doc.entries)} != feedparser {label['entries']}")
        for entry in doc.entries:
            assert entry.key, label["file"]
    assert files >= 600
    assert entries > 7000
    assert problems == [], problems[:20]
    assert mismatches == 0


def test_real_sites_feeds_are_feeds_with_ids() -> None:
    """Real blog feeds (corpus/feeds/sites/): every one with entries is a feed, and almost every
    entry is keyed by its id or link (title+date is a last resort)."""
    sources: dict[str, int] = {}
    for label, body in _labels():
        if not label["file"].startswith("feeds/sites/") or not label["entries"]:
            continue
        doc = read_document(body, "", "https://site.example/feed")
        assert doc.is_feed, label["file"]
        for entry in doc.entries:
            sources[entry.key_source] = sources.get(entry.key_source, 0) + 1
    assert sources.get("id", 0) + sources.get("link", 0) >= 0.95 * sum(sources.values())


RSS = """<?xml version="1.0" encoding="{enc}"?>
<rss version="2.0"><channel><title>{title}</title><link>https://blog.example/</link>
{extra}
{items}
</channel></rss>"""


def rss(items: str, *, enc: str = "utf-8", title: str = "Blog", extra: str = "") -> str:
    return RSS.format(enc=enc, title=title, items=items, extra=extra)


def test_dedupe_key_order_id_link_title_date_content() -> None:
    body = rss(
        """
<item><guid isPermaLink="false">tag:blog.example,2024:1</guid><link>/p/1</link></item>
<item><link>/p/2?b=2&amp;a=1#top</link><title>B</title></item>
<item><title>C</title><pubDate>Tue, 05 Mar 2024 08:00:00 +0800</pubDate></item>
<item><description>only text</description></item>
"""
    ).encode()
    doc = read_document(body, "", "https://blog.example/feed.xml")
    keys = [(e.key_source, e.key) for e in doc.entries]
    assert keys[0] == ("id", "tag:blog.example,2024:1")
    assert keys[1] == ("link", "https://blog.example/p/2?a=1&b=2")
    assert keys[2] == ("title_date", "C\n2024-03-05T00:00:00Z")
    assert keys[3][0] == "content" and keys[3][1].startswith("sha1:")
    assert doc.entries[0].link == "https://blog.example/p/1"  # resolved against the feed URL
    assert doc.entries[2].published == "2024-03-05T00:00:00Z"  # UTC
    assert doc.entries[2].date == to_minutes(datetime(2024, 3, 5, tzinfo=UTC))  # epoch minutes


def test_repeated_keys_kept_in_entries_dropped_by_unique_entries() -> None:
    item = "<item><guid>same</guid><title>{}</title></item>"
    doc = read_document(rss(item.format("first") + item.format("second")).encode())
    assert len(doc.entries) == 2
    assert [e.title for e in doc.unique_entries()] == ["first"]


def test_entry_key_and_canonical_link_directly() -> None:
    assert entry_key(" g ", None, None, None, None) == (" g ", "id")
    assert entry_key(None, "HTTP://Blog.Example/a#x", None, None, None) == (
        "http://blog.example/a",
        "link",
    )
    assert canonical_link("../b", "https://blog.example/x/feed") == "https://blog.example/b"


def test_updated_is_not_invented_from_published() -> None:
    """feedparser's get("updated_parsed") falls back to published (with a warning): not here."""
    doc = read_document(
        rss("<item><guid>1</guid><pubDate>Mon, 04 Mar 2024 10:00:00 GMT</pubDate></item>").encode()
    )
    assert doc.entries[0].published == "2024-03-04T10:00:00Z"
    assert doc.entries[0].updated is None


def test_gb2312_declared_decodes_as_gb18030() -> None:
    # "𠮷" is outside GB2312 and GBK: only gb18030 (the superset) can carry it.
    body = rss("<item><guid>1</guid><title>博客 𠮷</title></item>", enc="gb2312", title="友情链接")
    doc = read_document(body.encode("gb18030"))
    assert doc.encoding == "gb18030"
    assert doc.title == "友情链接"
    assert doc.entries[0].title == "博客 𠮷"


def test_bom_wins_over_a_wrong_declaration() -> None:
    body = (
        b"\xef\xbb\xbf"
        + rss("<item><guid>1</guid><title>Café</title></item>", enc="iso-8859-1").encode()
    )
    doc = read_document(body)
    assert doc.entries[0].title == "Café"


@pytest.mark.parametrize(
    ("declared", "charset"),
    [("uu", ""), ("base64", ""), ("utf-8", "zlib"), ("utf-32", ""), ("rot13", "hex")],
)
def test_a_codec_that_is_not_a_text_encoding_is_ignored(declared: str, charset: str) -> None:
    """``encoding="uu"`` or ``charset=zlib`` name Python codecs that turn bytes into bytes
    (``bytes.decode`` raises LookupError; found by the property test), and ``utf-32`` on an
    ASCII body is a lie: the body is read as UTF-8."""
    body = rss("<item><guid>1</guid><title>Grüße</title></item>", enc=declared).encode()
    content_type = f"application/rss+xml; charset={charset}" if charset else ""
    assert feed_encoding(body, content_type) == "utf-8"
    doc = read_document(body, content_type)
    assert doc.is_feed and doc.entries[0].title == "Grüße"


def test_http_charset_used_without_declaration() -> None:
    body = rss("<item><guid>1</guid><title>Grüße</title></item>").replace(' encoding="utf-8"', "")
    raw = body.encode("iso-8859-1")
    doc = read_document(
        raw,
        header({b"Content-Type": [b"application/rss+xml; charset=ISO-8859-1"]}, "Content-Type")
        or "",
    )
    assert doc.entries[0].title == "Grüße"


def test_bozo_feed_still_yields_entries() -> None:
    body = rss("<item><guid>1</guid><title>Tom & Jerry</title></item><item><guid>2</guid></item>")
    doc = read_document(body.encode())
    assert doc.is_feed and doc.bozo and doc.problem
    assert [e.key for e in doc.entries] == ["1", "2"]


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (b"<!DOCTYPE html><html><head><title>Parked</title></head><body>x</body></html>", "html"),
        (b"\n  <html lang=en><body><p>We moved!</p></body></html>", "html"),
        (b"Service temporarily unavailable", "other"),
        (b'{"error": "not found"}', "other"),
        (b"", "empty"),
        (b"   \n", "empty"),
    ],
)
def test_not_a_feed_is_flagged_not_empty(body: bytes, kind: str) -> None:
    doc = read_document(body, "application/rss+xml")
    assert (doc.kind, doc.is_feed, doc.entries) == (kind, False, ())


@pytest.mark.parametrize(
    "body",
    [
        b"<rss><channel><title>cut off<item><title>Post 1</ti",  # a truncated download
        b"<rss><channel><title>x</title></item></channel></rss>",  # mismatched tags
    ],
)
def test_ill_formed_xml_with_no_entry_is_broken_not_an_empty_feed(body: bytes) -> None:
    doc = read_document(body, "application/rss+xml")
    assert (doc.kind, doc.is_feed, doc.entries) == ("broken", False, ())
    assert doc.problem.startswith("SAXParseException")


def test_an_empty_feed_stays_a_feed_even_with_an_undefined_entity() -> None:
    for title in ("Empty", "A&nbsp;B"):
        doc = read_document(rss(f"<title>{title}</title>").encode())
        assert doc.is_feed and doc.entries == ()


def test_feed_after_php_warning_html_is_still_a_feed() -> None:
    body = (
        b"<br />\n<b>Deprecated</b>: x in y on line 2<br />\n"
        + rss("<item><guid>1</guid></item>").encode()
    )
    doc = read_document(body)
    assert doc.is_feed and len(doc.entries) == 1


def test_json_feed() -> None:
    body = json.dumps(
        {
            "version": "https://jsonfeed.org/version/1.1",
            "title": "J",
            "items": [
                {
                    "id": 7,
                    "url": "/posts/7",
                    "title": "Seven",
                    "authors": [{"name": "Ann"}],
                    "date_published": "2024-03-04T09:00:00+01:00",
                    "content_text": "x" * (SUMMARY_MAX + 10),
                },
                {"url": "https://j.example/8"},
                "not an item",
            ],
        }
    ).encode()
    doc = read_document(body, "", "https://j.example/feed.json")
    assert (doc.format, len(doc.entries)) == ("json", 2)
    first, second = doc.entries
    assert (first.key, first.link, first.author) == ("7", "https://j.example/posts/7", "Ann")
    assert first.published == "2024-03-04T08:00:00Z"
    assert len(first.summary or "") == SUMMARY_MAX
    assert (second.key_source, second.key) == ("link", "https://j.example/8")


HINTS_RSS = b"""<?xml version="1.0"?>
<rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel>
<title>t</title><link>https://a.example/</link><ttl>60</ttl>
<skipHours><hour>0</hour><hour>1</hour><hour>24</hour><hour>x</hour></skipHours>
<skipDays><day>Saturday</day><day>Sunday</day><day>Caturday</day></skipDays>
<sy:updatePeriod>daily</sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency>
<item><guid>a</guid><pubDate>Mon, 04 Mar 2024 10:00:00 GMT</pubDate></item>
</channel></rss>"""


def test_rss_hints() -> None:
    """The hints of the one parse: every skipHours/skipDays value (feedparser keeps the last)."""
    hints = read_document(HINTS_RSS).hints
    assert hints.ttl == 60.0
    assert hints.skip_hours == {0, 1}
    assert hints.skip_days == {5, 6}
    assert hints.update_period == 720.0
    hourly = rss_hints({"sy_updateperiod": "hourly"})
    assert hourly.update_period == 60.0 and hourly.ttl is None and not hourly.skip_hours
    assert rss_hints({"ttl": "garbage", "skiphours": ""}, "<not xml").ttl is None


def test_a_feed_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """One feedparser parse per read, and no XML parser besides: the hints and entries come
    from that parse."""
    calls: Counter[str] = Counter()
    parse = feedparser.parse

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls["feedparser"] += 1
        return parse(*args, **kwargs)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a second parse")

    monkeypatch.setattr(feedparser, "parse", counting)
    for name in ("fromstring", "XML", "parse", "iterparse"):
        monkeypatch.setattr(lxml.etree, name, refused)
    doc = read_document(HINTS_RSS)
    assert (calls["feedparser"], len(doc.entries), doc.hints.skip_days) == (1, 1, {5, 6})
    assert read_feed(HINTS_RSS) is not None and calls["feedparser"] == 2


def test_channel_hints() -> None:
    extra = """<ttl>90</ttl><skipHours><hour>1</hour><hour>2</hour></skipHours>
<skipDays><day>Sunday</day></skipDays>"""
    doc = read_document(rss("<item><guid>1</guid></item>", extra=extra).encode())
    assert doc.hints.ttl == 90.0
    assert doc.hints.skip_hours == frozenset({1, 2})
    assert doc.hints.skip_days == frozenset({6})


def test_atom_entries() -> None:
    body = b"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>
<entry><id>urn:uuid:1</id><title>One</title><link href="https://a.example/1"/>
<author><name>Bea</name></author><published>2024-03-01T10:00:00Z</published>
<updated>2024-03-02T10:00:00Z</updated><summary>S</summary></entry></feed>"""
    (entry,) = read_document(body).entries
    assert (entry.key, entry.author, entry.summary) == ("urn:uuid:1", "Bea", "S")
    assert (entry.published, entry.updated) == ("2024-03-01T10:00:00Z", "2024-03-02T10:00:00Z")


# --- hostile feeds -----------------------------------------------------------------------------

_JSON_FEED_VERSION = "https://jsonfeed.org/version/1.1"


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": ' * 100_000 + b"1" + b"}" * 100_000,
        b'{"version": "https://jsonfeed.org/version/1.1", "items": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}",
    ],
)
def test_json_nested_too_deep_is_not_a_feed_not_an_exception(body: bytes) -> None:
    """json.loads raises RecursionError (not ValueError) at this depth: the body is one bad
    input, read like any malformed JSON."""
    assert read_feed(body, "application/feed+json", "https://j.example/feed.json") is None
    doc = read_document(body, "application/feed+json", "https://j.example/feed.json")
    assert (doc.kind, doc.entries) == ("other", ())


def test_json_feed_fields_of_the_wrong_type_are_absent() -> None:
    body = json.dumps(
        {
            "version": _JSON_FEED_VERSION,
            "title": ["not", "a", "title"],
            "home_page_url": {"x": 1},
            "feed_url": "javascript:alert(1)",
            "items": [
                {
                    "id": {"x": 1},
                    "url": ["a"],
                    "external_url": "https://j.example/ext",
                    "title": {"t": 1},
                    "authors": "Ann",
                    "attachments": 5,
                    "summary": ["s"],
                    "content_text": "text",
                },
                {"id": True, "url": "mailto:a@j.example", "title": "T", "author": "Bob"},
                {"id": 1.5, "url": "/p"},
            ],
        }
    ).encode()
    doc = read_document(body, "", "https://j.example/feed.json")
    assert (doc.kind, doc.title, doc.site_url, doc.self_url) == ("feed", "", "", "")
    first, second, third = doc.entries
    assert (first.key_source, first.key, first.title, first.author, first.summary) == (
        "link",
        "https://j.example/ext",
        None,
        None,
        "text",
    )
    assert (second.key_source, second.link, second.author) == ("title_date", None, None)
    assert (third.key, third.link) == ("1.5", "https://j.example/p")
    assert doc.item_keys == {"1.5", "/p"}


def test_control_characters_are_stripped_from_feed_text() -> None:
    """C0/C1 controls (ESC sequences, BEL, DEL, CSI) never reach storage or a terminal; a
    summary keeps its newlines and tabs."""
    body = json.dumps(
        {
            "version": _JSON_FEED_VERSION,
            "title": "Feed\x1b[2J\x07 title\x9b",
            "items": [
                {
                    "id": "a",
                    "title": "A\x01\x02\x1b[31m post\x7f",
                    "authors": [{"name": "Ann\x08\x08\x08Eve"}],
                    "summary": "line\x00 one\n\tline\x1b two",
                }
            ],
        }
    ).encode()
    doc = read_document(body, "", "https://j.example/feed.json")
    assert doc.title == "Feed[2J title"
    (entry,) = doc.entries
    assert (entry.title, entry.author) == ("A[31m post", "AnnEve")
    assert entry.summary == "line one\n\tline two"
    rss = (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>R\x1b[2Jss</title>'
        b"<item><guid>g</guid><title>x\x01\x07y</title><description>a\x1b\nb</description>"
        b"</item></channel></rss>"
    )
    doc = read_document(rss, "", "https://r.example/feed")
    (entry,) = doc.entries
    assert (doc.title, entry.title, entry.summary) == ("R[2Jss", "xy", "a\nb")
