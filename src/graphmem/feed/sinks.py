"""Where followed events go: a webhook (signed ``POST``), a JSONL file; and :func:`verify` for the
receiving end of a webhook.

Signing follows the common webhook convention (Stripe, Standard Webhooks): the signature is
HMAC-SHA256 over ``timestamp + "." + body`` with a shared secret, sent with the timestamp, so a
receiver can reject a forged or altered body and a replay of an old delivery.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..models import Event
from .types import contextkit_name

__all__ = ["WebhookSink", "JsonlSink", "Delivery", "SignatureError", "verify", "sign", "event_body",
           "HEADER_ID", "HEADER_TYPE", "HEADER_TIMESTAMP", "HEADER_SIGNATURE"]

HEADER_ID = "X-Graphmem-Event-Id"
HEADER_TYPE = "X-Graphmem-Event-Type"
HEADER_TIMESTAMP = "X-Graphmem-Timestamp"
HEADER_SIGNATURE = "X-Graphmem-Signature"
_SCHEME = "v1="

# Answers worth another try: the receiver is down, overloaded or asks us to slow down. Any other 4xx
# means the request itself is refused, and sending it again would get the same answer.
_RETRYABLE = {408, 409, 425, 429}


class SignatureError(InvalidInput):
    """A webhook delivery whose signature or timestamp does not check out."""


def event_body(event: Event) -> bytes:
    """The JSON body of an event's delivery (graphmem's fields plus ContextKit's type name)."""
    data = {**event.to_dict(), "contextkit_type": contextkit_name(event.type)}
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature header value for ``body`` sent at ``timestamp`` (unix seconds, as a string)."""
    mac = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return _SCHEME + mac.hexdigest()


def verify(body: bytes | str, headers: Mapping[str, str], secret: str, tolerance: float = 300.0,
           now: float | None = None) -> dict[str, Any]:
    """Check a received delivery: its signature (over the timestamp and the exact body bytes) must match
    ``secret`` and its timestamp be at most ``tolerance`` seconds away from ``now``. Returns the decoded
    event; raises :class:`SignatureError` saying what is wrong."""
    if not secret:
        raise InvalidInput("secret: the webhook's shared secret is required to verify a delivery")
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    lower = {k.lower(): v for k, v in headers.items()}
    ts = lower.get(HEADER_TIMESTAMP.lower())
    given = lower.get(HEADER_SIGNATURE.lower())
    if not ts or not given:
        raise SignatureError(f"missing {HEADER_TIMESTAMP} or {HEADER_SIGNATURE} header: not a graphmem delivery")
    try:
        sent = float(ts)
    except ValueError:
        raise SignatureError(f"{HEADER_TIMESTAMP}: not a unix time ({ts!r})") from None
    age = (time.time() if now is None else now) - sent
    if abs(age) > tolerance:
        raise SignatureError(f"{HEADER_TIMESTAMP}: the delivery is {age:.0f} s old, more than the {tolerance:g} s "
                             "tolerance (a replay, or the clocks disagree)")
    expected = sign(secret, ts, raw)
    if not any(hmac.compare_digest(expected, part.strip()) for part in given.split(",")):
        raise SignatureError(f"{HEADER_SIGNATURE}: does not match the body (altered, or signed with another secret)")
    try:
        decoded: dict[str, Any] = json.loads(raw)
    except ValueError:
        raise SignatureError("body: signed but not JSON") from None
    return decoded


@dataclass(frozen=True)
class Delivery:
    """What happened to one event sent to a webhook."""

    event_id: int
    delivered: bool
    attempts: int
    status: int | None
    error: str | None = None


class WebhookSink:
    """``POST`` each event as JSON to ``url``, signed with ``secret``; retries with exponential backoff on
    network errors, 5xx, 408 and 429, and writes what it could not deliver to ``dead_letter`` (JSONL)."""

    def __init__(self, url: str, secret: str, *, retries: int = 5, backoff: float = 0.5, timeout: float = 10.0,
                 dead_letter: str | Path | None = None, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise InvalidInput(f"url: expected an http:// or https:// address, got {url!r}")
        if not isinstance(secret, str) or not secret:
            raise InvalidInput("secret: a non-empty shared secret is required to sign webhook deliveries")
        if not isinstance(retries, int) or retries < 0:
            raise InvalidInput(f"retries: expected a non-negative integer, got {retries!r}")
        self.url, self.secret, self.retries, self.backoff, self.timeout = url, secret, retries, backoff, timeout
        self.dead_letter = Path(dead_letter) if dead_letter is not None else None
        self._sleep, self._clock = sleep, clock

    def headers(self, event: Event, body: bytes) -> dict[str, str]:
        """The headers of one delivery (signed at the current time)."""
        ts = str(int(self._clock()))
        return {"Content-Type": "application/json", HEADER_ID: str(event.id), HEADER_TYPE: event.type,
                HEADER_TIMESTAMP: ts, HEADER_SIGNATURE: sign(self.secret, ts, body),
                "User-Agent": "graphmem-webhook/1"}

    def send(self, event: Event) -> Delivery:
        """Deliver ``event`` (retrying); a delivery that fails for good is appended to the dead-letter file."""
        body = event_body(event)
        delay = self.backoff
        status: int | None = None
        error: str | None = None
        attempt = 0
        for attempt in range(1, self.retries + 2):
            # Signed again per attempt: a retry minutes later must still pass the receiver's tolerance.
            request = urllib.request.Request(self.url, data=body, headers=self.headers(event, body), method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as answer:  # noqa: S310 (http(s) only)
                    status = answer.status
                return Delivery(event.id, True, attempt, status)
            except urllib.error.HTTPError as exc:
                status, error = exc.code, f"HTTP {exc.code} {exc.reason}"
                if exc.code < 500 and exc.code not in _RETRYABLE:
                    break
            except (urllib.error.URLError, OSError) as exc:
                status, error = None, f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
            if attempt <= self.retries:
                self._sleep(delay)
                delay = min(delay * 2, 300.0)
        failed = Delivery(event.id, False, attempt, status, error)
        self._dead_letter(event, failed)
        return failed

    __call__ = send  # a sink is also a subscription callback

    def _dead_letter(self, event: Event, failed: Delivery) -> None:
        if self.dead_letter is None:
            return
        self.dead_letter.parent.mkdir(parents=True, exist_ok=True)
        record = {"event": event.to_dict(), "url": self.url, "attempts": failed.attempts, "status": failed.status,
                  "error": failed.error, "failed_at": int(self._clock())}
        with self.dead_letter.open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")


class JsonlSink:
    """Append each event as one JSON line to ``path`` (flushed per event, so a follower of the file sees it)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def send(self, event: Event) -> None:
        """Append ``event``."""
        with self.path.open("a", encoding="utf-8") as out:
            out.write(event_body(event).decode("utf-8") + "\n")

    __call__ = send
