"""Start-up checks: a bad setting stops the crawl before it opens anything, with one clear line.

:class:`~blogfeeds.option.StartupError` names the setting and the problem. Components raise it
from their ``from_crawler`` (the spiders: :func:`check_settings` first, then
``BLOGFEEDS_RULES_FILE``; :class:`StartupCheck`: the others), so that nothing has been opened
yet; the project's ``crawl`` command (:mod:`blogfeeds.commands.crawl`) logs it as one ERROR line
without a traceback and exits 2. Any other runner (a script's ``CrawlerProcess``) sees the
exception itself.

:class:`StartupCheck` (an extension: built after the spider, before the engine) checks what
later components would only fail on once the crawl is open: the project's own settings
(:func:`check_settings`, over :mod:`blogfeeds.config`), the database URL (not whether a MySQL
server answers: that is the ``database_down`` finish reason), and with the Redis frontier on
the form of ``REDIS_URL`` and that Redis answers a ``PING`` (else :class:`ServiceDown`, reason
``redis_down``: exit status 1). What is checked: docs/security.md ("The start-up check").
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Any
from urllib.parse import urlsplit

from blogfeeds.config import SETTINGS_GROUPS, database_setting, unknown_settings
from blogfeeds.crawl.order import crawl_order
from blogfeeds.frontier.scheduler import redis_enabled
from blogfeeds.option import StartupError
from blogfeeds.storage.connection import connect
from blogfeeds.storage.db import Store
from blogfeeds.storage.schema import SCHEMA_VERSION
from blogfeeds.storage.url import database_file, redact

logger = logging.getLogger(__name__)


class ServiceDown(Exception):
    """A service the crawl needs does not answer at start-up (nothing else is wrong):
    ``reason`` is the finish reason it stands for (``"redis_down"``; the ``crawl`` command's
    ``EXIT_STATUS`` maps it to exit status 1); ``str()`` is the one line to log."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


# --- the project's own settings ------------------------------------------------------------------


def check_settings(settings: Any) -> None:
    """``StartupError`` naming the first setting in ``settings`` whose value cannot work: every
    config of the configuration table (:data:`blogfeeds.config.SETTINGS_GROUPS`) is read once, which
    checks each option's type, range and choices. Settings that are not set read as their
    defaults."""
    for config in SETTINGS_GROUPS:
        config.from_settings(settings)
    for name, low in _SCRAPY_NUMBERS.items():
        _check_scrapy_number(settings, name, low)


# Scrapy's own settings this project reads or relies on, with their lowest working value: a bad
# one is a traceback inside Scrapy, a negative DEPTH_LIMIT a misleading "no seed names a blog".
_SCRAPY_NUMBERS = {
    "DEPTH_LIMIT": 0,
    "CONCURRENT_REQUESTS": 1,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
    "RETRY_TIMES": 0,
    "DOWNLOAD_TIMEOUT": 0,
    "DOWNLOAD_MAXSIZE": 0,
    "MAX_IDLE_TIME_BEFORE_CLOSE": 0,
}
_SCRAPY_FLOATS = {"DOWNLOAD_TIMEOUT", "MAX_IDLE_TIME_BEFORE_CLOSE"}


def _check_scrapy_number(settings: Any, name: str, low: int) -> None:
    raw = settings.get(name)
    if raw is None or raw == "":
        return
    kind = "a number" if name in _SCRAPY_FLOATS else "a whole number"
    try:
        value = float(raw) if name in _SCRAPY_FLOATS else int(raw)
    except (TypeError, ValueError):
        raise StartupError(name, f"{raw!r} is not {kind}") from None
    if value < low:
        raise StartupError(name, f"{raw!r} is below {low}")


def warn_unknown_settings(settings: Any) -> None:
    """One WARNING per ``BLOGFEEDS_*`` setting that no option knows (a misspelt name would be
    ignored), naming the nearest known one."""
    for message in unknown_settings(settings):
        logger.warning(message)


def check_database_url(settings: Any) -> None:
    """``StartupError`` naming ``MYSQL_URL`` or ``BLOGFEEDS_DATABASE_URL`` (the one in use)
    when its form is wrong (:func:`blogfeeds.storage.url.database_file`) or, for a database
    file, when it cannot be opened as a database (:func:`check_sqlite`); empty means no
    storage."""
    name, url = database_setting(settings)
    if not url:
        return
    try:
        path = database_file(url)
    except ValueError as exc:
        raise StartupError(name, str(exc)) from None
    if path is not None:
        check_sqlite(name, url)


