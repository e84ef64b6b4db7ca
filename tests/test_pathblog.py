"""A blog under a path of a host no table knows (blogfeeds.extract.pathblog): the home read at a
one-segment prefix with its feed under the prefix is a blog of its own; a site's section, a
feed at the host's root, a canonical naming the root, a table's or a ``~user`` path are not."""

from __future__ import annotations

import pytest

from blogfeeds.extract.aliases import Observation, PageSignals, same_blog
from blogfeeds.extract.pathblog import path_blog, prefix_home

HOST = "https://blogs.hostshare.example"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"{HOST}/clynamen/", ("blogs.hostshare.example", "blogs.hostshare.example/clynamen")),
        (f"{HOST}/Yoxem/index.html", ("blogs.hostshare.example", "blogs.hostshare.example/yoxem")),
        ("https://www.dept.example/bob/", ("dept.example", "dept.example/bob")),
        (f"{HOST}/clynamen", None),  # a page, not a folder
        (f"{HOST}/clynamen/2020/post.html", None),  # deep
        (f"{HOST}/", None),
        (f"{HOST}/blog/", None),  # a site's own section
        (f"{HOST}/zh/", None),
        (f"{HOST}/notes/", None),
        (f"{HOST}/about.html", None),
        (f"{HOST}/~gus/", None),  # a user directory has its identity already
        ("https://medium.com/@amao/", None),
        ("https://www.cnblogs.com/alice/", None),  # the platform table's
        ("ftp://blogs.hostshare.example/bob/", None),
    ],
)
def test_prefix_home(url: str, expected: tuple[str, str] | None) -> None:
    assert prefix_home(url) == expected


def seen(home: str, feed: str, **page: str) -> Observation:
    return Observation(home, page=PageSignals(**page), feed_url=feed)


def test_a_blog_under_a_path_has_its_feed_under_the_prefix() -> None:
    home = f"{HOST}/clynamen/"
    assert path_blog(seen(home, f"{HOST}/clynamen/atom.xml")) == "blogs.hostshare.example/clynamen"
    # canonical and og:url naming the prefix (a built site's own address) agree
    named = seen(home, f"{HOST}/clynamen/atom.xml", canonical=home, og_url=home + "index.html")
    assert path_blog(named) == "blogs.hostshare.example/clynamen"
    # the feed's final address (after redirects) counts
    moved = Observation(home, feed_url=f"{HOST}/feed/", feed_final_url=f"{HOST}/clynamen/feed.xml")
    assert path_blog(moved) == "blogs.hostshare.example/clynamen"


@pytest.mark.parametrize(
    "observation",
    [
        seen(f"{HOST}/clynamen/", ""),  # no feed: nothing shows the prefix is a blog
        seen(f"{HOST}/garden/", f"{HOST}/feed.xml"),  # the site's feed: a section of the site
        seen(f"{HOST}/garden/", f"{HOST}/gardening/feed.xml"),  # another prefix's
        seen(f"{HOST}/garden/", "https://other.example/garden/feed.xml"),
        seen(f"{HOST}/garden/", f"{HOST}/garden/feed.xml", canonical=f"{HOST}/"),
        seen(f"{HOST}/garden/", f"{HOST}/garden/feed.xml", og_url="https://garden.example/"),
        seen(f"{HOST}/blog/", f"{HOST}/blog/feed.xml"),  # the site's blog section
        seen("https://medium.com/@amao", "https://medium.com/feed/@amao"),
    ],
)
def test_not_a_blog_under_a_path(observation: Observation) -> None:
    assert path_blog(observation) is None


def test_a_sites_home_naming_the_path_blogs_feed_is_one_blog_with_it() -> None:
    """A personal site whose blog lives under a path with its own feed: two identities, one
    node when the site's home names that feed (the same feed); another person's is not."""
    feed = "https://quinn.example/journal2/feed.xml"
    blog = seen("https://quinn.example/journal2/", feed)
    assert path_blog(blog) == "quinn.example/journal2"
    assert same_blog(seen("https://quinn.example/", feed), blog).same
    other = seen(f"{HOST}/pia/", f"{HOST}/pia/feed.xml")
    assert not same_blog(seen(f"{HOST}/oli/", f"{HOST}/oli/feed.xml"), other).same
    assert not same_blog(seen(f"{HOST}/", f"{HOST}/feed.xml"), other).same
