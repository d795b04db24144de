"""Graph query with evidence: entity seeds from the query text, BFS, provenance.

This is the foundation's ``query`` / ``query_with_evidence`` (the seed's shapes). Seeds are
entities whose name or alias matches the query (:func:`.seeds.find_seed_entities`). Expansion
is the core's BFS (:func:`.core.expand_bfs`) in both directions with the seed's constraints
(depth, confidence, node cap). Its cost follows the neighbourhood touched: each level is one
indexed lookup of the frontier's edges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..context import Context
from ..models import Edge, Node, Provenance
from .config import GraphQueryConfig, search_config
from .core import expand_bfs
from .search import search
from .seeds import find_seed_entities

__all__ = ["BfsResult", "bfs", "find_seed_entities", "frontier_edges", "graph_query", "query_with_evidence"]


@dataclass
class BfsResult:
    """Nodes reached (in discovery order), their depth, and the edge that reached each."""

    order: list[str]
    depth: dict[str, int]
    parent: dict[str, tuple[str, Edge]]


def bfs(
    seeds: Sequence[str],
    edges_of: Callable[[list[str]], Iterable[Edge]],
    max_depth: int,
    max_nodes: int,
) -> BfsResult:
    """Breadth-first expansion from ``seeds`` over edges in both directions.

    ``edges_of(frontier)`` returns the (already confidence-filtered) edges touching the
    frontier, strongest first; stronger edges are followed first when the node cap bites.
    (The core's BFS with every step weighing 1: the first edge to reach a node keeps it.)
    """

    def steps(frontier: list[str]) -> Iterator[tuple[str, str, float, Edge]]:
        inside = set(frontier)
        for e in edges_of(frontier):
            for here, there in ((e.source, e.target), (e.target, e.source)):
                if here in inside:
                    yield here, there, 1.0, e

    res = expand_bfs(dict.fromkeys(seeds, 1.0), steps, depth=max_depth, max_nodes=max_nodes)
    return BfsResult(list(res.score), res.depth, res.parent)


def frontier_edges(ctx: Context, min_conf: float, max_nodes: int) -> Callable[[list[str]], list[Edge]]:
    """BFS neighbour lookup: the strongest edges of a frontier, light rows, bounded.

    A hub entity can have thousands of relations; BFS keeps at most ``max_nodes`` nodes, so
    reading a few times that many of the strongest edges is enough (strongest are followed
    first anyway) and keeps the cost independent of hub size.
    """
    limit = max(200, 8 * max_nodes)

    def lookup(frontier: list[str]) -> list[Edge]:
        rows = ctx.store.adjacency(frontier, min_conf, limit)
        return [Edge(eid, src, dst, typ, conf) for src, typ, dst, conf, eid in rows]

    return lookup


def _node_out(node: Node, depth: int) -> dict[str, Any]:
    return {
        "id": node.id,
        "name": node.name,
        "type": node.type,
        "kind": node.kind,
        "aliases": list(node.aliases),
        "seed": depth == 0,
        "depth": depth,
    }


def _edge_out(e: Edge, nodes: dict[str, Node]) -> dict[str, Any]:
    return {
        "id": e.id,
        "source": e.source,
        "target": e.target,
        "type": e.type,
        "confidence": e.confidence,
        "source_name": nodes[e.source].name if e.source in nodes else e.source,
        "target_name": nodes[e.target].name if e.target in nodes else e.target,
    }


def _hybrid(ctx: Context, text: str, k: int, walk: bool) -> tuple[list[str], dict[str, float]]:
    """The shared search pipeline's entity hits (ids, best first) and passage scores. Without
    ``walk`` only its seeds (BM25 + dense passages): the caller has its entities already."""
    if not text.strip():
        return [], {}
    if walk:
        res = search(ctx, text, kinds=("chunk", "entity"), k=k, with_subgraph=False)
    else:
        res = search(ctx, text, kinds=("chunk",), k=k, config={"strategy": "none", "use_entities": False},
                     with_subgraph=False)
    ents = [h.id for h in res.hits if h.kind == "entity"]
    top = max((h.score for h in res.hits if h.kind == "chunk"), default=0.0)
    chunks = {h.chunk_id: h.score / top for h in res.hits if h.kind == "chunk" and h.chunk_id and top > 0}
    return ents, chunks


def _run(ctx: Context, g: GraphQueryConfig, text: str, hybrid: bool = False
         ) -> tuple[dict[str, Any], BfsResult, dict[str, Node], list[Edge], dict[str, float]]:
    min_conf = g.min_confidence
    passages: dict[str, float] = {}
    if hybrid:
        # Entities the text names are the precise seeds; when it names none, the hybrid
        # pipeline's entity hits (BM25 + dense + PPR) stand in. Its best passages are evidence.
        seeds = find_seed_entities(ctx, text, g.max_seeds, strict=True, with_skills=True)
        ents, passages = _hybrid(ctx, text, g.max_seeds, walk=not seeds)
        if not seeds:
            seeds = ents[: g.max_seeds]
    else:
        seeds = find_seed_entities(ctx, text, g.max_seeds, with_skills=True)
    res = bfs(seeds, frontier_edges(ctx, min_conf, g.max_nodes), max_depth=g.max_depth, max_nodes=g.max_nodes)
    nodes = ctx.store.get_nodes(res.order)
    edges = ctx.store.edges_among(res.order, min_conf, g.max_edges) if res.order else []
    out = {
        "nodes": {nid: _node_out(nodes[nid], res.depth[nid]) for nid in res.order if nid in nodes},
        "edges": [_edge_out(e, nodes) for e in edges],
    }
    return out, res, nodes, edges, passages


def graph_query(ctx: Context, text: str) -> dict[str, Any]:
    """``{"nodes": {id: {...}}, "edges": [...]}`` for the entities the query names."""
    return _run(ctx, search_config(ctx.config).graph, text)[0]


def _step_text(e: Edge, nodes: dict[str, Node], docs: list[str]) -> str:
    # Each step is written in the relation's own direction, whichever way BFS walked it.
    cite = f" ({', '.join(docs)})" if docs else " (hand-made)"
    return f"{nodes[e.source].name} --[{e.type}]--> {nodes[e.target].name}{cite}"


def query_with_evidence(ctx: Context, text: str) -> dict[str, Any]:
    """The subgraph plus the documents, chunks and spans that support it.

    Seeds are the entities the text names or, when it names none, the entity hits of the
    hybrid search pipeline; the pipeline's best passages join the relation and mention
    evidence in ``supporting_documents`` (chunks without a quote are passages it found).

    Returns ``{query, subgraph, supporting_documents: [{doc_id, doc_title, version,
    supporting_chunks: [{chunk_id, text, start, end, quotes}]}], evidence_chain,
    evidence_paths}``. ``evidence_chain`` is the seed's one-line form; ``evidence_paths``
    lists each path from a seed, every step with the documents that support it.
    """
    g = search_config(ctx.config).graph
    subgraph, res, nodes, edges, passages = _run(ctx, g, text, hybrid=True)
    if not subgraph["nodes"] and not passages:
        return {"query": text, "subgraph": subgraph, "supporting_documents": [],
                "evidence_chain": "No matching nodes found.", "evidence_paths": []}
    per_item = g.max_evidence_per_item
    # Evidence for the edges BFS walked plus the strongest others (bounded: a dense subgraph can
    # hold hundreds of edges, and each costs a lookup).
    tree = {e.id for _, e in res.parent.values()}
    cited = [e for e in edges if e.id in tree] + [e for e in edges if e.id not in tree][: g.max_nodes]
    edge_prov = ctx.store.provenance_for("edge", [e.id for e in cited], per_item)
    # Seeds' own evidence first, then the rest in discovery order.
    node_prov = ctx.store.provenance_for("node", res.order, per_item)

    # Rank chunks by what they support: relations count more than mentions.
    chunk_score: dict[str, float] = {}
    quotes: dict[str, list[dict[str, Any]]] = {}
    prov_docs: dict[str, set[tuple[str, int]]] = {}

    def take(p: Provenance, weight: float, what: str) -> None:
        prov_docs.setdefault(p.item_id, set()).add((p.doc_id, p.version))
        if p.chunk_id is None:  # cited in the paths by document, no chunk to show
            return
        chunk_score[p.chunk_id] = chunk_score.get(p.chunk_id, 0.0) + weight
        q = {"start": p.start, "end": p.end, "text": p.text, "supports": what, "item_id": p.item_id,
             "doc_version": p.version}
        bucket = quotes.setdefault(p.chunk_id, [])
        if q not in bucket:
            bucket.append(q)

    for e in cited:
        label = f"{nodes[e.source].name} --[{e.type}]--> {nodes[e.target].name}"
        for p in edge_prov.get(e.id, []):
            take(p, 2.0, label)
    for nid in res.order:
        for p in node_prov.get(nid, []):
            take(p, 1.5 if res.depth[nid] == 0 else 1.0, nodes[nid].name)

    # The hybrid pipeline's passages count too (its best one as much as a relation's evidence).
    for cid, score in passages.items():
        chunk_score[cid] = chunk_score.get(cid, 0.0) + 2.0 * score
    best = sorted(chunk_score, key=lambda c: (-chunk_score[c], c))[: g.max_evidence_chunks]
    chunks = ctx.store.get_chunks(best)
    by_doc: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for cid in best:
        ch = chunks.get(cid)
        if ch is None:
            continue
        by_doc.setdefault((ch.doc_id, ch.version), []).append({
            "chunk_id": ch.chunk_id, "text": ch.text, "start": ch.start, "end": ch.end,
            "quotes": sorted(quotes.get(cid, []), key=lambda q: (q["start"] is None, q["start"] or 0)),
        })
    supporting_documents = []
    for (doc_id, version), chunk_list in by_doc.items():
        doc = ctx.store.get_document(doc_id, version)
        supporting_documents.append({
            "doc_id": doc_id,
            "doc_title": doc.title if doc else doc_id,
            "version": version,
            "is_latest": bool(doc and doc.is_latest),
            "supporting_chunks": chunk_list,
        })

    def docs_of(item_id: str) -> list[str]:
        return sorted(f"{d}" if v == 1 else f"{d}@v{v}" for d, v in prov_docs.get(item_id, set()))

    # Paths: from each seed to each leaf of the BFS tree (a node that parents no other).
    parents = {p for p, _ in res.parent.values()}
    paths: list[dict[str, Any]] = []
    covered: set[str] = set()
    for nid in res.order:
        if nid in parents or nid not in res.parent:
            continue
        chain: list[tuple[str, Edge]] = []
        cur = nid
        while cur in res.parent:
            here, e = res.parent[cur]
            chain.append((here, e))
            cur = here
        chain.reverse()
        steps = []
        for _here, e in chain:
            covered.add(e.id)
            steps.append({"source": e.source, "target": e.target, "type": e.type, "edge_id": e.id,
                          "confidence": e.confidence, "documents": docs_of(e.id)})
        text_parts = [_step_text(e, nodes, docs_of(e.id)) for _, e in chain]
        paths.append({"from": cur, "to": nid, "steps": steps, "text": " ; ".join(text_parts)})
    # Edges among the subgraph that no BFS path used are evidence too.
    for e in cited:
        if e.id not in covered:
            paths.append({
                "from": e.source, "to": e.target,
                "steps": [{"source": e.source, "target": e.target, "type": e.type, "edge_id": e.id,
                           "confidence": e.confidence, "documents": docs_of(e.id)}],
                "text": _step_text(e, nodes, docs_of(e.id)),
            })
    chain_text = (" | ".join(p["text"] for p in paths) if paths
                  else "No edges in subgraph." if subgraph["nodes"] else "No matching nodes found.")
    return {
        "query": text,
        "subgraph": subgraph,
        "supporting_documents": supporting_documents,
        "evidence_chain": chain_text,
        "evidence_paths": paths,
    }
