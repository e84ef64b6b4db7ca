"""Decode and parse a fetched page once; every extractor reads the same :class:`Page`.

Decoding (:func:`decode_html`) follows the HTML Living Standard's "determining the character
encoding" (§13.2.3.2), w3lib first, then the steps it leaves to the user agent: (1) a byte-order
mark, which wins over everything, as the standard says; (2) the HTTP ``Content-Type`` charset;
(3) a ``<meta charset>`` / ``http-equiv`` or XML declaration: w3lib's prescan of the first 4096
bytes, then every ``<meta>`` of the ``<head>`` (within :data:`HEAD_SCAN_BYTES`), since pages
with long ``<head>``s declare it late; (4) UTF-16/UTF-32 without a BOM, recognised by the NUL
bytes ASCII markup leaves in them; (5) valid UTF-8; (6) the per-TLD fallback of
:data:`TLD_ENCODINGS` (the locale defaults of the standard's §13.2.3.3 table, as Apache Nutch
planned) when the bytes decode cleanly with it; (7) charset-normalizer; (8) UTF-8 with
replacement characters. Labels go through w3lib's ``resolve_encoding`` (the WHATWG Encoding
Standard's supersets: ``gb2312``/``gbk`` → ``gb18030``, ``shift_jis`` → ``cp932``, ...). A
declared Japanese encoding that fails on the bytes is retried as its JIS X 0213 variant
(``shift_jis_2004``, ``euc_jis_2004``), which real Shift_JIS pages often are.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import lxml.etree
import lxml.html
from charset_normalizer import from_bytes
from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
    to_unicode,
)

from blogfeeds.extract.settings import PAGE_MAX_ELEMENTS, PAGE_MAX_LINKS

# Every element an ``HtmlElement`` through lxml's C-level default lookup: lxml.html's own lookup
# (``FormElement``, ``InputElement``, ... by tag) is a Python call for every element proxy, and
# the extractors and trafilatura create hundreds of thousands of them (about 1 µs each); nothing
# here uses the form classes' extra methods.
_LOOKUP = lxml.etree.ElementDefaultClassLookup(
    element=lxml.html.HtmlElement,
    comment=lxml.html.HtmlComment,
    pi=lxml.html.HtmlProcessingInstruction,
    entity=lxml.html.HtmlEntity,
)
_PARSER = lxml.html.HTMLParser(recover=True, remove_comments=True, remove_pis=True)
_PARSER.set_element_class_lookup(_LOOKUP)
_LOCAL = threading.local()  # a parser per thread: pages are parsed in the crawl's worker threads


def _parser() -> lxml.html.HTMLParser:
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = lxml.html.HTMLParser(
            recover=True, remove_comments=True, remove_pis=True
        )
        parser.set_element_class_lookup(_LOOKUP)
    return parser


class DecodeError(ValueError):
    """The body could not be decoded or parsed as HTML."""


@dataclass(frozen=True)
class PageLimits:
    """How much of one page the extractors read: the first ``max_elements`` elements and the
    first ``max_links`` ``<a>`` elements in document order (0 = no bound). The rest of the page
    is not parsed, so one page's extraction costs bounded time and memory whatever its size:
    every extractor works element by element, about 20 µs for an ``<a>``.
    """

    max_elements: int = PAGE_MAX_ELEMENTS
    max_links: int = PAGE_MAX_LINKS


_CLASSES = lxml.etree.XPath("//@class", smart_strings=False)

ELEMENTS = "elements"
LINKS = "links"
"""What :attr:`Page.truncated` names: the bound of :class:`PageLimits` a page reached."""


@dataclass(frozen=True)
class Page:
    """A decoded, parsed HTML page.

    ``url`` is the final URL after redirects; ``base_url`` is ``<base href>`` resolved against
    it (or ``url`` when there is none): every relative link is resolved against ``base_url``.
    """

    url: str
    base_url: str
    encoding: str
    text: str
    tree: lxml.html.HtmlElement
    headers: Mapping[str, str]
    truncated: tuple[str, ...] = ()
    """The bounds of ``limits`` the page reached (:data:`ELEMENTS`, :data:`LINKS`): ``tree``
    and ``text`` then hold the page up to that bound only."""
    limits: PageLimits = field(default_factory=PageLimits)
    """The bounds the page was parsed with (a page derived from it is parsed with the same)."""

    def absolute(self, href: str) -> str:
        """Resolve ``href`` (whitespace-stripped) against the page's base URL."""
        return urljoin(self.base_url, href.strip())

    def header(self, name: str) -> str:
        """A response header value by case-insensitive name, ``""`` when absent."""
        return header_value(self.headers, name)

    @functools.cached_property
    def class_names(self) -> frozenset[str]:
        """Every class name an element of the page carries, read once a page: the theme
        rules and the profile skip the selectors that need another
        (:func:`~blogfeeds.extract.css.can_match`)."""
        return frozenset(" ".join(set(_CLASSES(self.tree))).split())


