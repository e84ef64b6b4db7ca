"""Two scrapyd nodes on loopback share one crawl, run with the commands of docs/cluster.md.

Two ``scrapyd`` processes (free loopback ports, their own data directories, basic auth, the
image's ``docker/scrapyd.conf``) get the egg from ``scrapy cluster deploy``; a seed goes to Redis
with ``scrapy seed``; ``scrapy cluster schedule`` starts ``blogs`` on both nodes and ``feeds`` on
one; once every blog and every entry of a generated loopback web (``tests/blogosphere.py``) is in
MariaDB, ``scrapy cluster cancel --wait`` stops the long-running workers gracefully. Settings
reach the jobs as on a real node: through scrapyd's environment (``REDIS_URL``, ``MYSQL_URL``,
``BLOGFEEDS_REDIS_PREFIX``, ``BLOGFEEDS_WORKER_ID``, the little web's proxy), plus ``-s`` job
settings. Uses its own Redis key prefix and a throwaway database; skips when a server is down.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from blogfeeds.commands.cluster import build_egg
from blogfeeds.frontier.defaults import FrontierKeys
from tests import blogosphere as bs
from tests.littleweb import LittleWeb

N_BLOGS = 200
USER, PASSWORD = "ops", "cluster-test-secret"
NODES = ("node1", "node2")
# The loopback web needs no politeness; the rest are the project's settings.
JOB_SETTINGS = (
    "DOWNLOAD_DELAY=0",
    "AUTOTHROTTLE_ENABLED=False",
    "CONCURRENT_REQUESTS_PER_DOMAIN=8",
    "ROBOTSTXT_OBEY=False",
    "DEPTH_LIMIT=0",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def services(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """``(redis key prefix, MySQL URL)`` of this test, both removed afterwards."""
    pytest.importorskip("pymysql")
    if bs.redis_client() is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    if bs.mariadb_admin() is None:
        pytest.skip("MariaDB unreachable at 127.0.0.1:3306 (.ci/services.sh starts it)")
    with (
        bs.redis_prefix(request.node.name[:30]) as prefix,
        bs.throwaway_database("scrapyd") as url,
    ):
        yield prefix, url


def project_copy(tmp: Path, ports: dict[str, int]) -> Path:
    """The project as a new user checks it out, with one ``[deploy:NAME]`` per node appended to
    its scrapy.cfg (the recipe of docs/cluster.md). Building the egg writes build/ there, not in the
    repo."""
    project = tmp / "project"
    project.mkdir(parents=True)
    for name in ("scrapy.cfg", "setup.py", "pyproject.toml", "README.md"):
        shutil.copy(bs.REPO / name, project / name)
    shutil.copytree(
        bs.REPO / "blogfeeds", project / "blogfeeds", ignore=shutil.ignore_patterns("__pycache__")
    )
    with (project / "scrapy.cfg").open("a", encoding="utf-8") as cfg:
        for name, port in ports.items():
            cfg.write(f"\n[deploy:{name}]\nurl = http://127.0.0.1:{port}\n")
    return project


def start_scrapyd(home: Path, port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """scrapyd as the image runs it: docker/scrapyd.conf, settings from the environment, the
    working directory its data directory (so jobs import the deployed egg, nothing else)."""
    home.mkdir()
    shutil.copy(bs.REPO / "docker" / "scrapyd.conf", home / "scrapyd.conf")
    node_env = {
        **env,
        "SCRAPYD_BIND_ADDRESS": "127.0.0.1",
        "SCRAPYD_HTTP_PORT": str(port),
        "SCRAPYD_USERNAME": USER,
        "SCRAPYD_PASSWORD": PASSWORD,
    }
    with (home / "scrapyd.out").open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "scrapyd"],
            cwd=home,
            env=node_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its jobs join its process group: see stop_scrapyd
        )
    health = [sys.executable, str(bs.REPO / "docker" / "healthcheck.py")]
    deadline = time.monotonic() + 30
    try:
        while subprocess.run(health, env=node_env, check=False).returncode != 0:
            assert proc.poll() is None, (home / "scrapyd.out").read_text("utf-8", "replace")
            assert time.monotonic() < deadline, "scrapyd did not answer within 30 s"
            time.sleep(0.3)
    except BaseException:
        stop_scrapyd(proc)
        raise
    return proc


def stop_scrapyd(proc: subprocess.Popen[bytes]) -> None:
    """Stop scrapyd, then whatever is left of its process group: scrapyd stopped by a signal
    leaves its running jobs behind, orphaned (measured; in a container they die with it)."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def run_scrapy(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def scrapy(project: Path, env: dict[str, str], *args: str) -> str:
    """``scrapy ARGS`` in the project copy; returns stdout, fails the test on a non-zero exit."""
    out = run_scrapy(project, env, *args)
    assert out.returncode == 0, f"scrapy {' '.join(args)}:\n{out.stdout}\n{out.stderr}"
    return out.stdout


