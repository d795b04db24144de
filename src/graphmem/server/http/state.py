"""What every route shares: the knowledge base and the lock that serialises calls into it.

One knowledge base object (one SQLite connection) serves the whole process; SQLite allows one
writer at a time anyway, and a read must not see another thread's open transaction, so the
routes call the library one at a time (:meth:`ServerState.call`). Other processes writing the
same knowledge base are handled by SQLite's locking (StoreBusy -> 503 with Retry-After).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from fastapi import Request

from ...models import plain

if TYPE_CHECKING:
    from ...kb import KnowledgeBase

__all__ = ["ServerState", "state_of", "plain"]

T = TypeVar("T")

_MAX_NOTES = 100  # a long-running server must not collect every note forever


class ServerState:
    """The knowledge base, its lock, and server settings the routes read."""

    def __init__(self, kb: KnowledgeBase, sse_poll_seconds: float = 0.5, sse_heartbeat_seconds: float = 15.0) -> None:
        self.kb = kb
        self.lock = threading.Lock()
        self.sse_poll_seconds = sse_poll_seconds
        self.sse_heartbeat_seconds = sse_heartbeat_seconds

    def call(self, fn: Callable[[], T]) -> T:
        """Run one library call with the knowledge base to itself."""
        with self.lock:
            try:
                return fn()
            finally:
                notes = self.kb.notes
                if len(notes) > _MAX_NOTES:
                    del notes[: len(notes) - _MAX_NOTES]


def state_of(request: Request) -> ServerState:
    """The server state of the app serving ``request``."""
    state: ServerState = request.app.state.graphmem
    return state


