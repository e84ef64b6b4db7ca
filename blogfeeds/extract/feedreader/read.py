"""Read a feed body once: sniff it, parse it (feedparser for XML, :mod:`json` for JSON Feed,
which feedparser 6 does not read), and take metadata, entries and hints from that one parse.
Two entry points share the reading:

- :func:`read_feed` (feed discovery's validation): a feed by its root element
  (:func:`~blogfeeds.extract.feedreader.sniff.sniff_feed`), read; None for anything else,
  without parsing it.
- :func:`read_document` (``scrapy crawl feeds``): every body comes back as a
  :class:`FeedDocument`. A body the sniffer refuses still counts as a feed when feedparser finds
  entries in it (CDF, an Atom feed wrapped in XHTML, a feed after a PHP warning that starts
  with ``<br />``); anything else is *not a feed* (``kind`` ``"html"``, ``"other"``,
  ``"empty"``), so the caller can flag it instead of reading it as a feed with no entries.

XML is decoded by :func:`~blogfeeds.extract.feedreader.sniff.feed_encoding` and handed to
feedparser as UTF-8; a bozo document still yields every entry feedparser recovers (``bozo``).
"""

from __future__ import annotations

import html
import re
import xml.sax
from datetime import datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

import feedparser

from blogfeeds.extract.feedreader.document import FeedDocument
from blogfeeds.extract.feedreader.entries import (
    SHORT_MAX,
    FeedEntry,
    clean,
    iso_utc,
    keep_newest_content,
    make_entry,
    struct_time_utc,
)
from blogfeeds.extract.feedreader.hints import rss_hints
from blogfeeds.extract.feedreader.sniff import (
    FeedSniff,
    decode,
    feed_encoding,
    looks_html,
    sniff_feed,
)

_MEDIA = ("audio/", "video/")
#: The longest run of non-space characters read in a person's name (:func:`bound_persons`).
PERSON_RUN_MAX = 256
_TAG = re.compile(r"<[^>]*>")


def read_feed(body: bytes, content_type: str = "", url: str = "") -> FeedDocument | None:
    """``body`` read when it is a feed by its root element or JSON Feed version; else None.

    ``content_type`` (the HTTP header value) is used only for its charset; ``url`` is the feed
    URL relative entry links are resolved against. A validated body is a feed even when
    ill-formed (``kind`` ``"broken"``, ``bozo`` set): its root was right."""
    sniff = sniff_feed(body, content_type)
    return None if sniff is None else _read(body, sniff, url)


def read_document(body: bytes, content_type: str = "", url: str = "") -> FeedDocument:
    """Read feed ``body`` (bytes as received) into a :class:`FeedDocument`; never raises on bad
    input: a body that is not a feed comes back with ``kind`` ``"html"``, ``"other"`` or
    ``"empty"`` (arguments as for :func:`read_feed`)."""
    if not body or not body.strip():
        return FeedDocument(kind="empty")
    sniff = sniff_feed(body, content_type)
    if sniff is None:
        sniff = FeedSniff(encoding=feed_encoding(body, content_type))
    return _read(body, sniff, url)


def _read(body: bytes, sniff: FeedSniff, url: str) -> FeedDocument:
    if sniff.format == "json":
        return _read_json(sniff, url)
    return _read_xml(body, sniff, url)


def _utf8_document(text: str) -> bytes:
    """Re-encode decoded XML as UTF-8 with a matching declaration, for feedparser."""
    start = text.find("<?xml")
    if 0 <= start < 1024:
        end = text.find("?>", start)
        if end > 0:
            text = text[:start] + '<?xml version="1.0" encoding="utf-8"?>' + text[end + 2 :]
    return text.encode("utf-8")


#: The elements feedparser reads a person from (RSS ``author``, ``managingEditor``,
#: ``webMaster``; ``dc:creator``, ``dc:author``, ``dc:publisher``; ``itunes:author``,
#: ``itunes:owner``; Atom ``author``), under any namespace prefix; ``[^<>]*`` keeps a tag
#: without its ``>`` from being scanned past the next ``<``.
_PERSON_TAG = re.compile(
    r"<(/?)(?:[A-Za-z_][\w.-]*:)?(?:author|creator|managingeditor|webmaster|publisher|owner)"
    r"(?=[\s/>])[^<>]*>",
    re.IGNORECASE,
)
#: A run of the characters feedparser's e-mail regex scans (and a few more), in a person.
_LONG_RUN = re.compile(rf"[^\s<>&;]{{{PERSON_RUN_MAX + 1},}}")


