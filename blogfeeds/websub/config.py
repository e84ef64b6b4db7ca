"""The WebSub subscriber's settings (:class:`WebSubSettings`, in the configuration table of
:mod:`blogfeeds.config`), beside the code that reads them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from blogfeeds.option import SettingsGroup, option


def _listen(raw: Any) -> str:
    """``host:port`` (``[::1]:8470`` for IPv6) to listen on."""
    text = str(raw).strip()
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"must be host:port, e.g. 127.0.0.1:8470, got {text!r}")
    return text


def _public_url(raw: Any) -> str:
    text = str(raw or "").strip().rstrip("/")
    if text and not text.lower().startswith(("http://", "https://")):
        raise ValueError(f"must be an http(s) URL, got {text!r}")
    return text


@dataclass(frozen=True)
class WebSubSettings(SettingsGroup):
    """The WebSub subscriber (``scrapy websub``, docs: websub) and the polling of subscribed
    feeds by ``scrapy crawl feeds``."""

    component: ClassVar[str] = "blogfeeds.websub (scrapy websub, scrapy crawl feeds)"

    enabled: bool = option(
        "BLOGFEEDS_WEBSUB_ENABLED",
        False,
        "Subscribe to the WebSub hubs feeds announce, and poll subscribed feeds as a safety net.",
        env="BLOGFEEDS_WEBSUB_ENABLED",
    )
    public_url: str = option(
        "BLOGFEEDS_WEBSUB_PUBLIC_URL",
        "",
        "Base URL hubs reach the callback endpoint at, e.g. https://example.org/websub.",
        env="BLOGFEEDS_WEBSUB_PUBLIC_URL",
        parse=_public_url,
        kind="URL",
        allowed="http(s) URL, or empty (then WebSub stays off)",
    )
    listen: str = option(
        "BLOGFEEDS_WEBSUB_LISTEN",
        "127.0.0.1:8470",
        "host:port the callback endpoint listens on (behind a reverse proxy).",
        env="BLOGFEEDS_WEBSUB_LISTEN",
        parse=_listen,
        kind="host:port",
        allowed="host:port",
    )
    lease_seconds: int = option(
        "BLOGFEEDS_WEBSUB_LEASE_SECONDS",
        864_000,
        "hub.lease_seconds asked for (the hub decides); renewed at 80 % of the lease it grants.",
        low=60,
        unit="seconds",
    )
    safety_interval: float = option(
        "BLOGFEEDS_WEBSUB_SAFETY_INTERVAL",
        2880.0,
        "Longest interval between safety polls of a feed with a live subscription, minutes.",
        low=1,
        unit="minutes",
    )
    overdue_factor: float = option(
        "BLOGFEEDS_WEBSUB_OVERDUE_FACTOR",
        4.0,
        "Pushes are overdue (poll as planned) after this many expected gaps between entries.",
        low=1,
    )
    max_body: int = option(
        "BLOGFEEDS_WEBSUB_MAX_BODY",
        2_000_000,
        "Largest push body accepted, bytes (a larger one is refused with 413).",
        low=1,
        unit="bytes",
    )
    hub_rate: float = option(
        "BLOGFEEDS_WEBSUB_HUB_RATE",
        30.0,
        "Requests per minute to one hub, at most (per process).",
        low=0,
        low_open=True,
    )
    hub_timeout: float = option(
        "BLOGFEEDS_WEBSUB_HUB_TIMEOUT",
        20.0,
        "Seconds one request to a hub may take in all (connect, send, the whole answer).",
        low=0,
        low_open=True,
        unit="seconds",
    )
    hub_concurrency: int = option(
        "BLOGFEEDS_WEBSUB_HUB_CONCURRENCY",
        2,
        "Requests to one hub host at a time (per process); different hubs are asked at once.",
        low=1,
    )
    push_entries: int = option(
        "BLOGFEEDS_WEBSUB_PUSH_ENTRIES",
        100,
        "New entries stored from one push, at most (the feed's next poll brings the rest).",
        low=1,
    )
    push_entries_per_day: int = option(
        "BLOGFEEDS_WEBSUB_PUSH_ENTRIES_PER_DAY",
        1000,
        "New entries stored from the pushes of one subscription in a day, at most (per process).",
        low=1,
    )
    max_failures: int = option(
        "BLOGFEEDS_WEBSUB_MAX_FAILURES",
        5,
        "Failed requests in a row after which a hub is given up for a day (the feed is polled).",
        low=1,
    )
    verify_timeout: float = option(
        "BLOGFEEDS_WEBSUB_VERIFY_TIMEOUT",
        900.0,
        "Seconds a hub has to verify our intent before the request counts as failed.",
        low=0,
        low_open=True,
    )
    interval: float = option(
        "BLOGFEEDS_WEBSUB_INTERVAL",
        30.0,
        "Seconds between the subscriber's looks for subscriptions to make, renew or end.",
        low=0,
        low_open=True,
    )

    @property
    def on(self) -> bool:
        """Enabled with a public URL (hubs cannot reach a subscriber without one)."""
        return self.enabled and bool(self.public_url)
