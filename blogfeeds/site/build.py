"""``scrapy export site DIR``: a static site of the stored blogosphere, readable from ``file://``.

Every link is relative: no server, no network, no CDN. The pages and files of ``DIR``:
docs/site.md. The data of the directory and the graph are JavaScript files that assign a global
(``window.BLOGFEEDS_DIRECTORY`` ...): Chromium refuses ``fetch()`` of a ``file://`` URL, a
``<script src>`` it loads. Directory rows are columnar (a list of column names, then arrays) so
that 100,000 blogs stay a few megabytes; a column the schema adds (:data:`~.data.
OPTIONAL_BLOG_COLUMNS`) is shipped when any blog has it, and the page shows what it knows.

Graph: at most ``graph_limit`` blogs (the most linked, ties by id), edges between them; initial
positions are computed here (:func:`initial_positions`: rings of a breadth-first order from the
most linked blog, so that friends start near each other), then the page refines them with
ForceAtlas2 in a Web Worker (or a few iterations per animation frame when no worker can be
started), so it never freezes. Blog pages are ``blogs/<slug>.html`` (:func:`slug`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from blogfeeds.extensions.summary import platform_label
from blogfeeds.extract.feedreader.entries import iso_utc, utc_z
from blogfeeds.extract.health import KINDS
from blogfeeds.failures import ANSWERED
from blogfeeds.site.avatar import avatar, face
from blogfeeds.site.data import (
    OPTIONAL_BLOG_COLUMNS,
    RUN_SPIDERS,
    SiteData,
    plain_text,
    web_url,
    within_hops,
)
from blogfeeds.site.feeds import write_atom, write_json_feed
from blogfeeds.site.folder import SiteFolder
from blogfeeds.site.i18n import (
    LANGUAGE_NAMES,
    MESSAGES,
    catalog_script,
    say,
    tag,
    time_tag,
    utc_text,
)
from blogfeeds.site.postsearch import hit_row, post_index
from blogfeeds.site.randomlinks import random_files, weights
from blogfeeds.site.topics import TOPICS, topics_of
from blogfeeds.storage.runs import Run

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8})*")
PLATFORM_COLORS = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1",
    "#76b7b2", "#edc948", "#ff9da7", "#9c755f",
)  # fmt: skip
OTHER_COLOR = "#9aa0a6"
UNCHECKED = "unchecked"
"""The health shown of a blog never checked (its column is "")."""
CHANGES_SHOWN = 100
"""Blogs listed by name among the overview's health changes (all are counted)."""


@dataclass(frozen=True)
class SiteOptions:
    """What ``scrapy export site`` takes besides the data."""

    title: str = "blogfeeds"
    around: str | None = None
    """A blog id: the river (and its feeds) holds the entries of the blogs within ``hops``."""
    hops: int = 1
    page_size: int = 50
    river_limit: int = 5000
    """Entries in the river pages (the newest)."""
    feed_limit: int = 100
    """Entries in ``river.atom`` and ``river.json``."""
    graph_limit: int = 10_000
    blog_entries: int = 20
    """Latest entries on a blog's page."""
    base_url: str = ""
    force: bool = False
    """Write into a folder that is not empty and holds no previous site (:mod:`.folder`)."""
    extra_files: tuple[str, ...] = ()
    """Files the caller writes into the folder after the build (``feeds.opml``): the site's."""


@dataclass
class BuildReport:
    blogs: int = 0
    river_entries: int = 0
    river_pages: int = 0
    feed_entries: int = 0
    graph_nodes: int = 0
    graph_edges: int = 0
    searchable: int = 0
    search_seconds: float = 0.0
    """Writing the post search's index of the ``searchable`` river entries."""
    seconds: float = 0.0

    def line(self) -> str:
        return (
            f"{self.blogs} blog pages, {self.river_entries} river entries on "
            f"{self.river_pages} pages, {self.feed_entries} feed entries, graph of "
            f"{self.graph_nodes} nodes and {self.graph_edges} edges, post search over "
            f"{self.searchable} entries ({self.search_seconds:.1f} s) in {self.seconds:.1f} s"
        )


def slug(blog_id: str) -> str:
    """A file name for a blog's page: the id itself when it is plain (``b0001.example``), else
    its safe characters and 10 hex digits of its SHA-1 (distinct ids never share a file)."""
    safe = _UNSAFE.sub("_", blog_id).strip("._")[:80]
    if safe == blog_id and safe:
        return safe
    digest = hashlib.sha1(blog_id.encode("utf-8", "surrogatepass"), usedforsecurity=False)
    return f"{safe or 'blog'}-{digest.hexdigest()[:10]}"


