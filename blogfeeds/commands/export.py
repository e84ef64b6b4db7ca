"""``scrapy export FORMAT``: the stored blogs and their friend-link graph, for other tools.

Formats (``opml``, ``csv``, ``jsonl``, ``graphml``, ``edges``) and filters: docs/exports.md.
A CSV cell (``csv``, ``edges``) that a spreadsheet would read as a formula (it begins with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return: OWASP's "CSV Injection") is written
with a ``'`` before it, so titles, names, generators and abstracts written by any web page
stay text (:func:`csv_cell`); ``--raw`` writes every value as stored. Degrees always count
every stored link: distinct blogs that list a blog (in) and distinct blogs it lists (out),
self-links ignored.

Two more subcommands (:mod:`blogfeeds.site`, docs/site.md): ``scrapy export site DIR`` writes
the static site of the stored blogs; ``scrapy export entries`` writes stored entries.

The database is ``--database URL``, else ``MYSQL_URL``, else ``BLOGFEEDS_DATABASE_URL`` (SQLite
or MySQL/MariaDB, :mod:`blogfeeds.storage.db`). Output goes to ``-o FILE`` or standard output.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from argparse import ArgumentParser, Namespace
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from email.utils import formatdate
from pathlib import Path
from typing import IO, Any, TypeVar

from lxml import etree
from scrapy.commands import ScrapyCommand
from scrapy.exceptions import UsageError

from blogfeeds.commands import clear_help, quiet_broken_pipe
from blogfeeds.commands.bloglinks import alias_urls, dropped_cell, friends_cell, with_friends
from blogfeeds.config import database_url
from blogfeeds.extensions.summary import platform_label
from blogfeeds.failures import STATUSES
from blogfeeds.site.build import SiteOptions, build_site
from blogfeeds.site.data import day_bound, find_blog, load, select_entries
from blogfeeds.site.folder import FolderRefused
from blogfeeds.storage.db import Store
from blogfeeds.storage.feedstore import FeedStore
from blogfeeds.storage.url import database_file, redact

FORMATS = ("opml", "csv", "jsonl", "graphml", "edges")
SUBCOMMANDS = ("site", "entries")
ENTRY_COLUMNS = (
    "blog_id",
    "date",
    "title",
    "link",
    "author",
    "published",
    "updated",
    "first_seen",
    "feed_url",
    "guid",
    "summary",
)
"""Columns of ``scrapy export entries`` (``date``: :func:`blogfeeds.site.data.entry_date`)."""
BLOG_COLUMNS = (
    "blog_id",
    "url",
    "title",
    "feed_url",
    "status",
    "status_reason",
    "health",
    "health_reason",
    "moved_to",
    "language",
    "generator",
    "platform",
    "platform_version",
    "friend_count",
    "in_degree",
    "out_degree",
    "depth",
    "first_seen",
    "fetched_at",
    "description",
    "abstract",
    "abstract_source",
    "author",
    "icon_url",
    "last_post_at",
    "posts_per_month",
    "activity",
    "language_declared",
    "aliases",
    "dropped_links",
    "friend_links",
)
"""Columns of ``scrapy export csv``, in order (``aliases``: :func:`alias_urls`;
``dropped_links``: :func:`dropped_cell`; ``friend_links``: :func:`friends_cell`)."""
GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a CSV cell as a formula (OWASP)."""
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class Filters:
    """Which blogs to export (empty = all)."""

    statuses: frozenset[str] = frozenset()
    languages: tuple[str, ...] = ()
    """BCP 47 prefixes, lower case: ``zh`` matches ``zh``, ``zh-CN``, ``zh_TW``."""
    min_in_degree: int = 0
    has_feed: bool = False
    platforms: frozenset[str] = frozenset()
    """Platform labels, lower case (:func:`~blogfeeds.extensions.summary.platform_label`)."""
    activities: frozenset[str] = frozenset()
    """Activities (:data:`blogfeeds.extract.profile.ACTIVITIES`; ``unknown`` for none)."""
    healths: frozenset[str] = frozenset()
    """Health kinds (:data:`blogfeeds.extract.health.KINDS`; ``unchecked`` for none)."""

    def accepts(self, blog: Mapping[str, Any]) -> bool:
        if self.statuses and blog.get("status") not in self.statuses:
            return False
        if self.languages:
            lang = (blog.get("language") or "").lower().replace("_", "-")
            if not any(lang == p or lang.startswith(p + "-") for p in self.languages):
                return False
        if blog.get("in_degree", 0) < self.min_in_degree:
            return False
        if self.platforms:
            label = platform_label(blog.get("platform"), blog.get("generator"))
            if label.lower() not in self.platforms:
                return False
        if self.activities and (blog.get("activity") or "unknown") not in self.activities:
            return False
        if self.healths and (blog.get("health") or "unchecked") not in self.healths:
            return False
        return not (self.has_feed and not blog.get("feed_url"))


