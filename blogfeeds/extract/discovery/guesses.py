"""Guessed feed paths, most likely first: ``blogfeeds/data/feed_guesses.toml`` (ordered by
real site→feed pairs), tried at the entry path and the site root."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from urllib.parse import urljoin

from blogfeeds.extract.discovery.candidates import FeedCandidate
from blogfeeds.extract.page import Page


@cache
def guess_paths() -> tuple[str, ...]:
    """Guessed feed paths, most likely first: ``blogfeeds/data/feed_guesses.toml``."""
    text = resources.files("blogfeeds").joinpath("data/feed_guesses.toml").read_text("utf-8")
    return tuple(row["path"] for row in tomllib.loads(text)["guess"])


def entry_path(url: str) -> str:
    """The directory of ``url`` (``https://x/blog/`` for ``https://x/blog/index.html``)."""
    return urljoin(url, "./")


def guess_candidates(page: Page) -> list[FeedCandidate]:
    """:func:`guess_paths` at the entry path (when not the root), then the site root, path by
    path."""
    roots = list(dict.fromkeys([entry_path(page.url), urljoin(page.url, "/")]))
    return [
        FeedCandidate(url=urljoin(root, path), type="", source="guess", hint=path)
        for path in guess_paths()
        for root in roots
    ]
