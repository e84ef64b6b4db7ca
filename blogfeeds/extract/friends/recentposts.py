"""Recent-posts blocks beside a blogroll ("articles from blogs I follow": OpenRing and the
webring widgets like it): each item names one recent post of a followed blog, then the blog
itself as its source (``<a>Post title</a> … via <a>The blog</a>``). The post is the blog's
article, not a friend: the friend is the blog, named by the item's source link. Found by the
item's shape, not by its markup: the smallest element holding exactly two links, both on one
host, one of them introduced by "via" (the source), the other below the site's root (the
post). The generator's credit below the block is a code host's repository (a platform).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from blogfeeds.extract.friends.measure import Link

_VIA = re.compile(r"(?:^|\W)via\s*:?\s*$", re.IGNORECASE)
_ITEM_DEPTH = 4
"""Ancestors of a link searched for its item (OpenRing: ``a`` < ``h4`` < ``div.article``)."""


def article_posts(links: Iterable[Link], parent: Sequence[int]) -> set[int]:
    """The nodes of the links that are a post of a blog their item names as its source
    (``parent``: each node's parent node, :attr:`~.measure.Scan.parent`)."""
    items: dict[int, list[Link]] = {}
    for link in links:
        node = link.node
        for _ in range(_ITEM_DEPTH):
            node = parent[node]
            if node < 0:
                break
            items.setdefault(node, []).append(link)
    posts: set[int] = set()
    for pair in items.values():
        if len(pair) != 2 or pair[0].url == pair[1].url:
            continue
        first, second = pair
        if not first.parts.host or first.parts.bare != second.parts.bare:
            continue
        for post, source in ((first, second), (second, first)):
            # the post lies below the site's root: a home page is never the item's post
            if (
                _introduced_by_via(source)
                and not _introduced_by_via(post)
                and post.parts.path.strip("/")
            ):
                posts.add(post.node)
    return posts


def _introduced_by_via(link: Link) -> bool:
    """The text just before the link, in its parent, ends with "via"."""
    before = link.el.getprevious()
    parent = link.el.getparent()
    text = before.tail if before is not None else parent.text if parent is not None else ""
    return bool(_VIA.search(text or ""))
