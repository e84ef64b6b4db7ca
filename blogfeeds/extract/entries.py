"""Read the entries of a fetched feed document: feed bytes + headers → entries and feed hints.

Pure (no Scrapy). :func:`read_entries` decides first whether the body is a feed at all, by
content (:func:`blogfeeds.extract.feedcheck.sniff_feed`: RSS 0.9x/1.0/2.0, Atom, JSON Feed),
never by status or ``Content-Type``. A body the sniffer refuses still counts as a feed when
feedparser finds entries in it (CDF, an Atom feed wrapped in XHTML, a feed after a PHP
warning that starts with ``<br />``). Anything else is *not a
feed*: :attr:`FeedDocument.kind` says ``"html"`` (a feed URL that now serves a web page: a
parked domain, a login wall, a theme change) or ``"other"`` / ``"empty"``, so the caller can flag
it instead of reading it as a feed with no entries.

Decoding follows :func:`blogfeeds.extract.feedcheck.feed_encoding`: byte-order mark, XML
declaration, HTTP charset, UTF-8; ``gb2312``/``gbk`` decode as ``gb18030``. XML is then parsed by
feedparser; an ill-formed (bozo) document still yields every entry feedparser recovers
(:attr:`FeedDocument.bozo` is set). JSON Feed (jsonfeed.org 1.0/1.1) is read with :mod:`json`.

Every entry gets a dedupe key (:attr:`FeedEntry.key`), in this order (the order of
``guid`` → ``link`` → ``title + date`` used by Miniflux and tt-rss):

1. ``id``: RSS ``<guid>``, Atom ``<id>``, JSON ``id``, as written (whitespace trimmed);
2. ``link``: the entry link resolved against the feed URL and canonicalised
   (:func:`w3lib.url.canonicalize_url`: scheme/host case, sorted query, no fragment);
3. ``title_date``: ``title`` + newline + the ISO date (published, else updated);
4. ``content``: SHA-1 of the summary, for an entry with no id, link, title or date.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import re
import xml.sax
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

import feedparser
from w3lib.url import canonicalize_url

from blogfeeds.extract.feedcheck import _decode, _utf8_document, feed_encoding, sniff_feed
from blogfeeds.revisit.hints import RssHints, header, rss_hints

#: Longest summary kept (characters); longer ones are cut (feeds that put whole posts there).
SUMMARY_MAX = 4000
#: Longest title / author kept (characters).
SHORT_MAX = 1000

_HTML_START = re.compile(
    rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)
_HTML_ANYWHERE = re.compile(rb"<(?:html|body|head)[\s>]", re.I)


@dataclass(frozen=True)
class FeedEntry:
    """One entry of a feed document.

    ``key`` is the dedupe key and ``key_source`` how it was made (``"id"``, ``"link"``,
    ``"title_date"``, ``"content"``; see the module docstring). ``published``/``updated`` are
    ISO 8601 UTC strings (``2024-05-01T08:30:00Z``) or None; ``date`` is the entry's date in
    epoch minutes (published, else updated; None when undated), the unit of
    :mod:`blogfeeds.revisit`. ``link`` is absolute when the feed URL was given.
    """

    key: str
    key_source: str
    guid: str | None = None
    link: str | None = None
    title: str | None = None
    author: str | None = None
    published: str | None = None
    updated: str | None = None
    summary: str | None = None
    date: float | None = None


@dataclass(frozen=True)
class FeedDocument:
    """What :func:`read_entries` read.

    - ``kind``: ``"feed"``, ``"html"`` (a web page), ``"empty"`` (no bytes, or only
      whitespace), ``"broken"`` (ill-formed XML that yields no entry: a truncated download, a
      broken generator; an undefined entity alone does not count) or ``"other"`` (neither a
      feed nor HTML: plain text, JSON, an error page).
    - ``format``: ``"rss"``, ``"atom"``, ``"rdf"``, ``"json"``; for a feed the sniffer refused,
      feedparser's version name (``"atom10"``, ...) or ``"loose"`` (CDF, unknown roots);
      ``""`` when not a feed.
    - ``entries``: every entry in document order, exactly as many as feedparser (or the JSON
      Feed ``items``) found; repeated keys are kept (see :meth:`unique_entries`).
    - ``hints``: RSS ``<ttl>``, ``skipHours``/``skipDays``, ``sy:updatePeriod`` (minutes).
    - ``bozo``/``problem``: feedparser met ill-formed XML (entries are what it recovered).
    """

    kind: str
    format: str = ""
    encoding: str = ""
    title: str = ""
    site_url: str = ""
    entries: tuple[FeedEntry, ...] = ()
    hints: RssHints = field(default_factory=RssHints)
    bozo: bool = False
    problem: str = ""

    @property
    def is_feed(self) -> bool:
        return self.kind == "feed"

    def unique_entries(self) -> list[FeedEntry]:
        """Entries with repeated keys dropped (the first occurrence kept), in document order."""
        seen: set[str] = set()
        out: list[FeedEntry] = []
        for entry in self.entries:
            if entry.key not in seen:
                seen.add(entry.key)
                out.append(entry)
        return out


def _clean(value: Any, limit: int = SHORT_MAX) -> str | None:
    text = " ".join(str(value).split()) if value is not None else ""
    return text[:limit] if text else None


def _struct_iso(value: Any) -> tuple[str | None, float | None]:
    """(ISO 8601 UTC, epoch minutes) of a feedparser ``*_parsed`` struct_time (UTC)."""
    if value is None:
        return None, None
    try:
        seconds = calendar.timegm(value)
        dt = datetime.fromtimestamp(seconds, tz=UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None, None
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ"), seconds / 60.0


def _json_iso(value: Any) -> tuple[str | None, float | None]:
    if not isinstance(value, str) or not value.strip():
        return None, None
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None, None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    dt = dt.astimezone(UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ"), dt.timestamp() / 60.0


def canonical_link(link: str, base: str = "") -> str:
    """``link`` resolved against ``base`` and canonicalised (w3lib: no fragment, sorted query)."""
    absolute = link.strip()
    try:
        absolute = urljoin(base, absolute) if base else absolute
        return canonicalize_url(absolute)
    except ValueError:  # e.g. a bad IPv6 literal: the link stays as given
        return absolute


def entry_key(
    guid: str | None,
    link: str | None,
    title: str | None,
    date_iso: str | None,
    summary: str | None,
) -> tuple[str, str]:
    """``(key, key_source)`` by the fallback order of the module docstring."""
    if guid:
        return guid, "id"
    if link:
        return canonical_link(link), "link"
    if title or date_iso:
        return f"{title or ''}\n{date_iso or ''}", "title_date"
    digest = hashlib.sha1((summary or "").encode("utf-8"), usedforsecurity=False).hexdigest()
    return f"sha1:{digest}", "content"


def _make_entry(
    base: str,
    *,
    guid: Any,
    link: Any,
    title: Any,
    author: Any,
    published: tuple[str | None, float | None],
    updated: tuple[str | None, float | None],
    summary: Any,
) -> FeedEntry:
    guid_text = str(guid).strip() if guid not in (None, "") else None
    link_text = str(link).strip() if link not in (None, "") else None
    if link_text and base:
        try:
            link_text = urljoin(base, link_text)
        except ValueError:  # e.g. "http://0:][": an unparsable link stays as given
            pass
    title_text = _clean(title)
    summary_text = str(summary).strip()[:SUMMARY_MAX] if summary else None
    date_iso, date = published if published[0] else updated
    key, source = entry_key(guid_text, link_text, title_text, date_iso, summary_text)
    return FeedEntry(
        key=key,
        key_source=source,
        guid=guid_text or None,
        link=link_text or None,
        title=title_text,
        author=_clean(author),
        published=published[0],
        updated=updated[0],
        summary=summary_text or None,
        date=date,
    )


def _looks_html(body: bytes) -> bool:
    head = body[:4096].lstrip(b"\xef\xbb\xbf")
    return bool(_HTML_START.match(head) or _HTML_ANYWHERE.search(head))


def read_entries(
    body: bytes, headers: Mapping[Any, Any] | None = None, url: str = ""
) -> FeedDocument:
    """Read feed ``body`` (bytes as received) into a :class:`FeedDocument`.

    ``headers`` are the response headers (a ``dict`` of str or bytes, or Scrapy ``Headers``;
    only ``Content-Type`` is read, for its charset); ``url`` is the feed URL that relative entry
    links are resolved against. Never raises on bad input: a body that is not a feed comes back
    with ``kind`` ``"html"``, ``"other"`` or ``"empty"``.
    """
    content_type = header(headers or {}, "Content-Type") or ""
    if not body or not body.strip():
        return FeedDocument(kind="empty")
    sniff = sniff_feed(body, content_type)
    if sniff is not None and sniff.format == "json":
        return _read_json(body, sniff.encoding, url)
    encoding = sniff.encoding if sniff is not None else feed_encoding(body, content_type)
    text = _decode(body, encoding)
    parsed = feedparser.parse(
        _utf8_document(text),
        response_headers={"content-type": "application/xml; charset=utf-8"},
        sanitize_html=False,
        resolve_relative_uris=False,
    )
    raw_entries = parsed.get("entries") or []
    if sniff is None and not raw_entries:
        kind = "html" if _looks_html(body) else "other"
        return FeedDocument(kind=kind, encoding=encoding, problem="not a feed")
    exc = parsed.get("bozo_exception")
    if not raw_entries and _ill_formed(exc):
        return FeedDocument(
            kind="broken", encoding=encoding, problem=f"{type(exc).__name__}: {exc}"
        )
    meta = parsed.get("feed") or {}
    entries = []
    for e in raw_entries:
        summary = e.get("summary")
        if not summary and e.get("content"):
            summary = (e["content"][0] or {}).get("value")
        entries.append(
            _make_entry(
                url,
                guid=e.get("id"),
                link=e.get("link"),
                title=e.get("title"),
                author=e.get("author"),
                published=_struct_iso(e.get("published_parsed")),
                # dict.get: feedparser's own get() maps a missing "updated" to "published"
                # with a DeprecationWarning (feedparser issue 310).
                updated=_struct_iso(dict.get(e, "updated_parsed")),
                summary=summary,
            )
        )
    return FeedDocument(
        kind="feed",
        format=sniff.format if sniff is not None else str(parsed.get("version") or "loose"),
        encoding=encoding,
        title=_clean(meta.get("title")) or "",
        site_url=str(meta.get("link") or ""),
        entries=tuple(entries),
        hints=rss_hints(parsed, body),
        bozo=bool(parsed.get("bozo")),
        problem=f"{type(exc).__name__}: {exc}" if parsed.get("bozo") and exc else "",
    )


def _ill_formed(exc: object) -> bool:
    """Whether feedparser's ``bozo_exception`` is XML that is not well-formed (expat's error),
    other than an undefined entity (``&nbsp;`` in a title: feedparser's loose parser reads
    those feeds whole)."""
    return isinstance(exc, xml.sax.SAXParseException) and "undefined entity" not in str(exc)


def _read_json(body: bytes, encoding: str, url: str) -> FeedDocument:
    """A JSON Feed (jsonfeed.org version 1.0/1.1): ``items`` with ``id``, ``url``, ``title``,
    ``authors``/``author``, ``date_published``, ``date_modified``, ``summary``/``content_text``."""
    try:
        data = json.loads(_decode(body, encoding))
    except ValueError as exc:  # sniff_feed already parsed it; defensive
        return FeedDocument(kind="other", encoding=encoding, problem=str(exc))
    items = [i for i in data.get("items") or [] if isinstance(i, dict)]
    entries = []
    for item in items:
        authors = item.get("authors") or ([item["author"]] if item.get("author") else [])
        author = next(
            (a.get("name") for a in authors if isinstance(a, dict) and a.get("name")), None
        )
        summary = item.get("summary") or item.get("content_text") or item.get("content_html")
        entries.append(
            _make_entry(
                url,
                guid=item.get("id"),
                link=item.get("url") or item.get("external_url"),
                title=item.get("title"),
                author=author,
                published=_json_iso(item.get("date_published")),
                updated=_json_iso(item.get("date_modified")),
                summary=summary,
            )
        )
    return FeedDocument(
        kind="feed",
        format="json",
        encoding=encoding,
        title=_clean(data.get("title")) or "",
        site_url=str(data.get("home_page_url") or ""),
        entries=tuple(entries),
    )
