"""Storage of the feed-revisit side (``scrapy crawl feeds``): schedule rows, entries, aliases.

:class:`FeedStore` is a :class:`~blogfeeds.storage.db.Store` (same connections, dialects,
transactions and migrations) with the feed-side reads and writes: :meth:`FeedStore.sync_feeds`
schedules every main feed without a ``schedule`` row, due now; :meth:`FeedStore.claim_due`, the
multi-worker seam, leases due rows in one transaction (MySQL: ``FOR UPDATE SKIP LOCKED``, so
claims pass over rows another worker holds and never deadlock; SQLite serialises writers), so
every due feed goes to exactly one worker and a dead worker's leases expire
(:data:`LEASE_MINUTES`); :meth:`FeedStore.save_fetch` writes one
:class:`~blogfeeds.items.FeedFetch` (new entries, a permanent redirect, the schedule row, the
:class:`~blogfeeds.revisit.FeedState`, the lease released, a host pause) in one transaction. A
MySQL deadlock or lock wait timeout is retried up to :data:`LOCK_ATTEMPTS` times by every write.

Times: the API takes epoch minutes (the unit of :mod:`blogfeeds.revisit`); columns hold ISO 8601
UTC strings with seconds (``2026-11-29T20:36:29Z``), which sort as text.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

from blogfeeds.extract.feedreader import FeedEntry
from blogfeeds.extract.feedreader.entries import utc_z
from blogfeeds.extract.profile import ProfileSettings
from blogfeeds.items import FeedFetch
from blogfeeds.revisit import FeedState, auto_rank, from_minutes, to_minutes
from blogfeeds.storage.db import Store, utc_now
from blogfeeds.storage.hubs import note_hubs
from blogfeeds.storage.profilestore import refresh_blog
from blogfeeds.storage.schema import url_hash

#: Minutes a claimed feed stays leased to its worker (a crashed worker's feeds come back after).
LEASE_MINUTES = 30.0
#: Attempts of a write that InnoDB aborted with a deadlock (1213) or a lock wait timeout (1205).
LOCK_ATTEMPTS = 5
_LOCK_ERRORS = frozenset({1205, 1213})
_T = TypeVar("_T")
#: ``last_modified`` is a short column (MySQL ``VARCHAR(64)``); the full value stays in ``state``.
_SHORT_MAX = 64
_CHUNK = 500
_ENTRY_COLUMNS = (
    "feed_url_hash",
    "guid_hash",
    "guid",
    "link",
    "title",
    "author",
    "published",
    "updated",
    "summary",
    "first_seen",
)
_ALIAS_COLUMNS = (
    "alias_url",
    "alias_url_hash",
    "feed_url",
    "feed_url_hash",
    "blog_id",
    "reason",
    "first_seen",
    "last_seen",
)
_NEW_ROW_COLUMNS = (
    "feed_url_hash",
    "feed_url",
    "blog_id",
    "interval_minutes",
    "rank_score",
    "level",
    "next_due",
    "status",
)
_STATE_FIELDS = {f.name: f for f in fields(FeedState)}


def iso(minutes: float) -> str:
    """ISO 8601 UTC (seconds, ``Z``) of epoch minutes."""
    return utc_z(from_minutes(minutes))


def iso_minutes(value: str) -> float:
    """Epoch minutes of an ISO 8601 string (``Z`` or offset; naive = UTC)."""
    return to_minutes(datetime.fromisoformat(value.replace("Z", "+00:00")))


def state_to_json(state: FeedState) -> str:
    """JSON of a :class:`FeedState` (every field; tuples as arrays)."""
    return json.dumps(asdict(state), ensure_ascii=False, separators=(",", ":"))


def state_from_json(text: str | None) -> FeedState | None:
    """The :class:`FeedState` of :func:`state_to_json` output; None for NULL, bad JSON or a
    non-object. Unknown keys (from a newer version) are ignored, missing ones take defaults."""
    if not text:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    kwargs: dict[str, Any] = {}
    for name, value in data.items():
        if name not in _STATE_FIELDS:
            continue
        kwargs[name] = tuple(value) if isinstance(value, list) else value
    try:
        return FeedState(**kwargs)
    except TypeError:
        return None


def slot_of(url: str) -> str:
    """Lower-case host name of ``url`` (Scrapy's download slot key), ``""`` if none."""
    return (urlsplit(url).hostname or "").lower()


@dataclass(frozen=True)
class ScheduledFeed:
    """A claimed schedule row: ``url`` to fetch, its ``blog_id``, the user-settable ``rank``
    (RssRank 0..5, column ``rank_score``) and the stored ``state`` (None for a new feed);
    ``push_until``/``last_push``: an active WebSub subscription's lease end and last push."""

    url: str
    url_hash: str
    blog_id: str | None
    rank: int
    state: FeedState | None
    push_until: float | None = None
    last_push: float | None = None


def _rank(value: Any) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0
    return 0 if math.isnan(number) else min(max(round(number), 0), 5)


class FeedStore(Store):
    """Feed-side reads and writes on the blogfeeds schema (see the module docstring)."""

    profile = ProfileSettings()  # the activity thresholds: the pipeline sets its settings'

    # --- helpers --------------------------------------------------------------------------------

    def _rows(self, cursor: Any, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of one read-only statement (``?`` placeholders are turned into the dialect's)."""
        with self._transaction(write=False) as cursor:
            return self._rows(cursor, sql.replace("?", self.dialect.param), params)

    def _sql(self, sql: str) -> str:
        return sql.replace("?", self.dialect.param)

    def _retrying(self, work: Callable[[], _T]) -> _T:
        """``work()`` (one whole transaction), run again when MySQL aborted it with a deadlock or
        a lock wait timeout (up to :data:`LOCK_ATTEMPTS` runs, 50 ms, 100 ms, ... apart); any
        other error, or the last one, propagates."""
        for attempt in range(1, LOCK_ATTEMPTS + 1):
            try:
                return work()
            except Exception as exc:
                code = exc.args[0] if exc.args else None
                if self.dialect.name != "mysql" or code not in _LOCK_ERRORS:
                    raise
                if attempt == LOCK_ATTEMPTS:
                    raise
                time.sleep(0.05 * attempt)
        raise AssertionError("unreachable")

    # --- which feeds ----------------------------------------------------------------------------

    def sync_feeds(self, now: float, rank: int | str = 0) -> int:
        """Give every main feed without a schedule row (and not an alias) one, due at ``now``.

        ``rank`` is the RssRank of new rows: an int 0..5, or ``"auto"`` for
        :func:`blogfeeds.revisit.auto_rank` of the number of distinct other blogs whose friend
        links point at the feed's blog. Returns the number of rows added.
        """
        return self._retrying(lambda: self._sync_feeds(now, rank))

    def _sync_feeds(self, now: float, rank: int | str) -> int:
        with self._transaction() as cursor:
            missing = self._rows(
                cursor,
                "SELECT f.url, f.url_hash, f.blog_id FROM feeds f WHERE f.is_main = 1 "
                "AND NOT EXISTS (SELECT 1 FROM schedule s WHERE s.feed_url_hash = f.url_hash) "
                "AND NOT EXISTS (SELECT 1 FROM feed_aliases a WHERE a.alias_url_hash = f.url_hash)"
                " ORDER BY f.id",
            )
            if not missing:
                return 0
            unique = {row["url_hash"]: row for row in missing}
            ranks = self._auto_ranks(cursor, {r["blog_id"] for r in unique.values()})
            due = iso(now)
            sql = self.dialect.upsert("schedule", _NEW_ROW_COLUMNS, ("feed_url_hash",), ())
            cursor.executemany(
                sql,
                [
                    (
                        r["url_hash"],
                        r["url"],
                        r["blog_id"],
                        0.0,
                        ranks.get(r["blog_id"], 0) if rank == "auto" else _rank(rank),
                        0,
                        due,
                        "new",
                    )
                    for r in unique.values()
                ],
            )
            return len(unique)

    def _auto_ranks(self, cursor: Any, blog_ids: Iterable[str]) -> dict[str, int]:
        ids = sorted(b for b in blog_ids if b)
        ranks: dict[str, int] = {}
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            marks = ", ".join([self.dialect.param] * len(chunk))
            for row in self._rows(
                cursor,
                "SELECT target_blog_id, COUNT(DISTINCT source_blog_id) AS n FROM friend_links "
                f"WHERE target_blog_id IN ({marks}) AND source_blog_id <> target_blog_id "
                "GROUP BY target_blog_id",
                chunk,
            ):
                ranks[row["target_blog_id"]] = auto_rank(int(row["n"]))
        return ranks

    def add_feed(self, url: str, now: float, rank: int = 0, blog_id: str | None = None) -> str:
        """Ensure ``url`` has a schedule row (due at ``now`` if new) and return the stored URL:
        ``url`` itself, or the feed it is an alias of."""
        return self._retrying(lambda: self._add_feed(url, now, rank, blog_id))

    def _add_feed(self, url: str, now: float, rank: int, blog_id: str | None) -> str:
        digest = url_hash(url)
        with self._transaction() as cursor:
            alias = self._rows(
                cursor,
                self._sql("SELECT feed_url FROM feed_aliases WHERE alias_url_hash = ?"),
                (digest,),
            )
            if alias:
                url = alias[0]["feed_url"]
                digest = url_hash(url)
            sql = self.dialect.upsert("schedule", _NEW_ROW_COLUMNS, ("feed_url_hash",), ())
            cursor.execute(sql, (digest, url, blog_id, 0.0, _rank(rank), 0, iso(now), "new"))
        return url

    def claim_due(
        self,
        now: float,
        limit: int,
        owner: str,
        *,
        due_by: float | None = None,
        lease: float = LEASE_MINUTES,
        urls: Sequence[str] | None = None,
    ) -> list[ScheduledFeed]:
        """Lease up to ``limit`` feeds due at ``due_by`` (epoch minutes; default ``now``) to
        ``owner``, earliest ``next_due`` first, for ``lease`` minutes from ``now``; return
        exactly the rows this call leased. (A run that fetches only what was due when it started
        passes its start as ``due_by``: its leases still run from the time of the claim.)

        With ``urls``, exactly those feeds are claimed whether due or not (``-a feed=URL``).
        Rows leased by anyone until after ``now`` are never claimed. One transaction: the free
        rows are picked with ``FOR UPDATE SKIP LOCKED`` (MySQL; SQLite holds the write lock)
        and leased by primary key, so two workers claiming at once get disjoint sets. ``owner``
        must be unique per worker process (``lease_owner`` column, at most 255 characters).
        """
        if limit <= 0:
            return []
        due = now if due_by is None else due_by
        return self._retrying(lambda: self._claim(now, due, limit, owner, lease=lease, urls=urls))

    def _claim(
        self,
        now: float,
        due: float,
        limit: int,
        owner: str,
        *,
        lease: float,
        urls: Sequence[str] | None,
    ) -> list[ScheduledFeed]:
        now_iso, until = iso(now), iso(now + lease)
        p = self.dialect.param
        free = f"(lease_until IS NULL OR lease_until < {p})"
        mysql = self.dialect.name == "mysql"
        skip_locked = " FOR UPDATE SKIP LOCKED" if mysql else ""
        # In next_due order through the index, so a claim locks only the rows it reads up to
        # ``limit`` (a filesort, which MySQL prefers when most rows are due, would lock them all
        # and leave nothing to a worker claiming at the same moment).
        by_due = " FORCE INDEX (schedule_next_due)" if mysql else ""
        with self._transaction() as cursor:
            if urls is not None:
                hashes = [url_hash(u) for u in urls][:limit]
                if not hashes:
                    return []
                marks = ", ".join([p] * len(hashes))
                picked = self._rows(
                    cursor,
                    f"SELECT id FROM schedule WHERE feed_url_hash IN ({marks}) AND {free}"
                    f"{skip_locked}",
                    (*hashes, now_iso),
                )
            else:
                picked = self._rows(
                    cursor,
                    f"SELECT id FROM schedule{by_due} WHERE next_due <= {p} AND {free} "
                    f"ORDER BY next_due, id LIMIT {int(limit)}{skip_locked}",
                    (iso(due), now_iso),
                )
            ids = [int(r["id"]) for r in picked]
            if not ids:
                return []
            marks = ", ".join([p] * len(ids))
            cursor.execute(
                f"UPDATE schedule SET lease_owner = {p}, lease_until = {p} WHERE id IN ({marks})",
                (owner, until, *ids),
            )
            rows = self._rows(
                cursor,
                "SELECT s.feed_url, s.feed_url_hash, s.blog_id, s.rank_score, fs.state, "
                "w.lease_until AS push_until, w.last_push FROM schedule s LEFT JOIN feed_state fs"
                " ON fs.feed_url_hash = s.feed_url_hash LEFT JOIN websub w ON w.feed_url_hash = "
                f"s.feed_url_hash AND w.state = 'active' WHERE s.id IN ({marks}) "
                "ORDER BY s.next_due, s.id",
                ids,
            )
        return [
            ScheduledFeed(
                url=r["feed_url"],
                url_hash=r["feed_url_hash"],
                blog_id=r["blog_id"],
                rank=_rank(r["rank_score"]),
                state=state_from_json(r["state"]),
                push_until=iso_minutes(r["push_until"]) if r["push_until"] else None,
                last_push=iso_minutes(r["last_push"]) if r["last_push"] else None,
            )
            for r in rows
        ]

    def release(
        self, owner: str, urls: Iterable[str] | None = None, not_before: float | None = None
    ) -> int:
        """Drop ``owner``'s leases (only on ``urls`` if given); returns rows released.
        ``not_before`` (epoch minutes): their ``next_due`` moves to it when earlier (a paused
        host's feeds, so no claim takes them again before the pause ends).

        Only ``owner``'s rows are locked (found first by a plain read, then updated by primary
        key), so a release never holds up other workers' claims."""
        hashes = None if urls is None else [url_hash(u) for u in urls]
        due = None if not_before is None else iso(not_before)
        return self._retrying(lambda: self._release(owner, hashes, due))

    def _release(self, owner: str, hashes: list[str] | None, due: str | None = None) -> int:
        p = self.dialect.param
        with self._transaction() as cursor:
            keys: list[Any]
            if hashes is None:
                rows = self._rows(
                    cursor, f"SELECT id FROM schedule WHERE lease_owner = {p}", (owner,)
                )
                keys, column = [r["id"] for r in rows], "id"
            else:
                keys, column = hashes, "feed_url_hash"
            total = 0
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ", ".join([p] * len(chunk))
                later = (
                    ""
                    if due is None
                    else f", next_due = CASE WHEN next_due < {p} THEN {p} ELSE next_due END"
                )
                cursor.execute(
                    f"UPDATE schedule SET lease_owner = NULL, lease_until = NULL{later} "
                    f"WHERE lease_owner = {p} AND {column} IN ({marks})",
                    (*(() if due is None else (due, due)), owner, *chunk),
                )
                total += int(cursor.rowcount or 0)
            return total

    def next_due(self, now: float) -> float | None:
        """The earliest ``next_due`` (epoch minutes) of a row not leased at ``now``, or None."""
        rows = self.query(
            "SELECT MIN(next_due) AS due FROM schedule "
            "WHERE lease_until IS NULL OR lease_until < ?",
            (iso(now),),
        )
        due = rows[0]["due"] if rows else None
        return iso_minutes(due) if due else None

    def states(self) -> Iterator[FeedState]:
        """Every stored :class:`FeedState` (rows never fetched have none)."""
        for row in self.query("SELECT state FROM feed_state"):
            state = state_from_json(row["state"])
            if state is not None:
                yield state

    # --- writes after a fetch -------------------------------------------------------------------

    def save_fetch(self, fetch: FeedFetch) -> int:
        """Write one fetch in ONE transaction (see the module docstring); returns the number of
        entries actually inserted (guids already stored for the feed are ignored)."""
        return self.save_fetches([fetch])[0]

    def save_fetches(self, fetches: Sequence[FeedFetch]) -> list[int]:
        """Write several fetches (of distinct feeds) in ONE transaction, in order: all or none
        (a group commit: one commit, and one fsync, for many fetches); returns the entries
        inserted per fetch."""
        return self._retrying(lambda: self._save_fetches(fetches))

    def _save_fetches(self, fetches: Sequence[FeedFetch]) -> list[int]:
        with self._transaction() as cursor:
            return [self._write_fetch(cursor, fetch) for fetch in fetches]

    def _write_fetch(self, cursor: Any, fetch: FeedFetch) -> int:
        state = FeedState(**_state_kwargs(fetch.state))
        old_hash = url_hash(fetch.feed_url)
        url = fetch.moved_to or fetch.feed_url
        digest = url_hash(url)
        p = self.dialect.param
        if fetch.moved_to and digest != old_hash:
            self._move(cursor, fetch.feed_url, fetch.moved_to, fetch.blog_id, fetch.fetched_at)
        inserted = self._insert_entries(cursor, digest, fetch.entries, fetch.fetched_at)
        if inserted and fetch.blog_id:
            refresh_blog(cursor, self.dialect, fetch.blog_id, fetch.fetched_at, self.profile)
        sets = {
            "interval_minutes": float(state.interval),
            "level": int(fetch.level),
            "next_due": iso(state.next_due if state.next_due is not None else 0.0),
            "etag": state.etag,
            "last_modified": (state.last_modified or None) and state.last_modified[:_SHORT_MAX],
            "consecutive_failures": int(state.consecutive_failures),
            "status": fetch.status,
            "last_error": fetch.error or None,
            "last_fetch": fetch.fetched_at,
            "lease_owner": None,
            "lease_until": None,
        }
        if fetch.changed:
            sets["last_change"] = fetch.fetched_at
        assignments = ", ".join(f"{name} = {p}" for name in sets)
        update = f"UPDATE schedule SET {assignments} WHERE feed_url_hash = {p}"
        params: tuple[Any, ...] = (*sets.values(), digest)
        if fetch.lease_owner is not None:  # not over another worker's lease
            update += f" AND (lease_owner IS NULL OR lease_owner = {p})"
            params += (fetch.lease_owner,)
        cursor.execute(update, params)
        current = True
        if cursor.rowcount == 0:  # no row, another worker's lease, or (MySQL) nothing changed
            rows = self._rows(
                cursor, f"SELECT lease_owner FROM schedule WHERE feed_url_hash = {p}", (digest,)
            )
            if not rows:  # the row vanished (deleted by hand): recreate it
                sql = self.dialect.upsert("schedule", _NEW_ROW_COLUMNS, ("feed_url_hash",), ())
                new_row = (digest, url, fetch.blog_id, 0.0, state.rank, 0, utc_now(), "new")
                cursor.execute(sql, new_row)
                cursor.execute(update, params)
            elif fetch.lease_owner is not None:
                # This worker's lease expired and another worker leased the feed since: that
                # worker is fetching it, and its save writes the schedule and the state.
                current = rows[0]["lease_owner"] in (None, fetch.lease_owner)
        if current:
            sql = self.dialect.upsert(
                "feed_state", ("feed_url_hash", "state"), ("feed_url_hash",), ("state",)
            )
            cursor.execute(sql, (digest, state_to_json(state)))
        if fetch.host_pause_until:
            self._defer_host(cursor, slot_of(url), fetch.host_pause_until, digest)
        note_hubs(cursor, self.dialect, digest, fetch, now=fetch.fetched_at)  # WebSub discovery
        return inserted

    def _insert_entries(
        self, cursor: Any, feed_hash: str, entries: Sequence[FeedEntry], now: str
    ) -> int:
        if not entries:
            return 0
        rows: dict[str, tuple[Any, ...]] = {}
        for e in entries:
            guid_hash = url_hash(e.key)
            rows.setdefault(
                guid_hash,
                (
                    feed_hash,
                    guid_hash,
                    e.key,
                    e.link,
                    e.title,
                    e.author,
                    e.published,
                    e.updated,
                    e.summary,
                    now,
                ),
            )
        sql = self.dialect.upsert("entries", _ENTRY_COLUMNS, ("feed_url_hash", "guid_hash"), ())
        cursor.executemany(sql, list(rows.values()))
        return max(int(cursor.rowcount or 0), 0)

    def _move(self, cursor: Any, old_url: str, new_url: str, blog_id: str | None, now: str) -> None:
        """Re-key the schedule row and entries from ``old_url`` to ``new_url``; the old URL
        (and every alias of it) becomes an alias of the new one."""
        p = self.dialect.param
        old, new = url_hash(old_url), url_hash(new_url)
        cursor.execute(f"SELECT 1 FROM schedule WHERE feed_url_hash = {p}", (new,))
        if cursor.fetchone() is None:
            cursor.execute(
                f"UPDATE schedule SET feed_url = {p}, feed_url_hash = {p} "
                f"WHERE feed_url_hash = {p}",
                (new_url, new, old),
            )
        else:  # the new URL is scheduled already (another blog lists it): keep that row
            cursor.execute(f"DELETE FROM schedule WHERE feed_url_hash = {p}", (old,))
        cursor.execute(f"DELETE FROM feed_state WHERE feed_url_hash = {p}", (old,))
        cursor.execute(
            f"UPDATE entries SET feed_url_hash = {p} WHERE feed_url_hash = {p} "
            "AND guid_hash NOT IN (SELECT guid_hash FROM "
            f"(SELECT guid_hash FROM entries WHERE feed_url_hash = {p}) t)",
            (new, old, new),
        )
        cursor.execute(f"DELETE FROM entries WHERE feed_url_hash = {p}", (old,))
        cursor.execute(
            f"UPDATE feed_aliases SET feed_url = {p}, feed_url_hash = {p} "
            f"WHERE feed_url_hash = {p}",
            (new_url, new, old),
        )
        cursor.execute(f"DELETE FROM feed_aliases WHERE alias_url_hash = {p}", (new,))
        sql = self.dialect.upsert(
            "feed_aliases",
            _ALIAS_COLUMNS,
            ("alias_url_hash",),
            ("feed_url", "feed_url_hash", "reason", "last_seen"),
        )
        cursor.execute(sql, (old_url, old, new_url, new, blog_id, "permanent_redirect", now, now))

    def _defer_host(self, cursor: Any, host: str, until: str, except_hash: str) -> int:
        """Move ``next_due`` of every other feed of ``host`` due before ``until`` to ``until``."""
        if not host:
            return 0
        p = self.dialect.param
        rows = self._rows(
            cursor,
            f"SELECT feed_url, feed_url_hash FROM schedule WHERE next_due < {p} "
            f"AND (feed_url LIKE {p} OR feed_url LIKE {p})",
            (until, f"http://{host}%", f"https://{host}%"),
        )
        hashes = [
            r["feed_url_hash"]
            for r in rows
            if r["feed_url_hash"] != except_hash and slot_of(r["feed_url"]) == host
        ]
        for start in range(0, len(hashes), _CHUNK):
            chunk = hashes[start : start + _CHUNK]
            marks = ", ".join([p] * len(chunk))
            cursor.execute(
                f"UPDATE schedule SET next_due = {p} WHERE feed_url_hash IN ({marks})",
                (until, *chunk),
            )
        return len(hashes)

    # --- readers --------------------------------------------------------------------------------

    def schedule(self) -> list[dict[str, Any]]:
        """Every schedule row as a dict (``state`` parsed to a dict, or None), by feed URL;
        ``last_error`` is None in a database older than version 8 read without migrating."""
        rows = self.query(
            "SELECT s.*, fs.state FROM schedule s "
            "LEFT JOIN feed_state fs ON fs.feed_url_hash = s.feed_url_hash ORDER BY s.feed_url"
        )
        for row in rows:
            del row["id"], row["feed_url_hash"]
            row["state"] = json.loads(row["state"]) if row["state"] else None
            row.setdefault("last_error", None)
        return rows

    def entries(self, feed_url: str | None = None) -> list[dict[str, Any]]:
        """Stored entries (of one feed if given), oldest first (``first_seen``, then id)."""
        columns = "guid, link, title, author, published, updated, summary, first_seen"
        if feed_url is None:
            return self.query(f"SELECT feed_url_hash, {columns} FROM entries ORDER BY id")
        return self.query(
            f"SELECT {columns} FROM entries WHERE feed_url_hash = ? ORDER BY id",
            (url_hash(feed_url),),
        )

    def aliases(self) -> list[dict[str, Any]]:
        """Every alias row (``alias_url``, ``feed_url``, ``blog_id``, ``reason``), by alias."""
        return self.query(
            "SELECT alias_url, feed_url, blog_id, reason FROM feed_aliases ORDER BY alias_url"
        )

    def level_counts(self) -> dict[int, int]:
        """Number of schedule rows per ``level`` (0 = never fetched)."""
        rows = self.query("SELECT level, COUNT(*) AS n FROM schedule GROUP BY level")
        return {int(r["level"]): int(r["n"]) for r in rows}

    def set_rank(self, feed_url: str, rank: int) -> bool:
        """Set a feed's RssRank (0..5; ValueError otherwise); False when the feed is unknown."""
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank <= 5:
            raise ValueError(f"RssRank must be an integer 0..5, got {rank!r}")
        digest = url_hash(feed_url)
        with self._transaction() as cursor:
            cursor.execute(
                self._sql("UPDATE schedule SET rank_score = ? WHERE feed_url_hash = ?"),
                (rank, digest),
            )
            if cursor.rowcount:
                return True
            # MySQL counts changed rows: an unchanged rank is 0 rows too.
            found = self._rows(
                cursor, self._sql("SELECT 1 FROM schedule WHERE feed_url_hash = ?"), (digest,)
            )
            return bool(found)


def _state_kwargs(data: dict[str, Any]) -> dict[str, Any]:
    return {
        k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in _STATE_FIELDS
    }
