"""A blog's health from one read of its home page: ok, dead, failing, blocked, parked, moved, empty.

Pure: :func:`assess` is a function of the read (status, headers, body or the failure) and of
what the store knew of the blog (:class:`Known`); it returns a :class:`Health`, the kind and
its evidence in words. The order of the evidence:

- a page of a known kind (``data/page_signs.toml``: parking and for-sale pages, bot walls and
  challenges, geo blocks) answering in the blog's place, whatever the status: ``parked`` or
  ``blocked``;
- a failed read: ``blocked`` when we were refused (robots.txt, HTTP 451), else ``dead`` after
  ``dead_after`` failures in a row ending in one that says the blog is gone (DNS, refused
  connection, TLS, 404/410), else ``failing`` (5xx, timeouts, 429: the host is there);
- an answered page: ``moved`` (a permanent redirect to another blog), ``parked`` (a takeover:
  title, generator, language and feed all changed), ``empty`` (no text), else ``ok``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any

import lxml.etree
import lxml.html

from blogfeeds.extract.page import DecodeError, Page, header_value, parse_page
from blogfeeds.extract.text import collapse

KINDS = ("ok", "dead", "failing", "blocked", "parked", "moved", "empty")
"""Every health a blog can have; ``""`` is a blog never checked."""

SHORT_PAGE_WORDS = 400
"""A page with fewer visible words is a landing page: its text alone can say what it is."""

EMPTY_PAGE_WORDS = 5
"""A page answered with fewer visible words than this shows nothing without JavaScript."""

NOT_THE_BLOG = frozenset({"parked", "blocked"})
"""Kinds of a page that answers in a blog's place (a parking page, a bot wall): not read as the
blog."""

GONE = frozenset({"dns", "unreachable", "tls"})
"""Failure statuses (:mod:`blogfeeds.failures`) that say the host is gone, like 404 and 410."""

GONE_CODES = frozenset({404, 410})


@dataclass(frozen=True)
class Sign:
    """One kind of page (a service's template family), from ``data/page_signs.toml``."""

    name: str
    kind: str
    markup: tuple[re.Pattern[str], ...] = ()
    title: tuple[re.Pattern[str], ...] = ()
    text: tuple[re.Pattern[str], ...] = ()
    header: tuple[tuple[str, re.Pattern[str]], ...] = ()
    statuses: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Known:
    """What a read said of a blog: the store's last answered read, or this one."""

    title: str = ""
    generator: str = ""
    language: str = ""
    feed_url: str = ""


@dataclass(frozen=True)
class Health:
    kind: str
    reason: str
    failures: int = 0
    """Failed reads in a row, this one included (0 when the blog answered)."""
    moved_to: str = ""
    gone: bool = False
    """A failure that says the host is gone (DNS, refused, TLS, 404/410)."""
    sign: str = field(default="", compare=False)
    """The kind of page recognised (``Cloudflare challenge``), when one was."""


def _compile(patterns: list[str]) -> tuple[re.Pattern[str], ...]:
    """One pattern matching any of ``patterns`` (one scan of a page, not one a pattern)."""
    if not patterns:
        return ()
    return (re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE),)


@cache
def _markup_needles() -> tuple[str, ...] | None:
    """A literal every sign's markup pattern holds (lower-cased): a page holding none of them
    matches no markup, and ``in`` finds them far faster than the patterns (a case-blind
    alternation scans a 100 kB page in about 25 ms). None when a pattern has no literal."""
    needles = []
    for sign in _raw_signs():
        for pattern in sign.get("markup", []):
            needle = _literal(pattern)
            if len(needle) < 4:
                return None
            needles.append(needle.lower())
    return tuple(needles)


@cache
def _sign_needles() -> tuple[tuple[tuple[str, ...] | None, tuple[str, ...] | None], ...]:
    """Per sign of :func:`signs`, the literals (case-folded) its markup and its text patterns
    hold, one a pattern: a text holding none of a sign's cannot match its patterns, and
    ``in`` finds them far faster than a case-blind alternation (3 ms on the visible text of a
    short Chinese home page, for every sign). None where a pattern has no literal."""
    return tuple(
        (_needles(raw.get("markup", [])), _needles(raw.get("text", []))) for raw in _raw_signs()
    )


def _needles(patterns: list[str]) -> tuple[str, ...] | None:
    needles = [_literal(pattern) for pattern in patterns]
    if any(len(needle) < 4 for needle in needles):
        return None
    return tuple(_fold(needle) for needle in needles)


