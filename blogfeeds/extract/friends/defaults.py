"""Theme sample entries: the friend list a theme ships in its default configuration.

The table is ``blogfeeds/data/theme_defaults.toml`` (each theme's entries with the repository
and commit they were read from). A page that links at least ``min_present`` entries of one
theme (or all of them, for a theme shipping fewer) keeps the theme's sample list: those entries
are the theme's friends, not the owner's. On the theme's own sites (its author's blog, whose
friends the samples are) they stay friends.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from urllib.parse import urlsplit

from blogfeeds.extract.friends.filters import normal_host


@dataclass(frozen=True)
class ThemeDefaults:
    """One theme's sample entries (friend keys) and the hosts where they are real friends."""

    name: str
    repository: str
    commit: str
    keys: frozenset[str]
    """:func:`sample_key` of each entry."""
    home: frozenset[str]
    needed: int
    """Entries of the theme a page must link for them to be its samples."""


def sample_key(url: str) -> str:
    """The entry a URL names: host without ``www.`` and path, no scheme, query, fragment,
    ``index.html`` or trailing slash (an entry on a platform, ``github.com/fluid-dev/...``, is
    that page, not every link to the platform)."""
    host = normal_host(url).removeprefix("www.")
    path = urlsplit(url).path
    path = path[: -len("index.html")] if path.endswith("index.html") else path
    return (host + path.rstrip("/")).lower()


@functools.cache
def theme_defaults() -> tuple[ThemeDefaults, ...]:
    """The bundled table, loaded once."""
    text = resources.files("blogfeeds").joinpath("data/theme_defaults.toml").read_text("utf-8")
    raw = tomllib.loads(text)
    least = int(raw.get("min_present", 2))
    out = []
    for entry in raw.get("theme", []):
        keys = frozenset(sample_key(e["url"]) for e in entry["entries"])
        out.append(
            ThemeDefaults(
                name=str(entry["name"]),
                repository=str(entry["repository"]),
                commit=str(entry["commit"]),
                keys=keys,
                home=frozenset(h.lower() for h in entry.get("home", [])),
                needed=min(least, len(keys)),
            )
        )
    return tuple(out)


def sample_entries(page_host: str, urls: Iterable[str]) -> dict[str, str]:
    """The :func:`sample_key` of each of ``urls`` (the links the page lists) that is a theme's
    sample entry kept by the owner → that theme's name; ``page_host`` is the page's host."""
    keys = {sample_key(u) for u in urls}
    host = page_host.removeprefix("www.")
    out: dict[str, str] = {}
    for theme in theme_defaults():
        present = keys & theme.keys
        if len(present) >= theme.needed and host not in theme.home:
            out.update(dict.fromkeys(present, theme.name))
    return out
