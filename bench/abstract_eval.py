"""A blog's abstract on real built blogs, with truth from the newest post's own source.

The blogs are those of ``bench/profile_eval.toml`` and ``bench/abstract_eval.toml`` (the same
format: a public repository, a commit, the built site, its feeds, the post sources; blogs no
earlier round had read), built from the same local mirrors by the same code
(:func:`profile_eval.build_one`) into ``--out`` (default ``~/.cache/blogfeeds/abstract-eval``);
``holdout = true`` marks the fixed ~30 % (a hash of the id) read only at the end; ``round``
(1 when absent) numbers the manifests' additions, and the newest round's holdout, read by
no earlier round, decides.

Truth: the newest post is the source (Markdown, HTML, Org) with the latest front-matter date
among those the built site shows (its title among the built feed's items, else on the home
page; a draft or a page such as about or links is no post). Its text is its body with the
front matter, HTML comments, generator tags (Hexo ``{% ... %}``, Hugo ``{{< ... >}}``),
images and link targets taken out. A blog whose newest post has no body, or whose build shows
none of its sources' posts, is not judged.

Both sides are normalised alike: HTML entities decoded, case folded, only letters and digits
kept (Markdown and HTML markup, punctuation and whitespace fall out, so a rendered and a
stripped text compare equal). An abstract is **right** when it is a prefix of the newest
post's text of at least 10 letters or digits (or all of it). A wrong one is classed:
``description`` (a prefix of the site's description, or it of the abstract), ``titles`` (it
holds two post titles), ``navigation`` (half of it or more is the text of the home page's
links), ``older_post`` (the opening of another post), ``other``, or ``empty``.

Today's abstract (the home page's main text, :func:`blogfeeds.extract.metadata.abstract`) is
scored the same way in the same run, as the baseline.

Usage, from the repository root::

    python bench/abstract_eval.py build [--mirrors DIR] [--out DIR]
    python bench/abstract_eval.py run [--out DIR] [--part dev|holdout|all] [--round N]
        [--details] [--json]

``build`` also copies the built pages the home page and the feeds link to (a post's own page,
which the extraction may open); ``run`` reports the requests per blog (the home page and
every fetch).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import unquote

sys.path.insert(0, str(Path(__file__).resolve().parent))

import profile_eval as pe

MANIFESTS = (pe.MANIFEST, pe.ROOT / "bench" / "abstract_eval.toml")
DEFAULT_OUT = Path("~/.cache/blogfeeds/abstract-eval").expanduser()
MIN_RIGHT = 10
"""Letters and digits a right abstract holds at least (unless the post holds fewer)."""
KINDS = ("right", "description", "titles", "navigation", "older_post", "other", "empty")

_WORD = re.compile(r"[^\W_]+")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_GENERATOR_TAG = re.compile(r"\{%.*?%\}|\{\{[<%].*?[>%]\}\}", re.S)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)|!\[[^\]]*\]\[[^\]]*\]")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)|\[([^\]]*)\]\[[^\]]*\]")
_REF_DEF = re.compile(r"^\s*\[[^\]]+\]:\s*\S+.*$", re.M)
_TAG = re.compile(r"<[^>]+>")
_ORG_KEYWORD = re.compile(r"^#\+\w+:.*$", re.M)
_FENCE = re.compile(r"^\s*(?:```|~~~).*$", re.M)
# A knitr chunk (R Markdown): code the build runs, its source shown only on request.
_KNITR = re.compile(r"^\s*```\s*\{.*?^\s*```\s*$", re.M | re.S)
_TOC = re.compile(r"\[toc\]|\[\[_?toc_?\]\]", re.I)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s.*$|^.*\n\s{0,3}(?:=+|-+)\s*$", re.M)
_ORG_HEADING = re.compile(r"^\*+\s.*$", re.M)
# An ordered list's numbers: the build renders them as list markers, not as text.
_LIST_NUMBER = re.compile(r"^\s*\d+[.)]\s", re.M)


def norm(text: str) -> str:
    """Letters and digits only, case folded, HTML entities decoded."""
    return "".join(_WORD.findall(html.unescape(text).casefold()))


def body_text(source: str) -> str:
    """A post source's body as plain text (see the module docstring)."""
    match = pe._FRONT.match(source.lstrip("\ufeff"))
    body = source.lstrip("\ufeff")[match.end() :] if match else source
    body = _COMMENT.sub(" ", body)
    body = _KNITR.sub(" ", body)
    body = _TOC.sub(" ", body)
    body = _GENERATOR_TAG.sub(" ", body)
    body = _ORG_KEYWORD.sub(" ", body)
    body = _IMAGE.sub(" ", body)
    body = _LINK.sub(lambda m: m.group(1) or m.group(2) or "", body)
    body = _REF_DEF.sub(" ", body)
    body = _FENCE.sub(" ", body)
    body = _LIST_NUMBER.sub(" ", body)
    return _TAG.sub(" ", body)


