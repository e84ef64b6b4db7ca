"""The tests' own traces in Redis and MariaDB: key prefixes holding glob characters are
cleaned, and :func:`tests.blogosphere.leftovers` (which fails a run that leaves any, in
``tests/conftest.py``) finds what a test process left."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

import tests.blogosphere as bs
from blogfeeds.frontier.defaults import FrontierKeys

pytestmark = pytest.mark.services


@pytest.fixture
def redis() -> Iterator[Any]:
    client = bs.redis_client()
    if client is None:
        pytest.skip(bs.REDIS_UNREACHABLE)
    yield client
    client.close()


def test_a_prefix_with_glob_characters_is_removed_and_only_it(redis: Any) -> None:
    # a parametrized test's name: "[", "]", "*", "?" and "\" are wildcards in a Redis pattern
    with bs.redis_prefix("test_x[sqlite-*?\\]") as prefix:
        redis.set(prefix + "a", 1)
        redis.set(prefix + "b", 1)
        # what the unescaped pattern "…test_x[sqlite-*?\]:*" matches instead
        neighbour = prefix.replace("[sqlite-*?\\]", "s") + "c"
        redis.set(neighbour, 1)
    try:
        assert redis.exists(prefix + "a", prefix + "b") == 0
        assert redis.exists(neighbour) == 1
    finally:
        redis.delete(neighbour)


def test_every_workers_inflight_hash_is_found_under_a_prefix_with_brackets(redis: Any) -> None:
    with bs.redis_prefix("frontier[redis]") as prefix:
        one, other = FrontierKeys(prefix, "blogs", "w1"), FrontierKeys(prefix, "blogs", "w2")
        redis.hset(other.inflight, "1", "x")
        found = {k.decode() for k in redis.scan_iter(match=one.all_inflight)}
        assert found == {other.inflight}


def test_leftovers_name_the_keys_and_databases_of_a_test_process(redis: Any) -> None:
    admin = bs.mariadb_admin()
    if admin is None:
        pytest.skip("MariaDB does not answer at 127.0.0.1:3306")
    pid = 4_000_000 + os.getpid()  # no such process: its traces are this test's alone
    database = f"blogfeeds_test_{pid}_left"
    redis.set(f"bftest:{pid}:left[1]:key", 1)
    with admin.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE {database}")
    try:
        assert bs.leftovers(pid) == [
            f"redis key bftest:{pid}:left[1]:key",
            f"MariaDB database {database}",
        ]
    finally:
        redis.delete(f"bftest:{pid}:left[1]:key")
        with admin.cursor() as cursor:
            cursor.execute(f"DROP DATABASE {database}")
        admin.close()
    assert bs.leftovers(pid) == []


def test_a_killed_runs_keys_are_swept_and_a_running_ones_kept(redis: Any) -> None:
    dead = f"bftest:{4_000_000 + os.getpid()}:killed:key"  # no such process
    alive = f"bftest:{os.getpid()}:running:key"
    redis.set(dead, 1)
    redis.set(alive, 1)
    try:
        assert bs.sweep_dead_runs() >= 1
        assert redis.exists(dead) == 0
        assert redis.exists(alive) == 1
    finally:
        redis.delete(dead, alive)
