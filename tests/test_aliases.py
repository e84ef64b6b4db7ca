"""One blog under several addresses: the evidence of :mod:`blogfeeds.extract.aliases`.

Small hand-written pages and observations for each kind of evidence and its counter-cases, then
the real built blogs of ``bench/identity_eval.py``'s development part (rebuilt outside the
repository; skipped when the set is not built): every pair of their addresses decided offline,
no two blogs merged.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from blogfeeds.extract.aliases import (
    BASE,
    CANONICAL,
    ENTRIES,
    FEEDS_DISJOINT,
    LOCAL_POSTS,
    MIRROR,
    MOVED,
    OG_URL,
    REDIRECT,
    REL_ME,
    SAME_FEED,
    SAME_PAGE,
    Hop,
    Observation,
    PageSignals,
    claims,
    index_keys,
    is_placeholder,
    local_posts,
    observation_from,
    observation_json,
    preferred,
    same_blog,
    shared_enough,
)
from blogfeeds.extract.feedreader.read import read_feed
from blogfeeds.extract.page import PageLimits, parse_page
from blogfeeds.extract.pagesignals import page_signals

POSTS = frozenset(f"https://alice.example/posts/{i}/" for i in range(10))
OTHER_POSTS = frozenset(f"https://bob.example/{2020 + i}/notes-{i}.html" for i in range(10))


def page(url: str, head: str = "", body: str = "") -> PageSignals:
    html = f"<html><head>{head}</head><body>{body}</body></html>"
    return page_signals(parse_page(url, html.encode(), {"Content-Type": "text/html"}))


# --- reading the page -----------------------------------------------------------------------


def test_page_signals_read_canonical_og_url_and_rel_me() -> None:
    signals = page(
        "https://alice.github.io/",
        '<link rel="canonical" href="https://alice.example/">'
        '<meta property="og:url" content="https://alice.example/">'
        '<link rel="me" href="https://social.example/@alice">',
        '<a rel="me noopener" href="https://alice.example/">home</a>',
    )
    assert signals.canonical == signals.og_url == "https://alice.example/"
    assert signals.rel_me == ("https://social.example/@alice", "https://alice.example/")


@pytest.mark.parametrize(
    "notice",
    [
        '<p>本博客已迁移至新地址：<a href="https://alice.example/">alice.example</a></p>',
        '<div class="banner">This blog has moved to <a href="https://alice.example/">here</a></div>',
        '<p>このブログは<a href="https://alice.example">新しいドメイン</a>に移転しました</p>',
        '<p>Dieses Blog ist umgezogen: <a href="https://alice.example/">alice.example</a></p>',
        '<p>Este blog mudou-se para <a href="https://alice.example/">alice.example</a></p>',
        '<p>Este blog se ha mudado a <a href="https://alice.example/">alice.example</a></p>',
        '<p>Ce blog a déménagé : <a href="https://alice.example/">alice.example</a></p>',
    ],
)
def test_a_moved_notice_names_the_new_home(notice: str) -> None:
    assert page("https://old.example/", body=notice).moved_to.rstrip("/") == "https://alice.example"


def test_a_post_about_migrating_links_no_new_home() -> None:
    """A post excerpt "moved to Hugo" linking a deep page of the tool's site, and a moved notice
    linking a page of the blog itself, name no new home of the blog."""
    body = (
        '<p>How I moved to Hugo: <a href="https://gohugo.io/getting-started/quick-start/">'
        "quick start</a></p>"
        '<p>已迁移至<a href="/archives/">归档</a></p>'
    )
    assert page("https://alice.example/", body=body).moved_to == ""


def test_a_mirror_menu_lists_the_other_copies() -> None:
    body = (
        '<nav><ul><li><a href="/">首页</a></li><li>镜像站：<a href="https://alice.vercel.app/">'
        'Vercel</a> <a href="https://alice.netlify.app/">Netlify</a></li></ul></nav>'
        '<p>Friends: <a href="https://bob.example/">Bob</a></p>'
    )
    signals = page("https://alice.example/", body=body)
    assert signals.mirrors == ("https://alice.vercel.app/", "https://alice.netlify.app/")
    submenu = (
        '<ul class="menu"><li><a href="#">Mirrors</a><ul class="sub-menu">'
        '<li><a href="https://alice.gitee.io/">Gitee</a></li></ul></li></ul>'
    )
    assert page("https://alice.example/", body=submenu).mirrors == ("https://alice.gitee.io/",)


# --- deciding --------------------------------------------------------------------------------


def test_a_permanent_redirect_is_one_blog_and_names_the_preferred_address() -> None:
    github = Observation(
        "https://alice.github.io/",
        "https://alice.example/",
        (Hop("https://alice.github.io/", 301),),
    )
    custom = Observation("https://alice.example/")
    verdict = same_blog(github, custom)
    assert verdict.same and verdict.evidence == (REDIRECT,)
    assert preferred(github, custom) == preferred(custom, github) == "https://alice.example/"
    assert [c.evidence for c in claims(github) if c.conclusive] == [REDIRECT]


def test_a_temporary_redirect_or_one_to_a_path_of_the_same_host_is_no_alias() -> None:
    moved = Observation(
        "https://alice.github.io/",
        "https://alice.example/",
        (Hop("https://alice.github.io/", 302),),
    )
    assert not same_blog(moved, Observation("https://alice.example/")).same
    language = Observation(
        "https://alice.example/", "https://alice.example/zh/", (Hop("https://alice.example/", 301),)
    )
    assert claims(language) == ()


def test_a_feed_that_redirects_permanently_to_the_others_feed() -> None:
    old = Observation(
        "https://old.example/",
        feed_url="https://old.example/atom.xml",
        feed_final_url="https://alice.example/atom.xml",
        feed_redirects=(Hop("https://old.example/atom.xml", 308),),
    )
    new = Observation("https://alice.example/", feed_url="https://alice.example/atom.xml")
    assert same_blog(old, new).evidence == (REDIRECT,)


def test_a_platform_copy_naming_the_custom_domain() -> None:
    """A vercel.app copy of the build: its canonical and og:url name the custom domain, its
    pages name the custom domain's feed, its feed carries the same entries."""
    signals = PageSignals(canonical="https://alice.example/", og_url="https://alice.example/")
    copy = Observation(
        "https://alice.vercel.app/",
        page=signals,
        feed_url="https://alice.example/atom.xml",
        entries=POSTS,
    )
    custom = Observation(
        "https://alice.example/",
        page=signals,
        feed_url="https://alice.example/atom.xml",
        entries=POSTS,
    )
    verdict = same_blog(copy, custom)
    assert verdict.same
    assert verdict.evidence == (CANONICAL, OG_URL, SAME_FEED, ENTRIES)
    assert preferred(copy, custom) == "https://alice.example/"