def check_sqlite(setting: str, url: str) -> None:
    """``StartupError`` naming ``setting`` when the SQLite database ``url`` cannot be opened
    and read (its directory does not exist, the path is not a file one can write, the file is
    not a SQLite database, its schema is newer than this code). Opens it as the storage will
    (creating the file when missing, never its directory) and closes it again;
    ``:memory:`` is not checked."""
    try:
        store = Store(connect(url))  # not migrated: only read
    except (OSError, sqlite3.Error) as exc:
        raise StartupError(setting, f"cannot open the SQLite database {url!r}: {exc}") from None
    try:
        version = store.schema_version()
    except sqlite3.Error as exc:
        raise StartupError(setting, f"cannot read the SQLite database {url!r}: {exc}") from None
    finally:
        store.close()
    if version > SCHEMA_VERSION:
        problem = (
            f"the database {url!r} has schema version {version}, newer than this code's "
            f"{SCHEMA_VERSION}: upgrade blogfeeds"
        )
        raise StartupError(setting, problem)


def redis_server(settings: Any) -> Any:
    """The Redis client of ``settings`` as scrapy-redis builds it (``REDIS_URL``,
    ``REDIS_PARAMS``; nothing is connected yet); ``StartupError`` on ``REDIS_URL`` when
    redis-py refuses its form (scheme, port)."""
    from scrapy_redis import connection  # noqa: PLC0415 - only with Redis

    url = str(settings.get("REDIS_URL") or "")
    parts = urlsplit(url)
    database = parts.path.strip("/")
    if parts.scheme in ("redis", "rediss") and database and not database.isdigit():
        # redis-py would quietly use database 0 (a unix:// URL's path is its socket)
        problem = f"malformed Redis URL {redact(url)!r}: the path must be a database number"
        raise StartupError("REDIS_URL", problem)
    try:
        return connection.get_redis_from_settings(settings)
    except ValueError as exc:
        raise StartupError("REDIS_URL", f"malformed Redis URL {redact(url)!r}: {exc}") from None


def redis_address(server: Any) -> str:
    """``host:port`` (or the socket path) a Redis client connects to, for messages."""
    kwargs = server.connection_pool.connection_kwargs
    if kwargs.get("path"):
        return str(kwargs["path"])
    return f"{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}"


def check_redis(server: Any) -> None:
    """``PING`` Redis once, then close the client: :class:`ServiceDown` (reason
    ``redis_down``, naming host:port) when Redis does not answer (refused, unknown host, a
    timeout after scrapy-redis's ``socket_connect_timeout``, 30 s, or any other Redis error);
    ``StartupError`` on ``REDIS_URL`` when it refuses the URL's user or password."""
    from redis.exceptions import RedisError  # noqa: PLC0415 - only with Redis

    try:
        server.ping()
    except RedisError as exc:
        raise redis_error(server, exc) from None
    finally:
        server.close()


def redis_error(server: Any, exc: Exception) -> StartupError | ServiceDown:
    """What a Redis error means to a command that cannot start without Redis: a
    ``StartupError`` on ``REDIS_URL`` when Redis refuses its user or password, else
    :class:`ServiceDown` (reason ``redis_down``) naming the host:port that does not answer."""
    from redis.exceptions import AuthenticationError  # noqa: PLC0415 - only with Redis

    where = redis_address(server)
    if isinstance(exc, AuthenticationError):
        return StartupError("REDIS_URL", f"Redis at {where} refused the credentials: {exc}")
    return ServiceDown("redis_down", f"Redis at {where} is unreachable: {exc}")


class StartupCheck:
    """Extension: runs the checks of the module docstring in ``from_crawler``, raising
    :class:`StartupError` (or :class:`ServiceDown` for Redis); does nothing afterwards."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> StartupCheck:
        settings = crawler.settings
        warn_unknown_settings(settings)
        check_settings(settings)
        server = redis_server(settings) if redis_enabled(settings) else None
        if getattr(crawler.spidercls, "uses_crawl_order", False):
            crawl_order(crawler)  # the crawl's one order, built here first
        # Last, what touches a file or a server: every plain setting is known good by now.
        check_database_url(settings)
        if server is not None:
            check_redis(server)
        return cls()
