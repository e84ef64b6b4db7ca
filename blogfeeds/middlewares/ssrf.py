"""SSRF guard: the crawler fetches only public http(s) targets.

Friend links and feed URLs come from pages anyone can write, so a page could point the crawler
at ``http://127.0.0.1:6379/``, a router's admin page or the cloud metadata service
(``http://169.254.169.254/``). :class:`SsrfGuardMiddleware` refuses, before any byte is sent:

- every scheme but ``http`` and ``https`` (``file:``, ``ftp:``, ``data:``, ``s3:`` ...);
- every target whose host *resolves* to an address that is not globally routable (loopback,
  RFC 1918 private, carrier-grade NAT, link-local, multicast, reserved, unspecified,
  documentation and benchmark ranges; IPv4 embedded in IPv6 is unwrapped), so a public name
  pointing at 127.0.0.1 is refused too;
- every request whose ``meta["proxy"]`` is such an address (a proxy on loopback reaches
  whatever the proxy can). The proxy of the environment (``http_proxy``, ``https_proxy``, put
  in meta by Scrapy's ``HttpProxyMiddleware`` with ``_scheme_proxy``) is the operator's choice
  and is not checked.

It is a downloader middleware, so it sees every request, the redirected ones (3xx and meta
refresh) and robots.txt included, and the spider's out-of-band fetches
(``engine.download_async``). Names are resolved off the reactor thread (``getaddrinfo`` in a
worker thread) and cached for :data:`CACHE_TTL` seconds. A name that does not resolve passes:
Scrapy's own resolver then fails it and the blog gets status ``dns``.

Settings: ``BLOGFEEDS_ALLOW_PRIVATE_TARGETS`` (:class:`blogfeeds.config.SsrfConfig`; True lets
loopback/private targets through, for tests and local use; the scheme check stays on).
Refusals raise :class:`TargetRefused` (an ``IgnoreRequest``: stored status ``blocked``) and count
under the stat ``blogfeeds/ssrf/refused/<kind>``.

Limit: the check and Scrapy's connection resolve the name separately; with Scrapy's DNS cache
(``DNSCACHE_ENABLED``) both normally see the same answer, but a DNS-rebinding server with a
zero TTL could still answer differently in between. Run crawlers in a network without access to
internal services where that matters (README, "Robustness and security").
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import time
from collections import OrderedDict
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.exceptions import IgnoreRequest
from scrapy.utils.asyncio import is_asyncio_available
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import threads

from blogfeeds.config import SsrfConfig

logger = logging.getLogger(__name__)

ALLOWED_SCHEMES = frozenset({"http", "https"})
CACHE_TTL = 300.0
"""Seconds a resolved address list (or a failure to resolve) is reused."""
CACHE_SIZE = 10_000
PRIVATE_HINT = "set BLOGFEEDS_ALLOW_PRIVATE_TARGETS=1 for a local test site"
"""Said with every refusal of a non-public address."""
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class TargetRefused(IgnoreRequest):
    """The SSRF guard refused a request; ``kind`` says why (``scheme``, ``loopback``, ...)."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


