"""Property-based robustness: hostile HTML, URLs and feeds never crash an extractor.

Every test states what the function must do on any input (return, or raise its documented
error) plus a property that can fail (idempotence, a round trip, a known classification).
Example counts scale with the hypothesis profile (``tests/conftest.py``): the weights below sum
to over 10,000 examples under ``ci``.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from w3lib.encoding import resolve_encoding

from blogfeeds.crawl.urls import crawl_url
from blogfeeds.extract.blog import analyze_page
from blogfeeds.extract.directives import robots_directives
from blogfeeds.extract.discovery import discover_feeds
from blogfeeds.extract.friends import friends_from_data_source
from blogfeeds.extract.identity import blog_id, registered_domain, same_blog, split_url
from blogfeeds.extract.page import DecodeError, decode_html, parse_page
from blogfeeds.middlewares.ssrf import address_kind
from tests.robustness import (
    ENCODINGS,
    check_feed,
    feed_documents,
    html_documents,
    html_trees,
    urls,
)


def examples(weight: int) -> settings:
    """Settings running ``weight`` examples per 1000 of the profile's ``max_examples``."""
    return settings(max_examples=max(5, weight * settings.default.max_examples // 1000))


# --- pages ------------------------------------------------------------------------------------


@examples(2000)
@given(st.binary(max_size=3000), st.text(max_size=40), urls())
def test_decode_html_is_total(body: bytes, content_type: str, url: str) -> None:
    encoding, text = decode_html(body, content_type, url)
    assert isinstance(text, str) and encoding


@examples(1000)
@given(st.text(max_size=300), urls())
def test_undeclared_utf8_decodes_as_utf8(text: str, url: str) -> None:
    body = text.encode("utf-8")
    assume(b"\x00" not in body[:1024] and not body.startswith((b"\xef\xbb\xbf", b"\xff", b"\xfe")))
    assume("charset" not in text.lower() and "encoding" not in text.lower())
    assert decode_html(body, "", url)[1] == text


@examples(1000)
@given(st.text(st.characters(codec="gbk", exclude_categories=("Cc", "Cs")), max_size=200))
@example("中文博客的友情链接")
def test_declared_encoding_round_trips(text: str) -> None:
    for label, codec in (("gb2312", "gbk"), ("shift_jis", "shift_jis"), ("euc-kr", "euc-kr")):
        try:
            payload = text.encode(codec)
        except UnicodeEncodeError:
            continue
        body = b'<html><head><meta charset="' + label.encode() + b'"></head><body>' + payload
        assert text in decode_html(body)[1], label


@examples(1200)
@given(html_documents(), urls())
@example(  # found by this test: a <base href> joined to a malformed page URL
    body=b'<html><head></head><body><base href="0"></base></body></html>', url="http://[@0"
)
def test_parse_page_raises_only_decode_error(body: bytes, url: str) -> None:
    try:
        page = parse_page(url, body, {"Content-Type": "text/html"})
    except DecodeError:
        return
    assert page.tree is not None
    robots = robots_directives(page)
    assert robots.noindex in (True, False)


@examples(300)
@given(html_documents())
def test_analyze_page_raises_only_documented_errors(body: bytes) -> None:
    try:
        analysis = analyze_page("https://blog.example.com/", body, {})
    except DecodeError:
        return
    for friend in analysis.friends.friends:
        assert friend.url.startswith(("http://", "https://"))


@examples(600)
@given(html_trees(), urls())
def test_feed_discovery_on_random_markup(markup: str, url: str) -> None:
    try:
        page = parse_page(url, f"<html><head></head><body>{markup}</body></html>".encode())
    except DecodeError:
        return
    for candidate in discover_feeds(page):
        assert isinstance(candidate.url, str)


@examples(500)
@given(
    st.lists(st.sampled_from(["noindex", "NoFollow", "none", "all", "index", "x", ""]), max_size=4),
    st.text(max_size=30),
)
def test_robots_meta_directives(tokens: list[str], header: str) -> None:
    content = ", ".join(tokens)
    page = parse_page(
        "https://b.example/",
        f'<html><head><meta name="robots" content="{content}"></head></html>'.encode(),
        {"X-Robots-Tag": header},
    )
    robots = robots_directives(page)
    lowered = [t.lower() for t in tokens]
    if "noindex" in lowered or "none" in lowered:
        assert robots.noindex
    if "nofollow" in lowered or "none" in lowered:
        assert robots.nofollow


# --- URLs and identity ---------------------------------------------------------------------------


@examples(2000)
@given(urls())
def test_identity_is_total_on_random_urls(url: str) -> None:
    try:
        host, segments = split_url(url)
    except ValueError:
        return
    assert host and isinstance(segments, list)
    registered_domain(host)
    try:
        bid = blog_id(url)
    except ValueError:
        return
    assert bid and same_blog(url, url)


@examples(1500)
@given(urls())
@example("https://u:p@x.com/a;jsessionid=1?b=2&PHPSESSID=3&a=1#f")
@example("http://0/%2%31")  # once "%21", then "!": a lone "%" is now "%25"
@example("http://localhost?\nPHPSESSID")  # a newline hid the session id from the first pass
def test_crawl_url_is_total_idempotent_and_drops_credentials(url: str) -> None:
    once = crawl_url(url)
    assert crawl_url(once) == once
    if once.startswith(("http://", "https://")):
        try:
            parts = urlsplit(once)
        except ValueError:
            return
        assert parts.username is None and parts.password is None


@examples(1000)
@given(st.ip_addresses())
@example(ipaddress.ip_address("169.254.169.254"))
@example(ipaddress.ip_address("::ffff:127.0.0.1"))
@example(ipaddress.ip_address("64:ff9b::a00:1"))
def test_address_kind_refuses_every_non_global_address(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    kind = address_kind(ip)
    if ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_multicast:
        assert kind is not None
    if kind is None:
        assert ip.is_global


# --- feeds ------------------------------------------------------------------------------------


@examples(800)
@given(feed_documents())
def test_feed_readers_never_raise(body: bytes) -> None:
    assert check_feed(body)


@examples(300)
@given(st.binary(max_size=2000), st.sampled_from(["", "text/x-opml", "application/json"]))
def test_blogroll_reader_never_raises_on_bytes(body: bytes, content_type: str) -> None:
    for friend in friends_from_data_source("https://b.example/links.opml", body, content_type):
        assert friend.url.startswith(("http://", "https://"))


@examples(200)
@given(st.sampled_from(ENCODINGS), st.text(max_size=100))
def test_meta_after_1024_bytes_is_honoured(encoding: str, text: str) -> None:
    # latin-1 is windows-1252 on the web (WHATWG Encoding Standard), so it cannot round-trip C1
    assume(encoding not in ("utf-16-le", "utf-16-be", "utf-32-le", "latin-1"))
    try:
        payload = text.encode(encoding)
        # the web reads a label as its WHATWG superset (shift_jis as cp932, where 0x5C is "\\",
        # not Python's "¥"): only text that means the same both ways can round-trip
        assume(payload.decode(resolve_encoding(encoding) or encoding) == text)
    except (UnicodeEncodeError, UnicodeDecodeError):
        return
    padding = "<!-- " + "p" * 2000 + " -->"
    head = f'<html><head>{padding}<title>t</title><meta charset="{encoding}"></head><body>'
    decoded_as, decoded = decode_html(head.encode("ascii") + payload + b"</body></html>")
    assert text in decoded, decoded_as
