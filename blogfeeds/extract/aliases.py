"""One blog under several addresses: the evidence that two addresses are one blog.

A blog is often served at more than one address (``user.github.io`` beside its own domain,
copies on vercel.app, netlify.app, pages.dev or gitee.io, an old domain after a move), and two
people can share one host under paths. From what the crawl saw of each address (an
:class:`Observation`: its redirects, canonical, ``og:url``, ``<base href>``, ``rel=me``, moved
notice, mirror menu, text digest, main feed with its entries, title and posts on a placeholder
host) :func:`same_blog` decides whether two addresses are one blog and on what evidence, and
:func:`preferred` names the address the blog prefers.
The evidence kinds and when each counts: docs/identity.md. Never title, template or
description (two blogs of one theme share all three); two feeds that both have entries and
share none outweigh every evidence but a permanent redirect and one feed URL.

Pure: functions of parsed pages and dataclasses, no Scrapy, items or storage.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from urllib.parse import urlsplit

from blogfeeds.extract.addresskeys import address_host, address_key, elsewhere, path_depth
from blogfeeds.extract.feedreader.entries import FeedEntry
from blogfeeds.extract.identity import on_platform
from blogfeeds.extract.pagesignals import PageSignals
from blogfeeds.extract.text import collapse

REDIRECT = "redirect"
CANONICAL = "canonical"
OG_URL = "og_url"
BASE = "base"
SAME_FEED = "same_feed"
ENTRIES = "entries"
LOCAL_POSTS = "local_posts"
REL_ME = "rel_me"
MOVED = "moved"
MIRROR = "mirror"
SAME_PAGE = "same_page"
FEEDS_DISJOINT = "feeds_disjoint"
"""What :attr:`Verdict.against` names: both feeds have entries and share none."""

PERMANENT = frozenset({301, 308})
MIN_COMMON = 2
"""Entries two feeds must share at least for :data:`ENTRIES`."""
REPOSITORY_PAGES = ("github.io", "gitlab.io", "codeberg.page")
"""Pages sites of the code hosts a static blog's repository lives on: the copies of a build
elsewhere are deployed from that repository (vercel.app, netlify.app and pages.dev build a
GitHub or GitLab repository; a gitee.io site mostly serves a Gitee mirror of a GitHub one, for
readers in China), so when nothing else says which address is the original, the repository's
own site is."""
PLACEHOLDER_HOSTS = ("example.com", "example.org", "example.net", "localhost")
"""Addresses an unconfigured site names (RFC 2606 second-level names, ``localhost``), with
their subdomains; loopback, unspecified and private IP literals too (:func:`is_placeholder`)."""
_LONG_ID = re.compile(r"[0-9a-fA-F-]{16,}")


@dataclass(frozen=True)
class Hop:
    """One response of a redirect chain: the URL requested and the status it answered."""

    url: str
    status: int


@dataclass(frozen=True)
class Observation:
    """What the crawl saw of one address of a blog.

    ``url`` the address requested, ``final_url`` where its redirects ended (``url`` when none),
    ``redirects`` the redirect responses in order; the same for the main feed
    (``feed_url`` as the home page names it); ``entries`` the main feed's item ids and links
    (:attr:`~blogfeeds.extract.feedreader.document.FeedDocument.item_keys`); ``page`` the
    home page's :class:`PageSignals`.
    """

    url: str
    final_url: str = ""
    redirects: tuple[Hop, ...] = ()
    page: PageSignals = field(default_factory=PageSignals)
    feed_url: str = ""
    feed_final_url: str = ""
    feed_redirects: tuple[Hop, ...] = ()
    entries: frozenset[str] = frozenset()
    feed_title: str = ""
    """The main feed's own title."""
    local_posts: frozenset[str] = frozenset()
    """The main feed's posts linked on a placeholder host (a build for ``localhost``), by day,
    path and title (:func:`local_posts`)."""

    @property
    def home(self) -> str:
        return self.final_url or self.url


@dataclass(frozen=True)
class Claim:
    """One address's statement that ``target`` is (another address of) its blog.

    ``conclusive`` when the statement alone decides (a permanent redirect); otherwise
    :func:`same_blog` wants the other address's observation too.
    """

    alias: str
    target: str
    evidence: str
    conclusive: bool = False


