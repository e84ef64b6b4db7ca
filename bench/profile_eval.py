"""The blog profile on real built blogs, with truth from each blog's own configuration file.

Each entry of ``bench/profile_eval.toml`` names a public repository of a static blog, a commit,
the site's configuration file (Hexo ``_config.yml``, Hugo ``hugo.toml``/``config.toml``/
``config.yaml``, Jekyll ``_config.yml``), the directory of its built site (``public/``,
``.deploy_git/``, ``docs/``, the root of a deploy branch) and the post sources. ``build``
copies, from local mirrors (bare git directories ``<mirrors>/<owner>+<name>/repo``), the built
home page, the built feeds and the site's file list into ``--out`` (default
``~/.cache/blogfeeds/profile-eval``) and computes the truth there; nothing is fetched over the
network and no page is copied into this repository.

Truth, per field (a field whose truth the built pages never show is ``unrendered``, not
expected: the build may predate the configuration). "Shown" means in the built home page or
feed, URLs taken out (a name inside ``blog.jetgirl.art`` is not shown), as a whole word where
the value starts and ends with a letter or digit:

* description: the configuration's ``description`` and ``subtitle`` (Hexo), ``params.description``
  / ``description`` / ``params.subtitle`` (Hugo), ``description`` (Jekyll), when shown and not
  just the site's name again (the home page's ``<title>`` or ``og:site_name``: no tagline);
  the extracted one is right when it equals one of them (HTML entities decoded, whitespace
  collapsed, case folded);
* author: ``author`` (Hexo, Jekyll; a mapping's ``name``), ``params.author`` / ``author``
  (Hugo), when shown and not Hexo's placeholder ``John Doe``; right when equal as above,
  single-letter middle initials aside (``Nicholas J Clark`` is ``Nicholas Clark``);
* last post: the newest front-matter ``date`` of a post source (not a page: about, links,
  a Hugo page at the top of ``content/``) whose title the built feed lists (without a feed:
  whose title is the whole text of a home page's link or heading, or a ``title``
  attribute), or the newest day of a built post page under a dated permalink
  (``2022/02/26/<slug>/index.html``: builds hold posts whose sources the repository lacks);
  right within 36 hours (front-matter dates are local time). Not judged (``unjudged``,
  counted apart) when the feed's newest entry names no source post and no dated permalink
  dates the build: the build then holds a post the sources lack (removed, renamed, redated)
  or its feed lists sections, and the sources cannot tell the date;
* icon: expected when the built home page declares one or the site has ``/favicon.ico``;
  right when the URL names a file of the built site that is an image by its first bytes (an
  icon on another host counts as right only when its URL ends in an image extension: counted
  apart as ``external``);
* language: the configuration's ``language`` / ``languageCode`` / ``lang`` primary subtag,
  except where the built home page's visible text is mostly Han characters (> 50 % of its
  letters, kana < 20 %: ``zh``) or kana > 20 % of its letters (``ja``) while the
  configuration says otherwise (a theme's default ``en`` left in place): the script is
  the truth then (``script_override``).

The site is served under the configuration's ``url`` (a placeholder host when it gives none,
``baseURL = "/"``) and the hosts its built home page names as its own (canonical, ``og:url``,
feed links): a build may be for another domain than the configuration's.

Usage, from the repository root::

    python bench/profile_eval.py discover [--mirrors DIR] > bench/profile_eval.toml
    python bench/profile_eval.py build [--mirrors DIR] [--out DIR]
    python bench/profile_eval.py run [--out DIR] [--part dev|holdout|all] [--details]

``run`` extracts each blog with :func:`blogfeeds.extract.blog.extract_blog` (the built files
served by a fetch function, ``/favicon.ico`` included) and prints per field coverage (found
when the truth has one) and precision (right among found), overall, per generator and theme,
and per language; ``--json`` prints the same as JSON (the floors test reads it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import html
import json
import os
import re
import subprocess
import sys
import tomllib
from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MANIFEST = ROOT / "bench" / "profile_eval.toml"
DEFAULT_OUT = Path("~/.cache/blogfeeds/profile-eval").expanduser()
DEFAULT_MIRRORS = Path(os.environ.get("BLOGFEEDS_MIRRORS", ROOT.parent / ".mirror"))
FIELDS = ("description", "author", "last_post", "icon", "language")
CONFIGS = ("_config.yml", "hugo.toml", "config.toml", "hugo.yaml", "config.yaml", "config.yml")
BUILDS = ("public/", ".deploy_git/", "docs/", "_site/", "build/", "")
FEEDS = ("atom.xml", "index.xml", "feed.xml", "rss.xml", "rss2.xml", "feed/index.xml")
# Post sources: Hexo's, Jekyll's, and every Hugo content page with a date (its sections vary).
POST_DIRS = ("source/_posts/", "content/", "_posts/")
POST_EXTS = (".md", ".markdown", ".html", ".Rmd", ".Rmarkdown", ".rmd", ".org")
# A built post page under a dated permalink (Hexo's default ``:year/:month/:day/:title/``).
_DATED_PAGE = re.compile(r"^((?:19|20)\d\d)/(\d\d)/(\d\d)/[^/]+/index\.html$")
_ORG_DATE = re.compile(r"^#\+DATE:\s*<?(\d{4}-\d{2}-\d{2})", re.M | re.I)
_ORG_TITLE = re.compile(r"^#\+TITLE:\s*(.+)$", re.M | re.I)
HOLDOUT_SHARE = 0.3
_HAN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_LETTER = re.compile(r"[^\W\d_]")
_IMAGE_EXT = (".ico", ".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp", ".avif")
_IMAGE_MAGIC = (b"\x00\x00\x01\x00", b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"RIFF", b"BM")


def git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={gitdir}", *args], capture_output=True, check=True, timeout=120
    ).stdout


def mirror(mirrors: Path, repo: str) -> Path | None:
    base = mirrors / repo.replace("/", "+") / "repo"
    for candidate in (base, base / ".git"):
        if (candidate / "HEAD").exists() and (candidate / "objects").exists():
            return candidate
    return None


def holdout(entry_id: str) -> bool:
    """The fixed ~30 % kept aside: by a hash of the id, never by looking at the blog."""
    return int(hashlib.sha1(entry_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < HOLDOUT_SHARE


# --- configuration files ---------------------------------------------------------------------


def load_config(path: str, text: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(text) if path.endswith(".toml") else yaml.safe_load(text)
    except Exception:
        return {}
    return data if isinstance(data, dict) else {}


def _texts(*values: Any) -> list[str]:
    out = []
    for raw in values:
        value = raw.get("name") if isinstance(raw, dict) else raw
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, (str, int)) and str(value).strip():
            out.append(str(value).strip())
    return out


def truth_of(config: dict[str, Any], generator: str) -> dict[str, Any]:
    """Description(s), author(s), language and URL the configuration gives."""
    params = config.get("params") or config.get("Params") or {}
    if not isinstance(params, dict):
        params = {}
    if generator == "hugo":
        descriptions = _texts(params.get("description"), config.get("description"))
        descriptions += _texts(params.get("subtitle"))
        authors = _texts(params.get("author"), config.get("author"))
        language = _texts(config.get("languageCode"), config.get("defaultContentLanguage"))
        url = _texts(config.get("baseURL"), config.get("baseurl"))
        theme = _texts(config.get("theme"))
    else:
        descriptions = _texts(config.get("description"), config.get("subtitle"))
        authors = _texts(config.get("author"))
        language = _texts(config.get("language"), config.get("lang"), config.get("locale"))
        url = _texts(config.get("url"))
        theme = _texts(config.get("theme"))
    return {
        "descriptions": descriptions,
        "authors": authors,
        "language": language[0] if language else "",
        "url": url[0] if url else "",
        "theme": theme[0] if theme else "",
    }


_FRONT = re.compile(r"\A(?:---|\+\+\+)\s*\n(.*?)\n(?:---|\+\+\+)\s*\n", re.S)


def front_matter(text: str) -> dict[str, Any]:
    match = _FRONT.match(text.lstrip("\ufeff"))
    if not match:
        return {}
    body = match.group(1)
    try:
        data = tomllib.loads(body) if text.lstrip().startswith("+++") else yaml.safe_load(body)
    except Exception:
        return {}
    return data if isinstance(data, dict) else {}


def post_date(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if hasattr(value, "year") and hasattr(value, "month"):  # a date
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        text = value.strip().replace("/", "-")
        for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
            try:
                return datetime.strptime(text[: len(fmt) + 2], fmt).replace(tzinfo=UTC)
            except ValueError:
                continue
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            return None
        return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return None


_PAGES = re.compile(
    r"(?:^|/)(?:about|links?|friends?|flinks?|archives?|search|tags|categories|page|pages)"
    r"(?:/|\.|$)",
    re.IGNORECASE,
)


def _not_a_post(name: str) -> bool:
    """A page, not a post: a Hugo page at the top of ``content/`` or an about/links page."""
    if name.startswith("content/") and name.count("/") == 1:
        return True
    return bool(_PAGES.search(name.split("/", 1)[1] if "/" in name else name))


_ITEM_TITLE = re.compile(r"<(?:item|entry)\b.*?<title[^>]*>(.*?)</title>", re.S | re.I)


def feed_titles(xml: str) -> set[str]:
    """The item titles of a built feed (CDATA and entities read), normalised."""
    titles = set()
    for raw in _ITEM_TITLE.findall(xml):
        text = re.sub(r"<!\[CDATA\[(.*?)\]\]>", r"\1", raw, flags=re.S)
        titles.add(_norm(html.unescape(text)))
    return titles


def _norm(text: str) -> str:
    return " ".join(html.unescape(text).split()).casefold()


# --- discover --------------------------------------------------------------------------------


HISTORY = 200
"""Commits (newest first, over every branch) :func:`built_commit` reads past ``HEAD``."""


def built_commit(gitdir: Path) -> tuple[str, set[str], str, str] | None:
    """``(commit, files, config, build)`` of the newest commit that holds a configuration, a
    built home page with a feed and post sources: ``HEAD``, else the newest of the last
    :data:`HISTORY` commits of any branch that touched a built home page (many repositories
    dropped their build from the default branch later)."""
    candidates = [git(gitdir, "rev-parse", "HEAD").decode().strip()]
    paths = [f"{b}index.html" for b in BUILDS if b]
    log = git(gitdir, "log", "--all", f"-{HISTORY}", "--format=%H", "--", *paths)
    candidates += log.decode().split()
    for commit in dict.fromkeys(candidates):
        files = set(
            git(gitdir, "ls-tree", "-r", "-z", "--name-only", commit)
            .decode("utf-8", "replace")
            .split("\0")
        )
        config = next((c for c in CONFIGS if c in files), "")
        build = next((b for b in BUILDS if f"{b}index.html" in files), None)
        if not config or build is None:
            continue
        if any(f"{build}{f}" in files for f in FEEDS) and any(
            f.startswith(POST_DIRS) and f.endswith(POST_EXTS) for f in files
        ):
            return commit, files, config, build
    return None


def discover(mirrors: Path) -> list[dict[str, Any]]:
    """Manifest entries for every mirror with a configuration, a built home page and feed."""
    found = []
    for folder in sorted(mirrors.iterdir()):
        if "+" not in folder.name:
            continue
        repo = folder.name.replace("+", "/", 1)
        gitdir = mirror(mirrors, repo)
        if gitdir is None:
            continue
        try:
            found_at = built_commit(gitdir)
        except subprocess.CalledProcessError:
            continue
        if found_at is None:
            continue
        commit, files, config, build = found_at
        feeds = [f"{build}{f}" for f in FEEDS if f"{build}{f}" in files]
        text = git(gitdir, "show", f"{commit}:{config}").decode("utf-8", "replace")
        data = load_config(config, text)
        generator = "hugo" if "toml" in config or "baseURL" in data else "hexo"
        if config == "_config.yml" and "theme" not in data and "permalink" not in data:
            generator = "jekyll"
        truth = truth_of(data, generator)
        entry_id = re.sub(r"[^a-z0-9]+", "-", repo.lower()).strip("-")
        found.append(
            {
                "id": entry_id,
                "repo": repo,
                "commit": commit,
                "config": config,
                "build": build,
                "feeds": feeds,
                "generator": generator,
                "theme": truth["theme"] or "(default)",
                "page_url": truth["url"] or f"https://{entry_id}.example/",
                "holdout": holdout(entry_id),
            }
        )
    return found


def toml_entries(entries: list[dict[str, Any]]) -> str:
    lines = [
        "# Built static blogs for bench/profile_eval.py: a public repository, a commit, its",
        "# configuration file (the truth), its built site and feeds. Nothing of the pages is",
        "# copied here; `holdout = true` marks the fixed ~30 % (by a hash of the id) evaluated",
        "# only at the end. Licences: unknown unless given.",
        "",
    ]
    for e in entries:
        lines.append("[[blog]]")
        for key in ("id", "repo", "commit", "config", "build", "generator", "theme", "page_url"):
            lines.append(f"{key} = {json.dumps(e[key], ensure_ascii=False)}")
        lines.append(f"feeds = {json.dumps(e['feeds'])}")
        lines.append(f"holdout = {'true' if e['holdout'] else 'false'}")
        lines.append("")
    return "\n".join(lines)


# --- build -----------------------------------------------------------------------------------


def build(
    mirrors: Path,
    out: Path,
    entries: list[dict[str, Any]] | None = None,
    then: Callable[[Path, dict[str, Any], Path], None] | None = None,
) -> None:
    """Build ``entries`` (the manifest's by default) into ``out``; ``then(gitdir, entry,
    dest)`` after each (another evaluation's own truth)."""
    if entries is None:
        entries = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["blog"]
    missing = []
    for e in entries:
        gitdir = mirror(mirrors, e["repo"])
        if gitdir is None:
            missing.append(e["repo"])
            continue
        try:
            build_one(gitdir, e, out / e["id"])
            if then is not None:
                then(gitdir, e, out / e["id"])
        except subprocess.CalledProcessError as exc:
            missing.append(f"{e['repo']} ({exc})")
    print(f"built {len(entries) - len(missing)} of {len(entries)} into {out}")
    for repo in missing:
        print(f"missing: {repo}")


def build_one(gitdir: Path, e: dict[str, Any], dest: Path) -> None:
    commit, prefix = e["commit"], e["build"]
    dest.mkdir(parents=True, exist_ok=True)
    files = (
        git(gitdir, "ls-tree", "-r", "-z", "--name-only", commit)
        .decode("utf-8", "replace")
        .split("\0")
    )
    site = sorted(f[len(prefix) :] for f in files if f.startswith(prefix) and f)
    (dest / "files.json").write_text(json.dumps(site), encoding="utf-8")
    (dest / "site").mkdir(exist_ok=True)
    wanted = ["index.html", *(f[len(prefix) :] for f in e["feeds"])]
    if "favicon.ico" in site:
        wanted.append("favicon.ico")
    for name in wanted:
        body = git(gitdir, "show", f"{commit}:{prefix}{name}")
        target = dest / "site" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
    config_text = git(gitdir, "show", f"{commit}:{e['config']}").decode("utf-8", "replace")
    truth = truth_of(load_config(e["config"], config_text), e["generator"])
    posts = [
        {"title": title, "date": when.isoformat()}
        for _, _, title, when in post_sources(gitdir, commit, files)
    ]
    # Icon files' first bytes, to tell an image from a placeholder.
    icons = {}
    home = (dest / "site" / "index.html").read_bytes().decode("utf-8", "replace")
    for href in re.findall(r"<link[^>]+rel=[\"']?[^\"'>]*icon[^>]*>", home, re.I):
        match = re.search(r"href=[\"']?([^\"' >]+)", href)
        if match:
            path = _site_path(match.group(1), e["page_url"])
            if path and path in site:
                head = git(gitdir, "show", f"{commit}:{prefix}{path}")[:16]
                icons[path] = head.hex()
    # Posts built under a dated permalink, their sources absent from the repository or not.
    built = []
    for name in site:
        if match := _DATED_PAGE.match(name):
            y, m, d = (int(g) for g in match.groups())
            with contextlib.suppress(ValueError):
                built.append(datetime(y, m, d, tzinfo=UTC).isoformat())
    truth.update(posts=posts, icons=icons, built_post_dates=built)
    (dest / "truth.json").write_text(json.dumps(truth, ensure_ascii=False), encoding="utf-8")


def post_sources(
    gitdir: Path, commit: str, files: list[str]
) -> Iterator[tuple[str, str, str, datetime]]:
    """``(path, source, title, date)`` of every dated post source that is no draft and no
    page (about, links, a Hugo page at the top of ``content/``)."""
    for name in files:
        if not name.startswith(POST_DIRS) or not name.endswith(POST_EXTS):
            continue
        if name.rsplit("/", 1)[-1].startswith("_index") or _not_a_post(name):
            continue
        text = git(gitdir, "show", f"{commit}:{name}").decode("utf-8", "replace")
        meta = front_matter(text)
        if name.endswith(".org") and (org := _ORG_DATE.search(text)):
            title = _ORG_TITLE.search(text)
            meta = {"date": org.group(1), "title": title.group(1).strip() if title else ""}
        when = post_date(meta.get("date"))
        if when is None or meta.get("draft") is True or meta.get("published") is False:
            continue
        yield name, text, str(meta.get("title") or ""), when


def _site_path(href: str, page_url: str, hosts: frozenset[str] = frozenset()) -> str:
    """The build-relative path an icon URL names (on the site's own host, one of ``hosts``,
    or relative)."""
    href = html.unescape(href.strip())
    parts = urlsplit(href)
    base = urlsplit(page_url)
    if parts.netloc and parts.netloc.lower() not in {base.netloc.lower(), *hosts}:
        return ""
    path = parts.path
    prefix = base.path.rstrip("/")
    if prefix and path.startswith(prefix + "/"):
        path = path[len(prefix) :]
    return path.lstrip("/")


_OWN_LINK = re.compile(
    r"<link[^>]+rel=[\"']?(?:canonical|alternate)[^>]*>|<meta[^>]+property=[\"']?og:url[^>]*>", re.I
)
_HREF = re.compile(r"(?:href|content)=[\"']?(https?://[^\"' >]+)", re.I)


def own_hosts(home_raw: str) -> frozenset[str]:
    """The hosts the built home page gives itself (canonical, ``og:url``, its feed links): a
    build may predate or postdate the configuration's ``url`` (another domain), and its feed
    and icons are on the host it was built for."""
    hosts = set()
    for tag in _OWN_LINK.findall(home_raw):
        if match := _HREF.search(tag):
            hosts.add(urlsplit(html.unescape(match.group(1))).netloc.lower())
    return frozenset(h for h in hosts if h)


# --- run -------------------------------------------------------------------------------------


def _fetcher(
    page_url: str,
    served: dict[str, bytes],
    hosts: frozenset[str],
    calls: list[str] | None = None,
) -> Any:
    """A fetch function serving the built files ``served`` (``calls``: each URL requested)."""
    from blogfeeds.extract.discovery import Fetched

    own = {urlsplit(page_url).netloc.lower(), *hosts}

    async def fetch(request: Any) -> Any:
        parts = urlsplit(request.url)
        if parts.netloc.lower() not in own:
            return Fetched(request.url, 404, {}, b"")
        if calls is not None:
            calls.append(request.url)
        path = _site_path(request.url, page_url, hosts)
        for name in (path, unquote(path)):
            stem = name.rstrip("/")
            if not stem:  # the home page is the extraction's input, never fetched
                continue
            for found in (name, f"{stem}/index.xml", f"{stem}/index.html", f"{stem}.html"):
                if (body := served.get(found.lstrip("/"))) is not None:
                    ctype = "image/x-icon"
                    if found.endswith(".xml"):
                        ctype = "application/xml"
                    elif found.endswith(".html"):
                        ctype = "text/html; charset=utf-8"
                    return Fetched(request.url, 200, {"Content-Type": ctype}, body)
        return Fetched(request.url, 404, {"Content-Type": "text/html"}, b"not found")

    return fetch


def site_url(e: dict[str, Any]) -> str:
    """The configuration's address, or a placeholder on a host of the blog's id when it gives
    none usable (``baseURL = "/"``)."""
    page_url = e["page_url"] if e["page_url"].endswith("/") else e["page_url"] + "/"
    if not page_url.startswith(("http://", "https://")):
        page_url = "https://" + page_url.lstrip("/")
    if not urlsplit(page_url).netloc:
        page_url = f"https://{e['id']}.example/"
    return page_url


def extract_one(
    dest: Path, e: dict[str, Any], hosts: frozenset[str], calls: list[str] | None = None
) -> Any:
    from blogfeeds.extract.blog import extract_blog
    from blogfeeds.extract.config import ExtractConfig

    served = {}
    for path in (dest / "site").rglob("*"):
        if path.is_file():
            served[path.relative_to(dest / "site").as_posix()] = path.read_bytes()
    home = served.pop("index.html")
    page_url = site_url(e)
    headers = {"Content-Type": "text/html"}
    # The truth was cut at the mirror's commit; now is the build's commit time, read as the
    # newest post (so that no post is "in the future").
    config = ExtractConfig(clock=lambda: datetime.now(UTC))
    fetch = _fetcher(page_url, served, hosts, calls)
    return asyncio.run(extract_blog(page_url, home, headers, fetch, config)), page_url


def judge(dest: Path, e: dict[str, Any]) -> dict[str, Any]:
    """Per field: ``expected`` (truth has one), ``found``, ``right``, and the values."""
    truth = json.loads((dest / "truth.json").read_text(encoding="utf-8"))
    files = set(json.loads((dest / "files.json").read_text(encoding="utf-8")))
    home_raw = (dest / "site" / "index.html").read_bytes().decode("utf-8", "replace")
    feeds_raw = " ".join(
        (dest / "site" / f[len(e["build"]) :]).read_bytes().decode("utf-8", "replace")
        for f in e["feeds"]
    )
    hosts = own_hosts(home_raw)
    report, page_url = extract_one(dest, e, hosts)
    prof = report.profile
    out: dict[str, Any] = {}

    def verdict(name: str, expected: bool, found: str, right: bool, want: Any) -> None:
        out[name] = {"expected": expected, "found": bool(found), "right": right and bool(found)}
        out[name].update(value=found, truth=want)

    # What the built pages show of a configured value: their text and attribute values with
    # URLs taken out (a name inside ``blog.jetgirl.art`` or ``github.com/Check-LC`` is not
    # shown), matched as a whole word where the value starts and ends with a letter or digit.
    shown = _norm(_URL.sub(" ", html.unescape(home_raw + " " + feeds_raw)))
    own_title = {_norm(t) for t in _site_titles(home_raw)}
    # A description that only repeats the site's name is no tagline: not expected.
    descs = [d for d in truth["descriptions"] if _shows(d, shown) and _norm(d) not in own_title]
    verdict(
        "description",
        bool(descs),
        prof.description,
        _norm(prof.description) in {_norm(d) for d in truth["descriptions"]},
        descs or truth["descriptions"],
    )
    # Hexo's default ``author: John Doe`` names nobody.
    authors = [
        a for a in truth["authors"] if _shows(a, shown) and _norm(a) not in _PLACEHOLDER_AUTHORS
    ]
    verdict(
        "author",
        bool(authors),
        prof.author,
        _person_key(prof.author) in {_person_key(a) for a in truth["authors"]},
        authors or truth["authors"],
    )
    # A post was built when the built feed lists it (else when the home page shows its title
    # as a link's, a heading's or a title attribute's whole text, not inside other text).
    items = feed_titles(feeds_raw)
    on_home = _home_titles(home_raw)
    dates = [
        datetime.fromisoformat(p["date"])
        for p in truth["posts"]
        if p["title"] and _norm(p["title"]) in (items or on_home)
    ]
    # ... or built under a dated permalink (the build may hold posts whose sources it lacks);
    # a permalink's day is local time, like the front matter's.
    dates += [datetime.fromisoformat(d) for d in truth.get("built_post_dates", [])]
    # The feed's newest entry names no source post and no dated permalink dates the build:
    # the build holds a newer post than the repository's sources (removed, renamed or
    # redated since) or its feed lists sections, and the sources cannot tell the date: not
    # judged.
    newest_title = newest_item(dest, e)
    sources = {_norm(p["title"]) for p in truth["posts"]}
    unjudged = bool(newest_title) and newest_title not in sources and not truth["built_post_dates"]
    if unjudged:
        dates = []
    newest = max(dates) if dates else None
    found_date = prof.last_post_at
    close = False
    if newest is not None and found_date:
        when = datetime.fromisoformat(found_date.replace("Z", "+00:00"))
        close = abs(when - newest) <= timedelta(hours=36)
    verdict("last_post", newest is not None, found_date, close, newest and newest.isoformat())
    out["last_post"]["unjudged"] = unjudged
    declares = bool(re.search(r"<link[^>]+rel=[\"']?[^\"'>]*icon", home_raw, re.I))
    icon_expected = declares or "favicon.ico" in files
    icon_path = _site_path(prof.icon_url, page_url, hosts) if prof.icon_url else ""
    external = bool(prof.icon_url) and not icon_path
    head = bytes.fromhex(truth["icons"].get(icon_path, ""))
    is_image = icon_path in files and (
        head.startswith(_IMAGE_MAGIC) or b"<svg" in head or b"<?xml" in head or not head
    )
    if icon_path == "favicon.ico" and icon_path in files:
        is_image = True  # served only when its bytes passed favicon_is_image
    icon_right = is_image or (external and prof.icon_url.lower().endswith(_IMAGE_EXT))
    verdict("icon", icon_expected, prof.icon_url, icon_right, "declared or /favicon.ico")
    out["icon"]["external"] = external
    want = primary(truth["language"])
    text = _visible(home_raw)
    han, kana = len(_HAN.findall(text)), len(_KANA.findall(text))
    letters = max(len(_LETTER.findall(text)), 1)
    override = ""
    if kana / letters > 0.2 and want != "ja":
        override = "ja"
    elif han / letters > 0.5 and kana / letters < 0.2 and want != "zh":
        override = "zh"
    want = override or want
    verdict("language", bool(want), prof.language, primary(prof.language) == want, want)
    out["language"]["script_override"] = bool(override)
    out["language"]["source"] = prof.language_source
    return out


_URL = re.compile(r"(?:https?:)?//[^\s\"'<>)]+|(?:href|src)=[\"'][^\"']*[\"']", re.I)
_PLACEHOLDER_AUTHORS = {"john doe"}
_INITIAL = re.compile(r"(?<=\s)\w\.?(?=\s)")


def _shows(value: str, shown: str) -> bool:
    """Whether the normalised ``shown`` text holds ``value``, as a whole word when it starts
    and ends with a letter or digit of a script that separates words."""
    want = _norm(value)
    if not want:
        return False
    head = r"(?<![a-z0-9])" if want[0].isascii() and want[0].isalnum() else ""
    tail = r"(?![a-z0-9])" if want[-1].isascii() and want[-1].isalnum() else ""
    return re.search(head + re.escape(want) + tail, shown) is not None


def _person_key(name: str) -> str:
    """A name compared without single-letter middle initials (``Nicholas J Clark`` is
    ``Nicholas Clark``)."""
    return " ".join(_INITIAL.sub(" ", f" {_norm(name)} ").split())


def _site_titles(home_raw: str) -> list[str]:
    """The site's name as the built home page gives it: ``<title>`` and ``og:site_name``."""
    found = re.findall(r"<title[^>]*>(.*?)</title>", home_raw, re.S | re.I)
    for tag in re.findall(r"<meta[^>]+og:site_name[^>]*>", home_raw, re.I):
        found += re.findall(r"content=[\"']([^\"']*)", tag, re.I)
    return [html.unescape(t) for t in found]


def _home_titles(home_raw: str) -> set[str]:
    """Whole texts of the home page's links and headings, and its title attributes."""
    raw = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", home_raw)
    texts = re.findall(r"(?is)<(a|h[1-6])\b[^>]*>(.*?)</\1>", raw)
    found = {_norm(re.sub(r"<[^>]+>", " ", text)) for _, text in texts}
    found |= {_norm(t) for t in re.findall(r"\btitle=[\"']([^\"']+)[\"']", raw, re.I)}
    return found - {""}


def newest_item(dest: Path, e: dict[str, Any]) -> str | None:
    """The normalised title of the built feeds' newest dated entry (``""``: untitled), None
    without one."""
    import feedparser

    best: tuple[Any, str] | None = None
    for name in e["feeds"]:
        doc = feedparser.parse((dest / "site" / name[len(e["build"]) :]).read_bytes())
        for entry in doc.entries:
            when = entry.get("published_parsed") or entry.get("updated_parsed")
            if when and (best is None or tuple(when) > best[0]):
                best = (tuple(when), _norm(entry.get("title", "")))
    return best[1] if best else None


def _visible(raw: str) -> str:
    raw = re.sub(r"(?is)<(script|style|noscript|svg|code|pre)\b.*?</\1>", " ", raw)
    return html.unescape(re.sub(r"<[^>]+>", " ", raw))


# Language names some themes take in place of a code (Hugo ``languageCode = "english"``).
_NAMES = {"english": "en", "chinese": "zh", "japanese": "ja", "german": "de", "french": "fr"}


def primary(tag: str) -> str:
    from blogfeeds.extract.language import primary as _primary

    return _NAMES.get(tag.strip().lower(), _primary(tag)) if tag else ""


def run(out: Path, part: str) -> dict[str, Any]:
    entries = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["blog"]
    chosen = [
        e
        for e in entries
        if part == "all" or (part == "holdout") == bool(e.get("holdout"))
        if (out / e["id"] / "truth.json").exists()
    ]
    results = []
    for e in chosen:
        try:
            verdicts = judge(out / e["id"], e)
        except Exception as exc:  # one broken build never stops the evaluation
            print(f"error: {e['id']}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        results.append({"id": e["id"], "entry": e, "verdicts": verdicts})
    return {"part": part, "blogs": len(results), "results": results}


def table(results: list[dict[str, Any]]) -> dict[str, dict[str, float | int]]:
    rows: dict[str, dict[str, float | int]] = {}
    for name in FIELDS:
        v = [r["verdicts"][name] for r in results]
        expected = [x for x in v if x["expected"]]
        found = [x for x in expected if x["found"]]
        right = [x for x in found if x["right"]]
        rows[name] = {
            "truth": len(expected),
            "found": len(found),
            "right": len(right),
            "coverage": round(len(found) / len(expected), 3) if expected else 0.0,
            "precision": round(len(right) / len(found), 3) if found else 0.0,
        }
    return rows


def print_table(title: str, rows: dict[str, dict[str, float | int]], n: int) -> None:
    print(f"\n{title} ({n} blogs)")
    print(f"{'field':<12} {'truth':>5} {'found':>5} {'right':>5} {'coverage':>8} {'precision':>9}")
    for name, row in rows.items():
        print(
            f"{name:<12} {row['truth']:>5} {row['found']:>5} {row['right']:>5} "
            f"{row['coverage']:>8.3f} {row['precision']:>9.3f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("discover")
    d.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    b = sub.add_parser("build")
    b.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    b.add_argument("--out", type=Path, default=DEFAULT_OUT)
    r = sub.add_parser("run")
    r.add_argument("--out", type=Path, default=DEFAULT_OUT)
    r.add_argument("--part", choices=("dev", "holdout", "all"), default="dev")
    r.add_argument("--details", action="store_true")
    r.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "discover":
        print(toml_entries(discover(args.mirrors)))
        return 0
    if args.command == "build":
        build(args.mirrors, args.out)
        return 0
    result = run(args.out, args.part)
    results = result["results"]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for res in results:
        e = res["entry"]
        groups[f"generator {e['generator']}"].append(res)
        groups[f"theme {e['generator']}/{e['theme']}"].append(res)
        groups[f"language {res['verdicts']['language']['truth'] or '?'}"].append(res)
    unjudged = sum(bool(r["verdicts"]["last_post"].get("unjudged")) for r in results)
    if args.json:
        breakdown = {name: table(group) for name, group in sorted(groups.items())}
        print(
            json.dumps(
                {
                    "part": args.part,
                    "blogs": len(results),
                    "all": table(results),
                    "last_post_unjudged": unjudged,
                    "groups": breakdown,
                }
            )
        )
        return 0
    print_table(f"part {args.part}", table(results), len(results))
    print(f"last post not judged (the feed's newest entry has no source): {unjudged}")
    for name in sorted(groups):
        if len(groups[name]) >= 3 or not name.startswith("theme"):
            print_table(name, table(groups[name]), len(groups[name]))
    if args.details:
        for res in results:
            for name, v in res["verdicts"].items():
                if v["expected"] and not v["right"]:
                    print(f"{res['id']}: {name}: got {v['value']!r}, truth {v['truth']!r}")
                if v.get("unjudged"):
                    print(f"{res['id']}: {name}: not judged (feed's newest entry has no source)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
