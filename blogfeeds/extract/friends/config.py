"""The friend extractor's configuration, read once from settings (:class:`FriendConfig`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from blogfeeds.extract.friends.layered import FRIEND_LAYERS_BASE, Layer
from blogfeeds.extract.friends.scorers import FRIEND_SCORERS_BASE, ORIGINAL_FRIEND_RULES
from blogfeeds.extract.scoring import Adjustment, SettingsLike, build_rules

RULESETS = ("blogfeeds", "original")
"""Accepted values of ``ruleset`` / ``BLOGFEEDS_FRIEND_RULESET``."""


@dataclass(frozen=True)
class FriendConfig:
    """Which ruleset runs, with which built layers and container scorers."""

    ruleset: str = "blogfeeds"
    layers: tuple[Layer, ...] = ()
    """The layered ruleset's layers, in order (empty: :data:`FRIEND_LAYERS_BASE`)."""
    scorers: tuple[Callable[..., Adjustment | None], ...] = ()
    """The container scorers, in order (empty: the ruleset's base)."""

    @classmethod
    def from_settings(cls, settings: SettingsLike) -> FriendConfig:
        """``BLOGFEEDS_FRIEND_RULESET``; ``BLOGFEEDS_FRIEND_LAYERS`` over
        :data:`FRIEND_LAYERS_BASE` and ``BLOGFEEDS_FRIEND_SCORERS`` over the ruleset's base
        (:data:`FRIEND_SCORERS_BASE`, or :data:`ORIGINAL_FRIEND_RULES` for ``"original"``),
        merged like Scrapy's ``*_BASE`` settings; components with ``from_settings`` are built
        by it. Raises ``ValueError`` on an unknown ruleset or a malformed dict."""
        ruleset = settings.get("BLOGFEEDS_FRIEND_RULESET") or "blogfeeds"
        if ruleset not in RULESETS:
            raise ValueError(f"unknown friend ruleset {ruleset!r} (expected one of {RULESETS})")
        base = ORIGINAL_FRIEND_RULES if ruleset == "original" else FRIEND_SCORERS_BASE
        scorers = build_rules(_dict(settings, "BLOGFEEDS_FRIEND_SCORERS"), settings, base=base)
        layers = build_rules(
            _dict(settings, "BLOGFEEDS_FRIEND_LAYERS"), settings, base=FRIEND_LAYERS_BASE
        )
        return cls(ruleset, tuple(layers), tuple(scorers))


def _dict(settings: SettingsLike, name: str) -> Mapping[Any, int | None]:
    """A dict setting; a string (``-s NAME='{...}'``) is read as JSON."""
    value = settings.get(name) or {}
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a dict of component: order")
    return value
