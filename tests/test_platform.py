"""Platform names from generator strings (blogfeeds.extract.platform, data/generators.toml)."""

from __future__ import annotations

import gzip
import tomllib
from functools import cache
from pathlib import Path

import pytest

from blogfeeds.extract.metadata import extract_metadata, generators
from blogfeeds.extract.page import DecodeError, parse_page
from blogfeeds.extract.platform import MAX_VERSION, UNKNOWN, Platform, platform_of
from tests.cases import shared_dir

DATA = Path(__file__).resolve().parent.parent / "blogfeeds" / "data"


def _toml(name: str) -> dict:
    return tomllib.loads((DATA / name).read_text("utf-8"))


@pytest.mark.parametrize(
    ("generator", "expected"),
    [
        ("WordPress 6.4.2", Platform("WordPress", "6.4.2")),
        ("Wordpress", Platform("WordPress")),
        ("wordpress 6.4.2", Platform("WordPress", "6.4.2")),
        ("  WORDPRESS   6.4.2 ", Platform("WordPress", "6.4.2")),
        ("WordPress 4.8-alpha-40290", Platform("WordPress", "4.8-alpha-40290")),
        ("WordPress.com", Platform("WordPress.com")),
        ("blogger", Platform("Blogger")),
        ("Blogger", Platform("Blogger")),
        ("Joomla! - Open Source Content Management", Platform("Joomla")),
        ("Joomla! 1.5 - Open Source Content Management", Platform("Joomla", "1.5")),
        ("Hexo 7.3.0", Platform("Hexo", "7.3.0")),
        ("Hugo 0.110.0 with theme Tranquilpeak 0.5.3-BETA", Platform("Hugo", "0.110.0")),
        ("Jekyll v4.3.2", Platform("Jekyll", "4.3.2")),
        ("Astro v5.18.1", Platform("Astro", "5.18.1")),
        ("Typecho 1.2.1 (17.10.30)", Platform("Typecho", "1.2.1")),
        ("Typecho 1.2/18.1.29", Platform("Typecho", "1.2")),
        ("Drupal 7 (https://www.drupal.org)", Platform("Drupal", "7")),
        ("TYPO3 CMS", Platform("TYPO3")),
        ("Z-BlogPHP 1.7.3", Platform("Z-Blog", "1.7.3")),
        ("Site Kit by Google 1.111.1", Platform("WordPress")),  # a plugin: no version
        ("Powered by WPBakery Page Builder - page builder for WordPress.", Platform("WordPress")),
        ("Total WordPress Theme 4.9.3", Platform("WordPress")),
        ("Hexoplus 1.0", UNKNOWN),  # a name only starts a product name at a word's end
        ("Me :)", UNKNOWN),
        ("", UNKNOWN),
    ],
)  # fmt: skip
def test_platform_of_one_generator(generator: str, expected: Platform) -> None:
    assert platform_of(generator) == expected


def test_the_spellings_of_one_platform_are_one_name() -> None:
    spellings = ["WordPress", "Wordpress", "wordpress", "WORDPRESS 6.4.2", "wordpress 6.4.2"]
    assert {platform_of(s).name for s in spellings} == {"WordPress"}
    assert platform_of("WordPress.com").name == "WordPress.com"  # the hosted service apart


def test_a_page_is_on_its_first_platform_else_its_first_addon() -> None:
    assert platform_of(["Divi v.4.0.11", "WordPress 5.3.2", "Site Kit by Google 1.3"]) == Platform(
        "WordPress", "5.3.2"
    )
    assert platform_of(["Me :)", "Elementor 3.17.1", "WooCommerce 8.2.2"]) == Platform("WordPress")
    # a later generator naming the same platform gives the version
    assert platform_of(["Hexo", "Hexo 7.3.0"]) == Platform("Hexo", "7.3.0")
    assert platform_of(["Hexo 6.0", "Hexo 7.3.0"]) == Platform("Hexo", "6.0")
    assert platform_of(["Me :)", "soz.is"]) == UNKNOWN
    assert platform_of([]) == UNKNOWN


def test_a_version_is_bounded() -> None:
    assert len(platform_of("Hugo 0." + "1" * 200).version) == MAX_VERSION