def counts(mysql_url: str) -> tuple[Counter[str], int]:
    """Blog ids stored (with multiplicity) and the number of entries."""
    import pymysql

    database = mysql_url.rsplit("/", 1)[1]
    conn = pymysql.connect(**bs.MARIADB, database=database, charset="utf8mb4")
    try:
        with conn.cursor() as cursor:
            try:
                cursor.execute("SELECT blog_id FROM blogs")
                blogs = Counter(row[0] for row in cursor.fetchall())
                cursor.execute("SELECT COUNT(*) FROM entries")
                entries = int(cursor.fetchone()[0])
            except pymysql.err.ProgrammingError:  # tables not created yet
                return Counter(), 0
    finally:
        conn.close()
    return blogs, entries


def job_logs(home: Path, spider: str) -> list[Path]:
    return sorted((home / "logs" / "blogfeeds" / spider).glob("*.log"))


def stat(log_text: str, name: str) -> int:
    found = re.search(rf"'{re.escape(name)}': (\d+)", log_text)
    return int(found.group(1)) if found else 0


# --- without scrapyd ----------------------------------------------------------------------------


def test_the_egg_holds_the_package_data_and_the_settings_entry_point(tmp_path: Path) -> None:
    egg = build_egg(project_copy(tmp_path, {}))  # what scrapyd-deploy --build-egg makes
    with zipfile.ZipFile(egg) as archive:
        names = set(archive.namelist())
        entry_points = archive.read("EGG-INFO/entry_points.txt").decode()
    tables = {f"blogfeeds/data/{p.name}" for p in (bs.REPO / "blogfeeds" / "data").iterdir()}
    assert tables and tables <= names
    assert {"blogfeeds/settings.py", "blogfeeds/spiders/blogs.py"} <= names
    assert not any(n.startswith("tests/") for n in names)
    assert "[scrapy]\nsettings = blogfeeds.settings" in entry_points
    shutil.rmtree(egg.parent)


