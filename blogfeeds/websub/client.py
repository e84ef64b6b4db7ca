"""Requests to WebSub hubs: a form POST (W3C WebSub §5.1), behind the SSRF guard.

A feed names its hub, so a hub URL is untrusted input: only http(s), and (unless
``BLOGFEEDS_ALLOW_PRIVATE_TARGETS``) only hosts whose every address is public
(:func:`blogfeeds.middlewares.ssrf.refusal_kind`); the connection goes to the address that was
checked, so a DNS answer that changes in between (rebinding) cannot redirect it. Redirects are
not followed (a hub answers 202 itself), and at most 64 KB of the answer is read.

Blocking (``http.client``): the subscriber calls it in a worker thread.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from blogfeeds.middlewares.ssrf import literal_address, refusal_kind

_READ_MAX = 65_536


class HubRefused(Exception):
    """The hub URL may not be requested (``kind``: ``scheme``, ``dns``, ``loopback``, ...)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


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
    url: str, form: dict[str, str], *, timeout: float = 20.0, allow_private: bool = False
) -> HubAnswer:
    """POST ``form`` (``application/x-www-form-urlencoded``) to hub ``url``; the answer's
    status and up to 64 KB of its body. :class:`HubRefused` for a URL the guard refuses,
    ``OSError`` (and ``http.client`` errors) for a hub that cannot be reached."""
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

    def connect(
        _address: object, timeout: float | None = None, source: object = None
    ) -> socket.socket:
        return socket.create_connection((address, port), timeout)

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
        return HubAnswer(response.status, text)
    finally:
        conn.close()
