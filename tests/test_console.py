"""What a new user reads on the console: the commands' help, a spider name typo, the records
of ``-O``, and where a crawl's summary lands in its log."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.utils.test import get_crawler

import tests.blogosphere as bs
from blogfeeds.feedcrawl.summary import duration, next_due_text
from blogfeeds.items import Blog
from blogfeeds.spiders.blogs import BlogsSpider
from blogfeeds.spiders.feeds import FeedsSpider
from blogfeeds.storage.db import Store
from tests.littleweb import LittleWeb
from tests.robustness import crawl_blogs

REPO = Path(__file__).resolve().parent.parent
HTML = "text/html; charset=utf-8"


def scrapy(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_a_spider_name_typo_is_one_line_naming_the_spiders() -> None:
    proc = scrapy("crawl", "blog")
    assert proc.returncode == 2
    assert proc.stderr == (
        "scrapy crawl: no spider named 'blog' (did you mean 'blogs'?); "
        "the spiders are: blogs, feeds\n"
    )
    assert scrapy("crawl", "nothing-like-it").stderr.endswith(
        "no spider named 'nothing-like-it'; the spiders are: blogs, feeds\n"
    )


@pytest.mark.parametrize(
    "command", ["crawl", "inspect", "export", "stats", "seed", "optout", "cluster", "demo"]
)
def test_help_underlines_only_its_headings(command: str) -> None:
    """Scrapy's help formatter took a wrapped help line ending in a colon for a heading."""
    for columns in ("60", "80", "100"):
        proc = scrapy(command, "-h", env={**os.environ, "COLUMNS": columns})
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        headings = [lines[i - 1] for i, line in enumerate(lines) if re.fullmatch(r"[=-]+", line)]
        assert headings == ["Usage", "Options", "Global Options"], proc.stdout


