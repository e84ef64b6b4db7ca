"""``scrapy inspect URL``: show what the crawl reads and stores for one blog, and why.

Fetches the page through the project's settings (robots.txt, User-Agent, proxies), or reads a
saved file with ``--file PATH --url URL``, and runs the crawl's own extraction on it
(:func:`blogfeeds.extract.blog.extract_blog`, with the crawl's settings): feed candidates are
validated by fetching them, friend-link pages and data sources are followed, all through the
same downloader as ``scrapy crawl blogs``. It prints the blog as stored (title, abstract,
status, feeds with their scores and reasons, friend links with the layer or rule that found
each), every rejected feed candidate and its reason, every scored friend-link container, the
pages followed and the user rules that fired. ``--json`` prints the same as one JSON object
(:func:`report_to_dict`).

``--file`` fetches the further pages too (from the web, as a crawl would); ``--no-fetch``
fetches nothing (offline): every feed candidate is then rejected unfetched and no friend-link
page or data source is read.

A page that cannot be fetched is one line on standard error naming the failure as the crawl
stores it (``Could not fetch http://x.invalid/: dns (DNS lookup failed: ...)``, statuses of
:mod:`blogfeeds.failures`), exit status 1. A reader of standard output that goes away early
(``scrapy inspect URL | head -1``) ends the command quietly with exit status 141, as ``scrapy
export`` and ``scrapy stats`` do (:func:`blogfeeds.commands.quiet_broken_pipe`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from argparse import ArgumentParser, Namespace
from collections.abc import Awaitable, Coroutine
from pathlib import Path
from typing import Any

import scrapy
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.http import Response, TextResponse
from scrapy.settings import SETTINGS_PRIORITIES
from twisted.python.failure import Failure
from w3lib.url import is_url

from blogfeeds.commands import clear_help, quiet_broken_pipe
from blogfeeds.config import unknown_settings
from blogfeeds.extensions.startup import check_settings
from blogfeeds.extensions.summary import platform_label
from blogfeeds.extract.blog import ExtractConfig, extract_blog
from blogfeeds.extract.discovery import Fetch, Fetched, FetchRequest
from blogfeeds.extract.page import DecodeError
from blogfeeds.extract.report import BlogReport
from blogfeeds.extract.userrules import RuleError
from blogfeeds.failures import failure_reason, failure_status
from blogfeeds.option import StartupError
from blogfeeds.report_items import feed_info, status_reason
from blogfeeds.seeds import check_url
from blogfeeds.spiders.blogs import downloader_fetch, response_headers


def report_to_dict(report: BlogReport) -> dict[str, Any]:
    """A JSON-ready view of a report (the ``--json`` output). ``feeds`` are the stored
    :class:`~blogfeeds.items.FeedInfo`; ``friends`` carry the friend's ``blog_id`` (``None``
    for a link that names no blog: no link is stored for it)."""
    meta = report.metadata
    prof = report.profile
    discovery = report.discovery
    return {
        "url": report.url,
        "blog_id": report.blog_id,
        "encoding": report.encoding,
        "status": report.status,
        "status_reason": status_reason(report),
        "title": meta.title,
        "language": prof.language,
        "language_declared": prof.language_declared,
        "language_source": prof.language_source,
        "description": prof.description,
        "description_source": prof.description_source,
        "author": prof.author,
        "author_source": prof.author_source,
        "icon_url": prof.icon_url,
        "icon_source": prof.icon_source,
        "last_post_at": prof.last_post_at,
        "last_post_source": prof.last_post_source,
        "posts_per_month": prof.posts_per_month,
        "activity": prof.activity,
        "generator": meta.generator,
        "platform": meta.platform,
        "platform_version": meta.platform_version,
        "abstract": meta.abstract,
        "abstract_source": meta.abstract_source,
        "robots": {
            "noindex": report.robots.noindex,
            "nofollow": report.robots.nofollow,
            "sources": list(report.robots.sources),
        },
        "feed_url": report.feeds[0].url if report.feeds else None,
        "feeds": [dataclasses.asdict(feed_info(feed)) for feed in report.feeds],
        "rejected": [
            {"url": r.url, "source": r.source, "reason": r.reason} for r in report.rejected
        ],
        "feed_discovery": None
        if discovery is None
        else {
            "requests": discovery.requests,
            "budget_exhausted": discovery.budget_exhausted,
            "blocked": discovery.blocked,
            "platforms": discovery.platforms,
        },
        "containers": [
            {"score": c.score, "tag": c.tag, "path": c.path, "links": c.links, "reasons": c.reasons}
            for c in report.friend_extraction.containers
        ],
        "container_score": round(report.container_score, 3),
        "friend_source": report.friend_source,
        "friends": [
            {
                "url": e.friend.url,
                "name": e.friend.name,
                "how": e.friend.how,
                "avatar": e.friend.avatar,
                "blog_id": e.blog_id,
                "feed": e.friend.feed,
                "repaired": e.friend.repaired,
            }
            for e in report.edges()
        ],
        "excluded": [
            {"url": url, "reason": reason} for url, reason in report.friend_extraction.excluded
        ],
        "friend_pages": report.friend_pages,
        "followed": [dataclasses.asdict(page) for page in report.followed],
        "rules_fired": report.rules_fired,
        "truncated": ",".join(report.truncated),
        "counters": report.counters,
    }


def _platform(data: dict[str, Any]) -> str:
    name = platform_label(data.get("platform"), data.get("generator"))
    version = data.get("platform_version") or ""
    return f"{name} {version}" if data.get("platform") and version else name


def _sourced(data: dict[str, Any], name: str, source: str = "") -> str:
    value = data.get(name) or ""
    where = data.get(source or f"{name}_source") or ""
    if not value:
        return "(none)"
    return f"{value} ({where})" if where else str(value)


def _language(data: dict[str, Any]) -> str:
    value = data.get("language") or "(none)"
    declared = data.get("language_declared") or ""
    if data.get("language_source") == "corrected":
        return f"{value} (the page declares {declared}; its text is not)"
    if data.get("language_source") == "detected":
        return f"{value} (detected; the page declares none)"
    return value


def _activity(data: dict[str, Any]) -> str:
    value = data.get("activity") or "(unknown)"
    rate = data.get("posts_per_month")
    return f"{value}, {rate} posts a month" if rate is not None else value


def render_text(data: dict[str, Any]) -> str:
    """The human-readable report: one field a line, values in one column, ``(none)`` for an
    empty language or generator, ``(unknown)`` for a generator that names no known platform."""
    lines = [
        f"URL:       {data['url']}",
        f"Blog id:   {data['blog_id']}",
        f"Title:     {data['title']}",
        f"Language:  {_language(data)}",
        f"Generator: {data['generator'] or '(none)'}",
        f"Platform:  {_platform(data)}",
        f"Encoding:  {data['encoding']}",
        f"Described: {_sourced(data, 'description')}",
        f"Author:    {_sourced(data, 'author')}",
        f"Icon:      {_sourced(data, 'icon_url', 'icon_source')}",
        f"Last post: {_sourced(data, 'last_post_at', 'last_post_source')}",
        f"Activity:  {_activity(data)}",
    ]
    if "status" in data:
        lines.append(f"Status:    {data['status']}")
    if data.get("truncated"):
        lines.append(f"Truncated: {data['truncated']} (read up to the page-size bounds)")
    robots = data.get("robots") or {}
    asked = [name for name in ("noindex", "nofollow") if robots.get(name)]
    effects = {"noindex": "identity only, no metadata or feeds", "nofollow": "no friends"}
    for name in asked:
        sources = ", ".join(robots.get("sources", []))
        lines.append(f"Robots:    {name} ({sources}): {effects[name]}")
    lines += ["", f"Feeds ({len(data['feeds'])}):"]
    for feed in data["feeds"]:
        lines.append(f"  {feed['score']:>7.2f}  {feed['url']}  [{feed['type']}]")
        lines.append(f"           {'; '.join(feed['reasons'])}")
    rejected = data.get("rejected") or []
    if rejected:
        lines += ["", f"Rejected feed candidates ({len(rejected)}):"]
        lines += [f"  {r['url']}  [{r['source']}]  {r['reason']}" for r in rejected]
    lines += ["", f"Scored containers ({len(data['containers'])}):"]
    for box in data["containers"]:
        lines.append(f"  {box['score']:>10.1f}  <{box['tag']}> {box['links']} links  {box['path']}")
        lines.append(f"              {'; '.join(box['reasons'])}")
    lines += ["", f"Friend links ({len(data['friends'])}):"]
    lines += [
        f"  {f['url']}  {f['name']}"
        + (f"  [{f['how']}]" if f.get("how") else "")
        + (f"  (repaired from {f['repaired']!r})" if f.get("repaired") else "")
        for f in data["friends"]
    ]
    if data.get("friend_source"):
        lines.append(f"  (read from {data['friend_source']}, score {data['container_score']})")
    excluded = data.get("excluded") or []
    if excluded:
        lines += ["", f"Links left out of the friends ({len(excluded)}):"]
        lines += [f"  {e['url']}  {e['reason']}" for e in excluded]
    lines += ["", "Friend-link pages: " + (", ".join(data["friend_pages"]) or "none")]
    for page in data.get("followed") or []:
        detail = f" ({page['detail']})" if page.get("detail") else ""
        lines.append(f"  followed {page['kind']} {page['url']}: {page['outcome']}{detail}")
    lines += ["", f"Abstract: {_sourced(data, 'abstract')}"]
    fired: dict[str, list[str]] = {}
    for what, rule in data.get("rules_fired", {}).items():
        fired.setdefault(rule, []).append(what)
    if fired:
        lines += ["", *(f"rule fired: {rule} ({', '.join(what)})" for rule, what in fired.items())]
    return "\n".join(lines)


async def _no_fetch(request: FetchRequest) -> Fetched | None:
    """``--no-fetch``: every further page is unreachable."""
    return None


class Command(ScrapyCommand):
    requires_project = True

    def syntax(self) -> str:
        return "[options] <url>"

    def short_desc(self) -> str:
        return "Show the feeds, friend links and abstract blogfeeds extracts from a page"

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        clear_help(parser)
        parser.add_argument("--file", help="read the page from this file instead of fetching")
        parser.add_argument("--url", help="the page's URL (with --file)")
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--rules", help="user extraction rules (TOML; default: BLOGFEEDS_RULES_FILE)"
        )
        parser.add_argument(
            "--no-fetch",
            action="store_true",
            help="with --file: fetch nothing (feed candidates, friend-link pages, data sources)",
        )

    def process_options(self, args: list[str], opts: Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        # The report is the output: Scrapy's banner and INFO log (a hundred lines) would bury
        # it. Over the project's LOG_LEVEL (a command's default_settings rank below it); a
        # level given on this command line (-L INFO, -s LOG_LEVEL=INFO) wins.
        if (self.settings.getpriority("LOG_LEVEL") or 0) < SETTINGS_PRIORITIES["cmdline"]:
            self.settings.set("LOG_LEVEL", "WARNING", priority="cmdline")

    def run(self, args: list[str], opts: Namespace) -> None:
        assert self.settings is not None
        for message in unknown_settings(self.settings):
            print(f"WARNING: {message}", file=sys.stderr)
        try:  # the crawl's own start-up checks: one line, exit status 2
            check_settings(self.settings)
            config = ExtractConfig.from_settings(self.settings, rules_file=opts.rules)
        except (RuleError, StartupError) as exc:
            raise UsageError(str(exc), print_help=False) from None
        body: bytes | None = None
        if opts.file:
            url = opts.url or (args[0] if args else None)
            if not url or not is_url(url):
                raise UsageError("--file needs --url http(s)://… (the page's own URL)")
            try:
                body = Path(opts.file).read_bytes()
            except OSError as exc:
                raise UsageError(f"cannot read {opts.file}: {exc.strerror}") from exc
            if opts.no_fetch:
                offline = extract_blog(url, body, {}, _no_fetch, config)
                self._show(asyncio.run(_run(url, offline)), opts)
                return
        elif len(args) != 1 or not is_url(args[0]):
            raise UsageError("give one http(s) URL, or --file PATH --url URL")
        else:
            url = args[0]
        problem = check_url(url)  # the crawl's own check of a seed ("http://[::1": one line)
        if problem is not None:
            raise UsageError(problem, print_help=False)
        self._crawl(url, body, config, opts)

    def _crawl(self, url: str, body: bytes | None, config: ExtractConfig, opts: Namespace) -> None:
        """Run the extraction inside a crawl, its fetches through the downloader; ``body``
        (``--file``) in place of fetching ``url``."""
        reports: list[Any] = []
        failures: list[Failure] = []

        class InspectSpider(scrapy.Spider):
            name = "inspect"
            # Inspecting stores nothing and needs no crawl summary.
            custom_settings = {"ITEM_PIPELINES": {}, "EXTENSIONS": {}}  # noqa: RUF012 - read by Scrapy

            async def start(self) -> Any:
                if body is not None:
                    reports.append(await _run(url, self._extract(url, body, {})))
                    return
                # as the crawl fetches a home page: redirects followed, an error status is the
                # failure the crawl stores (http_4xx, http_5xx, ...)
                yield scrapy.Request(
                    url,
                    callback=self.keep,
                    errback=failures.append,  # reported below in one line, not a traceback
                    dont_filter=True,
                )

            def _extract(
                self, page_url: str, page: bytes, headers: dict[str, str]
            ) -> Coroutine[Any, Any, BlogReport]:
                fetch: Fetch = downloader_fetch(self.crawler)
                return extract_blog(page_url, page, headers, fetch, config)

            async def keep(self, response: Response) -> None:
                headers = response_headers(response)
                if not isinstance(response, TextResponse):
                    kind = headers.get("Content-Type", "no type")
                    reports.append(f"Not HTML: {response.url} ({kind})")
                    return
                extracting = self._extract(response.url, response.body, headers)
                reports.append(await _run(response.url, extracting))

        assert self.crawler_process is not None
        self.crawler_process.crawl(InspectSpider)
        self.crawler_process.start()
        if failures:
            failure = failures[0]
            status = failure_status(failure)
            # the words the crawl logs and stores (blogs.status_reason)
            print(f"Could not fetch {url}: {status} ({failure_reason(failure)})", file=sys.stderr)
            self.exitcode = 1
            return
        if not reports:
            print(f"Could not fetch {url} (see the log above)", file=sys.stderr)
            self.exitcode = 1
            return
        self._show(reports[0], opts)

    def _show(self, outcome: BlogReport | str, opts: Namespace) -> None:
        """Print a report, or the one line saying why there is none (exit status 1)."""
        if isinstance(outcome, str):
            print(outcome, file=sys.stderr)
            self.exitcode = 1
            return
        data = report_to_dict(outcome)
        with quiet_broken_pipe(self):  # `scrapy inspect URL | head -1`
            if opts.json:
                print(json.dumps(data, ensure_ascii=False, indent=2))
            else:
                print(render_text(data))


async def _run(url: str, extracting: Awaitable[BlogReport]) -> BlogReport | str:
    """The report, or the line saying the page is not readable HTML."""
    try:
        return await extracting
    except (DecodeError, ValueError) as exc:
        return f"Cannot read {url} as HTML: {exc}"
