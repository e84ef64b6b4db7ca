"""Friend links on real pages no rule was tuned on: a set rebuilt from public blog repositories.

Each entry of ``bench/friends_eval.toml`` names a public repository of a static blog, a commit
and two files in it: the built friend page (Hexo ``public/link/index.html``, Hugo
``public/friends/index.html``, a deploy branch's ``link/index.html``, ...) and the data file
the page was built from (``source/_data/link.yml``, ``data/friends.yml``, ``_data/*.yml``,
JSON). The truth of a page is the data file's friend URLs that the page renders (a friend
listed in the data but absent from the page is not expected, and is counted in the
``unrendered`` column); the site's own URL is never expected. The pages stay out of this
repository (their licences vary): ``build`` copies them from local mirrors of the
repositories (bare git directories ``<mirrors>/<owner>+<name>/repo``) into ``--out``
(default ``~/.cache/blogfeeds/friends-eval``) and lists the repositories it could not find;
nothing is fetched over the network, so CI does not run this script and no test depends on
it.

Usage, from the repository root::

    python bench/friends_eval.py build [--mirrors DIR] [--out DIR]
    python bench/friends_eval.py run [--out DIR] [--part dev|holdout|all] [--round N] [--details]
    python bench/friends_eval.py discover [--mirrors DIR] [--history N] > candidates.toml

``run`` extracts each page with ``extract_friends(parse_page(url, body))`` and judges it like
``tests/cases.py``'s ``judge_friends`` (same URL normalisation, ``www.`` folded; names are not
judged, as a data file's name and the rendered one differ by design). It prints exact pages,
micro link precision and recall, overall, per generator (the themes' families), per theme
and per language, for the development
part, the holdout part (a third of the newest ``round``'s entries, by a hash of the id; older
rounds' holdouts are spent and join development) or both; ``--details``
adds each page's missed and false links. ``discover`` scans the mirrors for (page, data) pairs
and prints candidate manifest entries.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import html
import json
import os
import re
import subprocess
import sys
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MANIFEST = ROOT / "bench" / "friends_eval.toml"
DEFAULT_OUT = Path("~/.cache/blogfeeds/friends-eval").expanduser()
DEFAULT_MIRRORS = Path(os.environ.get("BLOGFEEDS_MIRRORS", ROOT.parent / ".mirror"))

# Keys of a data file's entry that hold the friend's site (never its avatar or feed).
URL_KEYS = (
    "link", "url", "href", "site", "siteurl", "site_url", "blog", "homepage", "website",
    "htmlurl",  # an OPML outline's site (its xmlUrl is the feed)
)  # fmt: skip
PAGE_RE = re.compile(
    r"(?:^|/)(?:link|links|friend|friends|flink|flinks|blogroll|friendlinks?)"
    r"(?:/index\.html|\.html)$",
    re.IGNORECASE,
)
DATA_RE = re.compile(
    r"^(?:source/_data|_data|data|src/data|source/data)/"
    r"(?:link|links|friend|friends|flink|flinks|blogroll|friendlinks?)\.(?:ya?ml|json|toml)$",
    re.IGNORECASE,
)
SOURCE_PREFIXES = ("source/", "content/", "layouts/", "src/", "_includes/", "_layouts/")
MARKDOWN_RE = re.compile(
    r"(?:^|/)(?:link|links|friend|friends|flink|flinks|blogroll|friendlinks?)"
    r"(?:/index|/_index)?\.(?:md|markdown)$",
    re.IGNORECASE,
)
MARKDOWN_LINK = re.compile(
    r"""\]\(\s*((?:https?:)?//[^)\s]+)|href=["']?\s*((?:https?:)?//[^"'\s>]+)"""
    r"""|\b(?:url|link|href|site)\s*[=:]\s*["']?((?:https?:)?//[^"'\s]+)"""
    r"""|<(https?://[^>\s]+)>|(?:^|(?<=[\s(|]))(https?://[^\s<>()\[\]"'`|]+[^\s<>()\[\]"'`|.,;:!?])""",
    re.IGNORECASE | re.MULTILINE,
)
"""Links of a Markdown source: ``[text](url)``, ``href="url"``, ``url: ...`` keys of front
matter and shortcodes, ``<url>`` autolinks and bare URLs (the GFM autolinks Hexo's and Hugo's
renderers make)."""
MARKDOWN_KEYED = re.compile(r"""\b(?!https?:)(\w+)\s*[:=]\s*["']?https?://[^\s"']+""")
"""A ``key: URL`` pair (front matter, a shortcode's parameters)."""
MARKDOWN_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
MARKDOWN_SILENT = re.compile(r"<!--.*?-->|^(```|~~~).*?^\1|`[^`\n]+`", re.DOTALL | re.MULTILINE)
"""What a Markdown source renders as no link: HTML comments, fenced code and inline code."""
HTML_SILENT = re.compile(
    r"<!--.*?-->|<meta\b[^>]*>|<(pre|code|textarea)\b[^>]*>.*?</\1\s*>", re.DOTALL | re.I
)
"""What a page renders as no link: comments, meta descriptions (a page's summary quoting its
Markdown), code blocks (a "submit your site like this" sample) and text areas."""
# Not friends though a data file lists them (the cases README: "platform and theme credits"):
# a platform's home page (no path), a generator's or a theme's site, a placeholder.
PLATFORM_ROOTS = frozenset(
    "twitter.com x.com weibo.com youtube.com bilibili.com github.com gitee.com zhihu.com "
    "zhuanlan.zhihu.com facebook.com instagram.com t.me telegram.org space.bilibili.com "
    "steamcommunity.com music.163.com douban.com juejin.cn csdn.net blog.csdn.net".split()
)
CREDIT_HOSTS = frozenset(
    "hexo.io gohugo.io jekyllrb.com butterfly.js.org volantis.js.org blinkfox.github.io "
    "example.com your-blog-url.com yoursite.com".split()
)  # not blog.anheyu.com, the AnZhiYu theme's author: the shared cases expect it as a friend
# (zh_anzhiyu_two_lists_gavinblog), and a blogroll keeping its card lists it
BUILD_PREFIXES = ("public/", "docs/", "_site/", "dist/", ".deploy_git/", "")
FEED_PATH = re.compile(r"/(?:feed|rss|atom|feeds/posts/default)/?$|/[^/]*\.(?:xml|rss|atom)$", re.I)
URL_IN_TEXT = re.compile(r"""(?:https?:)?//[^\s"'<>()\\]+""")


# --- reading mirrors ---------------------------------------------------------------------


def git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", str(gitdir), *args], check=True, capture_output=True
    ).stdout


