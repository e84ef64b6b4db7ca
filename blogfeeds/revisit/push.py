"""Polling a feed that pushes (WebSub): only as a safety net.

A feed with a live subscription gets its entries from its hub, so its next poll is pushed out
to the latest of the policy's own plan and ``factor`` of its planned intervals after the last
push, but never later than ``safety`` minutes from now nor than the lease's end (a lapsed
lease is polled at once). A push that is overdue for the feed's estimated rate (no push for
``factor`` planned intervals) leaves the policy's plan as it is: the hub may have gone quiet,
and polling carries on until a push comes again.

Pure: epoch minutes in, epoch minutes out.
"""

from __future__ import annotations

from dataclasses import replace

from blogfeeds.revisit.core import MIN_SPACING, FeedState


def push_due(
    planned: float,
    now: float,
    push_until: float | None,
    last_push: float | None,
    *,
    safety: float,
    factor: float,
) -> float:
    """When to poll a feed whose policy planned ``planned`` at ``now``; ``push_until`` is its
    subscription's lease end (None: no live subscription, the plan stands), ``last_push`` the
    last push received (None: none yet, counted from now)."""
    if push_until is None or push_until <= now:
        return planned
    gap = max(planned - now, MIN_SPACING)
    anchor = now if last_push is None else min(last_push, now)
    relaxed = max(planned, anchor + factor * gap)
    return max(planned, min(relaxed, now + safety, push_until))


def with_push(
    state: FeedState,
    now: float,
    push_until: float | None,
    last_push: float | None,
    *,
    safety: float,
    factor: float,
) -> FeedState:
    """``state`` with :func:`push_due` as its ``next_due`` (and ``interval``)."""
    if state.next_due is None or push_until is None:
        return state
    due = push_due(state.next_due, now, push_until, last_push, safety=safety, factor=factor)
    if due == state.next_due:
        return state
    return replace(state, next_due=due, interval=max(due - now, state.interval))
