"""The "random blog" and "random post" links of every page: weights toward active blogs, and
the small files the page draws from (``assets/random.js``), loaded only when a link is used.

A blog's weight (:func:`weights`), counted back from the site's newest post (not the build
time, so that a build is reproducible and an old database still has active blogs): 1 plus its
posts of the last :data:`RECENT_DAYS` days (at most :data:`MOST`) when it has any; 1 when its
last post is younger than :data:`DORMANT_DAYS` days; else 0, never drawn (no post known, or
none for a year). When no blog weighs anything, each weighs 1. A random post is a blog drawn
by these weights among those whose page lists posts, then one of those posts, evenly.

Files: ``data/random.js`` holds each shard's total weight (blogs, posts); ``data/random-<n>.js``
the rows ``[page, weight, posts listed]`` of :data:`SHARD` blogs of weight > 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from blogfeeds.extract.feedreader.entries import iso_utc

RECENT_DAYS = 90
DORMANT_DAYS = 365
MOST = 10
SHARD = 2000


def weights(blog_ids: Iterable[str], entries: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Each blog's weight (see the module docstring); ``entries`` have ``blog_id`` and
    ``date``, newest first."""
    ids = list(blog_ids)
    newest = iso_utc(entries[0]["date"]) if entries else None
    out = dict.fromkeys(ids, 0)
    if newest is not None:
        recent = newest - timedelta(days=RECENT_DAYS)
        dormant = newest - timedelta(days=DORMANT_DAYS)
        for entry in entries:
            blog_id, when = entry.get("blog_id"), iso_utc(entry.get("date"))
            if blog_id not in out or when is None:
                continue
            if when >= recent:
                out[blog_id] = min(max(out[blog_id], 1) + 1, MOST)
            elif when >= dormant:
                out[blog_id] = max(out[blog_id], 1)
    if not any(out.values()):
        return dict.fromkeys(ids, 1)
    return out


def random_files(rows: Sequence[tuple[str, int, int]]) -> dict[str, str]:
    """The files (relative path → script) of ``rows``: ``(page, weight, posts listed)`` per
    blog, in a stable order."""
    chosen = [r for r in rows if r[1] > 0]
    shards = [chosen[i : i + SHARD] for i in range(0, len(chosen), SHARD)]
    totals = [[sum(w for _, w, _ in shard), sum(w for _, w, n in shard if n)] for shard in shards]
    files = {"data/random.js": _assign("index", {"shards": totals})}
    for n, shard in enumerate(shards):
        files[f"data/random-{n}.js"] = _assign(f"s{n}", [list(r) for r in shard])
    return files


def _assign(name: str, value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return f'(window.BLOGFEEDS_RANDOM = window.BLOGFEEDS_RANDOM || {{}})["{name}"] = {text};\n'
