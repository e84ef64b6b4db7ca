"""What one read of a feed body gives: :class:`FeedDocument`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from blogfeeds.extract.feedreader.entries import FeedEntry
from blogfeeds.extract.feedreader.hints import RssHints
from blogfeeds.extract.feedreader.sniff import FeedSniff


@dataclass(frozen=True)
class FeedDocument:
    """A feed body, read once: its kind, the feed's metadata, its entries and its hints.

    - ``kind``: ``"feed"``, ``"html"`` (a web page), ``"empty"`` (no bytes, or only
      whitespace), ``"broken"`` (ill-formed XML that yields no entry: a truncated download, a
      broken generator; an undefined entity alone does not count) or ``"other"`` (neither a
      feed nor HTML: plain text, JSON, an error page).
    - ``sniff``: what the sniffer found (its ``root`` is ``""`` for a body it refused that
      feedparser still reads as a feed: CDF, an Atom feed wrapped in XHTML).
    - ``entries``: every entry in document order, exactly as many as feedparser (or the JSON
      Feed ``items``) found; repeated keys are kept (see :meth:`unique_entries`).
    - ``item_keys``, ``newest``, ``comment_feeds``, ``podcast``, ``self_url``: what feed
      discovery ranks, classifies and detects aliases by.
    - ``hints``: RSS ``<ttl>``, ``skipHours``/``skipDays``, ``sy:updatePeriod`` (minutes).
    - ``bozo``/``problem``: feedparser met ill-formed XML (entries are what it recovered).
    """

    kind: str
    sniff: FeedSniff = field(default_factory=FeedSniff)
    title: str = ""
    """The feed's own title, whitespace collapsed."""
    subtitle: str = ""
    """The feed's own tagline (Atom ``<subtitle>``, RSS channel ``<description>``, JSON
    ``description``), whitespace collapsed, tags dropped."""
    author: str = ""
    """The feed's own author (Atom feed ``<author><name>``, RSS ``managingEditor``/
    ``dc:creator``, JSON ``authors[0].name``), whitespace collapsed."""
    rights: str = ""
    """The feed's copyright line (RSS ``<copyright>``, Atom ``<rights>``), tags dropped."""
    site_url: str = ""
    """The feed's link to its site (RSS ``<link>``, Atom ``alternate``, JSON ``home_page_url``)."""
    self_url: str = ""
    """``rel=self`` (Atom link) or JSON ``feed_url``: recorded, never trusted as the feed's URL."""
    hubs: tuple[str, ...] = ()
    """WebSub hubs the feed announces (``atom:link rel=hub``, also in RSS; JSON Feed ``hubs``),
    in document order, as written."""
    entries: tuple[FeedEntry, ...] = ()
    item_keys: frozenset[str] = frozenset()
    """Item ids and links, as written: two feeds sharing them carry the same posts."""
    newest: datetime | None = None
    """Newest item (or feed) date, UTC."""
    comment_feeds: frozenset[str] = frozenset()
    """Per-item ``wfw:commentRss`` URLs: these are comment feeds, never a blog's main feed."""
    podcast: bool = False
    """iTunes podcast markup, or most items carry an audio/video enclosure."""
    hints: RssHints = field(default_factory=RssHints)
    bozo: bool = False
    problem: str = ""

    @property
    def is_feed(self) -> bool:
        return self.kind == "feed"

    @property
    def format(self) -> str:
        """``"rss"``, ``"atom"``, ``"rdf"``, ``"json"``, feedparser's version name for a feed
        the sniffer refused, or ``""`` when not a feed."""
        return self.sniff.format

    @property
    def encoding(self) -> str:
        return self.sniff.encoding

    @property
    def item_count(self) -> int:
        return len(self.entries)

    def unique_entries(self) -> list[FeedEntry]:
        """Entries with repeated keys dropped (the first occurrence kept), in document order."""
        seen: set[str] = set()
        out: list[FeedEntry] = []
        for entry in self.entries:
            if entry.key not in seen:
                seen.add(entry.key)
                out.append(entry)
        return out
