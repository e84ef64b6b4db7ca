"""Item pipelines, one per module.

``scrapy crawl blogs`` (``ITEM_PIPELINES`` in :mod:`blogfeeds.settings`):
:class:`~blogfeeds.pipelines.dedupe.BlogDedupePipeline` (100) drops a repeated blog, then
:class:`~blogfeeds.pipelines.blogs.StoragePipeline` (300) stores blogs, feeds and friend links in
batches, spooling what the database refuses (:mod:`blogfeeds.pipelines.spool`).
``scrapy crawl feeds`` (the spider's ``custom_settings``):
:class:`~blogfeeds.pipelines.feeds.FeedStorePipeline` stores each feed fetch.
"""
