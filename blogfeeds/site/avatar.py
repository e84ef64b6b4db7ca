"""A blog's avatar on the site: a placeholder drawn from its name, never an address elsewhere.

The site promises no network, so a page shows no icon from another host. The placeholder is
the first letter or digit of the blog's title (else of its id) on a colour whose hue comes from
the blog id (CRC-32 modulo 360), so a blog keeps its colour on every page and in every build.
"""

from __future__ import annotations

import zlib
from typing import Any

from markupsafe import Markup, escape


def avatar(blog_id: str, title: str | None = None) -> dict[str, Any]:
    """``{"letter": "B", "hue": 213}`` for the blog (see the module docstring)."""
    name = " ".join((title or "").split()) or blog_id
    letter = next((c for c in name if c.isalnum()), "?").upper()
    return {"letter": letter, "hue": zlib.crc32(blog_id.encode("utf-8", "replace")) % 360}


def face(blog_id: str, title: str | None = None) -> Markup:
    """The avatar as HTML: ``<span class="avatar" style="--hue: 213">B</span>``."""
    a = avatar(blog_id, title)
    return Markup(
        f'<span class="avatar" style="--hue: {a["hue"]}" aria-hidden="true">'
        f"{escape(a['letter'])}</span>"
    )
