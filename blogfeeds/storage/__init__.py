"""Relational storage of blogs, feeds and friend links: SQLite now, MySQL / MariaDB too.

``Store.open("sqlite:///blogfeeds.sqlite3")`` connects, creates or migrates the schema
(:mod:`blogfeeds.storage.schema`) and upserts items in batches (:mod:`blogfeeds.storage.db`).
Which setting names the database and what a URL says of its backend: :mod:`.url`; which errors
a retry may cure: :mod:`.retry`.
"""

from blogfeeds.storage.connection import Connection, connect
from blogfeeds.storage.db import Store
from blogfeeds.storage.schema import MIGRATIONS, SCHEMA_VERSION, Dialect
from blogfeeds.storage.url import redact

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Connection", "Dialect", "Store", "connect", "redact"]
