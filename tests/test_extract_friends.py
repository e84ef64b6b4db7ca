"""Friend-link container, original formula (``ruleset="original"``): one hand-made page per rule
and per number. The layered default ruleset is tested in ``tests/test_friend_layers.py``."""

from __future__ import annotations

from collections import Counter
from typing import Any

import lxml.etree
import lxml.html
import pytest

from blogfeeds import settings
from blogfeeds.extract.friends import (
    FRIEND_SCORERS_BASE,
    ORIGINAL_FRIEND_RULES,
    Container,
    Friend,
    FriendExtraction,
    LinkTextRatio,
    RulesSpec,
    affect,
    extract_friends,
    find_friend_pages,
    scan_containers,
)
from blogfeeds.extract.page import Page, parse_page
from blogfeeds.extract.scoring import Adjustment

URL = "https://me-example.com/links/"


def page(body: str, url: str = URL) -> Page:
    return parse_page(url, f"<html><head></head><body>{body}</body></html>".encode(), {})


def extract(pg: Page, rules: RulesSpec = None) -> FriendExtraction:
    """The original formula."""
    return extract_friends(pg, rules, ruleset="original")


def container(body: str, url: str = URL, desc: str = "") -> Container:
    """The one container of a page (or the one whose description is ``desc``)."""
    found = [c for c in scan_containers(page(body, url))[0] if not desc or c.description == desc]
    assert len(found) == 1, found
    return found[0]


def a(href: str, text: str = "x", blank: bool = False) -> str:
    target = ' target="_blank"' if blank else ""
    return f'<a href="{href}"{target}>{text}</a>'


class PlusOne:
    """A custom rule loaded by dotted path in a test."""

    def __call__(self, c: Container, score: float, page: Page) -> Adjustment:
        return Adjustment(score + 1, "+1 custom")


# --- affect() --------------------------------------------------------------------------------


def test_affect_math() -> None:
    assert affect(1000, 0.1, 0.5, 2) == pytest.approx(325)  # 100 + 900 * 0.25
    assert affect(1000, 0.1, 0.5, 1) == pytest.approx(550)  # 100 + 900 * 0.5
    assert affect(1000, 0.1, 0.0, 1) == pytest.approx(100)  # keep is the floor
    assert affect(1000, 0.1, 1.0, 2) == 1000
    assert affect(1000, 0.1, 1.5, 2) == 1000  # ratio >= 1 keeps p (no bonus)
    assert affect(2000, 0.5, 0.2, 1) == pytest.approx(1200)


# --- Counting --------------------------------------------------------------------------------


def test_target_blank_external_link_counts_twice() -> None:
    c = container(
        f"<ul><li>{a('https://a-example.com/')}</li>"
        f"<li>{a('https://b-example.com/', blank=True)}</li></ul>"
    )
    assert (c.external, c.internal) == (3, 0)
    assert [r.weight for r in c.external_links] == [1, 2]


def test_target_blank_internal_link_counts_once() -> None:
    c = container(f"<ul><li>{a('/about', blank=True)}</li></ul>")
    assert (c.external, c.internal) == (0, 1)


def test_deep_paths_and_queries_are_skipped_but_one_level_counts() -> None:
    c = container(
        "<ul>"
        + "".join(
            f"<li>{a(h)}</li>"
            for h in [
                "https://a-example.com",  # no path: counted
                "https://b-example.com/",  # root: counted
                "https://c-example.com/blog/",  # one level: counted
                "https://d-example.com/a/b/",  # two levels: skipped
                "https://e-example.com/?ref=me",  # query: skipped
                "/2024/05/post.html",  # internal but deep: skipped
                "/about/",  # internal, one level: counted
            ]
        )
        + "</ul>"
    )
    assert (c.external, c.internal, c.links) == (3, 1, 7)
    assert [r.url for r in c.external_links] == [
        "https://a-example.com",
        "https://b-example.com/",
        "https://c-example.com/blog/",
    ]


def test_non_http_links_are_ignored_but_still_links() -> None:
    c = container(
        f"<ul><li>{a('mailto:me@me-example.com')}</li><li>{a('javascript:go()')}</li>"
        f"<li>{a('#top')}</li><li>{a('')}</li><li>{a('https://a-example.com/')}</li></ul>"
    )
    assert (c.external, c.internal, c.links) == (1, 0, 5)


