"""Requests to WebSub hubs: a form POST (W3C WebSub §5.1), behind the SSRF guard.

A feed names its hub, so a hub URL is untrusted input: only http(s), and (unless
``BLOGFEEDS_ALLOW_PRIVATE_TARGETS``) only hosts whose every address is public
(:func:`blogfeeds.middlewares.ssrf.refusal_kind`); the connection goes to the address that was
checked, so a DNS answer that changes in between (rebinding) cannot redirect it. Redirects are
not followed (a hub answers 202 itself), and at most 64 KB of the answer is read.

A request has one deadline for all of it (``timeout``: connect, send, every line of the
answer): a hub that answers one header line every few seconds (a tarpit) would outlast any
timeout per read. At the deadline, or when :meth:`HubCalls.close` ends every call at once
(the process stops), the socket is shut down and the call fails with ``OSError``.

Blocking (``http.client``): the service calls it in worker threads.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from blogfeeds.middlewares.ssrf import literal_address, refusal_kind

_READ_MAX = 65_536


class HubRefused(Exception):
    """The hub URL may not be requested (``kind``: ``scheme``, ``dns``, ``loopback``, ...)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class HubCalls:
    """The sockets of the requests to hubs under way, so that each can be ended at its
    deadline and all at once when the process stops."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self.closed = False

    def add(self, sock: socket.socket) -> None:
        with self._lock:
            if self.closed:
                _end(sock)
            self._open.add(sock)

    def end(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)
        _end(sock)

    def close(self) -> None:
        """End every call under way, and every later one at once."""
        with self._lock:
            self.closed = True
            socks, self._open = self._open, set()
        for sock in socks:
            _end(sock)


def _end(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked reading it
    except OSError:
        pass


@dataclass(frozen=True)
class HubAnswer:
    status: int
    body: str


def checked_address(host: str, port: int, allow_private: bool) -> str:
    """The address to connect to for ``host``: its first, once every one is public (or
    ``allow_private``); :class:`HubRefused` otherwise."""
    literal = literal_address(host)
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            infos = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise HubRefused(f"{host} does not resolve: {exc}", "dns") from exc
        addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise HubRefused(f"{host} does not resolve", "dns")
    if not allow_private:
        for address in addresses:
            kind = refusal_kind(address)
            if kind is not None:
                raise HubRefused(f"{host} resolves to {address} ({kind})", kind)
    return addresses[0]


def post_form(
    url: str,
    form: dict[str, str],
    *,
    timeout: float = 20.0,
    allow_private: bool = False,
    calls: HubCalls | None = None,
) -> HubAnswer:
    """POST ``form`` (``application/x-www-form-urlencoded``) to hub ``url`` within ``timeout``
    seconds in all; the answer's status and up to 64 KB of its body. :class:`HubRefused` for a
    URL the guard refuses, ``OSError`` (and ``http.client`` errors) for a hub that cannot be
    reached, or past the deadline, or when ``calls`` is closed."""
    calls = calls or HubCalls()
    if calls.closed:
        raise OSError("the subscriber is stopping")
    deadline = time.monotonic() + timeout
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise HubRefused(f"hub URL {url!r} is not http(s)", "scheme")
    port = parts.port or (443 if scheme == "https" else 80)
    address = checked_address(parts.hostname, port, allow_private)
    conn: http.client.HTTPConnection
    if scheme == "https":
        conn = http.client.HTTPSConnection(
            parts.hostname, port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        conn = http.client.HTTPConnection(parts.hostname, port, timeout=timeout)

    def connect(_address: object, _timeout: object = None, _source: object = None) -> socket.socket:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no answer from the hub within {timeout:g} s")
        sock = socket.create_connection((address, port), left)
        calls.add(sock)
        ended.append(sock)
        timer.start()
        return sock

    ended: list[socket.socket] = []
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        for sock in ended:
            _end(sock)

    # At the deadline the socket is shut down, whatever http.client is blocked on.
    timer = threading.Timer(max(deadline - time.monotonic(), 0.0), expire)
    timer.daemon = True
    conn._create_connection = connect  # type: ignore[attr-defined]  # the checked address
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    body = urlencode(form).encode("ascii")
    try:
        conn.request(
            "POST",
            path,
            body=body,
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "User-Agent": "blogfeeds-websub/0.1",
            },
        )
        response = conn.getresponse()
        text = response.read(_READ_MAX).decode("utf-8", "replace")
    except (OSError, http.client.HTTPException) as exc:
        _cut_short(expired, calls, timeout, exc)
        raise
    finally:
        timer.cancel()
        for sock in ended:
            calls.end(sock)
        conn.close()
    # A shut-down socket reads as the end of the headers or body: that answer is no answer.
    _cut_short(expired, calls, timeout)
    return HubAnswer(response.status, text)


def _cut_short(
    expired: threading.Event, calls: HubCalls, timeout: float, cause: Exception | None = None
) -> None:
    if expired.is_set():
        raise TimeoutError(f"no whole answer from the hub within {timeout:g} s") from cause
    if calls.closed:
        raise OSError("the subscriber is stopping") from cause
