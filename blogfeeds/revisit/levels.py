"""The original design's level-based revisit intervals (the default policy).

Five levels, Level[1..5] = 20, 200, 1000, 2000, 10000 minutes. Each feed keeps a time *T*
(minutes, :attr:`FeedState.level_time`); its level is the highest level whose value is ≤ *T*
(*T* below 20 uses Level[1]). After each fetch *T* is divided by 1.2 when the feed changed and
multiplied by 1.2 when it did not, then clamped to [20, 10000]. RssRank 0..5 shifts the level
down: ``level = max(1, level - rank)``. The rule settles where P(change) = 0.5, an interval of
about 0.69/λ, so the fetch rate is proportional to the posting rate λ (revisit.md §1.2).

"Changed" means new entries (ids not seen before), never a byte difference, so servers that
regenerate the body or the ETag on every request do not shrink *T*; a GUID rewrite
(:func:`~blogfeeds.revisit.hints.is_guid_rewrite`) is not a change either. A feed's first
successful fetch only establishes what has been seen and leaves *T* as it is. Errors, 429s and
server hints follow the shared rules of :mod:`blogfeeds.revisit.core`.
"""

from __future__ import annotations

from dataclasses import replace

from blogfeeds.revisit.core import (
    FeedState,
    FetchOutcome,
    after_failure,
    after_success,
    after_throttle,
    classify,
)
from blogfeeds.revisit.hints import is_guid_rewrite

#: Level[1..5] in minutes.
LEVELS = (20.0, 200.0, 1000.0, 2000.0, 10000.0)
T_MIN = 20.0
T_MAX = 10000.0
FACTOR = 1.2
MAX_RANK = 5
#: In-degree (blogs linking to this one) at which RssRank 1..5 start: log-spaced.
RANK_THRESHOLDS = (2, 5, 10, 25, 50)


def check_rank(rank: int) -> int:
    """``rank`` if it is an int in 0..5; ValueError otherwise."""
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank <= MAX_RANK:
        raise ValueError(f"RssRank must be an integer 0..{MAX_RANK}, got {rank!r}")
    return rank


def level_of(level_time: float, rank: int = 0) -> int:
    """Level number 1..5 for *T* = ``level_time`` minutes and RssRank ``rank``.

    The highest level whose value is ≤ *T* (*T* < 20 → 1), then ``max(1, level - rank)``.
    """
    level = 1
    for number, value in enumerate(LEVELS, start=1):
        if value <= level_time:
            level = number
    return max(1, level - check_rank(rank))


def level_interval(level_time: float, rank: int = 0) -> float:
    """Revisit interval in minutes: ``LEVELS[level_of(level_time, rank) - 1]``."""
    return LEVELS[level_of(level_time, rank) - 1]


def update_level_time(level_time: float, changed: bool) -> float:
    """*T* after one fetch: ``T / 1.2`` if changed else ``T * 1.2``, clamped to [20, 10000]."""
    t = level_time / FACTOR if changed else level_time * FACTOR
    return min(max(t, T_MIN), T_MAX)


def auto_rank(inbound_blogs: int) -> int:
    """An automatic RssRank from how many distinct blogs link to this one (friend links).

    Log-spaced thresholds 2, 5, 10, 25, 50 give ranks 1..5 (0 or 1 inbound link: rank 0).
    Each rank moves the feed one level down, i.e. fetched 2-10× more often. A stored,
    user-set rank takes precedence; this is only a default for new feeds.
    """
    if inbound_blogs < 0:
        raise ValueError(f"inbound_blogs must be ≥ 0, got {inbound_blogs}")
    return sum(1 for threshold in RANK_THRESHOLDS if inbound_blogs >= threshold)


class LevelPolicy:
    """The original design, exactly (see the module docstring). ``initial_time`` is *T* for a
    new feed (minutes; default 1000 → Level[3]); ``default_rank`` the RssRank when none is given.
    """

    name = "levels"

    def __init__(self, initial_time: float = 1000.0, default_rank: int = 0) -> None:
        if not T_MIN <= initial_time <= T_MAX:
            raise ValueError(f"initial_time must be in [{T_MIN}, {T_MAX}], got {initial_time}")
        self.initial_time = initial_time
        self.default_rank = check_rank(default_rank)

    def initial_state(self, feed_id: str, now: float, rank: int | None = None) -> FeedState:
        """A new feed: *T* = ``initial_time``, due at ``now`` (epoch minutes)."""
        rank = self.default_rank if rank is None else check_rank(rank)
        return FeedState(
            feed_id=feed_id,
            level_time=self.initial_time,
            rank=rank,
            interval=level_interval(self.initial_time, rank),
            next_due=now,
        )

    def level(self, state: FeedState) -> int:
        """Level 1..5 of ``state``: the level of its *T* and rank."""
        return level_of(state.level_time, state.rank)

    def next_state(self, state: FeedState, outcome: FetchOutcome) -> FeedState:
        """Update *T* from ``outcome`` and schedule the next fetch at its level's interval."""
        kind = classify(outcome)
        if kind == "throttled":
            return after_throttle(state, outcome)
        if kind == "failed":
            return after_failure(state, outcome, level_interval(state.level_time, state.rank))
        first = state.last_success is None
        new = outcome.new_entry_dates if outcome.status != 304 else ()
        rewrite = is_guid_rewrite(new, outcome.all_entry_dates, state.newest_claimed)
        changed = bool(new) and not first and not rewrite
        level_time = state.level_time if first else update_level_time(state.level_time, changed)
        window = len(outcome.all_entry_dates) if outcome.status != 304 else state.window
        return after_success(
            replace(state, level_time=level_time),
            outcome,
            level_interval(level_time, state.rank),
            changed=changed,
            window=window,
        )
