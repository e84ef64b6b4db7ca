"""Page metadata: title, language, generator (and the platform it names) and a short abstract
of the main text. All functions read a parsed :class:`~blogfeeds.extract.page.Page` and never
modify its tree. Sources:

* title: the HTML ``<title>`` element, falling back to Open Graph ``og:site_name``
  (https://ogp.me/).
* language: ``<html lang>`` (HTML Living Standard §3.2.6.2), then the pragma
  ``<meta http-equiv=content-language>``, then the HTTP ``Content-Language`` header (RFC 9110
  §8.5), each as written by the page (a BCP 47 tag, not normalised).
* generator: ``<meta name=generator>`` (HTML Living Standard §4.2.5.2), as written; the
  platform and its version from every generator of the page
  (:func:`blogfeeds.extract.platform.platform_of`).
* abstract: the page's main text as trafilatura extracts it (Barbaresi 2021, ACL demo; F1 0.96
  on the scrapinghub article-extraction benchmark, see ``research/extraction.md``), else
  ``og:description`` or ``<meta name=description>`` (:func:`abstract`, :func:`main_text`).
"""

from __future__ import annotations

import functools
import logging
import re
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

import justext
import justext.core
import lxml.etree
import lxml.html
import trafilatura
import trafilatura.external
from trafilatura.settings import MANUALLY_CLEANED, MANUALLY_STRIPPED

from blogfeeds.extract.page import Page, cut_after
from blogfeeds.extract.platform import platform_of
from blogfeeds.extract.settings import ABSTRACT_CHARS, ABSTRACT_TEXT
from blogfeeds.extract.text import collapse

logger = logging.getLogger(__name__)
# trafilatura warns "discarding data" for every page without main text: an answer here (the
# abstract falls back to the description), not news, in a crawl's log or under `scrapy inspect`.
logging.getLogger("trafilatura").setLevel(logging.ERROR)

ABSTRACT_WINDOW = 3000
"""Characters of the body's text (each text's surrounding whitespace left out) trafilatura reads
first for the abstract: it needs the opening of the main text, not the whole page (see
:func:`main_text`)."""

WINDOW_ENOUGH = 500
"""Main text trafilatura must find in the window for the abstract to keep it; with less, the
main text may lie after the window, and the whole page is read."""

TEXT = "text"
"""What :attr:`PageMetadata.truncated` names when the abstract read the first
``max_text`` characters only."""

NO_SPACE_CHARS = (
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u2e80-\u2fdf\u3000-\u30ff\u3100-\u312f"
    "\u31a0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
    "\U00020000-\U0003134f]"
)
"""Regex class of scripts written without spaces between words: Han, kana, CJK punctuation
and full-width forms, Thai, Lao, Myanmar, Khmer. A cut next to one is a word boundary."""
_NO_SPACE = re.compile(NO_SPACE_CHARS)
# Sentence-final punctuation (Latin and CJK), optionally followed by closing quotes/brackets.
_SENTENCE_END = re.compile("[.!?…:;。！？；：][\"'”’»)\\]）」』]*$")
_WORD = re.compile(r"\w+")
# Leading list markers trafilatura writes in its text output ("- item").
_BULLET = re.compile(r"^[-*•]\s+")
# Characters that should not dangle at the end of a cut.
_TRAILING = " \t,;:-–—(/[{"
_URL = re.compile(r"^(?:https?://|www\.)\S+$")
_SHORT_LINE = 50
"""Leading lines shorter than this without sentence punctuation are kickers, bylines, dates."""

# What trafilatura's own tree_cleaning deletes (with its subtree, tail kept) in the precise
# extraction (tables off), except the elements read before that deletion: <form> (kept when it
# wraps most of the text), <math> (formulas salvaged first), <head> and <script> (a
# <script type=application/ld+json> marks a forum thread). Those are handled by _precise_input.
_CLEANED = tuple(
    sorted(
        (set(MANUALLY_CLEANED) | {"table", "td", "th", "tr"}) - {"form", "math", "head", "script"}
    )
)
_STRIPPED = tuple(MANUALLY_STRIPPED)  # tags trafilatura unwraps first, contents kept
_LD_JSON = "application/ld+json"
_DROP = "blogfeeds-drop"  # a tag no HTML parser produces: marks elements to delete


