"""The SSRF guard (:mod:`blogfeeds.middlewares.ssrf`): unit tests on real addresses and real
name resolution, then real crawls on loopback with the guard on."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from pathlib import Path
from typing import Any
from unittest.mock import patch
from urllib.parse import urlsplit

import pytest
from scrapy import Request
from scrapy.exceptions import CannotResolveHostError
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler
from twisted.internet.error import DNSLookupError

from blogfeeds.config import SsrfSettings
from blogfeeds.failures import failure_status
from blogfeeds.middlewares.ssrf import (
    AddressRefused,
    GuardedResolver,
    RefusedAddressMiddleware,
    SsrfGuardMiddleware,
    TargetRefused,
    address_kind,
    check_resolver_settings,
    environment_proxy_hosts,
)
from blogfeeds.option import StartupError
from tests import fake_dns
from tests.littleweb import LittleWeb
from tests.robustness import crawl_blogs


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fc00::1", "private"),
        ("169.254.169.254", "link_local"),  # cloud metadata
        ("fe80::1", "link_local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("100.64.0.1", "not_global"),  # carrier-grade NAT
        ("240.0.0.1", "private"),  # reserved, listed by ipaddress as private
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("::ffff:169.254.169.254", "link_local"),
        ("64:ff9b::a9fe:a9fe", "link_local"),  # NAT64 of 169.254.169.254
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("93.184.216.34", None),
        ("2606:2800:220:1:248:1893:25c8:1946", None),
        ("64:ff9b::5db8:d822", None),  # NAT64 of a public address
    ],
)
def test_address_kinds(address: str, kind: str | None) -> None:
    assert address_kind(ipaddress.ip_address(address)) == kind


GUARDED = {"TWISTED_DNS_RESOLVER": "blogfeeds.middlewares.ssrf.GuardedResolver"}


def resolver(**kwargs: Any) -> GuardedResolver:
    """A guarded resolver that is not installed on a reactor (its checks only)."""
    return GuardedResolver(None, 0, 5.0, **kwargs)


def guard(resolver_: GuardedResolver | None = None, **settings: Any) -> SsrfGuardMiddleware:
    """The middleware with ``resolver_`` as if installed (``from_crawler`` checks the settings:
    test below; ``get_crawler`` cannot have a reactor)."""
    crawler = get_crawler(settings_dict={**GUARDED, **settings})
    allow = SsrfSettings.from_settings(crawler.settings).allow_private_targets
    return SsrfGuardMiddleware(allow, crawler.stats, resolver_ or resolver())


def verdict(mw: SsrfGuardMiddleware, url: str, meta: dict[str, Any] | None = None) -> str | None:
    """None when the request may go, else the refusal kind."""
    try:
        asyncio.run(mw.process_request(Request(url, meta=meta)))
    except TargetRefused as exc:
        assert failure_status(exc) == "blocked"
        return exc.kind
    return None


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://127.0.0.1:6379/", "loopback"),
        ("http://[::1]:8080/x", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link_local"),
        ("https://10.0.0.8/", "private"),
        ("http://2130706433/", "loopback"),  # 127.0.0.1 spelled as one number
        ("http://0x7f.1/", "loopback"),
        ("http://127.1/", "loopback"),
        ("file:///etc/passwd", "scheme"),
        ("ftp://files.example/", "scheme"),
        ("data:text/html,hi", "scheme"),
        ("http://93.184.216.34/", None),
        ("http://1password.example/", None),  # a name starting with a digit: the resolver's
        ("http://localhost:3306/", None),  # a name: the resolver's (below)
        ("http://no-such-host.invalid/", None),  # a name: a DNS failure is the resolver's
    ],
)
def test_guard_on_by_default(url: str, kind: str | None) -> None:
    assert verdict(guard(), url) == kind


def test_the_resolver_refuses_non_public_answers_and_remembers_why() -> None:
    guarded = resolver()
    assert guarded._check("93.184.216.34", "fine.example") == "93.184.216.34"
    loopback = socket.gethostbyname("localhost")  # real name resolution
    with pytest.raises(AddressRefused) as refused:
        guarded._check(loopback, "localhost")
    assert refused.value.kind == "loopback"
    assert isinstance(refused.value, DNSLookupError)  # what Twisted's connectors expect
    for address, kind in [("10.2.3.4", "private"), ("169.254.169.254", "link_local")]:
        with pytest.raises(AddressRefused):
            guarded._check(address, f"{kind}.example")
    assert guarded.refusal("LOCALHOST.").address == loopback  # type: ignore[union-attr]
    assert guarded.refusal("link_local.example").kind == "link_local"  # type: ignore[union-attr]
    assert guarded.refusal("fine.example") is None
    # the middleware refuses a name refused before without a lookup, with the reason
    assert verdict(guard(guarded), "http://localhost:8080/feed") == "loopback"
    assert verdict(guard(guarded), "http://x.example/", {"proxy": "http://private.example"}) == (
        "private"
    )
    assert verdict(guard(guarded), "http://fine.example/") is None
    # allowed, or the environment's proxy: unchecked
    assert resolver(allow_private=True).getHostByName  # (resolves unchecked: crawl test below)
    assert resolver(trusted=["Proxy.Local"]).trusted == {"proxy.local"}


def test_a_refused_lookup_is_blocked_not_dns_and_not_retried() -> None:
    guarded = resolver()
    with pytest.raises(AddressRefused) as refused:
        guarded._check("127.0.0.1", "rebind.example")
    crawler = get_crawler(settings_dict=GUARDED)
    mw = RefusedAddressMiddleware(crawler.stats, guarded)
    request = Request("http://rebind.example/feed")
    # through HostnameEndpoint the reason is lost (a lookup "with no results"): by host
    wrapped = CannotResolveHostError("no results for rebind.example")
    with pytest.raises(TargetRefused) as exc:
        mw.process_exception(request, wrapped)
    assert exc.value.kind == "loopback" and failure_status(exc.value) == "blocked"
    # through TCP4ClientEndpoint it is the cause
    wrapped = CannotResolveHostError(str(refused.value))
    wrapped.__cause__ = refused.value
    with pytest.raises(TargetRefused):
        mw.process_exception(Request("http://other.example/"), wrapped)
    assert crawler.stats.get_value("blogfeeds/ssrf/refused/loopback") == 2
    # a plain DNS failure stays one (status dns, retried)
    assert mw.process_exception(Request("http://gone.example/"), DNSLookupError("x")) is None
    assert mw.process_exception(request, TimeoutError()) is None


def test_the_guard_needs_its_resolver() -> None:
    def check(**values: Any) -> None:
        settings = Settings()  # Scrapy's defaults, then these as a project's
        settings.setdict(values, priority="project")
        check_resolver_settings(settings)

    with pytest.raises(StartupError, match="TWISTED_DNS_RESOLVER"):
        check()  # Scrapy's own resolver
    with pytest.raises(StartupError, match="TWISTED_DNS_RESOLVER"):
        check(TWISTED_DNS_RESOLVER="no.such.Resolver")
    with pytest.raises(StartupError, match="TWISTED_REACTOR_ENABLED"):
        check(**GUARDED, TWISTED_REACTOR_ENABLED=False)
    check(**GUARDED)
    check(TWISTED_DNS_RESOLVER="tests.offline_dns.InvalidTldResolver")
    # installed on no reactor (a script's CrawlerRunner): every name is refused
    mw = SsrfGuardMiddleware()
    with patch("blogfeeds.middlewares.ssrf.installed_resolver", return_value=None):
        assert verdict(mw, "http://blog.example/") == "resolver"
        assert verdict(mw, "http://93.184.216.34/") is None


def test_allow_private_targets_lets_loopback_through_but_not_other_schemes() -> None:
    mw = guard(BLOGFEEDS_ALLOW_PRIVATE_TARGETS=True)
    assert verdict(mw, "http://127.0.0.1:8000/") is None
    assert verdict(mw, "http://169.254.169.254/") is None
    assert verdict(mw, "file:///etc/passwd") == "scheme"


def test_a_proxy_is_checked_like_a_target() -> None:
    """``meta["proxy"]`` on loopback once sent a public URL through 127.0.0.1, past the guard;
    the environment's proxy (``_scheme_proxy``, set by Scrapy's HttpProxyMiddleware) is the
    operator's and passes."""
    public = "http://93.184.216.34/"
    assert verdict(guard(), public, {"proxy": "http://127.0.0.1:8080"}) == "loopback"
    assert verdict(guard(), public, {"proxy": "10.0.0.3:3128"}) == "private"
    assert verdict(guard(), public, {"proxy": "http://169.254.169.254"}) == "link_local"
    assert verdict(guard(), public, {"proxy": "http://93.184.216.35:3128"}) is None
    assert verdict(guard(), public, {"proxy": None}) is None
    env_proxy = {"proxy": "http://127.0.0.1:8080", "_scheme_proxy": True}
    assert verdict(guard(), public, env_proxy) is None
    allowed = guard(BLOGFEEDS_ALLOW_PRIVATE_TARGETS=True)
    assert verdict(allowed, public, {"proxy": "http://127.0.0.1:8080"}) is None


