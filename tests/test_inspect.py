"""``scrapy inspect``: explains a real blogroll page, from a file and fetched over loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from blogfeeds.commands.inspect import render_text
from tests import offline_dns
from tests.littleweb import LittleWeb

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def _inspect(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "inspect", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


MATERY = ["--file", str(DATA / "pages" / "matery-friends.html")]
MATERY_URL = "https://blinkfox.github.io/friends/"


def test_inspect_file_json_explains_a_real_blogroll() -> None:
    """``--file`` reads the page from the file and fetches the rest as the crawl would: the
    advertised feed is validated through the downloader (here the loopback web)."""
    routes = {
        "https://blinkfox.github.io/atom.xml": {
            "file": str(DATA / "web" / "alpha-atom.xml"),
            "content_type": "application/atom+xml",
        }
    }
    with LittleWeb(routes) as web:
        proc = _inspect(*MATERY, "--url", MATERY_URL, "--json", env=web.env())
        fetched = web.urls_fetched()
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no Scrapy banner, no INFO log, no trafilatura warning
    data: dict[str, Any] = json.loads(proc.stdout)
    assert data["blog_id"] == "blinkfox.github.io"
    assert data["title"]
    assert "https://blinkfox.github.io/atom.xml" in fetched
    assert [f["url"] for f in data["feeds"]] == ["https://blinkfox.github.io/atom.xml"]
    assert data["feed_url"] == data["feeds"][0]["url"] and data["status"] == "ok"
    assert all(feed["reasons"] for feed in data["feeds"])
    assert any("valid atom" in reason for reason in data["feeds"][0]["reasons"])
    assert data["containers"], "every scored container is listed"
    best = data["containers"][0]
    assert best["reasons"] and best["links"] > 0
    assert {f["url"] for f in data["friends"]} & {"http://luokangyuan.com/", "https://sitoi.cn/"}
    assert {f["how"] for f in data["friends"]} == {"theme:matery"}


def test_inspect_no_fetch_reads_the_file_offline() -> None:
    """``--no-fetch``: nothing leaves the machine; the advertised feed is a rejected
    candidate, the friend links are read from the page alone."""
    proc = _inspect(*MATERY, "--url", MATERY_URL, "--json", "--no-fetch")
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    assert data["blog_id"] == "blinkfox.github.io"
    assert data["title"]
    assert (data["feeds"], data["status"]) == ([], "no_feed")
    assert {page["outcome"] for page in data["followed"]} <= {"failed"}
    assert "https://blinkfox.github.io/atom.xml" in {r["url"] for r in data["rejected"]}
    assert data["containers"], "every scored container is listed"
    best = data["containers"][0]
    assert best["reasons"] and best["links"] > 0
    assert {f["url"] for f in data["friends"]} & {"http://luokangyuan.com/", "https://sitoi.cn/"}


def test_inspect_text_report_fetches_through_the_project_settings() -> None:
    routes = {
        "http://alpha.example/links/": {
            "file": str(DATA / "web" / "alpha-links.html"),
            "content_type": "text/html; charset=utf-8",
        }
    }
    with LittleWeb(routes) as web:
        proc = _inspect("http://alpha.example/links/", "--nolog", env=web.env())
        user_agents = {hit.user_agent for hit in web.hits()}
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Title:     友情链接 | Alpha 的笔记" in out
    assert "Friend links (5):" in out
    assert "https://www.beta-example.org/  Beta Blog" in out
    assert any(ua and ua.startswith("blogfeeds/") for ua in user_agents)


def test_inspect_needs_a_url() -> None:
    proc = _inspect("--file", str(DATA / "pages" / "matery-friends.html"))
    assert proc.returncode != 0
    assert "--url" in proc.stderr


def test_inspect_reports_unreadable_input_without_a_traceback(tmp_path: Path) -> None:
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    for args in (
        ["--file", str(empty), "--url", "http://a.example/"],
        ["--file", str(tmp_path / "missing.html"), "--url", "http://a.example/"],
    ):
        proc = _inspect(*args)
        assert proc.returncode != 0
        assert "Traceback" not in proc.stderr, proc.stderr


def test_a_dns_failure_is_one_line_naming_it() -> None:
    """No Scrapy traceback: one line with the status the crawl would store (``dns``)."""
    env = {**os.environ, **offline_dns.unproxied("nosuchhost.invalid")}
    overrides = {**offline_dns.SETTINGS, "RETRY_ENABLED": "0"}
    settings = [arg for k, v in overrides.items() for arg in ("-s", f"{k}={v}")]
    proc = _inspect("http://nosuchhost.invalid/", *settings, env=env)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.splitlines()  # the one line, not after a hundred lines of log
    assert line.startswith("Could not fetch http://nosuchhost.invalid/: dns (")
    told = _inspect("http://nosuchhost.invalid/", "-L", "INFO", *settings, env=env)
    assert "[scrapy.core.engine] INFO: Spider opened" in told.stderr  # a log asked for is there
    quiet = _inspect("http://nosuchhost.invalid/", "--nolog", *settings, env=env)
    assert quiet.returncode == 1
    assert len(quiet.stderr.splitlines()) == 1, quiet.stderr


def test_a_reader_that_went_away_ends_inspect_quietly() -> None:
    """`scrapy inspect URL | head -1`: exit status 141 and no BrokenPipeError traceback, as
    export and stats (the pipe's reader is closed before the first byte: deterministic)."""
    page = [*MATERY, "--no-fetch"]
    for fmt in ([], ["--json"]):
        read, write = os.pipe()
        os.close(read)
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "scrapy", "inspect", "--nolog", *page, *fmt,
                 "--url", "https://blinkfox.github.io/friends/"],
                cwd=REPO, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120, check=False,
            )  # fmt: skip
        finally:
            os.close(write)
        assert (proc.returncode, proc.stderr) == (141, ""), fmt


