"""The one relational schema of blogfeeds, for SQLite (embedded) and MySQL 8 / MariaDB 10.11.

Every statement is written once, as a template; the few places where the two SQL dialects differ
(column types, auto-increment, table options, placeholders, upsert syntax) are the fields of
:class:`Dialect`. The tables and their columns: docs/storage.md.

URLs are unbounded in length, so the unique keys on URLs use ``*_hash`` columns: the SHA-1 hex
digest of the UTF-8 URL (:func:`url_hash`), 40 ASCII characters. This keeps every MySQL key under
the InnoDB limit of 3072 bytes (utf8mb4 counts 4 bytes per character: ``VARCHAR(255)`` = 1020
bytes, which needs ``ROW_FORMAT=DYNAMIC``, the InnoDB default since MySQL 5.7 / MariaDB 10.2).

Forward migrations: :data:`MIGRATIONS` is a list of ``(version, [steps])`` applied in order when
the stored version is lower; version 1 is the initial schema. A step is a statement template or
a function of ``(cursor, dialect)`` that rewrites rows (data computed in Python). To change the
schema, append the next version and bump nothing else (:data:`SCHEMA_VERSION` follows the list).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from blogfeeds.extract.aliases import Observation, index_keys, observation_from
from blogfeeds.extract.platform import platform_of
from blogfeeds.storage.profilestore import refresh_all


@dataclass(frozen=True)
class Dialect:
    """What differs between the SQL dialects; every template field below is substituted as-is."""

    name: str
    """``sqlite`` or ``mysql``."""
    key: str
    """Type of a short, indexed text column (``blog_id``): ≤ 255 characters, exact match."""
    short: str
    """Type of a short unindexed text column (status, language, MIME type, timestamps)."""
    text: str
    """Type of an unbounded text column (URLs, titles, abstracts, JSON)."""
    hash: str
    """Type of a 40-character ASCII hex digest column used in unique keys."""
    real: str
    """Type of a double-precision float column."""
    blob: str
    """Type of a bytes column of up to a few megabytes (a robots.txt body)."""
    pk: str
    """Column definition of an auto-increment integer primary key."""
    table_options: str
    """Appended after the closing parenthesis of ``CREATE TABLE``."""
    create_index: str
    """Prefix of an index statement; MySQL 8 has no ``IF NOT EXISTS`` here (see :mod:`.db`)."""
    param: str
    """DB-API placeholder: ``?`` (sqlite3 ``qmark``) or ``%s`` (PyMySQL ``format``)."""
    table_exists: str
    """Query returning a row when the table named by its one parameter exists."""

    def template_fields(self) -> dict[str, str]:
        """The ``{name}`` fields of the statement templates."""
        return {
            "key": self.key,
            "short": self.short,
            "text": self.text,
            "hash": self.hash,
            "real": self.real,
            "blob": self.blob,
            "pk": self.pk,
            "table_options": self.table_options,
            "create_index": self.create_index,
        }

    def render(self, template: str) -> str:
        """One statement template with this dialect's types filled in."""
        return template.format(**self.template_fields())

    def upsert(
        self, table: str, columns: Sequence[str], key: Sequence[str], update: Sequence[str]
    ) -> str:
        """``INSERT`` of one row of ``columns`` that updates ``update`` when ``key`` exists.

        SQLite (≥ 3.24): ``ON CONFLICT(key) DO UPDATE SET c=excluded.c``; MySQL / MariaDB:
        ``ON DUPLICATE KEY UPDATE c=VALUES(c)`` (deprecated but working on MySQL ≥ 8.0.20; the
        row-alias form is not supported by MariaDB). With ``update`` empty the row is ignored.
        """
        insert = (
            f"INSERT INTO {table} ({', '.join(columns)}) "
            f"VALUES ({', '.join([self.param] * len(columns))})"
        )
        if self.name == "sqlite":
            if not update:
                return f"{insert} ON CONFLICT({', '.join(key)}) DO NOTHING"
            sets = ", ".join(f"{c}=excluded.{c}" for c in update)
            return f"{insert} ON CONFLICT({', '.join(key)}) DO UPDATE SET {sets}"
        sets = ", ".join(f"{c}=VALUES({c})" for c in (update or key[:1]))
        return f"{insert} ON DUPLICATE KEY UPDATE {sets}"


