"""``scrapy inspect URL``: show what blogfeeds reads from one page, and why.

Fetches the page through the project's settings (robots.txt, User-Agent, proxies), or reads a
saved file with ``--file PATH --url URL``, and prints the title, every feed candidate with its
score and reasons, every scored friend-link container, the friend links and the abstract.
``--json`` prints the same as one JSON object.

A page that cannot be fetched is one line on standard error naming the failure as the crawl
stores it (``Could not fetch http://x.invalid/: dns (DNS lookup failed: ...)``, statuses of
:mod:`blogfeeds.failures`), exit status 1. A reader of standard output that goes away early
(``scrapy inspect URL | head -1``) ends the command quietly with exit status 141, as ``scrapy
export`` and ``scrapy stats`` do (:func:`blogfeeds.commands.quiet_broken_pipe`).
"""

from __future__ import annotations

import json
import sys
from argparse import ArgumentParser, Namespace
from pathlib import Path
from typing import Any

import scrapy
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.http import Response, TextResponse
from twisted.python.failure import Failure
from w3lib.url import is_url

from blogfeeds.commands import quiet_broken_pipe
from blogfeeds.extract.blog import PageAnalysis, analyze_page
from blogfeeds.extract.page import DecodeError
from blogfeeds.extract.scoring import build_rules
from blogfeeds.extract.userrules import RuleError, RuleSet, load_rules
from blogfeeds.failures import failure_status


def analysis_to_dict(analysis: PageAnalysis) -> dict[str, Any]:
    """A JSON-ready view of an analysis (the ``--json`` output)."""
    meta = analysis.metadata
    return {
        "url": analysis.page.url,
        "blog_id": analysis.blog_id,
        "encoding": analysis.page.encoding,
        "title": meta.title,
        "language": meta.language,
        "generator": meta.generator,
        "abstract": meta.abstract,
        "feeds": [
            {"url": c.url, "type": c.type, "title": c.title, "score": c.score, "reasons": c.reasons}
            for c in analysis.feeds
        ],
        "containers": [
            {"score": c.score, "tag": c.tag, "path": c.path, "links": c.links, "reasons": c.reasons}
            for c in analysis.friends.containers
        ],
        "friends": [{"url": f.url, "name": f.name} for f in analysis.friends.friends],
        "friend_pages": analysis.friend_pages,
        "rules_fired": analysis.rules,
    }


def render_text(data: dict[str, Any]) -> str:
    """The human-readable report, in the order of the original ``urls.py`` output; one field a
    line, values in one column, ``(none)`` for an empty language or generator."""
    lines = [
        f"URL:       {data['url']}",
        f"Blog id:   {data['blog_id']}",
        f"Title:     {data['title']}",
        f"Language:  {data['language'] or '(none)'}",
        f"Generator: {data['generator'] or '(none)'}",
        f"Encoding:  {data['encoding']}",
        "",
        f"Feed candidates ({len(data['feeds'])}):",
    ]
    for feed in data["feeds"]:
        lines.append(f"  {feed['score']:>7.2f}  {feed['url']}  [{feed['type']}]")
        lines.append(f"           {'; '.join(feed['reasons'])}")
    lines += ["", f"Scored containers ({len(data['containers'])}):"]
    for box in data["containers"]:
        lines.append(f"  {box['score']:>10.1f}  <{box['tag']}> {box['links']} links  {box['path']}")
        lines.append(f"              {'; '.join(box['reasons'])}")
    lines += ["", f"Friend links ({len(data['friends'])}):"]
    lines += [f"  {f['url']}  {f['name']}" for f in data["friends"]]
    lines += ["", "Friend-link pages: " + (", ".join(data["friend_pages"]) or "none")]
    lines += ["", f"Abstract: {data['abstract']}"]
    fired: dict[str, list[str]] = {}
    for what, rule in data.get("rules_fired", {}).items():
        fired.setdefault(rule, []).append(what)
    if fired:
        lines += ["", *(f"rule fired: {rule} ({', '.join(what)})" for rule, what in fired.items())]
    return "\n".join(lines)


