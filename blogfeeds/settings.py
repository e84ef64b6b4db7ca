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
# Each delay is randomised between 0.5x and 1.5x (the default jitter of 0.5, stated here).
DOWNLOAD_DELAY_JITTER = 0.5
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 0.5
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
DOWNLOAD_TIMEOUT = 20
RETRY_TIMES = 2
REDIRECT_MAX_TIMES = 5
# Size caps (compressed and decompressed): a blog page is rarely over 1 MB; a 1 GB "feed" is
# refused from its Content-Length, a body without one is cut at the cap, a gzip bomb is stopped
# while decompressing (status too_large).
DOWNLOAD_MAXSIZE = 8 * 1024 * 1024
DOWNLOAD_WARNSIZE = 2 * 1024 * 1024
COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
# Scrapy 2.19's RemoteControl runs Python sent to it: never on crawl workers.
REMOTE_CONTROL_ENABLED = False

# --- Robustness and security (blogfeeds/middlewares/; README "Robustness and security") -------
DOWNLOADER_MIDDLEWARES = {
    # Only http(s), only public addresses (checked on the resolved IP, after every redirect).
    "blogfeeds.middlewares.ssrf.SsrfGuardMiddleware": 50,
    # URL length and per-blog request caps against crawler traps.
    "blogfeeds.middlewares.limits.CrawlLimitsMiddleware": 60,
    # Retries of transient failures wait: exponential backoff, Retry-After honoured.
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "blogfeeds.middlewares.retry.BackoffRetryMiddleware": 550,
    # An unreachable robots.txt (DNS, refused, timeout) in one DEBUG line, not an ERROR traceback.
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "blogfeeds.middlewares.robots.QuietRobotsTxtMiddleware": 100,
}
# The spiders report each failed blog or feed themselves (INFO, with its status): Scrapy's
# "Gave up retrying" line is DEBUG, not a second report at ERROR.
RETRY_GIVE_UP_LOG_LEVEL = "DEBUG"
# True lets the crawler fetch loopback/private/link-local targets: tests and local use only.
_ALLOW_PRIVATE = os.environ.get("BLOGFEEDS_ALLOW_PRIVATE_TARGETS", "")
BLOGFEEDS_ALLOW_PRIVATE_TARGETS = _ALLOW_PRIVATE.lower() in ("1", "true", "yes")
BLOGFEEDS_MAX_URL_LENGTH = 2083
# Requests per blog identity (home, friend pages, feed candidates, robots.txt, retries); 0 = no cap.
BLOGFEEDS_MAX_REQUESTS_PER_BLOG = 50
# Friend links read from one page (the rest are ignored and counted).
BLOGFEEDS_MAX_FRIENDS_PER_PAGE = 500
BLOGFEEDS_RETRY_BACKOFF_BASE = 1.0
BLOGFEEDS_RETRY_BACKOFF_MAX = 30.0
# A <meta http-equiv=refresh> is followed when its delay is at most this many seconds.
METAREFRESH_MAXDELAY = 30

# --- Breadth-first walk of the friend-link graph ------------------------------------------------
DEPTH_LIMIT = 3
DEPTH_PRIORITY = 1
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
# Crawl strategy (blogfeeds/strategies.py; README "Crawl strategies"): the order the frontier is
# walked in: "bfs" (the original breadth-first walk), "dfs", "backlinks" (in-degree so far),
# "opic" (On-line Page Importance Computation) or "big-site-first". Its priority supersedes
# DEPTH_PRIORITY for blog home pages; the log reports the frontier size every interval (s).
BLOGFEEDS_STRATEGY = "bfs"
BLOGFEEDS_STRATEGY_LOG_INTERVAL = 60.0
SPIDER_MIDDLEWARES = {"blogfeeds.strategies.StrategyMiddleware": 750}  # after DepthMiddleware
DOWNLOADER_MIDDLEWARES["blogfeeds.strategies.StaleRequestMiddleware"] = 40  # drops stale re-pushes
# Blogs stored at most (0 = no cap).
BLOGFEEDS_MAX_BLOGS = 0
# Blog ids a process remembers exactly, per seen-set (at most twice this are held, ~110 bytes
# each; older ones are left to the duplicate filter, Redis and the database's unique key).
# 0 = unbounded. blogfeeds/seen.py.
BLOGFEEDS_SEEN_CAPACITY = 250_000
# Pages fetched per blog for discovery (home page, friend-link page, ...).
BLOGFEEDS_MAX_PAGES_PER_BLOG = 3
# Keep blogs without a feed (status=no_feed). False restores the original design: feeds only.
BLOGFEEDS_KEEP_BLOGS_WITHOUT_FEED = True