SQLITE = Dialect(
    name="sqlite",
    key="TEXT",
    short="TEXT",
    text="TEXT",
    hash="TEXT",
    real="REAL",
    blob="BLOB",
    pk="INTEGER PRIMARY KEY AUTOINCREMENT",
    table_options="",
    create_index="CREATE INDEX IF NOT EXISTS",
    param="?",
    table_exists="SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
)

MYSQL = Dialect(
    name="mysql",
    key="VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
    short="VARCHAR(64)",
    text="TEXT",
    hash="CHAR(40) CHARACTER SET ascii COLLATE ascii_bin",
    real="DOUBLE",
    blob="MEDIUMBLOB",
    pk="BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY",
    table_options=(
        " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci ROW_FORMAT=DYNAMIC"
    ),
    create_index="CREATE INDEX",
    param="%s",
    table_exists=(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() "
        "AND table_name = %s"
    ),
)

DIALECTS = {"sqlite": SQLITE, "mysql": MYSQL}

# MySQL keys use a binary collation: utf8mb4_unicode_ci would make blog ids that differ only in
# case, accents or trailing spaces collide; identities compare exactly, as in SQLite.

Step = str | Callable[[Any, Dialect], None]
"""A migration step: a statement template, or a function of ``(cursor, dialect)``."""

_V1: list[Step] = [
    """CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL PRIMARY KEY,
    applied_at {short} NOT NULL
){table_options}""",
    """CREATE TABLE IF NOT EXISTS blogs (
    id {pk},
    blog_id {key} NOT NULL,
    url {text} NOT NULL,
    title {text} NOT NULL,
    abstract {text} NOT NULL,
    language {short} NOT NULL,
    generator {text} NOT NULL,
    feed_url {text},
    friend_count INTEGER NOT NULL,
    status {short} NOT NULL,
    depth INTEGER NOT NULL,
    first_seen {short} NOT NULL,
    fetched_at {short} NOT NULL,
    UNIQUE (blog_id)
){table_options}""",
    "{create_index} blogs_status ON blogs (status)",
    """CREATE TABLE IF NOT EXISTS feeds (
    id {pk},
    blog_id {key} NOT NULL,
    url {text} NOT NULL,
    url_hash {hash} NOT NULL,
    type {short} NOT NULL,
    title {text} NOT NULL,
    score {real} NOT NULL,
    reasons {text} NOT NULL,
    position INTEGER NOT NULL,
    is_main INTEGER NOT NULL,
    UNIQUE (blog_id, url_hash)
){table_options}""",
    "{create_index} feeds_url_hash ON feeds (url_hash)",
    """CREATE TABLE IF NOT EXISTS friend_links (
    id {pk},
    source_blog_id {key} NOT NULL,
    target_blog_id {key} NOT NULL,
    target_url {text} NOT NULL,
    target_url_hash {hash} NOT NULL,
    name {text} NOT NULL,
    container_score {real} NOT NULL,
    source_url {text} NOT NULL,
    first_seen {short} NOT NULL,
    last_seen {short} NOT NULL,
    UNIQUE (source_blog_id, target_url_hash)
){table_options}""",
    "{create_index} friend_links_target ON friend_links (target_blog_id)",
]

