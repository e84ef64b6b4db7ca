"""Every real page and feed of the shared corpus goes through the extractors without an
exception escaping (read in place from ``../shared/corpus``; skipped without it)."""

from __future__ import annotations

import os

import pytest

from tests.littleweb import find_shared
from tests.robustness import walk_corpus


def test_every_corpus_page_and_feed_has_a_clear_outcome() -> None:
    shared = find_shared()
    if shared is None:
        pytest.skip("the shared corpus (../shared or $BLOGFEEDS_SHARED) is not available")
    outcomes = walk_corpus(shared / "corpus", workers=min(4, os.cpu_count() or 1))
    assert outcomes["pages"].tried >= 900
    assert outcomes["feeds"].tried >= 600
    escaped = [f"{kind}/{name}\n{tb}" for kind, o in outcomes.items() for name, tb in o.exceptions]
    assert escaped == [], "\n\n".join(escaped[:5])
