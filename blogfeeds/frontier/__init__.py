"""The shared Redis frontier: several crawl processes, on any machines, crawl from one queue.

Built on scrapy-redis 0.9.1 and laid out like it: :mod:`~blogfeeds.frontier.defaults` (key
names and default values), :mod:`~blogfeeds.frontier.connection`,
:mod:`~blogfeeds.frontier.serializer` (requests as JSON, not pickle),
:mod:`~blogfeeds.frontier.dupefilter`, :mod:`~blogfeeds.frontier.scripts` (the Lua scripts),
:mod:`~blogfeeds.frontier.scheduler` with :mod:`~blogfeeds.frontier.leases` (in-flight requests)
and :mod:`~blogfeeds.frontier.outage` (Redis unreachable mid-crawl),
:mod:`~blogfeeds.frontier.spiders` (the spider mixin) and :mod:`~blogfeeds.frontier.signals`
(storage durability, sent by the storage pipeline).

On when ``REDIS_URL`` is in the environment (``blogfeeds/settings.py`` then sets ``SCHEDULER``,
``DUPEFILTER_CLASS`` and ``SCHEDULER_SERIALIZER`` to this package's classes).

Beyond scrapy-redis, the frontier is at-least-once under a hard kill (SIGKILL, OOM): a popped
request stays recorded in its worker's in-flight hash until its items are durable, and a
worker restarted with the same ``BLOGFEEDS_WORKER_ID`` queues its previous run's in-flight
requests again. Enqueueing marks a request seen and queues it in one Lua call, so no request is
marked seen without being queued.

Security: anyone who can write to these keys chooses what every worker fetches (and, with
scrapy-redis's default pickle serializer, runs code on every worker); entries are rebuilt only
as far as this project writes them (:func:`~blogfeeds.frontier.serializer.request_from_entry`),
but keep Redis private and password-protected (docs/redis.md, "Security").
"""