def degrees(links: Iterable[Mapping[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """``(in_degree, out_degree)`` by blog id over distinct ``(source, target)`` blog pairs."""
    pairs = {(link["source_blog_id"], link["target_blog_id"]) for link in links}
    indeg: dict[str, int] = {}
    outdeg: dict[str, int] = {}
    for source, target in pairs:
        if source != target:
            indeg[target] = indeg.get(target, 0) + 1
            outdeg[source] = outdeg.get(source, 0) + 1
    return indeg, outdeg


def select(
    blogs: Iterable[Mapping[str, Any]], links: Sequence[Mapping[str, Any]], filters: Filters
) -> list[dict[str, Any]]:
    """The blogs ``filters`` accept, each with ``in_degree`` and ``out_degree`` added."""
    indeg, outdeg = degrees(links)
    out = []
    for blog in blogs:
        row = {**blog, "in_degree": indeg.get(blog["blog_id"], 0)}
        row["out_degree"] = outdeg.get(blog["blog_id"], 0)
        if filters.accepts(row):
            out.append(row)
    return out


def graph_edges(
    blogs: Sequence[Mapping[str, Any]], links: Iterable[Mapping[str, Any]], all_targets: bool
) -> list[Mapping[str, Any]]:
    """Friend links between selected blogs (``all_targets``: every link leaving one), one per
    ``(source, target)`` blog pair (the first stored), self-links left out."""
    chosen = {b["blog_id"] for b in blogs}
    seen: set[tuple[str, str]] = set()
    out = []
    for link in links:
        pair = (link["source_blog_id"], link["target_blog_id"])
        if pair[0] == pair[1] or pair in seen or pair[0] not in chosen:
            continue
        if all_targets or pair[1] in chosen:
            seen.add(pair)
            out.append(link)
    return out


def xml_text(value: Any) -> str:
    """``value`` as text XML 1.0 can hold (control characters and lone surrogates dropped)."""
    return _NOT_XML.sub("", "" if value is None else str(value))


def write_opml(blogs: Iterable[Mapping[str, Any]], out: IO[bytes], title: str) -> int:
    """OPML 2.0 of the blogs' main feeds, each feed URL once; returns the outlines written."""
    root = etree.Element("opml", version="2.0")
    head = etree.SubElement(root, "head")
    etree.SubElement(head, "title").text = xml_text(title)
    etree.SubElement(head, "dateCreated").text = formatdate(usegmt=True)
    etree.SubElement(head, "docs").text = "http://opml.org/spec2.opml"
    body = etree.SubElement(root, "body")
    seen: set[str] = set()
    for blog in blogs:
        feed = blog.get("feed_url")
        if not feed or feed in seen:
            continue
        seen.add(feed)
        name = " ".join(xml_text(blog.get("title")).split()) or blog["blog_id"]
        attrs = {"type": "rss", "text": name, "title": name, "xmlUrl": xml_text(feed)}
        attrs["htmlUrl"] = xml_text(blog.get("url") or "")
        if blog.get("language"):
            attrs["language"] = xml_text(blog["language"])
        if blog.get("description"):
            attrs["description"] = xml_text(blog["description"])
        etree.SubElement(body, "outline", attrs)
    out.write(etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))
    return len(seen)


def csv_cell(value: Any, raw: bool = False) -> Any:
    """``value`` as a CSV cell: ``""`` for None; text beginning with one of
    :data:`FORMULA_STARTS` with a ``'`` before it, unless ``raw``; anything else as it is."""
    if value is None:
        return ""
    if not raw and isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(blogs: Iterable[Mapping[str, Any]], out: IO[str], raw: bool = False) -> int:
    """One CSV row per blog (:data:`BLOG_COLUMNS`, RFC 4180 quoting, cells through
    :func:`csv_cell`); returns the rows."""
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(BLOG_COLUMNS)
    n = 0
    for blog in blogs:
        row = {**blog, "aliases": alias_urls(blog), "dropped_links": dropped_cell(blog)}
        row["friend_links"] = friends_cell(blog)
        writer.writerow([csv_cell(row.get(c), raw) for c in BLOG_COLUMNS])
        n += 1
    return n


def write_jsonl(blogs: Iterable[Mapping[str, Any]], out: IO[str]) -> int:
    """One JSON object per line and blog (UTF-8, feeds included); returns the lines."""
    n = 0
    for blog in blogs:
        out.write(json.dumps(dict(blog), ensure_ascii=False, sort_keys=True) + "\n")
        n += 1
    return n


_EDGE_FIELDS = ("source_blog_id", "target_blog_id", "name", "target_url", "source_url", "kind")


def write_edges(edges: Iterable[Mapping[str, Any]], out: IO[str], raw: bool = False) -> int:
    """Edge-list CSV (``Source,Target,Label,target_url,source_url,kind``, cells through
    :func:`csv_cell`); returns the rows."""
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["Source", "Target", "Label", "target_url", "source_url", "kind"])
    n = 0
    for e in edges:
        writer.writerow(
            [csv_cell(e.get(k) or "site" if k == "kind" else e[k], raw) for k in _EDGE_FIELDS]
        )
        n += 1
    return n


_NODE_KEYS = (
    ("title", "string"),
    ("url", "string"),
    ("feed", "string"),
    ("status", "string"),
    ("language", "string"),
    ("platform", "string"),
    ("platform_version", "string"),
    ("in_degree", "int"),
    ("out_degree", "int"),
    ("aliases", "string"),
)


def write_graphml(
    blogs: Sequence[Mapping[str, Any]],
    edges: Sequence[Mapping[str, Any]],
    out: IO[bytes],
    degree: tuple[Mapping[str, int], Mapping[str, int]] = ({}, {}),
) -> tuple[int, int]:
    """A directed GraphML graph (schema: graphml.graphdrawing.org); returns (nodes, edges).

    Edge targets that are not among ``blogs`` become nodes with their degrees (from
    ``degree``) only."""
    nsmap = {None: GRAPHML_NS}
    root = etree.Element(f"{{{GRAPHML_NS}}}graphml", nsmap=nsmap)
    for name, kind in _NODE_KEYS:
        etree.SubElement(
            root, "key", {"id": name, "for": "node", "attr.name": name, "attr.type": kind}
        )
    for name in ("name", "kind"):
        etree.SubElement(
            root, "key", {"id": name, "for": "edge", "attr.name": name, "attr.type": "string"}
        )
    graph = etree.SubElement(root, "graph", id="friend-links", edgedefault="directed")

    def data(parent: Any, key: str, value: Any) -> None:
        if value is not None and value != "":
            etree.SubElement(parent, "data", key=key).text = xml_text(value)

    nodes: dict[str, Mapping[str, Any]] = {b["blog_id"]: b for b in blogs}
    indeg, outdeg = degree
    for e in edges:
        if e["target_blog_id"] not in nodes:
            target = e["target_blog_id"]
            nodes[target] = {"blog_id": target, "url": e["target_url"]}
            nodes[target] = {**nodes[target], "in_degree": indeg.get(target, 0)}
            nodes[target] = {**nodes[target], "out_degree": outdeg.get(target, 0)}
    for blog_id, blog in nodes.items():
        node = etree.SubElement(graph, "node", id=xml_text(blog_id))
        data(node, "title", blog.get("title"))
        data(node, "url", blog.get("url"))
        data(node, "feed", blog.get("feed_url"))
        data(node, "status", blog.get("status"))
        data(node, "language", blog.get("language"))
        data(node, "platform", blog.get("platform"))
        data(node, "platform_version", blog.get("platform_version"))
        data(node, "in_degree", blog.get("in_degree", 0))
        data(node, "out_degree", blog.get("out_degree", 0))
        data(node, "aliases", alias_urls(blog))
    for n, e in enumerate(edges):
        edge = etree.SubElement(
            graph,
            "edge",
            id=f"e{n}",
            source=xml_text(e["source_blog_id"]),
            target=xml_text(e["target_blog_id"]),
        )
        data(edge, "name", e.get("name"))
        data(edge, "kind", e.get("kind") or "site")
    out.write(etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))
    return len(nodes), len(edges)


