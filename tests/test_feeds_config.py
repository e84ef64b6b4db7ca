"""The feeds crawl's settings (blogfeeds.feedcrawl.config): read once, defaults as in
settings.py."""

from __future__ import annotations

from dataclasses import replace

import pytest
from scrapy.settings import Settings

from blogfeeds.feedcrawl.config import FeedsConfig
from blogfeeds.option import StartupError


def project_settings(**values: object) -> Settings:
    settings = Settings()
    settings.setmodule("blogfeeds.settings")
    settings.setdict(values, priority="cmdline")
    return settings


def test_the_defaults_are_the_project_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLOGFEEDS_NOW", raising=False)
    config = FeedsConfig.from_settings(project_settings(BLOGFEEDS_NOW="", BLOGFEEDS_WORKER_ID=""))
    assert config.worker  # the host name
    assert replace(config, worker="") == FeedsConfig()


def test_values_are_read_and_the_loop_argument_wins() -> None:
    settings = project_settings(
        BLOGFEEDS_REVISIT_RANK="auto",
        BLOGFEEDS_FEEDS_BATCH=7,
        BLOGFEEDS_FEEDS_LOOP=True,
        BLOGFEEDS_NOW="1970-01-02T00:00:00Z",
        BLOGFEEDS_WORKER_ID="w1",
    )
    config = FeedsConfig.from_settings(settings)
    assert (config.rank, config.batch, config.loop, config.start, config.worker) == (
        "auto",
        7,
        True,
        1440.0,
        "w1",
    )
    assert not FeedsConfig.from_settings(settings, loop="no").loop
    assert FeedsConfig.from_settings(project_settings(), loop="yes").loop
    with pytest.raises(StartupError, match=r"-a loop: 'maybe' is not true or false"):
        FeedsConfig.from_settings(project_settings(), loop="maybe")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("BLOGFEEDS_REVISIT_POLICY", "fastest"),
        ("BLOGFEEDS_REVISIT_RANK", "6"),
        ("BLOGFEEDS_NOW", "yesterday"),
        ("BLOGFEEDS_NOW", "9999-12-01T00:00:00Z"),
        ("BLOGFEEDS_FEEDS_BATCH", "0"),
    ],
)
def test_a_bad_value_is_a_startup_error_naming_it(name: str, value: str) -> None:
    with pytest.raises(StartupError, match=name):
        FeedsConfig.from_settings(project_settings(**{name: value}))
