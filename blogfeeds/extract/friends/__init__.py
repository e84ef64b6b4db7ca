"""Friend links (blogroll, 友情链接): who a blog lists as friends, and the page holding them.

Two rulesets, chosen by ``ruleset`` (the ``BLOGFEEDS_FRIEND_RULESET`` setting), over one
measuring pass (:mod:`.measure`):

- ``"blogfeeds"`` (default): the layered extractor (:mod:`.layered`): machine-readable
  blogrolls, theme rules as data, the statistical container detector, then filters; every
  friend carries url, name, avatar, how it was found, score and XFN rels. Its layers are
  :data:`FRIEND_LAYERS_BASE` (``BLOGFEEDS_FRIEND_LAYERS``), its container scorers
  :data:`FRIEND_SCORERS_BASE` (``BLOGFEEDS_FRIEND_SCORERS``). What each finds:
  docs/friend-links.md.
- ``"original"``: blogfeeds' original container formula exactly (:mod:`.best_container`,
  :data:`ORIGINAL_FRIEND_RULES`).

:class:`FriendConfig` reads the three settings once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from blogfeeds.extract.friends.best_container import (
    CONTAINER_TAGS,
    extract_original,
    scan_containers,
)
from blogfeeds.extract.friends.candidates import Candidate, Found
from blogfeeds.extract.friends.config import RULESETS, FriendConfig
from blogfeeds.extract.friends.containers import Containers
from blogfeeds.extract.friends.datasource import friends_from_data_source
from blogfeeds.extract.friends.declared import DataSources, ScriptLists, XfnLinks
from blogfeeds.extract.friends.inline_runs import InlineRuns
from blogfeeds.extract.friends.layered import FRIEND_LAYERS_BASE, Layer, extract_layered
from blogfeeds.extract.friends.measure import Link, Scan, measure
from blogfeeds.extract.friends.model import (
    Container,
    Friend,
    FriendExtraction,
    LinkRef,
    ScoredContainer,
)
from blogfeeds.extract.friends.pages import find_friend_pages
from blogfeeds.extract.friends.scorers import (
    FRIEND_SCORERS_BASE,
    ORIGINAL_FRIEND_RULES,
    CardRepetition,
    ChromeZone,
    DistinctFriends,
    FeedPairs,
    LinkBalance,
    LinkDensity,
    LinkTextRatio,
    MinimumScore,
    RulesSpec,
    affect,
)
from blogfeeds.extract.friends.themes import ThemeRule, load_theme_rules, user_theme_rules
from blogfeeds.extract.friends.widgets import ThemeCards
from blogfeeds.extract.page import Page

__all__ = [
    "CONTAINER_TAGS",
    "FRIEND_LAYERS_BASE",
    "FRIEND_SCORERS_BASE",
    "ORIGINAL_FRIEND_RULES",
    "RULESETS",
    "Candidate",
    "CardRepetition",
    "ChromeZone",
    "Container",
    "Containers",
    "DataSources",
    "DistinctFriends",
    "FeedPairs",
    "Found",
    "Friend",
    "FriendConfig",
    "FriendExtraction",
    "InlineRuns",
    "Layer",
    "Link",
    "LinkBalance",
    "LinkDensity",
    "LinkRef",
    "LinkTextRatio",
    "MinimumScore",
    "RulesSpec",
    "Scan",
    "ScoredContainer",
    "ScriptLists",
    "ThemeCards",
    "ThemeRule",
    "XfnLinks",
    "affect",
    "extract_friends",
    "find_friend_pages",
    "friends_from_data_source",
    "load_theme_rules",
    "measure",
    "scan_containers",
]


def extract_friends(
    page: Page,
    rules: RulesSpec = None,
    *,
    ruleset: str = "blogfeeds",
    user_rules: Sequence[ThemeRule | Mapping[str, Any]] | None = None,
    config: FriendConfig | None = None,
) -> FriendExtraction:
    """Friend links of ``page`` (a :class:`~blogfeeds.extract.page.Page`).

    ``rules``: container scorers as ``{dotted path or class: order}`` (replacing the base) or
    a built list (default :data:`FRIEND_SCORERS_BASE` for ``"blogfeeds"``,
    :data:`ORIGINAL_FRIEND_RULES` for ``"original"``). ``user_rules``: extra theme-table
    entries (mappings in the format of ``blogfeeds/data/friend_themes.toml`` or
    :class:`ThemeRule`), layered ruleset only. ``config`` (:meth:`FriendConfig.from_settings`)
    gives the ruleset, the layers and the scorers (``rules``, when given, still wins).
    Raises ``ValueError`` on an unknown ruleset or a bad user rule; never on odd markup.
    """
    layers: list[Layer] | None = None
    if config is not None:
        ruleset = config.ruleset
        layers = list(config.layers) or None
        if rules is None and config.scorers:
            rules = list(config.scorers)
    if ruleset == "original":
        return extract_original(page, rules)
    if ruleset != "blogfeeds":
        raise ValueError(f"unknown friend ruleset {ruleset!r} (expected one of {RULESETS})")
    return extract_layered(page, rules, user_rules=user_theme_rules(user_rules), layers=layers)
