"""Feed autodiscovery, by stage: candidates from a page, scored by ordered scorers, gathered and
validated by ordered stages.

* :mod:`~blogfeeds.extract.discovery.vocabulary`: media types, sources, URL word patterns.
* :mod:`~blogfeeds.extract.discovery.candidates`: :class:`FeedCandidate`; ``Link`` header,
  ``<link>``/``<a>`` and anchor candidates.
* :mod:`~blogfeeds.extract.discovery.platforms`, :mod:`~blogfeeds.extract.discovery.guesses`:
  platform fingerprints and guessed paths (package data).
* :mod:`~blogfeeds.extract.discovery.scorers`: the scorers (``BLOGFEEDS_FEED_SCORERS``).
* :mod:`~blogfeeds.extract.discovery.stages`: the stages (``BLOGFEEDS_FEED_STAGES``).
* :mod:`~blogfeeds.extract.discovery.fetching`: the injected fetch and the per-call budget.
* :mod:`~blogfeeds.extract.discovery.discover`: :func:`discover_feeds` (page only),
  :func:`find_feeds` (validated), :class:`DiscoveryConfig` and the reports.
"""

from blogfeeds.extract.discovery.candidates import FeedCandidate
from blogfeeds.extract.discovery.discover import (
    RULESETS,
    DiscoveredFeed,
    DiscoveryConfig,
    FeedReport,
    Rejection,
    RulesSpec,
    discover_feeds,
    find_feeds,
)
from blogfeeds.extract.discovery.fetching import (
    BROWSER_USER_AGENT,
    Fetch,
    Fetched,
    FetchRequest,
)
from blogfeeds.extract.discovery.scorers import FEED_SCORERS_BASE, ORIGINAL_FEED_SCORERS
from blogfeeds.extract.discovery.stages import FEED_STAGES_BASE, ORIGINAL_FEED_STAGES
from blogfeeds.extract.discovery.vocabulary import ADVERTISED, LINK_HINT

__all__ = [
    "ADVERTISED",
    "BROWSER_USER_AGENT",
    "FEED_SCORERS_BASE",
    "FEED_STAGES_BASE",
    "LINK_HINT",
    "ORIGINAL_FEED_SCORERS",
    "ORIGINAL_FEED_STAGES",
    "RULESETS",
    "DiscoveredFeed",
    "DiscoveryConfig",
    "FeedCandidate",
    "FeedReport",
    "Fetch",
    "FetchRequest",
    "Fetched",
    "Rejection",
    "RulesSpec",
    "discover_feeds",
    "find_feeds",
]
