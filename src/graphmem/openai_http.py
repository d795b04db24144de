"""A small JSON-over-HTTP client for OpenAI-compatible APIs (standard library only).

OpenAI, Ollama, vLLM, the llama.cpp server and most hosted gateways speak the same dialect:
``POST {base_url}/<endpoint>`` with a JSON body, a ``Bearer`` key, and JSON errors shaped
``{"error": {"message": ...}}``. :func:`post_json` sends one such request and

* retries HTTP 429, HTTP 5xx, timeouts and dropped connections, waiting ``backoff_base``
  seconds doubled per attempt, or the server's ``Retry-After`` (capped) when it sends one;
* never retries anything else, and raises :class:`HTTPFailure` whose ``kind`` tells the
  caller what went wrong, so each caller words the error for its own users;
* keeps the API key out of every message (some servers echo the key they rejected).

Callers: the LLM extractor (``/chat/completions``) and the OpenAI embeddings backend
(``/embeddings``).
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # imported where a request is made: http, urllib and email cost ~30 ms at startup
    import urllib.error
    from email.message import Message

__all__ = ["MAX_RESPONSE_BYTES", "FailureKind", "HTTPFailure", "RateLimiter", "post_json", "retry_after",
           "server_message"]

log = logging.getLogger(__name__)

ERROR_SNIPPET = 300  # characters of a server's error message kept in our messages
# The most of an answer read: 2,048 embeddings of 3,072 dimensions as JSON text are ~126 MB; a chat answer
# is far smaller. A server sending more is refused instead of filling the memory.
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
_READ_SIZE = 64 * 1024

FailureKind = Literal["auth", "schema", "client", "exhausted", "unreachable", "bad_json"]

_SCHEMA_HINT = re.compile(r"response_format|json_schema", re.IGNORECASE)


class HTTPFailure(Exception):
    """A request that :func:`post_json` gave up on.

    ``kind`` is one of:

    * ``"auth"`` — HTTP 401/403: the API key is missing or wrong (not retried);
    * ``"schema"`` — HTTP 400 whose message mentions ``response_format``/``json_schema``:
      the server does not support the requested structured output (not retried);
    * ``"client"`` — any other non-retryable HTTP status (400, 404, 422, ...);
    * ``"exhausted"`` — every attempt hit a 429, a 5xx, a timeout or a dropped connection;
    * ``"unreachable"`` — the server could not be reached at all (refused, unknown host, ...);
    * ``"bad_json"`` — the server answered 2xx with a body that is not JSON.

    ``status`` is the last HTTP status (None when there was none). ``detail`` is the short
    cause without the URL: the server's message (key redacted, truncated) for HTTP errors,
    ``"HTTP 500: ..."``/``"timed out after 5 s"`` for ``exhausted``, the network reason for
    ``unreachable``. ``str(exc)`` (also ``exc.message``) is a complete sentence naming ``url``.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: FailureKind,
        status: int | None = None,
        url: str = "",
        detail: str = "",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind: FailureKind = kind
        self.status = status
        self.url = url
        self.detail = detail


