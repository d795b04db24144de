"""Security headers on every response of the HTTP server.

The UI renders wiki pages, whose text can come from any ingested file. DOMPurify (static/app.js) removes
scripts and markup that acts, and this policy is the second wall: scripts only from this server (no inline
script anywhere: docs.html's lives in docs.js), no images, fonts or connections to other hosts (a tracking
pixel in a page cannot phone home), forms submit only here, no framing by other sites (clickjacking), and
no content-type sniffing. Styles may be inline because the graph library writes a <style> element; page
markdown cannot (DOMPurify forbids <style> and style attributes).
"""

from __future__ import annotations

from .guard import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SecurityHeaders", "CONTENT_SECURITY_POLICY"]

CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                           "img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; "
                           "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode("ascii")),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]


class SecurityHeaders:
    """Adds the headers above to every HTTP response (the guard's own refusals included)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []), *(h for h in _HEADERS if h[0] not in names)]
            await send(message)

        await self.app(scope, receive, with_headers)
