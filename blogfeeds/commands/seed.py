"""``scrapy seed FILE|URL ...``: push seeds into the shared Redis frontier.

Each argument is an http(s) URL or a seeds file (plain text, one URL a line, or OPML; see
:mod:`blogfeeds.crawl.seeds`). Every good seed is appended (``RPUSH``, first in first out) to
``<BLOGFEEDS_REDIS_PREFIX><spider>:start_urls`` as JSON ``{"url": ..., "meta": {...}}``
(``meta`` holds ``seed_feed_url`` and ``seed_title`` when an OPML outline gave them); a running
crawl picks them up when idle, a new one at start. Seeds already crawled are dropped there by
the shared dupefilter, not here. ``--recrawl`` first makes the frontier forget the seeds' blogs
(:func:`blogfeeds.frontier.dupefilter.forget_blog`: the dupefilter's fingerprint, the shared
depth, the blog-id claim), so that a blog crawled before is fetched and stored again.

Bad seeds are printed to stderr with their file and line; the good ones are still pushed and the
exit code is 1. Needs ``REDIS_URL``. The other exit codes (2: no or bad ``REDIS_URL``, refused
credentials; 3: Redis unreachable), ``--spider`` and ``--dry-run``: docs/redis.md ("Seeds").
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser, Namespace
from contextlib import suppress
from typing import Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from blogfeeds.commands import clear_help
from blogfeeds.config import FrontierSettings
from blogfeeds.crawl.seeds import Seed, SeedError, load_seeds
from blogfeeds.crawl.urls import crawl_url
from blogfeeds.extensions.startup import redis_error, redis_server
from blogfeeds.extract.identity import blog_id
from blogfeeds.frontier.defaults import FrontierKeys
from blogfeeds.frontier.dupefilter import forget_blog
from blogfeeds.frontier.spiders import seed_payload
from blogfeeds.option import StartupError


def collect(args: list[str]) -> tuple[list[Seed], list[SeedError]]:
    """Seeds from URL and file arguments, in argument order, deduplicated (first kept)."""
    seeds: list[Seed] = []
    errors: list[SeedError] = []
    seen: set[str] = set()
    for arg in args:
        is_url = "://" in arg
        found, bad = load_seeds(start_urls=arg) if is_url else load_seeds(seeds=arg)
        errors.extend(bad)
        for seed in found:
            if seed.url not in seen:
                seen.add(seed.url)
                seeds.append(seed)
    return seeds, errors


EXIT_REDIS_DOWN = 3
"""Exit code when Redis does not answer (not every seed was pushed)."""


class RedisDown(Exception):
    """Redis stopped answering during the push: ``str()`` is the one line to print."""


def payload(seed: Seed) -> str:
    """The JSON pushed for one seed."""
    meta: dict[str, Any] = {}
    if seed.feed_url:
        meta["seed_feed_url"] = seed.feed_url
    if seed.title:
        meta["seed_title"] = seed.title
    return seed_payload(seed.url, meta)


class Command(ScrapyCommand):
    requires_project = True
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012 - Scrapy's class attribute

    def syntax(self) -> str:
        return "[options] FILE|URL [FILE|URL ...]"

    def short_desc(self) -> str:
        return "Push seed blogs (URLs, text or OPML files) into the shared Redis frontier"

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        clear_help(parser)
        parser.add_argument("--spider", default="blogs", help="crawl to seed (default: blogs)")
        parser.add_argument(
            "--dry-run", action="store_true", help="print the JSON payloads, push nothing"
        )
        parser.add_argument(
            "--recrawl",
            action="store_true",
            help="crawl these blogs again although the frontier has crawled them",
        )

    def run(self, args: list[str], opts: Namespace) -> None:
        if not args:
            raise UsageError("give at least one seed URL or seeds file")
        assert self.settings is not None
        seeds, errors = collect(args)
        for error in errors:
            print(f"bad seed {error}", file=sys.stderr)
        payloads = [payload(seed) for seed in seeds]
        if opts.dry_run:
            for line in payloads:
                print(line)
        elif payloads:
            try:
                key = self._push(payloads, opts.spider, seeds if opts.recrawl else [])
            except StartupError as exc:
                print(f"ERROR: {exc}", file=sys.stderr)
                self.exitcode = 2
                return
            except RedisDown as exc:
                print(f"ERROR: {exc}", file=sys.stderr)
                self.exitcode = EXIT_REDIS_DOWN
                return
            print(f"pushed {len(payloads)} seeds to {key}")
        if errors:
            print(f"{len(errors)} bad seeds (not pushed)", file=sys.stderr)
            self.exitcode = 1

    def _push(self, payloads: list[str], spider: str, forget: list[Seed]) -> str:
        """Push ``payloads``, 1000 per ``RPUSH``; the key. ``StartupError`` on ``REDIS_URL``
        (malformed, credentials refused), :class:`RedisDown` when Redis does not answer."""
        assert self.settings is not None
        config = FrontierSettings.from_settings(self.settings)
        if not config.redis_url:
            raise UsageError("REDIS_URL is not set: the shared frontier lives in Redis")
        from redis.exceptions import RedisError  # noqa: PLC0415 - only when pushing

        server = redis_server(self.settings)
        key = FrontierKeys(config.redis_prefix, spider, "").start_urls
        pushed = 0
        try:
            keys = FrontierKeys(config.redis_prefix, spider, "")
            for seed in forget:
                with suppress(ValueError):  # a seed without a blog id: nothing to forget
                    forget_blog(server, keys, blog_id(crawl_url(seed.url)))
            for start in range(0, len(payloads), 1000):
                chunk = payloads[start : start + 1000]
                server.rpush(key, *chunk)
                pushed += len(chunk)
        except RedisError as exc:
            error = redis_error(server, exc)
            if isinstance(error, StartupError):
                raise error from None
            raise RedisDown(f"{error} ({pushed} of {len(payloads)} seeds pushed)") from None
        finally:
            server.close()
        return key
