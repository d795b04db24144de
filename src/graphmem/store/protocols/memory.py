"""Memories: ``memory`` nodes with their rows, history, sessions, references, edges, feedback and
decay state."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, runtime_checkable

from ..rows import (
    EmbedRow,
    Feedback,
    LLMBudget,
    MemoryDecay,
    MemoryEdgeDecay,
    MemoryEdgeInput,
    MemoryEdgeRow,
    MemoryNeighbour,
    MemoryRankInputs,
    MemoryRow,
    MemorySession,
    MemoryStats,
    MemoryVectorRow,
    MemoryVersionRow,
    ScopeFilters,
    ScopeState,
    ScoredId,
    WeightUpdate,
)

__all__ = ["MemoryStore"]


@runtime_checkable
class MemoryStore(Protocol):
    """Memories by id. ``filters`` select a scope (see :data:`~graphmem.store.rows.ScopeFilters`; empty:
    every memory); archived memories are left out unless ``include_archived``. Memory edges are rows
    of the shared edge table between two memories; the entities a memory names are kept apart, so
    entity walks never step onto memories. Updates, deletions and archiving bump the memory
    generation of :meth:`memory_scope_state`."""

    # -- rows -------------------------------------------------------------------------------

    def insert_memory(self, mem: Mapping[str, object]) -> int:
        """Insert a memory's node and row from ``id``, ``text``, ``scope_key``, ``said_at``,
        ``created_at`` and the optional ``role``, ``metadata`` and scope fields; returns its row id
        (increasing). A missing required key: KeyError; an id in use: BackendError."""
        ...

    def get_memories(self, ids: Iterable[str]) -> dict[str, MemoryRow]:
        """Memories by id (archived ones too)."""
        ...

    def memory_rank_inputs(self, ids: Iterable[str]) -> dict[str, MemoryRankInputs]:
        """The rerank's inputs of each memory by id (missing ids are absent): the same values as
        :meth:`get_memories` gives for those keys, without reading texts and metadata."""
        ...

    def list_memories(self, filters: ScopeFilters, include_archived: bool = False, limit: int = 100,
                      offset: int = 0) -> list[MemoryRow]:
        """A scope's memories, oldest ``said_at`` first."""
        ...

    def memories_after(self, filters: ScopeFilters, after_rowid: int, limit: int) -> list[MemoryRow]:
        """A scope's memories (archived too) with row id > ``after_rowid``, in row order."""
        ...

    def memory_scope_ids(self, filters: ScopeFilters, include_archived: bool, limit: int) -> list[str] | None:
        """Ids of a scope's memories, or None when there are more than ``limit``."""
        ...

    def memory_vectors(self, filters: ScopeFilters, model: str, limit: int, after_rowid: int = 0
                       ) -> list[MemoryVectorRow] | None:
        """A scope's memories (archived too) after ``after_rowid`` with their ``model`` vector (None:
        archived, or no vector of that model); None when there are more than ``limit``."""
        ...

    def memory_scope_state(self, scope_key: str) -> ScopeState:
        """``(generation, count, max row id)`` of a scope key's memories, archived included (an
        unchanged generation with a larger count means only new memories arrived)."""
        ...

    def memories_in_scope(self, ids: Iterable[str], filters: ScopeFilters, include_archived: bool) -> set[str]:
        """Those of ``ids`` in the scope."""
        ...

    def memories_to_embed(self, after_rowid: int = 0, limit: int = 1000) -> list[EmbedRow]:
        """``(row id, id, text)`` of every memory after ``after_rowid``, in row order."""
        ...

    def update_memory_text(self, memory_id: str, text: str, metadata: Mapping[str, object], now: str) -> None:
        """New text and metadata: version + 1, and the decay clock restarts."""
        ...

    def delete_memory(self, memory_id: str) -> int:
        """Delete a memory with its node, edges, references, mentions, feedback and vector (its history and
        a session pointing at it stay); returns how many edges it had (missing: 0)."""
        ...

    def add_memory_version(self, memory_id: str, version: int, event: str, old: str | None, new: str | None,
                           ts: str) -> None:
        """Append a history entry. History is kept apart from the memory: it is not checked to exist, and
        its history outlives :meth:`delete_memory`."""
        ...

    def memory_versions(self, memory_id: str) -> list[MemoryVersionRow]:
        """History, oldest first."""
        ...

    # -- sessions, references, mentions ------------------------------------------------------

    def memory_session(self, session_key: str) -> MemorySession | None:
        """The last memory of a session; None when the session has none."""
        ...

    def memory_session_neighbours(self, scope_key: str, run_id: str | None, said_at: str, exclude: str
                                  ) -> tuple[MemorySession | None, MemorySession | None]:
        """The memories of a session (scope key + run, no run: those without one) said just before (at the
        same time: the one stored last) and just after ``said_at``, other than ``exclude``; old versions
        (``<id>~v<n>``) are not part of a session."""
        ...

    def delete_memory_edges_by_id(self, edge_ids: Sequence[str]) -> int:
        """Delete these memory-to-memory edges (absent ones are ignored); returns how many were deleted."""
        ...

    def set_memory_session(self, session_key: str, memory_id: str, said_at: str) -> None:
        """Make a memory the last of its session (replacing the previous one; the memory is not checked)."""
        ...

    def add_memory_docrefs(self, scope_key: str, memory_id: str, refs: Iterable[str]) -> None:
        """Record document references of a memory (each once). A missing memory: BackendError."""
        ...

    def memories_with_docrefs(self, scope_key: str, refs: Sequence[str], exclude: str, limit: int) -> list[str]:
        """Memories of a scope key sharing one of ``refs``, but ``exclude``, newest first."""
        ...

    def add_memory_mentions(self, memory_id: str, entity_ids: Iterable[str]) -> int:
        """Link a memory to entities it names; returns how many links are new. A missing memory or entity:
        BackendError."""
        ...

    def memory_mentions(self, memory_ids: Iterable[str]) -> dict[str, list[str]]:
        """Entity ids each memory names (memories naming none absent)."""
        ...

    def memories_mentioning(self, entity_ids: Iterable[str], filters: ScopeFilters, include_archived: bool,
                            limit: int) -> list[str]:
        """Memories of a scope naming any of the entities, newest first."""
        ...

    # -- full text --------------------------------------------------------------------------

    def search_memories_fts(self, text: str, filters: ScopeFilters, include_archived: bool, k: int) -> list[ScoredId]:
        """BM25 over a scope's memory texts: at most ``k`` ids, best first."""
        ...

    def memory_bm25(self, text: str, memory_ids: Sequence[str]) -> dict[str, float]:
        """BM25 of ``text`` for the given memories (those matching no word absent)."""
        ...

    # -- edges ------------------------------------------------------------------------------

    def insert_memory_edges(self, edges: Sequence[MemoryEdgeInput]) -> int:
        """Insert memory edges (manual, their base weight kept for decay); an existing edge of the same
        ends and type is left alone. Returns how many are new. An end that is no node: BackendError."""
        ...

    def memory_neighbours(self, memory_ids: Sequence[str], min_weight: float, per_node: int = 32
                          ) -> dict[str, list[MemoryNeighbour]]:
        """Edges of each memory with weight >= ``min_weight``, its ``per_node`` strongest each way (every
        memory asked for is a key, with ``[]`` when it has none)."""
        ...

    def memory_edges_among(self, memory_ids: Sequence[str], min_weight: float = 0.0) -> list[MemoryEdgeRow]:
        """Edges with both ends among the memories, strongest first."""
        ...

    def memory_edge_decay_rows(self) -> list[MemoryEdgeDecay]:
        """Decay inputs of every memory-to-memory edge."""
        ...

    def delete_memory_edges(self, filters: ScopeFilters, keep_types: Sequence[str] = ()) -> int:
        """Delete the edges between memories of a scope, but those of ``keep_types``; returns how many."""
        ...

    def memories_with_edges(self, memory_ids: Sequence[str], ignore_types: Sequence[str] = ()) -> set[str]:
        """Those of the memories that still have an edge (one of ``ignore_types`` does not count)."""
        ...

    # -- decay, use, feedback, budgets ------------------------------------------------------

    def memory_decay_rows(self) -> list[MemoryDecay]:
        """Decay inputs of every memory not archived."""
        ...

    def set_memory_relevance(self, values: Sequence[WeightUpdate]) -> None:
        """Set ``(relevance, memory id)`` pairs."""
        ...

    def set_memories_archived(self, memory_ids: Sequence[str], archived: bool, now: str) -> None:
        """Archive or restore memories."""
        ...

    def set_memory_quality(self, memory_id: str, quality: float, floor: float, relevance: float, used_at: str,
                           archived: bool) -> None:
        """Write a memory's relevance state."""
        ...

    def record_memory_use(self, memory_ids: Sequence[str], now: str) -> None:
        """Count a use of each memory (an id given twice counts twice) and restart its decay clock."""
        ...

    def add_memory_feedback(self, memory_id: str, query: str, helpful: bool, ts: str) -> None:
        """Record feedback and count it on the memory. A missing memory: BackendError."""
        ...

    def memory_feedback(self, memory_ids: Iterable[str], limit_per: int = 20) -> dict[str, list[Feedback]]:
        """The latest ``limit_per`` feedbacks per memory, newest first."""
        ...

    def memory_llm_budget(self, key: str) -> LLMBudget | None:
        """An LLM budget's state; None when never set."""
        ...

    def set_memory_llm_budget(self, key: str, day: str, tokens: int, cooldown_until: str | None) -> None:
        """Persist an LLM budget (replacing its state)."""
        ...

    def memory_stats(self, filters: ScopeFilters) -> MemoryStats:
        """Live and archived memory counts, memory edges (total and per type) and entity mentions of a scope."""
        ...