# --- Storage ------------------------------------------------------------------------------------
# A database URL: sqlite:///path (the default, embedded) or mysql://user:pass@host:port/db.
BLOGFEEDS_DATABASE_URL = os.environ.get("BLOGFEEDS_DATABASE_URL", "sqlite:///blogfeeds.sqlite3")
# MySQL 8 / MariaDB (PyMySQL, utf8mb4): when set, it wins over BLOGFEEDS_DATABASE_URL.
MYSQL_URL = os.environ.get("MYSQL_URL")
ITEM_PIPELINES = {
    "blogfeeds.pipelines.BlogDedupePipeline": 100,
    "blogfeeds.pipelines.StoragePipeline": 300,
}
# Rows per transaction; a failed batch is retried at later flushes, then spooled to a JSON-lines
# file (loaded again by the next run) after this many attempts or at close.
BLOGFEEDS_DB_BATCH_SIZE = 500
BLOGFEEDS_DB_MAX_ATTEMPTS = 3
BLOGFEEDS_SPOOL_PATH = "blogfeeds-spool.jsonl"
# Seconds between timed flushes of a partly filled batch (0 = only when full and at close).
BLOGFEEDS_DB_FLUSH_INTERVAL = 2.0
# MySQL: seconds of lost/refused connections (retried with backoff) before the crawl stops,
# with everything unwritten in the spool file.
BLOGFEEDS_DB_DOWN_LIMIT = 60.0
DEFAULT_DROPITEM_LOG_LEVEL = "DEBUG"

# --- Shared frontier (Redis) --------------------------------------------------------------------
# On when REDIS_URL is in the environment (redis://:password@host:6379/0): several crawl
# processes, on any machines, share one queue, one dupefilter and one set of blog ids
# (blogfeeds/redis_compat.py; README "Many machines with Redis"). Off: Scrapy's own scheduler.
REDIS_URL = os.environ.get("REDIS_URL")
# Put before every Redis key, so that crawls (and tests) can share one Redis.
BLOGFEEDS_REDIS_PREFIX = os.environ.get("BLOGFEEDS_REDIS_PREFIX", "blogfeeds:")
# A restarted worker re-queues the in-flight requests left by its predecessor of the same id;
# default: the host name. Several workers on one host need distinct ids.
BLOGFEEDS_WORKER_ID = os.environ.get("BLOGFEEDS_WORKER_ID", "")
BLOGFEEDS_WORKER_TTL = 15.0
# Seconds of Redis outage (new requests held in memory meanwhile) before the crawl stops with
# finish reason redis_down (exit status 1); the same worker id then resumes what was in flight.
BLOGFEEDS_REDIS_DOWN_LIMIT = 60.0
if REDIS_URL:
    SCHEDULER = "blogfeeds.redis_compat.Scheduler"
    # Must be scrapy-redis's (or a subclass): Scrapy's own crashes its scheduler at start-up.
    DUPEFILTER_CLASS = "blogfeeds.redis_compat.RFPDupeFilter"
    SCHEDULER_QUEUE_CLASS = "scrapy_redis.queue.PriorityQueue"
    # JSON, not pickle: a request read from Redis cannot run code on the worker.
    SCHEDULER_SERIALIZER = "blogfeeds.redis_compat.JsonRequestSerializer"
    SCHEDULER_PERSIST = True  # a stopped crawl resumes where it was
    SCHEDULER_IDLE_BEFORE_CLOSE = 0
    # Seconds a worker with nothing to do waits for work before closing; 0 = never.
    MAX_IDLE_TIME_BEFORE_CLOSE = 0

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
# The layered extractor's layers, {dotted path: order} over
# blogfeeds.extract.friends.FRIEND_LAYERS_BASE (add one, move one, disable one with None).
BLOGFEEDS_FRIEND_LAYERS: dict[str, int | None] = {}
# The container scorers, {dotted path: order} over blogfeeds.extract.friends.FRIEND_SCORERS_BASE
# ((external - internal) x 1000, link-text and link-density factors, repeated cards, page
# chrome, distinct friends, under 1000 rejected) or, for "original", ORIGINAL_FRIEND_RULES.
BLOGFEEDS_FRIEND_SCORERS: dict[str, int | None] = {}
# User extraction rules (TOML; blogfeeds/data/rules.example.toml, README "Your own extraction
# rules"): per blog, host or theme fingerprint, they set the encoding, feed, abstract, friend
# pages and friend cards before the built-in rules. Empty = none. A bad file stops the start-up.
BLOGFEEDS_RULES_FILE = os.environ.get("BLOGFEEDS_RULES_FILE", "")