@dataclass(frozen=True)
class Verdict:
    same: bool
    evidence: tuple[str, ...] = ()
    """The evidence kinds that hold, in the order of the module docstring."""
    against: tuple[str, ...] = ()


# --- claims and decisions ---------------------------------------------------------------------


def claims(seen: Observation) -> tuple[Claim, ...]:
    """What one address's observation claims of other addresses, with the evidence kind."""
    out: list[Claim] = []
    if seen.redirects and _permanent(seen.redirects) and elsewhere(seen.url, seen.home):
        out.append(Claim(seen.url, seen.home, REDIRECT, conclusive=True))
    feed_home = seen.feed_final_url or seen.feed_url
    moved_feed = seen.feed_redirects and elsewhere(seen.feed_url, feed_home)
    if moved_feed and _permanent(seen.feed_redirects):
        out.append(Claim(seen.feed_url, feed_home, REDIRECT, conclusive=True))
    named = ((CANONICAL, seen.page.canonical), (OG_URL, seen.page.og_url), (BASE, seen.page.base))
    for kind, url in named:
        if url and not is_placeholder(url) and elsewhere(seen.home, url):
            out.append(Claim(seen.home, url, kind))
    out.extend(Claim(seen.home, url, REL_ME) for url in seen.page.rel_me if _other(seen, url))
    if seen.page.moved_to and not is_placeholder(seen.page.moved_to):
        out.append(Claim(seen.home, seen.page.moved_to, MOVED))
    out.extend(Claim(seen.home, url, MIRROR) for url in seen.page.mirrors if _other(seen, url))
    if site := _posts_site(seen):
        out.append(Claim(seen.home, site, ENTRIES))
    return tuple(out)


def _posts_site(seen: Observation) -> str:
    """The home of the one other host the main feed links all its posts on (at least
    :data:`MIN_COMMON`), when ``seen`` is a host's home: the site URL the build was configured
    with, so a copy deployed elsewhere names its original there (``""`` when none)."""
    posts = [k for k in _posts(seen.entries) if k.startswith(("http://", "https://"))]
    hosts = _entry_hosts(frozenset(posts))
    if len(posts) < MIN_COMMON or len(hosts) != 1 or path_depth(seen.home) != 0:
        return ""
    site = f"{urlsplit(min(posts)).scheme}://{next(iter(hosts))}/"
    return site if elsewhere(seen.home, site) else ""


def same_blog(a: Observation, b: Observation) -> Verdict:
    """Whether ``a`` and ``b`` are addresses of one blog, and on what evidence."""
    evidence: list[str] = []
    if _redirects_to(a, b) or _redirects_to(b, a):
        evidence.append(REDIRECT)
    canonical = any(_names(x.page.canonical, y) and _own(y, x) for x, y in ((a, b), (b, a)))
    og_url = any(_names(x.page.og_url, y) and _own(y, x) for x, y in ((a, b), (b, a)))
    if canonical:
        evidence.append(CANONICAL)
    if og_url:
        evidence.append(OG_URL)
    if any(_names(x.page.base, y) and _own(y, x) for x, y in ((a, b), (b, a))):
        evidence.append(BASE)
    one_feed = bool(address_key(a.feed_url)) and address_key(a.feed_url) == address_key(b.feed_url)
    if one_feed and (_names(a.feed_url, a) or _names(a.feed_url, b)):  # not a demo's feed
        evidence.append(SAME_FEED)
    shared = _shared_entries(a.entries, b.entries)
    if shared_enough(a.entries, b.entries):
        evidence.append(ENTRIES)
    if _local_copy(a, b):
        evidence.append(LOCAL_POSTS)
    # the same page and the same feed: one build served twice (a feedless template's page
    # served by many hosts, as a generated web does, is no evidence)
    if a.page.text_digest == b.page.text_digest != "" and a.entries == b.entries != frozenset():
        evidence.append(SAME_PAGE)
    if any(_names(u, b) for u in a.page.rel_me) and any(_names(u, a) for u in b.page.rel_me):
        evidence.append(REL_ME)
    moved = any(_names(x.page.moved_to, y) for x, y in ((a, b), (b, a)))
    moved = moved and bool(shared or _same_paths(a.entries, b.entries))
    if moved:
        evidence.append(MOVED)
    mirror_a = any(_names(u, b) for u in a.page.mirrors)
    mirror_b = any(_names(u, a) for u in b.page.mirrors)
    if (mirror_a and mirror_b) or ((mirror_a or mirror_b) and ENTRIES in evidence):
        evidence.append(MIRROR)
    disjoint = _posts(a.entries) and _posts(b.entries) and not shared and not moved
    against = (FEEDS_DISJOINT,) if disjoint else ()
    decisive = {REDIRECT, SAME_FEED} & set(evidence)
    return Verdict(bool(decisive or (evidence and not against)), tuple(evidence), against)


