"""The platform a blog runs on, from its ``<meta name="generator">`` strings: one name per
platform however the page spells it (``WordPress 6.4.2``, ``Wordpress``, ``wordpress`` →
``WordPress``), and its version.

The table is ``blogfeeds/data/generators.toml`` (its header says how a string matches). A page
may carry several generators (WordPress and its plugins: ``Site Kit by Google 1.111.1``,
``WooCommerce 8.2.2``); the first that names a platform decides, else the first plugin or
theme of one (its platform, version unknown). Pure: strings in, :class:`Platform` out.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources

MAX_VERSION = 32
"""Longest version kept, in characters (a storage column is 64)."""

_VERSION = re.compile(r"[^\w]*v?\.?\s?(\d[\w.+-]*)", re.IGNORECASE)


@dataclass(frozen=True)
class Platform:
    """A platform name and version; ``name`` is ``""`` for an unknown (or absent) generator,
    ``version`` is ``""`` when the generator gives none."""

    name: str = ""
    version: str = ""


UNKNOWN = Platform()


@dataclass(frozen=True)
class _Name:
    prefix: str
    platform: str
    addon: bool


@dataclass(frozen=True)
class _Table:
    names: tuple[_Name, ...]
    """Every product name, longest first."""
    contains: tuple[tuple[str, str], ...]
    """``(substring, platform)`` of addons."""


@cache
def table() -> _Table:
    """The generator table, ``blogfeeds/data/generators.toml``."""
    text = resources.files("blogfeeds").joinpath("data/generators.toml").read_text("utf-8")
    data = tomllib.loads(text)
    names = [
        _Name(g.lower(), row["name"], False)
        for row in data.get("platform", ())
        for g in row["generators"]
    ]
    names += [
        _Name(g.lower(), row["platform"], True)
        for row in data.get("addon", ())
        for g in row.get("generators", ())
    ]
    addons = data.get("addon", ())
    contains = tuple(
        (c.lower(), row["platform"]) for row in addons for c in row.get("contains", ())
    )
    return _Table(tuple(sorted(names, key=lambda n: -len(n.prefix))), contains)


def _match(generator: str) -> tuple[Platform, bool] | None:
    """The platform one generator string names and whether through an addon; ``None`` when it
    names none."""
    text = " ".join(generator.split())
    low = text.lower()
    for name in table().names:
        if not low.startswith(name.prefix):
            continue
        rest = text[len(name.prefix) :]
        if rest[:1].isalpha():  # "Hexoplus" is not Hexo
            continue
        if name.addon:
            return Platform(name.platform), True
        found = _VERSION.match(rest)
        version = found.group(1).rstrip(".+-")[:MAX_VERSION] if found else ""
        return Platform(name.platform, version), False
    for needle, platform in table().contains:
        if needle in low:
            return Platform(platform), True
    return None


def platform_of(generators: str | Iterable[str]) -> Platform:
    """The platform of a page from its generator string(s), in document order (see the module
    docstring). A platform named without a version takes the version of a later generator
    naming the same platform. :data:`UNKNOWN` when none names one."""
    if isinstance(generators, str):
        generators = (generators,)
    found: Platform | None = None
    addon: Platform | None = None
    for generator in generators:
        match = _match(generator)
        if match is None:
            continue
        platform, via_addon = match
        if via_addon:
            addon = addon or platform
        elif found is None or (
            not found.version and platform.name == found.name and platform.version
        ):
            found = platform
        if found is not None and found.version:
            break
    return found or addon or UNKNOWN
