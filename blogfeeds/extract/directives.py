"""What a page lets a crawler do with it: robots meta tags, ``X-Robots-Tag``, crawl-safe URLs.

- :func:`robots_directives` reads ``<meta name="robots">`` (and ``<meta name="blogfeeds">``, our
  user-agent token) and the ``X-Robots-Tag`` response header, as specified by the Robots
  Exclusion Protocol's page-level companion (Google's "Robots meta tag, data-nosnippet and
  X-Robots-Tag specifications"; ``none`` = ``noindex, nofollow``). Directives scoped to another
  user agent (``googlebot: noindex``) do not apply.
- :func:`crawl_url` is the form of a URL the crawler schedules: credentials dropped,
  session-id and tracking query parameters removed, the rest canonicalised with w3lib's
  ``canonicalize_url`` (sorted query, normalised percent-encoding, no fragment), so the same page
  behind different session ids is one URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from w3lib.url import canonicalize_url, url_query_cleaner

from blogfeeds.extract.page import Page

USER_AGENT_TOKEN = "blogfeeds"
"""Our product token in robots meta names and ``X-Robots-Tag`` scopes."""

_OTHER_VALUED = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)

SESSION_PARAMETERS = (
    "phpsessid",
    "jsessionid",
    "sid",
    "sessionid",
    "session_id",
    "aspsessionid",
    "cfid",
    "cftoken",
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_term",
    "utm_content",
    "fbclid",
    "gclid",
    "spm",
)
"""Query parameters dropped by :func:`crawl_url` (compared case-insensitively): session ids
and click/campaign trackers, which make one page look like endless distinct URLs."""

_PATH_SESSION = re.compile(r";(?:jsessionid|phpsessid|sid)=[^/?#]*", re.IGNORECASE)


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


_LONE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def strip_credentials(url: str) -> str:
    """``url`` without ``user:password@`` (the rest untouched)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


_TAB_NEWLINE = {ord("\t"): None, ord("\n"): None, ord("\r"): None}


def crawl_url(url: str) -> str:
    """``url`` as the crawler schedules it (module doc); unchanged when it is not http(s).

    Raises nothing: a URL w3lib cannot canonicalise is returned with only credentials dropped.
    """
    # a URL parser drops every ASCII tab and newline first (WHATWG URL Standard): so must we,
    # or "?\nPHPSESSID" escapes the session filter once and is caught the next time
    url = url.translate(_TAB_NEWLINE)
    if not url.lower().startswith(("http://", "https://")):
        return url
    try:
        url = strip_credentials(url)
        url = _PATH_SESSION.sub("", url)
        if "?" in url:
            keys = {k.lower() for k in SESSION_PARAMETERS}
            names = {
                part.split("=", 1)[0]
                for part in url.split("?", 1)[1].split("#", 1)[0].split("&")
                if part.split("=", 1)[0].lower() in keys
            }
            if names:
                url = url_query_cleaner(url, sorted(names), remove=True, keep_fragments=True)
        # A "%" that starts no escape is a literal "%" (%25): w3lib would otherwise read
        # "%2%31" as "%21" and, canonicalising again, as "!" (another URL).
        return canonicalize_url(_LONE_PERCENT.sub("%25", url))
    except (ValueError, UnicodeError):
        return url
