"""Response shapes that clients depend on (mem0's memory responses, event pages), declared so that the
OpenAPI document states them and schemathesis checks every answer against them. Extra keys are
allowed: graphmem may add fields without breaking a client."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["HealthOut", "EventOut", "EventsPageOut", "MemoryOut", "MemoryListOut", "MemoryAddedOut",
           "MemoryAddOut", "MemoryHistoryOut", "MemoryChangeOut", "MemoryDeletedOut"]


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class HealthOut(_Out):
    status: str


class EventOut(_Out):
    """One change-log entry; ``id`` is also the SSE ``id:``."""

    id: int
    type: str
    target: str
    timestamp: str
    payload: dict[str, Any]
    actor: str | None = None


class EventsPageOut(_Out):
    """A page of events and the id to pass as ``after`` for the next page."""

    events: list[EventOut]
    last_id: int


class MemoryOut(_Out):
    """A memory as mem0 returns it (``memory`` is the text), with graphmem's scope and decay fields."""

    id: str
    memory: str
    metadata: dict[str, Any]
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    tenant_id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


class MemoryListOut(_Out):
    results: list[MemoryOut]


class MemoryAddedOut(_Out):
    id: str
    memory: str
    event: str


class MemoryAddOut(_Out):
    """mem0's add answer: one result per stored memory (``event`` ADD), plus the edges made."""

    results: list[MemoryAddedOut]
    edges: int


class MemoryHistoryOut(_Out):
    memory_id: str
    version: int
    event: str
    old_text: str | None = None
    new_text: str | None = None
    ts: str


class MemoryChangeOut(_Out):
    """What an update or delete did."""

    id: str
    event: str


class MemoryDeletedOut(_Out):
    """What a delete by scope or a reset did."""

    message: str
    deleted: int
    edges: int
