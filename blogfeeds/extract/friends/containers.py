"""The container layer: the original container formula over the links that survive the
filters, extended by the scorers of :data:`~blogfeeds.extract.friends.scorers.FRIEND_SCORERS_BASE`
(repeated cards, page chrome, distinct friends), taking the union of every qualifying
container (at least :data:`UNION_SHARE` of the best score, not nested in another one).

Containers are always scored (they are reported); their links are proposed only when no
widget or theme card was found, and only on a friend-link page or in a container a friend
keyword labels.
"""

from __future__ import annotations

import bisect
import itertools
import re
from urllib.parse import urlsplit

import lxml.etree
import lxml.html

from blogfeeds.extract.friends.candidates import Candidate, Found
from blogfeeds.extract.friends.filters import DATED_POST, zone_match
from blogfeeds.extract.friends.keywords import DEAD_HEADING, XFN
from blogfeeds.extract.friends.measure import CHROME_ROLES, Link, Scan, describe
from blogfeeds.extract.friends.model import Container, LinkRef, ScoredContainer
from blogfeeds.extract.friends.scorers import score_containers
from blogfeeds.extract.friends.themes import HEADINGS, heading_before, text_of
from blogfeeds.extract.page import Page

CONTAINER_TAGS = frozenset(
    "div table tbody td ul ol dl section aside article main nav header footer p".split()
)
"""Elements the container layer scores (the original three plus sections and paragraphs)."""

UNION_SHARE = 0.2
"""A container qualifies for the union at this share of the best container's score."""

MAX_IDS = 8
"""Distinct blogs tracked per element (enough for the rules' thresholds; keeps it linear)."""


class Containers:
    """The container detector (``how``: ``container``): scores every container with
    :attr:`Found.scorers` into :attr:`Found.containers`, then proposes the links of the
    union of the qualifying ones."""

    def friends(self, page: Page, scan: Scan, found: Found) -> None:
        """Score the containers; unless a layer found cards, propose the union's links (on a
        friend page, also a list away from the cards that outnumbers them)."""
        found.containers = score_containers(
            _containers(scan, found.owner.identity), found.scorers, page
        )
        if not found.cards:
            # Nothing found by the list layers (a data source, XFN, inline runs): the one short
            # list of a page whose path names a friend page may be its blogroll.
            alone = not found.data_sources and all(c.verdict for c in found.candidates)
            alone = alone and found.friend_path
            for s in _union(found.containers, found.friend_page, short=alone):
                _propose(s, scan, found)
        elif found.friend_page:
            # A theme's widget (a sidebar's few links) is not the friend page's own list: a
            # container holding none of the cards and more friends than they list (distinct
            # blogs: a widget may link one friend's site three times) is proposed.
            kept = [c for c in found.candidates if c.verdict is None]
            cards = [c.order for c in kept]
            listed = len({c.link.identity if c.link else c.url for c in kept})
            for s in _union(found.containers, True):
                lo, hi = s.container.span
                if s.container.friends > listed and not any(lo <= n < hi for n in cards):
                    _propose(s, scan, found)


def _union(
    scored: list[ScoredContainer], friend_page: bool, *, short: bool = False
) -> list[ScoredContainer]:
    """The qualifying containers, best first, none nested in another one; on a friend page
    with none, its short list when ``short`` (:func:`_short_list`)."""
    accepted: list[ScoredContainer] = []
    best = scored[0].score if scored and not scored[0].rejected else 0.0
    for s in scored:
        if s.rejected or s.score < UNION_SHARE * best:
            break
        c = s.container
        if not (friend_page or c.anchored):
            continue
        lo, hi = c.span
        if any(
            a.container.span[0] <= lo < a.container.span[1] or lo <= a.container.span[0] < hi
            for a in accepted
        ):
            continue
        accepted.append(s)
    if friend_page:
        if accepted:
            accepted += _sibling_groups(scored, accepted)
        elif short:
            accepted = _short_list(scored)
    return accepted


def _short_list(scored: list[ScoredContainer]) -> list[ScoredContainer]:
    """A friend page whose list is too short to score (a blogroll of one link): its best list
    held under the minimum only by its score, outside page chrome, each friend in an entry of
    its own (never prose with a link in it)."""
    lists = [
        s
        for s in scored
        if s.below is not None
        and not s.container.chrome
        and s.container.friends >= 1
        and s.container.cards >= s.container.friends
    ]
    return [max(lists, key=lambda s: s.below or 0.0)] if lists else []


