"""Feed autodiscovery on the page alone (:func:`discover_feeds`): the original ``<link>`` rule set
and the blogfeeds set, one hand-made page per rule and per number."""

from __future__ import annotations

from typing import Any

import pytest

from blogfeeds import settings
from blogfeeds.extract.discovery import (
    BROWSER_USER_AGENT,
    FEED_SCORERS_BASE,
    FEED_STAGES_BASE,
    LINK_HINT,
    ORIGINAL_FEED_SCORERS,
    ORIGINAL_FEED_STAGES,
    RULESETS,
    DiscoveryConfig,
    FeedCandidate,
    RulesSpec,
    discover_feeds,
)
from blogfeeds.extract.discovery.candidates import parse_link_header
from blogfeeds.extract.discovery.guesses import (
    blog_roots,
    guess_candidates,
    guess_limit,
    guess_paths,
)
from blogfeeds.extract.discovery.platforms import detect_platforms, platform_candidates
from blogfeeds.extract.discovery.scorers import MaybeType
from blogfeeds.extract.discovery.stages import LinkElements
from blogfeeds.extract.discovery.vocabulary import FEED_TYPES, MAYBE_TYPES, media_type, url_key
from blogfeeds.extract.page import Page, parse_page
from blogfeeds.extract.scoring import Adjustment, Reject, build_rules
from blogfeeds.items import FeedInfo
from blogfeeds.option import StartupError
from blogfeeds.report_items import feed_info

URL = "https://blog.example/"


def page(head: str, url: str = URL) -> Page:
    return parse_page(url, f"<html><head>{head}</head><body><p>x</p></body></html>".encode(), {})


def only(
    head: str,
    url: str = URL,
    rules: RulesSpec = ORIGINAL_FEED_SCORERS,
    stages: RulesSpec = ORIGINAL_FEED_STAGES,
) -> FeedCandidate:
    found = discover_feeds(page(head, url), rules, stages=stages)
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
    assert (
        discover_feeds(
            page(f'<link rel="alternate" type="{declared}" href="/x">'),
            ORIGINAL_FEED_SCORERS,
            stages=ORIGINAL_FEED_STAGES,
        )
        == []
    )


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
        ),
        ORIGINAL_FEED_SCORERS,
        stages=ORIGINAL_FEED_STAGES,
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
        ),
        ORIGINAL_FEED_SCORERS,
        stages=ORIGINAL_FEED_STAGES,
    )
    assert [(c.url, c.title, c.score) for c in found] == [("https://blog.example/feed", "first", 7)]


def test_links_without_usable_href_are_skipped() -> None:
    head = (
        '<link rel="alternate" type="application/rss+xml">'
        '<link rel="alternate" type="application/rss+xml" href="  ">'
        '<link rel="alternate" type="application/rss+xml" href="javascript:void(0)">'
    )
    assert discover_feeds(page(head), ORIGINAL_FEED_SCORERS, stages=ORIGINAL_FEED_STAGES) == []


def test_a_rule_is_disabled_with_order_none() -> None:
    rules = {**ORIGINAL_FEED_SCORERS, "blogfeeds.extract.discovery.scorers.NoAlternate": None}
    c = only('<link type="application/rss+xml" href="/feed">', rules=rules)
    assert (c.score, c.reasons) == (10, ["base 10"])


def test_disabling_the_only_stage_discovers_nothing() -> None:
    stages = {**ORIGINAL_FEED_STAGES, "blogfeeds.extract.discovery.stages.RssAtomLinks": None}
    head = '<link rel="alternate" type="application/rss+xml" href="/f">'
    assert discover_feeds(page(head), ORIGINAL_FEED_SCORERS, stages=stages) == []


