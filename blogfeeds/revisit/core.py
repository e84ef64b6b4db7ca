"""Revisit scheduling core: per-feed state, one fetch's outcome, and the protocol rules shared
by every policy (conditional GET validators, freshness floors, Retry-After, error backoff, dead
feeds).

Units, everywhere in :mod:`blogfeeds.revisit`:

- an *instant* is a ``float`` of minutes since the Unix epoch, UTC ("epoch minutes");
  :func:`to_minutes` / :func:`from_minutes` convert from/to aware ``datetime``;
- a *duration* (interval, floor, pause, backoff) is a ``float`` of minutes;
- a *rate* stored in :class:`FeedState` is entries per day.

Pure: no Scrapy, no I/O. A policy is a function of ``(FeedState, FetchOutcome)`` returning the
next ``FeedState``, whose ``next_due`` is when the feed should be fetched again.
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

DAY = 1440.0
HOUR = 60.0

#: Never two requests to one feed URL within this many minutes (a strict server answers the
#: second GET inside 60 s with 429: miniflux/v2#2128).
MIN_SPACING = 1.0
#: Server hints (``<ttl>``, ``max-age``/``Expires``, ``skipHours``/``skipDays``, Retry-After) act
#: as floors, each capped at 24 h (Miniflux caps every interval at
#: ``SCHEDULER_ENTRY_FREQUENCY_MAX_INTERVAL`` = 1440 min; Feedbin caps Retry-After at 8 h).
HINT_CAP = DAY
#: 429 without Retry-After pauses the host this long (tt-rss ``HTTP_429_THROTTLE_INTERVAL``).
DEFAULT_THROTTLE = 60.0
#: Error backoff: ``ERROR_BASE * 2**(failures-1)`` minutes, capped at ``ERROR_CAP``.
ERROR_BASE = 30.0
ERROR_CAP = DAY
#: A feed failing for ``DEAD_AFTER`` minutes and at least ``DEAD_FAILURES`` times in a row is dead
#: (tt-rss disables after 30 days; we keep re-checking) and is re-checked every ``DEAD_RECHECK``.
DEAD_AFTER = 14 * DAY
DEAD_FAILURES = 5
DEAD_RECHECK = 7 * DAY
#: Conditional GETs end, and one unconditional GET is made, after this long since the last
#: unconditional one (tt-rss ``MAX_CONDITIONAL_INTERVAL`` = 12 h), so that a validator that lies
#: (Last-Modified pinned to 1980, web.dev#4382) cannot hide entries for long; for a feed
#: revisited less often, after ``CONDITIONAL_INTERVALS`` of its revisit intervals, at most
#: ``MAX_CONDITIONAL_SPAN`` (a flat 12 h made every GET of a feed at level 3 or slower
#: unconditional: 1000 minutes between visits is more than 12 h).
MAX_CONDITIONAL_AGE = 12 * HOUR
CONDITIONAL_INTERVALS = 20
MAX_CONDITIONAL_SPAN = 7 * DAY
#: A Last-Modified older than the newest entry we have seen by more than this is broken.
LM_SLACK = DAY
#: A claimed date within this many minutes of the fetch is "generated now": not a real date.
NOW_SLACK = 1.0

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_minutes(dt: datetime) -> float:
    """Epoch minutes of ``dt``; a naive ``datetime`` is taken as UTC."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH).total_seconds() / 60.0


def from_minutes(minutes: float) -> datetime:
    """Aware UTC ``datetime`` of epoch minutes."""
    return datetime.fromtimestamp(minutes * 60.0, tz=UTC)


def http_date_minutes(value: str | None) -> float | None:
    """Epoch minutes of an HTTP-date (RFC 9110 §5.6.7; IMF-fixdate, RFC 850, asctime), or None."""
    if not value:
        return None
    try:
        dt = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    return to_minutes(dt)


