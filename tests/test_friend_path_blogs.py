"""Friends under a path (issue 35, "shared hosts split right"; issue 40, kinds 3 and 4): two
people on one shared host are two friends, and a blog whose home lies under a path is a blog, not
a deep link. Hand-made lists in the markup real blogrolls write, and the real pages of the shared
cases and corpus that hold links of these shapes (read in place; skipped without them)."""

from __future__ import annotations

import gzip
import json

import pytest

from blogfeeds.extract.friends import FriendExtraction, extract_friends
from blogfeeds.extract.page import parse_page
from tests.littleweb import find_shared

FRIENDS = "https://me-example.com/blogroll/"
THREE = (
    ("https://alpha-example.org/", "Alpha"),
    ("https://beta-example.net/", "Beta"),
    ("https://gamma-example.com/", "Gamma"),
)


def run(body: str, url: str = FRIENDS) -> FriendExtraction:
    html = f"<html><head><title>Blogroll</title></head><body><main>{body}</main></body></html>"
    return extract_friends(parse_page(url, html.encode(), {}))


def ul(*links: tuple[str, str]) -> str:
    return "<ul>" + "".join(f'<li><a href="{h}">{t}</a></li>' for h, t in links) + "</ul>"


def cards(*links: tuple[str, str]) -> str:
    """Cards with a name and a line of description (no list markup): a deep link here is not
    rescued as a list entry of its own."""
    return (
        '<div class="links">'
        + "".join(
            f'<div class="card"><a href="{h}">{t}</a><p>about {t}</p></div>' for h, t in links
        )
        + "</div>"
    )


def urls(result: FriendExtraction) -> list[str]:
    return [f.url for f in result.friends]


def reasons(result: FriendExtraction) -> dict[str, str]:
    return dict(result.excluded)


def real_page(suite: str, name: str) -> FriendExtraction:
    shared = find_shared()
    case = shared / "cases" / suite / name if shared else None
    if case is None or not case.is_dir():
        pytest.skip("the shared cases (../shared or $BLOGFEEDS_SHARED) are not available")
    expected = json.loads((case / "expected.json").read_text("utf-8"))
    return extract_friends(parse_page(expected["page_url"], (case / "page.html").read_bytes(), {}))


def corpus_page(file: str) -> FriendExtraction:
    shared = find_shared()
    path = shared / "corpus" / file if shared else None
    if path is None or not path.is_file():
        pytest.skip("the shared corpus (../shared or $BLOGFEEDS_SHARED) is not available")
    labels = (shared / "corpus" / "labels.jsonl").read_text("utf-8").splitlines()  # type: ignore[operator]
    url = next(json.loads(x)["url"] for x in labels if json.loads(x)["file"] == file)
    return extract_friends(parse_page(url, gzip.decompress(path.read_bytes()), {}))


# --- Two people on one shared host ---------------------------------------------------------------


def test_two_people_on_one_host_by_their_account_paths_are_two_friends() -> None:
    """The account shapes real pages link (``/users/<name>`` on LessWrong and its forums,
    Discourse's ``/u/<name>``, ``/@handle``): each is a person, whatever the host."""
    people = (
        ("https://www.lesswrong.com/users/zvi", "Zvi"),
        ("https://www.lesswrong.com/users/raemon", "Raemon"),
        ("https://forum.example-discourse.org/u/carol/", "Carol"),
        ("https://forum.example-discourse.org/u/dave/", "Dave"),
        ("https://substack.com/@erin", "Erin"),
        ("https://substack.com/@frank", "Frank"),
    )
    result = run(ul(*THREE, *people))
    assert urls(result) == [u for u, _ in (*THREE, *people)]
    # counter-case: an account shape on a social platform of the filter table is the
    # platform's profile page, as it was when the host alone was its identity
    profiles = (("https://weibo.com/u/123456", "Weibo"), ("https://mastodon.social/@x", "X"))
    result = run(ul(*THREE, *profiles))
    assert urls(result) == [u for u, _ in THREE]
    assert {reasons(result)[u] for u, _ in profiles} == {"platform"}


def test_people_a_list_shows_under_first_paths_of_one_host_are_each_a_friend() -> None:
    """Two comics on one comics platform, two users' directories of a host: links to one host
    that is not the page's, under different first path segments, named differently."""
    people = (
        ("https://www.comics-example.com/starfall/", "Starfall"),
        ("https://www.comics-example.com/moonbeam/", "Moonbeam"),
        ("https://pages.uni-example.edu/kim/", "Kim Lee"),
        ("https://pages.uni-example.edu/lee/blog/", "Lee's blog"),
    )
    result = run(ul(*THREE, *people))
    assert urls(result) == [u for u, _ in (*THREE, *people)]
    # counter-cases: a home and its about page, one person's pages named alike, a site's pages
    same = (
        ("https://delta-example.com/", "Delta"),
        ("https://delta-example.com/about/", "About Delta"),
        ("https://eps-example.com/blog/", "Eps"),
        ("https://eps-example.com/notes/", "Eps"),
        ("https://zeta-example.com/tags/", "Tags"),
        ("https://zeta-example.com/archive/", "Archive"),
    )
    one = run(ul(*THREE, *same))
    assert urls(one) == [u for u, _ in THREE] + [same[0][0], same[2][0], same[4][0]]


