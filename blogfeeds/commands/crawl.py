"""``scrapy crawl``: Scrapy's own command, with exit statuses an operator's script can test.

- ``0``: the crawl ran to its end (finish reason ``finished``, a ``CLOSESPIDER_*`` limit,
  ``shutdown`` after Ctrl-C, ...);
- ``1``: the crawl failed: finish reason ``database_down``, ``redis_down`` (at start-up a
  :class:`~blogfeeds.extensions.startup.ServiceDown`, logged as one ERROR line naming
  host:port, the crawl never opened; or the Redis frontier stayed unreachable mid-crawl),
  ``start_error`` (the spider's ``start()`` failed; Scrapy logs the traceback), or Scrapy could
  not start it (its traceback is logged);
- ``2``: nothing could be crawled: a bad setting (a :class:`~blogfeeds.option.StartupError`,
  logged as one ERROR line that names the setting, without a traceback), a bad command line,
  finish reason ``no_seeds`` (no usable seed and nothing to resume), or no spider of that name
  (one line naming the spiders that exist, before Scrapy starts).

Each case with its log line: docs/security.md ("Exit status").
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import sys
from argparse import ArgumentParser, Namespace
from typing import Any

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError
from scrapy.spiderloader import get_spider_loader
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from blogfeeds.commands import clear_help
from blogfeeds.extensions.startup import ServiceDown
from blogfeeds.option import StartupError

logger = logging.getLogger(__name__)

EXIT_STATUS = {"database_down": 1, "redis_down": 1, "start_error": 1, "no_seeds": 2}
"""Exit status of a crawl by its finish reason (or a :class:`ServiceDown`'s reason); any
other reason exits 0."""


class Command(ScrapyCrawlCommand):
    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        clear_help(parser)

    def process_options(self, args: list[str], opts: Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        if len(args) == 1:
            unknown = unknown_spider(args[0], get_spider_loader(self.settings).list())
            if unknown:  # before the crawler process logs Scrapy's banner
                print(f"scrapy crawl: {unknown}", file=sys.stderr)
                raise SystemExit(2)

    def run(self, args: list[str], opts: Namespace) -> None:
        # Scrapy's run(), keeping the crawler (for its finish reason) and the task (for the
        # exception that stopped it at start-up).
        if len(args) < 1:
            raise UsageError
        if len(args) > 1:
            raise UsageError("running 'scrapy crawl' with more than one spider is not supported")
        assert self.crawler_process
        crawler = self._create_crawler(args[0])
        errors: list[StartupError | ServiceDown] = []
        _report_startup_error(self.crawler_process.crawl(crawler, **opts.spargs), errors)
        self.crawler_process.start()
        if errors:
            error = errors[0]
            if isinstance(error, ServiceDown):
                self.exitcode = EXIT_STATUS.get(error.reason, 1)
            else:
                self.exitcode = 2
        elif self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        else:
            self.exitcode = EXIT_STATUS.get(str(crawler.stats.get_value("finish_reason")), 0)


def unknown_spider(name: str, spiders: list[str]) -> str | None:
    """The one line saying ``name`` is not a spider, naming those that are (and the nearest
    one); None when it is one."""
    if name in spiders:
        return None
    near = difflib.get_close_matches(name, spiders, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return f"no spider named {name!r}{hint}; the spiders are: {', '.join(sorted(spiders))}"


def _report_startup_error(running: Any, errors: list[StartupError | ServiceDown]) -> None:
    """When the crawl (an asyncio task or a Deferred, by reactor) ends in a
    :class:`StartupError` or a :class:`ServiceDown`, log it as one ERROR line and append it to
    ``errors``; any other exception is left to be reported as Scrapy would (with its
    traceback)."""

    def on_task_done(task: asyncio.Future[Any]) -> None:
        if task.cancelled():
            return
        exc = task.exception()  # retrieved now: asyncio no longer reports it itself
        if isinstance(exc, StartupError | ServiceDown):
            errors.append(exc)
            logger.error("%s", exc)
        elif exc is not None:
            logger.error("The crawl could not start", exc_info=exc)

    def on_failure(failure: Failure) -> None:
        failure.trap(StartupError, ServiceDown)  # anything else stays unhandled: Twisted logs it
        errors.append(failure.value)  # type: ignore[arg-type]
        logger.error("%s", failure.value)

    if isinstance(running, asyncio.Future):
        running.add_done_callback(on_task_done)
    elif isinstance(running, Deferred):
        running.addErrback(on_failure)