@dataclass(frozen=True, slots=True)
class FeedState:
    """What the scheduler remembers about one feed between fetches (one row of a feeds table).

    Times are epoch minutes, durations minutes, ``rate``/``prior_rate`` entries per day.
    ``level_time`` is the original design's *T* (minutes, kept in [20, 10000]); ``rank`` its RssRank
    0..5 (:func:`blogfeeds.revisit.levels.auto_rank`). ``last_fetch``: the last request of any
    outcome, ``last_success`` the last 2xx/304; ``interval``: the last planned revisit interval;
    ``next_due``: never earlier than ``host_pause_until``, set when the host asked us to back off.
    ``etag``/``last_modified``: the validators as received (echoed byte for byte by
    :func:`conditional_headers`); ``trust_*`` turn off a validator caught lying. ``seen_ids``: a
    bounded summary (hashes) of entry ids seen (:func:`blogfeeds.revisit.hints.split_new_ids`);
    ``newest_claimed``: the newest entry date any document claimed, ignoring future dates and those
    within a minute of the fetch ("generated now"). ``fetches`` counts fetches, ``not_modified``
    those answered 304. The rest is :class:`blogfeeds.revisit.estimate.EstimatingPolicy`'s: decayed
    counts and exposure at two time scales, an hour-of-day profile, recent exactly-dated entries.
    """

    feed_id: str = ""
    level_time: float = 1000.0
    rank: int = 0
    interval: float = 0.0
    next_due: float | None = None
    last_fetch: float | None = None
    last_success: float | None = None
    last_unconditional: float | None = None
    consecutive_failures: int = 0
    failing_since: float | None = None
    dead: bool = False
    host_pause_until: float | None = None
    etag: str | None = None
    last_modified: str | None = None
    trust_etag: bool = True
    trust_last_modified: bool = True
    seen_ids: tuple[str, ...] = ()
    rate: float | None = None
    prior_rate: float | None = None
    window: int = 0
    est_time: float | None = None
    s_slow: float = 0.0
    e_slow: float = 0.0
    s_fast: float = 0.0
    e_fast: float = 0.0
    hours: tuple[float, ...] = ()
    recent: tuple[float, ...] = ()
    newest_entry: float | None = None
    newest_claimed: float | None = None
    fetches: int = 0
    not_modified: int = 0


@dataclass(frozen=True, slots=True)
class FetchOutcome:
    """One fetch of a feed, as the spider saw it.

    - ``fetched_at``: epoch minutes; ``status``: HTTP status, 0 when no response arrived (DNS,
      connect, timeout); ``error``: set when a 2xx body could not be parsed (counts as failure).
    - ``new_entry_dates``: publication dates (epoch minutes, None when undated) of the entries
      whose ids were *not* seen before; ``all_entry_dates``: dates of every entry in the document
      (its length is the feed window K). Empty on a 304. ``conditional``: the request carried
      If-None-Match or If-Modified-Since; ``etag``/``last_modified``: the validators, verbatim.
    - hints (HTTP ones in :mod:`blogfeeds.revisit.hints`, RSS ones read with the feed,
      :mod:`blogfeeds.extract.feedreader.hints`), in minutes: ``max_age`` (freshness left,
      :func:`~blogfeeds.revisit.hints.cache_lifetime`), ``ttl`` (RSS ``<ttl>``), ``retry_after``
      (:func:`~blogfeeds.revisit.hints.parse_retry_after`), ``update_period`` (per update, from
      ``sy:updatePeriod``/``sy:updateFrequency``; a prior only); ``skip_hours`` (UTC hours 0-23),
      ``skip_days`` (0 = Monday).
    """

    fetched_at: float
    status: int = 200
    new_entry_dates: Sequence[float | None] = ()
    all_entry_dates: Sequence[float | None] = ()
    error: str | None = None
    conditional: bool = False
    etag: str | None = None
    last_modified: str | None = None
    max_age: float | None = None
    ttl: float | None = None
    skip_hours: frozenset[int] = field(default_factory=frozenset)
    skip_days: frozenset[int] = field(default_factory=frozenset)
    retry_after: float | None = None
    update_period: float | None = None


class Policy(Protocol):
    """A revisit policy: pure functions of the feed's state and the latest fetch."""

    def initial_state(self, feed_id: str, now: float, rank: int = 0) -> FeedState:
        """State of a newly discovered feed, due at ``now``."""
        ...

    def next_state(self, state: FeedState, outcome: FetchOutcome) -> FeedState:
        """State after ``outcome``; its ``next_due`` is the next fetch time (epoch minutes)."""
        ...