class RateLimiter:
    """Spaces request starts at least ``60 / requests_per_minute`` seconds apart, across threads.

    ``clock`` and ``sleep`` are injectable for tests. Idle time does not bank a burst: after a
    pause the next request starts at once and the one after waits a full interval.
    """

    def __init__(
        self,
        requests_per_minute: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if requests_per_minute <= 0:
            raise ValueError(f"requests_per_minute must be positive, got {requests_per_minute}")
        self.interval = 60.0 / requests_per_minute
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next = 0.0

    def acquire(self) -> None:
        """Block until this caller may start a request."""
        with self._lock:
            # Reserve a slot under the lock, sleep outside it so other threads can queue up.
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            self._sleep(start - now)


def server_message(exc: urllib.error.HTTPError) -> str:
    """The human part of an error response: ``error.message`` of an OpenAI-style JSON body,
    else ``message``, else the raw body (stripped); the HTTP reason if the body is unreadable."""
    try:
        raw = exc.read(_READ_SIZE).decode("utf-8", "replace")  # an error page may be huge: its start is enough
    except OSError:
        return exc.reason if isinstance(exc.reason, str) else ""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return raw.strip()
    if isinstance(data, Mapping):
        err = data.get("error", data.get("message", data))
        if isinstance(err, Mapping):
            err = err.get("message", err)
        return str(err)
    return raw.strip()


def retry_after(headers: Message | None, cap: float) -> float | None:
    """Seconds from a ``Retry-After`` header (seconds form only), within ``[0, cap]``; None if absent."""
    value = headers.get("Retry-After") if headers is not None else None
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # the HTTP-date form is rare for APIs; the normal backoff is fine then
    return min(max(seconds, 0.0), cap)


def _transient(exc: BaseException) -> str | None:
    """Why a network failure is worth retrying (a timeout, a dropped connection), else None."""
    import http.client
    import urllib.error

    # urllib wraps errors raised while connecting in URLError; errors while reading arrive bare.
    cause = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(cause, (socket.timeout, TimeoutError)):  # socket.timeout is TimeoutError since 3.10
        return "timed out"
    if isinstance(cause, (ConnectionResetError, ConnectionAbortedError, http.client.HTTPException)):
        return f"connection dropped ({type(cause).__name__})"
    return None


class _TooLarge(Exception):
    """An answer longer than the byte limit."""


def _read_within(response: Any, deadline: float, max_bytes: int) -> bytes:
    """The answer's body, read piece by piece: ``TimeoutError`` once ``deadline`` (``time.monotonic``) has
    passed, ``_TooLarge`` past ``max_bytes``. ``read1`` returns what has arrived, so a slow server cannot hold
    one read open beyond the socket's own timeout."""
    parts: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError("the answer took longer than the timeout")
        part = response.read1(_READ_SIZE)
        if not part:
            return b"".join(parts)
        size += len(part)
        if size > max_bytes:
            raise _TooLarge
        parts.append(part)


def _redact(text: str, api_key: str | None) -> str:
    return text.replace(api_key, "***") if api_key else text


def post_json(
    url: str,
    payload: Any,
    *,
    api_key: str | None,
    timeout: float,
    max_attempts: int,
    backoff_base: float,
    max_retry_after: float,
    limiter: RateLimiter | None = None,
    label: str = "",
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> Any:
    """POST ``payload`` as JSON to ``url`` and return the decoded JSON answer.

    ``api_key`` (if any) is sent as ``Authorization: Bearer <key>`` and redacted from every
    message. ``timeout`` bounds each attempt as a whole, the answer's body included (checked between reads, so
    an attempt ends within about twice it, even when a server drips its answer); up to ``max_attempts``
    tries are made for 429, 5xx, timeouts and dropped connections, waiting ``backoff_base * 2 ** (attempt - 1)`` seconds
    between them, or the server's ``Retry-After`` capped at ``max_retry_after``. ``limiter``,
    if given, is acquired before every attempt. ``label`` prefixes the retry log lines
    (e.g. a document id). An answer longer than ``max_bytes`` is refused (not retried). Raises
    :class:`HTTPFailure` when no usable answer was obtained.
    """
    import http.client
    import urllib.error
    import urllib.request

    if max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
    body = json.dumps(payload).encode("utf-8")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    failure = ""
    status: int | None = None
    for attempt in range(1, max_attempts + 1):
        if limiter is not None:
            limiter.acquire()
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        wait: float | None = None
        try:
            deadline = time.monotonic() + timeout
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = _read_within(response, deadline, max_bytes)
        except _TooLarge:
            raise HTTPFailure(f"{url} answered more than {max_bytes:,} bytes (larger than {max_bytes:,} bytes is "
                              "refused); is base_url an OpenAI-compatible API?", kind="client", status=200,
                              url=url, detail=f"the answer is larger than {max_bytes:,} bytes") from None
        except urllib.error.HTTPError as exc:
            status, message = exc.code, _redact(server_message(exc), api_key)[:ERROR_SNIPPET]
            if status in (401, 403):
                raise HTTPFailure(
                    f"{url} refused the request (HTTP {status}): the API key is missing or wrong; "
                    f"set OPENAI_API_KEY. Server said: {message}",
                    kind="auth", status=status, url=url, detail=message,
                ) from None
            if status == 400 and _SCHEMA_HINT.search(message):
                raise HTTPFailure(
                    f"{url} rejected the requested response_format (HTTP 400): {message}",
                    kind="schema", status=status, url=url, detail=message,
                ) from None
            if status != 429 and not 500 <= status < 600:
                raise HTTPFailure(f"{url} answered HTTP {status}: {message}",
                                  kind="client", status=status, url=url, detail=message) from None
            failure = f"HTTP {status}: {message}"
            wait = retry_after(exc.headers, max_retry_after)
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            why = _transient(exc)
            if why == "timed out":
                failure = f"timed out after {timeout:g} s"
            elif why is not None:
                failure = why
            else:
                reason = _redact(str(exc.reason if isinstance(exc, urllib.error.URLError) else exc), api_key)
                raise HTTPFailure(f"cannot reach {url} ({reason})",
                                  kind="unreachable", status=None, url=url, detail=reason) from None
            status = None
        else:
            try:
                return json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise HTTPFailure(f"{url} did not answer JSON",
                                  kind="bad_json", status=None, url=url, detail="the answer is not JSON") from None
        if attempt < max_attempts:
            delay = wait if wait is not None else backoff_base * 2 ** (attempt - 1)
            log.info("%srequest to %s failed (%s); retry %d in %.2f s",
                     f"{label}: " if label else "", url, failure, attempt, delay)
            time.sleep(delay)
    raise HTTPFailure(f"request to {url} failed after {max_attempts} attempts: {failure}",
                      kind="exhausted", status=status, url=url, detail=failure)
