"""The WebSub subscriber's rules (W3C WebSub Recommendation, 2018), on one database connection.
What it does, as the operator sees it (requests, verification, pushes): docs/websub.md.

- **Requests** (§5.1): :meth:`Subscriber.due_actions` leases the due subscriptions (one worker
  per row in a cluster), each recorded as pending *before* its request is sent.
- **Verification of intent** (§5.3): the challenge is echoed only for the pending request we
  made on that callback, same mode and topic, in time; anything else is 404.
- **Content distribution** (§7, §8): a good push is read by the feed reader exactly as a fetched
  body (:func:`blogfeeds.feedcrawl.response.read_response`), planned by the same revisit policy
  (:mod:`blogfeeds.revisit.push`) and stored by :meth:`FeedStore.save_fetch`, the pipeline's
  path, so entries are inserted once per feed and key, however often a hub sends them, and
  at most ``BLOGFEEDS_WEBSUB_PUSH_ENTRIES`` new ones a push (:meth:`Subscriber.store_push`).

Times are epoch minutes; every method runs on the thread that owns ``store``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from blogfeeds.config import WebSubSettings
from blogfeeds.extract.feedreader.websub import parse_link_header
from blogfeeds.extract.text import digits_int
from blogfeeds.feedcrawl.item import fetch_item
from blogfeeds.feedcrawl.response import FetchRead, read_response
from blogfeeds.revisit import DAY, EstimatingPolicy, LevelPolicy
from blogfeeds.revisit.push import with_push
from blogfeeds.storage.feedstore import ScheduledFeed, state_from_json
from blogfeeds.storage.websub import Subscription, WebSubStore
from blogfeeds.websub.signature import signature_problem

logger = logging.getLogger(__name__)

#: A hub given up (or a denial) is asked again after this long, minutes.
RETRY_FAILED = DAY
RETRY_DENIED = 7 * DAY
#: The longest lease taken from a hub, seconds (a year): a lease is renewed at 80 % of it, and
#: a hub may grant any number; a year keeps every date of the subscription writable.
LEASE_MAX = 366 * 86_400
#: Subscriptions leased per maintenance round.
BATCH = 50


@dataclass(frozen=True)
class PushTarget:
    """What a push is for: its subscription, the feed and the feed's revisit state."""

    sub: Subscription
    feed: ScheduledFeed
    state: Any


class EntryBudget:
    """New entries one subscription's pushes may store per day: a token bucket per callback
    (``per_day`` tokens, refilled continuously)."""

    def __init__(self, per_day: int) -> None:
        self.per_day = float(per_day)
        self.buckets: dict[str, tuple[float, float]] = {}

    def left(self, callback: str, now: float) -> int:
        tokens, then = self.buckets.get(callback, (self.per_day, now))
        return int(min(self.per_day, tokens + (now - then) * self.per_day / DAY))

    def spend(self, callback: str, now: float, n: int) -> None:
        self.buckets[callback] = (self.left(callback, now) - n, now)


@dataclass(frozen=True)
class Action:
    """One request to make: ``form`` POSTed to ``hub`` for ``sub``."""

    sub: Subscription
    mode: str
    hub: str
    form: dict[str, str]


class HubLimiter:
    """At most ``per_minute`` requests to one hub host (a token bucket per host, one minute of
    burst)."""

    def __init__(self, per_minute: float, clock: Any = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(per_minute, 1.0)
        self.clock = clock
        self.buckets: dict[str, tuple[float, float]] = {}

    def take(self, hub: str) -> bool:
        host = (urlsplit(hub).hostname or hub).lower()
        now = self.clock()
        tokens, then = self.buckets.get(host, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - then) * self.rate)
        if tokens < 1.0:
            self.buckets[host] = (tokens, now)
            return False
        self.buckets[host] = (tokens - 1.0, now)
        return True