def _fold(text: str) -> str:
    """``text`` case-folded, the dotless and the dotted capital I read as ``i``: the two
    characters a case-blind pattern takes for ``i`` that folding keeps apart."""
    return text.casefold().replace("\u0131", "i").replace("\u0307", "")


def _may_hold(folded: str, needles: tuple[str, ...] | None) -> bool:
    """Whether ``folded`` (a case-folded text) may match patterns of which ``needles`` are the
    literals. Folding (:func:`_fold`) is per character and maps the characters a case-blind
    pattern takes as one to the same text (checked over every character), so a match's
    folded text holds its pattern's folded literal."""
    return needles is None or any(needle in folded for needle in needles)


def _literal(pattern: str) -> str:
    """The longest run of plain characters every match of a regular expression holds: escaped
    punctuation counts as itself; classes, groups (alternatives), optional characters and class
    escapes such as ``\\b`` end a run; ``""`` when the pattern has alternatives at its top."""
    runs, run, i, depth = [], "", 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if depth == 0 and not nxt.isalnum():
                run += nxt
            elif depth == 0:
                runs.append(run)
                run = ""
            i += 2
            continue
        if ch == "[":  # a class: one of several characters
            runs.append(run)
            run = ""
            i += 2 if pattern[i + 1 : i + 2] == "]" else 1
            while i < len(pattern) and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif ch == "(":
            depth += 1
            runs.append(run)
            run = ""
        elif ch == ")":
            depth -= 1
        elif depth:
            pass
        elif ch == "|":
            return ""
        elif ch in "?*{":  # the character before may be absent
            runs.append(run[:-1])
            run = ""
            if ch == "{":
                while i < len(pattern) and pattern[i] != "}":
                    i += 1
        elif ch in "+.^$":
            runs.append(run)
            run = ""
        else:
            run += ch
        i += 1
    runs.append(run)
    return max(runs, key=len)


@cache
def _raw_signs() -> tuple[dict[str, Any], ...]:
    text = resources.files("blogfeeds").joinpath("data/page_signs.toml").read_text("utf-8")
    return tuple(tomllib.loads(text)["sign"])


