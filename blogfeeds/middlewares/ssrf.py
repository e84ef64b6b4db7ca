"""SSRF guard: the crawler fetches only public http(s) targets.

Friend links and feed URLs come from pages anyone can write, so a page could point the crawler
at ``http://127.0.0.1:6379/``, a router's admin page or the cloud metadata service
(``http://169.254.169.254/``). The guard has two halves, which refuse before any byte is sent:
:class:`SsrfGuardMiddleware` (downloader middleware) checks the scheme, literal addresses and
``meta["proxy"]`` of every request; :class:`GuardedResolver` (Scrapy's ``TWISTED_DNS_RESOLVER``)
fails the lookup of a name that answers a non-public address. The address it checks is the
address the connection is made to (one lookup, answers cached like Scrapy's), so DNS rebinding
gains nothing. :class:`RefusedAddressMiddleware` (just outside the download handler) turns the
DNS failure of a refused name into :class:`TargetRefused` (stored ``blocked``, not ``dns``, and
not retried). The proxy of the environment is the operator's choice and is not checked. What is
refused, ``BLOGFEEDS_ALLOW_PRIVATE_TARGETS`` and the limits (IPv4 only): docs/security.md.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import urllib.request
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.exceptions import CannotResolveHostError, IgnoreRequest
from scrapy.resolver import CachingThreadedResolver
from scrapy.settings import SETTINGS_PRIORITIES
from scrapy.utils.misc import load_object
from twisted.internet import defer
from twisted.internet.error import DNSLookupError

from blogfeeds.config import SsrfSettings
from blogfeeds.option import StartupError

logger = logging.getLogger(__name__)

ALLOWED_SCHEMES = frozenset({"http", "https"})
REFUSED_SIZE = 10_000
"""Names whose refused answer is remembered (the middlewares look the reason up there)."""
PRIVATE_HINT = "set BLOGFEEDS_ALLOW_PRIVATE_TARGETS=1 for a local test site"
"""Said with every refusal of a non-public address."""
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class TargetRefused(IgnoreRequest):
    """The SSRF guard refused a request; ``kind`` says why (``scheme``, ``loopback``, ...)."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


class AddressRefused(DNSLookupError):
    """:class:`GuardedResolver` refused the answer for ``host``: ``address`` is ``kind``.

    A ``DNSLookupError``, so that every connection path of Twisted fails it as a lookup that
    found nothing (the name resolver interface has no other way to say no)."""

    def __init__(self, host: str, address: str, kind: str):
        super().__init__(f"{host} resolves to {address} ({kind}): refused by the SSRF guard")
        self.host = host
        self.address = address
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


def literal_address(host: str) -> IPAddress | None:
    """The address ``host`` spells, or None for a name: dotted quads and IPv6 (brackets and zone
    dropped), and the other IPv4 forms the C library connects to (``2130706433``, ``0x7f.1``,
    ``127.1``)."""
    bare = host.strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        pass
    if not bare or not all(c.isalnum() or c == "." for c in bare) or not bare[0].isdigit():
        return None  # inet_aton reads a name starting with a digit as a number only when it is
    try:
        return ipaddress.IPv4Address(socket.inet_aton(bare))
    except OSError:
        return None


def refusal_kind(address: str) -> str | None:
    """:func:`address_kind` of an address string (``not_global`` when it is not one)."""
    ip = literal_address(address)
    return address_kind(ip) if ip is not None else "not_global"


def environment_proxy_hosts() -> frozenset[str]:
    """Host names of this process's proxies (``http_proxy``, ``https_proxy``, ...): the
    operator's, resolved unchecked."""
    hosts = set()
    for url in urllib.request.getproxies().values():
        try:
            host = urlsplit(url if "://" in url else f"http://{url}").hostname
        except ValueError:
            continue
        if host:
            hosts.add(host.lower())
    return frozenset(hosts)


