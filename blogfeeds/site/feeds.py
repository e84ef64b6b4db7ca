"""The river as feeds: Atom 1.0 (RFC 4287) and JSON Feed 1.1 (jsonfeed.org/version/1.1).

Both list the same entries in the same order (newest first). An entry's ``id`` is its stored
GUID when that is an absolute URI (Atom requires an IRI), else a ``urn:sha1:`` of the feed URL
and GUID, stable across builds. Only valid absolute http(s) URIs leave as links
(:func:`~blogfeeds.site.data.web_url`: percent-encoded, or left out). ``base_url`` (the
address the site will be served from) makes the feeds' self links absolute; without it they
are relative to the feed file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import IO, Any
from urllib.parse import urljoin, urlsplit

from lxml import etree

from blogfeeds.extract.feedreader.entries import iso_utc
from blogfeeds.site.data import iso, plain_text, web_url

ATOM_NS = "http://www.w3.org/2005/Atom"
JSON_FEED_VERSION = "https://jsonfeed.org/version/1.1"
_EPOCH = "1970-01-01T00:00:00Z"


def _xml(value: Any) -> str:
    # XML 1.0 cannot hold control characters or lone surrogates, which feeds do send.
    text = "" if value is None else str(value)
    return "".join(
        c
        for c in text
        if c in "\t\n\r" or ("\x20" <= c <= "\ud7ff") or ("\ue000" <= c <= "\ufffd") or c > "\uffff"
    )


def entry_id(entry: Mapping[str, Any]) -> str:
    """A stable identifier of the entry (see the module docstring)."""
    guid = entry.get("guid") or ""
    try:
        scheme = urlsplit(guid).scheme
    except ValueError:
        scheme = ""
    if scheme and ":" in guid and not any(c.isspace() for c in guid):
        return str(guid)
    raw = f"{entry.get('feed_url') or ''}\n{guid}".encode("utf-8", "surrogatepass")
    return "urn:sha1:" + hashlib.sha1(raw, usedforsecurity=False).hexdigest()


def entry_title(entry: Mapping[str, Any]) -> str:
    """The entry's title as text (a feed's title may hold markup), ``(untitled)`` when none."""
    return plain_text(entry.get("title"), 500) or "(untitled)"


def _link(base_url: str, name: str) -> str:
    return urljoin(base_url, name) if base_url else name


def write_atom(
    entries: Sequence[Mapping[str, Any]],
    blogs: Mapping[str, Mapping[str, Any]],
    out: IO[bytes],
    *,
    title: str,
    feed_id: str,
    base_url: str = "",
    self_name: str = "river.atom",
) -> int:
    """Atom of ``entries`` (``blogs`` by id name each entry's source); returns the entries."""
    atom = f"{{{ATOM_NS}}}"
    root = etree.Element(atom + "feed", nsmap={None: ATOM_NS})
    etree.SubElement(root, atom + "title").text = _xml(title)
    etree.SubElement(root, atom + "id").text = feed_id
    etree.SubElement(root, atom + "updated").text = entries[0]["date"] if entries else _EPOCH
    etree.SubElement(root, atom + "link", rel="self", href=_link(base_url, self_name))
    etree.SubElement(root, atom + "link", rel="alternate", href=_link(base_url, "river.html"))
    etree.SubElement(root, atom + "generator").text = "blogfeeds"
    for entry in entries:
        node = etree.SubElement(root, atom + "entry")
        etree.SubElement(node, atom + "title").text = _xml(entry_title(entry))
        etree.SubElement(node, atom + "id").text = _xml(entry_id(entry))
        etree.SubElement(node, atom + "updated").text = entry["date"] or _EPOCH
        if entry.get("published"):
            etree.SubElement(node, atom + "published").text = entry["date"] or _EPOCH
        link = web_url(entry.get("link"))
        if link:
            etree.SubElement(node, atom + "link", rel="alternate", href=link)
        blog = blogs.get(entry.get("blog_id") or "", {})
        author = etree.SubElement(node, atom + "author")
        name = entry.get("author") or blog.get("title") or entry.get("blog_id") or "unknown"
        etree.SubElement(author, atom + "name").text = _xml(name)
        summary = plain_text(entry.get("summary"), 1000)
        if summary:
            etree.SubElement(node, atom + "summary", type="text").text = _xml(summary)
        if blog:
            source = etree.SubElement(node, atom + "source")
            etree.SubElement(source, atom + "title").text = _xml(
                blog.get("title") or blog["blog_id"]
            )
            home = web_url(blog.get("url"))
            if home:
                etree.SubElement(source, atom + "link", href=home)
    out.write(etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))
    return len(entries)


def write_json_feed(
    entries: Sequence[Mapping[str, Any]],
    blogs: Mapping[str, Mapping[str, Any]],
    out: IO[bytes],
    *,
    title: str,
    base_url: str = "",
    self_name: str = "river.json",
) -> int:
    """JSON Feed 1.1 of ``entries``; returns the items."""
    items = []
    for entry in entries:
        blog = blogs.get(entry.get("blog_id") or "", {})
        item: dict[str, Any] = {
            "id": entry_id(entry),
            "title": entry_title(entry),
            "content_text": plain_text(entry.get("summary"), 1000),
            "date_published": entry["date"] or _EPOCH,
        }
        link = web_url(entry.get("link"))
        if link:
            item["url"] = link
        modified = iso(iso_utc(entry.get("updated")))
        if modified:
            item["date_modified"] = modified
        name = entry.get("author") or blog.get("title") or entry.get("blog_id")
        if name:
            item["authors"] = [{"name": name}]
        if blog:
            item["_blogfeeds"] = {"blog_id": blog["blog_id"], "blog_url": web_url(blog.get("url"))}
        items.append(item)
    feed: dict[str, Any] = {"version": JSON_FEED_VERSION, "title": title}
    if base_url:
        feed["home_page_url"] = _link(base_url, "river.html")
        feed["feed_url"] = _link(base_url, self_name)
    feed["items"] = items
    # A lone surrogate (a feed's broken escape) cannot be UTF-8: it is written as "?".
    out.write(json.dumps(feed, ensure_ascii=False, indent=1).encode("utf-8", "replace"))
    return len(items)
