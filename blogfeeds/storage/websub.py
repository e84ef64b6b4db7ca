"""Storage of WebSub subscriptions (table ``websub``, schema version 7): one row per feed that
announces a hub, and its subscription's life (``state``: ``new``, ``active``, ``failed``,
``denied``, ``unsubscribe``, ``gone``; what each means: docs/websub.md).

``pending`` is the (un)subscription we asked for and whose verification we await
(``subscribe``/``unsubscribe``, ``""`` for none) until ``pending_until``; a verification of
intent is answered only when it matches it (mode and topic). A row whose ``next_action`` has
come is leased to one worker (``lease_owner``, ``lease_owner_until``: the schedule's claim, on
this table), so every request to a hub is made by exactly one process of a cluster.

Discovery (:func:`note_hubs`) runs inside the transaction of a fetch
(:meth:`~blogfeeds.storage.feedstore.FeedStore.save_fetch`, :mod:`blogfeeds.storage.hubs`):
what the feed announced is stored with it, in the same commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from blogfeeds.storage.feedstore import FeedStore, iso, iso_minutes
from blogfeeds.storage.hubs import NEVER, drop

#: Minutes a row's action stays leased to the worker that claimed it.
ACTION_LEASE = 5.0


@dataclass(frozen=True)
class Subscription:
    """One ``websub`` row as the subscriber works on it."""

    feed_url: str
    feed_url_hash: str
    topic: str
    hub: str
    callback: str
    secret: str
    state: str
    pending: str
    pending_until: float | None
    lease_until: float | None
    failures: int

    @classmethod
    def of(cls, row: dict[str, Any]) -> Subscription:
        return cls(
            feed_url=row["feed_url"],
            feed_url_hash=row["feed_url_hash"],
            topic=row["topic"],
            hub=row["hub"],
            callback=row["callback"],
            secret=row["secret"],
            state=row["state"],
            pending=row["pending"],
            pending_until=_minutes(row["pending_until"]),
            lease_until=_minutes(row["lease_until"]),
            failures=int(row["failures"]),
        )


def _minutes(value: str | None) -> float | None:
    return iso_minutes(value) if value else None


_SELECT = (
    "SELECT feed_url, feed_url_hash, topic, hub, callback, secret, state, pending, "
    "pending_until, lease_until, failures FROM websub"
)


class WebSubStore(FeedStore):
    """Reads and writes of the ``websub`` table (see the module docstring); times are epoch
    minutes, as in :class:`FeedStore`."""

    def subscriptions(self) -> list[dict[str, Any]]:
        """Every row as a dict, by feed URL (for tests and ``scrapy stats``-like reports)."""
        return self.query("SELECT * FROM websub ORDER BY feed_url")

    def by_callback(self, callback: str) -> Subscription | None:
        rows = self.query(f"{_SELECT} WHERE callback = ?", (callback,))
        return Subscription.of(rows[0]) if rows else None

    def claim_actions(
        self, now: float, limit: int, owner: str, lease: float = ACTION_LEASE
    ) -> list[Subscription]:
        """Lease up to ``limit`` rows whose ``next_action`` has come to ``owner`` (as
        :meth:`FeedStore.claim_due`: ``FOR UPDATE SKIP LOCKED`` on MySQL, the write lock on
        SQLite), first the removed feeds' rows turned to unsubscriptions."""
        return self._retrying(lambda: self._claim_actions(now, limit, owner, lease))

    def _claim_actions(
        self, now: float, limit: int, owner: str, lease: float
    ) -> list[Subscription]:
        p = self.dialect.param
        now_iso = iso(now)
        skip_locked = " FOR UPDATE SKIP LOCKED" if self.dialect.name == "mysql" else ""
        with self._transaction() as cursor:
            removed = self._rows(
                cursor,
                "SELECT feed_url_hash FROM websub w WHERE state NOT IN ('gone', 'unsubscribe') "
                "AND NOT EXISTS (SELECT 1 FROM schedule s WHERE s.feed_url_hash = w.feed_url_hash)",
            )
            drop(cursor, self.dialect, [r["feed_url_hash"] for r in removed], now_iso)
            picked = self._rows(
                cursor,
                f"SELECT id FROM websub WHERE next_action <= {p} AND (lease_owner_until IS NULL "
                f"OR lease_owner_until < {p}) ORDER BY next_action, id LIMIT {int(limit)}"
                f"{skip_locked}",
                (now_iso, now_iso),
            )
            ids = [int(r["id"]) for r in picked]
            if not ids:
                return []
            marks = ", ".join([p] * len(ids))
            cursor.execute(
                f"UPDATE websub SET lease_owner = {p}, lease_owner_until = {p} "
                f"WHERE id IN ({marks})",
                (owner, iso(now + lease), *ids),
            )
            rows = self._rows(cursor, f"{_SELECT} WHERE id IN ({marks}) ORDER BY id", ids)
        return [Subscription.of(r) for r in rows]

    def _update(
        self, callback: str, sets: dict[str, Any], where: str = "", params: tuple[Any, ...] = ()
    ) -> int:
        p = self.dialect.param
        assignments = ", ".join(f"{name} = {p}" for name in sets)

        def work() -> int:
            with self._transaction() as cursor:
                cursor.execute(
                    f"UPDATE websub SET {assignments} WHERE callback = {p}{where}",
                    (*sets.values(), callback, *params),
                )
                return int(cursor.rowcount or 0)

        return self._retrying(work)

    def requested(
        self, sub: Subscription, mode: str, now: float, deadline: float, lease_seconds: int
    ) -> None:
        """The hub accepted our (un)subscription request: await its verification until
        ``deadline`` (the row's next action: a verification that never comes is a failure)."""
        self._update(
            sub.callback,
            {
                "pending": mode,
                "pending_until": iso(deadline),
                "lease_seconds": lease_seconds,
                "next_action": iso(deadline),
                "lease_owner": None,
                "lease_owner_until": None,
                "updated": iso(now),
            },
        )

    def failed(
        self, sub: Subscription, now: float, error: str, retry_at: float, give_up: bool
    ) -> None:
        """A request the hub refused or never verified: tried again at ``retry_at``; with
        ``give_up`` the subscription is ``failed`` (an unsubscription ``gone``) and the feed is
        polled at once (its safety net is no longer one)."""
        sets: dict[str, Any] = {
            "failures": sub.failures + 1,
            "last_error": error[:500],
            "pending": "",
            "pending_until": None,
            "next_action": iso(retry_at),
            "lease_owner": None,
            "lease_owner_until": None,
            "updated": iso(now),
        }
        if give_up:
            sets["state"] = "gone" if sub.state == "unsubscribe" else "failed"
            if sub.state == "unsubscribe":
                sets["next_action"] = NEVER
        self._update(sub.callback, sets)
        if give_up and sub.state != "unsubscribe":
            self.poll_now(sub.feed_url_hash, now)

    def retry_unchanged(self, sub: Subscription) -> None:
        """Give the row back untouched (this worker's hub budget is spent: next time)."""
        self._update(sub.callback, {"lease_owner": None, "lease_owner_until": None})

    def verified(
        self, callback: str, mode: str, topic: str, lease_seconds: int | None, now: float
    ) -> bool:
        """A hub's verification of intent: True (echo the challenge) only when it matches the
        pending request we made on this callback (same mode and topic, not timed out); the
        subscription is then live until ``now`` + its lease (renewed at 80 % of it,
        ``next_action``), or the unsubscription done."""
        sub = self.by_callback(callback)
        if sub is None or sub.pending != mode or sub.topic != topic:
            return False
        if sub.pending_until is not None and sub.pending_until < now:
            return False
        p = self.dialect.param
        if mode == "unsubscribe":
            sets: dict[str, Any] = {"state": "gone", "next_action": NEVER, "lease_until": None}
        else:
            lease = lease_seconds or 0
            if lease <= 0:  # the hub gave none: assume the one we asked for
                rows = self.query(
                    "SELECT lease_seconds FROM websub WHERE callback = ?", (callback,)
                )
                lease = int(rows[0]["lease_seconds"]) if rows else 86400
            lease_minutes = max(lease, 1) / 60.0
            sets = {
                "state": "active",
                "lease_seconds": lease,
                # A push is overdue counted from the last one, or from the subscription's start.
                **({} if sub.state == "active" else {"last_push": iso(now)}),
                "lease_until": iso(now + lease_minutes),
                "next_action": iso(now + 0.8 * lease_minutes),
                "failures": 0,
                "last_error": None,
            }
        sets.update(pending="", pending_until=None, updated=iso(now))
        # Only while the same request is still pending (two verifications race: one wins).
        return self._update(callback, sets, f" AND pending = {p}", (mode,)) > 0

    def denied(self, callback: str, topic: str, reason: str, now: float, retry_at: float) -> bool:
        """The hub denied (or ended) the subscription on ``topic``: polled again at once, asked
        again at ``retry_at``; False when no such subscription."""
        sub = self.by_callback(callback)
        if sub is None or sub.topic != topic or sub.state in ("gone", "unsubscribe"):
            return False
        self._update(
            callback,
            {
                "state": "denied",
                "pending": "",
                "pending_until": None,
                "lease_until": None,
                "last_error": f"denied: {reason}"[:500],
                "next_action": iso(retry_at),
                "updated": iso(now),
            },
        )
        self.poll_now(sub.feed_url_hash, now)
        return True

    def pushed(self, callback: str, now: float, good: bool) -> None:
        """Count one content distribution on ``callback``: a good one sets ``last_push``."""
        p = self.dialect.param
        column = "pushes" if good else "bad_pushes"
        last = f", last_push = {p}" if good else ""

        def work() -> None:
            with self._transaction() as cursor:
                cursor.execute(
                    f"UPDATE websub SET {column} = {column} + 1{last} WHERE callback = {p}",
                    ((iso(now),) if good else ()) + (callback,),
                )

        self._retrying(work)

    def poll_now(self, feed_hash: str, now: float) -> None:
        """Make the feed due at ``now`` (when its subscription stops being a safety net)."""
        p = self.dialect.param

        def work() -> None:
            with self._transaction() as cursor:
                cursor.execute(
                    f"UPDATE schedule SET next_due = {p} WHERE feed_url_hash = {p} "
                    f"AND next_due > {p}",
                    (iso(now), feed_hash, iso(now)),
                )

        self._retrying(work)

    def feed_row(self, feed_hash: str) -> dict[str, Any] | None:
        """The schedule row of a feed with its stored state JSON (``state``), or None."""
        rows = self.query(
            "SELECT s.feed_url, s.feed_url_hash, s.blog_id, s.rank_score, fs.state FROM schedule s "
            "LEFT JOIN feed_state fs ON fs.feed_url_hash = s.feed_url_hash "
            "WHERE s.feed_url_hash = ?",
            (feed_hash,),
        )
        return rows[0] if rows else None
