"""What a page lets a crawler do with it: robots meta tags and ``X-Robots-Tag``.

:func:`robots_directives` reads ``<meta name="robots">`` (and ``<meta name="blogfeeds">``, our
user-agent token) and the ``X-Robots-Tag`` response header, as specified by the Robots
Exclusion Protocol's page-level companion (Google's "Robots meta tag, data-nosnippet and
X-Robots-Tag specifications"; ``none`` = ``noindex, nofollow``). Directives scoped to another
user agent (``googlebot: noindex``) do not apply.
"""

from __future__ import annotations

from dataclasses import dataclass

from blogfeeds.extract.page import Page

USER_AGENT_TOKEN = "blogfeeds"
"""Our product token in robots meta names and ``X-Robots-Tag`` scopes."""

_OTHER_VALUED = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)


@dataclass(frozen=True)
class RobotsDirectives:
    """Page-level robots directives that apply to us.

    ``noindex``: do not keep the page's content (title, abstract, feeds); ``nofollow``: do not
    follow its links (no friends are recorded or fetched from it); ``sources``: where they came
    from (``meta``, ``x-robots-tag``), for the log.
    """

    noindex: bool = False
    nofollow: bool = False
    sources: tuple[str, ...] = ()


def _apply(tokens: list[str], found: set[str]) -> bool:
    """Add noindex/nofollow from directive ``tokens`` to ``found``; True if any applied."""
    hit = False
    for token in tokens:
        word = token.strip().lower()
        if word == "none":
            found.update(("noindex", "nofollow"))
            hit = True
        elif word in ("noindex", "nofollow"):
            found.add(word)
            hit = True
    return hit


def _header_tokens(value: str) -> list[str]:
    """``X-Robots-Tag`` tokens that apply to us: unscoped ones, and those scoped to our token."""
    applies = True
    out: list[str] = []
    for raw in value.split(","):
        token = raw.strip()
        name, colon, rest = token.partition(":")
        if colon and name.strip().lower() not in _OTHER_VALUED:
            applies = name.strip().lower() in (USER_AGENT_TOKEN, "*")
            token = rest.strip()
        if applies and token:
            out.append(token)
    return out


def robots_directives(page: Page) -> RobotsDirectives:
    """The noindex/nofollow directives of ``page`` (meta tags and ``X-Robots-Tag``)."""
    found: set[str] = set()
    sources: list[str] = []
    for meta in page.tree.iter("meta"):
        name = (meta.get("name") or "").strip().lower()
        if name in ("robots", USER_AGENT_TOKEN) and _apply(
            (meta.get("content") or "").split(","), found
        ):
            sources.append("meta")
    header = page.header("X-Robots-Tag")
    if header and _apply(_header_tokens(header), found):
        sources.append("x-robots-tag")
    return RobotsDirectives(
        noindex="noindex" in found, nofollow="nofollow" in found, sources=tuple(sources)
    )
