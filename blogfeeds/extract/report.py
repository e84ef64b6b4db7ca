"""What :func:`blogfeeds.extract.blog.extract_blog` found on one blog: the :class:`BlogReport`.

The ``blogs`` spider maps a report to its items and stats; ``scrapy inspect`` prints it. Both
read the same fields, so what inspect shows is what the crawl stores.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from blogfeeds.extract.aliases import Observation
from blogfeeds.extract.directives import RobotsDirectives
from blogfeeds.extract.discovery import DiscoveredFeed, FeedCandidate, FeedReport, Rejection
from blogfeeds.extract.friends import Friend, FriendExtraction
from blogfeeds.extract.health import Health
from blogfeeds.extract.identity import blog_id
from blogfeeds.extract.metadata import PageMetadata
from blogfeeds.extract.profile import Profile

FRIEND_PAGE = "friend_page"
DATA_SOURCE = "data_source"


@dataclass(frozen=True)
class Followed:
    """One extra page fetched for the blog's friends, and what came of it.

    ``kind`` is :data:`FRIEND_PAGE` (a same-blog blogroll page) or :data:`DATA_SOURCE` (an OPML
    or JSON friend list). ``outcome``: ``failed`` (no answer, or not 2xx: ``detail`` says
    which), ``not_html``, ``unreadable`` (``detail`` is the decode error), ``nofollow``,
    ``no_friends``, ``used`` (its friends are the blog's) for a friend page; ``failed`` or
    ``read`` for a data source. ``friends`` is how many friends it listed. A friend page read
    up to a bound says so in ``detail`` (``truncated: links``).
    """

    url: str
    kind: str
    outcome: str
    final_url: str = ""
    friends: int = 0
    detail: str = ""


@dataclass(frozen=True)
class FriendEdge:
    """A friend link of the blog with the identity of the friend's blog (``None`` when its URL
    names no blog: the crawl stores no link for it)."""

    friend: Friend
    blog_id: str | None


@dataclass
class BlogReport:
    """Everything :func:`~blogfeeds.extract.blog.extract_blog` read from one blog."""

    url: str
    """Final URL of the home page (after redirects)."""
    blog_id: str
    encoding: str
    """The codec the home page was decoded with."""
    metadata: PageMetadata
    """Title, abstract, language, generator and platform as stored: empty when the page says
    noindex."""
    robots: RobotsDirectives
    """The home page's noindex/nofollow: noindex keeps the blog's identity only (no metadata,
    no feeds), nofollow records no friends."""
    feeds: list[DiscoveredFeed | FeedCandidate]
    """Feeds kept, best first: validated by :func:`~blogfeeds.extract.discovery.find_feeds`, or
    the one a user rule names (a :class:`~blogfeeds.extract.discovery.FeedCandidate`)."""
    rejected: list[Rejection]
    """Every feed candidate found and not kept, with its reason."""
    discovery: FeedReport | None
    """The feed discovery run (``None`` under noindex or when a user rule names the feed)."""
    friends: list[Friend]
    """Friend links, deduped, capped at the configured maximum (``Friend.how`` says which
    layer or rule found each)."""
    friend_extraction: FriendExtraction
    """The extraction of the page the friends were read from: every scored container."""
    friend_source: str
    """The page the friends were read from (the home page or its friend page)."""
    container_score: float
    """The winning container's score on that page (0.0 when there is none)."""
    friend_pages: list[str]
    """Same-blog pages that look like a blogroll, best first (user rules' pages first)."""
    profile: Profile = field(default_factory=Profile)
    """Description, author, icon, last post, activity and checked language
    (:mod:`blogfeeds.extract.profile`): empty under noindex."""
    followed: list[Followed] = field(default_factory=list)
    """Every friend page and data source fetched, in order."""
    invalid_urls: list[str] = field(default_factory=list)
    """Friend URLs of the friend source and its data sources whose host no host may hold
    (:class:`~blogfeeds.extract.identity.InvalidURL`), each once: never a friend, never
    fetched (counter ``invalid_url``)."""
    truncated: list[str] = field(default_factory=list)
    """The bounds the home page reached (``elements``, ``links``: the page was read up to
    there; ``text``: the abstract read its first characters only), then those of the friend
    page the friends come from (``friend_page/links``, ...); empty for a page read whole.
    Each is also counted (``truncated/links``, ``truncated/friend_page/links``, ...)."""
    rules_fired: dict[str, str] = field(default_factory=dict)
    """User rules that fired: what they set (``encoding``, ``feed``, ...) -> rule name."""
    observation: Observation | None = None
    """What the home page says of the blog's addresses (:mod:`blogfeeds.extract.aliases`): its
    signals, its main feed and that feed's entries, as discovery read them (no extra request);
    the address is the final URL (the crawl adds the redirects it followed)."""
    health: Health = field(default_factory=lambda: Health("ok", "read"))
    """What the home page says of the blog's health (:func:`~blogfeeds.extract.health.read_health`):
    a parking page or a bot wall (:data:`~blogfeeds.extract.health.NOT_THE_BLOG`) is reported
    with nothing more read."""
    counters: dict[str, int] = field(default_factory=dict)
    """Counts for the crawl's stats, by name under ``blogfeeds/`` (``feed_discovery/requests``,
    ``feed_discovery/budget_exhausted``, ``friends_over_cap``, ...): a name is present when
    the step that counts it ran, even when it counted 0."""

    @property
    def status(self) -> str:
        """``noindex``, ``ok`` (a feed was kept) or ``no_feed``."""
        return "noindex" if self.robots.noindex else "ok" if self.feeds else "no_feed"

    def edges(self) -> list[FriendEdge]:
        """Every friend with the identity of its blog, in order."""
        return [FriendEdge(f, _blog_id_or_none(f.url)) for f in self.friends]


def _blog_id_or_none(url: str) -> str | None:
    try:
        return blog_id(url)
    except ValueError:
        return None
