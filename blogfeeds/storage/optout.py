"""What the store holds of the blogs an opt-out list leaves out, and removing it (``scrapy
optout``; docs/opt-out.md).

A stored blog is left out when the list names its identity or its address, or names any other
address the store knows of it (an alias of its node, :mod:`.nodes`, or the node of an alias):
:meth:`OptOutStore.left_out` finds them all, :meth:`OptOutStore.purge` deletes every row of
theirs, on SQLite and MySQL alike: the blog and its aliases, its observations and alias keys,
friend links from it and to it, its feeds, their entries, schedule, revisit state (history),
feed aliases and WebSub subscriptions, in one write transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from blogfeeds.crawl.optout import OptOutList
from blogfeeds.storage.db import Store
from blogfeeds.storage.nodes import _chunks, _marks, rows_in
from blogfeeds.storage.schema import Dialect

# (table, id column, URL column) of every stored address of a blog
_ADDRESSES = (
    ("blogs", "blog_id", "url"),
    ("blog_aliases", "alias_id", "alias_url"),
    ("blog_observations", "blog_id", "url"),
    ("friend_links", "target_blog_id", "target_url"),
)


@dataclass
class Removed:
    """What :meth:`OptOutStore.purge` deleted: the blogs (identity -> address) and the number
    of rows of each table."""

    blogs: dict[str, str] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)


def same_nodes(cursor: Any, dialect: Dialect, ids: Iterable[str]) -> set[str]:
    """``ids`` with every address stored as the same blog: their nodes and those nodes'
    aliases."""
    found = set(ids)
    nodes = {
        str(n)
        for (n,) in rows_in(
            cursor, dialect, "SELECT node_id FROM blog_aliases WHERE alias_id IN ({marks})", found
        )
    }
    found |= nodes
    found |= {
        str(a)
        for (a,) in rows_in(
            cursor, dialect, "SELECT alias_id FROM blog_aliases WHERE node_id IN ({marks})", found
        )
    }
    return found


class OptOutStore(Store):
    """The store's side of opting out (module doc)."""

    def aliases_of(self, ids: Iterable[str]) -> set[str]:
        """:func:`same_nodes` of ``ids``: what a crawl leaves out when the list names them."""
        with self._transaction(write=False) as cursor:
            if not self._has_table(cursor, "blog_aliases"):
                return set(ids)
            return same_nodes(cursor, self.dialect, ids)

    def left_out(self, cursor: Any, listed: OptOutList) -> dict[str, str]:
        """The stored blogs ``listed`` leaves out: identity -> an address of it."""
        found: dict[str, str] = {}
        for table, id_column, url_column in _ADDRESSES:
            cursor.execute(f"SELECT DISTINCT {id_column}, {url_column} FROM {table}")
            for bid, url in cursor.fetchall():
                if listed.has_blog(str(bid)) or str(url) in listed:
                    found.setdefault(str(bid), str(url))
        for bid in same_nodes(cursor, self.dialect, found) - set(found):
            found[bid] = ""
        return found

    def addresses(self, listed: OptOutList) -> dict[str, str]:
        """:meth:`left_out`, read in its own transaction."""
        with self._transaction(write=False) as cursor:
            return self.left_out(cursor, listed)

    def purge(self, listed: OptOutList) -> Removed:
        """Delete every row of the blogs ``listed`` leaves out (module doc)."""
        removed = Removed()
        # the lock of node writes (MySQL): no crawl joins or moves these blogs' rows meanwhile
        with self._nodes_lock(), self._transaction() as cursor:
            blogs = self.left_out(cursor, listed)
            removed.blogs = blogs
            if not blogs:
                return removed
            d = self.dialect
            feeds = {
                str(h)
                for sql in (
                    "SELECT url_hash FROM feeds WHERE blog_id IN ({marks})",
                    "SELECT feed_url_hash FROM schedule WHERE blog_id IN ({marks})",
                    "SELECT feed_url_hash FROM feed_aliases WHERE blog_id IN ({marks})",
                )
                for (h,) in rows_in(cursor, d, sql, blogs)
            }
            by_feed = ("entries", "feed_state", "websub", "schedule", "feed_aliases")
            by_blog = (
                ("schedule", "blog_id"),
                ("feed_aliases", "blog_id"),
                ("feeds", "blog_id"),
                ("friend_links", "source_blog_id"),
                ("friend_links", "target_blog_id"),
                ("blog_observations", "blog_id"),
                ("alias_keys", "blog_id"),
                ("blog_aliases", "alias_id"),
                ("blog_aliases", "node_id"),
                ("blog_checks", "blog_id"),
                ("theme_entries", "source_blog_id"),
                ("dropped_links", "source_blog_id"),
                ("dropped_links", "target_blog_id"),
                ("blogs", "blog_id"),
            )
            steps = [(t, "feed_url_hash", feeds) for t in by_feed]
            steps += [(t, c, set(blogs)) for t, c in by_blog]
            # a blog that is a whole host: its robots.txt is of no other blog's (a blog under a
            # path of a shared host leaves the host's)
            hosts = {h for b in blogs if "/" not in b for h in (b, f"www.{b}")}
            if self._has_table(cursor, "robots_txt"):
                steps.append(("robots_txt", "host", hosts))
            for table, column, values in steps:
                for chunk in _chunks(sorted(values)):
                    cursor.execute(
                        f"DELETE FROM {table} WHERE {column} IN ({_marks(d, len(chunk))})",
                        list(chunk),
                    )
                    removed.rows[table] = removed.rows.get(table, 0) + max(cursor.rowcount, 0)
        return removed
