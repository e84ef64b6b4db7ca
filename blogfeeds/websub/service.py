"""The WebSub callback endpoint and subscription upkeep: a small Twisted web server on the
project's reactor (``scrapy websub``, :mod:`blogfeeds.commands.websub`).

- ``GET <anything>/<callback>``: a hub's verification of intent or denial;
  ``POST <anything>/<callback>``: a content distribution. Only the last path segment counts,
  so a reverse proxy may mount the endpoint under any prefix (docs/websub.md). A body larger
  than ``BLOGFEEDS_WEBSUB_MAX_BODY`` is discarded as it arrives and answered 413.
- every ``BLOGFEEDS_WEBSUB_INTERVAL`` seconds, the subscriptions whose next action has come are
  (un)subscribed or renewed (:meth:`Subscriber.due_actions`).

The database is used from one thread (an SQLite connection belongs to its thread); a push's
body is read in the reactor's thread pool, one push per subscription at a time (another is
answered 429), so a flood on one callback never queues other feeds' pushes. Requests to hubs
run in threads of their own, bounded per hub host and each within a whole-request deadline, so
no hub delays another or the stop (docs/security.md). State lives in the database only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from scrapy.exceptions import NotConfigured
from twisted.internet.defer import Deferred, DeferredSemaphore, inlineCallbacks
from twisted.internet.task import LoopingCall
from twisted.internet.threads import deferToThread, deferToThreadPool
from twisted.python.threadpool import ThreadPool
from twisted.web import server
from twisted.web.http import HTTPChannel
from twisted.web.resource import Resource

from blogfeeds.config import SsrfSettings, WebSubSettings, database_url
from blogfeeds.feedcrawl.claims import lease_owner
from blogfeeds.feedcrawl.config import FeedsConfig
from blogfeeds.revisit import EstimatingPolicy
from blogfeeds.storage.websub import WebSubStore
from blogfeeds.websub.client import HubCalls, HubRefused, post_form
from blogfeeds.websub.subscriber import Action, Subscriber, read_push

logger = logging.getLogger(__name__)
_T = TypeVar("_T")
#: Threads for requests to hubs, all hubs together.
HUB_THREADS = 8


def _reactor() -> Any:
    """The installed reactor (imported late: the command installs the project's first)."""
    from twisted.internet import reactor  # noqa: PLC0415

    return reactor


def minutes_now() -> float:
    """The wall clock in epoch minutes (WebSub leases are real time, whatever BLOGFEEDS_NOW)."""
    return time.time() / 60.0


class CappedRequest(server.Request):
    """A request whose body is kept only up to ``max_body`` bytes (the rest is discarded as it
    arrives, and ``too_large`` set)."""

    max_body = 2_000_000

    def gotLength(self, length: int | None) -> None:
        super().gotLength(None)  # in memory: never more than max_body bytes are kept
        self.too_large = length is not None and length > self.max_body
        self.received = 0

    def handleContentChunk(self, data: bytes) -> None:
        self.received += len(data)
        if self.received > self.max_body:
            self.too_large = True
        if not self.too_large:
            super().handleContentChunk(data)


class CallbackChannel(HTTPChannel):
    """The endpoint's HTTP connection: a request Twisted refuses before any resource sees it
    (``400`` and the connection closed: a malformed request line, header or chunk; a hub that
    sends both ``Content-Length`` and ``Transfer-Encoding: chunked``, which real hubs do when
    the publisher chunks its feed and which Twisted refuses against request smuggling) is
    told to the service (:meth:`WebSubService.refused`), so a hub that pushes and fails shows."""

    service: WebSubService | None = None

    def _respondToBadRequestAndDisconnect(self) -> None:
        # Twisted's one way out for every such request (private: a test fails if it goes)
        if self.service is not None:
            command = getattr(self, "_command", b"")  # set once the request line was read
            path = getattr(self, "_path", b"")
            self.service.refused(command, path, str(getattr(self.getPeer(), "host", "?")))
        super()._respondToBadRequestAndDisconnect()


def _callback(path: bytes) -> str:
    """The callback a request path names: its last segment (a proxy may add a prefix)."""
    segments = [s for s in path.decode("latin-1").split("?")[0].split("/") if s]
    return segments[-1] if segments else ""


class CallbackResource(Resource):
    isLeaf = True

    def __init__(self, service: WebSubService) -> None:
        super().__init__()
        self.service = service

    def _answer(self, request: server.Request, work: Deferred[tuple[int, bytes]]) -> Any:
        gone: list[bool] = []  # the client went away: nothing to answer

        def done(result: tuple[int, bytes]) -> None:
            if gone:
                return
            status, body = result
            request.setResponseCode(status)
            request.setHeader(b"content-type", b"text/plain; charset=utf-8")
            request.write(body)
            request.finish()

        def failed(failure: Any) -> None:
            logger.error("WebSub endpoint error: %s", failure.getTraceback())
            if not gone:
                request.setResponseCode(500)
                request.finish()

        request.notifyFinish().addErrback(lambda _: gone.append(True))
        work.addCallbacks(done, failed)
        return server.NOT_DONE_YET

    def render_GET(self, request: server.Request) -> Any:
        query = {
            k.decode("utf-8", "replace"): v[0].decode("utf-8", "replace")
            for k, v in (request.args or {}).items()
            if v
        }
        callback = _callback(request.path)
        return self._answer(
            request, self.service.in_db(lambda s: s.verify(callback, query, minutes_now()))
        )

    def render_POST(self, request: server.Request) -> Any:
        if getattr(request, "too_large", False):
            self.service.count("push/too_large")
            request.setResponseCode(413)
            return b""
        assert request.content is not None
        body = request.content.read()
        headers = {
            name.decode("latin-1").lower(): ", ".join(v.decode("latin-1") for v in values)
            for name, values in request.requestHeaders.getAllRawHeaders()
        }
        callback = _callback(request.path)
        if callback in self.service.pushing:
            # One push per subscription at a time: a hub flooding one callback waits its turn
            # (hubs retry), and pushes for other feeds never queue behind its pile.
            self.service.count("push/busy")
            request.setResponseCode(429)
            request.setHeader(b"retry-after", b"60")
            return b""
        return self._answer(request, self.service.push(callback, headers, body))


def _answered(action: Action, status: int, body: str) -> Callable[[Subscriber], None]:
    return lambda s: s.answered(action, status, body, minutes_now())


def _failed(action: Action, error: str) -> Callable[[Subscriber], None]:
    return lambda s: s.fail(action.sub, minutes_now(), error)


def _refused_push(callback: str, peer: str) -> Callable[[Subscriber], None]:
    """A push on ``callback`` refused as malformed HTTP: counted like a bad push (the stat
    ``push/malformed``, the subscription's ``bad_pushes``) and logged with its topic."""

    def work(s: Subscriber) -> None:
        s.stats["push/malformed"] += 1
        sub = s.store.by_callback(callback) if callback else None
        if sub is not None:
            s.store.pushed(callback, minutes_now(), good=False)
        logger.warning(
            "WebSub: push from %s for %s refused as malformed HTTP (400 before reading it; "
            "both Content-Length and Transfer-Encoding: chunked?)",
            peer,
            sub.topic if sub is not None else f"unknown callback {callback!r}",
        )

    return work


class WebSubService:
    """The endpoint and the upkeep loop of one ``scrapy websub`` process."""

    def __init__(
        self, config: WebSubSettings, database: str, feeds: FeedsConfig, allow_private: bool
    ):
        self.config = config
        self.database = database
        self.feeds = feeds
        self.allow_private = allow_private
        self.owner = lease_owner(feeds.worker or "websub")
        self.pool = ThreadPool(minthreads=1, maxthreads=1, name="websub-db")
        # Requests to hubs: their own threads, at most hub_concurrency per hub host, so a hub
        # that never finishes answering holds only those (and each only until hub_timeout).
        self.hub_pool = ThreadPool(minthreads=0, maxthreads=HUB_THREADS, name="websub-hubs")
        self.hub_slots: dict[str, DeferredSemaphore] = {}
        self.calls = HubCalls()
        self.pushing: set[str] = set()
        self.subscriber: Subscriber | None = None
        self.loop: LoopingCall | None = None
        self.port: Any = None
        self.round: Deferred[Any] | None = None

    @classmethod
    def from_settings(cls, settings: Any) -> WebSubService:
        """The service; ``NotConfigured`` when WebSub is off, has no public URL, or there is no
        database. A bad setting is a ``StartupError``."""
        config = WebSubSettings.from_settings(settings)
        if not config.enabled:
            raise NotConfigured("WebSub is off (BLOGFEEDS_WEBSUB_ENABLED)")
        if not config.public_url:
            raise NotConfigured("BLOGFEEDS_WEBSUB_PUBLIC_URL is not set: hubs cannot reach us")
        url = database_url(settings)
        if not url:
            raise NotConfigured("WebSub needs a database (BLOGFEEDS_DATABASE_URL)")
        allow = SsrfSettings.from_settings(settings).allow_private_targets
        return cls(config, url, FeedsConfig.from_settings(settings), allow)

    # --- the database thread -------------------------------------------------------------------

    def _open(self) -> Subscriber:
        if self.subscriber is None:
            store = WebSubStore.open(self.database)
            policy = self.feeds.make_policy()
            if isinstance(policy, EstimatingPolicy):
                policy.warm(store.states())
            self.subscriber = Subscriber(store, self.config, policy, owner=self.owner)
        return self.subscriber

    def in_db(self, work: Callable[[Subscriber], _T]) -> Deferred[_T]:
        """``work(subscriber)`` on the database thread."""
        return deferToThreadPool(_reactor(), self.pool, lambda: work(self._open()))

    def refused(self, command: bytes, path: bytes, peer: str) -> None:
        """Twisted refused a request as malformed (:class:`CallbackChannel`): a POST is a push
        that failed (:func:`_refused_push`), anything else is counted."""
        if command != b"POST":
            self.count("request/malformed")
            return
        self.in_db(_refused_push(_callback(path), peer)).addErrback(
            lambda failure: logger.error("WebSub: %s", failure.getTraceback())
        )

    def count(self, name: str) -> None:
        if self.subscriber is not None:
            self.subscriber.stats[name] += 1

    def _close(self) -> None:
        if self.subscriber is not None:
            self.subscriber.store.close()
            self.subscriber = None

    # --- content distribution ----------------------------------------------------------------

    @inlineCallbacks
    def push(self, callback: str, headers: dict[str, str], body: bytes) -> Any:
        """A push on ``callback``: checked and stored on the database thread, read in between
        in a worker thread (a large body never holds the database thread other pushes need);
        ``(status, b"")``."""
        self.pushing.add(callback)
        try:
            target = yield self.in_db(
                lambda s: s.push_target(callback, headers, body, minutes_now())
            )
            if isinstance(target, int):
                return target, b""
            read = yield deferToThread(read_push, target, headers, body, minutes_now())
            status = yield self.in_db(lambda s: s.store_push(target, read, minutes_now()))
            return status, b""
        finally:
            self.pushing.discard(callback)

    # --- upkeep --------------------------------------------------------------------------------

    @inlineCallbacks
    def _upkeep(self) -> Any:
        """Claim the due actions and send them; the round does not wait for the hubs' answers
        (each request settles on its own), so one slow hub never delays the next round."""
        actions: list[Action] = yield self.in_db(lambda s: s.due_actions(minutes_now()))
        for action in actions:
            host = (urlsplit(action.hub).hostname or action.hub).lower()
            slots = self.hub_slots.setdefault(host, DeferredSemaphore(self.config.hub_concurrency))
            slots.run(self._request, action).addBoth(self._settled, host)

    def _settled(self, result: Any, host: str) -> None:
        slots = self.hub_slots.get(host)
        if slots is not None and slots.tokens == slots.limit and not slots.waiting:
            del self.hub_slots[host]
        if hasattr(result, "getTraceback"):
            logger.error("WebSub request failed: %s", result.getTraceback())

    @inlineCallbacks
    def _request(self, action: Action) -> Any:
        try:
            answer = yield deferToThreadPool(
                _reactor(),
                self.hub_pool,
                lambda: post_form(
                    action.hub,
                    action.form,
                    timeout=self.config.hub_timeout,
                    allow_private=self.allow_private,
                    calls=self.calls,
                ),
            )
        except HubRefused as exc:
            error = f"refused by the SSRF guard: {exc}"
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        else:
            yield self.in_db(_answered(action, answer.status, answer.body))
            return
        if self.calls.closed:  # stopping: the request is asked again after a restart
            return
        yield self.in_db(_failed(action, error))

    def _tick(self) -> None:
        if self.round is not None:  # the last round is still waiting for hubs
            return
        self.round = self._upkeep()

        def done(result: Any) -> None:
            self.round = None
            if hasattr(result, "getTraceback"):
                logger.error("WebSub upkeep failed: %s", result.getTraceback())

        self.round.addBoth(done)

    # --- start and stop ------------------------------------------------------------------------

    def start(self) -> None:
        """Listen on ``BLOGFEEDS_WEBSUB_LISTEN`` and start the upkeep loop."""
        self.pool.start()
        self.hub_pool.start()
        host, _, port = self.config.listen.rpartition(":")
        site = server.Site(CallbackResource(self))
        CappedRequest.max_body = self.config.max_body
        site.requestFactory = CappedRequest
        CallbackChannel.service = self
        # plain HTTP/1.1 (Twisted's default wraps the channel for HTTP/2 over TLS, unused here)
        site.protocol = CallbackChannel  # type: ignore[method-assign, assignment]
        site.displayTracebacks = False
        self.port = _reactor().listenTCP(int(port), site, interface=host.strip("[]"))
        logger.info(
            "WebSub endpoint on %s, public URL %s", self.config.listen, self.config.public_url
        )
        self.loop = LoopingCall(self._tick)
        self.loop.start(self.config.interval, now=True)
        _reactor().addSystemEventTrigger("before", "shutdown", self.stop)

    @inlineCallbacks
    def stop(self) -> Any:
        """Stop promptly: requests to hubs under way are ended (a hub answering one header
        line every few seconds would hold the process until its deadline)."""
        self.calls.close()
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        if self.port is not None:
            yield self.port.stopListening()
            self.port = None
        if self.subscriber is not None:
            logger.info("WebSub stats: %s", dict(sorted(self.subscriber.stats.items())))
        yield deferToThreadPool(_reactor(), self.pool, self._close)
        self.pool.stop()
        self.hub_pool.stop()
