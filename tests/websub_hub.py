"""A WebSub hub on loopback, written from the W3C Recommendation (2018) for the tests, with
switches that make it faulty.

Conforming behaviour: a subscription request (§5.1: ``hub.callback``, ``hub.mode``,
``hub.topic``, ``hub.lease_seconds``, ``hub.secret``) is answered ``202 Accepted``; the hub
then verifies the subscriber's intent (§5.3) with a GET on the callback carrying ``hub.mode``,
``hub.topic``, ``hub.challenge`` and (subscribe) ``hub.lease_seconds``, and records the
subscription only when the answer is 2xx with the challenge as its body. :meth:`Hub.publish`
distributes content (§7): a POST of the feed body to every live subscriber of the topic, with
``Link: <hub>; rel="hub", <topic>; rel="self"`` and, when the subscriber gave a secret,
``X-Hub-Signature: sha256=<HMAC>``. :meth:`Hub.deny` sends a denial (§5.2).

Faults (attributes, changeable while running): ``down`` (every request answered 503),
``verify_topic`` (verify with this topic instead), ``grant_lease`` (lease granted, seconds),
``never_verify``.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import secrets
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit


@dataclass
class Subscription:
    callback: str
    topic: str
    secret: str | None
    lease: int
    until: float


@dataclass
class Verification:
    mode: str
    topic: str
    callback: str
    status: int
    echoed: bool


@dataclass
class _State:
    subs: dict[tuple[str, str], Subscription] = field(default_factory=dict)
    requests: list[dict[str, str]] = field(default_factory=list)
    verifications: list[Verification] = field(default_factory=list)


class Hub:
    def __init__(self) -> None:
        self.state = _State()
        self.lock = threading.Lock()
        self.down = False
        self.never_verify = False
        self.verify_topic: str | None = None
        self.grant_lease: int | None = None
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                with hub.lock:
                    hub.state.requests.append(form)
                if hub.down:
                    self.send_response(503)
                    self.end_headers()
                    return
                if form.get("hub.mode") not in ("subscribe", "unsubscribe") or not all(
                    form.get(k) for k in ("hub.callback", "hub.topic")
                ):
                    self.send_response(400)
                    self.end_headers()
                    return
                self.send_response(202)
                self.end_headers()
                if not hub.never_verify:
                    threading.Thread(target=hub._verify, args=(form,), daemon=True).start()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Hub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- verification of intent ----------------------------------------------------------------

    def _verify(self, form: dict[str, str]) -> None:
        mode, topic, callback = form["hub.mode"], form["hub.topic"], form["hub.callback"]
        lease = self.grant_lease or int(form.get("hub.lease_seconds") or 864000)
        challenge = secrets.token_urlsafe(12)
        query = {
            "hub.mode": mode,
            "hub.topic": self.verify_topic or topic,
            "hub.challenge": challenge,
        }
        if mode == "subscribe":
            query["hub.lease_seconds"] = str(lease)
        status, body = get(callback, query)
        echoed = 200 <= status < 300 and body == challenge.encode()
        with self.lock:
            self.state.verifications.append(Verification(mode, topic, callback, status, echoed))
            if echoed and mode == "subscribe":
                self.state.subs[(topic, callback)] = Subscription(
                    callback, topic, form.get("hub.secret"), lease, time.time() + lease
                )
            elif echoed:
                self.state.subs.pop((topic, callback), None)

    # --- content distribution ------------------------------------------------------------------

    def subscribers(self, topic: str) -> list[Subscription]:
        with self.lock:
            now = time.time()
            return [s for s in self.state.subs.values() if s.topic == topic and s.until > now]

    def publish(
        self,
        topic: str,
        body: bytes,
        *,
        content_type: str = "application/atom+xml",
        method: str = "sha256",
        secret: str | None = None,
        signature: str | None = None,
        self_url: str | None = None,
        extra: dict[str, str] | None = None,
    ) -> list[int]:
        """POST ``body`` to every live subscriber of ``topic``; their status codes.
        ``secret``/``signature``/``self_url`` override what a conforming hub sends;
        ``extra`` headers are sent too."""
        codes = []
        for sub in self.subscribers(topic):
            headers = {
                "Content-Type": content_type,
                "Link": f'<{self.url}>; rel="hub", <{self_url or topic}>; rel="self"',
                **(extra or {}),
            }
            key = secret if secret is not None else sub.secret
            if signature is not None:
                headers["X-Hub-Signature"] = signature
            elif key:
                digest = hmac.new(key.encode(), body, getattr(hashlib, method)).hexdigest()
                headers["X-Hub-Signature"] = f"{method}={digest}"
            codes.append(post(sub.callback, body, headers))
        return codes

    def deny(self, topic: str, reason: str = "not allowed") -> list[int]:
        with self.lock:
            subs = [s for s in self.state.subs.values() if s.topic == topic]
        return [
            get(s.callback, {"hub.mode": "denied", "hub.topic": topic, "hub.reason": reason})[0]
            for s in subs
        ]

    def requests(self, mode: str | None = None) -> list[dict[str, str]]:
        with self.lock:
            return [r for r in self.state.requests if mode is None or r.get("hub.mode") == mode]

    def verifications(self) -> list[Verification]:
        with self.lock:
            return list(self.state.verifications)


def get(url: str, query: dict[str, str]) -> tuple[int, bytes]:
    sep = "&" if urlsplit(url).query else "?"
    try:
        with urllib.request.urlopen(f"{url}{sep}{urlencode(query)}", timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
    except OSError:
        return 0, b""


def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0
