"""Revisit scheduling: the level policy number by number, the estimating policy on scenarios from
real bug reports (shared/research/revisit-cases.md), the protocol helpers, and a bench smoke run.

Times are epoch minutes (UTC) as in blogfeeds.revisit; scenarios run on a virtual clock.
"""

from __future__ import annotations

import contextlib
import importlib.util
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.revisit import (
    LEVELS,
    EstimatingPolicy,
    FeedState,
    FetchBudget,
    FetchOutcome,
    HostPauses,
    LevelPolicy,
    auto_rank,
    cache_lifetime,
    conditional_headers,
    conditional_span,
    from_minutes,
    is_guid_rewrite,
    level_interval,
    level_of,
    make_policy,
    parse_retry_after,
    remember_ids,
    split_new_ids,
    to_minutes,
)
from blogfeeds.revisit.core import DEAD_RECHECK, error_backoff
from blogfeeds.revisit.estimate import snap_to_level
from blogfeeds.revisit.levels import update_level_time

Post = tuple[str, float | None, float]  # (id, claimed date or None = "now", visible from)
DAY = 1440.0
T0 = to_minutes(datetime(2024, 3, 4, tzinfo=UTC))  # a Monday, 00:00 UTC


def http_date(minutes: float) -> str:
    return format_datetime(from_minutes(minutes), usegmt=True)


# ------------------------------------------------------------------------------------------
# Level policy: every rule with numbers
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("t", "level"),
    [
        (1, 1),
        (19.9, 1),
        (20, 1),
        (199.9, 1),
        (200, 2),
        (250, 2),
        (999, 2),
        (1000, 3),
        (1999, 3),
        (2000, 4),
        (9999, 4),
        (10000, 5),
    ],
)
def test_level_is_highest_level_not_above_t(t: float, level: int) -> None:
    assert level_of(t) == level
    assert level_interval(t) == LEVELS[level - 1]


def test_level_values() -> None:
    assert LEVELS == (20.0, 200.0, 1000.0, 2000.0, 10000.0)
    assert level_interval(250) == 200.0  # the example


@pytest.mark.parametrize(
    ("t", "rank", "interval"),
    [(10000, 3, 200.0), (10000, 0, 10000.0), (10000, 4, 20.0), (250, 5, 20.0), (2500, 1, 1000.0)],
)
def test_rss_rank_shifts_level_down(t: float, rank: int, interval: float) -> None:
    assert level_interval(t, rank) == interval


@pytest.mark.parametrize("rank", [-1, 6, 1.5, True])
def test_bad_rank_is_a_clear_error(rank: object) -> None:
    with pytest.raises(ValueError, match="RssRank"):
        level_of(1000, rank)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("t", "changed", "after"),
    [
        (1000, True, 1000 / 1.2),
        (1000, False, 1200.0),
        (250, True, 250 / 1.2),
        (21, True, 20.0),  # 17.5 clamped up
        (20, True, 20.0),
        (9000, False, 10000.0),  # 10800 clamped down
        (10000, False, 10000.0),
    ],
)
def test_update_level_time(t: float, changed: bool, after: float) -> None:
    assert update_level_time(t, changed) == pytest.approx(after)


@pytest.mark.parametrize(
    ("inbound", "rank"),
    [(0, 0), (1, 0), (2, 1), (4, 1), (5, 2), (10, 3), (25, 4), (49, 4), (50, 5)],
)
def test_auto_rank(inbound: int, rank: int) -> None:
    assert auto_rank(inbound) == rank


def ok(t: float, new: int = 0, total: int = 10, **kw: object) -> FetchOutcome:
    """A 200 at ``t`` whose document has ``total`` entries, ``new`` of them unseen, dated 1 h
    before ``t`` (new) or a week back (old)."""
    dates: list[float | None] = [t - 60.0] * new
    dates += [t - 7 * DAY] * (total - new)
    return FetchOutcome(
        fetched_at=t,
        new_entry_dates=dates[:new],
        all_entry_dates=dates,
        **kw,  # type: ignore[arg-type]
    )


