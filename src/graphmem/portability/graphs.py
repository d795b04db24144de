"""The graph in other tools' formats: GraphML (networkx, Gephi, yEd), Cypher statements and neo4j-admin
import CSV (Neo4j), and the official MCP memory server's ``memory.jsonl``.

These carry the graph (every node kind: entities, memories, skills, pages; every edge), not the documents
or the wiki text: the lossless format is JSONL (:mod:`.jsonl`). They read the store through
``dump_rows``, so what they write is one consistent snapshot.
"""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..context import Context
from ..errors import InvalidInput
from ..feed.follow import check_scope

__all__ = ["GraphRows", "graph_rows", "write_graphml", "write_cypher", "write_neo4j_csv", "write_memory_jsonl"]


@dataclass
class GraphRows:
    """The nodes and edges to write (rows as the store dumps them)."""

    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    evidence: dict[str, list[str]]  # node id -> supporting texts


def graph_rows(ctx: Context, scope: Mapping[str, Any] | None = None) -> GraphRows:
    """Nodes, edges and entity evidence; with ``scope``, memories of other scopes (and their edges) are
    left out (entities, skills and pages are shared by every scope)."""
    wanted = check_scope(scope)
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    evidence: dict[str, list[str]] = {}
    memory_scope: dict[str, dict[str, Any]] = {}
    for table, row in ctx.store.dump_rows(["nodes", "edges", "provenance", "memories"]):
        if table == "nodes":
            nodes.append(row)
        elif table == "edges":
            edges.append(row)
        elif table == "provenance" and row["item_kind"] == "node":
            texts = evidence.setdefault(row["item_id"], [])
            if row["text"] not in texts:
                texts.append(row["text"])
        elif table == "memories":
            memory_scope[row["id"]] = row
    if wanted:
        def keep(node: dict[str, Any]) -> bool:
            if node["kind"] != "memory":
                return True
            mem = memory_scope.get(node["id"], {})
            return all(str(mem.get(k)) == v for k, v in wanted.items())

        nodes = [n for n in nodes if keep(n)]
        ids = {n["id"] for n in nodes}
        edges = [e for e in edges if e["source"] in ids and e["target"] in ids]
    return GraphRows(nodes, edges, evidence)


def _label(node: Mapping[str, Any]) -> str:
    return {"entity": "Entity", "memory": "Memory", "skill": "Skill", "page": "Page"}.get(node["kind"], "Node")


def write_graphml(rows: GraphRows, out: IO[bytes]) -> dict[str, int]:
    """GraphML with typed attributes (``d0``.. keys declared up front, as networkx and Gephi expect)."""
    ns = "http://graphml.graphdrawing.org/xmlns"
    root = ET.Element("graphml", {"xmlns": ns})
    node_keys = [("kind", "string"), ("name", "string"), ("type", "string"), ("relevance", "double"),
                 ("archived", "boolean"), ("manual", "boolean"), ("created_at", "string"), ("label", "string")]
    edge_keys = [("type", "string"), ("confidence", "double"), ("manual", "boolean"), ("created_at", "string")]
    for scope, keys in (("node", node_keys), ("edge", edge_keys)):
        for name, kind in keys:
            ET.SubElement(root, "key", {"id": f"{scope}_{name}", "for": scope, "attr.name": name, "attr.type": kind})
    graph = ET.SubElement(root, "graph", {"id": "graphmem", "edgedefault": "directed"})

    def value(v: Any, kind: str) -> str:
        if kind == "boolean":
            return "true" if v else "false"
        return "" if v is None else str(v)

    for n in rows.nodes:
        el = ET.SubElement(graph, "node", {"id": n["id"]})
        for name, kind in node_keys:
            data = ET.SubElement(el, "data", {"key": f"node_{name}"})
            data.text = value(n["name"] if name == "label" else n.get(name), kind)
    for e in rows.edges:
        el = ET.SubElement(graph, "edge", {"id": e["id"], "source": e["source"], "target": e["target"]})
        for name, kind in edge_keys:
            ET.SubElement(el, "data", {"key": f"edge_{name}"}).text = value(e.get(name), kind)
    ET.ElementTree(root).write(out, encoding="utf-8", xml_declaration=True)
    return {"nodes": len(rows.nodes), "edges": len(rows.edges)}


