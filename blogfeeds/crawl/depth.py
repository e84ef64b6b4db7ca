"""Hop depth: a blog's depth is its distance in friend hops from the nearest seed, exactly.

The crawl reaches a blog first by whatever path its order took, not always the shortest, so
:class:`DepthBook` keeps each blog's best depth and, with a ``DEPTH_LIMIT``, the friends of each
blog read at depth ≥ 1. A shorter path to a known blog then lowers its depth: a queued blog gets
a copy of its request at the lower depth (the earlier copy goes stale,
:mod:`blogfeeds.crawl.order`); a blog already read has its friends offered again. So with
``DEPTH_LIMIT=N`` every blog within N hops is crawled, none beyond, and no URL twice. Without a
limit only the fact that a blog was read is kept. Memory is bounded by
``BLOGFEEDS_SEEN_CAPACITY``; with the Redis frontier the book is shared
(:class:`blogfeeds.frontier.depths.RedisDepthBook`).

:class:`HopDepthMiddleware` replaces Scrapy's ``DepthMiddleware`` so that a request keeps the
depth the spider gave it (a friend offered again comes out of another blog's callback).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scrapy import Request
from scrapy.http import Response
from scrapy.spidermiddlewares.depth import DepthMiddleware

from blogfeeds.crawl.seen import SeenMap


@dataclass(frozen=True)
class Offer:
    """What a blog offered at a depth lower than any before asks for: ``new`` (never seen:
    request it); else ``friends`` when it was read already (offer them one hop further), or
    None (queued or downloading: a copy of its request at the new depth)."""

    new: bool
    friends: tuple[str, ...] | None = None


class DepthBook:
    """Best depth and friends per blog, in this process (module doc).

    ``keep_friends`` (a ``DEPTH_LIMIT`` is set) keeps the friends of every blog read at depth
    ≥ 1 (else only that it was read); ``capacity`` bounds both maps
    (:class:`~blogfeeds.crawl.seen.SeenMap`).
    """

    def __init__(self, capacity: int = 0, *, keep_friends: bool = False) -> None:
        self.keep_friends = keep_friends
        self.depths = SeenMap(capacity)
        self.friends = SeenMap(capacity)  # blogs read: their friends, or () without a limit

    def best(self, blog: str) -> int | None:
        """The best depth this process knows for ``blog`` (None: not seen here)."""
        best = self.depths.get(blog)
        return None if best is None else int(best)

    def offer(self, blog: str, depth: int) -> Offer | None:
        """``blog`` reached at ``depth``: None when it is known at that depth or lower, else what
        the lower depth asks for (the depth is recorded)."""
        best = self.depths.get(blog)
        if best is not None and best <= depth:
            return None
        self.depths.put(blog, depth)
        if best is None:
            return Offer(new=True)
        return Offer(new=False, friends=self.friends.get(blog))

    def read(self, blog: str, depth: int, friends: Sequence[str]) -> int:
        """``blog``'s page, requested at ``depth``, was read and lists ``friends`` (URLs): the
        depth to record it at and offer its friends from (lower when a shorter path was found
        while it downloaded)."""
        best = self.depths.get(blog)
        if best is None or depth < best:
            best = depth
        self.depths.put(blog, best)
        if best > 0:
            self.friends.put(blog, tuple(friends) if self.keep_friends else ())
        return int(best)

    def claim(self, blog: str, depth: int, token: str) -> bool:
        """Whether the request for ``blog`` at ``depth`` with re-push ``token`` may be
        downloaded. In one process the re-push tokens decide alone (always True here); the
        shared book of the Redis frontier decides across workers."""
        return True


class HopDepthMiddleware(DepthMiddleware):
    """Scrapy's ``DepthMiddleware`` (at its place, 900), except that a request yielded with a
    ``meta["depth"]`` of its own keeps it (``DEPTH_LIMIT`` still applies, ``DEPTH_PRIORITY``
    does not: the crawl strategy orders blog requests). The blogs spider sets the depth of every
    blog request; other requests get their response's depth plus one, as in Scrapy."""

    def get_processed_request(self, request: Request, response: Response | None) -> Request | None:
        depth = request.meta.get("depth")
        if response is None or depth is None:
            return super().get_processed_request(request, response)
        if self.maxdepth and depth > self.maxdepth:
            self.stats.inc_value("depth/request_ignored_count")
            return None
        self.stats.max_value("request_depth_max", depth)
        return request
