"""WebSub discovery (W3C WebSub, 2018, §4): the hubs and the topic (``rel=self``) of a feed.

A publisher announces them in HTTP ``Link`` headers (RFC 8288) and, for feeds, in the document
(``<atom:link rel="hub">``/``rel="self"`` in Atom and RSS, JSON Feed ``hubs``/``feed_url``).
The headers are read first (the spec's order); the document fills in what they lack. The topic
is the ``rel=self`` URL, else the URL the feed was fetched from. Only http(s) URLs count, made
absolute against the fetched URL.

Pure: strings in, a dataclass out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from blogfeeds.extract.feedreader.document import FeedDocument

#: One link-value of a Link header: ``<uri>`` then ``;``-separated parameters.
_LINK = re.compile(r"<([^>]*)>((?:\s*;\s*[^;,\"=]+(?:=\s*(?:\"[^\"]*\"|[^;,]*))?)*)")
_PARAM = re.compile(r";\s*([^=;,\s]+)\s*(?:=\s*(\"[^\"]*\"|[^;,]*))?")
#: At most this many hubs are kept (a feed listing hundreds is noise, not a choice).
MAX_HUBS = 5


@dataclass(frozen=True)
class WebSubLinks:
    """What a feed announces: ``hubs`` (absolute http(s) URLs, headers first, no repeats, at
    most :data:`MAX_HUBS`) and ``topic`` (its ``rel=self`` URL, else the fetched URL)."""

    hubs: tuple[str, ...] = ()
    topic: str = ""


def parse_link_header(values: Iterable[str]) -> list[tuple[str, frozenset[str]]]:
    """``(uri, rels)`` of every link-value in the ``Link`` header values (RFC 8288 §3; the
    ``rel`` parameter is a space-separated, case-insensitive list). Malformed parts are
    skipped."""
    links: list[tuple[str, frozenset[str]]] = []
    for value in values:
        for match in _LINK.finditer(value or ""):
            rels: set[str] = set()
            for name, raw in _PARAM.findall(match.group(2)):
                if name.lower() == "rel":
                    rels.update(raw.strip().strip('"').lower().split())
            links.append((match.group(1).strip(), frozenset(rels)))
    return links


def _absolute(url: str, base: str) -> str | None:
    try:
        absolute = urljoin(base, url.strip()) if base else url.strip()
        parts = urlsplit(absolute)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return absolute


def websub_links(doc: FeedDocument, link_headers: Iterable[str], url: str) -> WebSubLinks:
    """The hubs and topic of the feed ``doc`` fetched from ``url`` with ``link_headers`` (every
    ``Link`` header value of the response)."""
    headed = parse_link_header(link_headers)
    hubs: dict[str, None] = {}
    for candidate in [u for u, rels in headed if "hub" in rels] + list(doc.hubs):
        absolute = _absolute(candidate, url)
        if absolute and len(hubs) < MAX_HUBS:
            hubs.setdefault(absolute, None)
    topic = ""
    for candidate in [u for u, rels in headed if "self" in rels] + [doc.self_url]:
        topic = (candidate and _absolute(candidate, url)) or ""
        if topic:
            break
    return WebSubLinks(tuple(hubs), topic or url)
