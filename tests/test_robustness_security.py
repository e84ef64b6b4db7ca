"""Security checks beyond the SSRF guard: the Redis queue never unpickles, credentials never
reach the log, only http(s) is fetched. (SQL goes only through parameters: hostile text round
trips through SQLite and MariaDB in ``tests/test_storage.py::test_text_round_trips_unchanged``
and ``tests/test_pipelines.py::test_hostile_text_round_trips_unchanged``.)"""

from __future__ import annotations

import json
import logging
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import scrapy
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler

from blogfeeds.extract.directives import crawl_url, strip_credentials
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
        pytest.skip("Redis unreachable at 127.0.0.1:6379 (.ci/services.sh starts it)")
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
