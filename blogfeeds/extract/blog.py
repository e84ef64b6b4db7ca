"""Everything we read from one blog page, in one pass over one parsed tree.

:func:`analyze_page` is what the ``blogs`` spider and ``scrapy inspect`` both call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from blogfeeds.extract.discovery import FeedCandidate, discover_feeds
from blogfeeds.extract.friends import FriendExtraction, extract_friends, find_friend_pages
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.metadata import (
    ABSTRACT_CHARS,
    PageMetadata,
    collapse,
    cut,
    extract_metadata,
)
from blogfeeds.extract.page import Page, parse_page
from blogfeeds.extract.userrules import RuleSet, UserRule, resolve_pages


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
    rules: dict[str, str] = field(default_factory=dict)
    """User rules that fired (:mod:`blogfeeds.extract.userrules`): what they set (``encoding``,
    ``feed``, ``abstract``, ``friend_pages``, ``friends``) -> rule name."""


def analyze_page(
    url: str,
    body: bytes | str,
    headers: Mapping[str, str] | None = None,
    *,
    feed_rules: Sequence[Any] | None = None,
    friend_rules: Sequence[Any] | None = None,
    friend_ruleset: str = "blogfeeds",
    page_feeds: bool = True,
    user_rules: RuleSet | None = None,
    abstract_chars: int = ABSTRACT_CHARS,
) -> PageAnalysis:
    """Decode, parse and run every extractor over one page.

    ``url`` is the final URL after redirects. Raises
    :class:`~blogfeeds.extract.page.DecodeError` when the body is not usable HTML and
    ``ValueError`` when ``url`` is not http(s). ``page_feeds=False`` skips the page-only feed
    candidates (``feeds`` is then empty): the crawler runs the fetching
    :func:`~blogfeeds.extract.discovery.find_feeds` instead. ``user_rules`` (a
    :class:`~blogfeeds.extract.userrules.RuleSet`) run before the built-in extractors: a rule's
    encoding, feed, abstract, friend pages and friend cards win (a rule's feed is ``feeds``
    even with ``page_feeds=False``); ``rules`` says which fired. ``abstract_chars`` is the
    abstract's length; 0 leaves it empty without running trafilatura (a friend-link page).
    """
    bid = blog_id(url)
    if not user_rules:
        page = parse_page(url, body, headers)
        return PageAnalysis(
            page=page,
            blog_id=bid,
            metadata=extract_metadata(page, abstract_chars),
            feeds=discover_feeds(page, feed_rules) if page_feeds else [],
            friends=extract_friends(page, friend_rules, ruleset=friend_ruleset),
            friend_pages=find_friend_pages(page),
        )
    fired: dict[str, str] = {}
    early = _first(user_rules.for_url(url), "encoding")
    page = _parse(url, body, headers, early)
    metadata = extract_metadata(page, abstract_chars)
    matched = user_rules.for_page(page, metadata.generator)
    rule = _first(matched, "encoding")
    if rule is not None and not isinstance(body, str):
        if rule is not early:
            page = _parse(url, body, headers, rule)
            metadata = extract_metadata(page, abstract_chars)
        fired["encoding"] = rule.name
    feeds = discover_feeds(page, feed_rules) if page_feeds else []
    for rule in matched:
        value = rule.feed.extract(page) if rule.feed is not None else ""
        if value and (feed_url := page.absolute(value)).startswith(("http://", "https://")):
            feeds = [FeedCandidate(feed_url, "", source="rule", reasons=[f"rule {rule.name}"])]
            fired["feed"] = rule.name
            break
    for rule in matched:
        text = collapse(rule.abstract.extract(page)) if rule.abstract is not None else ""
        if text:
            metadata = replace(metadata, abstract=cut(text))
            fired["abstract"] = rule.name
            break
    friend_pages = find_friend_pages(page)
    for rule in matched:
        if rule.friend_pages:
            extra = resolve_pages(page.url, rule.friend_pages)
            friend_pages = [*extra, *(u for u in friend_pages if u not in extra)]
            fired["friend_pages"] = rule.name
            break
    theme_rules = user_rules.friend_rules(matched)
    friends = extract_friends(
        page, friend_rules, ruleset=friend_ruleset, user_rules=theme_rules or None
    )
    hows = {f.how for f in friends.friends}
    for theme in theme_rules:
        if theme.how in hows:
            fired["friends"] = theme.name
            break
    return PageAnalysis(
        page=page,
        blog_id=bid,
        metadata=metadata,
        feeds=feeds,
        friends=friends,
        friend_pages=friend_pages,
        rules=fired,
    )


def _first(rules: Sequence[UserRule], what: str) -> UserRule | None:
    return next((r for r in rules if getattr(r, what)), None)


def _parse(
    url: str, body: bytes | str, headers: Mapping[str, str] | None, rule: UserRule | None
) -> Page:
    """Parse with ``rule``'s encoding in place of the HTTP charset (a BOM still wins)."""
    if rule is None or isinstance(body, str):
        return parse_page(url, body, headers)
    kept = {k: v for k, v in (headers or {}).items() if k.lower() != "content-type"}
    return parse_page(url, body, {**kept, "Content-Type": f"text/html; charset={rule.encoding}"})