@pytest.mark.parametrize(
    "placeholder",
    [
        "http://example.com/",
        "https://www.example.org/index.html",
        "http://localhost:1313/",
        "http://127.0.0.1:4000/",
        "http://0.0.0.0/",
    ],
)
def test_a_placeholder_canonical_never_counts(placeholder: str) -> None:
    """Two default-theme sites both naming an unconfigured address (and the demo's posts on it)
    stay two blogs, and no claim is made."""
    assert is_placeholder(placeholder)
    demo = frozenset(f"{placeholder.rstrip('/')}/posts/hello-world-{i}/" for i in range(5))
    signals = PageSignals(canonical=placeholder, og_url=placeholder)
    one = Observation("https://ann.github.io/", page=signals, entries=demo)
    two = Observation("https://ben.github.io/", page=signals, entries=demo)
    assert same_blog(one, two).same is False
    assert claims(one) == ()
    assert not is_placeholder("https://alice.example/")


def test_a_theme_demo_named_as_canonical_is_no_alias() -> None:
    """A blog that kept its theme's demo address as canonical: the demo's feed and the blog's
    share no entry."""
    blog = Observation(
        "https://ann.github.io/",
        page=PageSignals(canonical="https://theme-demo.example/"),
        entries=POSTS,
    )
    demo = Observation("https://theme-demo.example/", entries=OTHER_POSTS)
    verdict = same_blog(blog, demo)
    assert (verdict.same, verdict.evidence, verdict.against) == (
        False,
        (CANONICAL,),
        (FEEDS_DISJOINT,),
    )


