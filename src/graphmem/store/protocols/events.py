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

    def last_event_id(self) -> int:
        """The largest event id committed so far (0 for an empty log)."""
        ...

    def feed_cursor(self, name: str) -> int | None:
        """The event id the consumer ``name`` last recorded with :meth:`set_feed_cursor`; None if never."""
        ...

    def set_feed_cursor(self, name: str, event_id: int, ts: str) -> None:
        """Record that the consumer ``name`` has handled every event up to ``event_id`` (call inside a
        transaction; bookkeeping, so it appends no event)."""
        ...

    def event_id_at(self, ts: str) -> int:
        """The id of the last event with a timestamp at or before ``ts`` (ISO-8601 UTC, as stored); 0 if none."""
        ...
