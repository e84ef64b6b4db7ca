"""Seed lists for ``scrapy crawl blogs -a start_urls=URL,URL -a seeds=FILE``.

A seeds file is either plain text (one URL a line) or OPML 1.0/2.0
(http://opml.org/spec2.opml); the formats: docs/crawling.md. Bad seeds never stop the others
from loading: each becomes a :class:`SeedError` naming the file and line. OPML is parsed by lxml
without network access or entity expansion; a malformed file is reported and then read in
lxml's recovery mode so that what can be read still loads.

Encodings: a byte order mark decides (UTF-8, UTF-16 or UTF-32, read by
:func:`w3lib.encoding.read_bom`); a text file without one is UTF-8, read line by line: a line
whose URL is not UTF-8 is a :class:`SeedError` with its line and column and is skipped (bytes
that do not decode inside a comment are ignored with the comment). Nothing is guessed: a URL
decoded in the wrong encoding would seed a different host. OPML files follow XML's rules (BOM,
then ``<?xml encoding=...?>``, then UTF-8); a URL that only decodes in recovery mode (it holds
U+FFFD) is a bad seed.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import lxml.etree
from w3lib.encoding import read_bom

from blogfeeds.crawl.urls import check_url

_INLINE_COMMENT = re.compile(r"\s+#.*$")
_OPML_SUFFIXES = (".opml", ".xml")
_UNDECODED = "seeds-undecoded"
"""Decoding error handler: each byte that does not decode becomes U+DC00 + its value, a lone
surrogate no strict UTF decoder ever yields (Python's ``surrogateescape``, for every byte and
every codec), so that the line it is on can be reported and the rest of the file still read."""
_UNDECODED_CHAR = re.compile("[\udc00-\udcff]")


def _mark_undecoded(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "".join(chr(0xDC00 + b) for b in exc.object[exc.start : exc.end]), exc.end


codecs.register_error(_UNDECODED, _mark_undecoded)


@dataclass(frozen=True)
class Seed:
    """A blog to start from."""

    url: str
    """Absolute http(s) URL of the blog's home page, as written (whitespace stripped)."""
    feed_url: str | None = None
    """A feed the seed list says the blog has (OPML ``xmlUrl``), or ``None``."""
    title: str = ""
    """The blog's name in the seed list (OPML ``title``, else ``text``), or ``""``."""
    source: str = ""
    """Where the seed came from: ``"start_urls"``, ``"seeds.txt:12"``, ``"blogs.opml:3"``."""


@dataclass(frozen=True)
class SeedError:
    """A seed that could not be used, or a seeds file that could not be read (fully)."""

    source: str
    """``"start_urls"`` or the seeds file path as given."""
    line: int | None
    """1-based line in the file (for OPML, the line of the ``<outline>``), or ``None``."""
    message: str

    @property
    def where(self) -> str:
        """``"source:line"``, or ``source`` alone when there is no line."""
        return f"{self.source}:{self.line}" if self.line is not None else self.source

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def _key(url: str) -> tuple[str, str, str, str]:
    """Deduplication key: scheme and host case-insensitive, empty path = ``/``, no fragment."""
    parts = urlsplit(url)
    return (parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query)


def _root(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc}/"


def _from_start_urls(start_urls: str) -> Iterator[Seed | SeedError]:
    for raw in start_urls.split(","):
        url = raw.strip()
        if not url:
            continue
        problem = check_url(url)
        if problem:
            yield SeedError("start_urls", None, problem)
        else:
            yield Seed(url=url, source="start_urls")


def _from_text(path: str, text: str, encoding: str) -> Iterator[Seed | SeedError]:
    """Seeds of ``text`` decoded from ``encoding`` with the :data:`_UNDECODED` error handler."""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _INLINE_COMMENT.sub("", raw).strip()
        if not line or line.startswith("#"):
            continue
        bad = _UNDECODED_CHAR.search(line)
        if bad:
            byte = ord(bad.group()) - 0xDC00
            column = raw.index(line) + bad.start() + 1
            yield SeedError(
                path,
                number,
                f"not {encoding.upper()} text: byte 0x{byte:02X} at character {column} "
                "(save the file as UTF-8; the line is skipped)",
            )
            continue
        if len(line.split()) > 1:
            yield SeedError(path, number, f"expected one URL a line, got {line!r}")
            continue
        problem = check_url(line)
        if problem:
            yield SeedError(path, number, problem)
        else:
            yield Seed(url=line, source=f"{path}:{number}")


