"""A blog's abstract: the opening of its newest post, without the post's title.

The source is the main feed feed discovery already read: its newest entry (the latest
published, else updated, date; the first entry when none is dated), its content when the feed
gives one beside a summary (a summary may be a hand-written excerpt), else its summary, made
text block by block (scripts, styles, images and captions left out; a leading line repeating
the title and a trailing "[…]" or "Read more" dropped). Without entry text, or without a feed,
the home page gives it: its newest post card (:func:`card_abstract`), else its main text
(:func:`blogfeeds.extract.metadata.abstract`, trafilatura). Where the feed gives only a short
summary, or no entry, the newest post's own page (:func:`post_link`, one request) may give its
opening instead (:func:`post_opening`): a summary or card is often the post's description.
:data:`FEED` and :data:`PAGE` say which one an abstract came from; ``bench/abstract_eval.py``
measures it on real built blogs, against the newest post's source.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from copy import deepcopy
from urllib.parse import unquote, urlsplit

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
    root: lxml.html.HtmlElement,
    tags: tuple[str, ...],
    classes: frozenset[str],
    pattern: re.Pattern[str] | None = None,
) -> lxml.html.HtmlElement:
    """``root`` (modified) without the elements of ``tags`` and those carrying one of
    ``classes`` or a class ``pattern`` finds; their tails stay. A copy button
    (:data:`_COPY_BUTTON`) goes too."""
    lxml.etree.strip_elements(root, *tags, with_tail=False)
    for el in root.xpath(".//*[@class]"):
        names = el.get("class", "").split()
        if not classes.isdisjoint(names) or any(
            _COPY_BUTTON.search(n) or (pattern is not None and pattern.search(n)) for n in names
        ):
            el.drop_tree()
    return root


# A code block's copy button (``copy-btn``, ``code-caption-copy``, ``clipboard-btn``): its
# label ("Copy", "Copy Code", "复制") is no text of the post; a copyright notice is.
_COPY_BUTTON = re.compile(r"copy(?!right)|clipboard", re.I)


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


# A byline a theme puts before the post in its feed ("作者：Ama", "Author: Ann"): a label
# and a colon, on a short line of its own.
_BYLINE = re.compile(r"(?:作者|作\s*者|author|written by|posted by|文)\s*[:：]", re.I)
_BYLINE_CHARS = 80


def entry_text(entry: FeedEntry) -> str:
    """``entry``'s text (content, else summary), one line, without leading title and byline
    lines and a summary's read-more ending."""
    from_summary = not entry.content
    lines = html_text(entry.content or entry.summary or "")
    title = collapse(entry.title or "").casefold()
    while lines and (
        (title and lines[0].casefold() == title)
        or (len(lines[0]) <= _BYLINE_CHARS and _BYLINE.match(lines[0]))
    ):
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


def lead_abstract(
    doc: FeedDocument | None,
    page: Page,
    max_chars: int,
    post: Page | None = None,
    cards: PostCards | None = None,
) -> tuple[str, str]:
    """The abstract and its source without trafilatura: the main feed's newest entry, else
    the home page's newest post card; ``("", "")`` when neither gives one. An entry that gives
    only a summary may give the post's hand-written description there: when that summary is
    shorter than the abstract and the home page's card of that post (the card linking to it)
    is longer, opens with other text and not with an entry's title, the card wins.

    ``post``: the newest post's own page (:func:`post_link`), when it was fetched. Its body
    (:func:`post_opening`) wins over a summary or a card that does not open it (a
    description, a cut excerpt) or that it carries on (the same opening, longer); a summary or
    card that the body holds further on (after a theme's meta line) stays.

    ``cards``: the page's :class:`PostCards`, when :func:`post_link` read them already."""
    if max_chars <= 0:
        return "", ""
    cards = cards or PostCards(page)
    entry = newest_entry(doc) if doc is not None else None
    whole = entry_text(entry) if entry is not None else ""
    text, source = cut(whole, max_chars), FEED
    if doc is not None and entry is not None and 0 < len(whole) < max_chars and not entry.content:
        card = card_abstract(page, max_chars, link=entry.link or "", cards=cards)
        if len(card) > len(whole) and _opens_otherwise(card, whole) and not _titled(card, doc):
            text, source = card, PAGE
    if not text:
        text, source = card_abstract(page, max_chars, cards=cards), PAGE
    if post is not None and not (entry is not None and entry.content and whole):
        title = (entry.title or "") if entry is not None else ""
        opening = post_opening(post, title)
        if _carries(opening, text):
            return cut(opening, max_chars), PAGE
    return (text, source) if text else ("", "")


