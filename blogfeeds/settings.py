"""Scrapy settings for blogfeeds.

Every value here is chosen on purpose; ``BLOGFEEDS_*`` settings are this project's own and are
read once by the component that uses them. Deployment switches come from the environment
(``BLOGFEEDS_DATABASE_URL``, ``MYSQL_URL``, ``REDIS_URL``) so one build serves every node.
"""

from __future__ import annotations

import os

BOT_NAME = "blogfeeds"
SPIDER_MODULES = ["blogfeeds.spiders"]
NEWSPIDER_MODULE = "blogfeeds.spiders"
COMMANDS_MODULE = "blogfeeds.commands"

# --- Politeness --------------------------------------------------------------------------------
# Blogs are small personal sites, often on shared hosting: one request at a time per blog host,
# at least half a second apart, slowed further by AutoThrottle when a host answers slowly.
ROBOTSTXT_OBEY = True
BLOGFEEDS_CONTACT_URL = os.environ.get(
    "BLOGFEEDS_CONTACT_URL", "https://github.com/blogfeeds/blogfeeds"
)
USER_AGENT = f"blogfeeds/0.1 (+{BLOGFEEDS_CONTACT_URL})"
CONCURRENT_REQUESTS = 32
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_DELAY = 0.5
RANDOMIZE_DOWNLOAD_DELAY = True
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.5
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
DOWNLOAD_TIMEOUT = 20
RETRY_TIMES = 2
REDIRECT_MAX_TIMES = 5
DOWNLOAD_MAXSIZE = 8 * 1024 * 1024
DOWNLOAD_WARNSIZE = 2 * 1024 * 1024
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
# Scrapy 2.19's RemoteControl runs Python sent to it: never on crawl workers.
REMOTE_CONTROL_ENABLED = False

# --- Breadth-first walk of the friend-link graph ------------------------------------------------
DEPTH_LIMIT = 3
DEPTH_PRIORITY = 1
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
# Blogs stored at most (0 = no cap).
BLOGFEEDS_MAX_BLOGS = 0
# Pages fetched per blog for discovery (home page, friend-link page, ...).
BLOGFEEDS_MAX_PAGES_PER_BLOG = 3
# Keep blogs without a feed (status=no_feed). False restores the original design: feeds only.
BLOGFEEDS_KEEP_BLOGS_WITHOUT_FEED = True

# --- Storage ------------------------------------------------------------------------------------
# A database URL: sqlite:///path (the default, embedded) or, later, mysql://user:pass@host/db.
BLOGFEEDS_DATABASE_URL = os.environ.get("BLOGFEEDS_DATABASE_URL", "sqlite:///blogfeeds.sqlite3")
ITEM_PIPELINES = {
    "blogfeeds.pipelines.BlogDedupePipeline": 100,
    "blogfeeds.pipelines.StoragePipeline": 300,
}
# Rows per transaction; a failed batch is retried at later flushes, then spooled to a JSON-lines
# file (loaded again by the next run) after this many attempts or at close.
BLOGFEEDS_DB_BATCH_SIZE = 500
BLOGFEEDS_DB_MAX_ATTEMPTS = 3
BLOGFEEDS_SPOOL_PATH = "blogfeeds-spool.jsonl"
DEFAULT_DROPITEM_LOG_LEVEL = "DEBUG"

# --- Extractors ---------------------------------------------------------------------------------
# Scoring rules, ordered like middleware dicts: {dotted path: order}; None disables a rule.
# (filled in by blogfeeds.extract.feeds / blogfeeds.extract.friends)
# Feed autodiscovery (blogfeeds.extract.feeds.find_feeds): "blogfeeds" = the staged, validated
# pipeline (Link header, <link>/<a> alternates, feed-like anchors, platform paths, guesses, one
# hop; every candidate validated by content); "original" = the original page-only <link> rule
# (RSS/Atom types, out of 10, -3 without rel=alternate, -5 comments, -5 rpc/rsd), nothing fetched.
BLOGFEEDS_FEED_RULESET = "blogfeeds"
# Rules of the "blogfeeds" set, in order (mirrors blogfeeds.extract.feeds.DEFAULT_FEED_RULES; the
# original set is ORIGINAL_FEED_RULES there). Disabling a stage rule (AnchorHints, PlatformPaths,
# GuessedPaths, OneHop) switches that stage off.
BLOGFEEDS_FEED_SCORERS: dict[str, int | None] = {
    "blogfeeds.extract.feeds.FeedTypes": 100,
    "blogfeeds.extract.feeds.AnchorHints": 110,
    "blogfeeds.extract.feeds.PlatformPaths": 120,
    "blogfeeds.extract.feeds.GuessedPaths": 130,
    "blogfeeds.extract.feeds.OneHop": 140,
    "blogfeeds.extract.feeds.NotAFeed": 150,
    "blogfeeds.extract.feeds.NoAlternate": 200,
    "blogfeeds.extract.feeds.CommentsFeed": 300,
    "blogfeeds.extract.feeds.CommentsTitle": 310,
    "blogfeeds.extract.feeds.PerPostFeed": 320,
    "blogfeeds.extract.feeds.RpcRsdLink": 400,
    "blogfeeds.extract.feeds.TaxonomyFeed": 450,
    "blogfeeds.extract.feeds.OtherSite": 500,
}
# Per-blog budget of feed discovery: requests (403 retries and a meta-refresh hop included) and
# seconds of fetch time (a request still running at the cap is cancelled).
BLOGFEEDS_FEED_MAX_REQUESTS = 10
BLOGFEEDS_FEED_MAX_FETCH_SECONDS = 10.0
# User-Agent of the one retry after a 403 to ours (servers that block "bot" agents); "" disables.
BLOGFEEDS_FEED_RETRY_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0 Safari/537.36"
)
# Friend links: "blogfeeds" = the layered extractor (machine-readable blogrolls, widget and
# theme rules as data, the statistical container detector, filters); "original" = the original
# container formula alone (blogfeeds.extract.friends.ORIGINAL_FRIEND_RULES as scorers).
BLOGFEEDS_FRIEND_RULESET = "blogfeeds"
# The statistical layer's container rules: (external - internal) x 1000, link-text and
# link-density factors, repeated cards, page chrome, distinct friends, under 1000 rejected.
BLOGFEEDS_FRIEND_SCORERS: dict[str, int | None] = {
    "blogfeeds.extract.friends.LinkBalance": 100,
    "blogfeeds.extract.friends.LinkTextRatio": 200,
    "blogfeeds.extract.friends.LinkDensity": 300,
    "blogfeeds.extract.friends.CardRepetition": 400,
    "blogfeeds.extract.friends.ChromeZone": 500,
    "blogfeeds.extract.friends.DistinctFriends": 600,
    "blogfeeds.extract.friends.MinimumScore": 900,
}

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = os.environ.get("BLOGFEEDS_LOG_LEVEL", "INFO")
