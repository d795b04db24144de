"""The official MCP "memory" server's knowledge graph, over graphmem's graph.

The reference server (``@modelcontextprotocol/server-memory``) keeps entities ``{name,
entityType, observations[]}`` and relations ``{from, to, relationType}`` in a JSONL file. Here
an entity is a graphmem entity (its ``entityType`` spelling kept in its properties), a relation
a graphmem edge (its ``relationType`` spelling and direction kept in the edge's properties,
since graphmem normalises relation phrases and swaps inverse ones), and the observations of an
entity are the lines of one document, ``memory_<entity id>``, with source ``agent``: every
observation is a supporting text of the entity (evidence with a chunk, a span and a timestamp),
found by ``search`` like any other passage. Deleting an observation makes a new version of that
document, so the old one stays readable as history.

Differences from the reference, by design: names are matched like graphmem matches entity names
(case- and spacing-insensitive), and a relation must name existing entities (the reference
stores dangling ones). Results carry extra fields (``id``, ``type``) that plain clients ignore.

No MCP import here: ``graphmem import memory-jsonl`` uses this module without the ``mcp`` extra.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from . import plain as _plain

if TYPE_CHECKING:
    from ..kb import KnowledgeBase
    from ..models import Node

__all__ = ["MemoryGraph", "OBSERVATIONS_PREFIX", "ImportReport"]

OBSERVATIONS_PREFIX = "memory_"
AGENT_SOURCE = "agent"
# read_graph walks every entity; past this many it says so instead of answering for minutes.
MAX_GRAPH_ENTITIES = 5000


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{where}: expected a non-empty string")
    return value


def _texts(value: Any, where: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInput(f"{where}: expected a list of strings")
    return [_text(v, f"{where}[{i}]") for i, v in enumerate(value)]


def _items(value: Any, where: str) -> list[Mapping[str, Any]]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidInput(f"{where}: expected a list of objects")
    for i, v in enumerate(value):
        if not isinstance(v, Mapping):
            raise InvalidInput(f"{where}[{i}]: expected an object, got {type(v).__name__}")
    return list(value)


@dataclass
class ImportReport:
    """What ``import_jsonl`` did."""

    entities_created: int = 0
    relations_created: int = 0
    observations_added: int = 0
    skipped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {"entities_created": self.entities_created, "relations_created": self.relations_created,
                "observations_added": self.observations_added, "skipped": list(self.skipped)}


class MemoryGraph:
    """The reference memory server's operations on one knowledge base."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self._kb = kb

    # -- helpers ----------------------------------------------------------------------------

    def _find(self, name: str) -> Node | None:
        return self._kb.graph.find(name)

    def _doc_id(self, node: Node) -> str:
        return OBSERVATIONS_PREFIX + node.id

    def _observations(self, node: Node) -> list[dict[str, Any]]:
        """``[{text, at}]`` of the entity, oldest first."""
        try:
            doc = self._kb.documents.get(self._doc_id(node))
        except NotFound:
            return []
        return list((_plain(doc).get("metadata") or {}).get("observations", []))

    def _write_observations(self, node: Node, observations: list[dict[str, Any]]) -> None:
        """Make the entity's observations document say exactly ``observations`` (a new version;
        none left: the document goes, the entity stays)."""
        doc_id = self._doc_id(node)
        if not observations:
            try:
                self._kb.documents.delete(doc_id)
            except NotFound:
                pass
            return
        texts = [o["text"] for o in observations]
        entities = [{"name": node.name, "type": node.type, "supporting_text": t} for t in dict.fromkeys(texts)]
        self._kb.ingest_with_content(
            doc_id, f"Observations: {node.name}", AGENT_SOURCE, "\n".join(texts), entities, [],
            metadata={"observations": observations, "entity": node.id, "provenance": AGENT_SOURCE},
        )

    def _entity_out(self, node: Node, observations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        obs = self._observations(node) if observations is None else observations
        return {"name": node.name, "entityType": str(node.properties.get("entityType") or node.type),
                "observations": [o["text"] for o in obs], "id": node.id, "type": node.type}

    def _relations_of(self, nodes: Iterable[Node]) -> list[dict[str, Any]]:
        """Relations touching any of ``nodes`` (once each), in the reference's shape."""
        seen: dict[str, dict[str, Any]] = {}
        for node in nodes:
            ent = _plain(self._kb.graph.get_entity(node.id, max_relations=10_000, max_evidence=0))
            for r in ent["relations"]:
                if r["id"] not in seen:
                    seen[r["id"]] = self._relation_out(r)
        return list(seen.values())

    def _relation_out(self, r: Mapping[str, Any]) -> dict[str, Any]:
        edge = _plain(self._kb.graph.get_edge(r["id"])) if "properties" not in r else r
        props = edge.get("properties") or {}
        src, dst = r["source"], r["target"]
        if props.get("swapped"):
            src, dst = dst, src
        return {"from": src, "to": dst, "relationType": str(props.get("relationType") or r["type"]),
                "id": r["id"], "type": r["type"]}

    def _all_entities(self, cap: int | None) -> list[Node]:
        out: list[Node] = []
        while cap is None or len(out) < cap:
            want = 500 if cap is None else min(500, cap - len(out))
            page = self._kb.graph.list(limit=want, offset=len(out))
            out += page
            if len(page) < want:
                break
        return out

    # -- the nine tools -----------------------------------------------------------------------

    def create_entities(self, entities: Any) -> list[dict[str, Any]]:
        """Create the entities whose names are new (existing names are skipped, as the reference
        does); returns the created ones. Their observations become evidence."""
        items = _items(entities, "entities")
        specs = []
        for i, e in enumerate(items):
            name = _text(e.get("name"), f"entities[{i}].name")
            etype = _text(e.get("entityType"), f"entities[{i}].entityType")
            obs = _texts(e.get("observations", []), f"entities[{i}].observations")
            specs.append((name.strip(), etype.strip(), obs))
        created: list[dict[str, Any]] = []
        seen: set[str] = set()
        with self._kb.graph.atomic():  # an entity never without its observations, a failed call writes nothing
            for name, etype, obs in specs:
                key = name.casefold()
                if key in seen or self._find(name) is not None:
                    continue
                seen.add(key)
                node_id = self._kb.graph.add_node(name, etype, properties={"entityType": etype})
                node = self._require_id(node_id)
                now = self._kb.now()
                observations = [{"text": t, "at": now} for t in dict.fromkeys(obs)]
                if observations:
                    self._write_observations(node, observations)
                created.append(self._entity_out(node, observations))
        return created

    def _require_id(self, node_id: str) -> Node:
        node = self._kb.graph.find(node_id)
        if node is None:  # pragma: no cover - just written
            raise NotFound(f"entity {node_id} vanished while being written")
        return node

    def _check_relations(self, relations: Any, must_exist: bool
                         ) -> list[tuple[str, str, str, Node | None, Node | None]]:
        out = []
        for i, r in enumerate(_items(relations, "relations")):
            src = _text(r.get("from"), f"relations[{i}].from")
            dst = _text(r.get("to"), f"relations[{i}].to")
            rtype = _text(r.get("relationType"), f"relations[{i}].relationType")
            a, b = self._find(src), self._find(dst)
            if must_exist:
                for where, name, node in (("from", src, a), ("to", dst, b)):
                    if node is None:
                        raise InvalidInput(f"relations[{i}].{where}: no entity named '{name}'; create it with "
                                           "create_entities first (nothing was written)")
            out.append((src, dst, rtype, a, b))
        return out

    def _existing_edge(self, a: Node, b: Node, rtype: str) -> str | None:
        """The id of the edge that stores ``a -rtype-> b`` (after normalisation), if any."""
        norm = self._kb.config.ontology.normalize_relation(rtype)
        src, dst = (b, a) if norm.swapped else (a, b)
        ent = _plain(self._kb.graph.get_entity(src.id, max_relations=10_000, max_evidence=0))
        for r in ent["relations"]:
            if r["direction"] == "out" and r["other_id"] == dst.id and r["type"] == norm.type:
                return str(r["id"])
        return None

    def create_relations(self, relations: Any) -> list[dict[str, Any]]:
        """Create the relations that are new (duplicates are skipped); returns the created ones."""
        checked = self._check_relations(relations, must_exist=True)
        created = []
        with self._kb.graph.atomic():
            for _src, _dst, rtype, a, b in checked:
                assert a is not None and b is not None
                if self._existing_edge(a, b, rtype) is not None:
                    continue
                swapped = self._kb.config.ontology.normalize_relation(rtype).swapped
                edge_id = self._kb.graph.add_edge(a.id, b.id, rtype, 1.0,
                                                  properties={"relationType": rtype.strip(), "swapped": swapped})
                created.append({"from": a.name, "to": b.name, "relationType": rtype.strip(), "id": edge_id})
        return created

    def add_observations(self, observations: Any) -> list[dict[str, Any]]:
        """Add observations to existing entities; returns ``[{entityName, addedObservations}]``
        (observations already present are not added again). An unknown entity fails the whole
        call before anything is written."""
        items = _items(observations, "observations")
        plan = []
        for i, o in enumerate(items):
            name = _text(o.get("entityName"), f"observations[{i}].entityName")
            contents = _texts(o.get("contents", []), f"observations[{i}].contents")
            node = self._find(name)
            if node is None:
                raise NotFound(f"observations[{i}].entityName: entity with name {name} not found; create it "
                               "with create_entities first (nothing was written)")
            plan.append((name, node, contents))
        results = []
        with self._kb.graph.atomic():
            for name, node, contents in plan:
                current = self._observations(node)
                have = {o["text"] for o in current}
                now = self._kb.now()
                added = [t for t in dict.fromkeys(contents) if t not in have]
                if added:
                    self._write_observations(node, current + [{"text": t, "at": now} for t in added])
                results.append({"entityName": name, "addedObservations": added})
        return results

    def delete_entities(self, entity_names: Any) -> None:
        """Delete entities with their relations and observations (unknown names are ignored)."""
        names = _texts(entity_names, "entityNames")
        with self._kb.graph.atomic():  # the observations go with the entity or not at all
            for name in names:
                node = self._find(name)
                if node is None:
                    continue
                self._write_observations(node, [])
                self._kb.graph.delete_node(node.id)

    def delete_observations(self, deletions: Any) -> None:
        """Remove the given observations (unknown entities and observations are ignored)."""
        items = _items(deletions, "deletions")
        plan = [(_text(d.get("entityName"), f"deletions[{i}].entityName"),
                 set(_texts(d.get("observations", []), f"deletions[{i}].observations"))) for i, d in enumerate(items)]
        with self._kb.graph.atomic():
            for name, gone in plan:
                node = self._find(name)
                if node is None:
                    continue
                current = self._observations(node)
                kept = [o for o in current if o["text"] not in gone]
                if len(kept) != len(current):
                    self._write_observations(node, kept)

    def delete_relations(self, relations: Any) -> None:
        """Remove the given relations (unknown ones are ignored)."""
        checked = self._check_relations(relations, must_exist=False)
        with self._kb.graph.atomic():
            for _src, _dst, rtype, a, b in checked:
                if a is None or b is None:
                    continue
                edge_id = self._existing_edge(a, b, rtype)
                if edge_id is not None:
                    self._kb.graph.delete_edge(edge_id)

    def read_graph(self) -> dict[str, Any]:
        """Every entity (up to MAX_GRAPH_ENTITIES) and every relation between them."""
        nodes = self._all_entities(MAX_GRAPH_ENTITIES)
        obs = self._all_observations()
        out: dict[str, Any] = {"entities": [self._entity_out(n, obs.get(n.id, [])) for n in nodes],
                               "relations": self._relations_of(nodes)}
        if len(nodes) >= MAX_GRAPH_ENTITIES:
            out["truncated"] = True
        return out

    def _all_observations(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for doc in self._kb.documents.list():
            d = _plain(doc)
            doc_id, meta = d["doc_id"], d.get("metadata") or {}
            if doc_id.startswith(OBSERVATIONS_PREFIX) and isinstance(meta.get("entity"), str):
                out[meta["entity"]] = list(meta.get("observations", []))
        return out

    def search_nodes(self, query: Any) -> dict[str, Any]:
        """Entities whose name, type or an observation contains ``query`` (case-insensitive), with
        the relations touching them."""
        q = _text(query, "query").casefold()
        nodes = self._all_entities(cap=None)  # a match beyond read_graph's cap is still a match
        obs = self._all_observations()
        hits = []
        for n in nodes:
            ent = self._entity_out(n, obs.get(n.id, []))
            if (q in ent["name"].casefold() or q in ent["entityType"].casefold()
                    or any(q in o.casefold() for o in ent["observations"])):
                hits.append((n, ent))
        return {"entities": [e for _, e in hits], "relations": self._relations_of(n for n, _ in hits)}

    def open_nodes(self, names: Any) -> dict[str, Any]:
        """The named entities (unknown names skipped) and the relations touching them."""
        nodes: dict[str, Node] = {}
        for name in _texts(names, "names"):
            node = self._find(name)
            if node is not None:
                nodes.setdefault(node.id, node)
        return {"entities": [self._entity_out(n) for n in nodes.values()],
                "relations": self._relations_of(nodes.values())}

    # -- the reference server's file ----------------------------------------------------------

    def import_jsonl(self, path: str | Path) -> ImportReport:
        """Read the reference server's ``memory.jsonl`` (entity and relation lines) into the graph.

        Every line is checked before anything is written; a bad line fails the import naming
        its number. Entities that exist get the file's new observations; relations whose ends
        are missing are skipped and listed."""
        p = Path(path)
        try:
            raw = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidInput(f"FILE: cannot read {p}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise InvalidInput(f"FILE: {p} is not UTF-8 text") from None
        entities: list[dict[str, Any]] = []
        relations: list[dict[str, Any]] = []
        for n, line in enumerate(raw.split("\n"), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{p} line {n}: not JSON ({exc.msg}); nothing was imported") from None
            if not isinstance(item, dict) or item.get("type") not in ("entity", "relation"):
                raise InvalidInput(f"{p} line {n}: expected an object with \"type\": \"entity\" or \"relation\"; "
                                   "nothing was imported")
            try:
                if item["type"] == "entity":
                    _text(item.get("name"), "name")
                    _text(item.get("entityType"), "entityType")
                    _texts(item.get("observations", []), "observations")
                    entities.append(item)
                else:
                    for key in ("from", "to", "relationType"):
                        _text(item.get(key), key)
                    relations.append(item)
            except InvalidInput as exc:
                raise InvalidInput(f"{p} line {n}: {exc}; nothing was imported") from None
        report = ImportReport()
        fresh = [e for e in entities if self._find(e["name"]) is None]
        report.entities_created = len(self.create_entities(fresh))
        report.observations_added = sum(len(e.get("observations", [])) for e in fresh)
        existing = [e for e in entities if e not in fresh]
        if existing:
            added = self.add_observations([{"entityName": e["name"], "contents": e.get("observations", [])}
                                           for e in existing])
            report.observations_added += sum(len(a["addedObservations"]) for a in added)
        known = []
        for r in relations:
            missing = [r[k] for k in ("from", "to") if self._find(r[k]) is None]
            if missing:
                report.skipped.append(f"relation {r['from']} -{r['relationType']}-> {r['to']}: no entity "
                                      f"{', '.join(missing)}")
            else:
                known.append(r)
        report.relations_created = len(self.create_relations(known))
        return report
