"""Friend URLs and the filters that keep non-friends out.

URL clean-up (:func:`clean_url`): Wayback Machine wrappers are unwrapped
(``web.archive.org/web/<timestamp>[flags]/<url>``), the scheme and host are lower-cased, the
fragment, a trailing ``index.html``/``index.htm`` and click-tracking query keys are dropped.

The lists live in ``blogfeeds/data/friend_filters.toml`` (circles, badges, platforms, podcasts,
shorteners, referral keys, placeholders, commercial words, page zones); :func:`filters` loads
them once. :meth:`Filters.verdict` says why a link is not a friend, or ``None``.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urljoin, urlsplit, urlunsplit

from blogfeeds.extract.identity import (
    InvalidURL,
    blog_id,
    hosted_user,
    normalize_host,
    under_public_suffix,
)

_WAYBACK = re.compile(r"^https?://(?:web\.)?archive\.org/web/\d{1,14}[a-z_]*/+(.+)$", re.I)
_INDEX = re.compile(r"/index\.html?$", re.I)
_PATH_CHARS = r"[A-Za-z0-9\-._~!$&'()*+,;=:@%/]"
_PLAIN_PATH = re.compile(rf"^/{_PATH_CHARS}*$")
_PLAIN_URL = re.compile(rf"^(https?)://([A-Za-z0-9.\-]+)(:\d{{1,5}})?(/{_PATH_CHARS}*)?$", re.I)
_BASE = re.compile(r"^(https?)://([A-Za-z0-9.\-]+)(:\d{1,5})?(?:[/?#]|$)", re.I)
DATED_POST = re.compile(r"/(?:19|20)\d\d/[01]?\d/")
"""A dated path (``/2011/07/``) is a post: a latest-post link, not the friend's blog."""
_LANGUAGE = re.compile(r"^[a-z]{2}(?:[-_][a-z]{2,4})?$")
_SHORT_NAME = re.compile(r"^[a-z][a-z0-9]{1,19}(?:[-_][a-z0-9]{1,19})?$")
BLOG_WORDS = frozenset(
    "blog blogs weblog posts notes journal diary writing writings articles essays log".split()
)
"""Path segments that name a blog's index (``/blog/``, ``/zh/posts/``), not one of its pages."""
SITE_PAGES = frozenset(
    "about archive archives categories category tags tag page search p post article links link "
    "friends friend feed rss atom images img assets static css js public resume cv contact "
    "wiki docs download downloads".split()
)
"""First path segments that name a page of a site, never a blog or a person under a path."""
HOME_DEPTH = 3
"""Most path segments past a blog's identity that a blog's home under a path has."""
FEED_URL = re.compile(
    r"^https?://(?:feeds\d*\.|feedproxy\.|feedpress\.me/)|"
    r"/(?:feeds?|rss2?|atom)(?:/posts/default)?/?$|\.(?:rss|atom|xml)$|/feeds/posts/default",
    re.IGNORECASE,
)
"""A feed URL (FeedBurner-style hosts and FeedPress, ``/feed/``, ``atom.xml``, Blogger's posts
feed)."""
_ASSET = re.compile(
    r"\.(?:mp3|flac|ogg|wav|m4a|aac|mp4|webm|mkv|avi|mov|jpe?g|png|gif|webp|avif|svg|ico|pdf|"
    r"zip|rar|7z|tar|gz|exe|dmg|apk|css|js)$",
    re.IGNORECASE,
)
"""A file (audio, video, image, document, archive, stylesheet, script): a playlist's track or a
download, never a friend's blog."""
_FEED_TEXT = re.compile(r"^\W*(?:rss|atom)?\s*(?:feed|rss|atom)\W*$", re.IGNORECASE)
_FEED_TEXT_CHARS = 80
"""Characters (spaces included) past which a link's text is no feed's label."""
_FEED_ICON = re.compile(r"(?<![a-z])(?:rss|feed|atom)(?![a-z])", re.IGNORECASE)


