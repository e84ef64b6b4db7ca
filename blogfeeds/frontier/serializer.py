"""``SCHEDULER_SERIALIZER`` storing requests as JSON instead of scrapy-redis's default pickle,
and the allow-list a request read back from Redis must pass.

With pickle, anyone who can write to the queue runs code on every worker; loading JSON runs no
code. Scrapy's ``request_from_dict`` still imports the entry's ``_class`` and passes every meta
key on (``proxy``, ``download_maxsize``, ...), so :func:`request_from_entry` rebuilds only what
this project writes: a plain ``scrapy.Request``, callbacks that are the spider's own methods and
the meta keys of :data:`META_TYPES`; anything else raises :class:`BadEntry` (quarantined by the
scheduler, never imported or run).
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import scrapy

from blogfeeds.frontier.defaults import LEASE_META, RECOVERED_META, TOKEN_META
from blogfeeds.middlewares.retry import NOT_BEFORE


class JsonRequestSerializer:
    """Requests (``Request.to_dict()``) to and from JSON bytes.

    Encodes the dict of ``Request.to_dict()`` without the fields left at ``Request``'s defaults
    (``request_from_dict`` restores them): ``bytes`` become ``{"$b": latin-1 text}`` and a dict
    with non-``str`` keys (headers) ``{"$d": [[key, value], ...]}``; tuples load as lists.
    Raises ``TypeError`` naming the value for anything else (e.g. an object put in ``meta``),
    so a request that JSON cannot carry fails at enqueue instead of being half-stored.
    Callbacks are stored by method name and must be methods of the spider (Scrapy's rule for
    any persisted request).
    """

    @staticmethod
    def dumps(obj: Any) -> bytes:
        if isinstance(obj, dict):  # fields at Request's defaults are left out (≈ 30 % smaller)
            obj = {
                k: v
                for k, v in obj.items()
                if k not in _REQUEST_DEFAULTS or v != _REQUEST_DEFAULTS[k]
            }
        return json.dumps(_to_json(obj), ensure_ascii=False, separators=(",", ":")).encode()

    @staticmethod
    def loads(data: bytes | str) -> Any:
        return _from_json(json.loads(data))


_REQUEST_DEFAULTS: dict[str, Any] = {
    "body": b"",
    "cookies": {},
    "headers": {},
    "flags": [],
    "cb_kwargs": {},
    "encoding": "utf-8",
    "method": "GET",
    "dont_filter": False,
    "priority": 0,
    "callback": None,
    "errback": None,
}


def _to_json(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, bytes):
        return {"$b": value.decode("latin-1")}
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and not {"$b", "$d"} & value.keys():
            return {k: _to_json(v) for k, v in value.items()}
        return {"$d": [[_to_json(k), _to_json(v)] for k, v in value.items()]}
    raise TypeError(f"a request holds a {type(value).__name__} ({value!r:.80}): not JSON-able")


def _from_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    if isinstance(value, dict):
        if value.keys() == {"$b"}:
            return value["$b"].encode("latin-1")
        if value.keys() == {"$d"}:
            return {_hashable(_from_json(k)): _from_json(v) for k, v in value["$d"]}
        return {k: _from_json(v) for k, v in value.items()}
    return value


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


class BadEntry(ValueError):
    """A Redis entry this project did not write; ``kind`` names the check it failed."""

    def __init__(self, kind: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind


_INT = (int,)
_STR = (str,)
META_TYPES: dict[str, tuple[type, ...]] = {
    # set by this project
    "blog_id": _STR,
    "depth": _INT,
    TOKEN_META: _STR,
    LEASE_META: _STR,
    NOT_BEFORE: (int, float),
    "handle_httpstatus_list": (list,),  # a re-check's 304 (blogfeeds.crawl.checks)
    "blogfeeds_page": _STR,  # a re-check's last page digest (blogfeeds.crawl.checks)
    # set by Scrapy's middlewares on a request that is queued again (redirects, retries)
    "redirect_times": _INT,
    "redirect_ttl": _INT,
    "redirect_urls": (list,),
    "redirect_reasons": (list,),
    "retry_times": _INT,
    "is_start_request": (bool,),
    RECOVERED_META: (bool,),
}
"""Meta keys a request read from Redis may carry, with their types."""

SEED_META_TYPES: dict[str, tuple[type, ...]] = {
    **META_TYPES,
    "seed_feed_url": _STR,  # written by ``scrapy seed``
    "seed_title": _STR,
}
"""Meta keys a seed may carry."""

LOCAL_META = frozenset(
    {
        "proxy",
        "_scheme_proxy",
        "_auth_proxy",
        "download_timeout",
        "download_slot",
        "download_latency",
    }
)
"""Meta keys Scrapy sets from the settings and environment of the worker that downloaded a
request: dropped when it is read back, so each worker derives its own (its proxy, its timeout)."""

_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "url": _STR,
    "headers": (dict,),
    "cookies": (dict, list),
    "encoding": _STR,
    "priority": _INT,
    "dont_filter": (bool,),
    "flags": (list,),
}
_PROXY_AUTH = "proxy-authorization"
_PLAIN_CLASSES = frozenset({"scrapy.http.request.Request", "scrapy.http.Request", "scrapy.Request"})


def check_meta(meta: Any, allowed: dict[str, tuple[type, ...]] = META_TYPES) -> dict[str, Any]:
    """``meta`` without :data:`LOCAL_META`; :class:`BadEntry` for a key or type not allowed."""
    if not isinstance(meta, dict):
        raise BadEntry("meta", f"not an object: {type(meta).__name__}")
    kept = {}
    for key, value in meta.items():
        if key in LOCAL_META:
            continue
        types = allowed.get(key)
        if types is None:
            raise BadEntry("meta", f"key {key!r:.60} is not one this project sets")
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise BadEntry("meta", f"{key} holds a {type(value).__name__}")
        kept[key] = value
    return kept


def _spider_method(spider: Any, name: Any) -> Any:
    """The bound method ``name`` of ``spider``'s own class (not of ``scrapy.Spider`` or a
    mixin of this package), one of its ``frontier_callbacks`` when it lists them:
    :class:`BadEntry` for anything else."""
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
        raise BadEntry("callback", f"{name!r:.60} is not a method name")
    listed = getattr(spider, "frontier_callbacks", None)
    if listed is not None and name not in listed:
        raise BadEntry(
            "callback", f"{name!r:.60} is not in {type(spider).__name__}.frontier_callbacks"
        )
    for cls in type(spider).__mro__:
        if name in vars(cls):
            own = cls.__module__ not in {"scrapy.spiders", "blogfeeds.frontier.spiders"}
            if own and inspect.isfunction(vars(cls)[name]):
                return getattr(spider, name)
            break
    raise BadEntry("callback", f"{name!r:.60} is not a method of spider {spider.name!r}")


def request_from_entry(obj: Any, spider: Any) -> scrapy.Request:
    """The ``scrapy.Request`` of a dict read from the queue (``Request.to_dict()``, as
    :class:`JsonRequestSerializer` stores it); :class:`BadEntry` unless every field is one this
    project writes."""
    if not isinstance(obj, dict):
        raise BadEntry("not_a_request", f"a {type(obj).__name__}, not an object")
    cls = obj.get("_class")
    if cls is not None and cls not in _PLAIN_CLASSES:
        raise BadEntry("class", f"{cls!r:.80} is not scrapy.Request")
    kwargs: dict[str, Any] = {}
    for key, value in obj.items():
        if key == "_class":
            continue
        if key == "meta":
            kwargs["meta"] = check_meta(value)
        elif key in ("callback", "errback"):
            if value is not None:
                kwargs[key] = _spider_method(spider, value)
        elif key == "method":
            if value not in ("GET", "HEAD"):
                raise BadEntry("method", f"{value!r:.20}")
            kwargs[key] = value
        elif key in ("body", "cb_kwargs"):
            if value:
                raise BadEntry(key, "not empty")
        elif key in _FIELD_TYPES:
            if not isinstance(value, _FIELD_TYPES[key]) or (
                isinstance(value, bool) and key != "dont_filter"
            ):
                raise BadEntry(key, f"a {type(value).__name__}")
            kwargs[key] = value
        else:
            raise BadEntry("field", f"{key!r:.60} is not a field of a request")
    if "url" not in kwargs:
        raise BadEntry("url", "missing")
    headers = kwargs.get("headers")
    if headers:  # a proxy's credentials come from this worker's environment, like the proxy
        kwargs["headers"] = {k: v for k, v in headers.items() if _header_name(k) != _PROXY_AUTH}
    try:
        return scrapy.Request(**kwargs)
    except (TypeError, ValueError) as exc:
        raise BadEntry("invalid", str(exc)[:200]) from None


def _header_name(key: Any) -> str:
    return (key.decode("latin-1") if isinstance(key, bytes) else str(key)).lower()