def test_external_means_another_blog_not_another_host() -> None:
    c = container(
        "<ul>"
        + "".join(
            f"<li>{a(h)}</li>"
            for h in [
                "https://www.me-example.com/",  # same registered domain: internal
                "https://blog.me-example.com/",  # same registered domain: internal
                "https://alice.github.io/",  # another blog on a platform
                "https://bob.github.io/",  # another one
            ]
        )
        + "</ul>",
        url="https://me-example.com/",
    )
    assert (c.external, c.internal) == (2, 2)


def test_text_and_tag_measures() -> None:
    c = container(
        '<div><span>Friends:</span> <a href="https://a-example.com/">Ali ce</a>'
        "<script>var long_script_text = 1;</script> tail</div>"
    )
    assert (c.links, c.tags, c.link_text, c.text) == (1, 3, 5, 8 + 5 + 4)


# --- Scoring: every number -------------------------------------------------------------------


def test_exact_score_computed_by_hand() -> None:
    body = (
        '<div id="box"><span>Friends:</span> '
        + a("https://a-example.com/", "Alice")
        + " "
        + a("https://b-example.com/", "Bobby")
        + " "
        + a("https://c-example.com/", "Carol")
        + "</div>"
    )
    result = extract(page(body))
    best = result.best
    assert best is not None
    c = best.container
    assert (c.external, c.internal, c.links, c.tags, c.link_text, c.text) == (3, 0, 3, 4, 15, 23)
    # (3 - 0) x 1000, then affect(., 0.1, 15/23, 2), then affect(., 0.1, 3/4, 1)
    expected = 3000 * (0.1 + 0.9 * (15 / 23) ** 2) * (0.1 + 0.9 * 3 / 4)
    assert best.score == pytest.approx(expected)
    assert best.score == pytest.approx(1122.5047258979207)
    assert best.reasons == [
        "+3000 (3 external - 0 internal) x 1000",
        "x0.4828 link text 15/23",
        "x0.775 link density 3/4 tags",
    ]
    assert [(f.name, f.score) for f in result.friends] == [
        ("Alice", best.score),
        ("Bobby", best.score),
        ("Carol", best.score),
    ]


def test_internal_links_are_subtracted() -> None:
    links = [a("https://a-example.com/", blank=True), a("https://b-example.com/"), a("/about/")]
    best = extract(page("<ul>" + "".join(f"<li>{x}</li>" for x in links) + "</ul>")).best
    assert best is not None
    # (2 + 1 - 1) x 1000; text ratio 1; density 3 links / 6 tags -> x0.55
    assert best.reasons[0] == "+2000 (3 external - 1 internal) x 1000"
    assert best.score == pytest.approx(2000 * 0.55)


def test_no_more_external_than_internal_rejects() -> None:
    result = extract(
        page(f"<ul><li>{a('https://a-example.com/')}</li><li>{a('/about/')}</li></ul>")
    )
    assert result.best is None
    assert result.friends == []
    (only,) = result.containers
    assert only.rejected
    assert only.score == 0
    assert only.reasons == ["rejected: 1 external - 1 internal links <= 0"]


def test_below_1000_rejects() -> None:
    # 2 blank links -> 4000; text 10/20 -> x0.325; density 2/3 -> x0.7: 910 < 1000
    body = (
        "<div><p>abcdefghij</p>"
        + a("https://a-example.com/", "abcde", blank=True)
        + a("https://b-example.com/", "fghij", blank=True)
        + "</div>"
    )
    result = extract(page(body))
    (only,) = result.containers
    assert only.rejected
    assert only.reasons[:3] == [
        "+4000 (4 external - 0 internal) x 1000",
        "x0.325 link text 10/20",
        "x0.7 link density 2/3 tags",
    ]
    assert only.reasons[3] == "rejected: score 910 < 1000"
    assert result.friends == []


def test_exactly_1000_is_kept() -> None:
    result = extract(page(f"<div>{a('https://a-example.com/', 'A')}</div>"))
    assert result.best is not None
    assert result.best.score == 1000
    assert result.friends == [Friend("https://a-example.com/", "A", 1000, how="container")]