@cache
def signs() -> tuple[Sign, ...]:
    """The kinds of page of ``data/page_signs.toml``, in file order."""
    out = []
    for raw in _raw_signs():
        if raw["kind"] not in ("parked", "blocked"):
            raise ValueError(f"page sign {raw['name']!r}: kind must be parked or blocked")
        headers = []
        for entry in raw.get("header", []):
            name, _, pattern = entry.partition(":")
            headers.append((name.strip().lower(), re.compile(pattern.strip(), re.IGNORECASE)))
        out.append(
            Sign(
                name=raw["name"],
                kind=raw["kind"],
                markup=_compile(raw.get("markup", [])),
                title=_compile(raw.get("title", [])),
                text=_compile(raw.get("text", [])),
                header=tuple(headers),
                statuses=frozenset(raw.get("statuses", [])),
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class PageText:
    """What :func:`recognise` reads of a page: its markup, headings and visible words."""

    markup: str
    title: str
    h1: str
    """The first ``<h1>`` of a short page (a landing page's message; on a long page, a blog's,
    it may be a post's title and is not read): ``""`` on a long page."""
    text: str
    """The visible text of a short page; of a long one, its start only."""
    words: int
    """Visible words, counted until there are :data:`SHORT_PAGE_WORDS`: a long page is not read
    to its end, as nothing said of a page depends on how long beyond that it is."""
    scripts: int
    """``<script>`` elements of an empty page (0 on another: only an empty page's reason
    names them)."""


HIDDEN = frozenset({"script", "style", "noscript", "template", "title"})
"""Elements whose text a reader does not see."""


def page_text(url: str, body: bytes, headers: Mapping[str, str] | None = None) -> PageText:
    """:func:`page_text_of` the page ``body``, parsed as the extraction parses a page (an
    error's body, a page the extraction did not read)."""
    try:
        return page_text_of(parse_page(url, body, headers))
    except (DecodeError, ValueError):  # empty, or no HTML tree: nothing to see
        return read_tree(body.decode("utf-8", "replace"), None)


def page_text_of(page: Page) -> PageText:
    """What :func:`recognise` reads of a page the extraction parsed already (its tree is read,
    not changed)."""
    return read_tree(page.text, page.tree)


def read_tree(markup: str, tree: lxml.html.HtmlElement | None) -> PageText:
    """The title (and first ``<h1>`` of a short page), visible text and words of ``tree``,
    parsed from ``markup``."""
    if tree is None:
        return PageText(markup, "", "", "", 0, 0)
    text, words = _visible_text(tree, SHORT_PAGE_WORDS)
    title = tree.find(".//title")
    h1 = tree.find(".//h1") if words < SHORT_PAGE_WORDS else None
    scripts = sum(1 for _ in tree.iter("script")) if words < EMPTY_PAGE_WORDS else 0
    return PageText(
        markup,
        collapse(title.text_content()) if title is not None else "",
        collapse(h1.text_content()) if h1 is not None else "",
        text,
        words,
        scripts,
    )


def _visible_text(tree: lxml.html.HtmlElement, enough: int) -> tuple[str, int]:
    """The text of ``tree`` a reader sees (no :data:`HIDDEN` element, no comment), and its
    words; the walk stops once it has ``enough`` words."""
    parts: list[str] = []
    counted = 0  # words piece by piece: at least the words of the joined text
    check_at = enough
    # lxml's own walk (C), a hidden element's subtree skipped: an element's text at its start,
    # its tail at its end; a comment's or processing instruction's tail alone
    walk = lxml.etree.iterwalk(tree, events=("start", "end", "comment", "pi"))
    for event, el in walk:
        if event == "start":
            if el.tag in HIDDEN:
                walk.skip_subtree()
                continue
            piece = el.text
        elif el is tree:
            continue
        else:
            piece = el.tail
        if piece:
            parts.append(piece)
            counted += len(piece.split())
            if counted >= check_at:
                if len("".join(parts).split()) >= enough:
                    break
                check_at = counted + enough  # pieces that run into each other: read on
    text = collapse("".join(parts))
    return text, len(text.split())


def _header_match(sign: Sign, status: int | None, headers: Mapping[str, str] | None) -> str:
    if not headers or (sign.statuses and status not in sign.statuses):
        return ""
    for name, pattern in sign.header:
        value = header_value(headers, name)
        if value and pattern.search(value):
            return f"header {name}: {value[:60]}"
    return ""


def _quote(match: re.Match[str]) -> str:
    return repr(match.group(0)[:80])


def recognise(
    url: str,
    status: int | None,
    headers: Mapping[str, str] | None,
    body: bytes | None,
    page: PageText | None = None,
) -> tuple[Sign, str] | None:
    """The kind of page ``body`` is (a :class:`Sign`) and the evidence in words, or None;
    ``page`` its :func:`page_text` when read already (``body`` is then not read); with
    neither, the headers alone."""
    if page is None:
        if body is None:
            sign_headers = [(s, _header_match(s, status, headers)) for s in signs()]
            return next(((s, why) for s, why in sign_headers if why), None)
        page = page_text(url, body, headers)
    short = page.words < SHORT_PAGE_WORDS
    # a service's page is short (a lander, a challenge): a long page is read, not scanned
    needles = _markup_needles()
    if short and needles is not None:
        low = page.markup.lower()
        markup = any(needle in low for needle in needles)
    else:
        markup = short
    folded_markup = _fold(page.markup) if markup else ""
    folded_text = _fold(page.text) if short else ""
    for sign, (markup_needles, text_needles) in zip(signs(), _sign_needles(), strict=True):
        why = _header_match(sign, status, headers)
        for pattern in sign.markup if markup and _may_hold(folded_markup, markup_needles) else ():
            if why:
                break
            if m := pattern.search(page.markup):
                why = f"markup {_quote(m)}"
        # the h1 counts on a short page only: on a blog's home page it may be a post's title
        headings = [page.title, page.h1] if short else [page.title]
        for pattern in sign.title:
            if why:
                break
            for heading in headings:
                if pattern.search(heading):
                    why = f"title {heading[:80]!r}"
                    break
        for pattern in sign.text if short and _may_hold(folded_text, text_needles) else ():
            if why:
                break
            if m := pattern.search(page.text):
                why = f"text {_quote(m)} on a page of {page.words} words"
        if why:
            return sign, why
    return None


def _norm(text: str) -> str:
    return collapse(text).casefold()


def _generator(text: str) -> str:
    return _norm(text).split(" ")[0] if text.strip() else ""


def _language(text: str) -> str:
    return _norm(text).replace("_", "-").split("-")[0]


def _host(url: str) -> str:
    return re.sub(r"^[a-z][a-z0-9+.-]*://(?:www\.)?", "", url.lower()).split("/")[0]


def takeover(before: Known, now: Known) -> str:
    """Why ``now`` is another site on the blog's address (both titled, and every one of at
    least three things the blog had, of title, generator, language and feed host, changed), or
    ``""``."""
    pairs = [
        ("title", _norm(before.title), _norm(now.title)),
        ("generator", _generator(before.generator), _generator(now.generator)),
        ("language", _language(before.language), _language(now.language)),
        ("feed", _host(before.feed_url) if before.feed_url else "", _host(now.feed_url)),
    ]
    known = [(name, old, new) for name, old, new in pairs if old]
    # a page without a title (noindex, unreadable) says nothing of who answers
    if not pairs[0][1] or not pairs[0][2]:
        return ""
    if len(known) < 3 or any(old == new for _, old, new in known):
        return ""
    return "another site answers: " + ", ".join(
        f"{name} {old[:40]!r} -> {new[:40]!r}" for name, old, new in known
    )


def assess(
    url: str,
    status: int | None,
    headers: Mapping[str, str] | None,
    body: bytes | None,
    *,
    failure: str = "",
    failure_reason: str = "",
    failures_before: int = 0,
    before: Known | None = None,
    now: Known | None = None,
    moved_to: str = "",
    dead_after: int = 3,
) -> Health:
    """The health of the blog at ``url`` after one read of its home page: the read's
    :func:`read_health`, put in the blog's history by :func:`settle` (``failures_before``:
    failed reads in a row before this one; ``before``: the blog as last read; ``now``: as read
    this time)."""
    this = read_health(
        url,
        status,
        headers,
        body,
        failure=failure,
        failure_reason=failure_reason,
        moved_to=moved_to,
    )
    return settle(
        this, failures_before=failures_before, before=before, now=now, dead_after=dead_after
    )


def read_health(
    url: str,
    status: int | None,
    headers: Mapping[str, str] | None,
    body: bytes | None,
    *,
    failure: str = "",
    failure_reason: str = "",
    moved_to: str = "",
    page: PageText | None = None,
) -> Health:
    """What one read says alone. ``failure`` is its :mod:`blogfeeds.failures` status when it
    failed (``""`` when answered), ``status``/``headers``/``body`` what came back (None when
    nothing did), ``moved_to`` the other blog a permanent redirect led to, ``page`` the body's
    :func:`page_text` when read already. A failure is
    ``failing`` here (one in a row); :func:`settle` counts the streak."""
    if page is None and body is not None:
        page = page_text(url, body, headers)
    found = recognise(url, status, headers, body, page)
    if found is not None:
        sign, why = found
        code = f"HTTP {status}, " if status is not None else ""
        if not (failure and sign.kind == "parked" and status in GONE_CODES):
            return Health(sign.kind, f"{sign.name} ({code}{why})", sign=sign.name)
        # a platform's "no site here" page sent as a 404: the blog is gone, dead once the
        # failures say so, not parked on its first read
        failure_reason = f"{failure_reason or failure}: {sign.name} ({code}{why})"
    if failure:
        why = failure_reason or failure
        if failure == "blocked":  # robots.txt, the SSRF guard or a crawl limit refused it
            return Health("blocked", f"refused: {why}")
        if status == 451:
            return Health("blocked", "HTTP 451: unavailable for legal reasons")
        gone = failure in GONE or status in GONE_CODES
        return Health("failing", why, failures=1, gone=gone)
    if moved_to:
        return Health("moved", f"permanently redirected to {moved_to}", moved_to=moved_to)
    if page is not None and page.words < EMPTY_PAGE_WORDS:
        js = f", {page.scripts} scripts: JavaScript only" if page.scripts else ""
        return Health("empty", f"{page.words} words of text{js}")
    return Health("ok", f"HTTP {status}" if status is not None else "read")


def settle(
    this: Health,
    *,
    failures_before: int = 0,
    before: Known | None = None,
    now: Known | None = None,
    dead_after: int = 3,
) -> Health:
    """``this`` read's health in the blog's history: a failure is ``dead`` once
    ``dead_after`` reads in a row failed, the last saying the host is gone, else ``failing``;
    an answered read whose title, generator, language and feed all changed is ``parked``."""
    if this.kind == "failing":
        streak = failures_before + 1
        kind = "dead" if this.gone and streak >= max(dead_after, 1) else "failing"
        plural = "s" if streak > 1 else ""
        return replace(
            this,
            kind=kind,
            failures=streak,
            reason=f"{this.reason} ({streak} failed read{plural} in a row)",
        )
    if this.kind == "ok" and before is not None and now is not None:
        why = takeover(before, now)
        if why:
            return replace(this, kind="parked", reason=why)
    return this
