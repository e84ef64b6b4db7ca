"""WebSub parts in process: discovery (feed links, JSON Feed ``hubs``, ``Link`` headers),
``X-Hub-Signature``, the safety-net plan of a feed that pushes, the SSRF guard on hub URLs, the
per-hub rate limit, and the ``websub`` table's rules on SQLite and MariaDB (discovery in the
fetch's transaction, one worker per action, verification only of what is pending)."""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from blogfeeds.extract.feedreader import read_document
from blogfeeds.extract.feedreader.websub import parse_link_header, websub_links
from blogfeeds.feedcrawl.response import read_response
from blogfeeds.items import Blog, FeedFetch, FeedInfo
from blogfeeds.revisit import FeedState
from blogfeeds.revisit.push import push_due
from blogfeeds.storage.feedstore import iso, iso_minutes
from blogfeeds.storage.websub import WebSubStore
from blogfeeds.websub.client import HubRefused, post_form
from blogfeeds.websub.signature import sign, signature_problem
from blogfeeds.websub.subscriber import HubLimiter
from tests.test_storage import mariadb_url

T0 = iso_minutes("2026-11-30T00:00:00Z")
FEED = "https://blog.example/feed"
HUB = "https://hub.example/"

RSS = f"""<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel><title>B</title><link>https://blog.example/</link>
<atom:link rel="hub" href="{HUB}"/><atom:link rel="hub" href="/local-hub"/>
<atom:link rel="hub" href="javascript:alert(1)"/>
<atom:link rel="self" href="https://blog.example/feed/"/>
<item><guid>1</guid><title>t</title></item></channel></rss>""".encode()
ATOM = f"""<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>
<link rel="hub" href="{HUB}"/><link rel="self" href="https://blog.example/atom"/>
<entry><id>1</id><title>t</title></entry></feed>""".encode()
JSON_FEED = json.dumps(
    {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "J",
        "feed_url": "https://blog.example/feed.json",
        "hubs": [{"type": "WebSub", "url": HUB}, {"type": "WebSub", "url": 7}, "x"],
        "items": [{"id": "1", "title": "t"}],
    }
).encode()


# --- discovery --------------------------------------------------------------------------------


def test_rss_announces_hubs_through_atom_links() -> None:
    links = websub_links(read_document(RSS, "", FEED), [], FEED)
    assert links.hubs == (HUB, "https://blog.example/local-hub")
    assert links.topic == "https://blog.example/feed/"


def test_atom_and_json_feed_hubs_and_self() -> None:
    atom = websub_links(read_document(ATOM, "", FEED), [], FEED)
    assert (atom.hubs, atom.topic) == ((HUB,), "https://blog.example/atom")
    jf = websub_links(read_document(JSON_FEED, "application/feed+json", FEED), [], FEED)
    assert (jf.hubs, jf.topic) == ((HUB,), "https://blog.example/feed.json")


def test_link_headers_come_first_and_the_topic_defaults_to_the_fetched_url() -> None:
    plain = b'<?xml version="1.0"?><rss version="2.0"><channel><title>x</title></channel></rss>'
    doc = read_document(plain, "", FEED)
    assert websub_links(doc, [], FEED).hubs == ()
    assert websub_links(doc, [], FEED).topic == FEED
    header = '<https://h2.example/>; rel="hub", </feed?x=1>; rel="self", <https://a/>; rel=next'
    links = websub_links(read_document(ATOM, "", FEED), [header], FEED)
    assert links.hubs == ("https://h2.example/", HUB)
    assert links.topic == "https://blog.example/feed?x=1"


def test_link_header_parsing() -> None:
    assert parse_link_header(['<a>; rel="hub self"; title="x, y", <b>;REL=Hub', "junk"]) == [
        ("a", frozenset({"hub", "self"})),
        ("b", frozenset({"hub"})),
    ]


def test_a_fetch_read_carries_the_hubs() -> None:
    read = read_response(
        FEED,
        FeedState(feed_id=FEED),
        T0,
        status=200,
        headers={"Link": '<https://h2.example/>; rel="hub"'},
        body=RSS,
        url=FEED,
        conditional=False,
    )
    assert read.websub is not None
    assert read.websub.hubs[:2] == ("https://h2.example/", HUB)
    broken = read_response(
        FEED, FeedState(), T0, status=200, headers={}, body=b"<html>", url=FEED, conditional=False
    )
    assert broken.websub is None  # not a feed: nothing learnt


# --- signatures -------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["sha1", "sha256", "sha384", "sha512"])
def test_every_method_the_spec_allows_verifies(method: str) -> None:
    body = b"<feed/>"
    assert signature_problem("k", body, sign("k", body, method)) is None
    upper_hex = sign("k", body, method).upper().replace("SHA", "sha")
    assert signature_problem("k", body, upper_hex) is None
    assert signature_problem("other", body, sign("k", body, method)) == "mismatch"
    assert signature_problem("k", body + b" ", sign("k", body, method)) == "mismatch"


