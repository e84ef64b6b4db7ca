"""Security checks beyond the SSRF guard: the Redis queue never unpickles and rebuilds only the
requests this project writes, credentials never reach the log, only http(s) is fetched. (SQL
goes only through parameters: hostile text round trips through SQLite and MariaDB in
``tests/test_storage.py::test_text_round_trips_unchanged`` and
``tests/test_pipelines.py::test_hostile_text_round_trips_unchanged``.)"""

from __future__ import annotations

import json
import logging
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import scrapy
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler

from blogfeeds.crawl.urls import crawl_url, strip_credentials
from blogfeeds.frontier.defaults import FrontierKeys
from blogfeeds.frontier.scheduler import Scheduler
from blogfeeds.frontier.spiders import RedisFrontierMixin
from blogfeeds.middlewares.limits import RedactCredentials, redact_credentials
from tests.littleweb import LittleWeb
from tests.robustness import REPO, crawl_blogs


class _Touch:
    """A pickle payload that creates ``path`` when unpickled."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.touch, (self.path,))


def _project_serializer(redis_url: str) -> str:
    env = {**os.environ, "REDIS_URL": redis_url}
    code = "from blogfeeds import settings as s; print(s.SCHEDULER_SERIALIZER)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_project_request_serializer_is_not_pickle() -> None:
    path = _project_serializer("redis://127.0.0.1:6379/0")
    serializer = load_object(path)
    assert serializer is not pickle
    data = serializer.dumps({"url": "https://b.example/", "meta": {"n": 1}})
    assert data.startswith(b"{")


def test_a_pickle_payload_is_refused_without_running(tmp_path: Path) -> None:
    serializer = load_object(_project_serializer("redis://127.0.0.1:6379/0"))
    marker = tmp_path / "owned"
    with pytest.raises((ValueError, UnicodeDecodeError)):
        serializer.loads(pickle.dumps(_Touch(marker)))
    assert not marker.exists()


class _Spider(scrapy.Spider):
    name = "sec"


@pytest.mark.services
def test_a_pickle_pushed_into_the_redis_queue_is_quarantined(tmp_path: Path) -> None:
    from tests import blogosphere as bs

    client = bs.redis_client()
    if client is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    from blogfeeds.frontier.defaults import FrontierKeys
    from blogfeeds.frontier.scheduler import Scheduler

    marker = tmp_path / "owned"
    with bs.redis_prefix("pickle") as prefix:
        crawler = get_crawler(
            _Spider,
            settings_dict={
                "REDIS_URL": bs.REDIS_URL,
                "SCHEDULER": "blogfeeds.frontier.scheduler.Scheduler",
                "DUPEFILTER_CLASS": "blogfeeds.frontier.dupefilter.RFPDupeFilter",
                "SCHEDULER_SERIALIZER": _project_serializer(bs.REDIS_URL),
                "SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.PriorityQueue",
                "BLOGFEEDS_REDIS_PREFIX": prefix,
                "BLOGFEEDS_WORKER_ID": "sec",
            },
        )
        spider = _Spider.from_crawler(crawler)
        sched = Scheduler.from_crawler(crawler)
        sched.open(spider)
        keys = FrontierKeys(prefix, spider.name, "sec")
        client.zadd(keys.requests, {pickle.dumps(_Touch(marker)): 0})
        assert sched.next_request() is None
        assert not marker.exists()
        assert client.llen(keys.bad) == 1
        sched.close("finished")
    client.close()


class _FrontierSpider(RedisFrontierMixin, scrapy.Spider):
    name = "hostile"

    def parse_home(self, response: Any) -> None:
        pass

    def home_failed(self, failure: Any) -> None:
        pass


@contextmanager
def _frontier(name: str) -> Iterator[tuple[Any, Any, Any, Any]]:
    """(Redis client, crawler, spider, keys) of a frontier under a private prefix; the
    scheduler is ``crawler.sched``, opened by the caller."""
    from tests import blogosphere as bs

    client = bs.redis_client()
    if client is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    with bs.redis_prefix(name) as prefix:
        crawler = get_crawler(
            _FrontierSpider,
            settings_dict={
                "REDIS_URL": bs.REDIS_URL,
                "SCHEDULER": "blogfeeds.frontier.scheduler.Scheduler",
                "DUPEFILTER_CLASS": "blogfeeds.frontier.dupefilter.RFPDupeFilter",
                "SCHEDULER_SERIALIZER": _project_serializer(bs.REDIS_URL),
                "SCHEDULER_QUEUE_CLASS": "scrapy_redis.queue.PriorityQueue",
                "BLOGFEEDS_REDIS_PREFIX": prefix,
                "BLOGFEEDS_WORKER_ID": "w",
                "BLOGFEEDS_WORKER_TTL": 0.5,
            },
        )
        spider = _FrontierSpider.from_crawler(crawler)
        crawler.sched = Scheduler.from_crawler(crawler)
        try:
            yield client, crawler, spider, FrontierKeys(prefix, spider.name, "w")
        finally:
            client.close()


def _entry(**fields: Any) -> bytes:
    return json.dumps({"url": "https://b.example/", **fields}).encode()


@pytest.mark.services
def test_hostile_queue_entries_are_quarantined_never_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry's ``_class`` was imported (running the module's code), a Response class
    crashed the scheduler with the entry left in flight, and every meta key passed (a loopback
    ``proxy``, ``download_maxsize: 0``). Only what the project writes is rebuilt; the rest goes
    to the ``bad`` list, counted by kind, and the next entry is served."""
    marker = tmp_path / "imported"
    (tmp_path / "hostile_module.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).touch()\nclass R: pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    hostile = [
        _entry(_class="hostile_module.R"),
        _entry(_class="scrapy.http.Response"),
        _entry(meta={"download_maxsize": 0}),
        _entry(meta={"depth": "0; drop"}),
        _entry(callback="crawler"),
        _entry(callback="start"),
        _entry(callback="seed_request"),  # the frontier mixin's, not the spider's
        _entry(errback="__init__"),
        _entry(cb_kwargs={"x": 1}),
        _entry(method="POST"),
        b'{"url": "https://b.example/", "meta": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b"[1, 2]",
    ]
    with _frontier("hostile") as (client, crawler, spider, keys):
        sched = crawler.sched
        sched.open(spider)
        for i, data in enumerate(hostile):
            client.zadd(keys.requests, {data: -10 + i})
        good = {
            "meta": {"blog_id": "b.example", "depth": 2, "proxy": "http://127.0.0.1:9"},
            "callback": "parse_home",
            "errback": "home_failed",
            "headers": {"$d": [[{"$b": "Proxy-Authorization"}, [{"$b": "Basic eA=="}]]]},
        }
        client.zadd(keys.requests, {_entry(**good): 5})
        served = [sched.next_request() for _ in range(len(hostile) + 1)]
        request = served[-1]
        assert served[:-1] == [None] * len(hostile)
        assert not marker.exists()
        assert "hostile_module" not in sys.modules
        assert type(request) is scrapy.Request
        assert request.callback == spider.parse_home and request.errback == spider.home_failed
        assert "proxy" not in request.meta  # this worker's environment chooses its proxy
        assert b"Proxy-Authorization" not in request.headers
        assert request.meta["depth"] == 2
        assert client.llen(keys.bad) == len(hostile)
        assert client.hlen(keys.inflight) == 1  # only the good request, until acknowledged
        stats = crawler.stats.get_stats()
        assert stats["frontier/bad_request"] == len(hostile)
        assert stats["frontier/quarantined/class"] == 2
        assert stats["frontier/quarantined/meta"] == 2
        assert stats["frontier/quarantined/callback"] == 4
        assert stats["frontier/quarantined/RecursionError"] == 1
        sched.close("finished")


