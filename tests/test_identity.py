"""Blog identity: every kind of host the README's rule names."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from blogfeeds.extract.identity import (
    InvalidURL,
    blog_id,
    blog_prefix,
    host_blog_id,
    normalize_host,
    registered_domain,
    same_blog,
)

CASES = [
    # registered domain, www dropped, scheme/port/query ignored
    ("https://www.Example-Blog.com/post/1?x=1#top", "example-blog.com"),
    ("http://example-blog.com:8080/", "example-blog.com"),
    ("https://blog.example-blog.com/", "example-blog.com"),
    ("https://www.bbc.co.uk/news", "bbc.co.uk"),
    # PSL private section: hosted subdomains stay apart
    ("https://Alice.github.io/", "alice.github.io"),
    ("https://alice.gitlab.io/", "alice.gitlab.io"),
    ("https://alice.netlify.app/", "alice.netlify.app"),
    ("https://alice.blogspot.com/2020/01/x.html", "alice.blogspot.com"),
    # subdomain-hosted platforms missing from the PSL: from the platform table
    ("https://alice.wordpress.com/2020/", "alice.wordpress.com"),
    ("https://alice.substack.com/p/post", "alice.substack.com"),
    ("https://alice.tumblr.com/", "alice.tumblr.com"),
    ("https://alice.livejournal.com/", "alice.livejournal.com"),
    ("https://alice.lofter.com/", "alice.lofter.com"),
    ("https://alice.gitee.io/", "alice.gitee.io"),
    ("https://alice.blogspot.de/", "alice.blogspot.com"),
    ("https://alice.blogspot.com.br/", "alice.blogspot.com"),
    ("https://wordpress.com/", "wordpress.com"),
    ("https://www.tumblr.com/explore", "tumblr.com"),
    # path-hosted platforms keep the user part
    ("https://www.cnblogs.com/Alice/p/123.html", "cnblogs.com/alice"),
    ("https://cnblogs.com/alice", "cnblogs.com/alice"),
    ("https://www.cnblogs.com/", "cnblogs.com"),
    ("https://blog.csdn.net/alice/article/details/1", "blog.csdn.net/alice"),
    ("https://medium.com/@alice/a-post", "medium.com/@alice"),
    ("https://www.jianshu.com/u/abc123", "jianshu.com/u/abc123"),
    ("https://www.jianshu.com/p/abc123", "jianshu.com"),
    ("https://alice.github.io/notes/", "alice.github.io/notes"),
    ("https://alice.github.io/2020/01/01/post.html", "alice.github.io"),
    ("https://alice.github.io/about/", "alice.github.io"),
    ("https://alice.github.io/index.html", "alice.github.io"),
    # no public suffix: the whole host
    ("http://blog.fiction.example/", "blog.fiction.example"),
    ("http://www.fiction.example/", "fiction.example"),
    ("http://localhost:8000/", "localhost"),
    ("http://127.0.0.1:9/x", "127.0.0.1"),
    ("http://[::1]:8080/", "::1"),
    # IDN: Unicode form whether written as punycode or not
    ("https://blog.xn--fsqu00a.xn--fiqs8s/", "例子.中国"),
    ("https://blog.例子.中国/", "例子.中国"),
    # a ~user directory is its user's own site, on any host (tilde servers, universities)
    ("https://tilde.club/~alice/", "tilde.club/~alice"),
    ("https://ctrl-c.club/~Bob/blog/post.html", "ctrl-c.club/~bob"),
    ("https://utcc.utoronto.ca/~cks/space/blog/", "utcc.utoronto.ca/~cks"),
    ("http://www.cs.uni.example/%7Ejoe/", "cs.uni.example/~joe"),
    ("https://tilde.club/", "tilde.club"),
    ("https://host.example/~/", "host.example"),
    # an account path by its shape, on any host: two people on one host are two (issue 35);
    # the shapes of the profiles real pages link (corpus/pages/trafilatura: mastodon.social/
    # @gnaddrig, social.bund.de/@bsi; friend-links-real/zh_next_blankj: jianshu.com/users/…,
    # juejin.im/user/…; zh_anzhiyu_two_lists_gavinblog: weibo.com/u/…)
    ("https://www.lesswrong.com/users/alice", "lesswrong.com/users/alice"),
    ("https://www.lesswrong.com/users/bob/posts", "lesswrong.com/users/bob"),
    ("https://forum.example.org/u/Carol/summary", "forum.example.org/u/carol"),
    ("https://social.bund.de/@bsi/", "social.bund.de/@bsi"),
    ("https://substack.com/@dave", "substack.com/@dave"),
    ("https://forums.macrumors.com/members/760591/", "forums.macrumors.com/members/760591"),
    # ... not the host's own pages, nor a bare directory, nor what no account shape names
    ("https://internal.diem25.org/users/sign_up?locale=en", "diem25.org"),
    ("https://status.example.org/user/login", "example.org"),
    ("https://www.lesswrong.com/users/", "lesswrong.com"),
    ("https://www.mercurynews.com/author/letters-to-the-editor/", "mercurynews.com"),
    ("https://host.example/@@/x", "host.example"),
]


@pytest.mark.parametrize(("url", "expected"), CASES)
def test_blog_id(url: str, expected: str) -> None:
    assert blog_id(url) == expected


@pytest.mark.parametrize(
    "url", ["mailto:a@b.c", "javascript:void(0)", "ftp://x.com/", "//x.com", ""]
)
def test_non_http_urls_have_no_identity(url: str) -> None:
    with pytest.raises(ValueError, match="http"):
        blog_id(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://a b.example/",  # a space
        "http://evil\u202egpj.example/",  # a bidi override
        "http://x\ud800y.example/",  # a lone surrogate
        "http://x\ufffdy.example/",  # what a decoder leaves for bytes it could not read
        "http://a\x01b.example/",  # a control character
        "http://a\u00a0b.example/",  # a no-break space
        "http://a\u200bb.example/",  # a zero-width space
        "http://a<b.example/",
        "http://a%20b.example/",
        "http://a|b.example/",
        "http://a\\b.example/",
        "https://" + "é" * 64 + ".example/",  # a label the IDNA codec cannot encode
    ],
)
def test_a_host_no_host_may_hold_has_no_identity(url: str) -> None:
    with pytest.raises(InvalidURL, match="invalid host"):
        blog_id(url)
    assert isinstance(InvalidURL("x"), ValueError)  # every caller's `except ValueError` holds
    assert not same_blog(url, url)
    assert blog_prefix(url) is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://a_b.example/", "a_b.example"),  # DNS holds underscores
        ("http://i\u2764.ws/", "i\u2764.ws"),  # a symbol the IDNA codec encodes
        ("https://caf\u00e9.example/", "caf\u00e9.example"),
        ("http://[2001:db8::1]/", "2001:db8::1"),
    ],
)
def test_hosts_a_downloader_reaches_keep_their_identity(url: str, expected: str) -> None:
    assert blog_id(url) == expected


PLATFORM_URLS = [
    "https://www.cnblogs.com/Alice/p/1.html",
    "https://alice.github.io/blog/",
    "https://github.com/alice",
    "https://example.blogspot.de/",
]


@pytest.mark.parametrize(
    "url",
    [u for u, _ in CASES]
    + PLATFORM_URLS
    + ["http://a b.example/", "http:///x", "http://x\ufffdy.example/"],
)
def test_host_blog_id_is_blog_id_of_the_split_url(url: str) -> None:
    """The friend extractor splits a page's links once and asks for the identity of the
    parts: the same answer, or the same error, as for the whole URL."""
    parts = urlsplit(url)
    host, path = normalize_host(parts.hostname or ""), parts.path
    try:
        expected: str | type[Exception] = blog_id(url)
    except InvalidURL:
        expected = InvalidURL
    except ValueError:
        expected = ValueError
    if isinstance(expected, str):
        assert host_blog_id(host, path) == expected
    else:
        with pytest.raises(expected):
            host_blog_id(host, path)


def test_same_blog() -> None:
    assert same_blog("http://www.a-example.com/", "https://a-example.com/links/")
    assert not same_blog("https://alice.github.io/", "https://bob.github.io/")
    assert not same_blog("https://a-example.com/", "mailto:x@a-example.com")


def test_registered_domain_needs_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("identity must not touch the network")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    registered_domain.cache_clear()
    assert registered_domain("x.y.example.co.jp") == "example.co.jp"


@pytest.mark.parametrize(
    ("url", "prefix"),
    [
        ("https://www.cnblogs.com/alice/p/1.html", "https://www.cnblogs.com/alice/"),
        ("https://blog.csdn.net/bob", "https://blog.csdn.net/bob/"),
        ("https://www.jianshu.com/u/abc/x", "https://www.jianshu.com/u/abc/"),
        ("https://medium.com/@Al/post", "https://medium.com/@Al/"),
        ("https://alice.github.io/repo/x", "https://alice.github.io/repo/"),
        ("https://alice.github.io/", None),
        ("https://www.cnblogs.com/", None),
        ("https://www.cnblogs.com/sitehome/p/2", None),
        ("https://blog.example/notes/", None),
        ("https://www.lesswrong.com/users/al/posts", "https://www.lesswrong.com/users/al/"),
        ("mailto:x@y.example", None),
    ],
)
def test_blog_prefix_is_a_path_hosted_blogs_own_root(url: str, prefix: str | None) -> None:
    assert blog_prefix(url) == prefix


@pytest.mark.parametrize(
    ("host", "platform"),
    [
        ("alice.github.io", True),  # the PSL's private section
        ("alice.vercel.app", True),
        ("alice.gitee.io", True),  # the platform table, which the PSL lacks
        ("alice.wordpress.com", True),
        ("blog.alice.example.com", False),  # a domain of one's own
        ("www.cnblogs.com", False),  # a path-hosted platform: the blog is its path there
        ("localhost", False),
    ],
)
def test_a_blog_on_a_hosting_platform_is_told_from_one_on_its_own_domain(
    host: str, platform: bool
) -> None:
    from blogfeeds.extract.identity import on_platform

    assert on_platform(host) is platform