def _rel_type(t: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", t).strip("_").upper() or "RELATED_TO"


def _cypher_str(v: Any) -> str:
    return json.dumps("" if v is None else str(v), ensure_ascii=False)  # a JSON string is a Cypher string


def write_cypher(rows: GraphRows, out: IO[str]) -> dict[str, int]:
    """Cypher for ``cypher-shell`` (or the Neo4j browser): a uniqueness constraint, one ``CREATE`` per node,
    one ``MATCH ... CREATE`` per relationship; relation types become UPPER_SNAKE relationship types and keep
    their phrase in ``type``."""
    out.write("CREATE CONSTRAINT graphmem_id IF NOT EXISTS FOR (n:GraphmemNode) REQUIRE n.id IS UNIQUE;\n")
    for n in rows.nodes:
        out.write(f"CREATE (:GraphmemNode:{_label(n)} {{id: {_cypher_str(n['id'])}, name: {_cypher_str(n['name'])}, "
                  f"kind: {_cypher_str(n['kind'])}, type: {_cypher_str(n['type'])}, "
                  f"relevance: {float(n['relevance'] or 0)}, archived: {str(bool(n['archived'])).lower()}}});\n")
    for e in rows.edges:
        out.write(f"MATCH (a:GraphmemNode {{id: {_cypher_str(e['source'])}}}), "
                  f"(b:GraphmemNode {{id: {_cypher_str(e['target'])}}}) "
                  f"CREATE (a)-[:{_rel_type(e['type'])} {{id: {_cypher_str(e['id'])}, type: {_cypher_str(e['type'])}, "
                  f"confidence: {float(e['confidence'] or 0)}}}]->(b);\n")
    return {"nodes": len(rows.nodes), "edges": len(rows.edges)}


def write_neo4j_csv(rows: GraphRows, folder: Path) -> dict[str, int]:
    """``nodes.csv`` and ``relationships.csv`` with neo4j-admin's import headers (``id:ID``, ``:LABEL``,
    ``:START_ID``, ``:END_ID``, ``:TYPE``): ``neo4j-admin database import full --nodes=nodes.csv
    --relationships=relationships.csv``."""
    if folder.exists() and not folder.is_dir():
        raise InvalidInput(f"out: {folder} is a file; the csv format writes a folder (nodes.csv, relationships.csv)")
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "nodes.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id:ID", "name", "kind", "type", "relevance:float", "archived:boolean", ":LABEL"])
        for n in rows.nodes:
            w.writerow([n["id"], n["name"], n["kind"], n["type"], n["relevance"], str(bool(n["archived"])).lower(),
                        f"GraphmemNode;{_label(n)}"])
    with (folder / "relationships.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([":START_ID", ":END_ID", ":TYPE", "id", "type", "confidence:float"])
        for e in rows.edges:
            w.writerow([e["source"], e["target"], _rel_type(e["type"]), e["id"], e["type"], e["confidence"]])
    return {"nodes": len(rows.nodes), "edges": len(rows.edges)}


def write_memory_jsonl(rows: GraphRows, out: IO[str]) -> dict[str, int]:
    """The MCP memory server's ``memory.jsonl``: entities (name, entityType, observations = their evidence
    texts) and the relations between them (``from``/``to`` by name, as that server keys entities)."""
    entities = {n["id"]: n for n in rows.nodes if n["kind"] == "entity"}
    for n in entities.values():
        out.write(json.dumps({"type": "entity", "name": n["name"], "entityType": n["type"],
                              "observations": rows.evidence.get(n["id"], [])}, ensure_ascii=False) + "\n")
    relations = 0
    for e in rows.edges:
        if e["source"] in entities and e["target"] in entities:
            out.write(json.dumps({"type": "relation", "from": entities[e["source"]]["name"],
                                  "to": entities[e["target"]]["name"], "relationType": e["type"]},
                                 ensure_ascii=False) + "\n")
            relations += 1
    return {"entities": len(entities), "relations": relations}
