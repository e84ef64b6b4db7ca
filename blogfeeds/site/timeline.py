"""A blog's health timeline: its checks (``blog_checks``) folded into spans, and the blogs whose
kind changed at their latest check.

Consecutive checks of the same kind are one :class:`Span` (first and last time, how many); its
HTTP status and reason are those of its last check (the newest words). Only the newest
``keep`` spans of a blog are kept, so that a blog failing daily for a year costs its page a few
rows, not 365: :attr:`Timeline.earlier` counts the spans left out. The checks arrive as one
query sorted by blog and time (:func:`blogfeeds.storage.checks.history`) and are folded as they
stream, one blog at a time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Container, Iterable
from dataclasses import dataclass, field


@dataclass
class Span:
    """Checks of one kind in a row."""

    kind: str
    first: str
    last: str
    checks: int
    http_status: int | None
    reason: str


@dataclass
class Timeline:
    """A blog's newest spans, newest first, and how many older spans and checks there were."""

    spans: list[Span] = field(default_factory=list)
    earlier: int = 0
    """Spans older than those kept."""
    checks: int = 0
    """Every check of the blog (kept or not)."""


@dataclass(frozen=True)
class Change:
    """A blog whose latest check gave another kind than the check before it."""

    blog_id: str
    before: str
    after: str
    at: str


Row = tuple[str, str, str, int | None, str]
"""``(blog_id, checked_at, kind, http_status, reason)``, as the store reads them."""


def fold(
    rows: Iterable[Row], keep: int, wanted: Container[str] | None = None
) -> tuple[dict[str, Timeline], list[Change]]:
    """The timeline of each blog of ``rows`` (sorted by blog, then time) that is in ``wanted``
    (all when None), at most ``keep`` spans each; and the changes at the latest check, the
    newest first (ties by blog id)."""
    timelines: dict[str, Timeline] = {}
    changes: list[Change] = []
    current: str | None = None
    spans: deque[Span] = deque(maxlen=max(keep, 2))  # two at least: the change
    total = checks = 0

    def close() -> None:
        if current is None or checks == 0:
            return
        newest = list(reversed(spans))
        shown = newest[: max(keep, 0)]
        timelines[current] = Timeline(shown, total - len(shown), checks)
        if total > 1 and newest[0].checks == 1:
            changes.append(Change(current, newest[1].kind, newest[0].kind, newest[0].last))

    for blog_id, checked_at, kind, status, reason in rows:
        if blog_id != current:
            close()
            current, total, checks = blog_id, 0, 0
            spans = deque(maxlen=max(keep, 2))
        if wanted is not None and blog_id not in wanted:
            continue
        checks += 1
        last = spans[-1] if spans else None
        if last is not None and last.kind == kind:
            last.last, last.checks = checked_at, last.checks + 1
            last.http_status, last.reason = status, reason
        else:
            spans.append(Span(kind, checked_at, checked_at, 1, status, reason))
            total += 1
    close()
    changes.sort(key=lambda c: (c.at, c.blog_id), reverse=True)
    return timelines, changes