def due(s: FeedState) -> float:
    assert s.next_due is not None
    return s.next_due


def test_level_policy_sequence_number_by_number() -> None:
    policy = LevelPolicy()
    s = policy.initial_state("f", T0)
    assert (s.level_time, s.next_due) == (1000.0, T0)
    t = T0
    s = policy.next_state(s, ok(t, new=10))  # first fetch: establishes the seen set only
    assert s.level_time == 1000.0 and s.next_due == t + 1000.0
    expected = [(1200.0, 1000.0), (1440.0, 1000.0), (1728.0, 1000.0), (2073.6, 2000.0)]
    for level_time, interval in expected:  # unchanged ×1.2 each time
        t = due(s)
        s = policy.next_state(s, ok(t))
        assert s.level_time == pytest.approx(level_time)
        assert s.next_due == pytest.approx(t + interval)
    t = due(s)
    s = policy.next_state(s, ok(t, new=1))  # changed: /1.2
    assert s.level_time == pytest.approx(1728.0)
    assert s.next_due == pytest.approx(t + 1000.0)
    t = due(s)
    s = policy.next_state(s, FetchOutcome(fetched_at=t, status=304))  # 304 = unchanged
    assert s.level_time == pytest.approx(2073.6)


def test_level_policy_rank_from_state() -> None:
    policy = LevelPolicy()
    s = replace(policy.initial_state("f", T0, rank=3), level_time=10000.0)
    s = policy.next_state(s, ok(T0, new=10))
    assert s.next_due == T0 + 200.0  # Level[5] with RssRank 3 → Level[2]


def test_level_policy_clamps_t() -> None:
    policy = LevelPolicy(initial_time=20.0)
    s = policy.next_state(policy.initial_state("f", T0), ok(T0, new=5))
    s = policy.next_state(s, ok(T0 + 20, new=5))
    assert s.level_time == 20.0 and s.next_due == T0 + 40
    with pytest.raises(ValueError):
        LevelPolicy(initial_time=5.0)


def test_level_changed_means_new_ids_not_bytes() -> None:
    """Body and ETag regenerated on every request: no new ids, so T must grow."""
    policy = LevelPolicy()
    s = policy.next_state(policy.initial_state("f", T0), ok(T0, new=10, etag='"v0"'))
    t = T0
    for i in range(1, 6):
        t = due(s)
        before = s.level_time
        s = policy.next_state(s, ok(t, etag=f'"v{i}"'))
        assert s.level_time == pytest.approx(min(before * 1.2, 10000))


def test_level_guid_rewrite_is_not_a_change() -> None:
    policy = LevelPolicy()
    s = policy.next_state(policy.initial_state("f", T0), ok(T0, new=10))
    t = due(s)
    old = [T0 - 7 * DAY] * 10  # every id new, every date old
    s = policy.next_state(s, FetchOutcome(t, new_entry_dates=old, all_entry_dates=old))
    assert s.level_time == pytest.approx(1200.0)


# ------------------------------------------------------------------------------------------
# Protocol helpers
# ------------------------------------------------------------------------------------------
def test_parse_retry_after() -> None:
    assert parse_retry_after("120", T0) == 2.0
    assert parse_retry_after(b" 30 ", T0) == 0.5
    assert parse_retry_after(http_date(T0 + 120), T0) == pytest.approx(120.0)
    assert parse_retry_after(http_date(T0 - 120), T0) == 0.0
    assert parse_retry_after("Sunday, 03-Mar-24 23:00:00 GMT", T0) == 0.0  # RFC 850, past
    assert parse_retry_after("999999", T0) == 1440.0  # capped at 24 h
    assert parse_retry_after(http_date(T0 + 3 * DAY), T0) == 1440.0
    for bad in (None, "", "soon", "-5", "1.5"):
        assert parse_retry_after(bad, T0) is None