class Command(ScrapyCommand):
    requires_project = True
    user_rules: RuleSet | None = None

    def syntax(self) -> str:
        return "[options] <url>"

    def short_desc(self) -> str:
        return "Show the feeds, friend links and abstract blogfeeds extracts from a page"

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        parser.add_argument("--file", help="read the page from this file instead of fetching")
        parser.add_argument("--url", help="the page's URL (with --file)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--rules", help="user extraction rules (TOML; default: BLOGFEEDS_RULES_FILE)"
        )

    def run(self, args: list[str], opts: Namespace) -> None:
        assert self.settings is not None
        rules_file = opts.rules or self.settings.get("BLOGFEEDS_RULES_FILE")
        try:
            self.user_rules = load_rules(rules_file) if rules_file else None
        except RuleError as exc:
            raise UsageError(str(exc), print_help=False) from exc
        if opts.file:
            url = opts.url or (args[0] if args else None)
            if not url or not is_url(url):
                raise UsageError("--file needs --url http(s)://… (the page's own URL)")
            try:
                body = Path(opts.file).read_bytes()
            except OSError as exc:
                raise UsageError(f"cannot read {opts.file}: {exc.strerror}") from exc
            self._report(url, body, {}, opts)
            return
        if len(args) != 1 or not is_url(args[0]):
            raise UsageError("give one http(s) URL, or --file PATH --url URL")
        responses: list[Response] = []
        failures: list[Failure] = []

        class InspectSpider(scrapy.Spider):
            name = "inspect"
            # Inspecting stores nothing and needs no crawl summary.
            custom_settings = {"ITEM_PIPELINES": {}, "EXTENSIONS": {}}  # noqa: RUF012 - read by Scrapy

            async def start(self) -> Any:
                yield scrapy.Request(
                    args[0],
                    callback=self.keep,
                    errback=failures.append,  # reported below in one line, not a traceback
                    dont_filter=True,
                    meta={"handle_httpstatus_all": True},
                )

            def keep(self, response: Response) -> None:
                responses.append(response)

        assert self.crawler_process is not None
        self.crawler_process.crawl(InspectSpider)
        self.crawler_process.start()
        if failures:
            failure = failures[0]
            status = failure_status(failure)
            print(
                f"Could not fetch {args[0]}: {status} ({failure.getErrorMessage()})",
                file=sys.stderr,
            )
            self.exitcode = 1
            return
        if not responses:
            print(f"Could not fetch {args[0]} (see the log above)", file=sys.stderr)
            self.exitcode = 1
            return
        response = responses[0]
        headers = {
            k.decode("latin-1"): b", ".join(v).decode("latin-1")
            for k, v in response.headers.items()
        }
        if response.status != 200:
            print(f"HTTP {response.status} for {response.url}", file=sys.stderr)
        if not isinstance(response, TextResponse):
            print(
                f"Not HTML: {response.url} ({headers.get('Content-Type', 'no type')})",
                file=sys.stderr,
            )
            self.exitcode = 1
            return
        self._report(response.url, response.body, headers, opts)

    def _report(self, url: str, body: bytes, headers: dict[str, str], opts: Namespace) -> None:
        assert self.settings is not None
        try:
            analysis = analyze_page(
                url,
                body,
                headers,
                feed_rules=build_rules(self.settings.getdict("BLOGFEEDS_FEED_SCORERS")) or None,
                friend_rules=build_rules(self.settings.getdict("BLOGFEEDS_FRIEND_SCORERS")) or None,
                user_rules=self.user_rules,
            )
        except (DecodeError, ValueError) as exc:
            print(f"Cannot read {url} as HTML: {exc}", file=sys.stderr)
            self.exitcode = 1
            return
        data = analysis_to_dict(analysis)
        with quiet_broken_pipe(self):  # `scrapy inspect URL | head -1`
            if opts.json:
                print(json.dumps(data, ensure_ascii=False, indent=2))
            else:
                print(render_text(data))
