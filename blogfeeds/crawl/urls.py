"""The URLs the crawl schedules: their one form, and whether one may be scheduled at all.

:func:`crawl_url` drops credentials, session-id and tracking query parameters and canonicalises
the rest with w3lib's ``canonicalize_url`` (sorted query, normalised percent-encoding, no
fragment), so the same page behind different session ids is one URL. :func:`check_url` says why
a URL cannot be a blog to visit (a seed, a friend link), in the words the log and
``scrapy inspect`` use.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from w3lib.url import canonicalize_url, url_query_cleaner

from blogfeeds.extract.identity import blog_id

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

_HOST = re.compile(r"[\w-]+(\.[\w-]+)*(:\d+)?")
"""A host name, and a port: what a URL without its scheme starts with."""

_PATH_SESSION = re.compile(r";(?:jsessionid|phpsessid|sid)=[^/?#]*", re.IGNORECASE)

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


def check_url(url: str) -> str | None:
    """Why ``url`` cannot be a seed (``"not an http(s) URL: ..."``), or ``None`` when it can.

    A seed is an absolute ``http``/``https`` URL with a host, a valid port, no whitespace and no
    U+FFFD (what a decoder puts in place of bytes it could not read), whose host a host may
    hold (:func:`blogfeeds.extract.identity.valid_host`): it has a blog identity.
    """
    if not url:
        return "empty URL"
    if any(ch.isspace() for ch in url):
        return f"URL contains whitespace: {url!r}"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        return f"invalid URL {url!r}: {exc}"
    if parts.scheme.lower() not in ("http", "https"):
        # "alpha.test:8001" reads as scheme "alpha.test": a host (and port) before any "/"
        head = url.partition("/")[0]
        hint = " (add https://)" if ("." in head or ":" in head) and _HOST.fullmatch(head) else ""
        return f"not an http(s) URL: {url!r}{hint}"
    if not parts.hostname:
        return f"URL has no host: {url!r}"
    if "\ufffd" in url:
        return f"URL holds U+FFFD, the mark of text that could not be decoded: {url!r}"
    try:
        blog_id(url)
    except ValueError as exc:
        return str(exc)
    return None
