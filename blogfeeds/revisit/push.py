"""Polling a feed that pushes (WebSub): only as a safety net.

A feed with a live subscription gets its entries from its hub. Its pushes are *overdue* once
``factor`` expected gaps between its entries have passed since the last push (or since the
subscription began): the gap is one over its estimated posting rate (``FeedState.rate``, the
estimating policy's), else the policy's planned interval. Until then its next poll is moved out
to the moment pushes would be overdue, never later than ``safety`` minutes from now nor than the
lease's end, never earlier than the policy's plan. Once pushes are overdue (a hub gone quiet,
lion-reader#1034), or the lease has lapsed, the policy's plan stands: polling carries on as for
a feed without a hub until a push comes again.

Pure: epoch minutes in, epoch minutes out.
"""

from __future__ import annotations

from dataclasses import replace

from blogfeeds.revisit.core import DAY, MIN_SPACING, FeedState


def push_due(
    planned: float,
    now: float,
    push_until: float | None,
    last_push: float | None,
    *,
    safety: float,
    factor: float,
    rate: float | None = None,
) -> float:
    """When to poll a feed whose policy planned ``planned`` at ``now``; ``push_until`` is its
    subscription's lease end (None: no live subscription, the plan stands), ``last_push`` the
    last push received or the start of the subscription (None: counted from now), ``rate`` its
    estimated entries per day (None: the planned interval is the gap)."""
    if push_until is None or push_until <= now:
        return planned
    gap = DAY / rate if rate and rate > 0 else max(planned - now, MIN_SPACING)
    anchor = now if last_push is None else min(last_push, now)
    overdue = anchor + factor * gap
    if overdue <= now:
        return planned
    return max(planned, min(overdue, now + safety, push_until))


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
    due = push_due(
        state.next_due,
        now,
        push_until,
        last_push,
        safety=safety,
        factor=factor,
        rate=state.rate,
    )
    if due == state.next_due:
        return state
    return replace(state, next_due=due, interval=max(due - now, state.interval))
