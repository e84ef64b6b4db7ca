"""Is this response a feed? Validate by content, then read what ranking and dedupe need.

:func:`sniff_feed` decides from the bytes alone, never from the status or ``Content-Type``
(servers label feeds ``text/html``, ``text/plain`` or nothing at all, and soft-404 sites answer
200 with HTML everywhere). After a byte-order mark, whitespace, the XML declaration, other
processing instructions (``<?xml-stylesheet?>``), comments and a ``DOCTYPE``, the root element
must be:

* ``rss`` (RSS 0.9x/2.0, RSS Advisory Board),
* ``rdf:RDF`` carrying the RSS 1.0 or 0.90 namespace (a bare RDF document is not a feed),
* ``feed`` (Atom 1.0, RFC 4287; Atom 0.3),

or the body is a JSON object whose ``version`` starts with ``https://jsonfeed.org/version/``
(JSON Feed 1.0/1.1). A feed with zero items is still a feed.

:func:`read_feed` then parses a validated body (feedparser for XML, :mod:`json` for JSON Feed,
which feedparser 6 does not read) into a :class:`ParsedFeed`: title, item keys (ids and links,
for alias detection by content), item count, newest item date, ``rel=self``, the per-item
``wfw:commentRss`` URLs (WordPress comment feeds) and podcast markers.

Text is decoded with the byte-order mark (or XML 1.0 Appendix F autodetection of BOM-less
UTF-16/32), then the XML declaration's encoding, then the HTTP
charset, then UTF-8; legacy Chinese labels (``gb2312``, ``gbk``) decode as ``gb18030``, their
superset (w3lib's label table), so GBK feeds keep their titles.
"""

from __future__ import annotations

import calendar
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import feedparser
from w3lib.encoding import http_content_type_encoding, read_bom, resolve_encoding

SNIFF_BYTES = 256 * 1024
"""How much of the body is scanned for the root element (XSLT preambles, long comments)."""

_XML_DECL_ENCODING = re.compile(rb"^\s*<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._:-]+)")
# XML 1.0 Appendix F: "<?" (or "<") in UTF-32/UTF-16 without a byte-order mark.
_XML_AUTODETECT = (
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\x00<\x00", "utf-16-be"),
    (b"<\x00", "utf-16-le"),
)
_NAME = re.compile(r"[A-Za-z_][\w.:-]*")
_RSS1_NAMESPACES = ("purl.org/rss/1.0", "my.netscape.com/rdf/simple/0.9")
_JSON_FEED_VERSION = re.compile(r"^https?://jsonfeed\.org/version/", re.IGNORECASE)
_ROOTS = {"rss": "rss", "feed": "atom", "rdf": "rdf"}


@dataclass(frozen=True)
class FeedSniff:
    """What :func:`sniff_feed` found."""

    format: str
    """``"rss"``, ``"atom"``, ``"rdf"`` (RSS 1.0/0.90) or ``"json"`` (JSON Feed)."""
    root: str
    """The root element as written (``"rss"``, ``"rdf:RDF"``, ``"feed"``) or ``"{}"``."""
    version: str
    """RSS ``version`` attribute, the JSON Feed version URL, or ``""``."""
    encoding: str
    """The encoding the body was decoded with (Python codec name, e.g. ``"gb18030"``)."""


@dataclass
class ParsedFeed:
    """A validated feed, read for ranking, classification and alias detection."""

    sniff: FeedSniff
    title: str = ""
    """The feed's own title, whitespace collapsed."""
    site_url: str = ""
    """The feed's link to its site (RSS ``<link>``, Atom ``alternate``, JSON ``home_page_url``)."""
    self_url: str = ""
    """``rel=self`` (Atom link) or JSON ``feed_url``: recorded, never trusted as the feed's URL."""
    item_keys: frozenset[str] = frozenset()
    """Item ids and links, as written: two feeds sharing them carry the same posts."""
    item_count: int = 0
    newest: datetime | None = None
    """Newest item (or feed) date, UTC."""
    comment_feeds: frozenset[str] = frozenset()
    """Per-item ``wfw:commentRss`` URLs: these are comment feeds, never a blog's main feed."""
    podcast: bool = False
    """iTunes podcast markup, or most items carry an audio/video enclosure."""
    generator: str = ""
    bozo: bool = False
    """feedparser met malformed XML (still a feed: the root was right)."""
    problems: list[str] = field(default_factory=list)