def post_link(doc: FeedDocument | None, page: Page, cards: PostCards | None = None) -> str:
    """The newest post's page worth one request for the abstract, or ``""``: the main feed's
    newest entry's link when the entry gives no content and less than :data:`SUMMARY_WHOLE`
    characters of text (a summary may be a description, or cut), else (no feed entry) the
    link of the home page's newest post card. A link to another host than the home page's is
    not followed, but for the home page's own link to that path (:func:`_home_link`)."""
    entry = newest_entry(doc) if doc is not None else None
    if entry is not None:
        text = entry_text(entry)
        whole = (entry.content and text) or len(text) >= SUMMARY_WHOLE
        link = "" if whole else entry.link or ""
    else:
        cards = cards or PostCards(page)
        card = cards.newest
        link = ""
        if card is not None:
            link = _card_link(page, card) or _card_link(page, _scope(card, cards.shown))
    if not link:
        return ""
    try:
        url = page.absolute(link)
        parts = urlsplit(url)
    except ValueError:  # an unparsable link
        return ""
    own = urlsplit(page.url).hostname or ""
    if parts.scheme in ("http", "https") and _bare(parts.hostname or "") != _bare(own):
        url = _home_link(page, parts.path)
        parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or _bare(parts.hostname or "") != _bare(own):
        return ""
    if parts.path.rstrip("/") in ("", urlsplit(page.url).path.rstrip("/")):
        return ""
    return url


def _home_link(page: Page, path: str) -> str:
    """The home page's own link to the post at ``path`` of a feed link on another host, or
    ``""``. A build with a wrong base URL (a preview server's ``localhost:1313``, the theme's
    demo host) writes that host into its feed while its pages link relatively: the home page
    links to the same path (under the blog's own path, for a blog under one) on its host."""
    path = unquote(path).rstrip("/")
    if not path:
        return ""
    base = unquote(urlsplit(page.url).path).rstrip("/")
    wanted = {path, base + path}
    own = _bare(urlsplit(page.url).hostname or "")
    for a in page.tree.iter("a"):
        href = a.get("href") or ""
        if not href.strip() or _path(page, href) not in wanted:
            continue
        try:
            url = page.absolute(href)
            if _bare(urlsplit(url).hostname or "") == own:
                return url
        except ValueError:  # an unparsable link
            continue
    return ""


SUMMARY_WHOLE = 500
"""Characters of text from which an entry's only text (a feed without a separate summary
puts the post there) is taken for the post's, not for a description: no request then."""


def _bare(host: str) -> str:
    return host.removeprefix("www.")


def _carries(opening: str, text: str) -> bool:
    """The post's body ``opening`` is the better abstract than ``text`` (a summary, a card):
    ``text`` is empty, or is not the body's own opening (a description, even one that starts
    like the post), or is that opening, shorter. A ``text`` the body holds whole a little
    further on (within :data:`_NOISE` letters: after a meta line or a table of contents the
    body container kept) stays."""
    if len(opening) < MIN_CARD_TEXT:
        return False
    a, b = ("".join(_ALNUM.findall(t.casefold())) for t in (text, opening))
    if not a:
        return True
    pos = b.find(a[:20], 0, _NOISE + 20)
    if pos < 0 or not b.startswith(a[: len(b) - pos], pos):
        return True
    return pos == 0 and len(b) > len(a)


