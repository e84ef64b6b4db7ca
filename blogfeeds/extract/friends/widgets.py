"""The widget and theme layer: friend cards found by the theme table
(:mod:`blogfeeds.extract.friends.themes`: WordPress Link Manager, Blogger BlogList/LinkList,
Butterfly, AnZhiYu, Volantis, Matery, Fluid, NexT, ...), one card at a time.

The user's entries run first; the bundled table runs only when none of them found a card.
Among titled widget blocks, only those titled as a blogroll are kept when there are any; when
three or more titled blocks exist, a block of a single link is dropped.
"""

from __future__ import annotations

import re

from blogfeeds.extract.friends.candidates import Candidate, Found
from blogfeeds.extract.friends.keywords import DEAD_HEADING, XFN
from blogfeeds.extract.friends.measure import Scan, absolute
from blogfeeds.extract.friends.themes import bundled_theme_rules, heading_before, run_rules
from blogfeeds.extract.page import Page

BLOGROLL_TITLE = re.compile(
    r"blogroll|\bblogs?\b|weblogs?|blogger|友情链接|友链|友人|博客|朋友|小伙伴|\bfriends?\b",
    re.IGNORECASE,
)
"""Widget block titles that name a list of blogs."""


class ThemeCards:
    """Friends from widget and theme cards (``how``: ``widget:<name>``, ``theme:<name>``)."""

    def friends(self, page: Page, scan: Scan, found: Found) -> None:
        """Propose every card's link; set :attr:`Found.cards` when any card was found."""
        users = found.user_rules

        def usable(el: object) -> bool:  # a link the filters do not refuse outright
            link = found.by_el.get(el)
            return link is not None and link.verdict is None

        cards = list(run_rules(users, page, usable)) if users else []
        cards = cards or list(run_rules(bundled_theme_rules(), page, usable))
        titled = [c for c in cards if c.group_title is not None]
        blogroll_groups = any(
            c.rule.blog_list or BLOGROLL_TITLE.search(c.group_title or "") for c in titled
        )
        group_sizes: dict[tuple[str, str], int] = {}
        for card in titled:
            key = (card.rule.name, card.group_id)
            group_sizes[key] = group_sizes.get(key, 0) + 1
        for card in cards:
            hit = found.by_el.get(card.link)
            found.claimed.add(card.link)
            if hit is None:
                continue
            title = card.group_title
            drop = ""
            if title is not None and not card.rule.blog_list and not BLOGROLL_TITLE.search(title):
                if blogroll_groups:
                    drop = "not-a-blogroll-block"
                elif len(group_sizes) >= 3 and group_sizes[(card.rule.name, card.group_id)] == 1:
                    drop = "single-link-block"
            if drop:
                cand = Candidate(hit.url, card.name, card.rule.how, 0, hit.node, link=hit)
                cand.verdict = drop
                found.candidates.append(cand)
                continue
            dead = DEAD_HEADING.search(heading_before(card.link, levels=5))
            found.candidates.append(
                Candidate(
                    hit.url,
                    card.name,
                    card.rule.how,
                    1000.0,
                    hit.node,
                    avatar=absolute(page, card.avatar) if card.avatar else "",
                    rels=tuple(r for r in hit.rels if r in XFN),
                    listed_as="dead" if dead else "",
                    link=hit,
                )
            )
        found.cards = found.cards or bool(cards)
