"""Graph query with evidence: entity seeds from the query text, BFS, provenance.

This is the foundation's ``query`` / ``query_with_evidence`` (the seed's shapes). Seeds are
entities whose name or alias matches the query (:func:`.seeds.find_seed_entities`). Expansion
is the core's BFS (:func:`.core.expand_bfs`) in both directions with the seed's constraints
(depth, confidence, node cap). Its cost follows the neighbourhood touched: each level is one
indexed lookup of the frontier's edges.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..context import Context
from ..ingest.extractors.offline_entities import is_stop_entity
from ..models import Edge, Node, Provenance
from .answer_evidence import (
    AboutDocument,
    Sentence,
    about_documents,
    co_mention_sentences,
    document_claims,
    question_sentences,
    question_words,
)
from .config import GraphQueryConfig, search_config
from .core import expand_bfs
from .query_seeds import NamedSeed, content_words, named_seeds
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


# Without a named entity the walk starts from the pipeline's best few entity hits only: its hits go on
# down to entities that merely share a word with the question (in a small corpus, nearly all of them).
FALLBACK_SEEDS = 3


@dataclass
class _Found:
    """What the graph says about a question: its seeds, the walk, the documents about the named
    seeds and the relations those state, and (without named seeds) the pipeline's passages."""

    named: list[NamedSeed]
    res: BfsResult
    nodes: dict[str, Node]
    edges: list[Edge]
    depth: dict[str, int]
    about: list[AboutDocument]
    claims: list[Edge]
    passages: dict[str, float] = field(default_factory=dict)


def _find(ctx: Context, g: GraphQueryConfig, text: str) -> _Found:
    min_conf = g.min_confidence
    passages: dict[str, float] = {}
    named = named_seeds(ctx, text, g.max_seeds)
    seeds: list[str] = []
    if named:
        seeds = [s.node_id for s in named]
    elif content_words(text):  # (a question of stop words only asks about nothing)
        # Nothing named specifically: the hybrid pipeline's best entity hits (BM25 + dense + PPR)
        # stand in, less the ones that name nothing; its best passages are evidence.
        ents, passages = _hybrid(ctx, text, g.max_seeds, walk=True)
        names = ctx.store.node_names(ents)
        seeds = [e for e in ents if e in names and not is_stop_entity(names[e])][: min(g.max_seeds, FALLBACK_SEEDS)]
    res = bfs(seeds, frontier_edges(ctx, min_conf, g.max_nodes), max_depth=g.max_depth, max_nodes=g.max_nodes)
    nodes = ctx.store.get_nodes(res.order)
    about = about_documents(ctx, seeds, nodes) if named else []
    claims = [e for e, _p in document_claims(ctx, about, min_conf, g.max_nodes)]
    depth = dict(res.depth)
    extra = [n for e in claims for n in (e.source, e.target) if n not in depth]
    if extra:
        nodes.update(ctx.store.get_nodes(extra))
        for n in extra:
            depth.setdefault(n, 1)  # one step from the seed: stated in a document about it
    edges = ctx.store.edges_among(res.order, min_conf, g.max_edges) if res.order else []
    have = {e.id for e in edges}
    edges += [e for e in claims if e.id not in have and e.source in nodes and e.target in nodes]
    # The relations of the seeds first, then those one step out, strongest first within each (the
    # answer before its surroundings); a stable sort keeps the store's order among equals.
    edges.sort(key=lambda e: (min(depth.get(e.source, 9), depth.get(e.target, 9)), -e.confidence))
    return _Found(named, res, nodes, edges, depth, about, claims, passages)


def _subgraph(f: _Found) -> dict[str, Any]:
    return {
        "nodes": {nid: _node_out(f.nodes[nid], d) for nid, d in f.depth.items() if nid in f.nodes},
        "edges": [_edge_out(e, f.nodes) for e in f.edges],
    }


def graph_query(ctx: Context, text: str) -> dict[str, Any]:
    """``{"nodes": {id: {...}}, "edges": [...]}`` for the entities the query names specifically
    (:mod:`.query_seeds`), the walk from them and the relations stated in documents about them;
    when it names none, from the search pipeline's entity hits."""
    return _subgraph(_find(ctx, search_config(ctx.config).graph, text))


