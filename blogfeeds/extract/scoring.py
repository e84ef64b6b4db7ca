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
from blogfeeds.option import StartupError

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


class SettingsLike(Protocol):
    """What components read their settings from: Scrapy's ``Settings`` or a plain mapping."""

    def get(self, name: str, default: Any = None) -> Any: ...


def component_order(
    base: Mapping[Any, int | None], custom: Mapping[Any, int | None] | None = None
) -> list[Any]:
    """The enabled components of ``base`` updated by ``custom``, lowest order first.

    Scrapy's ``build_component_list`` semantics, without importing Scrapy: the user's dict adds
    components, moves them (a new order) or disables them (``None``) without restating the
    defaults; a dotted path and the object it names are the same component. Raises
    ``ValueError`` on an order that is not a number.
    """
    merged: dict[Any, tuple[Any, int | None]] = {}
    for spec in (base, custom or {}):
        for key, order in spec.items():
            if order is not None and (isinstance(order, bool) or not isinstance(order, int)):
                raise ValueError(f"component {key!r}: order must be an integer or None")
            merged[_identity(key)] = (key, order)
    enabled = [(order, key) for key, order in merged.values() if order is not None]
    return [key for _, key in sorted(enabled, key=lambda pair: pair[0])]


def _identity(key: Any) -> Any:
    if isinstance(key, str):
        try:
            return load_object(key)
        except (ImportError, AttributeError):
            return key  # reported by build_component, with the path
    return key


def build_component(obj: Any, settings: SettingsLike | None = None) -> Any:
    """An instance of ``obj`` (a dotted path, a class, an instance or a function).

    A class with a ``from_settings(settings)`` classmethod is built by it, so that weights and
    word lists can come from settings; any other class is called with no arguments; instances
    and functions are used as they are.
    """
    if isinstance(obj, str):
        obj = load_object(obj)
    if not isinstance(obj, type):
        return obj
    factory = getattr(obj, "from_settings", None)
    if factory is not None and settings is not None:
        return factory(settings)
    return obj()


def build_rules(
    spec: Mapping[Any, int | None],
    settings: SettingsLike | None = None,
    *,
    base: Mapping[Any, int | None] | None = None,
) -> list[Any]:
    """Build the rules of ``base`` (if given) updated by ``spec``, lowest order first
    (:func:`component_order`, :func:`build_component`)."""
    if base is None:
        return [build_component(key, settings) for key in component_order(spec)]
    return [build_component(key, settings) for key in component_order(base, spec)]


def build_setting(
    setting: str,
    spec: Mapping[Any, int | None],
    settings: SettingsLike,
    base: Mapping[Any, int | None],
) -> list[Any]:
    """:func:`build_rules` for the component setting named ``setting``: any problem with the
    user's dict is a :class:`~blogfeeds.option.StartupError` naming the setting (one line at
    start, never a traceback): a path that does not import, an order that is not an integer,
    a component that cannot be built, or ``None`` for a key that is not a default (a misspelt
    name would otherwise disable nothing, silently)."""
    known = {_identity(key) for key in base}
    for key, order in spec.items():
        if order is None and _identity(key) not in known:
            raise StartupError(setting, f"{key!r}: None disables a default, and this is not one")
    try:
        return build_rules(spec, settings, base=base)
    except StartupError:
        raise
    except (ImportError, AttributeError, ValueError, TypeError) as exc:
        raise StartupError(setting, f"{type(exc).__name__}: {exc}") from None


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
