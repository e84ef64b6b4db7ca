"""``scrapy seed``: URLs, text and OPML seed files pushed as JSON to the local Redis."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.commands.seed import collect, payload
from tests import blogosphere as bs

SEEDS = Path(__file__).parent / "data" / "seeds"


def seed(*args: str, redis_url: str | None, prefix: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    if redis_url:
        env["REDIS_URL"] = redis_url
    env["BLOGFEEDS_REDIS_PREFIX"] = prefix
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "seed", *args],
        cwd=bs.REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def redis() -> Iterator[Any]:
    client = bs.redis_client()
    if client is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    yield client
    client.close()


def test_payloads_carry_opml_feed_and_title() -> None:
    seeds, errors = collect([str(SEEDS / "nested.opml"), "https://zed.example/"])
    assert [json.loads(payload(s)) for s in seeds][:2] == [
        {
            "url": "https://alice.example/",
            "meta": {
                "seed_feed_url": "https://alice.example/feed.xml",
                "seed_title": "Alice Writes",
            },
        },
        {
            "url": "https://bob-example.org/",
            "meta": {"seed_feed_url": "https://bob-example.org/blog/atom.xml", "seed_title": "Bob"},
        },
    ]
    assert seeds[-1].url == "https://zed.example/"
    assert [e.line for e in errors] == [13, 14, 15]


@pytest.mark.services
def test_urls_files_and_opml_are_pushed_and_bad_seeds_reported(redis: Any) -> None:
    with bs.redis_prefix("seed") as prefix:
        done = seed(
            "https://a.example/",
            str(SEEDS / "blogs.txt"),
            str(SEEDS / "nested.opml"),
            "ftp://nope.example/",
            "missing-file.txt",
            "https://a.example/",  # repeated: pushed once
            redis_url=bs.REDIS_URL,
            prefix=prefix,
        )
        key = f"{prefix}blogs:start_urls"
        pushed = [json.loads(x) for x in redis.lrange(key, 0, -1)]
    assert done.returncode == 1, done.stderr
    assert f"pushed {len(pushed)} seeds to {key}" in done.stdout
    urls = [p["url"] for p in pushed]
    assert urls[:4] == [
        "https://a.example/",
        "https://alice.example/",
        "http://bob-example.org/blog/",
        "https://carol.example/#about",
    ]
    assert "https://博客.example/" in urls
    assert len(urls) == len(set(urls))
    assert all(set(p) <= {"url", "meta"} for p in pushed)
    stderr = done.stderr
    assert f"{SEEDS / 'blogs.txt'}:9: not an http(s) URL: 'ftp://files.example/pub/'" in stderr
    assert f"{SEEDS / 'nested.opml'}:13: bad htmlUrl" in stderr
    assert "not an http(s) URL: 'ftp://nope.example/'" in stderr
    assert "missing-file.txt: cannot read seeds file" in stderr


@pytest.mark.services
def test_dry_run_pushes_nothing(redis: Any) -> None:
    with bs.redis_prefix("dry") as prefix:
        done = seed("--dry-run", "https://a.example/", redis_url=bs.REDIS_URL, prefix=prefix)
        assert redis.llen(f"{prefix}blogs:start_urls") == 0
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"url": "https://a.example/"}


def test_without_redis_url_it_is_a_usage_error() -> None:
    done = seed("https://a.example/", redis_url=None)
    assert done.returncode == 2
    assert "REDIS_URL is not set" in done.stderr
    assert seed(redis_url=None).returncode == 2  # no arguments at all


def test_dry_run_of_a_latin1_file_pushes_its_good_lines_and_reports_the_bad_one() -> None:
    done = seed("--dry-run", str(SEEDS / "latin1.txt"), redis_url=None)
    assert done.returncode == 1, done.stderr
    assert [json.loads(line)["url"] for line in done.stdout.splitlines()] == [
        "https://latin1.example/",
        "https://after.example/",
    ]
    assert f"{SEEDS / 'latin1.txt'}:3: not UTF-8 text: byte 0xE9 at character 12" in done.stderr
    assert "1 bad seeds (not pushed)" in done.stderr


def test_malformed_redis_url_is_one_error_line_and_exit_2() -> None:
    done = seed("https://a.example/", redis_url="redis://:s3cret@127.0.0.1:port/0")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        "ERROR: REDIS_URL: malformed Redis URL 'redis://:***@127.0.0.1:port/0': "
        "Port could not be cast to integer value as 'port'"
    ]
    assert seed("https://a.example/", redis_url="notaurl").stderr.startswith(
        "ERROR: REDIS_URL: malformed Redis URL 'notaurl': Redis URL must specify one of"
    )


def test_unreachable_redis_is_one_error_line_and_exit_3() -> None:
    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = seed("https://a.example/", "https://b.example/", redis_url=f"redis://127.0.0.1:{port}/7")
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"ERROR: Redis at 127.0.0.1:{port} is unreachable: "), line
    assert line.endswith("(0 of 2 seeds pushed)")
    assert done.stdout == ""
