"""The bounded seen-set (blogfeeds/crawl/seen.py): exact for the last `capacity` keys, memory
bounded."""

from __future__ import annotations

from blogfeeds.crawl.seen import SeenSet


def test_unbounded_is_a_set() -> None:
    seen = SeenSet()
    for i in range(10_000):
        seen.add(i)
    assert len(seen) == 10_000 and all(i in seen for i in range(10_000))
    assert seen.forgotten == 0


def test_keeps_at_least_the_last_capacity_keys_and_at_most_twice() -> None:
    seen = SeenSet(100)
    for i in range(1_000):
        seen.add(i)
        assert len(seen) < 200
        assert all(k in seen for k in range(max(0, i - 99), i + 1))
    assert 0 not in seen
    assert seen.added == 1_000
    assert seen.forgotten + len(seen) == 1_000


def test_a_key_added_again_is_refreshed_not_counted_twice() -> None:
    seen = SeenSet(3)
    for key in "abc":  # rotation: a, b, c move to the old generation
        seen.add(key)
    seen.add("a")  # refreshed into the new generation
    for key in "de":
        seen.add(key)
    seen.add("f")  # the rotation at "e" forgot b and c and kept a (refreshed)
    assert "a" in seen and "b" not in seen and "c" not in seen
    assert seen.added == 6
