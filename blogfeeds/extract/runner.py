"""Where extraction's CPU-bound steps run: the injected :class:`Run`.

:func:`~blogfeeds.extract.blog.extract_blog` awaits its fetches and hands every synchronous
step that reads a whole page or feed (parsing and analysing a page, reading a fetched feed, a
friend list, scoring feed candidates) to ``run``. The default, :func:`inline`, calls it at once;
the ``blogs`` spider passes one that runs it in a thread pool (``BLOGFEEDS_EXTRACT_THREADS``),
so that the reactor thread keeps serving downloads while a page is read. Extraction stays pure:
this module knows no event loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ParamSpec, Protocol, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class Run(Protocol):
    """``await run(fn, *args, **kwargs)`` is ``fn(*args, **kwargs)``, run wherever the caller
    chooses (its exception is raised by the await)."""

    def __call__(
        self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
    ) -> Awaitable[T]: ...


async def _call(fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    return fn(*args, **kwargs)


inline: Run = _call
"""Run each step at once, in the caller's thread (tests, ``scrapy inspect``)."""
