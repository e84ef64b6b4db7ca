"""The page's footer credits, and which friends they name: the crawl-wide rule for theme
defaults (:mod:`blogfeeds.storage.themedefaults`) needs to know whether a listed friend is the
theme's own site.

A theme's footer credits its author ("Theme Fluid" → ``github.com/fluid-dev/...``, "主题
Firefly" → ``github.com/CuteLeaf/Firefly``), and the friend list a theme ships names the same
author's blog, docs or demo (``hexo.fluid-dev.com``, ``blog.cuteleaf.cn``). A friend is
*credited* when its name (:func:`credit_name`: the account on a code host, else the label of
its blog identity) is the name of a link in the page's footer outside the friend list. The page
alone cannot tell a theme's sample from a friend who wrote the theme: the crawl decides, from
many blogs of one theme (docs/friend-links.md).
"""

from __future__ import annotations

from collections.abc import Iterable

import lxml.html

from blogfeeds.extract.friends.filters import normal_host
from blogfeeds.extract.friends.measure import Scan
from blogfeeds.extract.friends.owner import label_of
from blogfeeds.extract.identity import blog_id, split_url

CODE_HOSTS = frozenset({"github.com", "gitee.com", "gitlab.com", "codeberg.org", "bitbucket.org"})
"""Hosts whose first path segment is an account: a theme's repository names its author."""

_FOOTER_WORDS = ("footer", "copyright", "credit", "powered")
_CLASS_ATTRS = ("class", "id")
_PAGE_TAGS = frozenset({"html", "body"})  # their classes describe the page, not a zone


def credit_name(url: str) -> str:
    """The name of whoever ``url`` belongs to, lower-cased: the account of a code host
    (``fluid-dev`` of ``github.com/fluid-dev/hexo-theme-fluid``), else the label of its blog
    identity (``fluid-dev`` of ``hexo.fluid-dev.com``, ``alice`` of ``alice.github.io``); ``""``
    when generic, too short or not a web address."""
    try:
        host, segments = split_url(url)
    except ValueError:
        return ""
    if host.removeprefix("www.") in CODE_HOSTS:
        return label_of(f"{host}/{segments[0]}") if segments else ""
    try:
        return label_of(blog_id(url))
    except ValueError:
        return ""


def footer_credits(scan: Scan, listed: Iterable[lxml.html.HtmlElement], host: str) -> set[str]:
    """The :func:`credit_name` of every link in the page's footer that is not one of
    ``listed`` (the friend list's links) and points to another host than ``host`` (the
    page's)."""
    skip = set(listed)
    names: set[str] = set()
    known: dict[int, bool] = {}
    for link in scan.links:
        if link.el in skip or not _in_footer(scan, link.node, known):
            continue
        if normal_host(link.url) != host and (name := credit_name(link.url)):
            names.add(name)
    return names


def _in_footer(scan: Scan, node: int, known: dict[int, bool]) -> bool:
    """Whether element ``node`` lies in a ``<footer>``, a ``contentinfo`` landmark or an
    element whose class or id says footer, copyright, credit or powered (``known``: the
    answers so far, by element: a page's links share their ancestors)."""
    path: list[int] = []
    found = False
    while node >= 0:
        if node in known:
            found = known[node]
            break
        path.append(node)
        el = scan.nodes[node]
        if el.tag in _PAGE_TAGS:
            break
        if el.tag == "footer" or el.get("role") == "contentinfo" or _footer_class(el):
            found = True
            break
        node = scan.parent[node]
    for seen in path:
        known[seen] = found
    return found


def _footer_class(el: lxml.html.HtmlElement) -> bool:
    for attr in _CLASS_ATTRS:
        value = el.get(attr)
        if value and any(word in value.lower() for word in _FOOTER_WORDS):
            return True
    return False