def bound_persons(text: str) -> str:
    """``text`` with every run of more than :data:`PERSON_RUN_MAX` non-space characters inside
    a person element (:data:`_PERSON_TAG`) cut to that length.

    feedparser 6 searches a person's text for an e-mail address with a regex that takes time
    quadratic in the length of such a run (kurtmckee/feedparser#562: 60,000 letters froze
    the process for 5 to 12 s). A name's words and an address (64 characters before the
    ``@``, 63 per label) are far shorter, so only garbage is cut, and the regex costs at most
    ``PERSON_RUN_MAX`` steps per character of the document. Entities (``&...;``) end a run."""
    if len(text) <= PERSON_RUN_MAX:
        return text
    pieces: list[str] = []
    done = 0
    open_end: int | None = None
    for tag in _PERSON_TAG.finditer(text):
        if open_end is not None:
            inside = text[open_end : tag.start()]
            if len(inside) > PERSON_RUN_MAX:
                pieces += [text[done:open_end], _cut_runs(inside)]
                done = tag.start()
        opening = not tag.group(1) and not tag.group().endswith("/>")
        open_end = tag.end() if opening else None
    if open_end is not None and len(text) - open_end > PERSON_RUN_MAX:  # never closed
        pieces += [text[done:open_end], _cut_runs(text[open_end:])]
        done = len(text)
    return "".join([*pieces, text[done:]]) if pieces else text


def _cut_runs(inside: str) -> str:
    return _LONG_RUN.sub(lambda run: run.group()[:PERSON_RUN_MAX], inside)


def _ill_formed(exc: object) -> bool:
    """Whether feedparser's ``bozo_exception`` is XML that is not well-formed (expat's error),
    other than an undefined entity (``&nbsp;`` in a title: feedparser's loose parser reads
    those feeds whole)."""
    return isinstance(exc, xml.sax.SAXParseException) and "undefined entity" not in str(exc)


def _read_xml(body: bytes, sniff: FeedSniff, url: str) -> FeedDocument:
    text = decode(body, sniff.encoding)
    parsed = feedparser.parse(
        _utf8_document(bound_persons(text)),
        response_headers={"content-type": "application/xml; charset=utf-8"},
        sanitize_html=False,
        resolve_relative_uris=False,
    )
    raw = parsed.get("entries") or []
    if not sniff.root:
        if not raw:
            kind = "html" if looks_html(body) else "other"
            return FeedDocument(kind=kind, sniff=sniff, problem="not a feed")
        sniff = FeedSniff(str(parsed.get("version") or "loose"), encoding=sniff.encoding)
    exc = parsed.get("bozo_exception")
    bozo = bool(parsed.get("bozo"))
    meta = parsed.get("feed") or {}
    entries: list[FeedEntry] = []
    keys: set[str] = set()
    comments: set[str] = set()
    dates: list[datetime] = []
    media = 0
    for e in raw:
        for key in ("id", "link"):
            if e.get(key):
                keys.add(str(e[key]))
        if e.get("wfw_commentrss"):
            comments.add(str(e["wfw_commentrss"]).strip())
        if any(str(m.get("type", "")).startswith(_MEDIA) for m in e.get("enclosures") or []):
            media += 1
        published = struct_time_utc(e.get("published_parsed"))
        # dict.get: feedparser's own get() maps a missing "updated" to "published" with a
        # DeprecationWarning (feedparser issue 310).
        updated = struct_time_utc(dict.get(e, "updated_parsed"))
        dates.extend(d for d in (published, updated) if d)
        summary = e.get("summary")
        content = (e["content"][0] or {}).get("value") if e.get("content") else None
        if not summary:
            summary, content = content, None
        entries.append(
            make_entry(
                url,
                guid=e.get("id"),
                link=e.get("link"),
                title=e.get("title"),
                author=e.get("author"),
                published=published,
                updated=updated,
                summary=summary,
                content=content,
            )
        )
    if not dates:
        when = struct_time_utc(meta.get("updated_parsed"))
        if when:
            dates.append(when)
    self_url = next(
        (str(link.get("href")) for link in meta.get("links") or [] if link.get("rel") == "self"),
        "",
    )
    hubs = tuple(
        dict.fromkeys(
            str(link.get("href")).strip()
            for link in meta.get("links") or []
            if link.get("rel") == "hub" and link.get("href")
        )
    )
    podcast = any(str(k).startswith("itunes_") for k in meta) or (
        bool(raw) and media * 2 > len(raw)
    )
    return FeedDocument(
        kind="broken" if not raw and _ill_formed(exc) else "feed",
        sniff=sniff,
        title=clean(meta.get("title"), None) or "",
        subtitle=_plain(meta.get("subtitle")),
        author=_feed_author(meta),
        rights=_plain(meta.get("rights")),
        site_url=str(meta.get("link") or ""),
        self_url=self_url,
        hubs=hubs,
        entries=tuple(keep_newest_content(entries)),
        item_keys=frozenset(keys),
        newest=max(dates, default=None),
        comment_feeds=frozenset(comments),
        podcast=podcast,
        hints=rss_hints(meta, text),
        bozo=bozo,
        problem=f"{type(exc).__name__}: {exc}" if bozo and exc else "",
    )


