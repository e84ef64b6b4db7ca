"""An address's key, shared by its spellings: the host without ``www.``, the path without
``index.html`` or a trailing slash, no scheme (a scheme is not part of a blog's address).
Pure string work on URLs, used by the evidence of aliases and by the reading of a page."""

from __future__ import annotations

import re
from urllib.parse import urlsplit


def address_host(url: str) -> str:
    """The host of ``url``, lower-cased, without ``www.`` (``""`` when it has none)."""
    try:
        host = (urlsplit(url.strip()).hostname or "").lower().rstrip(".")
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host


def path_depth(url: str) -> int:
    """The path segments of ``url``, ``index.html`` not counted."""
    return len([s for s in urlsplit(url).path.split("/") if s and s != "index.html"])


def address_key(url: str) -> str:
    """Host without ``www.`` and path without ``index.html`` or a trailing slash: two spellings
    of one address share it (the scheme is not part of a blog's address)."""
    if not url:
        return ""
    path = re.sub(r"/index\.html?$", "/", urlsplit(url.strip()).path).rstrip("/")
    return address_host(url) + path


def elsewhere(home: str, url: str) -> bool:
    """Whether ``url`` is off the address ``home`` (another host, or a path outside it)."""
    key, base = address_key(url), address_key(home)
    return bool(key) and key != base and not key.startswith(base + "/")
