"""In-flight leases: the requests and seeds a worker has popped and not yet acknowledged.

scrapy-redis 0.9.1 keeps a popped request only in the worker's memory, so a hard kill (SIGKILL,
OOM) loses it. Here the Lua call that pops a request also records it in the worker's in-flight
hash (``P S:inflight:W``) under a lease id; the entry is removed (*acknowledged*) only once the
engine has finished with the request (callback done, child requests queued, items through the
pipelines) **and** the storage pipeline reports its items durable
(:mod:`blogfeeds.frontier.signals`). A worker restarted with the same id puts its previous
run's entries back in the queue (:meth:`Leases.recover`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import scrapy
from redis.exceptions import RedisError

from blogfeeds.frontier.defaults import RECOVERED_META, FrontierKeys
from blogfeeds.frontier.outage import RedisOutage
from blogfeeds.frontier.scripts import RELEASE_CLAIMS

logger = logging.getLogger(__name__)

_ACK_CHUNK = 1000  # lease ids per HDEL


class Leases:
    """One worker's in-flight bookkeeping.

    :meth:`track` a popped request; :meth:`completed` lists the tracked ones the engine has
    finished with; :meth:`seal` files them under a storage batch and :meth:`durable` acknowledges
    every batch up to a number. An acknowledgement Redis did not take is retried with the next.
    """

    def __init__(self, server: Any, crawler: Any, outage: RedisOutage) -> None:
        self.server = server
        self.crawler = crawler
        self.outage = outage
        self.keys: FrontierKeys | None = None  # set when the scheduler opens
        self._tracked: dict[str, scrapy.Request] = {}
        self._sealed: list[tuple[int, list[str]]] = []
        self._unacked: list[str] = []  # leases whose acknowledgement failed

    def track(self, lease: str, request: scrapy.Request) -> None:
        """Follow ``request``, popped under ``lease``, until the engine has finished with it."""
        self._tracked[lease] = request

    def forget(self, lease: str) -> None:
        """Stop following ``lease``: its request is queued again (a redirect or a retry), and
        the Lua call that queues it removes the in-flight entry."""
        self._tracked.pop(lease, None)

    def completed(self) -> list[str]:
        """Leases of tracked requests the engine has finished with (downloaded, callback done,
        children queued, items through the pipelines), no longer tracked. Without
        :func:`engine_in_progress` nothing counts as finished (safe: re-fetched after a kill)."""
        in_progress = engine_in_progress(self.crawler)
        if in_progress is None:
            return []
        done = [lease for lease, req in self._tracked.items() if req not in in_progress]
        for lease in done:
            del self._tracked[lease]
        return done

    def seal(self, seq: int) -> None:
        """Storage batch ``seq`` holds the items of the requests completed by now."""
        self._sealed.append((seq, self.completed()))

    def durable(self, seq: int) -> None:
        """Every storage batch up to ``seq`` is durable: acknowledge their requests."""
        ready = [lease for s, leases in self._sealed if s <= seq for lease in leases]
        self._sealed = [(s, leases) for s, leases in self._sealed if s > seq]
        self.ack(ready)

    def ack(self, leases: list[str]) -> None:
        """Remove in-flight entries; those Redis did not take wait for the next call."""
        leases = self._unacked + leases
        self._unacked = []
        if not leases or self.keys is None:
            return
        for start in range(0, len(leases), _ACK_CHUNK):
            chunk = leases[start : start + _ACK_CHUNK]
            try:
                self.server.hdel(self.keys.inflight, *chunk)
            except RedisError as exc:
                self._unacked = leases[start:]
                self.outage.failed(exc)
                return
            self.crawler.stats.inc_value("frontier/acked", len(chunk))

    def recover(
        self,
        kind: str,
        decode: Callable[[bytes], scrapy.Request],
        encode: Callable[[scrapy.Request], bytes],
        quarantine: Callable[[str, bytes, str, Exception], None],
    ) -> None:
        """Put the previous run's in-flight entries of this worker id back to be fetched again
        (requests into the queue of ``kind``, seeds into ``start_urls``), after releasing the
        blog ids it claimed and never made durable. Each is marked :data:`RECOVERED_META`:
        the killed run may have recorded offers of its links without queueing them. A request
        ``decode`` refuses is passed to ``quarantine`` instead (seeds are checked when popped
        again)."""
        assert self.keys is not None
        keys, server = self.keys, self.server
        released = server.eval(RELEASE_CLAIMS, 2, keys.blog_ids, keys.claims, keys.worker)
        if released:
            logger.warning(
                "worker %s: released %d blog ids whose items its previous run had not stored",
                keys.worker,
                released,
            )
        entries = server.hgetall(keys.inflight)
        if not entries:
            return
        requests = seeds = 0
        for lease, data in entries.items():
            pipe = server.pipeline(transaction=True)
            if lease.startswith(b"s"):
                pipe.lpush(keys.start_urls, _recovered_seed(data))
                seeds += 1
            else:
                try:
                    request = decode(data)
                except Exception as exc:
                    quarantine(lease.decode(), data, keys.inflight, exc)
                    continue
                request.meta[RECOVERED_META] = True
                entry = encode(request)
                if kind == "zset":
                    pipe.zadd(keys.requests, {entry: -request.priority})
                else:
                    pipe.lpush(keys.requests, entry)
                requests += 1
            pipe.hdel(keys.inflight, lease)
            pipe.execute()
        self.crawler.stats.inc_value("frontier/recovered", requests + seeds)
        logger.warning(
            "worker %s: re-queued %d requests and %d seeds left in flight by its previous run "
            "(killed before they were acknowledged)",
            keys.worker,
            requests,
            seeds,
        )


def engine_in_progress(crawler: Any) -> set[scrapy.Request] | None:
    """The requests the engine holds, from the scheduler until their callback, children and
    items are done (``ExecutionEngine._slot.inprogress``, Scrapy 2.13–2.19), or None when the
    engine has none or Scrapy moved it."""
    try:
        slot = getattr(crawler.engine, "_slot", None)
    except RuntimeError:  # no engine: nothing runs
        return None
    return getattr(slot, "inprogress", None)


def _recovered_seed(data: bytes) -> bytes:
    """A seed's JSON with :data:`RECOVERED_META` in its meta; an entry that is no JSON object
    goes back as it was (popped again, it is quarantined with the reason)."""
    try:
        payload = json.loads(data)
    except (ValueError, RecursionError):
        return data
    meta = payload.get("meta") or {} if isinstance(payload, dict) else None
    if not isinstance(meta, dict):
        return data
    payload["meta"] = {**meta, RECOVERED_META: True}
    return json.dumps(payload, ensure_ascii=False).encode()
