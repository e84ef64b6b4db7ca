"""One blog, one node: the addresses of a blog stored as aliases of its node, and merges.

Each address the crawl read (a home page, or an address that redirected to another blog's) has
its :class:`~blogfeeds.extract.aliases.Observation` stored (``blog_observations``) with its
:func:`~blogfeeds.extract.aliases.index_keys` (``alias_keys``, by digest). When an address is
stored, the addresses sharing a key with it are its candidates (what it claims, who claimed it,
one feed, shared entries); :func:`~blogfeeds.extract.aliases.same_blog` decides on the two
stored observations, :func:`~blogfeeds.extract.aliases.preferred` names the node, and the other
node is merged into it (:func:`merge`: its rows move to the node, the node's win a unique-key
conflict; ``blog_aliases`` records the alias, its evidence and when it was seen). A friend link
stored later to an alias is stored on the node (:func:`nodes_of`). Everything runs inside the
caller's write transaction, on SQLite and MySQL alike; the database decides (a named lock
serialises these writes), so workers sharing a MySQL server agree.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from typing import Any

from blogfeeds.extract.aliases import (
    BASE,
    CANONICAL,
    ENTRIES,
    MIRROR,
    MOVED,
    OG_URL,
    REDIRECT,
    REL_ME,
    SAME_FEED,
    Observation,
    index_keys,
    observation_from,
    preferred,
    same_blog,
)
from blogfeeds.extract.identity import blog_id, split_url
from blogfeeds.storage.profilestore import refresh_blog
from blogfeeds.storage.schema import Dialect, insert_alias_keys, url_hash

logger = logging.getLogger(__name__)

_WWW = re.compile(r"^www\d*\.")
MAX_CANDIDATES = 50
"""Addresses compared with one stored address at most (a key many share, a theme demo's
canonical, must not make one write compare thousands)."""
_CHUNK = 500  # host parameters of one IN (...), below SQLite's 999 of old builds


def _marks(dialect: Dialect, n: int) -> str:
    return ", ".join([dialect.param] * n)


def _chunks(values: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start : start + _CHUNK]


def rows_in(
    cursor: Any, dialect: Dialect, sql: str, values: Iterable[str], extra: Sequence[str] = ()
) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` (its ``{marks}`` the marks of an ``IN (...)`` of ``values``, then
    ``extra``), chunk by chunk."""
    rows: list[tuple[Any, ...]] = []
    for chunk in _chunks(sorted(set(values))):
        cursor.execute(sql.format(marks=_marks(dialect, len(chunk))), [*chunk, *extra])
        rows.extend(cursor.fetchall())
    return rows


def nodes_of(cursor: Any, dialect: Dialect, ids: Iterable[str]) -> dict[str, str]:
    """The node of each of ``ids`` that is an alias (ids that are not are left out)."""
    wanted = sorted(set(ids))
    found: dict[str, str] = {}
    for chunk in _chunks(wanted):
        cursor.execute(
            "SELECT alias_id, node_id FROM blog_aliases "
            f"WHERE alias_id IN ({_marks(dialect, len(chunk))})",
            list(chunk),
        )
        found.update((str(a), str(n)) for a, n in cursor.fetchall())
    return found


def _path_id(url: str) -> tuple[str, str] | None:
    """``(host identity, host/first segment)`` of a URL whose identity is its host's, or None."""
    try:
        host, segments = split_url(url)
        own = blog_id(url)
    except ValueError:
        return None
    if "/" in own or not segments:
        return None
    return own, f"{_WWW.sub('', host)}/{segments[0].lower()}"


def under_paths(
    cursor: Any, dialect: Dialect, targets: Iterable[tuple[str, str]]
) -> dict[str, str]:
    """The stored blog under a path (:mod:`blogfeeds.extract.pathblog`) that each friend
    link's target URL lies under, by target URL, for the ``(target id, target URL)`` pairs whose
    target is the host's identity: a link to ``host/bob/`` is bob's, not the host's."""
    wanted: dict[str, str] = {}
    for bid, url in targets:
        found = _path_id(url)
        if found is not None and found[0] == bid:
            wanted[url] = found[1]
    if not wanted:
        return {}
    ids = sorted(set(wanted.values()))
    stored: set[str] = set()
    for chunk in _chunks(ids):
        cursor.execute(
            f"SELECT blog_id FROM blogs WHERE blog_id IN ({_marks(dialect, len(chunk))})",
            list(chunk),
        )
        stored.update(str(r[0]) for r in cursor.fetchall())
    return {url: pid for url, pid in wanted.items() if pid in stored}


