"""Protocol hints for revisit scheduling: Retry-After, HTTP freshness lifetime, GUID-rewrite
detection, seen-id summaries and per-host pauses (the RSS channel hints come with the feed's
one parse, :mod:`blogfeeds.extract.feedreader.hints`).

Units as in :mod:`blogfeeds.revisit.core`: instants are epoch minutes (UTC), durations minutes.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from blogfeeds.extract.text import digits_int
from blogfeeds.revisit.core import HINT_CAP, FeedState, http_date_minutes

#: Header seconds (``max-age``, ``Age``, ``Retry-After``) read at most this far: a century.
_SECONDS_CAP = 100 * 365 * 86_400
#: Seen-id summaries keep at most this many hashes (a few windows' worth).
SEEN_IDS_MAX = 300


def _text(value: str | bytes | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    return value.strip()


def header(headers: Mapping[Any, Any], name: str) -> str | None:
    """A header value by case-insensitive name from a ``dict`` (str or bytes keys and values) or
    a Scrapy ``Headers``; repeated values (a list) are joined with ``", "``. None when absent."""
    lname = name.lower()
    for key, value in headers.items():
        k = key.decode("latin-1") if isinstance(key, bytes) else str(key)
        if k.lower() != lname:
            continue
        if isinstance(value, list | tuple):
            parts = [_text(v) or "" for v in value]
            return ", ".join(p for p in parts if p)
        return _text(value)
    return None


def parse_retry_after(value: str | bytes | None, now: float) -> float | None:
    """Retry-After (RFC 9110 §10.2.3) as minutes from ``now`` (epoch minutes).

    Accepts delay-seconds or an HTTP-date; the result is clamped to [0, 1440] (absurd values
    are capped at 24 h, cf. Feedbin's 8-h cap). None when absent or unparseable.
    """
    text = _text(value)
    if not text:
        return None
    seconds = digits_int(text, _SECONDS_CAP)
    if seconds is not None:
        minutes = seconds / 60.0
    else:
        when = http_date_minutes(text)
        if when is None:
            return None
        minutes = when - now
    return min(max(minutes, 0.0), HINT_CAP)


def cache_lifetime(headers: Mapping[Any, Any], now: float) -> float | None:
    """Minutes this response stays fresh (RFC 9111 §4.2): ``max-age`` (else ``Expires`` minus
    ``Date``, or minus ``now`` without ``Date``) minus ``Age``, never below 0.

    ``no-store``/``no-cache`` and an unparseable or past ``Expires`` (e.g. ``0``) give 0. None
    when the response says nothing about freshness. Not capped here; policies cap the floor.
    """
    cc = header(headers, "Cache-Control")
    lifetime: float | None = None
    if cc:
        directives: dict[str, str] = {}
        for part in cc.split(","):
            key, _, val = part.strip().partition("=")
            directives[key.strip().lower()] = val.strip().strip('"')
        if "no-store" in directives or "no-cache" in directives:
            return 0.0
        if "max-age" in directives:
            raw = directives["max-age"]
            lifetime = (digits_int(raw, _SECONDS_CAP) or 0) / 60.0
    if lifetime is None:
        expires = header(headers, "Expires")
        if expires is None:
            return None
        when = http_date_minutes(expires)
        if when is None:
            return 0.0
        date = http_date_minutes(header(headers, "Date"))
        lifetime = when - (date if date is not None else now)
    age_text = header(headers, "Age")
    age = (digits_int(age_text, _SECONDS_CAP) or 0) / 60.0
    return max(lifetime - age, 0.0)


def is_guid_rewrite(
    new_entry_dates: Sequence[float | None],
    all_entry_dates: Sequence[float | None],
    newest_seen: float | None,
) -> bool:
    """True when a fetch's "new" entries are old entries re-keyed (miniflux/v2#3390: http→https
    GUIDs): most of the window is new at once (at least 3 entries and more than half of it) and
    more than half of the window is new entries dated no later than ``newest_seen``, the newest
    entry date seen before this fetch (:attr:`FeedState.newest_claimed`). Such entries are not
    news and must not raise the rate. Comparing with seen dates, not with the previous fetch
    time, keeps a feed whose dates are hours behind (a time-zone bug) from looking re-keyed.
    False when nothing was seen before (``newest_seen`` None).
    """
    if newest_seen is None or len(new_entry_dates) < 3:
        return False
    window = max(len(all_entry_dates), len(new_entry_dates))
    if 2 * len(new_entry_dates) <= window:
        return False
    old = sum(1 for d in new_entry_dates if d is not None and d <= newest_seen)
    return 2 * old > window


def seen_key(entry_id: str) -> str:
    """A short stable hash (16 hex digits of SHA-1) of an entry id, for ``seen_ids``."""
    return hashlib.sha1(entry_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def split_new_ids(state: FeedState, entry_ids: Iterable[str]) -> list[bool]:
    """For each entry id (document order), True when it is not in the state's seen summary."""
    seen = set(state.seen_ids)
    return [seen_key(i) not in seen for i in entry_ids]


def remember_ids(state: FeedState, entry_ids: Iterable[str]) -> FeedState:
    """``state`` with ``entry_ids`` (the whole document) added to ``seen_ids``: every id of
    the document is kept, however long it is, and older ones up to :data:`SEEN_IDS_MAX` in all.
    A summary shorter than the document would make its tail look new on every fetch: an
    unchanged archive of 450 entries would count as changed each time."""
    keys = list(dict.fromkeys(seen_key(i) for i in entry_ids))
    known = set(keys)
    kept = [k for k in state.seen_ids if k not in known]
    merged = (keys + kept)[: max(SEEN_IDS_MAX, len(keys))]
    return replace(state, seen_ids=tuple(merged))


class HostPauses:
    """Per-host pauses from 429/503 + Retry-After: a rate limit is per client, so one feed's
    429 pauses every feed of its host (FreshRSS PR #7760)."""

    def __init__(self) -> None:
        self._until: dict[str, float] = {}

    def note(self, host: str, state: FeedState) -> None:
        """Record ``state.host_pause_until`` (if any) for ``host``."""
        until = state.host_pause_until
        if until is not None and until > self._until.get(host, -math.inf):
            self._until[host] = until

    def delay(self, host: str, due: float) -> float:
        """``due`` moved past the host's pause, if one is running."""
        return max(due, self._until.get(host, -math.inf))
