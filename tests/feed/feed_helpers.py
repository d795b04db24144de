"""Helpers shared by the change-feed tests (not a conftest.py: tests/conftest.py is imported by name
elsewhere and a second one would shadow it)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Receiver:
    """A webhook receiver on 127.0.0.1: answers with the statuses queued in ``statuses`` (then 200) and
    records every request's headers and body."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.lock = threading.Lock()
        self.url = ""

    def bodies(self) -> list[dict[str, Any]]:
        with self.lock:
            return [json.loads(b) for _, b in self.requests]


@contextmanager
def receiver() -> Iterator[Receiver]:
    """Start a :class:`Receiver`, yield it, stop it."""
    rec = Receiver()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server API)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            with rec.lock:
                rec.requests.append((dict(self.headers.items()), body))
                status = rec.statuses.pop(0) if rec.statuses else 200
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    rec.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield rec
    finally:
        server.shutdown()
        server.server_close()
