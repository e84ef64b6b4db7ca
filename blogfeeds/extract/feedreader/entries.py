"""The one entry type of a feed, and its dedupe key.

Every entry gets a dedupe key (:attr:`FeedEntry.key`), in this order (the order of
``guid`` → ``link`` → ``title + date`` used by Miniflux and tt-rss):

1. ``id``: RSS ``<guid>``, Atom ``<id>``, JSON ``id``, as written (whitespace trimmed);
2. ``link``: the entry link resolved against the feed URL and canonicalised
   (:func:`w3lib.url.canonicalize_url`: scheme/host case, sorted query, no fragment);
3. ``title_date``: ``title`` + newline + the ISO date (published, else updated);
4. ``content``: SHA-1 of the summary, for an entry with no id, link, title or date.

``scrapy crawl feeds`` stores these entries as they are (:class:`blogfeeds.items.FeedFetch`),
deduplicated per feed by ``key``.
"""

from __future__ import annotations

import calendar
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

from w3lib.url import canonicalize_url

from blogfeeds.extract.text import collapse, strip_controls

#: Longest summary kept (characters); longer ones are cut (feeds that put whole posts there).
SUMMARY_MAX = 4000
#: Longest title / author kept (characters).
SHORT_MAX = 1000


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
    link: str | None = None
    title: str | None = None
    author: str | None = None
    published: str | None = None
    updated: str | None = None
    summary: str | None = None
    """Summary or content as given (HTML), at most :data:`SUMMARY_MAX` characters."""
    date: float | None = None
    content: str | None = None
    """The full content (Atom ``<content>``, RSS ``content:encoded``, JSON ``content_html`` /
    ``content_text``) when the entry also gives a summary, at most :data:`SUMMARY_MAX`
    characters (HTML): a summary may be a hand-written excerpt, the content opens the post.
    Kept on the feed's newest entry only (:func:`keep_newest_content`)."""


def newest_index(entries: Sequence[FeedEntry]) -> int | None:
    """The index of the newest entry: the latest date (published, else updated), the first
    in document order when none is dated (feeds list the newest first); None when empty."""
    dated = [(e.date, i) for i, e in enumerate(entries) if e.date is not None]
    if dated:
        return max(dated, key=lambda d: (d[0], -d[1]))[1]
    return 0 if entries else None


def keep_newest_content(entries: list[FeedEntry]) -> list[FeedEntry]:
    """``entries`` with ``content`` kept on the newest only: the abstract reads that one, and
    every entry's content would double the text a crawl holds for a feed."""
    newest = newest_index(entries)
    return [
        e if i == newest or e.content is None else replace(e, content=None)
        for i, e in enumerate(entries)
    ]


def clean(value: Any, limit: int | None = SHORT_MAX) -> str | None:
    """``value`` collapsed (:func:`~blogfeeds.extract.text.collapse`: no control characters,
    whitespace collapsed), cut to ``limit`` characters; None when empty."""
    text = collapse(str(value)) if value is not None else ""
    return text[:limit] if text else None


def struct_time_utc(value: Any) -> datetime | None:
    """A feedparser ``*_parsed`` struct_time (UTC) as a datetime; None when absent or absurd."""
    if value is None:
        return None
    try:
        return datetime.fromtimestamp(calendar.timegm(value), tz=UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def iso_utc(value: Any) -> datetime | None:
    """An ISO 8601 string (JSON Feed dates; naive = UTC) as a UTC datetime; None otherwise."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError):  # OverflowError: 0001-01-01 east of UTC
        return None


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


def utc_z(when: datetime) -> str:
    """``2024-05-01T08:30:00Z`` of a UTC datetime; the year has four digits (``strftime('%Y')``
    writes year 999 as ``999``, which sorts and parses as something else)."""
    return f"{when.year:04d}-{when:%m-%dT%H:%M:%S}Z"


def _iso(when: datetime | None) -> str | None:
    return utc_z(when) if when is not None else None


def make_entry(
    base: str,
    *,
    guid: Any,
    link: Any,
    title: Any,
    author: Any,
    published: datetime | None,
    updated: datetime | None,
    summary: Any,
    content: Any = None,
) -> FeedEntry:
    """The entry of these fields as the feed gives them; ``link`` resolved against ``base``."""
    guid_text = str(guid).strip() if guid not in (None, "") else None
    link_text = str(link).strip() if link not in (None, "") else None
    if link_text and base:
        try:
            link_text = urljoin(base, link_text)
        except ValueError:  # e.g. "http://0:][": an unparsable link stays as given
            pass
    title_text = clean(title)
    summary_text = _long(summary)
    content_text = _long(content)
    when = published or updated
    key, source = entry_key(guid_text, link_text, title_text, _iso(when), summary_text)
    return FeedEntry(
        key=key,
        key_source=source,
        link=link_text or None,
        title=title_text,
        author=clean(author),
        published=_iso(published),
        updated=_iso(updated),
        summary=summary_text or None,
        date=when.timestamp() / 60.0 if when is not None else None,
        content=content_text if content_text != summary_text else None,
    )


def _long(value: Any) -> str | None:
    """A summary or content as kept: no control characters, at most :data:`SUMMARY_MAX`."""
    return strip_controls(str(value)).strip()[:SUMMARY_MAX] or None if value else None
