"""Scrapy extensions of blogfeeds (built by ``from_crawler``, listed in ``EXTENSIONS``)."""
