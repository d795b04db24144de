"""Nodes (entities, memories, skills, pages), their names, edges and the ontology's types."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from ...models import Edge, Node
from ..rows import EdgeRow, MergeCounts, NameEntry, NodeEdges, NodeSpellings, ScoredId, WeightUpdate

__all__ = ["GraphStore"]


@runtime_checkable
class GraphStore(Protocol):
    """The graph: nodes with their names and aliases, typed edges, the registered types."""

    # -- nodes ------------------------------------------------------------------------------

    def insert_node(self, node: Node, names: Sequence[NameEntry]) -> None:
        """Insert a node with its ``(alias, normalised alias)`` names (the first is its own name;
        ``node.aliases`` is not read). A name another node of the kind owns is skipped. An id that
        exists: BackendError."""
        ...

    def insert_nodes(self, items: Sequence[tuple[Node, Sequence[NameEntry]]]) -> None:
        """:meth:`insert_node` for each ``(node, names)``, in order (names numbered as the single calls
        would number them), in as few statements as the backend can: an ingest's new entities."""
        ...

    def add_names(self, node_id: str, kind: str, names: Sequence[NameEntry]) -> list[str]:
        """Add aliases; returns the normalised names another node of ``kind`` already owns (those are
        not added). A name the node has already: nothing, not reported."""
        ...

    def get_nodes(self, ids: Iterable[str]) -> dict[str, Node]:
        """Nodes by id with their aliases (every name but the display name, in insertion order)."""
        ...

    def find_nodes(self, kind: str, norms: Iterable[str]) -> dict[str, str]:
        """Normalised name or alias -> id of the node of ``kind`` owning it (unknown names absent)."""
        ...

    def update_node(self, node: Node) -> None:
        """Write back name, type, properties, updated_at, relevance, archived and manual (kind,
        created_at and names stay)."""
        ...

    def list_nodes(self, kind: str, type: str | None = None, limit: int = 100, offset: int = 0) -> list[Node]:
        """Nodes of a kind (and type), by name."""
        ...

    def search_node_names(self, text: str, kind: str, k: int) -> list[ScoredId]:
        """Full-text match of ``text`` against the names and aliases of nodes of ``kind``: at most
        ``k`` node ids, best (BM25) first, each once."""
        ...

    def search_node_spellings(self, text: str, kind: str, k: int) -> list[NodeSpellings]:
        """:meth:`search_node_names`' nodes (the same ids, scores and order, nodes that no longer
        exist left out), each with its spellings: its name, then its aliases in the order added."""
        ...

    def node_names(self, node_ids: Iterable[str]) -> dict[str, str]:
        """Display name per node."""
        ...

    def node_labels(self, node_ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        """``(name, type)`` per node (no aliases, no properties): for listing many nodes by name."""
        ...

    def has_entities(self) -> bool:
        """Whether any node of kind ``entity`` exists."""
        ...

    def merge_nodes(self, keep: str, other: str, now: str) -> MergeCounts:
        """Fold ``other`` into ``keep``: edges re-pointed (one duplicating an edge of ``keep`` is folded
        into it with its evidence, the higher confidence kept; a resulting self-loop is dropped),
        evidence, mentions and names moved, ``manual`` kept if either was; ``other`` deleted.
        Either node missing: BackendError (callers check that both exist)."""
        ...

    def delete_node(self, node_id: str) -> None:
        """Delete a node with its names, edges, mentions and all their evidence."""
        ...

    # -- edges ------------------------------------------------------------------------------

    def insert_edge(self, edge: Edge) -> None:
        """Insert an edge. Its id, or its ``(source, type, target)``, taken, or an end missing:
        BackendError."""
        ...

    def insert_edges(self, edges: Sequence[Edge]) -> None:
        """:meth:`insert_edge` for each edge, in order, in as few statements as the backend can (same
        errors: nothing of the call is written when one fails inside its transaction)."""
        ...

    def update_edge(self, edge: Edge) -> None:
        """Write back confidence, updated_at, valid_from, valid_to, manual and properties (ends and
        type stay)."""
        ...

    def find_edge(self, source: str, type: str, target: str) -> Edge | None:
        """The edge with these ends and type; None when there is none."""
        ...

    def find_edges(self, triples: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str, str], Edge]:
        """Edges by ``(source, type, target)``."""
        ...

    def get_edges(self, ids: Iterable[str]) -> dict[str, Edge]:
        """Edges by id."""
        ...

    def edges_of(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None) -> list[Edge]:
        """Edges touching the nodes (either direction) with confidence >= ``min_confidence``, each
        once, strongest first (ties by id)."""
        ...

    def edges_among(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None
                    ) -> list[Edge]:
        """Edges with both ends among the nodes, strongest first (ties by id), at most ``limit``."""
        ...

    def strongest_edges(self, node_id: str, limit: int) -> NodeEdges:
        """At most ``limit`` outgoing and ``limit`` incoming edges, strongest (then oldest) first."""
        ...

    def edges_of_types(self, node_id: str, types: Sequence[str], limit: int) -> list[Edge]:
        """Outgoing edges of one of ``types`` (none given: ``[]``), at most ``limit``."""
        ...

    def adjacency(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None
                  ) -> list[EdgeRow]:
        """Light rows of the edges touching the nodes, each once. With ``limit``: each node's
        strongest edges, at most ``limit`` rows, strongest first (ties by edge id); without: all of
        them, in no particular order."""
        ...

    def set_edge_weights(self, weights: Sequence[WeightUpdate], now: str) -> None:
        """Set ``(confidence, edge id)`` pairs (and updated_at)."""
        ...

    def delete_edges_by_id(self, edge_ids: Sequence[str]) -> int:
        """Delete edges (their evidence stays: prune it with the items); returns how many existed."""
        ...

    # -- ontology ---------------------------------------------------------------------------

    def ontology_types(self, kind: str) -> list[str]:
        """Registered canonical types of ``kind`` (``entity`` or ``relation``), sorted."""
        ...

    def add_ontology_type(self, kind: str, name: str, now: str) -> bool:
        """Register a type; True if new, False if it was registered already."""
        ...