_NOISE = 200
"""Letters and digits a post body may show before the post's opening (a meta line, a table
of contents) for a summary found there to count as the opening."""


def _titled(text: str, doc: FeedDocument) -> bool:
    """``text`` opens with the title of one of the feed's entries: a card that kept its title
    or lists several posts, not a post's opening."""
    low = text.casefold()
    return any(
        len(title) >= 4 and low.startswith(title)
        for title in (collapse(e.title or "").casefold() for e in doc.entries)
    )


def _opens_otherwise(card: str, summary: str) -> bool:
    """The card is not the summary again: it opens otherwise (the summary is a description),
    or it carries the summary on (the summary was cut, at a heading say)."""
    a, b = ("".join(_ALNUM.findall(t.casefold())) for t in (summary, card))
    return not _agree(card, summary) or (b.startswith(a) and len(b) > len(a))


def _agree(one: str, other: str) -> bool:
    """The two texts open alike (letters and digits, case folded, of the shorter one's first
    20)."""
    a, b = ("".join(_ALNUM.findall(t.casefold())) for t in (one, other))
    n = min(len(a), len(b), 20)
    return a[:n] == b[:n]


# --- The home page's newest post -------------------------------------------------------------

_CARD_CLASSES = frozenset(
    "post post-item post-entry post-card post-preview post-block recent-post-item "
    "article-item article blog-post entry h-entry".split()
)
"""Classes of a home page's post cards (Hexo NexT ``post``, Butterfly ``recent-post-item``,
Matery ``post-card`` (featured) and ``article``, Hugo PaperMod ``post-entry``, microformats
``h-entry``); an ``<article>`` is one too."""
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


def card_abstract(
    page: Page, max_chars: int, link: str = "", cards: PostCards | None = None
) -> str:
    """The opening of the newest post card of a home page that lists posts
    (:func:`_newest_card`): the card's text without its title, meta, cover and read-more
    link; ``""`` when the page shows no card with :data:`MIN_CARD_TEXT` characters of text
    (a newest card with less gives way to the next with enough). ``link``: the card of that
    post (one of its links has the same path), whatever its place."""
    if max_chars <= 0:
        return ""
    found = cards or PostCards(page)
    path = unquote(urlsplit(link).path).rstrip("/") or None if link else None
    if path is not None:
        ordered = [
            c
            for c in found.listed
            if any(_path(page, a.get("href", "")) == path for a in c.iter("a"))
        ]
    else:
        newest = found.newest
        ordered = [c for c in found.shown if c is not newest]
        if newest is not None:
            ordered.insert(0, newest)
    for card in ordered:
        text = join_lines(_excerpt(card))
        if len(text) >= MIN_CARD_TEXT:
            return cut(text, max_chars)
    return ""


class PostCards:
    """A home page's post cards, found once for the abstract's steps (:func:`post_link`, then
    :func:`lead_abstract`, read the same cards)."""

    def __init__(self, page: Page) -> None:
        self.page = page

    @functools.cached_property
    def shown(self) -> list[lxml.html.HtmlElement]:
        """The cards without the featured and pinned ones."""
        return _cards(self.page)

    @functools.cached_property
    def listed(self) -> list[lxml.html.HtmlElement]:
        """Every card."""
        return _cards(self.page, listed=True)

    @functools.cached_property
    def newest(self) -> lxml.html.HtmlElement | None:
        """The newest post's card (:func:`_newest_card`)."""
        return _newest_card(self.page, self.shown)