ERIK_HEAD = (
    '<meta charset="UTF-8"><title>Erik Johannes Husom</title>'
    '<base href="https://erik.example/">'
    '<link href="css/style.css" rel="stylesheet" type="text/css">'
)
ERIK_BODY = (
    '<header><h1><a href="https://erik.example/">Erik Johannes</a></h1><nav>'
    '<a href="blog.html">Blog</a><a href="about.html">About</a><a href="index.xml">RSS</a>'
    "</nav></header><article><p>I'm a person who loves to be in the mountains.</p></article>"
)


def test_a_base_href_on_another_host_is_a_claim_like_the_canonical() -> None:
    """A hand-made site's stale copy on netlify.app (ejhusom of identity_eval): no canonical, no
    feed of its own (its feed link resolves on the original), but a ``<base href>`` naming the
    address the site was written for. Confirmed by that address, which names no third one, as a
    canonical is; a placeholder's, a CDN's or a deep path's base is no claim, and a base naming a
    blog whose feed shares nothing with the page's own is no alias (a template's author)."""
    copy_page = page("https://erik.netlify.app/", ERIK_HEAD, ERIK_BODY)
    assert copy_page.base == "https://erik.example/" and copy_page.canonical == ""
    copy = Observation("https://erik.netlify.app/", page=copy_page)
    original = Observation(
        "https://erik.example/",
        page=page("https://erik.example/", ERIK_HEAD, ERIK_BODY),
        feed_url="https://erik.example/index.xml",
        entries=POSTS,
    )
    assert original.page.base == ""  # its own address
    assert [(c.target, c.evidence) for c in claims(copy)] == [("https://erik.example/", BASE)]
    assert f"home {'erik.example'}" in index_keys(copy)
    verdict = same_blog(copy, original)
    assert (verdict.same, verdict.evidence) == (True, (BASE,))
    assert preferred(copy, original) == preferred(original, copy) == "https://erik.example/"
    for base in (
        "http://localhost:4000/",
        "https://cdn.example/gh/erik/site@main/",
        "https://erik.example/static/css/",
    ):
        head = ERIK_HEAD.replace("https://erik.example/", base)
        signals = page("https://erik.netlify.app/", head, ERIK_BODY)
        assert not same_blog(Observation(copy.url, page=signals), original).same, base
    # the original naming a third address: the copy's base is no claim it confirms
    third = Observation(original.url, page=PageSignals(canonical="https://erik.blog/"))
    assert not same_blog(copy, third).same
    # a template that kept its author's base: two blogs, their feeds share no post
    user = Observation(copy.url, page=copy_page, entries=OTHER_POSTS)
    verdict = same_blog(user, original)
    assert (verdict.same, verdict.against) == (False, (FEEDS_DISJOINT,))


def test_a_copy_whose_feed_links_its_posts_on_the_original_claims_it() -> None:
    """A Hexo build deployed to pages.dev and vercel.app (cooooing of identity_eval): no
    canonical or ``og:url``, but the feed the build wrote links every post on the site URL it
    was configured with, ``user.github.io``: a claim the crawl asks once, confirmed by the
    original's own feed. No claim when the posts are on the address itself, on a placeholder,
    on several hosts (an aggregator), when there is one post only, or from a home under a
    path (the host's root is not the blog)."""
    atom = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Cooooing's blog</title>
