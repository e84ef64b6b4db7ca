"""The threads extraction runs in during a crawl: :class:`ThreadRunner`, a
:class:`~blogfeeds.extract.runner.Run` over ``BLOGFEEDS_EXTRACT_THREADS`` worker threads that
take the waiting steps by rank (the oldest blog's first).

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

import functools
import gc
import heapq
import itertools
import threading
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar, cast

from scrapy import signals
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from blogfeeds.config import CrawlSettings
from blogfeeds.extract.runner import Run, inline

P = ParamSpec("P")
T = TypeVar("T")


class ThreadRunner:
    """Runs each step in one of ``threads`` worker threads, started at the first step and
    stopped when the spider closes (or the reactor stops).

    Waiting steps run by rank, lowest first (:meth:`ranked`; a plain call is rank 0), then in
    the order they came. The blogs spider ranks a blog's steps by when its home page was
    answered, so the steps of blogs already begun go before the first step of a new one. The
    crawl is CPU-bound: without ranks, a blog whose home page is parsed waits behind every home
    page answered since, for each of its next steps, holding its parsed tree (about ten times
    the page's bytes) all the while; an answered home page that waits holds only its bytes.

    The reactor is looked up at the first step: Scrapy makes the spider, and so the runner,
    before it installs the crawl's reactor, and importing ``twisted.internet.reactor`` earlier
    would install the default one.
    """

    def __init__(self, threads: int, reactor: Any = None) -> None:
        if threads < 1:
            raise ValueError(f"a ThreadRunner needs a thread at least, not {threads}")
        self.threads = threads
        self.reactor: Any = reactor
        self._waiting: list[tuple[int, int, Callable[[], None]]] = []  # a heap
        self._order = itertools.count()
        self._lock = threading.Condition()
        self._workers: list[threading.Thread] = []
        self._stopped = False

    def __call__(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Awaitable[T]:
        return self.submit(0, fn, *args, **kwargs)

    def ranked(self, rank: int) -> Run:
        """A :class:`~blogfeeds.extract.runner.Run` whose steps wait behind those of lower
        ranks."""
        return cast(Run, functools.partial(self.submit, rank))

    def submit(
        self, rank: int, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> Awaitable[T]:
        """``fn(*args, **kwargs)`` in a worker, with ``rank``; its result (or exception) is
        delivered on the reactor thread."""
        done: Deferred[T] = Deferred()
        if self._stopped:  # nothing would run it: the caller hears so rather than waits
            done.errback(Failure(RuntimeError("the extraction threads are stopped")))
            return cast(Awaitable[T], maybe_deferred_to_future(done))
        if not self._workers:
            self._start()
        reactor = self.reactor
        assert reactor is not None  # _start set it

        def step() -> None:
            try:
                result = fn(*args, **kwargs)
            except StopIteration as exc:  # an asyncio future refuses it: the caller would hang
                error = RuntimeError(f"{getattr(fn, '__name__', fn)} raised StopIteration")
                error.__cause__ = exc
                reactor.callFromThread(done.errback, Failure(error))
            except BaseException:  # the awaiting caller gets it, as it would inline
                reactor.callFromThread(done.errback, Failure())
            else:
                reactor.callFromThread(done.callback, result)

        with self._lock:
            heapq.heappush(self._waiting, (rank, next(self._order), step))
            self._lock.notify()
        return cast(Awaitable[T], maybe_deferred_to_future(done))

    def _start(self) -> None:
        if self.reactor is None:
            from twisted.internet import reactor  # noqa: PLC0415 - the installed one, now

            self.reactor = reactor
        self._workers = [
            threading.Thread(target=self._work, name=f"blogfeeds-extract-{i}", daemon=True)
            for i in range(self.threads)
        ]
        for worker in self._workers:
            worker.start()
        self.reactor.addSystemEventTrigger("during", "shutdown", self.stop)

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._waiting and not self._stopped:
                    self._lock.wait()
                if self._stopped:
                    return
                _, _, step = heapq.heappop(self._waiting)
            step()
            del step  # its arguments (a parsed page) are not kept while the worker idles

    def stop(self) -> None:
        """Stop the workers once the steps they are running end, and wait for that; steps still
        waiting are dropped (the crawl is ending: nothing awaits them)."""
        with self._lock:
            self._stopped = True
            self._waiting.clear()
            self._lock.notify_all()
        for worker in self._workers:
            if worker is not threading.current_thread():
                worker.join()


def ranked(run: Run, rank: int) -> Run:
    """``run`` with ``rank`` (:meth:`ThreadRunner.ranked`); any other runner as it is."""
    return run.ranked(rank) if isinstance(run, ThreadRunner) else run


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
    threads = CrawlSettings.from_settings(crawler.settings).extract_threads
    if not threads:
        return inline
    _warm_up()
    gc.freeze()
    runner = ThreadRunner(threads)
    crawler.signals.connect(lambda **_: runner.stop(), signal=signals.spider_closed, weak=False)
    return runner
