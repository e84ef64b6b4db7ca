"""The friend extractor's configuration, read once from settings (:class:`FriendConfig`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from blogfeeds.extract.friends.layered import FRIEND_LAYERS_BASE, Layer
from blogfeeds.extract.friends.scorers import FRIEND_SCORERS_BASE, ORIGINAL_FRIEND_RULES
from blogfeeds.extract.scoring import Adjustment, SettingsLike, build_setting
from blogfeeds.extract.settings import FRIEND_RULESETS, FriendSettings

RULESETS = FRIEND_RULESETS


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
        """The ``BLOGFEEDS_FRIEND_*`` settings (:class:`FriendSettings`): the
        ruleset; the user's layers over :data:`FRIEND_LAYERS_BASE` and scorers over the
        ruleset's base (:data:`FRIEND_SCORERS_BASE`, or :data:`ORIGINAL_FRIEND_RULES` for
        ``"original"``), merged like Scrapy's ``*_BASE`` settings; components with
        ``from_settings`` are built by it. Raises :class:`~blogfeeds.option.StartupError` on a
        bad value."""
        opts = FriendSettings.from_settings(settings)
        base = ORIGINAL_FRIEND_RULES if opts.ruleset == "original" else FRIEND_SCORERS_BASE
        scorers = build_setting("BLOGFEEDS_FRIEND_SCORERS", opts.scorers, settings, base)
        layers = build_setting("BLOGFEEDS_FRIEND_LAYERS", opts.layers, settings, FRIEND_LAYERS_BASE)
        return cls(opts.ruleset, tuple(layers), tuple(scorers))
