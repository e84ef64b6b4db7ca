"""Feed revisit scheduling, pure (no Scrapy): when to fetch each feed again.

Two policies, selected by one setting (``make_policy``):

- ``"levels"`` (default): :class:`LevelPolicy`, the original five-level design, exactly.
- ``"estimate"``: :class:`EstimatingPolicy`, a rate estimate from entry dates and the
  square-root allocation of a global fetch budget.

Instants are epoch minutes (UTC), durations minutes, stored rates entries per day; see
:mod:`blogfeeds.revisit.core`.
"""

from __future__ import annotations

from blogfeeds.revisit.core import (
    DAY,
    FeedState,
    FetchOutcome,
    Policy,
    conditional_headers,
    conditional_span,
    from_minutes,
    to_minutes,
)
from blogfeeds.revisit.estimate import EstimatingPolicy, FetchBudget
from blogfeeds.revisit.hints import (
    HostPauses,
    cache_lifetime,
    is_guid_rewrite,
    parse_retry_after,
    remember_ids,
    split_new_ids,
)
from blogfeeds.revisit.levels import LEVELS, LevelPolicy, auto_rank, level_interval, level_of

POLICIES = ("levels", "estimate")


def make_policy(
    name: str = "levels",
    *,
    budget_per_feed_day: float = 3.0,
    level_mode: bool = False,
    initial_time: float = 1000.0,
    default_rank: int = 0,
) -> LevelPolicy | EstimatingPolicy:
    """The policy called ``name`` (``"levels"`` or ``"estimate"``); ValueError otherwise.

    ``budget_per_feed_day`` (fetches per feed per day) and ``level_mode`` apply to
    ``"estimate"``; ``initial_time`` (*T* of a new feed, minutes) to ``"levels"``.
    """
    if name == "levels":
        return LevelPolicy(initial_time=initial_time, default_rank=default_rank)
    if name == "estimate":
        return EstimatingPolicy(
            FetchBudget(budget_per_feed_day), level_mode=level_mode, default_rank=default_rank
        )
    raise ValueError(f"unknown revisit policy {name!r}; choose one of {POLICIES}")


__all__ = [
    "DAY",
    "LEVELS",
    "POLICIES",
    "EstimatingPolicy",
    "FeedState",
    "FetchBudget",
    "FetchOutcome",
    "HostPauses",
    "LevelPolicy",
    "Policy",
    "auto_rank",
    "cache_lifetime",
    "conditional_headers",
    "conditional_span",
    "from_minutes",
    "is_guid_rewrite",
    "level_interval",
    "level_of",
    "make_policy",
    "parse_retry_after",
    "remember_ids",
    "split_new_ids",
    "to_minutes",
]
