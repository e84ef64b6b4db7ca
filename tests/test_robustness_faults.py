"""Faults on real servers: Redis restarted mid-crawl, MariaDB down for 30 s mid-crawl.

Each test starts its *own* server on an ephemeral loopback port with a data directory in the
test's tmp folder (Redis with AOF persistence, MariaDB from ``mariadb-install-db``), so the shared
servers on 6379/3306 that other tests use are never touched. The crawl is ``scrapy crawl blogs``
over the generated blogosphere of ``tests/blogosphere.py``, slowed by a per-page delay so that
the fault lands mid-crawl. Skipped when the server binaries are missing.
"""

from __future__ import annotations

import shutil
import socket
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests import blogosphere as bs
from tests.littleweb import LittleWeb

pytestmark = [pytest.mark.services, pytest.mark.integration]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def slow_blogosphere(n: int, delay: float) -> bs.Blogosphere:
    sphere = bs.blogosphere(n)
    for url, route in sphere.routes.items():
        if not url.endswith("feed.xml"):
            route["delay"] = delay
    return sphere


# --- Redis --------------------------------------------------------------------------------------


class PrivateRedis:
    """``redis-server`` with AOF (fsync always) on a free port, data in ``directory``."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.port = free_port()

    def _cli(self, *args: str) -> str:
        out = subprocess.run(
            ["redis-cli", "-p", str(self.port), *args], capture_output=True, text=True, check=False
        )
        return out.stdout.strip()

    def start(self) -> None:
        subprocess.run(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--daemonize", "yes", "--appendonly", "yes", "--appendfsync", "always"),
                *("--save", "", "--dir", str(self.directory)),
                *("--pidfile", str(self.directory / "redis.pid")),
                *("--logfile", str(self.directory / "redis.log")),
            ],
            check=True,
        )
        bs.wait_for(lambda: self._cli("ping") == "PONG", 30, "redis-server to answer")

    def restart(self, down: float) -> None:
        self._cli("shutdown")  # AOF persistence: the queue survives
        bs.wait_for(lambda: self._cli("ping") != "PONG", 30, "redis-server to stop")
        time.sleep(down)
        self.start()

    def stop(self) -> None:
        self._cli("shutdown", "nosave")


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        pytest.skip("redis-server is not installed")
    server = PrivateRedis(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def stored_ids(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("SELECT blog_id FROM blogs")}


def crawl_through_a_redis_fault(
    redis: PrivateRedis, tmp_path: Path, fault: Callable[[], None], *settings: str
) -> tuple[int, set[str], set[str], str]:
    """A 200-blog crawl by one Redis worker, ``fault()`` 6 s in; once that run has ended (and
    Redis is up again), the same worker id once more. Returns the first run's exit status, the
    blogs stored after it, every blog of the web and the first run's log."""
    sphere = slow_blogosphere(200, delay=0.15)
    db = tmp_path / "blogs.sqlite3"
    with LittleWeb(sphere.routes) as web:
        env = web.env()
        env.update(
            REDIS_URL=f"redis://127.0.0.1:{redis.port}/0",
            BLOGFEEDS_DATABASE_URL=f"sqlite:///{db}",
            BLOGFEEDS_WORKER_ID="faults",
        )
        cmd = bs.crawl_command(
            "CONCURRENT_REQUESTS=4",
            "MAX_IDLE_TIME_BEFORE_CLOSE=3",
            f"BLOGFEEDS_SPOOL_PATH={tmp_path / 'spool.jsonl'}",
            *settings,
        )
        first = bs.start_worker([*cmd, "-a", f"start_urls={bs.home(0)}"], env, tmp_path / "1.log")
        time.sleep(6)
        assert first.poll() is None, "the crawl ended before the fault"
        try:
            fault()
            status = first.wait(timeout=300)
        finally:
            if redis._cli("ping") != "PONG":
                redis.start()
        after_fault = stored_ids(db)
        # the same worker again: it re-queues what was left in flight
        second = bs.start_worker(cmd, env, tmp_path / "2.log")
        assert second.wait(timeout=300) == 0
    assert stored_ids(db) == sphere.blog_ids  # nothing is lost
    return status, after_fault, sphere.blog_ids, (tmp_path / "1.log").read_text("utf-8")


def test_redis_restart_mid_crawl_loses_nothing(private_redis: PrivateRedis, tmp_path: Path) -> None:
    """Redis restarted mid-crawl (3 s down): one line for the outage, none per failed call;
    requests made meanwhile are held and queued when Redis is back, so the crawl goes on; what
    is still left in flight in Redis (a pop whose reply was lost) the next run re-queues."""
    status, after_fault, blogs, log = crawl_through_a_redis_fault(
        private_redis, tmp_path, lambda: private_redis.restart(down=3)
    )
    assert status == 0
    assert log.count("Redis unreachable (") == 1 and "Redis reachable again after" in log
    assert "Traceback" not in log
    print(f"stored after the outage: {len(after_fault)} of {len(blogs)}")
    assert len(after_fault) > len(blogs) // 2