def test_missing_or_unknown_signatures_are_bad() -> None:
    assert signature_problem("k", b"x", None) == "missing"
    assert signature_problem("k", b"x", "") == "missing"
    assert signature_problem("k", b"x", "sha256") == "missing"
    assert signature_problem("k", b"x", "md5=00") == "method"


# --- the safety net ---------------------------------------------------------------------------


def test_a_feed_that_pushes_is_polled_as_a_safety_net() -> None:
    lease_end = T0 + 10 * 1440
    kw = {"safety": 2880.0, "factor": 4.0}
    # No live subscription: the policy's plan.
    assert push_due(T0 + 60, T0, None, None, **kw) == T0 + 60
    assert push_due(T0 + 60, T0, T0 - 1, T0 - 5, **kw) == T0 + 60  # the lease lapsed
    # Live, a push just came, no rate known: four planned intervals later.
    assert push_due(T0 + 60, T0, lease_end, T0, **kw) == T0 + 240
    # With a rate (entries per day): four expected gaps after the last push.
    assert push_due(T0 + 60, T0, lease_end, T0 - 100, rate=4.0, **kw) == T0 - 100 + 1440
    # Never later than the safety interval, nor than the lease's end, nor before the plan.
    assert push_due(T0 + 60, T0, lease_end, T0, rate=0.1, **kw) == T0 + 2880
    assert push_due(T0 + 60, T0, T0 + 100, T0, **kw) == T0 + 100
    assert push_due(T0 + 900, T0, lease_end, T0, rate=24.0, **kw) == T0 + 900
    # Pushes overdue for the feed's rate (a hub gone quiet): poll as planned.
    assert push_due(T0 + 60, T0, lease_end, T0 - 600, **kw) == T0 + 60
    assert push_due(T0 + 60, T0, lease_end, T0 - 1500, rate=4.0, **kw) == T0 + 60


# --- hub requests: SSRF guard and rate limit --------------------------------------------------