def _enclosures(scored: list[ScoredContainer]) -> dict[tuple[int, int], tuple[int, int] | None]:
    """Each scored container's span -> the span of the smallest scored container strictly
    enclosing it (None when none does). Spans are pre-order ranges of subtrees, so they nest
    like the tree: one sweep in document order with a stack of the spans still open (comparing
    every pair was quadratic on a grid of many cards)."""
    out: dict[tuple[int, int], tuple[int, int] | None] = {}
    opened: list[tuple[int, int]] = []
    for span in sorted({s.container.span for s in scored}):
        while opened and opened[-1][1] <= span[0]:
            opened.pop()
        out[span] = opened[-1] if opened else None
        opened.append(span)
    return out


def _sibling_groups(
    scored: list[ScoredContainer], accepted: list[ScoredContainer]
) -> list[ScoredContainer]:
    """On a friend page, the other groups of a blogroll split under headings: containers of
    an accepted one's tag in the same enclosing container, with cards each linking one friend
    (a group may hold one), that scored below the union's share (or below the minimum, or too
    short to score; never rejected by another rule) because their entries carry
    descriptions. A theme that wraps each group in a section of its own (a heading, a count,
    the grid) repeats the grid's description in each: a grid like an accepted one whose
    section is a sibling of the accepted one's section is a group too."""
    if not accepted:
        return []
    enclosing = _enclosures(scored)
    parents = {(a.container.tag, enclosing[a.container.span]) for a in accepted}
    tags = {tag for tag, _ in parents}
    wrapped = {
        (a.container.description, enclosing[wrap])
        for a in accepted
        if (wrap := enclosing[a.container.span]) is not None
        and "." in a.container.description  # a class names the grid: the theme's own
    }
    extra: list[ScoredContainer] = []
    for s in scored:
        c = s.container
        weak = s.rejected and s.below is None
        if weak or c.tag not in tags or c.cards < 1 or c.cards < c.friends or s in accepted:
            continue
        wrap = enclosing[c.span]
        twin = wrap is not None and (c.description, enclosing[wrap]) in wrapped
        if (c.tag, wrap) not in parents and not twin:  # linear: last
            continue
        lo, hi = c.span
        if any(
            a.container.span[0] <= lo < a.container.span[1] or lo <= a.container.span[0] < hi
            for a in accepted + extra
        ):
            continue
        extra.append(s)
    return extra


_FRAME_WORDS = ("footer", "copyright")


def _framed(el: lxml.html.HtmlElement, top: lxml.html.HtmlElement, tags: frozenset[str]) -> bool:
    """Whether ``el`` sits in a footer, header or nav (a chrome tag of the filter table, an
    ARIA role, or a ``footer`` or ``copyright`` class) below ``top``; the wider chrome words
    (``archive``, ``tags``) name the layout of many friend pages' own lists."""
    for up in el.iterancestors():
        if up is top:
            return False
        if up.tag in tags or up.get("role") in CHROME_ROLES:
            return True
        names = f"{up.get('class') or ''} {up.get('id') or ''}".split()
        if names and zone_match(names, _FRAME_WORDS):
            return True
    return False


def _propose(s: ScoredContainer, scan: Scan, found: Found) -> None:
    """A container's counted links as candidates; what the formula did not count, and why."""
    own, claimed, flt = found.owner.identity, found.claimed, found.filters
    lo, hi = s.container.span
    entries: list[Link] = []  # deep links that are blogroll entries of their own
    lists: dict[lxml.html.HtmlElement, bool] = {}
    for link in scan.links:
        if not lo <= link.node < hi or link.el in claimed or link.identity == own:
            continue
        reason = link.verdict
        if reason is None and not link.counted:
            path = link.parts.path
            reason = "post" if DATED_POST.search(path) else "deep-link-or-query"
            plain = reason != "post" and not link.parts.query
            if plain and _listed_entry(link, scan, found, lists):
                entries.append(link)  # proposed with the counted links below
                continue
        if reason is not None:
            claimed.add(link.el)
            # a feed keeps its link: beside its site it is that friend's feed (.feedpairs)
            feed = link if link.node in scan.feeds else None
            cand = Candidate(link.url, text_of(link.el), "container", 0.0, link.node, link=feed)
            cand.verdict = reason
            found.candidates.append(cand)
    refs = [*s.container.external_links, *(LinkRef(x.url, True, 1, x.el) for x in entries)]
    refs.sort(key=lambda r: found.by_el[r.element].node if r.element in found.by_el else 0)
    # A list outside page chrome holding a footer, header or nav of its own (a main column's
    # footer: "Theme Stack designed by Jimmy", the credits) does not list their links as friends.
    chrome, anchored = scan.chrome, scan.anchored
    outside = not chrome[lo]
    top = s.container.element
    for ref in refs:
        hit = found.by_el.get(ref.element)
        if hit is None or ref.element in claimed:
            continue
        claimed.add(ref.element)
        if (
            outside
            and chrome[hit.node]
            and not anchored[hit.node]
            and _framed(hit.el, top, flt.chrome_tags)
        ):
            cand = Candidate(hit.url, text_of(ref.element), "container", 0.0, hit.node)
            cand.verdict = "page-chrome"
            found.candidates.append(cand)
            continue
        heading = heading_before(ref.element, levels=5)
        cand = Candidate(
            hit.url,
            _card_name(s.container.element, ref.element),
            "container",
            s.score,
            hit.node,
            rels=tuple(r for r in hit.rels if r in XFN),
            listed_as="dead" if DEAD_HEADING.search(heading) else "",
            link=hit,
        )
        lowered = heading.lower()
        if any(w in lowered for w in flt.commercial_words):
            cand.verdict = "sponsored"
        found.candidates.append(cand)