def mirror_of(mirrors: Path, repo: str) -> Path:
    folder = mirrors / repo.replace("/", "+", 1) / "repo"
    return folder / ".git" if (folder / ".git").is_dir() else folder


# --- truth ---------------------------------------------------------------------------------


def url_key(url: str) -> str:
    """Host (``www.`` dropped, lower-cased) and path (``index.html`` and ``/`` dropped);
    ``""`` for what is no URL."""
    url = url.strip()
    if url.startswith("//"):
        url = "https:" + url
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:  # not a URL (an unbalanced IPv6 bracket, NFKC-invalid netloc): no key
        return ""
    host = host[4:] if host.startswith("www.") else host
    path = re.sub(r"/index\.html?$", "/", parts.path).rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{host}{path}{query}"


def untracked(url: str) -> str:
    """``url`` without the query keys that only track the click (the product's table:
    ``?utm_source=``, Medium's ``?source=rss-…``): the same page, as the judge compares it."""
    from urllib.parse import urlunsplit

    from blogfeeds.extract.friends.filters import filters

    parts = urlsplit(url)
    kept = [p for p in parts.query.split("&") if p and not filters().is_tracking(p.split("=")[0])]
    return urlunsplit(parts._replace(query="&".join(kept)))


GROUP_TITLE_KEYS = ("class_name", "group", "category", "title", "name")


def is_service_group(node: dict[Any, Any]) -> bool:
    """A group of a data file (a dict holding a list: Butterfly's ``class_name`` and
    ``link_list``) whose title names tools, services or thanks ("DLUSEC服务", "鸣谢") and no
    friend keyword: it lists no friends (docs/friend-links.md, the service sections)."""
    from blogfeeds.extract.friends.keywords import has_keyword, is_service_heading

    if not any(isinstance(v, list) for v in node.values()):
        return False
    lowered = {str(k).lower(): v for k, v in node.items()}
    title = next((lowered[k] for k in GROUP_TITLE_KEYS if isinstance(lowered.get(k), str)), "")
    return bool(title) and is_service_heading(title) and not has_keyword(title)


def data_urls(data: Any) -> list[str]:
    """Friend site URLs in a parsed data file, in order (nested groups walked)."""
    found: list[str] = []

    from blogfeeds.extract.friends.filters import repair_href

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if is_service_group(node):
                return
            for key, value in node.items():
                if not (str(key).lower() in URL_KEYS and isinstance(value, str)):
                    if isinstance(value, (dict, list)):
                        walk(value)
                    continue
                url = repair_href(value) or value.strip()  # a friend is there, link broken
                if re.match(r"^(?:https?:)?//", url):
                    found.append(url)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data)
    return found


def markdown_urls(text: str) -> list[str]:
    """The absolute links a Markdown source renders, in order, outside sections whose heading
    names tools, resources, services or thanks (docs/friend-links.md: such a section lists no
    friends) and without the URLs of keys that name no site (``avatar: https://...``)."""
    from blogfeeds.extract.friends.keywords import has_keyword, is_service_heading

    text = MARKDOWN_SILENT.sub(" ", text)
    text = MARKDOWN_KEYED.sub(lambda m: m.group(0) if m.group(1).lower() in URL_KEYS else " ", text)
    urls: list[str] = []
    service = 0  # the rank of the service heading whose section this is, or 0
    for line in text.splitlines():
        heading = MARKDOWN_HEADING.match(line)
        if heading:
            rank, title = len(heading.group(1)), heading.group(2).strip()
            if service and rank <= service:
                service = 0
            if not service and is_service_heading(title) and not has_keyword(title):
                service = rank
        if not service:  # a heading's own link too ("### [R Weekly](https://rweekly.org/)")
            urls.extend(_entry_urls(line))
    return urls


FEED_TEXT = re.compile(r"\[\W*(?:feed|rss|atom)\W*\]\($", re.IGNORECASE)


def _entry_urls(line: str) -> list[str]:
    """The links of one Markdown line (a list entry); a feed beside its site
    (``[Site](https://x.org) [(Feed)](https://feeds.service/x)``, by its URL or its text) is
    that site's known feed, not a listed URL."""
    found = [
        (next(g for g in m.groups() if g), bool(FEED_TEXT.search(line[: m.start() + 2])))
        for m in MARKDOWN_LINK.finditer(line)
    ]
    feeds = [feed_text or feed_site(url) is not None for url, feed_text in found]
    if len(found) >= 2 and not all(feeds):
        return [url for (url, _), feed in zip(found, feeds, strict=True) if not feed]
    return [url for url, _ in found]


MARKUP_SOURCES = (".md", ".markdown", ".qmd", ".rmd", ".html", ".htm", ".liquid", ".njk", ".rst")
"""Page sources whose links are read as a Markdown source's (:func:`markdown_urls`): Markdown
and its Quarto and R Markdown kin, a hand-written HTML page or template (its ``href``),
reStructuredText (its ```name <url>`_`` links made Markdown's first)."""
HTML_HEAD_LINKS = re.compile(r"<link\b[^>]*>|<(script|style)\b[^>]*>.*?</\1\s*>", re.DOTALL | re.I)
"""What a page source links that renders no link: ``<link>`` (style sheets, fonts), scripts."""
RST_LINK = re.compile(r"`([^`<]*)<((?:https?:)?//[^>\s]+)>`_{1,2}")


