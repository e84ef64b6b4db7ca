"""Seen-sets with bounded memory, for crawls longer than a process's memory.

A crawl remembers which blogs it has requested, analysed and stored. Plain sets grow with every
blog ever seen (about 110 bytes a blog id in CPython), so a worker of a 10-million-blog cluster
would keep growing. :class:`SeenSet` keeps two generations of at most ``capacity`` ids each (the
"two-set" rotation of bounded caches): membership is exact for at least the last ``capacity``
ids added and memory stays under ``2 × capacity`` ids. An id forgotten after that is only a
cheaper check skipped: the duplicate filter (Scrapy's or scrapy-redis's), the Redis blog set and
the database's unique key still stop the duplicate.
"""

from __future__ import annotations

from collections.abc import Hashable


class SeenSet:
    """A set of hashable keys keeping at least the last ``capacity`` added, at most twice that.

    ``capacity`` ≤ 0 means unbounded (a plain set). ``len()`` counts the keys held, not every
    key ever added (:attr:`added` does); ``forgotten`` counts keys dropped by rotation.
    """

    def __init__(self, capacity: int = 0) -> None:
        self.capacity = capacity
        self._new: set[Hashable] = set()
        self._old: set[Hashable] = set()
        self.added = 0
        self.forgotten = 0

    def __contains__(self, key: Hashable) -> bool:
        return key in self._new or key in self._old

    def __len__(self) -> int:
        return len(self._new) + len(self._old)

    def add(self, key: Hashable) -> None:
        """Add ``key`` (refreshing it when only the older generation holds it)."""
        if key in self._new:
            return
        if key in self._old:
            self._old.discard(key)
        else:
            self.added += 1
        self._new.add(key)
        if 0 < self.capacity <= len(self._new):
            self.forgotten += len(self._old)
            self._old, self._new = self._new, set()
