"""What one feed response comes to: the revisit policy's input (:class:`FetchOutcome`), the
stored status and the entries to store.

- a 304 is ``not_modified``; any other status outside 2xx is an HTTP error, or ``throttled``
  (429, 503 with Retry-After), with the response's Retry-After and freshness hints;
- a 2xx body is read by the feed reader (:func:`~blogfeeds.extract.feedreader.read_document`);
  a body that is not a feed (an HTML page, text, nothing, ill-formed XML without an entry) is
  a failure with status ``html``, ``other``, ``empty`` or ``broken``, never an empty feed;
- the entries whose keys the feed's seen summary lacks are new; when they are old entries
  re-keyed (a GUID rewrite, :func:`~blogfeeds.revisit.is_guid_rewrite`) only those newer than
  anything seen are stored, as the policies count them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from blogfeeds.extract.feedreader import FeedEntry, read_document
from blogfeeds.extract.feedreader.websub import WebSubLinks, websub_links
from blogfeeds.failures import REASON_CHARS, status_for_code
from blogfeeds.revisit import (
    FeedState,
    FetchOutcome,
    cache_lifetime,
    is_guid_rewrite,
    parse_retry_after,
    split_new_ids,
)
from blogfeeds.revisit.core import classify
from blogfeeds.revisit.hints import header

logger = logging.getLogger(__name__)

PERMANENT_REDIRECTS = frozenset({301, 308})
_NOT_A_FEED = {
    "html": "a web page, not a feed",
    "other": "not a feed",
    "empty": "an empty body",
    "broken": "ill-formed XML without an entry",
}
"""The error of a body that is not a feed, by the feed reader's ``kind``."""


@dataclass(frozen=True)
class FetchRead:
    """What one response (or a fetch that got none) came to."""

    outcome: FetchOutcome
    status: str
    """The stored status (:attr:`blogfeeds.items.FeedFetch.status`)."""
    entries: list[FeedEntry] = field(default_factory=list)
    """The entries to store."""
    ids: list[str] = field(default_factory=list)
    """Every entry key of the document, for the seen summary."""
    changed: bool = False
    counts: tuple[str, ...] = ()
    """Stats to count (under ``blogfeeds/feeds/``)."""
    websub: WebSubLinks | None = None
    """The hubs and topic the feed announced (a feed read, else None: nothing known)."""
    error: str = ""
    """Why the fetch failed, in words (:attr:`blogfeeds.items.FeedFetch.error`); ``""`` when
    the feed answered."""

    @classmethod
    def failure(cls, now: float, kind: str, reason: str, http_status: int = 0) -> FetchRead:
        """A fetch that failed with ``kind`` for ``reason`` (no response, or one that could not
        be read)."""
        outcome = FetchOutcome(fetched_at=now, status=http_status, error=kind)
        return cls(outcome, kind, counts=(f"error/{kind}",), error=reason)


def read_response(
    feed_url: str,
    state: FeedState,
    now: float,
    *,
    status: int,
    headers: Mapping[Any, Any],
    body: bytes,
    url: str,
    conditional: bool,
) -> FetchRead:
    """The fetch of ``feed_url`` (its ``state`` before) answered at ``now`` with ``status``,
    ``headers`` (a dict or Scrapy ``Headers``) and ``body`` from final URL ``url``."""
    common: dict[str, Any] = {
        "fetched_at": now,
        "status": status,
        "conditional": conditional,
        "etag": header(headers, "ETag"),
        "last_modified": header(headers, "Last-Modified"),
        "max_age": cache_lifetime(headers, now),
        "retry_after": parse_retry_after(header(headers, "Retry-After"), now),
    }
    if status == 304:
        return FetchRead(FetchOutcome(**common), "not_modified", counts=("not_modified",))
    if not 200 <= status < 300:
        outcome = FetchOutcome(**common)
        said = f"HTTP {status}"  # as blogfeeds.failures.failure_reason words an HTTP error
        if classify(outcome) == "throttled":
            return FetchRead(outcome, "throttled", error=said)
        kind = status_for_code(status)
        return FetchRead(outcome, kind, counts=(f"error/{kind}",), error=said)
    content_type = header(headers, "Content-Type") or ""
    doc = read_document(body, content_type, url)
    if not doc.is_feed:
        logger.warning("Feed %s gave no readable feed (%s)", feed_url, doc.kind)
        outcome = FetchOutcome(**common, error=doc.kind)
        said = f"{_NOT_A_FEED.get(doc.kind, 'not a feed')} ({content_type or 'no Content-Type'})"
        if doc.kind == "broken" and doc.problem:
            said += f": {doc.problem}"
        said = " ".join(said.split())[:REASON_CHARS]
        return FetchRead(outcome, doc.kind, counts=(doc.kind, f"error/{doc.kind}"), error=said)
    unique = doc.unique_entries()
    ids = [e.key for e in unique]
    new = [e for e, fresh in zip(unique, split_new_ids(state, ids), strict=True) if fresh]
    new_dates = [e.date for e in new]
    all_dates = [e.date for e in unique]
    outcome = FetchOutcome(
        **common,
        new_entry_dates=new_dates,
        all_entry_dates=all_dates,
        ttl=doc.hints.ttl,
        skip_hours=doc.hints.skip_hours,
        skip_days=doc.hints.skip_days,
        update_period=doc.hints.update_period,
    )
    entries = new
    counts: tuple[str, ...] = ()
    if is_guid_rewrite(new_dates, all_dates, state.newest_claimed):
        logger.info("Feed %s re-keyed its entries (GUID rewrite)", feed_url)
        newest = state.newest_claimed or now
        entries = [e for e in new if e.date is not None and e.date > newest]
        counts = ("guid_rewrite",)
    changed = bool(entries) and state.last_success is not None
    # Repeated Link headers come joined with ", ", which separates link-values anyway.
    links = websub_links(doc, [header(headers, "Link") or ""], url)
    return FetchRead(outcome, "ok", entries, ids, changed, counts, links)


def permanent_move(
    feed_url: str, final_url: str, redirects: Sequence[int], status: str
) -> str | None:
    """The feed's new URL when every redirect hop was permanent (301/308) and it answered as a
    working feed (``ok``, ``not_modified``); else None."""
    if (
        redirects
        and all(r in PERMANENT_REDIRECTS for r in redirects)
        and status in {"ok", "not_modified"}
        and final_url != feed_url
    ):
        return final_url
    return None
