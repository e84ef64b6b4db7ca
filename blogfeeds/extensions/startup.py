"""Start-up checks: a bad setting stops the crawl before it opens anything, with one clear line.

:class:`StartupError` names the setting and the problem. Components raise it from their
``from_crawler`` (the spider: ``BLOGFEEDS_RULES_FILE``; :class:`StartupCheck`: the others), so
that nothing has been opened yet; the project's ``crawl`` command
(:mod:`blogfeeds.commands.crawl`) logs it as one ERROR line without a traceback and exits 2.
Any other runner (a script's ``CrawlerProcess``) sees the exception itself.

:class:`StartupCheck` (an extension, ``EXTENSIONS`` in the settings; extensions are built after
the spider, before the engine) checks what later components would only fail on once the crawl
is open: the form of the database URL (``MYSQL_URL``, else ``BLOGFEEDS_DATABASE_URL``; not
whether the server answers: that is the ``database_down`` finish reason) and, for a spider
that walks the strategy frontier (``strategy_frontier = True``), ``BLOGFEEDS_STRATEGY``.
"""

from __future__ import annotations

from typing import Any

from blogfeeds.storage.db import check_url
from blogfeeds.strategies import frontier_for


class StartupError(Exception):
    """A setting that stops the crawl at start-up: ``setting`` (its name) and ``problem``
    (what is wrong with it); ``str()`` is ``"SETTING: problem"``."""

    def __init__(self, setting: str, problem: str) -> None:
        super().__init__(f"{setting}: {problem}")
        self.setting = setting
        self.problem = problem


def check_database_url(settings: Any) -> None:
    """``StartupError`` naming ``MYSQL_URL`` or ``BLOGFEEDS_DATABASE_URL`` (the one in use)
    when its form is wrong (:func:`blogfeeds.storage.db.check_url`); empty means no storage."""
    for name in ("MYSQL_URL", "BLOGFEEDS_DATABASE_URL"):
        url = (settings.get(name) or "").strip()
        if url:
            try:
                check_url(url)
            except ValueError as exc:
                raise StartupError(name, str(exc)) from None
            return


class StartupCheck:
    """Extension: runs the checks of the module docstring in ``from_crawler``, raising
    :class:`StartupError`; does nothing afterwards."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> StartupCheck:
        check_database_url(crawler.settings)
        if getattr(crawler.spidercls, "strategy_frontier", False):
            try:
                frontier_for(crawler)  # the crawl's one frontier, built here first
            except ValueError as exc:
                raise StartupError("BLOGFEEDS_STRATEGY", str(exc)) from None
        return cls()
