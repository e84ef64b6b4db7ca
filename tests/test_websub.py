"""WebSub end to end: ``scrapy websub`` as a subprocess against hubs on loopback
(:mod:`tests.websub_hub`, written from the spec), on a real SQLite file and, when reachable,
the local MariaDB. A conforming hub subscribes, verifies and pushes; faulty ones verify the
wrong topic, never verify, go down during subscription and renewal, grant leases that expire,
deny; the tests themselves send what a hostile or broken hub would (challenges for requests
never made, bad signatures, replays, unknown callbacks and topics, oversized bodies). Nothing
from a bad push is stored; every good push is stored once."""

from __future__ import annotations

import json
import os
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from blogfeeds.items import Blog, FeedFetch, FeedInfo
from blogfeeds.revisit import FeedState
from blogfeeds.storage.feedstore import iso, iso_minutes
from blogfeeds.storage.websub import WebSubStore
from blogfeeds.websub.signature import sign
from tests import test_crawl_feeds as crawl
from tests.littleweb import LittleWeb
from tests.test_storage import mariadb_url
from tests.websub_hub import Hub, get, post

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
LEASE = 864000


def now_minutes() -> float:
    return time.time() / 60.0


def atom(topic: str, hub: str | None, *ids: str) -> bytes:
    links = f'<link rel="self" href="{topic}"/>' + (
        f'<link rel="hub" href="{hub}"/>' if hub else ""
    )
    entries = "".join(
        f"<entry><id>{topic}#{i}</id><title>Post {i}</title><link href='{topic}/{i}'/>"
        f"<updated>2026-11-30T10:00:0{n % 10}Z</updated></entry>"
        for n, i in enumerate(ids)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f"<title>T</title><id>{topic}</id><updated>2026-11-30T10:00:00Z</updated>{links}"
        f"{entries}</feed>"
    ).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def until(check: Callable[[], Any], timeout: float = 15.0, what: str = "") -> Any:
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what or check}")


def add_feed(url: str, topic: str, hubs: list[str], *, status: str = "ok") -> None:
    """A stored blog whose main feed was fetched and announced ``hubs`` (the crawl's path)."""
    blog_id = topic.split("/")[2]
    with WebSubStore.open(DB["url"]) as store:
        store.write(
            [Blog(blog_id, f"http://{blog_id}/", feed_url=topic, feeds=[FeedInfo(topic, "")])], []
        )
        store.sync_feeds(now_minutes())
        state = FeedState(feed_id=topic, next_due=now_minutes() + 60, last_success=now_minutes())
        store.save_fetch(
            FeedFetch(
                feed_url=topic,
                fetched_at=iso(now_minutes()),
                status=status,
                http_status=200,
                state=asdict(state),
                hubs=hubs,
                topic=topic,
            )
        )
    del url


DB: dict[str, str] = {}


class Endpoint:
    """``scrapy websub`` on a free loopback port (public URL = that port, path ``/websub``)."""

    def __init__(self, db_url: str, log: Path, **settings: str) -> None:
        self.port = free_port()
        self.public = f"http://127.0.0.1:{self.port}/websub"
        self.db_url = db_url
        self.log = log
        self.settings = {
            "BLOGFEEDS_WEBSUB_LISTEN": f"127.0.0.1:{self.port}",
            "BLOGFEEDS_WEBSUB_INTERVAL": "0.2",
            "BLOGFEEDS_WEBSUB_VERIFY_TIMEOUT": "1.5",
            "BLOGFEEDS_WEBSUB_MAX_FAILURES": "3",
            "BLOGFEEDS_WEBSUB_MAX_BODY": "200000",
            "LOG_LEVEL": "INFO",
            **settings,
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Endpoint:
        env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
        env.update(
            BLOGFEEDS_DATABASE_URL=self.db_url,
            BLOGFEEDS_WEBSUB_ENABLED="1",
            BLOGFEEDS_WEBSUB_PUBLIC_URL=self.public,
            BLOGFEEDS_ALLOW_PRIVATE_TARGETS="1",  # the hubs are on loopback
        )
        args = [a for k, v in self.settings.items() for a in ("-s", f"{k}={v}")]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "scrapy", "websub", *args], cwd=REPO, env=env, stderr=out
            )
        until(lambda: get(f"{self.public}/probe", {})[0] == 404, what="the endpoint")
        return self

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=20)
            self.proc = None

    def text(self) -> str:
        return self.log.read_text("utf-8", "replace")


