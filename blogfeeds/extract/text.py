"""Text as extraction stores it: no control characters, whitespace collapsed.

Titles, names, abstracts, generators and feed and entry fields come from pages and feeds
anyone writes, and end in the database, CSV exports and terminals (``scrapy stats``, the crawl
summary), where a C0 or C1 control character (``ESC``, ``BEL``, backspace) is an escape
sequence. :func:`strip_controls` drops them; the ones Python counts as whitespace (form feed,
vertical tab, the information separators, ``NEL``) become a space, tab, newline and carriage
return stay (a summary keeps its lines). :func:`collapse` is the one-line form every short
field is stored in.
"""

from __future__ import annotations

import re

_KEEP = "\t\n\r"
_CONTROLS: dict[int, str | None] = {
    c: (" " if chr(c).isspace() else None)
    for c in (*range(0x20), *range(0x7F, 0xA0))
    if chr(c) not in _KEEP
}
_ANY_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Any character of :data:`_CONTROLS`: most texts hold none, and a scan for one is several
times cheaper than ``str.translate`` of a text that is not ASCII (a dictionary look-up per
character)."""


def strip_controls(text: str) -> str:
    """``text`` without C0/C1 control characters (whitespace ones become a space; tab,
    newline and carriage return are kept)."""
    return text.translate(_CONTROLS) if _ANY_CONTROL.search(text) else text


def collapse(text: str) -> str:
    """``text`` without control characters, every run of whitespace (Unicode, including
    NBSP) collapsed to one space, stripped."""
    if _ANY_CONTROL.search(text):
        text = text.translate(_CONTROLS)
    return " ".join(text.split())


def digits_int(text: str | None, cap: int) -> int | None:
    """``text`` (whitespace stripped) as a whole number when it is ASCII digits only, at most
    ``cap``; None otherwise. ``str.isdigit`` and ``\\d`` accept digits ``int()`` refuses
    (``²``) or reads (``١٢``), and a number of thousands of digits is beyond ``int()``'s limit
    and any float: a header or feed field is read by this, never by ``int()``."""
    text = (text or "").strip()
    if not text or not text.isascii() or not text.isdigit():
        return None
    digits = text.lstrip("0") or "0"
    return cap if len(digits) > len(str(cap)) else min(int(digits), cap)
