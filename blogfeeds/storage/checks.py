"""Blog health in the store: one ``blog_checks`` row per home-page read, the blog's current
``health`` from it and its history, and when to check it again.

:meth:`blogfeeds.storage.db.Store.write` settles each :class:`~blogfeeds.items.BlogCheck`
against what the store knew (:func:`settle_checks`, before the blog rows: failed reads in a
row, the title, generator, language and feed of the last read kept), then writes it
(:func:`write_checks`, after them) to ``blog_checks`` and its blog's health columns. The
re-check interval (:func:`next_hours`) doubles while a blog stays the same,
between ``BLOGFEEDS_RECHECK_MIN_HOURS`` and ``_MAX_HOURS``; a change or a failure starts again
at the minimum. History older than ``BLOGFEEDS_HEALTH_KEEP_DAYS`` is deleted as checks come in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from blogfeeds.extract.health import Health, Known, settle
from blogfeeds.health_settings import BlogHealthSettings
from blogfeeds.items import BlogCheck
from blogfeeds.storage.schema import Dialect

if TYPE_CHECKING:
    from blogfeeds.storage.db import Store

_CHUNK = 500
_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def _time(text: str) -> datetime:
    return datetime.strptime(text, _FORMAT).replace(tzinfo=UTC)


def _iso(when: datetime) -> str:
    return when.strftime(_FORMAT)


def next_hours(
    previous: float | None, changed: bool, kind: str, config: BlogHealthSettings
) -> float:
    """Hours to the next check: the minimum after a change, a failure or a first check, else
    twice the last interval, at most the maximum."""
    low, high = config.recheck_min_hours, max(config.recheck_max_hours, config.recheck_min_hours)
    if previous is None or changed or kind != "ok":
        return low
    return min(high, max(previous, low) * 2 or low)


def _previous(cursor: Any, dialect: Dialect, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        marks = ", ".join([dialect.param] * len(chunk))
        cursor.execute(
            "SELECT blog_id, title, generator, language, feed_url, health, health_failures, "
            f"check_hours, check_digest FROM blogs WHERE blog_id IN ({marks})",
            chunk,
        )
        names = [d[0] for d in cursor.description]
        for row in cursor.fetchall():
            found[row[0]] = dict(zip(names, row, strict=True))
    return found


@dataclass(frozen=True)
class Settled:
    """One check settled against the store: its health, the next interval and due time."""

    check: BlogCheck
    health: Health
    hours: float
    due: str
    stored: bool
    """The blog has a row already (a page answering in its place leaves that row as it is)."""


def settle_checks(
    cursor: Any, dialect: Dialect, checks: Sequence[BlogCheck], config: BlogHealthSettings
) -> list[Settled]:
    """Each check's health in its blog's history, read before the blog rows are written (a
    takeover is told from the last read the store kept)."""
    before = _previous(cursor, dialect, sorted({c.blog_id for c in checks}))
    out = []
    for check in checks:
        prev = before.get(check.blog_id)
        this = Health(
            check.kind,
            check.reason,
            failures=int(check.kind == "failing"),
            moved_to=check.moved_to,
            gone=check.gone,
        )
        health = settle(
            this,
            failures_before=int(prev["health_failures"] or 0) if prev else 0,
            before=(
                Known(prev["title"], prev["generator"], prev["language"], prev["feed_url"] or "")
                if prev is not None
                else None
            ),
            now=Known(check.title, check.generator, check.language, check.feed_url),
            dead_after=config.dead_after,
        )
        changed = bool(prev and check.digest and prev.get("check_digest") != check.digest)
        hours = next_hours(prev.get("check_hours") if prev else None, changed, health.kind, config)
        due = _iso(_time(check.checked_at) + timedelta(hours=hours))
        out.append(Settled(check, health, hours, due, prev is not None))
        if prev is not None:  # the next check of the same blog in this batch sees this one
            prev.update(health_failures=health.failures, check_hours=hours)
            if check.digest:
                prev["check_digest"] = check.digest
    return out


def write_checks(
    cursor: Any, dialect: Dialect, settled: Sequence[Settled], config: BlogHealthSettings
) -> None:
    """One ``blog_checks`` row per check, the blogs' health columns (the last check of a blog
    wins), and the history older than ``keep_days`` deleted."""
    p = dialect.param
    cursor.executemany(
        "INSERT INTO blog_checks (blog_id, checked_at, kind, http_status, final_url, "
        f"response_ms, reason) VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})",
        [
            (
                s.check.blog_id,
                s.check.checked_at,
                s.health.kind,
                s.check.http_status,
                s.check.final_url,
                s.check.response_ms,
                s.health.reason,
            )
            for s in settled
        ],
    )
    cursor.executemany(
        f"UPDATE blogs SET health = {p}, health_reason = {p}, moved_to = {p}, "
        f"health_failures = {p}, checked_at = {p}, next_check = {p}, check_hours = {p}, "
        f"check_digest = COALESCE({p}, check_digest), page_digest = COALESCE({p}, page_digest), "
        f"etag = COALESCE({p}, etag), "
        f"last_modified = COALESCE({p}, last_modified) "
        f"WHERE blog_id = {p}",
        [
            (
                s.health.kind,
                s.health.reason,
                s.health.moved_to or None,
                s.health.failures,
                s.check.checked_at,
                s.due,
                s.hours,
                s.check.digest or None,
                s.check.page_digest or None,
                s.check.etag or None,
                s.check.last_modified or None,
                s.check.blog_id,
            )
            for s in settled
        ],
    )
    if config.keep_days and settled:
        # counted from the newest check (the crawl's clock, which a test may set)
        newest = max(s.check.checked_at for s in settled)
        oldest = _iso(_time(newest) - timedelta(days=config.keep_days))
        cursor.execute(f"DELETE FROM blog_checks WHERE checked_at < {p}", (oldest,))


@dataclass(frozen=True)
class Due:
    """A stored blog to re-check: its home page and the validators of its last read."""

    blog_id: str
    url: str
    etag: str
    last_modified: str
    page_digest: str


RECHECK_MODES = ("due", "all")


def due_blogs(store: Store, mode: str, now: str) -> tuple[list[Due], set[str]]:
    """The blogs ``-a recheck=MODE`` re-reads (``all``: every stored blog; ``due``: those whose
    next check is at or before ``now``, or never checked), oldest check first, and the ids of
    every stored blog (a known friend is re-read only when due itself)."""
    if mode not in RECHECK_MODES:
        raise ValueError(f"recheck={mode!r}: expected one of {', '.join(RECHECK_MODES)}")
    query = "SELECT blog_id, url, etag, last_modified, next_check, page_digest FROM blogs"
    with store._transaction(write=False) as cursor:
        cursor.execute(query)
        rows = cursor.fetchall()
        # a blog merged into another (an alias) is read through its node's address
        cursor.execute("SELECT alias_id FROM blog_aliases WHERE alias_id <> node_id")
        aliases = {row[0] for row in cursor.fetchall()}
    known = {row[0] for row in rows}
    picked = [row for row in rows if mode == "all" or row[4] is None or row[4] <= now]
    picked.sort(key=lambda row: (row[4] or "", row[0]))
    return [
        Due(row[0], row[1], row[2] or "", row[3] or "", row[5] or "")
        for row in picked
        if row[0] not in aliases
    ], known


def mark_merged(cursor: Any, dialect: Dialect, now: str) -> int:
    """The addresses this write (at ``now``) merged into another blog (the old host serving a
    copy, another address of one blog): the last check of each, when it read the page well,
    becomes ``moved`` to that blog. Returns how many."""
    p = dialect.param
    cursor.execute(
        "SELECT a.alias_id, a.evidence, b.url FROM blog_aliases a JOIN blogs b "
        f"ON b.blog_id = a.node_id WHERE a.first_seen = {p} AND a.alias_id <> a.node_id",
        (now,),
    )
    merged = [(row[0], row[1], row[2]) for row in cursor.fetchall()]
    rows = []
    for alias, evidence, url in merged:
        cursor.execute(f"SELECT MAX(checked_at) FROM blog_checks WHERE blog_id = {p}", (alias,))
        last = cursor.fetchone()[0]
        if last is not None:
            rows.append((f"one blog with {url} ({evidence or 'known'})", alias, last))
    cursor.executemany(
        f"UPDATE blog_checks SET kind = 'moved', reason = {p} "
        f"WHERE blog_id = {p} AND checked_at = {p} AND kind = 'ok'",
        rows,
    )
    return len(rows)


_HISTORY_BATCH = 5000


def history(store: Store) -> Iterator[tuple[str, str, str, int | None, str]]:
    """Every ``blog_checks`` row as ``(blog_id, checked_at, kind, http_status, reason)``, by
    blog then time (one query, streamed: on MySQL an unbuffered cursor, so that the history of
    100,000 blogs is never held in memory at once); nothing in a database older than version 11
    read without migrating."""
    if store.schema_version() < 11:
        return
    query = (
        "SELECT blog_id, checked_at, kind, http_status, reason FROM blog_checks "
        "ORDER BY blog_id, checked_at, id"
    )
    with store._transaction(write=False) as buffered:
        cursor = buffered
        if store.dialect.name == "mysql":
            import pymysql.cursors  # noqa: PLC0415 - optional driver, only for MySQL URLs

            cursor = store.connection.raw.cursor(pymysql.cursors.SSCursor)
        try:
            cursor.execute(query)
            while rows := cursor.fetchmany(_HISTORY_BATCH):
                for row in rows:
                    yield row[0], row[1], row[2], row[3], row[4] or ""
        finally:
            if cursor is not buffered:
                cursor.close()