def parse_data(text: str, path: str) -> Any:
    """A data file's tree; a page source (:data:`MARKUP_SOURCES`) gives ``[{"url": ...}]``
    for each absolute link."""
    if path.lower().endswith(MARKUP_SOURCES):
        if path.lower().endswith(".rst"):
            text = RST_LINK.sub(r"[\1](\2)", text)
        text = HTML_HEAD_LINKS.sub(" ", text)
        return [{"url": url} for url in markdown_urls(text)]
    if path.endswith(".json"):
        return json.loads(text)
    if path.endswith(".toml"):
        return tomllib.loads(text)
    import yaml

    return yaml.safe_load(text)


def rendered_keys(page_html: str) -> set[str]:
    text = html.unescape(HTML_SILENT.sub(" ", page_html))
    return {url_key(m.group(0)) for m in URL_IN_TEXT.finditer(text)}


def is_credit(key: str, owner: str) -> bool:
    """A platform's home page, a generator's or theme's site, an asset, or the owner's own."""
    host, _, path = key.partition("/")
    if re.search(r"\.(?:css|js|png|jpe?g|gif|webp|svg|ico)$", path, re.IGNORECASE):
        return True  # an asset a Markdown source links, not a site
    if len(owner) > 3 and owner.lower() in host:
        return True  # the owner's own site (a page built for localhost cannot say)
    if host in CREDIT_HOSTS or (host in PLATFORM_ROOTS and not path.strip("/")):
        return True
    return host in ("github.com", "gitee.com") and path.split("/")[0].lower() == owner.lower()


def site_of(host: str) -> str:
    """The registrable part of a host by the Public Suffix List with its private domains
    (``alice.github.io``, ``lightmc.dpdns.org``; the product's
    :func:`~blogfeeds.extract.identity.registered_domain`): two people on one free subdomain
    service are two sites, ``blog.alice.com`` is ``alice.com``'s."""
    from blogfeeds.extract.identity import registered_domain

    return registered_domain(host) or host


def feed_site(url: str) -> str | None:
    """The site of a feed URL (``https://x.org/feed/`` → ``https://x.org/``; ``""`` for a feed
    service's URL, whose blog only the feed names), None when ``url`` is not a feed's. A
    friend listed by its feed is the blog: the feed is a known feed, never a friend URL."""
    if url.startswith("//"):
        url = "https:" + url
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host.startswith(("feeds.", "feeds2.", "feedproxy.")) or "feedburner" in host:
        return ""  # a feed service: the blog is known only from the feed's own link
    if not FEED_PATH.search(parts.path):
        return None
    return f"{parts.scheme or 'https'}://{parts.netloc}/"


def not_a_blog(url: str) -> str | None:
    """Why a listed URL is no friend's blog by the project's own definitions (a platform or
    service page that is not a blog hosted there, a badge, a circle, a placeholder such as
    ``example.org``), or None. The truth applies
    the definitions that docs/friend-links.md states; which links of a page are friends stays
    the extractor's problem."""
    from blogfeeds.extract.friends.filters import filters

    verdict = filters().url_verdict(url if "//" not in url[:2] else "https:" + url)
    return verdict if verdict in ("platform", "badge", "circle", "placeholder") else None


def _identity(url: str) -> str:
    from blogfeeds.extract.identity import blog_id

    try:
        return blog_id(url)
    except ValueError:
        return ""


def owner_sites(page_url: str, page_html: str) -> tuple[set[str], str]:
    """``(identities, label)``: the blogs the page itself says are its owner's, and the name its
    own host goes by. The page's statements (docs/friend-links.md, "the owner's own sites and
    ``rel=me``"): its canonical and ``og:url``, links with ``rel=me``, URLs in the block under
    an "about this site" heading ("本站信息"), and links in the owner's corners (an author
    card, social icons, a site switcher: the filter table's owner zone words) to a site's home
    or a first-level page (a profile deeper on a service, ``luogu.com.cn/user/1``, names no
    site of the owner's). The label is the first label of the page's blog identity (``alice``
    of ``alice.github.io`` and of ``alice.top``) when it is distinctive (``label_of``)."""
    import lxml.html

    from blogfeeds.extract.friends.filters import filters, zone_match
    from blogfeeds.extract.friends.owner import label_of, path_depth

    own = _identity(page_url)
    sites: set[str] = set()
    try:
        tree = lxml.html.document_fromstring(page_html)
    except (ValueError, lxml.etree.ParserError):
        return sites, label_of(own) if own else ""
    words = filters().owner_words
    about = [h.lower() for h in filters().about_headings]
    for heading in tree.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        if not any(h in heading.text_content().lower() for h in about):
            continue
        block = heading.getnext()  # the "本站信息" / "About this site" block
        text = " ".join(block.itertext()) if block is not None else ""  # <li>s end URLs
        for url in re.findall(r"https?://[^\s<>\"'，。、；）)]+", text):
            identity = _identity(url)
            if identity:
                sites.add(identity)
    for el in tree.iter("a", "link", "meta"):
        rels = (el.get("rel") or "").lower().split()
        if el.tag == "meta":
            url = el.get("content") or "" if (el.get("property") or "") == "og:url" else ""
        elif el.tag == "link":
            url = el.get("href") or "" if "canonical" in rels else ""
        elif "me" in rels:
            url = el.get("href") or ""
        else:
            zone = any(
                zone_match([*(a.get("class") or "").split(), a.get("id") or ""], words)
                for a in el.iterancestors()
            ) or zone_match([*(el.get("class") or "").split()], words)
            url = el.get("href") or "" if zone else ""
        url = url.strip()
        if url.startswith("//"):
            url = "https:" + url
        if not re.match(r"^https?://", url, re.IGNORECASE):
            continue
        identity = _identity(url)
        if identity and path_depth(url, identity) <= 1:
            sites.add(identity)
    sites.discard("")
    return sites, label_of(own) if own else ""