def preferred(a: Observation, b: Observation) -> str:
    """The address of one blog its own evidence prefers, of ``a`` and ``b``: the target of a
    permanent redirect, else the address the other's canonical, ``og:url`` or ``<base>`` names,
    else the address the other's moved notice names or whose feed the other's page names, else the
    address on whose host the feeds' posts are (a build names its own site URL there), else the
    blog's own domain over a hosting platform's and a repository's Pages site over another
    platform's copy (:data:`REPOSITORY_PAGES`), else the first of the two in sorting order (two
    copies that say nothing of which is the original: the same answer whichever came first)."""
    for x, y in ((a, b), (b, a)):
        if _redirects_to(x, y):
            return y.home
    for x, y in ((a, b), (b, a)):
        if any(_names(u, y) for u in (x.page.canonical, x.page.og_url, x.page.base)):
            return y.home
    for x, y in ((a, b), (b, a)):  # a moved notice, or a copy's pages linking the feed
        if _names(x.page.moved_to, y) or (_names(x.feed_url, y) and not _names(x.feed_url, x)):
            return y.home
    hosts = _entry_hosts(a.entries) | _entry_hosts(b.entries)
    for x, y in ((a, b), (b, a)):
        if address_host(y.home) in hosts and address_host(x.home) not in hosts:
            return y.home
    rank_a, rank_b = _platform_rank(a.home), _platform_rank(b.home)
    if rank_a != rank_b:
        return a.home if rank_a < rank_b else b.home
    return min(a.home, b.home)


def shared_enough(one: frozenset[str], other: frozenset[str]) -> bool:
    """Whether two feeds' entries say they are one blog's: of the keys that name one post in
    the world, at least :data:`MIN_COMMON` shared, at least half of the smaller feed's, and
    half of the larger's when it carries several sites' entries (an aggregator's)."""
    return _enough(_posts(one), _posts(other))


def _enough(one: frozenset[str], other: frozenset[str]) -> bool:
    shared = one & other
    small, large = sorted((one, other), key=len)
    if len(shared) < MIN_COMMON or 2 * len(shared) < len(small):
        return False
    return len(_entry_hosts(large)) <= 1 or 2 * len(shared) >= len(large)


def is_placeholder(url: str) -> bool:
    """Whether ``url`` is an address an unconfigured site names: a reserved example domain,
    ``localhost``, or a loopback, unspecified or private IP literal."""
    host = address_host(url)
    return not host or _placeholder_host(host)


@functools.lru_cache(maxsize=4096)
def _placeholder_host(host: str) -> bool:
    """:func:`is_placeholder` of a host (a feed's entries share a few hosts: judged once)."""
    if any(host == p or host.endswith("." + p) for p in PLACEHOLDER_HOSTS):
        return True
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified or ip.is_private or ip.is_link_local


# --- helpers ---------------------------------------------------------------------------------


def _names(url: str, seen: Observation) -> bool:
    """Whether ``url`` is on the blog at ``seen``: its host, and a path under the address's
    (``medium.com/@a/posts/1`` is on ``medium.com/@a``, not on ``medium.com/@b``)."""
    if not url or is_placeholder(url):
        return False
    key = address_key(url)
    return any(
        key == home or key.startswith(home + "/")
        for home in {address_key(seen.url), address_key(seen.home)}
    )