# Version 2: the tables of the feed-revisit side (``scrapy crawl feeds``): the generic columns
# that spider needs; it owns the rows. ``rank_score`` is not called ``rank`` because RANK is a
# reserved word in MySQL ≥ 8.0.2 (a window function).
_V2: list[Step] = [
    """CREATE TABLE IF NOT EXISTS feed_aliases (
    id {pk},
    alias_url {text} NOT NULL,
    alias_url_hash {hash} NOT NULL,
    feed_url {text} NOT NULL,
    feed_url_hash {hash} NOT NULL,
    blog_id {key},
    reason {short} NOT NULL,
    first_seen {short} NOT NULL,
    last_seen {short} NOT NULL,
    UNIQUE (alias_url_hash)
){table_options}""",
    "{create_index} feed_aliases_feed ON feed_aliases (feed_url_hash)",
    """CREATE TABLE IF NOT EXISTS entries (
    id {pk},
    feed_url_hash {hash} NOT NULL,
    guid_hash {hash} NOT NULL,
    guid {text} NOT NULL,
    link {text},
    title {text},
    author {text},
    published {short},
    updated {short},
    summary {text},
    first_seen {short} NOT NULL,
    UNIQUE (feed_url_hash, guid_hash)
){table_options}""",
    "{create_index} entries_first_seen ON entries (first_seen)",
    """CREATE TABLE IF NOT EXISTS schedule (
    id {pk},
    feed_url_hash {hash} NOT NULL,
    feed_url {text} NOT NULL,
    blog_id {key},
    interval_minutes {real} NOT NULL,
    rank_score {real} NOT NULL DEFAULT 0,
    level INTEGER NOT NULL DEFAULT 0,
    next_due {short} NOT NULL,
    etag {text},
    last_modified {short},
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    status {short} NOT NULL,
    last_fetch {short},
    last_change {short},
    lease_owner {key},
    lease_until {short},
    UNIQUE (feed_url_hash)
){table_options}""",
    "{create_index} schedule_next_due ON schedule (next_due)",
]


def _fill_platforms(cursor: Any, dialect: Dialect) -> None:
    """Version 4: the platform of every stored generator (the first of its page: a page that
    named WordPress only after a plugin has the platform without its version until re-crawled).
    """
    cursor.execute("SELECT blog_id, generator FROM blogs WHERE generator <> ''")
    rows = []
    for blog_id, generator in cursor.fetchall():
        platform = platform_of(generator)
        if platform.name:
            rows.append((platform.name, platform.version, blog_id))
    if rows:
        mark = dialect.param
        cursor.executemany(
            f"UPDATE blogs SET platform = {mark}, platform_version = {mark} WHERE blog_id = {mark}",
            rows,
        )


def _duplicate_column(exc: Exception) -> bool:
    """MySQL error 1060 or SQLite's "duplicate column name": the column is there already."""
    return (exc.args[:1] == (1060,)) or "duplicate column name" in str(exc)


def _add_columns(table: str, columns: list[str]) -> Callable[[Any, Dialect], None]:
    """A step adding ``columns`` (templates) to ``table``: on MySQL in ONE ``ALTER TABLE``
    (atomic, one table change: a migration of many short statements can take longer than a
    flaky connection lives), on SQLite one ``ADD COLUMN`` each (it takes one at a time). A
    column already there (a re-run after a lost version row) is skipped."""

    def step(cursor: Any, dialect: Dialect) -> None:
        defs = [dialect.render(c) for c in columns]
        if dialect.name == "mysql":
            statements = [f"ALTER TABLE {table} " + ", ".join(f"ADD COLUMN {d}" for d in defs)]
        else:
            statements = [f"ALTER TABLE {table} ADD COLUMN {d}" for d in defs]
        for statement in statements:
            try:
                cursor.execute(statement)
            except Exception as exc:
                if not _duplicate_column(exc):
                    raise

    return step


def _fill_last_posts(cursor: Any, dialect: Dialect) -> None:
    """Version 5: last post, posting rate and activity of every blog whose scheduled feeds have
    stored entries (as ``scrapy crawl feeds`` keeps them current from now on)."""
    refresh_all(cursor, dialect)


def insert_alias_keys(
    cursor: Any, dialect: Dialect, seen: Iterable[tuple[str, Observation]]
) -> None:
    """The ``alias_keys`` rows of ``(blog id, observation)`` pairs
    (:func:`~blogfeeds.extract.aliases.index_keys`)."""
    p = dialect.param
    cursor.executemany(
        f"INSERT INTO alias_keys (key_hash, blog_id) VALUES ({p}, {p})",
        [(url_hash(key), bid) for bid, obs in seen for key in sorted(index_keys(obs))],
    )


