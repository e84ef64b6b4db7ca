"""Feed autodiscovery, original ``<link>`` rule: one hand-made page per rule and per number."""

from __future__ import annotations

from typing import Any

import pytest

from blogfeeds import settings
from blogfeeds.extract.feeds import (
    DEFAULT_FEED_RULES,
    FeedCandidate,
    RulesSpec,
    discover_feeds,
    media_type,
    to_feed_info,
)
from blogfeeds.extract.page import Page, parse_page
from blogfeeds.extract.scoring import Adjustment, Reject
from blogfeeds.items import FeedInfo

URL = "https://blog.example/"


def page(head: str, url: str = URL) -> Page:
    return parse_page(url, f"<html><head>{head}</head><body><p>x</p></body></html>".encode(), {})


def only(head: str, url: str = URL, rules: RulesSpec = None) -> FeedCandidate:
    found = discover_feeds(page(head, url), rules)
    assert len(found) == 1, found
    return found[0]


class PreferAtom:
    """A custom rule loaded by dotted path in a test: +1 for Atom."""

    def __call__(self, c: FeedCandidate, score: float, page: Page) -> Adjustment | None:
        if c.type == "application/atom+xml":
            return Adjustment(score + 1, "+1 atom")
        return None


class DropFeedburner:
    def __call__(self, c: FeedCandidate, score: float, page: Page) -> None:
        if "feedburner" in c.url:
            raise Reject("feedburner")


def test_rss_link_with_alternate_scores_full_10() -> None:
    c = only(
        '<link rel="alternate" type="application/rss+xml" href="/feed.xml" title=" My  feed ">'
    )
    assert (c.url, c.type, c.title, c.rel, c.source) == (
        "https://blog.example/feed.xml",
        "application/rss+xml",
        "My feed",
        ["alternate"],
        "link",
    )
    assert c.score == 10
    assert c.reasons == ["base 10"]


def test_atom_is_accepted() -> None:
    c = only('<link rel="alternate" type="application/atom+xml" href="atom.xml">')
    assert (c.type, c.score) == ("application/atom+xml", 10)


@pytest.mark.parametrize(
    "declared",
    ["Application/RSS+XML", "application/rss+xml; charset=UTF-8", " APPLICATION/ATOM+XML ;x=1"],
)
def test_type_is_case_insensitive_and_parameters_are_stripped(declared: str) -> None:
    c = only(f'<link rel="alternate" type="{declared}" href="/f">')
    assert c.type in ("application/rss+xml", "application/atom+xml")
    assert c.score == 10


def test_entity_encoded_type_is_decoded() -> None:
    assert only('<link rel="alternate" type="application/rss&#43;xml" href="/i.xml">').score == 10


@pytest.mark.parametrize(
    "declared",
    [
        "text/html",
        "application/json",
        "application/feed+json",
        "application/rdf+xml",
        "application/xml",
        "application/rsd+xml",
        "",
    ],
)
def test_other_types_are_not_candidates_by_default(declared: str) -> None:
    assert discover_feeds(page(f'<link rel="alternate" type="{declared}" href="/x">')) == []


def test_missing_alternate_costs_3() -> None:
    c = only('<link rel="feed" type="application/rss+xml" href="/feed">')
    assert c.score == 7
    assert c.reasons == ["base 10", "-3 no rel=alternate"]
    assert only('<link type="application/rss+xml" href="/feed">').score == 7


def test_rel_is_a_case_insensitive_token_list() -> None:
    c = only('<link rel="  Feed   ALTERNATE " type="application/rss+xml" href="/feed">')
    assert c.rel == ["feed", "alternate"]
    assert c.score == 10
    # "alternate" must be a whole token, not a substring
    assert only('<link rel="alternates" type="application/rss+xml" href="/feed">').score == 7


def test_comments_feed_costs_5() -> None:
    c = only('<link rel="alternate" type="application/rss+xml" href="/comments/feed/">')
    assert c.score == 5
    assert c.reasons == ["base 10", "-5 comments feed"]
    assert (
        only('<link rel="alternate" type="application/rss+xml" href="/?feed=Comments">').score == 5
    )


def test_comment_in_the_host_is_no_penalty() -> None:
    c = only(
        '<link rel="alternate" type="application/rss+xml" href="https://comments.example/rss">'
    )
    assert c.score == 10


@pytest.mark.parametrize("href", ["/xmlrpc.php", "/xmlrpc.php?rsd", "/rsd.xml"])
def test_rpc_and_rsd_cost_5_once(href: str) -> None:
    c = only(f'<link rel="alternate" type="application/rss+xml" href="{href}">')
    assert c.score == 5
    assert c.reasons == ["base 10", "-5 rpc/rsd endpoint"]


def test_penalties_add_up() -> None:
    c = only('<link type="application/rss+xml" href="/comments/xmlrpc">')
    assert c.score == 10 - 3 - 5 - 5
    assert c.reasons == [
        "base 10",
        "-3 no rel=alternate",
        "-5 comments feed",
        "-5 rpc/rsd endpoint",
    ]


