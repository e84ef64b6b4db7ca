"""One blog, one node: real built blogs served under several addresses, crawled as a black box.

Each entry of ``bench/identity_eval.toml`` names a public repository of a built static blog, a
commit, the build's folder, its main feed and its friend page, the address the blog's own
evidence prefers (``canonical``) and its other addresses with their kind (a ``user.github.io``
that answers 301 to the custom domain or serves a copy, platform copies on vercel.app,
netlify.app, pages.dev and gitee.io, a stale copy from an older commit, an old domain that
answers 301, an old domain whose older copy says the blog moved). The manifest is the truth:
the addresses of an entry are one blog, and the entries are distinct blogs (among them the
controls that must stay apart: same themes, placeholder addresses, two people under paths of
one shared host, a blog under a path of its host).

``build`` copies the text files of each build (pages, feeds, JSON) out of local mirrors of the
repositories (bare git directories ``<mirrors>/<owner>+<name>/repo``) into ``--out`` (default
``~/.cache/blogfeeds/identity-eval``), and for a stale or moved copy the build of an older
commit that changed the feed (or, in a repository without one, the build with its newest
third of feed entries dropped). Nothing is fetched over the network and nothing of the blogs
enters this repository; CI does not run this script and no test depends on it.

``run`` serves the chosen part on a loopback web (:class:`tests.littleweb.LittleWeb`: a
forward proxy answering every host itself, over http and https; http answers 301 to https as
static hosts do), each build's absolute links rewritten from the address it names to its
canonical address (a blog mounted under a path gets its root-relative links prefixed too).
The friend pages of the part link each other: the first six friends of each friend page (as
the project's friend extractor finds them; a page listing fewer than three gets a blogroll of
six) are re-pointed at other blogs of the part, each by one of its addresses chosen by a hash
(an alias twice as often as the canonical over https, or over http: kind ``http``). Then
``scrapy crawl blogs`` runs with the project's settings (only ``BLOGFEEDS_ALLOW_PRIVATE_TARGETS``
on, so that loopback is reachable, and a fresh SQLite database), seeded with one address of
each blog chosen by a hash, then its other addresses (each address is seen), and
the script prints, overall, per kind of address, per generator and per language:

- nodes: the distinct blog identities of the database (``blogs`` and the targets of
  ``friend_links``) that are an address of a blog of the part (its identity, or for an address
  under a path its host and first segment: :func:`identities`); extra nodes = nodes beyond one
  a blog;
- false merges: blogs that share a node with another blog (a node standing for k blogs counts
  k - 1);
- on one node: the share of the friend links to a blog of the part (rows of ``friend_links``
  whose target URL is one of its addresses) whose target is the blog's one node, an identity
  of its canonical address that stands for no other blog.

Usage, from the repository root::

    python bench/identity_eval.py build [--mirrors DIR] [--out DIR]
    python bench/identity_eval.py run [--out DIR] [--part dev|holdout|all] [--details]
                                      [--db FILE] [--set NAME=VALUE ...]
    python bench/identity_eval.py evidence [--out DIR] [--part dev|holdout|all] [--details]

``evidence`` runs :func:`blogfeeds.extract.aliases.same_blog` offline over every pair of
addresses of the part (each address observed through the web's own handler: its redirects, its
home page's signals, its main feed by the project's feed discovery), joins the addresses into
nodes by its answers and counts nodes, extra nodes and false merges like ``run``.

The holdout part is the blogs of the manifest's newest ``round`` whose id's hash is 0 modulo 3
(:func:`load_manifest`); an earlier round's holdout is spent and belongs to the dev part.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import html
import json
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urljoin, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from friends_eval import DEFAULT_MIRRORS, git, mirror_of  # noqa: E402

from blogfeeds.extract.aliases import (  # noqa: E402
    Hop,
    Observation,
    local_posts,
    preferred,
    same_blog,
)
from blogfeeds.extract.page import Page, parse_page  # noqa: E402
from blogfeeds.extract.pagesignals import page_signals  # noqa: E402
from tests.littleweb import LittleWeb, Route, guess_content_type  # noqa: E402

MANIFEST = ROOT / "bench" / "identity_eval.toml"
DEFAULT_OUT = Path("~/.cache/blogfeeds/identity-eval").expanduser()
TEXT_FILES = re.compile(r"\.(?:html?|xml|json|rss|atom|txt)$", re.IGNORECASE)
FEED_ENTRY = re.compile(rb"<(item|entry)\b.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
# quoted or not (minified builds write href=/index.xml)
ROOT_RELATIVE = re.compile(r"""(\b(?:href|src|action)\s*=\s*["']?)/(?!/)""", re.IGNORECASE)
FRIEND_LINKS_A_PAGE = 6
"""Friends of a friend page re-pointed at blogs of the set (fewer when the page lists fewer)."""
MOVED = {
    "zh": "本博客已迁移至新地址：",
    "ja": "このブログは移転しました：",
    "de": "Dieses Blog ist umgezogen: ",
    "pt": "Este blog mudou-se para ",
}
MOVED_DEFAULT = "This blog has moved to "


def digest(*parts: str) -> int:
    return int(hashlib.sha1("\0".join(parts).encode()).hexdigest(), 16)


@dataclass(frozen=True)
class Address:
    url: str
    kind: str

    @property
    def host(self) -> str:
        return (urlsplit(self.url).hostname or "").lower()

    @property
    def prefix(self) -> str:
        return urlsplit(self.url).path or "/"


@dataclass(frozen=True)
class Blog:
    id: str
    repo: str
    commit: str
    root: str
    feed: str
    friends: str
    base: str
    canonical: str
    generator: str
    theme: str
    language: str
    home: str = ""
    aliases: tuple[Address, ...] = ()
    round: int = 1
    """The round of the evaluation that added the blog (each round draws its own holdout)."""
    holdout: bool = False

    @property
    def addresses(self) -> list[Address]:
        return [Address(self.canonical, "canonical"), *self.aliases]

    def mount(self, address: Address) -> str:
        """The path the build's root is served at on ``address``'s host."""
        prefix = address.prefix
        return prefix[: len(prefix) - len(self.home)] if self.home else prefix


def load_manifest(path: Path = MANIFEST) -> list[Blog]:
    with path.open("rb") as f:
        rows = tomllib.load(f)["blog"]
    newest = max((row.get("round", 1) for row in rows), default=1)
    blogs = []
    for row in rows:
        aliases = tuple(Address(a["url"], a["kind"]) for a in row.pop("aliases", []))
        blog = Blog(**row, aliases=aliases)
        # a third of the newest round by a hash of the id, never by looking at a blog
        held = blog.round == newest and digest(blog.id) % 3 == 0
        blogs.append(replace(blog, holdout=held))
    return blogs


# --- build -----------------------------------------------------------------------------------


def export(gitdir: Path, commit: str, root: str, into: Path) -> int:
    """The text files under ``root`` at ``commit``, written under ``into`` without ``root``
    (a blob the snapshot lacks is skipped)."""
    listing = git(gitdir, "ls-tree", "-r", "-z", commit, "--", root or ":/")
    wanted: list[tuple[str, str]] = []
    for entry in listing.split(b"\0"):
        meta, _, name = entry.decode("utf-8", "replace").partition("\t")
        fields, rel = meta.split(), name[len(root) :]
        blob = len(fields) == 3 and fields[1] == "blob"
        if blob and TEXT_FILES.search(rel) and ".." not in Path(rel).parts:
            wanted.append((fields[2], rel))
    proc = subprocess.run(
        ["git", "--git-dir", str(gitdir), "cat-file", "--batch"],
        input="".join(f"{sha}\n" for sha, _ in wanted).encode(),
        capture_output=True,
        check=True,
    )
    data, pos, count = proc.stdout, 0, 0
    for _sha, rel in wanted:
        header_end = data.index(b"\n", pos)
        header = data[pos:header_end].split()
        pos = header_end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue  # missing from the snapshot
        size = int(header[2])
        target = into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data[pos : pos + size])
        pos += size + 1
        count += 1
    return count