def blog_home_path(rest: list[str], trailing_slash: bool) -> bool:
    """Whether ``rest``, the path segments past a blog's identity, is the home of a blog under a
    path (``/zh/posts/``, ``/python/weblog/``, ``/en/``, ``/notes/blog/``), not an article
    (a date, a slug of many words, a file, ``/posts/<slug>``, ``/p/<id>``): at most
    :data:`HOME_DEPTH` segments, each a language tag or a blog word (:data:`BLOG_WORDS`), the
    first also a short name (one or two words, not a site page); a trailing slash, or a blog
    word last."""
    if not rest or len(rest) > HOME_DEPTH:
        return False
    if not trailing_slash and rest[-1].lower() not in BLOG_WORDS:
        return False
    for i, segment in enumerate(rest):
        low = segment.lower()
        if low in BLOG_WORDS:
            continue
        if low in SITE_PAGES:
            return False
        if not (_LANGUAGE.match(low) or (i == 0 and _SHORT_NAME.match(low))):
            return False
    return True


def is_feed_link(a: Any, url: str) -> bool:
    """Whether the link ``a`` (an lxml element) to ``url`` is a feed: by its URL, by its text
    (``(Feed)``, ``RSS``), or, when it has no text, by its icon (``<img alt="RSS">``,
    ``rss.svg``, ``fa-rss``, a ``title``): a blogroll often links a friend's feed on a feed
    service or a custom domain whose URL says nothing. Called for every link of a page: each
    pattern runs only after a substring test says it can match."""
    if _names_feed(url) and FEED_URL.search(url):  # every FEED_URL match names one
        return True
    if len(a) == 0:  # most links: their text is all there is
        raw = a.text or ""
        if len(raw) > _FEED_TEXT_CHARS or (raw and not _names_feed(raw) and not raw.isspace()):
            return False
    else:
        raw = ""
        for piece in a.itertext():  # read no further than a feed's label can be
            raw += piece
            if len(raw) > _FEED_TEXT_CHARS:
                return False
    if raw.strip():
        return _names_feed(raw) and bool(_FEED_TEXT.match(" ".join(raw.split())))
    hints = [a.get("title"), a.get("aria-label"), a.get("class")]
    for icon in a.iterdescendants("img", "i", "svg", "span"):
        hints += [icon.get("alt"), icon.get("src"), icon.get("class"), icon.get("title")]
    return any(_names_feed(h) and _FEED_ICON.search(h) for h in hints if h)


def _names_feed(text: str) -> bool:
    low = text.lower()
    return "feed" in low or "rss" in low or "atom" in low or ".xml" in low


_SCHEME_TYPO = re.compile(r"^(h?h?t?tps?|htps?)(:?)(/*)(?=[a-z0-9])", re.IGNORECASE)
_DOMAIN_PATH = re.compile(r"^/((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,24})(/.*)?$")
_FILE_SUFFIXES = frozenset(
    "html htm php asp aspx jsp xml json rss atom md txt pdf js css png jpg jpeg gif svg webp "
    "ico zip gz sh py rb go rs".split()
)


def repair_href(href: str) -> str | None:
    """The URL an href broken in an obvious way means, or None when it is not broken so.

    A scheme typo (``hhttps://x.org/``, ``htps://``, ``https//x.org``, ``http:/x.org``) or a
    domain written as a root path (``/x.org``, ``/www.x.org/blog/``: an absolute URL that lost
    its scheme): the friend's domain is there, so the link is read as that site. A root path
    naming a file (``/feed.xml``, ``/notes.md``) or without a public suffix stays a path.
    """
    href = href.strip()
    if href.startswith(("https://", "http://")) and not href.startswith(("https:///", "http:///")):
        return None  # well formed (most links): what the patterns below find for it too
    m = _SCHEME_TYPO.match(href)
    if m:
        scheme, colon, slashes = m.group(1).lower(), m.group(2), m.group(3)
        if scheme in ("http", "https") and colon and len(slashes) == 2:
            return None  # well formed
        if not (colon or slashes):
            return None  # "https-guide.html", a relative path
        fixed = "https" if scheme.endswith("s") else "http"
        return f"{fixed}://{href[m.end() :]}"
    m = _DOMAIN_PATH.match(href)
    if m is None:
        return None
    host = m.group(1)
    if host.rsplit(".", 1)[-1] in _FILE_SUFFIXES or not under_public_suffix(host):
        return None
    return f"https://{host}{m.group(2) or '/'}"


