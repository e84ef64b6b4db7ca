"""Seed parsing: hand-made text and OPML files in tests/data/seeds/, and the shared real lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from blogfeeds.crawl.seeds import Seed, SeedError, check_url, load_seeds
from tests.cases import shared_dir

DATA = Path(__file__).parent / "data" / "seeds"


def path(name: str) -> str:
    return str(DATA / name)


def test_nothing_given_is_nothing() -> None:
    assert load_seeds() == ([], [])
    assert load_seeds("", "") == ([], [])


def test_start_urls_comma_separated() -> None:
    seeds, errors = load_seeds(" https://alice.example/ ,,http://bob-example.org, ftp://x.example/")
    assert seeds == [
        Seed("https://alice.example/", source="start_urls"),
        Seed("http://bob-example.org", source="start_urls"),
    ]
    assert errors == [SeedError("start_urls", None, "not an http(s) URL: 'ftp://x.example/'")]
    assert errors[0].where == "start_urls"


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://alice.example/", None),
        ("http://localhost:8080/blog", None),
        ("HTTPS://Alice.Example", None),
        ("", "empty URL"),
        ("alice.example", "not an http(s) URL: 'alice.example' (add https://)"),
        ("alpha.test:8001", "not an http(s) URL: 'alpha.test:8001' (add https://)"),
        ("localhost:8001/blog", "not an http(s) URL: 'localhost:8001/blog' (add https://)"),
        ("mailto:a@b.example", "not an http(s) URL: 'mailto:a@b.example'"),
        ("/relative/path", "not an http(s) URL: '/relative/path'"),
        ("javascript:alert(1)", "not an http(s) URL: 'javascript:alert(1)'"),
        ("https://", "URL has no host: 'https://'"),
        ("https:///path", "URL has no host: 'https:///path'"),
        ("https://a.example/x y", "URL contains whitespace: 'https://a.example/x y'"),
        (
            "http://a.example:99999/",
            "invalid URL 'http://a.example:99999/': Port out of range 0-65535",
        ),
        (
            "https://caf\ufffd.example/",
            "URL holds U+FFFD, the mark of text that could not be decoded: "
            "'https://caf\ufffd.example/'",
        ),
        (  # the message escapes it (repr): a terminal shows no reversed text
            "https://evil\u202egpj.example/",
            "invalid host in URL: 'https://evil\\u202egpj.example/'",
        ),
        ("http://a<b.example/", "invalid host in URL: 'http://a<b.example/'"),
        ("http://a%20b.example/", "invalid host in URL: 'http://a%20b.example/'"),
    ],
)
def test_check_url(url: str, problem: str | None) -> None:
    assert check_url(url) == problem


def test_text_file_comments_blank_and_bad_lines() -> None:
    seeds, errors = load_seeds(seeds=path("blogs.txt"))
    p = path("blogs.txt")
    assert seeds == [
        Seed("https://alice.example/", source=f"{p}:3"),
        Seed("http://bob-example.org/blog/", source=f"{p}:4"),  # inline comment dropped
        Seed("https://carol.example/#about", source=f"{p}:5"),  # a fragment is not a comment
        Seed("https://dave.example/posts", source=f"{p}:6"),
        # line 14, https://ALICE.example, is line 3 again: deduplicated
    ]
    assert [(e.line, e.message.split(":")[0]) for e in errors] == [
        (9, "not an http(s) URL"),
        (10, "not an http(s) URL"),
        (11, "URL has no host"),
        (12, "expected one URL a line, got 'https"),
        (13, "invalid URL 'https"),
    ]
    assert all(e.source == p for e in errors)
    assert str(errors[0]) == f"{p}:9: not an http(s) URL: 'ftp://files.example/pub/'"


def test_start_urls_come_first_and_win_duplicates() -> None:
    seeds, errors = load_seeds("https://dave.example/posts", path("blogs.txt"))
    assert seeds[0] == Seed("https://dave.example/posts", source="start_urls")
    assert [s.url for s in seeds].count("https://dave.example/posts") == 1
    assert len(seeds) == 4
    assert len(errors) == 5


def test_nested_opml_with_good_and_bad_outlines() -> None:
    p = path("nested.opml")
    seeds, errors = load_seeds(seeds=p)
    assert seeds == [
        Seed("https://alice.example/", "https://alice.example/feed.xml", "Alice Writes", f"{p}:6"),
        # only xmlUrl: the feed host's root, feed kept
        Seed("https://bob-example.org/", "https://bob-example.org/blog/atom.xml", "Bob", f"{p}:8"),
        # lower-case attribute names, IDN host as written
        Seed("https://博客.example/", "https://博客.example/rss", "博客", f"{p}:12"),
        # bad htmlUrl: reported, and the feed's host is used instead
        Seed("https://carol.example/", "https://carol.example/feed", "Bad html", f"{p}:13"),
        # bad xmlUrl: reported, the blog kept without it
        Seed("https://dave.example/", None, "Bad feed", f"{p}:14"),
        # line 16 (https://alice.example, no slash) duplicates line 6
    ]
    assert [(e.line, e.message) for e in errors] == [
        (13, "bad htmlUrl: not an http(s) URL: 'javascript:alert(1)'"),
        (14, "bad xmlUrl: URL contains whitespace: 'not a url'"),
        (15, "bad htmlUrl: not an http(s) URL: 'mailto:eve@example.com'"),
    ]


def test_malformed_opml_is_reported_and_salvaged() -> None:
    p = path("malformed.opml")
    seeds, errors = load_seeds("https://zed.example/", p)
    assert [e.where for e in errors] == [f"{p}:6"]
    assert errors[0].message.startswith("malformed OPML: ")
    assert [s.url for s in seeds] == [
        "https://zed.example/",
        "https://alice.example/",
        "https://broken.example/",  # recovered by lxml's recovery mode
    ]


def test_opml_external_entities_are_never_loaded() -> None:
    p = path("entities.opml")
    seeds, errors = load_seeds(seeds=p)
    assert len(errors) == 1
    assert "external entity 'secret'" in errors[0].message
    assert [(s.url, s.title) for s in seeds] == [("https://entity.example/", "")]


def test_opml_sniffed_by_content_and_non_opml_xml_rejected() -> None:
    seeds, errors = load_seeds(seeds=path("sniffed.list"))
    assert (seeds, errors) == (
        [Seed("https://sniffed.example/", None, "Sniffed", f"{path('sniffed.list')}:3")],
        [],
    )
    seeds, errors = load_seeds(seeds=path("feed.xml"))
    assert seeds == []
    assert errors == [SeedError(path("feed.xml"), 2, "not OPML: root element is <rss>")]


def test_unreadable_files_are_errors_and_start_urls_still_load() -> None:
    missing = path("no-such-file.txt")
    seeds, errors = load_seeds("https://alice.example/", missing)
    assert seeds == [Seed("https://alice.example/", source="start_urls")]
    assert errors == [SeedError(missing, None, "cannot read seeds file: No such file or directory")]
    seeds, errors = load_seeds(seeds=str(DATA))
    assert seeds == []
    assert errors[0].message == "cannot read seeds file: Is a directory"


def test_a_line_that_is_not_utf8_is_skipped_and_the_others_load() -> None:
    """latin1.txt is Latin-1: line 3's URL is reported and skipped; the bad bytes of a comment
    (line 2) and of an inline comment (line 4) go with the comment; lines 1 and 4 load."""
    p = path("latin1.txt")
    seeds, errors = load_seeds(seeds=p)
    assert seeds == [
        Seed("https://latin1.example/", source=f"{p}:1"),
        Seed("https://after.example/", source=f"{p}:4"),
    ]
    assert errors == [
        SeedError(
            p,
            3,
            "not UTF-8 text: byte 0xE9 at character 12 (save the file as UTF-8; "
            "the line is skipped)",
        )
    ]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_a_byte_order_mark_decides_the_encoding(encoding: str, tmp_path: Path) -> None:
    text = "# 博客 list\nhttps://博客.example/\r\nhttps://b.example/  # café\n"
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    (tmp_path / "seeds.txt").write_bytes(data)
    p = str(tmp_path / "seeds.txt")
    seeds, errors = load_seeds(seeds=p)
    assert errors == []
    assert seeds == [
        Seed("https://博客.example/", source=f"{p}:2"),
        Seed("https://b.example/", source=f"{p}:3"),
    ]
    # an OPML file is sniffed through its BOM too, whatever its name
    opml = '<?xml version="1.0"?>\n<opml version="2.0"><body>\n<outline text="博客" htmlUrl="https://博客.example/"/>\n</body></opml>\n'
    data = opml.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    (tmp_path / "seeds.list").write_bytes(data)
    seeds, errors = load_seeds(seeds=str(tmp_path / "seeds.list"))
    assert (errors, [(s.url, s.title) for s in seeds]) == ([], [("https://博客.example/", "博客")])


def test_undecodable_utf16_is_reported_on_its_line(tmp_path: Path) -> None:
    data = "https://a.example/\nhttps://b".encode("utf-16-le")
    data += b"\x00\xd8"  # a lone high surrogate
    data += ".example/\nhttps://c.example/\n".encode("utf-16-le") + b"\x00"  # odd length
    (tmp_path / "seeds.txt").write_bytes(b"\xff\xfe" + data)
    p = str(tmp_path / "seeds.txt")
    seeds, errors = load_seeds(seeds=p)
    assert [s.url for s in seeds] == ["https://a.example/", "https://c.example/"]
    assert [(e.line, e.message.split(" (")[0]) for e in errors] == [
        (2, "not UTF-16 text: byte 0x00 at character 10"),
        (4, "not UTF-16 text: byte 0x00 at character 1"),
    ]


def test_an_opml_url_that_only_decodes_in_recovery_mode_is_not_a_seed(tmp_path: Path) -> None:
    (tmp_path / "latin1.opml").write_bytes(
        b'<?xml version="1.0"?>\n<opml version="2.0"><body>\n'
        b'<outline text="x" htmlUrl="https://caf\xe9.example/"/>\n'
        b'<outline text="b" htmlUrl="https://b.example/"/>\n</body></opml>\n'
    )
    p = str(tmp_path / "latin1.opml")
    seeds, errors = load_seeds(seeds=p)
    assert [s.url for s in seeds] == ["https://b.example/"]
    assert [(e.line, e.message.split(":")[0]) for e in errors] == [
        (3, "malformed OPML"),
        (3, "bad htmlUrl"),
    ]
    assert "U+FFFD" in errors[1].message


@pytest.mark.parametrize(
    ("name", "outlines", "loaded"),
    [
        # 1326 outlines with htmlUrl, one a trailing-slash duplicate (blog.kevinzhow.com)
        ("chinese-independent-blogs.opml", 1326, 1325),
        # 422 blogs under one category outline
        ("engineering-blogs.opml", 423, 422),
    ],
)
def test_real_opml_lists(name: str, outlines: int, loaded: int) -> None:
    shared = shared_dir()
    if shared is None or not (shared / "data" / name).is_file():
        pytest.skip(f"shared data/{name} not found (set BLOGFEEDS_SHARED)")
    file = shared / "data" / name
    assert file.read_text("utf-8").count("<outline") == outlines
    seeds, errors = load_seeds(seeds=str(file))
    assert errors == []
    assert len(seeds) == loaded
    assert all(s.feed_url and s.title and s.url.startswith("http") for s in seeds)
    assert len({s.url for s in seeds}) == loaded