def address_kind(ip: IPAddress) -> str | None:
    """Why ``ip`` must not be fetched (``loopback``, ``private``, ``link_local``, ``multicast``,
    ``reserved``, ``unspecified``, ``not_global``), or None for a public unicast address.

    IPv4-mapped (``::ffff:a.b.c.d``), NAT64 (``64:ff9b::/96``), 6to4 and Teredo addresses are
    judged by the IPv4 address they carry.
    """
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            return address_kind(embedded)
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link_local"  # 169.254.169.254: cloud metadata
    if ip.is_multicast:
        return "multicast"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "not_global"  # 100.64.0.0/10 shared address space, ...
    return None


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def _getaddrinfo(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class SsrfGuardMiddleware:
    """Downloader middleware refusing non-http(s) schemes and non-public targets (module doc)."""

    def __init__(
        self,
        allow_private: bool = False,
        stats: Any = None,
        dns_timeout: float = 60.0,
        resolver: Any = None,
    ):
        self.allow_private = allow_private
        self.stats = stats
        self.dns_timeout = dns_timeout
        self._resolver = resolver  # tests: a callable (host, port) -> list[str]
        self._cache: OrderedDict[str, tuple[float, tuple[str, ...] | None]] = OrderedDict()

    @classmethod
    def from_crawler(cls, crawler: Any) -> SsrfGuardMiddleware:
        settings = crawler.settings
        return cls(
            allow_private=SsrfConfig.from_settings(settings).allow_private_targets,
            stats=crawler.stats,
            dns_timeout=settings.getfloat("DNS_TIMEOUT", 60.0),
        )

    def _refuse(self, request: Request, kind: str, why: str) -> TargetRefused:
        if self.stats is not None:
            self.stats.inc_value(f"blogfeeds/ssrf/refused/{kind}")
        # The reason travels in the exception: the spider's "failed: blocked (...)" line is
        # where a user reads it, once.
        hint = "" if kind == "scheme" else f"; {PRIVATE_HINT}"
        refused = TargetRefused(f"SSRF guard: {why}{hint}", kind)
        logger.debug("SSRF guard refused %s: %s", request.url, refused)
        return refused

    async def process_request(self, request: Request) -> None:
        parts = urlsplit(request.url)
        scheme = parts.scheme.lower()
        if scheme not in ALLOWED_SCHEMES:
            raise self._refuse(request, "scheme", f"scheme {scheme or '(none)'!r} is not http(s)")
        if self.allow_private:
            return None
        await self._check(request, parts, "")
        proxy = self._proxy(request)
        if proxy:
            proxy_parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
            await self._check(request, proxy_parts, "proxy ")
        return None

    @staticmethod
    def _proxy(request: Request) -> str | None:
        """The proxy ``request`` names in ``meta["proxy"]``, unless Scrapy's
        ``HttpProxyMiddleware`` put it there from this process's environment
        (``meta["_scheme_proxy"]``): the operator's proxy is trusted like the settings."""
        if request.meta.get("_scheme_proxy"):
            return None
        proxy = request.meta.get("proxy")
        return proxy if isinstance(proxy, str) and proxy else None

    async def _check(self, request: Request, parts: Any, role: str) -> None:
        """Refuse ``request`` when the host of ``parts`` (its target, or its ``proxy ``) is not
        a public address."""
        scheme = parts.scheme.lower()
        try:
            host = parts.hostname or ""
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:  # a port out of range: the download fails as it would anyway
            return
        if not host:
            return
        literal = _literal(host)
        addresses = (str(literal),) if literal is not None else await self.resolve(host, port)
        for address in addresses or ():
            ip = _literal(address)
            kind = address_kind(ip) if ip is not None else "not_global"
            if kind is not None:
                raise self._refuse(request, kind, f"{role}{host} resolves to {address} ({kind})")

    async def resolve(self, host: str, port: int) -> tuple[str, ...] | None:
        """Addresses of ``host`` (cached), or None when it does not resolve in time."""
        key = host.lower()
        now = time.monotonic()
        hit = self._cache.get(key)
        if hit is not None and hit[0] > now:
            self._cache.move_to_end(key)
            return hit[1]
        lookup = self._resolver or _getaddrinfo
        try:
            if is_asyncio_available():
                loop = asyncio.get_running_loop()
                found = await asyncio.wait_for(
                    loop.run_in_executor(None, lookup, host, port), self.dns_timeout
                )
            else:  # a non-asyncio Twisted reactor
                found = await maybe_deferred_to_future(threads.deferToThread(lookup, host, port))
            result: tuple[str, ...] | None = tuple(found) or None
        except (OSError, UnicodeError, TimeoutError, ValueError):
            result = None
        self._cache[key] = (now + CACHE_TTL, result)
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return result
