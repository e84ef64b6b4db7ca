"""``scrapy inspect URL``: show what the crawl reads and stores for one blog, and why.

Fetches the page through the project's settings (robots.txt, User-Agent, proxies), or reads a
saved file with ``--file PATH --url URL``, and runs the crawl's own extraction on it
(:func:`blogfeeds.extract.blog.extract_blog`, with the crawl's settings): feed candidates are
validated by fetching them, friend-link pages and data sources are followed, all through the
same downloader as ``scrapy crawl blogs``. It prints the blog as stored, every rejected feed
candidate and its reason, every scored friend-link container, the pages followed, the user
rules that fired, the links a crawl into the configured database stored (with kinds) and
dropped (with reasons; :func:`by_crawl`); ``--json`` the same as one object. docs/inspect.md.

A page that cannot be fetched is one line on standard error naming the failure as the crawl
stores it (statuses of :mod:`blogfeeds.failures`), exit status 1. A reader of standard output
that goes away early ends the command quietly with exit status 141, as ``scrapy export`` and
``scrapy stats`` do (:func:`blogfeeds.commands.quiet_broken_pipe`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sys
from argparse import ArgumentParser, Namespace
from pathlib import Path
from typing import Any

import scrapy
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError
from scrapy.http import Response
from scrapy.settings import SETTINGS_PRIORITIES
from twisted.python.failure import Failure
from w3lib.url import is_url

from blogfeeds.commands import clear_help, quiet_broken_pipe
from blogfeeds.config import database_url, unknown_settings
from blogfeeds.crawl.fetch import (
    HomeReader,
    Unread,
    downloader_fetch,
    fetch_failed,
    read_page,
    redirects,
)
from blogfeeds.crawl.urls import check_url
from blogfeeds.extensions.startup import check_settings
from blogfeeds.extensions.summary import platform_label
from blogfeeds.extract.aliases import Hop, Observation, claims
from blogfeeds.extract.config import ExtractConfig
from blogfeeds.extract.discovery import Fetched, FetchRequest
from blogfeeds.extract.report import BlogReport
from blogfeeds.extract.userrules import RuleError
from blogfeeds.option import StartupError
from blogfeeds.report_items import blog_items, list_theme
from blogfeeds.storage.db import Store

logger = logging.getLogger(__name__)

_UNKNOWN_HERE = frozenset({"type", "fetched_at", "depth", "avatars"})
"""Blog fields a single page does not tell: the record type, when and at which depth a crawl
read it, and the avatars its friends show."""


def report_to_dict(report: BlogReport, redirected: tuple[Hop, ...] = ()) -> dict[str, Any]:
    """A JSON-ready view of a report (the ``--json`` output): the blog as the crawl stores it
    (:func:`~blogfeeds.report_items.blog_items`, less when and at which depth it was read),
    then why: where each profile field came from, the feed candidates, the scored containers,
    the friends (with their ``blog_id``, ``None`` for a link that names no blog: no link is
    stored for it), the links left out, the pages followed, and the other addresses the page
    and the ``redirected`` chain that led to it claim are the blog's
    (:func:`~blogfeeds.extract.aliases.claims`, with their evidence)."""
    said = [report.observation] if report.observation else []
    if redirected:
        said.append(Observation(redirected[0].url, report.url, redirected))
    blog, _ = blog_items(report, fetched_at="", depth=0)
    stored = {k: v for k, v in dataclasses.asdict(blog).items() if k not in _UNKNOWN_HERE}
    prof = report.profile
    discovery = report.discovery
    return {
        **stored,
        "encoding": report.encoding,
        "language_source": prof.language_source,
        "author_source": prof.author_source,
        "icon_source": prof.icon_source,
        "last_post_source": prof.last_post_source,
        "health": {"kind": report.health.kind, "reason": report.health.reason},
        "robots": {
            "noindex": report.robots.noindex,
            "nofollow": report.robots.nofollow,
            "sources": list(report.robots.sources),
        },
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
                "kind": e.friend.kind or "site",
                "avatar": e.friend.avatar,
                "blog_id": e.blog_id,
                "feed": e.friend.feed,
                "repaired": e.friend.repaired,
                "theme": list_theme(e.friend.how, report.metadata.platform),
                "position": position,
                "credited": e.friend.credited,
            }
            for position, e in enumerate(report.edges())
        ],
        "excluded": [
            {"url": url, "reason": reason} for url, reason in report.friend_extraction.excluded
        ],
        "friend_pages": report.friend_pages,
        "followed": [dataclasses.asdict(page) for page in report.followed],
        "rules_fired": report.rules_fired,
        "counters": report.counters,
        "claims": [
            {"address": c.alias, "names": c.target, "evidence": c.evidence}
            for seen in said
            for c in claims(seen)
        ],
    }


def by_crawl(database: str, blog_id: str) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The friend links of ``blog_id`` that a crawl into ``database`` stored, each with its
    ``url`` and ``kind``, and those it dropped from the map (a theme's sample entry seen on
    many blogs: no single page tells it), each with its ``url``, ``reason`` and ``detail``;
    ``[]`` without a database or when it cannot be read (the report of the page stands:
    DEBUG says why)."""
    if not database:
        return [], []
    try:
        with Store.open(database, read_only=True) as store:
            kept, dropped = store.friend_links(source=blog_id), store.dropped_links(blog_id)
    except Exception as exc:
        logger.debug("no stored links for %s: %s", blog_id, exc)
        return [], []
    return [{"url": r["target_url"], "kind": r["kind"]} for r in kept], [
        {"url": r["target_url"], "reason": r["reason"], "detail": r["detail"]} for r in dropped
    ]


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
    if data.get("health"):  # a parking page or a bot wall in the blog's place is read no further
        lines.append(f"Health:    {data['health']['kind']} ({data['health']['reason']})")
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
        + (f"  ({f['kind']})" if f.get("kind", "site") != "site" else "")
        + (f"  (repaired from {f['repaired']!r})" if f.get("repaired") else "")
        + ("  (credited by the footer)" if f.get("credited") else "")
        for f in data["friends"]
    ]
    if data.get("friend_source"):
        lines.append(f"  (read from {data['friend_source']}, score {data['container_score']})")
    excluded = data.get("excluded") or []
    if excluded:
        lines += ["", f"Links left out of the friends ({len(excluded)}):"]
        lines += [f"  {e['url']}  {e['reason']}" for e in excluded]
    stored = data.get("stored_by_crawl") or []
    if stored:
        lines += ["", f"Friend links the crawl stored ({len(stored)}):"]
        lines += [f"  {f['url']}  {f['kind']}" for f in stored]
    crawled = data.get("dropped_by_crawl") or []
    if crawled:
        lines += ["", f"Links the crawl dropped (stored, {len(crawled)}):"]
        lines += [f"  {d['url']}  {d['reason']} ({d['detail']})" for d in crawled]
    lines += ["", "Friend-link pages: " + (", ".join(data["friend_pages"]) or "none")]
    for page in data.get("followed") or []:
        detail = f" ({page['detail']})" if page.get("detail") else ""
        lines.append(f"  followed {page['kind']} {page['url']}: {page['outcome']}{detail}")
    lines += ["", f"Other addresses claimed ({len(data.get('claims') or [])}):"]
    lines += [
        f"  {c['names']}  {c['evidence']} (said by {c['address']})"
        for c in data.get("claims") or []
    ]
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
                offline = read_page(url, body, {}, _no_fetch, config)
                self._show(_said(url, asyncio.run(offline)), opts)
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
        followed: list[Hop] = []  # the redirects of the home page

        class InspectSpider(scrapy.Spider):
            name = "inspect"
            # Inspecting stores nothing and needs no crawl summary.
            custom_settings = {"ITEM_PIPELINES": {}, "EXTENSIONS": {}}  # noqa: RUF012 - read by Scrapy

            async def start(self) -> Any:
                if body is not None:
                    fetch = downloader_fetch(self.crawler)
                    reports.append(_said(url, await read_page(url, body, {}, fetch, config)))
                    return
                # as the crawl fetches a home page: redirects followed, an error status is the
                # failure the crawl stores (http_4xx, http_5xx, ...)
                yield scrapy.Request(
                    url,
                    callback=self.keep,
                    errback=failures.append,  # reported below in one line, not a traceback
                    dont_filter=True,
                )

            async def keep(self, response: Response) -> None:
                reader = HomeReader(self.crawler, config, downloader_fetch(self.crawler))
                followed.extend(redirects(response))
                reports.append(_said(response.url, await reader.read(response)))

        assert self.crawler_process is not None
        self.crawler_process.crawl(InspectSpider)
        self.crawler_process.start()
        if failures:
            failed = fetch_failed(failures[0])  # the words the crawl logs and stores
            print(f"Could not fetch {url}: {failed.status} ({failed.reason})", file=sys.stderr)
            self.exitcode = 1
            return
        if not reports:
            print(f"Could not fetch {url} (see the log above)", file=sys.stderr)
            self.exitcode = 1
            return
        self._show(reports[0], opts, tuple(followed))

    def _show(
        self, outcome: BlogReport | str, opts: Namespace, redirected: tuple[Hop, ...] = ()
    ) -> None:
        """Print a report, or the one line saying why there is none (exit status 1)."""
        if isinstance(outcome, str):
            print(outcome, file=sys.stderr)
            self.exitcode = 1
            return
        data = report_to_dict(outcome, redirected)
        assert self.settings is not None
        found = by_crawl(database_url(self.settings), data["blog_id"])
        data["stored_by_crawl"], data["dropped_by_crawl"] = found
        with quiet_broken_pipe(self):  # `scrapy inspect URL | head -1`
            if opts.json:
                print(json.dumps(data, ensure_ascii=False, indent=2))
            else:
                print(render_text(data))


def _said(url: str, outcome: BlogReport | Unread) -> BlogReport | str:
    """The report, or the line saying why the page was not read, in the crawl's words (the
    status and reason it stores)."""
    if isinstance(outcome, Unread):
        return f"Could not read {url}: {outcome.status} ({outcome.reason})"
    return outcome
