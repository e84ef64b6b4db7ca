"""Guessed feed paths, most likely first: ``blogfeeds/data/feed_guesses.toml``, tried at the
blog's roots (:func:`blog_roots`) when no platform was recognised."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from urllib.parse import urljoin

from blogfeeds.extract.discovery.candidates import FeedCandidate
from blogfeeds.extract.identity import blog_prefix
from blogfeeds.extract.page import Page


@cache
def _table() -> dict[str, object]:
    text = resources.files("blogfeeds").joinpath("data/feed_guesses.toml").read_text("utf-8")
    return tomllib.loads(text)


@cache
def guess_paths() -> tuple[str, ...]:
    """Guessed feed paths, most likely first: ``blogfeeds/data/feed_guesses.toml``."""
    rows = _table()["guess"]
    assert isinstance(rows, list)
    return tuple(row["path"] for row in rows)


@cache
def guess_limit() -> int:
    """How many of :func:`guess_paths` are tried (``limit`` in the table)."""
    limit = _table()["limit"]
    assert isinstance(limit, int)
    return limit


def entry_path(url: str) -> str:
    """The directory of ``url`` (``https://x/blog/`` for ``https://x/blog/index.html``)."""
    return urljoin(url, "./")


def blog_roots(url: str) -> list[str]:
    """Where a blog's files may lie: the entry path (when not the root), then the site root;
    for a path-hosted blog (:func:`~blogfeeds.extract.identity.blog_prefix`) never above its
    own prefix (``https://www.cnblogs.com/alice/``, not ``https://www.cnblogs.com/``)."""
    entry = entry_path(url)
    prefix = blog_prefix(url)
    if prefix is None:
        return list(dict.fromkeys([entry, urljoin(url, "/")]))
    return list(dict.fromkeys([entry if entry.startswith(prefix) else prefix, prefix]))


def guess_candidates(page: Page) -> list[FeedCandidate]:
    """The first :func:`guess_limit` of :func:`guess_paths` at each of :func:`blog_roots`,
    path by path."""
    roots = blog_roots(page.url)
    return [
        FeedCandidate(url=urljoin(root, path), type="", source="guess", hint=path)
        for path in guess_paths()[: guess_limit()]
        for root in roots
    ]