def header_value(headers: Mapping[str, str] | None, name: str) -> str:
    """The value of header ``name`` in ``headers`` (any case), ``""`` when absent."""
    lname = name.lower()
    return next((v for k, v in (headers or {}).items() if k.lower() == lname), "")


HEAD_SCAN_BYTES = 64 * 1024
"""How far into the body step 3 looks for a ``<meta>`` declaration after the first 4096 bytes."""

DETECT_BYTES = 256 * 1024
"""Bytes handed to statistical detection (it samples them; a bigger page adds nothing)."""

TLD_ENCODINGS: dict[str, str] = {
    "cn": "gb18030",
    "tw": "big5",
    "hk": "big5hkscs",
    "mo": "big5hkscs",
    "jp": "shift_jis",
    "kr": "euc-kr",
    **dict.fromkeys(("ru", "by", "ua", "bg", "kz", "kg", "mk", "rs"), "windows-1251"),
    **dict.fromkeys(("cz", "sk", "pl", "hu", "si", "hr"), "iso-8859-2"),
    **dict.fromkeys(("lt", "lv"), "windows-1257"),
    "gr": "iso-8859-7",
    "tr": "windows-1254",
    "il": "windows-1255",
    **dict.fromkeys(("ir", "sa", "eg", "ae", "iq", "sy"), "windows-1256"),
    "th": "windows-874",
    "vn": "windows-1258",
}
"""Encoding assumed for an undeclared, non-UTF-8 page under a country-code TLD."""

_JIS_VARIANTS = {
    "cp932": ("shift_jis_2004", "shift_jisx0213"),
    "shift_jis": ("cp932", "shift_jis_2004", "shift_jisx0213"),
    "euc_jp": ("euc_jis_2004", "euc_jisx0213", "cp932"),
}
_HEAD_END = re.compile(rb"</head\s*>|<body[\s>]", re.IGNORECASE)
_META_OR_XML = re.compile(rb"<!--.*?-->|<meta[\s/][^>]*>|<\?xml\s[^>]*>", re.IGNORECASE | re.DOTALL)


def _codec(name: str | None) -> str | None:
    """A codec name Python knows for a label (w3lib's WHATWG supersets), or None."""
    if not name:
        return None
    resolved = resolve_encoding(name)
    if resolved is None:
        return None
    if resolved in ("utf-16", "utf-32"):  # no BOM left to tell the byte order
        resolved += "-le"
    return resolved


def _clean(body: bytes, encoding: str) -> bool:
    """Whether ``body`` decodes with ``encoding`` without an error."""
    try:
        body.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return False
    return True