def feed_encoding(body: bytes, content_type: str = "") -> str:
    """The encoding to decode a feed body with (see the module docstring for the order)."""
    bom = read_bom(body)
    if bom[0]:
        return str(bom[0])
    for prefix, codec in _XML_AUTODETECT:
        if body.startswith(prefix):
            return codec
    declared = _XML_DECL_ENCODING.match(body[:512])
    if declared:
        enc = _text_codec(resolve_encoding(declared.group(1).decode("ascii")))
        # A UTF-16/32 declaration without a BOM on an ASCII-compatible body is a lie.
        if enc and not enc.startswith(("utf-16", "utf-32")):
            return enc
    return _text_codec(http_content_type_encoding(content_type or None)) or "utf-8"


def _text_codec(name: str | None) -> str | None:
    """``name`` when it is a codec that decodes bytes to text; None for an unknown name and
    for the bytes-to-bytes codecs Python also finds by name (``encoding="uu"``, ``base64``,
    ``zlib``: ``bytes.decode`` refuses them with LookupError)."""
    if not name:
        return None
    try:
        b"x".decode(name)  # b"" would not ask the codec
    except LookupError:
        return None
    except UnicodeError:  # a text codec that cannot read one byte alone (UTF-16, UTF-32)
        pass
    return str(name)