@pytest.mark.services
def test_a_hostile_entry_left_in_flight_is_quarantined_at_restart() -> None:
    """A bad entry in a killed worker's in-flight hash was put back in the queue at every
    restart (and crashed the scheduler again): recovery quarantines it and re-queues the rest."""
    with _frontier("hostile-inflight") as (client, crawler, spider, keys):
        client.hset(
            keys.inflight,
            mapping={"1": _entry(_class="scrapy.http.Response"), "2": _entry(priority=3)},
        )
        sched = crawler.sched
        sched.open(spider)
        assert client.hlen(keys.inflight) == 0
        assert client.lrange(keys.bad, 0, -1) == [_entry(_class="scrapy.http.Response")]
        [requeued] = client.zrange(keys.requests, 0, -1)
        assert json.loads(requeued)["url"] == "https://b.example/"
        assert crawler.stats.get_value("frontier/quarantined/class") == 1
        request = sched.next_request()
        assert request is not None and request.priority == 3
        assert request.meta["frontier_recovered"] is True
        sched.close("finished")


@pytest.mark.services
def test_a_seed_nested_deep_or_with_foreign_meta_is_quarantined() -> None:
    """A seed nested 100,000 deep raised RecursionError out of the spider: the worker stopped
    with ``start_error`` at every restart, the seed still in flight. Any seed that cannot be
    read is moved to ``bad`` and the next one is served."""
    with _frontier("hostile-seeds") as (client, crawler, spider, keys):
        sched = crawler.sched
        sched.open(spider)
        seeds = [
            b'{"url": "https://a.example/", "meta": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            json.dumps({"url": "https://b.example/", "meta": {"download_maxsize": 0}}),
            json.dumps({"url": "https://c.example/", "meta": {"seed_title": "C", "proxy": "x"}}),
        ]
        client.rpush(keys.start_urls, *seeds)
        popped = sched.pop_seeds(10)
        requests = [spider._seed_to_request(sched, lease, data) for lease, data in popped]
        assert requests[:2] == [None, None]
        assert requests[2] is not None and requests[2].url == "https://c.example/"
        assert requests[2].meta == {"seed_title": "C", "frontier_lease": popped[2][0]}
        assert client.llen(keys.bad) == 2
        assert client.hlen(keys.inflight) == 1  # the good seed's, until its request is queued
        assert crawler.stats.get_value("frontier/bad_seed") == 2
        sched.close("finished")