# --- Crawl summary (blogfeeds/extensions/summary.py; `scrapy stats` prints it from the database)
EXTENSIONS = {
    "blogfeeds.extensions.summary.CrawlSummary": 500,
    # Bad BLOGFEEDS_* values, database URL or SQLite file, BLOGFEEDS_STRATEGY, REDIS_URL, Redis
    # down: one ERROR line before the crawl opens anything.
    "blogfeeds.extensions.startup.StartupCheck": 0,
}
BLOGFEEDS_SUMMARY_ENABLED = True
BLOGFEEDS_SUMMARY_TOP = 10  # most linked blogs listed

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = os.environ.get("BLOGFEEDS_LOG_LEVEL", "INFO")

# --- Feed revisits (scrapy crawl feeds) ----------------------------------------------------------
# Revisit policy (blogfeeds.revisit): "levels" = the original five levels (20, 200, 1000, 2000,
# 10000 min; T / 1.2 on change, x 1.2 otherwise); "estimate" = posting-rate estimate with the
# square-root allocation of a fetch budget (README "Keeping feeds fresh").
BLOGFEEDS_REVISIT_POLICY = "levels"
# "estimate": fetches per feed per day on average, over all feeds.
BLOGFEEDS_REVISIT_BUDGET = 3.0
# "estimate": snap every interval to the nearest of the five levels.
BLOGFEEDS_REVISIT_LEVEL_MODE = False
# RssRank of newly scheduled feeds, 0..5 (each rank = one level down, fetched more often), or
# "auto": from how many other blogs' friend links point at the blog (2, 5, 10, 25, 50 -> 1..5).
# The stored column schedule.rank_score is user-settable and always wins.
BLOGFEEDS_REVISIT_RANK: int | str = 0
# "levels": T (minutes) of a new feed; 1000 = Level[3].
BLOGFEEDS_REVISIT_INITIAL_T = 1000
# Keep running and sleep until the next feed is due (long-lived scrapyd workers); -a loop=true.
BLOGFEEDS_FEEDS_LOOP = False
# Due feeds leased per claim (small, so that several workers share a backlog); loop mode:
# longest sleep (seconds) before looking for new feeds.
BLOGFEEDS_FEEDS_BATCH = 50
BLOGFEEDS_FEEDS_MAX_SLEEP = 60.0
# Virtual "now" (ISO 8601 UTC) at spider start, for tests and replays; empty = the real clock.
BLOGFEEDS_NOW = os.environ.get("BLOGFEEDS_NOW", "")
