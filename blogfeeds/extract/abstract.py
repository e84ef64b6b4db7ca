"""A blog's abstract: the opening of its newest post, without the post's title.

The source is the main feed feed discovery already read: its newest entry (the latest
published, else updated, date; the first entry when none is dated), its content when the feed
gives one beside a summary (a summary may be a hand-written excerpt; the content opens the
post), else its summary. The entry's HTML becomes text block by block (scripts, styles,
images and figure captions left out), a leading line that repeats the entry's title is
dropped, and a summary's trailing "[…]" or "Read more" goes. For a blog whose feed has no
entry with text, or that has no feed, the home page gives it: its first post card
(:func:`card_abstract`), else its main text (:func:`blogfeeds.extract.metadata.abstract`,
trafilatura). :data:`FEED` and :data:`PAGE` say which one an abstract came from.

``bench/abstract_eval.py`` measures it on real built blogs, against the newest post's source.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from copy import deepcopy
from urllib.parse import urlsplit

import lxml.etree
import lxml.html

from blogfeeds.extract.feedreader import FeedDocument, FeedEntry
from blogfeeds.extract.feedreader.entries import newest_index
from blogfeeds.extract.metadata import cut, join_lines
from blogfeeds.extract.page import Page
from blogfeeds.extract.text import collapse

FEED = "feed"
PAGE = "page"
"""The values of ``abstract_source``: the main feed's newest entry, or the home page."""

_SKIPPED = ("script", "style", "noscript", "template", "figcaption", "svg", "math", "button")
# Code blocks' line-number gutters (Hexo ``gutter``, Hugo/Chroma ``lnt``/``ln``, Rouge
# ``rouge-gutter``, highlight.js and Prism line numbers): numbers, not the post's text.
_GUTTERS = frozenset(
    "gutter lnt ln lineno linenos rouge-gutter hljs-ln-numbers line-numbers-rows".split()
)
_MARKUP = re.compile(r"^\s*<[a-zA-Z][^>]*>")
_ALNUM = re.compile(r"[^\W_]+")
_BLOCKS = frozenset(
    "address article aside blockquote br dd details div dl dt figure footer h1 h2 h3 h4 h5 h6 "
    "header hr li main nav ol p pre section summary table td th tr ul".split()
)
# A summary's own ending, not the post's: "[…]", "...", "Read more »", "阅读全文".
_MORE = re.compile(
    r"\s*(?:\[\s*(?:…|\.{3})\s*\]|…|\.{3})?\s*"
    r"(?:(?:continue reading|read more|阅读全文|继续阅读)\W{0,3})?$",
    re.IGNORECASE,
)


def newest_entry(doc: FeedDocument) -> FeedEntry | None:
    """The feed's newest entry (:func:`~blogfeeds.extract.feedreader.entries.newest_index`)."""
    newest = newest_index(doc.entries)
    return doc.entries[newest] if newest is not None else None


def html_text(markup: str) -> list[str]:
    """The lines of an entry's HTML: one a block, whitespace collapsed, empty ones dropped;
    scripts, styles, figure captions, images and code line numbers give none. HTML escaped
    once more (a feed that declares its HTML as text) is read as HTML."""
    lines = _html_lines(markup)
    if lines and _MARKUP.match(lines[0]):
        lines = _html_lines("\n".join(lines))
    return lines


def _html_lines(markup: str) -> list[str]:
    try:
        root = lxml.html.fragment_fromstring(markup, create_parent="div")
    except (lxml.etree.ParserError, ValueError):  # no element, or an encoding declaration
        return [line for line in (collapse(x) for x in markup.splitlines()) if line]
    return _lines_of(_without(root, _SKIPPED, _GUTTERS))


def _without(
    root: lxml.html.HtmlElement, tags: tuple[str, ...], classes: frozenset[str]
) -> lxml.html.HtmlElement:
    """``root`` (modified) without the elements of ``tags`` and those carrying one of
    ``classes``; their tails stay."""
    lxml.etree.strip_elements(root, *tags, with_tail=False)
    for el in root.xpath(".//*[@class]"):
        if not classes.isdisjoint(el.get("class", "").split()):
            el.drop_tree()
    return root


def _lines_of(root: lxml.html.HtmlElement) -> list[str]:
    """The text of ``root`` one block a line, whitespace collapsed, empty lines dropped."""
    parts: list[str] = []
    for event, el in lxml.etree.iterwalk(root, events=("start", "end")):
        block = isinstance(el.tag, str) and el.tag in _BLOCKS
        if event == "start":
            if block:
                parts.append("\n")
            parts.append(el.text or "")
        else:
            if block:
                parts.append("\n")
            parts.append(el.tail or "")
    return [line for line in (collapse(x) for x in "".join(parts).split("\n")) if line]


def entry_text(entry: FeedEntry) -> str:
    """``entry``'s text (content, else summary), one line, without a leading title line and
    a summary's read-more ending."""
    from_summary = not entry.content
    lines = html_text(entry.content or entry.summary or "")
    title = collapse(entry.title or "").casefold()
    while lines and title and lines[0].casefold() == title:
        lines = lines[1:]
    text = join_lines(lines)
    if from_summary:
        text = _MORE.sub("", text)
    return text


