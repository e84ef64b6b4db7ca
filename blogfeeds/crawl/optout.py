"""The opt-out list: which addresses a blog's owner asked to be left out of the crawl.

A line of the list (``BLOGFEEDS_OPT_OUT``; docs/opt-out.md) names, after an optional ``#``
comment is cut, any address of a blog, scheme optional (``https://alice.example/``,
``alice.example``, ``alice.example/feed.xml``): the whole blog of that address's identity
(:func:`~blogfeeds.extract.identity.blog_id`), and, for a host alone, every path of that host
(``ana.github.io`` and its project sites). On a shared host the identity keeps the user's path
(a path-hosted platform, a ``~user`` site), so ``cnblogs.com/alice`` or ``pages.example/~bob``
leaves out that prefix and not the host's other blogs.

A bare public suffix (``github.io``) or a path-hosted platform without a path (``cnblogs.com``)
is an error: it would leave out every blog under it. :meth:`OptOutList.with_ids` adds the other
addresses the store knows of a blog (its aliases). Pure: no Scrapy, no storage.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

from blogfeeds.extract.aliases import Observation, PageSignals
from blogfeeds.extract.identity import (
    blog_id,
    is_public_suffix,
    normalize_host,
    path_rule,
    split_url,
)

_COMMENT = re.compile(r"(^|\s)#.*$")
_WWW = re.compile(r"^www\d*\.")


@dataclass(frozen=True)
class Entry:
    """One address of the list: its ``host`` (``www.`` dropped), its ``path`` prefix (``""``
    for the whole host) and the blog identity it leaves out whole."""

    host: str
    path: str
    blog: str


@dataclass(frozen=True)
class BadLine:
    """A line that names no address: its 1-based ``line`` number and what is wrong."""

    line: int
    text: str
    problem: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.problem}: {self.text!r}"


def _host_path(url: str) -> tuple[str, list[str]]:
    host, segments = split_url(url)
    return _WWW.sub("", host), segments


def parse_address(text: str) -> Entry:
    """The :class:`Entry` of one address; ``ValueError`` saying why it names no blog."""
    address = text.strip()
    if not address:
        raise ValueError("empty address")
    if len(address.split()) > 1:
        raise ValueError("expected one address a line")
    if "://" not in address:
        address = "http://" + address
    if urlsplit(address).scheme.lower() not in ("http", "https"):
        raise ValueError("not an http(s) address")
    try:
        host, segments = _host_path(address)
        identity = blog_id(address)
    except ValueError as exc:
        raise ValueError(str(exc)) from None
    if not segments:
        if is_public_suffix(host):
            raise ValueError("a public suffix: it would leave out every blog under it")
        rule = path_rule(host)
        if rule is not None and not rule.host_suffix:  # a user's github.io is the user's own
            raise ValueError("a shared host: name the blog's path on it (host/user)")
        return Entry(host, "", identity)
    if segments[0][:3].lower() == "%7e":  # %7E is ~, as in identities
        segments[0] = "~" + segments[0][3:]
    return Entry(host, "/" + "/".join(segments), identity)


def parse_lines(lines: Iterable[str]) -> tuple[list[Entry], list[BadLine]]:
    """The entries of a list's lines (blank lines and ``#`` comments skipped), and the lines
    that name no address, each with its number (the others still count)."""
    entries: list[Entry] = []
    bad: list[BadLine] = []
    for number, raw in enumerate(lines, start=1):
        line = _COMMENT.sub("", raw).strip()
        if not line:
            continue
        try:
            entries.append(parse_address(line))
        except ValueError as exc:
            bad.append(BadLine(number, line, str(exc)))
    return entries, bad


@dataclass(frozen=True)
class OptOutList:
    """Addresses left out (module doc); ``url in the_list`` says whether ``url`` is one."""

    blogs: frozenset[str] = frozenset()
    """Blog identities left out whole."""
    hosts: frozenset[str] = frozenset()
    """Hosts left out whole (``www.`` dropped)."""
    prefixes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Host -> path prefixes left out on it."""

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> OptOutList:
        blogs: set[str] = set()
        hosts: set[str] = set()
        prefixes: dict[str, list[str]] = {}
        for entry in entries:
            if entry.blog:
                blogs.add(entry.blog)
            if entry.path:
                prefixes.setdefault(entry.host, []).append(entry.path)
            else:
                hosts.add(entry.host)
        return cls(frozenset(blogs), frozenset(hosts), {h: tuple(p) for h, p in prefixes.items()})

    def with_ids(self, ids: Iterable[str]) -> OptOutList:
        """This list with the blogs ``ids`` left out whole too (a blog's stored aliases)."""
        more = frozenset(ids) - self.blogs
        return self if not more else OptOutList(self.blogs | more, self.hosts, self.prefixes)

    def __bool__(self) -> bool:
        return bool(self.blogs or self.hosts or self.prefixes)

    def __contains__(self, url: object) -> bool:
        if not self or not isinstance(url, str):
            return False
        try:
            if blog_id(url) in self.blogs:
                return True
            host = _WWW.sub("", normalize_host(urlsplit(url.strip()).hostname or ""))
        except ValueError:
            return False
        if host in self.hosts:
            return True
        prefixes = self.prefixes.get(host)
        if not prefixes:
            return False
        path = urlsplit(url.strip()).path
        if path[:4].lower() == "/%7e":
            path = "/~" + path[4:]
        return any(path == p or path.startswith(p + "/") for p in prefixes)

    def has_blog(self, bid: str | None) -> bool:
        """Whether the blog identity ``bid`` is left out whole."""
        return bool(bid) and bid in self.blogs


def without_listed(seen: Observation, listed: OptOutList) -> Observation:
    """``seen`` without the addresses of ``listed`` its page names as its own (canonical,
    ``og:url``, ``<base>``, ``rel=me``, moved notice, mirrors): stored, they would keep a listed
    blog's address in the database, and the store would look for it."""
    page = seen.page
    kept = PageSignals(
        canonical="" if page.canonical in listed else page.canonical,
        og_url="" if page.og_url in listed else page.og_url,
        base="" if page.base in listed else page.base,
        rel_me=tuple(u for u in page.rel_me if u not in listed),
        moved_to="" if page.moved_to in listed else page.moved_to,
        mirrors=tuple(u for u in page.mirrors if u not in listed),
        text_digest=page.text_digest,
    )
    return seen if kept == page else replace(seen, page=kept)
