"""End to end: ``scrapy crawl feeds`` as a subprocess, at virtual times, against a loopback web
whose feeds change between runs (:mod:`tests.littleweb`); the stored schedule and entries are
asserted after each run.

Timeline (``BLOGFEEDS_NOW``; T0 = Monday 2024-03-04 00:00 UTC; initial *T* = 200 min, so a
new feed sits at Level[2] = 200 min and every feed is due again 3 h 20 min after a fetch):

====== =========================================================================================
T0     first fetch of every feed; busy.example answers 429 + Retry-After: 7200 on one.xml, so
       two.xml is not requested and waits until T0+2h; moved.example answers 301; rekey.example
       has 4 entries
T0+4h  alpha: conditional GET with its validators echoed byte for byte → 304; const (ETag
       never changes) → 304 although entries were added; busy: both fetched; moved: the new URL
       only; turn.example now serves an HTML page → flagged; rekey.example re-keys every GUID
T0+8h  alpha changed (new ETag, one new entry) → 200, change counted; const → 304 (its lie)
T0+13h const → 304 again (conditional GETs last 20 revisit intervals, at most 7 days)
T0+8d  const forced (``-a feed=``): past 7 days since its last unconditional GET, so fetched in
       full; its new entry appears with the same ETag → the ETag is no longer trusted
T0+8d1h const forced again: no If-None-Match any more
====== =========================================================================================
"""

from __future__ import annotations

import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from scrapy.utils.test import get_crawler

from blogfeeds.feedcrawl.claims import IDLE_CLAIM_ATTEMPTS, Claims
from blogfeeds.feedcrawl.clock import VirtualClock
from blogfeeds.items import Blog, FeedInfo
from blogfeeds.revisit import DAY, from_minutes
from blogfeeds.spiders.feeds import FeedsSpider
from blogfeeds.storage.feedstore import LEASE_MINUTES, FeedStore, iso, iso_minutes
from tests import blogosphere as bs
from tests.littleweb import LittleWeb, Route

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
T0 = iso_minutes("2024-03-04T00:00:00Z")
HOUR = 60.0
RSS_TYPE = "application/rss+xml"

ALPHA = "http://alpha.example/feed.xml"
CONST = "http://const.example/rss"
BUSY1 = "http://busy.example/one.xml"
BUSY2 = "http://busy.example/two.xml"
MOVED_OLD = "http://moved.example/rss"
MOVED_NEW = "https://moved.example/feed.xml"
TURN = "http://turn.example/feed"
REKEY = "http://rekey.example/feed.xml"
LATE = "http://late.example/atom.xml"
DOWN = "http://down.example/feed"

# Validators as a server may send them: a weak ETag with a non-ASCII byte (obs-text, RFC 9110
# §8.8.3) and a Last-Modified in a non-canonical form (numeric zone): echoed byte for byte.
ALPHA_ETAG = 'W/"\xe4lpha-1"'
ALPHA_LM = "Sun, 03 Mar 2024 22:00:00 +0000"


def rss(*items: tuple[str, float]) -> str:
    """An RSS 2.0 document; items are (guid, date in epoch minutes)."""
    body = "".join(
        f"<item><guid>{guid}</guid><title>Post {guid}</title><link>{guid}</link>"
        f"<pubDate>{format_datetime(from_minutes(date), usegmt=True)}</pubDate></item>"
        for guid, date in items
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>T</title>'
        f"<link>http://x.example/</link>{body}</channel></rss>"
    )


