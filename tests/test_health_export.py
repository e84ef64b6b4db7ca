"""A blog's health in the exports (JSON lines and CSV: ``health``, ``health_reason``,
``moved_to``), the ``--health`` filter, and ``scrapy stats`` counting the kinds."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.commands.export import BLOG_COLUMNS, Filters, export
from blogfeeds.extensions.summary import summarize
from blogfeeds.items import Blog, BlogCheck
from blogfeeds.site.build import directory_data
from blogfeeds.storage.db import Store

REPO = Path(__file__).resolve().parent.parent


def _blog(name: str) -> Blog:
    return Blog(
        blog_id=f"{name}.example",
        url=f"https://{name}.example/",
        title=name.title(),
        feed_url=f"https://{name}.example/feed/",
        fetched_at="2026-11-01T00:00:00Z",
    )


def _check(name: str, kind: str, **fields: Any) -> BlogCheck:
    return BlogCheck(
        f"{name}.example",
        f"https://{name}.example/",
        kind,
        f"{kind} because",
        "2026-11-02T00:00:00Z",
        title=name.title(),
        feed_url=f"https://{name}.example/feed/",
        **fields,
    )


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'b.sqlite3'}"
    with Store.open(url) as store:
        store.write([_blog(n) for n in ("ann", "bob", "cat", "dan")], [])
        store.write(
            [],
            [],
            (),
            [
                _check("ann", "ok"),
                _check("bob", "failing", gone=True),  # one failure: failing, not dead yet
                _check("cat", "moved", moved_to="https://cat.new/"),
            ],
        )
    return url


def _rows(url: str) -> list[dict[str, Any]]:
    with Store.open(url) as store:
        return store.blogs()


def test_csv_and_jsonl_carry_health_reason_and_moved_to(url: str) -> None:
    blogs = _rows(url)
    assert {"health", "health_reason", "moved_to"} <= set(BLOG_COLUMNS)
    out = io.BytesIO()
    export("csv", blogs, [], Filters(), out)
    rows = {r["blog_id"]: r for r in csv.DictReader(io.StringIO(out.getvalue().decode("utf-8")))}
    assert rows["cat.example"]["health"] == "moved"
    assert rows["cat.example"]["moved_to"] == "https://cat.new/"
    assert rows["ann.example"]["health_reason"] == "ok because"
    assert rows["dan.example"]["health"] == ""  # never checked
    out = io.BytesIO()
    export("jsonl", blogs, [], Filters(), out)
    lines = {j["blog_id"]: j for j in map(json.loads, out.getvalue().decode().splitlines())}
    assert (lines["bob.example"]["health"], lines["cat.example"]["moved_to"]) == (
        "failing",
        "https://cat.new/",
    )
    assert "etag" not in lines["ann.example"]  # the re-check state stays in the store


def test_the_health_filter(url: str) -> None:
    out = io.BytesIO()
    export("jsonl", _rows(url), [], Filters(healths=frozenset({"moved", "unchecked"})), out)
    assert {json.loads(x)["blog_id"] for x in out.getvalue().decode().splitlines()} == {
        "cat.example",
        "dan.example",
    }


def test_stats_counts_the_kinds(url: str) -> None:
    assert summarize(_rows(url), []).by_health == {
        "ok": 1,
        "failing": 1,
        "moved": 1,
        "(unchecked)": 1,
    }
    env = {k: v for k, v in os.environ.items() if k not in {"MYSQL_URL", "REDIS_URL"}}
    env["BLOGFEEDS_DATABASE_URL"] = url
    scrapy = [sys.executable, "-m", "scrapy"]
    done = subprocess.run(
        [*scrapy, "stats", "--json", "--health", "ok,moved"],
        cwd=REPO, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["by_health"] == {"moved": 1, "ok": 1}
    text = subprocess.run(
        [*scrapy, "stats"], cwd=REPO, env=env, capture_output=True, text=True, check=False
    ).stdout
    assert "By health: failing 1, moved 1, ok 1, (unchecked) 1" in text


def test_the_site_shows_health(url: str) -> None:
    data = directory_data(_rows(url), {}, {}, {})
    column = data["columns"].index("health")
    assert {row[0]: row[column] for row in data["rows"]}["cat.example"] == "moved"
    assert "moved_to" in data["columns"]
