"""Downloader middlewares of blogfeeds: the SSRF guard, crawl limits, retry backoff, a quiet
robots.txt and a meta refresh that keeps a page refreshing to itself.

All are enabled in ``blogfeeds/settings.py`` (``DOWNLOADER_MIDDLEWARES``); each reads its
settings once in ``from_crawler``, into its typed config (:mod:`blogfeeds.config`, where the
defaults and ranges are; ``docs/settings.md``).
"""
