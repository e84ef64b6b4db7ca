"""The tests' little web: :class:`blogfeeds.demo.web.LittleWeb` (a loopback forward proxy that
serves fictional hosts from a route table, the one ``scrapy demo`` uses), and the route tables
of the shared test cases and corpus replay, read from ``../shared`` (or ``BLOGFEEDS_SHARED``).
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from blogfeeds.demo.web import (
    _DEFAULT_PORTS,
    Hit,
    LittleWeb,
    Route,
    _host_key,
    _read_body,
    guess_content_type,
    normalize_url,
)

__all__ = [
    "Hit",
    "LittleWeb",
    "Route",
    "find_shared",
    "guess_content_type",
    "normalize_url",
    "routes_from_case",
    "routes_from_replay",
]


# -- builders ---------------------------------------------------------------------------------


def routes_from_case(case_dir: Path) -> tuple[str, dict[str, Route]]:
    """(page_url, routes) of a case folder's ``expected.json``, files resolved to absolute paths.

    Unless ``routes`` names ``page_url`` (exactly or by ``*@HOST``), it is added serving
    ``page.html`` as ``text/html; charset=utf-8`` (as the cases README says).
    """
    case_dir = Path(case_dir)
    spec = json.loads((case_dir / "expected.json").read_text(encoding="utf-8"))
    page_url: str = spec["page_url"]
    routes = {k: Route.from_dict(v, root=case_dir) for k, v in (spec.get("routes") or {}).items()}
    named = {normalize_url(k) for k in routes if not k.startswith("*@")}
    hosts = {_host_key(f"http://{k[2:]}/") for k in routes if k.startswith("*@")}
    if normalize_url(page_url) not in named and _host_key(page_url) not in hosts:
        routes[page_url] = Route(
            file=case_dir / "page.html", content_type="text/html; charset=utf-8"
        )
    return page_url, routes


def routes_from_replay(
    shared_corpus: Path,
    only_prefix: str = "pages/sites/",
    extra_prefixes: Iterable[str] = ("feeds/sites/",),
) -> dict[str, Route]:
    """Routes for the rows of ``replay_urls.tsv`` whose local file is under the given prefixes.

    Default: the real blog sites (``pages/sites/``) and their feeds (``feeds/sites/``). Files are
    absolute paths (``.gz`` served decompressed); the Content-Type is
    :func:`guess_content_type` of the file. Rows whose URL is not http(s) are skipped; of two rows
    for the same (normalised) URL the first wins. Raises FileNotFoundError for a missing file.
    """
    shared_corpus = Path(shared_corpus)
    prefixes = (only_prefix, *extra_prefixes)
    routes: dict[str, Route] = {}
    seen: set[str] = set()
    with (shared_corpus / "replay_urls.tsv").open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            url, local = row["url"], row["local_file"]
            if not local.startswith(prefixes) or urlsplit(url).scheme not in _DEFAULT_PORTS:
                continue
            norm = normalize_url(url)
            if norm in seen:
                continue
            seen.add(norm)
            path = shared_corpus / local
            body = _read_body(path, decompress=True)
            routes[url] = Route(file=path, content_type=guess_content_type(local, body))
    return routes


def find_shared() -> Path | None:
    """The shared reference folder: ``$BLOGFEEDS_SHARED``, else ``../shared`` beside the repo."""
    env = os.environ.get("BLOGFEEDS_SHARED")
    path = Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared"
    return path if path.is_dir() else None
