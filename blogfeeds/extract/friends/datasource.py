"""Machine-readable friend lists a page points to: OPML blogrolls and JSON friend lists.

:func:`is_data_source` recognises their URLs in a page; :func:`friends_from_data_source`
reads what the crawler fetched from a URL listed in :attr:`FriendExtraction.data_sources`: OPML
(opml.org spec 2.0, ``htmlUrl``-only outlines included: rss-blogroll-network#4), JSON friend
lists of themes and friend-circle tools (every object, at any depth, with a URL key and a name
key), and GitHub issues API answers (issue-backed friend lists). The formats and keys:
docs/friend-links.md.

The friend filters apply (platforms, badges, circles, ...). Never raises: a body that is
neither gives ``[]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

import lxml.etree

from blogfeeds.extract.friends.filters import filters, friend_key
from blogfeeds.extract.friends.keywords import KEYWORDS
from blogfeeds.extract.friends.model import Friend
from blogfeeds.extract.identity import InvalidURL, blog_id
from blogfeeds.extract.text import collapse
from blogfeeds.extract.untrusted_json import loads_untrusted

_URL_KEYS = ("link", "url", "href", "site", "blog", "homepage", "siteurl", "website")
_NAME_KEYS = ("name", "title", "nickname", "sitename", "site_name", "author")
_AVATAR_KEYS = ("avatar", "img", "image", "icon", "logo")
_BODY_JSON = re.compile(r"\{[\s\S]*?\}")
_BODY_LINE = re.compile(
    r"^\s*[-*]?\s*[\"']?(\w+)[\"']?\s*[:：=]\s*[\"']?(.+?)[\"']?\s*,?\s*$", re.M
)
_XML_PARSER = lxml.etree.XMLParser(
    resolve_entities=False, no_network=True, recover=True, huge_tree=False
)
_DATA_FILE = re.compile(
    r"(?:friend|link|flink|blogroll|友链|友情链接)[^/?#]*\.(?:json|opml|ya?ml)(?:[?#]|$)", re.I
)
_ISSUES_API = re.compile(r"^https?://api\.github\.com/repos/[^/]+/([^/?#]+)/issues", re.I)
FRIEND_REPO = re.compile(r"friend|link|flink|blogroll|example|site|友链", re.I)
"""A repository name that holds a friend list (its issues are the list)."""
DATA_MARKS = (".json", ".opml", ".yml", ".yaml", "api.github.com")
"""Substrings one of which every URL :func:`is_data_source` accepts contains."""


def is_data_source(url: str, context: str = "") -> bool:
    """Whether ``url`` looks like a machine-readable friend list (``context``: class names)."""
    if not url.lower().startswith(("http://", "https://")):
        return False
    path = urlsplit(url).path
    if _DATA_FILE.search(path) or path.lower().endswith(".opml"):
        return True
    m = _ISSUES_API.match(url)
    return bool(m and (FRIEND_REPO.search(m.group(1)) or KEYWORDS.search(context)))


def _pick(obj: dict[str, Any], keys: tuple[str, ...]) -> str:
    lowered = {str(k).lower(): v for k, v in obj.items()}
    for key in keys:
        value = lowered.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _walk(value: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    """Every dict in a JSON value, depth first, document order (bounded depth)."""
    if depth > 8:
        return
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _walk(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, depth + 1)


def _issue_fields(issue: dict[str, Any]) -> dict[str, Any]:
    body = issue.get("body")
    body = body if isinstance(body, str) else ""
    for block in _BODY_JSON.findall(body):
        data = loads_untrusted(block)
        if isinstance(data, dict) and _pick(data, _URL_KEYS):
            data.setdefault("title", issue.get("title", ""))
            return data
    fields: dict[str, Any] = {k.lower(): v for k, v in _BODY_LINE.findall(body)}
    if not _pick(fields, _NAME_KEYS) and issue.get("title"):
        fields["name"] = issue["title"]
    return fields


def _from_json(url: str, data: Any) -> list[tuple[str, str, str, str]]:
    items = []
    if (
        isinstance(data, list)
        and data
        and all(isinstance(d, dict) and "body" in d and "html_url" in d for d in data)
    ):
        for issue in data:
            if str(issue.get("state", "open")) != "open":
                continue
            fields = _issue_fields(issue)
            link = _pick(fields, _URL_KEYS)
            if link:
                items.append(
                    (link, _pick(fields, _NAME_KEYS), _pick(fields, _AVATAR_KEYS), "issues")
                )
        return items
    for obj in _walk(data):
        link, name = _pick(obj, _URL_KEYS), _pick(obj, _NAME_KEYS)
        if link and name:
            items.append((link, name, _pick(obj, _AVATAR_KEYS), "json"))
    return items


def _from_opml(body: bytes) -> list[tuple[str, str, str, str]]:
    try:
        root = lxml.etree.fromstring(body, parser=_XML_PARSER)
    except (lxml.etree.XMLSyntaxError, ValueError):
        return []
    if root is None:
        return []
    items = []
    for outline in root.iter("{*}outline"):
        html, xml = outline.get("htmlUrl"), outline.get("xmlUrl")
        link = html or xml
        if not link and (outline.get("type") or "").lower() == "link":
            link = outline.get("url")
        if link:
            name = outline.get("text") or outline.get("title") or ""
            items.append((link, name, "", "opml" if html or not xml else "opml-feed"))
    return items


def friends_from_data_source(
    url: str, body: bytes, content_type: str = "", invalid: list[str] | None = None
) -> list[Friend]:
    """Friends listed by a fetched data source (OPML or JSON; see the module docstring).

    ``url`` is the source's final URL (relative links resolve against it), ``body`` the raw
    bytes, ``content_type`` the HTTP header (may be empty: the body is sniffed). Friends come
    in source order, deduped by blog identity, each scoring 1000. Listed URLs whose host no
    host may hold (:class:`~blogfeeds.extract.identity.InvalidURL`) are appended to
    ``invalid``.
    """
    text = body.lstrip()[:1].decode("ascii", "replace") if body.strip() else ""
    ctype = content_type.lower()
    if "json" in ctype or text in ("[", "{"):
        items = _from_json(url, loads_untrusted(body.decode("utf-8-sig", "replace")))
    elif "xml" in ctype or "opml" in ctype or text == "<":
        items = _from_opml(body)
    else:
        items = []
    flt = filters()
    try:
        source_id: str | None = blog_id(url)
    except ValueError:
        source_id = None
    out: list[Friend] = []
    seen: set[str] = set()
    for link, name, avatar, how in items:
        try:
            clean = flt.clean_url(urljoin(url, link))
            identity = blog_id(clean)
            picture = urljoin(url, avatar) if avatar else ""
        except InvalidURL:
            if invalid is not None:
                invalid.append(urljoin(url, link))
            continue
        except ValueError:
            continue
        key = friend_key(clean)
        if identity == source_id or key in seen or flt.verdict(clean, name) is not None:
            continue
        seen.add(key)
        kind = "feed" if how == "opml-feed" else ""
        out.append(
            Friend(
                clean,
                collapse(name),
                1000.0,
                picture,
                how.removesuffix("-feed"),
                kind=kind,
            )
        )
    return out
