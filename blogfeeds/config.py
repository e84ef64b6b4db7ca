"""The one configuration table: every setting of this project, read once into a typed config.

Options (:class:`~blogfeeds.option.Option`: name, default, type, allowed values, one-line doc,
environment variable) are grouped by the component that reads them into small frozen
dataclasses (:class:`~blogfeeds.option.SettingsGroup`, named ``*Settings``), listed in
:data:`SETTINGS_GROUPS`: ``LimitsSettings.from_settings(settings)`` reads and checks its options
and raises :class:`~blogfeeds.option.StartupError` naming the first bad one.
The table is the one place a default is written:

- :mod:`blogfeeds.settings` takes its values from :func:`defaults` (environment included);
- the start-up check (:func:`blogfeeds.extensions.startup.check_settings`) reads every config;
- :func:`unknown_settings` names a ``BLOGFEEDS_*`` setting no option knows, with the nearest
  known one (a start-up WARNING);
- the settings reference ``docs/settings.md`` is :func:`markdown`
  (``python -m blogfeeds.config --markdown > docs/settings.md``; a test keeps it current).
"""

from __future__ import annotations

import argparse
import difflib
import json
import socket
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from blogfeeds.extract.settings import (
    DiscoverySettings,
    ExtractSettings,
    FriendSettings,
    ProfileSettings,
)
from blogfeeds.frontier import defaults as frontier_defaults
from blogfeeds.health_settings import BlogHealthSettings
from blogfeeds.option import Option, SettingsGroup, SettingsLike, option
from blogfeeds.revisit import POLICIES
from blogfeeds.revisit.core import DAY
from blogfeeds.revisit.levels import T_MAX, T_MIN
from blogfeeds.theme_default_settings import ThemeDefaultSettings
from blogfeeds.websub.config import WebSubSettings

# --- the values some options take ----------------------------------------------------------------

STRATEGIES = ("bfs", "dfs", "backlinks", "opic", "big-site-first")
"""Accepted values of ``BLOGFEEDS_STRATEGY`` (:mod:`blogfeeds.crawl.order`)."""


def _strategy(raw: Any) -> str:
    name = str(raw or "bfs").strip().lower()
    if name not in STRATEGIES:
        raise ValueError(
            f"unknown crawl strategy {name!r}; expected one of {', '.join(STRATEGIES)}"
        )
    return name


def _policy(raw: Any) -> str:
    if raw not in POLICIES:
        raise ValueError(f"unknown revisit policy {raw!r}; expected one of {', '.join(POLICIES)}")
    return str(raw)


def _rank(raw: Any) -> int | str:
    rank = str(raw).strip().lower()
    if rank == "auto":
        return rank
    try:
        number = int(rank or 0)
    except ValueError:
        number = -1
    if not 0 <= number <= 5:
        raise ValueError(f"must be 0..5 or 'auto', got {rank!r}")
    return number


def _now(raw: Any) -> str:
    """An ISO 8601 time whose next 400 days are still dates, or empty (the real clock)."""
    text = str(raw)
    if not text.strip():
        return text
    from blogfeeds.storage.feedstore import iso, iso_minutes  # noqa: PLC0415 - only when set

    try:
        iso(iso_minutes(text.strip()) + 400 * DAY)  # a year of revisits ahead must be a date
    except (ValueError, OverflowError, OSError):
        problem = f"{text!r} is not an ISO 8601 time from 1970 to 9998 (e.g. 2026-01-31T12:00:00Z)"
        raise ValueError(problem) from None
    return text


# --- the configs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class UserAgentSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.settings (USER_AGENT)"

    contact_url: str = option(
        "BLOGFEEDS_CONTACT_URL",
        "https://github.com/blogfeeds/blogfeeds",
        "Contact URL in the User-Agent, blogfeeds/0.1 (+URL).",
        env="BLOGFEEDS_CONTACT_URL",
    )

    @property
    def user_agent(self) -> str:
        return f"blogfeeds/0.1 (+{self.contact_url})"


@dataclass(frozen=True)
class SsrfSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.middlewares.ssrf"

    allow_private_targets: bool = option(
        "BLOGFEEDS_ALLOW_PRIVATE_TARGETS",
        False,
        "Fetch loopback, private and link-local targets too (tests and local use only).",
        env="BLOGFEEDS_ALLOW_PRIVATE_TARGETS",
    )