def test_refusals_are_counted() -> None:
    crawler = get_crawler(settings_dict=GUARDED)
    mw = SsrfGuardMiddleware(stats=crawler.stats, resolver=resolver())
    verdict(mw, "http://127.0.0.1/")
    verdict(mw, "http://169.254.169.254/")
    assert crawler.stats.get_value("blogfeeds/ssrf/refused/loopback") == 1
    assert crawler.stats.get_value("blogfeeds/ssrf/refused/link_local") == 1


def test_guard_is_enabled_in_project_settings() -> None:
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    assert (
        settings.getdict("DOWNLOADER_MIDDLEWARES")["blogfeeds.middlewares.ssrf.SsrfGuardMiddleware"]
        < settings.getdict("DOWNLOADER_MIDDLEWARES_BASE")[
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware"
        ]
    )
    assert settings.getbool("BLOGFEEDS_ALLOW_PRIVATE_TARGETS") is False
    middlewares = settings.getdict("DOWNLOADER_MIDDLEWARES")
    # outside the retries in process_exception order: a refused name is not retried
    assert (
        middlewares["blogfeeds.middlewares.ssrf.RefusedAddressMiddleware"]
        > middlewares["blogfeeds.middlewares.retry.BackoffRetryMiddleware"]
    )
    assert settings["TWISTED_DNS_RESOLVER"] == "blogfeeds.middlewares.ssrf.GuardedResolver"


