"""Claimed feeds queued by host: one request at a time per host (on top of
``CONCURRENT_REQUESTS_PER_DOMAIN = 1``), and a host's pause (429/503 + Retry-After) holding
all of its feeds."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from blogfeeds.revisit import FeedState, HostPauses
from blogfeeds.storage.feedstore import ScheduledFeed, slot_of


class HostQueues:
    """The feeds this worker claimed and has not answered yet, by host."""

    def __init__(self) -> None:
        self.pauses = HostPauses()
        self.queues: dict[str, deque[ScheduledFeed]] = {}
        self.active: set[str] = set()  # hosts with a request in flight
        self.inflight: set[str] = set()  # feed URLs claimed and not yet answered

    def add(self, claims: Iterable[ScheduledFeed]) -> int:
        """Queue the claimed feeds not in flight already; how many were queued."""
        added = 0
        for feed in claims:
            if feed.url in self.inflight:
                continue
            self.inflight.add(feed.url)
            self.queues.setdefault(slot_of(feed.url), deque()).append(feed)
            added += 1
        return added

    def idle_hosts(self) -> list[str]:
        """Hosts with queued feeds and no request in flight."""
        return [host for host in self.queues if host not in self.active]

    def drop_paused(self, host: str, now: float) -> tuple[list[str], float] | None:
        """When ``host`` is paused at ``now``: its queued feeds dropped (no longer in flight),
        as ``(urls, pause end)`` for the caller to release; else None."""
        queue = self.queues.get(host)
        until = self.pauses.delay(host, now)
        if not queue or until <= now:
            return None
        urls = [f.url for f in queue]
        self.inflight.difference_update(urls)
        queue.clear()
        return urls, until

    def next(self, host: str) -> ScheduledFeed | None:
        """The next feed of ``host`` (the host is active until it is answered), or None: the
        queue is empty and the host forgotten."""
        queue = self.queues.get(host)
        if not queue:
            self.queues.pop(host, None)
            self.active.discard(host)
            return None
        self.active.add(host)
        return queue.popleft()

    def answered(self, url: str) -> None:
        self.inflight.discard(url)

    def pause(self, host: str, state: FeedState) -> None:
        """``host`` asked for a pause (429/503): until ``state.host_pause_until``."""
        self.pauses.note(host, state)