<link href="https://cooooing.github.io/atom.xml" rel="self"/>
<link href="https://cooooing.github.io/"/><id>https://cooooing.github.io/</id>
<entry><title>ArchLinux</title><link href="https://cooooing.github.io/notes/archlinux/"/>
<id>https://cooooing.github.io/notes/archlinux/</id><updated>2024-05-01T00:00:00Z</updated></entry>
<entry><title>top</title><link href="https://cooooing.github.io/notes/top/"/>
<id>https://cooooing.github.io/notes/top/</id><updated>2024-04-01T00:00:00Z</updated></entry>
<entry><title>Go time</title><link href="https://cooooing.github.io/notes/go-time/"/>
<id>https://cooooing.github.io/notes/go-time/</id><updated>2024-03-01T00:00:00Z</updated></entry>
</feed>"""
    doc = read_feed(atom, "application/atom+xml", "https://cooooing.pages.dev/atom.xml")
    assert doc is not None
    copy = Observation(
        "https://cooooing.pages.dev/",
        feed_url="https://cooooing.pages.dev/atom.xml",
        entries=doc.item_keys,
    )
    assert [(c.target, c.evidence) for c in claims(copy)] == [
        ("https://cooooing.github.io/", ENTRIES)
    ]
    assert "home cooooing.github.io" in index_keys(copy)
    original = Observation(
        "https://cooooing.github.io/",
        feed_url="https://cooooing.github.io/atom.xml",
        entries=doc.item_keys,
    )
    assert claims(original) == ()
    assert same_blog(copy, original).same
    assert preferred(copy, original) == original.url
    one = frozenset(sorted(doc.item_keys)[:1])
    aggregated = POSTS | OTHER_POSTS
    on_placeholder = frozenset(f"http://localhost:4000/{i}/" for i in range(5))
    for entries in (one, aggregated, on_placeholder):
        assert claims(Observation(copy.url, entries=entries)) == (), entries
    assert claims(Observation("https://cooooing.pages.dev/zh/", entries=doc.item_keys)) == ()


def test_a_canonical_whose_target_names_a_third_address_is_no_alias() -> None:
    one = Observation("https://ann.github.io/", page=PageSignals(canonical="https://b.example/"))
    other = Observation("https://b.example/", page=PageSignals(canonical="https://c.example/"))
    assert not same_blog(one, other).same


def test_a_feed_url_on_a_third_host_is_no_shared_feed() -> None:
    """Two blogs whose theme names its demo's feed."""
    feed = "https://theme-demo.example/atom.xml"
    one = Observation("https://ann.github.io/", feed_url=feed)
    two = Observation("https://ben.github.io/", feed_url=feed)
    assert not same_blog(one, two).same


def test_an_older_copy_shares_most_of_the_feed() -> None:
    newer = frozenset(list(POSTS)[:8]) | {"https://alice.example/posts/new/"}
    old = Observation("https://alice.netlify.app/", entries=frozenset(list(POSTS)[:8]))
    new = Observation("https://alice.example/", entries=newer)
    assert same_blog(old, new).evidence == (ENTRIES,)
    assert same_blog(old, new).same


def test_entries_that_do_not_say_one_blog() -> None:
    posts = sorted(POSTS)
    # one shared post (a guest post, a repost) is not enough
    assert not shared_enough(frozenset(posts[:1]), frozenset(posts[:1]) | OTHER_POSTS)
    # an aggregator's feed carries the blog's posts among many sites'
    planet = POSTS | OTHER_POSTS | {f"https://carol.example/{i}" for i in range(20)}
    assert not shared_enough(POSTS, planet)
    # the blog's own larger feed (one site) holding the older copy's posts
    assert shared_enough(frozenset(posts[:3]), POSTS)
    # ids two blogs can share: numbers, slugs, relative paths
    for ids in (range(1, 11), (f"post-{i}" for i in range(10)), (f"/p/{i}/" for i in range(10))):
        same_ids = frozenset(str(i) for i in ids)
        assert not shared_enough(same_ids, same_ids)
    uuids = frozenset(f"urn:uuid:{i:08d}-0000-4000-8000-000000000000" for i in range(5))
    assert shared_enough(uuids, uuids | {"tag:alice.example,2024:post-9"})


def _built(url: str, posts: list[tuple[str, str, int]], title: str = "Rue") -> Observation:
    """The address ``url`` whose feed (read as the crawl reads it) lists ``posts``: link,
    title and day of October 2026 (0: undated), newest first."""
    items = "".join(
        f"<item><title>{name}</title><link>{link}</link><guid>{link}</guid>"
        + (f"<pubDate>{day:02d} Oct 2026 08:00:00 GMT</pubDate>" if day else "")
        + "</item>"
        for link, name, day in sorted(posts, key=lambda p: -p[2])
    )
    body = f'<rss version="2.0"><channel><title>{title}</title>{items}</channel></rss>'
    doc = read_feed(body.encode(), "application/rss+xml", url + "feed.xml")
    assert doc is not None
    return Observation(
        url, entries=doc.item_keys, feed_title=doc.title, local_posts=local_posts(doc.entries)
    )


