"""Start-up checks: a bad setting stops the crawl before it opens anything, with one clear line.

:class:`StartupError` names the setting and the problem. Components raise it from their
``from_crawler`` (the spiders: :func:`check_settings` first, then ``BLOGFEEDS_RULES_FILE``, and
the feeds spider ``BLOGFEEDS_REVISIT_POLICY``/``_RANK``/``BLOGFEEDS_NOW``; :class:`StartupCheck`:
the others), so that nothing has been opened yet; the project's ``crawl`` command
(:mod:`blogfeeds.commands.crawl`) logs it as one ERROR line without a traceback and exits 2.
Any other runner (a script's ``CrawlerProcess``) sees the exception itself.

:class:`StartupCheck` (an extension, ``EXTENSIONS`` in the settings; extensions are built after
the spider, before the engine) checks what later components would only fail on once the crawl
is open: the project's own settings (:func:`check_settings`: types, ranges, rule sets), the
database URL (``MYSQL_URL``, else ``BLOGFEEDS_DATABASE_URL``: its form, and for SQLite that the
file can be opened as a database; not whether a MySQL server answers: that is the
``database_down`` finish reason), for a spider that walks the strategy frontier
(``strategy_frontier = True``) ``BLOGFEEDS_STRATEGY``, and with the Redis frontier on
(:func:`blogfeeds.redis_compat.redis_enabled`) the form of ``REDIS_URL`` (a
:class:`StartupError`) and that Redis answers a ``PING`` (else :class:`ServiceDown`, reason
``redis_down``: exit status 1).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from blogfeeds import settings as project_settings
from blogfeeds.extract.discovery import RULESETS as FEED_RULESETS
from blogfeeds.extract.friends import RULESETS as FRIEND_RULESETS
from blogfeeds.redis_compat import redis_enabled
from blogfeeds.revisit.levels import T_MAX, T_MIN
from blogfeeds.storage.db import Store, check_url, connect, redact
from blogfeeds.storage.schema import SCHEMA_VERSION
from blogfeeds.strategies import frontier_for


class StartupError(Exception):
    """A setting that stops the crawl at start-up: ``setting`` (its name) and ``problem``
    (what is wrong with it); ``str()`` is ``"SETTING: problem"``."""

    def __init__(self, setting: str, problem: str) -> None:
        super().__init__(f"{setting}: {problem}")
        self.setting = setting
        self.problem = problem


class ServiceDown(Exception):
    """A service the crawl needs does not answer at start-up (nothing else is wrong):
    ``reason`` is the finish reason it stands for (``"redis_down"``; the ``crawl`` command's
    ``EXIT_STATUS`` maps it to exit status 1); ``str()`` is the one line to log."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


# --- the project's own settings ------------------------------------------------------------------

Check = tuple[Callable[[float], bool], str]
_AT_LEAST_0: Check = (lambda v: v >= 0, "must be ≥ 0")
_AT_LEAST_1: Check = (lambda v: v >= 1, "must be ≥ 1")
_ABOVE_0: Check = (lambda v: v > 0, "must be > 0")

READ_AS: dict[str, type | None] = {
    "BLOGFEEDS_REVISIT_INITIAL_T": float,  # default 1000, read with getfloat
    "BLOGFEEDS_REVISIT_RANK": None,  # 0..5 or "auto": checked by the feeds spider
}
"""Settings whose type is not the type of their default in :mod:`blogfeeds.settings`; ``None``
= not checked here."""

RANGES: dict[str, Check] = {
    # 0 = no cap (blogfeeds.middlewares.limits, blogfeeds.seen, the blogs spider)
    "BLOGFEEDS_MAX_URL_LENGTH": _AT_LEAST_0,
    "BLOGFEEDS_MAX_REQUESTS_PER_BLOG": _AT_LEAST_0,
    "BLOGFEEDS_MAX_BLOGS": _AT_LEAST_0,
    "BLOGFEEDS_SEEN_CAPACITY": _AT_LEAST_0,
    "BLOGFEEDS_MAX_FRIENDS_PER_PAGE": _AT_LEAST_0,
    "BLOGFEEDS_MAX_PAGES_PER_BLOG": _AT_LEAST_1,  # the home page is one
    # seconds; 0 = no wait / no timed flush / no periodic log line / give up at once
    "BLOGFEEDS_RETRY_BACKOFF_BASE": _AT_LEAST_0,
    "BLOGFEEDS_RETRY_BACKOFF_MAX": _AT_LEAST_0,
    "BLOGFEEDS_STRATEGY_LOG_INTERVAL": _AT_LEAST_0,
    "BLOGFEEDS_DB_FLUSH_INTERVAL": _AT_LEAST_0,
    "BLOGFEEDS_DB_DOWN_LIMIT": _AT_LEAST_0,
    "BLOGFEEDS_DB_BATCH_SIZE": _AT_LEAST_1,
    "BLOGFEEDS_DB_MAX_ATTEMPTS": _AT_LEAST_1,
    "BLOGFEEDS_WORKER_TTL": _ABOVE_0,  # a Redis key's expiry
    "BLOGFEEDS_REDIS_DOWN_LIMIT": _AT_LEAST_0,
    # feed discovery budget per blog: 0 = the page's own links only
    "BLOGFEEDS_FEED_MAX_REQUESTS": _AT_LEAST_0,
    "BLOGFEEDS_FEED_MAX_FETCH_SECONDS": _AT_LEAST_0,
    "BLOGFEEDS_SUMMARY_TOP": _AT_LEAST_0,
    "BLOGFEEDS_REVISIT_BUDGET": _ABOVE_0,  # fetches per feed per day
    "BLOGFEEDS_REVISIT_INITIAL_T": (
        lambda v: T_MIN <= v <= T_MAX,
        f"must be from {T_MIN:g} to {T_MAX:g} (minutes)",
    ),
    "BLOGFEEDS_FEEDS_BATCH": _AT_LEAST_1,
    "BLOGFEEDS_FEEDS_MAX_SLEEP": _ABOVE_0,
}
"""Values outside which a numeric setting means nothing (applied after its type check)."""

