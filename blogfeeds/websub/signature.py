"""``X-Hub-Signature`` of a content distribution (W3C WebSub §7 and §8): ``method=signature``,
the HMAC of the body with the subscription's ``hub.secret``. The spec allows ``sha1``,
``sha256``, ``sha384`` and ``sha512``; any other method, a missing header or a wrong digest is
a bad push."""

from __future__ import annotations

import hashlib
import hmac

METHODS = {
    "sha1": hashlib.sha1,
    "sha256": hashlib.sha256,
    "sha384": hashlib.sha384,
    "sha512": hashlib.sha512,
}


def sign(secret: str, body: bytes, method: str = "sha256") -> str:
    """The ``X-Hub-Signature`` value a hub sends for ``body`` (tests, and the docs' example)."""
    digest = hmac.new(secret.encode("utf-8"), body, METHODS[method]).hexdigest()
    return f"{method}={digest}"


def signature_problem(secret: str, body: bytes, header: str | None) -> str | None:
    """None when ``header`` signs ``body`` with ``secret``; else why not (``missing``,
    ``method``, ``mismatch``). Compared in constant time."""
    if not header or "=" not in header:
        return "missing"
    method, _, given = header.strip().partition("=")
    algorithm = METHODS.get(method.strip().lower())
    if algorithm is None:
        return "method"
    expected = hmac.new(secret.encode("utf-8"), body, algorithm).hexdigest()
    if not hmac.compare_digest(expected, given.strip().lower()):
        return "mismatch"
    return None
