"""Everything we read from one blog page, in one pass over one parsed tree.

:func:`analyze_page` is what the ``blogs`` spider and ``scrapy inspect`` both call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blogfeeds.extract.feeds import FeedCandidate, discover_feeds
from blogfeeds.extract.friends import FriendExtraction, extract_friends, find_friend_pages
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.metadata import PageMetadata, extract_metadata
from blogfeeds.extract.page import Page, parse_page


@dataclass
class PageAnalysis:
    """The result of :func:`analyze_page`.

    ``feeds`` is best first; ``friends`` holds every scored container and the chosen friend
    links; ``friend_pages`` lists same-blog pages that look like a blogroll, best first.
    """

    page: Page
    blog_id: str
    metadata: PageMetadata
    feeds: list[FeedCandidate]
    friends: FriendExtraction
    friend_pages: list[str]


def analyze_page(
    url: str,
    body: bytes | str,
    headers: Mapping[str, str] | None = None,
    *,
    feed_rules: Sequence[Any] | None = None,
    friend_rules: Sequence[Any] | None = None,
    friend_ruleset: str = "blogfeeds",
    page_feeds: bool = True,
) -> PageAnalysis:
    """Decode, parse and run every extractor over one page.

    ``url`` is the final URL after redirects. Raises
    :class:`~blogfeeds.extract.page.DecodeError` when the body is not usable HTML and
    ``ValueError`` when ``url`` is not http(s). ``page_feeds=False`` skips the page-only feed
    candidates (``feeds`` is then empty): the crawler runs the fetching
    :func:`~blogfeeds.extract.feeds.find_feeds` instead.
    """
    bid = blog_id(url)
    page = parse_page(url, body, headers)
    return PageAnalysis(
        page=page,
        blog_id=bid,
        metadata=extract_metadata(page),
        feeds=discover_feeds(page, feed_rules) if page_feeds else [],
        friends=extract_friends(page, friend_rules, ruleset=friend_ruleset),
        friend_pages=find_friend_pages(page),
    )