def head_declared_encoding(body: bytes) -> str | None:
    """The encoding a ``<meta>`` or XML declaration names anywhere in the ``<head>``
    (w3lib's prescan rules, over the head's meta tags rather than the first 4096 bytes), or
    None. Comments are skipped."""
    found = html_body_declared_encoding(body)
    if found is not None:
        return found
    head = body[:HEAD_SCAN_BYTES]
    end = _HEAD_END.search(head)
    if end is not None:
        head = head[: end.start()]
    tags = [m.group(0) for m in _META_OR_XML.finditer(head) if not m.group(0).startswith(b"<!--")]
    return html_body_declared_encoding(b"\n".join(tags)[:4096]) if tags else None


def sniff_utf16(body: bytes) -> str | None:
    """``utf-16-le``/``-be`` or ``utf-32-le``/``-be`` for BOM-less text whose ASCII markup
    leaves the telltale NUL bytes (WHATWG step "UTF-16 without BOM"), else None."""
    head = body[:1024]
    if len(head) < 8 or head.count(0) < len(head) // 4:
        return None
    if head[1:4] == b"\0\0\0" and head[0]:
        return "utf-32-le"
    if head[:3] == b"\0\0\0" and head[3]:
        return "utf-32-be"
    even, odd = head[0::2].count(0), head[1::2].count(0)
    if odd > 3 * even and odd > len(head) // 4:
        return "utf-16-le"
    if even > 3 * odd and even > len(head) // 4:
        return "utf-16-be"
    return None


def tld_encoding(url: str) -> str | None:
    """The fallback encoding of ``url``'s country-code TLD (:data:`TLD_ENCODINGS`), or None."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return None
    return TLD_ENCODINGS.get(host.rstrip(".").rpartition(".")[2].lower())


def detect_encoding(body: bytes) -> str | None:
    """charset-normalizer's best guess for ``body`` (resolved to a codec), or None."""
    best = from_bytes(body[:DETECT_BYTES]).best()
    return _codec(best.encoding) if best is not None else None


# Where Microsoft's cp932 and the Encoding Standard's Shift_JIS decoder (index-jis0208, which
# JIS X 0213's shift_jis_2004 follows here) map the same JIS X 0208 byte pair differently.
_CP932_VS_JIS = frozenset(
    {
        ("\uff0d", "\u2212"),  # 0x817C minus sign
        ("\uff5e", "\u301c"),  # 0x8160 wave dash
        ("\u2225", "\u2016"),  # 0x8161 double vertical line
        ("\uffe0", "\u00a2"),  # 0x8191 cent sign
        ("\uffe1", "\u00a3"),  # 0x8192 pound sign
        ("\uffe2", "\u00ac"),  # 0x81CA not sign
    }
)


def _shift_jis(body: bytes) -> tuple[str, str]:
    """Shift_JIS as browsers decode it: cp932 (NEC and IBM extensions), except the six JIS X 0208
    pairs :data:`_CP932_VS_JIS` mapped as the Encoding Standard maps them; a body cp932 cannot
    decode is tried as ``shift_jis_2004`` / ``shift_jisx0213``."""
    try:
        text = body.decode("cp932")
    except UnicodeDecodeError:
        for variant in _JIS_VARIANTS["cp932"]:
            if _clean(body, variant):
                return variant, body.decode(variant)
        return "cp932", to_unicode(body, "cp932")
    if not any(ms in text for ms, _ in _CP932_VS_JIS):
        return "cp932", text
    try:
        jis = body.decode("shift_jis_2004")
    except UnicodeDecodeError:
        return "cp932", text
    if len(jis) == len(text) and all(
        a == b or (a, b) in _CP932_VS_JIS for a, b in zip(text, jis, strict=True)
    ):
        return "shift_jis_2004", jis
    return "cp932", text


def _declared(body: bytes, label: str) -> tuple[str, str]:
    """Decode with a declared ``label``; a Japanese label that fails on the bytes falls back to
    the variant that decodes them cleanly."""
    codec = _codec(label) or "utf-8"
    if codec == "cp932":
        return _shift_jis(body)
    if codec in _JIS_VARIANTS and not _clean(body, codec):
        for variant in _JIS_VARIANTS[codec]:
            if _clean(body, variant):
                return variant, body.decode(variant)
    return codec, to_unicode(body, codec)


