"""The item of one fetch (:class:`~blogfeeds.items.FeedFetch`): the revisit policy applied to
what the response came to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict

from blogfeeds.feedcrawl.response import FetchRead
from blogfeeds.items import FeedFetch
from blogfeeds.revisit import EstimatingPolicy, FeedState, LevelPolicy, remember_ids
from blogfeeds.revisit.core import classify
from blogfeeds.storage.feedstore import ScheduledFeed, iso


def fetch_item(
    policy: LevelPolicy | EstimatingPolicy,
    feed: ScheduledFeed,
    state: FeedState,
    read: FetchRead,
    *,
    moved_to: str | None,
    owner: str,
    adjust: Callable[[FeedState], FeedState] | None = None,
) -> tuple[FeedFetch, FeedState]:
    """The item the pipeline stores for ``feed`` (its ``state`` before the fetch, leased by
    ``owner``) and the feed's new state: next visit planned, the document's entry keys seen,
    ``dead`` when the policy gave up, the host's pause when it throttled. ``adjust`` moves the
    plan (a feed that pushes is polled as a safety net: :mod:`blogfeeds.revisit.push`)."""
    outcome = read.outcome
    new_state = policy.next_state(state, outcome)
    if adjust is not None:
        new_state = adjust(new_state)
    if read.ids:
        new_state = remember_ids(new_state, read.ids)
    until = new_state.host_pause_until if classify(outcome) == "throttled" else None
    item = FeedFetch(
        feed_url=feed.url,
        fetched_at=iso(outcome.fetched_at),
        status="dead" if new_state.dead else read.status,
        http_status=outcome.status,
        state=asdict(new_state),
        level=policy.level(new_state),
        entries=list(read.entries),
        moved_to=moved_to,
        blog_id=feed.blog_id,
        changed=read.changed,
        host_pause_until=iso(until) if until is not None else None,
        hubs=None if read.websub is None else list(read.websub.hubs),
        topic="" if read.websub is None else read.websub.topic,
        error=read.error,
        lease_owner=owner,
    )
    return item, new_state