Kind = Literal["ok", "throttled", "failed"]


def classify(outcome: FetchOutcome) -> Kind:
    """``ok`` for a parsed 2xx or a 304; ``throttled`` for 429, or 503 with Retry-After (RFC 9110
    §15.6.4, RFC 6585 §4); ``failed`` otherwise."""
    if outcome.error is None and (200 <= outcome.status < 300 or outcome.status == 304):
        return "ok"
    if outcome.status == 429 or (outcome.status == 503 and outcome.retry_after is not None):
        return "throttled"
    return "failed"


def after_throttle(state: FeedState, outcome: FetchOutcome) -> FeedState:
    """429/503: pause the whole host for Retry-After (or :data:`DEFAULT_THROTTLE`), capped at 24 h.

    The pause is recorded in ``host_pause_until``; the spider applies it to every feed of the
    host (:class:`blogfeeds.revisit.hints.HostPauses`). Not a failure: the feed keeps its
    schedule and never becomes dead from rate limiting (FreshRSS#7571).
    """
    t = outcome.fetched_at
    pause = DEFAULT_THROTTLE if outcome.retry_after is None else outcome.retry_after
    pause = min(max(pause, 0.0), HINT_CAP)
    until = t + pause
    return replace(
        state,
        last_fetch=t,
        host_pause_until=until,
        next_due=max(until, t + MIN_SPACING),
    )


def error_backoff(failures: int) -> float:
    """Minutes to wait after ``failures`` consecutive failures: 30, 60, 120, ... capped at 24 h."""
    if failures <= 0:
        return 0.0
    return min(ERROR_BASE * 2.0 ** min(failures - 1, 20), ERROR_CAP)


def after_failure(state: FeedState, outcome: FetchOutcome, normal: float) -> FeedState:
    """A failed fetch: the interval grows with consecutive failures (never below ``normal``, the
    feed's planned interval); a 410 Gone, or failures for :data:`DEAD_AFTER` and at least
    :data:`DEAD_FAILURES` in a row, make the feed dead: re-checked every :data:`DEAD_RECHECK`."""
    t = outcome.fetched_at
    n = state.consecutive_failures + 1
    since = state.failing_since if state.failing_since is not None else t
    dead = state.dead or outcome.status == 410 or (n >= DEAD_FAILURES and t - since >= DEAD_AFTER)
    if dead:
        interval = DEAD_RECHECK
    else:
        interval = max(normal, error_backoff(n))
        if outcome.retry_after is not None:  # e.g. 502 + Retry-After: this URL only
            interval = max(interval, min(outcome.retry_after, HINT_CAP))
    return replace(
        state,
        last_fetch=t,
        fetches=state.fetches + 1,
        consecutive_failures=n,
        failing_since=since,
        dead=dead,
        next_due=t + max(interval, MIN_SPACING),
    )


def hint_floor(outcome: FetchOutcome) -> float:
    """The politeness floor from ``<ttl>`` and the HTTP freshness lifetime, capped at 24 h."""
    floor = max(outcome.ttl or 0.0, outcome.max_age or 0.0)
    return min(floor, HINT_CAP)