def decode_html(body: bytes, content_type: str = "", url: str = "") -> tuple[str, str]:
    """Decode an HTML body; return ``(codec name, text)``. Never raises.

    ``content_type`` is the HTTP ``Content-Type`` header value (may be empty); ``url`` (may be
    empty) gives the country-code TLD of the fallback. The steps are in the module docstring;
    undecodable bytes become U+FFFD.
    """
    bom, mark = read_bom(body)
    if bom is not None and mark is not None:
        return bom, to_unicode(body[len(mark) :], bom)
    header = http_content_type_encoding(content_type or None)
    if header is not None and header not in ("utf-16", "utf-32"):
        return _declared(body, header)
    wide = sniff_utf16(body)
    if wide is not None:
        return wide, to_unicode(body, wide)
    declared = header or head_declared_encoding(body)
    if declared is not None and declared not in ("utf-16", "utf-32"):
        return _declared(body, declared)
    if _clean(body, "utf-8"):
        return "utf-8", body.decode("utf-8")
    fallback = _codec(tld_encoding(url))
    if fallback is not None and _clean(body, fallback):
        return _declared(body, fallback)
    detected = detect_encoding(body)
    if detected is not None:
        return _declared(body, detected)
    return "utf-8", to_unicode(body, "utf-8")


def parse_page(
    url: str,
    body: bytes | str,
    headers: Mapping[str, str] | None = None,
    limits: PageLimits | None = None,
) -> Page:
    """Decode ``body`` and parse it into a :class:`Page`, up to ``limits`` (default
    :class:`PageLimits`; :attr:`Page.truncated` says which bound cut it).

    ``url`` is the final URL of the response; ``headers`` the response headers (str → str).
    Raises :class:`DecodeError` when the body is empty or yields no HTML tree.
    """
    limits = limits or PageLimits()
    headers = dict(headers or {})
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    if isinstance(body, str):
        encoding, text = "utf-8", body
    else:
        encoding, text = decode_html(body, content_type, url)
    # lxml refuses str input that carries an XML encoding declaration, and NUL bytes.
    cleaned = text.replace("\x00", "")
    if cleaned.lstrip().startswith("<?xml"):
        cleaned = cleaned.split("?>", 1)[-1]
    if not cleaned.strip():
        raise DecodeError(f"empty document at {url}")
    ended = _early_html_ends(cleaned)
    if ended is not cleaned:
        cleaned = text = ended  # the text parsed: what the tree was built from
    try:
        tree, fed, reached = _bounded_parse(cleaned, limits)
    except (lxml.etree.LxmlError, ValueError) as exc:
        raise DecodeError(f"cannot parse HTML at {url}: {exc}") from exc
    if tree is None:
        raise DecodeError(f"cannot parse HTML at {url}: Document is empty")
    truncated: tuple[str, ...] = ()
    if reached:
        truncated = _truncate(tree, limits) or (reached,)
        text = cleaned[:fed]
    base_url = url
    for href in tree.xpath("//base/@href", smart_strings=False)[:1]:
        if href.strip():
            try:
                base_url = urljoin(url, href.strip())
            except ValueError:  # a malformed page URL or <base href> ("http://[@0"): ignored
                base_url = url
    return Page(
        url=url,
        base_url=base_url,
        encoding=encoding,
        text=text,
        tree=tree,
        headers=headers,
        truncated=truncated,
        limits=limits,
    )


PARSE_CHUNK = 64 * 1024
"""Characters fed to the parser at a time: it stops within one chunk of the bound."""


_HTML_END = re.compile(r"</html\s*>", re.IGNORECASE)