def row(topic: str) -> dict[str, Any]:
    with WebSubStore.open(DB["url"]) as store:
        return next(r for r in store.subscriptions() if r["feed_url"] == topic)


def entries(topic: str) -> list[str]:
    with WebSubStore.open(DB["url"]) as store:
        return sorted(e["guid"] for e in store.entries(topic))


def schedule(topic: str) -> dict[str, Any]:
    with WebSubStore.open(DB["url"]) as store:
        return next(r for r in store.schedule() if r["feed_url"] == topic)


def active(hub: Hub, topic: str) -> bool:
    return bool(hub.subscribers(topic)) and row(topic)["state"] == "active"


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("mariadb", marks=pytest.mark.services)]
)
def endpoint(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Endpoint]:
    tmp = tmp_path_factory.mktemp("websub")
    if request.param == "sqlite":
        urls: Iterator[str] = iter([f"sqlite:///{tmp / 'websub.sqlite3'}"])
    else:
        urls = mariadb_url("blogfeeds_websub")
    DB["url"] = next(urls)
    with WebSubStore.open(DB["url"]):
        pass
    point = Endpoint(DB["url"], tmp / "websub.log").start()
    try:
        yield point
    finally:
        point.stop()
        for _ in urls:  # drop the MariaDB database
            pass
        assert "Traceback" not in point.text(), point.text()[-4000:]


@pytest.fixture(scope="module")
def hub(endpoint: Endpoint) -> Iterator[Hub]:
    """A conforming hub, one per endpoint (database)."""
    with Hub() as running:
        yield running


def test_subscribes_verifies_and_stores_each_good_push_once(endpoint: Endpoint, hub: Hub) -> None:
    topic = "http://alpha.example/feed"
    add_feed(topic, topic, [hub.url])
    until(lambda: active(hub, topic), what="an active subscription")
    form = hub.requests("subscribe")[-1]
    assert form["hub.topic"] == topic
    assert form["hub.lease_seconds"] == str(LEASE)
    assert form["hub.callback"].startswith(endpoint.public + "/")
    assert len(form["hub.secret"]) >= 32
    stored = row(topic)
    assert stored["secret"] == form["hub.secret"]
    lease_end = stored["lease_until"]
    assert iso(now_minutes() + LEASE / 60 - 5) <= lease_end <= iso(now_minutes() + LEASE / 60 + 5)

    assert hub.publish(topic, atom(topic, hub.url, "1", "2")) == [202]
    assert entries(topic) == [f"{topic}#1", f"{topic}#2"]
    assert hub.publish(topic, atom(topic, hub.url, "1", "2")) == [202]  # replayed
    assert hub.publish(topic, atom(topic, None, "3")) == [202]  # only the new entry, no links
    assert hub.publish(topic, atom(topic, None, "3")) == [202]
    assert entries(topic) == [f"{topic}#1", f"{topic}#2", f"{topic}#3"]
    stored = row(topic)
    assert (stored["pushes"], stored["bad_pushes"], stored["state"]) == (4, 0, "active")
    # A push is not a hub announcement: the partial push kept the subscription.
    assert stored["hub"] == hub.url
    # The feed is now polled as a safety net only: its next poll moved out.
    assert schedule(topic)["next_due"] > iso(now_minutes() + 120)


def test_bad_signatures_are_dropped_and_counted(endpoint: Endpoint, hub: Hub) -> None:
    topic = "http://sig.example/feed"
    add_feed(topic, topic, [hub.url])
    until(lambda: active(hub, topic), what="an active subscription")
    body = atom(topic, hub.url, "x")
    assert hub.publish(topic, body, secret="not-the-secret") == [202]  # 2xx, as the spec says
    assert hub.publish(topic, body, signature="") == [202]
    assert hub.publish(topic, body, signature=sign("s", body, "sha256")) == [202]
    assert hub.publish(topic, body, signature="md5=" + "0" * 32) == [202]
    assert hub.publish(topic, body, signature="sha256") == [202]
    secret = row(topic)["secret"]
    tampered = atom(topic, hub.url, "x", "injected")
    assert hub.publish(topic, tampered, signature=sign(secret, body)) == [202]
    assert entries(topic) == []
    assert row(topic)["bad_pushes"] == 6
    for n, method in enumerate(("sha1", "sha256", "sha384", "sha512")):
        assert hub.publish(topic, atom(topic, hub.url, f"m{n}"), method=method) == [202]
    assert entries(topic) == sorted(f"{topic}#m{n}" for n in range(4))
    assert row(topic)["pushes"] == 4


