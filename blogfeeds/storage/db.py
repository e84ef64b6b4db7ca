""":class:`Store`, the writer and reader of the blogfeeds schema, on a connection of
:mod:`blogfeeds.storage.connection` (the URL forms and ``read_only`` are described there).

All calls are blocking DB-API calls; every write method is one transaction, batched with
``executemany`` (a commit per row is far slower on MySQL: ``bench/mysql.py``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, NamedTuple, Self

from blogfeeds.extract.platform import platform_of
from blogfeeds.health_settings import BlogHealthSettings
from blogfeeds.items import Blog, BlogAddress, BlogCheck, FriendLink
from blogfeeds.storage import checks as checks_store
from blogfeeds.storage import nodes, themedefaults
from blogfeeds.storage.connection import MYSQL_IO_TIMEOUT, Connection, connect
from blogfeeds.storage.schema import (
    SCHEMA_VERSION,
    TABLES,
    pending_migrations,
    url_hash,
)
from blogfeeds.theme_default_settings import ThemeDefaultSettings

logger = logging.getLogger(__name__)

FETCHED_STATUSES = frozenset({"ok", "no_feed"})
"""Blog statuses of a page that was read; any other status (``http_5xx``, ``timeout``, ...) only
updates ``status`` and ``fetched_at`` of a known blog, so a failed re-crawl erases nothing."""

_MYSQL_ALREADY_EXISTS = {1050, 1060, 1061}  # table, column, index name already exists
_SQLITE_DUPLICATE_COLUMN = "duplicate column name"
_SCHEMA_LOCK = "blogfeeds_schema"
_NODES_LOCK = "blogfeeds_nodes"
_DELETE_CHUNK = 500  # below SQLite's 999 host-parameter limit of old builds

_BLOG_COLUMNS = (
    "blog_id",
    "url",
    "title",
    "abstract",
    "abstract_source",
    "language",
    "generator",
    "platform",
    "platform_version",
    "language_declared",
    "description",
    "description_source",
    "author",
    "icon_url",
    "last_post_at",
    "posts_per_month",
    "activity",
    "feed_url",
    "friend_count",
    "status",
    "status_reason",
    "depth",
    "first_seen",
    "fetched_at",
    "truncated",
)
_NULLABLE_TEXTS = (
    "language_declared",
    "description",
    "description_source",
    "author",
    "icon_url",
    "last_post_at",
    "activity",
    "status_reason",
    "abstract_source",
    "health",
    "health_reason",
    "moved_to",
)
_CHECK_STATE = (
    "health_failures",
    "check_hours",
    "check_digest",
    "page_digest",
    "etag",
    "last_modified",
)
"""Columns of a blog's re-check state: the store's own, not shown by :meth:`Store.blogs`."""
_HELD = frozenset({"parked", "blocked"})
_BLOG_FULL_UPDATE = tuple(c for c in _BLOG_COLUMNS if c not in {"blog_id", "first_seen"})
# A failure keeps what the last answered crawl read, except that an unreachable blog is dead;
# its reason replaces the last one.
_BLOG_FAILURE_UPDATE = ("status", "status_reason", "fetched_at", "activity")
_FEED_COLUMNS = (
    "blog_id",
    "url",
    "url_hash",
    "type",
    "title",
    "score",
    "reasons",
    "position",
    "is_main",
)
_LINK_COLUMNS = (
    "source_blog_id",
    "target_blog_id",
    "target_url",
    "target_url_hash",
    "name",
    "container_score",
    "source_url",
    "avatar",
    "kind",
    "first_seen",
    "last_seen",
)
_LINK_UPDATE = tuple(
    c for c in _LINK_COLUMNS if c not in {"source_blog_id", "target_url_hash", "first_seen"}
)


class Written(NamedTuple):
    """What one :meth:`Store.write` stored."""

    blogs: int
    """Distinct blogs written."""
    friend_links: int
    """Distinct friend links in ``friend_links`` after the write: those listed, less a link
    between two addresses of one blog and those the write dropped."""
    dropped: dict[str, int]
    """Links the write moved to ``dropped_links``, by reason: those listed, and earlier links
    of other blogs (an entry that reached the threshold of :mod:`.themedefaults`)."""


def utc_now() -> str:
    """The current time as ISO 8601 UTC with seconds, e.g. ``2026-11-29T20:36:29Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Store:
    """Writes :class:`Blog` and :class:`FriendLink` items to the schema and reads them back.

    Re-writing an item updates its row (blogs by ``blog_id``, friend links by
    ``(source_blog_id, target_url)``); ``first_seen`` keeps its first value (a blog's is the
    ``fetched_at`` of its first stored item, the write time when that is empty; a link's is the
    write time). Not thread-safe: one ``Store`` per thread (sqlite3 connections are bound to
    their thread).
    """

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.dialect = connection.dialect
        self.health = BlogHealthSettings()
        """How checks become health (the storage pipeline sets the crawl's settings)."""
        self.theme_defaults = ThemeDefaultSettings()
        """The crawl-wide rule for theme defaults (the storage pipeline sets the crawl's)."""

    @classmethod
    def open(cls, url: str, *, read_only: bool = False) -> Self:
        """Connect to ``url`` (see :func:`connect`) and migrate it to ``SCHEMA_VERSION``.

        ``read_only``: only read it (the readers below work, the writers fail), creating and
        migrating nothing; ``ValueError`` when it holds no blogfeeds schema (a new or foreign
        database) or a schema newer than this code. Other errors as :func:`connect`.
        """
        store = cls(connect(url, read_only=read_only))
        try:
            if read_only:
                store.check_schema()
            else:
                store.ensure_schema()
        except BaseException:
            store.close()
            raise
        return store

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with suppress(Exception):
            self.connection.raw.close()

    # --- transactions and schema ---------------------------------------------------------------

    @contextmanager
    def _transaction(self, write: bool = True) -> Iterator[Any]:
        """A cursor inside one transaction: committed on success, rolled back on error."""
        if self.dialect.name == "mysql":
            self._reconnect_if_dead()
        raw = self.connection.raw
        if self.dialect.name == "mysql":
            raw.begin()
        else:
            raw.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        cursor = raw.cursor()
        try:
            yield cursor
        except BaseException:
            try:
                raw.rollback()
            except Exception as exc:  # the connection is gone: the server rolls back itself
                logger.warning("rollback failed: %s", exc)
            raise
        else:
            raw.commit()
        finally:
            with suppress(Exception):
                cursor.close()

    def _reconnect_if_dead(self) -> None:
        """Replace a MySQL connection the server dropped (wait_timeout, restart: 2006/2013)."""
        try:
            self.connection.raw.ping(reconnect=False)
        except Exception as exc:
            logger.warning("database connection lost (%s); reconnecting", exc)
            self.close()
            self.connection = connect(self.connection.url, read_only=self.connection.read_only)

    def _execute_ddl(self, cursor: Any, statement: str) -> None:
        try:
            cursor.execute(statement)
        except Exception as exc:
            # MySQL commits each DDL statement, so a migration interrupted half-way is re-run;
            # on either database a lost version row re-runs an applied migration. SQLite has
            # IF NOT EXISTS for tables and indexes, not for ADD COLUMN.
            code = exc.args[0] if exc.args else None
            if self.dialect.name == "mysql":
                if code not in _MYSQL_ALREADY_EXISTS:
                    raise
            elif not str(code).startswith(_SQLITE_DUPLICATE_COLUMN):
                raise
            logger.debug("schema: already applied: %s", exc)

    def _has_table(self, cursor: Any, table: str) -> bool:
        cursor.execute(self.dialect.table_exists, (table,))
        return cursor.fetchone() is not None

    def _stored_version(self, cursor: Any) -> int:
        if not self._has_table(cursor, "schema_version"):
            return 0
        cursor.execute("SELECT MAX(version) FROM schema_version")
        row = cursor.fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def ensure_schema(self) -> int:
        """Create the tables or apply pending migrations; return the stored version.

        Safe when several crawl processes start at once: SQLite serialises on
        ``BEGIN IMMEDIATE``, MySQL on ``GET_LOCK('blogfeeds_schema')``. Raises ``ValueError``
        when the database is newer than this code.
        """
        mysql = self.dialect.name == "mysql"
        if mysql:
            with self._transaction() as cursor:
                cursor.execute("SELECT GET_LOCK(%s, 60)", (_SCHEMA_LOCK,))
        try:
            with self._transaction() as cursor:
                stored = self._stored_version(cursor)
                record = self.dialect.upsert(
                    "schema_version", ("version", "applied_at"), ("version",), ()
                )
                for version, steps in pending_migrations(stored, self.dialect):
                    for step in steps:
                        if isinstance(step, str):
                            self._execute_ddl(cursor, step)
                        else:
                            step(cursor, self.dialect)
                    cursor.execute(record, (version, utc_now()))
                    logger.info("database schema migrated to version %d", version)
        finally:
            if mysql:
                with self._transaction() as cursor:
                    cursor.execute("SELECT RELEASE_LOCK(%s)", (_SCHEMA_LOCK,))
        return self.schema_version()

    def check_schema(self) -> int:
        """The stored schema version, checked readable without migrating: ``ValueError`` when
        the database has no blogfeeds tables (version 0) or is newer than this code."""
        version = self.schema_version()
        if version == 0:
            raise ValueError("no blogfeeds tables in this database (nothing was ever stored)")
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"database schema version {version} is newer than this code's {SCHEMA_VERSION}; "
                "upgrade blogfeeds"
            )
        return version

    def schema_version(self) -> int:
        """The stored schema version (0 for an empty database)."""
        with self._transaction(write=False) as cursor:
            return self._stored_version(cursor)

    # --- writers -------------------------------------------------------------------------------

    def upsert_blogs(self, blogs: Sequence[Blog]) -> int:
        """Insert or update ``blogs`` and replace their feed rows, in one transaction.

        Returns the number of distinct blogs written (a repeated ``blog_id`` keeps the last).
        """
        return self.write(blogs, ())[0]

    def upsert_friend_links(self, links: Sequence[FriendLink]) -> int:
        """Insert or update friend links in one transaction; returns the number of rows sent."""
        return self.write((), links)[1]

    def write(
        self,
        blogs: Sequence[Blog],
        links: Sequence[FriendLink],
        addresses: Sequence[BlogAddress] = (),
        checks: Sequence[BlogCheck] = (),
    ) -> Written:
        """Write blogs (with their feeds), friend links and addresses that redirected in ONE
        transaction; then the blogs' addresses are joined into nodes (:mod:`.nodes`: a blog
        found to be another's alias is merged into it) and each friend link is stored on the
        node of its source and target.

        Returns what it wrote (:class:`Written`). Any driver error rolls the whole call back
        and propagates, so the caller can retry the same items (every write is idempotent).
        On MySQL the write holds a named lock, so that workers sharing the server decide nodes
        one after the other, each seeing the others' addresses.
        """
        now = utc_now()
        latest = {blog.blog_id: blog for blog in blogs}
        stored, dropped = 0, dict[str, int]()
        with self._nodes_lock(), self._transaction() as cursor:
            settled = checks_store.settle_checks(cursor, self.dialect, checks, self.health)
            # a parking page or a bot wall answering in a known blog's place is not the blog:
            # its row keeps the last read (only the check is written)
            held = {s.check.blog_id for s in settled if s.stored and s.health.kind in _HELD}
            fetched = [
                b for b in latest.values() if b.status in FETCHED_STATUSES and b.blog_id not in held
            ]
            failed = [b for b in latest.values() if b.status not in FETCHED_STATUSES]
            observed = [(a.blog_id, a.observation) for a in addresses]
            observed += [(b.blog_id, b.observation) for b in fetched if b.observation]
            if fetched:
                sql = self.dialect.upsert("blogs", _BLOG_COLUMNS, ("blog_id",), _BLOG_FULL_UPDATE)
                cursor.executemany(sql, [_blog_row(b, now) for b in fetched])
                ids = [b.blog_id for b in fetched]
                for start in range(0, len(ids), _DELETE_CHUNK):  # one round trip per chunk
                    chunk = ids[start : start + _DELETE_CHUNK]
                    marks = ", ".join([self.dialect.param] * len(chunk))
                    cursor.execute(f"DELETE FROM feeds WHERE blog_id IN ({marks})", chunk)
                feed_rows = [row for b in fetched for row in _feed_rows(b)]
                if feed_rows:
                    params = ", ".join([self.dialect.param] * len(_FEED_COLUMNS))
                    cursor.executemany(
                        f"INSERT INTO feeds ({', '.join(_FEED_COLUMNS)}) VALUES ({params})",
                        feed_rows,
                    )
            if failed:
                sql = self.dialect.upsert(
                    "blogs", _BLOG_COLUMNS, ("blog_id",), _BLOG_FAILURE_UPDATE
                )
                cursor.executemany(sql, [_blog_row(b, now) for b in failed])
            if settled:
                checks_store.write_checks(cursor, self.dialect, settled, self.health)
            nodes.retarget_paths(cursor, self.dialect, [(b.blog_id, b.url) for b in fetched])
            nodes.record(cursor, self.dialect, observed, latest, now)
            checks_store.mark_merged(cursor, self.dialect, now)
            if fetched:  # each read's list replaces what the blog listed before
                node = nodes.nodes_of(cursor, self.dialect, [b.blog_id for b in fetched])
                reads = [
                    (node.get(b.blog_id, b.blog_id), min(b.fetched_at or now, now)) for b in fetched
                ]
                themedefaults.forget_unlisted(cursor, self.dialect, reads)
            # the friends a parking page or a takeover lists are not the blog's
            links = [link for link in links if link.source_blog_id not in held]
            if links:
                paths = nodes.under_paths(
                    cursor, self.dialect, [(ln.target_blog_id, ln.target_url) for ln in links]
                )
                if paths:  # a link to host/bob/ where bob's blog under the path is stored
                    links = [
                        replace(ln, target_blog_id=paths[ln.target_url])
                        if ln.target_url in paths
                        else ln
                        for ln in links
                        if paths.get(ln.target_url) != ln.source_blog_id  # bob's to his own
                    ]
                ends = {i for link in links for i in (link.source_blog_id, link.target_blog_id)}
                node = nodes.nodes_of(cursor, self.dialect, ends)
                # a link between two addresses of one blog is no friend link
                kept = [
                    link
                    for link in links
                    if link.source_blog_id == link.target_blog_id
                    or node.get(link.source_blog_id, link.source_blog_id)
                    != node.get(link.target_blog_id, link.target_blog_id)
                ]
                sql = self.dialect.upsert(
                    "friend_links",
                    _LINK_COLUMNS,
                    ("source_blog_id", "target_url_hash"),
                    _LINK_UPDATE,
                )
                rows = {(r[0], r[3]): r for r in (_link_row(ln, now, node) for ln in kept)}
                cursor.executemany(sql, list(rows.values()))
                moved = themedefaults.record(
                    cursor, self.dialect, kept, node, config=self.theme_defaults, now=now
                )
                stored = len(rows.keys() - moved)
                if moved:
                    dropped[themedefaults.REASON] = len(moved)
        return Written(len(latest), stored, dropped)

    @contextmanager
    def _nodes_lock(self) -> Iterator[None]:
        """On MySQL, ``GET_LOCK`` around a write: nodes are decided by one worker at a time,
        and each transaction starts after the last one committed (it sees its addresses)."""
        if self.dialect.name != "mysql":
            yield
            return
        self._reconnect_if_dead()
        with self.connection.raw.cursor() as cursor:
            cursor.execute("SELECT GET_LOCK(%s, %s)", (_NODES_LOCK, MYSQL_IO_TIMEOUT // 2))
            (got,) = cursor.fetchone()
        if got != 1:
            raise TimeoutError(f"no {_NODES_LOCK} lock within {MYSQL_IO_TIMEOUT // 2} s")
        try:
            yield
        finally:
            with suppress(Exception), self.connection.raw.cursor() as cursor:
                cursor.execute("SELECT RELEASE_LOCK(%s)", (_NODES_LOCK,))

    # --- readers -------------------------------------------------------------------------------

    def count(self, table: str) -> int:
        """Number of rows in ``table`` (one of :data:`~.schema.TABLES`, else ``ValueError``)."""
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}; expected one of {', '.join(TABLES)}")
        with self._transaction(write=False) as cursor:
            cursor.execute(f"SELECT COUNT(*) FROM {table}")
            return int(cursor.fetchone()[0])

    def _dicts(self, query: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._transaction(write=False) as cursor:
            if params:  # PyMySQL formats a query given arguments: a literal % would need %%
                cursor.execute(query, params)
            else:
                cursor.execute(query)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def blogs(self) -> list[dict[str, Any]]:
        """Every blog row as a dict (columns of ``blogs`` without ``id``), ordered by blog_id.

        Each dict also has ``feeds``: its feed rows best first, as dicts with ``url``, ``type``,
        ``title``, ``score``, ``reasons`` (list of str) and ``is_main`` (bool). A database older
        than schema version 4 read without migrating (``read_only``) has no platform columns:
        ``platform`` and ``platform_version`` are then those of the stored generator; older
        than version 5, ``truncated`` is ``""``; older than version 8, ``status_reason``. Each
        also has ``aliases`` (:meth:`blog_aliases`) and ``dropped_links``: the links its page
        lists that the crawl dropped (:meth:`dropped_links`, without ``source_blog_id``).
        """
        rows = self._dicts("SELECT * FROM blogs ORDER BY blog_id")
        for row in rows:
            del row["id"]
            if "platform" not in row:
                platform = platform_of(row["generator"])
                row["platform"], row["platform_version"] = platform.name, platform.version
            row.setdefault("truncated", "")
            for name in _NULLABLE_TEXTS:  # NULL, or a database older than version 6, 8, 9, 11
                row[name] = row.get(name) or ""
            for name in _CHECK_STATE:
                row.pop(name, None)
            row.setdefault("posts_per_month", None)
        avatars: dict[str, list[dict[str, str]]] = {}
        for link in self.friend_links():
            if link.get("avatar"):
                shown = {"url": link["avatar"], "source": link["source_blog_id"]}
                avatars.setdefault(link["target_blog_id"], []).append(shown)
        for row in rows:
            row["avatars"] = avatars.get(row["blog_id"], [])
        feeds: dict[str, list[dict[str, Any]]] = {}
        for feed in self._dicts(
            "SELECT blog_id, url, type, title, score, reasons, is_main FROM feeds "
            "ORDER BY blog_id, position"
        ):
            blog_id = feed.pop("blog_id")
            feed["reasons"] = json.loads(feed["reasons"])
            feed["is_main"] = bool(feed["is_main"])
            feeds.setdefault(blog_id, []).append(feed)
        for row in rows:
            row["feeds"] = feeds.get(row["blog_id"], [])
        aliases = self.blog_aliases()
        dropped: dict[str, list[dict[str, Any]]] = {}
        for link in self.dropped_links():
            dropped.setdefault(link.pop("source_blog_id"), []).append(link)
        for row in rows:
            row["aliases"] = aliases.get(row["blog_id"], [])
            row["dropped_links"] = dropped.get(row["blog_id"], [])
        return rows

    def blog_aliases(self) -> dict[str, list[dict[str, Any]]]:
        """The other addresses of each blog (:mod:`.nodes`), by its ``blog_id``: dicts of the
        alias's ``blog_id``, ``url``, ``evidence`` (evidence kinds of
        :mod:`blogfeeds.extract.aliases`), ``first_seen`` and ``last_seen``, oldest first
        (none in a database older than schema version 10)."""
        with self._transaction(write=False) as cursor:
            if not self._has_table(cursor, "blog_aliases"):
                return {}
        found: dict[str, list[dict[str, Any]]] = {}
        for row in self._dicts(
            "SELECT alias_id, alias_url, node_id, evidence, first_seen, last_seen "
            "FROM blog_aliases ORDER BY node_id, first_seen, alias_id"
        ):
            found.setdefault(row["node_id"], []).append(
                {
                    "blog_id": row["alias_id"],
                    "url": row["alias_url"],
                    "evidence": [k for k in row["evidence"].split(",") if k],
                    "first_seen": row["first_seen"],
                    "last_seen": row["last_seen"],
                }
            )
        return found

    def friend_links(
        self, *, removed: bool = False, source: str | None = None
    ) -> list[dict[str, Any]]:
        """The friend-link rows their source still lists, as dicts (without ``id`` and the
        hash; ``kind``: ``site`` in a database older than schema version 15), in a stable
        order: the map's edges. ``removed``: also the links the source's last read no longer
        listed (a re-check dropped them), each row then with ``removed``: its ``last_seen``
        when no longer listed, else ``""``. ``source``: only those of that blog (any address
        of it: :mod:`.nodes`)."""
        where = () if source is None else (self._node(source),)
        rows = self._dicts(
            "SELECT l.*, b.status AS source_status, b.fetched_at AS source_read "
            "FROM friend_links l LEFT JOIN blogs b ON b.blog_id = l.source_blog_id "
            + (f"WHERE l.source_blog_id = {self.dialect.param} " if where else "")
            + "ORDER BY l.source_blog_id, l.target_url",
            where,
        )
        kept = []
        for row in rows:
            gone = _no_longer_listed(row.pop("source_status"), row.pop("source_read"), row)
            if gone and not removed:
                continue
            del row["id"], row["target_url_hash"]
            row["avatar"] = row.get("avatar") or ""  # NULL, or older than version 5
            row["kind"] = row.get("kind") or "site"
            if removed:
                row["removed"] = gone
            kept.append(row)
        return kept

    def dropped_links(self, source: str | None = None) -> list[dict[str, Any]]:
        """The links the crawl dropped from the map, as dicts (without ``id`` and the hash),
        ordered by source and URL: each with its ``reason`` (``theme-default``: a theme's
        sample entry, :mod:`.themedefaults`) and ``detail`` (the theme, the place, how many
        blogs list it there); none in a database older than schema version 13. ``source``:
        only those of that blog (any address of it: :mod:`.nodes`)."""
        with self._transaction(write=False) as cursor:
            if not self._has_table(cursor, "dropped_links"):
                return []
        where = () if source is None else (self._node(source),)
        test = f" WHERE source_blog_id = {self.dialect.param}" if where else ""
        query = f"SELECT * FROM dropped_links{test} ORDER BY source_blog_id, target_url"
        rows = self._dicts(query, where)
        for row in rows:
            del row["id"], row["target_url_hash"]
            row["avatar"] = row.get("avatar") or ""
        return rows

    def _node(self, blog_id: str) -> str:
        """The node of ``blog_id`` (itself when it is no alias, or before schema version 10)."""
        with self._transaction(write=False) as cursor:
            if not self._has_table(cursor, "blog_aliases"):
                return blog_id
            return nodes.nodes_of(cursor, self.dialect, [blog_id]).get(blog_id, blog_id)


def _no_longer_listed(status: str | None, read: str | None, link: Mapping[str, Any]) -> str:
    """The link's ``last_seen`` when its source's last read no longer listed it, else "". A
    link is written (``last_seen``) at the read that found it (the source's ``fetched_at``), so
    one older than that read was not in it; only a read that fetched the page says so (a failed
    read keeps the friends it could not see)."""
    seen = link.get("last_seen") or ""
    if (status or "") not in FETCHED_STATUSES or not seen or not read:
        return ""
    return seen if seen < read else ""


def _blog_row(blog: Blog, now: str) -> tuple[Any, ...]:
    """The values of ``_BLOG_COLUMNS``, by name: each column is the Blog field of that name,
    except ``first_seen`` (kept on update: the first stored fetch)."""
    special = {"first_seen": blog.fetched_at or now, "last_post_at": blog.last_post_at or None}
    return tuple(special[c] if c in special else getattr(blog, c) for c in _BLOG_COLUMNS)


def _feed_rows(blog: Blog) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    seen: set[str] = set()
    for feed in blog.feeds:
        digest = url_hash(feed.url)
        if digest in seen:  # the first (best) of repeated candidates wins
            continue
        seen.add(digest)
        rows.append(
            (
                blog.blog_id,
                feed.url,
                digest,
                feed.type,
                feed.title,
                feed.score,
                json.dumps(feed.reasons, ensure_ascii=False),
                len(rows),
                int(feed.url == blog.feed_url),
            )
        )
    return rows


def _link_row(link: FriendLink, now: str, node: dict[str, str]) -> tuple[Any, ...]:
    """The row of ``link``, its ends on their nodes (``node``: alias id to node id)."""
    return (
        node.get(link.source_blog_id, link.source_blog_id),
        node.get(link.target_blog_id, link.target_blog_id),
        link.target_url,
        url_hash(link.target_url),
        link.name,
        link.container_score,
        link.source_url,
        link.avatar,
        link.kind or "site",
        now,
        now,
    )
