"""The inline-run layer: links that follow a friend label inside one block of text
("左邻右舍：A、B、C"), as the measuring pass found them (:attr:`~.measure.Scan.inline`)."""

from __future__ import annotations

from blogfeeds.extract.friends.candidates import Candidate, Found
from blogfeeds.extract.friends.measure import Scan
from blogfeeds.extract.friends.themes import text_of
from blogfeeds.extract.page import Page


class InlineRuns:
    """Links that follow a friend label inside one block (``how``: ``inline``)."""

    def friends(self, page: Page, scan: Scan, found: Found) -> None:
        """Propose every unclaimed link of the measured inline runs."""
        for run in scan.inline:
            for a in run:
                hit = found.by_el.get(a)
                if hit is not None and a not in found.claimed:
                    found.claimed.add(a)
                    found.candidates.append(
                        Candidate(hit.url, text_of(a), "inline", 1000.0, hit.node, link=hit)
                    )