def retarget_paths(cursor: Any, dialect: Dialect, blogs: Iterable[tuple[str, str]]) -> None:
    """For each ``(blog id, home URL)`` of a blog under a path just stored, the friend links
    stored earlier to its host's identity with a URL under its prefix point at it (a link
    from the blog to itself goes)."""
    p = dialect.param
    for bid, home in blogs:
        found = _path_id(home)
        if found is None or found[1] != bid:
            continue
        cursor.execute(
            f"SELECT id, source_blog_id, target_url FROM friend_links WHERE target_blog_id = {p}",
            (found[0],),
        )
        for row_id, source, url in cursor.fetchall():
            mine = _path_id(str(url))
            if mine is None or mine[1] != bid:
                continue
            if str(source) == bid:
                cursor.execute(f"DELETE FROM friend_links WHERE id = {p}", (row_id,))
            else:
                cursor.execute(
                    f"UPDATE friend_links SET target_blog_id = {p} WHERE id = {p}", (bid, row_id)
                )


def _node(cursor: Any, dialect: Dialect, bid: str) -> str:
    return nodes_of(cursor, dialect, [bid]).get(bid, bid)


def record(
    cursor: Any, dialect: Dialect, observed: Sequence[tuple[str, str]], ids: Iterable[str], now: str
) -> None:
    """Store ``observed`` (``(blog id, observation JSON)`` of the addresses just read), fold the
    blog rows of ``ids`` just written that are known aliases into their nodes, then join each
    observed address with the candidates its evidence says are the same blog."""
    p = dialect.param
    latest = dict(observed)
    seen: dict[str, Observation] = {}
    for bid, text in latest.items():
        try:
            seen[bid] = observation_from(text)
        except ValueError as exc:
            logger.warning("blog %s: unreadable observation, not stored: %s", bid, exc)
    for bid, obs in seen.items():
        cursor.execute(f"DELETE FROM blog_observations WHERE blog_id = {p}", (bid,))
        cursor.execute(
            f"INSERT INTO blog_observations (blog_id, url, observation, seen) "
            f"VALUES ({_marks(dialect, 4)})",
            (bid, obs.url, latest[bid], now),
        )
        cursor.execute(f"DELETE FROM alias_keys WHERE blog_id = {p}", (bid,))
        insert_alias_keys(cursor, dialect, [(bid, obs)])
    for alias, node in nodes_of(cursor, dialect, ids).items():
        merge(cursor, dialect, alias, node, (), now=now)
    for bid, obs in seen.items():
        for other in _candidates(cursor, dialect, bid, obs):
            verdict = same_blog(obs, other[1])
            if verdict.same:
                _join(cursor, dialect, (bid, obs), other, verdict.evidence, now=now)


def _candidates(
    cursor: Any, dialect: Dialect, bid: str, obs: Observation
) -> list[tuple[str, Observation]]:
    """The stored addresses sharing an index key with ``obs`` (not ``bid`` itself), with their
    observations, at most :data:`MAX_CANDIDATES`."""
    hashes = sorted(url_hash(key) for key in index_keys(obs))
    if not hashes:
        return []
    cursor.execute(
        "SELECT DISTINCT o.blog_id, o.observation FROM alias_keys k "
        "JOIN blog_observations o ON o.blog_id = k.blog_id "
        f"WHERE k.key_hash IN ({_marks(dialect, len(hashes))}) AND k.blog_id <> {dialect.param} "
        f"ORDER BY o.blog_id LIMIT {MAX_CANDIDATES}",
        [*hashes, bid],
    )
    found = []
    for other, text in cursor.fetchall():
        try:
            found.append((str(other), observation_from(text)))
        except ValueError:
            continue
    return found