def test_a_sites_sections_a_news_page_lists_stay_one_sites_pages() -> None:
    """Real counter-case, corpus/pages/aeb/d605bdef… (a CNN article): five sections of
    bleacherreport.com, named by their slugs, are one site's menu (most of what the list
    shows), not five people."""
    result = corpus_page(
        "pages/aeb/d605bdef2cde7308a9f2fbd1484d4a9c3da0167177245d346da61e455f42208d.html.gz"
    )
    sections = [u for u, why in result.excluded if "bleacherreport.com" in u]
    assert len(sections) == 5
    assert not [u for u in urls(result) if "bleacherreport.com" in u]
    assert {reasons(result)[u] for u in sections} == {"same-site-pages"}


def test_one_persons_pages_on_a_shared_host_stay_out_of_a_real_blogroll() -> None:
    """Real counter-case, friend-links-real/de_wp_blogroll_literaturgefluester: the owner's
    five novel pages on nanowrimo.org share one first segment (``/participants/<owner>/``):
    one person's pages, not five friends."""
    result = real_page("friend-links-real", "de_wp_blogroll_literaturgefluester")
    pages = [u for u, why in result.excluded if "nanowrimo.org" in u]
    assert len(pages) == 5
    assert {reasons(result)[u] for u in pages} == {"same-site-pages"}
    assert not [u for u in urls(result) if "nanowrimo.org" in u]


# --- A blog under a path --------------------------------------------------------------------------


def test_a_blogs_home_under_a_path_is_a_friend_in_cards_and_in_prose() -> None:
    """A language section (``user.github.io/zh/posts/``), a blog under a person's directory
    (``/python/weblog/``, after voidspace.org.uk/python/weblog/ in
    friend-links-real/en_blogger_bloglist_python), a language home (``/en/blog/``): cards and
    a line of prose give no list entry to rescue them as deep links."""
    homes = (
        ("https://lin-example.github.io/zh/posts/", "Lin 的博客"),
        ("https://voidspace-example.org.uk/python/weblog/", "Voidspace"),
        ("https://delta-example.org/en/blog/", "Delta"),
    )
    assert urls(run(cards(*THREE, *homes))) == [u for u, _ in (*THREE, *homes)]
    prose = "<p>" + " · ".join(f'<a href="{u}">{n}</a>' for u, n in (*THREE, *homes)) + "</p>"
    assert urls(run(prose)) == [u for u, _ in (*THREE, *homes)]
    # counter-case: a post's slug, a file, a /p/<id>, /posts/<slug> and a date are an article
    # of the blog, not its home
    articles = (
        ("https://lin-example.github.io/zh/posts/hello-world-and-more/", "Hello"),
        ("https://kappa-example.org/notes/plum.html", "Plum"),
        ("https://lambda-example.org/blog/p/1234/", "A post"),
        ("https://mu-example.org/posts/why-we-write/", "Why"),
        ("https://nu-example.org/blog/2020/05/", "May"),
    )
    result = run(cards(*THREE, *articles))
    assert urls(result) == [u for u, _ in THREE]
    assert {reasons(result)[u] for u, _ in articles} <= {"deep-link-or-query", "post"}


def test_latest_post_links_of_a_real_blog_list_stay_articles_beside_the_blog() -> None:
    """Real counter-case, friend-links-real/en_blogger_bloglist_python: Blogger's blog list
    shows each blog's latest post under its link; ``www.bitdance.com/blog`` (a blog under a
    path) is the friend, its ``/blog/2014/09/30_01_…`` post and eli.thegreenplace.net's dated
    post are articles."""
    result = real_page("friend-links-real", "en_blogger_bloglist_python")
    assert "http://www.bitdance.com/blog" in urls(result)
    found = set(urls(result))
    assert not [u for u in found if "/2014/09/" in u or "/2017/" in u]


def _feed_blogroll(*links: tuple[str, str]) -> str:
    """A blogroll under a heading and an introduction, each entry a feed icon, then the blog's
    name and a sentence about it (the markup of a Hugo blogroll written in Markdown)."""
    items = "".join(
        f'<li><p><a href="{h}feed/"><img alt="RSS" src="/img/rss.svg"></a> '
        f'<a href="{h}">{t}</a>: the blog of {t}, on books and the small web;</p></li>'
        for h, t in links
    )
    intro = "<p>The blogs I read, each with an icon for its RSS feed, kept by hand.</p>"
    podcasts = (
        "<h2>Podcasts</h2><p>Shows I follow.</p><ul>"
        '<li><a href="https://pod-example.fm/show/">A show</a></li>'
        '<li><a href="https://cast-example.fm/">Cast</a></li></ul>'
    )
    return f'<div id="content"><h2>Blogroll</h2>{intro}<ul>{items}</ul>{podcasts}</div>'


def test_people_on_one_host_in_a_blogroll_of_described_entries_are_each_a_friend() -> None:
    """Two blogs on one publishing host (``blog.host/felipe/``, ``blog.host/ideias/``) in a
    blogroll whose entries carry a feed icon and a description, a podcasts section after it
    (a real Hugo blogroll's shape): each friend is named by its link, never by the section's
    heading (a block of many sites' links is no card), so the two are two friends."""
    people = (
        ("https://blog.pub-example.media/felipe/", "Felipe Siles"),
        ("https://blog.pub-example.media/ideias/", "Ideias de Chirico"),
    )
    result = run(_feed_blogroll(*THREE, *people))
    assert urls(result) == [u for u, _ in (*THREE, *people)]
    assert [f.name for f in result.friends] == [t for _, t in (*THREE, *people)]
    # counter-case: a friend's home and their about page in the same markup stay one friend
    same = (
        ("https://delta-example.com/delta/", "Delta"),
        ("https://delta-example.com/about/", "About Delta"),
    )
    one = run(_feed_blogroll(*THREE, *same))
    assert urls(one) == [u for u, _ in THREE] + [same[0][0]]
