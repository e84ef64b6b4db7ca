"""The settings of ``scrapy crawl feeds``, read once into :class:`FeedsConfig` (through the
table's :class:`~blogfeeds.config.RevisitSettings` and
:class:`~blogfeeds.config.FeedsSettings`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from blogfeeds.config import FeedsSettings, FrontierSettings, RevisitSettings
from blogfeeds.feedcrawl.clock import start_minutes
from blogfeeds.option import StartupError
from blogfeeds.revisit import EstimatingPolicy, LevelPolicy, make_policy


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
    everything: bool = False
    """The spider argument ``-a all=true``: the first pass fetches every scheduled feed now,
    due or not (a local trial, a changed network)."""
    batch: int = 50
    """``BLOGFEEDS_FEEDS_BATCH``: feeds per claim, at least 1."""
    max_sleep: float = 60.0
    """``BLOGFEEDS_FEEDS_MAX_SLEEP``: longest sleep of a loop worker, seconds, at least 1."""
    start: float | None = None
    """``BLOGFEEDS_NOW`` in epoch minutes: the virtual start time; None for real time."""
    worker: str = ""
    """``BLOGFEEDS_WORKER_ID``, else the host name."""

    @classmethod
    def from_settings(
        cls, settings: Any, loop: str | None = None, everything: str | None = None
    ) -> FeedsConfig:
        """The settings, read through the table (:class:`~blogfeeds.config.RevisitSettings`,
        :class:`~blogfeeds.config.FeedsSettings`, the worker id of
        :class:`~blogfeeds.config.FrontierSettings`); ``loop`` and ``everything`` are the spider
        arguments ``-a loop=`` (over ``BLOGFEEDS_FEEDS_LOOP``) and ``-a all=``. A bad value is a
        :class:`~blogfeeds.option.StartupError`."""
        revisit = RevisitSettings.from_settings(settings)
        worker = FeedsSettings.from_settings(settings)
        return cls(
            policy=revisit.policy,
            budget=revisit.budget,
            level_mode=revisit.level_mode,
            initial_t=float(revisit.initial_t),
            rank=revisit.rank,
            loop=_yes_or_no("-a loop", loop) if loop is not None else worker.loop,
            everything=_yes_or_no("-a all", everything) if everything is not None else False,
            batch=worker.batch,
            max_sleep=max(1.0, worker.max_sleep),
            start=start_minutes(worker.now),
            worker=FrontierSettings.from_settings(settings).worker,
        )

    def make_policy(self) -> LevelPolicy | EstimatingPolicy:
        return make_policy(
            self.policy,
            budget_per_feed_day=self.budget,
            level_mode=self.level_mode,
            initial_time=self.initial_t,
        )


def _yes_or_no(name: str, value: str) -> bool:
    """``-a loop=``, ``-a all=``: yes or no in the words a boolean setting takes; anything else
    is an error (``loop=maybe`` ran once, silently)."""
    word = str(value).strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("", "0", "false", "no", "off"):
        return False
    raise StartupError(name, f"{value!r} is not true or false (1/0, yes/no, on/off)")
