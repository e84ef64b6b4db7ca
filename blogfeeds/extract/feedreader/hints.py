"""RSS channel hints for revisit scheduling, read from the feed's one parse.

- ``<ttl>`` (RSS 2.0): minutes the channel may be cached.
- ``sy:updatePeriod`` × ``sy:updateFrequency`` (RSS 1.0 Syndication module; period default
  ``daily``, frequency default 1): ``update_period`` = period / frequency, a prior only.
- ``<skipHours><hour>`` (0-23 GMT; 24 read as 0) and ``<skipDays><day>`` (weekday names).

Durations are minutes, hours UTC 0-23, days 0 = Monday (the units of :mod:`blogfeeds.revisit`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from blogfeeds.extract.text import digits_int

_HOUR = 60.0
#: ``<ttl>`` (minutes) and ``<sy:updateFrequency>`` are read up to this (ten years of minutes).
_COUNT_CAP = 10 * 366 * 24 * 60
_DAY = 24 * _HOUR
_SY_PERIODS = {
    "hourly": _HOUR,
    "daily": _DAY,
    "weekly": 7 * _DAY,
    "monthly": 30 * _DAY,
    "yearly": 365 * _DAY,
}
_DAYS = {
    name: i
    for i, name in enumerate(
        ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    )
}
_SKIP_HOURS = re.compile(r"<skipHours\b[^>]*>(.*?)</skipHours>", re.S)
_SKIP_DAYS = re.compile(r"<skipDays\b[^>]*>(.*?)</skipDays>", re.S)
_HOUR_VALUE = re.compile(r"<hour\b[^>]*>([^<]*)</hour>")
_DAY_VALUE = re.compile(r"<day\b[^>]*>([^<]*)</day>")


@dataclass(frozen=True, slots=True)
class RssHints:
    """Channel-level hints (minutes; hours are UTC 0-23, days 0 = Monday)."""

    ttl: float | None = None
    skip_hours: frozenset[int] = field(default_factory=frozenset)
    skip_days: frozenset[int] = field(default_factory=frozenset)
    update_period: float | None = None


def _positive_int(value: Any) -> int | None:
    number = digits_int(str(value) if value is not None else None, _COUNT_CAP)
    return number if number else None


def _values(pattern: re.Pattern[str], value: re.Pattern[str], text: str) -> list[str]:
    return [v.strip() for block in pattern.findall(text) for v in value.findall(block)]


def rss_hints(feed: Mapping[str, Any], text: str = "") -> RssHints:
    """The hints of feedparser's channel metadata ``feed`` (``parsed.feed``) and, for the skip
    lists, of the decoded document ``text``: feedparser keeps only the last ``<hour>`` and
    ``<day>`` of a channel's ``skipHours``/``skipDays``, so when it met those lists their
    values are read from the text (the lists alone, not the document again)."""
    ttl = _positive_int(feed.get("ttl"))
    period_name = str(feed.get("sy_updateperiod", "")).strip().lower()
    frequency = _positive_int(feed.get("sy_updatefrequency"))
    update_period = None
    if period_name or frequency:
        base = _SY_PERIODS.get(period_name or "daily")
        if base is not None:
            update_period = base / (frequency or 1)
    hours: set[int] = set()
    days: set[int] = set()
    if "skiphours" in feed:
        for hour in _values(_SKIP_HOURS, _HOUR_VALUE, text):
            number = digits_int(hour, 25)
            if number is not None and number <= 24:
                hours.add(number % 24)
    if "skipdays" in feed:
        for name in _values(_SKIP_DAYS, _DAY_VALUE, text):
            day = _DAYS.get(name.lower())
            if day is not None:
                days.add(day)
    return RssHints(
        ttl=float(ttl) if ttl else None,
        skip_hours=frozenset(hours),
        skip_days=frozenset(days),
        update_period=update_period,
    )
