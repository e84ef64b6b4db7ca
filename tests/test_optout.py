"""The opt-out list: what a line names, which addresses it leaves out, its bad lines, and the
crawl's copy of the file, read again when the file changes (docs/opt-out.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.settings import Settings

from blogfeeds.crawl.optout import OptOutList, parse_address, parse_lines, without_listed
from blogfeeds.crawl.optoutfile import OptOutFile, opt_out
from blogfeeds.extract.aliases import Observation, PageSignals
from blogfeeds.option import StartupError

REPO = Path(__file__).resolve().parent.parent

LINES = [
    "# blogs whose owners asked to be left out",
    "https://alice.example/   # by mail, 2026-11-02",
    "www.bob.example",
    "https://www.cnblogs.com/carol/",
    "pages.example/%7Egus",
    "zoe.example/feed.xml",
    "https://ana.github.io/",
    "",
]

LEFT_OUT = [
    "https://alice.example/",
    "http://www.alice.example/feed.xml",
    "https://alice.example/robots.txt",
    "https://bob.example/friends/",
    "https://www.cnblogs.com/carol/p/1.html",
    "https://cnblogs.com/Carol/",
    "https://pages.example/~gus/",
    "https://pages.example/%7egus/feed.xml",
    "https://zoe.example/",
    "http://www.zoe.example/about/",
    "https://ana.github.io/favicon.ico",
    "https://ana.github.io/project/",
]
KEPT = [
    "https://alice.example.org/",
    "https://bobby.example/",
    "https://www.cnblogs.com/caroline/",
    "https://www.cnblogs.com/robots.txt",
    "https://pages.example/~hal/",
    "https://pages.example/robots.txt",
    "https://bea.github.io/",
    "mailto:alice@alice.example",
    "not a url",
]


@pytest.fixture(scope="module")
def listed() -> OptOutList:
    entries, bad = parse_lines(LINES)
    assert bad == []
    return OptOutList.of(entries)


@pytest.mark.parametrize("url", LEFT_OUT)
def test_every_address_of_a_listed_blog_is_left_out(listed: OptOutList, url: str) -> None:
    assert url in listed


@pytest.mark.parametrize("url", KEPT)
def test_other_blogs_and_the_rest_of_a_shared_host_are_not(listed: OptOutList, url: str) -> None:
    assert url not in listed


def test_a_path_names_its_blog_and_on_a_shared_host_only_that_blog() -> None:
    entry = parse_address("zoe.example/feed.xml")
    assert (entry.host, entry.path, entry.blog) == ("zoe.example", "/feed.xml", "zoe.example")
    entry = parse_address("https://www.cnblogs.com/carol/")
    assert (entry.host, entry.path, entry.blog) == ("cnblogs.com", "/carol", "cnblogs.com/carol")


def test_a_stored_alias_leaves_its_whole_blog_out(listed: OptOutList) -> None:
    assert "https://ana-blog.example/" not in listed
    assert "https://ana-blog.example/" in listed.with_ids(["ana-blog.example"])


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("github.io", "a public suffix"),
        ("com", "a public suffix"),
        ("www.cnblogs.com", "a shared host"),
        ("medium.com", "a shared host"),
        ("ftp://files.example/", "not an http(s) address"),
        ("alice.example bob.example", "one address a line"),
        ("https://exa\u202emple.com/", "invalid host"),
        ("https:///path-only", "no host"),
    ],
)
def test_a_bad_line_is_named_and_the_others_still_count(line: str, problem: str) -> None:
    entries, bad = parse_lines(["alice.example", line, "bob.example"])
    assert [e.host for e in entries] == ["alice.example", "bob.example"]
    assert len(bad) == 1
    assert bad[0].line == 2
    assert problem in bad[0].problem
    assert str(bad[0]).startswith("line 2: ")


def test_the_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "opt-out.txt"
    path.write_text("alice.example\n", encoding="utf-8")
    now = [0.0]
    asked: list[set[str]] = []

    def aliases(ids: object) -> set[str]:
        asked.append(set(ids))  # type: ignore[call-overload]
        return set(ids) | ({"alias.example"} if "bob.example" in asked[-1] else set())  # type: ignore[call-overload]

    listed = OptOutFile(str(path), 5.0, aliases=aliases, clock=lambda: now[0])
    assert "https://alice.example/" in listed
    assert "https://bob.example/" not in listed
    with path.open("a", encoding="utf-8") as f:
        f.write("bob.example\nnot a host at all\n")
    os.utime(path, ns=(1, 1))  # another modification time, whatever the file system's grain
    now[0] = 4.9
    assert "https://bob.example/" not in listed  # not looked at yet: at most every 5 s
    now[0] = 5.0
    assert "https://bob.example/" in listed
    assert "https://alias.example/" in listed  # the database's aliases, read with the file
    assert asked == [{"alice.example"}, {"alice.example", "bob.example"}]
    path.unlink()
    now[0] = 20.0
    assert "https://bob.example/" in listed  # unreadable later: the last list is kept


class _Crawler:
    def __init__(self, **settings: str) -> None:
        self.settings = Settings(settings)
        self.stats = None


def test_a_file_unreadable_at_start_stops_the_crawl(tmp_path: Path) -> None:
    crawler = _Crawler(BLOGFEEDS_OPT_OUT=str(tmp_path / "missing.txt"), BLOGFEEDS_DATABASE_URL="")
    with pytest.raises(StartupError, match="BLOGFEEDS_OPT_OUT: cannot read"):
        opt_out(crawler)
    assert opt_out(_Crawler(BLOGFEEDS_OPT_OUT="")) is None


def optout_command(tmp_path: Path, *args: str, listed: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    env.update(BLOGFEEDS_OPT_OUT=listed, BLOGFEEDS_DATABASE_URL=f"sqlite:///{tmp_path}/b.sqlite3")
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "optout", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_optout_refuses_a_bad_address_and_changes_nothing(tmp_path: Path) -> None:
    listed = tmp_path / "opt-out.txt"
    listed.write_text("alice.example\n", encoding="utf-8")
    out = optout_command(tmp_path, "bob.example", "github.io", listed=str(listed))
    assert out.returncode == 2
    assert "'github.io': a public suffix" in out.stderr
    assert "Traceback" not in out.stderr
    assert listed.read_text("utf-8") == "alice.example\n"
    out = optout_command(tmp_path, "bob.example", listed="")
    assert out.returncode == 2 and "set BLOGFEEDS_OPT_OUT" in out.stderr
    out = optout_command(tmp_path, "alice.example", "bob.example", listed=str(listed))
    assert out.returncode == 0, out.stderr
    assert "Added to" in out.stdout and ": bob.example" in out.stdout
    assert listed.read_text("utf-8").splitlines()[-1] == "bob.example"
    assert "No database" in out.stdout
    assert not (tmp_path / "b.sqlite3").exists()  # none is made


def test_a_pages_claims_to_listed_addresses_are_dropped(listed: OptOutList) -> None:
    page = PageSignals(
        canonical="https://alice.example/",
        og_url="https://keep.example/",
        rel_me=("https://bob.example/", "https://keep.example/about/"),
        moved_to="https://pages.example/~gus/",
        mirrors=("https://ana.github.io/", "https://mirror.example/"),
        text_digest="abc",
    )
    seen = Observation("https://keep.example/", page=page, feed_url="https://keep.example/f")
    kept = without_listed(seen, listed)
    assert kept.page == PageSignals(
        og_url="https://keep.example/",
        rel_me=("https://keep.example/about/",),
        mirrors=("https://mirror.example/",),
        text_digest="abc",
    )
    assert kept.feed_url == seen.feed_url
    clean = Observation("https://keep.example/", page=PageSignals(og_url="https://keep.example/"))
    assert without_listed(clean, listed) is clean