@dataclass(frozen=True)
class LimitsSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.middlewares.limits"

    max_url_length: int = option(
        "BLOGFEEDS_MAX_URL_LENGTH", 2083, "Longest URL requested, characters; 0 = no cap.", low=0
    )
    max_requests_per_blog: int = option(
        "BLOGFEEDS_MAX_REQUESTS_PER_BLOG",
        50,
        "Requests per blog identity (pages, feed candidates, robots.txt, retries); 0 = no cap.",
        low=0,
    )


@dataclass(frozen=True)
class RobotsSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.middlewares.robotscache"

    max_age_hours: float = option(
        "BLOGFEEDS_ROBOTS_MAX_AGE_HOURS",
        24.0,
        "Hours a robots.txt kept in the store is used before it is asked again (conditional "
        "GET); RFC 9309 asks for at most 24. 0 = no cache: each crawl process asks every host.",
        low=0,
    )


@dataclass(frozen=True)
class RetrySettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.middlewares.retry"

    backoff_base: float = option(
        "BLOGFEEDS_RETRY_BACKOFF_BASE",
        1.0,
        "Seconds before the first retry, doubled for each next one; 0 = no wait.",
        low=0,
    )
    backoff_max: float = option(
        "BLOGFEEDS_RETRY_BACKOFF_MAX",
        30.0,
        "Longest wait before a retry, seconds (a longer Retry-After is cut to it).",
        low=0,
    )


@dataclass(frozen=True)
class StrategySettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.crawl.order"

    strategy: str = option(
        "BLOGFEEDS_STRATEGY",
        "bfs",
        "Order the blogs frontier is walked in (docs: strategies).",
        parse=_strategy,
        choices=STRATEGIES,
    )
    log_interval: float = option(
        "BLOGFEEDS_STRATEGY_LOG_INTERVAL",
        60.0,
        "Seconds between frontier-size log lines; 0 = only at open and close.",
        low=0,
    )


@dataclass(frozen=True)
class CrawlSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.spiders.blogs"

    max_blogs: int = option(
        "BLOGFEEDS_MAX_BLOGS",
        0,
        "Blogs a crawl requests at most, seeds included (a blog that fails is stored too); "
        "0 = no cap.",
        low=0,
    )
    seen_capacity: int = option(
        "BLOGFEEDS_SEEN_CAPACITY",
        250_000,
        "Blog ids a process remembers exactly, per seen-set (about 110 bytes each); 0 = unbounded.",
        low=0,
    )
    verify_claims: int = option(
        "BLOGFEEDS_VERIFY_CLAIMS",
        2,
        "Addresses a home page names as its own (canonical, og:url, a moved notice) that the "
        "crawl has not seen, requested per blog to confirm them (stored only when the evidence "
        "says one blog); 0 = off.",
        low=0,
    )
    extract_threads: int = option(
        "BLOGFEEDS_EXTRACT_THREADS",
        1,
        "Threads reading pages and feeds off the reactor thread (one at a time each); 0 = on "
        "the reactor thread.",
        low=0,
    )


@dataclass(frozen=True)
class HealthSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.extensions.health"

    stall_tick: float = option(
        "BLOGFEEDS_STALL_TICK",
        0.1,
        "Seconds between the reactor ticks that time its longest stall (stat "
        "blogfeeds/reactor/longest_stall_ms); 0 = off.",
        low=0,
    )


@dataclass(frozen=True)
class CapsSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.crawl.caps"

    max_blogs_per_domain: int = option(
        "BLOGFEEDS_MAX_BLOGS_PER_DOMAIN",
        10_000,
        "New blogs crawled per registered domain or hosting platform (all of *.github.io "
        "count as one), per crawl; 0 = no cap.",
        low=0,
    )


DATABASE_SETTINGS = ("MYSQL_URL", "BLOGFEEDS_DATABASE_URL")
"""The settings that name the database, the first one set winning."""


def database_setting(settings: SettingsLike) -> tuple[str, str]:
    """``(setting, url)`` of the database in use: ``MYSQL_URL`` when set (it wins), else
    ``BLOGFEEDS_DATABASE_URL``, the URL stripped; ``("", "")`` when both are empty, which means
    no storage."""
    for name in DATABASE_SETTINGS:
        url = (settings.get(name) or "").strip()
        if url:
            return name, url
    return "", ""


