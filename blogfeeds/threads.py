"""The thread pool extraction runs in during a crawl: :class:`ThreadRunner`, a
:class:`~blogfeeds.extract.runner.Run` over a Twisted thread pool of
``BLOGFEEDS_EXTRACT_THREADS`` threads.

Reading one page costs milliseconds of CPU, a hostile one (155,000 links) seconds even within
the page-size bounds; on the reactor thread every download would wait meanwhile and time out.
In a worker thread the reactor keeps running: the extractors' Python code gives up the GIL every
``sys.getswitchinterval()`` (5 ms) and lxml releases it while parsing, so the reactor waits for
the GIL, not for the page (``bench/robustness.py`` measures the longest stall). One thread by
default: extraction is Python, so a second thread adds no CPU, only GIL contention and a second
page's memory. Threads rather than processes:
a parsed page is an lxml tree, which cannot cross a process boundary, and the extraction steps
hand trees to each other. The workers live as long as the crawl (lxml trees keep a reference to
the parser dictionary of the thread that parsed them).
"""

from __future__ import annotations

import gc
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar, cast

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.threads import deferToThreadPool
from twisted.python.threadpool import ThreadPool

from blogfeeds.config import CrawlConfig
from blogfeeds.extract.runner import Run, inline

P = ParamSpec("P")
T = TypeVar("T")


class ThreadRunner:
    """Runs each step in a pool of ``threads`` threads started at the first step and stopped
    when the spider closes (or the reactor stops). The reactor is looked up at the first step:
    Scrapy makes the spider, and so the runner, before it installs the crawl's reactor, and
    importing ``twisted.internet.reactor`` earlier would install the default one."""

    def __init__(self, threads: int) -> None:
        self.reactor: Any = None
        self.pool = ThreadPool(minthreads=0, maxthreads=threads, name="blogfeeds-extract")
        self._started = False

    def __call__(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Awaitable[T]:
        if not self._started:
            from twisted.internet import reactor  # noqa: PLC0415 - the installed one, now

            self._started = True
            self.reactor = reactor
            self.pool.start()
            self.reactor.addSystemEventTrigger("during", "shutdown", self.stop)
        deferred = deferToThreadPool(self.reactor, self.pool, fn, *args, **kwargs)
        return cast(Awaitable[T], maybe_deferred_to_future(deferred))

    def stop(self) -> None:
        if self._started and self.pool.started:
            self.pool.stop()


_WARM_UP_PAGE = (
    b"<html><head><title>Warm up</title>"
    b'<link rel="alternate" type="application/rss+xml" href="/feed.xml"></head>'
    b"<body><article><p>A first paragraph, long enough to be main text for the abstract.</p>"
    b'</article><ul class="friends"><li><a href="https://friend.example.com/">Friend</a></li>'
    b'<li><a href="https://other.github.io/">Other</a></li></ul></body></html>'
)


def _warm_up() -> None:
    """Read one small page, so that what the extractors build once (the public suffix list's
    trie, trafilatura's and the feed reader's tables, jusText's stop words, compiled rules)
    exists before ``gc.freeze`` rather than being scanned by every full collection of the
    crawl."""
    from blogfeeds.extract.blog import analyze_page  # noqa: PLC0415 - crawl time only
    from blogfeeds.extract.feedreader import read_feed  # noqa: PLC0415
    from blogfeeds.extract.metadata import load_stop_words  # noqa: PLC0415

    analyze_page("https://warm-up.example/", _WARM_UP_PAGE)
    load_stop_words()
    read_feed(b'<?xml version="1.0"?><rss version="2.0"><channel><title>W</title></channel></rss>')


def extract_runner(crawler: Any) -> Run:
    """The crawl's runner: a :class:`ThreadRunner` of ``BLOGFEEDS_EXTRACT_THREADS`` threads
    (stopped at ``spider_closed``), or :data:`~blogfeeds.extract.runner.inline` when it is 0.

    Everything alive now (modules, Scrapy, the settings) is moved out of the garbage collector's
    view (``gc.freeze``): reading a page allocates enough to trigger full collections, which
    hold the GIL, and so the reactor, while they scan every object of the process; frozen,
    those objects are not scanned (in a process with Scrapy loaded, a full collection costs
    85-125 ms of CPU without, 20-80 ms with).
    """
    threads = CrawlConfig.from_settings(crawler.settings).extract_threads
    if not threads:
        return inline
    _warm_up()
    gc.freeze()
    runner = ThreadRunner(threads)
    crawler.signals.connect(lambda **_: runner.stop(), signal=signals.spider_closed, weak=False)
    return runner
