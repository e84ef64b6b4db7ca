"""Downloader middlewares of blogfeeds: the SSRF guard, crawl limits and retry backoff.

All three are enabled in ``blogfeeds/settings.py`` (``DOWNLOADER_MIDDLEWARES``); each reads its
settings once in ``from_crawler``, into its typed config (:mod:`blogfeeds.config`, where the
defaults and ranges are; ``docs/settings.md``).
"""
