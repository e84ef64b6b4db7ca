"""``scrapy demo [DIR]``: the whole of blogfeeds without a network, in one command.

Serves the bundled little blogosphere (:mod:`blogfeeds.demo.blogosphere`) on loopback through a
local forward proxy (:class:`blogfeeds.demo.web.LittleWeb`: real-looking host names, no
``/etc/hosts`` edit, no root), then runs what a user runs, each as its own ``scrapy`` process
with that proxy in its environment: ``crawl blogs`` from the seed, ``crawl feeds``, ``export
site``. Everything goes to ``DIR`` (default ``blogfeeds-demo``): ``demo.sqlite3``, made afresh
each time, and ``site/``. Each step's summary is printed, then where to open the site.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from argparse import ArgumentParser, Namespace
from pathlib import Path

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from blogfeeds.commands import clear_help
from blogfeeds.demo.blogosphere import BLOGS, SEED, routes
from blogfeeds.demo.web import LittleWeb

# A Scrapy log record starts with its time; the last one of a crawl is its summary.
_RECORD = re.compile(r"\n(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[)")
# Loopback needs no politeness delay; the rest is the project's settings.
_FAST = ("-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "LOG_LEVEL=INFO")


class Command(ScrapyCommand):
    requires_project = True
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012 - Scrapy reads it as a class attribute

    def syntax(self) -> str:
        return "[DIR]"

    def short_desc(self) -> str:
        return "Crawl a bundled little blogosphere on loopback (no network) and build its site"

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        clear_help(parser)

    def run(self, args: list[str], opts: Namespace) -> None:
        if len(args) > 1:
            raise UsageError("give at most one folder: scrapy demo [DIR]")
        out = Path(args[0] if args else "blogfeeds-demo").resolve()
        if out.exists() and not out.is_dir():
            raise UsageError(f"{out} is a file: give a folder for the demo", print_help=False)
        out.mkdir(parents=True, exist_ok=True)
        database = out / "demo.sqlite3"
        for suffix in ("", "-wal", "-shm"):  # the demo's own files: it starts afresh
            Path(f"{database}{suffix}").unlink(missing_ok=True)
        steps = [
            (["crawl", "blogs", "-a", f"start_urls={SEED}"], _FAST),
            (["crawl", "feeds"], _FAST),
            (["export", "site", str(out / "site")], ()),
        ]
        with LittleWeb(routes()) as web:
            print(
                f"Serving {len(BLOGS)} blogs on loopback through a local proxy "
                f"({web.proxy_url}), seed {SEED}",
                flush=True,
            )
            env = _environment(web, f"sqlite:///{database}")
            for argv, settings in steps:
                name = shlex.join(argv)
                print(f"\n$ scrapy {name}", flush=True)
                done = subprocess.run(
                    [sys.executable, "-m", "scrapy", *argv, *settings],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                log = done.stderr.rstrip()
                if done.returncode != 0:
                    print(log[-3000:], file=sys.stderr)
                    self.exitcode = 1
                    print(f"scrapy {name} failed (exit status {done.returncode})", file=sys.stderr)
                    return
                print(_RECORD.split(log)[-1].split("] INFO: ", 1)[-1], flush=True)
        print(
            f"\nOpen {(out / 'site' / 'index.html').as_uri()}\n"
            f"Database: {database} (scrapy stats --database sqlite:///{database})"
        )


def _environment(web: LittleWeb, database_url: str) -> dict[str, str]:
    """The steps' environment: the proxy, private targets allowed (the proxy is on loopback),
    the demo's database, and no cluster (a REDIS_URL or MYSQL_URL of the shell is left out)."""
    base = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "MYSQL_URL")}
    env = web.env(base)
    env.update(
        BLOGFEEDS_ALLOW_PRIVATE_TARGETS="1",
        BLOGFEEDS_DATABASE_URL=database_url,
        SCRAPY_SETTINGS_MODULE="blogfeeds.settings",
    )
    return env