def page_links(page_url: str, page_html: str) -> tuple[dict[str, str], set[str]]:
    """``(linked, info_only)``: the absolute URL each key is first linked with on the page, and
    the keys linked only inside site-info blocks (the owner's details or the format to copy,
    ``名称：… 地址：…``: no friend by the definition docs/friend-links.md states)."""
    from blogfeeds.extract.friends.measure import measure
    from blogfeeds.extract.friends.owner import site_info_blocks
    from blogfeeds.extract.page import parse_page

    page = parse_page(page_url, page_html.encode("utf-8"), {"Content-Type": "text/html"})
    inside = {a for block in site_info_blocks(measure(page)) for a in block.iter("a")}
    linked: dict[str, str] = {}
    outside: set[str] = set()
    in_info: set[str] = set()
    for a in page.tree.iter("a"):
        href = (a.get("href") or "").strip()
        if not re.match(r"^https?://", href, re.IGNORECASE):
            continue
        key = url_key(href)
        linked.setdefault(key, href)
        (in_info if a in inside else outside).add(key)
    return linked, in_info - outside


def expected_friends(
    page_url: str, page_html: str, data: Any, owner: str = ""
) -> tuple[list[str], list[str], list[str]]:
    """``(expected, unrendered, excluded)``: the data file's friend URLs on the page, the ones
    not on it, and the ones that are no friend's blog (:func:`not_a_blog`; a feed URL stands
    for its site, :func:`feed_site`; the owner's own sites as the page states them,
    :func:`owner_sites`; a site linked only in a site-info block, :func:`page_links`). A
    protocol-relative URL (``//x.org/``) is read with the page's scheme; a URL the page links
    with the other scheme is expected as the page links it; a fragment names a place in a page,
    not another page, and is dropped."""
    from blogfeeds.extract.friends.defaults import sample_key
    from blogfeeds.extract.friends.owner import label_of

    own = site_of(url_key(page_url).split("/")[0])
    owners, own_label = owner_sites(page_url, page_html)
    linked, info_only = page_links(page_url, page_html)
    rendered = rendered_keys(page_html)
    expected: list[str] = []
    unrendered: list[str] = []
    excluded: list[str] = []
    seen: set[str] = set()
    scheme = urlsplit(page_url).scheme or "https"
    listed = [f"{scheme}:{u}" if u.startswith("//") else u for u in data_urls(data)]
    hosts = {url_key(u).split("/")[0] for u in listed if feed_site(u) is None}
    samples = theme_samples(page_url, listed)
    for listed_url in listed:
        url, key = listed_url, url_key(listed_url)
        if key in seen or not key or site_of(key.split("/")[0]) == own or is_credit(key, owner):
            continue
        if sample_key(listed_url) in samples:  # the theme's sample list, kept by the owner
            seen.add(key)
            excluded.append(f"{url} (theme default)")
            continue
        seen.add(key)
        if key not in rendered:
            unrendered.append(url)
            continue
        site = feed_site(url)
        if site:  # a feed service's URL alone ("") stays: the friend listed by its feed
            excluded.append(f"{url} (feed)")
            if key.split("/")[0] in hosts or url_key(site) in seen:
                continue  # the blog itself is listed too
            url, key = site, url_key(site)
            seen.add(key)
        if key in info_only:
            excluded.append(f"{url} (site info)")
            continue
        rendered_as = linked.get(key, url)
        if rendered_as.split(":", 1)[0].lower() != url.split(":", 1)[0].lower():
            url = rendered_as
        url = url.split("#", 1)[0]
        reason = not_a_blog(url)
        identity = _identity(url)
        if (
            reason is None
            and identity
            and (identity in owners or (own_label and label_of(identity) == own_label))
        ):
            reason = "owner"
        if reason:
            excluded.append(f"{url} ({reason})")
            continue
        expected.append(re.sub(r"/index\.html?$", "/", url))
    return expected, unrendered, excluded


def theme_samples(page_url: str, listed: list[str]) -> set[str]:
    """The sample keys of the data file's entries that are a theme's shipped samples
    (``blogfeeds/data/theme_defaults.toml``, read from the themes' repositories): the data file
    holds at least the theme's ``min_present`` of them and the site is not the theme's own.
    A fact of the data file, not of the page the extractor reads."""
    from blogfeeds.extract.friends.defaults import sample_key, theme_defaults

    keys = {sample_key(u) for u in listed}
    host = (urlsplit(page_url).hostname or "").lower().removeprefix("www.")
    out: set[str] = set()
    for theme in theme_defaults():
        if len(keys & theme.keys) >= theme.needed and host not in theme.home:
            out |= keys & theme.keys
    return out