def database_url(settings: SettingsLike, given: str | None = None) -> str:
    """``given`` (a command's ``--database``), else the URL of :func:`database_setting`;
    ``""`` = no storage."""
    return (given or "").strip() or database_setting(settings)[1]


@dataclass(frozen=True)
class StorageSettings(SettingsGroup):
    """The database and how rows reach it. ``BLOGFEEDS_DATABASE_URL`` not set reads as the
    table's SQLite file (as in the project's settings); storage is off only when it is set
    empty (and ``MYSQL_URL`` is not set)."""

    component: ClassVar[str] = "blogfeeds.pipelines, blogfeeds.storage"

    database_url: str = option(
        "BLOGFEEDS_DATABASE_URL",
        "sqlite:///blogfeeds.sqlite3",
        "Database: sqlite:///path or mysql://user:pass@host:port/db; empty = no storage.",
        env="BLOGFEEDS_DATABASE_URL",
    )
    mysql_url: str | None = option(
        "MYSQL_URL",
        None,
        "MySQL 8 / MariaDB URL; when set, it wins over BLOGFEEDS_DATABASE_URL.",
        env="MYSQL_URL",
    )
    batch_size: int = option("BLOGFEEDS_DB_BATCH_SIZE", 500, "Rows written per transaction.", low=1)
    max_attempts: int = option(
        "BLOGFEEDS_DB_MAX_ATTEMPTS",
        3,
        "Attempts at writing a failed batch before it goes to the spool file.",
        low=1,
    )
    spool_path: str = option(
        "BLOGFEEDS_SPOOL_PATH",
        "blogfeeds-spool.jsonl",
        "JSON-lines file of unwritten rows, loaded again by the next run.",
    )
    flush_interval: float = option(
        "BLOGFEEDS_DB_FLUSH_INTERVAL",
        2.0,
        "Seconds between timed flushes of a partly filled batch; 0 = only when full and at close.",
        low=0,
    )
    down_limit: float = option(
        "BLOGFEEDS_DB_DOWN_LIMIT",
        60.0,
        "Seconds MySQL may stay unreachable before the crawl stops (database_down).",
        low=0,
    )
    keep_blogs_without_feed: bool = option(
        "BLOGFEEDS_KEEP_BLOGS_WITHOUT_FEED",
        True,
        "Store blogs without a feed (status no_feed); False stores blogs with feeds only.",
    )

    @property
    def url(self) -> str:
        """The database in use (:func:`database_url`); ``""`` = none."""
        return database_url(
            {"MYSQL_URL": self.mysql_url, "BLOGFEEDS_DATABASE_URL": self.database_url}
        )


@dataclass(frozen=True)
class FrontierSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.frontier (the Redis frontier)"

    redis_url: str | None = option(
        "REDIS_URL",
        None,
        "redis://:password@host:6379/0: turns on the shared frontier (docs: Redis).",
        env="REDIS_URL",
    )
    redis_prefix: str = option(
        "BLOGFEEDS_REDIS_PREFIX",
        frontier_defaults.REDIS_PREFIX,
        "Put before every Redis key, so that crawls can share one Redis.",
        env="BLOGFEEDS_REDIS_PREFIX",
    )
    worker_id: str = option(
        "BLOGFEEDS_WORKER_ID",
        "",
        "Worker identity whose in-flight work a restart takes back; empty = the host name.",
        env="BLOGFEEDS_WORKER_ID",
    )
    worker_ttl: float = option(
        "BLOGFEEDS_WORKER_TTL",
        frontier_defaults.WORKER_TTL,
        "Seconds a worker's heartbeat key lives in Redis.",
        low=0,
        low_open=True,
    )
    redis_down_limit: float = option(
        "BLOGFEEDS_REDIS_DOWN_LIMIT",
        frontier_defaults.REDIS_DOWN_LIMIT,
        "Seconds Redis may stay unreachable before the crawl stops (redis_down).",
        low=0,
    )
    max_held: int = option(
        "BLOGFEEDS_FRONTIER_MAX_HELD",
        frontier_defaults.MAX_HELD,
        "Requests one worker holds at a time (downloading or waiting for extraction); the rest "
        "stay in Redis for the other workers. 0 = as many as Scrapy takes.",
        low=0,
    )

    @property
    def worker(self) -> str:
        """``BLOGFEEDS_WORKER_ID``, else the host name: the identity whose in-flight work a
        restarted worker takes back (several workers on one host need distinct ids)."""
        return self.worker_id or socket.gethostname()


