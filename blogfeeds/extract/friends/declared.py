"""The declared layers: the friends a page states in machine-readable form.

- **Data sources** (:class:`DataSources`): ``<link rel="blogroll">`` OPML (and then the
  blog's ``/.well-known/recommendations.opml``), ``.opml`` links, JSON friend lists and GitHub
  issue lists the page loads (``links.json``, ``data-api``/``api`` attributes, URLs quoted in
  inline scripts) become :attr:`FriendExtraction.data_sources` for the crawler to fetch and
  read with :func:`~blogfeeds.extract.friends.datasource.friends_from_data_source`.
- **XFN** (:class:`XfnLinks`): XFN 1.1 ``rel`` values on any link (``friend``, ``met``,
  ``co-worker``, ...) mark friends (``rel="me"`` marks the owner's own sites, see
  :mod:`.owner`).
- **Script lists** (:class:`ScriptLists`): friend lists written as object literals in an
  inline script (``{name: ..., link: "https://..."}``), read on friend-link pages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from blogfeeds.extract.friends.candidates import Candidate, Found
from blogfeeds.extract.friends.datasource import DATA_MARKS, FRIEND_REPO, is_data_source
from blogfeeds.extract.friends.filters import Cleaned
from blogfeeds.extract.friends.keywords import XFN, mentions_keyword
from blogfeeds.extract.friends.measure import Link, Scan, absolute, join_url
from blogfeeds.extract.friends.owner import owner_reason
from blogfeeds.extract.friends.themes import text_of
from blogfeeds.extract.identity import InvalidURL, blog_id
from blogfeeds.extract.page import Page

_ISSUES_PAGE = re.compile(
    r"^https?://(?:www\.)?(github\.com|gitee\.com)/([^/]+)/([^/?#]+)/issues/?(?:[?#].*)?$", re.I
)
_QUOTED = re.compile(r"""["'`]((?:https?:)?//[^"'`\s<>]+|/[^"'`\s<>]+)["'`]""")
_OBJECT = re.compile(r"\{[^{}]{1,2000}\}")
_URL_KEY = re.compile(
    r"""["']?(?:link|url|href|site|blog|homepage)["']?\s*[:=]\s*["'](https?://[^"'\s]+)["']""",
    re.I,
)
_NAME_KEY = re.compile(
    r"""["']?(?:name|title|nickname|sitename|author)["']?\s*[:=]\s*["']([^"'\n]{1,80})["']""",
    re.I,
)
_AVATAR_KEY = re.compile(
    r"""["']?(?:avatar|img|image|icon|logo)["']?\s*[:=]\s*["']([^"'\s]+)["']""", re.I
)


class DataSources:
    """The machine-readable friend lists the page points to (proposes no candidate)."""

    def friends(self, page: Page, scan: Scan, found: Found) -> None:
        """Add the page's data-source URLs to :attr:`Found.data_sources`, first seen first."""
        urls = list(scan.data_urls)
        if scan.blogroll_link:
            parts = urlsplit(page.url)
            urls.append(f"{parts.scheme}://{parts.netloc}/.well-known/recommendations.opml")
        for url in dict.fromkeys(link.url for link in scan.links):  # a URL's first link
            if url.lower().split("?")[0].endswith(".opml"):
                urls.append(url)
            m = _ISSUES_PAGE.match(url)
            if m and FRIEND_REPO.search(m.group(3)):
                urls.append(url)
                if m.group(1).lower() == "github.com":
                    urls.append(f"https://api.github.com/repos/{m.group(2)}/{m.group(3)}/issues")
        for body in scan.scripts:
            for raw in _QUOTED.findall(body):
                lowered = raw.lower()  # every data source names one of these: resolve only those
                if any(mark in lowered for mark in DATA_MARKS) and is_data_source(
                    url := absolute(page, raw)
                ):
                    urls.append(url)
        found.data_sources = list(dict.fromkeys([*found.data_sources, *urls]))


class XfnLinks:
    """Links with an XFN friend relationship (``how``: ``xfn``)."""

    def friends(self, page: Page, scan: Scan, found: Found) -> None:
        """Propose every unclaimed link whose ``rel`` holds an XFN friend value."""
        for link in scan.links:
            if link.el not in found.claimed and XFN.intersection(link.rels):
                found.claimed.add(link.el)
                rels = tuple(r for r in link.rels if r in XFN)
                found.candidates.append(
                    Candidate(
                        link.url, text_of(link.el), "xfn", 1000.0, link.node, rels=rels, link=link
                    )
                )


SOCIAL_SHARE = 2
"""A script list at least one ``1/SOCIAL_SHARE`` of whose links are platform pages (social
profiles, code hosts) is the owner's profile list, not friends."""


class ScriptLists:
    """Friend lists in inline scripts (``how``: ``script``), on friend-link pages or when a
    script mentions a friend keyword."""

    def friends(self, page: Page, scan: Scan, found: Found) -> None:
        """Propose every named absolute link of a script that lists two or more."""
        if not (found.friend_page or any(mentions_keyword(s) for s in scan.scripts)):
            return
        flt, order = found.filters, len(scan.nodes)
        for items in _script_lists(scan.scripts, page.base_url):
            listed: list[Candidate] = []
            for url, name, avatar in items:
                try:
                    parts = Cleaned.of(flt.clean_url(page.absolute(url)))
                    identity = blog_id(parts.url)
                except InvalidURL:
                    found.invalid_urls.append(page.absolute(url))
                    continue
                except ValueError:
                    continue
                pseudo = Link(page.tree, order, parts, identity, (), False, True, False)
                pseudo.verdict = owner_reason(pseudo, found.owner) or flt.verdict(parts, name)
                listed.append(
                    Candidate(parts.url, name, "script", 1000.0, order, avatar=avatar, link=pseudo)
                )
            platforms = sum(1 for c in listed if c.link and c.link.verdict == "platform")
            if listed and platforms * SOCIAL_SHARE >= len(listed):
                # a theme's config of the owner's profiles (知乎, 微博, GitHub): no blogroll
                for c in listed:
                    if c.link and c.link.verdict is None:
                        c.link.verdict = "social-list"
            found.candidates.extend(listed)


def _script_lists(scripts: Iterable[str], base: str) -> list[list[tuple[str, str, str]]]:
    """``[(url, name, avatar)]`` per inline script that lists ≥ 2 named absolute links."""
    lists = []
    for body in scripts:
        items = []
        for obj in _OBJECT.findall(body):
            url = _URL_KEY.search(obj) if "://" in obj else None  # the URL key needs "://"
            name = _NAME_KEY.search(obj) if url else None
            if url and name:
                avatar = _AVATAR_KEY.search(obj)
                items.append(
                    (url.group(1), name.group(1), join_url(base, avatar.group(1)) if avatar else "")
                )
        if len(items) >= 2:
            lists.append(items)
    return lists