@pytest.mark.integration
def test_export_records_say_their_type_and_the_summary_comes_last(tmp_path: Path) -> None:
    routes = {
        "http://alpha.example/": {
            "body": '<title>Alpha</title><h2>Friends</h2><ul class="friends">'
            '<li><a href="http://beta.example/">Beta</a></li>'
            '<li><a href="http://gamma.example/">Gamma</a></li></ul>',
            "content_type": HTML,
        },
        "http://beta.example/": {"body": "<title>Beta</title><p>hi</p>", "content_type": HTML},
    }
    with LittleWeb(routes) as web:
        run = crawl_blogs(web, ["http://alpha.example/"], tmp_path, settings={"DEPTH_LIMIT": "1"})
    assert run.returncode == 0, run.log[-3000:]
    records = [*run.blogs.values(), *run.links]
    assert {r["blog_id"]: r["type"] for r in run.blogs.values()} == {
        "alpha.example": "blog",
        "beta.example": "blog",
        "gamma.example": "blog",
    }
    assert {link["type"] for link in run.links} == {"friend_link"} and len(run.links) == 2
    assert all(next(iter(r)) == "type" for r in records)  # the first field of every line
    # Scrapy's stats dump stays, and the crawl summary is the last thing logged after it
    log = run.log.rstrip()
    assert log.index("Dumping Scrapy stats") < log.index("Crawl summary (finished)")
    last = re.split(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[)", log)[-1]
    assert "[blogfeeds.extensions.summary] INFO: Crawl summary (finished):\nBlogs: 3" in last


def test_a_database_url_whose_directory_is_missing_is_refused_at_start(tmp_path: Path) -> None:
    missing = f"nodir-{tmp_path.name}/x"
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{missing}/db.sqlite3"
    proc = scrapy("crawl", "blogs", "-a", "start_urls=http://alpha.example/", env=env)
    assert proc.returncode == 2, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert errors[0].endswith(
        f"BLOGFEEDS_DATABASE_URL: cannot open the SQLite database "
        f"'sqlite:///{missing}/db.sqlite3': the directory '{missing}' (relative to {REPO}) "
        f"does not exist: create it first, or give an absolute path: "
        f"sqlite:////{missing}/db.sqlite3"
    )
    assert not (REPO / missing.split("/", maxsplit=1)[0]).exists()


def test_durations_and_next_due_read_as_a_person_says_them() -> None:
    assert [duration(m) for m in (0.5, 45, 200, 60, 3000, 2880)] == [
        "30 s", "45 min", "3 h 20 min", "1 h", "2 d 2 h", "2 d",
    ]  # fmt: skip
    assert next_due_text(None, 0).startswith("No feed scheduled")
    assert next_due_text(100.0, 100.2) == "Next feed due at 1970-01-01T01:40:00Z (due now)"
    assert next_due_text(100.0, 160.0).endswith("(overdue by 1 h)")
    assert next_due_text(100.0, 40.0).endswith("(in 1 h)")


@pytest.mark.parametrize(
    ("value", "problem"), [("abc", "is not a whole number"), ("-1", "is below 0")]
)
def test_a_bad_scrapy_setting_the_crawl_relies_on_is_one_line(value: str, problem: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    env["BLOGFEEDS_DATABASE_URL"] = ""
    proc = scrapy(
        "crawl", "blogs", "-a", "start_urls=http://alpha.example/", "-s", f"DEPTH_LIMIT={value}",
        env=env,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if "ERROR" in line]
    assert errors and errors[0].endswith(f"DEPTH_LIMIT: '{value}' {problem}"), proc.stderr


def test_inspect_refuses_a_url_no_request_can_be_made_of_in_one_line() -> None:
    proc = scrapy("inspect", "http://[::1")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert proc.stderr.rstrip().endswith("invalid URL 'http://[::1': Invalid IPv6 URL")


def test_export_site_onto_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "afile"
    target.write_text("keep me")
    db = tmp_path / "db.sqlite3"
    env = {**os.environ, "BLOGFEEDS_DATABASE_URL": f"sqlite:///{db}"}
    env.pop("MYSQL_URL", None)
    with Store.open(f"sqlite:///{db}") as store:
        store.upsert_blogs([Blog(blog_id="a.example", url="http://a.example/", status="ok")])
    proc = scrapy("export", "site", str(target), env=env)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert proc.stderr.rstrip().endswith("is a file: give a folder to write the site in")
    assert target.read_text() == "keep me"


IGNORED = "not an argument of this spider, ignored; "


@pytest.mark.parametrize(
    ("spider", "given", "said"),
    [
        ("feeds", {"lop": "true"}, "-a lop: " + IGNORED + "did you mean -a loop=?"),
        ("blogs", {"seed": "x.txt"}, "-a seed: " + IGNORED + "did you mean -a seeds=?"),
        ("blogs", {"_job": "abc"}, None),  # scrapyd's own arguments pass
    ],
)
def test_a_misspelt_spider_argument_is_a_warning(
    spider: str, given: dict[str, str], said: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    cls = {"blogs": BlogsSpider, "feeds": FeedsSpider}[spider]
    with caplog.at_level("WARNING", logger="blogfeeds.spiders.arguments"):
        cls.from_crawler(get_crawler(cls, {"BLOGFEEDS_EXTRACT_THREADS": 0}), **given)
    assert [r.getMessage() for r in caplog.records] == ([said] if said else [])


@pytest.mark.integration
def test_the_summary_says_why_a_crawl_stopped_or_fetched_nothing(tmp_path: Path) -> None:
    """A crawl stopped by BLOGFEEDS_MAX_BLOGS says so; a resumed JOBDIR crawl ends with nothing
    queued (the links its earlier run queued are dropped by the duplicate filter, not left
    pending); a finished JOBDIR run again fetches nothing and still prints its summary."""
    n = 30
    routes = {bs.home(i): {"body": bs.page(i, n), "content_type": HTML} for i in range(n)}
    job = {"JOBDIR": str(tmp_path / "job")}
    (tmp_path / "capped").mkdir()
    with LittleWeb(routes) as web:
        seeds = [bs.home(0)]
        first = crawl_blogs(web, seeds, tmp_path, settings={**job, "CLOSESPIDER_ITEMCOUNT": "8"})
        resumed = crawl_blogs(web, seeds, tmp_path, settings=job)
        again = crawl_blogs(web, seeds, tmp_path, settings=job)
        capped = crawl_blogs(web, seeds, tmp_path / "capped", settings={"BLOGFEEDS_MAX_BLOGS": "5"})
    assert "Crawl summary (closespider_itemcount)" in first.log
    assert "Resuming crawl (" in resumed.log
    assert "Strategy bfs: frontier 0 blogs queued, " in resumed.log
    assert f"Crawl summary (finished):\nBlogs: {n - len(first.blogs)}," in resumed.log
    assert "Crawl summary (finished):\nBlogs: 0, with a feed: 0; friend links: 0" in again.log
    assert f"\nNothing fetched: 1 already crawled by JOBDIR {job['JOBDIR']} (a finished job)" in (
        again.log
    )
    assert "Crawl summary (finished):\nBlogs: 5," in capped.log
    assert re.search(r"\nStopped by BLOGFEEDS_MAX_BLOGS=5: \d+ links to further blogs", capped.log)


@pytest.mark.integration
def test_a_blogosphere_at_ip_addresses_says_why_it_has_no_friends(tmp_path: Path) -> None:
    def page(n: int) -> dict[str, str]:
        friends = "".join(
            f'<li><a href="http://10.9.8.7:800{k}/">Blog {k}</a></li>' for k in (1, 2, 3) if k != n
        )
        return {"body": f'<title>Blog {n}</title><ul class="friends">{friends}</ul>'}

    routes = {f"http://10.9.8.7:800{n}/": {**page(n), "content_type": HTML} for n in (1, 2, 3)}
    with LittleWeb(routes) as web:
        run = crawl_blogs(
            web, ["http://10.9.8.7:8001/"], tmp_path, env={"BLOGFEEDS_ALLOW_PRIVATE_TARGETS": "1"}
        )
    assert run.returncode == 0, run.log[-3000:]
    assert run.links == []
    assert run.log.count("lists no friends: links to private IP addresses are read as") == 1
    assert "give each a host name (docs/crawling.md#trying-it-on-a-local-site)" in run.log