def _read_json(sniff: FeedSniff, url: str) -> FeedDocument:
    """A JSON Feed (jsonfeed.org version 1.0/1.1): ``items`` with ``id``, ``url``, ``title``,
    ``authors``/``author``, ``date_published``, ``date_modified``, ``summary``/``content_text``,
    ``attachments``; the feed's ``hubs`` (objects with ``type`` and ``url``).

    Every field is taken only with the type the spec gives it (anyone writes these files):
    strings where it says string (an ``id`` that is a number becomes its text, as the spec
    asks), URLs only as strings naming an http(s) resource, lists and objects only as such;
    anything else counts as absent."""
    data: dict[str, Any] = sniff.data
    items = [i for i in _list(data.get("items")) if isinstance(i, dict)]
    entries: list[FeedEntry] = []
    keys: set[str] = set()
    dates: list[datetime] = []
    media = 0
    for item in items:
        guid = _id(item.get("id"))
        link = _url(item.get("url"), url) or _url(item.get("external_url"), url)
        keys.update(k for k in (guid, _url(item.get("url"), url)) if k)
        if any(
            (_string(a.get("mime_type")) or "").startswith(_MEDIA)
            for a in _list(item.get("attachments"))
            if isinstance(a, dict)
        ):
            media += 1
        published = iso_utc(item.get("date_published"))
        updated = iso_utc(item.get("date_modified"))
        dates.extend(d for d in (published, updated) if d)
        authors = _list(item.get("authors")) or [item.get("author")]
        names = (_string(a.get("name")) for a in authors if isinstance(a, dict))
        author = next((name for name in names if name), None)
        summary = _string(item.get("summary"))
        content = _string(item.get("content_html")) or _string(item.get("content_text"))
        if not summary:
            summary, content = _string(item.get("content_text")) or content, None
        entries.append(
            make_entry(
                url,
                guid=guid,
                link=link,
                title=_string(item.get("title")),
                author=author,
                published=published,
                updated=updated,
                summary=summary,
                content=content,
            )
        )
    return FeedDocument(
        kind="feed",
        sniff=sniff,
        title=clean(_string(data.get("title")), None) or "",
        subtitle=_plain(_string(data.get("description"))),
        author=_json_author(data),
        site_url=_url(data.get("home_page_url"), url) or "",
        self_url=_url(data.get("feed_url"), url) or "",
        hubs=tuple(
            dict.fromkeys(
                hub
                for h in _list(data.get("hubs"))
                if isinstance(h, dict) and (hub := _url(h.get("url"), url))
            )
        ),
        entries=tuple(keep_newest_content(entries)),
        item_keys=frozenset(keys),
        newest=max(dates, default=None),
        podcast=bool(items) and media * 2 > len(items),
    )


def _plain(value: Any) -> str:
    """Feed metadata text as plain text: tags dropped (a ``<description>`` may hold HTML),
    entities decoded, whitespace collapsed; ``""`` when empty."""
    text = _string(value)
    if text is None:
        return ""
    if "<" in text:
        text = _TAG.sub(" ", text)
    return clean(html.unescape(text), SHORT_MAX) or ""


def _feed_author(meta: Any) -> str:
    """The feed-level author feedparser read (``author_detail.name`` first: feedparser's
    ``author`` of RSS ``managingEditor`` is ``"mail (Name)"``)."""
    detail = meta.get("author_detail") or {}
    return _plain(detail.get("name")) or _plain(meta.get("author"))


def _json_author(data: dict[str, Any]) -> str:
    authors = _list(data.get("authors")) or [data.get("author")]
    names = (_plain(a.get("name")) for a in authors if isinstance(a, dict))
    return next((name for name in names if name), "")


def _string(value: Any) -> str | None:
    """``value`` when it is a non-empty string; else None."""
    return value if isinstance(value, str) and value else None


def _id(value: Any) -> str | None:
    """A JSON Feed ``id``: a string, or a number as its text (bools and containers are none)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return _string(value)


def _list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array; else empty."""
    return value if isinstance(value, list) else []


def _url(value: Any, base: str) -> str | None:
    """``value`` when it is a string naming an http(s) URL (relative to ``base``); else None."""
    text = _string(value)
    if text is None:
        return None
    try:
        absolute = urljoin(base, text.strip()) if base else text.strip()
        scheme = urlsplit(absolute).scheme.lower()
    except ValueError:  # e.g. a bad IPv6 literal
        return None
    return text if scheme in ("http", "https") else None
