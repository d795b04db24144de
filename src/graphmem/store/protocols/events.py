"""The change log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ...models import Event
from ..rows import JsonObject

__all__ = ["EventStore"]


@runtime_checkable
class EventStore(Protocol):
    """Append-only change events."""

    def append_event(self, type: str, target: str, ts: str, payload: JsonObject, actor: str | None = None) -> int:
        """Append an event inside the current transaction; returns its id, larger than every earlier
        one. ``payload`` must be JSON-serialisable (other values are stored as their ``str``)."""
        ...

    def list_events(self, after_id: int = 0, types: Sequence[str] | None = None, target: str | None = None,
                    limit: int = 100) -> list[Event]:
        """Events with id > ``after_id``, oldest first, at most ``limit``; ``types`` (empty: any)
        and ``target`` filter. No match: ``[]``."""
        ...
