"""The crawl's extraction runner: steps run in worker threads by rank, then in arrival order,
and each result or exception reaches the reactor thread."""

from __future__ import annotations

import gc
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

import pytest
from twisted.internet.defer import Deferred

from blogfeeds.extract.runner import inline
from blogfeeds.threads import ThreadRunner, ranked


class ReactorThread:
    """Stands for the reactor: what workers hand it with callFromThread runs on the test's
    thread when it calls :meth:`deliver`."""

    def __init__(self) -> None:
        self.calls: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...]]] = queue.Queue()

    def callFromThread(self, fn: Callable[..., Any], *args: Any) -> None:
        self.calls.put((fn, args))

    def addSystemEventTrigger(self, *args: Any) -> None:
        pass

    def deliver(self, n: int) -> None:
        for _ in range(n):
            fn, args = self.calls.get(timeout=10)
            fn(*args)


@pytest.fixture(autouse=True)
def _deferreds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's Deferreds as they are: with no reactor installed in this process, Scrapy
    cannot tell whether to wrap them in asyncio futures."""
    monkeypatch.setattr("blogfeeds.threads.maybe_deferred_to_future", lambda d: d)


def _result(awaitable: object) -> Any:
    assert isinstance(awaitable, Deferred)
    box: list[Any] = []
    awaitable.addBoth(box.append)
    assert box, "not delivered"
    return box[0]


def test_waiting_steps_run_by_rank_then_in_arrival_order() -> None:
    reactor = ReactorThread()
    runner = ThreadRunner(1, reactor)
    ran: list[str] = []
    busy, release = threading.Event(), threading.Event()

    def hold() -> str:
        busy.set()
        release.wait(10)
        return "held"

    def step(name: str) -> str:
        ran.append(name)
        return name

    first = runner.ranked(1)(hold)
    assert busy.wait(10)  # the one worker is taken: what follows waits
    new_blog = runner.ranked(9)(step, "new blog")
    old_blog = runner.ranked(3)(step, "old blog")
    newer_blog = runner.ranked(9)(step, "newer blog")
    unranked = runner(step, "unranked")
    release.set()
    reactor.deliver(5)
    assert ran == ["unranked", "old blog", "new blog", "newer blog"]
    assert [_result(d) for d in (first, new_blog, old_blog, newer_blog, unranked)] == [
        "held",
        "new blog",
        "old blog",
        "newer blog",
        "unranked",
    ]
    runner.stop()


def test_a_step_that_raises_reaches_its_caller_and_the_worker_goes_on() -> None:
    reactor = ReactorThread()
    runner = ThreadRunner(2, reactor)

    def fail() -> None:
        raise ValueError("bad page")

    failed = runner(fail)
    after = runner(str.upper, "next")
    reactor.deliver(2)
    failure = _result(failed)
    assert failure.check(ValueError) and "bad page" in str(failure.value)
    assert _result(after) == "NEXT"
    runner.stop()


def test_stop_waits_for_the_running_step_and_drops_the_waiting_ones() -> None:
    reactor = ReactorThread()
    runner = ThreadRunner(1, reactor)
    busy, release = threading.Event(), threading.Event()
    ran: list[int] = []

    def hold() -> bool:
        busy.set()
        return release.wait(10)

    running = runner(hold)
    assert busy.wait(10)
    runner(ran.append, 1)
    threading.Timer(0.2, release.set).start()
    runner.stop()  # returns once the running step has ended
    assert not any(worker.is_alive() for worker in runner._workers)
    reactor.deliver(1)
    assert _result(running) is True
    assert ran == []
    assert reactor.calls.empty()


def test_a_step_that_raises_stop_iteration_reaches_its_caller_as_a_runtime_error() -> None:
    """asyncio refuses StopIteration as a future's exception: passed on as it is, the awaiting
    coroutine would wait for ever."""
    reactor = ReactorThread()
    runner = ThreadRunner(1, reactor)
    stopped: object = runner(next, iter([]))
    reactor.deliver(1)
    failure = _result(stopped)
    assert failure.check(RuntimeError) and "StopIteration" in str(failure.value)
    runner.stop()


def test_a_worker_keeps_nothing_of_a_step_it_ran() -> None:
    reactor = ReactorThread()
    runner = ThreadRunner(1, reactor)

    class Page:
        pass

    page = Page()
    alive = weakref.ref(page)
    runner(id, page)
    reactor.deliver(1)
    del page
    gc.collect()
    assert alive() is None
    runner.stop()


def test_a_step_after_stop_fails_at_once() -> None:
    runner = ThreadRunner(1, ReactorThread())
    runner.stop()
    failure = _result(runner(str.upper, "late"))
    assert failure.check(RuntimeError) and "stopped" in str(failure.value)


def test_a_runner_without_threads_is_refused() -> None:
    with pytest.raises(ValueError, match="a thread at least"):
        ThreadRunner(0, ReactorThread())


@pytest.mark.parametrize("rank", [0, 5])
def test_ranked_leaves_another_runner_as_it_is(rank: int) -> None:
    assert ranked(inline, rank) is inline