def _stored(cursor: Any, dialect: Dialect, bid: str) -> Observation | None:
    cursor.execute(
        f"SELECT observation FROM blog_observations WHERE blog_id = {dialect.param}", (bid,)
    )
    row = cursor.fetchone()
    try:
        return observation_from(row[0]) if row is not None else None
    except ValueError:
        return None


def _has_row(cursor: Any, dialect: Dialect, bid: str) -> bool:
    cursor.execute(f"SELECT 1 FROM blogs WHERE blog_id = {dialect.param}", (bid,))
    return cursor.fetchone() is not None


def _join(
    cursor: Any,
    dialect: Dialect,
    one: tuple[str, Observation],
    other: tuple[str, Observation],
    evidence: Sequence[str],
    *,
    now: str,
) -> None:
    """Make the addresses ``one`` and ``other`` (same blog on ``evidence``) one node: the node
    :func:`preferred` names of the two nodes' addresses, or the one with a ``blogs`` row."""
    (a, seen_a), (b, seen_b) = one, other
    node_a, node_b = _node(cursor, dialect, a), _node(cursor, dialect, b)
    if node_a == node_b:
        for alias in {a, b} - {node_a}:
            _touch(cursor, dialect, alias, now)
        return
    # the nodes' own addresses are weighed (a copy joined to another copy by their entries
    # must not outrank the original they both name)
    node_seen_a = seen_a if node_a == a else _stored(cursor, dialect, node_a) or seen_a
    node_seen_b = seen_b if node_b == b else _stored(cursor, dialect, node_b) or seen_b
    try:
        chosen = _node(cursor, dialect, blog_id(preferred(node_seen_a, node_seen_b)))
    except ValueError:
        chosen = node_a
    winner = chosen if chosen in (node_a, node_b) else node_a
    loser = node_b if winner == node_a else node_a
    if not _has_row(cursor, dialect, winner) and _has_row(cursor, dialect, loser):
        winner, loser = loser, winner
    merge(cursor, dialect, loser, winner, evidence, now=now)


def _touch(cursor: Any, dialect: Dialect, alias: str, now: str) -> None:
    p = dialect.param
    cursor.execute(f"UPDATE blog_aliases SET last_seen = {p} WHERE alias_id = {p}", (now, alias))


def _address(cursor: Any, dialect: Dialect, bid: str) -> str:
    """The address of ``bid``: its blog row's URL, else its observation's."""
    p = dialect.param
    for sql in (
        f"SELECT url FROM blogs WHERE blog_id = {p}",
        f"SELECT url FROM blog_observations WHERE blog_id = {p}",
    ):
        cursor.execute(sql, (bid,))
        row = cursor.fetchone()
        if row is not None:
            return str(row[0])
    return ""


def merge(
    cursor: Any, dialect: Dialect, alias: str, node: str, evidence: Sequence[str], *, now: str
) -> None:
    """Merge the node ``alias`` into ``node``: record the alias (``evidence`` empty: it is one
    already, only seen again), re-point its aliases, move its rows (module doc)."""
    p = dialect.param
    cursor.execute(f"SELECT evidence, first_seen FROM blog_aliases WHERE alias_id = {p}", (alias,))
    known = cursor.fetchone()
    url = _address(cursor, dialect, alias)
    if known is None:
        cursor.execute(
            "INSERT INTO blog_aliases (alias_id, alias_url, node_id, evidence, first_seen, "
            f"last_seen) VALUES ({_marks(dialect, 6)})",
            (alias, url, node, _ordered(evidence), now, now),
        )
    else:
        kinds = _ordered({*str(known[0]).split(","), *evidence})
        cursor.execute(
            f"UPDATE blog_aliases SET node_id = {p}, evidence = {p}, last_seen = {p} "
            f"WHERE alias_id = {p}",
            (node, kinds, now, alias),
        )
    cursor.execute(f"UPDATE blog_aliases SET node_id = {p} WHERE node_id = {p}", (node, alias))
    _move_links(cursor, dialect, "friend_links", alias=alias, node=node)
    # the crawl-wide theme rule's rows (.themedefaults): one blog counts once toward a theme
    # default, and its dropped links are the node's
    _move_links(cursor, dialect, "dropped_links", alias=alias, node=node)
    key = "entry_hash, theme, position"
    _move_sources(cursor, dialect, "theme_entries", key, alias=alias, node=node)
    _move_feeds(cursor, dialect, alias, node)
    for table in ("schedule", "feed_aliases"):
        cursor.execute(f"UPDATE {table} SET blog_id = {p} WHERE blog_id = {p}", (node, alias))
    cursor.execute(f"SELECT first_seen FROM blogs WHERE blog_id = {p}", (alias,))
    row = cursor.fetchone()
    if row is not None:
        cursor.execute(
            f"UPDATE blogs SET first_seen = {p} WHERE blog_id = {p} AND first_seen > {p}",
            (row[0], node, row[0]),
        )
        cursor.execute(f"DELETE FROM blogs WHERE blog_id = {p}", (alias,))
    refresh_blog(cursor, dialect, node, now)  # its last post, from the entries it has now
    logger.info("blog %s is an alias of %s (%s)", alias, node, ",".join(evidence) or "known")


