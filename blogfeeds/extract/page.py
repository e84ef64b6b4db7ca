"""Decode and parse a fetched page once; every extractor reads the same :class:`Page`.

Decoding follows the HTML Living Standard's order as w3lib implements it: the HTTP
``Content-Type`` charset, then a byte-order mark, then a ``<meta>`` charset, then detection.
Legacy Chinese labels (``gb2312``, ``gbk``) decode as ``gb18030``, their superset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urljoin

import lxml.etree
import lxml.html
from w3lib.encoding import html_to_unicode

_PARSER = lxml.html.HTMLParser(recover=True, remove_comments=True, remove_pis=True)


class DecodeError(ValueError):
    """The body could not be decoded or parsed as HTML."""


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

    def absolute(self, href: str) -> str:
        """Resolve ``href`` (whitespace-stripped) against the page's base URL."""
        return urljoin(self.base_url, href.strip())

    def header(self, name: str) -> str:
        """A response header value by case-insensitive name, ``""`` when absent."""
        lname = name.lower()
        for key, value in self.headers.items():
            if key.lower() == lname:
                return value
        return ""


def decode_html(body: bytes, content_type: str = "") -> tuple[str, str]:
    """Decode an HTML body; return ``(encoding, text)``.

    ``content_type`` is the HTTP ``Content-Type`` header value (may be empty).
    """
    encoding, text = html_to_unicode(content_type or None, body)
    return encoding, text


def parse_page(url: str, body: bytes | str, headers: Mapping[str, str] | None = None) -> Page:
    """Decode ``body`` and parse it into a :class:`Page`.

    ``url`` is the final URL of the response; ``headers`` the response headers (str → str).
    Raises :class:`DecodeError` when the body is empty or yields no HTML tree.
    """
    headers = dict(headers or {})
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
    if isinstance(body, str):
        encoding, text = "utf-8", body
    else:
        encoding, text = decode_html(body, content_type)
    # lxml refuses str input that carries an XML encoding declaration, and NUL bytes.
    cleaned = text.replace("\x00", "")
    if cleaned.lstrip().startswith("<?xml"):
        cleaned = cleaned.split("?>", 1)[-1]
    if not cleaned.strip():
        raise DecodeError(f"empty document at {url}")
    try:
        tree = lxml.html.document_fromstring(cleaned, parser=_PARSER)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise DecodeError(f"cannot parse HTML at {url}: {exc}") from exc
    base_url = url
    for href in tree.xpath("//base/@href")[:1]:
        if href.strip():
            base_url = urljoin(url, href.strip())
    return Page(
        url=url, base_url=base_url, encoding=encoding, text=text, tree=tree, headers=headers
    )
