"""Feed-side storage (blogfeeds.storage.feedstore) against real databases: SQLite files and,
when reachable, the local MariaDB (marked ``services``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from blogfeeds.extract.feedreader import FeedEntry
from blogfeeds.items import Blog, FeedFetch, FeedInfo, FriendLink
from blogfeeds.revisit import FeedState, LevelPolicy
from blogfeeds.storage.feedstore import (
    LEASE_MINUTES,
    FeedStore,
    iso,
    iso_minutes,
    state_from_json,
    state_to_json,
)
from tests.test_storage import mariadb_url

T0 = iso_minutes("2024-03-04T00:00:00Z")


@pytest.fixture(params=["sqlite", pytest.param("mariadb", marks=pytest.mark.services)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'feeds.sqlite3'}"
    else:
        yield from mariadb_url("blogfeeds_feedstore")


@pytest.fixture
def store(url: str) -> Iterator[FeedStore]:
    with FeedStore.open(url) as opened:
        yield opened


def blog(blog_id: str, feed: str, *others: str) -> Blog:
    return Blog(
        blog_id=blog_id,
        url=f"https://{blog_id}/",
        feed_url=feed,
        feeds=[FeedInfo(u, "application/rss+xml") for u in (feed, *others)],
        fetched_at="2024-03-01T00:00:00Z",
    )


def fetch(url: str, state: FeedState, **fields: object) -> FeedFetch:
    base = FeedFetch(
        feed_url=url,
        fetched_at=iso(state.last_fetch or T0),
        status="ok",
        http_status=200,
        state=asdict(state),
        level=2,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def entry(feed_url: str, guid: str) -> FeedEntry:
    return FeedEntry(key=guid, key_source="id", link=f"{feed_url}#{guid}", title=f"t {guid}")


def test_sync_feeds_schedules_main_feeds_once_due_now(store: FeedStore) -> None:
    store.write(
        [
            blog("a.example", "https://a.example/feed", "https://a.example/comments/feed"),
            blog("b.example", "https://b.example/rss.xml"),
            blog("c.example", "https://b.example/rss.xml"),  # the same feed listed twice
        ],
        [],
    )
    assert store.sync_feeds(T0) == 2
    assert store.sync_feeds(T0 + 5) == 0
    rows = {r["feed_url"]: r for r in store.schedule()}
    assert sorted(rows) == ["https://a.example/feed", "https://b.example/rss.xml"]
    assert {r["next_due"] for r in rows.values()} == {"2024-03-04T00:00:00Z"}
    assert {r["status"] for r in rows.values()} == {"new"}
    assert all(r["state"] is None and r["level"] == 0 for r in rows.values())


def test_auto_rank_counts_distinct_linking_blogs(store: FeedStore) -> None:
    store.write([blog("pop.example", "https://pop.example/feed")], [])
    links = [FriendLink(f"fan{i}.example", "https://pop.example/", "pop.example") for i in range(5)]
    links.append(FriendLink("pop.example", "https://pop.example/", "pop.example"))  # self
    store.write([], links)
    store.sync_feeds(T0, rank="auto")
    (row,) = store.schedule()
    assert row["rank_score"] == 2  # 5 other blogs: thresholds 2 and 5 reached
    assert store.set_rank("https://pop.example/feed", 4)
    assert store.set_rank("https://pop.example/feed", 4)  # unchanged (MySQL: 0 rows changed)
    assert store.schedule()[0]["rank_score"] == 4
    assert not store.set_rank("https://nowhere.example/feed", 1)
    with pytest.raises(ValueError, match=r"0\.\.5"):
        store.set_rank("https://pop.example/feed", 6)


def test_claim_due_leases_each_row_to_one_owner(store: FeedStore) -> None:
    for i in range(5):
        store.add_feed(f"https://f{i}.example/feed", T0 + i, rank=1)
    store.add_feed("https://later.example/feed", T0 + 60)
    first = store.claim_due(T0 + 10, 3, "w1")
    assert [c.url for c in first] == [f"https://f{i}.example/feed" for i in range(3)]
    assert {c.rank for c in first} == {1} and all(c.state is None for c in first)
    second = store.claim_due(T0 + 10, 10, "w2")
    assert [c.url for c in second] == ["https://f3.example/feed", "https://f4.example/feed"]
    assert store.claim_due(T0 + 10, 10, "w3") == []  # all leased, "later" not due
    # a lease expires (a crashed worker): its rows come back to anyone
    again = store.claim_due(T0 + 10 + 31, 10, "w3")
    assert {c.url for c in again} >= {c.url for c in first}
    assert store.release("w3") == len(again)
    # forcing one feed claims it whether due or not, but never a leased one
    assert [c.url for c in store.claim_due(T0, 5, "w4", urls=["https://later.example/feed"])] == [
        "https://later.example/feed"
    ]
    assert store.claim_due(T0, 5, "w5", urls=["https://later.example/feed"]) == []
    assert store.next_due(T0 + 10) == T0  # f0 is free again (released) and earliest


def test_a_claim_takes_what_was_due_by_then_and_leases_from_now(store: FeedStore) -> None:
    """A run that fetches what was due when it started claims with ``due_by`` = its start; 40
    minutes in, its leases still run 30 minutes from the claim, so no other worker takes the
    batch (they once ran from the start: expired the moment they were written)."""
    store.add_feed("https://early.example/feed", T0 - 1)
    store.add_feed("https://since.example/feed", T0 + 10)  # came due after the run started
    (claim,) = store.claim_due(T0 + 40, 10, "run", due_by=T0)
    assert claim.url == "https://early.example/feed"
    rows = {r["feed_url"]: r for r in store.schedule()}
    assert iso_minutes(rows[claim.url]["lease_until"]) == T0 + 40 + LEASE_MINUTES
    assert [c.url for c in store.claim_due(T0 + 41, 10, "other")] == ["https://since.example/feed"]


def test_a_late_save_leaves_a_newer_lease_and_state_alone(store: FeedStore) -> None:
    """Worker A's lease expired and B leased the feed: A's late save adds its entries, but the
    schedule row, B's lease and the state are B's until B saves."""
    url = "https://a.example/feed"
    store.add_feed(url, T0)
    assert store.claim_due(T0, 1, "A") and store.claim_due(T0 + LEASE_MINUTES + 5, 1, "B")
    policy = LevelPolicy(initial_time=200)
    late = replace(policy.initial_state(url, T0), next_due=T0 + 60, etag='"a"')
    store.save_fetch(fetch(url, late, entries=[entry(url, "1")], lease_owner="A"))
    (row,) = store.schedule()
    assert (row["lease_owner"], row["last_fetch"], row["etag"]) == ("B", None, None)
    assert [e["guid"] for e in store.entries(url)] == ["1"]
    assert list(store.states()) == []
    newer = replace(policy.initial_state(url, T0 + 36), next_due=T0 + 236, etag='"b"')
    store.save_fetch(fetch(url, newer, entries=[entry(url, "1"), entry(url, "2")], lease_owner="B"))
    (row,) = store.schedule()
    assert (row["lease_owner"], row["etag"]) == (None, '"b"')
    assert [s.etag for s in store.states()] == ['"b"']
    assert sorted(e["guid"] for e in store.entries(url)) == ["1", "2"]


def test_a_failed_fetch_stores_its_reason_until_the_feed_answers(store: FeedStore) -> None:
    """Schema version 8: ``last_error`` says why the last fetch failed, beside the failures in a
    row; a fetch that answers clears it."""
    url = "https://a.example/feed"
    store.add_feed(url, T0)
    state = replace(LevelPolicy().initial_state(url, T0), consecutive_failures=2, next_due=T0)
    store.save_fetch(fetch(url, state, status="dns", http_status=0, error="DNS lookup failed: x"))
    (row,) = store.schedule()
    assert (row["status"], row["consecutive_failures"], row["last_error"]) == (
        "dns",
        2,
        "DNS lookup failed: x",
    )
    store.save_fetch(fetch(url, replace(state, consecutive_failures=0)))
    (row,) = store.schedule()
    assert (row["status"], row["consecutive_failures"], row["last_error"]) == ("ok", 0, None)


def test_save_fetch_round_trips_state_and_ignores_known_entries(store: FeedStore) -> None:
    url = "https://a.example/feed"
    store.add_feed(url, T0)
    assert len(store.claim_due(T0, 1, "w")) == 1
    assert store.schedule()[0]["lease_owner"] == "w"
    policy = LevelPolicy(initial_time=200)
    state = replace(
        policy.initial_state(url, T0),
        last_fetch=T0,
        last_success=T0,
        next_due=T0 + 200,
        interval=200.0,
        etag='W/"\xe4-1"',
        last_modified="Mon, 04 Mar 2024 00:00:00 +0000" + " " * 60,
        seen_ids=("abc", "def"),
        hours=tuple(float(h) for h in range(24)),
    )
    entries = [entry(url, "1"), entry(url, "2"), entry(url, "2")]
    assert store.save_fetch(fetch(url, state, entries=entries)) == 2
    assert store.save_fetch(fetch(url, state, entries=[entry(url, "2"), entry(url, "3")])) == 1
    assert [e["guid"] for e in store.entries(url)] == ["1", "2", "3"]
    (row,) = store.schedule()
    assert state_from_json(state_to_json(state)) == state
    assert state_from_json(json.dumps(row["state"])) == state
    assert row["etag"] == 'W/"\xe4-1"'
    assert row["last_modified"] == state.last_modified[:64]  # type: ignore[index]
    assert (row["next_due"], row["interval_minutes"], row["level"]) == (iso(T0 + 200), 200.0, 2)
    assert (row["lease_owner"], row["lease_until"], row["last_change"]) == (None, None, None)
    store.save_fetch(fetch(url, state, changed=True))
    assert store.schedule()[0]["last_change"] == iso(T0)
    assert store.level_counts() == {2: 1}
    assert list(store.states()) == [state]


def test_permanent_redirect_moves_row_entries_and_keeps_alias(store: FeedStore) -> None:
    old, new = "http://m.example/rss", "https://m.example/feed.xml"
    store.write([blog("m.example", old)], [])
    store.sync_feeds(T0)
    store.claim_due(T0, 1, "w")
    state = replace(LevelPolicy().initial_state(old, T0), last_fetch=T0, next_due=T0 + 1000)
    store.save_fetch(fetch(old, state, entries=[entry(old, "x")]))
    store.save_fetch(
        fetch(old, state, moved_to=new, blog_id="m.example", entries=[entry(new, "y")])
    )
    assert [r["feed_url"] for r in store.schedule()] == [new]
    assert [e["guid"] for e in store.entries(new)] == ["x", "y"]
    assert store.entries(old) == []
    assert store.aliases() == [
        {"alias_url": old, "feed_url": new, "blog_id": "m.example", "reason": "permanent_redirect"}
    ]
    assert store.sync_feeds(T0 + 1) == 0  # the blogs table still lists the old URL: an alias
    assert store.add_feed(old, T0) == new
    # moving back: the former URL stops being an alias, the new one becomes one
    store.save_fetch(fetch(new, state, moved_to=old))
    assert [r["feed_url"] for r in store.schedule()] == [old]
    assert [a["alias_url"] for a in store.aliases()] == [new]
    assert [e["guid"] for e in store.entries(old)] == ["x", "y"]


def test_host_pause_defers_every_feed_of_the_host(store: FeedStore) -> None:
    urls = [
        "https://busy.example/one.xml",
        "https://busy.example/two.xml",
        "http://busy.example:8080/three.xml",
        "https://busy.example.org/other.xml",
        "https://calm.example/feed",
    ]
    for u in urls:
        store.add_feed(u, T0)
    store.add_feed("https://busy.example/late.xml", T0 + 600)
    state = replace(LevelPolicy().initial_state(urls[0], T0), last_fetch=T0, next_due=T0 + 120)
    store.save_fetch(fetch(urls[0], state, status="throttled", host_pause_until=iso(T0 + 120)))
    due = {r["feed_url"]: r["next_due"] for r in store.schedule()}
    assert due[urls[1]] == due[urls[2]] == iso(T0 + 120)
    assert due[urls[3]] == due[urls[4]] == iso(T0)  # another host, even with the same prefix
    assert due["https://busy.example/late.xml"] == iso(T0 + 600)  # already later: untouched
    assert [c.url for c in store.claim_due(T0 + 60, 10, "w")] == [urls[3], urls[4]]


def test_state_json_is_lenient() -> None:
    assert state_from_json(None) is None
    assert state_from_json("{not json") is None
    assert state_from_json("[1, 2]") is None
    assert state_from_json(
        '{"feed_id": "x", "from_the_future": 1, "seen_ids": ["a"]}'
    ) == FeedState(feed_id="x", seen_ids=("a",))


def test_release_until_a_host_pause_ends(store: FeedStore) -> None:
    """A paused host's claimed feeds, released with ``not_before``, are not due before it;
    one already due later keeps its time."""
    store.add_feed("https://busy.example/a", T0)
    store.add_feed("https://busy.example/b", T0 + 500)
    claimed = store.claim_due(T0 + 1000, 5, "w1")
    assert len(claimed) == 2
    urls = [c.url for c in claimed]
    assert store.release("w1", urls, not_before=T0 + 120) == 2
    assert [c.url for c in store.claim_due(T0 + 60, 5, "w2")] == []  # a: paused until T0+120
    assert [c.url for c in store.claim_due(T0 + 120, 5, "w2")] == ["https://busy.example/a"]
    assert store.next_due(T0 + 120) == T0 + 500  # b kept its later time