def test_targets_are_the_named_ones_else_the_default(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRAPYD_")}
    alone = project_copy(tmp_path / "one", {})
    assert scrapy(alone, env, "cluster", "targets").split() == ["default", "http://127.0.0.1:6800"]
    many = project_copy(tmp_path / "many", {"node1": 6801, "node2": 6802})
    assert scrapy(many, env, "cluster", "targets").splitlines() == [
        "node1            http://127.0.0.1:6801",
        "node2            http://127.0.0.1:6802",
    ]
    unknown = run_scrapy(many, env, "cluster", "jobs", "-t", "node3")
    assert unknown.returncode == 2 and "unknown target(s) ['node3']" in unknown.stderr


def test_a_failed_deploy_exits_1_unlike_scrapyd_deploy_all(tmp_path: Path) -> None:
    project = project_copy(tmp_path, {"down": free_port()})  # nothing listens there
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    failed = run_scrapy(project, env, "cluster", "deploy", "-t", "down")
    assert failed.returncode == 1 and "down: deploy failed" in failed.stderr
    scrapyd_deploy = [sys.executable, "-m", "scrapyd_client.deploy", "-a", "-v", "r1"]
    measured = subprocess.run(
        scrapyd_deploy, cwd=project, env=env, capture_output=True, check=False
    )
    assert measured.returncode == 0 and b"Deploy failed" in measured.stderr  # the pitfall


# --- two scrapyd nodes ---------------------------------------------------------------------------


@pytest.mark.services
@pytest.mark.integration
def test_two_scrapyd_nodes_share_one_crawl(services: tuple[str, str], tmp_path: Path) -> None:
    prefix, mysql_url = services
    web = bs.blogosphere(N_BLOGS)
    ports = {name: free_port() for name in NODES}
    project = project_copy(tmp_path, ports)
    nodes: dict[str, subprocess.Popen[bytes]] = {}
    with LittleWeb(web.routes) as served:
        base = served.env()
        for name in ("PYTHONPATH", "BLOGFEEDS_DATABASE_URL", "SCRAPY_SETTINGS_MODULE"):
            base.pop(name, None)
        base.update(REDIS_URL=bs.REDIS_URL, MYSQL_URL=mysql_url, BLOGFEEDS_REDIS_PREFIX=prefix)
        # the operator's shell: scrapyd credentials, no proxy (that is for the crawl jobs)
        ops = {k: v for k, v in base.items() if not k.lower().endswith("_proxy")}
        ops.update(SCRAPYD_USERNAME=USER, SCRAPYD_PASSWORD=PASSWORD)
        try:
            for name, port in ports.items():
                env = {**base, "BLOGFEEDS_WORKER_ID": name}
                nodes[name] = start_scrapyd(tmp_path / name, port, env)
            # Nothing but the deployed egg can provide blogfeeds to a job.
            probe = "import importlib.util as u; print(u.find_spec('blogfeeds'))"
            found = subprocess.run(
                [sys.executable, "-c", probe],
                cwd=tmp_path / "node1",
                env=base,
                capture_output=True,
                text=True,
                check=True,
            )
            assert found.stdout.strip() == "None"

            deployed = scrapy(project, ops, "cluster", "deploy", "-v", "r1")
            assert deployed.splitlines() == [f"{n}: blogfeeds r1, 2 spiders" for n in NODES]
            assert "pushed 1 seeds" in scrapy(project, ops, "seed", bs.home(0))
            settings = [arg for s in JOB_SETTINGS for arg in ("-s", s)]
            started = scrapy(project, ops, "cluster", "schedule", "blogs", *settings)
            assert len(re.findall(r"^node\d: blogs \w+$", started, re.M)) == 2, started
            again = scrapy(project, ops, "cluster", "schedule", "blogs")
            assert again.count("already") == 2, again  # no second worker per node
            scrapy(
                project,
                ops,
                "cluster",
                "schedule",
                "feeds",
                "-t",
                "node1",
                "-a",
                "loop=true",
                *settings,
                "-s",
                "BLOGFEEDS_FEEDS_MAX_SLEEP=1",
            )
            running = scrapy(project, ops, "cluster", "jobs")
            assert len(re.findall(r"(pending|running)", running)) == 3, running

            deadline = time.monotonic() + 90
            blogs, entries = counts(mysql_url)
            while len(blogs) < N_BLOGS or entries < N_BLOGS:
                assert time.monotonic() < deadline, (len(blogs), entries)
                for name, proc in nodes.items():
                    assert proc.poll() is None, f"scrapyd {name} exited"
                time.sleep(1)
                blogs, entries = counts(mysql_url)

            stopped = scrapy(project, ops, "cluster", "cancel", "--wait", "60")
            assert stopped.count("cancelled (running)") == 3, stopped
            finished = scrapy(project, ops, "cluster", "jobs")
            assert finished.count("finished") == 3 and "running" not in finished, finished
        finally:
            for proc in nodes.values():
                stop_scrapyd(proc)

        hits = Counter(hit.url for hit in served.hits())
    # every page of the little web fetched once in total: home pages by the shared frontier, each
    # feed once by discovery (blogs) and once by its first revisit (feeds)
    assert {url: n for url, n in hits.items() if url in set(web.homes) and n != 1} == {}
    assert set(web.homes) <= set(hits)
    assert {url: n for url, n in hits.items() if url.endswith("/feed.xml") and n != 2} == {}
    # besides the routes, only the profile's one /favicon.ico of a page declaring no icon and
    # the abstract's newest post page (the feed gives a summary only), each once
    asides = ("/favicon.ico", "/posts/1/")
    assert {u for u in hits if not u.endswith(asides)} == set(web.routes)
    assert {u: n for u, n in hits.items() if u.endswith("/posts/1/") and n != 1} == {}
    # blogs and entries in MariaDB, each blog once
    assert set(blogs) == web.blog_ids and max(blogs.values()) == 1
    assert entries == N_BLOGS
    # the jobs ended cleanly, by the graceful cancel; between them the two blogs workers
    # dequeued every blog once (how they split it depends on start-up timing: on a loaded
    # machine one node can take all of a small web before the other starts, so not asserted)
    share = []
    for name in NODES:
        logs = job_logs(tmp_path / name, "blogs")
        assert len(logs) == 1
        text = logs[0].read_text("utf-8", "replace")
        # a blog re-pushed at a shorter depth leaves a stale copy, dropped undownloaded
        stale = stat(text, "blogfeeds/frontier/stale_dropped")
        share.append(stat(text, "scheduler/dequeued/redis") - stale)
        assert "Received SIGINT, shutting down gracefully" in text, text[-3000:]
        assert "'finish_reason': 'shutdown'" in text, text[-3000:]
        assert "Traceback" not in text and "] ERROR:" not in text, text[-3000:]
    assert sum(share) == N_BLOGS, share
    (feeds_log,) = job_logs(tmp_path / "node1", "feeds")
    text = feeds_log.read_text("utf-8", "replace")
    assert "'finish_reason': 'shutdown'" in text and "Traceback" not in text, text[-3000:]
    assert stat(text, "blogfeeds/feeds/new_entries") == N_BLOGS
    assert job_logs(tmp_path / "node2", "feeds") == []
    # nothing left in flight in the shared frontier
    redis = bs.redis_client()
    assert redis is not None
    for name in NODES:
        keys = FrontierKeys(prefix, "blogs", name)
        assert redis.hlen(keys.inflight) == 0
    assert redis.zcard(FrontierKeys(prefix, "blogs", "").requests) == 0
    assert (tmp_path / "node1" / "dbs" / "jobs.db").is_file()  # SqliteJobStorage (scrapyd.conf)
