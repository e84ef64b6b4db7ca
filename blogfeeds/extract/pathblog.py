"""A blog under a path of a host the platform table does not know: ``host/alice/`` is a blog of
its own when the page read there shows it (docs/identity.md, "Blogs under a path").

A host that serves many people's blogs under plain paths (a department's ``/alice/``, a shared
static host's ``/bob/``) is told from a personal site whose ``/notes/`` is a section by what the
crawl reads at the address, never by a host's name: the page at the one-segment prefix has its
main feed under that prefix, and any canonical or ``og:url`` it names lies under the prefix too
(a section naming the site's root as its address is the site's). Such an address's identity is
``host/prefix``; the host's other addresses keep the host's. When the host's root turns out to
be the same blog (its main feed is the prefix's), the store joins the two as aliases of one
node (:mod:`blogfeeds.extract.aliases`, same feed).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from blogfeeds.extract.aliases import Observation
from blogfeeds.extract.identity import blog_id, split_url

# Prefixes that are a site's own sections, never somebody's blog: the pages of a user site,
# language folders and the usual names of a site's blog or notes section.
_SECTIONS = frozenset(
    "about archive archives categories category tags tag page pages posts post p blog blogs "
    "links link friends friend search feed feeds rss atom en zh cn ja de fr es pt ru ko it "
    "images img assets static css js public resume cv notes news articles writing journal "
    "docs wiki home index".split()
)
_PREFIX_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_INDEX = re.compile(r"index\.html?\Z", re.IGNORECASE)
_WWW = re.compile(r"^www\d*\.")


def prefix_home(url: str) -> tuple[str, str] | None:
    """``(host identity, path identity)`` when ``url`` is the home of a one-segment prefix
    (``https://host/alice/``, ``.../alice/index.html``) on a host whose identity is the host
    alone, the prefix a name rather than a section of the site (:data:`_SECTIONS`); else None."""
    try:
        host, segments = split_url(url)
        own = blog_id(url)
    except ValueError:
        return None
    if "/" in own or not segments or len(segments) > 2:
        return None
    if len(segments) == 2 and not _INDEX.match(segments[1]):
        return None
    path = urlsplit(url.strip()).path
    if len(segments) == 1 and not path.endswith("/"):
        return None
    prefix = segments[0]
    if not _PREFIX_NAME.match(prefix) or prefix.lower() in _SECTIONS or "." in prefix:
        return None
    return own, f"{_WWW.sub('', host)}/{prefix.lower()}"


def _under(url: str, host: str, prefix: str) -> bool:
    try:
        other, segments = split_url(url)
    except ValueError:
        return False
    return _WWW.sub("", other) == host and len(segments) >= 1 and segments[0].lower() == prefix


def path_blog(seen: Observation) -> str | None:
    """The identity ``host/prefix`` of the blog ``seen`` (its home, its signals, its main feed)
    when it is a blog under a path (module doc): its home is a prefix home (:func:`prefix_home`),
    its main feed lies under the prefix, and its canonical and ``og:url``, when given, too.
    None otherwise (no feed, a feed at the host's root, a canonical naming the root)."""
    found = prefix_home(seen.home)
    if found is None:
        return None
    ident = found[1]
    host, _, prefix = ident.partition("/")
    feed = seen.feed_final_url or seen.feed_url
    if not feed or not _under(feed, host, prefix):
        return None
    for named in (seen.page.canonical, seen.page.og_url):
        if named and not _under(named, host, prefix):
            return None
    return ident
