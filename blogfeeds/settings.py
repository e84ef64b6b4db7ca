"""Scrapy settings for blogfeeds.

Every value here is chosen on purpose. The project's own settings (``BLOGFEEDS_*``, and the
deployment switches ``MYSQL_URL`` and ``REDIS_URL``) come from the one configuration table,
:mod:`blogfeeds.config` (defaults, types, ranges, environment variables; ``docs/settings.md``),
each read once by the component that uses it; the deployment switches come from the environment,
so one build serves every node.
"""

from __future__ import annotations

from blogfeeds import config

_defaults = config.defaults()  # lower case: not a setting itself
globals().update(_defaults)

BOT_NAME = "blogfeeds"
SPIDER_MODULES = ["blogfeeds.spiders"]
NEWSPIDER_MODULE = "blogfeeds.spiders"
COMMANDS_MODULE = "blogfeeds.commands"

# --- Politeness --------------------------------------------------------------------------------
# Blogs are small personal sites, often on shared hosting: one request at a time per blog host,
# at least half a second apart, slowed further by AutoThrottle when a host answers slowly.
ROBOTSTXT_OBEY = True
USER_AGENT = config.UserAgentSettings.from_settings(_defaults).user_agent
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
    # An address of the opt-out list (BLOGFEEDS_OPT_OUT) is never requested, robots.txt and
    # favicons included: first, before any other middleware counts or resolves it.
    "blogfeeds.middlewares.optout.OptOutMiddleware": 30,
    # Only http(s), only public addresses (literal ones here, after every redirect; names in
    # the resolver below).
    "blogfeeds.middlewares.ssrf.SsrfGuardMiddleware": 50,
    # A name the resolver refused is stored blocked, not dns, and not retried: after the retry
    # middleware in process_exception order.
    "blogfeeds.middlewares.ssrf.RefusedAddressMiddleware": 560,
    # URL length and per-blog request caps against crawler traps.
    "blogfeeds.middlewares.limits.CrawlLimitsMiddleware": 60,
    # Retries of transient failures wait: exponential backoff, Retry-After honoured.
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "blogfeeds.middlewares.retry.BackoffRetryMiddleware": 550,
    # robots.txt kept in the store for BLOGFEEDS_ROBOTS_MAX_AGE_HOURS, shared by both spiders and
    # every worker; an unreachable one (DNS, refused, timeout) in one DEBUG line, not an ERROR
    # traceback.
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "blogfeeds.middlewares.robotscache.CachedRobotsTxtMiddleware": 100,
    # A page refreshing to itself is the page, not a redirect the duplicate filter drops.
    "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
    "blogfeeds.middlewares.refresh.SelfAwareMetaRefreshMiddleware": 580,
    # A blog's permanent redirect to another blog crawled already still reaches the spider,
    # which stores the address for the store to make it an alias.
    "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": None,
    "blogfeeds.middlewares.aliasredirect.AliasRedirectMiddleware": 600,
}
# The reactor's resolver refuses names answering non-public addresses: the address checked is
# the address connected to (blogfeeds/middlewares/ssrf.py; DNS rebinding gains nothing).
TWISTED_DNS_RESOLVER = "blogfeeds.middlewares.ssrf.GuardedResolver"
# The spiders report each failed blog or feed themselves (INFO, with its status): Scrapy's
# "Gave up retrying" line is DEBUG, not a second report at ERROR.
RETRY_GIVE_UP_LOG_LEVEL = "DEBUG"
# A <meta http-equiv=refresh> is followed when its delay is at most this many seconds.
METAREFRESH_MAXDELAY = 30

# --- Breadth-first walk of the friend-link graph ------------------------------------------------
# No hop limit (Scrapy's own default): the walk ends when the frontier is empty, at
# BLOGFEEDS_MAX_BLOGS, or on Ctrl-C (resumable with JOBDIR or the Redis frontier).
DEPTH_LIMIT = 0
DEPTH_PRIORITY = 1
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
# BLOGFEEDS_STRATEGY (blogfeeds/crawl/order.py) orders the frontier; its priority supersedes
# DEPTH_PRIORITY for blog home pages.
SPIDER_MIDDLEWARES = {
    # Depth is the spider's: a friend offered again at a shorter depth keeps it
    # (blogfeeds/crawl/depth.py)
    "scrapy.spidermiddlewares.depth.DepthMiddleware": None,
    "blogfeeds.crawl.depth.HopDepthMiddleware": 900,
    "blogfeeds.crawl.order.StrategyMiddleware": 750,  # after the depth middleware
}
DOWNLOADER_MIDDLEWARES["blogfeeds.crawl.order.StaleRequestMiddleware"] = 40  # drops stale re-pushes

# --- Storage ------------------------------------------------------------------------------------
ITEM_PIPELINES = {
    "blogfeeds.pipelines.dedupe.BlogDedupePipeline": 100,
    "blogfeeds.pipelines.blogs.StoragePipeline": 300,
}
DEFAULT_DROPITEM_LOG_LEVEL = "DEBUG"
# Outputs of one response processed at once. Scrapy starts this many asyncio tasks for every
# response (default 100); a page yields a blog, its friend links and requests, and nothing of
# theirs waits on I/O but a storage flush once per batch: 8 are ample, and the tasks of the
# other 92 cost about a tenth of a crawl's CPU (bench/README.md).
CONCURRENT_ITEMS = 8

# --- Shared frontier (Redis) --------------------------------------------------------------------
# On when REDIS_URL is in the environment (redis://:password@host:6379/0): several crawl
# processes, on any machines, share one queue, one dupefilter and one set of blog ids
# (blogfeeds/frontier/; docs/redis.md). Off: Scrapy's own scheduler.
if _defaults["REDIS_URL"]:
    SCHEDULER = "blogfeeds.frontier.scheduler.Scheduler"
    # Must be scrapy-redis's (or a subclass): Scrapy's own crashes its scheduler at start-up.
    DUPEFILTER_CLASS = "blogfeeds.frontier.dupefilter.RFPDupeFilter"
    SCHEDULER_QUEUE_CLASS = "scrapy_redis.queue.PriorityQueue"
    # JSON, not pickle: a request read from Redis cannot run code on the worker.
    SCHEDULER_SERIALIZER = "blogfeeds.frontier.serializer.JsonRequestSerializer"
    SCHEDULER_PERSIST = True  # a stopped crawl resumes where it was
    SCHEDULER_IDLE_BEFORE_CLOSE = 0
    # Seconds a worker with nothing to do waits for work before closing; 0 = never.
    MAX_IDLE_TIME_BEFORE_CLOSE = 0

# --- Crawl summary (blogfeeds/extensions/summary.py; `scrapy stats` prints it from the database)
EXTENSIONS = {
    "blogfeeds.extensions.summary.CrawlSummary": 500,
    # The reactor's longest stall and the process's peak RSS, as stats.
    "blogfeeds.extensions.health.ReactorHealth": 510,
    # One row per closed run in the database's `runs` table (the site's overview shows them).
    "blogfeeds.extensions.runs.RunRecorder": 520,
    # Bad BLOGFEEDS_* values, database URL or SQLite file, REDIS_URL, Redis down: one ERROR
    # line before the crawl opens anything; an unknown BLOGFEEDS_* setting: a WARNING.
    "blogfeeds.extensions.startup.StartupCheck": 0,
}

FEED_EXPORT_ENCODING = "utf-8"