def _parse_opml(path: str, data: bytes) -> tuple[lxml.etree._Element | None, list[SeedError]]:
    errors = []
    options = {"resolve_entities": False, "no_network": True, "load_dtd": False}
    try:
        root = lxml.etree.fromstring(data, lxml.etree.XMLParser(**options))
    except lxml.etree.XMLSyntaxError as exc:
        errors.append(SeedError(path, exc.lineno or None, f"malformed OPML: {exc.msg}"))
        try:
            root = lxml.etree.fromstring(data, lxml.etree.XMLParser(recover=True, **options))
        except lxml.etree.XMLSyntaxError:
            root = None
    if root is not None and lxml.etree.QName(root).localname.lower() != "opml":
        errors.append(SeedError(path, root.sourceline, f"not OPML: root element is <{root.tag}>"))
        root = None
    return root, errors


def _from_opml(path: str, data: bytes) -> Iterator[Seed | SeedError]:
    root, errors = _parse_opml(path, data)
    yield from errors
    if root is None:
        return
    for outline in root.iter(lxml.etree.Element):
        if lxml.etree.QName(outline).localname.lower() != "outline":
            continue
        attrs = {str(k).lower(): str(v).strip() for k, v in outline.attrib.items()}
        html_url, xml_url = attrs.get("htmlurl", ""), attrs.get("xmlurl", "")
        if not html_url and not xml_url:
            continue  # a category (or an outline of another type)
        line = outline.sourceline
        source = f"{path}:{line}" if line else path
        name = attrs.get("title") or attrs.get("text") or ""
        feed_url: str | None = None
        if xml_url:
            problem = check_url(xml_url)
            if problem:
                yield SeedError(path, line, f"bad xmlUrl: {problem}")
            else:
                feed_url = xml_url
        if html_url:
            problem = check_url(html_url)
            if problem is None:
                yield Seed(url=html_url, feed_url=feed_url, title=name, source=source)
                continue
            yield SeedError(path, line, f"bad htmlUrl: {problem}")
        if feed_url:  # no usable htmlUrl: start from the feed host's root
            yield Seed(url=_root(feed_url), feed_url=feed_url, title=name, source=source)


def _is_opml(path: str, data: bytes, encoding: str) -> bool:
    if path.lower().endswith(_OPML_SUFFIXES):
        return True
    head = data[:64].decode(encoding, "ignore").lstrip("\ufeff \t\r\n")[:5].lower()
    return head.startswith(("<?xml", "<opml"))


def _from_file(path: str) -> Iterator[Seed | SeedError]:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        yield SeedError(path, None, f"cannot read seeds file: {exc.strerror or exc}")
        return
    encoding, bom = read_bom(data)
    if _is_opml(path, data, encoding or "utf-8"):
        yield from _from_opml(path, data)
        return
    encoding = encoding or "utf-8"
    text = data[len(bom or b"") :].decode(encoding, _UNDECODED)
    yield from _from_text(path, text, encoding.removesuffix("-le").removesuffix("-be"))


def load_seeds(
    start_urls: str | None = None, seeds: str | None = None
) -> tuple[list[Seed], list[SeedError]]:
    """Read the spider's seed arguments: ``start_urls`` (comma-separated URLs) and ``seeds``
    (a path to a text or OPML seeds file, see the module docstring).

    Returns the seeds, ``start_urls`` first then the file in file order, deduplicated by URL
    (scheme and host case-insensitive, ``http://a.example`` = ``http://a.example/``) keeping
    the first, and the errors in the same order. Never raises on bad input.
    """
    found: list[Seed] = []
    errors: list[SeedError] = []
    seen: set[tuple[str, str, str, str]] = set()
    sources = []
    if start_urls:
        sources.append(_from_start_urls(start_urls))
    if seeds:
        sources.append(_from_file(seeds))
    for source in sources:
        for entry in source:
            if isinstance(entry, SeedError):
                errors.append(entry)
                continue
            key = _key(entry.url)
            if key not in seen:
                seen.add(key)
                found.append(entry)
    return found, errors