def _decode(body: bytes, encoding: str) -> str:
    text = body.decode(encoding, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def _skip_prolog(text: str) -> int:
    """Index of the root element's ``<`` (or of a non-markup character) after the prolog."""
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if text.startswith("<?", i):
            end = text.find("?>", i + 2)
            if end < 0:
                return n
            i = end + 2
        elif text.startswith("<!--", i):
            end = text.find("-->", i + 4)
            if end < 0:
                return n
            i = end + 3
        elif text.startswith("<!", i):  # DOCTYPE, possibly with an internal subset
            bracket, end = text.find("[", i), text.find(">", i)
            if 0 <= bracket < end:
                close = text.find("]", bracket)
                end = text.find(">", close) if close >= 0 else -1
            if end < 0:
                return n
            i = end + 1
        else:
            return i
    return n


def sniff_feed(body: bytes, content_type: str = "") -> FeedSniff | None:
    """Whether ``body`` is a feed, by its root element or JSON Feed version; else ``None``.

    ``content_type`` (the HTTP header value) is used only for its charset. Junk before the XML
    declaration (a stray PHP notice, the most common feed parse error on the web) is skipped
    when ``<?xml`` follows within the first 1024 characters.
    """
    if not body:
        return None
    encoding = feed_encoding(body, content_type)
    text = _decode(body[:SNIFF_BYTES], encoding)
    start = _skip_prolog(text)
    if start < len(text) and text[start] not in "<{":
        decl = text.find("<?xml", start, start + 1024)
        if decl < 0:
            return None
        start = _skip_prolog(text[decl:]) + decl
    if start >= len(text):
        return None
    if text[start] == "{":
        return _sniff_json(body, encoding)
    name = _NAME.match(text, start + 1)
    if name is None:
        return None
    root = name.group(0)
    local = root.rsplit(":", 1)[-1].lower()
    fmt = _ROOTS.get(local)
    if fmt is None:
        return None
    tag_end = text.find(">", start)
    head = text[start : tag_end if tag_end > 0 else start + 2048]
    if fmt == "rdf" and not any(ns in text for ns in _RSS1_NAMESPACES):
        return None
    version = ""
    if fmt == "rss":
        match = re.search(r"\bversion\s*=\s*[\"']([^\"']*)", head)
        version = match.group(1) if match else ""
    return FeedSniff(format=fmt, root=root, version=version, encoding=encoding)


def _sniff_json(body: bytes, encoding: str) -> FeedSniff | None:
    try:
        data = json.loads(_decode(body, encoding))
    except ValueError:
        return None
    version = data.get("version") if isinstance(data, dict) else None
    if not isinstance(version, str) or not _JSON_FEED_VERSION.match(version):
        return None
    return FeedSniff(format="json", root="{}", version=version, encoding=encoding)


# --- Reading a validated feed ---------------------------------------------------------------


def _clean(value: Any) -> str:
    return " ".join(str(value or "").split())


def _struct_to_datetime(value: Any) -> datetime | None:
    try:
        return datetime.fromtimestamp(calendar.timegm(value), tz=UTC)
    except (TypeError, ValueError, OverflowError):
        return None


def _iso_to_datetime(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def read_feed(body: bytes, content_type: str = "") -> ParsedFeed | None:
    """Validate ``body`` with :func:`sniff_feed` and read it; ``None`` when it is not a feed."""
    sniff = sniff_feed(body, content_type)
    if sniff is None:
        return None
    text = _decode(body, sniff.encoding)
    if sniff.format == "json":
        return _read_json(sniff, text)
    return _read_xml(sniff, text)


def _read_json(sniff: FeedSniff, text: str) -> ParsedFeed:
    data = json.loads(text)
    items = [i for i in data.get("items") or [] if isinstance(i, dict)]
    keys = {str(i[k]) for i in items for k in ("id", "url") if i.get(k)}
    dates = [
        d
        for i in items
        for d in (
            _iso_to_datetime(i.get("date_published")),
            _iso_to_datetime(i.get("date_modified")),
        )
        if d
    ]
    audio = sum(
        1
        for i in items
        if any(
            str(a.get("mime_type", "")).startswith(("audio/", "video/"))
            for a in i.get("attachments") or []
            if isinstance(a, dict)
        )
    )
    return ParsedFeed(
        sniff=sniff,
        title=_clean(data.get("title")),
        site_url=str(data.get("home_page_url") or ""),
        self_url=str(data.get("feed_url") or ""),
        item_keys=frozenset(keys),
        item_count=len(items),
        newest=max(dates, default=None),
        podcast=bool(items) and audio * 2 > len(items),
    )


def _utf8_document(text: str) -> bytes:
    """Re-encode decoded XML as UTF-8 with a matching declaration, for feedparser."""
    start = text.find("<?xml")
    if 0 <= start < 1024:
        end = text.find("?>", start)
        if end > 0:
            text = text[:start] + '<?xml version="1.0" encoding="utf-8"?>' + text[end + 2 :]
    return text.encode("utf-8")


def _read_xml(sniff: FeedSniff, text: str) -> ParsedFeed:
    parsed = feedparser.parse(
        _utf8_document(text),
        response_headers={"content-type": "application/xml; charset=utf-8"},
        sanitize_html=False,
        resolve_relative_uris=False,
    )
    meta = parsed.get("feed", {})
    entries = parsed.get("entries", [])
    keys: set[str] = set()
    comments: set[str] = set()
    dates: list[datetime] = []
    media = 0
    for entry in entries:
        for key in ("id", "link"):
            if entry.get(key):
                keys.add(str(entry[key]))
        if entry.get("wfw_commentrss"):
            comments.add(str(entry["wfw_commentrss"]).strip())
        for attr in ("published_parsed", "updated_parsed"):
            when = _struct_to_datetime(entry.get(attr))
            if when:
                dates.append(when)
        if any(
            str(e.get("type", "")).startswith(("audio/", "video/"))
            for e in entry.get("enclosures") or []
        ):
            media += 1
    if not dates:
        when = _struct_to_datetime(meta.get("updated_parsed"))
        if when:
            dates.append(when)
    self_url = next(
        (str(link.get("href")) for link in meta.get("links") or [] if link.get("rel") == "self"),
        "",
    )
    podcast = any(str(k).startswith("itunes_") for k in meta) or (
        bool(entries) and media * 2 > len(entries)
    )
    return ParsedFeed(
        sniff=sniff,
        title=_clean(meta.get("title")),
        site_url=str(meta.get("link") or ""),
        self_url=self_url,
        item_keys=frozenset(keys),
        item_count=len(entries),
        newest=max(dates, default=None),
        comment_feeds=frozenset(comments),
        podcast=podcast,
        generator=_clean(meta.get("generator")),
        bozo=bool(parsed.get("bozo")),
    )