def test_cache_lifetime() -> None:
    assert cache_lifetime({"Cache-Control": "public, max-age=300", "Age": "120"}, T0) == 3.0
    assert cache_lifetime({"cache-control": "max-age=3600"}, T0) == 60.0
    # Expires relative to Date, minus Age
    h = {"Expires": http_date(T0 + 5), "Date": http_date(T0), "Age": "60"}
    assert cache_lifetime(h, T0 + 100) == pytest.approx(4.0)
    assert cache_lifetime({"Expires": http_date(T0 + 5)}, T0) == pytest.approx(5.0)
    assert cache_lifetime({"Expires": "0"}, T0) == 0.0
    assert cache_lifetime({"Cache-Control": "no-cache", "Expires": http_date(T0 + 60)}, T0) == 0
    assert cache_lifetime({"Cache-Control": "max-age=60", "Age": "600"}, T0) == 0.0
    assert cache_lifetime({"Content-Type": "text/xml"}, T0) is None
    # Scrapy-style headers: bytes keys, list values
    assert cache_lifetime({b"Cache-Control": [b"max-age=600"]}, T0) == 10.0


def test_is_guid_rewrite() -> None:
    old = [T0 - 2 * DAY] * 10
    assert is_guid_rewrite(old, old, T0 - DAY)
    assert not is_guid_rewrite(old, old, None)  # nothing seen yet
    fresh = [T0 - 10.0] * 10
    assert not is_guid_rewrite(fresh, fresh, T0 - DAY)  # a real window overflow
    assert not is_guid_rewrite(old[:2], old, T0 - DAY)  # only 2 new
    assert not is_guid_rewrite(old[:4], old, T0 - DAY)  # less than half the window


def test_seen_ids_summary() -> None:
    s = remember_ids(FeedState(), ["a", "b"])
    assert split_new_ids(s, ["a", "c", "b", "d"]) == [False, True, False, True]
    s = remember_ids(s, (str(i) for i in range(100)))
    assert len(s.seen_ids) == 102  # the older ids are kept up to 300 in all
    s = remember_ids(s, (str(i) for i in range(1000)))
    assert len(s.seen_ids) == 1000  # a document is remembered whole: none of it looks new
    assert not any(split_new_ids(s, [str(i) for i in range(1000)]))
    s = remember_ids(s, ["x", "y"])
    assert len(s.seen_ids) == 300


def test_host_pauses() -> None:
    pauses = HostPauses()
    pauses.note("h", FeedState(host_pause_until=T0 + 60))
    pauses.note("h", FeedState(host_pause_until=T0 + 30))
    pauses.note("h", FeedState())
    assert pauses.delay("h", T0) == T0 + 60
    assert pauses.delay("h", T0 + 90) == T0 + 90
    assert pauses.delay("other", T0) == T0


# ------------------------------------------------------------------------------------------
# A fake feed server on a virtual clock, for the estimating policy's scenarios
# ------------------------------------------------------------------------------------------
@dataclass
class FakeFeed:
    """Entries (id, claimed date or None = "now", visible from); the document shows the
    newest ``k``. ``respond(t, request_headers)`` returns (status, response headers)."""

    posts: list[Post]
    k: int = 20
    respond: Callable[[float, dict[str, str]], tuple[int, dict[str, str]]] | None = None
    seen: set[str] = field(default_factory=set)
    requests: list[float] = field(default_factory=list)

    def fetch(self, state: FeedState, t: float) -> FetchOutcome:
        request = conditional_headers(state, t)
        self.requests.append(t)
        status, headers = (200, {}) if self.respond is None else self.respond(t, request)
        if status != 200:
            return FetchOutcome(
                fetched_at=t,
                status=status,
                conditional=bool(request),
                etag=headers.get("ETag"),
                last_modified=headers.get("Last-Modified"),
                retry_after=parse_retry_after(headers.get("Retry-After"), t),
            )
        window = [p for p in self.posts if p[2] <= t][-self.k :]
        dates = [t if d is None else d for _, d, _ in window]
        new = [t if d is None else d for i, d, _ in window if i not in self.seen]
        self.seen.update(i for i, _, _ in window)
        return FetchOutcome(
            fetched_at=t,
            new_entry_dates=new,
            all_entry_dates=dates,
            conditional=bool(request),
            etag=headers.get("ETag"),
            last_modified=headers.get("Last-Modified"),
            ttl=float(headers["ttl"]) if "ttl" in headers else None,
        )


