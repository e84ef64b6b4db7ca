"""What feed discovery fetches through: the injected :data:`Fetch`, its request and response,
and the per-call :class:`Session` (request and time budget, the 403 retry)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import urlsplit

from blogfeeds.extract.page import header_value


@dataclass(frozen=True)
class FetchRequest:
    """One GET the pipeline asks for. ``headers`` are extra request headers (for example a
    browser-like ``User-Agent`` for the 403 retry); the fetcher adds its own defaults."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Fetched:
    """A response: ``url`` is the final URL after redirects, ``headers`` str → str."""

    url: str
    status: int
    headers: dict[str, str]
    body: bytes

    def header(self, name: str) -> str:
        return header_value(self.headers, name)


Fetch = Callable[[FetchRequest], Awaitable[Fetched | None]]
"""The injected fetcher: ``None`` means a network failure (DNS, timeout, refused)."""

BROWSER_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0 Safari/537.36"
)
FEED_ACCEPT = (
    "application/rss+xml, application/atom+xml, application/feed+json, "
    "application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8"
)
HTML_ACCEPT = "text/html,*/*;q=0.8"


class BudgetSpent(Exception):
    """Raised by :meth:`Session.get` when no request or time is left: it ends the run."""


class Budget(Protocol):
    """The budget part of :class:`~blogfeeds.extract.discovery.discover.DiscoveryConfig`."""

    @property
    def max_requests(self) -> int: ...
    @property
    def max_fetch_seconds(self) -> float: ...
    @property
    def retry_user_agent(self) -> str | None: ...


class Session:
    """Requests, time and the 403 retry for one :func:`find_feeds` call."""

    def __init__(self, fetch: Fetch, config: Budget) -> None:
        self.fetch, self.config = fetch, config
        self.requests, self.seconds = 0, 0.0
        self.exhausted = self.blocked = False
        self.browser_hosts: set[str] = set()

    async def _one(self, url: str, headers: dict[str, str]) -> Fetched | None:
        remaining = self.config.max_fetch_seconds - self.seconds
        if self.requests >= self.config.max_requests or remaining <= 0:
            self.exhausted = True
            raise BudgetSpent
        self.requests += 1
        start = time.monotonic()
        try:
            return await asyncio.wait_for(self.fetch(FetchRequest(url, headers)), remaining)
        except TimeoutError:
            return None
        finally:
            self.seconds += time.monotonic() - start

    async def get(self, url: str, accept: str = FEED_ACCEPT) -> tuple[Fetched | None, str]:
        """Fetch with the 403 retry; returns ``(response, note)``; raises when the budget is
        spent (ending the run)."""
        host = (urlsplit(url).hostname or "").lower()
        ua = self.config.retry_user_agent
        headers = {"Accept": accept}
        if ua and host in self.browser_hosts:
            headers["User-Agent"] = ua
        resp = await self._one(url, headers)
        if resp is not None and resp.status == 403 and ua and "User-Agent" not in headers:
            resp = await self._one(url, {**headers, "User-Agent": ua})
            if resp is not None and resp.status != 403:
                self.browser_hosts.add(host)
                return resp, "403 to our User-Agent, retried with a browser-like one"
            self.blocked = True
        return resp, ""
