"""Load the bug-derived case folders of ``<shared>/cases`` and judge results against them.

The format is ``<shared>/cases/README.md``. ``shared`` is the ``BLOGFEEDS_SHARED`` environment
variable or ``../shared`` beside the repository; tests skip cleanly when it is missing. Case
files are read in place, never copied (several real pages carry no licence).

:class:`LittleWeb` answers requests from a case's ``routes`` in memory (no sockets): exact URL
keys, then ``*@HOST``, then the case's ``page_url`` serving ``page.html``, else 404.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from tests.littleweb import find_shared

SUITES = ("feed-discovery", "friend-links", "friend-links-real")
DEFAULT_UA = "blogfeeds/0.1 (+https://github.com/blogfeeds/blogfeeds)"
REDIRECTS = frozenset({301, 302, 303, 307, 308})


shared_dir = find_shared
"""The shared reference directory, or None when it is absent."""


@dataclass(frozen=True)
class Case:
    suite: str
    name: str
    path: Path
    expected: dict[str, Any] = field(repr=False, compare=False)

    @property
    def page_url(self) -> str:
        return str(self.expected["page_url"])


def case_names(suite: str) -> list[str]:
    """Folder names of a suite, sorted; empty when shared is missing."""
    root = shared_dir()
    if root is None or not (root / "cases" / suite).is_dir():
        return []
    return sorted(p.name for p in (root / "cases" / suite).iterdir() if p.is_dir())


@cache
def load_case(suite: str, name: str) -> Case:
    root = shared_dir()
    if root is None:
        raise FileNotFoundError("shared directory not found (set BLOGFEEDS_SHARED)")
    path = root / "cases" / suite / name
    expected = json.loads((path / "expected.json").read_text("utf-8"))
    return Case(suite=suite, name=name, path=path, expected=expected)


# --- The little web --------------------------------------------------------------------------


@dataclass
class Response:
    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    redirects: list[str] = field(default_factory=list)


class LittleWeb:
    """A case's ``routes`` as an in-memory web (see the module docstring)."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.routes: dict[str, dict[str, Any]] = dict(case.expected.get("routes") or {})

    def route(self, url: str) -> dict[str, Any] | None:
        key = url.split("#", 1)[0]
        if key in self.routes:
            return self.routes[key]
        host = (urlsplit(key).hostname or "").lower()
        if f"*@{host}" in self.routes:
            return self.routes[f"*@{host}"]
        if key == self.case.page_url:
            return {"file": "page.html", "content_type": "text/html; charset=utf-8"}
        return None

    def get(self, url: str, user_agent: str | None = DEFAULT_UA) -> Response:
        """One request, no redirect following."""
        route = self.route(url)
        if route is None:
            return Response(url, 404, {"Content-Type": "text/plain"}, b"not found")
        deny = route.get("deny_ua")
        if deny is not None and (not user_agent or any(s in user_agent for s in deny)):
            return Response(url, 403, {"Content-Type": "text/plain"}, b"forbidden")
        headers: dict[str, str] = {}
        ctype = route.get("content_type", "text/html")
        if ctype is not None:
            headers["Content-Type"] = ctype
        headers.update(route.get("headers") or {})
        status = int(route.get("status", 200))
        if route.get("location"):
            headers["Location"] = route["location"]
        body = (self.case.path / route["file"]).read_bytes() if route.get("file") else b""
        return Response(url, status, headers, body)

    def fetch(self, url: str, user_agent: str | None = DEFAULT_UA, max_hops: int = 5) -> Response:
        """Request ``url`` following redirects; ``response.url`` is the final URL."""
        hops: list[str] = []
        for _ in range(max_hops + 1):
            resp = self.get(url, user_agent)
            if resp.status not in REDIRECTS or "Location" not in resp.headers:
                resp.redirects = hops
                return resp
            hops.append(url)
            url = urljoin(url, resp.headers["Location"])
        raise RuntimeError(f"too many redirects from {hops[0]}")


# --- Async fetch over the little web (feed autodiscovery) ----------------------------------


@dataclass
class FetchLog:
    """Every request an async fetcher answered, in order: ``(url, user_agent)``."""

    requests: list[tuple[str, str | None]] = field(default_factory=list)


def case_fetch(case: Case, user_agent: str = DEFAULT_UA, log: FetchLog | None = None) -> Any:
    """An async :data:`blogfeeds.extract.discovery.Fetch` over the case's little web.

    Redirects are followed (the answer's ``url`` is the final URL); ``deny_ua`` routes answer 403
    to ``user_agent`` (the crawler's own, used when the request sets no ``User-Agent``) when it
    contains a listed substring, and to an empty ``User-Agent``; too many redirects is a network
    failure (``None``).
    """
    from blogfeeds.extract.discovery import Fetched, FetchRequest

    web = LittleWeb(case)

    async def fetch(request: FetchRequest) -> Fetched | None:
        ua: str | None = user_agent
        for key, value in request.headers.items():
            if key.lower() == "user-agent":
                ua = value or None
        if log is not None:
            log.requests.append((request.url, ua))
        try:
            resp = web.fetch(request.url, ua)
        except RuntimeError:
            return None
        return Fetched(url=resp.url, status=resp.status, headers=resp.headers, body=resp.body)

    return fetch