def test_hub_urls_pass_the_ssrf_guard() -> None:
    for url, kind in [
        ("http://127.0.0.1:9/", "loopback"),
        ("http://169.254.169.254/latest", "link_local"),
        ("http://10.1.2.3/", "private"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("ftp://hub.example/", "scheme"),
        ("http://localhost/", "loopback"),
    ]:
        with pytest.raises(HubRefused) as refused:
            post_form(url, {"hub.mode": "subscribe"}, timeout=1)
        assert refused.value.kind == kind, url


def test_requests_to_one_hub_are_rate_limited() -> None:
    clock = [0.0]
    limiter = HubLimiter(2.0, clock=lambda: clock[0])
    assert [limiter.take("https://h.example/a") for _ in range(3)] == [True, True, False]
    assert limiter.take("https://other.example/")  # another hub has its own budget
    clock[0] = 30.0  # one request per 30 s comes back
    assert limiter.take("https://h.example/b")
    assert not limiter.take("https://h.example/b")


# --- the websub table -------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("mariadb", marks=pytest.mark.services)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[WebSubStore]:
    if request.param == "sqlite":
        urls: Iterator[str] = iter([f"sqlite:///{tmp_path / 'w.sqlite3'}"])
    else:
        urls = mariadb_url("blogfeeds_websub_parts")
    with WebSubStore.open(next(urls)) as opened:
        yield opened
    for _ in urls:
        pass


def fetched(store: WebSubStore, hubs: list[str] | None, *, status: str = "ok", at: float = T0):
    state = FeedState(feed_id=FEED, next_due=at + 60, last_success=at)
    store.save_fetch(
        FeedFetch(
            feed_url=FEED,
            fetched_at=iso(at),
            status=status,
            http_status=200,
            state=asdict(state),
            hubs=hubs,
            topic=FEED,
        )
    )


def only(store: WebSubStore) -> dict[str, object]:
    rows = store.subscriptions()
    assert len(rows) == 1
    return rows[0]


def test_discovery_is_stored_with_the_fetch_and_follows_changes(store: WebSubStore) -> None:
    store.write(
        [Blog("blog.example", "https://blog.example/", feed_url=FEED, feeds=[FeedInfo(FEED, "")])],
        [],
    )
    store.sync_feeds(T0)
    fetched(store, [])
    assert store.subscriptions() == []  # no hub, no row
    fetched(store, [HUB, "https://h2.example/"])
    row = only(store)
    assert (row["state"], row["hub"], row["topic"]) == ("new", HUB, FEED)
    assert json.loads(str(row["hubs"])) == [HUB, "https://h2.example/"]
    first = (row["callback"], row["secret"])
    fetched(store, None, status="html")  # no feed read: nothing changes
    fetched(store, ["https://h2.example/", HUB])  # same hub still announced: same subscription
    assert (only(store)["callback"], only(store)["secret"]) == first
    fetched(store, ["https://h3.example/"])  # another hub: subscribed afresh, new secret
    row = only(store)
    assert row["hub"] == "https://h3.example/" and row["secret"] != first[1]
    fetched(store, [])  # stopped announcing: nothing was live, so gone
    assert only(store)["state"] == "gone"
    fetched(store, [HUB])
    assert only(store)["state"] == "new"


def test_each_action_is_claimed_by_one_worker_and_verified_only_when_pending(
    store: WebSubStore,
) -> None:
    store.write(
        [Blog("blog.example", "https://blog.example/", feed_url=FEED, feeds=[FeedInfo(FEED, "")])],
        [],
    )
    store.sync_feeds(T0)
    fetched(store, [HUB])
    first = store.claim_actions(T0 + 1, 10, "worker-a")
    assert [s.topic for s in first] == [FEED]
    assert store.claim_actions(T0 + 1, 10, "worker-b") == []  # leased to worker-a
    sub = first[0]
    assert not store.verified(sub.callback, "subscribe", FEED, 3600, T0 + 1)  # never requested
    store.requested(sub, "subscribe", T0 + 1, T0 + 16, 864000)
    assert not store.verified(sub.callback, "unsubscribe", FEED, None, T0 + 2)
    assert not store.verified(sub.callback, "subscribe", FEED + "x", 3600, T0 + 2)
    assert not store.verified("other", "subscribe", FEED, 3600, T0 + 2)
    assert not store.verified(sub.callback, "subscribe", FEED, 3600, T0 + 17)  # too late
    assert store.verified(sub.callback, "subscribe", FEED, 3600, T0 + 2)
    assert not store.verified(sub.callback, "subscribe", FEED, 3600, T0 + 3)  # once only
    row = only(store)
    assert row["state"] == "active"
    assert row["lease_until"] == iso(T0 + 62) and row["next_action"] == iso(T0 + 2 + 48)
    # The claim of the safety polls sees the live subscription.
    claimed = store.claim_due(T0 + 90, 10, "poller", urls=[FEED])
    assert claimed[0].push_until == iso_minutes(iso(T0 + 62))
    assert store.claim_actions(T0 + 49, 10, "worker-b") == []  # renewal not due yet
    assert [s.state for s in store.claim_actions(T0 + 51, 10, "worker-b")] == ["active"]


def test_a_dead_feed_with_a_live_subscription_is_unsubscribed(store: WebSubStore) -> None:
    store.write(
        [Blog("blog.example", "https://blog.example/", feed_url=FEED, feeds=[FeedInfo(FEED, "")])],
        [],
    )
    store.sync_feeds(T0)
    fetched(store, [HUB])
    sub = store.claim_actions(T0 + 1, 10, "w")[0]
    store.requested(sub, "subscribe", T0 + 1, T0 + 16, 864000)
    assert store.verified(sub.callback, "subscribe", FEED, 3600, T0 + 2)
    fetched(store, [HUB], status="dead", at=T0 + 3)
    row = only(store)
    assert (row["state"], row["next_action"]) == ("unsubscribe", iso(T0 + 3))


# --- the benchmark's WebSub rows run -----------------------------------------------------------


def test_bench_push_rows(capsys: pytest.CaptureFixture[str]) -> None:
    path = Path(__file__).resolve().parents[1] / "bench" / "revisit.py"
    spec = importlib.util.spec_from_file_location("bench_revisit_push", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_revisit_push"] = module
    try:
        spec.loader.exec_module(module)
        code = module.main(["--feeds", "150", "--days", "3", "--procs", "1", "--push-only"])
    finally:
        del sys.modules["bench_revisit_push"]
    out = capsys.readouterr().out
    assert code == 0
    assert "| — | polling alone (estimating policy) |" in out
    assert "| 20% (assumed) | push + safety polls |" in out


def test_concurrent_claims_of_subscription_actions_are_disjoint(store: WebSubStore) -> None:
    """Two upkeep processes claiming at once (threads, one connection each) never get the same
    row: each request to a hub is made once in a cluster."""
    url = store.connection.url
    blogs, fetches = [], []
    for n in range(40):
        feed = f"https://b{n}.example/feed"
        blogs.append(
            Blog(
                f"b{n}.example", f"https://b{n}.example/", feed_url=feed, feeds=[FeedInfo(feed, "")]
            )
        )
        state = FeedState(feed_id=feed, next_due=T0 + 60, last_success=T0)
        fetches.append(
            FeedFetch(
                feed_url=feed,
                fetched_at=iso(T0),
                status="ok",
                http_status=200,
                state=asdict(state),
                hubs=[HUB],
                topic=feed,
            )
        )
    store.write(blogs, [])
    store.sync_feeds(T0)
    store.save_fetches(fetches)
    got: dict[str, list[str]] = {}
    barrier = threading.Barrier(2)

    def claim(owner: str) -> None:
        with WebSubStore.open(url) as own:
            barrier.wait()
            topics: list[str] = []
            while batch := own.claim_actions(T0 + 1, 3, owner):
                topics += [s.topic for s in batch]
            got[owner] = topics

    threads = [threading.Thread(target=claim, args=(o,)) for o in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got["a"]) + len(got["b"]) == 40
    assert not set(got["a"]) & set(got["b"])
