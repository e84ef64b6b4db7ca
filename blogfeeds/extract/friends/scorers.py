"""Friend-link container scorers: the original formula's four rules and the container
layer's three, configured as ``{dotted path: order}`` over a base dict.

A scorer is a rule of :mod:`blogfeeds.extract.scoring`: ``rule(container, score, page)``
returns an :class:`~blogfeeds.extract.scoring.Adjustment` or ``None``, or raises
:class:`~blogfeeds.extract.scoring.Reject`. :data:`FRIEND_SCORERS_BASE` scores the layered
ruleset's containers and :data:`ORIGINAL_FRIEND_RULES` the original formula; the
``BLOGFEEDS_FRIEND_SCORERS`` setting updates the base the way Scrapy's ``*_BASE`` settings
merge (add a rule, move one, disable one with ``None``). A class with a
``from_settings(settings)`` classmethod is built by it (weights from settings). What each
default does: docs/friend-links.md; writing your own: docs/scoring.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from blogfeeds.extract.friends.model import Container, ScoredContainer
from blogfeeds.extract.page import Page
from blogfeeds.extract.scoring import Adjustment, Reject, apply_rules, build_rules

ORIGINAL_FRIEND_RULES: dict[str, int | None] = {
    "blogfeeds.extract.friends.LinkBalance": 100,
    "blogfeeds.extract.friends.LinkTextRatio": 200,
    "blogfeeds.extract.friends.LinkDensity": 300,
    "blogfeeds.extract.friends.MinimumScore": 900,
}
"""The original formula (``ruleset="original"``)."""

RulesSpec = Mapping[Any, int | None] | Iterable[Callable[..., Adjustment | None]] | None

FRIEND_SCORERS_BASE: dict[str, int | None] = {
    "blogfeeds.extract.friends.LinkBalance": 100,
    "blogfeeds.extract.friends.LinkTextRatio": 200,
    "blogfeeds.extract.friends.LinkDensity": 300,
    "blogfeeds.extract.friends.CardRepetition": 400,
    "blogfeeds.extract.friends.FeedPairs": 450,
    "blogfeeds.extract.friends.ChromeZone": 500,
    "blogfeeds.extract.friends.DistinctFriends": 600,
    "blogfeeds.extract.friends.MinimumScore": 900,
}
"""The container layer's scorers (``ruleset="blogfeeds"``), updated by
``BLOGFEEDS_FRIEND_SCORERS``."""


def built_rules(
    rules: RulesSpec, default: Mapping[Any, int | None]
) -> list[Callable[..., Adjustment | None]]:
    """``rules`` built (``None`` means ``default``; a mapping replaces it)."""
    if rules is None:
        return build_rules(default)
    if isinstance(rules, Mapping):
        return build_rules(rules)
    return list(rules)


def score_containers(
    containers: Iterable[Container], rules: list[Callable[..., Adjustment | None]], page: Page
) -> list[ScoredContainer]:
    """Every container scored from 0 by ``rules``, best first; rejected ones last, ties and
    rejected ones in document order."""
    scored: list[ScoredContainer] = []
    for c in containers:
        try:
            score, reasons = apply_rules(c, rules, page, 0.0)
        except Reject as exc:
            reasons = list(getattr(exc, "reasons", []))
            below = exc.score if isinstance(exc, BelowMinimum) else None
            scored.append(ScoredContainer(c, 0.0, reasons, True, below))
            continue
        scored.append(ScoredContainer(c, score, reasons))
    scored.sort(key=lambda s: (s.rejected, -s.score))  # stable
    return scored


def affect(points: float, keep: float, ratio: float, power: float) -> float:
    """``points·keep + points·(1 − keep)·ratio^power``; ``ratio ≥ 1`` keeps ``points``.

    ``keep`` is the share of the points a ratio of 0 still leaves (original design: 0.1).
    """
    if ratio >= 1:
        return points
    return points * keep + points * (1 - keep) * ratio**power


@dataclass(frozen=True)
class LinkBalance:
    """``+ (external − internal) × per_link``; rejects when that is ≤ 0."""

    per_link: float = 1000.0

    def __call__(self, c: Container, score: float, page: Page) -> Adjustment:
        points = (c.external - c.internal) * self.per_link
        if points <= 0:
            raise Reject(f"{c.external} external - {c.internal} internal links <= 0")
        return Adjustment(
            score + points,
            f"+{points:g} ({c.external} external - {c.internal} internal) x {self.per_link:g}",
        )


@dataclass(frozen=True)
class LinkTextRatio:
    """``affect(score, keep, link_text / total_text, power)``: mostly link text scores high."""

    keep: float = 0.1
    power: float = 2.0

    def __call__(self, c: Container, score: float, page: Page) -> Adjustment:
        ratio = c.link_text / c.text if c.text else 1.0
        factor = affect(1.0, self.keep, ratio, self.power)
        return Adjustment(score * factor, f"x{factor:.4g} link text {c.link_text}/{c.text}")


@dataclass(frozen=True)
class LinkDensity:
    """``affect(score, keep, links / all_tags, power)``: mostly links scores high."""

    keep: float = 0.1
    power: float = 1.0

    def __call__(self, c: Container, score: float, page: Page) -> Adjustment:
        ratio = c.links / c.tags if c.tags else 1.0
        factor = affect(1.0, self.keep, ratio, self.power)
        return Adjustment(score * factor, f"x{factor:.4g} link density {c.links}/{c.tags} tags")


@dataclass(frozen=True)
class MinimumScore:
    """Rejects a container scoring below ``minimum`` (one external link's worth)."""

    minimum: float = 1000.0

    def __call__(self, c: Container, score: float, page: Page) -> None:
        if score < self.minimum:
            raise BelowMinimum(f"score {score:.6g} < {self.minimum:g}", score)


class BelowMinimum(Reject):
    """A container rejected for its score alone (no rule found it wrong): a blogroll group
    beside an accepted one, or a friend page's one short list, may still be taken
    (:func:`.containers._union`)."""

    def __init__(self, message: str, score: float) -> None:
        super().__init__(message)
        self.score = score


@dataclass(frozen=True)
class CardRepetition:
    """Repeated sibling cards, each linking one blog, cancel the density factor (and the text
    factor when the cards' text sits in their own fields, not in prose around the link).

    A friend grid repeats one card per friend (avatar, name, description, a call-to-action
    link): their markup and text lower the link-density and link-text ratios, the repetition
    itself is the evidence. Applies when at least ``minimum`` children are cards and every
    friend blog sits in its own card. Prose means more than ``prose_share`` of the text lies
    directly in the children (a how-to list: "open <a>this tool</a> and upload...").
    """

    minimum: int = 2
    keep: float = 0.1
    prose_share: float = 0.2

    def cancels(self, c: Container) -> tuple[bool, bool]:
        """Whether it cancels the density factor and the text factor of ``c``."""
        if not c.layered or c.cards < self.minimum or c.cards < c.friends:
            return False, False
        return True, c.child_text <= self.prose_share * c.text

    def __call__(self, c: Container, score: float, page: Page) -> Adjustment | None:
        density, text = self.cancels(c)
        if not density:
            return None
        factor = 1 / _density_factor(c, self.keep)
        if text:
            factor /= _text_factor(c, self.keep)
        return Adjustment(score * factor, f"x{factor:.4g} {c.cards} repeated cards")


@dataclass(frozen=True)
class FeedPairs:
    """A container at least half of whose friends are listed with their own feed beside them
    (:mod:`.feedpairs`) is a blogroll, however much prose describes each entry: the density
    and text factors are cancelled (those :class:`CardRepetition` has not cancelled already).
    Applies from ``minimum`` such friends."""

    minimum: int = 2
    keep: float = 0.1

    def __call__(self, c: Container, score: float, page: Page) -> Adjustment | None:
        if not c.layered or c.fed < self.minimum or 2 * c.fed < c.friends:
            return None
        density, text = CardRepetition().cancels(c)
        factor = 1.0
        if not density:
            factor /= _density_factor(c, self.keep)
        if not text:
            factor /= _text_factor(c, self.keep)
        return Adjustment(score * factor, f"x{factor:.4g} {c.fed} friends listed with a feed")


def _density_factor(c: Container, keep: float) -> float:
    return affect(1.0, keep, c.links / c.tags if c.tags else 1.0, 1.0)


def _text_factor(c: Container, keep: float) -> float:
    return affect(1.0, keep, c.link_text / c.text if c.text else 1.0, 2.0)


@dataclass(frozen=True)
class ChromeZone:
    """Rejects a container inside page chrome (header, nav, footer, menus, share, comments)
    unless a friend keyword labels it (old-style 友情链接 footers). Layered containers only."""

    def __call__(self, c: Container, score: float, page: Page) -> None:
        if c.layered and c.chrome and not c.anchored:
            raise Reject("inside page chrome, no friend keyword")


@dataclass(frozen=True)
class DistinctFriends:
    """Rejects a container linking fewer than ``minimum`` distinct friend blogs (1 when a
    friend keyword labels it), as too short to score when it links one (a friend page whose
    only list it is still takes it: :func:`.containers._short_list`). Layered containers
    only."""

    minimum: int = 2

    def __call__(self, c: Container, score: float, page: Page) -> None:
        need = 1 if c.anchored else self.minimum
        if c.layered and c.friends < need:
            message = f"{c.friends} distinct friend blogs < {need}"
            if c.friends:  # a list too short to score: a friend page's one list may be it
                raise BelowMinimum(message, score)
            raise Reject(message)
