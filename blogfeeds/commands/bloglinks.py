"""The links each exported blog carries beside its own row (``scrapy export csv`` and
``jsonl``, :mod:`blogfeeds.commands.export`): its other addresses, the friend links it lists
with their kinds, and the links the crawl dropped from it with their reasons."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def alias_urls(blog: Mapping[str, Any]) -> str:
    """The blog's other addresses (:meth:`~blogfeeds.storage.db.Store.blog_aliases`),
    space-separated (a URL holds no space)."""
    return " ".join(alias["url"] for alias in blog.get("aliases") or ())


def dropped_cell(blog: Mapping[str, Any]) -> str:
    """The links the blog lists that the crawl dropped, each ``URL (reason)``, space-separated
    (a URL holds no space; :meth:`~blogfeeds.storage.db.Store.dropped_links`)."""
    return " ".join(f"{d['target_url']} ({d['reason']})" for d in blog.get("dropped_links") or ())


def friends_cell(blog: Mapping[str, Any]) -> str:
    """The blog's friend links, each ``URL (kind)``, space-separated (:func:`with_friends`)."""
    return " ".join(f"{f['target_url']} ({f['kind']})" for f in blog.get("friend_links") or ())


def with_friends(
    blogs: Iterable[Mapping[str, Any]], links: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Each blog with ``friend_links``: the stored links it lists, each with its ``kind``
    (:meth:`~blogfeeds.storage.db.Store.friend_links` rows without ``source_blog_id``)."""
    listed: dict[str, list[dict[str, Any]]] = {}
    for link in links:
        row = {k: v for k, v in link.items() if k != "source_blog_id"}
        listed.setdefault(link["source_blog_id"], []).append(row)
    return [{**blog, "friend_links": listed.get(blog["blog_id"], [])} for blog in blogs]