def test_text_report_columns_hold_when_a_field_is_empty() -> None:
    data: dict[str, Any] = {
        "url": "https://a.example/", "blog_id": "a.example", "title": "A", "language": "",
        "generator": None, "encoding": "utf-8", "abstract": "", "feeds": [], "containers": [],
        "friends": [], "friend_pages": [],
    }  # fmt: skip
    head = render_text(data).splitlines()[:7]
    assert head == [
        "URL:       https://a.example/",
        "Blog id:   a.example",
        "Title:     A",
        "Language:  (none)",
        "Generator: (none)",
        "Platform:  (none)",
        "Encoding:  utf-8",
    ]
    data.update(language="zh-CN", generator="Hexo 7.3.0", platform="Hexo", platform_version="7.3.0")
    assert render_text(data).splitlines()[3:6] == [
        "Language:  zh-CN",
        "Generator: Hexo 7.3.0",
        "Platform:  Hexo 7.3.0",
    ]
    data.update(generator="Wordpress", platform="WordPress", platform_version="")
    assert render_text(data).splitlines()[4:6] == ["Generator: Wordpress", "Platform:  WordPress"]
    data.update(generator="Me :)", platform="", platform_version="")
    assert render_text(data).splitlines()[4:6] == ["Generator: Me :)", "Platform:  (unknown)"]


def test_inspect_reads_what_the_crawl_reads_after_a_redirect_to_another_host() -> None:
    """The crawl follows a home page's redirect to another host and stores that blog; so does
    inspect (it once reported the 301 itself and an empty page)."""
    routes = {
        "http://old-home.example/": {"status": 301, "location": "http://alpha.example/links/"},
        "http://alpha.example/links/": {
            "file": str(DATA / "web" / "alpha-links.html"),
            "content_type": "text/html; charset=utf-8",
        },
    }
    with LittleWeb(routes) as web:
        proc = _inspect("http://old-home.example/", "--json", env=web.env())
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["url"] == "http://alpha.example/links/"
    assert report["title"] == "友情链接 | Alpha 的笔记"


