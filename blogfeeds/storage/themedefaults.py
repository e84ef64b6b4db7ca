"""The crawl-wide rule for theme defaults: a friend that many blogs of one theme list at the same
place, and that their footers credit, is the theme's sample entry, not their friend.

Themes ship a default friend list (the theme author's blog, its docs, a demo). Those read from
the themes' repositories are data (``blogfeeds/data/theme_defaults.toml``, applied by the
extraction, page by page); for the others the crawl learns them. Each friend link written
with a theme (:attr:`~blogfeeds.items.FriendLink.theme`), among the first
``BLOGFEEDS_THEME_DEFAULT_PLACES`` of its list and credited by the page's footer
(:mod:`blogfeeds.extract.friends.credits`), is recorded in ``theme_entries`` under (theme,
place, entry). Once ``BLOGFEEDS_THEME_DEFAULT_BLOGS`` blogs (nodes) have one entry at one place,
every such link, earlier and later ones, moves from ``friend_links`` to ``dropped_links``
with the reason ``theme-default`` (the source's ``friend_count`` follows). A blog read again
counts only what it lists now (:func:`forget_unlisted`), and a link it still lists below the
threshold is a friend again. Why all three conditions: docs/friend-links.md. The counts live
in the database, so the workers of a cluster sharing MariaDB count together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from blogfeeds.extract.friends.defaults import sample_key
from blogfeeds.items import FriendLink
from blogfeeds.storage.nodes import rows_in
from blogfeeds.storage.schema import Dialect, url_hash
from blogfeeds.theme_default_settings import ThemeDefaultSettings

REASON = "theme-default"
_ENTRY_COLUMNS = (
    "theme",
    "position",
    "entry_hash",
    "entry",
    "source_blog_id",
    "target_url_hash",
    "first_seen",
    "last_seen",
)
_DROPPED_COLUMNS = (
    "source_blog_id",
    "target_blog_id",
    "target_url",
    "target_url_hash",
    "name",
    "source_url",
    "avatar",
    "reason",
    "detail",
    "first_seen",
    "last_seen",
)


def record(
    cursor: Any,
    dialect: Dialect,
    links: Sequence[FriendLink],
    node: Mapping[str, str],
    *,
    config: ThemeDefaultSettings,
    now: str,
) -> set[tuple[str, str]]:
    """Record the theme entries among ``links`` (just written to ``friend_links``, their ends
    on the nodes of ``node``) and drop every link of an entry that reached the threshold;
    returns the links dropped, as ``(source node, target URL hash)`` (earlier links of other
    blogs among them). A link of ``links`` that stays a friend leaves ``dropped_links``."""
    dropped: set[tuple[str, str]] = set()
    if config.blogs <= 0:
        return dropped
    rows: dict[tuple[str, int, str, str], tuple[Any, ...]] = {}
    for link in links:
        if not (link.theme and link.credited and 0 <= link.position < config.places):
            continue
        source = node.get(link.source_blog_id, link.source_blog_id)
        entry = sample_key(link.target_url)
        digest = url_hash(entry)
        rows[(link.theme, link.position, digest, source)] = (
            link.theme,
            link.position,
            digest,
            entry,
            source,
            url_hash(link.target_url),
            now,
            now,
        )
    if rows:
        key = ("entry_hash", "theme", "position", "source_blog_id")
        update = ("target_url_hash", "last_seen")
        cursor.executemany(
            dialect.upsert("theme_entries", _ENTRY_COLUMNS, key, update), list(rows.values())
        )
    p = dialect.param
    for theme, position, digest in sorted({k[:3] for k in rows}):
        cursor.execute(
            "SELECT source_blog_id, target_url_hash, entry FROM theme_entries "
            f"WHERE entry_hash = {p} AND theme = {p} AND position = {p}",
            (digest, theme, position),
        )
        members = cursor.fetchall()
        if len(members) < config.blogs:  # one row per source (the unique key)
            continue
        detail = f"{theme}: {members[0][2]} at place {position + 1} on {len(members)} blogs"
        for source, target_hash, _entry in members:
            if _drop(cursor, dialect, (source, target_hash), detail, now):
                dropped.add((str(source), str(target_hash)))
    listed = {
        (node.get(ln.source_blog_id, ln.source_blog_id), url_hash(ln.target_url)) for ln in links
    }
    _undrop(cursor, dialect, listed - dropped)
    return dropped


def _undrop(cursor: Any, dialect: Dialect, links: set[tuple[str, str]]) -> None:
    """Remove the ``dropped_links`` rows of ``links``, written as friends again: their entry
    no longer reaches the threshold (a blog stopped listing it). One query finds them: most
    sources have none."""
    found = {
        (str(s), str(h))
        for s, h in rows_in(
            cursor,
            dialect,
            "SELECT source_blog_id, target_url_hash FROM dropped_links "
            f"WHERE source_blog_id IN ({{marks}}) AND reason = {dialect.param}",
            {source for source, _ in links},
            (REASON,),
        )
    }
    again = sorted(found & links)
    if again:
        p = dialect.param
        cursor.executemany(
            f"DELETE FROM dropped_links WHERE source_blog_id = {p} AND target_url_hash = {p}",
            again,
        )


def forget_unlisted(cursor: Any, dialect: Dialect, reads: Iterable[tuple[str, str]]) -> int:
    """Blogs read again (``(source node, time of the read)``) count toward a theme default
    only with what they list now: their theme entries last seen before that read go (a read
    writes its entries at or after its time, in one write or several). Returns the rows
    removed. One query finds the sources with such rows: most have none."""
    bound: dict[str, str] = {}
    for source, when in reads:
        bound[source] = min(when, bound.get(source, when))
    rows = rows_in(
        cursor,
        dialect,
        "SELECT source_blog_id, MIN(last_seen) FROM theme_entries "
        "WHERE source_blog_id IN ({marks}) GROUP BY source_blog_id",
        bound,
    )
    stale = [(str(s), bound[str(s)]) for s, seen in rows if seen < bound[str(s)]]
    p = dialect.param
    removed = 0
    for source, before in stale:
        cursor.execute(
            f"DELETE FROM theme_entries WHERE source_blog_id = {p} AND last_seen < {p}",
            (source, before),
        )
        removed += cursor.rowcount
    return removed


def _drop(cursor: Any, dialect: Dialect, link: tuple[str, str], detail: str, now: str) -> int:
    """Move the link ``(source, target_hash)`` from ``friend_links`` to ``dropped_links``
    (1), or nothing when it is not there (0: moved already)."""
    p = dialect.param
    source, target_hash = link
    cursor.execute(
        "SELECT id, target_blog_id, target_url, name, source_url, avatar, first_seen "
        f"FROM friend_links WHERE source_blog_id = {p} AND target_url_hash = {p}",
        (source, target_hash),
    )
    found = cursor.fetchone()
    if found is None:
        return 0
    row_id, target, url, name, source_url, avatar, first_seen = found
    update = ("target_blog_id", "target_url", "name", "source_url", "avatar", "detail", "last_seen")
    cursor.execute(
        dialect.upsert(
            "dropped_links", _DROPPED_COLUMNS, ("source_blog_id", "target_url_hash"), update
        ),
        (
            source,
            target,
            url,
            target_hash,
            name,
            source_url,
            avatar,
            REASON,
            detail,
            first_seen,
            now,
        ),
    )
    cursor.execute(f"DELETE FROM friend_links WHERE id = {p}", (row_id,))
    cursor.execute(
        "UPDATE blogs SET friend_count = friend_count - 1 "
        f"WHERE blog_id = {p} AND friend_count > 0",
        (source,),
    )
    return 1