def test_custom_rule_by_dotted_path_runs_in_order() -> None:
    rules = {**ORIGINAL_FEED_SCORERS, "tests.test_extract_feeds.PreferAtom": 50}
    found = discover_feeds(
        page(
            '<link rel="alternate" type="application/rss+xml" href="/rss.xml">'
            '<link rel="alternate" type="application/atom+xml" href="/atom.xml">'
        ),
        rules,
        stages=ORIGINAL_FEED_STAGES,
    )
    assert [c.url for c in found] == [
        "https://blog.example/atom.xml",
        "https://blog.example/rss.xml",
    ]
    assert found[0].score == 11
    assert found[0].reasons == ["base 10", "+1 atom"]


def test_a_rejecting_rule_drops_the_candidate() -> None:
    rules: dict[Any, int | None] = {**ORIGINAL_FEED_SCORERS, DropFeedburner: 500}
    head = (
        '<link rel="alternate" type="application/rss+xml" href="https://feedburner.example/x">'
        '<link rel="alternate" type="application/rss+xml" href="/feed">'
    )
    found = discover_feeds(page(head), rules, stages=ORIGINAL_FEED_STAGES)
    assert [c.url for c in found] == ["https://blog.example/feed"]


def test_a_stage_decides_the_types_and_a_scorer_the_maybe_penalty() -> None:
    links = LinkElements(types=FEED_TYPES | MAYBE_TYPES, sources=frozenset({"link"}))
    found = discover_feeds(
        page(
            '<link rel="alternate" type="application/json" href="/feed.json">'
            '<link rel="alternate" type="application/rdf+xml" href="/index.rdf">'
            '<link rel="alternate" type="application/feed+json" href="/feed2.json">'
        ),
        [MaybeType(), *build_rules(ORIGINAL_FEED_SCORERS)],
        stages=[links],
    )
    assert [(c.url.rsplit("/", 1)[1], c.score) for c in found] == [
        ("index.rdf", 10),
        ("feed2.json", 10),
        ("feed.json", 8),
    ]
    assert found[2].reasons == ["base 10", "-2 maybe type application/json: validate"]


def test_media_type() -> None:
    assert media_type("Application/Atom+XML; Charset=utf-8") == "application/atom+xml"
    assert media_type(None) == ""


def test_feed_info() -> None:
    c = only('<link type="application/atom+xml" href="/a" title="A">')
    assert feed_info(c) == FeedInfo(
        url="https://blog.example/a",
        type="application/atom+xml",
        title="A",
        score=7,
        reasons=["base 10", "-3 no rel=alternate"],
    )


def test_settings_add_to_the_defaults_in_code() -> None:
    assert settings.BLOGFEEDS_FEED_SCORERS == {}
    assert settings.BLOGFEEDS_FEED_STAGES == {}
    assert len(FEED_SCORERS_BASE) == 13 and len(FEED_STAGES_BASE) == 6


# --- The blogfeeds rule set (default) ---------------------------------------------------------


ORIGINAL = ORIGINAL_FEED_STAGES


def found(
    html: str,
    url: str = URL,
    *,
    hints: bool = False,
    headers: dict[str, str] | None = None,
    stages: RulesSpec = None,
) -> list[FeedCandidate]:
    p = parse_page(url, f"<html>{html}</html>".encode(), headers or {})
    return discover_feeds(p, hints=hints, stages=stages)


def urls(cands: list[FeedCandidate]) -> list[str]:
    return [c.url.removeprefix("https://blog.example") for c in cands]


def test_default_rules_are_the_blogfeeds_set() -> None:
    assert RULESETS["blogfeeds"] == (FEED_SCORERS_BASE, FEED_STAGES_BASE)
    assert RULESETS["original"] == (ORIGINAL_FEED_SCORERS, ORIGINAL_FEED_STAGES)
    assert "blogfeeds.extract.discovery.stages.RssAtomLinks" not in FEED_STAGES_BASE


