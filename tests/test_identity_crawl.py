"""One blog, one node, end to end: ``scrapy crawl blogs`` over a little mirror web on loopback.

A hub's blogroll links every address of the web: a ``github.io`` 301 to its custom domain, a
platform copy whose canonical and feed name the original, a stale copy whose feed is a subset of
the original's, an old domain whose older copy says the blog moved, copies naming an original
no page links (by canonical, ``<base href>``, or the host of their feed's posts: the crawl asks
it), a build for localhost and its copy, and an older copy of one; and controls that must stay
apart: two blogs of one theme with the same title, description and placeholder canonical, two
sites that kept a theme's sample posts, two people under paths of one host (``~user``, and plain
paths of a host no table knows), a personal site's section under a path, copies naming a theme's
default address or its demo (by canonical or base), one feedless page served by two hosts, a
site whose posts are on another site's host. Every blog must be one node, every link on it.
"""

from __future__ import annotations

import sqlite3
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.crawl.admission import Admission
from blogfeeds.crawl.caps import DomainCaps
from blogfeeds.crawl.depth import DepthBook
from blogfeeds.extract.aliases import Observation, PageSignals
from tests import blogosphere as bs
from tests.littleweb import LittleWeb

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
RSS = "application/rss+xml; charset=utf-8"

NODES = {
    "https://ana.github.io/": "ana-blog.example",
    "https://ana-blog.example/": "ana-blog.example",
    "https://ben.vercel.app/": "ben.example",
    "https://ben.example/": "ben.example",
    "https://cai.netlify.app/": "cai.example",
    "https://cai.example/": "cai.example",
    "https://dee-old.example/": "dee.example",
    "https://dee.example/": "dee.example",
    "https://eve.github.io/": "eve.github.io",
    "https://fay.github.io/": "fay.github.io",
    "https://pages.example/~gus/": "pages.example/~gus",
    "https://pages.example/~hal/": "pages.example/~hal",
    "https://ivy.vercel.app/": "ivy.example",
    "https://lea.github.io/": "lea.example",
    "https://lea.example/": "lea.example",
    "https://max.example/": "max.example",
    "https://ned.example/": "ned.example",
    "https://jon.netlify.app/": "jon.netlify.app",
    "https://kim.pages.dev/": "kim.pages.dev",
    "https://blogs.shared.example/oli/": "blogs.shared.example/oli",
    "https://blogs.shared.example/pia/": "blogs.shared.example/pia",
    "https://quinn.example/garden/": "quinn.example",
    "https://rue.netlify.app/": "rue.example",
    "https://rue.example/": "rue.example",
    "https://sam.github.io/": "sam.github.io",
    "https://tom.github.io/": "tom.github.io",
    "https://uma.netlify.app/": "uma.example",
    "https://val.pages.dev/": "val.github.io",
    "https://wes.netlify.app/": "wes.netlify.app",
    "https://yas.example/": "yas.example",
}
"""Each address the hub links, and the node it must be stored on."""


def home(title: str, head: str = "", body: str = "", feed: str = "feed.xml") -> str:
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="description" content="Notes on code, books and travel.">
<link rel="alternate" type="application/rss+xml" title="{title}" href="{feed}">{head}
</head><body><main><article><h1>{title}</h1>
<p>The first post of this blog: notes on crawling and feeds, written down.</p>
{body}</article></main></body></html>"""


def rss(title: str, posts: list[str]) -> str:
    items = "".join(
        f"<item><title>Post {n}</title><link>{url}</link><guid>{url}</guid>"
        f"<pubDate>Sun, {n + 1:02d} Nov 2026 08:00:00 GMT</pubDate></item>"
        for n, url in enumerate(posts)
    )
    return f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>{title}</title><link>https://x.invalid/</link>
<description>{title}</description>{items}</channel></rss>"""


def dated_rss(title: str, posts: list[tuple[str, str, int]]) -> str:
    """A feed of ``posts`` (link, title, day of October 2026)."""
    items = "".join(
        f"<item><title>{name}</title><link>{url}</link><guid>{url}</guid>"
        f"<pubDate>{day:02d} Oct 2026 08:00:00 GMT</pubDate></item>"
        for url, name, day in posts
    )
    return f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>{title}</title><link>http://localhost:4000/</link>
