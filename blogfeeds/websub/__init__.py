"""WebSub (W3C Recommendation, 2018) subscriber: push instead of polling for feeds with a hub.

- :mod:`~blogfeeds.websub.subscriber`: the protocol rules (requests, verification of intent,
  content distribution), on one database connection;
- :mod:`~blogfeeds.websub.service`: the callback endpoint and upkeep loop (``scrapy websub``);
- :mod:`~blogfeeds.websub.client`: requests to hubs behind the SSRF guard;
- :mod:`~blogfeeds.websub.signature`: ``X-Hub-Signature``.

Discovery is :mod:`blogfeeds.extract.feedreader.websub`, storage :mod:`blogfeeds.storage.websub`,
the polling of subscribed feeds :mod:`blogfeeds.revisit.push`; docs/websub.md.
"""