def river_page_name(n: int) -> str:
    return "river.html" if n <= 1 else f"river-{n}.html"


def _js_data(name: str, value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # U+2028/9 end a line in old JavaScript engines; a lone surrogate is no UTF-8.
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"window.{name} = {text};\n"


def _write_text(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8", "replace"))


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("blogfeeds.site", "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["day"] = lambda v: (v or "")[:10]
    env.filters["when"] = utc_text
    env.filters["text"] = plain_text
    env.filters["web"] = web_url
    env.filters["slug"] = slug
    env.filters["lang"] = content_lang
    env.filters["kind"] = kind_label
    env.globals.update(t=tag, say=say, time=time_tag, face=face, ui_languages=LANGUAGE_NAMES)
    return env


def kind_label(kind: str) -> Markup | str:
    """A health kind in the reader's language (a kind the catalog lacks as stored)."""
    return tag(f"hk_{kind}") if f"hk_{kind}" in MESSAGES["en"] else kind


def content_lang(blog: Mapping[str, Any] | None) -> str:
    """The ``lang`` of what a blog wrote (its title, description, posts): its language as
    stored (``zh-CN``), ``""`` (unknown, not the page's) when it has none."""
    value = (blog or {}).get("language") or ""
    return value.replace("_", "-") if _LANGUAGE_TAG.fullmatch(value) else ""


def language_of(blog: Mapping[str, Any]) -> str:
    """The primary language subtag, lower case (``zh-CN`` → ``zh``), ``""`` when unknown."""
    return (blog.get("language") or "").lower().replace("_", "-").split("-")[0]


def last_post(blog: Mapping[str, Any], newest: Mapping[str, str]) -> str:
    """The blog's ``last_post_at`` column when the schema has it, else its newest entry."""
    stored = iso_utc(blog.get("last_post_at"))
    if stored is not None:
        return utc_z(stored)
    return newest.get(blog["blog_id"], "")


def directory_data(
    blogs: Sequence[Mapping[str, Any]],
    newest: Mapping[str, str],
    latest: Mapping[str, str],
    topics: Mapping[str, Iterable[str]],
) -> dict:
    """The directory's columnar rows (see the module docstring): ``newest`` and ``latest`` are
    the date and the title of each blog's newest entry, ``topics`` its topic keys; ``feed`` is
    the main feed's address ("" when none), ``letter`` and ``hue`` its avatar, ``topics``
    indexes into the returned ``topics`` list, ``health`` the kind of its latest check (""
    when never checked; ``kinds``: every kind, in the order of the filter)."""
    columns = ["id", "title", "url", "lang", "language", "platform", "status", "feed"]
    columns += ["in", "out", "last", "page", "post", "letter", "hue", "topics", "health"]
    extras = [
        c for c in OPTIONAL_BLOG_COLUMNS if c not in ("last_post_at", "health") and _any(blogs, c)
    ]
    index = {t.key: i for i, t in enumerate(TOPICS)}
    rows = []
    for b in blogs:
        blog_id = b["blog_id"]
        row = [blog_id, b.get("title") or "", b.get("url") or "", language_of(b)]
        row += [content_lang(b), platform_label(b.get("platform"), b.get("generator"))]
        row += [b.get("status") or "", web_url(b.get("feed_url")) or ""]
        row += [b.get("in_degree", 0), b.get("out_degree", 0), last_post(b, newest)]
        face = avatar(blog_id, b.get("title"))
        row += [slug(blog_id), latest.get(blog_id, ""), face["letter"], face["hue"]]
        row += [[index[k] for k in topics.get(blog_id, ())], b.get("health") or ""]
        row += [_short(b.get(c)) for c in extras]
        rows.append(row)
    return {
        "columns": columns + extras,
        "rows": rows,
        "topics": [t.key for t in TOPICS],
        "kinds": list(KINDS),
    }


def links_data(blogs: Sequence[Mapping[str, Any]], links: Iterable[Mapping[str, Any]]) -> dict:
    """The friends each blog lists, as indexes of ``blogs`` (the directory's rows), for the
    blog pages' shortest friend path: ``{"lists": [[1, 4], [], ...]}``."""
    index = {b["blog_id"]: i for i, b in enumerate(blogs)}
    lists: list[set[int]] = [set() for _ in blogs]
    for link in links:
        s, t = index.get(link["source_blog_id"]), index.get(link["target_blog_id"])
        if s is not None and t is not None and s != t:
            lists[s].add(t)
    return {"lists": [sorted(targets) for targets in lists]}


def _any(blogs: Iterable[Mapping[str, Any]], column: str) -> bool:
    return any(b.get(column) not in (None, "") for b in blogs)


def _short(value: Any) -> Any:
    return plain_text(value, 200) if isinstance(value, str) else value


def initial_positions(ids: Sequence[str], edges: Sequence[tuple[int, int]]) -> list[tuple]:
    """``(x, y)`` per node: nodes in breadth-first order (undirected, from the highest-degree
    node of each component) on a sunflower spiral, so that linked blogs start close."""
    n = len(ids)
    near: list[list[int]] = [[] for _ in range(n)]
    for s, t in edges:
        near[s].append(t)
        near[t].append(s)
    order: list[int] = []
    seen = [False] * n
    for start in sorted(range(n), key=lambda i: (-len(near[i]), ids[i])):
        if seen[start]:
            continue
        seen[start] = True
        queue = deque([start])
        while queue:
            node = queue.popleft()
            order.append(node)
            for nxt in near[node]:
                if not seen[nxt]:
                    seen[nxt] = True
                    queue.append(nxt)
    golden = math.pi * (3 - math.sqrt(5))
    pos: list[tuple] = [(0.0, 0.0)] * n
    for rank, node in enumerate(order):
        r = math.sqrt(rank + 0.5) * 10
        pos[node] = (round(r * math.cos(rank * golden), 2), round(r * math.sin(rank * golden), 2))
    return pos


def graph_data(
    blogs: Sequence[Mapping[str, Any]], links: Iterable[Mapping[str, Any]], limit: int
) -> dict[str, Any]:
    """Nodes ``[id, label, page, in_degree, color, x, y]`` and edges ``[source, target]`` (node
    indexes) of the friend graph of at most ``limit`` blogs; the platform legend."""
    chosen = sorted(blogs, key=lambda b: (-b.get("in_degree", 0), b["blog_id"]))[:limit]
    chosen.sort(key=lambda b: b["blog_id"])
    index = {b["blog_id"]: i for i, b in enumerate(chosen)}
    pairs: set[tuple[int, int]] = set()
    for link in links:
        s, t = index.get(link["source_blog_id"]), index.get(link["target_blog_id"])
        if s is not None and t is not None and s != t:
            pairs.add((s, t))
    edges = sorted(pairs)
    platforms = Counter(platform_label(b.get("platform"), b.get("generator")) for b in chosen)
    legend = [name for name, _ in platforms.most_common(len(PLATFORM_COLORS))]
    color = {name: PLATFORM_COLORS[i] for i, name in enumerate(legend)}
    pos = initial_positions([b["blog_id"] for b in chosen], edges)
    nodes = []
    for i, b in enumerate(chosen):
        label = " ".join((b.get("title") or b["blog_id"]).split())[:80]
        platform = platform_label(b.get("platform"), b.get("generator"))
        nodes.append(
            [b["blog_id"], label, slug(b["blog_id"]), b.get("in_degree", 0),
             color.get(platform, OTHER_COLOR), *pos[i]]
        )  # fmt: skip
    legend_rows = [[name, color[name], platforms[name]] for name in legend]
    if len(platforms) > len(legend):
        rest = sum(n for name, n in platforms.items() if name not in color)
        legend_rows.append(["other", OTHER_COLOR, rest])
    return {"nodes": nodes, "edges": [list(e) for e in edges], "legend": legend_rows,
            "total_blogs": len(blogs)}  # fmt: skip


def overview(data: SiteData) -> dict[str, Any]:
    """The numbers of the overview page."""
    blogs = data.blogs
    status = Counter(b.get("status") or "" for b in blogs)
    langs = Counter(language_of(b) or "(unknown)" for b in blogs)
    platforms = Counter(platform_label(b.get("platform"), b.get("generator")) for b in blogs)
    rows = [r for rs in data.schedule.values() for r in rs]
    last_fetch = max((r.get("last_fetch") or "" for r in rows), default="")
    next_due = min((r.get("next_due") or "" for r in rows if r.get("next_due")), default="")
    failing = sum(1 for r in rows if (r.get("consecutive_failures") or 0) > 0)
    fetched = [b.get("fetched_at") or "" for b in blogs]
    health = Counter(b.get("health") or UNCHECKED for b in blogs)
    order = [*KINDS, *sorted(set(health) - {*KINDS, UNCHECKED}), UNCHECKED]
    known = {b["blog_id"]: b for b in blogs}
    changes = [
        {"blog_id": c.blog_id, "before": c.before, "after": c.after, "at": c.at,
         "title": known[c.blog_id].get("title") or "", "lang": content_lang(known[c.blog_id]),
         "page": slug(c.blog_id)}
        for c in data.health_changes[:CHANGES_SHOWN]
        if c.blog_id in known
    ]  # fmt: skip
    pairs = Counter((c.before, c.after) for c in data.health_changes if c.blog_id in known)
    return {
        "blogs": len(blogs),
        "with_feed": sum(1 for b in blogs if b.get("feed_url")),
        "feeds": sum(len(b.get("feeds") or ()) for b in blogs),
        "entries": len(data.entries),
        "links": len(data.links),
        "status": status.most_common(),
        "health": [(kind, health[kind]) for kind in order if health[kind]],
        "changes": changes,
        "changes_more": max(sum(pairs.values()) - len(changes), 0),
        "change_pairs": [
            (a, b, n) for (a, b), n in sorted(pairs.items(), key=lambda p: (-p[1], p[0]))
        ],
        "languages": langs.most_common(20),
        "languages_more": max(len(langs) - 20, 0),
        "platforms": platforms.most_common(20),
        "platforms_more": max(len(platforms) - 20, 0),
        "crawl_last": max(fetched, default=""),
        "crawl_first": min((f for f in fetched if f), default=""),
        "feeds_scheduled": data.feeds_scheduled,
        "feed_last": last_fetch,
        "feed_next": next_due,
        "feeds_failing": failing,
        "top": sorted(blogs, key=lambda b: (-b.get("in_degree", 0), b["blog_id"]))[:10],
        "runs": {s: [run_view(r) for r in data.runs.get(s, [])] for s in RUN_SPIDERS},
    }


def run_view(run: Run) -> dict[str, Any]:
    """What the overview says of one run: its row, how long it took, its failures in words."""
    start, end = iso_utc(run.started), iso_utc(run.finished)
    took = _took((end - start).total_seconds()) if start and end else ""
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(run.failures_by_kind.items()))
    failures = f"{run.failures} ({kinds})" if kinds else str(run.failures)
    return {**asdict(run), "took": took, "failures_text": failures if run.failures else "none"}


def _took(seconds: float) -> str:
    if seconds < 90:
        return f"{max(seconds, 0):.0f} s"
    return _duration(seconds / 60)


def _friend_lists(
    links: Iterable[Mapping[str, Any]], known: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[dict[str, Any]]]]:
    """Per blog id: the friends it lists (one per target blog, the first stored link) and the
    blogs that list it (one per source), self-links left out; each with ``since`` (the link's
    ``first_seen``) and ``removed`` (the link's, :meth:`~blogfeeds.storage.db.Store.friend_links`),
    those still listed first."""
    lists: dict[str, list[dict[str, Any]]] = {}
    listed_by: dict[str, list[dict[str, Any]]] = {}
    seen: set[tuple[str, str]] = set()
    for link in links:
        s, t = link["source_blog_id"], link["target_blog_id"]
        if s == t or (s, t) in seen:
            continue
        seen.add((s, t))
        target = known.get(t)
        since, removed = link.get("first_seen") or "", link.get("removed") or ""
        lists.setdefault(s, []).append(
            {
                "blog_id": t,
                "name": link.get("name") or "",
                "title": (target or {}).get("title") or "",
                "lang": content_lang(target),
                "page": slug(t) if target else None,
                "url": web_url(link.get("target_url")),
                "since": since,
                "removed": removed,
            }
        )
        if s in known:
            listed_by.setdefault(t, []).append(
                {
                    "blog_id": s,
                    "title": known[s].get("title") or "",
                    "page": slug(s),
                    "lang": content_lang(known[s]),
                    "removed": removed,
                }
            )
    for friends in (*lists.values(), *listed_by.values()):
        friends.sort(key=lambda f: bool(f["removed"]))  # stable: the stored order otherwise
    return lists, listed_by


def _revisit(row: Mapping[str, Any], newest: Mapping[str, str]) -> dict[str, Any]:
    """What a blog page says of one scheduled feed (the state's fields read defensively);
    ``newest``: the newest entry's date per feed, the last change known when the revisits saw
    none (a first fetch has nothing to compare with)."""
    state = row.get("state") or {}
    interval = row.get("interval_minutes") or state.get("interval") or 0
    fetches, not_modified = state.get("fetches"), state.get("not_modified")
    share = None
    if isinstance(fetches, int | float) and fetches and isinstance(not_modified, int | float):
        share = f"{100 * not_modified / fetches:.0f} %"
    return {
        "feed_url": row.get("feed_url"),
        "level": row.get("level"),
        "interval": _duration(float(interval)),
        "last_fetch": row.get("last_fetch"),
        "last_change": row.get("last_change"),
        "newest": newest.get(row.get("feed_url") or ""),
        "next_due": row.get("next_due"),
        "status": row.get("status"),
        "error": row.get("last_error") or "",
        "failures": row.get("consecutive_failures") or 0,
        "dead": bool(state.get("dead")),
        "share_304": share,
    }


def _duration(minutes: float) -> str:
    if minutes <= 0:
        return ""
    if minutes < 120:
        return f"{minutes:.0f} min"
    if minutes < 48 * 60:
        return f"{minutes / 60:.1f} h"
    return f"{minutes / 1440:.1f} days"


def _copy_assets(folder: SiteFolder) -> None:
    assets = resources.files("blogfeeds.site") / "assets"
    for rel, source in _walk(assets):
        folder.path("/".join(("assets", *rel))).write_bytes(source.read_bytes())


def _walk(node: Any, prefix: tuple[str, ...] = ()) -> Iterable[tuple[tuple[str, ...], Any]]:
    for child in node.iterdir():
        if child.is_dir():
            yield from _walk(child, (*prefix, child.name))
        elif not child.name.startswith("."):
            yield (*prefix, child.name), child


def build_site(data: SiteData, out: Path, options: SiteOptions) -> BuildReport:
    """Write the site of ``data`` into ``out`` (created; pages of an earlier build are
    replaced, the ``blogs/`` folder emptied first so that a blog no longer stored has no page).
    ``ValueError`` when ``options.around`` names no stored blog."""
    started = time.monotonic()
    report = BuildReport(blogs=len(data.blogs))
    known = {b["blog_id"]: b for b in data.blogs}
    circle: dict[str, int] | None = None
    if options.around is not None:
        if options.around not in known:
            raise ValueError(f"--around {options.around!r}: no such blog is stored")
        circle = within_hops(data.links, options.around, options.hops)
    folder = SiteFolder(out, force=options.force)
    _copy_assets(folder)
    _write_text(folder.path("assets/messages.js"), catalog_script())
    env = _environment()
    scope = None
    if circle is not None:
        name = known[options.around or ""].get("title") or options.around
        scope = {"blog": options.around, "name": name, "hops": options.hops,
                 "page": slug(options.around or ""), "blogs": len(circle)}  # fmt: skip
    common = {"site_title": options.title, "built_at": data.built_at, "scope": scope}

    def render(template: str, path: str, root: str, **context: Any) -> None:
        html = env.get_template(template).render(root=root, **common, **context)
        _write_text(folder.path(path), html)

    newest: dict[str, str] = {}
    newest_title: dict[str, str] = {}
    feed_newest: dict[str, str] = {}
    per_blog: dict[str, list[dict[str, Any]]] = {}
    for entry in data.entries:  # newest first
        blog_id = entry["blog_id"]
        feed_newest.setdefault(entry["feed_url"], entry["date"])
        if blog_id:
            if blog_id not in newest:
                newest[blog_id] = entry["date"]
                newest_title[blog_id] = plain_text(entry.get("title"), 120)
            got = per_blog.setdefault(blog_id, [])
            if len(got) < options.blog_entries:
                got.append(entry)
    topics = {
        b["blog_id"]: topics_of(
            plain_text(b.get("description"), 1000), b.get("abstract") or "",
            [plain_text(e.get("title")) for e in per_blog.get(b["blog_id"], ())],
        )
        for b in data.blogs
    }  # fmt: skip

    render("overview.html", "index.html", "", page="overview", stats=overview(data))

    directory = directory_data(data.blogs, newest, newest_title, topics)
    _write_text(folder.path("data/directory.js"), _js_data("BLOGFEEDS_DIRECTORY", directory))
    friends = links_data(data.blogs, data.links)
    _write_text(folder.path("data/links.js"), _js_data("BLOGFEEDS_LINKS", friends))
    render("directory.html", "directory.html", "", page="directory")

    weight = weights((b["blog_id"] for b in data.blogs), data.entries)
    chances = [
        (slug(b["blog_id"]), weight[b["blog_id"]], len(per_blog.get(b["blog_id"], ())))
        for b in data.blogs
    ]
    for name, script in random_files(chances).items():
        _write_text(folder.path(name), script)

    lists, listed_by = _friend_lists([*data.links, *data.dropped], known)
    page = env.get_template("blog.html")
    for blog in data.blogs:
        blog_id = blog["blog_id"]
        extras = [(c, blog.get(c)) for c in OPTIONAL_BLOG_COLUMNS if blog.get(c) not in (None, "")]
        revisits = [_revisit(r, feed_newest) for r in data.schedule.get(blog_id, [])]
        html = page.render(
            root="../",
            **common,
            page="blog",
            blog=blog,
            extras=extras,
            platform=platform_label(blog.get("platform"), blog.get("generator")),
            revisits=revisits,
            home_failed=(blog.get("status") or "") not in ANSWERED,
            timeline=data.health.get(blog_id),
            feed_failures=[r for r in revisits if r["failures"] or r["error"]],
            friends=lists.get(blog_id, []),
            listed_by=listed_by.get(blog_id, []),
            entries=per_blog.get(blog_id, []),
            last_post=last_post(blog, newest),
            topics=topics[blog_id],
        )
        _write_text(folder.path(f"blogs/{slug(blog_id)}.html"), html)

    river = data.entries_of(circle)
    shown = river[: options.river_limit]
    pages = max(math.ceil(len(shown) / options.page_size), 1)
    for n in range(1, pages + 1):
        chunk = shown[(n - 1) * options.page_size : n * options.page_size]
        rows = [
            {**e, "blog": known.get(e["blog_id"] or ""), "page": slug(e["blog_id"])
             if e["blog_id"] in known else None}
            for e in chunk
        ]  # fmt: skip
        render(
            "river.html", river_page_name(n), "", page="river", entries=rows, number=n,
            pages=pages, total=len(river), shown=len(shown),
            prev=river_page_name(n - 1) if n > 1 else None,
            next=river_page_name(n + 1) if n < pages else None,
            start=(n - 1) * options.page_size + 1,
        )  # fmt: skip
    report.river_entries, report.river_pages = len(shown), pages

    def hit(entry: Mapping[str, Any]) -> list[Any]:
        blog = known.get(entry["blog_id"] or "")
        name = blog.get("title") if blog else ""
        face = avatar(entry["blog_id"] or entry["feed_url"], name)
        return hit_row(entry, blog, slug(entry["blog_id"]) if blog else None,
                       content_lang(blog), face)  # fmt: skip

    indexing = time.monotonic()
    for name, script in post_index(river, hit):
        _write_text(folder.path(name), script)
    report.searchable, report.search_seconds = len(river), time.monotonic() - indexing

    title = options.title + (f": friend circle of {scope['name']}" if scope else ": river")
    feed_id = (
        "urn:blogfeeds:river:"
        + hashlib.sha1(
            f"{options.title}\n{options.around}\n{options.hops}".encode(), usedforsecurity=False
        ).hexdigest()
    )
    latest = river[: options.feed_limit]
    with open(folder.path("river.atom"), "wb") as fh:
        report.feed_entries = write_atom(
            latest, known, fh, title=title, feed_id=feed_id, base_url=options.base_url
        )
    with open(folder.path("river.json"), "wb") as fh:
        write_json_feed(latest, known, fh, title=title, base_url=options.base_url)

    graph = graph_data(data.blogs, data.links, options.graph_limit)
    _write_text(folder.path("data/graph.js"), _js_data("BLOGFEEDS_GRAPH", graph))
    render("graph.html", "graph.html", "", page="graph", graph=graph)
    for name in options.extra_files:
        folder.path(name)
    folder.finish()
    report.graph_nodes, report.graph_edges = len(graph["nodes"]), len(graph["edges"])
    report.seconds = time.monotonic() - started
    return report
