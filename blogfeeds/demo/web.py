"""A little web on loopback: fictional hosts served from a route table through a forward proxy.

A real ``scrapy crawl`` subprocess reaches hosts such as ``https://hop-base.example/`` without DNS
and without any network beyond 127.0.0.1: :class:`LittleWeb` is an HTTP forward proxy on
``127.0.0.1:<ephemeral port>`` that answers every request itself from a route table. ``scrapy
demo`` serves its blogosphere with it, and the tests their webs.

It speaks absolute-form http (RFC 9112 §3.2.2), ``CONNECT`` then TLS with a self-signed
certificate made at start-up (Scrapy verifies none unless told), and origin-form requests sent
straight to its port; Scrapy's ``HttpProxyMiddleware`` finds it in ``web.env()``.

Route table (the ``routes`` format of the shared test cases): key = absolute URL, compared after
RFC 3986 §6.2.2 normalisation, or ``*@HOST`` for every path of HOST on both schemes (an exact key
wins). Every URL not routed answers 404, so ``/robots.txt`` is 404 (allow all) unless routed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import http.server
import os
import re
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from email.message import Message
from email.utils import parsedate_to_datetime
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from w3lib.url import safe_url_string

__all__ = ["Hit", "LittleWeb", "Route", "guess_content_type", "normalize_url"]

_ROUTE_KEYS = frozenset(
    {"status", "location", "file", "body", "content_type", "headers", "deny_ua", "delay"}
    | {"decompress", "drop"}
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Route:
    """What the little web answers at one URL (the cases' ``routes`` value).

    - ``status`` (default 200); ``location``: ``Location`` header (redirects).
    - ``file`` (relative to ``LittleWeb(root=...)``; ``.gz`` served decompressed unless
      ``decompress=False``) or ``body`` (``str`` sent as UTF-8); neither = empty body.
    - ``content_type``: ``Content-Type`` value; ``None`` sends no ``Content-Type`` at all.
    - ``headers``: extra response headers; a list value sends the header once per item.
      ``ETag`` / ``Last-Modified`` here also make a matching conditional GET answer 304.
    - ``deny_ua``: User-Agent substrings (case-sensitive) answered with 403; a request without
      a User-Agent also gets 403 when this is non-empty.
    - ``delay``: seconds to wait before answering.
    - ``drop``: close the connection without an answer (a host that is gone).
    - ``handler``: a callable ``(url) -> Route`` asked at every request for the route that
      answers it (dynamic, endless webs; not in the cases format); the other fields are ignored.
    """

    status: int = 200
    location: str | None = None
    file: str | Path | None = None
    body: bytes | str | None = None
    content_type: str | None = "text/html"
    headers: Mapping[str, str | Sequence[str]] = field(default_factory=dict)
    deny_ua: tuple[str, ...] = ()
    delay: float = 0.0
    decompress: bool = True
    drop: bool = False
    handler: Callable[[str], Route] | None = None

    def __post_init__(self) -> None:
        if self.file is not None and self.body is not None:
            raise ValueError("a route has either 'file' or 'body', not both")
        if not 100 <= self.status <= 599:
            raise ValueError(f"bad HTTP status {self.status!r}")

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], root: Path | None = None) -> Route:
        """Build a route from a cases-format dict; ``file`` is resolved against ``root``.

        Raises ValueError on a key outside the format (``status``, ``location``, ``file``,
        ``body``, ``content_type``, ``headers``, ``deny_ua``, ``delay``, ``decompress``,
        ``drop``).
        """
        unknown = set(spec) - _ROUTE_KEYS
        if unknown:
            raise ValueError(f"unknown route keys {sorted(unknown)}; known: {sorted(_ROUTE_KEYS)}")
        file = spec.get("file")
        if file is not None and root is not None:
            file = Path(root) / file
        return cls(
            status=int(spec.get("status", 200)),
            location=spec.get("location"),
            file=file,
            body=spec.get("body"),
            content_type=spec.get("content_type", "text/html"),
            headers=dict(spec.get("headers") or {}),
            deny_ua=tuple(spec.get("deny_ua") or ()),
            delay=float(spec.get("delay", 0.0)),
            decompress=bool(spec.get("decompress", True)),
            drop=bool(spec.get("drop", False)),
        )


@dataclass(frozen=True)
class Hit:
    """One request the little web answered (CONNECT tunnels are counted apart, not here).

    ``url`` is the absolute URL as requested (``https://`` for requests inside a tunnel);
    ``headers`` are the request headers as sent (a repeated header keeps its last value).
    """

    method: str
    url: str
    user_agent: str | None
    headers: Mapping[str, str]
    status: int


_PCT = re.compile(r"%[0-9a-fA-F]{2}")


def normalize_url(url: str) -> str:
    """Syntax-normalise an absolute URL (RFC 3986 §6.2.2) for route matching.

    Lower-cases scheme and host, drops a default port and the fragment, turns an empty path
    into ``/``, percent-encodes unsafe and non-ASCII characters as UTF-8 the way Scrapy and
    browsers send them (w3lib ``safe_url_string``) and upper-cases percent-escapes.
    Path and query are otherwise kept as they are (a trailing slash matters).
    """
    parts = urlsplit(safe_url_string(url.strip()))
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    netloc = host if parts.port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{parts.port}"
    path = _PCT.sub(lambda m: m.group(0).upper(), parts.path or "/")
    query = _PCT.sub(lambda m: m.group(0).upper(), parts.query)
    return urlunsplit((scheme, netloc, path, query, ""))


def _host_key(url: str) -> str:
    return urlsplit(normalize_url(url)).netloc


def _read_body(path: Path, decompress: bool) -> bytes:
    data = path.read_bytes()
    if decompress and path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return data


_XML_PROLOGUE = re.compile(rb"\s*(<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)", re.S | re.I)
_FIRST_TAG = re.compile(rb"\s*<([A-Za-z_][\w:.-]*)")
_FEED_ROOT = re.compile(rb"<(rss|feed|rdf:RDF)[\s>]")


def guess_content_type(name: str, body: bytes) -> str:
    """Content-Type a static host would send for a file ``name`` with these bytes.

    Feeds are recognised by their root element whatever the extension (``rss`` →
    ``application/rss+xml``, Atom ``feed`` → ``application/atom+xml``, ``rdf:RDF`` →
    ``application/rdf+xml``; WordPress serves ``/feed/`` this way); JSON Feed by its ``version``
    URL; a feed root after leading junk (PHP notices before the XML) counts too. Otherwise by
    extension (a trailing ``.gz`` ignored): ``.xml`` → ``application/xml``,
    ``.html``/``.htm`` → ``text/html; charset=utf-8`` when the bytes are valid UTF-8 (else
    ``text/html``, leaving the charset to the page), ``.json`` → ``application/json``,
    ``.txt`` → ``text/plain; charset=utf-8``, anything else ``application/octet-stream``.
    """
    lower = name.lower().removesuffix(".gz")
    head = body[:4096].lstrip(b"\xef\xbb\xbf")
    pos = 0
    while m := _XML_PROLOGUE.match(head, pos):
        pos = m.end()
    tag = _FIRST_TAG.match(head, pos)
    root = tag.group(1).decode("ascii").lower() if tag else ""
    if root not in ("rss", "feed", "rdf:rdf", "html") and (late := _FEED_ROOT.search(head)):
        root = late.group(1).decode("ascii").lower()  # a feed after leading junk (PHP notices)
    if root == "rss":
        return "application/rss+xml"
    if root == "feed":
        return "application/atom+xml"
    if root == "rdf:rdf":
        return "application/rdf+xml"
    if lower.endswith(".json"):
        return "application/feed+json" if b"jsonfeed.org/version" in head else "application/json"
    if lower.endswith(".xml"):
        return "application/xml"
    if lower.endswith((".html", ".htm")):
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return "text/html"
        return "text/html; charset=utf-8"
    if lower.endswith(".txt"):
        return "text/plain; charset=utf-8"
    return "application/octet-stream"


class _Certificates:
    """Self-signed certificates made on demand, one per TLS server name (SNI), valid one day.

    Scrapy does not verify certificates by default but warns when the name does not match;
    a certificate for the very host keeps crawl logs free of that warning.
    """

    def __init__(self, directory: Path):
        self._directory = directory
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._key_file = directory / "key.pem"
        self._key_file.write_bytes(
            self._key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()
        self.default = self.context_for("littleweb.invalid")
        self.default.sni_callback = self._on_sni

    def context_for(self, host: str) -> ssl.SSLContext:
        host = host.lower().rstrip(".")
        with self._lock:
            if host in self._contexts:
                return self._contexts[host]
            name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host[:64])])
            now = dt.datetime.now(dt.UTC)
            cert = (
                x509.CertificateBuilder()
                .subject_name(name)
                .issuer_name(name)
                .public_key(self._key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(hours=1))
                .not_valid_after(now + dt.timedelta(days=1))
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
                .sign(self._key, hashes.SHA256())
            )
            cert_file = self._directory / f"cert-{len(self._contexts)}.pem"
            cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert_file, self._key_file)
            self._contexts[host] = context
            return context

    def _on_sni(self, sock: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext) -> None:
        if server_name:
            sock.context = self.context_for(server_name)


class _Server(http.server.ThreadingHTTPServer):
    request_queue_size = 256
    daemon_threads = True
    web: LittleWeb
    tls: ssl.SSLContext


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # idle keep-alive connections end after this many seconds
    server: _Server
    _tunnel: str | None = None
    _tls: ssl.SSLSocket | None = None

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        # Headers and body may leave in two writes: without this, Nagle + delayed ACK cost 40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self) -> None:
        # A client that drops a connection or a tunnel mid-way is normal, not an error.
        with contextlib.suppress(OSError, ssl.SSLError):
            super().handle()

    def finish(self) -> None:
        with contextlib.suppress(OSError, ssl.SSLError):
            super().finish()
        if self._tls is not None:
            self._tls.close()

    def do_CONNECT(self) -> None:
        host, _, port = self.path.rpartition(":")
        if not host or not port.isdigit() or self._tunnel is not None:
            self.send_error(400, "CONNECT wants host:port")
            return
        self.server.web._record_connect(self.path)
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        try:
            tls = self.server.tls.wrap_socket(self.connection, server_side=True)
        except (OSError, ssl.SSLError):
            self.close_connection = True
            return
        self.rfile.close()
        self.wfile.close()
        self._tls = tls
        self.connection = tls
        self.rfile = tls.makefile("rb")
        self.wfile = tls.makefile("wb")
        self._tunnel = host.lower() if port == "443" else f"{host.lower()}:{port}"
        self.close_connection = False

    def _url(self) -> str:
        if "://" in self.path:
            return self.path
        if self._tunnel is not None:
            return f"https://{self._tunnel}{self.path}"
        return f"http://{self.headers.get('Host', '')}{self.path}"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        url = self._url()
        status, headers, body = self.server.web._respond(self.command, url, self.headers)
        if status == 0:  # a route that drops: no answer at all
            self.close_connection = True
            return
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and status not in (204, 304):
            self.wfile.write(body)

    do_GET = do_HEAD = do_POST = _answer


class LittleWeb:
    """A loopback forward proxy that serves a fictional web from a route table.

    ``routes`` maps an absolute URL or ``*@HOST`` to a :class:`Route` or a cases-format dict;
    relative ``file`` paths are resolved against ``root``. Raises FileNotFoundError for a
    route whose file is missing and ValueError for a bad route (checked here, not per request).

    Use as a context manager (or ``start()`` / ``stop()``); while running, ``proxy_url`` is
    ``http://127.0.0.1:<port>`` and ``env()`` is the environment for a Scrapy subprocess.
    Every answered request is logged as a :class:`Hit` (thread-safe); CONNECTs go to
    ``connects``.
    """

    def __init__(self, routes: Mapping[str, Route | Mapping[str, Any]], root: Path | None = None):
        self.root = root
        self._exact: dict[str, Route] = {}
        self._hosts: dict[str, Route] = {}
        self._bodies: dict[Path, bytes] = {}
        self._lock = threading.Lock()
        self._hits: list[Hit] = []
        self.connects: list[str] = []
        """``host:port`` of every CONNECT tunnel opened, in order."""
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        for key, spec in routes.items():
            self.add(key, spec)

    # -- route table -------------------------------------------------------------------------

    def add(self, key: str, spec: Route | Mapping[str, Any]) -> None:
        """Add or replace one route (also while running)."""
        route = spec if isinstance(spec, Route) else Route.from_dict(spec)
        if route.file is not None:
            path = Path(route.file)
            if not path.is_absolute():
                if self.root is None:
                    raise ValueError(f"route {key!r}: relative file {path} needs a root")
                path = self.root / path
            if not path.is_file():
                raise FileNotFoundError(f"route {key!r}: no file {path}")
            route = replace(route, file=path)
        if key.startswith("*@"):
            self._hosts[_host_key(f"http://{key[2:]}/")] = route
        elif urlsplit(key).scheme in _DEFAULT_PORTS:
            self._exact[normalize_url(key)] = route
        else:
            raise ValueError(f"route key {key!r} is neither an http(s) URL nor *@HOST")

    def route_for(self, url: str) -> Route | None:
        """The route that answers ``url`` (exact key first, then ``*@HOST``), or None (404)."""
        norm = normalize_url(url)
        return self._exact.get(norm) or self._hosts.get(urlsplit(norm).netloc)

    def _body(self, route: Route) -> bytes:
        if route.body is not None:
            return route.body.encode() if isinstance(route.body, str) else route.body
        if route.file is None:
            return b""
        path = Path(route.file)
        if path not in self._bodies:
            self._bodies[path] = _read_body(path, route.decompress)
        return self._bodies[path]

    def _respond(
        self, method: str, url: str, request_headers: Message
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """(status, headers, body) for one request; also logs the hit."""
        route = self.route_for(url)
        if route is not None and route.handler is not None:
            route = route.handler(url)
        user_agent = request_headers.get("User-Agent")
        headers: list[tuple[str, str]] = []
        body = b""
        if route is not None and route.drop:
            status = 0
        elif route is None:
            status = 404
            headers.append(("Content-Type", "text/plain; charset=utf-8"))
            body = b"not found in the little web\n"
        elif route.deny_ua and (not user_agent or any(s in user_agent for s in route.deny_ua)):
            status = 403
            headers.append(("Content-Type", "text/plain; charset=utf-8"))
            body = b"forbidden for this user agent\n"
        else:
            if route.delay:
                time.sleep(route.delay)
            status = route.status
            if route.content_type is not None:
                headers.append(("Content-Type", route.content_type))
            if route.location is not None:
                headers.append(("Location", route.location))
            for name, value in route.headers.items():
                values = [value] if isinstance(value, str) else list(value)
                headers.extend((name, v) for v in values)
            body = self._body(route)
            if status == 200 and _not_modified(route, request_headers):
                status, body = 304, b""
        hit = Hit(method, url, user_agent, dict(request_headers.items()), status)
        with self._lock:
            self._hits.append(hit)
        return status, headers, body

    def _record_connect(self, hostport: str) -> None:
        with self._lock:
            self.connects.append(hostport)

    # -- hit log ------------------------------------------------------------------------------

    def hits(self, url: str | None = None) -> list[Hit]:
        """Requests answered so far, in order; only those for ``url`` (normalised) if given."""
        with self._lock:
            hits = list(self._hits)
        if url is None:
            return hits
        norm = normalize_url(url)
        return [h for h in hits if normalize_url(h.url) == norm]

    def urls_fetched(self) -> list[str]:
        """URLs requested so far, in order of first request, without repeats."""
        return list(dict.fromkeys(h.url for h in self.hits()))

    def clear_hits(self) -> None:
        with self._lock:
            self._hits.clear()
            self.connects.clear()

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> LittleWeb:
        """Bind 127.0.0.1 on an ephemeral port and serve in a daemon thread."""
        if self._server is not None:
            return self
        self._tmp = tempfile.TemporaryDirectory(prefix="littleweb-")
        server = _Server(("127.0.0.1", 0), _Handler)
        server.web = self
        server.tls = _Certificates(Path(self._tmp.name)).default
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._tmp is not None:
            self._tmp.cleanup()
        self._server = self._thread = self._tmp = None

    def __enter__(self) -> LittleWeb:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("LittleWeb is not running; call start() first")
        return int(self._server.server_address[1])

    @property
    def proxy_url(self) -> str:
        """``http://127.0.0.1:<port>``; raises RuntimeError when not running."""
        return f"http://127.0.0.1:{self.port}"

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default ``os.environ``) plus the proxy variables Scrapy reads.

        Sets ``http_proxy``/``https_proxy`` and their upper-case forms to :attr:`proxy_url`,
        and ``no_proxy``/``NO_PROXY`` to empty so that no host (not even localhost) bypasses
        the proxy. Sets ``BLOGFEEDS_ALLOW_PRIVATE_TARGETS=1`` (the SSRF guard lets the fictional
        hosts through; set it to ``0`` in ``base`` to keep the guard's address check on).
        """
        env = dict(os.environ if base is None else base)
        for name in ("http_proxy", "https_proxy"):
            env[name] = env[name.upper()] = self.proxy_url
        env["no_proxy"] = env["NO_PROXY"] = ""
        env.setdefault("BLOGFEEDS_ALLOW_PRIVATE_TARGETS", "1")
        return env


def _not_modified(route: Route, request_headers: Message) -> bool:
    """Conditional GET (RFC 9110 §13.1): If-None-Match against ETag, else If-Modified-Since."""
    headers = {k.lower(): v for k, v in route.headers.items() if isinstance(v, str)}
    inm = request_headers.get("If-None-Match")
    if inm is not None and "etag" in headers:
        tags = {t.strip().removeprefix("W/") for t in inm.split(",")}
        return "*" in tags or headers["etag"].removeprefix("W/") in tags
    ims = request_headers.get("If-Modified-Since")
    if ims is not None and "last-modified" in headers:
        try:
            return parsedate_to_datetime(headers["last-modified"]) <= parsedate_to_datetime(ims)
        except (TypeError, ValueError):
            return False
    return False
