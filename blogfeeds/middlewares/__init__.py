"""Downloader middlewares of blogfeeds: the SSRF guard, crawl limits and retry backoff.

All three are enabled in ``blogfeeds/settings.py`` (``DOWNLOADER_MIDDLEWARES``); each reads its
``BLOGFEEDS_*`` settings once in ``from_crawler``.
"""