_ENTRY_TAGS = frozenset({"li", "tr", "dd", "dt"})
_ENTRY_LISTS = frozenset({"ul", "ol", "tbody", "table", "dl"})
ENTRY_LEVELS = 4
"""Ancestors of a link searched for the list entry (``li``, ``tr``, ``dd``) it sits in."""


def _entry_of(el: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """The list entry holding ``el`` (an ``li``/``tr``/``dd`` of a list or table), or None."""
    node = el
    for _ in range(ENTRY_LEVELS):
        node = node.getparent()
        if node is None:
            return None
        if node.tag in _ENTRY_TAGS:
            parent = node.getparent()
            return node if parent is not None and parent.tag in _ENTRY_LISTS else None
    return None


def _entry_links(entry: lxml.html.HtmlElement, scan: Scan, found: Found) -> int:
    """Links of a list entry, not counting a feed beside the site."""
    count = 0
    for a in entry.iter("a"):
        hit = found.by_el.get(a)
        if hit is not None and hit.node not in scan.feeds:
            count += 1
    return count


def _listed_entry(
    link: Link, scan: Scan, found: Found, lists: dict[lxml.html.HtmlElement, bool]
) -> bool:
    """Whether a deep link (``x.org/blog/``, ``host/tjt/plum.html``: the formula does not count
    it) is a blogroll entry of its own: the only link of its list entry (a feed beside it
    aside), in a list whose entries mostly link blogs: sites' homes (counted friend links) or
    sites listed with their feed (:attr:`Scan.fed`). A list of mostly deep links is a list of
    posts or pages, not of blogs. ``lists`` keeps each list's answer (one pass over a list,
    however many entries ask)."""
    entry = _entry_of(link.el)
    if entry is None or link.node in scan.feeds or _entry_links(entry, scan, found) != 1:
        return False
    parent = entry.getparent()
    if parent not in lists:
        homes = deep = 0
        for a in parent.iter("a"):
            hit = found.by_el.get(a)
            if hit is None or hit.verdict is not None or hit.node in scan.feeds:
                continue
            if hit.counted or hit.node in scan.fed:
                homes += 1
            elif not hit.parts.query and not DATED_POST.search(hit.parts.path):
                deep += 1
        lists[parent] = homes > deep
    return lists[parent]


CARD_PARTS = 2
"""Elements inside a link that make it a card of its own (an avatar and a name)."""


def _containers(scan: Scan, own: str | None) -> list[Container]:
    """The containers linking at least one candidate friend (a counted link no filter dropped):
    the others cannot give a friend. Only the ancestors of those links are visited: a subtree's
    sums are differences of prefix sums over the flattened tree (a subtree is a range of
    pre-order indices, :func:`_subtree_ends`), its links' sums differences over the links in
    document order."""
    eligible = [link for link in scan.links if link.counted and link.verdict is None]
    if not eligible:
        return []
    parent = scan.parent
    # the ancestors-or-self of the candidate links, each once: the only nodes that can count
    above: set[int] = set()
    for link in eligible:
        i = link.node
        while i >= 0 and i not in above:
            above.add(i)
            i = parent[i]
    order = sorted(above)
    end = _subtree_ends(scan, order)
    text = list(itertools.accumulate(scan.text, initial=0))
    ltext = list(itertools.accumulate(scan.ltext, initial=0))
    links = list(itertools.accumulate(scan.is_link, initial=0))
    labelled = list(itertools.accumulate(scan.labelled, initial=0))
    # per link, in document order: its node, and prefix sums of what it adds to its ancestors
    at = [link.node for link in scan.links]
    ext_sum = [0]
    internal_sum = [0]
    fed_sum = [0]
    for link in scan.links:
        free = link.verdict is None
        ext_sum.append(ext_sum[-1] + ((2 if link.blank else 1) if link.counted and free else 0))
        internal_sum.append(internal_sum[-1] + (link.counted and not free and link.identity == own))
        fed_sum.append(fed_sum[-1] + (free and link.node in scan.fed))
    refs = [LinkRef(link.url, True, 2 if link.blank else 1, link.el) for link in eligible]
    ref_at = [link.node for link in eligible]
    ids: dict[int, set[str] | None] = {link.node: {link.identity} for link in eligible}
    many: set[int] = set()
    cards = dict.fromkeys(order, 0)
    for i in reversed(order):  # children before parents
        up = parent[i]
        if up < 0:
            continue
        mine = ids.get(i)
        # A card links one blog: a block around a link, or a link holding the card's parts
        # (avatar, name, description); a plain text link is a list entry, not a card.
        one = i not in many and mine is not None and len(mine) == 1
        if one and (not scan.is_link[i] or end[i] - i - 1 >= CARD_PARTS):
            cards[up] += 1
        if i in many:
            many.add(up)
        elif mine:
            merged = ids.get(up) or set()
            merged |= mine
            if len(merged) > MAX_IDS:
                many.add(up)
                ids[up] = None
            else:
                ids[up] = merged
    out = []
    for i in order:
        el = scan.nodes[i]
        if el.tag not in CONTAINER_TAGS:
            continue
        stop = end[i]
        lo, hi = bisect.bisect_left(at, i), bisect.bisect_left(at, stop)
        ext = ext_sum[hi] - ext_sum[lo]
        if not ext:  # links no other blog: no friend here
            continue
        first = bisect.bisect_left(ref_at, i)
        out.append(
            Container(
                tag=str(el.tag),
                description=describe(el),
                external=ext,
                internal=internal_sum[hi] - internal_sum[lo],
                links=links[stop] - links[i],
                tags=stop - i - 1,
                link_text=ltext[stop] - ltext[i],
                text=text[stop] - text[i],
                element=el,
                _refs=refs,
                _start=first,
                _end=bisect.bisect_left(ref_at, stop, first),
                friends=MAX_IDS + 1 if i in many else len(ids.get(i) or ()),
                cards=cards[i],
                fed=fed_sum[hi] - fed_sum[lo],
                child_text=sum(scan.text[scan.index[c]] for c in el.iterchildren(_ELEMENT)),
                anchored=scan.anchored[i] or labelled[stop] > labelled[i],
                chrome=scan.chrome[i],
                span=(i, stop),
                layered=True,
            )
        )
    return out


_ELEMENT = lxml.etree.Element
"""The ``tag`` filter of lxml's iterators that keeps elements (no comments)."""


def _subtree_ends(scan: Scan, order: list[int]) -> dict[int, int]:
    """For each node of ``order`` (pre-order indices, ascending, every node's parent included
    but the root's), where its subtree ends: the index of the next element after it in document
    order (its next element sibling's, else its parent's end), or the tree's size."""
    end: dict[int, int] = {}
    for i in order:
        after = next(scan.nodes[i].itersiblings(_ELEMENT), None)
        if after is not None:
            end[i] = scan.index[after]
        else:
            up = scan.parent[i]
            end[i] = end[up] if up >= 0 else len(scan.nodes)
    return end


def _link_name(el: lxml.html.HtmlElement) -> str:
    """A plain link's text; a card link's first text block (its name, not its description)."""
    if (el.text or "").strip() or len(el) == 0:
        return text_of(el)
    for sub in el.iterdescendants():
        if isinstance(sub.tag, str) and (sub.text or "").strip():
            return text_of(sub)
    return text_of(el)


_NAME_CLASS = re.compile(r"name|title|sitename", re.IGNORECASE)
CARD_DEPTH = 6
"""Levels between a container and a link for the link's ancestor to count as its card."""


def _card_name(container: lxml.html.HtmlElement, link: lxml.html.HtmlElement) -> str:
    """A friend's name in a card: the card's heading or ``*name*``/``*title*`` element when the
    link is a call-to-action button inside a bigger card (Matery-like), else the link's name.

    The card is the link's ancestor that is a child of the container.
    """
    card = link
    for _ in range(CARD_DEPTH):
        up = card.getparent()
        if up is None or up is container:
            break
        card = up
    if card is link or card.getparent() is not container:
        return _link_name(link)
    # a block holding other sites' links is a section of entries (its heading names the
    # list), not one friend's card
    site = urlsplit(link.get("href") or "").hostname
    for a in card.iter("a"):
        host = urlsplit(a.get("href") or "").hostname
        if host and host != site:
            return _link_name(link)
    found: dict[int, str] = {}
    for el in card.iter():
        if el is link or not isinstance(el.tag, str) or el.tag == "a":
            continue
        cls = el.get("class") or ""
        rank = 0 if "name" in cls.lower() else 1 if el.tag in HEADINGS else 2
        if rank == 2 and not _NAME_CLASS.search(cls):
            continue
        if rank not in found and link not in el.iterancestors() and (name := text_of(el)):
            found[rank] = name
    return found[min(found)] if found else _link_name(link)