def poisson_posts(
    rate_per_day: float, days: float, seed: int, date: Callable[[float], float | None] = float
) -> list[Post]:
    rng = random.Random(seed)
    t, out = T0 - 10 * DAY, list[Post]()
    while True:
        t += rng.expovariate(rate_per_day / DAY)
        if t > T0 + days * DAY:
            return out
        out.append((f"id{len(out)}", date(t), t))


def run(
    policy: EstimatingPolicy | LevelPolicy, feed: FakeFeed, days: float
) -> list[tuple[FetchOutcome, FeedState]]:
    s = policy.initial_state("feed", T0)
    log = []
    while s.next_due is not None and s.next_due < T0 + days * DAY:
        outcome = feed.fetch(s, s.next_due)
        s = policy.next_state(s, outcome)
        assert s.next_due is not None and s.next_due >= outcome.fetched_at + 1.0
        log.append((outcome, s))
    return log


def estimating(budget: float = 4.0) -> EstimatingPolicy:
    """A policy whose budget already holds a population of 99 feeds at 0.5 entries/day."""
    b = FetchBudget(budget)
    for i in range(99):
        b.set_law(f"other{i}", (0.5 / DAY) ** 0.5)
    return EstimatingPolicy(b)


# ------------------------------------------------------------------------------------------
# Estimating policy scenarios from real reports
# ------------------------------------------------------------------------------------------
def test_strict_server_429s_a_second_get_within_60s() -> None:
    """miniflux/v2#2128: two GETs within 60 s get 429 Retry-After 3600. Discovery's response is
    the first fetch; no request ever comes within 60 s, so no 429 in 7 days."""
    last: list[float] = []

    def respond(t: float, _: dict[str, str]) -> tuple[int, dict[str, str]]:
        too_soon = bool(last) and t - last[-1] < 1.0
        last.append(t)
        return (429, {"Retry-After": "3600"}) if too_soon else (200, {})

    for policy in (estimating(), LevelPolicy()):
        last.clear()
        feed = FakeFeed(poisson_posts(5, 7, seed=1), respond=respond)
        log = run(policy, feed, 7)
        assert all(o.status == 200 for o, _ in log)
        assert min(b - a for a, b in zip(feed.requests, feed.requests[1:], strict=False)) >= 1.0


def test_429_pauses_the_host_for_retry_after() -> None:
    policy = estimating()
    s = policy.next_state(policy.initial_state("f", T0), ok(T0, new=5))
    t = T0 + 100
    when = http_date(t + 120)
    s = policy.next_state(s, FetchOutcome(t, status=429, retry_after=parse_retry_after(when, t)))
    assert s.host_pause_until == pytest.approx(t + 120) and s.next_due == pytest.approx(t + 120)
    assert s.consecutive_failures == 0 and not s.dead
    s = policy.next_state(s, FetchOutcome(t, status=503, retry_after=0.5))  # E4: 30 s, not hours
    assert s.next_due == pytest.approx(t + 1.0)  # only raised to the 1-min spacing
    s = policy.next_state(s, FetchOutcome(t, status=429))  # no Retry-After: 1 h
    assert s.host_pause_until == t + 60
    s = policy.next_state(s, FetchOutcome(t, status=503, retry_after=10 * DAY))
    assert s.host_pause_until == t + DAY  # capped at 24 h


