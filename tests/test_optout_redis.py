"""Opt-out on two Redis workers sharing a MariaDB database: ``scrapy optout`` run while they
wait for work reaches both without a restart (they read the file again when it changes), and
their re-crawl of a stored blogosphere requests nothing of the blogs it names and stores none
of them again. Own key prefixes and database, deleted afterwards; skips when a server is down.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import blogosphere as bs
from tests.littleweb import LittleWeb
from tests.test_optout_crawl import stored_text

pytestmark = pytest.mark.services

N_BLOGS = 400
GONE = [3, 7, 11, 20, 42]
NAMED = ["b0003.example", "http://b0007.example/", "http://www.b0011.example/",
         "b0020.example/", "http://B0042.example/feed.xml"]  # fmt: skip
"""The five blogs, as ``scrapy optout`` is given them: hosts, home pages, a feed's address."""


@pytest.fixture
def mysql_url() -> Iterator[str]:
    pytest.importorskip("pymysql")
    if bs.redis_client() is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    if bs.mariadb_admin() is None:
        pytest.skip("MariaDB unreachable at 127.0.0.1:3306 (.ci/services.sh starts it)")
    with bs.throwaway_database("optout_redis") as url:
        yield url


def workers(
    web: LittleWeb, prefix: str, url: str, listed: Path, *, tmp: Path, run: str
) -> tuple[dict[str, str], list[tuple[subprocess.Popen[bytes], Path]]]:
    env = web.env()
    env.update(
        REDIS_URL=bs.REDIS_URL, BLOGFEEDS_REDIS_PREFIX=prefix, MYSQL_URL=url,
        BLOGFEEDS_OPT_OUT=str(listed),
    )  # fmt: skip
    env.pop("BLOGFEEDS_DATABASE_URL", None)
    started = []
    for name in (f"{run}1", f"{run}2"):
        cmd = bs.crawl_command(
            f"BLOGFEEDS_WORKER_ID={name}",
            "BLOGFEEDS_WORKER_TTL=3",
            "MAX_IDLE_TIME_BEFORE_CLOSE=10",  # they wait for the commands run meanwhile
            "BLOGFEEDS_OPT_OUT_CHECK=0.2",
            "ROBOTSTXT_OBEY=True",
            f"BLOGFEEDS_SPOOL_PATH={tmp / f'spool-{name}.jsonl'}",
        )
        log = tmp / f"{name}.log"
        started.append((bs.start_worker(cmd, env, log), log))
    for _, log in started:
        bs.wait_for(lambda log=log: "Spider opened" in log.read_text("utf-8", "replace"), 60,
                    f"{log.name} to open")  # fmt: skip
    return env, started


def command(env: dict[str, str], *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=bs.REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def finish(started: list[tuple[subprocess.Popen[bytes], Path]]) -> list[str]:
    logs = []
    for proc, log in started:
        assert proc.wait(timeout=300) == 0, log.read_text("utf-8", "replace")[-3000:]
        text = log.read_text("utf-8", "replace")
        assert "Traceback" not in text, text[-3000:]
        assert "'finish_reason': 'finished'" in text, text[-3000:]
        logs.append(text)
    return logs


def test_optout_reaches_running_workers_and_their_recrawl(mysql_url: str, tmp_path: Path) -> None:
    web = bs.blogosphere(N_BLOGS)
    listed = tmp_path / "opt-out.txt"
    listed.write_text("# owners who asked to be left out\n", encoding="utf-8")
    gone_hosts = {bs.host(i) for i in GONE}
    with LittleWeb(web.routes) as served, bs.redis_prefix("optout-a") as first:
        env, started = workers(served, first, mysql_url, listed, tmp=tmp_path, run="a")
        command(env, "seed", bs.home(0))
        finish(started)
        before = stored_text(mysql_url)
        assert all(host in before for host in gone_hosts)  # stored, linked: reachable
        asked = Counter(h.url.split("/")[2] for h in served.hits())
        assert gone_hosts <= set(asked)

    with LittleWeb(web.routes) as served, bs.redis_prefix("optout-b") as second:
        env, started = workers(served, second, mysql_url, listed, tmp=tmp_path, run="b")
        # while both workers wait for work; it waits as long as they take to read the list
        removed = command(env, "optout", "-s", "BLOGFEEDS_OPT_OUT_CHECK=0.2", *NAMED)
        command(env, "seed", bs.home(0))  # a fresh frontier: every blog is crawled again
        logs = finish(started)
        asked = Counter(h.url.split("/")[2] for h in served.hits())
        after = stored_text(mysql_url)
    assert [host for host in gone_hosts if host not in removed] == [], removed
    assert "friend_links " in removed
    assert gone_hosts & set(asked) == set()
    assert f"www.{bs.host(11)}" not in asked
    assert [host for host in gone_hosts if host in after] == []
    kept = {bs.host(i) for i in range(N_BLOGS) if i not in GONE}
    assert len(kept & set(asked)) > len(kept) * 0.9  # the rest was re-crawled
    # each worker that took work read the file again without a restart (the list is read when
    # used); which of them takes the re-crawl's blogs is the scheduler's, and on a loaded
    # machine one may take them all
    working = [text for text in logs if re.search(r"'scheduler/dequeued/redis': [1-9]", text)]
    assert working
    for text in working:
        assert re.search(r"Opt-out list \S+ read again: 5 blogs", text)
        assert "'blogfeeds/opt_out/friend_link': " in text
