"""A generated blogosphere for crawl tests and benchmarks, and the local MariaDB / Redis helpers.

:func:`blogosphere` makes ``n`` hand-made blogs (``http://b0000.example/`` ...), each a one-page
site whose home page names the blog (CJK and emoji in the title, to test utf8mb4), links its RSS
feed and lists a 友情链接 blogroll of friends: blog ``i`` links ``5i+1 … 5i+5`` (mod ``n``) and
two older blogs, so the whole graph is reachable from ``b0000`` in about log5(n) hops and most
blogs are linked several times (duplicates for the dupefilter). Served by
:class:`tests.littleweb.LittleWeb` from in-memory ``body`` routes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blogfeeds.frontier.defaults import glob_escape

REPO = Path(__file__).resolve().parent.parent
MARIADB = {"host": "127.0.0.1", "port": 3306, "user": "root", "password": ""}
REDIS_URL = os.environ.get("BLOGFEEDS_TEST_REDIS_URL") or "redis://127.0.0.1:6379/0"
"""The tests' Redis (``BLOGFEEDS_TEST_REDIS_URL``); every key they write starts ``bftest:``."""
REDIS_UNREACHABLE = f"Redis unreachable at {REDIS_URL} (.ci/services.sh starts it)"
HTML = "text/html; charset=utf-8"


def host(i: int) -> str:
    return f"b{i:04d}.example"


def home(i: int) -> str:
    return f"http://{host(i)}/"


