"""Relational storage of blogs, feeds and friend links: SQLite now, MySQL / MariaDB too.

``Store.open("sqlite:///blogfeeds.sqlite3")`` connects, creates or migrates the schema
(:mod:`blogfeeds.storage.schema`) and upserts items in batches (:mod:`blogfeeds.storage.db`).
"""

from blogfeeds.storage.db import Connection, Store, connect, redact
from blogfeeds.storage.schema import MIGRATIONS, SCHEMA_VERSION, Dialect

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Connection", "Dialect", "Store", "connect", "redact"]