def one_per_friend(expected: list[str], reported: list[str], excluded: list[str]) -> list[str]:
    """One expected URL per friend: URLs of one blog (``x.org`` and ``x.org/start-here/``,
    by the extractor's ``friend_key``) are one friend, matched by whichever of them is
    reported (else the first listed). A site listed by ``SAME_SITE_PAGES`` or more distinct
    deep pages (games on one host, a profile's project pages) is no friend: a site the owner
    uses (docs/friend-links.md); those go to ``excluded``. Entries of one shared host whose
    host home is not listed, each a site under a first path segment of its own
    (``host/alice/``, ``host/bob``), are as many friends: the data file lists people."""
    from blogfeeds.extract.friends.filters import friend_key
    from blogfeeds.extract.friends.layered import SAME_SITE_PAGES
    from blogfeeds.extract.friends.owner import path_depth
    from tests.cases import _fold_www

    by_host: dict[str, list[str]] = {}
    for url in expected:
        by_host.setdefault(friend_key(url), []).append(url)
    people: dict[str, str] = {}
    for key, urls in by_host.items():
        firsts = [urlsplit(u).path.strip("/").split("/")[0].lower() for u in urls]
        homes = {f for u, f in zip(urls, firsts, strict=True) if urlsplit(u).path.strip("/") == f}
        # a person's pages (their posts) go with the person; a page under no listed person,
        # or the host's own home, makes the host one site
        if "/" not in key and "" not in homes and len(homes) >= 2 and set(firsts) <= homes:
            people.update((u, f"{key}/{f}") for u, f in zip(urls, firsts, strict=True))
    groups: dict[str, list[str]] = {}
    for url in expected:
        groups.setdefault(people.get(url) or friend_key(url), []).append(url)
    got = {_fold_www(u) for u in reported}
    out = []
    for urls in groups.values():
        if urls[0] in people:  # a person's site: pages below their own home
            deep = {u for u in urls if "/" in urlsplit(u).path.strip("/")}
        else:
            deep = {u for u in urls if path_depth(u, _identity(u)) >= 1}
        if len(deep) >= SAME_SITE_PAGES:
            excluded.extend(f"{u} (pages of one site)" for u in urls)
            continue
        out.append(next((u for u in urls if _fold_www(u) in got), urls[0]))
    return out


# --- manifest ------------------------------------------------------------------------------


@dataclass
class Entry:
    id: str
    repo: str
    commit: str
    page: str
    data: str
    page_url: str
    theme: str
    language: str
    holdout: bool = False
    """Set by ``load_manifest``: a third of the newest round (see there), never by hand."""
    round: int = 1
    """The evaluation round that added the page; a round's holdout is drawn from it alone."""
    data_commit: str = ""
    license: str = ""
    note: str = ""
    skip: str = ""
    """Why the page is no friend page after all (a bookmarks page a path named ``links``):
    kept in the manifest, never judged."""
    also: list[str] = field(default_factory=list)
    """Friends the page renders that its data files lack (a theme template's hard-coded
    blogroll, a card added after the data file), each checked by hand on the page; ``note``
    says where they come from."""

    @property
    def folder(self) -> str:
        return self.id


def held_out(entry_id: str) -> bool:
    """A third of a round, chosen by a hash of the id, never by looking at the page."""
    return int(hashlib.sha1(entry_id.encode()).hexdigest(), 16) % 3 == 0


def load_manifest(path: Path = MANIFEST) -> list[Entry]:
    """The manifest's pages; the holdout is the newest round's third chosen by ``held_out``
    (older rounds' holdouts are spent and join development, whatever their ``holdout`` says)."""
    with path.open("rb") as f:
        rows = tomllib.load(f).get("page", [])
    newest = max((row.get("round", 1) for row in rows), default=1)
    entries = []
    for row in rows:
        fields = {k: v for k, v in row.items() if k != "holdout"}
        held = fields.get("round", 1) == newest > 1 and held_out(fields["id"])
        entries.append(Entry(**fields, holdout=held))
    return entries


# --- build ---------------------------------------------------------------------------------


REVISIONS = 50
"""Revisions of a data file on another branch compared with the built page."""


def data_revision(gitdir: Path, e: Entry, page_html: str, path: str = "") -> str:
    """The commit to read the entry's sources at: the page's own; for sources on another
    branch (``data_commit``), the revision of the data file (among its last
    :data:`REVISIONS` on any branch) that the page renders best: most of its friends on the
    page, fewest missing (a source branch moves on after a deploy, and commit dates on deploy
    branches say little). The newest wins a tie; ``data_commit`` when nothing parses.
    ``path``: another source file of the page, chosen the same way (default the data file)."""
    if not e.data_commit:
        return e.commit
    path = path or e.data
    rendered = rendered_keys(page_html)
    log = git(gitdir, "log", f"-{REVISIONS}", "--format=%H", "--all", "--", path)
    best, best_score = e.data_commit, None
    for sha in dict.fromkeys([e.data_commit, *log.decode().split()]):
        try:
            text = git(gitdir, "show", f"{sha}:{path}").decode("utf-8-sig")
            keys = {url_key(u) for u in data_urls(parse_data(text, path))}
        except Exception:  # a revision that does not parse (or lacks the file) is no candidate
            continue
        score = len(keys & rendered) - len(keys - rendered)
        if best_score is None or score > best_score:
            best, best_score = sha, score
    return best


def companion_sources(gitdir: Path, e: Entry, revision: str) -> list[tuple[str, str]]:
    """The page's other sources, ``(commit, path)``: every friend data file and friend Markdown
    source (the names ``discover`` looks for) at the sources' revision and the page's commit,
    besides its own data file. A page is often built from two (a Hexo
    ``source/link/index.md`` above the ``source/_data/link.yml`` cards, a Hugo
    ``data/friends.yml`` under ``content/friends/index.md``); only the URLs the page renders
    count."""
    found: list[tuple[str, str]] = []
    for sha in dict.fromkeys((revision, e.commit)):
        names = git(gitdir, "ls-tree", "-r", "--name-only", sha).decode().splitlines()
        for path in names:
            if path == e.data or "node_modules/" in path or path.startswith("themes/"):
                continue
            markdown = MARKDOWN_RE.search(path) and not path.startswith(BUILD_PREFIXES[:-1])
            if DATA_RE.match(path) or markdown:
                found.append((sha, path))
    return found


