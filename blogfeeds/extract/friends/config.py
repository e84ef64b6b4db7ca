"""The friend extractor's configuration, read once from settings (:class:`FriendConfig`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from blogfeeds.extract.friends.layered import FRIEND_LAYERS_BASE, Layer
from blogfeeds.extract.friends.scorers import FRIEND_SCORERS_BASE, ORIGINAL_FRIEND_RULES
from blogfeeds.extract.scoring import Adjustment, SettingsLike, build_setting
from blogfeeds.option import Config, option

RULESETS = ("blogfeeds", "original")
"""Accepted values of ``ruleset`` / ``BLOGFEEDS_FRIEND_RULESET``."""


@dataclass(frozen=True)
class FriendsConfig(Config):
    component: ClassVar[str] = "blogfeeds.extract (friend links)"

    ruleset: str = option(
        "BLOGFEEDS_FRIEND_RULESET",
        "blogfeeds",
        'Friend links: "blogfeeds" (the layered extractor) or "original" (the container formula).',
        choices=RULESETS,
    )
    scorers: Mapping[str, int | None] = option(
        "BLOGFEEDS_FRIEND_SCORERS",
        {},
        "Your container scorers {dotted path: order}, merged over FRIEND_SCORERS_BASE.",
    )
    layers: Mapping[str, int | None] = option(
        "BLOGFEEDS_FRIEND_LAYERS",
        {},
        "Your friend-link layers {dotted path: order}, merged over FRIEND_LAYERS_BASE.",
    )


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
        """The ``BLOGFEEDS_FRIEND_*`` settings (:class:`FriendsConfig`): the
        ruleset; the user's layers over :data:`FRIEND_LAYERS_BASE` and scorers over the
        ruleset's base (:data:`FRIEND_SCORERS_BASE`, or :data:`ORIGINAL_FRIEND_RULES` for
        ``"original"``), merged like Scrapy's ``*_BASE`` settings; components with
        ``from_settings`` are built by it. Raises :class:`~blogfeeds.option.StartupError` on a
        bad value."""
        opts = FriendsConfig.from_settings(settings)
        base = ORIGINAL_FRIEND_RULES if opts.ruleset == "original" else FRIEND_SCORERS_BASE
        scorers = build_setting("BLOGFEEDS_FRIEND_SCORERS", opts.scorers, settings, base)
        layers = build_setting("BLOGFEEDS_FRIEND_LAYERS", opts.layers, settings, FRIEND_LAYERS_BASE)
        return cls(opts.ruleset, tuple(layers), tuple(scorers))