def entries() -> list[dict[str, Any]]:
    found = []
    for manifest in MANIFESTS:
        if manifest.exists():
            found += tomllib.loads(manifest.read_text(encoding="utf-8"))["blog"]
    return found


# --- build -----------------------------------------------------------------------------------


def build(mirrors: Path, out: Path) -> None:
    pe.build(mirrors, out, entries(), then=build_posts)


_LINK_TARGET = re.compile(r"""<a\b[^>]*?\bhref=["']?([^"' >]+)""", re.I)
_FEED_LINK = re.compile(
    r"""<link>\s*(?:<!\[CDATA\[)?([^<\]]+)|<link\b[^>]*?\bhref=["']([^"']+)""", re.I
)


def build_pages(gitdir: Path, e: dict[str, Any], dest: Path) -> None:
    """The built pages the home page and the feeds link to (the posts an extraction may
    open), beside the home page in ``site/``."""
    site = set(json.loads((dest / "files.json").read_text(encoding="utf-8")))
    home = (dest / "site" / "index.html").read_bytes().decode("utf-8", "replace")
    feeds = " ".join(
        (dest / "site" / f[len(e["build"]) :]).read_bytes().decode("utf-8", "replace")
        for f in e["feeds"]
    )
    hosts = pe.own_hosts(home)
    hrefs = set(_LINK_TARGET.findall(home))
    hrefs |= {a or b for a, b in _FEED_LINK.findall(feeds)}
    wanted = set()
    for href in hrefs:
        path = unquote(pe._site_path(href.strip(), e["page_url"], hosts).split("#")[0])
        stem = path.split("?")[0].rstrip("/")
        for name in (stem, f"{stem}/index.html", f"{stem}.html"):
            if stem and name.endswith(".html") and name in site and name != "index.html":
                wanted.add(name)
    for name in sorted(wanted):
        target = dest / "site" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(pe.git(gitdir, "show", f"{e['commit']}:{e['build']}{name}"))


def build_posts(gitdir: Path, e: dict[str, Any], dest: Path) -> None:
    """``posts.json``: every dated post source with its title, date and normalised text;
    the built pages the home page and the feeds link to (:func:`build_pages`)."""
    commit = e["commit"]
    build_pages(gitdir, e, dest)
    files = pe.git(gitdir, "ls-tree", "-r", "-z", "--name-only", commit).decode().split("\0")
    posts = []
    for name, text, title, when in pe.post_sources(gitdir, commit, files):
        plain = body_text(text)
        headings = _ORG_HEADING if name.endswith(".org") else _HEADING
        posts.append(
            {
                "path": name,
                "title": title,
                "date": when.isoformat(),
                "text": norm(plain)[:3000],
                "text_body": norm(headings.sub(" ", plain))[:3000],
                "opening": " ".join(plain.split())[:300],
            }
        )
    (dest / "posts.json").write_text(json.dumps(posts, ensure_ascii=False), encoding="utf-8")


# --- run -------------------------------------------------------------------------------------

_A_TEXT = re.compile(r"<a\b[^>]*>(.*?)</a>", re.S | re.I)


def newest_post(dest: Path, e: dict[str, Any], home_raw: str) -> dict[str, Any] | None:
    """The newest source post the build shows (see the module docstring), or None."""
    posts = json.loads((dest / "posts.json").read_text(encoding="utf-8"))
    feeds_raw = " ".join(
        (dest / "site" / f[len(e["build"]) :]).read_bytes().decode("utf-8", "replace")
        for f in e["feeds"]
    )
    newest = pe.newest_item(dest, e)
    if newest is not None:  # the build's own newest post, by its feed
        named = [p for p in posts if pe._norm(p["title"]) == newest]
        return max(named, key=lambda p: p["date"]) if named else None
    shown = pe.feed_titles(feeds_raw) or pe._home_titles(home_raw)
    built = [p for p in posts if p["title"] and pe._norm(p["title"]) in shown]
    return max(built, key=lambda p: p["date"]) if built else None


