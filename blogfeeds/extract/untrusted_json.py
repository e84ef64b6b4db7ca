"""JSON from bytes anyone serves (JSON Feeds, ``links.json`` friend lists).

:func:`json.loads` raises :class:`ValueError` on malformed text and :class:`RecursionError`
on deep nesting (``[[[[...`` 100,000 levels): both mean one bad input, never a failed
extraction. :func:`loads_untrusted` is the one place extraction parses such JSON.
"""

from __future__ import annotations

import json
from typing import Any


def loads_untrusted(text: str) -> Any | None:
    """The JSON value of ``text``; None when it is not JSON or too deeply nested to parse
    (a JSON ``null`` also gives None: no caller wants it)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
