"""The part of a blog's profile that ``scrapy crawl feeds`` keeps current: ``last_post_at``,
``posts_per_month`` and ``activity`` of ``blogs``, from the entries stored for its feeds.

:func:`refresh_blog` runs in the feed store's transaction after a fetch stored new entries
(:meth:`blogfeeds.storage.feedstore.FeedStore.save_fetches`); :func:`refresh_all` fills every
blog once (schema version 6). The dates are read as the blog crawl reads a feed's
(:mod:`blogfeeds.extract.profile`): published, else updated, plausible ones only; the rate is
over the window of the stored entries of the blog's scheduled feeds, and a newer last post
never goes back to an older one. ``dialect`` is a :class:`blogfeeds.storage.schema.Dialect`
(untyped here: schema.py imports this module for its migration).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from blogfeeds.extract.feedreader.entries import iso_utc
from blogfeeds.extract.profile import ProfileSettings, activity, iso, plausible, rate


def _entry_dates(cursor: Any, dialect: Any, blog_id: str, now: datetime) -> list[datetime]:
    p = dialect.param
    cursor.execute(
        "SELECT e.published, e.updated FROM entries e JOIN schedule s "
        f"ON s.feed_url_hash = e.feed_url_hash WHERE s.blog_id = {p}",
        (blog_id,),
    )
    dates = []
    for published, updated in cursor.fetchall():
        when = plausible(iso_utc(str(published or updated or "")), now)
        if when is not None:
            dates.append(when)
    return sorted(dates, reverse=True)


def refresh_blog(
    cursor: Any,
    dialect: Any,
    blog_id: str,
    now_iso: str,
    config: ProfileSettings | None = None,
) -> bool:
    """Update the last post, rate and activity of ``blog_id`` from its stored entries, at
    ``now_iso`` (the fetch time); False when the blog has no row or no dated entry."""
    now = iso_utc(now_iso) or datetime.now(UTC)
    dates = _entry_dates(cursor, dialect, blog_id, now)
    if not dates:
        return False
    p = dialect.param
    cursor.execute(f"SELECT last_post_at FROM blogs WHERE blog_id = {p}", (blog_id,))
    row = cursor.fetchone()
    if row is None:
        return False
    stored = iso_utc(str(row[0] or ""))
    last = max(d for d in (dates[0], stored) if d is not None)
    cursor.execute(
        f"UPDATE blogs SET last_post_at = {p}, posts_per_month = {p}, activity = {p} "
        f"WHERE blog_id = {p}",
        (iso(last), rate(dates), activity(last, now, config), blog_id),
    )
    return True


def refresh_all(cursor: Any, dialect: Any, now_iso: str = "") -> int:
    """:func:`refresh_blog` for every blog with a scheduled feed; returns how many changed."""
    now = now_iso or iso(datetime.now(UTC))
    cursor.execute("SELECT DISTINCT blog_id FROM schedule WHERE blog_id IS NOT NULL")
    blog_ids = [str(r[0]) for r in cursor.fetchall()]
    return sum(refresh_blog(cursor, dialect, blog_id, now) for blog_id in blog_ids)
