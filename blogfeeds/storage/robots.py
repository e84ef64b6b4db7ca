"""The robots.txt cache in the store (table ``robots_txt``, schema version 12): one row per
host, shared by ``scrapy crawl blogs`` and ``scrapy crawl feeds`` and by every worker on the
database (:class:`blogfeeds.middlewares.robotscache.CachedRobotsTxtMiddleware` reads and writes
it).

A row is what the host last answered for ``/robots.txt`` that says something (a 2xx with its
body, or a 4xx, which allows everything), its validators (``ETag``, ``Last-Modified``) for a
conditional GET, and ``fetched_at``: when it was last confirmed (that answer, or a 304 since).
An unreachable robots.txt (5xx, a network failure) writes nothing: the row keeps serving.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from blogfeeds.storage.db import Store

MAX_BODY = 500 * 1024
"""Bytes of a body kept: RFC 9309 §2.5 has crawlers parse at least the first 500 KiB."""
_CHUNK = 500  # hosts per SELECT, below SQLite's 999 host-parameter limit of old builds
_SHORT = 64  # MySQL VARCHAR(64) of {short}
_KEY = 255  # MySQL VARCHAR(255) of {key}
_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_COLUMNS = ("host", "status", "body", "etag", "last_modified", "fetched_at")


@dataclass(frozen=True)
class RobotsEntry:
    """A host's cached robots.txt (the columns of ``robots_txt`` without ``id``)."""

    host: str
    status: int
    body: bytes
    etag: str = ""
    last_modified: str = ""
    fetched_at: str = ""
    """ISO 8601 UTC, as every time of the schema: when the copy was last confirmed."""

    def age_hours(self, now: datetime) -> float:
        """Hours since ``fetched_at`` (infinite when unreadable: the copy is expired)."""
        try:
            when = datetime.strptime(self.fetched_at, _FORMAT).replace(tzinfo=UTC)
        except ValueError:
            return float("inf")
        return (now - when).total_seconds() / 3600


def cacheable(host: str) -> bool:
    """Whether ``host`` (a netloc, lower case) fits the key column."""
    return 0 < len(host) <= _KEY


def iso(when: datetime) -> str:
    return when.strftime(_FORMAT)


def read_entries(store: Store, hosts: Iterable[str]) -> dict[str, RobotsEntry]:
    """The cached entries of ``hosts`` (those that have one), by host."""
    wanted = sorted({h for h in hosts if cacheable(h)})
    found: dict[str, RobotsEntry] = {}
    p = store.dialect.param
    with store._transaction(write=False) as cursor:
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ", ".join([p] * len(chunk))
            cursor.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM robots_txt WHERE host IN ({marks})", chunk
            )
            for host, status, body, etag, modified, fetched in cursor.fetchall():
                found[host] = RobotsEntry(
                    host, int(status), bytes(body or b""), etag or "", modified or "", fetched
                )
    return found


def write_entries(store: Store, entries: Sequence[RobotsEntry]) -> None:
    """Store ``entries`` (a host's row replaced), in one transaction; bodies cut at
    :data:`MAX_BODY`, validators that do not fit their column dropped."""
    latest = {e.host: e for e in entries if cacheable(e.host)}
    if not latest:
        return
    rows = [
        (
            e.host,
            e.status,
            e.body[:MAX_BODY],
            e.etag or None,
            e.last_modified if e.last_modified and len(e.last_modified) <= _SHORT else None,
            e.fetched_at,
        )
        for e in latest.values()
    ]
    sql = store.dialect.upsert("robots_txt", _COLUMNS, ("host",), _COLUMNS[1:])
    with store._transaction() as cursor:
        cursor.executemany(sql, rows)


def confirm_entries(store: Store, hosts: Sequence[str], when: str) -> None:
    """A 304 confirmed the cached copy of ``hosts``: their ``fetched_at`` becomes ``when``."""
    wanted = sorted({h for h in hosts if cacheable(h)})
    if not wanted:
        return
    p = store.dialect.param
    with store._transaction() as cursor:
        cursor.executemany(
            f"UPDATE robots_txt SET fetched_at = {p} WHERE host = {p}", [(when, h) for h in wanted]
        )
