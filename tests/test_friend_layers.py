"""The layered friend-link extractor (``ruleset="blogfeeds"``): one hand-made page per layer,
per rule and per filter, then the shared cases' side outputs (data sources, circles, owner
aliases). Suite-level exactness is gated in ``tests/test_cases.py``."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import lxml.etree
import lxml.html
import pytest

from blogfeeds.extract.friends import (
    Friend,
    FriendExtraction,
    extract_friends,
    friends_from_data_source,
    load_theme_rules,
)
from blogfeeds.extract.friends.filters import filters, friend_key, unwrap_wayback
from blogfeeds.extract.friends.layered import clean_name
from blogfeeds.extract.friends.themes import bundled_theme_rules
from blogfeeds.extract.page import Page, parse_page
from tests.cases import case_names, load_case, normalize_url

FRIENDS = "https://me-example.com/links/"
HOME = "https://me-example.com/"


def page(body: str, url: str = FRIENDS, head: str = "", title: str = "友情链接") -> Page:
    html = f"<html><head><title>{title}</title>{head}</head><body>{body}</body></html>"
    return parse_page(url, html.encode(), {})


def run(body: str, url: str = FRIENDS, **kw: Any) -> FriendExtraction:
    head = kw.pop("head", "")
    title = kw.pop("title", "友情链接")
    return extract_friends(page(body, url, head, title), **kw)


def urls(result: FriendExtraction) -> list[str]:
    return [f.url for f in result.friends]


def pairs(result: FriendExtraction) -> list[tuple[str, str]]:
    return [(f.url, f.name) for f in result.friends]


def ul(*links: tuple[str, str], cls: str = "") -> str:
    items = "".join(f'<li><a href="{h}">{t}</a></li>' for h, t in links)
    return f'<ul class="{cls}">{items}</ul>'


THREE = (
    ("https://alpha-example.org/", "Alpha"),
    ("https://beta-example.net/", "Beta"),
    ("https://gamma-example.com/", "Gamma"),
)


# --- Layer 1: machine-readable blogrolls -----------------------------------------------------


def test_link_rel_blogroll_and_well_known_opml_are_data_sources() -> None:
    head = '<link rel="blogroll" type="text/xml" href="/blogroll.opml">'
    result = run("<p>hi</p>", url=HOME, head=head, title="Home")
    assert result.data_sources == [
        "https://me-example.com/blogroll.opml",
        "https://me-example.com/.well-known/recommendations.opml",
    ]
    assert run("<p>hi</p>", url=HOME, title="Home").data_sources == []


def test_opml_links_json_lists_and_issue_lists_are_data_sources() -> None:
    body = (
        '<a href="/files/subscriptions.opml">my OPML</a>'
        "<script>fetch('/data/links.json').then(r => r.json())</script>"
        '<div class="friends-wrap" data-api="https://api.github.com/repos/me/friends/issues'
        '?state=open"></div>'
        '<div class="timeline" api="https://api.github.com/repos/me/blog-timeline/issues"></div>'
        '<a href="https://github.com/me/links/issues/">apply here</a>'
        '<a href="https://github.com/me/dotfiles/issues/">bugs</a>'
    )
    assert run(body).data_sources == [
        "https://api.github.com/repos/me/friends/issues?state=open",
        "https://me-example.com/files/subscriptions.opml",
        "https://github.com/me/links/issues/",
        "https://api.github.com/repos/me/links/issues",
        "https://me-example.com/data/links.json",
    ]


def test_xfn_relationships_mark_friends_and_rel_me_the_owner() -> None:
    body = (
        "<article><p>Some text about my week, with many words in it.</p>"
        '<p>Met <a href="https://alpha-example.org/" rel="friend met">Alpha</a> today.</p>'
        '<p>Find me on <a href="https://me-elsewhere-example.net/" rel="me">my other blog</a>.'
        "</p></article>"
    )
    result = run(body, url="https://me-example.com/2024/05/week/", title="A week")
    assert [(f.url, f.how, f.rels) for f in result.friends] == [
        ("https://alpha-example.org/", "xfn", ("friend", "met"))
    ]
    assert "https://me-elsewhere-example.net/" in result.owner_aliases


def test_wordpress_link_categories_keep_the_blogroll_titled_blocks() -> None:
    def block(title: str, *links: tuple[str, str]) -> str:
        return (
            f'<aside class="widget widget_links"><h3 class="widget-title">{title}</h3>'
            + ul(*links, cls="xoxo blogroll")
            + "</aside>"
        )

    body = block("Blogs", *THREE) + block("Webseiten", ("https://museum-example.de/", "Museum"))
    result = run(body, url=HOME, title="Home")
    assert pairs(result) == list(THREE)
    assert {f.how for f in result.friends} == {"widget:wordpress-links"}
    assert ("https://museum-example.de/", "not-a-blogroll-block") in result.excluded
    # no block titled as a blogroll: every block counts
    result = run(block("Regierung", *THREE[:2]) + block("Kunst", THREE[2]), url=HOME)
    assert urls(result) == [u for u, _ in THREE]


def test_wordpress_single_link_blocks_among_several_are_recommendations() -> None:
    def block(title: str, *links: tuple[str, str]) -> str:
        inner = ul(*links, cls="xoxo blogroll")
        return f'<li class="widget widget_links"><h3>{title}</h3>{inner}</li>'

    body = (
        "<ul>"
        + block("Kabinett", *THREE)
        + block("Art", ("https://art-example.org/", "Art"))
        + block("Design", ("https://design-example.org/", "Design"))
        + "</ul>"
    )
    result = run(body, url=HOME, title="Home")
    assert urls(result) == [u for u, _ in THREE]
    assert ("https://art-example.org/", "single-link-block") in result.excluded


def test_blogger_bloglist_reads_the_blog_title_link_and_keeps_feed_only_items() -> None:
    body = (
        '<div class="widget BlogList" id="BlogList1"><h2>Blogs I read</h2><ul>'
        '<li><div class="blog-icon"><img data-lateloadsrc="https://img-example.org/a.png"></div>'
        '<div class="blog-title"><a href="https://alpha-example.org/">Alpha</a></div>'
        '<span class="item-title"><a href="https://alpha-example.org/2024/01/new.html">New</a>'
        "</span></li>"
        '<li><div class="blog-title"><a href="https://beta-example.blogspot.com/feeds/posts/'
        'default">Beta</a></div></li></ul>'
        '<a class="quickedit" href="//www.blogger.com/rearrange?blogID=1">Edit</a></div>'
        '<div class="widget LinkList"><h2>Labels</h2>'
        + ul(("https://gamma-example.com/", "Gamma"))
        + "</div>"
    )
    result = run(body, url="https://me-example.blogspot.com/", title="Me")
    assert [(f.url, f.name, f.kind, f.avatar) for f in result.friends] == [
        ("https://alpha-example.org/", "Alpha", "", "https://img-example.org/a.png"),
        ("https://beta-example.blogspot.com/feeds/posts/default", "Beta", "feed", ""),
    ]
    assert ("https://gamma-example.com/", "not-a-blogroll-block") in result.excluded


def test_friend_list_in_an_inline_script_is_read_on_friend_pages() -> None:
    script = (
        "<script>var links = ["
        '{name: "Alpha", link: "https://alpha-example.org/", avatar: "/a.png"},'
        "{'name': 'Beta', 'url': 'https://beta-example.net/'},"
        '{name: "GitHub", link: "https://github.com/me"}];</script>'
    )
    result = run('<div id="random-links"></div>' + script)
    assert [(f.url, f.name, f.how, f.avatar) for f in result.friends] == [
        ("https://alpha-example.org/", "Alpha", "script", "https://me-example.com/a.png"),
        ("https://beta-example.net/", "Beta", "script", ""),
    ]
    # an unrelated page's script config is not a friend list
    config = '<script>var cfg = [{name: "A", url: "https://a-example.org/"},{name: "B", url: "https://b-example.org/"}]</script>'
    assert run(config, url=HOME, title="Home").friends == []


# --- friends_from_data_source ----------------------------------------------------------------


def test_opml_blogroll_outlines_with_html_or_only_xml_urls() -> None:
    body = b"""<?xml version="1.0"?><opml version="2.0"><head><title>r</title></head><body>
    <outline text="Tech"><outline text="Alpha" htmlUrl="https://alpha-example.org/"
      xmlUrl="https://alpha-example.org/feed.xml"/>
    <outline title="Beta feed" type="rss" xmlUrl="https://beta-example.net/atom.xml"/>
    <outline text="Hexo" htmlUrl="https://hexo.io/"/></outline></body></opml>"""
    got = friends_from_data_source("https://me-example.com/blogroll.opml", body, "text/x-opml")
    assert [(f.url, f.name, f.how, f.kind) for f in got] == [
        ("https://alpha-example.org/", "Alpha", "opml", ""),
        ("https://beta-example.net/atom.xml", "Beta feed", "opml", "feed"),
    ]


def test_json_friend_lists_at_any_depth() -> None:
    data = [
        {
            "class_name": "friends",
            "link_list": [
                {"name": "Alpha", "link": "https://alpha-example.org/", "avatar": "/a.png"},
                {"name": "Alpha again", "link": "https://www.alpha-example.org"},
                {"title": "Beta", "url": "https://beta-example.net/"},
                {"name": "Me", "link": "https://me-example.com/"},
            ],
        }
    ]
    got = friends_from_data_source(
        "https://me-example.com/data/links.json", json.dumps(data).encode(), ""
    )
    assert [(f.url, f.name, f.avatar, f.how) for f in got] == [
        ("https://alpha-example.org/", "Alpha", "https://me-example.com/a.png", "json"),
        ("https://beta-example.net/", "Beta", "", "json"),
    ]


def test_github_issue_friend_lists() -> None:
    issues = [
        {
            "html_url": "https://github.com/me/friends/issues/1",
            "title": "Alpha's blog",
            "state": "open",
            "body": '```json\n{"title": "Alpha", "url": "https://alpha-example.org/"}\n```',
        },
        {
            "html_url": "https://github.com/me/friends/issues/2",
            "title": "Beta",
            "state": "open",
            "body": "url: https://beta-example.net/\navatar: https://beta-example.net/a.png",
        },
        {"html_url": "https://github.com/me/friends/issues/3", "title": "x", "body": "hello"},
    ]
    got = friends_from_data_source(
        "https://api.github.com/repos/me/friends/issues", json.dumps(issues).encode(), ""
    )
    assert [(f.url, f.name, f.avatar, f.how) for f in got] == [
        ("https://alpha-example.org/", "Alpha", "", "issues"),
        ("https://beta-example.net/", "Beta", "https://beta-example.net/a.png", "issues"),
    ]


@pytest.mark.parametrize(
    "body", [b"", b"not json {", b"<html><body>hi</body></html>", b"\xff\xfe<<", b"[1, 2]"]
)
def test_data_source_garbage_gives_no_friends(body: bytes) -> None:
    assert friends_from_data_source("https://me-example.com/x", body, "") == []


# --- Layer 2: widgets and themes as data ------------------------------------------------------


def test_theme_cards_read_fields_per_card_with_optional_fields_missing() -> None:
    def card(href: str, name: str, desc: str = "", img: str = "") -> str:
        pic = f'<img src="/loading.gif" data-lazy-src="{img}"><img src="/badge.png">' if img else ""
        d = f'<p class="friend-desc">{desc}</p>' if desc else ""
        return (
            f'<a class="friend-card" href="{href}">{pic}<div class="info">'
            f'<p class="friend-name">{name}</p>{d}</div></a>'
        )

    body = (
        card(
            "https://alpha-example.org/", "Alpha", "compiler person", "https://a-example.org/a.png"
        )
        + card("https://beta-example.net/", "Beta", "no avatar")
        + card("https://gamma-example.com/blog/", "Gamma", img="https://g-example.org/g.jpg")
    )
    result = run(f'<div class="friend-content">{body}</div>')
    assert [(f.url, f.name, f.avatar, f.how) for f in result.friends] == [
        ("https://alpha-example.org/", "Alpha", "https://a-example.org/a.png", "theme:volantis"),
        ("https://beta-example.net/", "Beta", "", "theme:volantis"),
        (
            "https://gamma-example.com/blog/",
            "Gamma",
            "https://g-example.org/g.jpg",
            "theme:volantis",
        ),
    ]


def test_two_theme_lists_are_united_first_name_kept() -> None:
    body = (
        '<div class="flexcard-flink-list">'
        '<a class="flink-list-card" href="https://alpha-example.org/"><img class="cover" '
        'src="https://shots-example.org/a.jpg"><div class="info"><span class="flink-sitename">'
        "Alpha</span></div></a></div>"
        '<div class="anzhiyu-flink-list">'
        '<div class="flink-list-item"><a href="https://alpha-example.org"><img src="/a.png">'
        '<span class="flink-item-name">Alpha 2</span></a></div>'
        '<div class="flink-list-item"><a href="https://beta-example.net/"><img src="/b.png">'
        '<span class="flink-item-name">Beta</span><span>tagline</span></a></div></div>'
    )
    result = run(body)
    assert [(f.url, f.name, f.avatar) for f in result.friends] == [
        ("https://alpha-example.org/", "Alpha", ""),  # a site screenshot is not an avatar
        ("https://beta-example.net/", "Beta", "https://me-example.com/b.png"),
    ]
    assert ("https://alpha-example.org", "duplicate of https://alpha-example.org/") in (
        result.excluded
    )


def test_friends_under_a_lost_heading_are_listed_as_dead() -> None:
    body = (
        '<div class="flink"><h2>小伙伴</h2><div class="flink-list">'
        '<div class="flink-list-item"><a href="https://alpha-example.org/">Alpha</a></div></div>'
        '<h2>失联的朋友</h2><div class="flink-list">'
        '<div class="flink-list-item"><a href="https://beta-example.net/">Beta</a></div></div>'
        "</div>"
    )
    assert [(f.url, f.listed_as) for f in run(body).friends] == [
        ("https://alpha-example.org/", ""),
        ("https://beta-example.net/", "dead"),
    ]


def test_user_rules_in_the_table_format_run_first() -> None:
    body = (
        '<section class="pals">'
        '<div class="pal"><a href="https://alpha-example.org/">visit</a><b>Alpha</b></div>'
        '<div class="pal"><a href="https://beta-example.net/">visit</a><b>Beta</b></div>'
        "</section>"
    )
    rule = {"name": "my-site", "cards": ".pals .pal", "link": "a", "friend_name": ["b"]}
    result = run(body, user_rules=[rule])
    assert [(f.url, f.name, f.how) for f in result.friends] == [
        ("https://alpha-example.org/", "Alpha", "theme:my-site"),
        ("https://beta-example.net/", "Beta", "theme:my-site"),
    ]
    (parsed,) = load_theme_rules('[[theme]]\nname = "x"\ncards = ".pal"\nfriend_name = ["b"]\n')
    assert parsed.names == ("b",)
    with pytest.raises(ValueError, match="bad selector"):
        run(body, user_rules=[{"name": "bad", "cards": "div[["}])
    with pytest.raises(ValueError, match="without 'cards'"):
        run(body, user_rules=[{"name": "bad"}])


def test_rules_that_require_a_fingerprint_wait_for_it() -> None:
    body = (
        '<div class="links"><div class="card"><a href="https://alpha-example.org/">'
        '<div class="link-title">Alpha</div><div class="link-intro">hi</div></a></div>'
        '<div class="card"><a href="https://beta-example.net/"><div class="link-title">Beta</div>'
        '<div class="link-intro">hello</div></a></div></div>'
    )
    plain = run(body)
    themed = run(body, head='<link rel="stylesheet" href="/hexo-theme-fluid/main.css">')
    assert {f.how for f in plain.friends} == {"container"}
    assert {f.how for f in themed.friends} == {"theme:fluid"}
    assert (
        pairs(plain)
        == pairs(themed)
        == [
            ("https://alpha-example.org/", "Alpha"),
            ("https://beta-example.net/", "Beta"),
        ]
    )


def test_bundled_theme_table_loads_and_names_are_unique() -> None:
    rules = bundled_theme_rules()
    names = [r.name for r in rules]
    assert len(names) == len(set(names)) >= 15
    assert {"butterfly", "anzhiyu", "volantis", "matery", "fluid", "next", "icarus"} <= set(names)
    assert {"stellar", "sakura", "stun", "yun", "vdoing", "wordpress-links"} <= set(names)


# --- Layer 3: the container detector ----------------------------------------------------------


def test_plain_list_on_a_friend_page() -> None:
    result = run('<div class="post-body"><p>My friends:</p>' + ul(*THREE) + "</div>")
    assert pairs(result) == list(THREE)
    assert {f.how for f in result.friends} == {"container"}
    assert result.best is not None and result.best.tag == "ul"


def test_union_of_qualifying_containers_not_nested_ones() -> None:
    body = (
        "<article><h2>常来常往</h2>"
        + ul(*THREE[:2], cls="friend-list")
        + "<h2>最近认识</h2>"
        + ul(THREE[2], ("https://delta-example.io/", "Delta"), cls="friend-list")
        + "</article>"
    )
    assert urls(run(body)) == [u for u, _ in THREE] + ["https://delta-example.io/"]


def test_blogroll_groups_whose_entries_carry_descriptions_are_united() -> None:
    plain = [(f"https://plain{i}-example.org/", f"Plain {i}") for i in range(9)]
    described = "".join(
        f'<li><a href="https://topic{i}-example.net/">Topical Blog Number {i}</a> - advice '
        "about work, life and terrible home architecture</li>"
        for i in range(6)
    )
    body = (
        '<div class="post-content"><h2>Personal blogs</h2>'
        + ul(*plain)
        + f"<h2>Topical blogs</h2><ul>{described}</ul></div>"
    )
    result = run(body, url="https://me-example.com/blogroll/", title="Blogroll")
    topical = [f"https://topic{i}-example.net/" for i in range(6)]
    assert urls(result) == [u for u, _ in plain] + topical


def test_outside_friend_pages_a_list_needs_a_friend_keyword() -> None:
    sidebar = ul(*THREE)
    assert run(f"<aside>{sidebar}</aside>", url=HOME, title="Home").friends == []
    labelled = run(f"<aside><h2>Blogroll</h2>{sidebar}</aside>", url=HOME, title="Home")
    assert urls(labelled) == [u for u, _ in THREE]


def test_page_chrome_is_rejected_unless_labelled_friend_links() -> None:
    footer = "<footer>" + ul(*THREE) + "</footer>"
    result = run("<main><p>Nothing here.</p></main>" + footer)
    assert result.friends == []
    assert any("inside page chrome" in r for s in result.containers for r in s.reasons)
    labelled = "<footer><b>友情链接：</b>" + ul(*THREE) + "</footer>"
    assert urls(run(labelled, url=HOME, title="Home")) == [u for u, _ in THREE]


def test_keyword_anchored_inline_run_in_a_paragraph() -> None:
    body = (
        "<article><p>About me: I write, see <a href='/2019/05/story/'>this post</a> and my "
        "<a href='https://photos-example.com/me'>album</a>.</p>"
        "<p>左邻右舍：<a href='https://alpha-example.org/'>风筝</a>、"
        "<a href='https://beta-example.net/'>萤火</a>、<a href='https://gamma-example.com/'>石头</a>"
        "。欢迎来串门。</p></article>"
    )
    result = run(body, url="https://me-example.com/about/", title="About")
    assert [(f.url, f.name, f.how) for f in result.friends] == [
        ("https://alpha-example.org/", "风筝", "inline"),
        ("https://beta-example.net/", "萤火", "inline"),
        ("https://gamma-example.com/", "石头", "inline"),
    ]


def test_card_name_comes_from_the_card_not_a_call_to_action() -> None:
    def card(href: str, name: str) -> str:
        return (
            f'<div class="col"><div class="box"><img src="/{name}.png"><h1>{name}</h1>'
            f"<p>A long description of this blog and its author.</p>"
            f'<a class="button" href="{href}">Visit now</a></div></div>'
        )

    body = '<div class="row">' + "".join(card(u, n) for u, n in THREE) + "</div>"
    result = run(body)
    assert pairs(result) == list(THREE)
    best = result.best
    assert best is not None and best.container.cards == 3
    assert any("3 repeated cards" in r for r in best.reasons)


def test_a_list_of_one_unlabelled_friend_is_not_enough() -> None:
    result = run(ul(THREE[0], ("/about/", "About")), url=HOME, title="Home")
    assert result.friends == []


def test_layered_pass_does_not_rescan_subtrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """Work grows with the page, not with the page times its depth (10x depth: 10x calls)."""

    def nested(depth: int) -> Page:
        root = lxml.html.document_fromstring("<html><body></body></html>")
        parent = root.find("body")
        for i in range(depth):
            parent = lxml.etree.SubElement(parent, "div")
            link = lxml.etree.SubElement(parent, "a", href=f"https://n{i}-example.com/")
            link.text = f"n{i}"
        return Page(url=FRIENDS, base_url=FRIENDS, encoding="utf-8", text="", tree=root, headers={})

    counts = {}
    for depth in (100, 1000):
        pg = nested(depth)
        calls: Counter[str] = Counter()
        for name in ("text_content", "iter", "itertext", "iterdescendants", "getparent"):
            original = getattr(lxml.html.HtmlElement, name)

            def spy(
                self: Any, *a: Any, _o: Any = original, _n: str = name, _c: Any = calls, **k: Any
            ) -> Any:
                _c[_n] += 1
                return _o(self, *a, **k)

            monkeypatch.setattr(lxml.html.HtmlElement, name, spy)
        result = extract_friends(pg)
        monkeypatch.undo()
        assert result.elements == 2 + 2 * depth
        assert len(result.friends) == depth
        counts[depth] = sum(calls.values())
    assert counts[1000] <= 12 * counts[100]


# --- Filters ----------------------------------------------------------------------------------


def test_owner_sites_are_not_friends() -> None:
    body = (
        '<div class="card-info"><a href="https://github.com/mebrand">GitHub</a></div>'
        '<nav class="back-menu-list"><a href="https://me-example.net/">My notes</a></nav>'
        "<article>"
        + ul(
            *THREE,
            ("https://blog.me-example.com/", "My other host"),
            ("https://192.168.1.20:8080/", "My mirror"),
            ("https://www.cnblogs.com/me-example/", "My cnblogs"),
            ("https://mebrand.github.io/", "My pages"),
            ("https://me-example.net/", "My notes again"),
        )
        + "<h2>本站信息</h2><blockquote><p>名称：Me</p><p>地址：https://mirror-me-x.org/</p>"
        "</blockquote>"
        + ul(
            ("https://mirror-me-x.org/", "Mirror"),
            ("https://delta-example.io/", "Delta"),
            ("https://epsilon-example.io/", "Epsilon"),
        )
        + "</article>"
    )
    result = run(body)
    assert urls(result) == [u for u, _ in THREE] + [
        "https://delta-example.io/",
        "https://epsilon-example.io/",
    ]
    reasons = dict(result.excluded)
    assert reasons["https://192.168.1.20:8080/"] == "ip-address"  # a private address
    assert reasons["https://www.cnblogs.com/me-example/"] == "owner-name"
    assert reasons["https://mebrand.github.io/"] == "owner-name"
    assert reasons["https://me-example.net/"] == "owner"
    assert reasons["https://mirror-me-x.org/"] == "owner"
    assert "https://mirror-me-x.org/" in result.owner_aliases
    assert "https://blog.me-example.com/" in result.owner_aliases


def test_unconfigured_site_url_links_are_internal() -> None:
    head = '<link rel="canonical" href="http://example.com/link/index.html">'
    nav = "".join(f'<a href="http://example.com/{p}/">{p}</a>' for p in ("a", "b", "c", "d"))
    result = run(f'<div id="nav">{nav}</div>' + ul(*THREE[:2]), head=head)
    assert urls(result) == [u for u, _ in THREE[:2]]


def test_circles_are_memberships_and_badges_credits_are_dropped() -> None:
    footer = (
        '<div class="footer-links"><a href="https://www.foreverblog.cn/">十年之约</a>'
        '<a href="https://www.travellings.cn/go.html">开往</a>'
        '<a href="https://beian.miit.gov.cn/">京ICP备123号</a>'
        '<a href="https://icp.gov.moe/?keyword=1">萌ICP备1号</a>'
        '<a href="https://hexo.io/">Hexo</a></div>'
    )
    body = ul(*THREE, ("https://github.com/travellings-link/travellings", "开往"))
    result = run(body + footer)
    assert urls(result) == [u for u, _ in THREE]
    assert [c.url for c in result.circles] == [
        "https://github.com/travellings-link/travellings",
        "https://www.foreverblog.cn/",
        "https://www.travellings.cn/go.html",
    ]


@pytest.mark.parametrize(
    ("href", "name", "rel", "reason"),
    [
        ("https://hexo.io/zh-cn/", "Hexo", "", "platform"),
        ("https://www.youtube.com/", "Youtube", "", "platform"),
        ("https://github.com/someone", "someone", "", "platform"),
        ("https://www.google.com/", "虚位以待", "", "platform"),
        ("https://blinkfox.github.io/", "码农 blinkfox", "", "platform"),
        ("https://vacancy-example.com/", "虚位以待", "", "placeholder"),
        ("https://shop-example.com/", "Shop", "sponsored", "sponsored"),
        ("https://vps-example.com/?ref=7060013", "VPS", "", "referral"),
        ("https://vps-example.com/?aff=1", "VPS", "", "referral"),
        ("https://t-example.link/xYz9", "short", "", "shortener"),
        ("https://bit.ly/abc", "short", "", "shortener"),
        ("https://cheap-example.com/", "特价机票", "", "commercial"),
        ("https://delta-example.io/2021/07/post.html", "Post", "", "post"),
        ("http://example.com/", "Example", "", "placeholder"),
    ],
)
def test_filtered_links(href: str, name: str, rel: str, reason: str) -> None:
    rel_attr = f' rel="{rel}"' if rel else ""
    items = "".join(f'<li><a href="{h}">{t}</a></li>' for h, t in THREE)
    body = f'<ul>{items}<li><a href="{href}"{rel_attr}>{name}</a></li></ul>'
    result = run(body)
    assert urls(result) == [u for u, _ in THREE]
    assert (filters().clean_url(href), reason) in result.excluded


def test_user_blogs_on_platforms_are_not_platform_links() -> None:
    links = (
        ("https://alice-example.wordpress.com/", "Alice"),
        ("https://www.cnblogs.com/bob-example/", "Bob"),
        ("https://carol-example.github.io/notes/blog/", "Carol"),
    )
    assert urls(run(ul(*links))) == [u for u, _ in links]


def test_theme_placeholder_repeated_cards_are_dropped() -> None:
    card = (
        '<li class="link-item"><a class="link-item-inner" href="https://mirror-example.cc/fgvf" '
        'title="Mirror" rel="friend"><span class="sitename">Mirror</span></a></li>'
    )
    result = run(f'<ul class="link-items">{card * 4}</ul>')
    assert result.friends == []
    assert ("https://mirror-example.cc/fgvf", "placeholder") in result.excluded


def test_paid_links_under_a_commercial_heading_are_sponsored() -> None:
    paid = ul(("https://paid-example.com/", "P"), ("https://ad-example.com/", "Q"))
    result = run("<article>" + ul(*THREE) + "<h3>商业友链</h3>" + paid + "</article>")
    assert urls(result) == [u for u, _ in THREE]
    assert ("https://paid-example.com/", "sponsored") in result.excluded


def test_one_site_listed_page_by_page_is_not_a_friend() -> None:
    reviews = [(f"http://other-example.at/review.{i}.html", f"Review {i}") for i in range(4)]
    result = run(ul(*THREE, *reviews))
    assert urls(result) == [u for u, _ in THREE]
    assert ("http://other-example.at/review.0.html", "same-site-pages") in result.excluded


def test_wayback_wrappers_are_unwrapped() -> None:
    base = "https://web.archive.org/web/20130217080612/"
    body = (
        '<ul class="xoxo blogroll">'
        + "".join(f'<li><a href="{base}{u}">{t}</a></li>' for u, t in THREE)
        + f'<li><a href="{base}http://me-example.com/tv/">own</a></li></ul>'
    )
    result = run(body, url="http://me-example.com/", title="Home")
    assert pairs(result) == list(THREE)
    assert unwrap_wayback(f"{base[:-1]}im_/http://a-example.org/x.png") == (
        "http://a-example.org/x.png"
    )


def test_url_variants_merge_first_seen_wins() -> None:
    links = (
        ("https://Alpha-Example.org", "Alpha"),
        ("http://www.alpha-example.org/", "Alpha again"),
        ("https://alpha-example.org/index.html#top", "Alpha 3"),
        ("https://alpha-example.org/about/", "Alpha about"),
        ("https://blog.beta-example.net/?utm_source=me&zx=1", "Beta blog"),
        ("https://beta-example.net/", "Beta"),
    )
    result = run(ul(*links))
    assert pairs(result) == [
        ("https://alpha-example.org", "Alpha"),
        ("https://blog.beta-example.net/", "Beta blog"),
        ("https://beta-example.net/", "Beta"),
    ]
    assert friend_key("http://www.alpha-example.org/x") == friend_key("https://alpha-example.org")
    assert friend_key("http://feeds.feedburner.com/A") != friend_key(
        "http://feeds.feedburner.com/B"
    )


def test_credentials_in_a_friend_link_are_dropped() -> None:
    """``user:password@`` in a blogroll link is never stored or exported (nor followed)."""
    links = (
        ("http://user:secret@Xi-Example.org:8765/", "Xi"),
        ("https://token@omicron-example.net/blog/", "Omicron"),
        ("https://pi-example.com/", "Pi"),
    )
    assert pairs(run(ul(*links))) == [
        ("http://xi-example.org:8765/", "Xi"),
        ("https://omicron-example.net/blog/", "Omicron"),
        ("https://pi-example.com/", "Pi"),
    ]


@pytest.mark.parametrize(
    ("name", "cleaned"),
    [
        ("  Werbeblogger -  Weblog über Marketing, Werbung und PR ", "Werbeblogger"),
        ("Titanic RSS - der endgültige Feed", "Titanic RSS - der endgültige Feed"),
        (
            "MAG2U3F, geleitet von Frau Eva van Nostrand",
            "MAG2U3F, geleitet von Frau Eva van Nostrand",
        ),
        ("小溪\n博客", "小溪 博客"),
    ],
)
def test_long_titles_lose_their_tagline(name: str, cleaned: str) -> None:
    assert clean_name(name) == cleaned


def test_results_record_the_ruleset_and_every_friend_is_a_friend() -> None:
    result = run(ul(*THREE))
    assert result.ruleset == "blogfeeds"
    assert all(isinstance(f, Friend) and f.score >= 1000 for f in result.friends)
    assert extract_friends(page(ul(*THREE)), ruleset="original").ruleset == "original"


# --- The shared cases' side outputs -----------------------------------------------------------

SIDE = [
    (suite, name)
    for suite in ("friend-links", "friend-links-real")
    for name in case_names(suite)
    if any(
        load_case(suite, name).expected.get(k)
        for k in ("expected_data_sources", "expected_circles", "owner_aliases")
    )
]


@pytest.mark.parametrize(("suite", "name"), SIDE)
def test_case_data_sources_circles_and_owner_aliases(suite: str, name: str) -> None:
    case = load_case(suite, name)
    body = (case.path / "page.html").read_bytes()
    result = extract_friends(parse_page(case.page_url, body, {"Content-Type": "text/html"}))
    for key, got in (
        ("expected_data_sources", result.data_sources),
        ("expected_circles", [c.url for c in result.circles]),
        ("owner_aliases", result.owner_aliases),
    ):
        want = {normalize_url(u) for u in case.expected.get(key) or []}
        assert want <= {normalize_url(u) for u in got}, key


def test_odd_markup_never_raises() -> None:
    body = (
        '<a href="http://[::1">bad ipv6</a><a href="javascript:void(0)">js</a>'
        '<a href="mailto:me@me-example.com">mail</a><a href="//">empty</a><a>no href</a>'
        '<div data-api="http://[x/friends.json"></div><img data-lazy-src="http://[">'
        "<script>fetch('http://[x/links.json'); var l = [{name: 'A', link: 'http://[a'},"
        "{name: 'B', link: 'https://b-example.org/', avatar: 'http://[b'}];</script>"
        '<ul class="xoxo blogroll"><li><a href="https://web.archive.org/web/2013/">x</a></li>'
        '<li><a href="https://web.archive.org/web/20130217080612/http://[bad">y</a></li></ul>'
    )
    head = '<link rel="canonical" href="http://["><meta property="og:url" content="http://[">'
    result = run(body, head=head)
    assert isinstance(result, FriendExtraction)


def test_data_source_nested_too_deep_gives_no_friends() -> None:
    """json.loads raises RecursionError at this depth: one bad list, no exception."""
    body = b"[" * 100_000 + b"]" * 100_000
    assert friends_from_data_source("https://me-example.com/links.json", body, "") == []
    issues = [{"html_url": "h", "title": "t", "body": "```json\n" + "[" * 100_000 + "\n```"}]
    got = friends_from_data_source("https://api.github.com/x", json.dumps(issues).encode(), "")
    assert got == []


def test_data_source_issue_body_of_the_wrong_type_is_ignored() -> None:
    issues = [
        {"html_url": "h", "title": "Alpha", "body": {"url": "https://alpha-example.org/"}},
        {"html_url": "h", "title": "Beta", "body": "url: https://beta-example.net/"},
    ]
    got = friends_from_data_source("https://api.github.com/x", json.dumps(issues).encode(), "")
    assert [f.url for f in got] == ["https://beta-example.net/"]


def test_friend_names_lose_control_characters() -> None:
    data = [{"name": "Al\x1b[31mpha\x07", "link": "https://alpha-example.org/"}]
    got = friends_from_data_source("https://me-example.com/links.json", json.dumps(data).encode())
    assert [f.name for f in got] == ["Al[31mpha"]
    assert clean_name("Be\x00ta\x9b\x1b") == "Beta"


def test_a_feed_listed_beside_its_friends_site_is_that_friends_feed_not_another_friend() -> None:
    def item(site: str, name: str, feed: str) -> str:
        return f'<li><a href="{site}">{name}</a> <em><a href="{feed}">(Feed)</a></em></li>'

    body = (
        "<h2>Blogroll</h2><ul>"
        + item("https://alpha-example.org/", "Alpha", "https://alpha-example.org/feed/")
        + item("https://beta-example.net/", "Beta", "http://feeds.feedburner.com/BetaBlog")
        + item("https://gamma-example.com/", "Gamma", "https://gamma-example.com/index.xml")
        + '<li><a href="https://delta-example.org/atom.xml">Delta</a></li>'
        + "</ul>"
    )
    result = run(body)
    assert [(f.url, f.kind, f.feed) for f in result.friends] == [
        ("https://alpha-example.org/", "", "https://alpha-example.org/feed/"),
        ("https://beta-example.net/", "", "http://feeds.feedburner.com/BetaBlog"),
        ("https://gamma-example.com/", "", "https://gamma-example.com/index.xml"),
        ("https://delta-example.org/atom.xml", "feed", ""),  # listed by its feed alone
    ]


@pytest.mark.parametrize(
    ("tools", "sub"),
    [("📚 收藏站", "在线工具"), ("Resources", "Frontend"), ("鸣谢", "主题作者")],
)
def test_a_section_of_tools_or_credits_is_not_friends_but_thanking_friends_is(
    tools: str, sub: str
) -> None:
    body = (
        "<h2>感谢这些朋友</h2>"
        + ul(*THREE)
        + f"<h2>{tools}</h2><h3>{sub}</h3>"
        + ul(("https://tool-example.net/", "Tool"), ("https://icons-example.io/", "Icons"))
        + "<h3>More</h3>"  # a sub-heading stays inside the section
        + ul(("https://colors-example.org/", "Colors"), ("https://fonts-example.dev/", "Fonts"))
    )
    assert urls(run(body)) == [u for u, _ in THREE]


def test_hrefs_broken_in_an_obvious_way_are_repaired_and_say_so() -> None:
    body = "<h2>Friends</h2>" + ul(
        ("hhttps://alpha-example.org/", "Alpha"),
        ("/beta-example.net", "Beta"),
        ("https//gamma-example.com/blog/", "Gamma"),
        ("/about/", "About"),  # a path of the page's own site stays one
        ("/feed.xml", "Feed"),
    )
    result = run(body)
    assert [(f.url, f.repaired) for f in result.friends] == [
        ("https://alpha-example.org/", "hhttps://alpha-example.org/"),
        ("https://beta-example.net/", "/beta-example.net"),
        ("https://gamma-example.com/blog/", "https//gamma-example.com/blog/"),
    ]


def test_cards_that_link_by_script_or_data_attribute_are_friends() -> None:
    def card(attrs: str, name: str) -> str:
        return f'<div class="card" {attrs}><img src="/a.png"><span>{name}</span></div>'

    body = (
        '<h2>友情链接</h2><div class="cards">'
        + card("onclick=\"window.open('https://alpha-example.org/', '_blank')\"", "Alpha")
        + card('onclick="location.href=&quot;https://beta-example.net/&quot;"', "Beta")
        + card('data-href="https://gamma-example.com/"', "Gamma")
        + card('data-url="https://delta-example.org/friends.json"', "Delta list")
        + card('data-href="tab-2"', "Tab")
        + "</div>"
    )
    result = run(body)
    assert pairs(result) == [
        ("https://alpha-example.org/", "Alpha"),
        ("https://beta-example.net/", "Beta"),
        ("https://gamma-example.com/", "Gamma"),
    ]


def test_a_blogroll_group_whose_entries_carry_descriptions_is_kept_with_its_siblings() -> None:
    def described(*links: tuple[str, str]) -> str:
        words = "a weekly letter about books, fountain pens and the small web, always free"
        return (
            "<ul>" + "".join(f'<li><a href="{h}">{t}</a> {words}.</li>' for h, t in links) + "</ul>"
        )

    newsletters = (
        ("https://delta-example.org/", "Delta"),
        ("https://epsilon-example.net/", "Epsilon"),
        ("https://zeta-example.com/", "Zeta"),
    )
    body = (
        '<div class="post-content"><h2>Personal blogs</h2>'
        + ul(*THREE)
        + "<h2>Newsletters</h2>"
        + described(*newsletters)
        + "</div>"
    )
    assert urls(run(body, title="Blogroll")) == [u for u, _ in (*THREE, *newsletters)]


def test_a_theme_widget_of_few_links_does_not_hide_the_friend_pages_own_list() -> None:
    # Icarus: a "links" widget in the sidebar (one theme link) beside the article's friends.
    avatars = "".join(
        f'<a target="_blank" href="{h}"><img src="https://img-example.org/{t}.png"></a>'
        for h, t in THREE
    )
    body = (
        '<div class="column-main"><article><h1>My Friends</h1>'
        f'<div class="content"><p>{avatars}</p></div></article></div>'
        '<div class="column-side"><div class="card widget" data-type="links"><h3>Links</h3>'
        '<ul class="menu-list"><li><a class="level is-mobile" href="https://theme-example.dev/">'
        '<span class="level-left"><span class="level-item">Theme</span></span></a></li></ul>'
        "</div></div>"
    )
    head = (
        '<meta name="generator" content="Hexo 6.3.0">'
        '<link rel="stylesheet" href="/css/hexo-theme-icarus.css">'
    )
    found = urls(run(body, head=head, title="Friends"))
    assert [u for u, _ in THREE] == [u for u in found if u in dict(THREE)]
    assert len(found) == 4, found


def test_a_blog_under_a_path_never_lists_its_host_and_a_one_link_blogroll_is_one() -> None:
    body = (
        '<header><a href="https://alice-example.github.io/">Alice</a></header>'
        '<article><h1>Blogroll</h1><ol><li><a href="https://r-example.com/">R blogs</a></li>'
        "</ol></article>"
    )
    result = run(body, url="https://alice-example.github.io/blogroll/", title="Blogroll")
    assert urls(result) == ["https://r-example.com/"]


def _sectioned(*groups: tuple[str, tuple[tuple[str, str], ...]]) -> str:
    """A theme that wraps each group of its friend page in a section of its own (a heading, a
    count, the grid of cards), as the hugo-flavor links page does."""
    sections = "".join(
        f'<section class="links-section"><div class="links-section__header"><h2>{title}</h2>'
        f'<div class="links-section__count">{len(cards)} sites</div></div>'
        '<div class="links-section__grid">'
        + "".join(
            f'<a class="links-card" href="{h}"><img src="/a/{t}.png"><span>{t}</span>'
            f"<span>{t} writes about the small web</span></a>"
            for h, t in cards
        )
        + "</div></section>"
        for title, cards in groups
    )
    return f'<main><h1>Links</h1><div class="links-directory">{sections}</div></main>'


def test_a_group_of_one_card_in_a_section_of_its_own_is_kept_with_its_siblings() -> None:
    team = (("https://team-example.org/", "Team"),)
    body = _sectioned(("Team", team), ("Friends", THREE))
    assert urls(run(body, title="Links")) == [u for u, _ in (*team, *THREE)]


def test_a_sponsors_section_beside_the_friends_sections_gives_no_friend() -> None:
    # counter-case: the same sections, one of them headed as a service list
    sponsor = (("https://cloud-example.com/", "Cloud"),)
    body = _sectioned(("Friends", THREE), ("Sponsors", sponsor))
    assert urls(run(body, title="Links")) == [u for u, _ in THREE]
