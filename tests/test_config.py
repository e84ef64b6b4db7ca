"""The one configuration table (:mod:`blogfeeds.config`): typed configs read once, the
project's settings and the start-up check built from it, unknown settings named, and the
settings reference generated from it."""

from __future__ import annotations

import dataclasses
import logging
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scrapy import Spider
from scrapy.exceptions import NotConfigured
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from blogfeeds import config, option
from blogfeeds.config import (
    OPTIONS,
    SETTINGS_GROUPS,
    CrawlSettings,
    DiscoverySettings,
    ExtractSettings,
    FeedsSettings,
    LimitsSettings,
    RevisitSettings,
    SsrfSettings,
    StorageSettings,
    StrategySettings,
    SummarySettings,
)
from blogfeeds.option import StartupError

REPO = Path(__file__).resolve().parent.parent


def project_settings() -> Settings:
    settings = Settings()
    settings.setmodule("blogfeeds.settings")
    return settings


def test_settings_reference_is_generated_from_the_table() -> None:
    # regenerate with: python -m blogfeeds.config --markdown > docs/settings.md
    assert (REPO / "docs" / "settings.md").read_text("utf-8") == config.markdown()
    for name in OPTIONS:
        assert f"`{name}`" in config.markdown()


def test_every_config_is_in_the_table() -> None:
    subclasses = {
        value
        for value in vars(config).values()
        if isinstance(value, type)
        and issubclass(value, config.SettingsGroup)
        and value is not config.SettingsGroup
    }
    assert subclasses == set(SETTINGS_GROUPS)
    for cls in SETTINGS_GROUPS:
        assert dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        assert cls.component
        assert all("option" in f.metadata for f in dataclasses.fields(cls))
    assert len(OPTIONS) == sum(len(cls.options()) for cls in SETTINGS_GROUPS)  # no name twice


def test_project_settings_take_their_values_from_the_table() -> None:
    from blogfeeds import settings

    project = {name: value for name, value in vars(settings).items() if name.isupper()}
    ours = {name for name in project if name.startswith("BLOGFEEDS_")}
    assert ours <= set(OPTIONS)  # every project setting is an option
    for name, opt in OPTIONS.items():
        assert project[name] == opt.project_default(), name
    # a default is written once: no BLOGFEEDS_* assignment in the settings module
    source = (REPO / "blogfeeds" / "settings.py").read_text("utf-8")
    assert not re.findall(r"^BLOGFEEDS_\w+\s*[:=]", source, re.MULTILINE)
    assert settings.USER_AGENT == "blogfeeds/0.1 (+https://github.com/blogfeeds/blogfeeds)"


def test_environment_variables_set_the_project_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BLOGFEEDS_ALLOW_PRIVATE_TARGETS", "yes")
    monkeypatch.setenv("BLOGFEEDS_DATABASE_URL", "sqlite:///elsewhere.sqlite3")
    monkeypatch.delenv("MYSQL_URL", raising=False)
    values = config.defaults()
    assert values["BLOGFEEDS_ALLOW_PRIVATE_TARGETS"] is True
    assert values["BLOGFEEDS_DATABASE_URL"] == "sqlite:///elsewhere.sqlite3"
    assert values["MYSQL_URL"] is None
    monkeypatch.setenv("BLOGFEEDS_ALLOW_PRIVATE_TARGETS", "0")
    assert config.defaults()["BLOGFEEDS_ALLOW_PRIVATE_TARGETS"] is False
    with_env = [name for name, opt in OPTIONS.items() if opt.env]
    assert "REDIS_URL" in with_env and "BLOGFEEDS_NOW" in with_env
    assert "BLOGFEEDS_MAX_BLOGS" not in with_env