@dataclass(frozen=True)
class PageMetadata:
    """What :func:`extract_metadata` reads from a page; every field is ``""`` when absent."""

    title: str
    language: str
    generator: str
    abstract: str
    platform: str = ""
    """The platform the generators name (``WordPress``), ``""`` when unknown or absent."""
    platform_version: str = ""
    truncated: tuple[str, ...] = ()
    """``(TEXT,)`` when the abstract read the first ``max_text`` characters of the page only."""
    abstract_source: str = ""
    """Where the abstract comes from: ``feed`` (the main feed's newest entry,
    :mod:`blogfeeds.extract.abstract`), ``page`` (this page), ``""`` when there is none."""


def _meta(page: Page) -> dict[str, str]:
    """``<meta>`` contents by lower-cased ``name``, ``property`` or ``http-equiv``; first wins."""
    found: dict[str, str] = {}
    for meta in page.tree.iter("meta"):
        content = meta.get("content")
        if content is None:
            continue
        for attr in ("name", "property", "http-equiv"):
            key = (meta.get(attr) or "").strip().lower()
            if key and key not in found:
                found[key] = collapse(content)
    return found


def _title(page: Page) -> str:
    for element in page.tree.iter("title"):
        if any(parent.tag == "svg" for parent in element.iterancestors()):
            continue
        return collapse(element.text_content())
    return ""


def title(page: Page) -> str:
    """The page title: ``<title>`` text, whitespace collapsed; else ``og:site_name``; else ``""``.

    ``<title>`` elements inside inline SVG are ignored.
    """
    return _title(page) or _meta(page).get("og:site_name", "")


def language(page: Page) -> str:
    """The page language as written: ``<html lang>`` (or ``xml:lang``), else
    ``<meta http-equiv=content-language>``, else the ``Content-Language`` header; stripped,
    ``""`` when none is given.
    """
    for attr in ("lang", "xml:lang"):
        value = (page.tree.get(attr) or "").strip()
        if value:
            return value
    return _meta(page).get("content-language", "") or page.header("Content-Language").strip()


def generators(page: Page) -> list[str]:
    """Every non-empty ``<meta name=generator>`` content (name matched case-insensitively), in
    document order, whitespace collapsed."""
    found = []
    for meta in page.tree.iter("meta"):
        if (meta.get("name") or "").strip().lower() == "generator":
            content = collapse(meta.get("content") or "")
            if content:
                found.append(content)
    return found


def generator(page: Page) -> str:
    """The first of :func:`generators`, e.g. ``"WordPress 6.4.2"``; ``""`` when absent."""
    return next(iter(generators(page)), "")


def _is_no_space(char: str) -> bool:
    return bool(_NO_SPACE.match(char))


def cut(text: str, max_chars: int = ABSTRACT_CHARS) -> str:
    """Cut collapsed ``text`` to at most ``max_chars`` characters without splitting a word.

    In scripts written with spaces the cut falls on whitespace; next to a Han, kana, Thai, Lao,
    Myanmar or Khmer character it may fall anywhere. A single word longer than ``max_chars``
    (a URL, say) is cut hard. Trailing separators (``,;:-–—(``) are dropped; no ellipsis is
    added, so the result is a prefix of ``text``.
    """
    if max_chars <= 0:
        return ""
    if len(text) <= max_chars:
        return text
    head, nxt = text[:max_chars], text[max_chars]
    if not (nxt.isspace() or _is_no_space(nxt) or _is_no_space(head[-1])):
        space = head.rfind(" ")
        if space > 0:
            head = head[:space]
    return head.rstrip(_TRAILING) or head.rstrip()