def unwrap_wayback(url: str) -> str:
    """The original URL of a Wayback Machine capture URL; other URLs unchanged."""
    m = _WAYBACK.match(url.strip())
    if not m:
        return url
    inner = m.group(1)
    inner = re.sub(r"^(https?):/+", r"\1://", inner, flags=re.I)
    return inner if re.match(r"^https?://", inner, re.I) else "http://" + inner


@functools.lru_cache(maxsize=4096)
def normal_host(url: str) -> str:
    """Normalised host of ``url`` (``""`` when none)."""
    try:
        return normalize_host(urlsplit(url).hostname or "")
    except ValueError:
        return ""


@functools.lru_cache(maxsize=4096)
def is_mirror_host(host: str) -> bool:
    """Whether ``host`` is an address only the owner's own mirror or test copy would use: a
    private, loopback, link-local or reserved IP literal. A public address is a site without
    a domain name (friends' servers often have none) and stays a candidate."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return not address.is_global


@dataclass(frozen=True)
class Cleaned:
    """A cleaned absolute URL (:meth:`Filters.clean_href`) split once, for its callers and for
    every host list."""

    url: str
    web: bool
    """Whether the scheme is http or https."""
    host: str
    """Normalised host (:func:`~blogfeeds.extract.identity.normalize_host`), ``""`` if none."""
    path: str
    query: str

    @staticmethod
    def of(url: str) -> Cleaned:
        """``url`` (already clean) split; raises ``ValueError`` where ``urlsplit`` and
        :func:`~blogfeeds.extract.identity.normalize_host` do."""
        parts = urlsplit(url)
        host = normalize_host(parts.hostname or "")
        return Cleaned(url, parts.scheme in ("http", "https"), host, parts.path, parts.query)

    @functools.cached_property
    def bare(self) -> str:
        """The host without ``www.``."""
        return self.host[4:] if self.host.startswith("www.") else self.host

    @functools.cached_property
    def suffixes(self) -> tuple[str, ...]:
        """:attr:`bare` and its parent domains (``a.b.c``, ``b.c``), for the host lists."""
        labels = self.bare.split(".")
        return tuple(".".join(labels[i:]) for i in range(len(labels) - 1))

    @functools.cached_property
    def list_path(self) -> str:
        """The path as the host lists compare it: lower-cased, no trailing slash."""
        return self.path.rstrip("/").lower()


class HostList:
    """Hosts and ``host/path`` prefixes.

    ``"github.com"`` matches the host and its subdomains, ``"=baidu.com"`` only the host
    itself (``www.`` ignored), ``"github.com/travellings-link"`` that path prefix.
    """

    def __init__(self, entries: Iterable[str]) -> None:
        self.hosts: set[str] = set()
        self.exact: set[str] = set()
        self.prefixes: list[tuple[str, str]] = []
        for raw in entries:
            entry = raw.strip().lower()
            exact = entry.startswith("=")
            host, _, path = entry.lstrip("=").partition("/")
            host = normalize_host(host)
            host = host[4:] if host.startswith("www.") else host
            if path:
                self.prefixes.append((host, "/" + path.rstrip("/")))
            elif exact:
                self.exact.add(host)
            else:
                self.hosts.add(host)

    def __contains__(self, url: object) -> bool:
        if isinstance(url, Cleaned):
            return self.entry_of(url) is not None
        return isinstance(url, str) and self.entry(url) is not None

    def entry(self, url: str) -> str | None:
        """The entry ``url`` (absolute) matches: a host, ``host/path``, or None."""
        return self.entry_of(Cleaned.of(url))

    def entry_of(self, where: Cleaned) -> str | None:
        """:meth:`entry` of a URL already split (one split serves every list)."""
        bare, path = where.bare, where.list_path
        if bare in self.exact:
            return bare
        for suffix in where.suffixes:
            if suffix in self.hosts:
                return suffix
        for phost, prefix in self.prefixes:
            if (bare == phost or bare.endswith("." + phost)) and (
                path == prefix or path.startswith(prefix + "/")
            ):
                return phost + prefix
        return None


def zone_match(tokens: Iterable[str], words: Iterable[str]) -> bool:
    """Whether a class/id token holds one of ``words``.

    A one-part word matches any ``-``/``_`` part of a token (``links-of-author`` holds
    ``author``); a hyphenated word matches a token's start (``back-menu-list`` holds
    ``back-menu``, ``friends_card-info`` does not hold ``card-info``); a negated part
    (:data:`_NEGATED`) is none.
    """
    pattern = _zone_pattern(tuple(words))
    return any(
        pattern.search(_NEGATED.sub("", token.lower().replace("_", "-"))) for token in tokens
    )


_NEGATED = re.compile(r"(?:^|-)(?:no|non|sans|without|hide)-[^-]+")
"""A part a layout modifier negates (``content-sans-footer``, ``no-sidebar``, ``hide-aside``):
the element is the page without that zone, not the zone."""


@functools.lru_cache(maxsize=64)
def _zone_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """One regex for :func:`zone_match` over ``words`` (tokens lower-cased, ``_`` as ``-``)."""
    parts = [re.escape(w) for w in words if "-" not in w]
    starts = [re.escape(w) for w in words if "-" in w]
    alternatives = []
    if parts:
        alternatives.append(rf"(?:^|-)(?:{'|'.join(parts)})(?:-|$)")
    if starts:
        alternatives.append(rf"^(?:{'|'.join(starts)})(?:-|$)")
    return re.compile("|".join(alternatives) or r"(?!)")


@dataclass(frozen=True)
class Filters:
    """The loaded filter table (see the module docstring); names and words lower-cased."""

    circles: HostList
    circle_names: tuple[str, ...]
    badges: HostList
    platforms: HostList
    account_hosts: HostList
    """Platforms whose user paths are accounts, never a blog (a code forge's ``~user``)."""
    podcasts: HostList
    shorteners: HostList
    referral_keys: frozenset[str]
    referral_rels: frozenset[str]
    tracking_keys: tuple[str, ...]
    placeholder_hosts: HostList
    placeholder_names: tuple[str, ...]
    repeats: int
    commercial_words: tuple[str, ...]
    chrome_words: tuple[str, ...]
    chrome_tags: frozenset[str]
    owner_words: tuple[str, ...]
    about_headings: tuple[str, ...]

    def is_tracking(self, key: str) -> bool:
        """Whether a query key only tracks the click (``utm_source``, ``zx``)."""
        k = key.lower()
        return any(k.startswith(t[:-1]) if t.endswith("*") else k == t for t in self.tracking_keys)

    def clean_href(self, href: str, base: str) -> Cleaned:
        """:meth:`clean_url` of ``href`` resolved against ``base`` (``urljoin``), with the parts
        its callers read.

        The common links, an absolute path (``/about/``) or an absolute http(s) URL without
        query, fragment, user, dot segments or Wayback host, are cleaned by string operations
        with the same result (checked on every link of the corpus); others go through
        ``urljoin`` and :meth:`clean_url`. Raises ``ValueError`` where those do.
        """
        href = href.strip()
        if href.startswith("/"):
            m = _BASE.match(base)
            if m and _PLAIN_PATH.match(href) and "/." not in href and "//" not in href:
                _check_port(m.group(3))
                path = _INDEX.sub("/", href)
                origin = f"{m.group(1).lower()}://{m.group(2).lower()}{m.group(3) or ''}"
                return Cleaned(origin + path, True, normalize_host(m.group(2)), path, "")
        else:
            m = _PLAIN_URL.match(href)
            path = (m.group(4) or "") if m else ""
            if m and "/." not in path and "//" not in path:
                host = m.group(2).lower()
                if "archive.org" not in host:
                    _check_port(m.group(3))
                    path = _INDEX.sub("/", path)
                    url = f"{m.group(1).lower()}://{host}{m.group(3) or ''}{path}"
                    return Cleaned(url, True, normalize_host(host), path, "")
        return Cleaned.of(self.clean_url(urljoin(base, href)))

    def clean_url(self, url: str) -> str:
        """Unwrap, lower-case scheme and host, drop credentials (``user:password@``, never
        stored nor followed), fragment, ``index.html`` and tracking keys."""
        url = unwrap_wayback(url.strip())
        parts = urlsplit(url)
        try:
            parts.port  # noqa: B018 - raises on a port out of range
        except ValueError as exc:  # no URL to fetch: an invalid link, as a bad host is
            raise InvalidURL(f"{url}: {exc}") from None
        netloc = parts.netloc.rpartition("@")[2].lower()
        path = _INDEX.sub("/", parts.path)
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            kept = [(k, v) for k, v in pairs if not self.is_tracking(k)]
            if len(kept) != len(pairs):
                query = urlencode(kept)
        return urlunsplit((parts.scheme.lower(), netloc, path, query, ""))

    def verdict(self, url: str | Cleaned, name: str = "", rels: Iterable[str] = ()) -> str | None:
        """Why ``url`` (cleaned, absolute) named ``name`` is not a friend, or None.

        Reasons: ``circle``, ``badge``, ``placeholder``, ``platform``, ``podcast``, ``sponsored``,
        ``referral``, ``shortener``, ``commercial``. Owner checks are the caller's (they need
        the page).
        """
        return self.url_verdict(url, tuple(rels)) or self.name_verdict(name)

    def name_verdict(self, name: str) -> str | None:
        """The name-only part of :meth:`verdict` (circle names, placeholders, link swaps)."""
        lname = " ".join(name.split()).lower()
        if not lname:
            return None
        if lname in self.circle_names:
            return "circle"
        if any(p in lname for p in self.placeholder_names):
            return "placeholder"
        if any(w in lname for w in self.commercial_words):
            return "commercial"
        return None

    def url_verdict(self, url: str | Cleaned, rels: tuple[str, ...] = ()) -> str | None:
        """The URL-and-rel part of :meth:`verdict` (``url`` may come split already)."""
        try:
            where = url if isinstance(url, Cleaned) else Cleaned.of(url)
        except ValueError:
            return None
        if self.circles.entry_of(where) is not None:
            return "circle"
        if self.badges.entry_of(where) is not None:
            return "badge"
        if self.placeholder_hosts.entry_of(where) is not None:
            return "placeholder"
        platform = self.platforms.entry_of(where)
        if platform is not None and (
            not _hosted_blog(where.url, platform) or self.account_hosts.entry_of(where)
        ):
            return "platform"
        if self.podcasts.entry_of(where) is not None:
            return "podcast"
        if rels and self.referral_rels & {r.lower() for r in rels}:
            return "sponsored"
        if where.query and any(
            k.lower() in self.referral_keys for k, _ in parse_qsl(where.query, True)
        ):
            return "referral"
        if self.shorteners.entry_of(where) is not None or _looks_short(where.path):
            return "shortener"
        if _ASSET.search(where.path):
            return "asset"
        return None


def _check_port(port: str | None) -> None:
    """:class:`InvalidURL` for a ``:port`` past 65535 (``urlsplit(...).port`` raises too)."""
    if port and int(port[1:]) > 65535:
        raise InvalidURL(f"port out of range 0-65535: {port[1:]}")


def _hosted_blog(url: str, entry: str) -> bool:
    """Whether ``url`` is a user's own blog on the platform ``entry`` names (its identity is a
    subdomain of the platform, ``alice.wordpress.com``, or a blog platform's user path,
    ``cnblogs.com/bob``; an account path alone, ``weibo.com/u/1``, is the platform's profile)."""
    try:
        identity = blog_id(url)
    except ValueError:
        return False
    if identity == entry:
        return False  # the entry names this very site (a theme's project page)
    if "/" in identity:
        return hosted_user(url)
    return identity.endswith("." + entry.split("/", 1)[0])


_TOKEN = re.compile(r"^/([A-Za-z0-9]{3,10})/?$")


def _looks_short(path: str) -> bool:
    """A short-link token path (``/xYz9``, ``/A6xYz``): one random-looking segment.

    Random means mixed case with a digit (never a word like ``/blog``, ``/Blog`` or
    ``/OrbitLog``), so only machine-made tokens match.
    """
    m = _TOKEN.match(path)
    token = m.group(1) if m else ""
    return bool(re.search(r"[a-z0-9][A-Z]", token) and re.search(r"\d", token))


_CAPSULE = re.compile(
    r"(?:^|[/?=&])(gemini|gopher)(?::/+|/+)((?:[a-z0-9-]+\.)+[a-z]{2,}(?::\d{1,5})?)(/[^?#&]*)?",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=4096)
def proxied_capsule(url: str) -> str | None:
    """The Gemini or Gopher capsule an HTTP proxy URL shows (``https://portal.mozz.us/gemini/
    x.org/`` → ``gemini://x.org/``; ``…/gw?a=gopher%3A%2F%2Fsdf.org%2F1%2Fusers%2Fal``), or None.
    The friend is the capsule, read over the web through the proxy: its kind is the protocol,
    and two capsules shown by one proxy are two friends."""
    low = url.lower()
    if "gemini" not in low and "gopher" not in low:  # nearly every URL: no parsing
        return None
    parts = urlsplit(url)
    rest = unquote(parts.path + ("?" + parts.query if parts.query else ""))
    m = _CAPSULE.search(rest)
    if m is None:
        return None
    return f"{m.group(1).lower()}://{m.group(2).lower()}{m.group(3) or '/'}"


def friend_key(url: str) -> str:
    """One key per friend: the host without ``www.`` (so scheme, ``www.``, slash, case and
    sub-page variants merge, but ``blog.x.com`` and ``x.com`` stay apart), the blog identity
    for path-hosted blogs (``cnblogs.com/alice``), the whole URL on feed proxies, the capsule
    behind a Gemini or Gopher proxy (:func:`proxied_capsule`)."""
    capsule = proxied_capsule(url)
    if capsule is not None:
        return capsule.rstrip("/")
    host = normal_host(url)
    if host.startswith(("feeds.", "feeds2.", "feedproxy.")):
        return url.rstrip("/").lower()
    try:
        identity = blog_id(url)
    except ValueError:
        return url
    if "/" in identity:
        return identity
    return host[4:] if host.startswith("www.") else host


@functools.cache
def filters() -> Filters:
    """The bundled filter table (``blogfeeds/data/friend_filters.toml``), loaded once."""
    raw = tomllib.loads(
        resources.files("blogfeeds").joinpath("data/friend_filters.toml").read_text("utf-8")
    )
    return Filters(
        circles=HostList(raw["circles"]["hosts"]),
        circle_names=tuple(n.lower() for n in raw["circles"].get("names", [])),
        badges=HostList(raw["badges"]["hosts"]),
        platforms=HostList(raw["platforms"]["hosts"]),
        account_hosts=HostList(raw["platforms"].get("accounts", [])),
        podcasts=HostList(raw.get("podcasts", {}).get("hosts", [])),
        shorteners=HostList(raw["shorteners"]["hosts"]),
        referral_keys=frozenset(k.lower() for k in raw["referral"]["query_keys"]),
        referral_rels=frozenset(r.lower() for r in raw["referral"]["rels"]),
        tracking_keys=tuple(k.lower() for k in raw["referral"]["tracking_keys"]),
        placeholder_hosts=HostList(raw["placeholders"]["hosts"]),
        placeholder_names=tuple(n.lower() for n in raw["placeholders"]["names"]),
        repeats=int(raw["placeholders"].get("repeats", 3)),
        commercial_words=tuple(w.lower() for w in raw["commercial"]["words"]),
        chrome_words=tuple(w.lower() for w in raw["zones"]["chrome"]),
        chrome_tags=frozenset(raw["zones"]["chrome_tags"]),
        owner_words=tuple(w.lower() for w in raw["zones"]["owner"]),
        about_headings=tuple(raw["owner"]["about_headings"]),
    )
