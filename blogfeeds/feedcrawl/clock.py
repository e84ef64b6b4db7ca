"""The time of a feeds run: real, or virtual for tests and replays (``BLOGFEEDS_NOW``)."""

from __future__ import annotations

import time
from datetime import datetime

from blogfeeds.revisit import to_minutes


class VirtualClock:
    """Epoch minutes now: real time, or ``start`` (epoch minutes) plus the real time elapsed
    since the clock was made (tests run ``scrapy crawl feeds`` at chosen virtual times)."""

    def __init__(self, start: float | None = None) -> None:
        self.base = start if start is not None else time.time() / 60.0
        self.t0 = time.monotonic()

    def now(self) -> float:
        return self.base + (time.monotonic() - self.t0) / 60.0


def start_minutes(value: str | None) -> float | None:
    """ISO 8601 ``value`` (naive = UTC) in epoch minutes; None (real time) when empty.
    ValueError on an unreadable value."""
    if not value or not value.strip():
        return None
    return to_minutes(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
