"""What a fetch learns about a feed's WebSub hubs, written in the fetch's own transaction
(:meth:`~blogfeeds.storage.feedstore.FeedStore.save_fetch`); the subscriptions' life is
:mod:`blogfeeds.storage.websub`."""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import Any

from blogfeeds.items import FeedFetch
from blogfeeds.storage.schema import Dialect

NEVER = "9999-12-31T00:00:00Z"
"""``next_action`` of a row that waits for nothing."""
_COLUMNS = (
    "feed_url_hash",
    "feed_url",
    "topic",
    "hub",
    "hubs",
    "callback",
    "secret",
    "state",
    "pending",
    "next_action",
    "updated",
)


def new_callback() -> str:
    """A callback path token: 128 random bits, URL-safe (guessing one is hopeless)."""
    return secrets.token_urlsafe(16)


def new_secret() -> str:
    """A ``hub.secret``: 192 random bits as 48 hex characters (the spec caps it at 200 bytes)."""
    return secrets.token_hex(24)


def note_hubs(cursor: Any, dialect: Dialect, feed_hash: str, fetch: FeedFetch, *, now: str) -> None:
    """Record what one fetch learnt (its ``hubs`` None: nothing, the body was no feed) about the
    feed stored under ``feed_hash``. A dead feed, or one that stopped announcing hubs, is
    unsubscribed; a new hub or topic is subscribed afresh (the first hub announced); the same
    ones keep their subscription."""
    hubs, topic, dead = fetch.hubs, fetch.topic, fetch.status == "dead"
    feed_url = fetch.moved_to or fetch.feed_url
    if hubs is None and not dead:
        return
    p = dialect.param
    cursor.execute(f"SELECT state, hub, topic FROM websub WHERE feed_url_hash = {p}", (feed_hash,))
    row = cursor.fetchone()
    if dead or (hubs is not None and not hubs):
        if row is not None and row[0] not in ("gone", "unsubscribe"):
            drop(cursor, dialect, [feed_hash], now)
        return
    if hubs is None:
        return
    listed = json.dumps(list(hubs), ensure_ascii=False)
    if row is None:
        sql = dialect.upsert("websub", _COLUMNS, ("feed_url_hash",), ())
        values = (feed_hash, feed_url, topic, hubs[0], listed, new_callback(), new_secret())
        cursor.execute(sql, (*values, "new", "", now, now))
        return
    state, hub, old_topic = row
    if state == "gone" or hub not in hubs or old_topic != topic:
        # A new subscription (the old one lapses at its hub): a fresh secret and callback.
        cursor.execute(
            f"UPDATE websub SET topic = {p}, hub = {p}, hubs = {p}, state = 'new', pending = '', "
            f"callback = {p}, secret = {p}, failures = 0, lease_until = NULL, next_action = {p}, "
            f"updated = {p} WHERE feed_url_hash = {p}",
            (topic, hubs[0], listed, new_callback(), new_secret(), now, now, feed_hash),
        )
    else:
        cursor.execute(
            f"UPDATE websub SET hubs = {p}, updated = {p} WHERE feed_url_hash = {p}",
            (listed, now, feed_hash),
        )


def drop(cursor: Any, dialect: Dialect, feed_hashes: Sequence[str], now: str) -> None:
    """Unsubscribe these feeds: a live or pending subscription at once, others are ``gone``."""
    p = dialect.param
    for digest in feed_hashes:
        # MySQL assigns left to right, each SET seeing the columns already set: next_action
        # and state are computed before pending is cleared, state after next_action.
        cursor.execute(
            "UPDATE websub SET next_action = CASE WHEN state = 'active' OR pending <> '' "
            f"THEN {p} ELSE {p} END, state = CASE WHEN state = 'active' OR pending <> '' "
            f"THEN 'unsubscribe' ELSE 'gone' END, pending = '', updated = {p} "
            f"WHERE feed_url_hash = {p}",
            (now, NEVER, now, digest),
        )
