"""Blog identity: which blog a URL belongs to. The rule, in order (docs/identity.md):

1. Only ``http``/``https`` URLs have an identity (anything else raises ``ValueError``); the
   scheme, the port, user info, query and fragment are ignored. A host no host may hold
   (:func:`valid_host`) raises :class:`InvalidURL`, a ``ValueError``: such a URL is no blog,
   never fetched, never stored.
2. The host is lower-cased, IDNA-decoded to Unicode, and a leading ``www.`` is dropped.
3. Path-hosted platforms keep the user's path prefix (``blogfeeds/data/platforms.toml``); on
   any host, a ``~user`` directory and an account path (``/@name``, ``/users/name``:
   :func:`account_path`) are one person's.
4. Otherwise the registered domain under the Public Suffix List, private section included
   (tldextract with its bundled snapshot, never fetched at run time), plus the
   subdomain-hosted platforms the PSL lacks, from the same table.
5. Hosts with no public suffix (``*.example``, ``localhost``, intranet names, IP literals) keep
   their full host (``www.`` dropped), so test webs and intranets still have distinct blogs.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from importlib import resources
from urllib.parse import urlsplit

import tldextract

_WWW = re.compile(r"^www\d*\.")
# First path segments of a GitHub/GitLab user site that are pages, not project sites.
_USER_SITE_PAGES = frozenset(
    "about archive archives categories category tags tag page posts post p blog links link "
    "friends friend search feed rss atom en zh cn images img assets static css js public "
    "resume cv".split()
)


# First segments that name an account by the next one on any host: Discourse (/u/), forums
# and profiles (/user/, /users/, /members/). Not /author/ (a publication's staff archive, and
# every WordPress blog's own /author/admin/) nor /people/ (a faculty's group pages).
_ACCOUNT_DIRS = frozenset({"u", "user", "users", "members"})
# Second segments of those that are the site's own pages, not an account.
_ACCOUNT_PAGES = frozenset(
    "login logout signin sign_in sign-in signup sign_up sign-up register new edit settings "
    "show search me list index.html index.php".split()
)


# An ASCII host name holds letters, digits, hyphens, underscores (DNS has them) and dots.
_ASCII_HOST = re.compile(r"[a-z0-9_.-]+\Z")
# Unicode categories no host name holds: controls, format (bidi overrides, zero-width joiners),
# surrogates, private use, unassigned, and separators (spaces).
_NOT_IN_HOST = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})


class InvalidURL(ValueError):
    """An http(s) URL whose host no host may hold (:func:`valid_host`)."""


@dataclass(frozen=True)
class _PathRule:
    hosts: frozenset[str] = frozenset()
    host_suffix: str = ""
    segments: int = 1
    prefix: str = ""
    user_prefix: str = ""
    project_pages: bool = False
    skip: frozenset[str] = frozenset()

    def user_path(self, segments: list[str]) -> str | None:
        """The identity path for ``segments`` (non-empty path parts), or None for the host."""
        if self.prefix:
            if len(segments) < 2 or segments[0] != self.prefix:
                return None
            return "/".join(segments[:2])
        if not segments:
            return None
        first = segments[0]
        if first.lower() in self.skip:
            return None
        if self.user_prefix and not first.startswith(self.user_prefix):
            return None
        if self.project_pages and not _looks_like_repo(first, segments):
            return None
        return first


@dataclass(frozen=True)
class _Platforms:
    subdomain_domains: frozenset[str]
    subdomain_aliases: tuple[tuple[re.Pattern[str], str], ...]
    platform_hosts: frozenset[str]
    path_rules: tuple[_PathRule, ...] = field(default=())
    rule_of_host: dict[str, int] = field(default_factory=dict)
    """Host -> index of the first path rule listing it."""
    rule_suffixes: tuple[tuple[int, str], ...] = ()
    """(index, host suffix) of the path rules matching a suffix, in table order."""


def _looks_like_repo(first: str, segments: list[str]) -> bool:
    """A GitHub project site is ``/repo/`` with a name-like first segment."""
    if "." in first or first.isdigit() or first.lower() in _USER_SITE_PAGES:
        return False
    return not first.startswith(("@", "#", "?", "%"))


@functools.cache
def _platforms() -> _Platforms:
    raw = tomllib.loads(
        resources.files("blogfeeds").joinpath("data/platforms.toml").read_text("utf-8")
    )
    sub = raw["subdomain"]
    aliases = tuple(
        (re.compile("^" + re.escape(pat).replace(r"\*", r"[a-z.]+") + "$"), target)
        for pat, target in sub.get("aliases", {}).items()
    )
    rules = tuple(
        _PathRule(
            hosts=frozenset([r["host"], *r.get("aliases", [])]) if "host" in r else frozenset(),
            host_suffix=r.get("host_suffix", ""),
            segments=r.get("segments", 1),
            prefix=r.get("prefix", ""),
            user_prefix=r.get("user_prefix", ""),
            project_pages=r.get("project_pages", False),
            skip=frozenset(s.lower() for s in r.get("skip", [])),
        )
        for r in raw.get("path", [])
    )
    rule_of_host: dict[str, int] = {}
    for i, rule in enumerate(rules):
        for host in rule.hosts if not rule.host_suffix else ():
            rule_of_host.setdefault(host, i)
    return _Platforms(
        subdomain_domains=frozenset(sub["domains"]),
        subdomain_aliases=aliases,
        platform_hosts=frozenset(sub.get("platform_hosts", [])),
        path_rules=rules,
        rule_of_host=rule_of_host,
        rule_suffixes=tuple((i, r.host_suffix) for i, r in enumerate(rules) if r.host_suffix),
    )


@functools.cache
def _extractor() -> tldextract.TLDExtract:
    # Bundled PSL snapshot only: no network fetch, no disk cache.
    return tldextract.TLDExtract(
        suffix_list_urls=(), include_psl_private_domains=True, cache_dir=None
    )


@functools.lru_cache(maxsize=4096)
def under_public_suffix(host: str) -> bool:
    """Whether ``host`` is a name under a public suffix (``example.com``, not ``index.html``)."""
    ext = _extractor()(host)
    return bool(ext.suffix and ext.domain)


def is_public_suffix(host: str) -> bool:
    """Whether ``host`` (normalised) is itself a public suffix (``com``, ``github.io``): every
    blog under it would be its subdomain."""
    ext = _extractor()(host)
    return bool(ext.suffix) and not ext.domain


def normalize_host(host: str) -> str:
    """Lower-case, IDNA-decode (``xn--`` labels to Unicode) and strip a trailing dot."""
    host = host.strip().rstrip(".").lower()
    if "xn--" in host:
        try:
            host = host.encode("ascii").decode("idna")
        except UnicodeError:
            pass
    return host


@functools.lru_cache(maxsize=4096)
def valid_host(host: str) -> bool:
    """Whether ``host`` (normalised: :func:`normalize_host`) can be a host the downloader
    connects to: an IP address, or a name of ASCII letters, digits, ``-``, ``_`` and dots and
    of Unicode characters other than controls, format characters (U+202E), surrogates, private
    use, unassigned code points, spaces and U+FFFD, that the IDNA codec encodes (as the
    downloader does: w3lib, NFKC, Python's ``idna``)."""
    if host.isascii():
        if _ASCII_HOST.match(host):
            return True
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return False
        return True
    for ch in host:
        if ch.isascii():
            if not _ASCII_HOST.match(ch):
                return False
        elif ch == "\ufffd" or unicodedata.category(ch) in _NOT_IN_HOST:
            return False
    try:
        unicodedata.normalize("NFKC", host).encode("idna")
    except UnicodeError:
        return False
    return True


def split_url(url: str) -> tuple[str, list[str]]:
    """Return ``(host, path segments)`` of an http(s) URL.

    Raises ``ValueError`` on a non-HTTP URL or one without a host, :class:`InvalidURL` on a
    host no host may hold (:func:`valid_host`).
    """
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {url!r}")
    return _host_and_segments(normalize_host(parts.hostname or ""), parts.path, url)


def _host_and_segments(host: str, path: str, url: str) -> tuple[str, list[str]]:
    """``host`` (normalised) checked and ``path`` split, for :func:`split_url` and
    :func:`host_blog_id`; ``url`` names the URL in the error."""
    if not host:
        raise ValueError(f"URL has no host: {url!r}")
    if not valid_host(host):
        raise InvalidURL(f"invalid host in URL: {url!r}")
    return host, [s for s in path.split("/") if s]


@functools.lru_cache(maxsize=65536)
def registered_domain(host: str) -> str:
    """Registered domain of ``host`` under the PSL (private section included).

    Hosts with no public suffix (``x.example``, ``localhost``, IPs) are returned whole,
    ``www.`` dropped. Platform country aliases (``blogspot.de``) fold to one name.
    """
    host = normalize_host(host)
    plat = _platforms()
    ext = _extractor()(host)
    domain = ext.top_domain_under_public_suffix
    if not domain:
        return _WWW.sub("", host)
    label = _WWW.sub("", ext.subdomain + ".").rstrip(".").rsplit(".", 1)[-1]
    for pattern, target in plat.subdomain_aliases:
        if pattern.match(domain):
            return f"{label}.{target}" if label else target
    if domain in plat.subdomain_domains and host not in plat.platform_hosts and label:
        return f"{label}.{domain}"
    return domain


@functools.lru_cache(maxsize=4096)
def hosting_domain(host: str) -> str:
    """The domain a host's blogs are counted under, to cap how many one owner can add: the
    public suffix itself for a hosting platform of the PSL's private section (every
    ``*.github.io``, ``*.netlify.app`` and ``*.blogspot.com`` blog counts under that platform),
    else :func:`registered_domain` (``cnblogs.com`` for its path-hosted blogs, ``example.com``
    for ``a.example.com`` and ``b.example.com``)."""
    host = normalize_host(host)
    ext = _extractor()(host)
    if ext.is_private and ext.top_domain_under_public_suffix:
        return ext.suffix
    return registered_domain(host)


def on_platform(host: str) -> bool:
    """Whether ``host`` is a blog's address on a hosting platform rather than its own domain:
    under a suffix of the PSL's private section (``*.github.io``, ``*.vercel.app``,
    ``*.pages.dev``) or a subdomain platform of the platform table (``*.gitee.io``,
    ``*.wordpress.com``)."""
    host = normalize_host(host)
    ext = _extractor()(host)
    domain = ext.top_domain_under_public_suffix
    return bool(domain) and (ext.is_private or domain in _platforms().subdomain_domains)


@functools.lru_cache(maxsize=4096)
def blog_id(url: str) -> str:
    """Identity of the blog ``url`` belongs to, e.g. ``alice.github.io`` or ``cnblogs.com/alice``.

    Raises ``ValueError`` on a non-HTTP URL or one without a host (:class:`InvalidURL` on an
    invalid host). Results are cached (every extractor of a page asks for the same links).
    """
    host, segments = split_url(url)
    return _identity(host, segments)


def host_blog_id(host: str, path: str) -> str:
    """:func:`blog_id` of an http(s) URL already split: its host normalised
    (:func:`normalize_host`) and its path. For a caller that split the URL anyway (a page's
    links: one ``urlsplit`` fewer each). Raises where :func:`blog_id` does."""
    return _identity(*_host_and_segments(host, path, host + path))


def _identity(host: str, segments: list[str]) -> str:
    user = _user_path(host, segments)
    if user is not None:
        return f"{_WWW.sub('', host)}/{user.lower()}"
    return registered_domain(host)


def _user_path(host: str, segments: list[str]) -> str | None:
    """The path naming one person's blog or account on a shared host, as written, or None:
    the platform table's rule, else a ``~user`` directory, else an account by its shape."""
    user = _hosted_path(host, segments)
    return user if user is not None else account_path(segments)


def _hosted_path(host: str, segments: list[str]) -> str | None:
    rule = path_rule(host)
    user = rule.user_path(segments) if rule is not None else None
    return user if user is not None else tilde_user(segments)


def hosted_user(url: str) -> bool:
    """Whether ``url`` lies under a user's blog on a path-hosted blog platform of the table
    (``cnblogs.com/alice``) or in a ``~user`` directory: a blog, where an account path alone
    (:func:`account_path`: ``weibo.com/u/1``, ``mastodon.social/@a``) may be a profile."""
    try:
        host, segments = split_url(url)
    except ValueError:
        return False
    return _hosted_path(host, segments) is not None


def account_path(segments: list[str]) -> str | None:
    """The account a path starts with by its shape, on any host, as written, or None: a handle
    (``/@alice``: Medium, Mastodon, YouTube, Substack) or an account directory and its name
    (``/u/alice``, ``/user/1``, ``/users/alice``, ``/members/bob.12``), not its own pages
    (``/user/login``). Two accounts on one host are two people (docs/identity.md)."""
    if not segments:
        return None
    first = segments[0]
    if len(first) > 1 and first[0] == "@" and first[1] != "@":
        return first
    if len(segments) >= 2 and first.lower() in _ACCOUNT_DIRS:
        name = segments[1]
        if name.lower() not in _ACCOUNT_PAGES and not name.startswith(("?", "#")):
            return f"{first}/{name}"
    return None


def tilde_user(segments: list[str]) -> str | None:
    """The ``~user`` directory a path starts in (``tilde.club/~alice/``, a university's
    ``/~cks/space/blog/``), as written with ``~``, or None. A user directory is its user's own
    site on any host (Apache ``UserDir``), so it is a blog of its own."""
    if not segments:
        return None
    first = segments[0]
    if first[:3].lower() == "%7e":
        first = "~" + first[3:]
    return first if len(first) > 1 and first[0] == "~" else None


def blog_prefix(url: str) -> str | None:
    """The URL of a path-hosted blog's own root (``https://www.cnblogs.com/alice/`` for
    ``https://www.cnblogs.com/alice/p/1.html``), as written; None for a blog that owns its
    host, a platform page, or a URL without an identity. Nothing of the blog lies above it."""
    try:
        host, segments = split_url(url)
    except ValueError:
        return None
    user = _user_path(host, segments)
    if user is None:
        return None
    parts = urlsplit(url.strip())
    return f"{parts.scheme.lower()}://{parts.netloc}/{user}/"


@functools.lru_cache(maxsize=4096)
def path_rule(host: str) -> _PathRule | None:
    """The path-hosted platform rule ``host`` (normalised) falls under, first in table order
    (``www.`` ignored), or None."""
    bare = _WWW.sub("", host)
    plat = _platforms()
    found = [plat.rule_of_host[h] for h in (host, bare) if h in plat.rule_of_host]
    for i, suffix in plat.rule_suffixes:
        if host.endswith("." + suffix) or bare.endswith("." + suffix):
            found.append(i)
    return plat.path_rules[min(found)] if found else None


def same_blog(url_a: str, url_b: str) -> bool:
    """Whether two URLs belong to the same blog; False when either has no identity."""
    try:
        return blog_id(url_a) == blog_id(url_b)
    except ValueError:
        return False
