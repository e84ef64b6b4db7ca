"""Kinds of friend-list errors on pages nobody tuned for (issue 40), each over real pages of
the shared folder (``corpus/pages/sites``, ``cases/friend-links-real``) with a counter-case: a
real friend that looks like the kind. Skipped when the shared folder is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from blogfeeds.extract.friends import FriendExtraction, extract_friends
from blogfeeds.extract.page import parse_page
from tests.littleweb import find_shared

SHARED = find_shared()
pytestmark = pytest.mark.skipif(SHARED is None, reason="needs the shared folder (../shared)")


def real(url: str, relative: str) -> FriendExtraction:
    """The friends of the shared page at ``relative`` served at ``url``."""
    assert SHARED is not None
    body = (SHARED / relative).read_bytes()
    return extract_friends(parse_page(url, body, {}))


def site(folder: str, path: str) -> str:
    return str(Path("corpus/pages/sites") / folder / path)


def urls(result: FriendExtraction) -> list[str]:
    return [f.url for f in result.friends]


# --- 1. A theme's sample entries kept by the owner ----------------------------------------------


def test_every_theme_default_says_where_it_was_read() -> None:
    from blogfeeds.extract.friends.defaults import theme_defaults

    for theme in theme_defaults():
        assert "/" in theme.repository and len(theme.commit) == 40, theme.name
        assert theme.keys and theme.needed >= 1


def test_a_materys_sample_friends_kept_unchanged_are_the_themes() -> None:
    """0rangeWind keeps Matery's README friends.json: 码酱, 闪烁之狐 and ja_rome."""
    result = real(
        "https://0rangewind.github.io/friends/",
        site("0rangeWind__0rangeWind.github.io", "friends/index.html"),
    )
    assert urls(result) == []
    reasons = dict(result.excluded)
    assert reasons["http://luokangyuan.com/"] == "theme-default"
    assert reasons["https://me.csdn.net/jlh912008548"] == "theme-default"


def test_on_the_theme_authors_own_blog_the_samples_are_friends() -> None:
    """Counter-case: blinkfox.github.io, whose friends Matery's samples are, lists 码酱."""
    result = real(
        "https://blinkfox.github.io/friends/",
        "cases/friend-links-real/zh_matery_blinkfox/page.html",
    )
    assert "http://luokangyuan.com/" in urls(result)


def test_one_sample_entry_alone_is_a_friend() -> None:
    """Counter-case: the same 码酱 card without the theme's other samples is a friend."""
    assert SHARED is not None
    path = SHARED / site("0rangeWind__0rangeWind.github.io", "friends/index.html")
    body = path.read_bytes()
    for other in (b"https://blinkfox.github.io/", b"https://me.csdn.net/jlh912008548"):
        body = body.replace(other, b"https://friend-example.org/" + other[-6:].strip(b"/"))
    result = extract_friends(parse_page("https://0rangewind.github.io/friends/", body, {}))
    assert "http://luokangyuan.com/" in urls(result)


# --- 2. Services, tools and publications listed beside friends -----------------------------------

ZERO_A = ("https://0a00.github.io/link/", site("0a00__0a00.github.io", "link/index.html"))


def test_a_group_headed_recommended_websites_lists_no_friends() -> None:
    """0a00's Butterfly page: 友情链接 (a friend's card), then 推荐网站 (Arch Linux, Notion,
    wallhaven): the second group's heading names sites to use, not people."""
    result = real(*ZERO_A)
    reasons = dict(result.excluded)
    for url in ("https://www.archlinux.org/", "https://www.notion.so/", "https://wallhaven.cc/hot"):
        assert reasons[url] == "service-section"
    assert urls(result) == ["https://vip.bdziyi.com/"]


def test_the_same_group_headed_as_recommended_blogs_is_friends() -> None:
    """Counter-case: the same cards under "推荐博客" (recommended blogs): people's sites."""
    assert SHARED is not None
    body = (SHARED / ZERO_A[1]).read_bytes().replace("推荐网站".encode(), "推荐博客".encode())
    result = extract_friends(parse_page(ZERO_A[0], body, {}))
    assert "https://www.archlinux.org/" in urls(result)
    assert "https://wallhaven.cc/hot" in urls(result)


@pytest.mark.parametrize(
    ("heading", "service"),
    [
        ("好用的网站", True),
        ("推荐网站", True),
        ("Podcasts", True),
        ("Rolo de podcasts", True),
        ("Newsletters", False),
        ("Software", False),
        ("Useful sites", True),
        ("推荐博客", False),
        ("推荐大佬", False),
        ("Personal websites I like", False),
        ("Websites of people I know", False),
        ("个人收藏", True),
        ("Personal tools", True),
    ],
)
def test_headings_that_name_services_and_headings_that_name_people(
    heading: str, service: bool
) -> None:
    """The headings of the friend pages of bench/friends_eval.py (no-22-github-hugo,
    docs-site-site-hexo, techzerkergit-techzerker, danielysilva-danielysilva-github-io,
    jamieadamsuk-jamieadamsdotclick2022, tmanternach-tmanternach-github-io,
    chinzicam-chinzicam-github-io, 2656172491-2656172491-github-io, zinzy-zinzy-website-v3)."""
    from blogfeeds.extract.friends.keywords import has_keyword, is_service_heading

    assert (is_service_heading(heading) and not has_keyword(heading)) is service


