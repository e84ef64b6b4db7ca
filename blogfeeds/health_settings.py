"""The settings of blog health and re-checks (:class:`BlogHealthSettings`, in the configuration
table of :mod:`blogfeeds.config`): read by :mod:`blogfeeds.storage.checks` and
:mod:`blogfeeds.crawl.checks`; a module of its own so that loading the settings loads no store)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from blogfeeds.option import SettingsGroup, option


@dataclass(frozen=True)
class BlogHealthSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.storage.checks"

    dead_after: int = option(
        "BLOGFEEDS_HEALTH_DEAD_AFTER",
        3,
        "Failed reads in a row of a blog's home page, the last saying the host is gone (DNS, "
        "refused, TLS, 404/410), before its health is dead (failing before).",
        low=1,
    )
    keep_days: int = option(
        "BLOGFEEDS_HEALTH_KEEP_DAYS",
        365,
        "Days the history of home-page checks (blog_checks) is kept; 0 = for ever.",
        low=0,
    )
    recheck_min_hours: float = option(
        "BLOGFEEDS_RECHECK_MIN_HOURS",
        24.0,
        "Hours to a blog's next re-check (-a recheck=due) after a change or a failure.",
        low=0,
    )
    recheck_max_hours: float = option(
        "BLOGFEEDS_RECHECK_MAX_HOURS",
        720.0,
        "Hours to a blog's next re-check at most: the interval doubles while it stays the same.",
        low=0,
    )
