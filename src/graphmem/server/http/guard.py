"""An ASGI layer in front of the routes: where a request may come from, the bearer token and the
request body size limit.

It runs before routing, so a foreign, unauthenticated or oversized request never reaches the library.

Without a token, the loopback address is the only protection, and any web page the user opens can
still reach it: a cross-site form (CSRF) or a host name that re-resolves to 127.0.0.1 (DNS rebinding).
So a tokenless server answers only loopback ``Host`` headers. Every server refuses an ``Origin`` that
is neither its own nor one named with ``--cors-origin``, and lets a CORS preflight from a named origin
through without the token (a browser never sends ``Authorization`` on a preflight).

The body is read here (at most ``max_body_bytes``) and replayed to the app, which covers chunked
uploads that state no Content-Length.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from ...errors import InvalidInput
from .bind import is_loopback

__all__ = ["Guard", "OPEN_PATHS", "OPEN_PREFIXES", "checked_origins"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# The UI shell and the docs page hold no data (they fetch it with the token the user gives them).
OPEN_PATHS = frozenset({"/", "/docs", "/health", "/favicon.ico"})
OPEN_PREFIXES = ("/ui/",)


class Guard:
    """Host and Origin checks, bearer-token check (constant-time) and body size limit."""

    def __init__(self, app: ASGIApp, token: str | None, max_body_bytes: int,
                 cors_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.token = token.encode("utf-8") if token else None
        self.max_body = max_body_bytes
        self.cors_origins = frozenset(_normal_origin(o) for o in cors_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        host = _header(scope, b"host")
        origin = _header(scope, b"origin")
        # A named origin may read the guard's own errors too (a 401 tells its page to ask for the token).
        cors = ([(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]
                if origin is not None and _normal_origin(origin) in self.cors_origins else [])
        if self.token is None and not _is_loopback_host(host):
            await _reply(send, 403, "Forbidden",
                         f"Host: {host!r} is not this machine; a server without a token answers only "
                         "localhost, 127.0.0.1 and [::1] (a web page could otherwise reach it through DNS "
                         "rebinding); open it at http://127.0.0.1:<port>/ or start it with --token T", "Host")
            return
        if origin is not None and not cors and not _same_origin(origin, host):
            await _reply(send, 403, "Forbidden",
                         f"Origin: {origin!r} may not call this server (only its own pages and the origins "
                         "named with --cors-origin may); to allow that site, start the server with "
                         f"--cors-origin {origin}", "Origin")
            return
        preflight = (scope.get("method") == "OPTIONS" and bool(cors)
                     and _header(scope, b"access-control-request-method") is not None)
        if (self.token is not None and not preflight
                and not (path in OPEN_PATHS or path.startswith(OPEN_PREFIXES))):
            problem = self._auth_problem(scope)
            if problem:
                await _reply(send, 401, "Unauthorized", problem, None, [(b"www-authenticate", b"Bearer"), *cors])
                return
        declared = _header(scope, b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                size = -1
            if size < 0 or not declared.strip().isdigit():
                await _reply(send, 400, "InvalidInput", f"Content-Length: expected a byte count (a non-negative "
                             f"integer), got {declared!r}", "Content-Length")
                return
            if size > self.max_body:
                await self._too_large(send)
                return
        if scope.get("method") in ("GET", "HEAD", "DELETE", "OPTIONS") and declared in (None, "0"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            total += len(body)
            if total > self.max_body:
                await self._too_large(send)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _auth_problem(self, scope: Scope) -> str | None:
        raw = _header(scope, b"authorization")
        if raw is None:
            return "this server needs a token: send the header 'Authorization: Bearer <token>'"
        scheme, _, given = raw.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            return "Authorization: expected 'Bearer <token>'"
        assert self.token is not None
        if not hmac.compare_digest(given.strip().encode("utf-8"), self.token):
            return "Authorization: wrong token"
        return None

    async def _too_large(self, send: Send) -> None:
        await _reply(send, 413, "PayloadTooLarge",
                     f"the request body is over the limit of {self.max_body} bytes; send less (split a large "
                     "document) or start the server with a larger --max-body", None)


def _normal_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


def checked_origins(origins: Iterable[str]) -> tuple[str, ...]:
    """``--cors-origin`` values as a browser sends them in ``Origin`` (lower case, no trailing slash): a value
    written ``http://App.example:3000/`` matched in the guard but not in Starlette's CORS layer, which answered
    its preflight 400. ``*`` is refused: name each site (any page on the web could call the server)."""
    out: list[str] = []
    for raw in origins:
        origin = _normal_origin(raw)
        if origin == "*" or "://" not in origin or "/" in origin.split("://", 1)[1]:
            raise InvalidInput(f"--cors-origin {raw!r}: give a site as scheme://host[:port], e.g. "
                               "http://localhost:3000 (not '*' and no path): each origin is named")
        for scheme, port in (("http", ":80"), ("https", ":443")):  # a browser never sends the default port
            if origin.startswith(scheme + "://") and origin.endswith(port):
                origin = origin[: -len(port)]
        out.append(origin)
    return tuple(dict.fromkeys(out))


def _is_loopback_host(host: str | None) -> bool:
    """True for a Host header naming this machine: localhost, 127.0.0.0/8 or [::1], with or without a port."""
    if host is None or not host.strip():
        return False
    name = host.strip()
    if name.startswith("["):  # [::1] or [::1]:8765
        end = name.find("]")
        if end < 0 or (name[end + 1:] and not (name[end + 1] == ":" and name[end + 2:].isdigit())):
            return False
        return is_loopback(name[1:end])
    head, colon, port = name.rpartition(":")
    if colon:
        if not port.isdigit() or ":" in head:
            return False
        name = head
    return is_loopback(name)


def _same_origin(origin: str, host: str | None) -> bool:
    """The page the server served itself calls back: Origin ``scheme://<the Host header>``."""
    _, sep, netloc = origin.strip().partition("://")
    return bool(sep) and host is not None and netloc.rstrip("/").lower() == host.strip().lower()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _reply(send: Send, status: int, type_: str, message: str, field: str | None,
                 extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": {"type": type_, "message": message, "field": field}}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})