class Subscriber:
    """The subscriber of one process (see the module docstring). ``owner`` is its lease owner
    (:func:`blogfeeds.feedcrawl.claims.lease_owner`); ``stats`` counts what happened."""

    def __init__(
        self,
        store: WebSubStore,
        config: WebSubSettings,
        policy: LevelPolicy | EstimatingPolicy,
        *,
        owner: str,
        limiter: HubLimiter | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.policy = policy
        self.owner = owner
        self.limiter = limiter or HubLimiter(config.hub_rate)
        self.budget = EntryBudget(config.push_entries_per_day)
        self.stats: Counter[str] = Counter()

    def callback_url(self, sub: Subscription) -> str:
        return f"{self.config.public_url}/{sub.callback}"

    # --- requests to hubs ----------------------------------------------------------------------

    def due_actions(self, now: float) -> list[Action]:
        """The requests to make now, each recorded as pending; verifications that never came
        are failures."""
        actions = []
        for sub in self.store.claim_actions(now, BATCH, self.owner):
            if sub.pending and sub.pending_until is not None and sub.pending_until <= now:
                self.stats["verify_timeout"] += 1
                self.fail(sub, now, f"no verification of {sub.pending} within the timeout")
                continue
            if sub.state == "gone":
                continue
            if not self.limiter.take(sub.hub):
                self.stats["rate_limited"] += 1
                self.store.retry_unchanged(sub)
                continue
            mode = "unsubscribe" if sub.state == "unsubscribe" else "subscribe"
            form = {
                "hub.callback": self.callback_url(sub),
                "hub.mode": mode,
                "hub.topic": sub.topic,
            }
            if mode == "subscribe":
                form["hub.lease_seconds"] = str(self.config.lease_seconds)
                form["hub.secret"] = sub.secret
            deadline = now + self.config.verify_timeout / 60.0
            self.store.requested(sub, mode, now, deadline, self.config.lease_seconds)
            actions.append(Action(replace(sub, pending=mode), mode, sub.hub, form))
        return actions

    def fail(self, sub: Subscription, now: float, error: str) -> None:
        """A request that failed: backoff (the maintenance interval doubled per failure, at
        most a day), or given up after ``max_failures`` in a row."""
        failures = sub.failures + 1
        give_up = failures >= self.config.max_failures
        if give_up:
            retry_at = now + RETRY_FAILED
            self.stats["gave_up"] += 1
            logger.warning("WebSub: giving up on hub %s for %s: %s", sub.hub, sub.topic, error)
        else:
            retry_at = now + min(self.config.interval * 2**failures / 60.0, DAY)
            logger.info("WebSub: %s of %s at %s failed: %s", sub.pending, sub.topic, sub.hub, error)
        self.stats["request_failed"] += 1
        self.store.failed(sub, now, error, retry_at, give_up)

    def answered(self, action: Action, status: int, body: str, now: float) -> None:
        """The hub's answer to ``action``: 2xx (202 Accepted) means the verification follows;
        anything else is a failure."""
        if 200 <= status < 300:
            self.stats[f"requested/{action.mode}"] += 1
            return
        self.fail(action.sub, now, f"hub answered {status}: {body[:200]}")

    # --- verification of intent ----------------------------------------------------------------

    def verify(self, callback: str, query: Mapping[str, str], now: float) -> tuple[int, bytes]:
        """The answer to a hub's GET on ``callback`` with ``query`` (§5.2, §5.3)."""
        mode = query.get("hub.mode", "")
        topic = query.get("hub.topic", "")
        if mode == "denied":
            reason = query.get("hub.reason", "")
            if self.store.denied(callback, topic, reason, now, now + RETRY_DENIED):
                self.stats["denied"] += 1
                logger.warning("WebSub: hub denied the subscription to %s: %s", topic, reason)
                return 200, b""
            self.stats["verify_refused"] += 1
            return 404, b""
        challenge = query.get("hub.challenge", "")
        if mode not in ("subscribe", "unsubscribe") or not challenge:
            self.stats["verify_refused"] += 1
            return 404, b""
        lease = digits_int(query.get("hub.lease_seconds"), LEASE_MAX) or 0
        if not self.store.verified(callback, mode, topic, lease if lease > 0 else None, now):
            self.stats["verify_refused"] += 1
            return 404, b""
        self.stats[f"verified/{mode}"] += 1
        logger.info("WebSub: %s to %s verified (lease %s s)", mode, topic, lease or "default")
        return 200, challenge.encode("utf-8")

    # --- content distribution ------------------------------------------------------------------

    def push_target(
        self, callback: str, headers: Mapping[str, str], body: bytes, now: float
    ) -> PushTarget | int:
        """The subscription and feed a push on ``callback`` is for, or the HTTP status to
        answer it with at once (see the module docstring). Database thread."""
        sub = self.store.by_callback(callback)
        if sub is None:
            self.stats["push/unknown"] += 1
            return 404
        if sub.state != "active":
            self.stats["push/not_subscribed"] += 1
            return 410 if sub.state in ("gone", "unsubscribe") else 404
        problem = signature_problem(sub.secret, body, headers.get("x-hub-signature"))
        if problem is not None:
            self.stats[f"push/bad_signature/{problem}"] += 1
            self.store.pushed(callback, now, good=False)
            logger.warning("WebSub: push for %s dropped: signature %s", sub.topic, problem)
            return 202
        selves = [u for u, rels in parse_link_header([headers.get("link", "")]) if "self" in rels]
        if selves and sub.topic not in selves:
            self.stats["push/wrong_topic"] += 1
            self.store.pushed(callback, now, good=False)
            return 400
        row = self.store.feed_row(sub.feed_url_hash)
        if row is None:  # the feed was removed: the next round unsubscribes
            self.stats["push/removed"] += 1
            return 410
        feed = ScheduledFeed(
            url=row["feed_url"],
            url_hash=row["feed_url_hash"],
            blog_id=row["blog_id"],
            rank=int(row["rank_score"] or 0),
            state=state_from_json(row["state"]),
        )
        return PushTarget(
            sub, feed, feed.state or self.policy.initial_state(feed.url, now, rank=feed.rank)
        )

    def store_push(self, target: PushTarget, read: FetchRead, now: float) -> int:
        """Store what ``read_push`` read; the HTTP status to answer. At most
        ``push_entries`` new entries of one push are stored, and ``push_entries_per_day`` of
        one subscription's pushes (a feed names its own hub, which gets a secret: a hostile
        one could push 100,000 new ids at a time); the rest are left to the feed's polls, and
        the push does not count as one (polling carries on as planned). Database thread."""
        sub, callback = target.sub, target.sub.callback
        if read.status != "ok":
            self.stats[f"push/unreadable/{read.status}"] += 1
            logger.warning("WebSub: push for %s is not a feed (%s)", sub.topic, read.status)
            self.store.pushed(callback, now, good=False)
            return 202
        allowed = min(self.config.push_entries, self.budget.left(callback, now))
        kept = read.entries[:allowed]
        left_out = {e.key for e in read.entries[allowed:]}
        dropped = len(left_out)
        self.budget.spend(callback, now, len(kept))
        if dropped:
            self.stats["push/entries_dropped"] += dropped
            logger.warning(
                "WebSub: push for %s: %d new entries stored, %d left to its polls",
                sub.topic, len(kept), dropped,
            )  # fmt: skip
        config = self.config

        def adjust(new_state: Any) -> Any:
            if dropped:  # the polls bring the rest: keep the policy's plan
                return new_state
            return with_push(
                new_state,
                now,
                sub.lease_until,
                now,
                safety=config.safety_interval,
                factor=config.overdue_factor,
            )

        item, _ = fetch_item(
            self.policy,
            target.feed,
            target.state,
            # The entries left out stay unseen: the next poll stores them.
            replace(read, entries=kept, ids=[i for i in read.ids if i not in left_out]),
            moved_to=None,
            owner=self.owner,
            adjust=adjust,
        )
        # A push may carry only the new entries, without the hub links: it says nothing about
        # the feed's hubs. A worker polling the feed right now keeps its schedule and state
        # (the lease owner is this subscriber's, never a poller's): only the entries are added.
        item = replace(item, hubs=None, topic="", lease_owner=f"{self.owner}:push")
        inserted = self.store.save_fetch(item)
        self.store.pushed(callback, now, good=not dropped)
        self.stats["push/stored"] += 1
        self.stats["push/new_entries"] += inserted
        return 202


def read_push(target: PushTarget, headers: Mapping[str, str], body: bytes, now: float) -> FetchRead:
    """A push's body read by the feed reader exactly as a fetched body. Any thread: a large
    push is read beside the database thread, which other pushes need."""
    url = target.feed.url
    return read_response(
        url, target.state, now, status=200, headers=headers, body=body, url=url, conditional=False
    )
