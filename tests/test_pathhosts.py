"""The hosts where a blog under a path was read (blogfeeds.crawl.pathhosts), shared by the
workers of the Redis frontier on the local Redis: what one worker learnt, another admits by."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from blogfeeds.crawl.admission import Admission
from blogfeeds.crawl.caps import DomainCaps
from blogfeeds.crawl.depth import DepthBook
from blogfeeds.crawl.pathhosts import PathHosts, RedisPathHosts
from tests import blogosphere as bs


class Stats(Counter[str]):
    def inc_value(self, key: str) -> None:
        self[key] += 1


@pytest.fixture
def redis_key() -> Iterator[str]:
    if bs.redis_client() is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    with bs.redis_prefix("pathhosts") as prefix:
        yield f"{prefix}blogs:path_hosts"


def test_a_host_learnt_by_one_worker_is_known_to_another(redis_key: str) -> None:
    one, two = (
        Admission(
            Stats(),
            DepthBook(),
            DomainCaps(0),
            path_hosts=RedisPathHosts(bs.redis_client, redis_key),
        )
        for _ in range(2)
    )
    (first,) = one.offer("https://blogs.shared.example/oli/", 1)
    one.under_path(first.blog_id, "blogs.shared.example/oli", 1)
    (pia,) = two.offer("https://blogs.shared.example/pia/", 1)
    assert pia.blog_id == "blogs.shared.example/pia"
    (root,) = two.offer("https://blogs.shared.example/", 1)
    assert root.blog_id == "blogs.shared.example"
    assert "other.example" not in two.path_hosts


def test_an_outage_keeps_what_this_worker_learnt() -> None:
    down = RedisPathHosts(lambda: __import__("redis").Redis(port=1), "x:path_hosts")
    assert "blogs.shared.example" not in down
    down.add("blogs.shared.example")
    assert "blogs.shared.example" in down
    local = PathHosts()
    local.add("a.example")
    assert "a.example" in local and "b.example" not in local
