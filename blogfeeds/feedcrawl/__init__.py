"""The parts of ``scrapy crawl feeds`` that the spider routes between (the spider is
:mod:`blogfeeds.spiders.feeds`; when to fetch again is :mod:`blogfeeds.revisit`):

- :mod:`~blogfeeds.feedcrawl.config`: the crawl's settings, read once;
- :mod:`~blogfeeds.feedcrawl.clock`: the (virtual) time of the run;
- :mod:`~blogfeeds.feedcrawl.claims`: this worker's leases on due feeds: claims, refills,
  releases;
- :mod:`~blogfeeds.feedcrawl.hostqueue`: claimed feeds queued by host, one request per host at a
  time;
- :mod:`~blogfeeds.feedcrawl.response`: what one response comes to (the revisit outcome, the
  stored status, the new entries);
- :mod:`~blogfeeds.feedcrawl.item`: the item the pipeline stores, the revisit policy applied.
"""