# --- 5. A friend linked by one of their posts before their home page's card --------------------

BLINKFOX = (
    "https://blinkfox.github.io/friends/",
    "cases/friend-links-real/zh_matery_blinkfox/page.html",
)


def _with_card_first(href: str, name: str) -> bytes:
    """blinkfox's Matery friend page with one more card, of the page's own markup, first."""
    assert SHARED is not None
    body = (SHARED / BLINKFOX[1]).read_text("utf-8")
    card = (
        '<div class="col s12 m6 l4 friend-div"><div class="card frind-card1">'
        f'<div class="frind-ship"><div class="title"><div><h1 class="friend-name">{name}</h1>'
        f'</div></div><div class="friend-button"><a href="{href}" target="_blank">前去学习</a>'
        "</div></div></div></div>"
    )
    at = body.index('<div class="col s12 m6 l4 friend-div"')
    return (body[:at] + card + body[at:]).encode()


def test_a_friends_post_before_their_home_card_gives_the_blog() -> None:
    """A "recommended post" card of 洪卫 (sunhwee.com, whose own card comes later): the friend
    is the blog, in the post card's place; the post is a duplicate of it."""
    body = _with_card_first("https://sunhwee.com/posts/6e8839eb.html", "Hexo 博客配置")
    result = extract_friends(parse_page(BLINKFOX[0], body, {}))
    found = urls(result)
    assert found[0] == "https://sunhwee.com"
    assert "https://sunhwee.com/posts/6e8839eb.html" not in found
    reasons = dict(result.excluded)
    assert reasons["https://sunhwee.com/posts/6e8839eb.html"] == "duplicate of https://sunhwee.com"
    assert result.friends[0].name == "洪卫の博客"


def test_a_friend_listed_only_by_a_post_stays_listed_by_it() -> None:
    """Counter-case: a post card whose blog has no card of its own is that friend's entry."""
    body = _with_card_first("https://friend-example.org/posts/hello.html", "Hello")
    result = extract_friends(parse_page(BLINKFOX[0], body, {}))
    assert urls(result)[0] == "https://friend-example.org/posts/hello.html"


# --- 7. Feeds, podcast feeds and Gemini/Gopher proxies listed as friends ------------------------

PYTHON = ("http://blog.python.org/", "cases/friend-links-real/en_blogger_bloglist_python/page.html")


def _python_with(old: str, new: str) -> FriendExtraction:
    assert SHARED is not None
    body = (SHARED / PYTHON[1]).read_bytes()
    assert old.encode() in body
    return extract_friends(parse_page(PYTHON[0], body.replace(old.encode(), new.encode()), {}))


def test_a_blogs_feed_listed_as_its_entry_is_that_friend_by_its_feed() -> None:
    """Counter-case: python.org's Blogger BlogList lists some blogs by their feed only."""
    kinds = {f.url: f.kind for f in real(*PYTHON).friends}
    assert kinds["http://jessenoller.com/feed/"] == "feed"
    assert kinds["http://blog.ziade.org"] == ""


def test_a_podcasts_feed_in_a_blogroll_is_a_show_not_a_friend() -> None:
    """The same BlogList entry pointing at a podcast's feed (its URL says so), then at a
    podcast host: no friend, reason ``podcast``."""
    for feed in ("https://example-show.net/podcast/feed/", "https://feeds.simplecast.com/Abc123"):
        result = _python_with("http://jessenoller.com/feed/", feed)
        assert feed not in urls(result)
        assert dict(result.excluded)[feed] == "podcast"


def test_capsules_behind_one_gemini_proxy_are_two_friends_of_their_protocol() -> None:
    """Two entries of the BlogList rewritten to capsules shown by one web proxy: each is a
    friend (its own capsule, not the proxy's host), kind ``gemini``; a Gopher gateway's
    percent-encoded capsule likewise."""
    assert SHARED is not None
    body = (SHARED / PYTHON[1]).read_text("utf-8")
    one = "https://portal.mozz.us/gemini/alpha-example.org/"
    two = "https://portal.mozz.us/gemini/beta-example.org/log/"
    three = "https://gopher.floodgap.com/gopher/gw?a=gopher%3A%2F%2Fsdf.org%2F1%2Fusers%2Fgamma"
    body = body.replace("http://blog.ziade.org", one).replace("http://www.wefearchange.org/", two)
    body = body.replace("http://eli.thegreenplace.net/", three)
    result = extract_friends(parse_page(PYTHON[0], body.encode(), {}))
    kinds = {f.url: f.kind for f in result.friends}
    assert (kinds[one], kinds[two], kinds[three]) == ("gemini", "gemini", "gopher")


def test_a_site_named_gemini_is_a_site() -> None:
    """Counter-case: a host or path that says gemini is no proxy without a capsule in it."""
    result = _python_with("http://blog.ziade.org", "https://gemini-example.org/gemini/")
    assert {f.url: f.kind for f in result.friends}["https://gemini-example.org/gemini/"] == ""
