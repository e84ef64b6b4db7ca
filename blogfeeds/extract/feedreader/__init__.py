"""The one feed reader: sniff a body, parse it once, take metadata, entries and hints from it.

- :mod:`~blogfeeds.extract.feedreader.sniff`: is it a feed (by its root element), in which
  encoding;
- :mod:`~blogfeeds.extract.feedreader.read`: the one parse (feedparser; JSON Feed with
  :mod:`json`): :func:`read_feed` for feed discovery's validation, :func:`read_document` for
  ``scrapy crawl feeds``;
- :mod:`~blogfeeds.extract.feedreader.document`: what a read gives (:class:`FeedDocument`);
- :mod:`~blogfeeds.extract.feedreader.entries`: the one entry type and its dedupe key;
- :mod:`~blogfeeds.extract.feedreader.hints`: RSS channel hints for revisit scheduling.

Pure: no Scrapy, no storage, no revisit policy.
"""

from blogfeeds.extract.feedreader.document import FeedDocument
from blogfeeds.extract.feedreader.entries import FeedEntry
from blogfeeds.extract.feedreader.hints import RssHints
from blogfeeds.extract.feedreader.read import read_document, read_feed
from blogfeeds.extract.feedreader.sniff import FeedSniff, feed_encoding, sniff_feed

__all__ = [
    "FeedDocument",
    "FeedEntry",
    "FeedSniff",
    "RssHints",
    "feed_encoding",
    "read_document",
    "read_feed",
    "sniff_feed",
]