async def run_feed_case(
    case: Case, ruleset: str = "blogfeeds", user_agent: str = DEFAULT_UA
) -> tuple[list[str], Any, FetchLog]:
    """Fetch the case's page through its little web and run feed autodiscovery on it.

    Returns ``(reported feed URLs best first, FeedReport or None, FetchLog)``; the page fetch
    itself is not in the log (the pipeline's budget counts only its own requests). ``ruleset``
    ``"original"`` runs the original page-only ``<link>`` rule.
    """
    from blogfeeds.extract.discovery import DiscoveryConfig, find_feeds
    from blogfeeds.extract.page import DecodeError, parse_page

    log = FetchLog()
    resp = LittleWeb(case).fetch(case.page_url, user_agent)
    if resp.status != 200:
        return [], None, log
    try:
        page = parse_page(resp.url, resp.body, resp.headers)
    except DecodeError:
        return [], None, log
    fetch = case_fetch(case, user_agent, log)
    report = await find_feeds(page, fetch, config=DiscoveryConfig(ruleset=ruleset))
    return [f.url for f in report.feeds], report, log


# --- Judging ---------------------------------------------------------------------------------


def normalize_url(url: str) -> str:
    """README normalisation: scheme and host lower-cased, a trailing slash dropped."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    return urlunsplit(
        (parts.scheme.lower(), parts.netloc.lower(), path, parts.query, parts.fragment)
    )


@dataclass
class Verdict:
    passed: bool
    problems: list[str]
    tp: int = 0
    fp: int = 0
    fn: int = 0


def judge_feeds(expected: dict[str, Any], reported: list[str]) -> Verdict:
    """The README's pass definition for ``feed-discovery``; ``reported`` best first."""
    aliases = {
        normalize_url(alias): normalize_url(canon)
        for canon, alist in (expected.get("equivalent") or {}).items()
        for alias in alist
    }

    def canon(u: str) -> str:
        n = normalize_url(u)
        return aliases.get(n, n)

    want = [canon(u) for u in expected.get("expected_feeds") or []]
    extra = {canon(u) for u in expected.get("allowed_extra") or []}
    banned = {normalize_url(u) for u in expected.get("not_expected") or []}
    got = [canon(u) for u in reported]
    problems = []
    missing = [u for u in want if u not in got]
    if missing:
        problems.append(f"missing {missing}")
    if want and got and got[0] != want[0]:
        problems.append(f"main feed ranked first is {reported[0]}, want {want[0]}")
    bad = [u for u in reported if normalize_url(u) in banned]
    if bad:
        problems.append(f"not_expected reported {bad}")
    unlisted = [u for u, c in zip(reported, got, strict=True) if c not in want and c not in extra]
    unlisted = [u for u in unlisted if u not in bad]
    if unlisted:
        problems.append(f"unlisted extras {unlisted}")
    if len(set(got)) != len(got):
        problems.append(f"duplicates {reported}")
    limit = expected.get("max_feeds")
    if limit is not None and len(reported) > limit:
        problems.append(f"{len(reported)} feeds > max_feeds {limit}")
    return Verdict(not problems, problems)


def _fold_www(url: str) -> str:
    """``normalize_url`` with a leading ``www.`` of the host dropped."""
    parts = urlsplit(normalize_url(url))
    netloc = parts.netloc[4:] if parts.netloc.startswith("www.") else parts.netloc
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def judge_friends(
    expected: dict[str, Any], reported: list[tuple[str, str]], *, fold_www: bool = True
) -> Verdict:
    """The README's pass definition for friend links; ``reported`` is ``[(url, name)]``.

    Counts for micro precision/recall are over normalised URL sets. One deviation from the
    README's normalisation, on by default (``fold_www``): a leading ``www.`` of the host is
    ignored, as blog identity ignores it (``table-footer-links-legacy`` expects
    ``brook-example.com`` for a link to ``www.brook-example.com``, while the real pages keep
    their ``www.``); ``fold_www=False`` is the README's judge exactly.
    """
    norm = _fold_www if fold_www else normalize_url
    want = {
        norm(f["url"]): " ".join(str(f.get("name", "")).split())
        for f in expected.get("expected_friend_links") or []
    }
    got: dict[str, str] = {}
    dupes = []
    for url, name in reported:
        key = norm(url)
        if key in got:
            dupes.append(url)
            continue
        got[key] = " ".join(name.split())
    excluded = {norm(u) for u in expected.get("expected_excluded") or []}
    problems = []
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    if missing:
        problems.append(f"missing {missing}")
    if extra:
        problems.append(f"extra {extra}")
    if dupes:
        problems.append(f"duplicates {dupes}")
    if excluded & set(got):
        problems.append(f"excluded reported {sorted(excluded & set(got))}")
    names = [
        f"{u}: {got[u]!r} != {want[u]!r}" for u in sorted(set(want) & set(got)) if got[u] != want[u]
    ]
    if names:
        problems.append(f"names {names}")
    tp = len(set(want) & set(got))
    return Verdict(not problems, problems, tp=tp, fp=len(got) - tp, fn=len(want) - tp)
