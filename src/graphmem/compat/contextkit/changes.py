"""ContextKit's change-log names over graphmem's change feed: its events as :class:`ChangeEvent` (ContextKit's
type names), subscriptions, a snapshot of the graph, and the ``changelog`` object of ``context_graph``."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import InvalidInput
from ...feed.types import contextkit_name, event_scope
from ...kb import KnowledgeBase
from ...models import Event
from ...portability import backup

__all__ = ["ChangeEvent", "ChangeLog", "snapshot", "subscribe", "replay"]


@dataclass(frozen=True)
class ChangeEvent:
    """One change as ContextKit names it (``event_type``), with graphmem's own type and payload."""

    event_id: int
    event_type: str
    node_id: str
    timestamp: str
    payload: dict[str, Any] = field(default_factory=dict)
    scope: dict[str, str] = field(default_factory=dict)
    graphmem_type: str = ""

    @classmethod
    def from_event(cls, event: Event) -> ChangeEvent:
        """The ContextKit view of a graphmem event."""
        return cls(event.id, contextkit_name(event.type), event.target, event.timestamp, dict(event.payload),
                   event_scope(event.payload), event.type)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"event_id": self.event_id, "event_type": self.event_type, "node_id": self.node_id,
                "timestamp": self.timestamp, "payload": self.payload, "scope": self.scope,
                "graphmem_type": self.graphmem_type}


def subscribe(kb: KnowledgeBase, callback: Callable[[ChangeEvent], Any], event_types: Sequence[str] | None = None,
              from_event_id: int | None = None, **scope: str | None) -> str:
    """``kb.events.subscribe`` with ContextKit's names and :class:`ChangeEvent` arguments."""
    if not callable(callback):
        raise InvalidInput(f"callback: expected a callable, got {callback!r}")
    wanted = {k: v for k, v in scope.items() if v is not None}
    return kb.events.subscribe(lambda e: callback(ChangeEvent.from_event(e)), event_types, from_event_id,
                               wanted or None)


def replay(kb: KnowledgeBase, until: Any) -> Any:
    """The knowledge base as it was at ``until`` (an event id, a datetime or an ISO-8601 time): a read-only
    view (``view.memory``, ``view.graph``, ``view.search``); close it when done."""
    if until is None:
        raise InvalidInput("until: give the event id or the time to replay to")
    return kb.events.replay(until)


def snapshot(kb: KnowledgeBase, path: str | os.PathLike[str]) -> dict[str, Any]:
    """Write a consistent copy of the knowledge base (graph, memories, pages, wiki files) to the new folder
    ``path``; open it with ``graphmem.open(path, read_only=True)``."""
    return backup(kb.ctx, Path(path))


class ChangeLog:
    """``Memory.context_graph.changelog``: subscribe, unsubscribe, add_sink (a callable or an object with
    ``send``, e.g. :class:`~graphmem.compat.contextkit.sinks.webhook.WebhookSink`), events, replay."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self._kb = kb

    def subscribe(self, callback: Callable[[ChangeEvent], Any], event_types: Sequence[str] | None = None,
                  from_event_id: int | None = None) -> str:
        """Call ``callback`` with each change (ContextKit's event names); returns the token."""
        return subscribe(self._kb, callback, event_types, from_event_id)

    def unsubscribe(self, token: str) -> bool:
        """Stop a subscription."""
        return self._kb.events.unsubscribe(token)

    def add_sink(self, sink: Any, event_types: Sequence[str] | None = None, from_event_id: int | None = None) -> str:
        """Send each new change to ``sink`` (its ``send(event)``, or the sink itself if callable)."""
        send = getattr(sink, "send", None) or (sink if callable(sink) else None)
        if send is None:
            raise InvalidInput(f"sink: expected an object with send(event) or a callable, got {sink!r}")
        return self._kb.events.subscribe(send, event_types, from_event_id)

    def events(self, after_id: int = 0, limit: int = 100) -> list[ChangeEvent]:
        """Changes after ``after_id``, oldest first."""
        return [ChangeEvent.from_event(e) for e in self._kb.events.list(after_id, None, None, limit)]

    def replay(self, until: Any = None) -> Any:
        """A read-only view of the knowledge base as it was at ``until`` (see :func:`replay`)."""
        return replay(self._kb, until)
