"""``scrapy inspect``: explains a real blogroll page, from a file and fetched over loopback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.littleweb import LittleWeb

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def _inspect(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "inspect", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_inspect_file_json_explains_a_real_blogroll() -> None:
    proc = _inspect(
        "--file", str(DATA / "pages" / "matery-friends.html"),
        "--url", "https://blinkfox.github.io/friends/", "--json",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    assert data["blog_id"] == "blinkfox.github.io"
    assert data["title"]
    assert data["feeds"], "the page advertises its atom feed"
    assert all(feed["reasons"] for feed in data["feeds"])
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