def test_a_config_reads_its_options_once_into_a_frozen_dataclass() -> None:
    limits = LimitsSettings.from_settings({"BLOGFEEDS_MAX_URL_LENGTH": "100"})
    assert limits == LimitsSettings(max_url_length=100, max_requests_per_blog=50)
    with pytest.raises(dataclasses.FrozenInstanceError):
        limits.max_url_length = 5  # type: ignore[misc]
    assert CrawlSettings.from_settings({}) == CrawlSettings()  # not set: the defaults
    assert ExtractSettings().max_pages_per_blog == 3
    revisit = RevisitSettings.from_settings({"BLOGFEEDS_REVISIT_RANK": " Auto "})
    assert (revisit.rank, revisit.initial_t) == ("auto", 1000)
    assert RevisitSettings.from_settings({"BLOGFEEDS_REVISIT_RANK": "3"}).rank == 3
    assert StrategySettings.from_settings({"BLOGFEEDS_STRATEGY": " OPIC"}).strategy == "opic"
    assert SsrfSettings.from_settings(
        {"BLOGFEEDS_ALLOW_PRIVATE_TARGETS": "true"}
    ).allow_private_targets
    scorers = DiscoverySettings.from_settings({"BLOGFEEDS_FEED_SCORERS": '{"my.Rule": 250}'})
    assert scorers.scorers == {"my.Rule": 250}
    first, second = DiscoverySettings(), DiscoverySettings()
    assert first.scorers == {} and first.scorers is not second.scorers  # never shared
    storage = StorageSettings.from_settings({"MYSQL_URL": " ", "BLOGFEEDS_DATABASE_URL": " x "})
    assert storage.url == "x"
    assert StorageSettings(mysql_url="mysql://h/db").url == "mysql://h/db"
    now = FeedsSettings.from_settings({"BLOGFEEDS_NOW": "2026-01-31T12:00:00Z"}).now
    assert now == "2026-01-31T12:00:00Z"


