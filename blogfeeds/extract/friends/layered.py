"""The layered friend-link extractor (``ruleset="blogfeeds"``, the default): the measuring
pass, owner detection, then the layers in order, then the filters and deduplication.

Layers are components: :data:`FRIEND_LAYERS_BASE` updated by ``BLOGFEEDS_FRIEND_LAYERS``. A
layer (:class:`Layer`) has one method, ``friends(page, scan, found) -> None``: it reads the page,
the measuring pass (:class:`~.measure.Scan`) and the extraction so far
(:class:`~.candidates.Found`), and adds candidates (:class:`~.candidates.Candidate`, claiming
their links) or data sources. Writing one: docs/scoring.md; what each default finds:
docs/friend-links.md.

Then the filters (:mod:`~.filters`, the owner's own sites: :mod:`~.owner`; circles are recorded
in :attr:`FriendExtraction.circles`); Wayback Machine wrappers are unwrapped first. Friends are
deduplicated by blog identity, first seen first (candidates in document order, then layer
order); every friend says which layer found it (``Friend.how``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol
from urllib.parse import urlsplit

from blogfeeds.extract.friends.candidates import Candidate, Found
from blogfeeds.extract.friends.credits import credit_name, footer_credits
from blogfeeds.extract.friends.defaults import sample_entries, sample_key
from blogfeeds.extract.friends.feedpairs import feed_pairs
from blogfeeds.extract.friends.filters import (
    DATED_POST,
    FEED_URL,
    SITE_PAGES,
    blog_home_path,
    filters,
    friend_key,
    normal_host,
    proxied_capsule,
)
from blogfeeds.extract.friends.keywords import KEYWORDS
from blogfeeds.extract.friends.measure import Link, Scan, measure
from blogfeeds.extract.friends.model import Friend, FriendExtraction
from blogfeeds.extract.friends.owner import owner_of, owner_reason, path_depth
from blogfeeds.extract.friends.pages import names_friend_page
from blogfeeds.extract.friends.recentposts import article_posts
from blogfeeds.extract.friends.scorers import FRIEND_SCORERS_BASE, RulesSpec, built_rules
from blogfeeds.extract.friends.themes import ThemeRule, text_of
from blogfeeds.extract.page import Page
from blogfeeds.extract.scoring import build_rules
from blogfeeds.extract.text import collapse

FRIEND_LAYERS_BASE: dict[str, int | None] = {
    "blogfeeds.extract.friends.DataSources": 100,
    "blogfeeds.extract.friends.ThemeCards": 200,
    "blogfeeds.extract.friends.XfnLinks": 300,
    "blogfeeds.extract.friends.InlineRuns": 400,
    "blogfeeds.extract.friends.ScriptLists": 500,
    "blogfeeds.extract.friends.Containers": 600,
}
"""The layers, in order, updated by ``BLOGFEEDS_FRIEND_LAYERS``."""


class Layer(Protocol):
    """A friend layer (see the module docstring)."""

    def friends(self, page: Page, scan: Scan, found: Found) -> None:
        """Add what the layer finds on ``page`` to ``found`` (candidates, data sources)."""


SAME_SITE_PAGES = 3
"""Listed pages of one site (distinct deep URLs) from which it is not a friend but a site the
owner writes on or for (reviews on their other site, a profile's project pages)."""

_TAGLINE = re.compile(r"\s+[-–—|]\s+")


def extract_layered(
    page: Page,
    rules: RulesSpec = None,
    *,
    user_rules: Sequence[ThemeRule] = (),
    layers: Sequence[Layer] | None = None,
) -> FriendExtraction:
    """Run the layers over ``page`` (see the module docstring); never raises on odd markup.

    ``rules`` are the container scorers (default :data:`FRIEND_SCORERS_BASE`); ``user_rules``
    are extra theme-table entries, tried before the bundled ones; ``layers`` the built layers
    (default :data:`FRIEND_LAYERS_BASE`).
    """
    flt = filters()
    scan = measure(page, flt)
    owner = owner_of(page, scan, flt)
    posts = article_posts(scan.links, scan.parent)
    for link in scan.links:
        link.verdict = owner_reason(link, owner) or flt.url_verdict(link.parts, link.rels)
        if link.verdict is None and scan.service[link.node]:
            link.verdict = "service-section"
        if link.verdict is None and link.node in posts:
            link.verdict = "post"  # a followed blog's recent post: the friend is its source
    found = Found(
        owner=owner,
        filters=flt,
        friend_page=_is_friend_page(page, scan),
        friend_path=names_friend_page(urlsplit(page.url).path),
        page_host=normal_host(page.url),
        by_el={link.el: link for link in scan.links},
        user_rules=list(user_rules),
        scorers=built_rules(rules, FRIEND_SCORERS_BASE),
        invalid_urls=list(scan.invalid_urls),
    )
    for layer in default_layers() if layers is None else layers:
        layer.friends(page, scan, found)
    return _assemble(scan, found)


@functools.cache
def default_layers() -> tuple[Layer, ...]:
    """:data:`FRIEND_LAYERS_BASE`, built once (the default layers keep no state)."""
    return tuple(build_rules(FRIEND_LAYERS_BASE))


def _is_friend_page(page: Page, scan: Scan) -> bool:
    if names_friend_page(urlsplit(page.url).path):
        return True
    return bool(KEYWORDS.search(scan.title[:60]) or KEYWORDS.search(scan.h1[:40]))


def clean_name(name: str) -> str:
    """Whitespace collapsed; a long ``Name - tagline`` title (over 40 characters) keeps Name."""
    name = collapse(name)
    if len(name) > 40:
        head = _TAGLINE.split(name, 1)[0]
        if 2 <= len(head) < len(name):
            return head
    return name


def _assemble(scan: Scan, found: Found) -> FriendExtraction:
    """The friends: the candidates filtered and deduplicated, in document order."""
    cands, owner, flt = found.candidates, found.owner, found.filters
    cands.sort(key=lambda c: c.order)  # stable: document order, then layer order
    # theme demo data repeats a card within one list; a friend listed by a sidebar widget and
    # by the page's own list is two layers' finds (how), not a placeholder
    repeats: dict[tuple[str, str, str], int] = {}
    for c in cands:
        card = (c.how, c.url, " ".join(c.name.split()))
        repeats[card] = repeats.get(card, 0) + 1
    people = _people_on_one_host(cands)
    keys = [people.get(i) or friend_key(c.url) for i, c in enumerate(cands)]
    deep_urls: dict[str, set[str]] = {}
    for i, c in enumerate(cands):
        if i in people:
            continue  # a person's site under a path of a shared host: its own friend
        if c.link is not None and c.verdict is None and path_depth(c.url, c.link.identity) >= 1:
            deep_urls.setdefault(keys[i], set()).add(c.url)
    feeds = _listed_feeds(cands, scan)
    # every link of the page counts toward a theme's samples: a sample the filters refuse (a
    # platform's home) is not proposed, and its partner alone would read as a friend
    linked = [c.url for c in cands] + [link.url for link in scan.links]
    samples = sample_entries(found.page_host, linked)
    friends: list[Friend] = []
    excluded: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for i, c in enumerate(cands):
        if i in feeds.values():
            continue  # a feed beside its friend's site: that friend's known feed
        name = clean_name(c.name)
        reason = c.verdict
        if reason is None and c.link is not None:
            reason = c.link.verdict
        if reason is None:
            reason = flt.name_verdict(name)
            if reason is None and c.link is None:
                reason = flt.url_verdict(c.url, c.rels)
        if reason is None and DATED_POST.search(urlsplit(c.url).path):
            reason = "post"
        if reason is None and len(deep_urls.get(keys[i], ())) >= SAME_SITE_PAGES:
            reason = "same-site-pages"
        if reason is None and _podcast_feed(c, name, scan):
            reason = "podcast"
        if reason is None and samples and sample_key(c.url) in samples:
            reason = "theme-default"
        if reason is None and repeats[(c.how, c.url, " ".join(c.name.split()))] >= flt.repeats:
            reason = "placeholder"
        if reason is not None:
            if reason != "circle":
                excluded.append((c.url, reason))
            continue
        key = keys[i]
        if key in seen:
            first = friends[seen[key]]
            if c.rels and not set(c.rels) <= set(first.rels):
                first = friends[seen[key]] = _merge_rels(first, c.rels)
            if c.url != first.url and _depth(c.url, key) == 0 < _depth(first.url, key):
                # one of the friend's posts listed before their home page: the blog is the
                # friend, the post a link to it
                excluded.append((first.url, f"duplicate of {c.url}"))
                friends[seen[key]] = replace(
                    first,
                    url=c.url,
                    name=name,
                    avatar=c.avatar or first.avatar,
                    how=c.how,
                    kind="",
                    feed=first.feed or (first.url if first.kind == "feed" else ""),
                    repaired=c.link.repaired if c.link is not None else "",
                )
            elif c.url != first.url:
                excluded.append((c.url, f"duplicate of {first.url}"))
            continue
        seen[key] = len(friends)
        fed = FEED_URL.search(c.url) if c.link is None else c.link.node in scan.feeds
        capsule = proxied_capsule(c.url)
        kind = capsule.split(":", 1)[0] if capsule else "feed" if fed else ""
        feed = cands[feeds[i]].url if i in feeds else ""
        repaired = c.link.repaired if c.link is not None else ""
        friends.append(
            Friend(c.url, name, c.score, c.avatar, c.how, c.rels, c.listed_as, kind, feed, repaired)
        )
    _rescale(friends)
    if friends:
        listed = found.claimed | {c.link.el for c in cands if c.link is not None}
        credits = footer_credits(scan, listed, found.page_host)
        if credits:
            friends = [
                replace(f, credited=True) if credit_name(f.url) in credits else f for f in friends
            ]
    circles: list[Friend] = []
    circle_seen: set[str] = set()
    for link in scan.links:
        if link.url in circle_seen or link.verdict not in (None, "circle"):
            continue
        name = text_of(link.el)
        if link.verdict == "circle" or flt.name_verdict(name) == "circle":
            circle_seen.add(link.url)
            circles.append(Friend(link.url, name, 0.0, how="circle"))
    return FriendExtraction(
        containers=found.containers,
        friends=friends,
        elements=scan.count,
        excluded=list(dict.fromkeys(excluded)),
        circles=circles,
        data_sources=found.data_sources,
        owner_aliases=sorted(set(owner.roots.values())),
        ruleset="blogfeeds",
        invalid_urls=list(dict.fromkeys(found.invalid_urls)),
    )


def _people_on_one_host(cands: list[Candidate]) -> dict[int, str]:
    """Candidates that the list itself shows as different people's sites on one shared host
    (two comics on a comics platform, two users of a forum, ``host/alice/`` and ``host/bob/``),
    each keyed by host and first path segment: index → key. A host qualifies when every link
    to it lies under a first path segment (none is its home), that segment names no page of a
    site (:data:`~.filters.SITE_PAGES`) nor a file, what follows it is nothing or a blog's
    home (:func:`~.filters.blog_home_path`), at least two segments appear but no more than the
    list shows other sites (a list mostly of one host's sections is that site's menu), and no
    two segments share a name: a friend's home and their about page, or one person's pages
    named alike, stay one friend."""
    groups: dict[str, list[tuple[int, Link]]] = {}
    sites: set[str] = set()
    for i, c in enumerate(cands):
        if c.verdict is None and c.link is not None and c.link.verdict is None:
            key = friend_key(c.url)
            sites.add(key)
            if "/" not in key:  # a blog under a path by its identity is keyed so already
                groups.setdefault(key, []).append((i, c.link))
    found: dict[int, str] = {}
    for key, members in groups.items():
        names: dict[str, set[str]] = {}
        for i, link in members:
            path = link.parts.path
            segments = [s for s in path.split("/") if s]
            first = segments[0].lower() if segments else ""
            if (
                not first
                or link.parts.query
                or first in SITE_PAGES
                or "." in first
                or DATED_POST.search(path)
                or (len(segments) > 1 and not blog_home_path(segments[1:], path.endswith("/")))
            ):
                break
            names.setdefault(first, set()).add(" ".join(cands[i].name.split()).lower())
        else:
            named = [n for ns in names.values() for n in ns]
            others = len(sites) - 1  # the sites of other hosts the list shows
            if 2 <= len(names) <= others and "" not in named and len(named) == len(set(named)):
                for i, link in members:
                    first = link.parts.path.strip("/").split("/", 1)[0].lower()
                    found[i] = f"{key}/{first}"
    return found


def _listed_feeds(cands: list[Candidate], scan: Scan) -> dict[int, int]:
    """Feeds listed beside their friend's site (:mod:`.feedpairs`): the candidate index of each
    site → that of its feed. A feed alone stays a friend listed by its feed
    (``Friend.kind``: the crawl reads the blog from the feed)."""
    links = [(c.link.el, c.url) if c.link is not None else None for c in cands]
    feeds = [i for i, c in enumerate(cands) if c.link is not None and c.link.node in scan.feeds]
    return feed_pairs(links, feeds)


def _rescale(friends: list[Friend]) -> None:
    """Friends found by a list layer score 1000 per friend that layer found (the formula's
    per-link points); the container layer keeps its container's score."""
    counts: dict[str, int] = {}
    for f in friends:
        counts[f.how] = counts.get(f.how, 0) + 1
    for i, f in enumerate(friends):
        if f.how != "container":
            friends[i] = replace(f, score=1000.0 * counts[f.how])


def _podcast_feed(c: Candidate, name: str, scan: Scan) -> bool:
    """A feed listed as a friend whose URL or name says it is a podcast's: a show, not a blog."""
    if "podcast" not in c.url.lower() and "podcast" not in name.lower():
        return False
    return bool(FEED_URL.search(c.url)) if c.link is None else c.link.node in scan.feeds


def _depth(url: str, key: str) -> int:
    """Path segments of ``url`` beyond the root of the friend keyed ``key``
    (:func:`~.filters.friend_key`, or a person's path on a shared host): 0 for the home page;
    0 for a URL keyed whole (a feed proxy's, a proxied capsule's)."""
    return 0 if "://" in key else path_depth(url, key)


def _merge_rels(friend: Friend, rels: tuple[str, ...]) -> Friend:
    return replace(friend, rels=tuple(dict.fromkeys((*friend.rels, *rels))))