@pytest.mark.parametrize(
    ("declared", "score"),
    [
        ("application/rss+xml", 10),
        ("application/atom+xml", 10),
        ("application/rdf+xml", 10),
        ("application/feed+json", 10),
        ("application/x-atom+xml", 10),
        ("application/xml", 8),
        ("text/xml", 8),
        ("application/json", 8),
    ],
)
def test_feed_and_maybe_types(declared: str, score: float) -> None:
    (c,) = found(f'<link rel="alternate" type="{declared}" href="/f">')
    assert (c.type, c.score, c.source) == (declared, score, "link")
    if score == 8:
        assert c.reasons[-1] == f"-2 maybe type {declared}: validate"


def test_untyped_rel_feed_is_a_maybe() -> None:
    (c,) = found('<link rel="feed" href="/f">')
    assert c.reasons == ["base 10", "-2 maybe type (none): validate", "-3 no rel=alternate"]


def test_untyped_alternate_is_a_maybe_unless_a_translation_media_or_page() -> None:
    # Mark Pilgrim's autodiscovery suite: an untyped rel=alternate may be the feed.
    assert found('<link rel="alternate" href="/index.xml">') == []  # not advertised as a feed
    (c,) = found('<link rel="alternate" href="/index.xml">', hints=True)
    assert (c.url, c.type, c.source) == ("https://blog.example/index.xml", "", LINK_HINT)
    assert c.reasons == ["base 10", "-2 maybe type (none): validate"]
    for head in (
        '<link rel="alternate" href="/de/" hreflang="de">',
        '<link rel="alternate" media="only screen and (max-width: 640px)" href="/m/">',
        '<link rel="alternate" href="/print.html">',
        '<link rel="alternate" href="/cover.png">',
    ):
        assert found(head, hints=True) == [], head
    assert found('<link rel="alternate" href="/index.xml">', hints=True, stages=ORIGINAL) == []


def test_alternate_stylesheet_with_a_feed_type_is_a_style_sheet() -> None:
    # In HTML, rel="alternate stylesheet" is a style sheet whatever its type.
    for head in (
        '<link rel="alternate stylesheet" type="application/rss+xml" href="/s.xml">',
        '<link rel="Stylesheet Alternate" type="application/atom+xml" href="/s.xml">',
    ):
        assert found(head, hints=True) == [], head
    header = '</s.xml>; rel="alternate stylesheet"; type="application/rss+xml"'
    assert found("<p>x</p>", headers={"Link": header}) == []


def test_a_feed_link_that_is_also_a_style_sheet_is_a_feed() -> None:
    # rel="feed stylesheet" names a feed (browsers exclude "stylesheet" only beside "alternate")
    head = '<link rel="feed stylesheet" href="/13.atom">'
    assert urls(found(head, hints=True)) == ["/13.atom"]
    header = '</13.atom>; rel="feed stylesheet"'
    assert urls(found("<p>x</p>", headers={"Link": header})) == ["/13.atom"]


def test_the_one_hop_stage_reads_no_image_whatever_its_text() -> None:
    from blogfeeds.extract.discovery.candidates import subscribe_links

    body = (
        '<a href="/feed.jpg">RSS feed</a><a href="/rss.png">订阅</a>'
        '<a href="/subscribe/">Subscribe</a><a href="/rss.html">RSS feeds</a>'
    )
    page = parse_page(URL, f"<html><body>{body}</body></html>".encode(), {})
    assert [u.removeprefix("https://blog.example") for u in subscribe_links(page)] == [
        "/subscribe/",
        "/rss.html",
    ]


@pytest.mark.parametrize(
    "anchor",
    [
        '<a href="/feed.jpg">RSS</a>',
        '<a href="/images/rss.png"><img src="/i/rss.svg"></a>',
        '<a href="/atom.css">x</a>',
        '<a href="/static/feed.js">x</a>',
        '<a href="/rss.pdf">RSS</a>',
        '<a href="/rss.html">x</a>',
    ],
)
def test_feed_looking_anchor_needs_a_feed_plausible_extension(anchor: str) -> None:
    assert found(f"<body>{anchor}</body>", hints=True) == []


