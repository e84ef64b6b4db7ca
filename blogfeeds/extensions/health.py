"""The crawl process's health as stats: the reactor's longest stall and the peak RSS.

:class:`ReactorHealth` ticks every ``BLOGFEEDS_STALL_TICK`` seconds on the reactor
(``LoopingCall``); a tick that comes late says how long the reactor thread was held (by a
callback, a pipeline, extraction on the reactor thread), and the longest lateness is the stat
``blogfeeds/reactor/longest_stall_ms``. At close it records ``blogfeeds/peak_rss_mb``, the
process's resident-set peak (every moment counts, not only samples): Linux's ``VmHWM``, since
``getrusage``'s ``ru_maxrss`` survives ``exec`` and would report the RSS of the process that
started the crawl when it was bigger.
"""

from __future__ import annotations

import resource
import time
from typing import Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet.task import LoopingCall

from blogfeeds.config import HealthSettings

STALL_STAT = "blogfeeds/reactor/longest_stall_ms"
RSS_STAT = "blogfeeds/peak_rss_mb"


class ReactorHealth:
    def __init__(self, stats: Any, tick: float) -> None:
        self.stats, self.tick = stats, tick
        self.longest = 0.0
        self._last = 0.0
        self._loop = LoopingCall(self._tick)

    @classmethod
    def from_crawler(cls, crawler: Any) -> ReactorHealth:
        tick = HealthSettings.from_settings(crawler.settings).stall_tick
        if not tick:
            raise NotConfigured("BLOGFEEDS_STALL_TICK is 0")
        ext = cls(crawler.stats, tick)
        crawler.signals.connect(ext.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(ext.spider_closed, signal=signals.spider_closed)
        return ext

    def spider_opened(self, spider: Any) -> None:
        self._last = time.monotonic()
        self._loop.start(self.tick, now=False)

    def _tick(self) -> None:
        now = time.monotonic()
        late = now - self._last - self.tick
        self._last = now
        if late > self.longest:
            self.longest = late
            self.stats.set_value(STALL_STAT, round(late * 1000))

    def spider_closed(self, spider: Any) -> None:
        if self._loop.running:
            self._loop.stop()
        self.stats.set_value(STALL_STAT, round(self.longest * 1000))
        self.stats.set_value(RSS_STAT, round(peak_rss_mb()))


def peak_rss_mb() -> float:
    """This process's peak resident set, in MiB (``VmHWM``, else ``ru_maxrss``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