def _ordered(kinds: Iterable[str]) -> str:
    """Evidence kinds comma-separated, in the order of :mod:`blogfeeds.extract.aliases`."""
    order = (REDIRECT, CANONICAL, OG_URL, BASE, SAME_FEED, ENTRIES, REL_ME, MOVED, MIRROR)
    return ",".join(
        sorted(
            {k for k in kinds if k},
            key=lambda k: (k not in order, order.index(k) if k in order else 0, k),
        )
    )


def _move_links(cursor: Any, dialect: Dialect, table: str, *, alias: str, node: str) -> None:
    """Links of ``table`` (``friend_links``, ``dropped_links``) to ``alias`` point at ``node``;
    links of ``alias`` become ``node``'s unless ``node`` lists that friend too (its own row
    stays); a link between the two goes."""
    p = dialect.param
    cursor.execute(
        f"DELETE FROM {table} WHERE "
        f"(source_blog_id = {p} AND target_blog_id = {p}) OR "
        f"(source_blog_id = {p} AND target_blog_id = {p})",
        (alias, node, node, alias),
    )
    cursor.execute(
        f"UPDATE {table} SET target_blog_id = {p} WHERE target_blog_id = {p}", (node, alias)
    )
    _move_sources(cursor, dialect, table, "target_url_hash", alias=alias, node=node)


def _move_sources(
    cursor: Any, dialect: Dialect, table: str, key: str, *, alias: str, node: str
) -> None:
    """The rows of ``table`` whose ``source_blog_id`` is ``alias`` become ``node``'s, but for
    those ``node`` has a row of the same ``key`` columns for (its own stays: the unique key)."""
    p = dialect.param
    cursor.execute(f"SELECT {key} FROM {table} WHERE source_blog_id = {p}", (node,))
    kept = {tuple(str(v) for v in row) for row in cursor.fetchall()}
    cursor.execute(f"SELECT id, {key} FROM {table} WHERE source_blog_id = {p}", (alias,))
    clash = [(int(row[0]),) for row in cursor.fetchall() if tuple(str(v) for v in row[1:]) in kept]
    cursor.executemany(f"DELETE FROM {table} WHERE id = {p}", clash)
    cursor.execute(
        f"UPDATE {table} SET source_blog_id = {p} WHERE source_blog_id = {p}", (node, alias)
    )


def _move_feeds(cursor: Any, dialect: Dialect, alias: str, node: str) -> None:
    """The feeds of ``alias`` that ``node`` does not list become its alternates (after its own,
    never its main feed); the others go."""
    p = dialect.param
    cursor.execute(f"SELECT url_hash, position FROM feeds WHERE blog_id = {p}", (node,))
    rows = cursor.fetchall()
    kept = {str(r[0]) for r in rows}
    after = max((int(r[1]) for r in rows), default=-1) + 1
    cursor.execute(f"SELECT id, url_hash FROM feeds WHERE blog_id = {p}", (alias,))
    moved = 0
    for feed_id, digest in cursor.fetchall():
        if str(digest) in kept:
            cursor.execute(f"DELETE FROM feeds WHERE id = {p}", (feed_id,))
            continue
        cursor.execute(
            f"UPDATE feeds SET blog_id = {p}, is_main = 0, position = {p} WHERE id = {p}",
            (node, after + moved, feed_id),
        )
        moved += 1