def test_etag_regenerated_on_every_200() -> None:
    """feedbin#726: a new ETag on every 200 with an identical body. The latest ETag is always
    the one sent; the feed never counts as changed, so the interval does not shrink."""
    counter = [0]

    def respond(t: float, request: dict[str, str]) -> tuple[int, dict[str, str]]:
        if request.get("If-None-Match") == f'"e{counter[0]}"':
            return 304, {}
        counter[0] += 1
        return 200, {"ETag": f'"e{counter[0]}"'}

    feed = FakeFeed([("a", T0 - 3 * DAY, T0 - 3 * DAY), ("b", T0 - 2 * DAY, T0 - 2 * DAY)])
    feed.respond = respond
    log = run(estimating(), feed, 3)
    rates = [s.rate or 0.0 for _, s in log]
    assert rates == sorted(rates, reverse=True)  # nothing counts as new: the rate only decays
    assert log[-1][1].interval > log[0][1].interval
    latest, current = None, None
    for outcome, state in log:
        if outcome.conditional:  # every conditional GET carried the latest ETag
            assert outcome.status == 304
        else:  # the only full responses: first fetch and the forced refresh every 12 h
            assert latest is None or outcome.fetched_at - latest >= 12 * 60
            latest, current = outcome.fetched_at, outcome.etag
        assert state.etag == current
    assert sum(o.status == 304 for o, _ in log) >= 4


@pytest.mark.parametrize(
    ("interval", "span"),
    [(20, 12 * 60), (200, 20 * 200), (1000, 7 * 1440), (10000, 7 * 1440)],
)
def test_conditional_gets_last_12_hours_or_20_intervals_at_most_a_week(
    interval: float, span: float
) -> None:
    """The GET is unconditional again ``span`` minutes after the last unconditional one: 12 h for
    a fast feed, 20 revisit intervals for a slower one, at most 7 days."""
    state = replace(
        estimating().initial_state("f", T0),
        interval=interval,
        etag='"1"',
        last_unconditional=T0,
    )
    assert conditional_span(interval) == span
    assert conditional_headers(state, T0 + min(span - 1, interval)) == {"If-None-Match": '"1"'}
    assert conditional_headers(state, T0 + span) == {}


def test_last_modified_constant_while_etag_changes() -> None:
    """miniflux/v2#2675: Apache's ETag changes while Last-Modified stays; both are stored."""
    policy = estimating()
    lm = http_date(T0 - DAY)
    s = policy.next_state(
        policy.initial_state("f", T0), ok(T0, new=3, etag='"1"', last_modified=lm)
    )
    s = policy.next_state(s, ok(T0 + 60, etag='"2"', last_modified=lm))
    assert conditional_headers(s, T0 + 70) == {"If-None-Match": '"2"', "If-Modified-Since": lm}
    s = policy.next_state(s, FetchOutcome(T0 + 120, status=304, conditional=True))
    assert (s.etag, s.last_modified) == ('"2"', lm)  # a bare 304 keeps the validators


def test_if_modified_since_echoed_byte_for_byte() -> None:
    """MarginaliaSearch#159 / FreshRSS#6056: the server 304s only an exact string match."""
    lm = "Monday, 04-Mar-24 08:00:00 GMT"  # RFC 850 form, exactly as sent by the server

    def respond(t: float, request: dict[str, str]) -> tuple[int, dict[str, str]]:
        if request.get("If-Modified-Since") == lm:
            return 304, {}
        return 200, {"Last-Modified": lm}

    feed = FakeFeed([("a", T0 - 3 * DAY, T0 - 3 * DAY)], respond=respond)
    log = run(estimating(), feed, 2)
    conditional = [o for o, _ in log if o.conditional]
    assert conditional and all(o.status == 304 for o in conditional)


def test_last_modified_frozen_in_1980() -> None:
    """web.dev#4382: Last-Modified 1980, any later IMS gets a 304 even after new entries. The
    validator is distrusted at once (older than the entries) and new entries still arrive."""
    lm = "Tue, 01 Jan 1980 00:00:01 GMT"

    def respond(t: float, request: dict[str, str]) -> tuple[int, dict[str, str]]:
        if "If-Modified-Since" in request:
            return 304, {}
        return 200, {"Last-Modified": lm}

    feed = FakeFeed(poisson_posts(4, 5, seed=3), respond=respond)
    log = run(estimating(), feed, 5)
    assert not log[0][1].trust_last_modified
    assert all("If-Modified-Since" not in conditional_headers(s, s.next_due or 0) for _, s in log)
    assert not any(o.status == 304 for o, _ in log)
    end = log[-1][0].fetched_at
    assert {i for i, _, v in feed.posts if T0 < v <= end} <= feed.seen