def _notes(base: str, days: range, name: str = "Note") -> list[tuple[str, str, int]]:
    return [(f"{base}blog/2026/10/{d:02d}/note-{d}.html", f"{name} {d}", d) for d in days]


def test_a_stale_copy_of_a_build_for_a_placeholder() -> None:
    """A site built for ``localhost:4000`` (its feed's posts on the placeholder) and an older
    copy of it on a platform: the feeds are two windows of one list of posts (the older copy's
    last posts fell out of the newer's window), by path and title; an older copy that is a
    subset of the newer is one blog too."""
    local = "http://localhost:4000/"
    new = _built("https://rue.example/", _notes(local, range(4, 11)))
    old = _built("https://rue.netlify.app/", _notes(local, range(1, 8)))
    assert not shared_enough(new.entries, old.entries)  # the posts' links name no site
    assert len(new.local_posts) == 7 and "2026-10-04\t/blog/2026/10/04/note-4.html\tnote 4" in (
        new.local_posts
    )
    verdict = same_blog(old, new)
    assert (verdict.same, verdict.evidence) == (True, (LOCAL_POSTS,))
    assert preferred(old, new) == "https://rue.example/"
    assert index_keys(old) & index_keys(new) >= {"local /blog/2026/10/04/note-4.html\tnote 4"}
    assert observation_from(observation_json(old)) == old
    subset = _built("https://rue.pages.dev/", _notes(local, range(4, 8)))
    assert same_blog(subset, new).evidence == (LOCAL_POSTS,)
    # example.com and a private address are placeholders too; the title's case is no matter
    elsewhere = _built("https://rue.vercel.app/", _notes("http://example.com/", range(1, 8)))
    assert same_blog(
        elsewhere,
        _built("https://rue.example/", _notes("http://192.168.1.5/", range(4, 11)), "RUE"),
    ).same


def test_placeholder_posts_that_do_not_say_one_blog() -> None:
    """Two sites that kept a theme's sample posts on the placeholder (the very same list, or
    each its own newer posts beside them), feeds of two titles, the same paths under other
    titles, undated posts, and posts on real hosts (the generated web's ``/0/`` on every
    host) are no evidence."""
    demo = "https://example.com/"
    samples = [
        (f"{demo}posts/{slug}/", title, day)
        for slug, title, day in (
            ("markdown-syntax", "Markdown Syntax Guide", 1),
            ("rich-content", "Rich Content", 2),
            ("emoji-support", "Emoji Support", 3),
            ("math-typesetting", "Math Typesetting", 4),
            ("placeholder-text", "Placeholder Text", 5),
        )
    ]
    sam = _built("https://sam.github.io/", samples, "My New Hugo Site")
    tom = _built("https://tom.github.io/", samples, "My New Hugo Site")
    assert len(sam.local_posts) == 5 and not same_blog(sam, tom).same
    own_sam = _built("https://sam.github.io/", [*samples, (f"{demo}posts/sam/", "Sam", 9)], "Notes")
    own_tom = _built("https://tom.github.io/", [*samples, (f"{demo}posts/tom/", "Tom", 8)], "Notes")
    assert not same_blog(own_sam, own_tom).same
    local = "http://localhost:4000/"
    new = _built("https://rue.example/", _notes(local, range(4, 11)))
    renamed = _built("https://uma.example/", _notes(local, range(1, 8)), "Uma")
    assert not same_blog(renamed, new).same
    retitled = _built("https://uma.example/", _notes(local, range(1, 8), "Post"))
    assert not same_blog(retitled, new).same
    undated = _built(
        "https://rue.pages.dev/", [(u, t, 0) for u, t, _ in _notes(local, range(1, 8))]
    )
    assert len(undated.local_posts) == 7
    assert not same_blog(undated, new).same
    generated = [
        _built(
            f"http://blog0000{i}.example/",
            [
                (f"http://blog0000{i}.example/{n}/", f"Post {n} of blog0000{i}.example", n + 1)
                for n in range(5)
            ],
            f"blog0000{i}.example",
        )
        for i in (1, 2)
    ]
    assert generated[0].local_posts == frozenset() and not same_blog(*generated).same


def _text_page(url: str, text: str) -> PageSignals:
    return page(url, body=f"<main><h1>Notes</h1><p>{text}</p></main>")