class GuardedResolver(CachingThreadedResolver):
    """Scrapy's caching threaded resolver that fails every name answering a non-public address
    (:class:`AddressRefused`), unless ``allow_private``; ``trusted`` names (the environment's
    proxies) resolve unchecked. Installed on the reactor by Scrapy (``TWISTED_DNS_RESOLVER``),
    it serves both of Twisted's resolver interfaces, so every TCP connection by name goes
    through it (module doc)."""

    def __init__(
        self,
        reactor: Any,
        cache_size: int,
        timeout: float,
        *,
        allow_private: bool = False,
        trusted: Iterable[str] = (),
    ):
        super().__init__(reactor, cache_size, timeout)
        self.allow_private = allow_private
        self.trusted = frozenset(h.lower() for h in trusted)
        self.refused: OrderedDict[str, AddressRefused] = OrderedDict()

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: Any) -> GuardedResolver:
        settings = crawler.settings
        size = settings.getint("DNSCACHE_SIZE") if settings.getbool("DNSCACHE_ENABLED") else 0
        return cls(
            reactor,
            size,
            settings.getfloat("DNS_TIMEOUT"),
            allow_private=_allow_private(settings),
            trusted=environment_proxy_hosts(),
        )

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> defer.Deferred[str]:
        if self.allow_private or name.lower().rstrip(".") in self.trusted:
            return super().getHostByName(name, timeout)
        return super().getHostByName(name, timeout).addCallback(self._check, name)

    def _check(self, address: str, name: str) -> str:
        kind = refusal_kind(address)
        if kind is None:
            return address
        refused = AddressRefused(name, address, kind)
        key = name.lower().rstrip(".")
        self.refused[key] = refused
        self.refused.move_to_end(key)
        if len(self.refused) > REFUSED_SIZE:
            self.refused.popitem(last=False)
        raise refused

    def refusal(self, host: str) -> AddressRefused | None:
        """Why the last lookup of ``host`` was refused, if it was."""
        return self.refused.get(host.lower().rstrip("."))


def _allow_private(settings: Any) -> bool:
    """``BLOGFEEDS_ALLOW_PRIVATE_TARGETS`` for the resolver, which Scrapy builds before any
    start-up check: a bad value refuses private answers here, and the check reports it (one
    line, exit 2) before any request."""
    try:
        return SsrfSettings.from_settings(settings).allow_private_targets
    except StartupError:
        return False


def resolver_class(settings: Any) -> Any:
    """The resolver class Scrapy installs: ``TWISTED_DNS_RESOLVER``, or the deprecated
    ``DNS_RESOLVER`` when that one is set above the defaults and above it."""
    name = "TWISTED_DNS_RESOLVER"
    old = settings.getpriority("DNS_RESOLVER") or 0
    if old > SETTINGS_PRIORITIES["default"] and old >= (settings.getpriority(name) or 0):
        name = "DNS_RESOLVER"
    return load_object(settings[name])


def installed_resolver() -> GuardedResolver | None:
    """The reactor's resolver when it is a :class:`GuardedResolver` (None when not, or when no
    reactor is installed)."""
    from scrapy.utils.reactor import is_reactor_installed  # noqa: PLC0415

    if not is_reactor_installed():
        return None
    from twisted.internet import reactor  # noqa: PLC0415 - the installed one

    resolver = getattr(reactor, "resolver", None)
    return resolver if isinstance(resolver, GuardedResolver) else None


class SsrfGuardMiddleware:
    """Downloader middleware refusing non-http(s) schemes, non-public literal addresses and
    names the resolver refused before (module doc)."""

    def __init__(self, allow_private: bool = False, stats: Any = None, resolver: Any = None):
        self.allow_private = allow_private
        self.stats = stats
        self._resolver = resolver  # tests: a GuardedResolver not installed on a reactor
        self._warned = False

    @classmethod
    def from_crawler(cls, crawler: Any) -> SsrfGuardMiddleware:
        settings = crawler.settings
        allow = SsrfSettings.from_settings(settings).allow_private_targets
        if not allow:
            check_resolver_settings(settings)
        return cls(allow_private=allow, stats=crawler.stats)

    def resolver(self) -> GuardedResolver | None:
        if self._resolver is None:
            self._resolver = installed_resolver()
        return self._resolver

    def _refuse(self, request: Request, kind: str, why: str) -> TargetRefused:
        return refuse(self.stats, request, kind, why)

    async def process_request(self, request: Request) -> None:
        parts = urlsplit(request.url)
        scheme = parts.scheme.lower()
        if scheme not in ALLOWED_SCHEMES:
            raise self._refuse(request, "scheme", f"scheme {scheme or '(none)'!r} is not http(s)")
        if self.allow_private:
            return None
        self._check(request, parts, "")
        proxy = self._proxy(request)
        if proxy:
            self._check(request, urlsplit(proxy if "://" in proxy else f"http://{proxy}"), "proxy ")
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

    def _check(self, request: Request, parts: Any, role: str) -> None:
        """Refuse ``request`` when the host of ``parts`` (its target, or its ``proxy ``) is a
        non-public address, a name refused already, or a name no guarded resolver will see."""
        try:
            host = parts.hostname or ""
        except ValueError:  # the download fails as it would anyway
            return
        if not host:
            return
        literal = literal_address(host)
        if literal is not None:
            kind = address_kind(literal)
            if kind is not None:
                what = f"a {kind} address" if str(literal) == host else f"{literal} ({kind})"
                raise self._refuse(request, kind, f"{role}{host} is {what}")
            return
        resolver = self.resolver()
        if resolver is None:
            if not self._warned:
                self._warned = True
                logger.error(
                    "The reactor's DNS resolver is not blogfeeds.middlewares.ssrf."
                    "GuardedResolver: every named host is refused (set TWISTED_DNS_RESOLVER, "
                    "run through `scrapy crawl`, or BLOGFEEDS_ALLOW_PRIVATE_TARGETS=1 locally)"
                )
            raise self._refuse(request, "resolver", "no guarded DNS resolver is installed")
        refused = resolver.refusal(host)
        if refused is not None:
            raise self._refuse(
                request,
                refused.kind,
                f"{role}{host} resolves to {refused.address} ({refused.kind})",
            )