HTML = "text/html; charset=utf-8"


def _fake_dns_crawl(
    web: LittleWeb, tmp: Path, table: dict[str, Any], hosts: list[str], allow: str = "0"
) -> Any:
    """``hosts`` crawled as seeds (on the web's port) with the fake DNS ``table``, the crawl
    resolving names itself (no proxy), no retry waits."""
    page = {"body": "<title>secret</title><link rel=alternate href=/feed>", "content_type": HTML}
    for host in hosts:
        web.add(f"http://{host}:{web.port}/", page)
        web.add(f"http://{host}:{web.port}/feed", {"body": "<rss/>"})
    env = {"BLOGFEEDS_ALLOW_PRIVATE_TARGETS": allow, **fake_dns.env(table)}
    settings = {"EXTENSIONS": fake_dns.extensions_setting(), "BLOGFEEDS_RETRY_BACKOFF_BASE": "0"}
    seeds = [f"http://{host}:{web.port}/" for host in hosts]
    return crawl_blogs(web, seeds, tmp, proxy=False, env=env, settings=settings)


REBINDING = {
    # public to a guard that asks getaddrinfo, loopback to the connection's lookup
    "rebind.test": {"getaddrinfo": ["93.184.216.34"], "gethostbyname": ["127.0.0.1"]},
    # the first lookup fails (once cached, a guard let it through), the next ones answer
    "flaky.test": {"getaddrinfo": [None], "gethostbyname": [None, "127.0.0.1"]},
    # public first, then loopback, whoever asks: the address checked is the one connected to
    "ttl0.test": {"getaddrinfo": ["93.184.216.34", "127.0.0.1"], "gethostbyname": ["127.0.0.1"]},
}


@pytest.mark.integration
def test_dns_rebinding_and_failed_first_lookups_reach_no_loopback_byte(tmp_path: Path) -> None:
    with LittleWeb({}) as web:
        run = _fake_dns_crawl(web, tmp_path, REBINDING, list(REBINDING))
    assert run.returncode == 0, run.log[-3000:]
    assert run.hits == []  # not robots.txt, not the page, not the feed
    assert run.blogs == {} and run.stat("blogfeeds/seed_refused") == len(REBINDING)
    assert "resolves to 127.0.0.1 (loopback)" in run.log
    assert run.stat("blogfeeds/ssrf/refused/loopback") >= len(REBINDING)
    assert "Traceback" not in run.log


@pytest.mark.integration
def test_a_name_that_never_resolves_is_a_dns_failure(tmp_path: Path) -> None:
    table = {"gone.test": {"getaddrinfo": [None], "gethostbyname": [None]}}
    with LittleWeb({}) as web:
        run = _fake_dns_crawl(web, tmp_path, table, ["gone.test"])
    assert run.returncode == 0, run.log[-3000:]
    assert run.hits == []
    assert run.blogs["gone.test"]["status"] == "dns"