@pytest.mark.parametrize(
    ("config_class", "settings", "message"),
    [
        (
            CrawlSettings,
            {"BLOGFEEDS_MAX_BLOGS": "abc"},
            "BLOGFEEDS_MAX_BLOGS: 'abc' is not an integer",
        ),
        (
            CrawlSettings,
            {"BLOGFEEDS_MAX_BLOGS": "-5"},
            "BLOGFEEDS_MAX_BLOGS: must be ≥ 0, got '-5'",
        ),
        (ExtractSettings, {"BLOGFEEDS_MAX_PAGES_PER_BLOG": 0}, "must be ≥ 1, got 0"),
        (StorageSettings, {"BLOGFEEDS_DB_FLUSH_INTERVAL": "soon"}, "'soon' is not a number"),
        (StorageSettings, {"BLOGFEEDS_DB_DOWN_LIMIT": "inf"}, "'inf' is not a finite number"),
        (
            StorageSettings,
            {"BLOGFEEDS_KEEP_BLOGS_WITHOUT_FEED": "maybe"},
            "'maybe' is not a boolean",
        ),
        (RevisitSettings, {"BLOGFEEDS_REVISIT_BUDGET": "0"}, "must be > 0, got '0'"),
        (
            RevisitSettings,
            {"BLOGFEEDS_REVISIT_INITIAL_T": "5"},
            "BLOGFEEDS_REVISIT_INITIAL_T: must be from 20 to 10000 (minutes), got '5'",
        ),
        (RevisitSettings, {"BLOGFEEDS_REVISIT_RANK": "9"}, "must be 0..5 or 'auto', got '9'"),
        (
            RevisitSettings,
            {"BLOGFEEDS_REVISIT_POLICY": "magic"},
            "unknown revisit policy 'magic'; expected one of levels, estimate",
        ),
        (
            StrategySettings,
            {"BLOGFEEDS_STRATEGY": "pagerank"},
            "BLOGFEEDS_STRATEGY: unknown crawl strategy 'pagerank'; expected one of bfs, dfs",
        ),
        (
            config.FriendSettings,
            {"BLOGFEEDS_FRIEND_RULESET": "newest"},
            "'newest' is not one of blogfeeds, original",
        ),
        (DiscoverySettings, {"BLOGFEEDS_FEED_SCORERS": "[1]"}, "is not a dict (a JSON object)"),
        (
            FeedsSettings,
            {"BLOGFEEDS_NOW": "9999-12-31T23:59:59Z"},
            "BLOGFEEDS_NOW: '9999-12-31T23:59:59Z' is not an ISO 8601 time from 1970 to 9998",
        ),
        (config.FrontierSettings, {"BLOGFEEDS_WORKER_TTL": "0"}, "must be > 0, got '0'"),
    ],
)
def test_a_bad_value_is_a_startup_error_naming_it(
    config_class: type[option.SettingsGroup], settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(StartupError) as caught:
        config_class.from_settings(settings)
    assert message in str(caught.value)
    assert caught.value.setting == next(iter(settings))


def test_extraction_declares_its_options_apart_from_the_extractors() -> None:
    # the rulesets the settings accept are the ones the extractors know
    from blogfeeds.extract.discovery import RULESETS as FEED_RULESETS
    from blogfeeds.extract.friends import RULESETS as FRIEND_RULESETS

    assert config.OPTIONS["BLOGFEEDS_FEED_RULESET"].choices == tuple(FEED_RULESETS)
    assert config.OPTIONS["BLOGFEEDS_FRIEND_RULESET"].choices == tuple(FRIEND_RULESETS)
    assert "BLOGFEEDS_MAX_PAGES_PER_BLOG" in config.OPTIONS


def test_the_settings_module_loads_no_extractor() -> None:
    """Scrapy imports the settings for every command (``scrapy stats`` too): no parser, no
    trafilatura or feedparser, no Scrapy component of ours."""
    code = "import sys, blogfeeds.settings; print(' '.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    heavy = ("lxml", "trafilatura", "feedparser", "scrapy", "twisted", "blogfeeds.crawl")
    assert not [m for m in out if m.startswith(heavy)], out
    assert "blogfeeds.extract.settings" in out


def test_unknown_setting_names_the_nearest_known_one() -> None:
    assert config.unknown_settings(["BLOGFEEDS_MAX_BLOG", "BLOGFEEDS_MAX_BLOGS", "DEPTH"]) == [
        "BLOGFEEDS_MAX_BLOG: unknown setting; did you mean BLOGFEEDS_MAX_BLOGS?"
    ]
    assert config.unknown_settings(["BLOGFEEDS_ZZZ"]) == ["BLOGFEEDS_ZZZ: unknown setting"]
    assert config.unknown_settings(project_settings()) == []


def test_startup_check_warns_of_an_unknown_setting(caplog: pytest.LogCaptureFixture) -> None:
    from blogfeeds.extensions.startup import StartupCheck

    crawler = get_crawler(Spider, {"BLOGFEEDS_MAX_BLOG": 5, "BLOGFEEDS_MAX_BLOGS": 5})
    with caplog.at_level(logging.WARNING, logger="blogfeeds.extensions.startup"):
        StartupCheck.from_crawler(crawler)
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "BLOGFEEDS_MAX_BLOG: unknown setting; did you mean BLOGFEEDS_MAX_BLOGS?"
    ]


def test_components_off_by_a_setting_are_not_configured() -> None:
    from blogfeeds.extensions.summary import CrawlSummary
    from blogfeeds.middlewares.limits import CrawlLimitsMiddleware

    crawler = get_crawler(Spider, {"BLOGFEEDS_SUMMARY_ENABLED": False})
    with pytest.raises(NotConfigured):
        CrawlSummary.from_crawler(crawler)
    crawler = get_crawler(
        Spider, {"BLOGFEEDS_MAX_URL_LENGTH": 0, "BLOGFEEDS_MAX_REQUESTS_PER_BLOG": 0}
    )
    with pytest.raises(NotConfigured):
        CrawlLimitsMiddleware.from_crawler(crawler)
    on = CrawlLimitsMiddleware.from_crawler(get_crawler(Spider, {"BLOGFEEDS_MAX_URL_LENGTH": 9}))
    assert (on.max_url_length, on.max_per_blog) == (9, 50)
    assert SummarySettings.from_settings(project_settings()) == SummarySettings()