def build(entries: list[Entry], mirrors: Path, out: Path) -> int:
    missing: list[str] = []
    built = 0
    for e in entries:
        gitdir = mirror_of(mirrors, e.repo)
        target = out / e.folder
        if not gitdir.is_dir():
            missing.append(e.repo)
            continue
        try:
            page = git(gitdir, "show", f"{e.commit}:{e.page}")
            page_text = page.decode("utf-8", errors="replace")
            revision = data_revision(gitdir, e, page_text)
            data = git(gitdir, "show", f"{revision}:{e.data}")
        except subprocess.CalledProcessError as exc:
            print(f"{e.id}: {exc.stderr.decode(errors='replace').strip()}", file=sys.stderr)
            missing.append(e.repo)
            continue
        target.mkdir(parents=True, exist_ok=True)
        (target / "page.html").write_bytes(page)
        (target / ("data" + Path(e.data).suffix)).write_bytes(data)
        for old in target.glob("source-*"):
            old.unlink()
        for i, (sha, path) in enumerate(companion_sources(gitdir, e, revision)):
            # on the sources' branch: the revision the page renders best
            at = sha if sha == e.commit else data_revision(gitdir, e, page_text, path)
            body = git(gitdir, "show", f"{at}:{path}")
            (target / f"source-{i}{Path(path).suffix}").write_bytes(body)
        built += 1
    print(f"built {built} of {len(entries)} pages into {out}")
    if missing:
        print(f"missing {len(set(missing))} repositories (fetch them into {mirrors}):")
        for repo in sorted(set(missing)):
            print(f"  {repo}")
    return 0 if not missing else 1


# --- run -----------------------------------------------------------------------------------


@dataclass
class Tally:
    pages: int = 0
    exact: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    unrendered: int = 0
    excluded: int = 0

    def add(self, other: Tally) -> None:
        for name in ("pages", "exact", "tp", "fp", "fn", "unrendered", "excluded"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


@dataclass
class Result:
    entry: Entry
    tally: Tally
    missed: list[str] = field(default_factory=list)
    false: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)


def judge_entry(e: Entry, out: Path) -> Result | None:
    from blogfeeds.extract.friends import extract_friends
    from blogfeeds.extract.page import parse_page
    from tests.cases import judge_friends

    folder = out / e.folder
    page_file = folder / "page.html"
    data_files = list(folder.glob("data.*"))
    if not page_file.is_file() or not data_files:
        return None
    body = page_file.read_bytes()
    data = [parse_data(data_files[0].read_text(encoding="utf-8-sig"), data_files[0].name)]
    data.append([{"url": url} for url in e.also])
    for source in sorted(folder.glob("source-*")):
        try:
            data.append(parse_data(source.read_text(encoding="utf-8-sig"), source.name))
        except Exception:  # a broken companion (YAML with tabs, a template) adds nothing
            continue
    page_html = body.decode("utf-8", errors="replace")
    owner = e.repo.split("/")[0]
    expected, unrendered, excluded = expected_friends(e.page_url, page_html, data, owner)
    page = parse_page(e.page_url, body, {"Content-Type": "text/html"})
    # a friend listed by its feed stands for the feed's site, as in the truth (:func:`feed_site`)
    reported = [
        ((feed_site(f.url) or f.url) if f.kind == "feed" else f.url, "")
        for f in extract_friends(page).friends
    ]
    expected = one_per_friend([untracked(u) for u in expected], [u for u, _ in reported], excluded)
    verdict = judge_friends({"expected_friend_links": [{"url": u} for u in expected]}, reported)
    tally = Tally(
        1, int(verdict.passed), verdict.tp, verdict.fp, verdict.fn, len(unrendered), len(excluded)
    )
    result = Result(e, tally, excluded=excluded)
    for problem in verdict.problems:
        if problem.startswith("missing "):
            result.missed = ast.literal_eval(problem[len("missing ") :])
        elif problem.startswith("extra "):
            result.false = ast.literal_eval(problem[len("extra ") :])
    return result


