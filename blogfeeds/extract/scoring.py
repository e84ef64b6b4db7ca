"""Pluggable, explainable scoring rules, ordered like Scrapy's middleware dicts.

A *rule* is any callable ``rule(subject, score, page) -> Adjustment | None``: it sees the
subject being scored (a feed candidate, a friend-link container), the score so far and the
:class:`~blogfeeds.extract.page.Page`, and returns the new score with a human-readable reason,
or ``None`` when it does not apply. A rule may raise :class:`Reject` to drop the subject.

Rules are configured as ``{"dotted.path.Rule": order}`` (``None`` disables one), e.g. the
``BLOGFEEDS_FEED_SCORERS`` and ``BLOGFEEDS_FRIEND_SCORERS`` settings; lower orders run first.
Every result keeps the list of reasons that produced its score.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from blogfeeds.extract.page import Page

T_contra = TypeVar("T_contra", contravariant=True)


@dataclass(frozen=True)
class Adjustment:
    """A rule's verdict: the new score and why (``"-3 no rel=alternate"``)."""

    score: float
    reason: str


class Reject(Exception):  # a verdict, not an error
    """Raised by a rule to drop the subject; the message is the reason."""


class Rule(Protocol[T_contra]):
    """A scoring rule (see the module docstring)."""

    def __call__(self, subject: T_contra, score: float, page: Page) -> Adjustment | None: ...


def load_object(path: str) -> Any:
    """Import ``"package.module.Name"``; raises ``ImportError``/``AttributeError`` on a bad path."""
    module, _, name = path.rpartition(".")
    if not module:
        raise ImportError(f"not a dotted path: {path!r}")
    return getattr(importlib.import_module(module), name)


def build_rules(spec: Mapping[Any, int | None]) -> list[Any]:
    """Instantiate the rules of ``{dotted path or class or instance: order}``, lowest order first.

    Classes are instantiated with no arguments; instances and plain functions are used as they
    are; an order of ``None`` disables the rule (as in Scrapy's component dicts).
    """
    enabled = sorted(
        ((order, key) for key, order in spec.items() if order is not None), key=lambda pair: pair[0]
    )
    rules = []
    for _, key in enabled:
        obj = load_object(key) if isinstance(key, str) else key
        rules.append(obj() if isinstance(obj, type) else obj)
    return rules


def apply_rules(
    subject: Any, rules: Sequence[Callable[..., Adjustment | None]], page: Page, start: float
) -> tuple[float, list[str]]:
    """Run ``rules`` in order from score ``start``; return ``(score, reasons)``.

    Raises :class:`Reject` (with every reason so far in its ``reasons`` attribute) when a rule
    rejects the subject.
    """
    score, reasons = start, list[str]()
    for rule in rules:
        try:
            adj = rule(subject, score, page)
        except Reject as exc:
            exc.reasons = [*reasons, f"rejected: {exc}"]  # type: ignore[attr-defined]
            raise
        if adj is not None:
            score = adj.score
            reasons.append(adj.reason)
    return score, reasons