def _cards(page: Page, listed: bool = False) -> list[lxml.html.HtmlElement]:
    """The home page's post cards in page order; those among slides (featured posts) or
    marked pinned are left out unless ``listed`` (every card)."""
    found = []
    for card in _CARD_XPATH(page.tree):
        classes = set((card.get("class") or "").split())
        if card.tag != "article" and _CARD_CLASSES.isdisjoint(classes):
            continue
        if not listed and (
            _named((card, *card.iterancestors()), _SLIDES) or _named(card.iter(), _PINNED)
        ):
            continue
        found.append(card)
    # An element that holds two cards or more is their list (an ``<article>`` around a
    # theme's cards), not a card.
    inner: dict[lxml.html.HtmlElement, int] = {}
    for card in found:
        for parent in card.iterancestors():
            inner[parent] = inner.get(parent, 0) + 1
    return [card for card in found if inner.get(card, 0) < 2]


_DATE = re.compile(r"((?:19|20)\d\d)\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})")
_DATED = lxml.etree.XPath(
    ".//time | .//*[contains(@class, 'date') or contains(@class, 'time')"
    " or contains(@itemprop, 'date')]"
)


def _newest_card(
    page: Page, cards: list[lxml.html.HtmlElement] | None = None
) -> lxml.html.HtmlElement | None:
    """The card of the newest post: when two cards or more show a date (a ``<time>``, an
    element whose class names a date), the one with the latest day (the first of those on
    that day; cards without a date are then not posts of the list: featured ones), else the
    first card. Days only: a theme's "updated" times are the build's, to the second."""
    cards = _cards(page) if cards is None else cards
    dated = [
        (day, -i, card)
        for i, card in enumerate(cards)
        if (day := _card_day(card) or _card_day(_scope(card, cards)))
    ]
    if len(dated) >= 2:
        return max(dated, key=lambda d: (d[0], d[1]))[2]
    return cards[0] if cards else None


def _scope(
    card: lxml.html.HtmlElement, cards: list[lxml.html.HtmlElement]
) -> lxml.html.HtmlElement:
    """The widest element around ``card`` (up to three levels) that holds no other card: a
    theme may mark only the excerpt as the card, its link and date beside it."""
    others = set(cards) - {card}
    scope = card
    for parent in list(card.iterancestors())[:3]:
        if parent.tag in ("main", "body", "html") or any(el in others for el in parent.iter()):
            break
        scope = parent
    return scope


def _card_day(card: lxml.html.HtmlElement) -> str:
    """The first day a card shows (``YYYY-MM-DD``), ``""`` when none."""
    for el in _DATED(card):
        for value in (el.get("datetime") or "", el.get("content") or "", el.text_content()):
            if match := _DATE.search(value):
                y, m, d = (int(g) for g in match.groups())
                if 1 <= m <= 12 and 1 <= d <= 31:
                    return f"{y:04d}-{m:02d}-{d:02d}"
    return ""


def _card_link(page: Page, card: lxml.html.HtmlElement) -> str:
    """The card's link to its post: its title's (a link in a heading or whose class names a
    title), else its first link that is no tag, category or anchor."""
    links = [a for a in card.iter("a") if (a.get("href") or "").strip()]
    for a in links:
        if _in_title(a, card) and not _FILE.search(a.get("href", "")):
            return page.absolute(a.get("href", ""))
    for a in links:
        href = a.get("href", "").strip()
        if not href.startswith("#") and not _TAXONOMY.search(href) and not _FILE.search(href):
            return page.absolute(href)
    return ""


def _in_title(a: lxml.html.HtmlElement, card: lxml.html.HtmlElement) -> bool:
    """The link ``a`` of ``card`` is (in) its title: a heading, or a class naming a title."""
    for el in (a, *a.iterancestors()):
        if el.tag in ("h1", "h2", "h3", "h4") or "title" in (el.get("class") or ""):
            return True
        if el is card:
            break
    return False


