"""The crawl's opt-out list: the file ``BLOGFEEDS_OPT_OUT`` names, read at start and read again
when it changes, so that ``scrapy optout`` (or an edit) reaches running workers without a
restart: every worker, Redis ones included, looks at the file's modification time and size at
most every ``BLOGFEEDS_OPT_OUT_CHECK`` seconds when it is asked about an address, and reads it
again when they changed. The blogs it names are completed with the other addresses the database
stores of them (:meth:`~blogfeeds.storage.optout.OptOutStore.aliases_of`) at each read.

A file that cannot be read at start is a :class:`~blogfeeds.option.StartupError` (crawling
without the list would request the blogs it names); later, the last list read is kept. A bad
line is an ERROR naming the file and line, and the other lines still count.
"""

from __future__ import annotations

import logging
import os
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from scrapy.exceptions import IgnoreRequest

from blogfeeds.config import OptOutSettings, database_url
from blogfeeds.crawl.optout import BadLine, OptOutList, parse_lines, without_listed
from blogfeeds.extract.aliases import Observation
from blogfeeds.option import StartupError

logger = logging.getLogger(__name__)

Aliases = Callable[[Iterable[str]], set[str]]
"""Blog ids -> those ids and the other ids stored as the same blogs."""


def read_list(path: str) -> tuple[OptOutList, list[BadLine]]:
    """The list in the file ``path`` (UTF-8) and its bad lines; ``OSError`` when unreadable."""
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        entries, bad = parse_lines(f)
    return OptOutList.of(entries), bad


class OptedOut(IgnoreRequest):
    """A request to an address of the opt-out list, not made
    (:class:`~blogfeeds.middlewares.optout.OptOutMiddleware`)."""


class OptOutFile:
    """The list of the file ``path`` as it is now (module doc); ``url in it``."""

    def __init__(
        self,
        path: str,
        interval: float,
        *,
        aliases: Aliases | None = None,
        stats: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.interval = interval
        self.aliases = aliases
        self.stats = stats
        self.clock = clock
        self._list = OptOutList()
        self._stamp: tuple[int, int] | None = None
        self._checked = clock()
        self._load(self._stat())

    def _stat(self) -> tuple[int, int]:
        st = os.stat(self.path)
        return st.st_mtime_ns, st.st_size

    def _load(self, stamp: tuple[int, int]) -> None:
        listed, bad = read_list(self.path)
        for line in bad:
            logger.error("BLOGFEEDS_OPT_OUT %s %s (the line is skipped)", self.path, line)
            if self.stats is not None:
                self.stats.inc_value("blogfeeds/opt_out/bad_line")
        if self.aliases is not None and listed.blogs:
            listed = listed.with_ids(self.aliases(listed.blogs))
        if self._stamp is not None:
            logger.info("Opt-out list %s read again: %d blogs", self.path, len(listed.blogs))
        self._list, self._stamp = listed, stamp

    def current(self) -> OptOutList:
        """The list, read again first when the file changed (looked at every ``interval`` s)."""
        now = self.clock()
        if now - self._checked < self.interval:
            return self._list
        self._checked = now
        try:
            stamp = self._stat()
            if stamp != self._stamp:
                self._load(stamp)
        except OSError as exc:
            logger.warning(
                "Opt-out list %s unreadable, the last one read is kept: %s", self.path, exc
            )
        return self._list

    def __contains__(self, url: object) -> bool:
        return url in self.current()

    def scrub(self, seen: Observation) -> Observation:
        """``seen`` without its claims on listed addresses (:func:`.optout.without_listed`)."""
        return without_listed(seen, self.current())

    def has_blog(self, bid: str | None) -> bool:
        return self.current().has_blog(bid)


def _store_aliases(url: str) -> Aliases | None:
    """The aliases the database ``url`` stores, read when the list is (None: no database)."""
    if not url:
        return None

    def aliases(ids: Iterable[str]) -> set[str]:
        from blogfeeds.storage.optout import OptOutStore  # noqa: PLC0415 - storage is optional

        wanted = set(ids)
        try:
            with OptOutStore.open(url, read_only=True) as store:
                return store.aliases_of(wanted)
        except Exception as exc:  # no database yet: nothing stored, no alias to add
            logger.debug("Opt-out list: no aliases read from the database: %s", exc)
            return wanted

    return aliases


_LISTS: weakref.WeakKeyDictionary[Any, OptOutFile | None] = weakref.WeakKeyDictionary()


class _Stats:
    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    def inc_value(self, key: str) -> None:
        try:
            stats = self.crawler.stats
        except RuntimeError:  # read before the crawl starts (Scrapy 2.13+): the ERROR line says it
            return
        if stats is not None:
            stats.inc_value(key)


def opt_out(crawler: Any) -> OptOutFile | None:
    """The crawl's one opt-out list (the spider's, the admission's and the middleware's), or
    None when ``BLOGFEEDS_OPT_OUT`` is empty; :class:`StartupError` when its file cannot be
    read."""
    if crawler in _LISTS:
        return _LISTS[crawler]
    settings = OptOutSettings.from_settings(crawler.settings)
    found = None
    if settings.path:
        try:
            found = OptOutFile(
                settings.path,
                settings.check_interval,
                aliases=_store_aliases(database_url(crawler.settings)),
                stats=_Stats(crawler),
            )
        except OSError as exc:
            raise StartupError("BLOGFEEDS_OPT_OUT", f"cannot read {settings.path}: {exc}") from None
    _LISTS[crawler] = found
    return found