def test_pushes_for_unknown_callbacks_or_topics_are_refused(endpoint: Endpoint, hub: Hub) -> None:
    topic = "http://known.example/feed"
    add_feed(topic, topic, [hub.url])
    until(lambda: active(hub, topic), what="an active subscription")
    body = atom(topic, hub.url, "1")
    assert post(f"{endpoint.public}/no-such-callback", body, {"X-Hub-Signature": "x"}) == 404
    other = "http://other.example/feed"
    assert hub.publish(topic, atom(other, hub.url, "1"), self_url=other) == [400]
    assert entries(topic) == []
    assert row(topic)["bad_pushes"] == 1


def test_a_push_the_web_server_refuses_is_counted_as_a_bad_push(
    endpoint: Endpoint, hub: Hub
) -> None:
    """A hub sending Content-Length with Transfer-Encoding: chunked (the publisher chunked
    its feed): Twisted answers 400 before our code reads it; it counts and is logged."""
    topic = "http://chunked.example/feed"
    add_feed(topic, topic, [hub.url])
    until(lambda: active(hub, topic), what="an active subscription")
    body = atom(topic, hub.url, "1")
    path = "/websub/" + row(topic)["callback"]
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\n"
        f"Content-Type: application/atom+xml\r\nContent-Length: {len(chunked)}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", endpoint.port), timeout=5) as conn:
        conn.sendall(head.encode() + chunked)
        answer = conn.recv(100)
    assert answer.startswith(b"HTTP/1.1 400 ")
    until(lambda: row(topic)["bad_pushes"] == 1, what="the bad push counted")
    assert entries(topic) == []
    until(lambda: "refused as malformed HTTP" in endpoint.text(), what="the warning")
    assert f"WebSub: push from 127.0.0.1 for {topic} refused as malformed HTTP" in endpoint.text()


def test_verification_is_answered_only_for_requests_we_made(endpoint: Endpoint) -> None:
    topic = "http://verify.example/feed"
    with Hub() as liar:
        liar.verify_topic = "http://someone-else.example/feed"
        add_feed(topic, topic, [liar.url])
        until(lambda: len(liar.verifications()) >= 1, what="a verification")
        assert [v.status for v in liar.verifications()][:1] == [404]
        assert not liar.subscribers(topic)
        # The verification never matched: a failure once the timeout passed, then retried.
        until(lambda: row(topic)["failures"] >= 1, what="a verification timeout")
        assert row(topic)["state"] == "new"
        callback = row(topic)["callback"]
        # A challenge for something never requested: unsubscribe while a subscribe is pending,
        # a callback we never gave out, no challenge at all.
        query = {"hub.topic": topic, "hub.challenge": "c"}
        assert get(f"{endpoint.public}/{callback}", {**query, "hub.mode": "unsubscribe"})[0] == 404
        assert get(f"{endpoint.public}/made-up", {**query, "hub.mode": "subscribe"})[0] == 404
        assert get(f"{endpoint.public}/{callback}", {"hub.mode": "subscribe"})[0] == 404
        liar.verify_topic = None  # the hub mends its ways: the retry succeeds
        until(lambda: active(liar, topic), what="an active subscription after retries")
        # An active subscription with nothing pending: a replayed verification is refused.
        assert get(f"{endpoint.public}/{callback}", {**query, "hub.mode": "subscribe"})[0] == 404


def test_a_hub_down_during_subscription_is_retried(endpoint: Endpoint) -> None:
    topic = "http://down.example/feed"
    with Hub() as flaky:
        flaky.down = True
        add_feed(topic, topic, [flaky.url])
        until(lambda: row(topic)["failures"] >= 1, what="a failed request")
        assert "503" in row(topic)["last_error"]
        flaky.down = False
        until(lambda: active(flaky, topic), what="an active subscription")
        assert row(topic)["failures"] == 0


