"""The original friend-link container formula (``ruleset="original"``), exactly.

For each ``div``, ``table`` and ``ul`` (a *container*), count its links to other blogs
(*external*: another blog identity, :func:`blogfeeds.extract.identity.blog_id`, not another
host; a ``target="_blank"`` link counts twice) and to the page's own blog (*internal*), score
it by the rules of :data:`~blogfeeds.extract.friends.scorers.ORIGINAL_FRIEND_RULES`
(:class:`LinkBalance`, :class:`LinkTextRatio`, :class:`LinkDensity`, :class:`MinimumScore`);
the best container's external links are the friends. The formula and its measures:
docs/friend-links.md.

``link_text`` / ``total_text`` count visible text only (not ``<script>``/``<style>``). The
measures are subtree sums over the shared measuring pass
(:func:`blogfeeds.extract.friends.measure.measure`), children before parents: linear in the
page size, nested containers never rescan their subtrees.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import lxml.html

from blogfeeds.extract.friends.measure import Scan, describe, measure
from blogfeeds.extract.friends.model import Container, Friend, FriendExtraction, LinkRef
from blogfeeds.extract.friends.scorers import (
    ORIGINAL_FRIEND_RULES,
    RulesSpec,
    built_rules,
    score_containers,
)
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.page import Page

CONTAINER_TAGS = frozenset({"div", "table", "ul"})
"""Elements the original formula scores as friend-link containers."""


def _classify(el: lxml.html.HtmlElement, page: Page, own: str | None) -> LinkRef | None:
    """The counted link of an ``<a href>``, or None when it is ignored or skipped."""
    href = (el.get("href") or "").strip()
    if not href or href.startswith("#"):
        return None
    try:
        url = page.absolute(href)
        parts = urlsplit(url)
        if parts.scheme.lower() not in ("http", "https"):
            return None
        if parts.query or sum(1 for s in parts.path.split("/") if s) > 1:
            return None
        target = blog_id(url)
    except ValueError:
        return None
    external = target != own
    blank = (el.get("target") or "").strip().lower() == "_blank"
    return LinkRef(url=url, external=external, weight=2 if external and blank else 1, element=el)


def scan_containers(page: Page, scan: Scan | None = None) -> tuple[list[Container], int]:
    """Every container of ``page`` measured by the original formula's rules; return
    ``(containers, elements)``. ``scan``: the page's measuring pass (made when not given)."""
    if scan is None:
        scan = measure(page)
    try:
        own: str | None = blog_id(page.url)
    except ValueError:
        own = None
    n = len(scan.nodes)
    ext = [0] * n
    internal = [0] * n
    links = [1 if x else 0 for x in scan.is_link]
    tags = [0] * n
    ltext = list(scan.ltext)
    text = list(scan.text)
    for node, count in scan.extra_text.items():
        text[node] += count
    for node, count in scan.extra_ltext.items():
        ltext[node] += count
    refs: list[LinkRef] = []
    ref_start = [0] * n
    ref_count = [0] * n
    for i, el in enumerate(scan.nodes):
        ref_start[i] = len(refs)
        ref = _classify(el, page, own) if scan.is_link[i] else None
        if ref is None:
            continue
        refs.append(ref)
        ref_count[i] = 1
        if ref.external:
            ext[i] = ref.weight
        else:
            internal[i] = 1
    for i in range(n - 1, 0, -1):
        up = scan.parent[i]
        ext[up] += ext[i]
        internal[up] += internal[i]
        links[up] += links[i]
        tags[up] += tags[i] + 1
        ltext[up] += ltext[i]
        text[up] += text[i]
        ref_count[up] += ref_count[i]
    containers = [
        Container(
            tag=str(el.tag),
            description=describe(el),
            external=ext[i],
            internal=internal[i],
            links=links[i],
            tags=tags[i],
            link_text=ltext[i],
            text=text[i],
            element=el,
            _refs=refs,
            _start=ref_start[i],
            _end=ref_start[i] + ref_count[i],
        )
        for i, el in enumerate(scan.nodes)
        if el.tag in CONTAINER_TAGS
    ]
    return containers, scan.count


def extract_original(page: Page, rules: RulesSpec = None) -> FriendExtraction:
    """Score every container of ``page`` and return the best one's external links as friends.

    ``rules`` is a ``{dotted path or class: order}`` spec (default :data:`ORIGINAL_FRIEND_RULES`)
    or an already built rule list; scoring starts at 0. Friends are deduped by URL (first
    anchor text kept) and never include the page's own blog. Never raises on odd markup.
    """
    built = built_rules(rules, ORIGINAL_FRIEND_RULES)
    containers, elements = scan_containers(page)
    scored = score_containers(containers, built, page)
    friends: list[Friend] = []
    if scored and not scored[0].rejected:
        best = scored[0]
        seen: set[str] = set()
        for ref in best.container.external_links:
            if ref.url not in seen:
                seen.add(ref.url)
                friends.append(Friend(ref.url, ref.name, best.score, how="container"))
    return FriendExtraction(containers=scored, friends=friends, elements=elements)