def older_commit(gitdir: Path, blog: Blog) -> str | None:
    """A commit before ``blog.commit`` whose build has another main feed (three feed changes
    back, or the oldest there is), or None when the history has none."""
    log = git(gitdir, "log", "--format=%H", "-n", "8", blog.commit, "--", blog.root + blog.feed)
    shas = [s for s in log.decode().split() if s != blog.commit]
    return shas[min(2, len(shas) - 1)] if shas else None


def trim_feed(path: Path) -> None:
    """Drop the newest third of a feed's entries (at least one): an older copy's feed."""
    data = path.read_bytes()
    entries = list(FEED_ENTRY.finditer(data))
    drop = max(1, len(entries) // 3) if len(entries) > 1 else 0
    if drop:
        path.write_bytes(data[: entries[0].start()] + data[entries[drop].start() :])


def build(blogs: list[Blog], mirrors: Path, out: Path) -> int:
    missing = []
    for blog in blogs:
        gitdir = mirror_of(mirrors, blog.repo)
        if not gitdir.is_dir():
            missing.append(blog.repo)
            continue
        folder = out / blog.id
        shutil.rmtree(folder, ignore_errors=True)
        files = export(gitdir, blog.commit, blog.root, folder / "current")
        meta = {"commit": blog.commit, "files": files}
        if any(a.kind in ("stale", "moved-notice") for a in blog.aliases):
            old = older_commit(gitdir, blog)
            if old and export(gitdir, old, blog.root, folder / "old"):
                meta["old"] = old
            else:
                shutil.rmtree(folder / "old", ignore_errors=True)
                shutil.copytree(folder / "current", folder / "old")
                trim_feed(folder / "old" / blog.feed)
                meta["old"] = "trimmed"
        (folder / "build.json").write_text(json.dumps(meta), encoding="utf-8")
        print(f"{blog.id}: {files} files, old copy {meta.get('old', '-')}", file=sys.stderr)
    if missing:
        print("not in the mirrors (fetch them first):", *missing, sep="\n  ", file=sys.stderr)
    return 1 if missing else 0


# --- the web ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    """A friend link the web was given: ``source``'s friend page names ``target`` by ``url``."""

    source: str
    target: str
    url: str
    kind: str


@dataclass
class MirrorWeb:
    """The served part: which build answers on which host and path, and the links put in."""

    blogs: list[Blog]
    out: Path
    links: list[Link] = field(default_factory=list)
    friend_pages: dict[tuple[str, str], bytes] = field(default_factory=dict)
    """``(blog id, build)`` → the friend page as served (rewritten), the set's links put in."""
    _cache: dict[tuple[str, str, str, str], bytes] = field(default_factory=dict)

    @functools.cached_property
    def mounts(self) -> dict[str, list[tuple[str, Blog, Address]]]:
        """host → ``(mount path, blog, address)``, longest mount first."""
        hosts: dict[str, list[tuple[str, Blog, Address]]] = defaultdict(list)
        for blog in self.blogs:
            for address in blog.addresses:
                hosts[address.host].append((blog.mount(address), blog, address))
        for entries in hosts.values():
            entries.sort(key=lambda e: -len(e[0]))
        return hosts

    def link_url(self, source: Blog, target: Blog) -> tuple[str, str]:
        """The address ``source`` uses for ``target``, by a hash: an alias twice as often as the
        canonical over https or over http (a kind of its own)."""
        aliases = [(a.url, a.kind) for a in target.aliases]
        choices = [*aliases, *aliases, (target.canonical, "canonical")]
        choices.append((target.canonical.replace("https://", "http://", 1), "http"))
        return choices[digest(source.id, target.id) % len(choices)]

    def put_links(self) -> None:
        """Re-point the first friends of every friend page at other blogs of the part."""
        for source in self.blogs:
            others = sorted(
                (b for b in self.blogs if b.id != source.id),
                key=lambda b: digest(source.id, b.id),
            )
            page_url = urljoin(source.canonical, source.friends[len(source.home) :])
            page_url = re.sub(r"index\.html$", "", page_url)
            for build in ("current", "old"):
                path = self.out / source.id / build / source.friends
                if not path.is_file():
                    continue
                body = self.rewrite(source, path.read_bytes(), path.name)
                page = parse_page(page_url, body, {"Content-Type": "text/html"})
                hrefs = friend_hrefs(page_url, body.decode("utf-8", "replace"), page)
                text = body.decode("utf-8", "replace")
                targets = others[:FRIEND_LINKS_A_PAGE]
                listed = []
                for href, target in zip(hrefs, targets, strict=False):
                    url, kind = self.link_url(source, target)
                    text = replace_href(text, href, url)
                    listed.append(Link(source.id, target.id, url, kind))
                if len(listed) < FRIEND_LINKS_A_PAGE // 2:  # a page of one or two friends
                    added = [Link(source.id, t.id, *self.link_url(source, t)) for t in targets]
                    text = add_blogroll(text, added[len(listed) :], source.language)
                    listed = added
                if build == "current":
                    self.links.extend(listed)
                self.friend_pages[(source.id, build)] = text.encode("utf-8")

    def rewrite(self, blog: Blog, body: bytes, name: str) -> bytes:
        """A built file as served: the build's own origin replaced by the canonical's, and
        root-relative links prefixed where the build is mounted under a path."""
        if not TEXT_FILES.search(name):
            return body
        text = body.decode("utf-8", "replace")
        canonical = urlsplit(blog.canonical)
        mount = blog.mount(Address(blog.canonical, "canonical")).rstrip("/")
        if blog.base:
            base = urlsplit(blog.base).netloc
            pattern = re.compile(r"(?<=//)" + re.escape(base) + r"(?=[/\"'<\s?#]|$)", re.I)
            text = pattern.sub(canonical.netloc + mount, text)
            text = text.replace("\\/\\/" + base, "\\/\\/" + canonical.netloc + mount)
            if blog.base.startswith("http://") and blog.canonical.startswith("https://"):
                text = text.replace("http://" + canonical.netloc, "https://" + canonical.netloc)
        if mount and name.lower().endswith((".html", ".htm")):
            text = ROOT_RELATIVE.sub(lambda m: m.group(1) + mount + "/", text)
        return text.encode("utf-8")

    def answer(self, url: str) -> Route:
        parts = urlsplit(url)
        host, path = (parts.hostname or "").lower(), parts.path or "/"
        if parts.scheme == "http":
            return Route(status=301, location=url.replace("http://", "https://", 1), body=b"")
        mount = next(
            (m for m in self.mounts.get(host, []) if path.startswith(m[0]) or path + "/" == m[0]),
            None,
        )
        if mount is None:
            return Route(status=404, body=b"not found\n", content_type="text/plain")
        prefix, blog, address = mount
        rel = path[len(prefix) :] if path.startswith(prefix) else ""
        if address.kind in ("github-301", "moved-301"):
            target = blog.canonical.rstrip("/") + "/" + rel
            if blog.home and rel.startswith(blog.home):  # the canonical already names the home
                target = blog.canonical + rel[len(blog.home) :]
            query = f"?{parts.query}" if parts.query else ""
            return Route(status=301, location=target + query, body=b"")
        build = "old" if address.kind in ("stale", "moved-notice") else "current"
        folder = self.out / blog.id / build
        name = rel + "index.html" if rel == "" or rel.endswith("/") else rel
        file = folder / name
        if not file.is_file() and (folder / (rel + ".html")).is_file():  # as Pages answers /about
            name, file = rel + ".html", folder / (rel + ".html")
        if not file.is_file():
            if (folder / rel / "index.html").is_file():
                return Route(status=301, location=f"https://{host}{path}/", body=b"")
            return Route(status=404, body=b"not found\n", content_type="text/plain")
        key = (blog.id, build, address.url, name)
        if key not in self._cache:
            friends = self.friend_pages.get((blog.id, build)) if name == blog.friends else None
            body = friends or self.rewrite(blog, file.read_bytes(), name)  # friends: rewritten
            if address.kind == "moved-notice" and name == blog.home + "index.html":
                body = moved_notice(body, blog)
            self._cache[key] = body
        body = self._cache[key]
        return Route(body=body, content_type=guess_content_type(name, body))


def friend_hrefs(page_url: str, text: str, page: Page) -> list[str]:
    """The ``href`` values, as written, of the page's friends in page order (one each)."""
    import lxml.html

    from blogfeeds.extract.friends import extract_friends

    wanted = {url_key(f.url) for f in extract_friends(page).friends}
    own = urlsplit(page_url).hostname
    found: dict[str, str] = {}
    for a in lxml.html.fromstring(text).iter("a"):
        href = (a.get("href") or "").strip()
        key = url_key(urljoin(page_url, href))
        if key in wanted and key not in found and urlsplit(key).hostname != own:
            found[key] = href
    return list(found.values())


def replace_href(text: str, href: str, url: str) -> str:
    for written in dict.fromkeys((href, html.escape(href))):
        for quote in ('"', "'"):
            text = text.replace(f"href={quote}{written}{quote}", f"href={quote}{url}{quote}")
    return text


def add_blogroll(text: str, links: list[Link], language: str) -> str:
    """A friend page listing too few friends to link the set, with a blogroll of ``links``
    added at the end of its main content."""
    heading = "友情链接" if language == "zh" else "Friends"
    items = "".join(
        f'<li><a href="{link.url}" target="_blank">{link.target}</a>'
        f"<p>{link.target}: notes and posts</p></li>"
        for link in links
    )
    section = f"<section><h2>{heading}</h2><ul>{items}</ul></section>"
    for closing in ("</article>", "</main>", "</body>"):
        at = text.lower().rfind(closing)
        if at >= 0:
            return text[:at] + section + text[at:]
    return text + section


def moved_notice(body: bytes, blog: Blog) -> bytes:
    """The home page of an old copy with a notice, in the blog's language, naming the new
    address."""
    words = MOVED.get(blog.language, MOVED_DEFAULT)
    notice = (
        f'<div class="moved-notice"><p>{words}<a href="{blog.canonical}">{blog.canonical}</a>'
        "</p></div>"
    ).encode()
    m = re.search(rb"<body\b[^>]*>", body, re.IGNORECASE)
    at = m.end() if m else 0
    return body[:at] + notice + body[at:]


def url_key(url: str) -> str:
    """``scheme://host/path`` lower-cased host, no ``www.``, no ``index.html``, no trailing
    slash: the form two spellings of one link share."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().removeprefix("www.")
    path = re.sub(r"/index\.html?$", "/", parts.path).rstrip("/")
    return f"https://{host}{path}"


# --- the crawl and its judgement -------------------------------------------------------------


def crawl(web: MirrorWeb, seeds: list[str], db: Path, settings: list[str]) -> None:
    routes = {f"*@{host}": Route(handler=web.answer) for host in web.mounts}
    with LittleWeb(routes) as little:
        env = little.env()
        env["BLOGFEEDS_DATABASE_URL"] = f"sqlite:///{db}"
        cmd = [sys.executable, "-m", "scrapy", "crawl", "blogs", "-a"]
        cmd += ["start_urls=" + ",".join(seeds), "-s", "LOG_LEVEL=INFO"]
        for setting in settings:
            cmd += ["-s", setting]
        started = time.monotonic()
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        print(f"crawl: {time.monotonic() - started:.0f} s, exit {proc.returncode}", file=sys.stderr)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)


@dataclass
class Tally:
    blogs: int = 0
    """Blogs (for an address kind: the addresses of that kind)."""
    nodes: int = 0
    extra: int = 0
    merged: int = 0
    put: int = 0
    """Friend links put in the friend pages (those of pages the crawl never read included)."""
    links: int = 0
    on_node: int = 0

    def add(self, other: Tally) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def row(self, name: str) -> str:
        share = f"{self.on_node / self.links:.3f}" if self.links else "-"
        return (
            f"| {name} | {self.blogs} | {self.nodes} | {self.extra} | {self.merged} "
            f"| {self.put} | {self.links} | {share} |"
        )


HEADER = [
    "| {} | blogs | nodes | extra nodes | false merges | links put in | links stored "
    "| on one node |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
]


@dataclass
class Judgement:
    overall: Tally
    kinds: dict[str, Tally]
    generators: dict[str, Tally]
    languages: dict[str, Tally]
    details: list[str]


def identity(url: str) -> str:
    from blogfeeds.extract.identity import blog_id

    try:
        return blog_id(url)
    except ValueError:
        return ""


def identities(url: str) -> tuple[str, ...]:
    """The node ids that stand for the address ``url`` alone: its :func:`identity`, and for an
    address under a path its host and first segment (``blogs.host.example/alice``), the form a
    path-hosted blog's identity takes, so that a crawl splitting a shared host the platform
    table does not know is judged right."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower().removeprefix("www.")
    first = parts.path.strip("/").split("/", 1)[0].lower()
    return tuple(dict.fromkeys((identity(url), *([f"{host}/{first}"] if first else []))))


def judge(web: MirrorWeb, db: Path) -> Judgement:
    """Nodes, merges and links of the crawl's database against the manifest. A node of a blog
    other than its canonical one counts, in the per-kind table, for the kind of the address it
    is the identity of."""
    with sqlite3.connect(db) as con:
        stored = {row[0] for row in con.execute("SELECT blog_id FROM blogs")}
        rows = con.execute("SELECT target_blog_id, target_url FROM friend_links")
        edges = rows.fetchall()
    nodes = stored | {target for target, _ in edges}
    by_id = {b.id: b for b in web.blogs}
    truth: dict[str, set[str]] = defaultdict(set)  # identity → the blogs it is an address of
    kind_of: dict[tuple[str, str], str] = {}  # (blog, identity) → the kind of that address
    for blog in web.blogs:
        for address in blog.addresses:
            for node in identities(address.url):
                truth[node].add(blog.id)
                kind_of.setdefault((blog.id, node), address.kind)
    kinds: dict[str, Tally] = defaultdict(Tally)
    per_blog: dict[str, Tally] = defaultdict(Tally)
    details = []
    for blog in web.blogs:
        for address in blog.addresses:
            kinds[address.kind].blogs += 1
        kinds["http"].blogs += 1
        own = sorted(n for n in nodes if blog.id in truth.get(n, ()))
        t = per_blog[blog.id]
        t.blogs, t.nodes, t.extra = 1, len(own), max(0, len(own) - 1)
        t.merged = int(any(len(truth[n]) > 1 for n in own))
        for node in own:
            kinds[kind_of[(blog.id, node)]].nodes += 1
            kinds[kind_of[(blog.id, node)]].merged += int(len(truth[node]) > 1)
            if node not in identities(blog.canonical):
                kinds[kind_of[(blog.id, node)]].extra += 1
        if len(own) != 1 or t.merged:
            merged = " (shared with another blog)" if t.merged else ""
            details.append(f"{blog.id}: nodes {', '.join(own)}{merged}")
    for link in web.links:
        per_blog[link.target].put += 1
        kinds[link.kind].put += 1
    put = {url_key(link.url): link for link in web.links}
    for target, url in edges:
        found = put.get(url_key(url))
        if found is None:
            continue
        blog = by_id[found.target]
        on = int(target in identities(blog.canonical) and len(truth[target]) == 1)
        for tally in (per_blog[blog.id], kinds[found.kind]):
            tally.links += 1
            tally.on_node += on
        if not on:
            details.append(f"link to {found.url} ({blog.id}, {found.kind}): node {target}")
    overall = Tally()
    generators: dict[str, Tally] = defaultdict(Tally)
    languages: dict[str, Tally] = defaultdict(Tally)
    for blog in web.blogs:
        t = per_blog[blog.id]
        overall.add(t)
        generators[blog.generator].add(t)
        languages[blog.language].add(t)
    return Judgement(overall, dict(kinds), dict(generators), dict(languages), details)


def run(
    blogs: list[Blog],
    out: Path,
    part: str,
    *,
    details: bool,
    settings: list[str],
    keep: Path | None,
) -> int:
    chosen = [
        b for b in blogs if part == "all" or (b.holdout if part == "holdout" else not b.holdout)
    ]
    absent = [b.id for b in chosen if not (out / b.id / "build.json").is_file()]
    if absent:
        print(f"not built: {', '.join(absent)}; run `build` first", file=sys.stderr)
        chosen = [b for b in chosen if b.id not in absent]
    web = MirrorWeb(chosen, out)
    web.put_links()
    # one address of each blog first, then its others: each address is seen, also one that only
    # a page the crawl never reads links (a friend page robots.txt forbids, one no home links)
    seeds = [b.addresses[digest("seed", b.id) % len(b.addresses)].url for b in chosen]
    first = {url_key(s) for s in seeds}
    seeds += [a.url for b in chosen for a in b.addresses if url_key(a.url) not in first]
    with tempfile.TemporaryDirectory(prefix="identity-eval-") as tmp:
        db = keep or Path(tmp) / "blogs.sqlite3"
        db.unlink(missing_ok=True)
        crawl(web, seeds, db, settings)
        result = judge(web, db)
    print(f"## {part}: {len(chosen)} blogs, {len(web.links)} friend links put in\n")
    print("\n".join(HEADER).format("set"))
    print(result.overall.row(part), end="\n\n")
    for title, rows in (
        ("address kind", result.kinds),
        ("generator", result.generators),
        ("language", result.languages),
    ):
        header = "\n".join(HEADER).format(title)
        print(header.replace("| blogs |", "| addresses |") if rows is result.kinds else header)
        for name, tally in sorted(rows.items(), key=lambda kv: (-kv[1].blogs, kv[0])):
            print(tally.row(name))
        print()
    if details:
        print("\n".join(result.details))
    return 0


# --- the evidence, offline ------------------------------------------------------------------


def follow(web: MirrorWeb, url: str, limit: int = 5) -> tuple[str, list[Hop], Route]:
    """``url`` fetched from the web, redirects followed: the final URL, the redirects, the
    final answer."""
    hops: list[Hop] = []
    route = web.answer(url)
    while route.status in (301, 302, 303, 307, 308) and route.location and len(hops) < limit:
        hops.append(Hop(url, route.status))
        url = urljoin(url, route.location)
        route = web.answer(url)
    return url, hops, route


def observe(web: MirrorWeb, url: str) -> Observation:
    """What the crawl sees of the address ``url``: its home page's signals and its main feed
    (the project's feed discovery over the same web) with its entries."""
    import asyncio

    from blogfeeds.extract.discovery import find_feeds
    from blogfeeds.extract.discovery.fetching import Fetched, FetchRequest
    from blogfeeds.extract.feedreader.read import read_feed
    from blogfeeds.extract.page import parse_page

    def fetched(url: str) -> tuple[Fetched, list[Hop]]:
        final, hops, route = follow(web, url)
        body = route.body if isinstance(route.body, bytes) else b""
        headers = {"Content-Type": route.content_type or ""}
        return Fetched(final, route.status, headers, body), hops

    async def fetch(request: FetchRequest) -> Fetched:
        return fetched(request.url)[0]

    home, hops = fetched(url)
    if home.status != 200:
        return Observation(url, home.url, tuple(hops))
    page = parse_page(home.url, home.body, home.headers)
    seen = Observation(url, home.url, tuple(hops), page_signals(page))
    feeds = asyncio.run(find_feeds(page, fetch)).feeds
    if not feeds:
        return seen
    feed, feed_hops = fetched(feeds[0].url)
    document = read_feed(feed.body, feed.header("Content-Type"), feed.url)
    return replace(
        seen,
        feed_url=feeds[0].url,
        feed_final_url=feed.url,
        feed_redirects=tuple(feed_hops),
        entries=document.item_keys if document is not None else frozenset(),
        feed_title=document.title if document is not None else "",
        local_posts=local_posts(document.entries) if document is not None else frozenset(),
    )


def evidence(blogs: list[Blog], out: Path, part: str, details: bool) -> int:
    """``same_blog`` over every pair of addresses of the part, offline; the addresses joined
    into nodes by its "same" answers (union-find), judged like the crawl."""
    chosen = [
        b for b in blogs if part == "all" or (b.holdout if part == "holdout" else not b.holdout)
    ]
    chosen = [b for b in chosen if (out / b.id / "build.json").is_file()]
    web = MirrorWeb(chosen, out)
    seen = {(b.id, a.url): (a.kind, observe(web, a.url)) for b in chosen for a in b.addresses}
    keys = list(seen)
    parent = {k: k for k in keys}

    def root(k: tuple[str, str]) -> tuple[str, str]:
        while parent[k] != k:
            k = parent[k]
        return k

    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    used: dict[str, int] = defaultdict(int)
    wrong: list[str] = []
    for i, one in enumerate(keys):
        for other in keys[i + 1 :]:
            verdict = same_blog(seen[one][1], seen[other][1])
            truth = one[0] == other[0]
            if truth and seen[one][0] == "canonical":
                tally = by_kind[seen[other][0]]
                tally[0] += 1
                tally[1] += int(verdict.same)
                chosen_home = preferred(seen[other][1], seen[one][1])
                tally[2] += int(verdict.same and url_key(chosen_home) == url_key(one[1]))
                for kind in verdict.evidence:
                    used[kind] += int(verdict.same)
                if not verdict.same and details:
                    wrong.append(f"missed {one[1]} ~ {other[1]}: {verdict}")
            if verdict.same:
                parent[root(one)] = root(other)
                if not truth:
                    wrong.append(f"FALSE {one[1]} ~ {other[1]}: {verdict}")
    clusters: dict[tuple[str, str], set[str]] = defaultdict(set)
    for k in keys:
        clusters[root(k)].add(k[0])
    nodes: dict[str, int] = defaultdict(int)
    for members in clusters.values():
        for blog_id in members:
            nodes[blog_id] += 1
    extra = sum(n - 1 for n in nodes.values())
    merged = sum(len(m) - 1 for m in clusters.values())
    print(f"## evidence, offline, {part}: {len(chosen)} blogs, {len(keys)} addresses\n")
    print(f"nodes {len(clusters)}, extra nodes {extra}, false merges {merged}\n")
    print("| alias kind | aliases | one blog with the canonical | the canonical preferred |")
    print("| --- | ---: | ---: | ---: |")
    for kind, (total, same, canonical) in sorted(by_kind.items()):
        print(f"| {kind} | {total} | {same} | {canonical} |")
    print("\nevidence used (alias ~ canonical pairs decided one blog):", dict(sorted(used.items())))
    if wrong:
        print("\n" + "\n".join(wrong))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("command", choices=("build", "run", "evidence"))
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--part", choices=("dev", "holdout", "all"), default="dev")
    parser.add_argument("--details", action="store_true")
    parser.add_argument("--db", type=Path, help="run: keep the crawl's SQLite database here")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="run: a crawl setting"
    )
    args = parser.parse_args(argv)
    blogs = load_manifest(args.manifest)
    if args.command == "build":
        return build(blogs, args.mirrors, args.out)
    if args.command == "evidence":
        return evidence(blogs, args.out, args.part, args.details)
    return run(blogs, args.out, args.part, details=args.details, settings=args.set, keep=args.db)


if __name__ == "__main__":
    sys.exit(main())
