"""Embedding vectors: one per item and kind, tagged with the model that made it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from ..rows import EmbedRow, VectorBatch, VectorItem, VectorState

__all__ = ["VectorStore"]


@runtime_checkable
class VectorStore(Protocol):
    """Vectors (float16 bytes) per ``(item_kind, item_id)`` and the items waiting to be embedded.

    ``item_kind`` is ``chunk``, ``entity``, ``relation``, ``memory`` or ``skill``. A vector goes
    with its item: deleting a chunk, node or edge deletes its vector.
    """

    def upsert_vectors(self, item_kind: str, model: str, dim: int, items: Sequence[VectorItem]) -> None:
        """Store ``(item id, text hash, bytes)`` vectors, replacing an item's earlier one (of any
        model); a replaced vector gets a new row id so that incremental indexes see the change. Items
        are not checked to exist (the caller writes a vector in its item's transaction)."""
        ...

    def vector_hashes(self, item_kind: str, item_ids: Iterable[str], model: str) -> dict[str, str]:
        """Text hash of the stored vector per item, for vectors of ``model`` only."""
        ...

    def vectors_for(self, item_kind: str, item_ids: Iterable[str], model: str) -> dict[str, bytes]:
        """Vector bytes per item, for vectors of ``model`` only."""
        ...

    def load_vectors(self, item_kind: str, model: str, after_id: int = 0) -> VectorBatch:
        """Vectors of a kind and model with row id > ``after_id``, in row order."""
        ...

    def vector_state(self) -> VectorState:
        """``(max row id, deletions counter)``: an index built at this state is current while both are
        unchanged. Empty store: ``(0, 0)``."""
        ...

    def vector_models(self) -> dict[str, int]:
        """Vectors stored per model."""
        ...

    def delete_vectors(self, model: str | None = None) -> int:
        """Delete the vectors of ``model`` (None: all); returns how many."""
        ...

    def chunks_to_embed(self, latest_only: bool = True, after_id: int = 0, limit: int = 1000) -> list[EmbedRow]:
        """``(row id, chunk id, text)`` of chunks after ``after_id``, in row order (a resumable cursor)."""
        ...

    def relations_to_embed(self, after_rowid: int = 0, limit: int = 1000) -> list[EmbedRow]:
        """``(row id, edge id, "source relation target")`` of edges between two entities (names as
        stored, ``_`` in the type read as a space), in row order."""
        ...

    def nodes_to_embed(self, kind: str, after_rowid: int = 0, limit: int = 1000) -> list[EmbedRow]:
        """``(row id, node id, name)`` of nodes of a kind, in row order."""
        ...
