"""Pure extractors: functions of ``(url, body, headers)`` returning dataclasses.

Nothing in this package imports Scrapy; spiders, ``scrapy inspect`` and the tests call the same
functions.
"""