def test_leases_are_renewed_and_a_hub_down_at_renewal_falls_back_to_polling(
    endpoint: Endpoint,
) -> None:
    topic = "http://renew.example/feed"
    with Hub() as short:
        short.grant_lease = 3  # seconds: renewed at 80 %
        add_feed(topic, topic, [short.url])
        until(lambda: active(short, topic), what="an active subscription")
        until(lambda: sum(v.echoed for v in short.verifications()) >= 2, what="a renewal verified")
        assert row(topic)["state"] == "active"
        short.down = True  # renewals fail from now on; the lease runs out
        until(lambda: row(topic)["state"] == "failed", timeout=30, what="the hub given up")
        stored = row(topic)
        assert stored["lease_until"] <= iso(now_minutes() + 0.1)
        # Polled at once: the subscription is no safety net any more.
        assert schedule(topic)["next_due"] <= iso(now_minutes())
        # The hub's lease began at its verification, a moment after ours: until it ends too, a
        # push still reaches the subscription we gave up, and is refused.
        assert set(short.publish(topic, atom(topic, None, "late"))) <= {404}
        until(lambda: not short.subscribers(topic), timeout=10, what="the hub's lease lapsed")


def test_a_denial_ends_the_subscription_and_polling_resumes(endpoint: Endpoint, hub: Hub) -> None:
    topic = "http://denied.example/feed"
    add_feed(topic, topic, [hub.url])
    until(lambda: active(hub, topic), what="an active subscription")
    assert hub.deny(topic) == [200]
    stored = row(topic)
    assert stored["state"] == "denied"
    assert "denied" in stored["last_error"]
    assert schedule(topic)["next_due"] <= iso(now_minutes())
    assert hub.publish(topic, atom(topic, hub.url, "1")) == [404]
    assert entries(topic) == []


def test_a_dead_or_removed_feed_is_unsubscribed(endpoint: Endpoint, hub: Hub) -> None:
    dead, removed = "http://dead.example/feed", "http://removed.example/feed"
    for topic in (dead, removed):
        add_feed(topic, topic, [hub.url])
        until(lambda t=topic: active(hub, t), what="an active subscription")
    add_feed(dead, dead, [hub.url], status="dead")
    with WebSubStore.open(DB["url"]) as store:
        store.query("SELECT 1")  # (a read; the delete below is its own transaction)
        with store._transaction() as cursor:
            cursor.execute(
                "DELETE FROM schedule WHERE feed_url = " + store.dialect.param, (removed,)
            )
    for topic in (dead, removed):
        until(lambda t=topic: row(t)["state"] == "gone", what="an unsubscription verified")
        until(lambda t=topic: not hub.subscribers(t), what="the hub's unsubscription")
    assert {r["hub.topic"] for r in hub.requests("unsubscribe")} >= {dead, removed}
    assert hub.publish(dead, atom(dead, hub.url, "1")) == []


def test_an_oversized_push_is_refused(endpoint: Endpoint, hub: Hub) -> None:
    topic = "http://big.example/feed"
    add_feed(topic, topic, [hub.url])
    until(lambda: active(hub, topic), what="an active subscription")
    padding = "<!-- " + "x" * 250_000 + " -->"
    body = atom(topic, hub.url, "1").replace(b"<title>T</title>", padding.encode())
    assert hub.publish(topic, body) == [413]
    assert entries(topic) == []


def test_subscriptions_survive_a_restart(endpoint: Endpoint, hub: Hub) -> None:
    topic = "http://restart.example/feed"
    add_feed(topic, topic, [hub.url])
    until(lambda: active(hub, topic), what="an active subscription")
    requests = len(hub.requests())
    endpoint.stop()
    endpoint.start()
    assert hub.publish(topic, atom(topic, hub.url, "after")) == [202]
    assert entries(topic) == [f"{topic}#after"]
    time.sleep(1.0)
    assert len(hub.requests()) == requests  # nothing re-subscribed: the lease is still long


