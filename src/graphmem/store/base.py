"""The store protocol: what every backend (SQLite now, PostgreSQL later) provides.

Faces and retrieval talk to a store only through these methods; no SQL outside
``store/<backend>/``. Writes are made inside ``with store.transaction():`` so that one public
operation, including the events it appends, is one transaction. The shared contract tests in
``tests/test_store_contract.py`` run against every backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from ..models import Chunk, ChunkHit, Document, Edge, Event, Mention, Node, Provenance

__all__ = ["Store"]


@runtime_checkable
class Store(Protocol):
    """Persistence for documents, chunks, nodes, edges, provenance, types and events."""

    backend: str

    # transactions and lifecycle
    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction; nested calls join the outermost one."""
    def close(self) -> None:
        """Release the connection(s)."""
    def applied_migrations(self) -> list[str]:
        """Names of the schema migrations applied, in order."""

    # events
    def append_event(self, type: str, target: str, ts: str, payload: dict[str, Any], actor: str | None = None) -> int:
        """Append a change event inside the current transaction; returns its id."""
    def list_events(
        self, after_id: int = 0, types: Sequence[str] | None = None, target: str | None = None, limit: int = 100
    ) -> list[Event]:
        """Events after ``after_id``, oldest first."""

    # documents and chunks
    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        """A document version; the latest when ``version`` is None."""
    def document_versions(self, doc_id: str) -> list[Document]:
        """All versions of a document, oldest first, without content."""
    def list_documents(self, limit: int | None = None, offset: int = 0) -> list[Document]:
        """Latest versions, by id, without content."""
    def insert_document(self, doc: Document, chunks: Sequence[Chunk]) -> None:
        """Store a new latest version with its chunks."""
    def get_chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """Chunks by id."""
    def document_chunks(self, doc_id: str, version: int) -> list[Chunk]:
        """Chunks of one version, in order."""
    def search_chunks(self, text: str, k: int = 10, latest_only: bool = True) -> list[ChunkHit]:
        """Full-text (BM25) search over chunks; user text is never interpreted as query syntax."""
    def delete_document(self, doc_id: str) -> tuple[set[str], set[str]]:
        """Delete all versions; returns ids of nodes and edges that lost evidence."""

    # nodes
    def get_nodes(self, ids: Iterable[str]) -> dict[str, Node]:
        """Nodes by id, with aliases."""
    def find_nodes(self, kind: str, norms: Iterable[str]) -> dict[str, str]:
        """Normalised name or alias -> node id, for those that exist."""
    def insert_node(self, node: Node, names: Sequence[tuple[str, str]]) -> None:
        """Insert a node with its (alias, normalised alias) names."""
    def add_names(self, node_id: str, kind: str, names: Sequence[tuple[str, str]]) -> list[str]:
        """Add aliases; returns the normalised names already owned by another node."""
    def update_node(self, node: Node) -> None:
        """Write back a node's mutable fields."""
    def search_node_names(self, text: str, kind: str, k: int) -> list[tuple[str, float]]:
        """Full-text match of ``text`` against node names and aliases: (node id, score)."""
    def list_nodes(self, kind: str, type: str | None = None, limit: int = 100, offset: int = 0) -> list[Node]:
        """Nodes of a kind, by name."""
    def merge_nodes(self, keep: str, other: str, now: str) -> dict[str, int]:
        """Fold node ``other`` into ``keep``."""
    def delete_node(self, node_id: str) -> None:
        """Delete a node with its edges and their evidence."""

    # edges
    def find_edge(self, source: str, type: str, target: str) -> Edge | None:
        """The edge with these ends and type."""
    def get_edges(self, ids: Iterable[str]) -> dict[str, Edge]:
        """Edges by id."""
    def insert_edge(self, edge: Edge) -> None:
        """Insert an edge."""
    def update_edge(self, edge: Edge) -> None:
        """Write back an edge's mutable fields."""
    def edges_of(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None) -> list[Edge]:
        """Edges touching the nodes, either direction, strongest first."""
    def edges_among(self, node_ids: Iterable[str], min_confidence: float = 0.0) -> list[Edge]:
        """Edges with both ends among the nodes."""

    # provenance
    def insert_provenance(self, records: Sequence[Provenance]) -> None:
        """Append evidence records."""
    def provenance_for(
        self, item_kind: str, item_ids: Iterable[str], limit_per_item: int | None = None
    ) -> dict[str, list[Provenance]]:
        """Evidence per item, newest first."""
    def count_provenance(self, item_kind: str, item_ids: Iterable[str]) -> dict[str, int]:
        """Evidence count per item."""
    def prune_unsupported(self, node_ids: Iterable[str], edge_ids: Iterable[str]) -> tuple[list[str], list[str]]:
        """Remove the given non-manual items left without evidence; returns removed ids."""

    def savepoint(self) -> AbstractContextManager[None]:
        """A unit inside the current transaction, undone alone when it raises."""

    # mentions (entity occurrences in chunks)
    def insert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Record entity occurrences."""
    def mentions_of(self, node_ids: Iterable[str], limit_per_node: int | None = None) -> dict[str, list[Mention]]:
        """Occurrences per entity."""
    def chunk_mentions(self, chunk_ids: Iterable[str]) -> dict[str, list[Mention]]:
        """Occurrences per chunk."""
    def document_hashes(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """Latest content hash per known document id."""
    def documents_by_source_prefix(self, prefix: str) -> list[tuple[str, str]]:
        """(doc_id, source) of latest documents whose source starts with prefix."""

    # ontology and stats
    def ontology_types(self, kind: str) -> list[str]:
        """Registered canonical types of a kind."""
    def add_ontology_type(self, kind: str, name: str, now: str) -> bool:
        """Register a type; True if new."""
    def stats(self) -> dict[str, Any]:
        """Counts of what is stored, and size on disk."""