def refuse(stats: Any, request: Request, kind: str, why: str) -> TargetRefused:
    """Count and log a refusal of ``request``; the exception to raise."""
    if stats is not None:
        stats.inc_value(f"blogfeeds/ssrf/refused/{kind}")
    # The reason travels in the exception: the spider's "failed: blocked (...)" line is where
    # a user reads it, once.
    hint = "" if kind == "scheme" else f"; {PRIVATE_HINT}"
    refused = TargetRefused(f"SSRF guard: {why}{hint}", kind)
    logger.debug("SSRF guard refused %s: %s", request.url, refused)
    return refused


def check_resolver_settings(settings: Any) -> None:
    """``StartupError`` unless the downloader's names go through a :class:`GuardedResolver`."""
    if not settings.getbool("TWISTED_REACTOR_ENABLED", True):
        raise StartupError(
            "TWISTED_REACTOR_ENABLED",
            "the SSRF guard checks names in the Twisted reactor's resolver; without the reactor "
            "set BLOGFEEDS_ALLOW_PRIVATE_TARGETS=1 (local use only)",
        )
    try:
        cls = resolver_class(settings)
    except (ImportError, NameError, ValueError, AttributeError) as exc:
        raise StartupError("TWISTED_DNS_RESOLVER", f"cannot load it: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, GuardedResolver)):
        raise StartupError(
            "TWISTED_DNS_RESOLVER",
            f"{settings.get('TWISTED_DNS_RESOLVER')} is not a subclass of "
            "blogfeeds.middlewares.ssrf.GuardedResolver: the SSRF guard would not see the "
            "addresses connected to",
        )


class RefusedAddressMiddleware:
    """Downloader middleware just outside the download handler (after the retries in
    ``process_exception`` order): the DNS failure of a name :class:`GuardedResolver` refused
    becomes :class:`TargetRefused` (status ``blocked``, not retried, the address logged)."""

    def __init__(self, stats: Any = None, resolver: Any = None):
        self.stats = stats
        self._resolver = resolver

    @classmethod
    def from_crawler(cls, crawler: Any) -> RefusedAddressMiddleware:
        return cls(stats=crawler.stats)

    def process_exception(self, request: Request, exception: BaseException) -> None:
        if not isinstance(exception, CannotResolveHostError | DNSLookupError):
            return None
        refused = _refused_in(exception)
        if refused is None:
            resolver = self._resolver or installed_resolver()
            if resolver is None:
                return None
            for host in (urlsplit(request.url).hostname, _proxy_host(request)):
                refused = resolver.refusal(host) if host else None
                if refused is not None:
                    break
        if refused is None:
            return None
        why = f"{refused.host} resolves to {refused.address} ({refused.kind})"
        raise refuse(self.stats, request, refused.kind, why) from exception


def _refused_in(exc: BaseException) -> AddressRefused | None:
    for _ in range(10):
        if isinstance(exc, AddressRefused):
            return exc
        if exc.__cause__ is None:
            return None
        exc = exc.__cause__
    return None


def _proxy_host(request: Request) -> str | None:
    proxy = request.meta.get("proxy")
    if not isinstance(proxy, str) or not proxy:
        return None
    try:
        return urlsplit(proxy if "://" in proxy else f"http://{proxy}").hostname
    except ValueError:
        return None
