"""Results of ``kb.documents`` and ``kb.graph``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...models import Edge, Node, Provenance
from .base import Result, evidence_dicts

__all__ = [
    "DocumentDeleted",
    "Retyped",
    "EdgeDetail",
    "EntityRelation",
    "EntityDetail",
    "NeighbourNode",
    "Neighbourhood",
    "Merged",
    "NodeDeleted",
]


# -- documents ---------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class DocumentDeleted(Result):
    """What ``kb.documents.delete`` removed."""

    doc_id: str
    versions_deleted: int
    nodes_removed: int
    edges_removed: int

# -- graph -------------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Retyped(Result):
    """An entity's type before and after ``kb.graph.retype``."""

    id: str
    name: str
    old_type: str
    type: str


@dataclass(frozen=True, eq=False)
class EdgeDetail(Result):
    """A relation with the names of its ends and its evidence (``kb.graph.get_edge``)."""

    edge: Edge
    source_name: str
    target_name: str
    evidence: list[Provenance] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = self.edge.to_dict()
        out["source_name"] = self.source_name
        out["target_name"] = self.target_name
        out["evidence"] = evidence_dicts(self.evidence)
        return out


@dataclass(frozen=True, eq=False)
class EntityRelation(Result):
    """One relation of an entity, seen from it (``direction`` ``out`` or ``in``)."""

    id: str
    direction: str
    type: str
    source: str
    target: str
    other: str | None
    other_id: str | None
    confidence: float
    manual: bool
    evidence: list[Provenance] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "direction": self.direction, "type": self.type, "source": self.source,
                "target": self.target, "other": self.other, "other_id": self.other_id,
                "confidence": self.confidence, "manual": self.manual, "evidence": evidence_dicts(self.evidence)}


@dataclass(frozen=True, eq=False)
class EntityDetail(Result):
    """An entity with its relations (both directions) and evidence (``kb.graph.get_entity``)."""

    node: Node
    relations: list[EntityRelation]
    evidence: list[Provenance]
    evidence_count: int

    def to_dict(self) -> dict[str, Any]:
        out = self.node.to_dict()
        out["relations"] = [r.to_dict() for r in self.relations]
        out["evidence"] = evidence_dicts(self.evidence)
        out["evidence_count"] = self.evidence_count
        return out


@dataclass(frozen=True, eq=False)
class NeighbourNode(Result):
    """A node of a neighbourhood and its hop distance from the start."""

    node: Node
    depth: int

    def to_dict(self) -> dict[str, Any]:
        return {**self.node.to_dict(), "depth": self.depth}


@dataclass(frozen=True, eq=False)
class Neighbourhood(Result):
    """Nodes (by id, in visit order) and the edges among them (``kb.graph.neighbours``)."""

    nodes: dict[str, NeighbourNode]
    edges: list[Edge]

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": {nid: n.to_dict() for nid, n in self.nodes.items()},
                "edges": [e.to_dict() for e in self.edges]}


@dataclass(frozen=True, eq=False)
class Merged(Result):
    """What ``kb.graph.merge`` did: ``counts`` are the store's (edges moved, folded, loops dropped)."""

    kept: str
    merged: str
    aliases_added: list[str]
    counts: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kept": self.kept, "merged": self.merged, "aliases_added": list(self.aliases_added),
                **self.counts}


@dataclass(frozen=True, eq=False)
class NodeDeleted(Result):
    """An entity deleted with its relations (``kb.graph.delete_node``)."""

    id: str
    name: str
    edges_removed: int