# A feed, an image or a download: no post page.
_FILE = re.compile(r"\.(?:xml|rss|atom|json|jpe?g|png|gif|webp|svg|pdf|zip)(?:[?#]|$)", re.I)
_TAXONOMY = re.compile(r"/(?:tags?|categories|category|archives?|author)/", re.I)

_BODY_NAME = re.compile(
    r"(?:post|article|entry|single|blog-post)[-_]?(?:body|content|entry|text)|markdown-body"
    r"|md-content|e-content|article-container",
    re.I,
)
"""A post page's body, by a class or id (the whole name): Hexo NexT ``post-body``, Landscape
``article-entry``, Matery ``articleContent``, Butterfly ``article-container``, Hugo
PaperMod ``post-content``, WordPress-like ``entry-content``, microformats ``e-content``,
GitHub-like ``markdown-body``. Else the page's first ``<article>`` is read."""
_META_NAME = re.compile(
    r"(?:^|[-_])(?:meta|date|time|author|publish|tags?|categor(?:y|ies)|reading|read-time"
    r"|word-?count|views?|toc|subtitle)(?:$|[-_])",
    re.I,
)
"""A theme's meta line in a card or a post page, by a class name: ``post-meta``,
``publish-info``, ``post-date``, ``article-tags``, ``reading-time``, ``post-toc``; a
subtitle under the title (``single-subtitle``) is the front matter's, not the post's text."""
_NOT_BODY = frozenset(
    "toc table-of-contents post-copyright copyright reward post-nav pagination".split()
)
"""Classes of what a post body shows besides the post: its table of contents, licence,
tip jar and links to the neighbours."""
_BODY_XPATH = lxml.etree.XPath("//*[@class or @id]")


def post_opening(post: Page, title: str = "") -> str:
    """The opening text of a post's own page: its body container's text (without the page's
    header, meta lines, table of contents, code line numbers), one line, leading lines that
    repeat the post's title (``title``, the page's ``og:title``, the start of its
    ``<title>``) dropped; ``""`` when the page has no body container."""
    body = next(
        (
            el
            for el in _BODY_XPATH(post.tree)
            if any(_BODY_NAME.fullmatch(n) for n in (el.get("class") or "").split())
            or _BODY_NAME.fullmatch(el.get("id") or "")
        ),
        None,
    )
    in_article = body is None
    if body is None:
        body = next(iter(post.tree.iter("article")), None)
    if body is None:
        return ""
    skipped = (*_SKIPPED, "header", "footer", "nav", "aside", "time")
    lines = _lines_of(
        _without(deepcopy(body), skipped, _NOT_EXCERPT | _NOT_BODY | _GUTTERS, _META_NAME)
    )
    if not in_article:  # a body container holds the post's own headings, not the page title
        return join_lines(lines)
    titles = {collapse(t).casefold() for t in (title, *post.tree.xpath(_OG_TITLE))} - {""}
    page_title = collapse(" ".join(post.tree.xpath("//title//text()"))).casefold()
    while lines and (
        (low := lines[0].casefold()) in titles or (len(low) >= 4 and page_title.startswith(low))
    ):
        lines = lines[1:]
    return join_lines(lines)


_OG_TITLE = "//meta[@property='og:title' or @name='twitter:title']/@content"


def _path(page: Page, href: str) -> str:
    try:
        return unquote(urlsplit(page.absolute(href)).path).rstrip("/")
    except ValueError:  # an unparsable link
        return "\0"


def _named(elements: Iterable[lxml.html.HtmlElement], words: tuple[str, ...]) -> bool:
    """One of ``elements`` carries a class attribute that holds one of ``words``."""
    return any(any(w in el.get("class", "") for w in words) for el in elements)


def _excerpt(card: lxml.html.HtmlElement) -> list[str]:
    """The lines of a copy of ``card`` without what is not the post's opening."""
    return _lines_of(
        _without(deepcopy(card), (*_SKIPPED, *_NOT_EXCERPT_TAGS), _NOT_EXCERPT, _META_NAME)
    )
