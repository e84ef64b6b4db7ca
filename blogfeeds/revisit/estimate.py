"""Estimating revisit policy: a feed's posting rate from its own entries, and the revisit interval
from that rate under a global fetch budget. The estimators, their constants and references:
docs/revisiting.md.

**Rate** (revisit.md §2 "Estimators"): a Gamma-Poisson estimate λ̂ of new entries per fetch
interval, with exponential forgetting at two time scales; entry dates are clamped into the
fetch interval so that no claimed date can move λ̂, a GUID rewrite
(:func:`~blogfeeds.revisit.hints.is_guid_rewrite`) counts only its genuinely new entries, and a
silence cap lets dead feeds slow down.

**Interval** (Sia, Cho & Cho, IEEE TKDE 2007): fetch rates ∝ √(wᵢλᵢ) (the square-root law)
minimise the item-weighted discovery delay under the budget, :class:`FetchBudget` setting the
threshold κ so that all feeds together use it; then a window guard, an hour-of-day profile and
phase lock, optional snapping to the five levels (:func:`snap_to_level`) and the protocol floors
of :mod:`blogfeeds.revisit.core`. RssRank r weighs a feed by w = 4**r.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from blogfeeds.revisit.core import (
    DAY,
    HOUR,
    NOW_SLACK,
    FeedState,
    FetchOutcome,
    after_failure,
    after_success,
    after_throttle,
    classify,
)
from blogfeeds.revisit.hints import is_guid_rewrite
from blogfeeds.revisit.levels import LEVELS, check_rank, level_of

TAU_SLOW = 45 * DAY
TAU_FAST = 2 * DAY
FAST_WEIGHT = 0.5
IMIN = 5.0
IMAX = 4 * DAY
RHO = 0.5
PRIOR_RATE = 0.5  # entries per day
PRIOR_WEIGHT = 0.5  # entries
SILENCE_ETA = 3.0
PROFILE_SHRINK = 24.0
PHASE_R = 0.85
PHASE_MIN = 5
RECENT_MAX = 12
RANK_WEIGHT = 4.0
#: A first document with at least this many dated gaps sets the prior rate itself.
BOOTSTRAP_MIN = 4


class FetchBudget:
    """The global fetch budget, ``per_feed_day`` fetches per feed per day on average, shared by
    every feed of one :class:`EstimatingPolicy`.

    Feeds whose interval follows the square-root law register their demand √(wλ̂)·mean√g
    (λ̂ per minute); feeds held by a clamp, guard, floor or failure register their fetch rate.
    κ = Σdemand / (target − Σfixed) makes Σ(demand/κ) + Σfixed = target (fetches per minute).
    """

    def __init__(self, per_feed_day: float = 3.0) -> None:
        if not per_feed_day > 0:
            raise ValueError(f"per_feed_day must be > 0, got {per_feed_day!r}")
        self.per_feed_day = float(per_feed_day)
        self._law: dict[str, float] = {}
        self._fixed: dict[str, float] = {}
        self._sum_law = 0.0
        self._sum_fixed = 0.0
        self._updates = 0

    @property
    def feeds(self) -> int:
        """Number of feeds registered."""
        return len(self._law) + len(self._fixed)

    def kappa(self) -> float:
        """Current κ (√minutes): the law interval of a feed is κ/√(wλ̂) without a profile."""
        target = max(self.feeds, 1) * self.per_feed_day / DAY
        free = max(target - self._sum_fixed, 0.25 * target)
        return max(self._sum_law, 1e-12) / free

    def _drop(self, key: str) -> None:
        if key in self._law:
            self._sum_law -= self._law.pop(key)
        if key in self._fixed:
            self._sum_fixed -= self._fixed.pop(key)
        self._updates += 1
        if self._updates % 4096 == 0:  # re-add to stop rounding drift
            self._sum_law = math.fsum(self._law.values())
            self._sum_fixed = math.fsum(self._fixed.values())

    def set_law(self, key: str, demand: float) -> None:
        """Feed ``key`` follows the law with demand √(wλ̂)·mean√g."""
        self._drop(key)
        self._law[key] = demand
        self._sum_law += demand

    def set_fixed(self, key: str, rate: float) -> None:
        """Feed ``key`` is fetched at ``rate`` fetches per minute regardless of κ."""
        self._drop(key)
        self._fixed[key] = rate
        self._sum_fixed += rate


class EstimatingPolicy:
    """Budget-aware estimating policy (see the module docstring).

    ``budget`` is a :class:`FetchBudget` or fetches/feed/day; ``level_mode`` snaps intervals
    down to the five levels (20, 200, 1000, 2000, 10000 min); ``profile`` and ``phase_lock``
    switch the time-of-day parts.
    """

    name = "estimate"

    def __init__(
        self,
        budget: FetchBudget | float = 3.0,
        *,
        level_mode: bool = False,
        profile: bool = True,
        phase_lock: bool = True,
        default_rank: int = 0,
    ) -> None:
        self.budget = budget if isinstance(budget, FetchBudget) else FetchBudget(budget)
        self.level_mode = level_mode
        self.profile = profile
        self.phase_lock = phase_lock
        self.default_rank = check_rank(default_rank)

    def initial_state(self, feed_id: str, now: float, rank: int | None = None) -> FeedState:
        """A new feed, due at ``now`` (epoch minutes)."""
        rank = self.default_rank if rank is None else check_rank(rank)
        return FeedState(feed_id=feed_id, rank=rank, next_due=now)

    def level(self, state: FeedState) -> int:
        """Level 1..5 of ``state``: the highest level whose interval is ≤ the planned one."""
        return level_of(state.interval)

    def warm(self, states: Iterable[FeedState]) -> None:
        """Register every stored feed's rate with the fetch budget, so that κ reflects the whole
        population and not only the feeds fetched in this run (profile ignored: flat demand)."""
        for state in states:
            if state.rate:
                self.budget.set_law(
                    state.feed_id, math.sqrt(RANK_WEIGHT**state.rank * state.rate / DAY)
                )

    def next_state(self, state: FeedState, outcome: FetchOutcome) -> FeedState:
        """Learn from ``outcome`` and schedule the next fetch (``next_due``, epoch minutes)."""
        kind = classify(outcome)
        if kind == "throttled":
            return after_throttle(state, outcome)
        if kind == "failed":
            new = after_failure(state, outcome, state.interval or IMIN)
            wait = (new.next_due or outcome.fetched_at) - outcome.fetched_at
            self.budget.set_fixed(state.feed_id, 1.0 / max(wait, IMIN))
            return new
        updates, lam, changed = self._observe(state, outcome)
        t = outcome.fetched_at
        hours: tuple[float, ...] = updates["hours"]
        recent: tuple[float, ...] = updates["recent"]
        window: int = updates["window"]
        weight = RANK_WEIGHT**state.rank
        prof = self._profile(hours)
        roots = [math.sqrt(g) for g in prof] if prof else None
        demand = math.sqrt(weight * lam) * (sum(roots) / 24.0 if roots else 1.0)
        self.budget.set_law(state.feed_id, demand)
        law = self._law_interval(t, self.budget.kappa() / math.sqrt(weight * lam), roots)
        ceiling = IMAX
        if window > 0:
            ceiling = min(ceiling, RHO * window / (lam * (max(prof) if prof else 1.0)))
        interval = min(max(law, IMIN), ceiling)
        if self.phase_lock:
            expected = _phase_next(recent, t)
            if expected is not None and expected < t + interval:
                interval = max(expected - t, IMIN)
        by_law = abs(interval - law) <= 1e-9 * law
        if self.level_mode:
            interval = snap_to_level(interval, ceiling)
        new = after_success(state, outcome, interval, changed=changed, **updates)
        if not by_law or new.interval > interval:
            self.budget.set_fixed(state.feed_id, 1.0 / new.interval)
        return new

    def _profile(self, hours: tuple[float, ...]) -> list[float] | None:
        """Hour-of-day multipliers (mean 1), shrunk towards flat by 24 pseudo-entries."""
        if not self.profile:
            return None
        total = sum(hours)
        return [24.0 * (c + PROFILE_SHRINK / 24.0) / (total + PROFILE_SHRINK) for c in hours]

    @staticmethod
    def _law_interval(t: float, need: float, roots: list[float] | None) -> float:
        """Minutes from ``t`` until ∫√g(u)du reaches ``need`` (``need`` itself without g)."""
        if roots is None:
            return need
        acc, u = 0.0, t
        for _ in range(24 * 6):
            hour_end = (math.floor(u / HOUR) + 1) * HOUR
            w = roots[int(u // HOUR) % 24]
            seg = (hour_end - u) * w
            if acc + seg >= need:
                return (u - t) + (need - acc) / w
            acc += seg
            u = hour_end
        return u - t

    def _observe(self, state: FeedState, o: FetchOutcome) -> tuple[dict[str, Any], float, bool]:
        """Fold one successful fetch into the rate estimate.

        Returns the FeedState updates, λ̂ in entries per minute, and whether genuinely new
        entries arrived (never on the first fetch).
        """
        t = o.fetched_at
        first = state.est_time is None
        s_slow, e_slow, s_fast, e_fast = state.s_slow, state.e_slow, state.s_fast, state.e_fast
        hours = list(state.hours) if state.hours else [0.0] * 24
        recent = list(state.recent)
        if not first and state.est_time is not None:
            dt = max(t - state.est_time, 0.0)
            ds, df = math.exp(-dt / TAU_SLOW), math.exp(-dt / TAU_FAST)
            s_slow, e_slow, s_fast, e_fast = s_slow * ds, e_slow * ds, s_fast * df, e_fast * df
            hours = [h * ds for h in hours]
        not_modified = o.status == 304
        new = list(o.new_entry_dates) if not not_modified else []
        window = len(o.all_entry_dates) if not not_modified and o.all_entry_dates else state.window
        newest = state.newest_entry
        prior_rate = state.prior_rate
        pts: list[float] = []
        exact: list[bool] = []
        if first:
            if prior_rate is None:
                prior_rate = PRIOR_RATE
                if o.update_period:  # sy:updatePeriod/updateFrequency: a prior only
                    prior_rate = min(max(DAY / o.update_period, 0.1), 48.0)
            dated = sorted(min(d, t) for d in new if d is not None)
            if len(dated) >= 2 and dated[-1] - dated[0] > len(dated):
                c0, pts = dated[0], dated[1:]
                exact = [d < t - NOW_SLACK for d in pts]
                if len(pts) >= BOOTSTRAP_MIN:  # the document outweighs the default prior
                    prior_rate = len(pts) / (t - c0) * DAY
            else:
                c0 = t
                if dated:
                    newest = dated[-1]
        else:
            pt = state.est_time if state.est_time is not None else t
            newest_seen = state.newest_claimed
            if is_guid_rewrite(new, o.all_entry_dates, newest_seen):
                new = [d for d in new if d is not None and d > (newest_seen or t)]
            for d in new:
                if d is None:
                    pts.append(t)
                    exact.append(False)
                else:
                    pts.append(min(max(d, pt), t))
                    exact.append(pt < d < t - NOW_SLACK)
            c0 = pt
            if window and len(new) >= window and pts:
                # The window overflowed: ≥ K entries arrived. Exposure is the span the dated
                # entries cover; without usable dates, half the interval (the rate doubles
                # per overflowing fetch until the window guard catches up).
                c0 = min(pts) if min(pts) > pt else pt + 0.5 * (t - pt)
        if t > c0:
            x = t - c0
            e_slow += TAU_SLOW * (1.0 - math.exp(-x / TAU_SLOW))
            e_fast += TAU_FAST * (1.0 - math.exp(-x / TAU_FAST))
        for r, ok in zip(pts, exact, strict=True):
            age = max(0.0, t - r)
            w_slow = math.exp(-age / TAU_SLOW)
            s_slow += w_slow
            s_fast += math.exp(-age / TAU_FAST)
            if ok:
                hours[int(r // HOUR) % 24] += w_slow
                recent.append(r)
        if pts:
            newest = max(pts) if newest is None else max(newest, *pts)
        a0 = PRIOR_WEIGHT
        b0 = a0 / ((prior_rate or PRIOR_RATE) / DAY)
        lam_slow = (a0 + s_slow) / (b0 + e_slow)
        lam_fast = (a0 + s_fast) / (b0 + e_fast)
        lam = lam_slow + FAST_WEIGHT * max(0.0, lam_fast - lam_slow)
        if newest is not None and t - newest > 0 and (first or not pts):
            lam = min(lam, max(SILENCE_ETA / (t - newest), 1e-9))
        updates: dict[str, Any] = {
            "est_time": t,
            "s_slow": s_slow,
            "e_slow": e_slow,
            "s_fast": s_fast,
            "e_fast": e_fast,
            "hours": tuple(hours),
            "recent": tuple(recent[-RECENT_MAX:]),
            "newest_entry": newest,
            "window": window,
            "prior_rate": prior_rate,
            "rate": lam * DAY,
        }
        return updates, lam, bool(pts) and not first


def snap_to_level(interval: float, ceiling: float = math.inf) -> float:
    """The level (20, 200, 1000, 2000, 10000 min) nearest to ``interval`` on a log scale, but
    not above ``ceiling`` (the window guard) unless Level[1] already is."""
    best = min(LEVELS, key=lambda v: abs(math.log(v / interval)))
    if best > ceiling:
        best = max([v for v in LEVELS if v <= ceiling] or [LEVELS[0]])
    return best


def _phase_next(recent: tuple[float, ...], t: float) -> float | None:
    """If recent exactly-dated entries cluster at one UTC time of day (mean resultant length
    ≥ 0.85 over ≥ 5 entries), the next expected posting time plus a margin (≥ 10 min, 1.5
    circular standard deviations) after ``t + IMIN``; else None."""
    if len(recent) < PHASE_MIN:
        return None
    c = sum(math.cos(2 * math.pi * (x % DAY) / DAY) for x in recent) / len(recent)
    s = sum(math.sin(2 * math.pi * (x % DAY) / DAY) for x in recent) / len(recent)
    r = math.hypot(c, s)
    if r < PHASE_R:
        return None
    mean = (math.atan2(s, c) / (2 * math.pi)) % 1.0 * DAY
    spread = math.sqrt(-2 * math.log(r)) / (2 * math.pi) * DAY
    nxt = math.floor(t / DAY) * DAY + mean + max(10.0, 1.5 * spread)
    while nxt <= t + IMIN:
        nxt += DAY
    return nxt