@dataclass(frozen=True)
class RevisitSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.revisit (scrapy crawl feeds)"

    policy: str = option(
        "BLOGFEEDS_REVISIT_POLICY",
        "levels",
        'Revisit policy: "levels" (five levels) or "estimate" (posting-rate estimate).',
        parse=_policy,
        choices=POLICIES,
    )
    budget: float = option(
        "BLOGFEEDS_REVISIT_BUDGET",
        3.0,
        '"estimate": fetches per feed per day on average, over all feeds.',
        low=0,
        low_open=True,
    )
    level_mode: bool = option(
        "BLOGFEEDS_REVISIT_LEVEL_MODE",
        False,
        '"estimate": snap every interval to the nearest of the five levels.',
    )
    rank: int | str = option(
        "BLOGFEEDS_REVISIT_RANK",
        0,
        'RssRank of newly scheduled feeds, or "auto" (from the friend links to the blog).',
        parse=_rank,
        kind="integer or auto",
        allowed="0..5, auto",
    )
    initial_t: float = option(
        "BLOGFEEDS_REVISIT_INITIAL_T",
        1000,
        '"levels": T of a new feed, minutes.',
        type=float,
        low=T_MIN,
        high=T_MAX,
        unit="minutes",
    )


@dataclass(frozen=True)
class FeedsSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.spiders.feeds"

    loop: bool = option(
        "BLOGFEEDS_FEEDS_LOOP",
        False,
        "Keep running and sleep until the next feed is due (-a loop=true).",
    )
    batch: int = option("BLOGFEEDS_FEEDS_BATCH", 50, "Due feeds leased per claim.", low=1)
    max_sleep: float = option(
        "BLOGFEEDS_FEEDS_MAX_SLEEP",
        60.0,
        "Loop mode: longest sleep before looking for new feeds, seconds.",
        low=0,
        low_open=True,
    )
    now: str = option(
        "BLOGFEEDS_NOW",
        "",
        "Virtual now at start, for tests and replays; empty = the real clock.",
        env="BLOGFEEDS_NOW",
        parse=_now,
        kind="ISO 8601 time",
        allowed="1970 to 9998, or empty",
    )


@dataclass(frozen=True)
class OptOutSettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.crawl.optoutfile"

    path: str = option(
        "BLOGFEEDS_OPT_OUT",
        "",
        "File of addresses left out of every crawl (docs/opt-out.md); empty = none.",
        env="BLOGFEEDS_OPT_OUT",
    )
    check_interval: float = option(
        "BLOGFEEDS_OPT_OUT_CHECK",
        5.0,
        "Seconds between looks at the opt-out file's modification time (a change is re-read).",
        low=0,
    )


@dataclass(frozen=True)
class SummarySettings(SettingsGroup):
    component: ClassVar[str] = "blogfeeds.extensions.summary"

    enabled: bool = option(
        "BLOGFEEDS_SUMMARY_ENABLED", True, "Log a summary of the crawl when it closes."
    )
    top: int = option("BLOGFEEDS_SUMMARY_TOP", 10, "Most linked blogs listed.", low=0)


@dataclass(frozen=True)
class LogSettings(SettingsGroup):
    component: ClassVar[str] = "Scrapy's logging"

    log_level: str = option(
        "LOG_LEVEL",
        "INFO",
        "Scrapy's log level: DEBUG, INFO, WARNING, ERROR or CRITICAL.",
        env="BLOGFEEDS_LOG_LEVEL",
    )


SETTINGS_GROUPS: tuple[type[SettingsGroup], ...] = (
    UserAgentSettings,
    SsrfSettings,
    LimitsSettings,
    RobotsSettings,
    RetrySettings,
    StrategySettings,
    CrawlSettings,
    CapsSettings,
    HealthSettings,
    BlogHealthSettings,
    ExtractSettings,
    DiscoverySettings,
    FriendSettings,
    ProfileSettings,
    StorageSettings,
    ThemeDefaultSettings,
    FrontierSettings,
    RevisitSettings,
    FeedsSettings,
    WebSubSettings,
    OptOutSettings,
    SummarySettings,
    LogSettings,
)
"""Every config, in the order of the settings reference: the one configuration table."""