def test_best_first_ties_keep_document_order() -> None:
    found = discover_feeds(
        page(
            '<link rel="alternate" type="application/rss+xml" href="/comments/feed/">'
            '<link type="application/atom+xml" href="/atom.xml">'
            '<link rel="alternate" type="application/rss+xml" href="/feed/">'
            '<link rel="alternate" type="application/atom+xml" href="/atom-all.xml">'
        )
    )
    assert [c.url for c in found] == [
        "https://blog.example/feed/",
        "https://blog.example/atom-all.xml",
        "https://blog.example/atom.xml",
        "https://blog.example/comments/feed/",
    ]
    assert [c.score for c in found] == [10, 10, 7, 5]


def test_relative_href_resolves_against_the_final_url() -> None:
    c = only(
        '<link rel="alternate" type="application/rss+xml" href="feed.xml">',
        url="https://www.hop.example/journal/",
    )
    assert c.url == "https://www.hop.example/journal/feed.xml"


def test_relative_base_href_is_resolved_against_the_page_url() -> None:
    c = only(
        '<base href="../"><link rel="alternate" type="application/atom+xml" href="atom.xml">',
        url="https://based.example/notes/2024/hello.html",
    )
    assert c.url == "https://based.example/notes/atom.xml"


def test_duplicate_urls_keep_the_first() -> None:
    found = discover_feeds(
        page(
            '<link type="application/rss+xml" href="/feed" title="first">'
            '<link rel="alternate" type="application/atom+xml" href="https://blog.example/feed">'
        )
    )
    assert [(c.url, c.title, c.score) for c in found] == [("https://blog.example/feed", "first", 7)]


def test_links_without_usable_href_are_skipped() -> None:
    head = (
        '<link rel="alternate" type="application/rss+xml">'
        '<link rel="alternate" type="application/rss+xml" href="  ">'
        '<link rel="alternate" type="application/rss+xml" href="javascript:void(0)">'
    )
    assert discover_feeds(page(head)) == []


def test_a_rule_is_disabled_with_order_none() -> None:
    rules = {**DEFAULT_FEED_RULES, "blogfeeds.extract.feeds.NoAlternate": None}
    c = only('<link type="application/rss+xml" href="/feed">', rules=rules)
    assert (c.score, c.reasons) == (10, ["base 10"])


def test_disabling_the_type_rule_discovers_nothing() -> None:
    rules = {**DEFAULT_FEED_RULES, "blogfeeds.extract.feeds.RssAtomType": None}
    assert (
        discover_feeds(page('<link rel="alternate" type="application/rss+xml" href="/f">'), rules)
        == []
    )


def test_custom_rule_by_dotted_path_runs_in_order() -> None:
    rules = {**DEFAULT_FEED_RULES, "tests.test_extract_feeds.PreferAtom": 50}
    found = discover_feeds(
        page(
            '<link rel="alternate" type="application/rss+xml" href="/rss.xml">'
            '<link rel="alternate" type="application/atom+xml" href="/atom.xml">'
        ),
        rules,
    )
    assert [c.url for c in found] == [
        "https://blog.example/atom.xml",
        "https://blog.example/rss.xml",
    ]
    assert found[0].score == 11
    assert found[0].reasons == ["base 10", "+1 atom"]


def test_a_rejecting_rule_drops_the_candidate() -> None:
    rules: dict[Any, int | None] = {**DEFAULT_FEED_RULES, DropFeedburner: 500}
    head = (
        '<link rel="alternate" type="application/rss+xml" href="https://feedburner.example/x">'
        '<link rel="alternate" type="application/rss+xml" href="/feed">'
    )
    assert [c.url for c in discover_feeds(page(head), rules)] == ["https://blog.example/feed"]


def test_optional_rdf_and_json_feed_type_rules() -> None:
    rules = {
        **DEFAULT_FEED_RULES,
        "blogfeeds.extract.feeds.RdfType": 110,
        "blogfeeds.extract.feeds.JsonFeedType": 120,
    }
    found = discover_feeds(
        page(
            '<link rel="alternate" type="application/json" href="/feed.json">'
            '<link rel="alternate" type="application/rdf+xml" href="/index.rdf">'
            '<link rel="alternate" type="application/feed+json" href="/feed2.json">'
        ),
        rules,
    )
    assert [(c.url.rsplit("/", 1)[1], c.score) for c in found] == [
        ("feed2.json", 10),
        ("index.rdf", 9),
        ("feed.json", 8),
    ]
    assert found[1].reasons == ["base 10", "-1 type application/rdf+xml"]
    assert found[2].reasons == ["base 10", "-2 type application/json"]


def test_media_type() -> None:
    assert media_type("Application/Atom+XML; Charset=utf-8") == "application/atom+xml"
    assert media_type(None) == ""


def test_to_feed_info() -> None:
    c = only('<link type="application/atom+xml" href="/a" title="A">')
    assert to_feed_info(c) == FeedInfo(
        url="https://blog.example/a",
        type="application/atom+xml",
        title="A",
        score=7,
        reasons=["base 10", "-3 no rel=alternate"],
    )


def test_settings_mirror_the_default_rules() -> None:
    assert settings.BLOGFEEDS_FEED_SCORERS == DEFAULT_FEED_RULES