def test_one_page_text_served_at_two_addresses() -> None:
    """A build for ``localhost`` (its feed's entries on the placeholder, which count for
    nothing alone; no canonical) copied to a platform: the same text of 400 letters and more
    and the same entries are one site; a short front page (a theme's empty home), one sentence
    different, or no feed (one template's page served by many hosts) is no evidence."""
    text = " ".join(f"Paragraph {i} of the garden, on tools and walks." for i in range(40))
    built = frozenset(f"http://localhost:4000/2024/0{i}/01/note/" for i in range(1, 6))
    a_page = _text_page("https://frank.example/", text)
    a = Observation("https://frank.example/", page=a_page, entries=built)
    b_page = _text_page("https://x.netlify.app/", text)
    b = Observation("https://frank.netlify.app/", page=b_page, entries=built)
    assert same_blog(a, b).evidence == (SAME_PAGE,)
    shared = index_keys(a) & index_keys(b)
    assert [k for k in shared if k.startswith(f"page {a.page.text_digest} ")]
    feedless = [Observation(o.url, page=o.page) for o in (a, b)]
    assert not same_blog(*feedless).same
    older = Observation(b.url, page=b.page, entries=built - {min(built)})
    assert not same_blog(a, older).same
    # neither is a candidate of the other by the page alone: one feedless template served by
    # many hosts would make each a candidate of all the others
    for other in (*feedless, older):
        assert not [k for k in index_keys(a) & index_keys(other) if k.startswith("page ")]
    changed = Observation(
        "https://gina.example/", page=_text_page("https://g/", text + " More."), entries=built
    )
    assert not same_blog(a, changed).same
    nginx = (
        "Welcome to nginx! If you see this page, the nginx web server is successfully installed "
        "and working. Further configuration is required. For online documentation and support "
        "please refer to nginx.org. Commercial support is available at nginx.com. Thank you for "
        "using nginx."
    )
    assert _text_page("https://j.example/", nginx).text_digest == ""
    # a page cut at a bound of the parser (150,000 links) was not read whole: no digest
    cut = parse_page(
        "https://k.example/",
        f"<html><body><p>{text}</p>{'<a href=/x>x</a>' * 5}</body></html>".encode(),
        {"Content-Type": "text/html"},
        limits=PageLimits(max_links=2),
    )
    assert cut.truncated and page_signals(cut).text_digest == ""
    short = _text_page("https://h.example/", "Welcome to my new site.")
    assert short.text_digest == ""
    assert not same_blog(
        Observation("https://h.example/", page=short),
        Observation(
            "https://i.example/", page=_text_page("https://i.example/", "Welcome to my new site.")
        ),
    ).same
    # one template's text linking other friends: two blogs (a copy links the same friends)
    friends = '<a href="https://ann.example/">Ann</a><a href="//bob.example/">Bob</a>'
    mine = _text_page("https://m.example/", text + "</p><p>" + friends)
    copy = _text_page("https://m.pages.dev/", text + "</p><p>" + friends)
    other = _text_page("https://o.example/", text + "</p><p>" + friends.replace("bob", "bea"))
    assert mine.text_digest == copy.text_digest != other.text_digest
    # the same long text but two feeds with no post in common: two blogs
    a_feed = Observation(a.url, page=a.page, entries=POSTS)
    b_feed = Observation(b.url, page=b.page, entries=OTHER_POSTS)
    assert not same_blog(a_feed, b_feed).same


def test_rel_me_both_ways_and_one_way() -> None:
    a = Observation("https://alice.example/", page=PageSignals(rel_me=("https://alice.blog/",)))
    b = Observation("https://alice.blog/", page=PageSignals(rel_me=("https://alice.example/",)))
    assert same_blog(a, b).evidence == (REL_ME,)
    assert same_blog(a, b).same
    assert not same_blog(a, Observation("https://alice.blog/")).same


def test_two_blogs_of_one_person_linking_each_other_stay_two() -> None:
    """rel=me both ways says one person; feeds that share no post say two blogs."""
    a = Observation(
        "https://alice.example/",
        page=PageSignals(rel_me=("https://photos.example/",)),
        entries=POSTS,
    )
    b = Observation(
        "https://photos.example/",
        page=PageSignals(rel_me=("https://alice.example/",)),
        entries=OTHER_POSTS,
    )
    verdict = same_blog(a, b)
    assert (verdict.same, verdict.against) == (False, (FEEDS_DISJOINT,))