def test_credentials_are_redacted_from_log_messages() -> None:
    assert redact_credentials("GET https://bob:s3cret@b.example/x") == (
        "GET https://bob:***@b.example/x"
    )
    assert redact_credentials("mysql://root:pw@127.0.0.1/db, redis://:pw@h:6379/0") == (
        "mysql://root:***@127.0.0.1/db, redis://:***@h:6379/0"
    )
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "Crawled <GET %s>", None, None)
    record.args = ("http://u:pass@a.example/",)
    assert RedactCredentials().filter(record)
    assert record.getMessage() == "Crawled <GET http://u:***@a.example/>"


def test_scheduled_urls_carry_no_credentials() -> None:
    assert strip_credentials("https://u:p@a.example:8443/x?q#f") == "https://a.example:8443/x?q#f"
    assert crawl_url("http://u:p@a.example/") == "http://a.example/"


@pytest.mark.integration
def test_a_seed_with_credentials_never_reaches_the_log_or_the_wire(tmp_path: Path) -> None:
    page = "<html><head><title>Hub</title></head><body><p>hello</p></body></html>"
    with LittleWeb({"http://hub.example/": {"body": page}}) as web:
        run = crawl_blogs(web, ["http://alice:s3cret-pw@hub.example/"], tmp_path)
        sent = [h.headers for h in web.hits()]
    assert run.returncode == 0, run.log[-2000:]
    assert "http://hub.example/" in run.hits
    assert "s3cret-pw" not in run.log
    assert not [h for h in sent if "Authorization" in h or "s3cret" in json.dumps(h)]
    assert run.blogs["hub.example"]["url"] == "http://hub.example/"