def test_feed_plausible_extensions_and_a_page_named_by_its_text() -> None:
    body = (
        '<a href="/feed.rss">x</a><a href="/feed.rdf">x</a><a href="/feed.json">x</a>'
        '<a href="/feed.php">x</a><a href="/index.php?feed=rss2">x</a>'
        '<a href="/subscribe.html">RSS feeds</a>'
    )
    cands = found(body, hints=True)
    assert list(zip(urls(cands), [c.hint for c in cands], strict=True)) == [
        ("/feed.rss", "href"),
        ("/feed.rdf", "href"),
        ("/feed.json", "href"),
        ("/feed.php", "href"),
        ("/index.php?feed=rss2", "href"),
        ("/subscribe.html", "text"),
    ]


def test_non_feed_alternates_are_not_candidates() -> None:
    head = (
        '<link rel="alternate" hreflang="de" href="/de/">'
        '<link rel="alternate" media="only screen" href="https://m.blog.example/">'
        '<link rel="alternate" type="text/html" href="/">'
        '<link rel="alternate" type="application/json+oembed" href="/oembed?x">'
        '<link rel="sitemap" type="application/xml" href="/sitemap.xml">'
    )
    assert found(head, hints=True) == []


@pytest.mark.parametrize(
    "href", ["/wp-json/wp/v2/pages/7", "/?rest_route=/wp/v2/posts/1", "/x/oembed/1.0/embed?url=y"]
)
def test_wordpress_rest_and_oembed_json_alternates_are_rejected(href: str) -> None:
    assert found(f'<link rel="alternate" type="application/json" href="{href}">') == []


def test_typed_anchor_with_rel_alternate_is_advertised() -> None:
    (c,) = found('<a rel="alternate" type="application/rss+xml" href="/cat/index.xml">x</a>')
    assert (c.source, c.score) == ("a", 10)
    assert found('<a type="application/rss+xml" href="/page/">x</a>') == []


def test_link_header_candidates() -> None:
    header = (
        '</feed.atom>; rel="alternate"; type="application/atom+xml"; title="Posts", '
        '<https://blog.example/>; rel="canonical", </x.json>; rel=alternate; type="text/html"'
    )
    (c,) = found("<p>x</p>", headers={"Link": header})
    assert (c.url, c.source, c.title, c.score) == (
        "https://blog.example/feed.atom",
        "header",
        "Posts",
        10,
    )


def test_parse_link_header() -> None:
    assert parse_link_header('<a>; rel="alternate feed"; type=application/rss+xml, <b>') == [
        ("a", {"rel": "alternate feed", "type": "application/rss+xml"}),
        ("b", {}),
    ]
    assert parse_link_header("") == []


def test_link_without_alternate_is_a_hint_validated_later() -> None:
    head = '<link rel="alternative" type="application/atom+xml" href="/atom.xml">'
    assert found(head) == []
    (c,) = found(head, hints=True)
    assert (c.source, c.score) == (LINK_HINT, 7)
    assert only(head).score == 7  # the original rule reports it


@pytest.mark.parametrize(
    "title", ["Blog » Comments Feed", "Blog » Kommentar-Feed", "博客 » 评论", "Commentaires"]
)
def test_comments_title_costs_5(title: str) -> None:
    (c,) = found(f'<link rel="alternate" type="application/rss+xml" href="/x/" title="{title}">')
    assert c.score == 5
    assert c.reasons[-1] == "-5 title says comments"