def test_a_moved_notice_needs_the_new_feed_to_confirm_it() -> None:
    old = Observation(
        "https://old.example/",
        page=PageSignals(moved_to="https://alice.example/"),
        entries=frozenset(sorted(POSTS)[:4]),
    )
    assert same_blog(old, Observation("https://alice.example/", entries=POSTS)).evidence == (
        ENTRIES,
        MOVED,
    )
    # the notice alone, or a new address whose posts are all others
    assert not same_blog(old, Observation("https://alice.example/")).same
    assert not same_blog(old, Observation("https://alice.example/", entries=OTHER_POSTS)).same


def test_a_moved_notice_confirmed_by_the_same_posts_at_the_same_paths() -> None:
    """The old domain's copy lists its posts on the old host, the new feed the same paths on
    the new one; without the notice the same paths on two hosts are no evidence (two sites
    that kept a theme's demo posts)."""
    paths = [f"/posts/{i}/" for i in range(6)]
    old_posts = frozenset(f"https://old.example{p}" for p in paths[:5])
    new_posts = frozenset(f"https://alice.example{p}" for p in paths)
    notice = PageSignals(moved_to="https://alice.example/")
    old = Observation("https://old.example/", page=notice, entries=old_posts)
    new = Observation("https://alice.example/", entries=new_posts)
    assert same_blog(old, new).evidence == (MOVED,)
    assert same_blog(old, new).same
    silent = Observation("https://old.example/", entries=old_posts)
    assert not same_blog(silent, new).same
    assert same_blog(silent, new).against == (FEEDS_DISJOINT,)


def test_a_mirror_menu_both_ways() -> None:
    a = Observation(
        "https://alice.example/", page=PageSignals(mirrors=("https://alice.gitee.io/",))
    )
    b = Observation(
        "https://alice.gitee.io/", page=PageSignals(mirrors=("https://alice.example/",))
    )
    assert same_blog(a, b).evidence == (MIRROR,)
    assert not same_blog(a, Observation("https://alice.gitee.io/")).same


def test_two_people_on_one_shared_host_stay_two() -> None:
    """``medium.com/@a`` names itself as canonical and links ``medium.com/@b`` with rel=me
    (one way); a blog under ``/~x/`` of a university host is not its neighbour ``/~y/``."""
    a = Observation(
        "https://medium.com/@a/",
        page=PageSignals(canonical="https://medium.com/@a/", rel_me=("https://medium.com/@b/",)),
        entries=frozenset(f"https://medium.com/@a/p{i}" for i in range(5)),
    )
    b = Observation(
        "https://medium.com/@b/",
        page=PageSignals(canonical="https://medium.com/@b/"),
        entries=frozenset(f"https://medium.com/@b/p{i}" for i in range(5)),
    )
    assert not same_blog(a, b).same
    x = Observation(
        "https://cs.uni.example/~x/", page=PageSignals(canonical="https://cs.uni.example/~y/")
    )
    assert claims(x)[0].evidence == CANONICAL  # a claim, yet ~y names itself
    y = Observation(
        "https://cs.uni.example/~y/", page=PageSignals(canonical="https://cs.uni.example/~y/")
    )
    assert same_blog(x, y).same  # x's page says it is ~y: that is the evidence
    z = Observation("https://cs.uni.example/~z/")
    assert not same_blog(x, z).same and not same_blog(y, z).same


def test_same_theme_title_and_description_are_no_evidence() -> None:
    """Two github.io users of one theme: each names itself, their feeds share nothing. (An
    observation has no title, template or description to decide by.)"""
    a = Observation(
        "https://ann.github.io/",
        page=PageSignals(canonical="https://ann.github.io/"),
        entries=POSTS,
    )
    b = Observation(
        "https://ben.github.io/",
        page=PageSignals(canonical="https://ben.github.io/"),
        entries=OTHER_POSTS,
    )
    assert same_blog(a, b).same is False
    assert same_blog(a, b).evidence == ()


def test_the_custom_domain_is_preferred_over_a_platform_copy() -> None:
    copy, custom = Observation("https://alice.pages.dev/"), Observation("https://alice.example/")
    assert preferred(copy, custom) == preferred(custom, copy) == "https://alice.example/"