def classify(
    abstract: str,
    post: dict[str, Any],
    posts: list[dict[str, Any]],
    descs: list[str],
    links: list[str],
) -> str:
    got = norm(abstract)
    if not got:
        return "empty"
    for text in (post["text"], post["text_body"]):
        if text.startswith(got) and len(got) >= min(MIN_RIGHT, len(text)):
            return "right"
    for d in descs:
        if d and (d.startswith(got) or got.startswith(d)):
            return "description"
    titles = {norm(p["title"]) for p in posts if len(norm(p["title"])) >= 4}
    if sum(t in got for t in titles) >= 2:
        return "titles"
    covered = sum(len(t) for t in set(links) if len(t) >= 2 and t in got)
    if covered * 2 >= len(got):
        return "navigation"
    if any(
        p["text"].startswith(got[: max(MIN_RIGHT, len(got) // 2)]) for p in posts if p is not post
    ):
        return "older_post"
    return "other"


def judge(dest: Path, e: dict[str, Any]) -> dict[str, Any] | None:
    from blogfeeds.extract.metadata import abstract as page_abstract
    from blogfeeds.extract.page import DecodeError, parse_page

    home_raw = (dest / "site" / "index.html").read_bytes().decode("utf-8", "replace")
    post = newest_post(dest, e, home_raw)
    if post is None or len(post["text"]) < MIN_RIGHT:
        return None
    hosts = pe.own_hosts(home_raw)
    calls: list[str] = []
    try:
        report, page_url = pe.extract_one(dest, e, hosts, calls)
    except DecodeError:  # an empty built home page
        return None
    meta = report.metadata
    baseline = page_abstract(parse_page(page_url, (dest / "site" / "index.html").read_bytes()))
    posts = json.loads((dest / "posts.json").read_text(encoding="utf-8"))
    truth = json.loads((dest / "truth.json").read_text(encoding="utf-8"))
    descs = [norm(d) for d in [*truth["descriptions"], report.profile.description] if norm(d)]
    links = [norm(_TAG.sub(" ", t)) for t in _A_TEXT.findall(home_raw)]
    text = pe._visible(home_raw)
    han = len(pe._HAN.findall(text)) / max(len(pe._LETTER.findall(text)), 1)
    language = "zh" if han > 0.5 else pe.primary(truth["language"]) or "?"
    return {
        "id": e["id"],
        "generator": e["generator"],
        "round": f"round {e.get('round', 1)}",
        "language": language,
        "requests": 1 + len(calls),
        "post_page": report.counters.get("abstract/post_page", 0),
        "trafilatura": report.counters.get("abstract/page", 0),
        "source": meta.abstract_source or "none",
        "kind": classify(meta.abstract, post, posts, descs, links),
        "baseline": classify(baseline, post, posts, descs, links),
        "abstract": meta.abstract,
        "baseline_abstract": baseline,
        "post": post["path"],
        "opening": post["opening"][:120],
    }


def run(out: Path, part: str, round_: int | None = None) -> dict[str, Any]:
    results, unjudged = [], []
    for e in entries():
        if part != "all" and e["holdout"] != (part == "holdout"):
            continue
        if round_ is not None and e.get("round", 1) != round_:
            continue
        dest = out / e["id"]
        if not (dest / "posts.json").exists():
            continue
        found = judge(dest, e)
        if found is None:
            unjudged.append(e["id"])
        else:
            results.append(found)
    return {"part": part, "results": results, "unjudged": unjudged}


def table(results: list[dict[str, Any]], by: str) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = defaultdict(lambda: {"n": 0, "right": 0, "baseline": 0})
    for r in results:
        for key in ("all", r[by]) if by else ("all",):
            row = rows[key]
            row["n"] += 1
            row["right"] += r["kind"] == "right"
            row["baseline"] += r["baseline"] == "right"
    return dict(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("build", "run"))
    parser.add_argument("--mirrors", type=Path, default=pe.DEFAULT_MIRRORS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--part", choices=("dev", "holdout", "all"), default="dev")
    parser.add_argument("--round", type=int, help="only this round's blogs (default: all)")
    parser.add_argument("--details", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.mirrors, args.out)
        return 0
    found = run(args.out, args.part, args.round)
    results = found["results"]
    if args.json:
        print(json.dumps(found, ensure_ascii=False, indent=1))
        return 0
    print(f"{args.part}: {len(results)} blogs judged, {len(found['unjudged'])} not judged")
    if results:
        per_blog = sorted(r["requests"] for r in results)
        print(
            f"requests per blog: median {per_blog[len(per_blog) // 2]}, max {per_blog[-1]}; "
            f"post pages fetched {sum(r['post_page'] for r in results)}, "
            f"trafilatura run {sum(r['trafilatura'] for r in results)}"
        )
    newest = max((e.get("round", 1) for e in entries()), default=1)
    if args.part == "holdout":
        print(f"deciding: round {newest}'s holdout (the rounds before were read already)")
    for by in ("round", "generator", "language", "source"):
        print(f"\n{'by ' + by:<14} {'n':>4} {'right':>7} {'today':>7}")
        for key, row in sorted(table(results, by).items(), key=lambda kv: -kv[1]["n"]):
            n = row["n"]
            print(f"{key:<14} {n:>4} {row['right'] / n:>7.2f} {row['baseline'] / n:>7.2f}")
    for label, field in (("abstract", "kind"), ("today", "baseline")):
        kinds = {k: sum(r[field] == k for r in results) for k in KINDS}
        print(f"\n{label}: " + ", ".join(f"{k} {v}" for k, v in kinds.items() if v))
    if args.details:
        for r in results:
            if r["kind"] != "right":
                print(f"\n{r['id']} [{r['source']}, {r['kind']}] {r['abstract']!r}")
                print(f"  today [{r['baseline']}] {r['baseline_abstract']!r}")
                print(f"  post {r['post']}: {r['opening']!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