def test_main_feed_ranks_above_comments_per_post_and_category_feeds() -> None:
    head = (
        '<link rel="alternate" type="application/rss+xml" href="/2024/05/walk/feed/" title="W">'
        '<link rel="alternate" type="application/rss+xml" href="/category/film/feed/" title="F">'
        '<link rel="alternate" type="application/rss+xml" href="/comments/feed/" title="C">'
        '<link rel="alternate" type="application/rss+xml" href="/feed/" title="Main">'
    )
    cands = found(head, "https://blog.example/2024/05/walk/")
    assert urls(cands) == [
        "/feed/",
        "/category/film/feed/",
        "/2024/05/walk/feed/",
        "/comments/feed/",
    ]
    assert [c.score for c in cands] == [10, 9, 7, 5]
    assert cands[2].reasons[-1] == "-3 per-post feed"


def test_category_page_feed_is_not_a_per_post_feed() -> None:
    (c,) = found(
        '<link rel="alternate" type="application/rss+xml" href="feed/">',
        "https://blog.example/category/film/",
    )
    assert c.reasons == ["base 10", "-1 category/tag feed"]


def test_advertised_feed_on_another_site_costs_1() -> None:
    (c,) = found(
        '<link rel="alternate" type="application/rss+xml" href="https://feeds.other.example/x">'
    )
    assert c.reasons == ["base 10", "-1 on another site"]


def test_anchor_candidates_need_hints() -> None:
    body = '<body><a href="/feed/"><img src="/i/feed.svg" alt="feed icon"></a></body>'
    assert found(body) == []
    (c,) = found(body, hints=True)
    assert (c.url, c.source, c.hint, c.score) == ("https://blog.example/feed/", "anchor", "href", 8)
    assert c.reasons == ["base 10", "-2 anchor (href)"]


@pytest.mark.parametrize(
    ("anchor", "url", "hint"),
    [
        ('<a href="/atom.xml"><i class="fa fa-rss"></i> 订阅</a>', "/atom.xml", "href"),
        ('<a class="rss" href="/?feed=rss2">RSS</a>', "/?feed=rss2", "href"),
        ('<a href="index.xml">x</a>', "/index.xml", "href"),
        ('<a href="/notes.rss">x</a>', "/notes.rss", "href"),
        ('<a href="/blog.atom">x</a>', "/blog.atom", "href"),
        ('<a href="/rss/feed.xml">x</a>', "/rss/feed.xml", "href"),
        ('<a href="/forum.php?mod=rss">x</a>', "/forum.php?mod=rss", "href"),
        ('<a href="feed:https://blog.example/f.xml">x</a>', "/f.xml", "href"),
        ('<a href="/subscribe/">RSS feeds</a>', "/subscribe/", "text"),
        ('<a href="/s/" class="icon-feed">x</a>', "/s/", "text"),
        ('<a href="/s/">订阅本站</a>', "/s/", "text"),
    ],
)
def test_anchor_hints(anchor: str, url: str, hint: str) -> None:
    (c,) = found(f"<body>{anchor}</body>", hints=True)
    assert (urls([c]), c.hint) == ([url], hint)


@pytest.mark.parametrize(
    "anchor",
    [
        '<a href="/feedback/">Feedback</a>',
        '<a href="/anatomy/">Anatomy</a>',
        '<a href="/sitemap.xml">Site map</a>',
        '<a href="https://friend.example/feed/">friend</a>',
        '<a href="https://feedly.com/i/subscription/feed/https://blog.example/feed">Feedly</a>',
        '<a href="mailto:rss@blog.example">RSS</a>',
        '<a href="#rss">RSS</a>',
    ],
)
def test_not_anchor_hints(anchor: str) -> None:
    assert found(f"<body>{anchor}</body>", hints=True) == []


def test_anchor_to_a_feed_host_is_kept() -> None:
    (c,) = found('<body><a href="https://feeds.feedburner.com/blog">RSS</a></body>', hints=True)
    assert c.reasons == ["base 10", "-2 anchor (feed host)", "-1 on another site"]