def test_the_repository_pages_site_is_preferred_over_another_platforms_copy() -> None:
    """Two copies of a build for ``localhost`` that say nothing of which is the original (ya1orin
    of identity_eval: github.io and a gitee.io mirror): the repository's own Pages site; the
    blog's own domain still over it, and the host its feed's posts name still first."""
    github, gitee = Observation("https://alice.github.io/"), Observation("https://alice.gitee.io/")
    assert preferred(gitee, github) == preferred(github, gitee) == github.url
    for copy in ("https://alice.vercel.app/", "https://alice.netlify.app/"):
        assert preferred(Observation(copy), github) == github.url
    gitlab = Observation("https://alice.gitlab.io/")
    assert preferred(Observation("https://alice.pages.dev/"), gitlab) == gitlab.url
    custom = Observation("https://alice.example/")
    assert preferred(github, custom) == preferred(custom, github) == custom.url
    posts = frozenset(f"https://alice.gitee.io/2021/0{n}/post/" for n in range(1, 5))
    named = Observation(gitee.url, entries=posts)
    assert preferred(Observation(github.url, entries=posts), named) == gitee.url


def test_the_new_address_of_a_move_and_the_original_of_a_copy_are_preferred() -> None:
    old = Observation(
        "https://alice.github.io/", page=PageSignals(moved_to="https://alice.gitee.io/")
    )
    new = Observation("https://alice.gitee.io/")
    assert preferred(old, new) == preferred(new, old) == "https://alice.gitee.io/"
    copy = Observation("https://alice.vercel.app/", feed_url="https://alice.github.io/atom.xml")
    original = Observation("https://alice.github.io/", feed_url="https://alice.github.io/atom.xml")
    assert preferred(copy, original) == preferred(original, copy) == "https://alice.github.io/"
    # both copies' feeds link their posts on one of the two hosts: the build's own site
    posts = frozenset(f"https://alice.gitee.io/2021/0{n}/post/" for n in range(1, 5))
    gitee = Observation("https://alice.gitee.io/", entries=posts)
    mirror = Observation("https://alice.vercel.app/", entries=posts)
    assert preferred(mirror, gitee) == preferred(gitee, mirror) == gitee.url
    # copies that say nothing of which is the original: the same answer in either order
    twin = Observation("https://alice.vercel.app/", feed_url="https://alice.vercel.app/atom.xml")
    assert preferred(twin, original) == preferred(original, twin)


# --- the real built blogs ---------------------------------------------------------------------


def test_the_real_blogs_of_the_development_part() -> None:
    """``bench/identity_eval.py evidence --part dev``, pair by pair: no two blogs merged, every
    permanent redirect and at least 5 in 6 of all aliases found (the misses are copies of
    sites built for a placeholder address, and a hand-made site without feed or canonical)."""
    out = Path(os.environ.get("BLOGFEEDS_IDENTITY_EVAL", "~/.cache/blogfeeds/identity-eval"))
    out = out.expanduser()
    if not out.is_dir():
        pytest.skip(f"the mirror web is not built in {out} (bench/identity_eval.py build)")
    sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
    import identity_eval

    blogs = [b for b in identity_eval.load_manifest() if not b.holdout]
    if any(not (out / b.id / "build.json").is_file() for b in blogs):
        pytest.skip(f"some blogs of the set are not built in {out}")
    web = identity_eval.MirrorWeb(blogs, out)
    seen = [(b, a, identity_eval.observe(web, a.url)) for b in blogs for a in b.addresses]
    found = aliases = 0
    for i, (blog, address, one) in enumerate(seen):
        for other_blog, other_address, other in seen[i + 1 :]:
            verdict = same_blog(one, other)
            if other_blog.id != blog.id:
                assert not verdict.same, (address.url, other_address.url, verdict)
            elif address.kind == "canonical":
                aliases += 1
                found += verdict.same
                if other_address.kind.endswith("-301"):
                    assert verdict.same and REDIRECT in verdict.evidence, other_address.url
                if other_address.kind == "moved-notice":
                    assert other.page.moved_to == blog.canonical
    assert found * 6 >= aliases * 5, (found, aliases)
