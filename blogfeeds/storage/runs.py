"""The record of crawl runs (table ``runs``, schema version 8): one row per closed run of
``scrapy crawl blogs`` or ``scrapy crawl feeds``, written by
:class:`blogfeeds.extensions.runs.RunRecorder` and shown on the site's overview.

A row says which spider ran, on which worker, from when to when, why it ended (Scrapy's finish
reason: ``finished``, ``shutdown``, ``closespider_itemcount``, ``database_down``, ...) and what
it did: blogs and friend links stored (a blogs crawl), feeds fetched, 304s and new entries (a
feeds run), and its failures, in all and by kind (``{"dns": 2, "http_4xx": 1}``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from blogfeeds.storage.db import Store

_SHORT = 64  # MySQL VARCHAR(64) of {short}
_KEY = 255  # MySQL VARCHAR(255) of {key}


@dataclass
class Run:
    """One closed run (the columns of ``runs`` without ``id``)."""

    spider: str
    worker: str
    started: str
    """ISO 8601 UTC, as every time of the schema."""
    finished: str
    reason: str
    """Scrapy's finish reason."""
    blogs: int = 0
    """Blog rows written (``blogfeeds/db/blogs_written``)."""
    friend_links: int = 0
    feeds_fetched: int = 0
    """Feed responses received (a failure without a response is a failure, not a fetch)."""
    not_modified: int = 0
    new_entries: int = 0
    failures: int = 0
    failures_by_kind: dict[str, int] = field(default_factory=dict)

    def row(self) -> tuple[Any, ...]:
        """The column values, texts cut to their column's width."""
        values = asdict(self)
        values["spider"] = values["spider"][:_SHORT]
        values["worker"] = values["worker"][:_KEY]
        values["reason"] = values["reason"][:_SHORT]
        values["failures_by_kind"] = json.dumps(self.failures_by_kind, sort_keys=True)
        return tuple(values[name] for name in COLUMNS)


COLUMNS = tuple(f.name for f in fields(Run))


def runs_table(store: Store) -> bool:
    """Whether the database has the ``runs`` table (a database older than the table, read
    without migrating, has none)."""
    with store._transaction(write=False) as cursor:
        return store._has_table(cursor, "runs")


def record_run(store: Store, run: Run) -> None:
    """Write ``run`` as a new row, in one transaction."""
    marks = ", ".join([store.dialect.param] * len(COLUMNS))
    with store._transaction() as cursor:
        cursor.execute(f"INSERT INTO runs ({', '.join(COLUMNS)}) VALUES ({marks})", run.row())


def latest_runs(store: Store, spider: str, limit: int = 5) -> list[Run]:
    """The last ``limit`` runs of ``spider``, the latest first (``[]`` without the table)."""
    if not runs_table(store):
        return []
    p = store.dialect.param
    with store._transaction(write=False) as cursor:
        cursor.execute(
            f"SELECT {', '.join(COLUMNS)} FROM runs WHERE spider = {p} "
            f"ORDER BY finished DESC, id DESC LIMIT {int(limit)}",
            (spider,),
        )
        rows = cursor.fetchall()
    out = []
    for row in rows:
        values = dict(zip(COLUMNS, row, strict=True))
        try:
            kinds = json.loads(values["failures_by_kind"] or "{}")
        except ValueError:
            kinds = {}
        values["failures_by_kind"] = kinds if isinstance(kinds, dict) else {}
        out.append(Run(**values))
    return out
