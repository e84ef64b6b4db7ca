"""``scrapy optout [ADDRESS…]``: leave blogs out of the crawl for good (docs/opt-out.md).

Each address (a blog's address or alias, a host, or a path on a shared host) is appended to the
opt-out file ``BLOGFEEDS_OPT_OUT``, with the other addresses the database stores of the same
blogs (the list keeps naming them once their rows are gone); then, after waiting
``BLOGFEEDS_OPT_OUT_CHECK`` seconds and one more when lines were added (running crawls read the
list again meanwhile), every stored row of the blogs the whole list leaves out is deleted
(:meth:`~blogfeeds.storage.optout.OptOutStore.purge`) and what was removed is printed. Without
an address, the rows of the blogs the file lists are removed (a list edited by hand). A bad
address is an error naming it, and nothing is changed.
"""

from __future__ import annotations

import sys
import time
from argparse import ArgumentParser, Namespace
from pathlib import Path

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from blogfeeds.commands import clear_help
from blogfeeds.config import OptOutSettings, database_url
from blogfeeds.crawl.optout import Entry, OptOutList, parse_address
from blogfeeds.crawl.optoutfile import read_list
from blogfeeds.storage.db import utc_now
from blogfeeds.storage.optout import OptOutStore, Removed
from blogfeeds.storage.url import database_file, redact


class Command(ScrapyCommand):
    requires_project = True
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012 - Scrapy reads it as a class attribute

    def syntax(self) -> str:
        return "[ADDRESS ...] [--database URL]"

    def short_desc(self) -> str:
        return "Leave blogs out of every crawl: add them to BLOGFEEDS_OPT_OUT, remove their rows"

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        clear_help(parser)
        parser.add_argument(
            "--database", metavar="URL", help="database URL (default: the settings)"
        )

    def run(self, args: list[str], opts: Namespace) -> None:
        assert self.settings is not None
        config = OptOutSettings.from_settings(self.settings)
        path = config.path
        if not path:
            raise UsageError("set BLOGFEEDS_OPT_OUT to the opt-out file (docs/opt-out.md)")
        named: list[tuple[str, Entry]] = []
        for address in args:
            try:
                named.append((address, parse_address(address)))
            except ValueError as exc:
                raise UsageError(f"{address!r}: {exc}", print_help=False) from None
        listed = _read(path)
        url = database_url(self.settings, opts.database)
        store = _open(url)
        try:
            # the blogs of the whole list: a line added by hand has its aliases listed too
            given = OptOutList.of(entry for _, entry in named)
            given = given.with_ids(listed.blogs)
            stored = store.addresses(given) if store is not None else {}
            lines = _new_lines(listed, named, stored)
            _append(path, lines)
            print(f"Added to {path}: {', '.join(lines) if lines else 'nothing new'}")
            if store is None:
                print("No database: nothing stored to remove.")
                return
            if lines:  # running crawls read the file again before its rows go
                wait = config.check_interval + 1
                print(f"Waiting {wait:g} s for running crawls to read the list", file=sys.stderr)
                time.sleep(wait)
            removed = store.purge(_read(path))
        finally:
            if store is not None:
                store.close()
        print(_report(removed, redact(url)))


def _read(path: str) -> OptOutList:
    if not Path(path).exists():
        return OptOutList()
    try:
        listed, bad = read_list(path)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc}", print_help=False) from None
    for line in bad:
        print(f"{path} {line} (skipped)", file=sys.stderr)
    return listed


def _open(url: str) -> OptOutStore | None:
    """The database (None: storage off, or no SQLite file yet: nothing is stored);
    ``UsageError`` when it cannot be opened."""
    if not url:
        return None
    try:
        path = database_file(url)
    except ValueError:  # a malformed URL: Store.open below says why
        path = None
    if path is not None and not Path(path).is_file():
        return None
    try:
        return OptOutStore.open(url)
    except Exception as exc:
        raise UsageError(f"cannot open {redact(url)}: {exc}", print_help=False) from exc


def _new_lines(
    listed: OptOutList, named: list[tuple[str, Entry]], stored: dict[str, str]
) -> list[str]:
    """The addresses to append: those named that the file does not list yet, then the other
    stored identities of their blogs (an identity is an address: ``alias.example``)."""
    lines: list[str] = []
    for address, entry in named:
        if listed.has_blog(entry.blog) and (entry.path or entry.host in listed.hosts):
            continue  # listed already
        lines.append(address)
    known = OptOutList.of(parse_address(line) for line in lines).with_ids(listed.blogs)
    for bid in sorted(stored):
        if known.has_blog(bid):
            continue
        try:
            parse_address(bid)
        except ValueError:  # a platform's own front page crawled as a blog: its URL is listed
            continue
        lines.append(bid)
        known = known.with_ids([bid])
    return lines


def _append(path: str, lines: list[str]) -> None:
    if not lines:
        return
    file = Path(path)
    before = file.read_bytes() if file.exists() else b""
    with file.open("a", encoding="utf-8") as f:
        if before and not before.endswith(b"\n"):
            f.write("\n")
        f.write(f"# scrapy optout, {utc_now()}\n")
        f.writelines(f"{line}\n" for line in lines)


def _report(removed: Removed, where: str) -> str:
    if not removed.blogs:
        return f"Nothing stored of them in {where}."
    blogs = ", ".join(sorted(removed.blogs))
    rows = ", ".join(f"{table} {n}" for table, n in sorted(removed.rows.items()) if n)
    return f"Removed from {where} {len(removed.blogs)} blog addresses: {blogs}\nRows: {rows}"