def test_same_etag_but_new_entries() -> None:
    """miniflux-legacy#218: a 200 with new entries and the old ETag is a change; the ETag is
    not trusted any more."""
    policy = estimating()
    s = policy.next_state(policy.initial_state("f", T0), ok(T0, new=5, etag='"x"'))
    rate = s.rate
    s = policy.next_state(s, ok(T0 + 300, new=4, etag='"x"'))
    assert s.rate is not None and rate is not None and s.rate > rate
    assert not s.trust_etag
    assert "If-None-Match" not in conditional_headers(s, T0 + 310)


def rate_after(posts: list[Post], days: float, k: int = 20) -> float:
    log = run(estimating(), FakeFeed(posts, k=k), days)
    rate = log[-1][1].rate
    assert rate is not None
    return rate


def test_every_item_dated_now() -> None:
    """Miniflux WeeklyFeedEntryCount on generators stamping every item with "now": no bootstrap
    from equal dates, the rate comes from first-seen counts (D4)."""
    posts = poisson_posts(12, 10, seed=4, date=lambda t: None)
    policy = estimating()
    first = policy.next_state(policy.initial_state("f", T0), FakeFeed(posts).fetch(FeedState(), T0))
    assert first.rate is not None and first.rate < 2  # all dates equal: the prior, not a spike
    log = run(estimating(), FakeFeed(posts), 10)
    assert log[-1][1].rate == pytest.approx(12, rel=0.3)
    for _, s in log:  # "now" is not a posting time: no profile, no phase lock
        assert s.recent == () and sum(s.hours) == 0


def test_items_dated_30_days_ahead() -> None:
    """NetNewsWire#5217: future dates are clamped into the fetch window; the rate matches the
    same feed dated correctly."""
    honest = poisson_posts(6, 10, seed=5)
    future: list[Post] = [(i, (d or 0) + 30 * DAY, v) for i, d, v in honest]
    r_future, r_honest = rate_after(future, 10), rate_after(honest, 10)
    assert r_future == pytest.approx(r_honest, rel=0.2)
    log = run(estimating(), FakeFeed(future), 10)
    assert all((s.newest_entry or 0) <= o.fetched_at for o, s in log)


def test_all_guids_rewritten_at_once() -> None:
    """miniflux/v2#3390: every id changes (http→https) on day 5; no rate spike."""
    posts = poisson_posts(3, 10, seed=6)
    policy = estimating()
    feed = FakeFeed(posts)
    s = policy.initial_state("f", T0)
    while s.next_due is not None and s.next_due < T0 + 5 * DAY:
        s = policy.next_state(s, feed.fetch(s, s.next_due))
    before_rate, before_interval = s.rate, s.interval
    feed.seen = {"https:" + i for i in feed.seen}  # all known ids are now "different"
    assert s.next_due is not None
    outcome = feed.fetch(s, s.next_due)
    assert len(outcome.new_entry_dates) == len(outcome.all_entry_dates)
    s = policy.next_state(s, outcome)
    assert s.rate is not None and before_rate is not None
    assert s.rate <= 1.2 * before_rate
    assert s.interval >= 0.8 * before_interval