def _own(seen: Observation, other: Observation) -> bool:
    """Whether ``seen`` does not name a third address as its canonical (it names itself, the
    other, or nothing)."""
    named = [
        u
        for u in (seen.page.canonical, seen.page.og_url, seen.page.base)
        if u and not is_placeholder(u)
    ]
    return all(_names(u, seen) or _names(u, other) for u in named)


def _other(seen: Observation, url: str) -> bool:
    return bool(url) and not is_placeholder(url) and elsewhere(seen.home, url)


def _permanent(hops: Iterable[Hop]) -> bool:
    return all(hop.status in PERMANENT for hop in hops)


def _redirects_to(a: Observation, b: Observation) -> bool:
    """``a``'s home page or main feed answers permanent redirects ending on ``b``'s."""
    if a.redirects and _permanent(a.redirects) and _names(a.home, b) and not _names(a.url, b):
        return True
    feed_home = a.feed_final_url or a.feed_url
    return bool(
        a.feed_redirects
        and _permanent(a.feed_redirects)
        and b.feed_url
        and address_key(feed_home) == address_key(b.feed_url)
        and address_key(a.feed_url) != address_key(b.feed_url)
    )


@functools.lru_cache(maxsize=1024)  # a blog's entries are compared with each candidate's
def _posts(entries: frozenset[str]) -> frozenset[str]:
    """The entry keys that name one post in the world: an absolute URL off placeholder hosts
    (not a site built for ``localhost``, not a theme's demo posts on ``example.com``), a
    ``tag:`` or ``urn:`` URI, a long hexadecimal id (a UUID, Ghost's ids); never a short id
    ("1", "hello-world") or a relative path, which two blogs can share."""
    return frozenset(k for k in entries if _one_post(k))


def _one_post(key: str) -> bool:
    if key.startswith(("http://", "https://")):
        host = address_host(key)
        return bool(host) and not _placeholder_host(host)
    return key.startswith(("tag:", "urn:")) or _LONG_ID.fullmatch(key) is not None


def _shared_entries(one: frozenset[str], other: frozenset[str]) -> frozenset[str]:
    return _posts(one & other)


def _same_paths(one: frozenset[str], other: frozenset[str]) -> bool:
    """Whether two feeds list the same posts at the same paths on other hosts (a blog that
    moved keeps its paths), counted as :func:`shared_enough` counts entries."""
    return _enough(_paths(one), _paths(other))


def _paths(entries: frozenset[str]) -> frozenset[str]:
    return frozenset(
        path
        for k in _posts(entries)
        if k.startswith(("http://", "https://")) and (path := urlsplit(k).path.rstrip("/"))
    )


def local_posts(entries: Iterable[FeedEntry]) -> frozenset[str]:
    """A feed's posts linked on a placeholder host (a site built for ``localhost`` or left on
    ``example.com``: the link names no site, its path and title still name the post), each
    the day published (else updated; empty when undated), the path without ``index.html`` or
    a trailing slash and the title collapsed and case-folded, joined by tabs. Untitled posts
    are left out."""
    out = set()
    for entry in entries:
        link, title = entry.link or "", collapse(entry.title or "").casefold()
        if not title or not link.startswith(("http://", "https://")) or not is_placeholder(link):
            continue
        path = re.sub(r"/index\.html?$", "/", urlsplit(link).path).rstrip("/")
        day = (entry.published or entry.updated or "")[:10]
        out.add(f"{day}\t{path}\t{title}")
    return frozenset(out)


def _local_copy(a: Observation, b: Observation) -> bool:
    """Whether two feeds of placeholder-built posts are one blog's at two times (a stale copy):
    feeds of one title, the same posts by path and title counted as :func:`shared_enough`
    counts entries, the lists not the same, and the posts only one lists (the older copy's)
    older than every post both list, as a feed's window leaves them behind. Two sites that kept
    a theme's sample posts list the very same ones (one build served twice is
    :data:`SAME_PAGE`'s), or each its own newer posts beside them."""
    title = collapse(a.feed_title).casefold()
    if (
        not (a.local_posts and b.local_posts and title)
        or collapse(b.feed_title).casefold() != title
    ):
        return False
    one, other = _by_post(a.local_posts), _by_post(b.local_posts)
    if one.keys() == other.keys() or not _enough(frozenset(one), frozenset(other)):
        return False
    shared = one.keys() & other.keys()
    days = [d for k in shared for d in (one[k], other[k])]
    for old, new in ((one, other), (other, one)):
        left = [old[k] for k in old.keys() - shared]
        added = [new[k] for k in new.keys() - shared]
        dated = all(days + left + added)
        if dated and all(d <= min(days) for d in left) and all(d >= min(days) for d in added):
            return True
    return False


