"""``scrapy seed FILE|URL ...``: push seeds into the shared Redis frontier.

Each argument is an http(s) URL or a seeds file (plain text, one URL a line, or OPML; see
:mod:`blogfeeds.seeds`). Every good seed is appended (``RPUSH``, first in first out) to
``<BLOGFEEDS_REDIS_PREFIX><spider>:start_urls`` as JSON ``{"url": ..., "meta": {...}}``
(``meta`` holds ``seed_feed_url`` and ``seed_title`` when an OPML outline gave them); a running
crawl picks them up when idle, a new one at start. Seeds already crawled are dropped there by
the shared dupefilter, not here.

Bad seeds are printed to stderr with their file and line; the good ones are still pushed and the
exit code is 1. Needs ``REDIS_URL`` (environment or ``-s``): exit code 2 and a usage error
without it. ``--spider`` (default ``blogs``) names the crawl; ``--dry-run`` prints the JSON
payloads instead of pushing them.
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser, Namespace
from typing import Any

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from blogfeeds.redis_compat import FrontierKeys, redis_prefix, seed_payload
from blogfeeds.seeds import Seed, SeedError, load_seeds


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
        parser.add_argument("--spider", default="blogs", help="crawl to seed (default: blogs)")
        parser.add_argument(
            "--dry-run", action="store_true", help="print the JSON payloads, push nothing"
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
            key = self._push(payloads, opts.spider)
            print(f"pushed {len(payloads)} seeds to {key}")
        if errors:
            print(f"{len(errors)} bad seeds (not pushed)", file=sys.stderr)
            self.exitcode = 1

    def _push(self, payloads: list[str], spider: str) -> str:
        assert self.settings is not None
        if not self.settings.get("REDIS_URL"):
            raise UsageError("REDIS_URL is not set: the shared frontier lives in Redis")
        from scrapy_redis import connection  # noqa: PLC0415 - only when pushing

        server = connection.get_redis_from_settings(self.settings)
        key = FrontierKeys(redis_prefix(self.settings), spider, "").start_urls
        for start in range(0, len(payloads), 1000):
            server.rpush(key, *payloads[start : start + 1000])
        return key
