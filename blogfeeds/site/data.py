"""What the site and ``scrapy export entries`` read from the database, joined once in Python.

:func:`load` reads every table the pages need through the read-only
:class:`~blogfeeds.storage.feedstore.FeedStore` readers (SQLite or MySQL alike): blogs with their
feeds, friend links, schedule rows with their revisit state, the last runs of the crawl and of
the revisits, each blog's health checks folded into its timeline (:mod:`.timeline`), and
entries, each entry tied to the blog of its feed (the schedule row's
``blog_id``, else the blog whose feed list holds the URL, else the blog of an alias). Optional
blog columns that a newer schema adds (``description``, ``author``, ``icon_url``,
``last_post_at``, ``activity``, ``health``, ``health_reason``, ``moved_to``) are passed through
as read: every reader here uses ``dict.get``.

An entry's *date* (:func:`entry_date`) is when it was published, else updated, else first seen;
a date more than a day after the entry was first seen (a feed that dates its posts in the
future) counts as the first-seen time, so such a post cannot stay on top of the river.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html import unescape
from typing import Any
from urllib.parse import urlsplit

from w3lib.url import safe_url_string

from blogfeeds.extract.feedreader.entries import iso_utc, utc_z
from blogfeeds.site.timeline import Change, Timeline, fold
from blogfeeds.storage.checks import history
from blogfeeds.storage.feedstore import FeedStore
from blogfeeds.storage.runs import Run, latest_runs
from blogfeeds.storage.schema import url_hash

OPTIONAL_BLOG_COLUMNS = (
    "description",
    "author",
    "icon_url",
    "last_post_at",
    "activity",
    "health",
    "health_reason",
    "moved_to",
)
"""Blog columns a newer schema may hold; shown when present, never required."""
RUN_SPIDERS = ("blogs", "feeds")
"""The spiders whose last runs the overview shows: the crawl and the revisits."""
RUNS_SHOWN = 5
HEALTH_SPANS = 10
"""Spans of a blog's health timeline kept for its page (the newest)."""
_FUTURE_SLACK = timedelta(days=1)
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")
_URI = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
_HOST = re.compile(r"[a-z0-9._-]+|[0-9a-f:.]+")  # a name (IDNA) or an address (IPv6 unbracketed)


def iso(dt: datetime | None) -> str | None:
    """``2026-11-29T20:36:29Z`` of an aware datetime (None stays None)."""
    return utc_z(dt.astimezone(UTC)) if dt else None


def entry_date(entry: Mapping[str, Any]) -> str:
    """The entry's date for ordering and display (see the module docstring), ISO 8601 UTC."""
    seen = iso_utc(entry.get("first_seen"))
    given = iso_utc(entry.get("published")) or iso_utc(entry.get("updated"))
    if given is None or (seen is not None and given > seen + _FUTURE_SLACK):
        given = seen
    return iso(given) or ""


def web_url(value: Any) -> str | None:
    """``value`` as a valid absolute http(s) URI (RFC 3986), safe as a link's ``href`` and in
    the river's feeds, else None: a feed may give an entry a ``javascript:`` or ``data:``
    link, or one holding ``"><script>`` or ``" onmouseover="``. Characters a URI cannot hold
    are percent-encoded (w3lib, as browsers do: the link still leads where it led); a host that
    is no host name or address is refused."""
    if not isinstance(value, str):
        return None
    try:
        url = safe_url_string(value.strip())  # ValueError: a port or IPv6 literal that is none
        parts = urlsplit(url)
    except ValueError:
        return None
    host = parts.hostname or ""
    if parts.scheme.lower() not in ("http", "https") or not _HOST.fullmatch(host):
        return None
    return url if _URI.fullmatch(url) else None


def plain_text(html: Any, limit: int = 300) -> str:
    """Visible text of a summary (tags dropped, entities decoded, spaces collapsed), cut to
    ``limit`` characters with an ellipsis."""
    if not html:
        return ""
    text = _SPACE.sub(" ", unescape(_TAG.sub(" ", str(html)))).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def within_hops(links: Iterable[Mapping[str, Any]], start: str, hops: int) -> dict[str, int]:
    """Blogs within ``hops`` friend hops of ``start`` (following the links a blog lists), each
    with its distance; ``start`` itself is at 0."""
    out_links: dict[str, set[str]] = {}
    for link in links:
        out_links.setdefault(link["source_blog_id"], set()).add(link["target_blog_id"])
    dist = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if dist[node] >= hops:
            continue
        for nxt in sorted(out_links.get(node, ())):
            if nxt not in dist:
                dist[nxt] = dist[node] + 1
                queue.append(nxt)
    return dist


def find_blog(blogs: Sequence[Mapping[str, Any]], key: str) -> str | None:
    """The blog id of ``key``: a stored blog id, or a blog's URL (a trailing ``/`` optional)."""
    ids = {b["blog_id"] for b in blogs}
    if key in ids:
        return key
    wanted = key.rstrip("/")
    for blog in blogs:
        if (blog.get("url") or "").rstrip("/") == wanted:
            return str(blog["blog_id"])
    return None