def test_metadata_carries_the_raw_generator_and_its_platform() -> None:
    html = (
        b"<html><head><meta name='generator' content='Site Kit by Google 1.111.1'>"
        b"<meta name='GENERATOR' content=' WordPress  6.4.2 '><meta name=generator content=''>"
        b"</head><body><p>x</p></body></html>"
    )
    page = parse_page("https://a.example/", html)
    assert generators(page) == ["Site Kit by Google 1.111.1", "WordPress 6.4.2"]
    meta = extract_metadata(page)
    assert (meta.generator, meta.platform, meta.platform_version) == (
        "Site Kit by Google 1.111.1",
        "WordPress",
        "6.4.2",
    )


# --- the table -----------------------------------------------------------------------------


def test_the_table_names_each_platform_once_and_each_product_name_once() -> None:
    table = _toml("generators.toml")
    names = [row["name"] for row in table["platform"]]
    assert len(names) == len(set(names))
    prefixes = [g for rows in table.values() for row in rows for g in row.get("generators", ())]
    assert len(prefixes) == len(set(prefixes))
    assert all(p == p.lower() and p.strip() == p for p in prefixes)
    assert {row["platform"] for row in table["addon"]} <= set(names)


def test_every_generator_fingerprint_of_feed_discovery_names_its_platform() -> None:
    """Feed discovery (feed_platforms.toml) and the platform names agree: each platform it
    recognises by a generator has that name here."""
    for row in _toml("feed_platforms.toml")["platform"]:
        for prefix in row.get("generator", ()):
            assert platform_of(f"{prefix} 1.0").name == row["name"], prefix


# --- every generator of the shared corpus --------------------------------------------------

# Generator strings of the corpus that name no platform in the table: site names, themes and
# plugins whose platform the string does not say (their pages also name WordPress).
UNKNOWN_IN_CORPUS = {
    "Beachbody Blog 1.0.0",
    "Cookely 1.0.12",
    "Deccan herald",
    "Fresh News 1.2.15",
    "Me :)",
    "My Son v.1.0.0",
    "pv magazine 1.0",
    "Reel 3.0.8",
    "Sample Blog Generator 1.0",
    "soz.is",
    "Stargazer 3.0.0",
    "WebTV Page Builder v1.1",
    "Épico 1.8.8",
}


@cache
def corpus_generators() -> tuple[tuple[str, ...], ...]:
    """Every page's generator strings, over the HTML of the shared corpus and cases."""
    shared = shared_dir()
    if shared is None or not (shared / "corpus").is_dir():
        pytest.skip("shared corpus not found (set BLOGFEEDS_SHARED)")
    pages = []
    for root in (shared / "corpus", shared / "cases"):
        for path in sorted(root.rglob("*")):
            if not path.name.endswith((".html", ".htm", ".html.gz")):
                continue
            body = path.read_bytes()
            if path.name.endswith(".gz"):
                body = gzip.decompress(body)
            try:
                found = generators(parse_page("https://corpus.invalid/", body))
            except DecodeError:
                continue
            if found:
                pages.append(tuple(found))
    return tuple(pages)


def test_every_corpus_generator_names_a_platform_or_is_reported_unknown() -> None:
    pages = corpus_generators()
    strings = {g for page in pages for g in page}
    assert len(strings) > 150
    known = {row["name"] for row in _toml("generators.toml")["platform"]}
    unknown = set()
    for generator in strings:
        platform = platform_of(generator)
        if platform == UNKNOWN:
            unknown.add(generator)
            continue
        assert platform.name in known
        assert platform.version in generator  # a version is the string's own, never made up
    assert unknown == UNKNOWN_IN_CORPUS
    # each page with a generator: only the pages of unknown platforms are unknown
    unknown_pages = [page for page in pages if platform_of(page) == UNKNOWN]
    assert all(set(page) <= UNKNOWN_IN_CORPUS for page in unknown_pages)
    # the spellings the corpus holds of WordPress are one platform
    wordpress = {g for g in strings if g.lower().split(" ")[0] == "wordpress"}
    assert {platform_of(g).name for g in wordpress} == {"WordPress"}
    assert {"Wordpress", "WordPress 6.4", "WordPress Download Manager 3.1.09"} <= wordpress
