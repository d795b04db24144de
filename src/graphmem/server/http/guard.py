"""An ASGI layer in front of the routes: the bearer token and the request body size limit.

It runs before routing, so an unauthenticated or oversized request never reaches the library.
The body is read here (at most ``max_body_bytes``) and replayed to the app, which covers chunked
uploads that state no Content-Length.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["Guard", "OPEN_PATHS", "OPEN_PREFIXES"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# The UI shell and the docs page hold no data (they fetch it with the token the user gives them).
OPEN_PATHS = frozenset({"/", "/docs", "/health", "/favicon.ico"})
OPEN_PREFIXES = ("/ui/",)


class Guard:
    """Bearer-token check (constant-time) and body size limit."""

    def __init__(self, app: ASGIApp, token: str | None, max_body_bytes: int) -> None:
        self.app = app
        self.token = token.encode("utf-8") if token else None
        self.max_body = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if self.token is not None and not (path in OPEN_PATHS or path.startswith(OPEN_PREFIXES)):
            problem = self._auth_problem(scope)
            if problem:
                await _reply(send, 401, "Unauthorized", problem, None, [(b"www-authenticate", b"Bearer")])
                return
        declared = _header(scope, b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                await _reply(send, 400, "InvalidInput", "Content-Length: not a number", "Content-Length")
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