def table(title: str, rows: dict[str, Tally]) -> list[str]:
    lines = [
        f"| {title} | pages | exact | precision | recall | links | unrendered | not blogs |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, t in sorted(rows.items(), key=lambda kv: (-kv[1].pages, kv[0])):
        lines.append(
            f"| {name} | {t.pages} | {t.exact} ({t.exact / t.pages:.0%}) | {t.precision:.3f} "
            f"| {t.recall:.3f} | {t.tp + t.fn} | {t.unrendered} | {t.excluded} |"
        )
    return lines


def generator_of(theme: str) -> str:
    """The generator a manifest theme name belongs to (``hugo-fixit`` → Hugo, ``butterfly`` →
    Hexo, ``hand-other`` → hand-made): the themes' families."""
    head = theme.split("-", 1)[0]
    named = {
        "hugo": "Hugo",
        "hand": "hand-made",
        "jekyll": "Jekyll",
        "vuepress": "VuePress",
        "vitepress": "VitePress",
        "astro": "Astro",
        "eleventy": "Eleventy",
        "pelican": "Pelican",
        "quarto": "Quarto",
        "distill": "R Markdown",
        "zola": "Zola",
        "mkdocs": "MkDocs",
        "gatsby": "Gatsby",
        "wordpress": "WordPress",
        "pandoc": "Pandoc",
        "source": "other",
    }
    return named.get(head, "Hexo")  # a Hexo theme goes by its own name ("butterfly")


def run(entries: list[Entry], out: Path, part: str, details: bool) -> int:
    chosen = [
        e
        for e in entries
        if not e.skip and (part == "all" or (e.holdout if part == "holdout" else not e.holdout))
    ]
    results = [r for e in chosen if (r := judge_entry(e, out)) is not None]
    if len(results) < len(chosen):
        print(f"{len(chosen) - len(results)} pages not built: run `build` first", file=sys.stderr)
    overall, themes, langs = Tally(), defaultdict(Tally), defaultdict(Tally)
    sources: dict[str, Tally] = defaultdict(Tally)
    families: dict[str, Tally] = defaultdict(Tally)
    for r in results:
        overall.add(r.tally)
        families[generator_of(r.entry.theme)].add(r.tally)
        markdown = r.entry.data.lower().endswith(MARKUP_SOURCES)
        sources["page source" if markdown else "data file"].add(r.tally)
        themes[r.entry.theme].add(r.tally)
        langs[r.entry.language].add(r.tally)
    folded: dict[str, Tally] = defaultdict(Tally)
    for name, t in themes.items():
        folded[name if t.pages > 1 else "(themes of one page)"].add(t)
    print(f"## {part}: {overall.pages} pages\n")
    if not results:  # a round whose holdout has joined development holds no held-out page
        print("no page in this part")
        return 0
    for e in entries:
        if e.skip:
            print(f"not judged: {e.id} ({e.skip})\n")
    print("\n".join(table("set", {part: overall})), end="\n\n")
    print("\n".join(table("generator", dict(families))), end="\n\n")
    print("\n".join(table("theme", dict(folded))), end="\n\n")
    print("\n".join(table("language", dict(langs))), end="\n\n")
    print("\n".join(table("truth from", dict(sources))))
    if details:
        print()
        for r in results:
            if r.missed or r.false:
                print(f"{r.entry.id} [{r.entry.theme}/{r.entry.language}] {r.entry.page_url}")
                for url in r.missed:
                    print(f"  missed {url}")
                for url in r.false:
                    print(f"  false  {url}")
        print("\nlisted, not expected (no friend's blog, or a feed standing for its site):")
        for r in results:
            for url in r.excluded:
                print(f"  {r.entry.id}: {url}")
    return 0


# --- discover ------------------------------------------------------------------------------


_FRIEND_PAGES = [
    f"{root}{name}/index.html"
    for root in ("public/", "docs/", "_site/", "dist/", "")
    for name in ("link", "links", "friends", "friend", "flink", "blogroll")
]


def _branches(gitdir: Path, history: int = 0) -> list[tuple[str, str]]:
    """The branch heads, and the last ``history`` other commits that touched a built friend
    page (a site that deletes its built output after deploying keeps it only in history)."""
    refs = git(gitdir, "for-each-ref", "--format=%(objectname) %(refname:short)", "refs/heads")
    out = []
    for line in refs.decode().splitlines():
        sha, name = line.split(" ", 1)
        if not re.match(r"(dependabot|copilot|renovate|snyk)", name):
            out.append((sha, name))
    if history > 0:
        heads = {sha for sha, _ in out}
        log = git(gitdir, "log", "--all", "--format=%H", "-n", "400", "--", *_FRIEND_PAGES)
        out += [(sha, "history") for sha in log.decode().split() if sha not in heads][:history]
    return out


def _site_url(gitdir: Path, sha: str, files: set[str], owner: str, page_html: str) -> str:
    for pattern in (
        r'<link[^>]+rel=["\']canonical["\'][^>]+href=["\']([^"\']+)',
        r'<meta[^>]+property=["\']og:url["\'][^>]+content=["\']([^"\']+)',
    ):
        m = re.search(pattern, page_html, re.IGNORECASE)
        if m and m.group(1).startswith("http"):
            return m.group(1)
    for name, pattern in (
        ("_config.yml", r"^url:\s*['\"]?(https?://[^\s'\"#]+)"),
        ("hugo.toml", r"^baseURL\s*=\s*['\"](https?://[^'\"]+)"),
        ("config.toml", r"^baseURL\s*=\s*['\"](https?://[^'\"]+)"),
        ("hugo.yaml", r"^baseURL:\s*['\"]?(https?://[^\s'\"]+)"),
        ("config.yaml", r"^baseURL:\s*['\"]?(https?://[^\s'\"]+)"),
        ("config.yml", r"^baseURL:\s*['\"]?(https?://[^\s'\"]+)"),
    ):
        if name in files:
            text = git(gitdir, "show", f"{sha}:{name}").decode(errors="replace")
            m = re.search(pattern, text, re.MULTILINE | re.IGNORECASE)
            if m:
                return m.group(1)
    if "CNAME" in files:
        host = git(gitdir, "show", f"{sha}:CNAME").decode(errors="replace").strip().split()
        if host:
            return f"https://{host[0]}/"
    return f"https://{owner.lower()}.github.io/"


THEME_HINTS = (
    ("anzhiyu", "anzhiyu"),
    ("butterfly", "butterfly"),
    ("volantis", "volantis"),
    ("stellar", "stellar"),
    ("redefine", "redefine"),
    ("hexo-theme-fluid", "fluid"),
    ("fluid", "fluid"),
    ("icarus", "icarus"),
    ("matery", "matery"),
    ("shoka", "shoka"),
    ("hexo-theme-keep", "keep"),
    ("NexT", "next"),
    ("hugo-theme-stack", "hugo-stack"),
    ("PaperMod", "hugo-papermod"),
    ("FixIt", "hugo-fixit"),
    ("LoveIt", "hugo-loveit"),
    ("DoIt", "hugo-doit"),
    ("hugo-theme-reimu", "hugo-reimu"),
)


def _theme(gitdir: Path, sha: str, files: set[str], page_html: str) -> str:
    gen = re.search(r'<meta[^>]+name=["\']generator["\'][^>]+content=["\']([^"\']+)', page_html)
    generator = (gen.group(1).split()[0].lower() if gen else "").strip()
    for name in ("_config.yml", "hugo.toml", "config.toml", "hugo.yaml", "config.yaml"):
        if name in files:
            text = git(gitdir, "show", f"{sha}:{name}").decode(errors="replace")
            m = re.search(r"^theme\s*[:=]\s*\[?\s*['\"]?([\w.-]+)", text, re.MULTILINE)
            if m and m.group(1).lower() not in ("landscape", "none", "null"):
                theme = m.group(1).lower().removeprefix("hexo-theme-").removeprefix("hugo-theme-")
                hugo = generator == "hugo" or not name.startswith("_")
                return f"hugo-{theme}" if hugo else theme
    for needle, theme in THEME_HINTS:
        if needle in page_html:
            return theme
    return f"{generator or 'hand'}-other"


def _language(page_html: str) -> str:
    body = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", page_html, flags=re.S | re.I)
    text = re.sub(r"<[^>]+>", " ", body)
    kana = len(re.findall(r"[\u3040-\u30ff]", text))
    han = len(re.findall(r"[\u4e00-\u9fff]", text))
    hangul = len(re.findall(r"[\uac00-\ud7af]", text))
    if kana > 20 and kana > han / 4:
        return "ja"
    if hangul > 20:
        return "ko"
    if han > 30:
        return "zh"
    m = re.search(r"<html[^>]+lang=[\"']?([A-Za-z]{2})", page_html)
    return m.group(1).lower() if m else "en"


def discover(mirrors: Path, history: int = 0) -> int:
    rows: list[dict[str, Any]] = []
    seen_data: set[str] = set()
    for folder in sorted(mirrors.iterdir()):
        gitdir = mirror_of(mirrors, folder.name.replace("+", "/", 1))
        if not gitdir.is_dir():
            continue
        repo = folder.name.replace("+", "/", 1)
        pages: list[tuple[str, str, set[str]]] = []
        datas: list[tuple[str, str]] = []
        try:
            branches = _branches(gitdir, history)
        except subprocess.CalledProcessError:
            continue
        for sha, _name in branches:
            files = set(git(gitdir, "ls-tree", "-r", "--name-only", sha).decode().splitlines())
            for path in files:
                if "node_modules/" in path or path.startswith("themes/"):
                    continue
                if PAGE_RE.search(path) and not path.startswith(SOURCE_PREFIXES):
                    pages.append((sha, path, files))
                if DATA_RE.match(path) or (
                    MARKDOWN_RE.search(path) and not path.startswith(BUILD_PREFIXES[:-1])
                ):
                    datas.append((sha, path))
        best: tuple[float, dict[str, Any]] | None = None
        for sha, path, files in pages:
            page_html = git(gitdir, "show", f"{sha}:{path}").decode("utf-8", errors="replace")
            if "<a" not in page_html or page_html.lstrip().startswith("---"):
                continue  # a template or a redirect, not a built page
            for dsha, dpath in datas:
                try:
                    text = git(gitdir, "show", f"{dsha}:{dpath}").decode("utf-8-sig")
                    data = parse_data(text, dpath)
                except Exception:  # a broken data file is no candidate
                    continue
                urls = {url_key(u) for u in data_urls(data)}
                if len(urls) < 1:
                    continue
                rendered = rendered_keys(page_html)
                share = len(urls & rendered) / len(urls)
                if share < 0.6:
                    continue
                score = share - 0.01 * path.count("/") + (0.05 if dsha == sha else 0)
                if dpath.endswith((".md", ".markdown")):
                    score -= 1  # structured data first
                if best is None or score > best[0]:
                    dfiles = files if dsha == sha else set()
                    page_url = _site_url(gitdir, sha, files | dfiles, repo.split("/")[0], page_html)
                    if not re.search(r"/(link|links|friends?|flinks?|blogroll)", page_url):
                        rel = path
                        for p in BUILD_PREFIXES:
                            if p and rel.startswith(p):
                                rel = rel[len(p) :]
                                break
                        rel = re.sub(r"index\.html$", "", rel)
                        page_url = page_url.rstrip("/") + "/" + rel
                    digest = hashlib.sha1(text.encode()).hexdigest()
                    best = (
                        score,
                        {
                            "repo": repo,
                            "commit": sha,
                            "page": path,
                            "data": dpath,
                            "data_commit": "" if dsha == sha else dsha,
                            "page_url": page_url,
                            "theme": _theme(
                                gitdir,
                                dsha,
                                set(
                                    git(gitdir, "ls-tree", "--name-only", dsha)
                                    .decode()
                                    .splitlines()
                                ),
                                page_html,
                            ),
                            "language": _language(page_html),
                            "digest": digest,
                            "friends": len(urls),
                        },
                    )
        if best is not None and best[1]["digest"] not in seen_data:
            seen_data.add(best[1]["digest"])
            rows.append(best[1])
    for row in rows:
        slug = re.sub(r"[^a-z0-9]+", "-", row["repo"].lower()).strip("-")
        print("[[page]]")
        print(f'id = "{slug}"')
        for key in ("repo", "commit", "page", "data", "data_commit", "page_url", "theme"):
            print(f"{key} = {json.dumps(row[key], ensure_ascii=False)}")
        print(f'language = "{row["language"]}"')
        if row["data"].endswith((".md", ".markdown")):
            print('note = "truth from the Markdown source"')
        print(f"# {row['friends']} friends in the data file")
        print("round = 0  # set to the new round\n")
    print(f"# {len(rows)} candidates", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("command", choices=("build", "run", "discover"))
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--part", choices=("dev", "holdout", "all"), default="dev")
    parser.add_argument("--details", action="store_true")
    parser.add_argument("--round", type=int, default=0, help="run: only the pages of one round")
    parser.add_argument(
        "--history", type=int, default=0, help="discover: also the last N commits of a friend page"
    )
    args = parser.parse_args(argv)
    if args.command == "discover":
        return discover(args.mirrors, args.history)
    entries = load_manifest(args.manifest)
    if args.command == "run" and args.round:
        entries = [e for e in entries if e.round == args.round]
    if args.command == "build":
        return build(entries, args.mirrors, args.out)
    return run(entries, args.out, args.part, args.details)


if __name__ == "__main__":
    sys.exit(main())