@pytest.mark.parametrize(
    ("html", "url", "want"),
    [
        ('<meta name="generator" content="WordPress 6.5">', URL, ["/feed/", "/?feed=rss2"]),
        (
            '<link rel="stylesheet" href="/blog/wp-content/themes/x.css">',
            URL,
            ["/blog/feed/", "/blog/?feed=rss2", "/feed/", "/?feed=rss2"],
        ),
        ('<meta name="generator" content="Typecho 1.2.1">', URL, ["/feed/", "/index.php/feed/"]),
        (
            '<meta name="generator" content="Hexo 7.1.1">',
            URL,
            ["/atom.xml", "/rss2.xml", "/rss.xml"],
        ),
        ('<meta name="generator" content="Hugo 0.120">', URL, ["/index.xml"]),
        (
            '<meta name="generator" content="Joomla! - Open Source Content Management">',
            URL,
            ["/?format=feed&type=rss", "/?format=feed&type=atom"],
        ),
        (
            '<meta name="generator" content="Eleventy v2.0.1">',
            URL,
            ["/feed/feed.xml", "/feed.xml", "/feed/feed.json"],
        ),
    ],
)
def test_platform_paths(html: str, url: str, want: list[str]) -> None:
    cands = [c for c in found(f"<head>{html}</head>", url, hints=True) if c.source == "platform"]
    assert urls(cands) == want
    assert all(c.reasons[1].startswith("-4 platform path (") for c in cands)


def test_platform_by_host_and_user_path() -> None:
    cands = platform_candidates(parse_page("https://medium.com/@alice", b"<p>x</p>", {}))
    assert [c.url for c in cands] == ["https://medium.com/feed/@alice"]
    cands = platform_candidates(parse_page("https://alice.medium.com/", b"<p>x</p>", {}))
    assert [c.url for c in cands] == ["https://alice.medium.com/feed"]


@pytest.mark.parametrize(
    ("url", "want"),
    [
        ("https://www.cnblogs.com/alice/p/1.html", ["https://www.cnblogs.com/alice/rss"]),
        ("https://cnblogs.com/alice/", ["https://cnblogs.com/alice/rss"]),
        ("https://blog.csdn.net/bob/article/details/7", ["https://blog.csdn.net/bob/rss/list"]),
        ("https://dev.to/carol", ["https://dev.to/feed/carol"]),
        ("https://write.as/dan/", ["https://write.as/dan/feed/"]),
        ("https://note.com/erin", ["https://note.com/erin/rss"]),
        ("https://www.cnblogs.com/", []),
        ("https://www.jianshu.com/u/abc", []),
    ],
)
def test_path_hosted_platforms_have_their_own_feed_paths(url: str, want: list[str]) -> None:
    assert [c.url for c in platform_candidates(parse_page(url, b"<p>x</p>", {}))] == want


def test_platform_paths_of_a_path_hosted_blog_stay_under_its_prefix() -> None:
    html = b'<meta name="generator" content="Hexo 7"><link rel="stylesheet" href="/wp-content/a">'
    cands = platform_candidates(parse_page("https://alice.github.io/notes/", html, {}))
    assert [c.url for c in cands] == [
        "https://alice.github.io/notes/feed/",
        "https://alice.github.io/notes/?feed=rss2",
        "https://alice.github.io/notes/atom.xml",
        "https://alice.github.io/notes/rss2.xml",
        "https://alice.github.io/notes/rss.xml",
    ]


def test_platform_by_header() -> None:
    p = parse_page(
        URL, b"<p>x</p>", {"Link": '<https://blog.example/wp-json/>; rel="https://api.w.org/"'}
    )
    assert [m.platform.name for m in detect_platforms(p)] == ["WordPress"]
    assert detect_platforms(parse_page(URL, b"<p>x</p>", {})) == []


def test_platform_by_asset_and_its_install_root() -> None:
    html = (
        b'<link rel="stylesheet" href="/style.css">'
        b'<script src="https://cdn.example/x.js"></script>'
        b'<img src="/blog/wp-content/uploads/a.png">'
    )
    [match] = detect_platforms(parse_page("https://site.example/", html, {}))
    assert match.platform.name == "WordPress"
    assert match.evidence == "asset /wp-content/"
    assert match.roots == ("https://site.example/blog/", "https://site.example/")


