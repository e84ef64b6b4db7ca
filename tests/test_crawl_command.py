"""``scrapy crawl`` as an operator meets it: bad settings, exit statuses, unreachable hosts.

- a misspelt ``BLOGFEEDS_*`` setting is a WARNING naming the nearest known one;
- a bad setting (strategy, rules file, database URL, a SQLite file that cannot be opened, a
  ``BLOGFEEDS_*`` value of the wrong type or out of range, ``REDIS_URL``'s form; for ``feeds``
  also the revisit policy, rank and ``BLOGFEEDS_NOW``) stops the crawl before it opens
  anything, with one ERROR line naming the setting, no traceback, exit status 2;
- finish reasons ``no_seeds`` (2) and ``database_down`` (1, ``blogs`` and ``feeds``) exit
  non-zero, as does Redis unreachable at start (``redis_down``, 1: one ERROR line);
- a blog whose name does not resolve costs one INFO line and no traceback, and is stored with
  status ``dns`` (robots.txt included: :mod:`blogfeeds.middlewares.robots`);
- friend links carry container scores without float noise.

Each case is a real ``scrapy crawl`` subprocess against :mod:`tests.littleweb`; DNS failures
come from :mod:`tests.offline_dns`, so no lookup leaves the machine.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings

from blogfeeds.storage.db import Store
from tests import offline_dns
from tests.littleweb import LittleWeb
from tests.robustness import REPO, CrawlRun, crawl_blogs

pytestmark = pytest.mark.integration

WEB = Path(__file__).resolve().parent / "data" / "web"
HTML = "text/html; charset=utf-8"
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[([\w.]+)\] (\w+): (.*)$", re.MULTILINE)


def log_lines(log: str, level: str) -> list[str]:
    """``"[logger] message"`` of every log record at ``level`` (first line of each)."""
    return [f"[{name}] {text}" for name, lvl, text in LOG_LINE.findall(log) if lvl == level]


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def crawl(tmp: Path, seeds: list[str], **kw: Any) -> CrawlRun:
    with LittleWeb(
        {"http://a.example/": {"body": "<title>A</title>", "content_type": HTML}}
    ) as web:
        return crawl_blogs(web, seeds, tmp, timeout=120, **kw)


# --- bad settings --------------------------------------------------------------------------------

BAD_TOML = "[[rule]\nname = 'x'\n"
RULE_SETS_NOTHING = '[[rule]]\nname = "pals"\nblog = "alice.example"\n'


@pytest.mark.parametrize(
    ("settings", "env", "expected"),
    [
        (
            {"BLOGFEEDS_STRATEGY": "pagerank"},
            {},
            "BLOGFEEDS_STRATEGY: unknown crawl strategy 'pagerank'; expected one of bfs, dfs",
        ),
        (
            {"BLOGFEEDS_RULES_FILE": "{tmp}/missing.toml"},
            {},
            "BLOGFEEDS_RULES_FILE: {tmp}/missing.toml: cannot read the rules file",
        ),
        (
            {"BLOGFEEDS_RULES_FILE": "{tmp}/bad.toml"},
            {},
            "BLOGFEEDS_RULES_FILE: {tmp}/bad.toml: not valid TOML",
        ),
        (
            {"BLOGFEEDS_RULES_FILE": "{tmp}/nothing.toml"},
            {},
            "BLOGFEEDS_RULES_FILE: {tmp}/nothing.toml: rule 1 ('pals'): sets nothing",
        ),
        (
            {"BLOGFEEDS_DATABASE_URL": "postgres://bf:s3cret@db/blogs"},
            {},
            "BLOGFEEDS_DATABASE_URL: unsupported database URL 'postgres://bf:***@db/blogs'",
        ),
        (
            {},
            {"MYSQL_URL": "mysql://bf:s3cret@db:port/blogs"},
            "MYSQL_URL: malformed MySQL URL 'mysql://bf:***@db:port/blogs'",
        ),
        (
            {"BLOGFEEDS_MAX_BLOGS": "abc"},
            {},
            "BLOGFEEDS_MAX_BLOGS: 'abc' is not an integer",
        ),
        (
            {"BLOGFEEDS_MAX_BLOGS": "-5"},
            {},
            "BLOGFEEDS_MAX_BLOGS: must be ≥ 0, got '-5'",
        ),
        (
            {"BLOGFEEDS_FEED_MAX_REQUESTS": "abc"},
            {},
            "BLOGFEEDS_FEED_MAX_REQUESTS: 'abc' is not an integer",
        ),
        (
            {"BLOGFEEDS_DB_BATCH_SIZE": "0"},
            {},
            "BLOGFEEDS_DB_BATCH_SIZE: must be ≥ 1, got '0'",
        ),
        (
            {"BLOGFEEDS_DB_FLUSH_INTERVAL": "soon"},
            {},
            "BLOGFEEDS_DB_FLUSH_INTERVAL: 'soon' is not a number",
        ),
        (
            {"BLOGFEEDS_KEEP_BLOGS_WITHOUT_FEED": "maybe"},
            {},
            "BLOGFEEDS_KEEP_BLOGS_WITHOUT_FEED: 'maybe' is not a boolean",
        ),
        (
            {"BLOGFEEDS_FRIEND_RULESET": "newest"},
            {},
            "BLOGFEEDS_FRIEND_RULESET: 'newest' is not one of blogfeeds, original",
        ),
        (
            {"BLOGFEEDS_DATABASE_URL": "sqlite:////etc/hosts/blogs.sqlite3"},
            {},
            "BLOGFEEDS_DATABASE_URL: cannot open the SQLite database "
            "'sqlite:////etc/hosts/blogs.sqlite3': '/etc/hosts' is not a directory",
        ),
        (
            {"BLOGFEEDS_DATABASE_URL": "sqlite:///{tmp}/notes.txt"},
            {},
            "BLOGFEEDS_DATABASE_URL: cannot open the SQLite database 'sqlite:///{tmp}/notes.txt': "
            "file is not a database",
        ),
        (
            {},
            {"REDIS_URL": "redis://:s3cret@127.0.0.1:port/0"},
            "REDIS_URL: malformed Redis URL 'redis://:***@127.0.0.1:port/0': Port could not be "
            "cast to integer value",
        ),
        (
            {},
            {"REDIS_URL": "redis://127.0.0.1:6379/notadb"},  # redis-py would use database 0
            "REDIS_URL: malformed Redis URL 'redis://127.0.0.1:6379/notadb': the path must be a "
            "database number",
        ),
        (
            {"BLOGFEEDS_DATABASE_URL": "sqlite:///{tmp}/future.sqlite3"},
            {},
            "BLOGFEEDS_DATABASE_URL: the database 'sqlite:///{tmp}/future.sqlite3' has schema "
            "version 999, newer than this code's",
        ),
        (
            {},
            {"REDIS_URL": "notaurl"},
            "REDIS_URL: malformed Redis URL 'notaurl': Redis URL must specify one of the "
            "following schemes",
        ),
        (
            {"BLOGFEEDS_FEED_SCORERS": '{"yourproject.rules.NoSuchRule": 250}'},
            {},
            "BLOGFEEDS_FEED_SCORERS: ModuleNotFoundError: No module named 'yourproject'",
        ),
        (
            {"BLOGFEEDS_FRIEND_SCORERS": '{"blogfeeds.extract.friends.LinkBalance": "250"}'},
            {},
            "BLOGFEEDS_FRIEND_SCORERS: ValueError: component 'blogfeeds.extract.friends.LinkBala",
        ),
        (
            {"BLOGFEEDS_FEED_SCORERS": '{"blogfeeds.extract.discovery.scorers.ComentsFeed": null}'},
            {},
            "BLOGFEEDS_FEED_SCORERS: 'blogfeeds.extract.discovery.scorers.ComentsFeed': None disab",
        ),
        (
            {},
            {"BLOGFEEDS_ALLOW_PRIVATE_TARGETS": "bogus"},
            "BLOGFEEDS_ALLOW_PRIVATE_TARGETS: 'bogus' is not a boolean",
        ),
    ],
    ids=[
        "strategy",
        "rules-missing",
        "rules-toml",
        "rules-invalid",
        "database-url",
        "mysql-url",
        "max-blogs-type",
        "max-blogs-range",
        "feed-max-requests-type",
        "batch-size-range",
        "flush-interval-type",
        "keep-without-feed-type",
        "friend-ruleset",
        "sqlite-under-a-file",
        "sqlite-not-a-database",
        "redis-url-port",
        "redis-url-database",
        "sqlite-newer-schema",
        "redis-url-scheme",
        "component-does-not-import",
        "component-order-not-an-integer",
        "component-disabled-is-not-a-default",
        "boolean-from-the-environment",
    ],
)
def test_bad_setting_is_one_error_line_and_exit_2(
    tmp_path: Path, settings: dict[str, str], env: dict[str, str], expected: str
) -> None:
    (tmp_path / "bad.toml").write_text(BAD_TOML, "utf-8")
    (tmp_path / "nothing.toml").write_text(RULE_SETS_NOTHING, "utf-8")
    (tmp_path / "notes.txt").write_text("not a database\n" * 100, "utf-8")
    with Store.open(f"sqlite:///{tmp_path / 'future.sqlite3'}") as store:  # a later release's
        store.connection.raw.execute(
            "INSERT INTO schema_version VALUES (999, '2030-01-01T00:00:00Z')"
        )
    settings = {k: v.replace("{tmp}", str(tmp_path)) for k, v in settings.items()}
    run = crawl(tmp_path, ["http://a.example/"], settings=settings, env=env)
    assert run.returncode == 2, run.log[-3000:]
    assert "Traceback" not in run.log, run.log[-3000:]
    errors = log_lines(run.log, "ERROR")
    assert len(errors) == 1, run.log[-3000:]
    expected = expected.replace("{tmp}", str(tmp_path))
    assert errors[0].startswith("[blogfeeds.commands.crawl] " + expected), errors[0]
    assert "s3cret" not in run.log
    assert "Spider opened" not in run.log  # stopped before anything was opened
    assert run.hits == []


def test_unknown_setting_is_a_warning_naming_the_nearest(tmp_path: Path) -> None:
    run = crawl(tmp_path, ["http://a.example/"], settings={"BLOGFEEDS_MAX_BLOG": "5"})
    assert run.returncode == 0, run.log[-3000:]
    assert (
        "[blogfeeds.extensions.startup] BLOGFEEDS_MAX_BLOG: unknown setting; did you mean "
        "BLOGFEEDS_MAX_BLOGS?"
    ) in log_lines(run.log, "WARNING")


def test_every_typed_project_setting_is_checked() -> None:
    from blogfeeds.config import OPTIONS
    from blogfeeds.extensions import startup  # here: the module collects without the names
    from blogfeeds.option import StartupError

    project = Settings()
    project.setmodule("blogfeeds.settings")
    startup.check_settings(project)  # the defaults pass
    types = {
        name: opt.type
        for name, opt in OPTIONS.items()
        if opt.type in (bool, int, float) and opt.parse is None
    }
    assert types["BLOGFEEDS_MAX_BLOGS"] is int
    assert types["BLOGFEEDS_REVISIT_INITIAL_T"] is float  # default 1000, read as a number
    assert types["BLOGFEEDS_SUMMARY_ENABLED"] is bool
    assert "BLOGFEEDS_REVISIT_RANK" not in types  # 0..5 or "auto": a parse of its own
    assert len(types) >= 25
    for name in types:
        bad = project.copy()
        bad.set(name, "x7", priority="cmdline")
        with pytest.raises(StartupError) as caught:
            startup.check_settings(bad)
        assert caught.value.setting == name
        assert caught.value.problem.startswith("'x7' is not a"), caught.value.problem


def test_feeds_crawl_checks_the_database_url_too(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "scrapy", "crawl", "feeds"]
    cmd += ["-s", "BLOGFEEDS_DATABASE_URL=sqlite:/relative.sqlite3"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    errors = log_lines(proc.stderr, "ERROR")
    assert len(errors) == 1 and "BLOGFEEDS_DATABASE_URL: malformed SQLite URL" in errors[0]


SERVICE_VARS = ("MYSQL_URL", "REDIS_URL", "BLOGFEEDS_DATABASE_URL")


def crawl_feeds(tmp: Path, *settings: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``scrapy crawl feeds`` on a SQLite file in ``tmp`` with ``-s`` ``settings``: exit code
    and log."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "feeds"]
    cmd += ["-s", f"BLOGFEEDS_DATABASE_URL=sqlite:///{tmp / 'feeds.sqlite3'}"]
    for setting in settings:
        cmd += ["-s", setting]
    proc = subprocess.run(
        cmd,
        cwd=REPO,
        env={**{k: v for k, v in os.environ.items() if k not in SERVICE_VARS}, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.returncode, proc.stderr


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        (
            "BLOGFEEDS_NOW=yesterday",
            "BLOGFEEDS_NOW: 'yesterday' is not an ISO 8601 time from 1970 to 9998 (e.g. "
            "2026-01-31T12:00:00Z)",
        ),
        (  # a lease 30 minutes later is past year 9999: it crashed in start(), exit 0
            "BLOGFEEDS_NOW=9999-12-31T23:59:59Z",
            "BLOGFEEDS_NOW: '9999-12-31T23:59:59Z' is not an ISO 8601 time from 1970 to 9998",
        ),
        (
            "BLOGFEEDS_REVISIT_POLICY=magic",
            "BLOGFEEDS_REVISIT_POLICY: unknown revisit policy 'magic'; expected one of levels, "
            "estimate",
        ),
        ("BLOGFEEDS_REVISIT_RANK=9", "BLOGFEEDS_REVISIT_RANK: must be 0..5 or 'auto', got '9'"),
        ("BLOGFEEDS_REVISIT_RANK=high", "BLOGFEEDS_REVISIT_RANK: must be 0..5 or 'auto'"),
        ("BLOGFEEDS_REVISIT_BUDGET=0", "BLOGFEEDS_REVISIT_BUDGET: must be > 0, got '0'"),
        (
            "BLOGFEEDS_REVISIT_INITIAL_T=5",
            "BLOGFEEDS_REVISIT_INITIAL_T: must be from 20 to 10000 (minutes), got '5'",
        ),
        ("BLOGFEEDS_FEEDS_BATCH=many", "BLOGFEEDS_FEEDS_BATCH: 'many' is not an integer"),
    ],
)
def test_feeds_crawl_bad_setting_is_one_error_line_and_exit_2(
    tmp_path: Path, setting: str, expected: str
) -> None:
    code, log = crawl_feeds(tmp_path, setting)
    assert code == 2, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    errors = log_lines(log, "ERROR")
    assert len(errors) == 1, log[-3000:]
    assert errors[0].startswith("[blogfeeds.commands.crawl] " + expected), errors
    assert "Spider opened" not in log


def test_feeds_crawl_with_mysql_down_at_start_ends_database_down(tmp_path: Path) -> None:
    url = f"mysql://root:s3cret@127.0.0.1:{closed_port()}/fix_startup_x"
    code, log = crawl_feeds(
        tmp_path, f"MYSQL_URL={url}", "BLOGFEEDS_DB_DOWN_LIMIT=0.5", "LOG_LEVEL=INFO"
    )
    assert code == 1, log[-3000:]
    assert "'finish_reason': 'database_down'" in log
    assert "Traceback" not in log, log[-3000:]
    errors = log_lines(log, "ERROR")
    assert len(errors) == 1, log[-3000:]
    assert errors[0].startswith(
        "[blogfeeds.storage.retry] cannot open the database mysql://root:***@127.0.0.1:"
    )
    assert "(2003," in errors[0]
    assert "s3cret" not in log
    assert "Feeds worker" not in log  # the spider's start() never ran: nothing was claimed


# --- exit statuses by finish reason --------------------------------------------------------------


@pytest.mark.parametrize(
    ("seeds", "message"),
    [
        (["ftp://a.example/"], "Bad seed start_urls: not an http(s) URL"),
        ([], "No seeds: pass -a start_urls=URL[,URL] or -a seeds=FILE"),
    ],
)
def test_no_usable_seed_exits_2(tmp_path: Path, seeds: list[str], message: str) -> None:
    run = crawl(tmp_path, seeds)
    assert run.returncode == 2, run.log[-3000:]
    assert "'finish_reason': 'no_seeds'" in run.log
    assert [message in line for line in log_lines(run.log, "ERROR")] == [True]
    assert "Traceback" not in run.log


def test_some_usable_seeds_exit_0(tmp_path: Path) -> None:
    run = crawl(tmp_path, ["ftp://a.example/", "http://a.example/"])
    assert run.returncode == 0, run.log[-3000:]
    assert "'finish_reason': 'finished'" in run.log
    assert set(run.blogs) == {"a.example"}


def test_database_down_exits_1(tmp_path: Path) -> None:
    run = crawl(
        tmp_path,
        ["http://a.example/"],
        env={"MYSQL_URL": f"mysql://root@127.0.0.1:{closed_port()}/blogfeeds"},
        settings={"BLOGFEEDS_DB_DOWN_LIMIT": "0.5"},
    )
    assert run.returncode == 1, run.log[-3000:]
    assert "'finish_reason': 'database_down'" in run.log
    assert "Traceback" not in run.log


def test_redis_unreachable_at_start_is_one_error_line_and_exit_1(tmp_path: Path) -> None:
    port = closed_port()
    run = crawl(tmp_path, ["http://a.example/"], env={"REDIS_URL": f"redis://127.0.0.1:{port}/7"})
    assert run.returncode == 1, run.log[-3000:]
    assert "Traceback" not in run.log, run.log[-3000:]
    errors = log_lines(run.log, "ERROR")
    assert len(errors) == 1, run.log[-3000:]
    assert errors[0].startswith(
        f"[blogfeeds.commands.crawl] Redis at 127.0.0.1:{port} is unreachable: "
    ), errors
    assert "Spider opened" not in run.log
    assert run.hits == []


# --- a host that does not resolve; container scores ----------------------------------------------


def test_dns_failure_is_one_info_line_and_status_dns(tmp_path: Path) -> None:
    # gamma's blogroll scores 3000.0000000000005 before rounding; its friends answer 404
    routes = {"http://hub.example/": {"file": "gamma-friends.html", "content_type": HTML}}
    with LittleWeb(routes, root=WEB) as web:
        run = crawl_blogs(
            web,
            ["http://nosuchhost.invalid/", "http://hub.example/"],
            tmp_path,
            env=offline_dns.unproxied("nosuchhost.invalid"),
            settings={
                **offline_dns.SETTINGS,
                "DEPTH_LIMIT": "1",
                "BLOGFEEDS_RETRY_BACKOFF_BASE": "0.05",
            },
            timeout=120,
        )
    assert run.returncode == 0, run.log[-3000:]
    assert run.blogs["nosuchhost.invalid"]["status"] == "dns"
    assert "Traceback" not in run.log, run.log[-3000:]
    assert log_lines(run.log, "ERROR") == []
    about_host = [
        line
        for level in ("INFO", "WARNING")
        for line in log_lines(run.log, level)
        if "nosuchhost.invalid" in line
    ]
    assert len(about_host) == 1, about_host
    assert about_host[0].startswith(
        "[blogfeeds.spiders.blogs] Blog http://nosuchhost.invalid/ failed: dns (DNS lookup failed"
    ), about_host
    assert run.stat("blogfeeds/robots_txt_failed/dns") == 1
    scores = {link["container_score"] for link in run.links}
    assert scores == {3000.0}, scores
