"""Platform fingerprints and their feed paths: ``blogfeeds/data/feed_platforms.toml``.

A platform is recognised by its generator, asset paths, response headers or host; each
recognised platform adds its feed paths (then its format variants) at the blog root(s).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from urllib.parse import urljoin, urlsplit

from blogfeeds.extract.discovery.candidates import FeedCandidate, absolute
from blogfeeds.extract.page import Page


@dataclass(frozen=True)
class Platform:
    """One row of ``feed_platforms.toml``."""

    name: str
    generator: tuple[str, ...] = ()
    assets: tuple[str, ...] = ()
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
    ``feed_platforms.toml``). A same-host asset hit such as ``/blog/wp-content/`` makes
    ``/blog/`` a blog root before the site root."""
    generators = [
        (m.get("content") or "").strip().lower()
        for m in page.tree.iter("meta")
        if (m.get("name") or "").lower() == "generator"
    ]
    assets = [(u, u.lower()) for u in _asset_urls(page)]
    host = (urlsplit(page.url).hostname or "").lower()
    root = urljoin(page.url, "/")
    found = []
    for plat in feed_platforms():
        evidence, roots = "", [root]
        gen = next((g for g in generators for p in plat.generator if g.startswith(p)), None)
        if gen is not None:
            evidence = f"generator {gen}"
        for raw, low in assets:
            marker = next((a for a in plat.assets if a in low), None)
            if marker is None:
                continue
            evidence = evidence or f"asset {marker}"
            resolved = absolute(page.base_url, raw) or ""
            if marker.startswith("/") and urlsplit(resolved).netloc == urlsplit(page.url).netloc:
                path = urlsplit(resolved).path
                cut = path.lower().find(marker)
                if cut > 0:
                    roots.insert(0, urljoin(page.url, path[: cut + 1]))
            break
        for name, needle in plat.headers:
            if not evidence and needle in page.header(name).lower():
                evidence = f"header {name}"
        if not evidence and any(host == h or host.endswith("." + h) for h in plat.hosts):
            evidence = f"host {host}"
        if evidence:
            found.append(PlatformMatch(plat, evidence, tuple(dict.fromkeys(roots))))
    return found


def _expand(path: str, page: Page) -> str | None:
    if "{user}" not in path:
        return path
    segments = [s for s in urlsplit(page.url).path.split("/") if s]
    return path.replace("{user}", segments[0]) if segments else None


def platform_candidates(page: Page) -> list[FeedCandidate]:
    """Each recognised platform's feed paths at its blog root(s), in table order; ``hint`` is
    ``"<platform>: <evidence>"``; format variants carry ``rel=["format"]``."""
    found = []
    for match in detect_platforms(page):
        hint = f"{match.platform.name}: {match.evidence}"
        for kind, paths in (("path", match.platform.paths), ("format", match.platform.formats)):
            for root in match.roots:
                for path in paths:
                    expanded = _expand(path, page)
                    if expanded is None:
                        continue
                    found.append(
                        FeedCandidate(
                            url=urljoin(root, expanded),
                            type="",
                            rel=[kind],
                            source="platform",
                            hint=hint,
                        )
                    )
    return found