def _reindex_aliases(cursor: Any, dialect: Dialect) -> None:
    """Version 14: every stored observation's keys anew (a key of an older form finds
    nothing), read a thousand at a time."""
    cursor.execute("DELETE FROM alias_keys")
    last = ""
    while True:
        cursor.execute(
            "SELECT blog_id, observation FROM blog_observations "
            f"WHERE blog_id > {dialect.param} ORDER BY blog_id LIMIT 1000",
            (last,),
        )
        rows = cursor.fetchall()
        if not rows:
            return
        seen = []
        for bid, text in rows:
            try:
                seen.append((str(bid), observation_from(text)))
            except ValueError:  # nodes.record warned when it stored it; a re-crawl reads it again
                continue
        insert_alias_keys(cursor, dialect, seen)
        last = str(rows[-1][0])


MIGRATIONS: list[tuple[int, list[Step]]] = [
    (1, _V1),
    (2, _V2),
    # Version 3: the full revisit state of each feed (JSON of blogfeeds.revisit.FeedState), so
    # that ``scrapy crawl feeds`` resumes every policy exactly (blogfeeds.storage.feedstore).
    (
        3,
        [
            """CREATE TABLE IF NOT EXISTS feed_state (
    feed_url_hash {hash} NOT NULL,
    state {text} NOT NULL,
    UNIQUE (feed_url_hash)
){table_options}"""
        ],
    ),
    # Version 4: the platform a blog's generator names (blogfeeds.extract.platform). ADD COLUMN
    # run again is a "duplicate column" error, which :mod:`.db` tolerates on both databases.
    # {short}: MySQL gives a TEXT column no literal default.
    (
        4,
        [
            "ALTER TABLE blogs ADD COLUMN platform {short} NOT NULL DEFAULT ''",
            "ALTER TABLE blogs ADD COLUMN platform_version {short} NOT NULL DEFAULT ''",
            _fill_platforms,
        ],
    ),
    # Version 5: the page-size bounds a blog's home page reached (blogfeeds.items.Blog).
    (5, ["ALTER TABLE blogs ADD COLUMN truncated {short} NOT NULL DEFAULT ''"]),
    # Version 6: the blog profile (blogfeeds.extract.profile) and the avatar a friend card
    # shows. Texts of any length are nullable {text} (MySQL gives TEXT no literal default);
    # readers take NULL as "". A re-crawl fills the rows; entries already stored give the
    # last post of blogs with a scheduled feed (_fill_last_posts).
    (
        6,
        [
            _add_columns(
                "blogs",
                [
                    "language_declared {short} NOT NULL DEFAULT ''",
                    "description {text}",
                    "description_source {short} NOT NULL DEFAULT ''",
                    "author {text}",
                    "icon_url {text}",
                    "last_post_at {short}",
                    "posts_per_month {real}",
                    "activity {short} NOT NULL DEFAULT ''",
                ],
            ),
            _add_columns("friend_links", ["avatar {text}"]),
            "{create_index} blogs_activity ON blogs (activity)",
            _fill_last_posts,
        ],
    ),
    # Version 7: WebSub subscriptions, one per feed (blogfeeds.storage.websub). ``callback`` is
    # the random path token of the subscription's callback URL, ``secret`` its HMAC key.
    (
        7,
        [
            """CREATE TABLE IF NOT EXISTS websub (
    id {pk},
    feed_url_hash {hash} NOT NULL,
    feed_url {text} NOT NULL,
    topic {text} NOT NULL,
    hub {text} NOT NULL,
    hubs {text} NOT NULL,
    callback {key} NOT NULL,
    secret {short} NOT NULL,
    state {short} NOT NULL,
    pending {short} NOT NULL,
    pending_until {short},
    lease_seconds INTEGER NOT NULL DEFAULT 0,
    lease_until {short},
    next_action {short} NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0,
    last_push {short},
    pushes INTEGER NOT NULL DEFAULT 0,
    bad_pushes INTEGER NOT NULL DEFAULT 0,
    last_error {text},
    lease_owner {key},
    lease_owner_until {short},
    updated {short} NOT NULL,
    UNIQUE (feed_url_hash),
    UNIQUE (callback)
){table_options}""",
            "{create_index} websub_next_action ON websub (next_action)",
        ],
    ),
    # Version 8: why a blog's status is what it is and why a feed's last fetch failed, in the
    # words of the crawl log (``failed: blocked (SSRF guard: ...)``); one row per closed run of
    # ``scrapy crawl blogs`` / ``feeds`` (blogfeeds.storage.runs). Nullable {text}: MySQL gives
    # TEXT no literal default; readers take NULL as "".
    (
        8,
        [
            _add_columns("blogs", ["status_reason {text}"]),
            _add_columns("schedule", ["last_error {text}"]),
            """CREATE TABLE IF NOT EXISTS runs (
    id {pk},
    spider {short} NOT NULL,
    worker {key} NOT NULL,
    started {short} NOT NULL,
    finished {short} NOT NULL,
    reason {short} NOT NULL,
    blogs INTEGER NOT NULL DEFAULT 0,
    friend_links INTEGER NOT NULL DEFAULT 0,
    feeds_fetched INTEGER NOT NULL DEFAULT 0,
    not_modified INTEGER NOT NULL DEFAULT 0,
    new_entries INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    failures_by_kind {text} NOT NULL
){table_options}""",
            "{create_index} runs_finished ON runs (spider, finished)",
        ],
    ),
    # Version 9: where a blog's abstract comes from (``feed``: the main feed's newest entry,
    # ``page``: the home page; blogfeeds.extract.abstract). Rows stored before keep their
    # abstract with no source until a re-crawl refreshes both.
    (9, [_add_columns("blogs", ["abstract_source {short} NOT NULL DEFAULT ''"])]),
    # Version 10: one blog, one node (blogfeeds.storage.nodes). What the crawl saw of each address
    # (an aliases.Observation as JSON), the index that finds an address's candidates by digest
    # of aliases.index_keys, and each alias's node with its evidence.
    (
        10,
        [
            """CREATE TABLE IF NOT EXISTS blog_observations (
    id {pk},
    blog_id {key} NOT NULL,
    url {text} NOT NULL,
    observation {text} NOT NULL,
    seen {short} NOT NULL,
    UNIQUE (blog_id)
){table_options}""",
            """CREATE TABLE IF NOT EXISTS alias_keys (
    id {pk},
    key_hash {hash} NOT NULL,
    blog_id {key} NOT NULL,
    UNIQUE (key_hash, blog_id)
){table_options}""",
            "{create_index} alias_keys_blog ON alias_keys (blog_id)",
            """CREATE TABLE IF NOT EXISTS blog_aliases (
    id {pk},
    alias_id {key} NOT NULL,
    alias_url {text} NOT NULL,
    node_id {key} NOT NULL,
    evidence {text} NOT NULL,
    first_seen {short} NOT NULL,
    last_seen {short} NOT NULL,
    UNIQUE (alias_id)
){table_options}""",
            "{create_index} blog_aliases_node ON blog_aliases (node_id)",
        ],
    ),
    # Version 11: a living map (blogfeeds.storage.checks). Each blog's health and its evidence,
    # the blog it moved to, its failed reads in a row, its adaptive re-check interval and the
    # validators of its home page (conditional GET); one row per home-page read in
    # blog_checks, kept BLOGFEEDS_HEALTH_KEEP_DAYS.
    (
        11,
        [
            _add_columns(
                "blogs",
                [
                    "health {short} NOT NULL DEFAULT ''",
                    "health_reason {text}",
                    "moved_to {text}",
                    "health_failures INTEGER NOT NULL DEFAULT 0",
                    "checked_at {short}",
                    "next_check {short}",
                    "check_hours {real}",
                    "check_digest {short}",
                    "page_digest {short}",
                    "etag {text}",
                    "last_modified {short}",
                ],
            ),
            "{create_index} blogs_next_check ON blogs (next_check)",
            """CREATE TABLE IF NOT EXISTS blog_checks (
    id {pk},
    blog_id {key} NOT NULL,
    checked_at {short} NOT NULL,
    kind {short} NOT NULL,
    http_status INTEGER,
    final_url {text},
    response_ms INTEGER,
    reason {text}
){table_options}""",
            "{create_index} blog_checks_blog ON blog_checks (blog_id, checked_at)",
            "{create_index} blog_checks_time ON blog_checks (checked_at)",
        ],
    ),
    # Version 12: the robots.txt of each host, shared by both spiders and every worker
    # (blogfeeds.storage.robots): its body, status and validators, and when it was last
    # confirmed (a 200, a 4xx or a 304). One row per host.
    (
        12,
        [
            """CREATE TABLE IF NOT EXISTS robots_txt (
    id {pk},
    host {key} NOT NULL,
    status INTEGER NOT NULL,
    body {blob} NOT NULL,
    etag {text},
    last_modified {short},
    fetched_at {short} NOT NULL,
    UNIQUE (host)
){table_options}""",
        ],
    ),
    # Version 13: the crawl-wide rule for theme defaults (blogfeeds.storage.themedefaults): the
    # credited entries at the head of each blog's friend list, by theme and place, and the
    # links dropped with their reason (a theme's sample entry is no friend link).
    (
        13,
        [
            """CREATE TABLE IF NOT EXISTS theme_entries (
    id {pk},
    theme {key} NOT NULL,
    position INTEGER NOT NULL,
    entry_hash {hash} NOT NULL,
    entry {text} NOT NULL,
    source_blog_id {key} NOT NULL,
    target_url_hash {hash} NOT NULL,
    first_seen {short} NOT NULL,
    last_seen {short} NOT NULL,
    UNIQUE (entry_hash, theme, position, source_blog_id)
){table_options}""",
            """CREATE TABLE IF NOT EXISTS dropped_links (
    id {pk},
    source_blog_id {key} NOT NULL,
    target_blog_id {key} NOT NULL,
    target_url {text} NOT NULL,
    target_url_hash {hash} NOT NULL,
    name {text} NOT NULL,
    source_url {text} NOT NULL,
    avatar {text},
    reason {short} NOT NULL,
    detail {text} NOT NULL,
    first_seen {short} NOT NULL,
    last_seen {short} NOT NULL,
    UNIQUE (source_blog_id, target_url_hash)
){table_options}""",
        ],
    ),
    # Version 14: alias_keys computed anew from blog_observations (aliases.index_keys: the page
    # key holds the feed's entries, so one feedless template on many hosts is no candidate).
    (14, [_reindex_aliases]),
    # Version 15: what each kept friend link is (blogfeeds.extract.friends.model.Friend.kind:
    # ``site``, ``feed``, ``gemini``, ``gopher``); rows stored before were read as sites, the
    # only kind stored then. The theme entries of one blog are found by their source (a blog
    # read again, a blog opted out).
    (
        15,
        [
            _add_columns("friend_links", ["kind {short} NOT NULL DEFAULT 'site'"]),
            "{create_index} theme_entries_source ON theme_entries (source_blog_id)",
        ],
    ),
]
"""Forward migrations ``(version, [steps])``, ascending; 1 = the initial schema.

Each step must be safe to re-run after a partial failure (MySQL commits DDL implicitly):
``CREATE TABLE IF NOT EXISTS``, ``{create_index}``, ``ADD COLUMN`` (:mod:`.db` tolerates
"already exists" errors), updates that compute the same rows again.
"""