def feed_abstract(doc: FeedDocument | None, max_chars: int) -> str:
    """The abstract from the main feed ``doc``: the opening of its newest entry; ``""`` when
    there is no feed, no entry, or the entry has no text (or ``max_chars`` is 0)."""
    if doc is None or max_chars <= 0:
        return ""
    entry = newest_entry(doc)
    return cut(entry_text(entry), max_chars) if entry is not None else ""


def lead_abstract(doc: FeedDocument | None, page: Page, max_chars: int) -> tuple[str, str]:
    """The abstract and its source without trafilatura: the main feed's newest entry, else
    the home page's first post card; ``("", "")`` when neither gives one. An entry that gives
    only a summary may give the post's hand-written description there: when that summary is
    shorter than the abstract and the home page's card of that post (the card linking to it)
    is longer, opens with other text and not with an entry's title, the card wins."""
    if max_chars <= 0:
        return "", ""
    entry = newest_entry(doc) if doc is not None else None
    whole = entry_text(entry) if entry is not None else ""
    text = cut(whole, max_chars)
    if doc is not None and entry is not None and 0 < len(whole) < max_chars and not entry.content:
        card = card_abstract(page, max_chars, link=entry.link or "")
        if len(card) > len(whole) and not _agree(card, whole) and not _titled(card, doc):
            return card, PAGE
    if text:
        return text, FEED
    text = card_abstract(page, max_chars)
    return text, PAGE if text else ""


def _titled(text: str, doc: FeedDocument) -> bool:
    """``text`` opens with the title of one of the feed's entries: a card that kept its title
    or lists several posts, not a post's opening."""
    low = text.casefold()
    return any(
        len(title) >= 4 and low.startswith(title)
        for title in (collapse(e.title or "").casefold() for e in doc.entries)
    )


def _agree(one: str, other: str) -> bool:
    """The two texts open alike (letters and digits, case folded, of the shorter one's first
    20)."""
    a, b = ("".join(_ALNUM.findall(t.casefold())) for t in (one, other))
    n = min(len(a), len(b), 20)
    return a[:n] == b[:n]


# --- The home page's newest post -------------------------------------------------------------

_CARD_CLASSES = frozenset(
    "post post-item post-entry post-card post-preview post-block recent-post-item "
    "article-item blog-post entry h-entry".split()
)
"""Classes of a home page's post cards (Hexo NexT ``post``, Butterfly ``recent-post-item``,
Matery ``post-card``, Hugo PaperMod ``post-entry``, microformats ``h-entry``); an
``<article>`` is one too."""
_NOT_EXCERPT = frozenset(
    "post-title article-title card-title entry-title title post-meta article-meta "
    "article-meta-wrap entry-meta meta post-meta-wrap post-date date time tags post-tags "
    "tag-list categories post-categories category article-more more read-more more-link "
    "post-more-link readmore entry-footer post-footer post-header entry-header card-image "
    "post_cover post-cover cover thumbnail".split()
)
"""Classes of what a card shows besides the post's opening: its title, date, tags, cover
and read-more link."""
_NOT_EXCERPT_TAGS = ("h1", "h2", "h3", "h4", "h5", "h6", "time", "header", "footer", "nav")
_SLIDES = ("carousel", "slider", "swiper", "slick")  # featured posts, not the newest
_PINNED = ("sticky", "pinned", "top-post")
_CARD_XPATH = lxml.etree.XPath(
    "//article | //*[@class][not(ancestor::nav or ancestor::aside or ancestor::footer)]"
)
MIN_CARD_TEXT = 20
"""Characters a card's excerpt needs to be the abstract (else the main text is read)."""


def card_abstract(page: Page, max_chars: int, link: str = "") -> str:
    """The opening of the first post card of a home page that lists posts: the card's text
    without its title, meta, cover and read-more link; ``""`` when the page shows no card
    with :data:`MIN_CARD_TEXT` characters of text. A card among slides (featured posts) or
    marked pinned is not the newest post and is skipped. ``link``: the card of that post (one
    of its links has the same path), whatever its place."""
    if max_chars <= 0:
        return ""
    path = urlsplit(link).path.rstrip("/") or None if link else None
    for card in _CARD_XPATH(page.tree):
        classes = set((card.get("class") or "").split())
        if card.tag != "article" and _CARD_CLASSES.isdisjoint(classes):
            continue
        if path is not None:
            if not any(_path(page, a.get("href", "")) == path for a in card.iter("a")):
                continue
        elif _named((card, *card.iterancestors()), _SLIDES) or _named(card.iter(), _PINNED):
            continue
        text = join_lines(_excerpt(card))
        if len(text) >= MIN_CARD_TEXT:
            return cut(text, max_chars)
    return ""


def _path(page: Page, href: str) -> str:
    try:
        return urlsplit(page.absolute(href)).path.rstrip("/")
    except ValueError:  # an unparsable link
        return "\0"


def _named(elements: Iterable[lxml.html.HtmlElement], words: tuple[str, ...]) -> bool:
    """One of ``elements`` carries a class attribute that holds one of ``words``."""
    return any(any(w in el.get("class", "") for w in words) for el in elements)


def _excerpt(card: lxml.html.HtmlElement) -> list[str]:
    """The lines of a copy of ``card`` without what is not the post's opening."""
    return _lines_of(_without(deepcopy(card), (*_SKIPPED, *_NOT_EXCERPT_TAGS), _NOT_EXCERPT))