def test_container_without_text_has_text_ratio_one() -> None:
    body = '<ul><li><a href="https://a-example.com/"><img src="a.png"></a></li></ul>'
    (only,) = extract(page(body)).containers
    # 1000 x 1 (no text) x (0.1 + 0.9 x 1/3) = 400: rejected
    assert only.reasons == [
        "+1000 (1 external - 0 internal) x 1000",
        "x1 link text 0/0",
        "x0.4 link density 1/3 tags",
        "rejected: score 400 < 1000",
    ]


def test_best_container_wins_and_friends_are_its_external_links() -> None:
    small = f'<ul id="nav">{a("https://x-example.com/", "X")}{a("/", "Home")}</ul>'
    big = (
        '<ul id="friends">'
        + "".join(
            f"<li>{a(f'https://f{i}-example.com/', f'F{i}', blank=True)}</li>" for i in range(4)
        )
        + f"<li>{a('https://f0-example.com/', 'dup')}</li><li>{a('/links/', 'self')}</li></ul>"
    )
    result = extract(page(small + big))
    assert result.best is not None
    assert result.best.container.description == "ul#friends"
    assert result.best.tag == "ul"
    assert result.best.link_count == 6
    assert [(f.url, f.name) for f in result.friends] == [
        (f"https://f{i}-example.com/", f"F{i}") for i in range(4)
    ]  # deduped by URL (first name kept), own blog excluded
    scores = [s.score for s in result.containers]
    assert scores == sorted(scores, reverse=True)


def test_nested_containers_accumulate_and_the_denser_one_wins() -> None:
    body = (
        '<div id="outer"><p>'
        + "words " * 20
        + "</p>"
        + '<ul id="inner">'
        + "".join(f"<li>{a(f'https://n{i}-example.com/', f'N{i}')}</li>" for i in range(3))
        + "</ul>"
        + a("https://o-example.com/", "O")
        + "</div>"
    )
    containers, _ = scan_containers(page(body))
    outer, inner = containers
    assert (outer.external, outer.links, outer.tags) == (4, 4, 1 + 1 + 3 + 3 + 1)
    assert (inner.external, inner.links, inner.tags) == (3, 3, 6)
    assert [r.url for r in outer.external_links][-1] == "https://o-example.com/"
    assert len(inner.external_links) == 3
    result = extract(page(body))
    assert result.best is not None
    assert result.best.container.description == "ul#inner"
    assert result.best.container.xpath == "/html/body/div/ul"


def test_a_rule_is_disabled_with_order_none() -> None:
    body = (
        "<div><p>abcdefghij</p>"
        + a("https://a-example.com/", "abcde", blank=True)
        + a("https://b-example.com/", "fghij", blank=True)
        + "</div>"
    )
    rules = {**ORIGINAL_FRIEND_RULES, "blogfeeds.extract.friends.MinimumScore": None}
    best = extract(page(body), rules).best
    assert best is not None
    assert best.score == pytest.approx(910)


def test_custom_rules_by_path_and_by_instance() -> None:
    rules: dict[Any, int | None] = {
        **ORIGINAL_FRIEND_RULES,
        "blogfeeds.extract.friends.LinkTextRatio": None,
        LinkTextRatio(power=1): 200,
        "tests.test_extract_friends.PlusOne": 950,
    }
    body = (
        "<div><p>abcdefghij</p>"
        + a("https://a-example.com/", "abcde", blank=True)
        + a("https://b-example.com/", "fghij", blank=True)
        + "</div>"
    )
    best = extract(page(body), rules).best
    assert best is not None
    # 4000 x (0.1 + 0.9 x 0.5) x 0.7 + 1
    assert best.score == pytest.approx(4000 * 0.55 * 0.7 + 1)
    assert best.reasons[-1] == "+1 custom"


def test_settings_keep_the_default_rules() -> None:
    assert settings.BLOGFEEDS_FRIEND_SCORERS == {}
    assert settings.BLOGFEEDS_FRIEND_LAYERS == {}
    assert settings.BLOGFEEDS_FRIEND_RULESET == "blogfeeds"
    assert set(ORIGINAL_FRIEND_RULES) < set(FRIEND_SCORERS_BASE)


def test_unknown_ruleset_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown friend ruleset"):
        extract_friends(page(""), ruleset="newest")


# --- Linear time -----------------------------------------------------------------------------