_S = TypeVar("_S", bound=Store)


def open_store(url: str, kind: type[_S]) -> _S:
    """Open the database as a ``kind`` (:class:`Store` or a subclass) read-only (``read_only``:
    nothing is created or migrated); ``UsageError`` (one line, exit status 2) when it cannot
    be: no URL, an SQLite file that does not exist, a database without the blogfeeds tables or
    newer than this code, a server that refuses the connection. An export never creates a
    database."""
    if not url:
        raise UsageError("no database: set BLOGFEEDS_DATABASE_URL or MYSQL_URL, or --database")
    try:
        path = database_file(url)
    except ValueError:  # a malformed URL: Store.open below says why
        path = None
    if path is not None and not Path(path).is_file():
        # the full path: a relative URL is read from the current folder, often not the crawl's
        raise UsageError(f"no SQLite database at {str(Path(path).resolve())!r}", print_help=False)
    try:
        return kind.open(url, read_only=True)
    except Exception as exc:
        raise UsageError(f"cannot open {redact(url)}: {exc}", print_help=False) from exc


def add_filter_options(parser: ArgumentParser) -> None:
    parser.add_argument("--database", metavar="URL", help="database URL (default: the settings)")
    parser.add_argument("--status", action="append", default=[], help="blog status(es), a,b")
    parser.add_argument("--lang", action="append", default=[], help="language prefix(es): zh,en")
    parser.add_argument("--min-in-degree", type=int, default=0, metavar="N")
    parser.add_argument("--has-feed", action="store_true", help="only blogs with a main feed")
    parser.add_argument(
        "--platform", action="append", default=[], help="platform name(s): Hexo,WordPress"
    )
    parser.add_argument(
        "--activity", action="append", default=[], help="activity: active,slowing,dormant,dead"
    )
    parser.add_argument(
        "--health", action="append", default=[], help="health: ok,dead,failing,blocked,parked,..."
    )