def test_an_error_status_is_the_failure_the_crawl_stores() -> None:
    """A 404 or 500 home page is stored as http_4xx / http_5xx by the crawl: inspect says so in
    one line (exit status 1) instead of reading the error page as a blog."""
    routes = {
        "http://gone.example/": {"status": 404, "body": "<title>Not Found</title>"},
        "http://broken.example/": {"status": 500, "body": "<title>Server Error</title>"},
    }
    with LittleWeb(routes) as web:
        for url, status in (
            ("http://gone.example/", "http_4xx"),
            ("http://broken.example/", "http_5xx"),
        ):
            proc = _inspect(url, "-s", "RETRY_ENABLED=0", env=web.env())
            assert proc.returncode == 1, proc.stderr
            assert proc.stdout == ""
            assert proc.stderr.splitlines()[-1].startswith(f"Could not fetch {url}: {status}")


def test_inspect_checks_settings_as_the_crawl_does() -> None:
    """A bad value, a component that does not import, or a misspelt setting: one line each
    (exit status 2 for the errors), not a traceback."""
    for setting, value, words in (
        ("BLOGFEEDS_MAX_PAGES_PER_BLOG", "0", "BLOGFEEDS_MAX_PAGES_PER_BLOG: must be ≥ 1"),
        ("BLOGFEEDS_FEED_SCORERS", '{"no.such.Rule": 250}', "BLOGFEEDS_FEED_SCORERS: "),
        ("BLOGFEEDS_FRIEND_LAYERS", '{"blogfeeds.extract.friends.Containerz": null}', "not one"),
    ):
        proc = _inspect(*MATERY, "--url", MATERY_URL, "--no-fetch", "-s", f"{setting}={value}")
        assert proc.returncode == 2, (setting, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert words in proc.stderr, proc.stderr
    proc = _inspect(
        *MATERY, "--url", MATERY_URL, "--no-fetch", "-s", "BLOGFEEDS_MAX_PAGES_PER_BLO=1"
    )
    assert proc.returncode == 0, proc.stderr
    assert "did you mean BLOGFEEDS_MAX_PAGES_PER_BLOG?" in proc.stderr


def test_text_report_shows_the_profile_with_its_sources() -> None:
    data: dict[str, Any] = {
        "url": "https://a.example/", "blog_id": "a.example", "title": "A", "language": "zh",
        "language_declared": "en", "language_source": "corrected", "generator": None,
        "encoding": "utf-8", "abstract": "", "feeds": [], "containers": [], "friends": [],
        "friend_pages": [], "description": "Notes", "description_source": "feed",
        "author": "Ana", "author_source": "meta", "icon_url": "", "icon_source": "",
        "last_post_at": "2026-11-20T00:00:00Z", "last_post_source": "feed",
        "posts_per_month": 2.5, "activity": "active",
    }  # fmt: skip
    lines = render_text(data).splitlines()
    assert "Language:  zh (the page declares en; its text is not)" in lines
    assert lines[7:12] == [
        "Described: Notes (feed)",
        "Author:    Ana (meta)",
        "Icon:      (none)",
        "Last post: 2026-11-20T00:00:00Z (feed)",
        "Activity:  active, 2.5 posts a month",
    ]


def test_inspect_says_which_links_were_left_out_of_the_friends_and_why(tmp_path: Path) -> None:
    """A link a filter drops (here a reserved example domain, a theme's unconfigured
    placeholder) is listed with the filter's reason, not silently missing."""
    page = tmp_path / "links.html"
    page.write_text(
        "<html><head><title>友情链接</title></head><body><h1>友情链接</h1><ul>"
        '<li><a href="https://www.example.org/">Your site</a></li>'
        '<li><a href="https://carolwrites.cn/">Carol writes</a></li>'
        '<li><a href="https://dave.dev/">Dave</a></li></ul></body></html>',
        encoding="utf-8",
    )
    proc = _inspect(
        "--file", str(page), "--url", "https://alpha.blog/links/", "--json", "--no-fetch"
    )
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    assert [f["url"] for f in data["friends"]] == ["https://carolwrites.cn/", "https://dave.dev/"]
    assert data["excluded"] == [{"url": "https://www.example.org/", "reason": "placeholder"}]
    lines = render_text(data).splitlines()
    start = lines.index("Links left out of the friends (1):")
    assert lines[start + 1] == "  https://www.example.org/  placeholder"


def test_inspect_and_the_crawl_say_the_same_of_a_page_they_cannot_read(tmp_path: Path) -> None:
    """A home page that is not HTML, or not readable as HTML, is one line naming the status and
    reason the crawl stores for it (``blogs.status`` and ``status_reason``)."""
    from tests.robustness import crawl_blogs

    routes = {
        "http://image.example/": {"body": b"\x89PNG\r\n\x1a\n" + b"\0" * 64,
                                  "content_type": "image/png"},
        "http://empty.example/": {"body": b"", "content_type": "text/html; charset=utf-8"},
    }  # fmt: skip
    with LittleWeb(routes) as web:
        said = {url: _inspect(url, "--nolog", env=web.env()) for url in routes}
        run = crawl_blogs(web, list(routes), tmp_path, settings={"ROBOTSTXT_OBEY": "False"})
    for url, proc in said.items():
        blog = run.blogs[url.split("/")[2]]
        assert proc.returncode == 1
        assert proc.stderr.splitlines() == [
            f"Could not read {url}: {blog['status']} ({blog['status_reason']})"
        ]
    assert {b["status"] for b in run.blogs.values()} == {"not_html", "decode_error"}
    assert run.stat("blogfeeds/blog_failed/not_html") == 1


def test_inspect_names_the_other_addresses_claimed_and_their_evidence() -> None:
    """A github.io address answering 301 to a copy whose canonical names the original: inspect
    says both claims, with the evidence the store weighs (blogfeeds.extract.aliases)."""
    page = (
        '<html><head><title>Ana</title><link rel="canonical" href="https://ana.example/">'
        "</head><body><p>This blog has moved to "
        '<a href="https://ana-new.example/">ana-new.example</a></p></body></html>'
    )
    routes = {
        "https://ana.github.io/": {"status": 301, "location": "https://ana.vercel.app/"},
        "https://ana.vercel.app/": {"body": page, "content_type": "text/html; charset=utf-8"},
    }
    with LittleWeb(routes) as web:
        proc = _inspect("https://ana.github.io/", "--json", env=web.env())
        text = _inspect("https://ana.github.io/", env=web.env())
    assert proc.returncode == 0, proc.stderr
    claims = {(c["names"], c["evidence"]) for c in json.loads(proc.stdout)["claims"]}
    assert claims == {
        ("https://ana.example/", "canonical"),
        ("https://ana-new.example/", "moved"),
        ("https://ana.vercel.app/", "redirect"),
    }
    assert "  https://ana.example/  canonical (said by https://ana.vercel.app/)" in text.stdout


def test_inspect_shows_each_friends_kind_and_each_left_out_links_reason() -> None:
    """A real Butterfly friend page (0a00.github.io, shared corpus): the friend's card is a
    site, the 推荐网站 group's links are left out as a service section; JSON and text alike."""
    import pytest

    from tests.littleweb import find_shared

    shared = find_shared()
    if shared is None:
        pytest.skip("needs the shared folder (../shared)")
    page = shared / "corpus/pages/sites/0a00__0a00.github.io/link/index.html"
    args = ("--file", str(page), "--url", "https://0a00.github.io/link/", "--no-fetch")
    proc = _inspect(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    assert [(f["url"], f["kind"]) for f in data["friends"]] == [("https://vip.bdziyi.com/", "site")]
    reasons = {e["url"]: e["reason"] for e in data["excluded"]}
    assert reasons["https://www.notion.so/"] == "service-section"
    text = _inspect(*args).stdout
    assert "https://www.notion.so/  service-section" in text