def _step_text(e: Edge, nodes: dict[str, Node], docs: list[str]) -> str:
    # Each step is written in the relation's own direction, whichever way BFS walked it.
    cite = f" ({', '.join(docs)})" if docs else " (hand-made)"
    return f"{nodes[e.source].name} --[{e.type}]--> {nodes[e.target].name}{cite}"


def query_with_evidence(ctx: Context, text: str, fast: bool = True) -> dict[str, Any]:
    """The subgraph plus the documents, chunks and spans that support it.

    Seeds are the entities the text names specifically (:mod:`.query_seeds`). Then the answer
    comes from the graph alone (the fast path): the walk's relations and mentions with their
    quotes, the relations stated in documents about the seeds, those documents' sentences that
    hold the question's other words, and sentences naming two seeds (:mod:`.answer_evidence`).
    When the text names nothing, the hybrid search pipeline's entity hits seed the walk and its
    best passages join the evidence (chunks without a quote are passages it found).
    ``fast=False`` also runs the pipeline's passage seeding for named queries (the slow path,
    kept to check the fast one against): its passages come after the graph's evidence.

    Returns ``{query, subgraph, supporting_documents: [{doc_id, doc_title, version,
    supporting_chunks: [{chunk_id, text, start, end, quotes}]}], evidence_chain,
    evidence_paths}``. ``evidence_chain`` is the seed's one-line form; ``evidence_paths``
    lists each path from a seed, every step with the documents that support it.
    """
    g = search_config(ctx.config).graph
    found = _find(ctx, g, text)
    subgraph = _subgraph(found)
    res, nodes, edges, passages = found.res, found.nodes, found.edges, found.passages
    late: dict[str, float] = {}
    if found.named and not fast:
        late = _hybrid(ctx, text, g.max_seeds, walk=False)[1]
    if not subgraph["nodes"] and not passages:
        return {"query": text, "subgraph": subgraph, "supporting_documents": [],
                "evidence_chain": "No matching nodes found.", "evidence_paths": []}
    per_item = g.max_evidence_per_item
    # Evidence for the edges BFS walked, those stated about the seeds, plus the strongest others
    # (bounded: a dense subgraph can hold hundreds of edges, and each costs a lookup).
    tree = {e.id for _, e in res.parent.values()}
    stated = {e.id for e in found.claims}
    cited = ([e for e in edges if e.id in tree] + [e for e in edges if e.id in stated and e.id not in tree]
             + [e for e in edges if e.id not in tree and e.id not in stated][: g.max_nodes])
    edge_prov = ctx.store.provenance_for("edge", [e.id for e in cited], per_item)
    # Seeds' own evidence first, then the rest in discovery order.
    order = list(found.depth)
    node_prov = ctx.store.provenance_for("node", order, per_item)
    sentences: list[Sentence] = []
    if found.named:
        named_at = {p for s in found.named for p in s.positions}
        sentences = question_sentences(ctx, found.about, question_words(text, named_at))
        sentences += co_mention_sentences(ctx, [s.node_id for s in found.named], nodes)

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
    for nid in order:
        for p in node_prov.get(nid, []):
            take(p, 1.5 if found.depth[nid] == 0 else 1.0, nodes[nid].name)
    # The sentences that answer the question count as much as a relation's evidence.
    for s in sentences:
        chunk_score[s.chunk_id] = chunk_score.get(s.chunk_id, 0.0) + 2.0
        q = {"start": s.start, "end": s.end, "text": s.text, "supports": s.supports, "item_id": None,
             "doc_version": s.version}
        bucket = quotes.setdefault(s.chunk_id, [])
        if not any(o["start"] == s.start and o["end"] == s.end for o in bucket):
            bucket.append(q)

    # The hybrid pipeline's passages count too (its best one as much as a relation's evidence).
    for cid, score in passages.items():
        chunk_score[cid] = chunk_score.get(cid, 0.0) + 2.0 * score
    best = sorted(chunk_score, key=lambda c: (-chunk_score[c], c))[: g.max_evidence_chunks]
    # The slow path's passages come after the graph's evidence (the same answer, more to read).
    best += sorted((c for c in late if c not in chunk_score), key=lambda c: (-late[c], c))[
        : max(g.max_evidence_chunks - len(best), 0)]
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
    latest = ctx.store.latest_documents([d for d, _v in by_doc])  # one lookup for all; older versions one each
    for (doc_id, version), chunk_list in by_doc.items():
        doc = latest.get(doc_id)
        if doc is None or doc.version != version:
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
