"""A fake DNS for a ``scrapy crawl`` subprocess: names answer from a table, per lookup function,
so a test can play a rebinding server or a name whose first lookup fails, and no query leaves
the machine.

The table is the environment variable ``BLOGFEEDS_FAKE_DNS`` (JSON ``{name: {function:
[answer, ...]}}``, ``function`` being ``getaddrinfo`` or ``gethostbyname``, an answer an IPv4
address or ``null`` for "no such name"); the n-th lookup of a name by a function gets the n-th
answer, the last one repeating. A name not in the table does not resolve (numeric addresses and
``localhost`` resolve as usual). It is installed when this module is imported: add
:data:`EXTENSION` to the crawl's ``EXTENSIONS`` (:func:`extensions_setting`).
"""

from __future__ import annotations

import json
import os
import socket
import threading
from typing import Any

ENV = "BLOGFEEDS_FAKE_DNS"
EXTENSION = "tests.fake_dns.FakeDns"

_real_getaddrinfo = socket.getaddrinfo
_real_gethostbyname = socket.gethostbyname
_lock = threading.Lock()
_counts: dict[tuple[str, str], int] = {}


def env(table: dict[str, dict[str, list[str | None]]]) -> dict[str, str]:
    """The environment entry carrying ``table``."""
    return {ENV: json.dumps(table)}


def extensions_setting() -> str:
    """``EXTENSIONS`` for ``-s``: the project's, plus this module's."""
    from blogfeeds import settings

    return json.dumps({**settings.EXTENSIONS, EXTENSION: 0})


def _answer(function: str, host: str) -> str | None:
    table = json.loads(os.environ.get(ENV) or "{}")
    answers = table.get(host.lower().rstrip("."), {}).get(function)
    if not answers:
        return None
    with _lock:
        n = _counts.get((function, host), 0)
        _counts[(function, host)] = n + 1
    return answers[min(n, len(answers) - 1)]


def _passes(host: str) -> bool:
    try:
        socket.inet_aton(host)
    except OSError:
        return host in ("localhost", "") or ":" in host
    return True


def _no_such_name(host: str) -> socket.gaierror:
    return socket.gaierror(socket.EAI_NONAME, f"fake DNS: no such name {host!r}")


def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else str(host or "")
    if _passes(name):
        return _real_getaddrinfo(host, port, *args, **kwargs)
    address = _answer("getaddrinfo", name)
    if address is None:
        raise _no_such_name(name)
    return _real_getaddrinfo(address, port, *args, **kwargs)


def gethostbyname(host: str) -> str:
    if _passes(host):
        return _real_gethostbyname(host)
    address = _answer("gethostbyname", host)
    if address is None:
        raise _no_such_name(host)
    return address


socket.getaddrinfo = getaddrinfo
socket.gethostbyname = gethostbyname


class FakeDns:
    """An extension that does nothing: loading it imports this module."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> FakeDns:
        return cls()