def _table() -> dict[str, Option]:
    table: dict[str, Option] = {}
    for config in SETTINGS_GROUPS:
        for opt in config.options():
            if opt.name in table:
                raise RuntimeError(f"{opt.name} is an option of two configs")
            table[opt.name] = opt
    return table


OPTIONS: dict[str, Option] = _table()
"""Every option by setting name."""


def defaults() -> dict[str, Any]:
    """``{setting: value}`` for :mod:`blogfeeds.settings`: each default, or its environment
    variable's value when that is set."""
    return {name: opt.project_default() for name, opt in OPTIONS.items()}


def unknown_settings(names: Iterable[str]) -> list[str]:
    """One message per ``BLOGFEEDS_*`` name no option knows, naming the nearest known one:
    ``"BLOGFEEDS_MAX_BLOG: unknown setting; did you mean BLOGFEEDS_MAX_BLOGS?"``."""
    prefix = "BLOGFEEDS_"
    known = [name.removeprefix(prefix) for name in OPTIONS if name.startswith(prefix)]
    messages = []
    for name in sorted(set(names)):
        if name.startswith(prefix) and name not in OPTIONS:
            # compared without the common prefix, which would make every name look near
            nearest = difflib.get_close_matches(name.removeprefix(prefix), known, n=1)
            hint = f"; did you mean {prefix}{nearest[0]}?" if nearest else ""
            messages.append(f"{name}: unknown setting{hint}")
    return messages


# --- the settings reference ----------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _shown(value: Any) -> str:
    if value is None:
        return "unset"
    if value == "":
        return '`""`'
    return f"`{json.dumps(value) if isinstance(value, dict) else value}`"


def markdown() -> str:
    """The settings reference (``docs/settings.md``), one table per config."""
    lines = [
        "# Settings reference",
        "",
        "<!-- Generated from blogfeeds/config.py: python -m blogfeeds.config --markdown -->",
        "",
        "Every setting of blogfeeds, by the component that reads it. Set one with",
        "`scrapy crawl ... -s NAME=VALUE`, in a project's settings, or (where the Environment",
        "column names a variable) in the environment. A bad value stops the crawl at start with",
        "one ERROR line naming the setting (exit status 2); a `BLOGFEEDS_*` setting that no",
        "component knows is a WARNING naming the nearest known one.",
    ]
    for config in SETTINGS_GROUPS:
        lines += ["", f"## {config.__name__}", "", f"Read by `{config.component}`.", ""]
        lines += [
            "| Setting | Default | Type | Allowed | Environment | Description |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for opt in config.options():
            cells = [
                f"`{opt.name}`",
                _shown(opt.default),
                opt.kind_text(),
                opt.allowed_text(),
                f"`{opt.env}`" if opt.env else "",
                opt.doc,
            ]
            lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += ["", "## Default components", ""]
    lines += [
        "Each component setting is your dict, merged over its base below (Scrapy's",
        "`build_component_list` semantics; docs/scoring.md): name a component with a new order",
        "to move it, with `None` to disable it.",
    ]
    for setting, base in _component_bases():
        lines += ["", f"`{setting}` over:", "", "| Component | Order |", "| --- | --- |"]
        lines += [f"| `{path}` | {order} |" for path, order in base.items()]
    return "\n".join(lines) + "\n"


def _component_bases() -> list[tuple[str, Mapping[str, int | None]]]:
    """The four component settings and the base dict each is merged over (imported here, for
    the reference only: the table itself imports no component)."""
    from blogfeeds.extract.discovery import FEED_SCORERS_BASE, FEED_STAGES_BASE  # noqa: PLC0415
    from blogfeeds.extract.friends import FRIEND_LAYERS_BASE, FRIEND_SCORERS_BASE  # noqa: PLC0415

    return [
        ("BLOGFEEDS_FEED_STAGES", FEED_STAGES_BASE),
        ("BLOGFEEDS_FEED_SCORERS", FEED_SCORERS_BASE),
        ("BLOGFEEDS_FRIEND_LAYERS", FRIEND_LAYERS_BASE),
        ("BLOGFEEDS_FRIEND_SCORERS", FRIEND_SCORERS_BASE),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m blogfeeds.config", description=__doc__)
    parser.add_argument("--markdown", action="store_true", help="print the settings reference")
    opts = parser.parse_args(argv)
    if opts.markdown:
        sys.stdout.write(markdown())
    else:
        for name, value in defaults().items():
            print(f"{name} = {value!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
