"""What a feeds run did, in words: the summary ``scrapy crawl feeds`` logs at its end and after
each pass of a loop worker, and the feeds part of ``scrapy stats``.

A run's counts come from its stats (``blogfeeds/feeds/*``, :mod:`blogfeeds.spiders.feeds`):
:class:`Tally` takes a snapshot and reports what changed since, so one tally covers the run and
another, restarted at each pass, covers a pass. The summary says, in this order: responses
fetched, of which 304 and changed, new entries stored, failures by kind, the hosts that asked
for a pause, and when the next feed is due.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from blogfeeds.storage.feedstore import iso, iso_minutes

PREFIX = "blogfeeds/feeds/"
ERROR = PREFIX + "error/"


def duration(minutes: float) -> str:
    """``3 h 20 min``, ``45 s``, ``2 d 4 h``: a coarse, readable span."""
    seconds = max(0, round(minutes * 60))
    if seconds < 60:
        return f"{seconds} s"
    mins = round(seconds / 60)
    if mins < 60:
        return f"{mins} min"
    hours, mins = divmod(mins, 60)
    if hours < 48:
        return f"{hours} h {mins} min" if mins else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def next_due_text(due: float | None, now: float) -> str:
    """``Next feed due at 2024-03-04T03:20:00Z (in 3 h 20 min)``; ``... (overdue by ...)``
    for a feed already due (a paused host, or due after this run started); ``No feed
    scheduled ...`` when there is none."""
    if due is None:
        return "No feed scheduled (run `scrapy crawl blogs` first, or `-a feed=URL`)"
    when = f"Next feed due at {iso(due)}"
    if due <= now:
        late = now - due
        return f"{when} (due now)" if late < 1 else f"{when} (overdue by {duration(late)})"
    return f"{when} (in {duration(due - now)})"


@dataclass
class FeedsSummary:
    """Counts of a run or a pass (see the module docstring)."""

    fetched: int = 0
    """Responses received (``blogfeeds/feeds/fetched``; failures without one not included)."""
    not_modified: int = 0
    changed: int = 0
    new_entries: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    """By kind: ``http_5xx``, ``dns``, ``html``, ``blocked``, ..."""
    paused: dict[str, str] = field(default_factory=dict)
    """Host → ISO time until which it asked for no requests."""
    refused: int = 0
    """Feeds the SSRF guard refused (not failures: their schedule is unchanged)."""
    next_due: float | None = None
    now: float = 0.0
    scheduled: int | None = None
    """Feeds in the schedule at the end (None: not known)."""

    def render(self, label: str) -> str:
        failures = ", ".join(f"{k} {n}" for k, n in sorted(self.failures.items())) or "none"
        paused = ", ".join(f"{h} until {u}" for h, u in sorted(self.paused.items())) or "none"
        schedule = "" if self.scheduled is None else f"; {self.scheduled} feeds in the schedule"
        return "\n".join(
            [
                f"{label}:",
                f"Fetched: {self.fetched}; not modified (304): {self.not_modified}; "
                f"changed: {self.changed}; new entries: {self.new_entries}",
                f"Failures: {failures}",
                *(
                    [
                        f"Refused by the SSRF guard: {self.refused}, their schedule unchanged "
                        "(set BLOGFEEDS_ALLOW_PRIVATE_TARGETS=1 for a local test site)"
                    ]
                    if self.refused
                    else []
                ),
                f"Paused hosts: {paused}",
                next_due_text(self.next_due, self.now) + schedule,
            ]
        )

    def as_stats(self) -> dict[str, Any]:
        """The stats a run's end adds (``blogfeeds/feeds/next_due``)."""
        return {PREFIX + "next_due": iso(self.next_due) if self.next_due is not None else None}


class Tally:
    """The ``blogfeeds/feeds/*`` counters of ``stats`` since :meth:`restart`, and the hosts
    paused since."""

    def __init__(self, stats: Any) -> None:
        self.stats = stats
        self.mark: dict[str, int] = {}
        self.paused: dict[str, str] = {}
        self.restart()

    def _counters(self) -> dict[str, int]:
        return {
            k: v
            for k, v in self.stats.get_stats().items()
            if k.startswith(PREFIX) and isinstance(v, int) and not isinstance(v, bool)
        }

    def restart(self) -> None:
        self.mark = self._counters()
        self.paused = {}

    def pause(self, host: str, until: str | None) -> None:
        if until:
            self.paused[host] = until

    def since(self) -> FeedsSummary:
        now = self._counters()

        def delta(name: str) -> int:
            return now.get(PREFIX + name, 0) - self.mark.get(PREFIX + name, 0)

        failures: Counter[str] = Counter()
        for key, value in now.items():
            if key.startswith(ERROR) and value > self.mark.get(key, 0):
                failures[key[len(ERROR) :]] = value - self.mark.get(key, 0)
        return FeedsSummary(
            fetched=delta("fetched"),
            not_modified=delta("not_modified"),
            changed=delta("changed"),
            new_entries=delta("new_entries"),
            failures=failures,
            paused=dict(self.paused),
            refused=delta("refused"),
        )

    def active(self) -> bool:
        """Whether a feed was claimed since :meth:`restart`."""
        key = PREFIX + "claimed"
        return int(self.stats.get_value(key, 0) or 0) > self.mark.get(key, 0)


@dataclass
class StoredFeeds:
    """The feeds part of ``scrapy stats``: the schedule and the stored entries."""

    feeds: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    """Schedule rows by the status of their last fetch (``new``: never fetched)."""
    entries: int = 0
    latest_entry: str | None = None
    """``first_seen`` of the newest stored entry (ISO 8601 UTC)."""
    next_due: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "feeds_scheduled": self.feeds,
            "feeds_by_status": dict(self.by_status.most_common()),
            "entries": self.entries,
            "latest_entry_seen": self.latest_entry,
            "next_feed_due": self.next_due,
        }

    def render(self, now: float) -> str:
        if not self.feeds:
            return "Feeds scheduled: 0 (`scrapy crawl feeds` schedules the main feed of every blog)"
        statuses = ", ".join(f"{k} {n}" for k, n in self.by_status.most_common())
        due = iso_minutes(self.next_due) if self.next_due else None
        latest = f", newest first seen {self.latest_entry}" if self.latest_entry else ""
        return "\n".join(
            [
                f"Feeds scheduled: {self.feeds}; by status: {statuses or '-'}",
                f"Entries: {self.entries}{latest}",
                next_due_text(due, now),
            ]
        )


def stored_feeds(store: Any) -> StoredFeeds:
    """:class:`StoredFeeds` of a :class:`~blogfeeds.storage.feedstore.FeedStore`."""
    out = StoredFeeds()
    for row in store.query("SELECT status, COUNT(*) AS n FROM schedule GROUP BY status"):
        out.feeds += int(row["n"])
        out.by_status[str(row["status"])] += int(row["n"])
    rows = store.query("SELECT COUNT(*) AS n, MAX(first_seen) AS latest FROM entries")
    if rows:
        out.entries, out.latest_entry = int(rows[0]["n"] or 0), rows[0]["latest"]
    rows = store.query("SELECT MIN(next_due) AS due FROM schedule")
    out.next_due = rows[0]["due"] if rows else None
    return out
