"""The SSRF guard (:mod:`blogfeeds.middlewares.ssrf`): unit tests on real addresses and real
name resolution, then real crawls on loopback with the guard on."""

from __future__ import annotations

import asyncio
import ipaddress
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from blogfeeds.failures import failure_status
from blogfeeds.middlewares.ssrf import SsrfGuardMiddleware, TargetRefused, address_kind
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


def guard(**settings: Any) -> SsrfGuardMiddleware:
    crawler = get_crawler(settings_dict=settings)
    return build_from_crawler(SsrfGuardMiddleware, crawler)


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
        ("http://localhost:3306/", "loopback"),  # a name: resolved by the system resolver
        ("http://2130706433/", "loopback"),  # 127.0.0.1 spelled as one number
        ("http://0x7f.1/", "loopback"),
        ("file:///etc/passwd", "scheme"),
        ("ftp://files.example/", "scheme"),
        ("data:text/html,hi", "scheme"),
        ("http://93.184.216.34/", None),
        ("http://no-such-host.invalid/", None),  # unresolvable: Scrapy's DNS error (status dns)
    ],
)
def test_guard_on_by_default(url: str, kind: str | None) -> None:
    assert verdict(guard(), url) == kind


def test_public_name_resolving_to_loopback_is_refused() -> None:
    calls: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        calls.append(host)
        return {"rebind.example.com": ["93.184.216.34", "127.0.0.1"]}.get(host, ["93.184.216.34"])

    mw = SsrfGuardMiddleware(resolver=resolver)
    assert verdict(mw, "https://rebind.example.com/feed") == "loopback"
    assert verdict(mw, "https://rebind.example.com/other") == "loopback"
    assert verdict(mw, "https://fine.example.com/") is None
    assert calls == ["rebind.example.com", "fine.example.com"]  # cached


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
    crawler = get_crawler()
    mw = build_from_crawler(SsrfGuardMiddleware, crawler)
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


HTML = "text/html; charset=utf-8"


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
    assert {b["status"] for b in run.blogs.values()} == {"blocked"}
    assert len(run.blogs) == 2
    assert run.stat("blogfeeds/ssrf/refused/loopback") == 2
    # the crawl log says why, on the line that reports the failure, and what to do about it
    home = f"Blog {seeds[0]} failed: blocked (SSRF guard: 127.0.0.1 resolves to"
    line = next(line for line in run.log.splitlines() if home in line)
    assert "(loopback); set BLOGFEEDS_ALLOW_PRIVATE_TARGETS=1 for a local test site)" in line


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