def feed_route(body: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    return {"body": body, "content_type": RSS_TYPE, "headers": headers or {}}


REKEY_DATES = [T0 - 30 * HOUR, T0 - 50 * HOUR, T0 - 70 * HOUR, T0 - 90 * HOUR]

ROUTES_T0: dict[str, Any] = {
    ALPHA: feed_route(
        rss(("http://alpha.example/2", T0 - 5 * HOUR), ("http://alpha.example/1", T0 - 30 * HOUR)),
        {"ETag": ALPHA_ETAG, "Last-Modified": ALPHA_LM},
    ),
    CONST: feed_route(rss(("c1", T0 - 10 * HOUR)), {"ETag": '"same"'}),
    BUSY1: {"status": 429, "headers": {"Retry-After": "7200"}, "body": "slow down"},
    BUSY2: feed_route(rss(("b1", T0 - HOUR))),
    MOVED_OLD: {"status": 301, "location": MOVED_NEW},
    MOVED_NEW: feed_route(rss(("m1", T0 - HOUR))),
    TURN: feed_route(rss(("t1", T0 - HOUR))),
    DOWN: {"status": 503, "body": "maintenance"},  # no Retry-After: a failure, not a pause
    REKEY: feed_route(
        rss(*((f"http://rekey.example/p/{i}", d) for i, d in enumerate(REKEY_DATES)))
    ),
}


def blogs() -> list[Blog]:
    """One blog per feed, as ``scrapy crawl blogs`` stores them (main feed = ``feed_url``)."""
    out = []
    for i, url in enumerate([ALPHA, CONST, BUSY1, BUSY2, MOVED_OLD, TURN, REKEY, DOWN]):
        out.append(
            Blog(
                blog_id=f"blog{i}.example",
                url=f"http://blog{i}.example/",
                feed_url=url,
                feeds=[FeedInfo(url, RSS_TYPE)],
                fetched_at="2024-03-01T00:00:00Z",
            )
        )
    return out


def command(now: float, *args: str) -> list[str]:
    """``scrapy crawl feeds`` at virtual time ``now``, with ``args`` added."""
    return [
        sys.executable, "-m", "scrapy", "crawl", "feeds",
        "-s", f"BLOGFEEDS_NOW={iso(now)}", "-s", "BLOGFEEDS_REVISIT_INITIAL_T=200",
        "-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "RETRY_TIMES=0",
        "-s", "LOG_LEVEL=INFO", *args,
    ]  # fmt: skip


def environment(web: LittleWeb, db: Path) -> dict[str, str]:
    env = web.env()
    env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{db}"
    return env


def outcome(log: str, web: LittleWeb) -> dict[str, Any]:
    """Stats, finish reason and feed requests of a finished run."""
    stats = {k: int(v) for k, v in re.findall(r"'(blogfeeds/feeds/[^']+)': (\d+)", log)}
    reason = re.search(r"'finish_reason': '([^']+)'", log)
    hits = [h for h in web.hits() if not h.url.endswith("/robots.txt")]
    return {"stats": stats, "hits": hits, "log": log, "reason": reason and reason[1]}


def run(
    web: LittleWeb,
    db: Path,
    now: float,
    *args: str,
    status: int = 0,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One ``scrapy crawl feeds`` at virtual time ``now`` (``env`` added to its environment),
    which must exit with ``status`` and log no traceback; returns its stats and log."""
    web.clear_hits()
    proc = subprocess.run(
        command(now, *args),
        cwd=REPO,
        env={**environment(web, db), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == status, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return outcome(proc.stderr, web)


def rows(db: Path) -> dict[str, dict[str, Any]]:
    with FeedStore.open(f"sqlite:///{db}") as store:
        return {r["feed_url"]: r for r in store.schedule()}


def guids(db: Path, url: str) -> list[str]:
    with FeedStore.open(f"sqlite:///{db}") as store:
        return [e["guid"] for e in store.entries(url)]


@pytest.fixture(scope="module")
def timeline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    db = tmp_path_factory.mktemp("feeds") / "blogfeeds.sqlite3"
    with FeedStore.open(f"sqlite:///{db}") as store:
        store.write(blogs(), [])
    out: dict[str, Any] = {"db": db}
    with LittleWeb(ROUTES_T0) as web:
        out["r1"] = run(web, db, T0)
        out["rows1"] = rows(db)
        out["entries1"] = {u: guids(db, u) for u in (ALPHA, REKEY, TURN, MOVED_NEW)}

        web.add(BUSY1, feed_route(rss(("o1", T0 + HOUR))))
        web.add(
            CONST, feed_route(rss(("c2", T0 + HOUR), ("c1", T0 - 10 * HOUR)), {"ETag": '"same"'})
        )
        web.add(TURN, {"body": "<!DOCTYPE html><html><body>Gone shopping</body></html>"})
        rekeyed = ((f"https://rekey.example/p/{i}", d) for i, d in enumerate(REKEY_DATES))
        web.add(REKEY, feed_route(rss(*rekeyed)))
        out["r2"] = run(web, db, T0 + 4 * HOUR)
        out["rows2"] = rows(db)
        out["entries2"] = {u: guids(db, u) for u in (ALPHA, REKEY, TURN)}

        web.add(
            ALPHA,
            feed_route(
                rss(
                    ("http://alpha.example/3", T0 + 6 * HOUR),
                    ("http://alpha.example/2", T0 - 5 * HOUR),
                    ("http://alpha.example/1", T0 - 30 * HOUR),
                ),
                {"ETag": 'W/"\xe4lpha-2"', "Last-Modified": "Mon, 04 Mar 2024 06:00:00 +0000"},
            ),
        )
        out["r3"] = run(web, db, T0 + 8 * HOUR)
        out["rows3"] = rows(db)
        out["entries3"] = {CONST: guids(db, CONST)}
        out["r4"] = run(web, db, T0 + 13 * HOUR)
        out["rows4"] = rows(db)
        out["r5"] = run(web, db, T0 + 17 * HOUR)
        out["rows5"] = rows(db)

        web.add(LATE, feed_route(rss(("l1", T0))))
        out["forced"] = run(web, db, T0 + 17 * HOUR + 5, "-a", f"feed={LATE}")
        out["rows6"] = rows(db)
        # Past the longest span of conditional GETs (7 days): const in full, then without ETag.
        out["r7"] = run(web, db, T0 + 8 * DAY, "-a", f"feed={CONST}")
        out["rows7"] = rows(db)
        out["entries7"] = {CONST: guids(db, CONST)}
        out["r8"] = run(web, db, T0 + 8 * DAY + HOUR, "-a", f"feed={CONST}")
    yield out


def near(stored: str | None, minutes: float) -> bool:
    """A stored ISO time equals virtual ``minutes`` plus the run's real elapsed time (< 30 s)."""
    return stored is not None and 0 <= iso_minutes(stored) - minutes <= 0.5


def urls(result: dict[str, Any]) -> list[str]:
    return [h.url for h in result["hits"]]


def test_first_run_fetches_everything_and_stores_entries(timeline: dict[str, Any]) -> None:
    r1, rows1 = timeline["r1"], timeline["rows1"]
    assert set(rows1) == {ALPHA, CONST, BUSY1, BUSY2, MOVED_NEW, TURN, REKEY, DOWN}
    alpha = rows1[ALPHA]
    assert alpha["status"] == "ok"
    assert alpha["state"]["level_time"] == 200  # a first fetch leaves T alone
    assert (alpha["level"], alpha["interval_minutes"]) == (2, 200)
    assert near(alpha["next_due"], T0 + 200)
    assert (alpha["etag"], alpha["last_modified"]) == (ALPHA_ETAG, ALPHA_LM)
    assert alpha["lease_owner"] is None and alpha["last_change"] is None
    assert timeline["entries1"][ALPHA] == ["http://alpha.example/2", "http://alpha.example/1"]
    assert r1["stats"]["blogfeeds/feeds/new_entries"] == 2 + 1 + 1 + 1 + 4
    assert r1["stats"]["blogfeeds/feeds/level_2"] == 7
    assert r1["stats"]["blogfeeds/feeds/level_0"] == 1  # busy2 was never fetched
    assert r1["stats"]["blogfeeds/feeds/claimed"] == 8
    assert "blogfeeds/feeds/changed" not in r1["stats"]
    for hit in r1["hits"]:  # nothing stored yet: every request is unconditional
        assert "If-None-Match" not in hit.headers and "If-Modified-Since" not in hit.headers


def last_record(log: str) -> str:
    """The last log record (with its continuation lines), without its time stamp."""
    records = re.split(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[)", log.strip())
    return records[-1].split(" ", 2)[2]


def test_each_run_ends_with_its_summary_after_the_stats_dump(timeline: dict[str, Any]) -> None:
    r1, r2 = timeline["r1"], timeline["r2"]
    assert "Feeds worker " in r1["log"]
    assert "; virtual time 2024-03-04T00:00:00Z (BLOGFEEDS_NOW)" in r1["log"]
    assert r1["log"].index("Dumping Scrapy stats") < r1["log"].index("Feeds summary (finished)")
    assert last_record(r1["log"]) == (
        "[blogfeeds.spiders.feeds] INFO: Feeds summary (finished):\n"
        "Fetched: 7; not modified (304): 0; changed: 0; new entries: 9\n"
        "Failures: http_5xx 1\n"
        "Paused hosts: busy.example until 2024-03-04T02:00:00Z\n"
        # busy2, held by the pause, is the next due; it was due after the run started
        "Next feed due at 2024-03-04T02:00:00Z (in 2 h); 8 feeds in the schedule"
    )
    summary = last_record(r2["log"]).splitlines()
    assert summary[1] == "Fetched: 8; not modified (304): 2; changed: 0; new entries: 2"
    assert summary[2] == "Failures: html 1, http_5xx 1"
    assert summary[3] == "Paused hosts: none"
    assert re.fullmatch(
        r"Next feed due at 2024-03-04T0\d:\d\d:\d\dZ \(in .+\); 8 feeds .*", summary[4]
    )


def test_the_start_line_says_virtual_time_only_when_it_is(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.sqlite3'}"
    for env, virtual in (({}, False), ({"BLOGFEEDS_NOW": iso(T0)}, True)):
        crawler = get_crawler(FeedsSpider, {"BLOGFEEDS_DATABASE_URL": url, **env})
        task = FeedsSpider.from_crawler(crawler)._task(T0)
        assert task.startswith("fetching the feeds due at 2024-03-04T00:00:00Z, then exiting")
        assert ("virtual time" in task) is virtual, task


def test_retry_after_pauses_the_whole_host(timeline: dict[str, Any]) -> None:
    r1, rows1, rows2 = timeline["r1"], timeline["rows1"], timeline["rows2"]
    assert urls(r1).count(BUSY1) == 1  # 429 is never retried at once
    assert BUSY2 not in urls(r1)  # the pause covers the host's other feed
    assert r1["stats"]["blogfeeds/feeds/throttled"] == 1
    assert r1["stats"]["blogfeeds/feeds/host_paused"] == 1
    assert rows1[BUSY1]["status"] == "throttled"
    assert rows1[BUSY1]["consecutive_failures"] == 0  # rate limiting is not a failure
    assert rows1[BUSY1]["last_error"] == "HTTP 429"
    assert near(rows1[BUSY1]["next_due"], T0 + 120)
    assert rows1[BUSY2]["next_due"] == rows1[BUSY1]["next_due"]
    assert rows1[BUSY2]["lease_owner"] is None and rows1[BUSY2]["status"] == "new"
    assert rows2[BUSY1]["status"] == rows2[BUSY2]["status"] == "ok"
    r2_busy = [u for u in urls(timeline["r2"]) if "busy.example" in u]
    assert sorted(r2_busy) == [BUSY1, BUSY2]


def test_conditional_get_echoes_validators_and_304_is_unchanged(timeline: dict[str, Any]) -> None:
    (hit,) = [h for h in timeline["r2"]["hits"] if h.url == ALPHA]
    assert hit.headers["If-None-Match"] == ALPHA_ETAG  # byte for byte (latin-1 0xE4 included)
    assert hit.headers["If-Modified-Since"] == ALPHA_LM  # as received, never reformatted
    assert hit.status == 304
    alpha = timeline["rows2"][ALPHA]
    assert alpha["status"] == "not_modified"
    assert alpha["state"]["level_time"] == pytest.approx(240)  # unchanged: T × 1.2
    assert near(alpha["next_due"], T0 + 4 * HOUR + 200)
    assert (alpha["etag"], alpha["last_modified"]) == (ALPHA_ETAG, ALPHA_LM)  # kept on a 304
    assert timeline["entries2"][ALPHA] == timeline["entries1"][ALPHA]
    assert timeline["r2"]["stats"]["blogfeeds/feeds/not_modified"] == 2  # alpha and const


def test_a_change_shrinks_t_and_stores_the_new_entry(timeline: dict[str, Any]) -> None:
    (hit,) = [h for h in timeline["r3"]["hits"] if h.url == ALPHA]
    assert (hit.headers["If-None-Match"], hit.status) == (ALPHA_ETAG, 200)
    alpha = timeline["rows3"][ALPHA]
    assert alpha["state"]["level_time"] == pytest.approx(200)  # changed: T / 1.2
    assert near(alpha["last_change"], T0 + 8 * HOUR)
    assert alpha["etag"] == 'W/"\xe4lpha-2"'
    assert alpha["last_modified"] == "Mon, 04 Mar 2024 06:00:00 +0000"
    assert guids(timeline["db"], ALPHA)[-1] == "http://alpha.example/3"
    assert timeline["r3"]["stats"]["blogfeeds/feeds/changed"] == 1
    assert timeline["r3"]["stats"]["blogfeeds/feeds/new_entries"] == 1


def test_a_lying_etag_is_dropped_after_an_unconditional_fetch(timeline: dict[str, Any]) -> None:
    def const_hit(name: str) -> Any:
        (hit,) = [h for h in timeline[name]["hits"] if h.url == CONST]
        return hit

    assert (const_hit("r2").headers.get("If-None-Match"), const_hit("r2").status) == ('"same"', 304)
    assert const_hit("r3").status == 304  # the server keeps hiding c2
    assert timeline["entries3"][CONST] == ["c1"]
    assert timeline["rows3"][CONST]["status"] == "not_modified"
    assert timeline["rows3"][CONST]["last_error"] is None
    # 13 h later: still conditional (20 revisit intervals, 66 h or more, for this feed)
    assert (const_hit("r4").headers.get("If-None-Match"), const_hit("r4").status) == ('"same"', 304)
    r7 = const_hit("r7")  # 8 days after the last unconditional GET: none of the validators
    assert "If-None-Match" not in r7.headers and r7.status == 200
    assert timeline["rows7"][CONST]["state"]["trust_etag"] is False
    assert near(timeline["rows7"][CONST]["last_change"], T0 + 8 * DAY)
    assert timeline["entries7"][CONST] == ["c1", "c2"]
    r8 = const_hit("r8")  # an hour later: the ETag is no longer sent
    assert "If-None-Match" not in r8.headers and r8.status == 200


def test_permanent_redirect_updates_the_stored_url(timeline: dict[str, Any]) -> None:
    assert urls(timeline["r1"]).count(MOVED_OLD) == 1
    assert MOVED_OLD not in urls(timeline["r2"]) and MOVED_NEW in urls(timeline["r2"])
    assert MOVED_OLD not in timeline["rows1"] and timeline["rows1"][MOVED_NEW]["status"] == "ok"
    assert timeline["entries1"][MOVED_NEW] == ["m1"]
    with FeedStore.open(f"sqlite:///{timeline['db']}") as store:
        assert store.aliases() == [
            {
                "alias_url": MOVED_OLD,
                "feed_url": MOVED_NEW,
                "blog_id": "blog4.example",
                "reason": "permanent_redirect",
            }
        ]
    assert timeline["r1"]["stats"]["blogfeeds/feeds/moved"] == 1


def test_a_feed_turned_html_is_flagged_not_emptied(timeline: dict[str, Any]) -> None:
    turn = timeline["rows2"][TURN]
    assert turn["status"] == "html"
    assert turn["consecutive_failures"] == 1
    assert turn["last_error"].startswith("a web page, not a feed (text/html")
    assert turn["state"]["level_time"] == 200  # a failure is not "unchanged"
    assert near(turn["next_due"], T0 + 4 * HOUR + 200)  # max(level interval, 30-min backoff)
    assert timeline["entries2"][TURN] == ["t1"]
    assert timeline["r2"]["stats"]["blogfeeds/feeds/html"] == 1
    assert timeline["r2"]["stats"]["blogfeeds/feeds/error/html"] == 1


def test_a_mass_guid_rewrite_is_not_news(timeline: dict[str, Any]) -> None:
    rekey = timeline["rows2"][REKEY]
    assert rekey["status"] == "ok"
    assert rekey["state"]["level_time"] == pytest.approx(240)  # not a change
    assert rekey["last_change"] is None
    assert timeline["entries2"][REKEY] == timeline["entries1"][REKEY]  # no duplicates stored
    assert timeline["r2"]["stats"]["blogfeeds/feeds/guid_rewrite"] == 1


def test_only_due_feeds_are_fetched(timeline: dict[str, Any]) -> None:
    # at T0+8h: alpha/const/turn/rekey were fetched at 4h (due 7h20) and busy/moved too
    assert timeline["r3"]["stats"]["blogfeeds/feeds/claimed"] == 8
    # at T0+13h alpha (due 11h20) is due; at T0+17h only feeds due by then
    for name in ("r4", "r5"):
        fetched = urls(timeline[name])
        assert len(fetched) == len(set(fetched))  # never twice in a run
    rows5 = timeline["rows5"]
    assert all(iso_minutes(r["next_due"]) > T0 + 17 * HOUR for r in rows5.values())


def test_forcing_one_feed(timeline: dict[str, Any]) -> None:
    forced = timeline["forced"]
    assert urls(forced) == [LATE]
    assert timeline["rows6"][LATE]["status"] == "ok"
    assert guids(timeline["db"], LATE) == ["l1"]


def test_a_feed_revisited_less_often_than_12_hours_is_fetched_conditionally(
    tmp_path: Path,
) -> None:
    """With the default initial interval (1000 minutes, level 3) the second fetch, 16.7 h after
    the first, still carries the validators and gets its 304: a flat 12 h limit on conditional
    GETs made every fetch of such a feed unconditional."""
    db = tmp_path / "slow.sqlite3"
    with FeedStore.open(f"sqlite:///{db}") as store:
        store.write(blogs()[:1], [])
    route = feed_route(rss(("a", T0 - HOUR)), {"ETag": '"v1"'})
    with LittleWeb({ALPHA: route}) as web:
        run(web, db, T0, "-s", "BLOGFEEDS_REVISIT_INITIAL_T=1000")
        due = iso_minutes(rows(db)[ALPHA]["next_due"])
        assert due - T0 == pytest.approx(1000, abs=1)
        second = run(web, db, due, "-s", "BLOGFEEDS_REVISIT_INITIAL_T=1000")
    (hit,) = second["hits"]
    assert hit.headers.get("If-None-Match") == '"v1"' and hit.status == 304
    assert second["stats"]["blogfeeds/feeds/not_modified"] == 1


def test_loop_mode_sleeps_until_the_next_feed_is_due(tmp_path: Path) -> None:
    db = tmp_path / "loop.sqlite3"
    with FeedStore.open(f"sqlite:///{db}") as store:
        store.write(blogs()[:1], [])
    with LittleWeb({ALPHA: feed_route(rss(("a", T0 - HOUR)))}) as web:
        run(web, db, T0)
        due = iso_minutes(rows(db)[ALPHA]["next_due"])
        looped = run(
            web, db, due - 3 / 60, "-a", "loop=true", "-s", "CLOSESPIDER_TIMEOUT=7"
        )  # starts 3 s before the feed is due, stops after 7 s
    assert looped["reason"] == "closespider_timeout"
    assert urls(looped) == [ALPHA]
    # it says what it waits for when it goes to sleep, and what each pass did
    log = looped["log"]
    assert re.search(r"INFO: Next feed due at \S+ \(in [0-9] s\); sleeping [0-9] s", log), log
    passed = log[log.index("Feeds pass summary:") :]
    assert "Fetched: 1; not modified (304): 0; changed: 0; new entries: 0" in passed
    assert re.search(r"Next feed due at \S+ \(in 3 h 20 min\); sleeping \d+ s", passed)
    assert last_record(log).startswith("[blogfeeds.spiders.feeds] INFO: Feeds summary (closespider")
    fetched = iso_minutes(rows(db)[ALPHA]["last_fetch"])
    assert due <= fetched <= due + 5 / 60


def test_estimating_policy_runs_and_stores_a_rate(tmp_path: Path) -> None:
    db = tmp_path / "estimate.sqlite3"
    with FeedStore.open(f"sqlite:///{db}") as store:
        store.write(blogs()[:1], [])
    items = [(f"e{i}", T0 - i * 6 * HOUR) for i in range(1, 9)]  # 4 posts a day
    with LittleWeb({ALPHA: feed_route(rss(*items))}) as web:
        result = run(web, db, T0, "-s", "BLOGFEEDS_REVISIT_POLICY=estimate")
    (row,) = rows(db).values()
    assert result["stats"]["blogfeeds/feeds/new_entries"] == 8
    assert row["state"]["rate"] == pytest.approx(4.0, rel=0.35)
    assert 5 <= row["interval_minutes"] <= 4 * 1440
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM feed_state").fetchone() == (1,)


def test_errors_back_off_and_count(timeline: dict[str, Any]) -> None:
    first, second = timeline["rows1"][DOWN], timeline["rows2"][DOWN]
    assert (first["status"], first["consecutive_failures"]) == ("http_5xx", 1)
    assert near(first["state"]["failing_since"] and iso(first["state"]["failing_since"]), T0)
    assert near(first["next_due"], T0 + 200)  # max(level interval 200, backoff 30)
    assert (second["status"], second["consecutive_failures"]) == ("http_5xx", 2)
    assert first["last_error"] == second["last_error"] == "HTTP 503"
    assert second["state"]["dead"] is False  # dead only after two weeks of failures
    assert timeline["r1"]["stats"]["blogfeeds/feeds/error/http_5xx"] == 1
    assert urls(timeline["r1"]).count(DOWN) == 1  # 503 is not retried at once


def test_a_refused_target_keeps_its_schedule_and_all_fetches_every_feed_now(
    tmp_path: Path,
) -> None:
    """A local trial: a feed on a private address, fetched without the switch, is refused by
    the SSRF guard: not a failure of the feed (no back-off), so the next run with the switch
    fetches it; ``-a all=true`` then fetches every feed again though none is due."""
    db = tmp_path / "local.sqlite3"
    with LittleWeb({ALPHA: feed_route(rss(("a", T0 - HOUR)))}) as web:
        local = f"http://127.0.0.1:{web.port}/feed.xml"
        web.add(local, feed_route(rss(("l", T0 - HOUR))))
        with FeedStore.open(f"sqlite:///{db}") as store:
            store.write(
                [
                    *blogs()[:1],
                    Blog("127.0.0.1", local, feed_url=local, feeds=[FeedInfo(local, RSS_TYPE)]),
                ],
                [],
            )
        refused = run(web, db, T0, env={"BLOGFEEDS_ALLOW_PRIVATE_TARGETS": "0"})
        assert urls(refused) == [ALPHA] and refused["stats"]["blogfeeds/feeds/refused"] == 1
        row = rows(db)[local]
        assert (row["status"], row["consecutive_failures"], row["last_fetch"]) == ("new", 0, None)
        assert iso_minutes(row["next_due"]) <= T0 and row["lease_owner"] is None
        assert (
            f"Feed {local} not fetched, its schedule unchanged: SSRF guard: 127.0.0.1"
            in (refused["log"])
        )
        assert (
            "\nRefused by the SSRF guard: 1, their schedule unchanged (set BLOGFEEDS_"
            in (refused["log"])
        )
        allowed = run(web, db, T0 + 1)  # the switch on (the web's environment)
        assert urls(allowed) == [local]
        assert rows(db)[local]["status"] == "ok"
        everything = run(web, db, T0 + 2, "-a", "all=true")
    assert sorted(urls(everything)) == sorted([ALPHA, local])
    assert "Fetching all 2 scheduled feeds now, due or not (-a all)" in everything["log"]


def test_a_bad_feed_argument_is_refused_and_never_stored(tmp_path: Path) -> None:
    db = tmp_path / "bad.sqlite3"
    with LittleWeb({}) as web:
        result = run(web, db, T0, "-a", "feed=notaurl", status=2)
    assert "ERROR: -a feed: not an http(s) URL: 'notaurl'" in result["log"]
    assert not db.exists()  # refused before anything opened


# --- a database that fails under a running worker ----------------------------------------------


@pytest.fixture
def spider(tmp_path: Path) -> Iterator[FeedsSpider]:
    """A feeds spider on a SQLite file, outside a crawl (its calls are made by the test), run
    started at T0, batch 4."""
    url = f"sqlite:///{tmp_path / 'worker.sqlite3'}"
    crawler = get_crawler(FeedsSpider, {"BLOGFEEDS_DATABASE_URL": url, "BLOGFEEDS_FEEDS_BATCH": 4})
    made = FeedsSpider.from_crawler(crawler)
    crawler.spider = made
    made.store = FeedStore.open(url)
    made.claims = Claims(
        made.store,
        None,
        made.config,
        owner=made.owner,
        clock=made.clock,
        started=T0,
        stats=crawler.stats,
    )
    try:
        yield made
    finally:
        made.store.close()


def test_a_run_leases_from_the_time_of_each_claim(spider: FeedsSpider) -> None:
    """A run (not loop mode) claims what was due when it started, but a refill claim 40 minutes
    in leases for 30 minutes from then: another worker claiming at that time gets none of its
    feeds (the leases once ran from the run's start, already expired when written)."""
    store = spider.store
    assert store is not None
    for i in range(10):
        store.add_feed(f"http://h{i}.example/feed.xml", T0 - 1)
    spider.clock = VirtualClock(T0 + 40)
    list(spider._enqueue(store.claim_due(T0 + 39, 4, spider.owner, due_by=T0)))
    spider.hosts.inflight.clear()  # the batch claimed a minute ago answered
    refill = [r.url for r in spider._refill()]
    assert len(refill) == 4
    leases = {r["feed_url"]: r["lease_until"] for r in store.schedule()}
    for feed in refill:
        assert T0 + 40 + LEASE_MINUTES <= iso_minutes(leases[feed]) <= T0 + 41 + LEASE_MINUTES
    other = store.claim_due(T0 + 40, 10, "other worker")
    assert {f.url for f in other}.isdisjoint(refill) and len(other) == 2


def test_a_paused_host_whose_release_fails_is_not_stranded(
    spider: FeedsSpider, tmp_path: Path
) -> None:
    """A host asks for a pause and releasing its queued feeds fails (the table is gone): the
    error is counted, and the host leaves the worker's queues as when the release works (it
    once stayed "active" with nothing in flight, its feeds held until the worker stopped)."""
    store = spider.store
    assert store is not None
    feeds = [f"http://p.example/{name}.xml" for name in "abc"]
    for url in feeds:
        store.add_feed(url, T0)
    spider.clock = VirtualClock(T0)
    (first,) = spider._enqueue(store.claim_due(T0, 4, spider.owner))
    assert first.url == feeds[0]
    paused = replace(spider.policy.initial_state(feeds[0], T0), host_pause_until=T0 + 60)
    spider.hosts.pause("p.example", paused)
    spider.hosts.answered(feeds[0])  # answered: 429
    with sqlite3.connect(tmp_path / "worker.sqlite3") as conn:
        conn.execute("ALTER TABLE schedule RENAME TO schedule_away")
    assert spider._next_for_host("p.example") is None
    assert spider.crawler.stats.get_value("blogfeeds/feeds/release_errors") == 1
    hosts = spider.hosts
    assert not hosts.active and not hosts.queues and not hosts.inflight


def test_a_loop_worker_outlives_its_database_failing(tmp_path: Path) -> None:
    """The ``schedule`` table gone while a loop worker sleeps (a migration, a restore): every
    wake fails, is logged and counted, and the worker goes on; once the table is back, a feed
    added to it is fetched. An error in the idle handler once ended the worker, exit 0."""
    db = tmp_path / "loop.sqlite3"
    with FeedStore.open(f"sqlite:///{db}"):
        pass  # the schema
    log = tmp_path / "worker.log"
    with LittleWeb({ALPHA: feed_route(rss(("a", T0 - HOUR)))}) as web:
        cmd = command(T0, "-a", "loop=true", "-s", "BLOGFEEDS_FEEDS_MAX_SLEEP=1")
        proc = bs.start_worker(cmd, environment(web, db), log)
        try:
            text = lambda: log.read_text(errors="replace")  # noqa: E731
            bs.wait_for(lambda: "Feeds worker" in text(), 60, "the worker to start")
            with sqlite3.connect(db) as conn:
                conn.execute("ALTER TABLE schedule RENAME TO schedule_away")
            bs.wait_for(lambda: text().count("Cannot claim feeds") >= 2, 30, "two failed wakes")
            with sqlite3.connect(db) as conn:
                conn.execute("ALTER TABLE schedule_away RENAME TO schedule")
            with FeedStore.open(f"sqlite:///{db}") as store:
                store.add_feed(ALPHA, T0)
            bs.wait_for(lambda: bool(web.hits(ALPHA)), 30, "the feed added once the table is back")
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
    result = outcome(log.read_text(errors="replace"), web)
    assert proc.returncode == 0 and "Traceback" not in result["log"], result["log"][-3000:]
    assert result["reason"] == "shutdown" and result["stats"]["blogfeeds/feeds/claim_errors"] >= 2
    assert rows(db)[ALPHA]["last_fetch"] is not None


def test_a_run_whose_claims_keep_failing_ends_database_down(tmp_path: Path) -> None:
    """The ``schedule`` table gone after the first of three due feeds was requested: the refill
    claim and three idle claims fail (logged, counted), and the run ends with finish reason
    ``database_down``, exit status 1, instead of "finished" with feeds left unfetched. The
    pipeline is off so that only claims meet the missing table."""
    db = tmp_path / "down.sqlite3"
    feeds = [f"http://f{i}.example/feed.xml" for i in range(3)]
    with FeedStore.open(f"sqlite:///{db}") as store:
        for url in feeds:
            store.add_feed(url, T0)

    def first(request_url: str) -> Route:
        with sqlite3.connect(db) as conn:
            conn.execute("ALTER TABLE schedule RENAME TO schedule_away")
        return Route(**feed_route(rss(("a", T0 - HOUR))))

    with LittleWeb({feeds[0]: Route(handler=first)}) as web:
        args = ("-s", "BLOGFEEDS_FEEDS_BATCH=1", "-s", "ITEM_PIPELINES={}")
        result = run(web, db, T0, *args, status=1)
    assert result["reason"] == "database_down"
    assert result["stats"]["blogfeeds/feeds/claim_errors"] == 1 + IDLE_CLAIM_ATTEMPTS
    assert [h.url for h in result["hits"]] == feeds[:1]
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE schedule_away RENAME TO schedule")
    assert [r["lease_owner"] is None for r in rows(db).values()] == [False, True, True]
