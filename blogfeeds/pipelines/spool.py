"""The spool file: items the database refused, kept for the next run (JSON Lines).

One record per line, ``{"type": <item class>, "item": {field: value}}`` (``Blog``,
``FriendLink``, ``BlogAddress``, ``BlogCheck``)
(:func:`spool_record`), written as ASCII JSON so that any ``str`` survives (a lone surrogate
included). :class:`~blogfeeds.pipelines.blogs.StoragePipeline` appends to it
(:func:`append_spool`) and loads it back when it opens (:func:`read_spool`, then
:func:`replace_spool` with the records refused again); :func:`read_spool` also serves a replay
by hand (:meth:`blogfeeds.storage.db.Store.write`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from blogfeeds.items import Blog, BlogAddress, BlogCheck, FeedInfo, FriendLink

logger = logging.getLogger(__name__)

StoredItem = Blog | FriendLink | BlogAddress | BlogCheck
"""An item the storage pipeline writes, and so one a spool file holds."""


def spool_record(item: StoredItem) -> dict[str, Any]:
    """One spool line: ``{"type": <the item's class>, "item": {field: value}}``."""
    return {"type": type(item).__name__, "item": asdict(item)}


def read_spool(path: str | Path, *, skip_malformed: bool = False) -> list[StoredItem]:
    """The items of a spool file, in order, ready for :meth:`Store.write` (replay).

    Raises ``ValueError`` naming the line of a malformed record; with ``skip_malformed`` such
    a record is logged (ERROR) and skipped instead.
    """
    items: list[StoredItem] = []
    with Path(path).open(encoding="utf-8") as spool:
        for number, line in enumerate(spool, 1):
            if not line.strip():
                continue
            try:
                items.append(_spool_item(line, f"{path}:{number}"))
            except ValueError as exc:
                if not skip_malformed:
                    raise
                logger.error("skipping a spool record: %s", exc)
    return items


def append_spool(path: Path, items: Iterable[StoredItem]) -> None:
    """Append ``items`` to the spool file at ``path`` (made with its directory when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as spool:
        for item in items:
            spool.write(json.dumps(spool_record(item)) + "\n")


def replace_spool(path: Path, items: list[StoredItem]) -> None:
    """Make the spool file at ``path`` hold exactly ``items`` (atomically: a temporary file
    renamed over it), or remove it when there are none."""
    if not items:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as spool:
        for item in items:
            spool.write(json.dumps(spool_record(item)) + "\n")
    tmp.replace(path)


def _spool_item(line: str, where: str) -> StoredItem:
    try:
        record = json.loads(line)
        fields = record["item"]
        fields.pop("type", None)  # the item's record type names its class: not an argument
        if record["type"] == "Blog":
            feeds = [FeedInfo(**feed) for feed in fields.pop("feeds")]
            return Blog(**fields, feeds=feeds)
        if record["type"] == "FriendLink":
            return FriendLink(**fields)
        if record["type"] == "BlogAddress":
            return BlogAddress(**fields)
        if record["type"] == "BlogCheck":
            return BlogCheck(**fields)
        raise ValueError(f"unknown type {record['type']!r}")
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{where}: malformed spool record: {exc}") from exc
