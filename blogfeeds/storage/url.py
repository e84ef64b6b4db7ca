"""Database URLs: the forms a URL may take, and what its users need to know of the backend behind
it (nothing outside :mod:`blogfeeds.storage` asks which database it is).

Forms (SQLAlchemy style, so one setting names any backend):

* ``sqlite:///relative/path.sqlite3``, ``sqlite:////absolute/path.sqlite3``, ``sqlite:///:memory:``
  (the standard-library ``sqlite3``, embedded);
* ``mysql://user:password@host:port/database`` (also ``mysql+pymysql://``): MySQL 8 or
  MariaDB ≥ 10.5 through PyMySQL (see :mod:`blogfeeds.storage.db`).

Every function here reads the URL only: nothing is opened.
"""

from __future__ import annotations

from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from blogfeeds.storage.schema import DIALECTS, Dialect


def redact(url: str) -> str:
    """``url`` with its password replaced by ``***``, for logs and error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def dialect_of(url: str) -> Dialect:
    """The SQL dialect of a well-formed database ``url``. Raises ``ValueError`` (naming the
    forms, password redacted) on an unknown scheme or a malformed URL: what
    :func:`blogfeeds.storage.connection.connect` refuses before it touches a driver."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "sqlite":
        sqlite_path(url)
        return DIALECTS["sqlite"]
    if scheme in {"mysql", "mysql+pymysql"}:
        mysql_parts(url)
        return DIALECTS["mysql"]
    raise ValueError(
        f"unsupported database URL {redact(url)!r}: use sqlite:///path.sqlite3, "
        "sqlite:////absolute/path.sqlite3, sqlite:///:memory: or mysql://user:pass@host:port/db"
    )


def blocking_io(url: str) -> bool:
    """Whether the calls of the database at ``url`` block on the network (a database server):
    run them in a worker thread, off the reactor. False for an embedded database, whose calls
    take milliseconds on the calling thread. ``ValueError`` as :func:`dialect_of`."""
    return dialect_of(url).name == "mysql"


def database_file(url: str) -> str | None:
    """The file (a relative or absolute path) that holds the embedded database at ``url``;
    None for a database server or one in memory. ``ValueError`` as :func:`dialect_of`."""
    if dialect_of(url).name != "sqlite":
        return None
    path = sqlite_path(url)
    return None if path == ":memory:" else path


def sqlite_path(url: str) -> str:
    """The path of an ``sqlite:///`` URL (``:memory:`` included); ``ValueError`` when empty."""
    prefix = "sqlite:///"
    path = url[len(prefix) :] if url.lower().startswith(prefix) else ""
    if not path:
        raise ValueError(
            f"malformed SQLite URL {url!r}: expected sqlite:///relative/path, "
            "sqlite:////absolute/path or sqlite:///:memory:"
        )
    return path


def mysql_parts(url: str) -> tuple[SplitResult, str]:
    """The parts and the database name of a ``mysql://`` URL; ``ValueError`` when malformed."""
    parts = urlsplit(url)
    database = unquote(parts.path.lstrip("/"))
    try:
        _ = parts.port  # ValueError for a port that is not a number or out of range
    except ValueError as exc:
        raise ValueError(f"malformed MySQL URL {redact(url)!r}: {exc}") from None
    if not parts.hostname or not database or "/" in database:
        raise ValueError(
            f"malformed MySQL URL {redact(url)!r}: expected mysql://user:pass@host:port/database"
        )
    return parts, database
