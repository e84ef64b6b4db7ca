"""Friend links (blogroll, 友情链接): who a blog lists as friends, and the page holding them.

Two rulesets, chosen by ``ruleset`` (the ``BLOGFEEDS_FRIEND_RULESET`` setting):

- ``"blogfeeds"`` (default): the layered extractor of :mod:`.layers`: machine-readable
  blogrolls (OPML, XFN, JSON lists), widget and theme rules as data
  (``blogfeeds/data/friend_themes.toml``), the statistical container detector extended to
  cards and to the union of qualifying containers, then filters (owner, circles, badges,
  platforms, referral links, placeholders); every friend carries url, name, avatar, how it was
  found, score and XFN rels.
- ``"original"``: blogfeeds' original container formula exactly (:mod:`.core`): the best
  ``div``/``table``/``ul`` by ``(external − internal) × 1000`` and two ``affect`` factors.

Scoring rules are configured as ``{dotted path: order}`` (``BLOGFEEDS_FRIEND_SCORERS``);
:data:`DEFAULT_FRIEND_RULES` drives the layered ruleset's statistical layer and
:data:`ORIGINAL_FRIEND_RULES` the original formula.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from blogfeeds.extract.friends.core import (
    CONTAINER_TAGS,
    ORIGINAL_FRIEND_RULES,
    Container,
    Friend,
    FriendExtraction,
    LinkBalance,
    LinkDensity,
    LinkRef,
    LinkTextRatio,
    MinimumScore,
    RulesSpec,
    ScoredContainer,
    affect,
    extract_original,
    scan_containers,
)
from blogfeeds.extract.friends.datasource import friends_from_data_source
from blogfeeds.extract.friends.layers import (
    DEFAULT_FRIEND_RULES,
    CardRepetition,
    ChromeZone,
    DistinctFriends,
    extract_layered,
)
from blogfeeds.extract.friends.pages import find_friend_pages
from blogfeeds.extract.friends.themes import ThemeRule, load_theme_rules
from blogfeeds.extract.page import Page

RULESETS = ("blogfeeds", "original")
"""Accepted values of ``ruleset`` / ``BLOGFEEDS_FRIEND_RULESET``."""

__all__ = [
    "CONTAINER_TAGS",
    "DEFAULT_FRIEND_RULES",
    "ORIGINAL_FRIEND_RULES",
    "RULESETS",
    "CardRepetition",
    "ChromeZone",
    "Container",
    "DistinctFriends",
    "Friend",
    "FriendExtraction",
    "LinkBalance",
    "LinkDensity",
    "LinkRef",
    "LinkTextRatio",
    "MinimumScore",
    "RulesSpec",
    "ScoredContainer",
    "ThemeRule",
    "affect",
    "extract_friends",
    "find_friend_pages",
    "friends_from_data_source",
    "load_theme_rules",
    "scan_containers",
]


def extract_friends(
    page: Page,
    rules: RulesSpec = None,
    *,
    ruleset: str = "blogfeeds",
    user_rules: Sequence[ThemeRule | Mapping[str, Any]] | None = None,
) -> FriendExtraction:
    """Friend links of ``page`` (a :class:`~blogfeeds.extract.page.Page`).

    ``rules``: scoring rules as ``{dotted path or class: order}`` or a built list (default
    :data:`DEFAULT_FRIEND_RULES` for ``"blogfeeds"``, :data:`ORIGINAL_FRIEND_RULES` for
    ``"original"``). ``user_rules``: extra theme-table entries (mappings in the format of
    ``blogfeeds/data/friend_themes.toml`` or :class:`ThemeRule`), layered ruleset only.
    Raises ``ValueError`` on an unknown ruleset or a bad user rule; never on odd markup.
    """
    if ruleset == "original":
        return extract_original(page, rules)
    if ruleset != "blogfeeds":
        raise ValueError(f"unknown friend ruleset {ruleset!r} (expected one of {RULESETS})")
    return extract_layered(page, rules, user_rules=user_rules)
