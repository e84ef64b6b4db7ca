"""The parts of ``scrapy crawl feeds`` that the spider routes between (the spider is
:mod:`blogfeeds.spiders.feeds`; when to fetch again is :mod:`blogfeeds.revisit`):

- :mod:`~blogfeeds.feeds.config`: the crawl's settings, read once;
- :mod:`~blogfeeds.feeds.clock`: the (virtual) time of the run;
- :mod:`~blogfeeds.feeds.claims`: this worker's leases on due feeds: claims, refills, releases;
- :mod:`~blogfeeds.feeds.hostqueue`: claimed feeds queued by host, one request per host at a time;
- :mod:`~blogfeeds.feeds.response`: what one response comes to (the revisit outcome, the
  stored status, the new entries);
- :mod:`~blogfeeds.feeds.item`: the item the pipeline stores, the revisit policy applied.
"""