@pytest.mark.integration
def test_the_fake_dns_does_reach_the_web_when_private_targets_are_allowed(tmp_path: Path) -> None:
    """The same table with BLOGFEEDS_ALLOW_PRIVATE_TARGETS=1: the names do lead to the loopback
    web (so the test above proves a refusal, not a broken fake)."""
    with LittleWeb({}) as web:
        run = _fake_dns_crawl(web, tmp_path, REBINDING, ["rebind.test"], allow="1")
    assert run.returncode == 0, run.log[-3000:]
    assert any("//rebind.test:" in hit for hit in run.hits)
    assert run.blogs["rebind.test"]["status"] in ("ok", "no_feed")


@pytest.mark.integration
def test_crawl_refuses_loopback_seeds_without_sending_a_byte(tmp_path: Path) -> None:
    with LittleWeb({}) as web:
        web.add(f"http://127.0.0.1:{web.port}/", {"body": "<title>secret</title>"})
        web.add(f"http://localhost:{web.port}/", {"body": "<title>secret</title>"})
        seeds = [f"http://127.0.0.1:{web.port}/", f"http://localhost:{web.port}/"]
        run = crawl_blogs(
            web, seeds, tmp_path, proxy=False, env={"BLOGFEEDS_ALLOW_PRIVATE_TARGETS": "0"}
        )
    assert run.returncode == 0, run.log[-3000:]
    assert run.hits == []  # not even robots.txt
    # a refused seed says nothing of a blog: no node of the graph is stored for it
    assert run.blogs == {} and run.stat("blogfeeds/seed_refused") == 2
    # requests refused: the literal address before its robots.txt; the name in the resolver,
    # its robots.txt and its page
    assert run.stat("blogfeeds/ssrf/refused/loopback") == 3
    # the crawl log says why, on the line that reports the refusal, and what to do about it
    hint = "; set BLOGFEEDS_ALLOW_PRIVATE_TARGETS=1 for a local test site"
    for seed, why in zip(
        seeds, ["is a loopback address", "resolves to 127.0.0.1 (loopback)"], strict=True
    ):
        home = f"Seed {seed} refused, not stored: SSRF guard: {urlsplit(seed).hostname} {why}"
        line = next(line for line in run.log.splitlines() if home in line)
        assert line.endswith(hint)
    assert "2 seeds refused by the SSRF guard, not stored: set BLOGFEEDS_ALLOW_PRIVATE_" in run.log


@pytest.mark.integration
@pytest.mark.parametrize("allow", ["0", "1"])
def test_crawl_checks_every_redirect_and_meta_refresh(tmp_path: Path, allow: str) -> None:
    with LittleWeb({}) as web:
        admin = f"http://127.0.0.1:{web.port}/admin"
        web.add("http://redirector.example/", {"status": 302, "location": admin})
        web.add(admin, {"body": "<title>admin</title><p>router admin</p>", "content_type": HTML})
        web.add(
            "http://metadata.example/",
            {"status": 301, "location": "http://169.254.169.254/latest/meta-data/"},
        )
        web.add(
            "http://refresher.example/",
            {"body": '<meta http-equiv="refresh" content="0; url=http://10.0.0.7/">'},
        )
        seeds = ["http://redirector.example/", "http://metadata.example/"]
        seeds.append("http://refresher.example/")
        run = crawl_blogs(
            web,
            seeds,
            tmp_path,
            env={"BLOGFEEDS_ALLOW_PRIVATE_TARGETS": allow},
            settings={"RETRY_ENABLED": "False", "DOWNLOAD_TIMEOUT": "3"},
        )
    assert run.returncode == 0, run.log[-3000:]
    statuses = {b["blog_id"]: b["status"] for b in run.blogs.values()}
    if allow == "0":
        assert admin not in run.hits
        assert statuses == {
            "redirector.example": "blocked",
            "metadata.example": "blocked",
            "refresher.example": "blocked",
        }
        assert run.stat("blogfeeds/ssrf/refused/loopback") >= 1
        assert run.stat("blogfeeds/ssrf/refused/link_local") >= 1
        assert run.stat("blogfeeds/ssrf/refused/private") >= 1
    else:
        assert admin in run.hits  # the same crawl with the setting on does follow
        assert "Traceback" not in run.log


def test_the_environments_proxies_resolve_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator's proxy may have a private name (``proxy.internal``): the resolver lets
    its name through, and only its name."""
    monkeypatch.setenv("http_proxy", "http://Proxy.Internal:3128")
    monkeypatch.setenv("https_proxy", "squid.lan:3129")
    assert environment_proxy_hosts() >= {"proxy.internal", "squid.lan"}
    crawler = get_crawler(settings_dict=GUARDED)
    built = GuardedResolver.from_crawler(crawler, None)
    assert {"proxy.internal", "squid.lan"} <= built.trusted
    assert not built.allow_private
