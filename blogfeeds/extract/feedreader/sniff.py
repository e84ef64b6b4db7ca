"""Is this body a feed? Decided from the bytes alone, with the encoding to read them in.

:func:`sniff_feed` never looks at the status or ``Content-Type`` (servers label feeds
``text/html``, ``text/plain`` or nothing at all, and soft-404 sites answer 200 with HTML
everywhere). After a byte-order mark, whitespace, the XML declaration, other processing
instructions (``<?xml-stylesheet?>``), comments and a ``DOCTYPE``, the root element must be
``rss`` (RSS 0.9x/2.0, RSS Advisory Board), ``rdf:RDF`` carrying the RSS 1.0 or 0.90 namespace
(a bare RDF document is not a feed) or ``feed`` (Atom 1.0, RFC 4287; Atom 0.3); or the body is
a JSON object whose ``version`` starts with ``https://jsonfeed.org/version/`` (JSON Feed
1.0/1.1). A feed with zero items is still a feed.

Text is decoded (:func:`feed_encoding`) with the byte-order mark (or XML 1.0 Appendix F
autodetection of BOM-less UTF-16/32), then the XML declaration's encoding, then the HTTP
charset, then UTF-8; legacy Chinese labels (``gb2312``, ``gbk``) decode as ``gb18030``, their
superset (w3lib's label table), so GBK feeds keep their titles.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from w3lib.encoding import http_content_type_encoding, read_bom, resolve_encoding

from blogfeeds.extract.untrusted_json import loads_untrusted

SNIFF_BYTES = 256 * 1024
"""How much of the body is scanned for the root element (XSLT preambles, long comments)."""

_XML_DECL_ENCODING = re.compile(rb"^\s*<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._:-]+)")
# XML 1.0 Appendix F: "<?" (or "<") in UTF-32/UTF-16 without a byte-order mark.
_XML_AUTODETECT = (
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\x00<\x00", "utf-16-be"),
    (b"<\x00", "utf-16-le"),
)
_NAME = re.compile(r"[A-Za-z_][\w.:-]*")
_RSS1_NAMESPACES = ("purl.org/rss/1.0", "my.netscape.com/rdf/simple/0.9")
_JSON_FEED_VERSION = re.compile(r"^https?://jsonfeed\.org/version/", re.IGNORECASE)
_ROOTS = {"rss": "rss", "feed": "atom", "rdf": "rdf"}
_HTML_START = re.compile(
    rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)
_HTML_ANYWHERE = re.compile(rb"<(?:html|body|head)[\s>]", re.I)


@dataclass(frozen=True)
class FeedSniff:
    """What :func:`sniff_feed` found (all empty: nothing, the body is no feed by its root)."""

    format: str = ""
    """``"rss"``, ``"atom"``, ``"rdf"`` (RSS 1.0/0.90) or ``"json"`` (JSON Feed); for a body
    the sniffer refused that feedparser still reads, feedparser's version name (``"atom10"``,
    ...) or ``"loose"`` (CDF, unknown roots)."""
    root: str = ""
    """The root element as written (``"rss"``, ``"rdf:RDF"``, ``"feed"``) or ``"{}"``; ``""``
    when the sniffer refused the body."""
    version: str = ""
    """RSS ``version`` attribute, the JSON Feed version URL, or ``""``."""
    encoding: str = ""
    """The encoding the body was decoded with (Python codec name, e.g. ``"gb18030"``)."""
    data: Any = field(default=None, compare=False, repr=False)
    """The JSON Feed object, parsed once here (None for XML)."""


def feed_encoding(body: bytes, content_type: str = "") -> str:
    """The encoding to decode a feed body with (see the module docstring for the order)."""
    bom = read_bom(body)
    if bom[0]:
        return str(bom[0])
    for prefix, codec in _XML_AUTODETECT:
        if body.startswith(prefix):
            return codec
    declared = _XML_DECL_ENCODING.match(body[:512])
    if declared:
        enc = _text_codec(resolve_encoding(declared.group(1).decode("ascii")))
        # A UTF-16/32 declaration without a BOM on an ASCII-compatible body is a lie.
        if enc and not enc.startswith(("utf-16", "utf-32")):
            return enc
    return _text_codec(http_content_type_encoding(content_type or None)) or "utf-8"


def _text_codec(name: str | None) -> str | None:
    """``name`` when it is a codec that decodes bytes to text; None for an unknown name and
    for the bytes-to-bytes codecs Python also finds by name (``encoding="uu"``, ``base64``,
    ``zlib``: ``bytes.decode`` refuses them with LookupError)."""
    if not name:
        return None
    try:
        b"x".decode(name)  # b"" would not ask the codec
    except LookupError:
        return None
    except UnicodeError:  # a text codec that cannot read one byte alone (UTF-16, UTF-32)
        pass
    return str(name)


def decode(body: bytes, encoding: str) -> str:
    """``body`` decoded with ``encoding`` (bad bytes replaced), without a byte-order mark."""
    text = body.decode(encoding, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def _skip_prolog(text: str) -> int:
    """Index of the root element's ``<`` (or of a non-markup character) after the prolog."""
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if text.startswith("<?", i):
            end = text.find("?>", i + 2)
            if end < 0:
                return n
            i = end + 2
        elif text.startswith("<!--", i):
            end = text.find("-->", i + 4)
            if end < 0:
                return n
            i = end + 3
        elif text.startswith("<!", i):  # DOCTYPE, possibly with an internal subset
            bracket, end = text.find("[", i), text.find(">", i)
            if 0 <= bracket < end:
                close = text.find("]", bracket)
                end = text.find(">", close) if close >= 0 else -1
            if end < 0:
                return n
            i = end + 1
        else:
            return i
    return n