def friends_of(i: int, n: int) -> list[int]:
    """The blogroll of blog ``i``: distinct, never itself."""
    out: list[int] = []
    for k in [*(5 * i + k for k in range(1, 6)), i // 2, (i * 7 + 3) % n]:
        j = k % n
        if j != i and j not in out:
            out.append(j)
    return out


def page(i: int, n: int, friends: list[int] | None = None) -> str:
    """Blog ``i``'s home page; its blogroll lists ``friends`` (default :func:`friends_of`)."""
    items = "\n".join(
        f'  <li class="flink-item"><a href="{home(j)}" target="_blank">朋友 {j} 的博客</a>'
        f"<p>Friend {j}: notes</p></li>"
        for j in (friends_of(i, n) if friends is None else friends)
    )
    return f"""<!DOCTYPE html>
<html lang="zh-CN"><head><meta charset="utf-8">
<title>博客 {i} 🚀 Blog {i}</title>
<meta name="description" content="第 {i} 个博客：代码、读书与旅行 🌏">
<link rel="alternate" type="application/rss+xml" title="Blog {i}" href="/feed.xml">
</head><body>
<main><article><h1>你好 {i}</h1>
<p>这是第 {i} 个博客的第一篇文章，写一些关于爬虫和订阅的笔记。</p></article>
<section><h2>友情链接</h2><ul class="flink-list">
{items}
</ul></section></main>
<footer><p>© 2026 Blog {i}</p></footer>
</body></html>"""


@dataclass
class Blogosphere:
    n: int
    routes: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def homes(self) -> list[str]:
        return [home(i) for i in range(self.n)]

    @property
    def blog_ids(self) -> set[str]:
        return {host(i) for i in range(self.n)}

    def edges(self) -> int:
        return sum(len(friends_of(i, self.n)) for i in range(self.n))


def feed(i: int) -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Blog {i}</title><link>{home(i)}</link>
<description>第 {i} 个博客</description>
<item><title>你好 {i}</title><link>{home(i)}posts/1/</link><guid>{home(i)}posts/1/</guid>
<pubDate>Sun, 29 Nov 2026 08:00:00 GMT</pubDate></item>
</channel></rss>"""


def blogosphere(n: int) -> Blogosphere:
    web = Blogosphere(n)
    for i in range(n):
        web.routes[home(i)] = {"body": page(i, n), "content_type": HTML}
        web.routes[f"{home(i)}feed.xml"] = {
            "body": feed(i),
            "content_type": "application/rss+xml; charset=utf-8",
        }
    return web


def crawl_command(*settings: str, spider: str = "blogs") -> list[str]:
    """``python -m scrapy crawl SPIDER`` tuned for a loopback web (no politeness delays)."""
    base = {
        "DOWNLOAD_DELAY": "0",
        "AUTOTHROTTLE_ENABLED": "False",
        "CONCURRENT_REQUESTS_PER_DOMAIN": "8",
        "ROBOTSTXT_OBEY": "False",
        "DEPTH_LIMIT": "0",
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": "False",
    }
    cmd = [sys.executable, "-m", "scrapy", "crawl", spider]
    for key, value in base.items():
        cmd += ["-s", f"{key}={value}"]
    for setting in settings:
        cmd += ["-s", setting]
    return cmd


def start_worker(cmd: list[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start a crawl process (stdout and stderr to ``log``); the caller waits or kills it."""
    handle = log.open("ab")
    try:
        return subprocess.Popen(
            cmd, cwd=REPO, env=dict(env), stdout=handle, stderr=subprocess.STDOUT
        )
    finally:
        handle.close()


def wait_for(check: Callable[[], bool], seconds: float, what: str) -> None:
    """Poll ``check`` every 0.1 s until it holds; AssertionError naming ``what`` after
    ``seconds``."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(0.1)


# --- services ------------------------------------------------------------------------------------


def mariadb_admin() -> Any:
    """A root connection to the local MariaDB, or None when it is unreachable."""
    import pymysql

    try:
        return pymysql.connect(**MARIADB, charset="utf8mb4", connect_timeout=2, autocommit=True)
    except pymysql.Error:
        return None


@contextmanager
def throwaway_database(suffix: str) -> Iterator[str]:
    """``mysql://root@127.0.0.1:3306/blogfeeds_test_<pid>_<suffix>``, dropped afterwards."""
    admin = mariadb_admin()
    if admin is None:
        raise RuntimeError("MariaDB is unreachable at 127.0.0.1:3306")
    name = f"blogfeeds_test_{os.getpid()}_{suffix}"
    with admin.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {name}")
        cursor.execute(f"CREATE DATABASE {name} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    try:
        yield f"mysql://root@127.0.0.1:3306/{name}"
    finally:
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.close()


def redis_client() -> Any:
    """A client of the local Redis, or None when it is unreachable."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError:
        return None
    return client


@contextmanager
def redis_prefix(name: str) -> Iterator[str]:
    """A key prefix of our own (``bftest:<pid>:<name>:``); its keys are deleted afterwards."""
    prefix = f"bftest:{os.getpid()}:{name}:"
    client = redis_client()
    if client is None:
        raise RuntimeError(REDIS_UNREACHABLE)
    try:
        yield prefix
    finally:
        keys = list(client.scan_iter(match=glob_escape(prefix) + "*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()


def sweep_dead_runs() -> int:
    """Delete the Redis keys of test processes that no longer run (``bftest:<pid>:``): a run
    killed before its prefixes' cleanup leaves them, and the next run's check of what it left
    (``conftest.pytest_sessionfinish``) reads only its own pid. Returns the keys deleted."""
    client = redis_client()
    if client is None:
        return 0
    dead: list[bytes] = []
    try:
        for key in client.scan_iter(match="bftest:*", count=1000):
            pid = key.split(b":", 2)[1]
            if pid.isdigit() and not _running(int(pid)):
                dead.append(key)
        if dead:
            client.delete(*dead)
    finally:
        client.close()
    return len(dead)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def leftovers(pid: int | None = None) -> list[str]:
    """What test process ``pid`` (default this one) left in the local services: Redis keys
    under ``bftest:<pid>:`` and MariaDB databases named ``blogfeeds_…_<pid>[_…]``."""
    pid = os.getpid() if pid is None else pid
    found: list[str] = []
    client = redis_client()
    if client is not None:
        match = glob_escape(f"bftest:{pid}:") + "*"
        found += sorted(f"redis key {k.decode()}" for k in client.scan_iter(match=match))
        client.close()
    admin = mariadb_admin()
    if admin is not None:
        with admin.cursor() as cursor:
            cursor.execute("SHOW DATABASES LIKE 'blogfeeds%'")
            names = [row[0] for row in cursor.fetchall()]
        admin.close()
        mine = re.compile(rf"blogfeeds_\w*?_{pid}(_\w*)?")
        found += [f"MariaDB database {n}" for n in sorted(names) if mine.fullmatch(n)]
    return found
