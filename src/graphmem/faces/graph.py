"""``kb.graph``: entities and relations, hand-made or extracted, with their evidence."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..models import ENTITY, Edge, Node
from ..ontology import GENERIC_TYPE
from ..text import normalize_name, short_id, unique_names
from ..validate import checked_inputs
from ..wiki.generate import ENT as ENT_PAGE
from .results import (
    EdgeDetail,
    EntityDetail,
    EntityRelation,
    Merged,
    Neighbourhood,
    NeighbourNode,
    NodeDeleted,
    Retyped,
)

if TYPE_CHECKING:
    from .host import FaceHost

__all__ = ["Graph"]


@checked_inputs("graph")
class Graph:
    """The knowledge-graph face of a knowledge base."""

    def __init__(self, kb: FaceHost) -> None:
        self._kb = kb

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One transaction around several writes (e.g. an entity and its observations document):
        if anything inside fails, none of them is kept. The writes inside join it."""
        with self._kb.store.transaction():
            yield

    # -- lookup -----------------------------------------------------------------------------

    def find(self, name_or_id: str) -> Node | None:
        """The entity with this id, name or alias (case-insensitive), or None."""
        if not isinstance(name_or_id, str) or not name_or_id.strip():
            raise InvalidInput("entity name: expected a non-empty string")
        store = self._kb.store
        got = store.get_nodes([name_or_id])
        if name_or_id in got:
            return got[name_or_id]
        norm = normalize_name(name_or_id)
        found = store.find_nodes(ENTITY, [norm])
        if norm in found:
            return store.get_nodes([found[norm]])[found[norm]]
        return None

    def _require(self, name_or_id: str) -> Node:
        node = self.find(name_or_id)
        if node is None:
            raise NotFound(
                f"no entity named '{name_or_id}'; add it with add_node(name, type) or check `graphmem stats`"
            )
        return node

    def list(self, type: str | None = None, limit: int = 100, offset: int = 0) -> list[Node]:
        """Entities, by name; ``type`` is normalised like at ingest ("Bug" finds issues)."""
        t = self._kb.config.ontology.normalize_type(type) if type else None
        return self._kb.store.list_nodes(ENTITY, t, limit, offset)

    # -- hand-made knowledge ------------------------------------------------------------------

    def add_node(self, name: str, type: str = "concept", aliases: Sequence[str] = (),
                 properties: Mapping[str, Any] | None = None) -> str:
        """Add an entity by hand (kept even without evidence); returns its id.

        An entity with this name or alias already existing is reused (and marked as
        hand-confirmed); its id is returned.
        """
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput("name: expected a non-empty string")
        if not isinstance(type, str):
            raise InvalidInput(f"type: expected a string, got {type.__class__.__name__}")
        if isinstance(aliases, str) or not all(isinstance(a, str) for a in aliases):
            raise InvalidInput("aliases: expected a list of strings")
        props = dict(properties or {})
        kb, store = self._kb, self._kb.store
        names = [(name.strip(), normalize_name(name))] + [(a.strip(), normalize_name(a)) for a in aliases if a.strip()]
        with store.transaction():
            now = kb.now()
            found = store.find_nodes(ENTITY, [n for _, n in names])
            existing = next((found[n] for _, n in names if n in found), None)
            canonical = kb.config.ontology.normalize_type(type)
            if existing is not None:
                node = store.get_nodes([existing])[existing]
                if node.type == GENERIC_TYPE and canonical != GENERIC_TYPE:  # a given type beats "concept"
                    old, node.type = node.type, self._known_type(canonical)
                    store.append_event("node.retyped", node.id, now, {"old_type": old, "type": node.type})
                    if kb.config.wiki.auto_pages:
                        store.mark_wiki_dirty([ENT_PAGE + node.id])
                node.manual = True
                node.properties.update(props)
                node.updated_at = now
                store.update_node(node)
                store.add_names(node.id, ENTITY, names)
                store.append_event("node.updated", node.id, now, {"kind": ENTITY, "name": node.name,
                                                                  "aliases": [n for n, _ in names[1:]],
                                                                  "properties": props, "manual": True})
                return node.id
            etype = self._known_type(canonical)
            node = Node(short_id("n_", ENTITY, names[0][1]), ENTITY, name.strip(), etype, properties=props,
                        created_at=now, updated_at=now, manual=True)
            store.insert_node(node, unique_names(names))
            store.append_event("node.added", node.id, now, {"kind": ENTITY, "name": node.name, "type": etype,
                                                            "manual": True})
            return node.id

    def _known_type(self, canonical: str) -> str:
        """``canonical`` registered as an entity type (or the type the cap falls back to, with a note)."""
        kb, store = self._kb, self._kb.store
        etype, note = kb.config.ontology.cap_type(canonical, store.ontology_types(ENTITY))
        if note:
            kb.warn(note)
        store.add_ontology_type(ENTITY, etype, kb.now())
        return etype

    def retype(self, name_or_id: str, type: str) -> Retyped:
        """Give an entity another type (normalised like at ingest: "Bug" -> ``issue``).

        Returns ``{id, name, old_type, type}``; raises NotFound for an unknown entity and
        InvalidInput for an empty type. Later ingests keep this type (only the generic
        ``concept`` is replaced by a type an extraction gives).
        """
        if not isinstance(type, str) or not type.strip():
            raise InvalidInput("type: expected a non-empty string such as 'service' or 'issue'")
        kb, store = self._kb, self._kb.store
        with store.transaction():
            node = self._require(name_or_id)
            old = node.type
            new = self._known_type(kb.config.ontology.normalize_type(type))
            if new != old:
                node.type, node.updated_at = new, kb.now()
                store.update_node(node)
                store.append_event("node.retyped", node.id, node.updated_at, {"old_type": old, "type": new})
                if kb.config.wiki.auto_pages:  # its page shows the type: regenerated before the next read
                    store.mark_wiki_dirty([ENT_PAGE + node.id])
        return Retyped(node.id, node.name, old, new)

    def add_edge(self, source: str, target: str, relation: str, confidence: float = 1.0,
                 properties: Mapping[str, Any] | None = None) -> str:
        """Add a relation by hand between two existing entities; returns the edge id.

        Inverse phrases swap the ends ("wheel", "car", "is part of" stores car contains
        wheel). Raises NotFound for an unknown entity and InvalidInput for a confidence
        outside [0, 1] or below ``graph.min_confidence``. ``properties`` are merged into the
        edge's (e.g. the caller's own spelling of the relation).
        """
        if not isinstance(relation, str) or not relation.strip():
            raise InvalidInput("relation: expected a non-empty string such as 'causes'")
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or math.isnan(confidence):
            raise InvalidInput(f"confidence: expected a number in [0, 1], got {confidence!r}")
        if not 0.0 <= confidence <= 1.0:
            raise InvalidInput(f"confidence: {confidence} is outside [0, 1]")
        kb, store = self._kb, self._kb.store
        min_conf = kb.config.graph.min_confidence
        if confidence < min_conf:
            raise InvalidInput(
                f"confidence {confidence:g} is below graph.min_confidence {min_conf:g}; such relations are not stored"
            )
        if properties is not None and not isinstance(properties, Mapping):
            raise InvalidInput(f"properties: expected an object/dict, got {type(properties).__name__}")
        props = dict(properties or {})
        norm = kb.config.ontology.normalize_relation(relation)
        with store.transaction():
            src, dst = self._require(source), self._require(target)
            if norm.swapped:
                src, dst = dst, src
            if src.id == dst.id:
                raise InvalidInput(f"source and target are the same entity '{src.name}'")
            now = kb.now()
            store.add_ontology_type("relation", norm.type, now)
            edge = store.find_edge(src.id, norm.type, dst.id)
            if edge is None:
                edge = Edge(short_id("r_", src.id, norm.type, dst.id), src.id, dst.id, norm.type, float(confidence),
                            created_at=now, updated_at=now, manual=True, properties=props)
                store.insert_edge(edge)
                store.append_event("edge.added", edge.id, now, {"source": src.id, "target": dst.id,
                                                                "type": norm.type, "confidence": confidence,
                                                                "manual": True})
            else:
                edge.manual = True
                edge.confidence = max(edge.confidence, float(confidence))
                edge.properties.update(props)
                edge.updated_at = now
                store.update_edge(edge)
                store.append_event("edge.updated", edge.id, now, {"confidence": edge.confidence, "manual": True})
            return edge.id

    # -- reading ------------------------------------------------------------------------------

    def get_edge(self, edge_id: str) -> EdgeDetail:
        """A relation by id, with its end names and evidence."""
        store = self._kb.store
        edge = store.get_edges([edge_id]).get(edge_id)
        if edge is None:
            raise NotFound(f"no relation with id '{edge_id}'")
        nodes = store.get_nodes([edge.source, edge.target])
        return EdgeDetail(edge, nodes[edge.source].name, nodes[edge.target].name,
                          store.provenance_for("edge", [edge_id]).get(edge_id, []))

    def get_entity(self, name_or_id: str, max_relations: int = 200, max_evidence: int = 20) -> EntityDetail:
        """An entity with its relations (both directions) and the evidence for each."""
        store = self._kb.store
        node = self._require(name_or_id)
        edges = store.edges_of([node.id], 0.0, limit=max_relations)
        others = store.get_nodes({e.source for e in edges} | {e.target for e in edges})
        edge_prov = store.provenance_for("edge", [e.id for e in edges], 5)
        node_prov = store.provenance_for("node", [node.id], max_evidence).get(node.id, [])
        counts = store.count_provenance("node", [node.id])
        relations = []
        for e in edges:
            outgoing = e.source == node.id
            other = others.get(e.target if outgoing else e.source)
            relations.append(EntityRelation(
                id=e.id,
                direction="out" if outgoing else "in",
                type=e.type,
                source=others[e.source].name if e.source in others else e.source,
                target=others[e.target].name if e.target in others else e.target,
                other=other.name if other else None,
                other_id=other.id if other else None,
                confidence=e.confidence,
                manual=e.manual,
                evidence=edge_prov.get(e.id, []),
            ))
        return EntityDetail(node, relations, node_prov, counts.get(node.id, 0))

    def neighbours(self, name_or_id: str, depth: int = 1, min_confidence: float | None = None,
                   max_nodes: int = 50) -> Neighbourhood:
        """The entity's neighbourhood up to ``depth`` hops: ``{"nodes": {...}, "edges": [...]}``."""
        from ..retrieval.graph_query import bfs, frontier_edges

        if not isinstance(depth, int) or depth < 0:
            raise InvalidInput(f"depth: expected a non-negative integer, got {depth!r}")
        store = self._kb.store
        node = self._require(name_or_id)
        floor = self._kb.config.graph.min_confidence if min_confidence is None else min_confidence
        res = bfs([node.id], frontier_edges(self._kb.ctx, floor, max_nodes), depth, max_nodes)
        nodes = store.get_nodes(res.order)
        edges = store.edges_among(res.order, floor, self._kb.config.graph.max_edges)
        return Neighbourhood({nid: NeighbourNode(nodes[nid], res.depth[nid]) for nid in res.order}, edges)

    # -- maintenance --------------------------------------------------------------------------

    def merge(self, keep: str, other: str) -> Merged:
        """Merge entity ``other`` into ``keep``: relations, evidence and names move; the
        merged entity's name and aliases become aliases of ``keep``."""
        kb, store = self._kb, self._kb.store
        with store.transaction():
            a, b = self._require(keep), self._require(other)
            if a.id == b.id:
                raise InvalidInput(f"'{keep}' and '{other}' are already the same entity ({a.id})")
            now = kb.now()
            counts = store.merge_nodes(a.id, b.id, now)
            store.append_event("node.merged", a.id, now, {"merged": b.id, "merged_name": b.name, **counts})
        return Merged(a.id, b.id, [b.name, *b.aliases], counts)

    def delete_edge(self, edge_id: str) -> dict[str, Any]:
        """Delete one relation by id; its entities and the documents that support it stay.

        Returns ``{id, source, target, type}``; raises NotFound for an unknown id."""
        store = self._kb.store
        with store.transaction():
            edge = store.get_edges([edge_id]).get(edge_id)
            if edge is None:
                raise NotFound(f"no relation with id '{edge_id}'; nothing deleted")
            store.delete_edges_by_id([edge.id])
            store.append_event("edge.removed", edge.id, self._kb.now(),
                               {"source": edge.source, "target": edge.target, "type": edge.type, "reason": "deleted"})
        return {"id": edge.id, "source": edge.source, "target": edge.target, "type": edge.type}

    def delete_node(self, name_or_id: str) -> NodeDeleted:
        """Delete an entity with its relations and their evidence."""
        store = self._kb.store
        with store.transaction():
            node = self._require(name_or_id)
            n_edges = len(store.edges_of([node.id]))
            store.delete_node(node.id)
            store.append_event("node.removed", node.id, self._kb.now(), {"name": node.name, "edges": n_edges})
        return NodeDeleted(node.id, node.name, n_edges)