def sniff_feed(body: bytes, content_type: str = "") -> FeedSniff | None:
    """Whether ``body`` is a feed, by its root element or JSON Feed version; else ``None``.

    ``content_type`` (the HTTP header value) is used only for its charset. Junk before the XML
    declaration (a stray PHP notice, the most common feed parse error on the web) is skipped
    when ``<?xml`` follows within the first 1024 characters.
    """
    if not body:
        return None
    encoding = feed_encoding(body, content_type)
    text = decode(body[:SNIFF_BYTES], encoding)
    start = _skip_prolog(text)
    if start < len(text) and text[start] not in "<{":
        decl = text.find("<?xml", start, start + 1024)
        if decl < 0:
            return None
        start = _skip_prolog(text[decl:]) + decl
    if start >= len(text):
        return None
    if text[start] == "{":
        return _sniff_json(body, encoding)
    name = _NAME.match(text, start + 1)
    if name is None:
        return None
    root = name.group(0)
    local = root.rsplit(":", 1)[-1].lower()
    fmt = _ROOTS.get(local)
    if fmt is None:
        return None
    tag_end = text.find(">", start)
    head = text[start : tag_end if tag_end > 0 else start + 2048]
    if fmt == "rdf" and not any(ns in text for ns in _RSS1_NAMESPACES):
        return None
    version = ""
    if fmt == "rss":
        match = re.search(r"\bversion\s*=\s*[\"']([^\"']*)", head)
        version = match.group(1) if match else ""
    return FeedSniff(format=fmt, root=root, version=version, encoding=encoding)


def _sniff_json(body: bytes, encoding: str) -> FeedSniff | None:
    data = loads_untrusted(decode(body, encoding))
    version = data.get("version") if isinstance(data, dict) else None
    if not isinstance(version, str) or not _JSON_FEED_VERSION.match(version):
        return None
    return FeedSniff(format="json", root="{}", version=version, encoding=encoding, data=data)


def looks_html(body: bytes) -> bool:
    """Whether a body that is no feed is a web page (a doctype or an ``html``/``head``/
    ``body`` tag near the start)."""
    head = body[:4096].lstrip(b"\xef\xbb\xbf")
    return bool(_HTML_START.match(head) or _HTML_ANYWHERE.search(head))
