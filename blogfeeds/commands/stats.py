"""``scrapy stats``: the crawl summary of everything stored (blogs, with a feed, by status, by
platform, the friend links by kind, the most linked blogs, the links dropped from the map by
reason); the same report ``scrapy crawl blogs`` logs at its end
(:mod:`blogfeeds.extensions.summary`), then the feeds ``scrapy crawl feeds`` revisits: the
schedule by status, the stored entries, the next due time (:mod:`blogfeeds.feedcrawl.summary`).
``--json`` prints it as one JSON object; the filters of ``scrapy export`` (``--status``,
``--lang``, ``--min-in-degree``, ``--has-feed``, ``--platform``) apply to the blogs part."""

from __future__ import annotations

import json
import time
from argparse import ArgumentParser, Namespace

from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from blogfeeds.commands import clear_help, quiet_broken_pipe
from blogfeeds.commands.export import add_filter_options, filters_from, open_store, select
from blogfeeds.config import database_url
from blogfeeds.extensions.summary import summarize
from blogfeeds.feedcrawl.summary import stored_feeds
from blogfeeds.storage.feedstore import FeedStore


class Command(ScrapyCommand):
    requires_project = True
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012 - Scrapy reads it as a class attribute

    def syntax(self) -> str:
        return "[--top N] [--json] [filters]"

    def short_desc(self) -> str:
        return "Summarise the stored blogs (feeds, statuses, platforms, most linked) and entries"

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        clear_help(parser)
        add_filter_options(parser)
        parser.add_argument("--top", type=int, default=10, help="most linked blogs to list")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def run(self, args: list[str], opts: Namespace) -> None:
        assert self.settings is not None
        if args:
            raise UsageError("scrapy stats takes no arguments")
        filters = filters_from(opts)  # before the database: a bad filter opens nothing
        store = open_store(database_url(self.settings, opts.database), FeedStore)
        try:
            blogs, links = store.blogs(), store.friend_links()
            feeds = stored_feeds(store)
        finally:
            store.close()
        chosen = select(blogs, links, filters)
        ids = {b["blog_id"] for b in chosen}
        kept = [link for link in links if link["source_blog_id"] in ids]
        summary = summarize(chosen, kept, top=opts.top)
        with quiet_broken_pipe(self):  # `scrapy stats | head -1`
            if opts.json:
                data = {**summary.as_dict(), **feeds.as_dict()}
                print(json.dumps(data, ensure_ascii=False, indent=2))
            else:
                print(summary.render())
                print(feeds.render(time.time() / 60.0))
