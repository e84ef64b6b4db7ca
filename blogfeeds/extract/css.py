"""CSS selectors a page cannot match, told before their XPath runs.

A class selector compiles to an XPath that normalises the ``class`` attribute of every element
of the tree; most selectors a page is tried with (theme cards, subtitle slots) name classes the
page does not use. The classes a selector needs are read from cssselect's parse once per
process (:func:`required_classes`); a page's classes once a page
(:attr:`~blogfeeds.extract.page.Page.class_names`).
"""

from __future__ import annotations

import functools
from collections.abc import Set as AbstractSet
from typing import Any

import cssselect


def _classes_in(node: Any) -> set[str] | None:
    """Class names every element matching a parsed cssselect compound must carry (those under
    ``:not()``, ``:is()``, ``:where()`` and ``:has()`` are not required); None when the parsed
    tree holds a node this does not know."""
    required: set[str] = set()
    while True:
        kind = type(node).__name__
        if kind == "Element":
            return required
        if kind == "Class":
            required.add(node.class_name)
        elif kind == "CombinedSelector":
            sub = _classes_in(node.subselector)
            if sub is None:
                return None
            required |= sub
        elif kind not in (
            "Attrib", "Hash", "Pseudo", "Function", "Negation", "Matching",
            "SpecificityAdjustment", "Relation",
        ):  # fmt: skip
            return None
        node = node.selector


@functools.lru_cache(maxsize=1024)
def required_classes(css: str) -> tuple[frozenset[str], ...] | None:
    """For each comma-separated selector of ``css``, the class names a matching element (or
    its matching ancestors and siblings) must carry; None when unknown (always run it)."""
    try:
        groups = []
        for selector in cssselect.parse(css):
            classes = _classes_in(selector.parsed_tree)
            if classes is None:
                return None
            groups.append(frozenset(classes))
        return tuple(groups)
    except Exception:  # cssselect's SelectorSyntaxError: the caller's own compile reports it
        return None


def can_match(css: str, classes: AbstractSet[str]) -> bool:
    """False when no comma-separated selector of ``css`` can match a tree whose elements carry
    only ``classes`` (:attr:`~blogfeeds.extract.page.Page.class_names`); True when it may."""
    groups = required_classes(css)
    return groups is None or any(group <= classes for group in groups)
