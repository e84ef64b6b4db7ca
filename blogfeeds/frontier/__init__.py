"""The shared Redis frontier: several crawl processes, on any machines, crawl from one queue.

Built on scrapy-redis 0.9.1 and laid out like it: :mod:`~blogfeeds.frontier.defaults` (key
names and default values), :mod:`~blogfeeds.frontier.connection`,
:mod:`~blogfeeds.frontier.serializer` (requests as JSON, not pickle),
:mod:`~blogfeeds.frontier.dupefilter`, :mod:`~blogfeeds.frontier.scripts` (the Lua scripts),
:mod:`~blogfeeds.frontier.scheduler` with :mod:`~blogfeeds.frontier.leases` (in-flight requests)
and :mod:`~blogfeeds.frontier.outage` (Redis unreachable mid-crawl),
:mod:`~blogfeeds.frontier.spiders` (the spider mixin) and :mod:`~blogfeeds.frontier.signals`
(storage durability, sent by the storage pipeline). On when ``REDIS_URL`` is in the environment
(``blogfeeds/settings.py`` then sets ``SCHEDULER``, ``DUPEFILTER_CLASS`` and
``SCHEDULER_SERIALIZER`` to this package's classes).

Beyond scrapy-redis, the frontier is at-least-once under a hard kill (SIGKILL, OOM), and entries
are rebuilt only as far as this project writes them: docs/redis.md.
"""
