"""The blog profile on the kinds of real pages its later rules cover, one or more built blogs
of ``bench/profile_eval.py`` a kind (read in place from the eval's cache, never copied: their
licences are unknown; skipped where the cache is absent, as in CI):

* Hexo Matery's footer, ``Copyright © <span>2023</span> <a>Name</a> | Powered by``;
* sites named after their owner (``K1t3AB's Blog``, ``GSBP's Blog``);
* Hugo's RSS ``<copyright>`` (the site's ``copyright`` setting) where the page names nobody;
* a home page's title adding the tagline to the site's name (Butterfly's ``Title - Subtitle``);
* posts under a dated permalink and no feed (Hexo Reimu's cards print the date in a bare span);
* ``rel="short icon"`` (the misspelling browsers accept: its tokens include ``icon``);
* realfavicongenerator's set printed by Hugo's DoIt/LoveIt/FixIt for files the site may lack;
* Butterfly 5's default ``/img/favicon.png``, which its package does not ship.
"""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from blogfeeds.extract.feedreader import read_feed
from blogfeeds.extract.metadata import language
from blogfeeds.extract.page import parse_page
from blogfeeds.extract.profile import Profile, owner, read_profile
from tests.cases import shared_dir

EVAL_OUT = Path("~/.cache/blogfeeds/profile-eval").expanduser()
MANIFEST = Path(__file__).resolve().parent.parent / "bench" / "profile_eval.toml"
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _entries() -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["blog"]}


def built_profile(blog: str) -> Profile:
    """The profile of a built blog's home page and (when built) its first feed."""
    entry = _entries()[blog]
    site = EVAL_OUT / blog / "site"
    if not (site / "index.html").is_file():
        pytest.skip(f"{blog} not built in {EVAL_OUT}")
    url = entry["page_url"].rstrip("/") + "/"
    page = parse_page(url, (site / "index.html").read_bytes())
    feeds = [site / f[len(entry["build"]) :] for f in entry["feeds"]]
    feed = read_feed(feeds[0].read_bytes()) if feeds and feeds[0].is_file() else None
    return read_profile(page, feed, declared_language=language(page), now=NOW)


@pytest.mark.parametrize(
    ("blog", "author", "source"),
    [
        ("kb-talk-blog", "张凯博", "copyright"),  # Matery: © | 2023 | 2023 | name
        ("check-lc-ops-blog", "LC", "copyright"),  # Matery: © | 2023-2024 | name
        ("kiteab-blog", "K1t3AB", "site_name"),  # DoIt: "K1t3AB's Blog", nothing else
        ("gsbp0-gsbp0-github-io", "GSBP", "copyright"),  # "© GSBP's Blog": its owner
        ("jetgirlart-jetsdesk", "JetGirl", "feed_rights"),  # Hugo RSS <copyright>
    ],
)
def test_author_from_copyright_lines_and_possessive_site_names(
    blog: str, author: str, source: str
) -> None:
    got = built_profile(blog)
    assert (got.author, got.author_source) == (author, source)


def test_a_site_name_that_names_no_owner_gives_no_author() -> None:
    assert owner("GSBP's Blog") == "GSBP"
    assert owner("张三的博客") == "张三"
    for name in ("My Blog", "The World's Blog", "Jet Desk", "Notes on rivers"):
        assert owner(name) == "", name


def test_description_from_the_title_after_the_site_name() -> None:
    got = built_profile("baitianxi-butterfly")  # <title>Zixuan - 白</title>, og:site_name Zixuan
    assert (got.description, got.description_source) == ("白", "title")


def test_last_post_from_dated_permalinks_without_a_feed() -> None:
    got = built_profile("itousouta15-itoubloga")  # Reimu: /2026/01/01/<slug>/, no <time>
    assert got.last_post_source == "page"
    assert got.last_post_at.startswith("2026-01-01")


def _icon_path(blog: str) -> str:
    return urlsplit(built_profile(blog).icon_url).path


def test_a_misspelt_short_icon_is_an_icon() -> None:
    assert _icon_path("951753yyswys-qaaxaap-blog") == "/images/favicon.png"


@pytest.mark.parametrize(
    "blog",
    [
        "kiteab-blog",  # DoIt: only /favicon.ico of the set exists
        "huangpingyang1-huangpingyang1-github-io",  # DoIt: the whole set exists
        "jamesflare1212-jamesflare",  # FixIt
    ],
)
def test_realfavicongenerators_set_gives_its_favicon_ico(blog: str) -> None:
    assert _icon_path(blog) == "/favicon.ico"


@pytest.mark.parametrize(
    ("blog", "path"),
    [
        ("aeolianii-aeolianii-github-io-source", "/img/favicon.ico"),  # Butterfly 5
        ("averyhuo-averyhuo-github-io", "/img/favicon.ico"),  # Butterfly 5.5
        ("codelih-hexo", "/img/favicon.ico"),  # Butterfly 5
        ("13068098071-hexo", "/img/favicon.png"),  # Butterfly 4 shipped the .png
        ("helixz33-helixz33-github-io", "/img/tea.ico"),  # Butterfly 5, an icon of its own
    ],
)
def test_butterfly_5s_default_icon_is_the_ico_it_ships(blog: str, path: str) -> None:
    assert _icon_path(blog) == path


def test_a_page_title_names_the_owner_after_the_page() -> None:
    """A corpus friends page, ``friends | 0x00dream's blog`` (read in place from the shared
    corpus), and a page named in ``application-name`` that is not the site's tagline."""
    shared = shared_dir()
    sites = shared / "corpus" / "pages" / "sites" if shared else None
    if sites is None or not sites.is_dir():
        pytest.skip("../shared/corpus not found")
    friends = sites / "0x00dream__0x00dream.github.io" / "friends" / "index.html"
    page = parse_page("https://0x00dream.github.io/friends/", friends.read_bytes())
    got = read_profile(page, None, declared_language=language(page), now=NOW)
    assert (got.author, got.author_source) == ("0x00dream", "site_name")
    link = sites / "0-n-0__0-n-0.github.io" / "link" / "index.html"
    page = parse_page("https://0-n-0.github.io/link/", link.read_bytes())  # "link | OvO"
    assert read_profile(page, None, declared_language="", now=NOW).description_source != "title"


def test_larger_declared_icons_are_kept_beside_realfavicongenerators_set() -> None:
    head = (
        '<link rel="icon" href="/favicon.ico"><link rel="icon" sizes="32x32" '
        'href="/favicon-32x32.png"><link rel="icon" sizes="192x192" href="/android-192.png">'
    )
    page = parse_page("https://river.example/", f"<html><head>{head}</head></html>")
    got = read_profile(page, None, declared_language="", now=NOW)
    assert got.icon_url == "https://river.example/android-192.png"


@pytest.mark.parametrize("href", ["#", "", "./"])
def test_a_placeholder_href_is_no_icon(href: str) -> None:
    """Themes print ``<link rel="icon" href="#">`` when the icon is left unset: the page itself
    is not its icon, and a real icon declared after it wins."""
    head = f'<link rel="icon" href="{href}"><link rel="apple-touch-icon" href="/touch.png">'
    page = parse_page("https://river.example/", f"<html><head>{head}</head></html>")
    got = read_profile(page, None, declared_language="", now=NOW)
    assert got.icon_url == "https://river.example/touch.png"
