"""Seen-sets and maps with bounded memory, for crawls longer than a process's memory.

A crawl remembers which blogs it has requested, analysed and stored, and at which depth. Plain
sets grow with every blog ever seen (about 110 bytes a blog id in CPython), so a worker of a
10-million-blog cluster would keep growing. :class:`SeenMap` keeps two generations of at most
``capacity`` keys each (the "two-set" rotation of bounded caches): lookups are exact for at
least the last ``capacity`` keys written and memory stays under ``2 × capacity`` keys. A key
forgotten after that is only a cheaper check skipped: the duplicate filter (Scrapy's or
scrapy-redis's), the Redis blog set and the database's unique key still stop the duplicate.
:class:`SeenSet` is the same with keys only.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any


class SeenMap:
    """A mapping keeping at least the last ``capacity`` keys written, at most twice that.

    ``capacity`` ≤ 0 means unbounded (a plain dict). ``len()`` counts the keys held, not every
    key ever written (:attr:`added` does); ``forgotten`` counts keys dropped by rotation.
    """

    def __init__(self, capacity: int = 0) -> None:
        self.capacity = capacity
        self._new: dict[Hashable, Any] = {}
        self._old: dict[Hashable, Any] = {}
        self.added = 0
        self.forgotten = 0

    def __contains__(self, key: Hashable) -> bool:
        return key in self._new or key in self._old

    def __len__(self) -> int:
        return len(self._new) + len(self._old)

    def get(self, key: Hashable, default: Any = None) -> Any:
        if key in self._new:
            return self._new[key]
        return self._old.get(key, default)

    def put(self, key: Hashable, value: Any) -> None:
        """Map ``key`` to ``value`` (refreshing it when only the older generation holds it)."""
        if key not in self._new:
            if key in self._old:
                del self._old[key]
            else:
                self.added += 1
        self._new[key] = value
        if 0 < self.capacity <= len(self._new):
            self.forgotten += len(self._old)
            self._old, self._new = self._new, {}


class SeenSet(SeenMap):
    """A :class:`SeenMap` of keys only."""

    def add(self, key: Hashable) -> None:
        """Add ``key`` (refreshing it when only the older generation holds it)."""
        self.put(key, None)
