"""A DNS failure without a DNS query: the project's resolver, except that names under ``.invalid``
(RFC 6761: never resolvable) fail at once, so no lookup leaves the machine.

Use in a ``scrapy crawl`` subprocess (``cwd`` the repository) with the settings :data:`SETTINGS`
and the environment :func:`unproxied` of the ``.invalid`` hosts, so that Scrapy resolves them
itself instead of asking :mod:`tests.littleweb`'s proxy.
"""

from __future__ import annotations

from collections.abc import Sequence

from twisted.internet import defer
from twisted.internet.error import DNSLookupError

from blogfeeds.middlewares.ssrf import GuardedResolver

SETTINGS = {"TWISTED_DNS_RESOLVER": "tests.offline_dns.InvalidTldResolver"}


def unproxied(*hosts: str) -> dict[str, str]:
    """The ``no_proxy`` environment that sends ``hosts`` past the little web's proxy."""
    value = ",".join(hosts)
    return {"no_proxy": value, "NO_PROXY": value}


class InvalidTldResolver(GuardedResolver):
    """``getHostByName`` fails ``*.invalid`` with ``DNSLookupError``; other names as the
    project's resolver."""

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> defer.Deferred[str]:
        if name.lower().rstrip(".").endswith(".invalid"):
            return defer.fail(DNSLookupError(f"no such name: {name} (tests.offline_dns)"))
        return super().getHostByName(name, timeout)