SCHEMA_VERSION = MIGRATIONS[-1][0]
"""The version this code writes and reads."""

TABLES = (
    "blogs",
    "feeds",
    "friend_links",
    "feed_aliases",
    "entries",
    "schedule",
    "feed_state",
    "websub",
    "runs",
    "blog_observations",
    "alias_keys",
    "blog_aliases",
    "blog_checks",
    "robots_txt",
    "theme_entries",
    "dropped_links",
    "schema_version",
)


def url_hash(url: str) -> str:
    """SHA-1 hex digest (40 ASCII characters) of ``url`` encoded as UTF-8: the URL key column."""
    return hashlib.sha1(url.encode("utf-8"), usedforsecurity=False).hexdigest()


def pending_migrations(stored: int, dialect: Dialect) -> list[tuple[int, list[Step]]]:
    """Migrations newer than ``stored`` (0 = empty database), templates rendered for
    ``dialect`` (functions as they are).

    Raises ``ValueError`` when the database is newer than this code (downgrades are unsupported).
    """
    if stored > SCHEMA_VERSION:
        raise ValueError(
            f"database schema version {stored} is newer than this code's {SCHEMA_VERSION}; "
            "upgrade blogfeeds"
        )
    return [
        (version, [dialect.render(s) if isinstance(s, str) else s for s in steps])
        for version, steps in MIGRATIONS
        if version > stored
    ]
