"""Results of ``kb.memory``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .base import Result

__all__ = [
    "MemoryRecord",
    "MemoryList",
    "MemoryScores",
    "MemoryHit",
    "MemoryLink",
    "MemorySearch",
    "MemoryEvent",
    "MemoriesAdded",
    "MemoryUpdated",
    "MemoryDeleted",
    "MemoryRelevance",
    "MemoryFeedback",
    "MemoryVersion",
    "DecayReport",
    "Backfilled",
    "GraphReset",
    "MemoryStats",
]


# -- memory ------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class MemoryRecord(Result):
    """A stored memory in its public form (mem0's field names: ``memory`` is the text, ``timestamp``
    when it was said)."""

    id: str
    memory: str
    metadata: dict[str, Any]
    role: str | None
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    tenant_id: str | None
    timestamp: str
    created_at: str
    updated_at: str
    relevance: float
    archived: bool
    version: int

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> MemoryRecord:
        """From a memory row of the store."""
        return cls(row["id"], row["text"], row["metadata"], row["role"], row["user_id"], row["agent_id"],
                   row["run_id"], row["tenant_id"], row["said_at"], row["created_at"], row["updated_at"],
                   row["relevance"], row["archived"], row["version"])


@dataclass(frozen=True, eq=False)
class MemoryList(Result):
    """``kb.memory.get_all``: memories of a scope, oldest said first."""

    results: list[MemoryRecord]

    def to_dict(self) -> dict[str, Any]:
        return {"results": [r.to_dict() for r in self.results]}


@dataclass(frozen=True, eq=False)
class MemoryScores(Result):
    """The parts of a memory hit's score (ContextKit's ``context_graph`` block)."""

    dense: float
    lexical: float
    graph: float
    frequency: float
    personal: float
    success: float
    was_seed: bool
    relevance: float

    @classmethod
    def from_parts(cls, parts: Mapping[str, Any]) -> MemoryScores:
        """From the ranking's per-memory parts."""
        return cls(parts["dense"], parts["lexical"], parts["graph"], parts["frequency"], parts["personal"],
                   parts["success"], parts["was_seed"], parts["relevance"])


@dataclass(frozen=True, eq=False)
class MemoryHit(Result):
    """One memory found by ``kb.memory.search``, with its score and the score's parts."""

    id: str
    memory: str
    score: float
    metadata: dict[str, Any]
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    tenant_id: str | None
    timestamp: str
    created_at: str
    context_graph: MemoryScores

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "memory": self.memory, "score": self.score, "metadata": self.metadata,
                "user_id": self.user_id, "agent_id": self.agent_id, "run_id": self.run_id,
                "tenant_id": self.tenant_id, "timestamp": self.timestamp, "created_at": self.created_at,
                "context_graph": self.context_graph.to_dict()}


@dataclass(frozen=True, eq=False)
class MemoryLink(Result):
    """An edge between two memories (``REPLY_TO``, ``TEMPORAL_NEXT``, ``TOPIC_SIMILAR`` ...)."""

    src: str
    dst: str
    type: str
    weight: float


@dataclass(frozen=True, eq=False)
class MemorySearch(Result):
    """``kb.memory.search``: hits best first; ``subgraph`` (the edges among them and on the paths that
    led to them) is ``None``, and absent from ``to_dict()``, when there is none."""

    results: list[MemoryHit]
    subgraph: list[MemoryLink] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"results": [r.to_dict() for r in self.results]}
        if self.subgraph:
            out["subgraph"] = [e.to_dict() for e in self.subgraph]
        return out


@dataclass(frozen=True, eq=False)
class MemoryEvent(Result):
    """One memory written by ``add`` (mem0's ``{id, memory, event}``)."""

    id: str
    memory: str
    event: str = "ADD"


@dataclass(frozen=True, eq=False)
class MemoriesAdded(Result):
    """``kb.memory.add``: the memories stored and how many edges linked them."""

    results: list[MemoryEvent]
    edges: int

    def to_dict(self) -> dict[str, Any]:
        return {"results": [r.to_dict() for r in self.results], "edges": self.edges}


@dataclass(frozen=True, eq=False)
class MemoryUpdated(Result):
    """``kb.memory.update``: the new text; the old one is the archived ``previous_version``."""

    id: str
    memory: str
    previous_version: str
    edges: int
    event: str = "UPDATE"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "memory": self.memory, "event": self.event,
                "previous_version": self.previous_version, "edges": self.edges}


@dataclass(frozen=True, eq=False)
class MemoryDeleted(Result):
    """``kb.memory.delete``: the memory and how many edges went with it."""

    id: str
    edges: int
    event: str = "DELETE"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "event": self.event, "edges": self.edges}


@dataclass(frozen=True, eq=False)
class MemoryRelevance(Result):
    """A memory's relevance after ``mark_relevant`` / ``mark_irrelevant`` (and its floor)."""

    id: str
    relevance: float
    floor: float


@dataclass(frozen=True, eq=False)
class MemoryFeedback(Result):
    """Feedback recorded by ``kb.memory.feedback``."""

    id: str
    helpful: bool


@dataclass(frozen=True, eq=False)
class MemoryVersion(Result):
    """One entry of a memory's history (``ADD``, ``UPDATE`` with old and new text, ``DELETE``)."""

    memory_id: str
    version: int
    event: str
    old_text: str | None
    new_text: str | None
    ts: str

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> MemoryVersion:
        """From a history row of the store."""
        return cls(row["memory_id"], row["version"], row["event"], row["old_text"], row["new_text"], row["ts"])


@dataclass(frozen=True, eq=False)
class DecayReport(Result):
    """One decay pass: relevances and weights lowered, edges pruned, memories archived."""

    decayed: int
    pruned: int
    archived: int


@dataclass(frozen=True, eq=False)
class Backfilled(Result):
    """``kb.memory.backfill_context_graph``: memories linked and edges added."""

    nodes: int
    edges: int


@dataclass(frozen=True, eq=False)
class GraphReset(Result):
    """``kb.memory.reset_context_graph``: edges removed."""

    edges: int


@dataclass(frozen=True, eq=False)
class MemoryStats(Result):
    """``kb.memory.stats``: counts of a scope, when decay last ran, the embedding model of the vectors."""

    memories: int
    archived: int
    edges: int
    edge_types: dict[str, int]
    mentions: int
    last_decay: str | None
    embeddings: str | None
