"""Which database errors a retry may cure, and opening a database that is not up yet.

A lost or refused connection (server restart, ``KILL``, ``wait_timeout``) or a transaction
conflict (deadlock, lock wait timeout) is *transient*: every write is an idempotent upsert in
one transaction, so writing the same batch again is safe and may succeed. Any other error (a row
the database refuses, a wrong password, a missing database) comes back on every attempt.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from scrapy.exceptions import CloseSpider

from blogfeeds.storage.url import redact

logger = logging.getLogger(__name__)

_Opened = TypeVar("_Opened")

TRANSIENT_MYSQL = frozenset(
    {
        1053,  # server shutdown in progress
        1205,  # lock wait timeout: retry the transaction
        1213,  # deadlock (two workers upserting the same rows): retry the transaction
        1927,  # connection was killed (MariaDB)
        2002,  # cannot connect through the socket
        2003,  # cannot connect to the server
        2006,  # server has gone away
        2013,  # lost connection during query
        2055,  # lost connection (extended)
    }
)
"""MySQL / MariaDB error codes of a lost or refused connection or a retryable conflict."""


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a lost/refused connection or a retryable transaction conflict
    (PyMySQL ``OperationalError``/``InterfaceError`` with a code in :data:`TRANSIENT_MYSQL`, an
    ``InterfaceError`` on a closed connection, ``ConnectionError``, ``TimeoutError``); a retry
    of the same batch may then succeed."""
    try:
        import pymysql  # noqa: PLC0415 - optional driver
    except ImportError:  # pragma: no cover
        return False
    if isinstance(exc, pymysql.err.InterfaceError):
        return True
    if isinstance(exc, pymysql.err.OperationalError):
        code = exc.args[0] if exc.args else None
        return code in TRANSIENT_MYSQL
    return isinstance(exc, (ConnectionError, TimeoutError))


async def open_retrying(
    opener: Callable[[str], _Opened], url: str, down_limit: float, stats: Any
) -> _Opened:
    """``opener(url)`` in a worker thread, run again while it fails with a lost or refused
    connection (:func:`is_transient`; 0.2 s apart, doubling to 5 s) for ``down_limit`` seconds.
    Any other error, or the limit, is one ERROR line, the stat ``blogfeeds/db/down`` and
    ``CloseSpider("database_down")`` (exit status 1)."""
    delay = 0.2
    started = time.monotonic()
    while True:
        try:
            return await asyncio.to_thread(opener, url)
        except Exception as exc:
            if not is_transient(exc) or time.monotonic() - started >= down_limit:
                logger.error(
                    "cannot open the database %s (BLOGFEEDS_DB_DOWN_LIMIT %g s): %s",
                    redact(url),
                    down_limit,
                    exc,
                )
                stats.set_value("blogfeeds/db/down", 1)
                raise CloseSpider("database_down") from exc
            logger.warning("database %s unreachable (%s); retrying", redact(url), exc)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