def _early_html_ends(text: str) -> str:
    """``text`` without the ``</html>`` end tags that markup follows. libxml2 drops everything
    after one, where browsers go on filling the body (the HTML standard's "after after body"
    mode): a theme that closes ``</html>`` right after its ``<head>`` (Hexo's zhaoo) would
    leave a page without a body. One ``</html>`` that no markup follows, the usual case,
    stays."""
    ends = _HTML_END.findall(text)
    if not ends or (len(ends) == 1 and "<" not in text[text.rindex(ends[0]) + len(ends[0]) :]):
        return text
    return _HTML_END.sub("", text)


def _bounded_parse(text: str, limits: PageLimits) -> tuple[lxml.html.HtmlElement | None, int, str]:
    """The tree of ``text`` parsed in chunks until the elements or links seen pass ``limits``,
    how many characters were fed, and the bound passed (``""`` when none was). libxml2's push
    parser builds the same tree as parsing the whole string at once (every page of the corpus
    and the cases, fed 4 KB or 64 KB at a time), and stopping it early keeps the memory of a
    huge page to what the bounds read. A page whose ``<`` and ``<a`` cannot reach the bounds
    is parsed at once (the push parser's events cost a Python object per element)."""
    if _within(text, limits):
        root = lxml.etree.fromstring(text, _parser())
        return (None if root is None else root.getroottree().getroot()), len(text), ""
    parser = lxml.etree.HTMLPullParser(
        events=("start",), encoding="utf-8", recover=True, remove_comments=True, remove_pis=True
    )
    parser.set_element_class_lookup(_LOOKUP)
    elements = links = fed = 0
    while fed < len(text):
        parser.feed(text[fed : fed + PARSE_CHUNK].encode("utf-8", "surrogatepass"))
        fed = min(fed + PARSE_CHUNK, len(text))
        for _, el in parser.read_events():
            elements += 1
            links += el.tag == "a"
        reached = _passed(elements, links, limits)
        if reached:
            break
    root = parser.close()
    return (None if root is None else root.getroottree().getroot()), fed, reached


def _within(text: str, limits: PageLimits) -> bool:
    """Whether ``text`` cannot pass ``limits``: every element but a few implied ones (``html``,
    ``head``, ``body``, a ``p`` around stray text) starts at a ``<``, every link at ``<a``."""
    if limits.max_links and text.count("<a") + text.count("<A") > limits.max_links:
        return False
    return not limits.max_elements or 2 * text.count("<") + 8 <= limits.max_elements


def _passed(elements: int, links: int, limits: PageLimits) -> str:
    """The bound of ``limits`` that ``elements`` and ``links`` pass, or ``""``."""
    if limits.max_elements and elements > limits.max_elements:
        return ELEMENTS
    if limits.max_links and links > limits.max_links:
        return LINKS
    return ""


def _truncate(tree: lxml.html.HtmlElement, limits: PageLimits) -> tuple[str, ...]:
    """Cut ``tree`` before its first element past ``limits`` in document order (that element,
    its descendants and everything after it); the bound reached, or ``()``."""
    elements = links = 0
    for el in tree.iter():
        if not isinstance(el.tag, str):
            continue
        elements += 1
        links += el.tag == "a"
        reached = _passed(elements, links, limits)
        if not reached:
            continue
        _cut_from(el)
        return (reached,)
    return ()


def cut_after(el: lxml.html.HtmlElement) -> None:
    """Remove everything after ``el``'s subtree and tail in document order: the following
    siblings of it and of its ancestors, and the ancestors' tails."""
    node = el
    while (parent := node.getparent()) is not None:
        for sibling in list(node.itersiblings()):
            parent.remove(sibling)
        if node is not el:
            node.tail = None
        node = parent


def _cut_from(el: lxml.html.HtmlElement) -> None:
    """Remove ``el`` and everything after it in document order."""
    cut_after(el)
    parent = el.getparent()
    if parent is not None:
        parent.remove(el)
