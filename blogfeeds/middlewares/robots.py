"""robots.txt without tracebacks: a host that cannot be reached is a fact of the crawl, not a bug.

Scrapy's ``RobotsTxtMiddleware`` logs a robots.txt it could not download at ERROR with the
whole traceback (one per host: an unresolvable name, a refused connection, a timeout), then
crawls the host as if robots.txt allowed everything. :class:`QuietRobotsTxtMiddleware` keeps that
behaviour and says it in one DEBUG line: the blog's own request fails the same way and the
spider reports it (``Blog ... failed: dns`` at INFO, status ``dns``). It replaces Scrapy's in
``DOWNLOADER_MIDDLEWARES`` at the same order (100).

How: the robots.txt request (``dont_obey_robotstxt`` in its meta, path ``/robots.txt``) goes
through this middleware's ``process_exception`` after the retries (``RetryMiddleware``, 550)
gave up; a download failure (:func:`blogfeeds.failures.failure_status`: ``dns``, ``timeout``,
``tls``, ``unreachable``, ``too_large``) is turned into an ``IgnoreRequest``, which Scrapy's
robots.txt code takes as "no robots.txt" without logging. Any other exception keeps Scrapy's
ERROR and traceback. Stat: ``blogfeeds/robots_txt_failed/<status>`` (one per host).
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.httpobj import urlparse_cached

from blogfeeds.failures import failure_status

logger = logging.getLogger(__name__)

_DOWNLOAD_FAILURES = frozenset({"dns", "timeout", "tls", "unreachable", "too_large"})


class QuietRobotsTxtMiddleware(RobotsTxtMiddleware):
    """``RobotsTxtMiddleware`` that reports an unreachable robots.txt in one DEBUG line
    (module doc)."""

    def process_exception(self, request: Request, exception: Exception, spider: Any = None) -> None:
        """Raise ``IgnoreRequest`` for a robots.txt download failure; else return None."""
        if not request.meta.get("dont_obey_robotstxt"):
            return
        if urlparse_cached(request).path != "/robots.txt":
            return
        status = failure_status(exception)
        if status not in _DOWNLOAD_FAILURES:
            return
        self.crawler.stats.inc_value(f"blogfeeds/robots_txt_failed/{status}")
        logger.debug(
            "%s failed (%s): the host is crawled as if it allowed everything", request, status
        )
        raise IgnoreRequest(f"robots.txt failed: {status}") from exception
