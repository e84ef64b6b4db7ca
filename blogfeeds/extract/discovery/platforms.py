"""Platform fingerprints and their feed paths: ``blogfeeds/data/feed_platforms.toml``.

A platform is recognised by its generator, asset paths, markup (class names its default
templates leave together), response headers or host; each
recognised platform adds its feed paths (then its format variants) at the blog root(s): the
site root, or a path-hosted blog's own prefix (:func:`~blogfeeds.extract.identity.blog_prefix`),
never above it; a hosted platform's ``{user}`` paths name the blog's feed at the host root
(``https://medium.com/feed/@alice``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from urllib.parse import urljoin, urlsplit

from blogfeeds.extract.discovery.candidates import FeedCandidate, absolute
from blogfeeds.extract.identity import blog_prefix
from blogfeeds.extract.page import Page


@dataclass(frozen=True)
class Platform:
    """One row of ``feed_platforms.toml``."""

    name: str
    generator: tuple[str, ...] = ()
    assets: tuple[str, ...] = ()
    classes: tuple[frozenset[str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    hosts: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()


@cache
def feed_platforms() -> tuple[Platform, ...]:
    """The platform table, ``blogfeeds/data/feed_platforms.toml``."""
    text = resources.files("blogfeeds").joinpath("data/feed_platforms.toml").read_text("utf-8")
    return tuple(
        Platform(
            name=row["name"],
            generator=tuple(row.get("generator", ())),
            assets=tuple(row.get("assets", ())),
            classes=tuple(frozenset(group) for group in row.get("classes", ())),
            headers=tuple((k.lower(), v) for k, v in row.get("headers", {}).items()),
            hosts=tuple(row.get("hosts", ())),
            paths=tuple(row.get("paths", ())),
            formats=tuple(row.get("formats", ())),
        )
        for row in tomllib.loads(text)["platform"]
    )


@dataclass(frozen=True)
class PlatformMatch:
    """A platform recognised on a page: which fingerprint matched, and the blog root(s)."""

    platform: Platform
    evidence: str
    roots: tuple[str, ...]


def _asset_urls(page: Page, limit: int = 400) -> list[str]:
    urls = []
    for el in page.tree.iter("link", "script", "img"):
        value = el.get("href") or el.get("src")
        if value:
            urls.append(value.strip())
            if len(urls) >= limit:
                break
    return urls


def detect_platforms(page: Page) -> list[PlatformMatch]:
    """Platforms whose fingerprints match ``page``, in table order (see
    ``feed_platforms.toml``). The blog root is the site root, or a path-hosted blog's prefix; a
    same-host asset hit such as ``/blog/wp-content/`` under it makes ``/blog/`` a blog root
    first."""
    generators = [
        (m.get("content") or "").strip().lower()
        for m in page.tree.iter("meta")
        if (m.get("name") or "").lower() == "generator"
    ]
    assets = [(u, u.lower()) for u in _asset_urls(page)]
    # Every asset URL in one string: a platform none of whose markers it holds is passed over
    # without trying each marker on each asset (no marker holds a newline).
    all_assets = "\n".join(low for _, low in assets)
    host = (urlsplit(page.url).hostname or "").lower()
    prefix = blog_prefix(page.url)
    root = prefix or urljoin(page.url, "/")
    found = []
    for plat in feed_platforms():
        evidence, roots = "", [root]
        gen = next((g for g in generators for p in plat.generator if g.startswith(p)), None)
        if gen is not None:
            evidence = f"generator {gen}"
        for raw, low in assets if any(a in all_assets for a in plat.assets) else ():
            marker = next((a for a in plat.assets if a in low), None)
            if marker is None:
                continue
            evidence = evidence or f"asset {marker}"
            resolved = absolute(page.base_url, raw) or ""
            if marker.startswith("/") and urlsplit(resolved).netloc == urlsplit(page.url).netloc:
                path = urlsplit(resolved).path
                cut = path.lower().find(marker)
                install = urljoin(page.url, path[: cut + 1])
                if cut > 0 and install.startswith(root):
                    roots.insert(0, install)
            break
        if not evidence and plat.classes:
            names = page.class_names
            group = next((g for g in plat.classes if g <= names), None)
            if group is not None:
                evidence = "markup " + " ".join(sorted(group))
        for name, needle in plat.headers:
            if not evidence and needle in page.header(name).lower():
                evidence = f"header {name}"
        if not evidence and any(host == h or host.endswith("." + h) for h in plat.hosts):
            evidence = f"host {host}"
        if evidence:
            found.append(PlatformMatch(plat, evidence, tuple(dict.fromkeys(roots))))
    return found


def _user_urls(paths: tuple[str, ...], page: Page) -> list[str]:
    """The ``{user}`` paths at the host root, ``{user}`` being the path-hosted blog's own prefix
    (``@alice``, ``u/abc``)."""
    prefix = blog_prefix(page.url)
    if prefix is None:
        return []
    host_root = urljoin(prefix, "/")
    user = prefix[len(host_root) :].strip("/")
    return [urljoin(host_root, p.replace("{user}", user)) for p in paths if "{user}" in p]


def platform_candidates(page: Page) -> list[FeedCandidate]:
    """Each recognised platform's feed paths, in table order: for a path-hosted blog the
    platform's ``{user}`` paths when it has some, else the paths without ``{user}`` at the blog
    root(s); ``hint`` is ``"<platform>: <evidence>"``; format variants carry
    ``rel=["format"]``."""
    found = []
    for match in detect_platforms(page):
        hint = f"{match.platform.name}: {match.evidence}"
        for kind, paths in (("path", match.platform.paths), ("format", match.platform.formats)):
            urls = _user_urls(paths, page)
            if not urls:
                plain = [p for p in paths if "{user}" not in p]
                urls = [urljoin(root, p) for root in match.roots for p in plain]
            found += [
                FeedCandidate(url=u, type="", rel=[kind], source="platform", hint=hint)
                for u in urls
            ]
    return found