_SPIED = (
    "iter",
    "iterdescendants",
    "itertext",
    "iterchildren",
    "getiterator",
    "xpath",
    "findall",
    "iterfind",
    "find",
    "cssselect",
    "text_content",
    "getroottree",
)


def _nested_page(depth: int) -> Page:
    """``depth`` nested divs, each holding one external link: 2 + 2 x depth elements."""
    root = lxml.html.document_fromstring("<html><body></body></html>")
    parent = root.find("body")
    for i in range(depth):
        parent = lxml.etree.SubElement(parent, "div")
        link = lxml.etree.SubElement(parent, "a", href=f"https://n{i}-example.com/")
        link.text = f"n{i}"
    return Page(url=URL, base_url=URL, encoding="utf-8", text="", tree=root, headers={})


def _spy(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    calls: Counter[str] = Counter()
    for name in _SPIED:
        original = getattr(lxml.html.HtmlElement, name)

        def wrapper(self: Any, *args: Any, _o: Any = original, _n: str = name, **kw: Any) -> Any:
            calls[_n] += 1
            return _o(self, *args, **kw)

        monkeypatch.setattr(lxml.html.HtmlElement, name, wrapper)
    return calls


@pytest.mark.parametrize("depth", [100, 10_000])
def test_one_pass_over_20000_nested_elements(depth: int, monkeypatch: pytest.MonkeyPatch) -> None:
    pg = _nested_page(depth)
    elements = sum(1 for _ in pg.tree.iter())
    assert elements == 2 + 2 * depth
    calls = _spy(monkeypatch)
    result = extract(pg)
    assert result.elements == elements  # every element visited exactly once
    assert len(result.containers) == depth
    # the outermost div holds every link: depth x 1000 x 1 x affect(0.1, depth/(2 depth - 1))
    assert result.best is not None
    assert result.best.container.external == depth
    assert len(result.friends) == depth
    # no subtree rescans: only one text_content() per friend name, nothing per container
    assert calls.pop("text_content", 0) == depth
    assert sum(calls.values()) == 0, calls


# --- Friend-link pages -----------------------------------------------------------------------


def test_find_friend_pages_ranks_text_then_path() -> None:
    body = (
        a("/links/", "Links")
        + a("/about/", "About")
        + a("/p/1", "友情链接")
        + a("/friend.html", "Pals")
        + a("/2020/01/friends-post.html", "My friends and the long hike")
        + a("/%E5%8F%8B%E9%93%BE/", "Neighbours")
        + a("https://other-example.com/links/", "Links")
        + a("/links/#top", "Links again")
        + a("/blogroll/", "Blogroll")
        + a("/", "Home")
    )
    assert find_friend_pages(page(body, url="https://me-example.com/")) == [
        "https://me-example.com/p/1",
        "https://me-example.com/links/",
        "https://me-example.com/blogroll/",
        "https://me-example.com/%E5%8F%8B%E9%93%BE/",  # decoded path /友链/ is shorter
        "https://me-example.com/friend.html",
    ]


def test_find_friend_pages_excludes_the_page_itself() -> None:
    body = a("/links/", "Links") + a("https://me-example.com/friends/", "朋友们")
    assert find_friend_pages(page(body, url="https://me-example.com/links/")) == [
        "https://me-example.com/friends/"
    ]


def test_find_friend_pages_keeps_path_hosted_blogs_apart() -> None:
    body = a("/alice/links/", "Links") + a("/bob/links/", "Links")
    assert find_friend_pages(page(body, url="https://www.cnblogs.com/alice/")) == [
        "https://www.cnblogs.com/alice/links/"
    ]


def test_the_layered_default_rules_leave_the_original_formula_unchanged() -> None:
    """The layered scorers given to the original ruleset: same verdicts."""
    body = (
        '<ul id="friends">'
        + "".join(f"<li>{a(f'https://f{i}-example.com/', f'F{i}')}</li>" for i in range(3))
        + f"</ul><div>{a('https://x-example.com/', 'X')}</div>"
    )
    plain = extract(page(body))
    with_settings = extract(page(body), FRIEND_SCORERS_BASE)
    assert [(s.score, s.reasons) for s in plain.containers] == [
        (s.score, s.reasons) for s in with_settings.containers
    ]
    assert plain.friends == with_settings.friends