def filters_from(opts: Namespace) -> Filters:
    """The :class:`Filters` of the parsed options; ``UsageError`` (exit status 2) naming the
    valid statuses (:data:`blogfeeds.failures.STATUSES`) when ``--status`` gives another."""

    def split(values: list[str]) -> list[str]:
        return [v.strip() for value in values for v in value.split(",") if v.strip()]

    statuses = split(opts.status)
    unknown = [s for s in statuses if s not in STATUSES]
    if unknown:
        raise UsageError(
            f"unknown --status {', '.join(map(repr, unknown))}; "
            f"expected one or more of {', '.join(STATUSES)}",
            print_help=False,
        )
    return Filters(
        statuses=frozenset(statuses),
        languages=tuple(v.lower().replace("_", "-") for v in split(opts.lang)),
        min_in_degree=opts.min_in_degree,
        has_feed=opts.has_feed,
        platforms=frozenset(v.lower() for v in split(opts.platform)),
        activities=frozenset(v.lower() for v in split(getattr(opts, "activity", []))),
        healths=frozenset(v.lower() for v in split(getattr(opts, "health", []))),
    )


def export(
    fmt: str,
    blogs: Sequence[Mapping[str, Any]],
    links: Sequence[Mapping[str, Any]],
    filters: Filters,
    out: IO[bytes],
    *,
    all_targets: bool = False,
    raw: bool = False,
) -> str:
    """Write ``fmt`` (one of :data:`FORMATS`) of stored rows to ``out``; returns a one-line
    report (``"42 feeds"``). ``raw``: CSV cells as stored, formulas not neutralised
    (:func:`csv_cell`). ``ValueError`` on an unknown format."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    chosen = select(blogs, links, filters)
    if fmt == "opml":
        return f"{write_opml(chosen, out, 'blogfeeds: blogs and their feeds')} feeds"
    if fmt == "graphml":
        edges = graph_edges(chosen, links, all_targets)
        nodes, n_edges = write_graphml(chosen, edges, out, degrees(links))
        return f"{nodes} nodes, {n_edges} edges"
    text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
    try:
        if fmt == "csv":
            return f"{write_csv(with_friends(chosen, links), text, raw)} blogs"
        if fmt == "jsonl":
            return f"{write_jsonl(with_friends(chosen, links), text)} blogs"
        return f"{write_edges(graph_edges(chosen, links, all_targets), text, raw)} edges"
    finally:
        text.flush()
        text.detach()


def write_entries(
    entries: Iterable[Mapping[str, Any]], out: IO[str], fmt: str, raw: bool = False
) -> int:
    """Entries as JSON lines or CSV (:data:`ENTRY_COLUMNS`, cells through :func:`csv_cell`);
    returns the rows."""
    n = 0
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(ENTRY_COLUMNS)
        for entry in entries:
            writer.writerow([csv_cell(entry.get(c), raw) for c in ENTRY_COLUMNS])
            n += 1
        return n
    for entry in entries:
        row = {c: entry.get(c) for c in ENTRY_COLUMNS}
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        n += 1
    return n


def add_site_options(parser: ArgumentParser) -> None:
    parser.add_argument("--around", metavar="BLOG", help="site/entries: the friend circle of BLOG")
    parser.add_argument("--hops", type=int, default=1, metavar="N", help="with --around (1)")
    parser.add_argument("--title", default="blogfeeds", help="site: its title")
    parser.add_argument("--base-url", default="", metavar="URL", help="site: where it is served")
    parser.add_argument(
        "--force", action="store_true", help="site: write into a folder holding no previous site"
    )
    parser.add_argument("--page-size", type=int, default=50, metavar="N", help="site: river page")
    parser.add_argument("--river-limit", type=int, default=5000, metavar="N")
    parser.add_argument("--feed-limit", type=int, default=100, metavar="N")
    parser.add_argument("--graph-limit", type=int, default=10_000, metavar="N")
    parser.add_argument("--blog", action="append", default=[], help="entries: blog id(s), a,b")
    parser.add_argument("--since", metavar="DATE", help="entries: dated on or after")
    parser.add_argument("--until", metavar="DATE", help="entries: dated on or before")
    parser.add_argument("--format", choices=("jsonl", "csv"), help="entries: output format")


def _around(blogs: Sequence[Mapping[str, Any]], opts: Namespace) -> str | None:
    if opts.around is None:
        return None
    if opts.hops < 0:
        raise UsageError("--hops must be 0 or more", print_help=False)
    found = find_blog(blogs, opts.around)
    if found is None:
        raise UsageError(f"--around {opts.around!r}: no such blog is stored", print_help=False)
    return found


def run_site(store: FeedStore, args: list[str], opts: Namespace, filters: Filters) -> None:
    """``scrapy export site DIR``."""
    if len(args) != 2:
        raise UsageError("give the folder to write: scrapy export site DIR", print_help=False)
    for name in ("page_size", "river_limit", "feed_limit", "graph_limit"):
        if getattr(opts, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be 1 or more", print_help=False)
    blogs, every = store.blogs(), store.friend_links(removed=True)
    links = [link for link in every if not link["removed"]]
    around = _around(blogs, opts)
    data = load(store, select(blogs, links, filters), every, only_these=filters != Filters())
    options = SiteOptions(
        title=opts.title, around=around, hops=opts.hops, page_size=opts.page_size,
        river_limit=opts.river_limit, feed_limit=opts.feed_limit,
        graph_limit=opts.graph_limit, base_url=opts.base_url, force=opts.force,
        extra_files=("feeds.opml",),
    )  # fmt: skip
    out = Path(args[1])
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is a file: give a folder to write the site in", print_help=False)
    if around is not None and around not in {b["blog_id"] for b in data.blogs}:
        raise UsageError(f"--around {around!r} is not among the selected blogs", print_help=False)
    try:
        report = build_site(data, out, options)
    except FolderRefused as exc:
        raise UsageError(str(exc), print_help=False) from None
    with open(out / "feeds.opml", "wb") as fh:
        write_opml(data.blogs, fh, f"{opts.title}: blogs and their feeds")
    print(f"site: {report.line()}; open {(out / 'index.html').resolve().as_uri()}", file=sys.stderr)


def run_entries(store: FeedStore, opts: Namespace, filters: Filters) -> None:
    """``scrapy export entries``."""
    fmt = opts.format or ("csv" if (opts.output or "").lower().endswith(".csv") else "jsonl")
    try:
        since = day_bound(opts.since, end=False) if opts.since else None
        until = day_bound(opts.until, end=True) if opts.until else None
    except ValueError as exc:
        raise UsageError(f"--since/--until: {exc}", print_help=False) from exc
    blogs, links = store.blogs(), store.friend_links()
    around = _around(blogs, opts)
    wanted = {v.strip() for value in opts.blog for v in value.split(",") if v.strip()}
    # With a blog filter, only the selected blogs' entries (and no entry of an unknown blog).
    data = load(
        store, select(blogs, links, filters), links, only_these=filters != Filters(), health_spans=0
    )
    entries = select_entries(
        data, wanted or None, since=since, until=until, around=around, hops=opts.hops
    )
    if opts.output:
        with open(opts.output, "w", encoding="utf-8", newline="", errors="replace") as out:
            n = write_entries(entries, out, fmt, opts.raw)
        print(f"entries: {n} {fmt} rows written to {opts.output}", file=sys.stderr)
        return
    text = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="", errors="replace")
    try:
        write_entries(entries, text, fmt, opts.raw)
        text.flush()
    finally:
        text.detach()


class Command(ScrapyCommand):
    requires_project = True
    default_settings = {"LOG_ENABLED": False}  # noqa: RUF012 - Scrapy reads it as a class attribute

    def syntax(self) -> str:
        return (
            f"{{{'|'.join(FORMATS)}}} [-o FILE] [filters] | site DIR [--around BLOG --hops N] "
            "| entries [--blog ID] [--since DATE] [--until DATE] [--format jsonl|csv]"
        )

    def short_desc(self) -> str:
        return (
            "Export stored blogs as OPML, CSV, JSON lines, GraphML or a CSV edge list; "
            "a static site; entries"
        )

    def add_options(self, parser: ArgumentParser) -> None:
        super().add_options(parser)
        clear_help(parser)
        parser.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
        add_filter_options(parser)
        add_site_options(parser)
        parser.add_argument(
            "--all-targets",
            action="store_true",
            help="graphml/edges: keep every edge leaving a selected blog",
        )
        parser.add_argument(
            "--raw",
            action="store_true",
            help="csv/edges/entries: write cells as stored (no ' before a cell a spreadsheet "
            "reads as a formula)",
        )

    def run(self, args: list[str], opts: Namespace) -> None:
        assert self.settings is not None
        if args and args[0] in SUBCOMMANDS:
            if opts.min_in_degree < 0:
                raise UsageError("--min-in-degree must be 0 or more")
            filters = filters_from(opts)
            feeds = open_store(database_url(self.settings, opts.database), FeedStore)
            try:
                if args[0] == "site":
                    run_site(feeds, args, opts, filters)
                else:
                    with quiet_broken_pipe(self):  # `scrapy export entries | head`
                        run_entries(feeds, opts, filters)
            finally:
                feeds.close()
            return
        known = ", ".join((*FORMATS, *SUBCOMMANDS))
        if len(args) != 1:
            raise UsageError(f"give one format: {known}")
        if args[0] not in FORMATS:
            raise UsageError(f"unknown format {args[0]!r}; give one of: {known}")
        if opts.min_in_degree < 0:
            raise UsageError("--min-in-degree must be 0 or more")
        filters = filters_from(opts)  # before the database: a bad filter opens nothing
        store = open_store(database_url(self.settings, opts.database), Store)
        try:
            blogs, links = store.blogs(), store.friend_links()
        finally:
            store.close()
        if opts.output:
            with open(opts.output, "wb") as out:
                report = export(
                    args[0], blogs, links, filters, out, all_targets=opts.all_targets, raw=opts.raw
                )
            print(f"{args[0]}: {report} written to {opts.output}", file=sys.stderr)
        else:
            with quiet_broken_pipe(self):  # `scrapy export csv | head`
                export(
                    args[0],
                    blogs,
                    links,
                    filters,
                    sys.stdout.buffer,
                    all_targets=opts.all_targets,
                    raw=opts.raw,
                )
                sys.stdout.buffer.flush()
