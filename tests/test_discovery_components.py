"""Feed scorers and stages as components: a user's own project adds a scorer in a few lines
(``BLOGFEEDS_FEED_SCORERS`` is merged over the defaults in code, as Scrapy merges ``*_BASE``),
``None`` disables exactly one component, and stages, not scorers, decide what is fetched."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from scrapy.settings import Settings

from blogfeeds.extract.discovery import (
    FEED_SCORERS_BASE,
    FEED_STAGES_BASE,
    DiscoveryConfig,
    FeedReport,
    Fetched,
    FetchRequest,
    discover_feeds,
    find_feeds,
)
from blogfeeds.extract.page import parse_page
from blogfeeds.extract.scoring import load_object

USER_RULES = """
from blogfeeds.extract.scoring import Adjustment


class MyRule:
    def __init__(self, points: float) -> None:
        self.points = points

    @classmethod
    def from_settings(cls, settings):
        return cls(float(settings.get("MY_RULE_POINTS", 1)))

    def __call__(self, candidate, score, page):
        if candidate.url.endswith("/feed/"):
            return Adjustment(score + self.points, f"+{self.points:g} my rule")
        return None
"""

RSS = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>Blog</title>'
    b"<link>https://blog.example/</link><item><title>p</title>"
    b"<link>https://blog.example/p/</link><guid>https://blog.example/p/</guid></item>"
    b"</channel></rss>"
)
FEED_LINK = b'<html><head><link rel="feed" type="application/rss+xml" href="/feed/"></head></html>'
SCORERS = "blogfeeds.extract.discovery.scorers"
STAGES = "blogfeeds.extract.discovery.stages"


def settings(**values: object) -> Settings:
    """The project's settings with ``values`` set as ``-s NAME=value`` would set them."""
    s = Settings()
    s.setmodule("blogfeeds.settings", priority="project")
    for name, value in values.items():
        s.set(name, value, priority="cmdline")
    return s


@pytest.fixture
def user_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    package = tmp_path / "yourproject"
    package.mkdir()
    (package / "__init__.py").write_text("", "utf-8")
    (package / "rules.py").write_text(USER_RULES, "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return "yourproject.rules.MyRule"


def kinds(built: tuple[object, ...]) -> list[type]:
    return [type(c) for c in built]


def test_a_user_scorer_keeps_the_defaults_and_gets_its_weight(user_package: str) -> None:
    config = DiscoveryConfig.from_settings(
        settings(BLOGFEEDS_FEED_SCORERS=f'{{"{user_package}": 250}}', MY_RULE_POINTS="3")
    )
    defaults = [load_object(path) for path in FEED_SCORERS_BASE]
    names = [cls.__name__ for cls in kinds(config.scorers)]
    assert names.index("MyRule") == names.index("NoAlternate") + 1  # 250: after 200
    assert [cls for cls in kinds(config.scorers) if cls.__name__ != "MyRule"] == defaults
    assert kinds(config.stages) == [load_object(path) for path in FEED_STAGES_BASE]

    page = parse_page("https://blog.example/", FEED_LINK, {})
    (cand,) = discover_feeds(page, config.scorers, stages=config.stages)
    assert cand.reasons == ["base 10", "-3 no rel=alternate", "+3 my rule"]

    report = run(page.url, FEED_LINK, {"https://blog.example/feed/": RSS}, config)
    assert [f.url for f in report.feeds] == ["https://blog.example/feed/"]
    assert "+3 my rule" in report.feeds[0].reasons


def test_none_disables_exactly_one_scorer() -> None:
    config = DiscoveryConfig.from_settings(
        settings(BLOGFEEDS_FEED_SCORERS={f"{SCORERS}.NoAlternate": None})
    )
    defaults = [load_object(path) for path in FEED_SCORERS_BASE]
    assert kinds(config.scorers) == [cls for cls in defaults if cls.__name__ != "NoAlternate"]
    assert kinds(config.stages) == [load_object(path) for path in FEED_STAGES_BASE]


def run(url: str, body: bytes, feeds: dict[str, bytes], config: DiscoveryConfig) -> FeedReport:
    async def fetch(request: FetchRequest) -> Fetched:
        if request.url in feeds:
            return Fetched(
                request.url, 200, {"Content-Type": "application/rss+xml"}, feeds[request.url]
            )
        return Fetched(request.url, 404, {}, b"")

    return asyncio.run(find_feeds(parse_page(url, body, {}), fetch, config=config))


BARE = b"<html><body><p>nothing advertised here</p></body></html>"
GUESSED = {"https://blog.example/atom.xml": RSS}


def test_disabling_a_scorer_keeps_its_stage() -> None:
    config = DiscoveryConfig.from_settings(
        settings(BLOGFEEDS_FEED_SCORERS={f"{SCORERS}.GuessPenalty": None})
    )
    report = run("https://blog.example/", BARE, GUESSED, config)
    assert [(f.url, f.source) for f in report.feeds] == [("https://blog.example/atom.xml", "guess")]
    assert report.feeds[0].score == 10
    default = run("https://blog.example/", BARE, GUESSED, DiscoveryConfig())
    assert default.feeds[0].reasons[1] == "-6 guessed path (atom.xml)"


def test_disabling_a_stage_stops_its_fetching() -> None:
    config = DiscoveryConfig.from_settings(
        settings(BLOGFEEDS_FEED_STAGES=f'{{"{STAGES}.GuessedPaths": null}}')
    )
    assert "GuessedPaths" not in [type(s).__name__ for s in config.stages]
    report = run("https://blog.example/", BARE, GUESSED, config)
    assert (report.feeds, report.requests) == ([], 0)


USER_STAGE = """
from urllib.parse import urljoin

from blogfeeds.extract.discovery.candidates import FeedCandidate
from blogfeeds.extract.discovery.stages import Stage


class FeedRss(Stage):
    def needed(self, run):
        return not run.found

    async def run(self, run):
        url = urljoin(run.page.url, "/feed.rss")
        for c in run.score([FeedCandidate(url, "", source="guess", hint="feed.rss")], run.page):
            await run.validate(c)
"""


def test_a_user_stage_runs_in_its_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "yourstages.py").write_text(USER_STAGE, "utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    config = DiscoveryConfig.from_settings(
        settings(BLOGFEEDS_FEED_STAGES='{"yourstages.FeedRss": 450}')
    )
    names = [type(s).__name__ for s in config.stages]
    assert names == [
        "LinkHeader",
        "LinkElements",
        "AnchorHints",
        "PlatformPaths",
        "FeedRss",
        "GuessedPaths",
        "OneHop",
    ]
    report = run("https://blog.example/", BARE, {"https://blog.example/feed.rss": RSS}, config)
    assert [f.url for f in report.feeds] == ["https://blog.example/feed.rss"]
    assert report.requests == 1  # before the guesses
    assert report.feeds[0].reasons[1] == "-6 guessed path (feed.rss)"
