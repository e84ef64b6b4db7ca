"""The settings of ``scrapy crawl feeds`` ("Feed revisits" in :mod:`blogfeeds.settings`), read
once into :class:`FeedsConfig`."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

from blogfeeds.extensions.startup import StartupError
from blogfeeds.feeds.clock import VirtualClock, start_minutes
from blogfeeds.revisit import DAY, POLICIES, EstimatingPolicy, LevelPolicy, make_policy
from blogfeeds.storage.feedstore import iso


@dataclass(frozen=True)
class FeedsConfig:
    """One feeds worker's settings, with their defaults."""

    policy: str = "levels"
    """``BLOGFEEDS_REVISIT_POLICY``: ``levels`` or ``estimate``."""
    budget: float = 3.0
    """``BLOGFEEDS_REVISIT_BUDGET``: fetches per feed per day (``estimate``)."""
    level_mode: bool = False
    """``BLOGFEEDS_REVISIT_LEVEL_MODE`` (``estimate``)."""
    initial_t: float = 1000.0
    """``BLOGFEEDS_REVISIT_INITIAL_T``: *T* of a new feed, minutes (``levels``)."""
    rank: int | str = 0
    """``BLOGFEEDS_REVISIT_RANK``: 0..5 or ``"auto"``."""
    loop: bool = False
    """``BLOGFEEDS_FEEDS_LOOP``, or the spider argument ``-a loop=``."""
    batch: int = 50
    """``BLOGFEEDS_FEEDS_BATCH``: feeds per claim, at least 1."""
    max_sleep: float = 60.0
    """``BLOGFEEDS_FEEDS_MAX_SLEEP``: longest sleep of a loop worker, seconds, at least 1."""
    start: float | None = None
    """``BLOGFEEDS_NOW`` in epoch minutes: the virtual start time; None for real time."""
    worker: str = ""
    """``BLOGFEEDS_WORKER_ID``, else the host name."""

    @classmethod
    def from_settings(cls, settings: Any, loop: str | None = None) -> FeedsConfig:
        """The settings read (``loop``: the spider argument, over ``BLOGFEEDS_FEEDS_LOOP``); a
        bad policy name, rank or ``BLOGFEEDS_NOW`` is a ``StartupError`` naming it."""
        s = settings
        policy = s.get("BLOGFEEDS_REVISIT_POLICY", "levels")
        if policy not in POLICIES:
            problem = f"unknown revisit policy {policy!r}; expected one of {', '.join(POLICIES)}"
            raise StartupError("BLOGFEEDS_REVISIT_POLICY", problem)
        rank = str(s.get("BLOGFEEDS_REVISIT_RANK", 0)).strip().lower()
        if rank != "auto":
            try:
                number = int(rank or 0)
            except ValueError:
                number = -1
            if not 0 <= number <= 5:
                problem = f"must be 0..5 or 'auto', got {rank!r}"
                raise StartupError("BLOGFEEDS_REVISIT_RANK", problem)
        now = s.get("BLOGFEEDS_NOW") or ""
        try:
            start = start_minutes(now)
            iso(VirtualClock(start).now() + 400 * DAY)  # a year of revisits must still be a date
        except (ValueError, OverflowError, OSError):
            problem = (
                f"{now!r} is not an ISO 8601 time from 1970 to 9998 (e.g. 2026-01-31T12:00:00Z)"
            )
            raise StartupError("BLOGFEEDS_NOW", problem) from None
        return cls(
            policy=policy,
            budget=s.getfloat("BLOGFEEDS_REVISIT_BUDGET", 3.0),
            level_mode=s.getbool("BLOGFEEDS_REVISIT_LEVEL_MODE", False),
            initial_t=s.getfloat("BLOGFEEDS_REVISIT_INITIAL_T", 1000.0),
            rank="auto" if rank == "auto" else int(rank or 0),
            loop=(
                str(loop).strip().lower() in {"1", "true", "yes", "on"}
                if loop is not None
                else s.getbool("BLOGFEEDS_FEEDS_LOOP", False)
            ),
            batch=max(1, s.getint("BLOGFEEDS_FEEDS_BATCH", 50)),
            max_sleep=max(1.0, s.getfloat("BLOGFEEDS_FEEDS_MAX_SLEEP", 60.0)),
            start=start,
            worker=s.get("BLOGFEEDS_WORKER_ID") or socket.gethostname(),
        )

    def make_policy(self) -> LevelPolicy | EstimatingPolicy:
        return make_policy(
            self.policy,
            budget_per_feed_day=self.budget,
            level_mode=self.level_mode,
            initial_time=self.initial_t,
        )