def test_guess_candidates_entry_path_then_root() -> None:
    cands = guess_candidates(parse_page("https://blog.example/notes/", b"<p>x</p>", {}))
    assert [c.url for c in cands[:4]] == [
        "https://blog.example/notes/atom.xml",
        "https://blog.example/atom.xml",
        "https://blog.example/notes/feed/",
        "https://blog.example/feed/",
    ]
    assert len(guess_candidates(page(""))) == guess_limit() == 4


@pytest.mark.parametrize(
    ("url", "roots"),
    [
        ("https://www.cnblogs.com/alice/", ["https://www.cnblogs.com/alice/"]),
        (
            "https://www.cnblogs.com/alice/p/1.html",
            ["https://www.cnblogs.com/alice/p/", "https://www.cnblogs.com/alice/"],
        ),
        ("https://alice.github.io/notes/", ["https://alice.github.io/notes/"]),
        ("https://blog.example/notes/", ["https://blog.example/notes/", "https://blog.example/"]),
    ],
)
def test_guesses_of_a_path_hosted_blog_never_climb_above_its_prefix(
    url: str, roots: list[str]
) -> None:
    assert blog_roots(url) == roots
    cands = guess_candidates(parse_page(url, b"<p>x</p>", {}))
    assert all(any(c.url == root + c.hint for root in roots) for c in cands)


def test_guess_table_is_ordered_and_documented() -> None:
    paths = guess_paths()
    assert paths[:5] == ("atom.xml", "feed/", "feed.xml", "index.xml", "rss.xml")
    assert len(set(paths)) == len(paths)
    for path in ("feed/feed.xml", "feed.json", "?feed=rss2"):
        assert paths.index(path) < 12


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("HTTPS://Blog.Example:443/Feed/#top", "https://blog.example/Feed/"),
        ("http://blog.example", "http://blog.example/"),
        ("http://blog.example:8080/f?a=1", "http://blog.example:8080/f?a=1"),
    ],
)
def test_url_key(url: str, key: str) -> None:
    assert url_key(url) == key


def test_discovery_config_from_settings() -> None:
    config = DiscoveryConfig.from_settings(Settings(vars(settings)))
    assert config == DiscoveryConfig()
    assert config.scorers == tuple(build_rules(FEED_SCORERS_BASE))
    assert config.stages == tuple(build_rules(FEED_STAGES_BASE))
    original = DiscoveryConfig.from_settings(
        Settings({"BLOGFEEDS_FEED_RULESET": "original", "BLOGFEEDS_FEED_RETRY_USER_AGENT": ""})
    )
    assert (original.ruleset, original.retry_user_agent) == ("original", None)
    assert original.scorers == tuple(build_rules(ORIGINAL_FEED_SCORERS))
    assert original.stages == tuple(build_rules(ORIGINAL_FEED_STAGES))
    with pytest.raises(StartupError, match="BLOGFEEDS_FEED_RULESET"):
        DiscoveryConfig.from_settings(Settings({"BLOGFEEDS_FEED_RULESET": "nope"}))


class Settings(dict[str, Any]):
    """The ``get`` part of Scrapy's Settings, over a dict."""


def test_settings_select_the_blogfeeds_ruleset_and_budget() -> None:
    assert settings.BLOGFEEDS_FEED_RULESET == "blogfeeds"
    assert settings.BLOGFEEDS_FEED_MAX_REQUESTS == DiscoveryConfig().max_requests == 10
    assert settings.BLOGFEEDS_FEED_MAX_FETCH_SECONDS == DiscoveryConfig().max_fetch_seconds == 10
    assert settings.BLOGFEEDS_FEED_RETRY_USER_AGENT == BROWSER_USER_AGENT