def _by_post(posts: frozenset[str]) -> dict[str, str]:
    """Path and title (tab-joined) → day, of :func:`local_posts`' keys."""
    return {post: day for day, _, post in (k.partition("\t") for k in posts)}


def _entry_hosts(entries: frozenset[str]) -> set[str]:
    return {h for k in entries if k.startswith(("http://", "https://")) and (h := address_host(k))}


def _platform_rank(url: str) -> int:
    """0 for a blog's own domain, 1 for a repository's Pages site (:data:`REPOSITORY_PAGES`), 2
    for another hosting platform's address."""
    if not _on_platform(url):
        return 0
    host = address_host(url)
    return 1 if any(host.endswith("." + suffix) for suffix in REPOSITORY_PAGES) else 2


def _on_platform(url: str) -> bool:
    """A blog's address on a hosting platform (its own domain is preferred over it)."""
    try:
        return on_platform(address_host(url))
    except ValueError:
        return False


# --- finding candidates, and observations as JSON -------------------------------------------

INDEX_POSTS = 32
"""Entry keys of a feed :func:`index_keys` gives (those of the smallest digests: two feeds that
share half their entries share some of them)."""


def index_keys(seen: Observation, posts: int = INDEX_POSTS) -> frozenset[str]:
    """Keys that two observations :func:`same_blog` could call one blog share at least one of,
    so a store finds the candidates of an address without comparing all: ``home <address>``
    for the address, where it ended, and every address it claims (:func:`claims`), ``feed
    <url>`` for its main feed, ``post <key>`` for up to ``posts`` entry keys (``local <path
    title>`` for up to ``posts`` placeholder-built posts), ``page <digest> <entries>`` for its
    text digest with its feed's entries (:data:`SAME_PAGE` needs both: one feedless template
    served by many hosts shares the text alone, and would make each of those addresses a
    candidate of every other, up to the store's bound, at every write)."""
    keys = {f"home {address_key(url)}" for url in (seen.url, seen.home) if url}
    keys |= {f"home {address_key(claim.target)}" for claim in claims(seen)}
    keys |= {f"feed {address_key(url)}" for url in (seen.feed_url, seen.feed_final_url) if url}
    chosen = sorted(_posts(seen.entries), key=lambda k: hashlib.sha1(k.encode()).digest())
    keys |= {f"post {k}" for k in chosen[:posts]}
    mine = sorted(_by_post(seen.local_posts), key=lambda k: hashlib.sha1(k.encode()).digest())
    keys |= {f"local {k}" for k in mine[:posts]}
    if seen.page.text_digest and seen.entries:
        listed = hashlib.sha1("\n".join(sorted(seen.entries)).encode()).hexdigest()
        keys.add(f"page {seen.page.text_digest} {listed}")
    return frozenset(k for k in keys if k.split(" ", 1)[1])


def observation_json(seen: Observation) -> str:
    """``seen`` as a JSON object (its entries and local posts sorted), read back by
    :func:`observation_from`."""
    data = asdict(seen)
    data["entries"] = sorted(seen.entries)
    data["local_posts"] = sorted(seen.local_posts)
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def observation_from(text: str) -> Observation:
    """The :class:`Observation` of :func:`observation_json`; ``ValueError`` when ``text`` is
    not one."""
    try:
        data = json.loads(text)
        page = data.pop("page")
        page["rel_me"], page["mirrors"] = tuple(page["rel_me"]), tuple(page["mirrors"])
        return Observation(
            **{
                **data,
                "redirects": tuple(Hop(**h) for h in data["redirects"]),
                "feed_redirects": tuple(Hop(**h) for h in data["feed_redirects"]),
                "entries": frozenset(data["entries"]),
                "local_posts": frozenset(data.get("local_posts", ())),
                "page": PageSignals(**page),
            }
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"not an observation: {exc}") from exc
