"""The blogs crawl around extraction: whether a blog reached through a link is requested and
when (:mod:`.admission`, :mod:`.depth`, :mod:`.caps`, :mod:`.order`, :mod:`.seen`), seeds and the
one form of a URL the crawl schedules (:mod:`.seeds`, :mod:`.urls`), and reading an answered
home page (:mod:`.fetch`). The spider (:mod:`blogfeeds.spiders.blogs`) routes between them; the
shared Redis books are the frontier's (:mod:`blogfeeds.frontier`)."""
