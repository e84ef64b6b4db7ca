"""The frontier's dupefilter: scrapy-redis's shared SET of fingerprints, with our fingerprint.

scrapy-redis 0.9.1 fingerprints requests itself (``sha1`` of method, ``canonicalize_url`` and
body) and ignores ``REQUEST_FINGERPRINTER_CLASS``, so the URL normalisation and blog identity
that make one blog one request have to be in the dupefilter's ``request_fingerprint``.
"""

from __future__ import annotations

from hashlib import sha1
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import scrapy
from scrapy_redis import dupefilter as redis_dupefilter
from w3lib.url import canonicalize_url

from blogfeeds.frontier.connection import redis_prefix, server, worker_id
from blogfeeds.frontier.defaults import FrontierKeys

_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_url(url: str) -> str:
    """The URL the dupefilter compares: w3lib ``canonicalize_url`` (sorted query, no fragment,
    percent-escapes normalised, IDNA host) plus lower-case scheme and host, no default port and
    ``/`` for an empty path."""
    parts = urlsplit(canonicalize_url(url))
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    netloc = host if parts.port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{parts.port}"
    if parts.username or parts.password:
        netloc = parts.netloc.rsplit("@", 1)[0] + "@" + netloc
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def blog_fingerprint(blog: str) -> str:
    """The dupefilter's fingerprint of the home-page request of ``blog`` (a blog id)."""
    return sha1(f"blog {blog}".encode(), usedforsecurity=False).hexdigest()


def forget_blog(redis: Any, keys: FrontierKeys, blog: str) -> None:
    """Make the frontier forget that it crawled ``blog``: its home page's fingerprint, its
    shared depth and its blog-id claim (``scrapy seed --recrawl``), so that a seed of it is
    fetched and stored again. One transaction."""
    pipe = redis.pipeline(transaction=True)
    pipe.srem(keys.dupefilter, blog_fingerprint(blog))
    pipe.hdel(keys.depths, blog)
    pipe.hdel(keys.friends, blog)
    pipe.hdel(keys.blog_ids, blog)
    pipe.execute()


class RFPDupeFilter(redis_dupefilter.RFPDupeFilter):
    """The scrapy-redis dupefilter (a Redis SET of SHA-1 hex fingerprints, ≈ 80 B each) with our
    fingerprint and key prefix.

    Fingerprint: ``sha1("blog " + blog_id)`` for a blog's home-page request (``meta["blog_id"]``
    set and not a redirect), so ``http://a.example/`` and ``https://www.a.example/`` are one
    request on every worker; otherwise ``sha1(method, normalize_url(url), body)``.
    """

    @classmethod
    def from_spider(cls, spider: Any) -> RFPDupeFilter:
        settings = spider.settings
        keys = FrontierKeys(redis_prefix(settings), spider.name, worker_id(settings))
        return cls(
            server(settings), key=keys.dupefilter, debug=settings.getbool("DUPEFILTER_DEBUG")
        )

    def request_fingerprint(self, request: scrapy.Request) -> str:
        blog = request.meta.get("blog_id")
        if blog and not request.meta.get("redirect_urls"):
            return blog_fingerprint(blog)
        body = (request.body or b"").hex()
        basis = f"{request.method} {normalize_url(request.url)} {body}"
        return sha1(basis.encode("utf-8"), usedforsecurity=False).hexdigest()