CHOICES: dict[str, tuple[str, ...]] = {
    "BLOGFEEDS_FEED_RULESET": tuple(FEED_RULESETS),
    "BLOGFEEDS_FRIEND_RULESET": tuple(FRIEND_RULESETS),
}
"""String settings with a fixed set of values (``BLOGFEEDS_STRATEGY`` is checked by building
the frontier, ``BLOGFEEDS_REVISIT_POLICY`` by the feeds spider)."""

_KIND_NAMES = {
    bool: "a boolean (True/False, true/false, 1/0)",
    int: "an integer",
    float: "a number",
}


def setting_types() -> dict[str, type]:
    """``{name: bool | int | float}`` of every ``BLOGFEEDS_*`` setting whose default in
    :mod:`blogfeeds.settings` has that type (:data:`READ_AS` overrides)."""
    types: dict[str, type] = {}
    for name, default in vars(project_settings).items():
        if name.startswith("BLOGFEEDS_"):
            kind = READ_AS.get(name, type(default))
            if kind in (bool, int, float):
                types[name] = kind
    return types


def check_settings(settings: Any) -> None:
    """``StartupError`` naming the first ``BLOGFEEDS_*`` setting set in ``settings`` whose
    value cannot work: not of its default's type (Scrapy's ``getbool``/``getint``/``getfloat``
    refuse it), a float that is not finite, outside its :data:`RANGES`, or not one of its
    :data:`CHOICES`. Settings that are not set are skipped (their readers' defaults apply)."""
    for name, kind in setting_types().items():
        raw = settings.get(name)
        if raw is None:  # not set (settings without this project's module): its reader's default
            continue
        getter = {bool: settings.getbool, int: settings.getint, float: settings.getfloat}[kind]
        try:
            value = getter(name)
        except (TypeError, ValueError):
            raise StartupError(name, f"{raw!r} is not {_KIND_NAMES[kind]}") from None
        if kind is float and not math.isfinite(value):
            raise StartupError(name, f"{raw!r} is not a finite number")
        if name in RANGES:
            test, rule = RANGES[name]
            if not test(value):
                raise StartupError(name, f"{rule}, got {raw!r}")
    for name, choices in CHOICES.items():
        raw = settings.get(name)
        if raw is not None and str(raw) not in choices:
            raise StartupError(name, f"{raw!r} is not one of {', '.join(choices)}")


def check_database_url(settings: Any) -> None:
    """``StartupError`` naming ``MYSQL_URL`` or ``BLOGFEEDS_DATABASE_URL`` (the one in use)
    when its form is wrong (:func:`blogfeeds.storage.db.check_url`) or, for SQLite, when the
    file cannot be opened as a database (:func:`check_sqlite`); empty means no storage."""
    for name in ("MYSQL_URL", "BLOGFEEDS_DATABASE_URL"):
        url = (settings.get(name) or "").strip()
        if url:
            try:
                dialect = check_url(url)
            except ValueError as exc:
                raise StartupError(name, str(exc)) from None
            if dialect == "sqlite":
                check_sqlite(name, url)
            return


def check_sqlite(setting: str, url: str) -> None:
    """``StartupError`` naming ``setting`` when the SQLite database ``url`` cannot be opened
    and read (its directory cannot be made, the path is not a file one can write, the file is
    not a SQLite database, its schema is newer than this code). Opens it as the storage will
    (creating the file, and the directories above it, when missing) and closes it again;
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
        check_settings(settings)
        server = redis_server(settings) if redis_enabled(settings) else None
        if getattr(crawler.spidercls, "strategy_frontier", False):
            try:
                frontier_for(crawler)  # the crawl's one frontier, built here first
            except ValueError as exc:
                raise StartupError("BLOGFEEDS_STRATEGY", str(exc)) from None
        # Last, what touches a file or a server: every plain setting is known good by now.
        check_database_url(settings)
        if server is not None:
            check_redis(server)
        return cls()