<description>{title}</description>{items}</channel></rss>"""


def posts(base: str, n: int) -> list[str]:
    return [f"{base}posts/{i}/" for i in range(1, n + 1)]


def page(body: str) -> dict[str, Any]:
    return {"body": body, "content_type": bs.HTML}


def feed(body: str) -> dict[str, Any]:
    return {"body": body, "content_type": RSS}


def mirror_web() -> dict[str, dict[str, Any]]:
    blogroll = "".join(
        f'<li class="flink-item"><a href="{url}">Friend {i}</a><p>a friend</p></li>'
        for i, url in enumerate(NODES)
    )
    routes = {
        "https://hub.example/": page(
            home("Hub", body=f'<section><h2>友情链接</h2><ul class="flink-list">{blogroll}</ul>')
        ),
        "https://hub.example/feed.xml": feed(rss("Hub", posts("https://hub.example/", 3))),
        # a github.io address that moved to its custom domain, answering after the custom
        # domain was read: the redirect leads to a blog analysed already
        "https://ana.github.io/": {
            "status": 301,
            "location": "https://ana-blog.example/",
            "delay": 1.0,
        },
        "https://ana-blog.example/": page(home("Ana")),
        "https://ana-blog.example/feed.xml": feed(
            rss("Ana", posts("https://ana-blog.example/", 4))
        ),
        # a platform copy whose build names the original as canonical, and its feed
        "https://ben.example/": page(home("Ben")),
        "https://ben.example/feed.xml": feed(rss("Ben", posts("https://ben.example/", 4))),
        "https://ben.vercel.app/": page(
            home(
                "Ben",
                head='<link rel="canonical" href="https://ben.example/">',
                feed="https://ben.example/feed.xml",
            )
        ),
        # a stale copy: relative links only, its feed the older three of the five posts
        "https://cai.example/": page(home("Cai")),
        "https://cai.example/feed.xml": feed(rss("Cai", posts("https://cai.example/", 5))),
        "https://cai.netlify.app/": page(home("Cai")),
        "https://cai.netlify.app/feed.xml": feed(rss("Cai", posts("https://cai.example/", 3))),
        # an old domain whose older copy says the blog moved; its posts at the same paths
        "https://dee.example/": page(home("Dee")),
        "https://dee.example/feed.xml": feed(rss("Dee", posts("https://dee.example/", 5))),
        "https://dee-old.example/": page(
            home(
                "Dee",
                body='<p>This blog has moved to <a href="https://dee.example/">dee.example</a></p>',
            )
        ),
        "https://dee-old.example/feed.xml": feed(rss("Dee", posts("https://dee-old.example/", 3))),
    }
    # controls: one theme, one title, description and placeholder canonical; own posts
    for blog in ("https://eve.github.io/", "https://fay.github.io/"):
        routes[blog] = page(
            home("My Blog", head='<link rel="canonical" href="https://example.com/">')
        )
        routes[blog + "feed.xml"] = feed(rss("My Blog", posts(blog, 3)))
    # a copy naming an original no page links: the crawl confirms the claim by asking it
    routes["https://ivy.example/"] = page(
        home("Ivy", head='<link rel="canonical" href="https://ivy.example/">')
    )
    routes["https://ivy.example/feed.xml"] = feed(rss("Ivy", posts("https://ivy.example/", 4)))
    routes["https://ivy.vercel.app/"] = page(
        home("Ivy", head='<link rel="canonical" href="https://ivy.example/">')
    )
    routes["https://ivy.vercel.app/feed.xml"] = feed(rss("Ivy", posts("https://ivy.example/", 4)))
    # a site built for localhost (no canonical; its feed's posts on the placeholder), copied as
    # it is; and a feedless template's page served by two hosts, two sites
    garden = "".join(
        f"<p>Note {i}: on tools, walks and the garden in winter.</p>" for i in range(40)
    )
    for blog in ("https://lea.github.io/", "https://lea.example/"):
        routes[blog] = page(home("Lea", body=garden))
        routes[blog + "feed.xml"] = feed(rss("Lea", posts("http://localhost:4000/", 4)))
    for blog in ("https://max.example/", "https://ned.example/"):
        routes[blog] = page(f"<html><head><title>Home</title></head><body>{garden}</body></html>")
    # a site built for localhost and an older copy on a platform (another front page, its feed
    # the posts of an older window); two sites that kept a theme's sample posts on example.com
    notes = [
        (f"http://localhost:4000/blog/2026/10/{d:02d}/note-{d}.html", f"Note {d}", d)
        for d in range(10, 0, -1)
    ]
    routes["https://rue.example/"] = page(home("Rue", body="<p>Note 10 is the newest.</p>"))
    routes["https://rue.example/feed.xml"] = feed(dated_rss("Rue", notes[:7]))
    routes["https://rue.netlify.app/"] = page(home("Rue", body="<p>Note 7 is the newest.</p>"))
    routes["https://rue.netlify.app/feed.xml"] = feed(dated_rss("Rue", notes[3:]))
    samples = [
        (f"https://example.com/posts/{slug}/", slug.replace("-", " ").title(), day)
        for day, slug in enumerate(("placeholder-text", "emoji-support", "markdown-syntax"), 1)
    ]
    for blog, title in (("https://sam.github.io/", "Sam"), ("https://tom.github.io/", "Tom")):
        routes[blog] = page(home(title))
        routes[blog + "feed.xml"] = feed(dated_rss("My New Hugo Site", samples))
    # copies naming a theme's default address (served by no one) or the theme's demo blog
    for blog, named in (
        ("https://jon.netlify.app/", "https://yoursite.example/"),
        ("https://kim.pages.dev/", "https://theme-demo.example/"),
    ):
        routes[blog] = page(home("Notes", head=f'<link rel="canonical" href="{named}">'))
        routes[blog + "feed.xml"] = feed(rss("Notes", posts(blog, 3)))
    routes["https://theme-demo.example/"] = page(home("Theme demo"))
    routes["https://theme-demo.example/feed.xml"] = feed(
        rss("Theme demo", posts("https://theme-demo.example/", 3))
    )
    # two people under paths of one host
    for blog in ("https://pages.example/~gus/", "https://pages.example/~hal/"):
        routes[blog] = page(home("Home page"))
        routes[blog + "feed.xml"] = feed(rss("Home page", posts(blog, 3)))
    # two people under plain paths of a host no table knows, each with a feed under the prefix
    # (the hub lists both: the second is taken for the host's blog until the first is read);
    # and a personal site's section under a path whose feed is the site's: the site's blog
    for blog, title in (
        ("https://blogs.shared.example/oli/", "Oli"),
        ("https://blogs.shared.example/pia/", "Pia"),
    ):
        routes[blog] = page(home(title))
        routes[blog + "feed.xml"] = feed(rss(title, posts(blog, 3)))
    routes["https://quinn.example/garden/"] = page(home("Quinn", feed="/feed.xml"))
    routes["https://quinn.example/feed.xml"] = feed(
        rss("Quinn", posts("https://quinn.example/", 3))
    )
    # a hand-made site's feedless stale copy whose <base href> names the original, and a copy
    # whose feed links its posts on the original (neither original linked by any page); a copy
    # whose base names a theme's demo (its own feed), a site whose posts are on another host
    uma = '<base href="https://uma.example/">'
    routes["https://uma.example/"] = page(home("Uma", head=uma, feed="index.xml"))
    routes["https://uma.example/index.xml"] = feed(rss("Uma", posts("https://uma.example/", 4)))
    routes["https://uma.netlify.app/"] = page(
        f"<html><head><title>Uma</title>{uma}</head><body><h1>Uma</h1></body></html>"
    )
    for blog in ("https://val.github.io/", "https://val.pages.dev/"):
        routes[blog] = page(home("Val"))
        routes[blog + "feed.xml"] = feed(rss("Val", posts("https://val.github.io/", 4)))
    routes["https://wes.netlify.app/"] = page(
        home(
            "Notes",
            head='<base href="https://theme-demo.example/">',
            feed="https://wes.netlify.app/feed.xml",
        )
    )
    routes["https://wes.netlify.app/feed.xml"] = feed(
        rss("Notes", posts("https://wes.netlify.app/", 3))
    )
    routes["https://yas.example/"] = page(home("Yas"))
    routes["https://yas.example/feed.xml"] = feed(rss("Yas", posts("https://yas.press/", 3)))
    routes["https://yas.press/"] = page(home("Press"))
    routes["https://yas.press/feed.xml"] = feed(rss("Press", posts("https://yas.press/p/", 3)))
    return routes


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("identity") / "blogs.sqlite3"
    with LittleWeb(mirror_web()) as web:
        env = web.env()
        env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{db}"
        cmd = [*bs.crawl_command(), "-a", "start_urls=https://hub.example/"]
        proc = subprocess.run(
            cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False
        )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return db


def test_every_blog_is_one_node_and_the_controls_stay_apart(crawled: Path) -> None:
    with sqlite3.connect(crawled) as conn:
        blogs = {row[0] for row in conn.execute("SELECT blog_id FROM blogs")}
        aliases = dict(conn.execute("SELECT alias_id, node_id FROM blog_aliases").fetchall())
    assert blogs == {*NODES.values(), "hub.example"}
    assert aliases == {
        "ana.github.io": "ana-blog.example",
        "ben.vercel.app": "ben.example",
        "cai.netlify.app": "cai.example",
        "dee-old.example": "dee.example",
        "ivy.vercel.app": "ivy.example",
        "lea.github.io": "lea.example",
        "rue.netlify.app": "rue.example",
        "uma.netlify.app": "uma.example",
        "val.pages.dev": "val.github.io",
    }


def test_every_friend_link_is_on_its_blogs_node(crawled: Path) -> None:
    with sqlite3.connect(crawled) as conn:
        links = dict(
            conn.execute(
                "SELECT target_url, target_blog_id FROM friend_links "
                "WHERE source_blog_id = 'hub.example'"
            ).fetchall()
        )
    assert links == NODES


def test_a_claim_is_recorded_only_once_confirmed() -> None:
    """The address a copy names as canonical is asked once; until its page confirms the claim
    the crawl has not recorded it, so a friend link to it (another site, as a theme's demo is)
    still requests it, and one requested already is not asked."""

    class Stats(Counter[str]):
        def inc_value(self, key: str) -> None:
            self[key] += 1

    stats = Stats()
    admission = Admission(stats, DepthBook(), DomainCaps(0), verify_claims=2)
    copy = Observation(
        "https://kim.pages.dev/",
        page=PageSignals(canonical="https://theme-demo.example/", og_url="https://kim.pages.dev/"),
    )
    (visit,) = admission.claimed(copy, 1)
    assert (visit.url, visit.depth, visit.again) == ("https://theme-demo.example/", 1, True)
    assert visit.claimed_by and stats["blogfeeds/alias/verify"] == 1
    assert [v.url for v in admission.offer("https://theme-demo.example/", 2)] == [visit.url]
    assert list(admission.claimed(copy, 1)) == []  # requested now: not asked again
    assert list(Admission(stats, DepthBook(), DomainCaps(0)).claimed(copy, 1)) == []  # off


def test_prefix_homes_of_a_host_with_a_blog_under_a_path_are_their_own() -> None:
    """A second prefix home offered before the first one is read is taken for the host's blog,
    and offered again under its own identity once the first is read as a blog under a path;
    from then on every prefix home of that host is its own, other hosts' are not."""

    class Stats(Counter[str]):
        def inc_value(self, key: str) -> None:
            self[key] += 1

    admission = Admission(Stats(), DepthBook(), DomainCaps(0))
    oli, pia = "https://blogs.shared.example/oli/", "https://blogs.shared.example/pia/"
    (first,) = admission.offer(oli, 1)
    assert first.blog_id == "blogs.shared.example"
    assert list(admission.offer(pia, 1)) == []  # the host's blog: taken for oli's
    (rex,) = admission.offer("https://other.example/rex/", 1)
    assert rex.blog_id == "other.example"
    again = admission.under_path(first.blog_id, "blogs.shared.example/oli", 1)
    assert [(v.url, v.blog_id, v.depth) for v in again] == [(pia, "blogs.shared.example/pia", 1)]
    assert admission.under_path(first.blog_id, "blogs.shared.example/oli", 1) == []
    assert list(admission.offer(oli, 2)) == []  # read already, under its own identity
    (tom,) = admission.offer("https://blogs.shared.example/tom/index.html", 2)
    assert tom.blog_id == "blogs.shared.example/tom"
    assert list(admission.offer("https://other.example/sue/", 1)) == []  # another host's
    # a report that is not a blog under a path changes nothing
    assert admission.under_path("other.example", "other.example", 1) == []
    assert "other.example" not in admission.path_hosts
