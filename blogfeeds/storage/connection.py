"""Database connections for :class:`~blogfeeds.storage.db.Store`, named by one URL.

URLs (SQLAlchemy style, so one setting names any backend; :mod:`blogfeeds.storage.url`):
``sqlite:///relative/path.sqlite3``, ``sqlite:////absolute/path.sqlite3``,
``sqlite:///:memory:`` (the standard-library ``sqlite3``; WAL journal, so exports can read
during a crawl); ``mysql://user:password@host:port/database`` (also ``mysql+pymysql://``):
MySQL 8 or MariaDB ≥ 10.5 through PyMySQL with ``charset=utf8mb4`` (the connection charset must
be utf8mb4 as well as the tables, or emoji fail with error 1366). The database must exist.

``read_only=True`` (:meth:`~blogfeeds.storage.db.Store.open`, :func:`connect`; what ``scrapy
export`` and ``scrapy stats`` use) creates and migrates nothing: SQLite opens the file with
``mode=ro`` (no file or directory is created, no journal mode set), MySQL sets its session
``READ ONLY``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import unquote

from blogfeeds.storage.schema import Dialect
from blogfeeds.storage.url import dialect_of, mysql_parts, sqlite_path

MYSQL_IO_TIMEOUT = 120
"""Seconds a MySQL read or write may wait (a lock is waited for half of it)."""


class Connection(NamedTuple):
    """An open DB-API 2 connection, the dialect its statements must use, and its URL."""

    raw: Any
    dialect: Dialect
    url: str
    read_only: bool = False


def connect(url: str, *, read_only: bool = False) -> Connection:
    """Open the database named by ``url`` (see the module docstring for the forms);
    ``read_only``: without creating or changing anything, every write refused by the database.

    Raises ``ValueError`` on an unknown scheme or a malformed URL
    (:func:`~blogfeeds.storage.url.dialect_of`); driver errors (``sqlite3.Error``,
    ``pymysql.Error``) when the database cannot be opened (with ``read_only``, an SQLite file
    that does not exist is ``sqlite3.OperationalError``).
    """
    dialect = dialect_of(url)
    if dialect.name == "sqlite":
        return Connection(_connect_sqlite(url, read_only), dialect, url, read_only)
    return Connection(_connect_mysql(url, read_only), dialect, url, read_only)


def _connect_sqlite(url: str, read_only: bool = False) -> sqlite3.Connection:
    path = sqlite_path(url)
    if read_only and path != ":memory:":
        # mode=ro: a missing file is an error (not created), writes fail with SQLITE_READONLY.
        uri = f"{Path(path).resolve().as_uri()}?mode=ro"
        return sqlite3.connect(uri, uri=True, timeout=30.0, isolation_level=None)
    if path != ":memory:":
        _check_directory(path)
    # isolation_level=None: no implicit transactions; Store issues BEGIN/COMMIT itself.
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    if path != ":memory:":
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def _check_directory(path: str) -> None:
    """``FileNotFoundError`` saying what to do when the directory of the database file
    ``path`` does not exist. It is not made: ``sqlite:///`` with three slashes is a path
    relative to the working directory, so a URL meant as absolute (four slashes) would quietly
    grow directories inside the checkout; sqlite3 and SQLAlchemy refuse a missing directory
    too."""
    parent = Path(path).parent
    if parent.is_dir():
        return
    if parent.exists():
        raise NotADirectoryError(f"{str(parent)!r} is not a directory")
    where = "" if parent.is_absolute() else f" (relative to {Path.cwd()})"
    hint = "" if parent.is_absolute() else f", or give an absolute path: sqlite:////{path}"
    raise FileNotFoundError(
        f"the directory {str(parent)!r}{where} does not exist: create it first{hint}"
    )


def _connect_mysql(url: str, read_only: bool = False) -> Any:
    import pymysql  # noqa: PLC0415 - optional driver, only for MySQL URLs

    parts, database = mysql_parts(url)
    conn = pymysql.connect(
        host=parts.hostname,
        port=parts.port or 3306,
        user=unquote(parts.username) if parts.username else "root",
        password=unquote(parts.password) if parts.password else "",
        database=database,
        charset="utf8mb4",
        autocommit=False,
        # A server that stops answering (network partition, frozen host) becomes error 2013
        # instead of a read that blocks forever; above the 60 s GET_LOCK of ensure_schema().
        connect_timeout=10,
        read_timeout=MYSQL_IO_TIMEOUT,
        write_timeout=MYSQL_IO_TIMEOUT,
    )
    if read_only:
        with conn.cursor() as cursor:
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
    return conn
