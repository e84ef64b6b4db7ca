"""Tests of the loopback little web (tests/littleweb.py): urllib, http.client and a real Scrapy."""

from __future__ import annotations

import functools
import gzip
import http.client
import json
import ssl
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.littleweb import (
    LittleWeb,
    Route,
    find_shared,
    guess_content_type,
    normalize_url,
    routes_from_case,
    routes_from_replay,
)

BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
RSS = b'<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel></channel></rss>'
ATOM = b'<?xml version="1.0"?>\n<!-- made by hand -->\n<feed xmlns="http://www.w3.org/2005/Atom"/>'
PAGE = "<!DOCTYPE html><html><head><title>Café</title></head><body>Blogroll</body></html>"


@functools.cache
def _unverified() -> ssl.SSLContext:
    """A client TLS context that, like Scrapy's default, does not verify certificates."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def fetch(
    web: LittleWeb, url: str, headers: Mapping[str, str] | None = None, method: str = "GET"
) -> tuple[int, http.client.HTTPMessage, bytes]:
    """One request through the proxy with http.client: no redirect following, no default UA."""
    parts = urlsplit(url)
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        conn = http.client.HTTPSConnection("127.0.0.1", web.port, context=_unverified(), timeout=10)
        conn.set_tunnel(parts.netloc)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
    else:
        conn = http.client.HTTPConnection("127.0.0.1", web.port, timeout=10)
        target = url
    try:
        conn.request(method, target, headers=dict(headers or {}))
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


@pytest.fixture
def web(tmp_path: Path) -> Iterator[LittleWeb]:
    (tmp_path / "page.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / "feed.xml.gz").write_bytes(gzip.compress(RSS))
    routes: dict[str, Route | dict[str, object]] = {
        "http://plain-example.org/": {
            "file": "page.html",
            "content_type": "text/html; charset=utf-8",
        },
        "https://secure-example.com/blog/?p=1": {"body": "post one", "content_type": "text/plain"},
        "http://hop.example/": {"status": 301, "location": "https://www.hop.example/journal/"},
        "https://www.hop.example/journal/": {"file": "page.html"},
        "https://picky.example/feed.xml": {
            "file": "feed.xml.gz",
            "content_type": "application/rss+xml",
            "deny_ua": ["urllib", "bot"],
        },
        "*@catch-all.example": {"body": "shell", "content_type": "text/html; charset=utf-8"},
        "https://catch-all.example/exact": {"body": "exact wins"},
        "https://bare.example/index.xml": {"body": ATOM, "content_type": None},
        "https://raw.example/feed.xml.gz": {"file": "feed.xml.gz", "decompress": False},
        "https://linked.example/": Route(
            body=PAGE,
            headers={"Link": ['</feed>; rel="alternate"', "</>; rel=canonical"], "X-A": "1"},
        ),
        "https://etag.example/feed": {"body": RSS.decode(), "headers": {"ETag": '"v1"'}},
        "https://slow.example/": {"body": "late", "delay": 0.3},
    }
    with LittleWeb(routes, root=tmp_path) as little_web:
        yield little_web


def _opener(web: LittleWeb) -> urllib.request.OpenerDirector:
    proxies = {"http": web.proxy_url, "https": web.proxy_url}
    return urllib.request.build_opener(
        urllib.request.ProxyHandler(proxies), urllib.request.HTTPSHandler(context=_unverified())
    )


def _error_code(opener: urllib.request.OpenerDirector, url: str) -> int:
    """The HTTP error status urllib raises for ``url`` (the error's response is closed)."""
    try:
        opener.open(url, timeout=10).close()
    except urllib.error.HTTPError as err:
        err.close()
        return err.code
    raise AssertionError(f"{url} did not fail")


def test_urllib_fetches_http_and_https_fictional_hosts(web: LittleWeb) -> None:
    opener = _opener(web)
    with opener.open("http://plain-example.org/", timeout=10) as r:
        assert (r.status, r.headers["Content-Type"]) == (200, "text/html; charset=utf-8")
        assert r.read() == PAGE.encode()
    with opener.open("https://secure-example.com/blog/?p=1", timeout=10) as r:
        assert (r.status, r.headers["Content-Type"], r.read()) == (200, "text/plain", b"post one")
    # query must match: another query is another URL
    assert _error_code(opener, "https://secure-example.com/blog/?p=2") == 404
    assert web.connects == ["secure-example.com:443", "secure-example.com:443"]
    assert web.urls_fetched() == [
        "http://plain-example.org/",
        "https://secure-example.com/blog/?p=1",
        "https://secure-example.com/blog/?p=2",
    ]
    (hit,) = web.hits("https://secure-example.com/blog/?p=1")
    assert (hit.method, hit.status) == ("GET", 200)
    assert hit.user_agent is not None and hit.user_agent.startswith("Python-urllib/")
    assert hit.headers["Host"] == "secure-example.com"


def test_redirect_across_hosts_and_schemes(web: LittleWeb) -> None:
    with _opener(web).open("http://hop.example/", timeout=10) as r:
        assert r.url == "https://www.hop.example/journal/"
        assert r.headers["Content-Type"] == "text/html"  # absent content_type key
        assert r.read() == PAGE.encode()
    status, headers, body = fetch(web, "http://hop.example/")
    assert (status, headers["Location"], body) == (301, "https://www.hop.example/journal/", b"")
    assert [h.status for h in web.hits()] == [301, 200, 301]


def test_deny_ua_answers_403_to_listed_and_missing_user_agents(web: LittleWeb) -> None:
    url = "https://picky.example/feed.xml"
    assert _error_code(_opener(web), url) == 403  # Python-urllib/3.x
    assert fetch(web, url, {"User-Agent": "feed-bot/1.0"})[0] == 403
    assert fetch(web, url)[0] == 403  # no User-Agent at all
    status, headers, body = fetch(web, url, {"User-Agent": BROWSER_UA})
    assert (status, headers["Content-Type"], body) == (200, "application/rss+xml", RSS)
    assert [h.status for h in web.hits(url)] == [403, 403, 403, 200]
    assert web.hits(url)[2].user_agent is None


def test_wildcard_host_serves_every_path_on_both_schemes(web: LittleWeb) -> None:
    opener = _opener(web)
    for url in ("https://catch-all.example/feed", "http://catch-all.example/rss.xml?x=1"):
        with opener.open(url, timeout=10) as r:
            assert r.read() == b"shell"
    assert fetch(web, "https://catch-all.example/exact")[2] == b"exact wins"
    assert fetch(web, "https://catch-all.example/robots.txt")[2] == b"shell"  # routed by wildcard
    assert fetch(web, "https://www.catch-all.example/feed")[0] == 404  # another host


def test_unknown_urls_and_robots_txt_are_404(web: LittleWeb) -> None:
    assert _error_code(_opener(web), "https://nowhere.example/") == 404
    assert fetch(web, "http://plain-example.org/robots.txt")[0] == 404
    assert fetch(web, "https://secure-example.com/robots.txt")[0] == 404
    assert fetch(web, "https://plain-example.org/")[0] == 404  # the route is for http only


def test_headers_content_type_gzip_etag_delay_and_head(web: LittleWeb) -> None:
    status, headers, body = fetch(web, "https://bare.example/index.xml")
    assert (status, headers["Content-Type"], body) == (200, None, ATOM)
    _, headers, body = fetch(web, "https://raw.example/feed.xml.gz")
    assert gzip.decompress(body) == RSS  # decompress=False keeps the bytes on disk
    _, headers, _ = fetch(web, "https://linked.example/")
    assert headers.get_all("Link") == ['</feed>; rel="alternate"', "</>; rel=canonical"]
    assert headers["X-A"] == "1"
    assert fetch(web, "https://etag.example/feed", {"If-None-Match": '"v1"'})[:3:2] == (304, b"")
    assert fetch(web, "https://etag.example/feed", {"If-None-Match": '"v0"'})[:3:2] == (200, RSS)
    start = time.monotonic()
    assert fetch(web, "https://slow.example/")[2] == b"late"
    assert time.monotonic() - start >= 0.3
    status, headers, body = fetch(web, "http://plain-example.org/", method="HEAD")
    assert (status, headers["Content-Length"], body) == (200, str(len(PAGE.encode())), b"")


def test_keep_alive_requests_share_one_tunnel(web: LittleWeb) -> None:
    conn = http.client.HTTPSConnection("127.0.0.1", web.port, context=_unverified(), timeout=10)
    conn.set_tunnel("catch-all.example")
    try:
        bodies = []
        for path in ("/a", "/b", "/exact"):
            conn.request("GET", path, headers={"User-Agent": BROWSER_UA})
            bodies.append(conn.getresponse().read())
    finally:
        conn.close()
    assert bodies == [b"shell", b"shell", b"exact wins"]
    assert web.connects == ["catch-all.example:443"]
    assert web.urls_fetched() == [
        "https://catch-all.example/a",
        "https://catch-all.example/b",
        "https://catch-all.example/exact",
    ]


def test_env_points_both_schemes_at_the_proxy(web: LittleWeb) -> None:
    env = web.env({"PATH": "/bin", "NO_PROXY": "localhost"})
    assert env["PATH"] == "/bin"
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        assert env[name] == web.proxy_url == f"http://127.0.0.1:{web.port}"
    assert env["no_proxy"] == env["NO_PROXY"] == ""


def test_not_running_has_no_proxy_url() -> None:
    with pytest.raises(RuntimeError):
        _ = LittleWeb({}).proxy_url


def test_normalize_url() -> None:
    assert normalize_url("HTTPS://Blog.Example:443") == "https://blog.example/"
    assert normalize_url("http://a.example:8080/x#frag") == "http://a.example:8080/x"
    assert normalize_url("https://a.example/My Guide/") == "https://a.example/My%20Guide/"
    assert normalize_url("https://a.example/人") == "https://a.example/%E4%BA%BA"
    assert normalize_url("https://a.example/%e4%ba%ba") == "https://a.example/%E4%BA%BA"
    assert normalize_url("https://a.example/feed") != normalize_url("https://a.example/feed/")
    assert normalize_url("https://a.example/?b=1&a=2") == "https://a.example/?b=1&a=2"


def test_route_matching_uses_normalised_urls() -> None:
    web = LittleWeb({"https://0Su-Sakura.github.io/My Guide/": {"body": "x"}})
    assert web.route_for("https://0su-sakura.github.io/My%20Guide/") is not None
    assert web.route_for("https://0su-sakura.github.io/My%20Guide") is None


def test_bad_routes_fail_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown route keys"):
        LittleWeb({"https://a.example/": {"content-type": "text/html"}})
    with pytest.raises(ValueError, match="not both"):
        LittleWeb({"https://a.example/": {"file": "x", "body": "y"}}, root=tmp_path)
    with pytest.raises(FileNotFoundError):
        LittleWeb({"https://a.example/": {"file": "missing.html"}}, root=tmp_path)
    with pytest.raises(ValueError, match="needs a root"):
        LittleWeb({"https://a.example/": {"file": "page.html"}})
    with pytest.raises(ValueError, match="neither"):
        LittleWeb({"a.example/": {"body": ""}})


@pytest.mark.parametrize(
    ("name", "body", "expected"),
    [
        ("rss/index.html", RSS, "application/rss+xml"),
        ("atom.xml.gz", ATOM, "application/atom+xml"),
        (
            "feed/rss/index.html",
            b"<br />\n<b>Deprecated</b>\n<?xml?>\n<rdf:RDF>",
            "application/rdf+xml",
        ),
        ("sitemap.xml", b"<?xml version='1.0'?><urlset/>", "application/xml"),
        ("index.html", PAGE.encode(), "text/html; charset=utf-8"),
        (
            "index.html",
            PAGE.encode("gbk", "replace").replace(b"Caf", "博客".encode("gbk")),
            "text/html",
        ),
        ("feed.json", b'{"version": "https://jsonfeed.org/version/1.1"}', "application/feed+json"),
        ("data.json", b"{}", "application/json"),
        ("robots.txt", b"User-agent: *", "text/plain; charset=utf-8"),
        ("logo.png", b"\x89PNG", "application/octet-stream"),
    ],
)
def test_guess_content_type(name: str, body: bytes, expected: str) -> None:
    assert guess_content_type(name, body) == expected


# -- data-driven over ../shared -------------------------------------------------------------

SHARED = find_shared()
needs_shared = pytest.mark.skipif(SHARED is None, reason="shared reference folder not found")
CASE_DIRS = sorted(p.parent for p in SHARED.glob("cases/*/*/expected.json")) if SHARED else []


@needs_shared
def test_every_case_is_served_as_its_routes_say() -> None:
    assert len(CASE_DIRS) >= 20
    checked = 0
    for case_dir in CASE_DIRS:
        page_url, routes = routes_from_case(case_dir)
        with LittleWeb(routes) as web:
            assert web.route_for(page_url) is not None, case_dir
            for url, route in routes.items():
                if url.startswith("*@"):
                    continue
                status, headers, body = fetch(web, url, {"User-Agent": BROWSER_UA})
                assert status == route.status, (case_dir, url)
                assert headers["Content-Type"] == route.content_type, (case_dir, url)
                assert headers["Location"] == route.location, (case_dir, url)
                expected = Path(route.file).read_bytes() if route.file else b""
                assert body == expected, (case_dir, url)
                checked += 1
    assert checked >= 40


@needs_shared
def test_replay_routes_serve_the_real_blog_sites() -> None:
    assert SHARED is not None
    corpus = SHARED / "corpus"
    routes = routes_from_replay(corpus)
    feeds = {u: r for u, r in routes.items() if "/feeds/sites/" in str(r.file)}
    pages = {u: r for u, r in routes.items() if "/pages/sites/" in str(r.file)}
    assert len(pages) >= 50 and len(feeds) >= 20
    assert len(routes) == len(feeds) + len(pages)
    assert all(r.content_type and r.content_type.startswith("text/html") for r in pages.values())
    assert all(
        r.content_type in {"application/rss+xml", "application/atom+xml", "application/rdf+xml"}
        for r in feeds.values()
    ), {u: r.content_type for u, r in feeds.items()}
    with LittleWeb(routes) as web:
        gz = next(u for u, r in feeds.items() if str(r.file).endswith(".gz"))
        status, _, body = fetch(web, gz, {"User-Agent": BROWSER_UA})
        assert status == 200 and body.lstrip().startswith(b"<?xml")
        assert body == gzip.decompress(Path(str(routes[gz].file)).read_bytes())
        spaced = next((u for u in pages if " " in u), None)
        if spaced is not None:  # served under the percent-encoded URL a crawler requests
            assert fetch(web, normalize_url(spaced), {"User-Agent": BROWSER_UA})[0] == 200


# -- end to end: a real Scrapy process through the proxy -------------------------------------

SPIDER = """
import json
import scrapy


class LittleWebSpider(scrapy.Spider):
    name = "littleweb"
    urls = {urls!r}

    async def start(self):
        for url in self.urls:
            yield scrapy.Request(url, meta={{"handle_httpstatus_list": [404]}})

    def parse(self, response):
        first = response.meta.get("redirect_urls", [response.url])[0]
        self.results = getattr(self, "results", {{}})
        self.results[first] = {{
            "url": response.url,
            "status": response.status,
            "length": len(response.body),
            "content_type": response.headers.get("Content-Type", b"").decode(),
        }}

    def closed(self, reason):
        with open(self.out, "w", encoding="utf-8") as f:
            json.dump({{"reason": reason, "results": getattr(self, "results", {{}})}}, f)
"""


@pytest.mark.integration
def test_scrapy_subprocess_crawls_http_and_https_through_the_proxy(tmp_path: Path) -> None:
    https_body = "<html><body>" + "é" * 500 + "</body></html>"  # 1000 bytes of é in UTF-8
    routes: dict[str, Route | dict[str, object]] = {
        "https://secure-example.com/": {"body": https_body, "content_type": "text/html"},
        "http://plain-example.org/feed.xml": {"body": RSS, "content_type": "application/rss+xml"},
        "http://hop.example/": {"status": 301, "location": "https://www.hop.example/journal/"},
        "https://www.hop.example/journal/": {"body": "journal"},
        "http://localhost:2368/about/": {"body": "ghost"},
    }
    urls = [
        "https://secure-example.com/",
        "http://plain-example.org/feed.xml",
        "http://hop.example/",
        "https://missing.example/nothing",
        "http://localhost:2368/about/",
    ]
    spider_file = tmp_path / "littleweb_spider.py"
    spider_file.write_text(textwrap.dedent(SPIDER.format(urls=urls)), encoding="utf-8")
    out = tmp_path / "out.json"
    with LittleWeb(routes) as web:
        env = web.env()
        env.pop("SCRAPY_SETTINGS_MODULE", None)  # a bare Scrapy, not this project's settings
        proc = subprocess.run(
            [
                *(sys.executable, "-m", "scrapy", "runspider", str(spider_file)),
                *("-a", f"out={out}", "-s", "ROBOTSTXT_OBEY=True", "-s", "LOG_LEVEL=INFO"),
                *("-s", "TELNETCONSOLE_ENABLED=False", "-s", "DOWNLOAD_TIMEOUT=10"),
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        hits = web.hits()
        connects = list(web.connects)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Remote certificate is not valid" not in proc.stderr  # per-host certificates
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["reason"] == "finished"
    assert result["results"] == {
        "https://secure-example.com/": {
            "url": "https://secure-example.com/",
            "status": 200,
            "length": len(https_body.encode()),
            "content_type": "text/html",
        },
        "http://plain-example.org/feed.xml": {
            "url": "http://plain-example.org/feed.xml",
            "status": 200,
            "length": len(RSS),
            "content_type": "application/rss+xml",
        },
        "http://hop.example/": {
            "url": "https://www.hop.example/journal/",
            "status": 200,
            "length": len(b"journal"),
            "content_type": "text/html",
        },
        "https://missing.example/nothing": {
            "url": "https://missing.example/nothing",
            "status": 404,
            "length": len(b"not found in the little web\n"),
            "content_type": "text/plain; charset=utf-8",
        },
        "http://localhost:2368/about/": {
            "url": "http://localhost:2368/about/",
            "status": 200,
            "length": len(b"ghost"),
            "content_type": "text/html",
        },
    }
    by_url = {h.url: h for h in hits}
    assert set(by_url) == {
        *urls,
        "https://www.hop.example/journal/",
        # robots.txt for every host (404 = allow all), both schemes
        "https://secure-example.com/robots.txt",
        "http://plain-example.org/robots.txt",
        "http://hop.example/robots.txt",
        "https://www.hop.example/robots.txt",
        "https://missing.example/robots.txt",
        "http://localhost:2368/robots.txt",
    }
    assert all(
        h.url.endswith("/robots.txt") == (h.status == 404) for h in hits if "missing" not in h.url
    )
    assert {h.user_agent for h in hits} == {f"Scrapy/{_scrapy_version()} (+https://scrapy.org)"}
    assert len(hits) == len(by_url)  # nothing fetched twice
    assert set(connects) == {"secure-example.com:443", "www.hop.example:443", "missing.example:443"}


def _scrapy_version() -> str:
    from importlib.metadata import version

    return version("scrapy")