def test_redis_down_past_the_limit_stops_the_crawl_and_a_restart_finishes_it(
    private_redis: PrivateRedis, tmp_path: Path
) -> None:
    """Redis gone for longer than ``BLOGFEEDS_REDIS_DOWN_LIMIT``: the worker reports the outage
    in one line, stops with finish reason ``redis_down`` (exit status 1) instead of idling to a
    "finished" exit 0, and once Redis is back the same worker id re-queues what was in flight
    and stores every blog."""
    status, _, _, log = crawl_through_a_redis_fault(
        private_redis,
        tmp_path,
        lambda: private_redis._cli("shutdown"),  # AOF persistence: the queue survives
        "BLOGFEEDS_REDIS_DOWN_LIMIT=4",
    )
    assert status == 1
    assert "'finish_reason': 'redis_down'" in log and "Traceback" not in log, log[-3000:]
    assert log.count("Redis unreachable (") == 1


# --- MariaDB ------------------------------------------------------------------------------------


class PrivateMariaDB:
    """``mariadbd`` on a free port, data directory made by ``mariadb-install-db``."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.data = directory / "data"
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def install(self) -> None:
        shutil.chown(self.directory, "mysql", "mysql")
        subprocess.run(
            [
                *("mariadb-install-db", "--no-defaults", f"--datadir={self.data}", "--user=mysql"),
                *("--auth-root-authentication-method=normal", "--skip-test-db"),
            ],
            capture_output=True,
            check=True,
        )

    def _ping(self) -> bool:
        return (
            subprocess.run(
                ["mysqladmin", "-h", "127.0.0.1", "-P", str(self.port), "-u", "root", "ping"],
                capture_output=True,
                check=False,
            ).returncode
            == 0
        )

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *("/usr/sbin/mariadbd", "--no-defaults", f"--datadir={self.data}", "--user=mysql"),
                *("--bind-address=127.0.0.1", f"--port={self.port}"),
                *(f"--socket={self.directory / 'mysqld.sock'}", "--skip-log-bin"),
                *("--innodb-buffer-pool-size=32M", f"--log-error={self.directory / 'error.log'}"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        bs.wait_for(self._ping, 60, "mariadbd to answer")

    def stop(self) -> None:
        subprocess.run(
            ["mysqladmin", "-h", "127.0.0.1", "-P", str(self.port), "-u", "root", "shutdown"],
            capture_output=True,
            check=False,
        )
        if self.process is not None:
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None


@pytest.fixture
def private_mariadb() -> Iterator[PrivateMariaDB]:
    pytest.importorskip("pymysql")
    if shutil.which("mariadb-install-db") is None or not Path("/usr/sbin/mariadbd").exists():
        pytest.skip("MariaDB server binaries are not installed")
    # mariadbd runs as mysql, which cannot enter pytest's private tmp folders
    server = PrivateMariaDB(Path(tempfile.mkdtemp(prefix="blogfeeds-mariadb-")))
    try:
        server.install()
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.directory, ignore_errors=True)


def mysql_ids(port: int) -> set[str]:
    import pymysql

    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", database="bf")
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT blog_id FROM blogs")
            return {row[0] for row in cursor.fetchall()}
    finally:
        conn.close()


def test_mariadb_down_30_s_mid_crawl_holds_items(
    private_mariadb: PrivateMariaDB, tmp_path: Path
) -> None:
    import pymysql

    admin = pymysql.connect(host="127.0.0.1", port=private_mariadb.port, user="root")
    with admin.cursor() as cursor:
        cursor.execute("CREATE DATABASE bf CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    admin.close()
    sphere = slow_blogosphere(120, delay=0.5)
    spool = tmp_path / "spool.jsonl"
    with LittleWeb(sphere.routes) as web:
        env = web.env()
        env["MYSQL_URL"] = f"mysql://root@127.0.0.1:{private_mariadb.port}/bf"
        cmd = bs.crawl_command(
            "CONCURRENT_REQUESTS=2", f"BLOGFEEDS_SPOOL_PATH={spool}", "BLOGFEEDS_DB_DOWN_LIMIT=90"
        )
        crawl = bs.start_worker([*cmd, "-a", f"start_urls={bs.home(0)}"], env, tmp_path / "c.log")
        try:
            time.sleep(5)
            assert crawl.poll() is None, "the crawl ended before the fault"
            private_mariadb.stop()
            time.sleep(30)
            assert crawl.poll() is None, "the crawl died while the database was down"
        finally:
            if private_mariadb.process is None:
                private_mariadb.start()
        assert crawl.wait(timeout=300) == 0
    assert mysql_ids(private_mariadb.port) == sphere.blog_ids
    assert not spool.exists() or not spool.read_text("utf-8").strip()