@dataclass
class SiteData:
    """Everything read from the database, joined (see the module docstring)."""

    blogs: list[dict[str, Any]]
    """Blog rows (``feeds`` included), each with ``in_degree`` and ``out_degree``."""
    links: list[dict[str, Any]]
    """The friend links their sources still list: the map's edges."""
    dropped: list[dict[str, Any]] = field(default_factory=list)
    """The links a re-check found no longer listed (``removed``: when last seen): shown on the
    blogs' pages, in no count, graph or circle."""
    schedule: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Schedule rows (``state`` parsed) by blog id; ``""``: feeds no blog is known for (they
    count in the overview's revisit figures)."""
    entries: list[dict[str, Any]] = field(default_factory=list)
    """Entries newest first, each with ``blog_id`` (None when no blog is known), ``feed_url``
    and ``date`` (:func:`entry_date`)."""
    feeds_scheduled: int = 0
    built_at: str = ""
    runs: dict[str, list[Run]] = field(default_factory=dict)
    """The last runs of each of :data:`RUN_SPIDERS`, the latest first (table ``runs``)."""
    health: dict[str, Timeline] = field(default_factory=dict)
    """Each blog's health timeline (:mod:`.timeline`: its newest spans of checks)."""
    health_changes: list[Change] = field(default_factory=list)
    """The blogs whose kind changed at their latest check, the newest first."""

    def entries_of(self, blog_ids: Iterable[str] | None) -> list[dict[str, Any]]:
        """The entries of these blogs (all when None), newest first."""
        if blog_ids is None:
            return self.entries
        wanted = set(blog_ids)
        return [e for e in self.entries if e["blog_id"] in wanted]


def _feed_owners(
    blogs: Sequence[Mapping[str, Any]], schedule: Sequence[Mapping[str, Any]], aliases: Any
) -> dict[str, tuple[str, str | None]]:
    """``url_hash -> (feed_url, blog_id)`` over every feed the database knows."""
    owners: dict[str, tuple[str, str | None]] = {}
    for alias in aliases:
        owners[url_hash(alias["feed_url"])] = (alias["feed_url"], alias.get("blog_id"))
    for blog in blogs:
        for feed in blog.get("feeds") or ():
            owners.setdefault(url_hash(feed["url"]), (feed["url"], blog["blog_id"]))
    for row in schedule:  # the revisit side's own record wins: it follows redirects
        digest = url_hash(row["feed_url"])
        blog_id = row.get("blog_id") or owners.get(digest, ("", None))[1]
        owners[digest] = (row["feed_url"], blog_id)
    return owners


def load(
    store: FeedStore,
    blogs: list[dict[str, Any]],
    links: list[dict[str, Any]],
    *,
    only_these: bool = False,
    health_spans: int = HEALTH_SPANS,
) -> SiteData:
    """Join ``blogs`` (as :func:`blogfeeds.commands.export.select` returns them) and ``links``
    with the schedule, entries and health checks read from ``store``; ``only_these``: keep only
    the entries of ``blogs`` (else also those of other stored blogs and of feeds no blog is
    known for); ``health_spans``: the spans of a blog's health timeline kept (0: the checks
    are not read). ``links`` may hold rows no longer listed (``removed``, as
    ``Store.friend_links(removed=True)`` reads them): they go to :attr:`SiteData.dropped`."""
    ids = {b["blog_id"] for b in blogs}
    # A database of schema version 1 (read without migrating) has no feed-revisit tables.
    revisits = store.schema_version() >= 2
    schedule = store.schedule() if revisits else []
    owners = _feed_owners(blogs, schedule, store.aliases() if revisits else [])
    by_blog: dict[str, list[dict[str, Any]]] = {}
    for row in schedule:  # a feed no blog is known for (scrapy crawl feeds -a feed=) under ""
        blog_id = row.get("blog_id") or owners.get(url_hash(row["feed_url"]), ("", None))[1]
        by_blog.setdefault(blog_id or "", []).append(row)
    entries = []
    for entry in store.entries() if revisits else []:
        feed_url, blog_id = owners.get(entry.pop("feed_url_hash"), ("", None))
        if only_these and blog_id not in ids:
            continue
        entry.update(feed_url=feed_url, blog_id=blog_id, date=entry_date(entry))
        entries.append(entry)
    # Newest first; ties by guid so that a build is reproducible.
    entries.sort(key=lambda e: (e["date"], e["guid"]), reverse=True)
    timelines, changes = fold(history(store), health_spans, ids) if health_spans > 0 else ({}, [])
    return SiteData(
        blogs=blogs,
        links=[link for link in links if not link.get("removed")],
        dropped=[link for link in links if link.get("removed")],
        schedule=by_blog,
        entries=entries,
        feeds_scheduled=len(schedule),
        built_at=iso(datetime.now(UTC)) or "",
        runs={spider: latest_runs(store, spider, RUNS_SHOWN) for spider in RUN_SPIDERS},
        health=timelines,
        health_changes=changes,
    )


def day_bound(value: str, end: bool) -> str:
    """An ISO 8601 bound of ``--since``/``--until``: a date alone is its first (``end``: last)
    second; ``ValueError`` when unreadable."""
    text = value.strip()
    if len(text) == 10:
        day = datetime.fromisoformat(text).date().isoformat()
        return f"{day}T{'23:59:59' if end else '00:00:00'}Z"
    dt = iso_utc(text)
    if dt is None:
        raise ValueError(f"not an ISO 8601 date or time: {value!r}")
    return iso(dt) or ""


def select_entries(
    data: SiteData,
    blog_ids: set[str] | None = None,
    *,
    since: str | None = None,
    until: str | None = None,
    around: str | None = None,
    hops: int = 1,
) -> list[dict[str, Any]]:
    """The entries (newest first) of ``blog_ids`` (all when None) and, with ``around``, of the
    blogs within ``hops`` of it, dated from ``since`` to ``until`` (ISO 8601 UTC, inclusive)."""
    wanted = blog_ids
    if around is not None:
        circle = set(within_hops(data.links, around, hops))
        wanted = circle if wanted is None else wanted & circle
    out = []
    for entry in data.entries_of(wanted):
        if since and entry["date"] < since:
            continue
        if until and entry["date"] > until:
            continue
        out.append(entry)
    return out