def skip_until(due: float, skip_hours: frozenset[int], skip_days: frozenset[int]) -> float:
    """First instant ≥ ``due`` outside RSS ``skipHours`` (UTC hours) and ``skipDays`` (0 = Monday),
    pushed at most 24 h (RSS 2.0 spec, "skipHours", "skipDays")."""
    if not skip_hours and not skip_days:
        return due
    t = due
    for _ in range(24 * 8):
        hour = int(t // HOUR) % 24
        weekday = (int(t // DAY) + 3) % 7  # 1970-01-01 was a Thursday
        if hour not in skip_hours and weekday not in skip_days:
            return t
        t = (math.floor(t / HOUR) + 1) * HOUR
        if t - due >= HINT_CAP:
            return due + HINT_CAP
    return due + HINT_CAP


def _lm_broken(
    state: FeedState, outcome: FetchOutcome, changed: bool, newest: float | None
) -> bool:
    """Last-Modified lies: older than entries we have seen, or frozen while new entries came."""
    lm = http_date_minutes(outcome.last_modified)
    if lm is not None and newest is not None and lm < newest - LM_SLACK:
        return True
    return (
        changed
        and outcome.status != 304
        and outcome.last_modified is not None
        and outcome.last_modified == state.last_modified
    )


def after_success(
    state: FeedState,
    outcome: FetchOutcome,
    interval: float,
    *,
    changed: bool,
    **updates: Any,
) -> FeedState:
    """Common bookkeeping after a 2xx/304, then schedule ``interval`` minutes out.

    Validators are stored from *this* response, each on its own (feedbin#726, miniflux#2675);
    a 304 without them keeps the old ones. A 200 with new entries but an unchanged ETag
    (miniflux-legacy#218) distrusts the ETag; a Last-Modified older than seen entries or frozen
    while entries change (web.dev#4382) distrusts Last-Modified. The interval is raised to the
    hint floor (:func:`hint_floor`), then moved out of skipHours/skipDays.
    """
    t = outcome.fetched_at
    not_modified = outcome.status == 304
    etag = outcome.etag if (outcome.etag is not None or not not_modified) else state.etag
    lm = (
        outcome.last_modified
        if (outcome.last_modified is not None or not not_modified)
        else state.last_modified
    )
    trust_etag = state.trust_etag
    if (
        changed  # policies never report the first fetch as a change
        and not not_modified
        and outcome.etag is not None
        and outcome.etag == state.etag
    ):
        trust_etag = False
    newest = state.newest_claimed
    for d in outcome.all_entry_dates if not not_modified else ():
        if d is not None and d < t - NOW_SLACK and (newest is None or d > newest):
            newest = d
    trust_lm = state.trust_last_modified and not _lm_broken(state, outcome, changed, newest)
    interval = max(interval, hint_floor(outcome), MIN_SPACING)
    due = skip_until(t + interval, outcome.skip_hours, outcome.skip_days)
    if state.host_pause_until is not None and state.host_pause_until > due:
        due = state.host_pause_until
    return replace(
        state,
        interval=interval,
        next_due=due,
        last_fetch=t,
        fetches=state.fetches + 1,
        not_modified=state.not_modified + not_modified,
        last_success=t,
        last_unconditional=(
            t if not outcome.conditional and not not_modified else state.last_unconditional
        ),
        consecutive_failures=0,
        failing_since=None,
        dead=False,
        etag=etag,
        last_modified=lm,
        trust_etag=trust_etag,
        trust_last_modified=trust_lm,
        newest_claimed=newest,
        **updates,
    )


def conditional_span(interval: float) -> float:
    """Minutes of conditional GETs after an unconditional one, for a feed revisited every
    ``interval`` minutes: 12 h, or 20 intervals when that is longer, at most 7 days. Without
    change, 304 answers are then 95 % of a feed's GETs up to level 2 (200 minutes), 90 % at
    level 3 and 80 % at level 4; a feed at level 5 (a week) is fetched in full."""
    return min(max(MAX_CONDITIONAL_AGE, CONDITIONAL_INTERVALS * interval), MAX_CONDITIONAL_SPAN)


def conditional_headers(state: FeedState, now: float) -> dict[str, str]:
    """Request headers for a conditional GET (RFC 9110 §13.1): the stored validators verbatim.

    A validator caught lying is left out. The GET is unconditional again once
    :func:`conditional_span` (minutes) has passed since the last unconditional one, so a server
    that answers 304 wrongly cannot hide entries for long. The If-Modified-Since value is the
    received Last-Modified, never a date we format ourselves (servers match it byte for byte:
    MarginaliaSearch#159, FreshRSS#6056).
    """
    if state.last_unconditional is None or now - state.last_unconditional >= conditional_span(
        state.interval
    ):
        return {}
    headers: dict[str, str] = {}
    if state.etag and state.trust_etag:
        headers["If-None-Match"] = state.etag
    if state.last_modified and state.trust_last_modified:
        headers["If-Modified-Since"] = state.last_modified
    return headers