def test_ttl_60_with_real_rate_20_per_day() -> None:
    """E1/E2: <ttl>60</ttl> is a floor (never faster than 60 min), the rate is still learned."""
    feed = FakeFeed(poisson_posts(20, 8, seed=7), respond=lambda t, r: (200, {"ttl": "60"}))
    log = run(estimating(budget=20.0), feed, 8)
    assert min(s.next_due - o.fetched_at for o, s in log if s.next_due) >= 60.0
    assert log[-1][1].rate == pytest.approx(20, rel=0.3)
    # without the hint this budget would poll faster than hourly
    free = run(estimating(budget=20.0), FakeFeed(poisson_posts(20, 8, seed=7)), 8)
    assert min(s.interval for _, s in free[len(free) // 2 :]) < 60.0


def test_sy_update_period_is_only_a_prior() -> None:
    """commafeed#1672 / WordPress's default sy:updatePeriod hourly: learned rate wins."""
    posts = [p for p in poisson_posts(2, 14, seed=8) if p[2] > T0]  # a new feed, no history
    policy = estimating()
    feed = FakeFeed(posts)
    s = policy.initial_state("f", T0)
    s = policy.next_state(s, replace(feed.fetch(s, T0), update_period=60.0))
    assert s.prior_rate == 24.0
    while s.next_due is not None and s.next_due < T0 + 14 * DAY:
        s = policy.next_state(s, feed.fetch(s, s.next_due))
    assert s.rate == pytest.approx(2, rel=0.5)


def test_bootstrap_from_first_document() -> None:
    """miniflux/v2#2166: 50 entries over the last 30 h → about 39/day at once, a short interval."""
    dates: list[float | None] = [T0 - 30 * 60 + i * 30 * 60 / 49 for i in range(50)]
    outcome = FetchOutcome(T0, new_entry_dates=dates, all_entry_dates=dates)
    s = estimating(budget=6.0).next_state(FeedState(feed_id="f"), outcome)
    assert s.rate == pytest.approx(39.2, rel=0.1)
    assert s.interval <= 40.0
    cold = estimating(budget=6.0).next_state(FeedState(feed_id="f"), ok(T0, new=1, total=1))
    assert cold.interval > 180.0  # what a cold start without the bootstrap would do


def test_window_guard() -> None:
    """F4: 200 entries/day with a 10-entry window: the interval stays below 0.5·K/λ̂."""
    log = run(estimating(budget=1.0), FakeFeed(poisson_posts(200, 3, seed=9), k=10), 3)
    for _, s in log[5:]:
        assert s.rate is not None
        assert s.interval <= 0.5 * 10 / (s.rate / DAY) + 1e-6


def test_skip_hours_and_days() -> None:
    policy = estimating()
    at = T0 + 22 * 60  # Monday 22:00 UTC
    o = replace(ok(at, new=10), skip_hours=frozenset({23, 0, 1, 2}))
    s = policy.next_state(policy.initial_state("f", at), o)
    assert s.next_due is not None
    hour = from_minutes(s.next_due).hour
    assert hour not in {23, 0, 1, 2}
    friday = T0 + 4.9 * DAY  # Friday 21:36 UTC
    o = replace(ok(friday, new=10), skip_days=frozenset({5}))
    s = policy.next_state(policy.initial_state("f", T0), o)
    assert s.next_due == T0 + 6 * DAY  # Saturday skipped: Sunday 00:00
    s = policy.next_state(policy.initial_state("f", T0), replace(o, skip_days=frozenset({5, 6})))
    assert s.next_due == pytest.approx(friday + s.interval + DAY)  # pushed at most 24 h
    every = replace(ok(T0, new=10), skip_hours=frozenset(range(24)))
    s = policy.next_state(policy.initial_state("f", T0), every)
    assert s.next_due == pytest.approx(T0 + s.interval + DAY)


def test_max_age_floor_capped_at_24h() -> None:
    policy = estimating(budget=50.0)
    s = policy.next_state(policy.initial_state("f", T0), replace(ok(T0, new=10), max_age=300.0))
    assert s.interval >= 300.0
    s = policy.next_state(s, replace(ok(T0 + 300, new=1), max_age=30 * DAY))
    assert s.interval <= DAY


def test_errors_back_off_then_dead_then_revive() -> None:
    assert [error_backoff(n) for n in range(1, 8)] == [30, 60, 120, 240, 480, 960, 1440]
    policy = LevelPolicy(initial_time=20.0)
    s = policy.next_state(policy.initial_state("f", T0), ok(T0, new=3))
    t, waits = T0, []
    while not s.dead:
        t = s.next_due or t
        s = policy.next_state(s, FetchOutcome(t, status=500))
        waits.append((s.next_due or 0) - t)
    assert waits[:4] == [30, 60, 120, 240]
    assert t - T0 >= 14 * DAY and s.consecutive_failures >= 5
    assert waits[-1] == DEAD_RECHECK
    s = policy.next_state(s, ok(s.next_due or 0, new=1))
    assert not s.dead and s.consecutive_failures == 0 and s.failing_since is None
    gone = policy.next_state(s, FetchOutcome(t, status=410))
    assert gone.dead
    parse_error = policy.next_state(s, FetchOutcome(t, status=200, error="not a feed"))
    assert parse_error.consecutive_failures == 1


def test_level_mode_snaps_to_levels() -> None:
    snapped = [snap_to_level(x) for x in (5, 60, 70, 400, 1500, 4000, 5000, 1e6)]
    assert snapped == [20, 20, 200, 200, 2000, 2000, 10000, 10000]
    assert snap_to_level(190, ceiling=150) == 20
    policy = EstimatingPolicy(4.0, level_mode=True)
    log = run(policy, FakeFeed(poisson_posts(3, 5, seed=10)), 5)
    assert {s.interval for _, s in log} <= set(LEVELS)


def test_budget_is_met_and_square_root_law() -> None:
    """40 Poisson feeds sharing one FetchBudget: fetches/feed/day ≈ the budget, and a feed
    posting 16× more is fetched about 4× more often (√ law), not 16×."""
    budget = FetchBudget(4.0)
    policy = EstimatingPolicy(budget, profile=False, phase_lock=False)
    rates = [0.5, 8.0] * 20
    feeds = [FakeFeed(poisson_posts(r, 20, seed=100 + i), k=50) for i, r in enumerate(rates)]
    states = [policy.initial_state(f"f{i}", T0) for i in range(len(feeds))]
    counts = [0] * len(feeds)
    end = T0 + 20 * DAY
    while True:
        i = min(range(len(states)), key=lambda j: states[j].next_due or end)
        t = states[i].next_due or end
        if t >= end:
            break
        states[i] = policy.next_state(states[i], feeds[i].fetch(states[i], t))
        if t >= T0 + 6 * DAY:
            counts[i] += 1
    per_day = sum(counts) / len(counts) / 14
    assert per_day == pytest.approx(4.0, rel=0.15)
    slow = sum(counts[0::2]) / 20
    fast = sum(counts[1::2]) / 20
    assert 2.5 < fast / slow < 6.0


def test_make_policy() -> None:
    assert isinstance(make_policy(), LevelPolicy)
    est = make_policy("estimate", budget_per_feed_day=2.0)
    assert isinstance(est, EstimatingPolicy) and est.budget.per_feed_day == 2.0
    with pytest.raises(ValueError, match="unknown revisit policy"):
        make_policy("nutch")
    with pytest.raises(ValueError):
        FetchBudget(0)


def test_time_units() -> None:
    dt = datetime(2024, 3, 4, 12, 30, tzinfo=UTC)
    assert from_minutes(to_minutes(dt)) == dt
    assert to_minutes(dt.replace(tzinfo=None)) == to_minutes(dt)
    assert to_minutes(dt + timedelta(minutes=90)) - to_minutes(dt) == 90


# ------------------------------------------------------------------------------------------
# The benchmark runs and keeps its floors on a small population
# ------------------------------------------------------------------------------------------
@contextlib.contextmanager
def bench_revisit() -> Iterator[Any]:
    """``bench/revisit.py`` as a module (registered while in use: its workers pickle by name)."""
    path = Path(__file__).resolve().parents[1] / "bench" / "revisit.py"
    spec = importlib.util.spec_from_file_location("bench_revisit", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_revisit"] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules["bench_revisit"]


def test_bench_reads_the_corpus_only_where_blogfeeds_shared_says(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("BLOGFEEDS_SHARED", str(tmp_path / "missing"))
    with bench_revisit() as module:
        assert module.hub_share_of_corpus() is None


def test_bench_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    with bench_revisit() as module:
        code = module.main(["--feeds", "300", "--days", "7", "--procs", "1", "--quick"])
    out = capsys.readouterr().out
    assert code == 0
    assert "| estimating policy |" in out and "| original level policy (default) |" in out