def test_websub_is_off_by_default(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLOGFEEDS_WEBSUB")}
    env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{tmp_path / 'x.sqlite3'}"
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "websub"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "BLOGFEEDS_WEBSUB_ENABLED" in proc.stderr


def test_the_feeds_crawl_stores_hubs_and_polls_subscribed_feeds_as_a_safety_net(
    tmp_path: Path,
) -> None:
    """``scrapy crawl feeds`` records the hub a feed announces (document and Link header) with
    the fetch; once subscribed, and with WebSub on, its next poll moves out to the safety net,
    while the same feed without WebSub keeps the policy's plan."""
    t0 = crawl.T0
    feeds = {name: f"http://{name}.example/feed.xml" for name in ("pushy", "plain")}
    db = tmp_path / "crawl.sqlite3"
    with WebSubStore.open(f"sqlite:///{db}") as store:
        store.write(
            [
                Blog(f"{n}.example", f"http://{n}.example/", feed_url=u, feeds=[FeedInfo(u, "")])
                for n, u in feeds.items()
            ],
            [],
        )
    hub_url = "https://hub.example/"
    routes = {
        url: {
            "body": atom(url, hub_url if name == "pushy" else None, "1", "2").decode(),
            "content_type": "application/atom+xml",
            "headers": {"Link": f'<{url}>; rel="self"'},
        }
        for name, url in feeds.items()
    }
    routes[feeds["plain"]]["headers"]["Link"] += ', <https://other-hub.example/>; rel="hub"'
    on = [
        "-s",
        "BLOGFEEDS_WEBSUB_ENABLED=1",
        "-s",
        "BLOGFEEDS_WEBSUB_PUBLIC_URL=https://cb.example",
    ]
    with LittleWeb(routes) as web:
        crawl.run(web, db, t0)
        with WebSubStore.open(f"sqlite:///{db}") as store:
            subs = {r["feed_url"]: r for r in store.subscriptions()}
            assert {u: (r["state"], r["hub"]) for u, r in subs.items()} == {
                feeds["pushy"]: ("new", hub_url),
                feeds["plain"]: ("new", "https://other-hub.example/"),
            }
            # Subscribed (the endpoint's part, done by hand here): live for ten days.
            for sub in store.claim_actions(t0 + 1, 10, "endpoint"):
                store.requested(sub, "subscribe", t0 + 1, t0 + 10, LEASE)
                assert store.verified(sub.callback, "subscribe", sub.topic, LEASE, t0 + 1)
        later = t0 + 400
        result = crawl.run(web, db, later, *on, "-a", f"feed={feeds['pushy']}")
        assert result["stats"].get("blogfeeds/feeds/safety_net") == 1
        crawl.run(web, db, later, "-a", f"feed={feeds['plain']}")  # WebSub off: as planned
        rows = crawl.rows(db)
    pushy = iso_minutes(rows[feeds["pushy"]]["next_due"]) - later
    plain = iso_minutes(rows[feeds["plain"]]["next_due"]) - later
    assert plain <= 400
    # No push since the subscription began (t0 + 1): polled when four planned intervals have
    # passed without one (the levels policy has no rate estimate), not at its plan.
    assert abs(later + pushy - (t0 + 1 + 4 * plain)) < 1.0
    assert pushy > 1.5 * plain


def test_an_endless_lease_is_held_to_a_year(endpoint: Endpoint) -> None:
    """A hub granting a lease of 10^12 seconds (year 33715) gets a subscription, held to a year."""
    topic = "http://lease.example/feed"
    with Hub() as generous:
        generous.grant_lease = 10**12
        add_feed(topic, topic, [generous.url])
        until(lambda: active(generous, topic), what="an active subscription")
        assert row(topic)["lease_until"] <= iso(now_minutes() + 366 * 1440 + 5)


def test_a_push_with_hostile_numbers_in_its_headers_is_stored(endpoint: Endpoint, hub: Hub) -> None:
    """Cache-Control, Age and Retry-After of ``²`` or of 5,000 digits on a signed push: the
    entries are stored, not answered 500."""
    topic = "http://numbers.example/feed"
    add_feed(topic, topic, [hub.url])
    until(lambda: active(hub, topic), what="an active subscription")
    for n, value in enumerate(("²", "9" * 5000)):
        extra = {"Cache-Control": f"max-age={value}", "Age": value, "Retry-After": value}
        assert hub.publish(topic, atom(topic, None, f"n{n}"), extra=extra) == [202]
    assert entries(topic) == [f"{topic}#n0", f"{topic}#n1"]


def json_feed(topic: str, ids: range, prefix: str) -> bytes:
    items = [{"id": f"{prefix}{i}"} for i in ids]
    return json.dumps({"version": "https://jsonfeed.org/version/1.1", "items": items}).encode()


def test_a_push_flood_is_bounded_and_delays_no_other_feed(endpoint: Endpoint, hub: Hub) -> None:
    """A feed names its own hub and gets a secret: signed pushes of 10,000 new ids each store
    at most BLOGFEEDS_WEBSUB_PUSH_ENTRIES (100) a push and ..._PER_DAY (1,000) a day, and
    while six of them are sent at once a push for another feed is stored in about the time
    of one flood push alone (before: it waited behind all six, one database thread)."""
    flood, quiet = "http://flood.example/feed", "http://quiet.example/feed"
    for topic in (flood, quiet):
        add_feed(topic, topic, [hub.url])
        until(lambda t=topic: active(hub, t), what="an active subscription")
    kind = "application/feed+json"
    started = time.monotonic()
    assert hub.publish(flood, json_feed(flood, range(10_000), "r"), content_type=kind) == [202]
    alone = time.monotonic() - started
    assert len(entries(flood)) == 100

    codes: list[list[int]] = []
    bodies = [json_feed(flood, range(10_000), f"c{n}-") for n in range(6)]
    threads = [
        threading.Thread(target=lambda b=b: codes.append(hub.publish(flood, b, content_type=kind)))
        for b in bodies
    ]
    for thread in threads:
        thread.start()
    time.sleep(0.05)
    started = time.monotonic()
    assert hub.publish(quiet, atom(quiet, None, "q1")) == [202]
    waited = time.monotonic() - started
    for thread in threads:
        thread.join()
    assert entries(quiet) == [f"{quiet}#q1"]
    assert waited < 2 * alone + 0.5, (waited, alone)
    assert {c for (c,) in codes} <= {202, 429}
    assert len(entries(flood)) == 100 * (1 + sum(c == [202] for c in codes))

    for n in range(12):  # past the day's budget: nothing more is stored
        body = json_feed(flood, range(200), f"d{n}-")
        assert hub.publish(flood, body, content_type=kind) == [202]
    assert 1000 <= len(entries(flood)) <= 1001


class Tarpit:
    """A hub that answers ``HTTP/1.1 202`` and then one header line a second, forever."""

    def __init__(self) -> None:
        self.active = 0
        self.requests = 0
        self.stopping = threading.Event()
        pit = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                pit.requests += 1
                pit.active += 1
                try:
                    self.request.recv(65536)
                    self.request.sendall(b"HTTP/1.1 202 Accepted\r\n")
                    n = 0
                    while not pit.stopping.wait(1.0):
                        n += 1
                        self.request.sendall(f"X-Slow-{n}: 1\r\n".encode())
                except OSError:
                    pass
                finally:
                    pit.active -= 1

        # 127.0.0.2: another host than the conforming hub's (limits are per hub host)
        self.server = socketserver.ThreadingTCPServer(("127.0.0.2", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.2:{self.server.server_address[1]}/"

    def __enter__(self) -> Tarpit:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


def test_a_tarpit_hub_delays_no_other_hub_nor_the_stop(tmp_path: Path) -> None:
    """Subscriptions at a hub that answers one header line a second (a read timeout never
    fires): a request to another hub is made at once, the tarpit's requests fail at the
    whole-request deadline (BLOGFEEDS_WEBSUB_HUB_TIMEOUT), and SIGTERM stops the process
    promptly while they hang."""
    saved = DB.get("url")
    DB["url"] = f"sqlite:///{tmp_path / 'tarpit.sqlite3'}"
    with WebSubStore.open(DB["url"]):
        pass
    point = Endpoint(
        DB["url"],
        tmp_path / "tarpit.log",
        BLOGFEEDS_WEBSUB_HUB_TIMEOUT="3",
        BLOGFEEDS_WEBSUB_VERIFY_TIMEOUT="30",  # the deadline of the request comes first
    )
    try:
        with Tarpit() as pit, Hub() as good:
            point.start()
            stuck = [f"http://stuck{i}.example/feed" for i in range(4)]
            for topic in stuck:
                add_feed(topic, topic, [pit.url])
            until(lambda: pit.active >= 2, what="requests held by the tarpit")
            fine = "http://fine.example/feed"
            add_feed(fine, fine, [good.url])
            until(lambda: active(good, fine), timeout=5, what="the other hub asked at once")
            assert pit.active <= 2  # BLOGFEEDS_WEBSUB_HUB_CONCURRENCY
            until(lambda: row(stuck[0])["failures"] >= 1, timeout=10, what="the deadline")
            assert "within 3 s" in row(stuck[0])["last_error"]
            until(lambda: pit.active >= 1, what="a request held by the tarpit")
            started = time.monotonic()
            point.stop()
            assert time.monotonic() - started < 5
    finally:
        if point.proc is not None:  # it did not stop: never leave it running
            point.proc.kill()
            point.proc.wait()
        DB["url"] = saved or ""
    assert "Traceback" not in point.text(), point.text()[-3000:]