def _tokens(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _headline_like(line: str, headlines: list[str], headline_tokens: set[str]) -> bool:
    """A leading line that is a title, kicker, byline or date rather than the article's text."""
    if len(line) < _SHORT_LINE and not _SENTENCE_END.search(line):
        return True
    if _URL.match(line):
        return True
    low = line.lower()
    if any(low == h or (len(low) >= 8 and low in h) for h in headlines):
        return True
    tokens = _WORD.findall(low)
    if not tokens:  # punctuation or symbols only
        return True
    if len(tokens) > 40:  # a paragraph, whatever its words
        return False
    return sum(t in headline_tokens for t in tokens) >= 0.8 * len(tokens)


def _headlines(page: Page, meta: dict[str, str]) -> list[str]:
    heads = [_title(page), meta.get("og:title", ""), meta.get("twitter:title", "")]
    for h1 in page.tree.iter("h1"):
        heads.append(collapse(h1.text_content()))
        break
    return [h.lower() for h in heads if h]


def _precise_input(tree: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """A copy of ``tree`` (not modified) without what trafilatura's tree cleaning would delete
    anyway in the precise extraction: the tags of ``MANUALLY_CLEANED`` plus tables, every
    ``<script>`` but JSON-LD ones, and ``<head>``'s children but JSON-LD scripts; tags of
    ``MANUALLY_STRIPPED`` are unwrapped. Tails are kept, as trafilatura keeps them.

    trafilatura runs XPath prunes on the raw tree before its cleaning and copies the tree
    several times; about half the elements of a corpus page (632 on the mean) are such
    boilerplate (``<nav>`` 79, ``<head>`` 46, ``<aside>`` 46, ``<footer>`` 29, ...), so the
    copy (0.4 ms) saves 1.4 ms a page. The fast precise main text is the same on 820 of the 821
    corpus pages; on the other trafilatura had left rows of nested tables it meant to delete
    (deleting while iterating skips elements), this copy has none. Known difference in kind:
    one infinite-scroll prune keeps a container holding an ``<h1>``, and no longer sees an
    ``<h1>`` inside, say, a ``<nav>``.
    """
    root = deepcopy(tree)
    lxml.etree.strip_tags(root, *_STRIPPED)
    doomed = [s for s in root.iter("script") if s.get("type") != _LD_JSON]
    head = root.find("head")
    if head is not None:
        doomed += [e for e in head if isinstance(e.tag, str) and e.tag != "script"]
    for element in doomed:
        element.tag = _DROP
    lxml.etree.strip_elements(root, _DROP, *_CLEANED, with_tail=False)
    return root


@functools.cache
def stop_words() -> frozenset[str]:
    """The stop words of every language jusText knows (154,484), lower-cased: the set its
    ``define_stoplist`` makes of the tuple trafilatura gives it. Built once (0.9 s)."""
    return frozenset(
        word.lower()
        for language in justext.get_stoplists()
        for word in justext.get_stoplist(language)
    )


_JUSTEXT_STOPLIST = justext.core.define_stoplist


def _define_stoplist(stoplist: Any) -> frozenset[str]:
    """jusText's ``define_stoplist``, but :func:`stop_words` is returned as it is: it is
    already the lower-cased frozenset that function would build."""
    if stoplist is stop_words():
        return stoplist
    return _JUSTEXT_STOPLIST(stoplist)


def load_stop_words() -> None:
    """Give trafilatura's jusText run one stop list, :func:`stop_words`.

    trafilatura builds the words as a tuple, and jusText's ``classify_paragraphs`` passes its
    argument through ``define_stoplist``, an ``lru_cache`` that lower-cases it into a frozenset.
    A tuple does not keep its hash, so every jusText run hashed the whole tuple again (16 ms,
    more than jusText's own work on a blog's home page); and the cache kept both the list and
    its lower-cased copy alive (33 MB against 16). Called at the first extraction that can run
    jusText (not at import), or by the crawl's warm-up."""
    trafilatura.external.JT_STOPLIST = stop_words()  # type: ignore[assignment]
    justext.core.define_stoplist = _define_stoplist


def _precise(tree: lxml.html.HtmlElement, url: str, fast: bool) -> str | None:
    """``trafilatura.extract`` as :func:`main_text` calls it with ``precise=True``."""
    return trafilatura.extract(
        tree,
        url=url,
        fast=fast,
        include_comments=False,
        include_tables=False,
        favor_precision=True,
    )


def capped_tree(tree: lxml.html.HtmlElement, max_text: int) -> lxml.html.HtmlElement | None:
    """A copy of ``tree`` cut after its first ``max_text`` characters of text in document order
    (an element's text, its children, its tail), or None when it holds no more (or
    ``max_text`` is 0)."""
    # XPath's string-length: the same characters as itertext() (comments and processing
    # instructions left out), counted in C (0.1 ms a page against 0.4 ms in Python).
    if max_text <= 0 or tree.xpath("string-length()") <= max_text:
        return None
    root = deepcopy(tree)
    left = max_text
    for event, el in lxml.etree.iterwalk(root, events=("start", "end")):
        text = el.text if event == "start" else el.tail
        if not text or len(text) <= left:
            left -= len(text or "")
            continue
        if event == "start":
            el.text = text[:left]
            for child in list(el):
                el.remove(child)
            el.tail = None
        else:
            el.tail = text[:left]
        cut_after(el)
        break
    return root


def cut_window(root: lxml.html.HtmlElement, max_chars: int) -> bool:
    """Cut ``root`` (a copy: modified) after the first element of its ``<body>`` that ends once
    ``max_chars`` characters of text have been read in document order (an element's text, its
    tail; the whitespace around each, scripts and comments left out); whole elements are kept,
    no text is split. True when something was cut."""
    body = root.find("body")
    # string-length counts in C all the walk counts and more: a short page ends here.
    if body is None or body.xpath("string-length()") <= max_chars:
        return False
    seen = 0
    for event, el in lxml.etree.iterwalk(body, events=("start", "end")):
        if event == "start":
            if el.tag != "script" and isinstance(el.tag, str):
                seen += len((el.text or "").strip())
        elif el is not body:
            seen += len((el.tail or "").strip())
            if seen >= max_chars:
                cut_after(el)
                return True
    return False


def main_text(
    page: Page,
    precise: bool = True,
    tree: lxml.html.HtmlElement | None = None,
    window: int = 0,
) -> str:
    """The page's main text from ``trafilatura.extract``, one block a line; ``""`` when
    trafilatura finds none or fails (logged at DEBUG). Comments are always left out.

    ``precise`` tunes it for the opening of the text rather than its completeness, and for speed:
    ``favor_precision=True``, no tables (old Chinese pages lay out with tables;
    ``research/extraction.md`` §1), ``fast=True`` on the smaller copy of :func:`_precise_input`,
    and the full extraction of the unmodified tree when that finds nothing. ``precise=False`` is
    trafilatura's default extraction (readability and jusText included). trafilatura copies a tree
    before pruning it, so ``page.tree`` is never modified. ``tree``: read in place of ``page.tree``.

    ``window`` (precise only; 0 = off): the copy cut after the first ``window`` characters of the
    body's text (:func:`cut_window`) is read first, the whole page only when it yields less than
    :data:`WINDOW_ENOUGH`: the abstract needs the opening of the main text, and trafilatura's cost
    grows with the tree. Measurements: bench/README.md (``bench/abstract.py``).
    """
    source = page.tree if tree is None else tree
    try:
        if precise:
            clean = _precise_input(source)
            if window > 0 and cut_window(clean, window):
                text = _precise(clean, page.url, fast=True)
                if text and len(text) >= WINDOW_ENOUGH:
                    return text
                clean = _precise_input(source)  # the window fell short: the whole page
            text = _precise(clean, page.url, fast=True)
            if not text:  # the full extraction, on the unmodified tree
                load_stop_words()
                text = _precise(source, page.url, fast=False)
        else:
            load_stop_words()
            text = trafilatura.extract(source, url=page.url, include_comments=False)
        return text or ""
    except Exception:  # trafilatura on arbitrary HTML: a crawl never dies on one page
        logger.debug("trafilatura failed on %s", page.url, exc_info=True)
        return ""


def _lines(text: str) -> list[str]:
    """Non-empty lines of trafilatura's text output, collapsed, without list bullets and with
    table rows (``| a | b |``) reduced to their cells."""
    lines = []
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("|"):
            line = " ".join(cell for cell in line.split("|") if cell.strip(" -:"))
        line = collapse(_BULLET.sub("", line))
        if line:
            lines.append(line)
    return lines


def join_lines(lines: list[str]) -> str:
    """Join lines with a space, or with nothing between two characters of a script written
    without spaces (two Chinese paragraphs)."""
    out = ""
    for line in lines:
        if out and not (_is_no_space(out[-1]) and _is_no_space(line[0])):
            out += " "
        out += line
    return out


def abstract(page: Page, max_chars: int = ABSTRACT_CHARS, max_text: int = ABSTRACT_TEXT) -> str:
    """A short abstract of the page: at most ``max_chars`` characters, whitespace collapsed.

    From the precise :func:`main_text`, leading headline-like lines are skipped (lines equal to
    or contained in ``<title>``, ``og:title`` or the first ``<h1>``, lines whose words are
    ≥ 80 % title words, bare URLs, and lines under 50 characters without sentence punctuation:
    kickers, bylines, dates, "Reading time: 1 min"); list bullets are dropped and the rest is
    cut by :func:`cut`. Falls back to ``og:description``, then ``<meta name=description>``,
    then the unskipped main text, then trafilatura's default (non-precise, with tables) main
    text. Never raises: returns ``""`` when nothing is found (logged at DEBUG), and at once
    when ``max_chars`` ≤ 0. The main text is read from the first ``max_text`` characters of
    the page's text (:func:`capped_tree`; 0 = all), and first from the window of
    :data:`ABSTRACT_WINDOW` characters (:func:`main_text`).
    """
    return page_abstract(page, max_chars, max_text)[0]


def page_abstract(page: Page, max_chars: int, max_text: int) -> tuple[str, bool]:
    """:func:`abstract`, and whether the text was cut at ``max_text``."""
    if max_chars <= 0:  # every cut would be empty: skip trafilatura
        return "", False
    capped = None
    try:
        capped = capped_tree(page.tree, max_text)
        meta = _meta(page)
        lines = _lines(main_text(page, tree=capped, window=ABSTRACT_WINDOW))
        headlines = _headlines(page, meta)
        headline_tokens = set().union(*(_tokens(h) for h in headlines))
        start = 0
        while start < len(lines) and _headline_like(lines[start], headlines, headline_tokens):
            start += 1
        candidates = (
            lambda: join_lines(lines[start:]),
            lambda: meta.get("og:description", ""),
            lambda: meta.get("description", ""),
            lambda: join_lines(lines),
            lambda: join_lines(_lines(main_text(page, precise=False, tree=capped))),
        )
        for candidate in candidates:
            text = candidate()
            if text:
                return cut(text, max_chars), capped is not None
    except Exception:
        logger.debug("no abstract for %s", page.url, exc_info=True)
    return "", capped is not None


def extract_metadata(
    page: Page, max_chars: int = ABSTRACT_CHARS, max_text: int = ABSTRACT_TEXT
) -> PageMetadata:
    """Title, language, generator, platform and abstract of ``page`` (see each function);
    the abstract reads the first ``max_text`` characters of text (:func:`abstract`)."""
    found = generators(page)
    platform = platform_of(found)
    text, cut_text = page_abstract(page, max_chars, max_text)
    return PageMetadata(
        title=title(page),
        language=language(page),
        generator=found[0] if found else "",
        abstract=text,
        platform=platform.name,
        platform_version=platform.version,
        truncated=(TEXT,) if cut_text else (),
        abstract_source="page" if text else "",
    )
