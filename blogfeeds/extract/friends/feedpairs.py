"""Feeds listed beside their friend's site: ``<li><a>Krebs</a> (<a>Feed</a>)</li>``.

A blogroll that gives each friend's feed beside the site (a feed reader's list, an RSS icon
before each name) says two things: the feed is that friend's known feed, not a friend of its
own, and an entry pairing a site with its feed lists a blog, however deep its URL
(``asahilinux.org/blog/``) and however much prose describes it. Both the container scorer
(:class:`~.scorers.FeedPairs`) and the assembly of friends read the pairs from here.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from urllib.parse import urlsplit

import lxml.html

ITEM_LEVELS = 3
"""Ancestors of a feed link searched for the one item (``li``, card, row) it shares with its
friend's site link."""
_LISTS = frozenset({"ul", "ol", "dl", "table", "tbody", "section", "article", "main", "body"})
ITEM_ELEMENTS = 200
"""Elements read per ancestor: an item is small; a larger ancestor is a list, not an item."""


def feed_pairs(
    links: Sequence[tuple[lxml.html.HtmlElement, str] | None], feeds: Collection[int]
) -> dict[int, int]:
    """The index of each site link → that of the feed listed beside it, over ``links``
    (``(element, url)`` in document order; None for a link with no element), ``feeds`` the
    indices of the feed links among them (:func:`~.filters.is_feed_link`).

    A feed link's item is its nearest ancestor (within :data:`ITEM_LEVELS`, below any list
    element) holding another of ``links``; it pairs when that ancestor holds exactly one, a
    site's (not a feed), or, in an entry whose prose links more, the first on the feed's host.
    A feed alone pairs with nothing.
    """
    if not feeds:
        return {}  # most pages
    index = {link[0]: i for i, link in enumerate(links) if link is not None}
    pairs: dict[int, int] = {}
    for i in sorted(feeds):
        el = links[i][0]  # type: ignore[index]
        for _ in range(ITEM_LEVELS):
            el = el.getparent()
            if el is None or el.tag in _LISTS:
                break  # past the item: a list holds many friends
            others = [
                index[a]
                for a in itertools.islice(el.iter(), ITEM_ELEMENTS)
                if a in index and index[a] != i
            ]
            if not others:
                continue
            if len(others) > 1:  # an entry in prose: the feed's site is its host's first link
                others = [o for o in others if _host(links[o]) == _host(links[i])][:1]
            site = others[0] if others else None
            if site is not None and site not in feeds and site not in pairs:
                pairs[site] = i
            break
    return pairs


def _host(link: tuple[lxml.html.HtmlElement, str] | None) -> str:
    try:
        host = urlsplit(link[1]).hostname or "" if link is not None else ""
    except ValueError:  # not a URL (an unbalanced IPv6 bracket): no host to share
        return ""
    return host.removeprefix("www.")
