"""The one retrieval pipeline: seeds -> expand -> rerank -> evidence.

1. Seeds: BM25 over chunks (FTS5), dense top-k over chunk vectors, fused (RRF or a
   normalised weighted sum); entities named in the query (phrases, stemmed words) or close
   to it in embedding space.
2. Expand over one graph whose vertices are passages (chunks) and entities: passages connect
   to the entities they mention, entities to each other through relations (weight =
   confidence). Personalised PageRank by local push (cost follows the neighbourhood) or BFS.
   Query entities get HippoRAG's node specificity: weight / number of passages mentioning it.
3. Rerank: ``(alpha*dense + beta*lexical + gamma*graph) * relevance``, each part normalised
   by its maximum over the candidates and reported per hit. Optionally (``feedback_passages``,
   on with contextual embedders) steps 1-3 run again for the query followed by its best
   passage's text, and the two passage rankings are fused by reciprocal rank.
4. Evidence: every hit carries citations (document, version, chunk, span, text) and the path
   from a seed; ``context`` packs the best evidence into a token budget.
"""

from __future__ import annotations

import reprlib
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidInput
from ..models import ENTITY
from .config import SearchConfig, auto_preset, is_contextual, resolve_config
from .fusion import max_normalise, rrf, weighted_sum
from .graph_query import find_seed_entities
from .ppr import personalized_pagerank

if TYPE_CHECKING:
    from ..kb import KnowledgeBase

__all__ = ["Hit", "SearchResult", "search", "KINDS", "auto_preset_for"]

KINDS = ("chunk", "entity", "document", "page")
GNode = tuple[str, str]  # ("c", chunk_id) | ("n", node_id)


@dataclass
class Hit:
    """One result with its score parts, evidence and how it was reached."""

    kind: str
    id: str
    score: float
    parts: dict[str, float]
    seed: bool
    title: str
    text: str
    doc_id: str | None = None
    chunk_id: str | None = None
    version: int | None = None
    citations: list[dict[str, Any]] = field(default_factory=list)
    path: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (the ``--json`` hit shape)."""
        return {
            "kind": self.kind, "id": self.id, "doc_id": self.doc_id, "chunk_id": self.chunk_id,
            "version": self.version, "title": self.title, "text": self.text, "score": round(self.score, 6),
            "parts": {k: round(v, 6) for k, v in self.parts.items()}, "seed": self.seed,
            "citations": self.citations, "path": self.path,
        }


@dataclass
class SearchResult:
    """Hits, the subgraph that connects them, notes, and (on request) a context block."""

    query: str
    hits: list[Hit]
    subgraph: list[dict[str, Any]]
    notes: list[str]
    context: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``{"query", "hits": [...], "subgraph": [...], "notes", "context"?}``."""
        out: dict[str, Any] = {"query": self.query, "hits": [h.to_dict() for h in self.hits],
                               "subgraph": self.subgraph, "notes": self.notes}
        if self.context is not None:
            out["context"] = self.context
        return out


class _Graph:
    """Neighbours in the passage+entity graph, fetched in batches from the store."""

    def __init__(self, kb: KnowledgeBase, cfg: SearchConfig) -> None:
        self.store = kb.store
        self.cfg = cfg

    def __call__(self, nodes: list[GNode]) -> dict[GNode, list[tuple[GNode, float]]]:
        out: dict[GNode, list[tuple[GNode, float]]] = {n: [] for n in nodes}
        chunks = [i for t, i in nodes if t == "c"]
        ents = [i for t, i in nodes if t == "n"]
        w = self.cfg.mention_weight
        if chunks:
            by_chunk = self.store.chunk_entities(chunks)
            power = self.cfg.mention_idf_power
            counts = (self.store.entity_chunk_counts({e for es in by_chunk.values() for e in es})
                      if power else {})
            for cid, eids in by_chunk.items():
                # Rare entities are the informative bridges; hubs ("2018", "city") spread mass thin.
                out[("c", cid)] = [(("n", e), w / (max(counts.get(e, 1), 1) ** power) if power else w)
                                   for e in eids]
        if ents:
            for src, _type, dst, conf, _id in self.store.adjacency(ents, self.cfg.min_confidence):
                rw = conf * self.cfg.relation_weight
                if ("n", src) in out:
                    out[("n", src)].append((("n", dst), rw))
                if ("n", dst) in out:
                    out[("n", dst)].append((("n", src), rw))
            by_entity = self.store.entities_chunks(ents, self.cfg.max_mentions_per_entity)
            lead, boost = self.cfg.lead_chars, self.cfg.lead_mention_weight
            for eid, cids in by_entity.items():
                # A passage that names the entity in its title or lead is about it.
                out[("n", eid)].extend((("c", cid), w * boost if first < lead else w) for cid, first in cids)
        return out


def _bfs_scores(seeds: Mapping[GNode, float], graph: _Graph, cfg: SearchConfig
                ) -> tuple[dict[GNode, float], dict[GNode, GNode]]:
    """Best product of (seed score x edge weights) over paths of length <= depth."""
    top = max(seeds.values())
    score = {n: v / top for n, v in seeds.items()}
    parent: dict[GNode, GNode] = {}
    frontier = sorted(score, key=lambda n: -score[n])[: cfg.bfs_max_nodes]
    score = {n: score[n] for n in frontier}
    for _ in range(cfg.bfs_depth):
        if not frontier or len(score) >= cfg.bfs_max_nodes:
            break
        adj = graph(frontier)
        cand: dict[GNode, tuple[float, GNode]] = {}
        for u in frontier:
            for v, w in adj.get(u, ()):
                s = score[u] * min(w, 1.0) * 0.5  # each hop halves: closer evidence ranks higher
                if v not in score and s > cand.get(v, (0.0, u))[0]:
                    cand[v] = (s, u)
        room = cfg.bfs_max_nodes - len(score)
        nxt = sorted(cand, key=lambda v: -cand[v][0])[:room]
        for v in nxt:
            score[v], parent[v] = cand[v][0], cand[v][1]
        frontier = nxt
    return score, parent


def _entity_seeds(kb: KnowledgeBase, query: str, qvec: np.ndarray | None, cfg: SearchConfig,
                  near_chunks: Sequence[str]) -> dict[str, float]:
    """Entities the query names (exact, whole-name matches) plus, when there is a query vector,
    entities close to it in embedding space among those mentioned by the seed passages (a local
    search: its cost follows the seeds, not the number of entities)."""
    seeds: dict[str, float] = {}
    for nid in find_seed_entities(kb, query, cfg.seed_k_entities, strict=True):
        seeds[nid] = 1.0
    if qvec is not None and near_chunks:
        index = kb.vector_index(ENTITY)
        if index is not None:
            near = {e for es in kb.store.chunk_entities(near_chunks).values() for e in es}
            sims = sorted(index.similarity(qvec, sorted(near)).items(), key=lambda t: -t[1])
            for nid, sim in sims[: cfg.seed_k_entities]:
                if sim >= cfg.entity_dense_min:
                    seeds[nid] = max(seeds.get(nid, 0.0), sim)
    return seeds


def auto_preset_for(kb: KnowledgeBase) -> str:
    """Resolve preset "auto" from the embedder and how many relations and passages have vectors
    (counted only for a contextual embedder: a static model's answer needs no vectors loaded)."""
    if kb.embeddings.model_id is None or not is_contextual(kb.embeddings.spec):
        return "default"
    sizes = []
    for kind in ("relation", "chunk"):
        index = kb.vector_index(kind)
        if index is not None:
            index.refresh()
        sizes.append(len(index) if index is not None else 0)
    return auto_preset(kb.embeddings.spec, sizes[0], sizes[1])


def _fact_seeds(kb: KnowledgeBase, qvec: np.ndarray | None, cfg: SearchConfig) -> dict[str, float]:
    """The entities of the relations nearest the query as "subject relation object" facts
    (HippoRAG 2's query-to-triple matching), weighted by cosine."""
    ents: dict[str, float] = {}
    facts = kb.vector_index("relation") if qvec is not None and cfg.fact_seed_k > 0 else None
    if facts is None:
        return ents
    top = [(fid, sim) for fid, sim in facts.search(qvec, cfg.fact_seed_k) if sim >= cfg.fact_min]
    edges = kb.store.get_edges(fid for fid, _ in top)
    for fid, sim in top:
        e = edges.get(fid)
        if e is not None:
            for nid in (e.source, e.target):
                ents[nid] = max(ents.get(nid, 0.0), sim * cfg.fact_weight)
    return ents


def _ancestors(node: GNode, parent: Mapping[GNode, GNode]) -> list[GNode]:
    chain = []
    while node in parent and len(chain) < 8:
        node = parent[node]
        chain.append(node)
    return chain


def _path(node: GNode, parent: Mapping[GNode, GNode], names: Mapping[GNode, str]) -> list[str]:
    chain = [node]
    while chain[-1] in parent and len(chain) < 8:
        chain.append(parent[chain[-1]])
    return [names.get(n, n[1]) for n in reversed(chain)]


def search(
    kb: KnowledgeBase,
    query: str,
    *,
    kinds: Sequence[str] = ("chunk",),
    k: int = 10,
    strategy: str | None = None,
    preset: str | None = None,
    config: SearchConfig | Mapping[str, Any] | None = None,
    as_context: bool = False,
    token_budget: int = 1000,
    with_subgraph: bool = True,
) -> SearchResult:
    """Search the knowledge base; see the module docstring for the pipeline.

    ``with_subgraph=False`` skips the edges among the hits (for callers that build their own)."""
    if not isinstance(query, str):
        raise InvalidInput(f"query: expected a string, got {type(query).__name__}")
    if not isinstance(k, int) or k < 1:
        raise InvalidInput(f"k: expected a positive integer, got {k!r}")
    if not isinstance(kinds, (str, list, tuple, set, frozenset)):
        raise InvalidInput(f"kinds: expected a kind or a list of kinds ({', '.join(KINDS)}), "
                           f"got {type(kinds).__name__}")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    for kind in kinds:
        if not isinstance(kind, str) or kind not in KINDS:
            raise InvalidInput(f"kind {reprlib.repr(kind)}: choose from {', '.join(KINDS)}")
    if config is not None and not isinstance(config, (SearchConfig, Mapping)):
        raise InvalidInput(f"config: expected a mapping of search settings or a SearchConfig, "
                           f"got {type(config).__name__}")
    if isinstance(config, SearchConfig):
        cfg = config if strategy is None else config.replace(strategy=strategy)
    else:
        overrides = dict(config or {})
        if strategy is not None:
            overrides["strategy"] = strategy
        name = preset or kb.config["search"]["preset"]
        if name == "auto":
            name = auto_preset_for(kb)
        cfg = resolve_config(name, overrides)
    t0 = time.perf_counter()
    want = max(k * (5 if "document" in kinds else 1), cfg.max_candidates)
    hits, notes, timings = _rank(kb, query, cfg, kinds, want)
    if cfg.feedback_passages > 0 and ("chunk" in kinds or "document" in kinds):
        hits = _feedback_round(kb, query, cfg, hits, want, notes, timings)
    if "document" in kinds:
        doc_hits = _document_hits(hits)
        if "chunk" not in kinds:
            hits = [h for h in hits if h.kind != "chunk"]
        hits.extend(doc_hits)
    order = {kind: i for i, kind in enumerate(kinds)}
    hits.sort(key=lambda h: (-h.score, order.get(h.kind, 9), h.id))
    hits = hits[:k] if len(kinds) == 1 else _interleave(hits, kinds, k)

    # 4. evidence ---------------------------------------------------------------------------
    subgraph = _subgraph(kb, hits, cfg.min_confidence) if with_subgraph else []
    result = SearchResult(query, hits, subgraph, notes, timings_ms=timings)
    if as_context:
        result.context = build_context(hits, subgraph, token_budget)
    timings["total"] = (time.perf_counter() - t0) * 1000
    return result


def _rank(kb: KnowledgeBase, query: str, cfg: SearchConfig, kinds: Sequence[str], want: int
          ) -> tuple[list[Hit], list[str], dict[str, float]]:
    """Steps 1-3 for one query: the best ``want`` hits of each kind asked for (chunks stand in
    for documents), best first, with notes and timings."""
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    notes: list[str] = []
    store = kb.store

    # 1. seeds ------------------------------------------------------------------------------
    qvec = kb.embed_query(query) if cfg.use_dense or cfg.use_entities else None
    # A model that failed to load was reported once already (a warning, kb.notes): repeating it
    # in every result printed it twice per command (stdout and stderr).
    if qvec is None and cfg.use_dense and kb.embedder_note and not kb.embeddings.note_reported:
        notes.append(kb.embedder_note)
    # Candidate pools are deep (pool_k); only their heads seed the graph walk (seed_k_*).
    pool = max(cfg.pool_k, want if cfg.strategy == "none" else 0)
    lex: dict[str, float] = {}
    if cfg.use_lexical:
        lex = {h.chunk.chunk_id: h.score for h in store.search_chunks(query, max(pool, cfg.seed_k_lexical))}
    dense: dict[str, float] = {}
    chunk_index = kb.vector_index("chunk") if qvec is not None and cfg.use_dense else None
    if chunk_index is not None:
        dense = {c: v for c, v in chunk_index.search(qvec, max(pool, cfg.seed_k_dense)) if v > cfg.dense_seed_min}
    rankings = [sorted(m, key=lambda c, m=m: -m[c]) for m in (lex, dense)]
    if cfg.fusion == "rrf":
        fused = rrf(rankings, cfg.rrf_k, cfg.fusion_weights)
    else:
        fused = weighted_sum([lex, dense], cfg.fusion_weights)
    seed_ids = set(rankings[0][: cfg.seed_k_lexical]) | set(rankings[1][: cfg.seed_k_dense])
    ent_seeds = _entity_seeds(kb, query, qvec, cfg, sorted(seed_ids)) if cfg.use_entities else {}
    for nid, w in (_fact_seeds(kb, qvec, cfg) if cfg.use_entities else {}).items():
        ent_seeds[nid] = max(ent_seeds.get(nid, 0.0), w)
    timings["seeds"] = (time.perf_counter() - t0) * 1000

    # 2. expand -----------------------------------------------------------------------------
    graph = _Graph(kb, cfg)
    graph_score: dict[GNode, float] = {}
    parent: dict[GNode, GNode] = {}
    seeds: dict[GNode, float] = {}
    if seed_ids:
        top = max(fused[c] for c in seed_ids)
        total = sum(fused[c] for c in seed_ids)
        for cid in seed_ids:
            v = fused[cid]
            seeds[("c", cid)] = cfg.passage_seed_weight * v / total if cfg.strategy == "ppr" else v / top
    if ent_seeds:
        counts = store.entity_chunk_counts(ent_seeds)
        spec = {e: s / max(counts.get(e, 1), 1) for e, s in ent_seeds.items()}  # node specificity
        total = sum(spec.values())
        top = max(spec.values())
        for e, v in spec.items():
            seeds[("n", e)] = seeds.get(("n", e), 0.0) + (
                cfg.entity_seed_weight * v / total if cfg.strategy == "ppr" else v / top)
    if cfg.strategy == "ppr" and seeds:
        res = personalized_pagerank(seeds, graph, alpha=cfg.ppr_restart, eps=cfg.ppr_eps,
                                    max_nodes=cfg.ppr_max_nodes)
        graph_score, parent = res.scores, res.parent
        if cfg.graph_walk_only:
            # A seed's own restart mass says "it was a seed", which lexical/dense already say;
            # the mass that arrived by walking is what the graph adds.
            total_p = sum(seeds.values())
            graph_score = {n: max(v - cfg.ppr_restart * seeds.get(n, 0.0) / total_p, 0.0)
                           for n, v in graph_score.items()}
    elif cfg.strategy == "bfs" and seeds:
        graph_score, parent = _bfs_scores(seeds, graph, cfg)
    timings["expand"] = (time.perf_counter() - t0) * 1000 - timings["seeds"]

    # 3. rerank -----------------------------------------------------------------------------
    hits: list[Hit] = []
    names: dict[GNode, str] = {}
    chunk_cands = list(dict.fromkeys(
        list(fused) + [n[1] for n in sorted((n for n in graph_score if n[0] == "c"),
                                            key=lambda n: -graph_score[n])[:want]]))
    info = store.chunk_info(chunk_cands)
    chunk_cands = [c for c in chunk_cands if c in info and info[c][3]]  # latest versions only
    for c in chunk_cands:
        names[("c", c)] = f"{info[c][2]} [{c}]"
    # Names only for what a result can show: paths of the best candidates and entity hits.
    top_graph = sorted((n for n in graph_score if n[0] == "n"), key=lambda n: -graph_score[n])[:want]
    on_paths = {p for c in chunk_cands[:want] for p in _ancestors(("c", c), parent) if p[0] == "n"}
    ent_ids_needed = {n[1] for n in on_paths} | set(ent_seeds) | (
        {n[1] for n in top_graph} if "entity" in kinds else set())
    ent_map = store.get_nodes(ent_ids_needed) if "entity" in kinds else {}
    for nid, name in store.node_names(ent_ids_needed).items():
        names[("n", nid)] = name

    def combine(ids: list[str], dense_s: Mapping[str, float], lex_s: Mapping[str, float],
                graph_s: Mapping[str, float], relevance: Mapping[str, float]) -> list[tuple[str, float, dict]]:
        d, lx, g = max_normalise(dense_s), max_normalise(lex_s), max_normalise(graph_s)
        if cfg.rerank == "rrf":  # ranks instead of magnitudes: a strong second-hop signal counts
            ranks = [{x: r for r, x in enumerate(sorted((y for y in m if m[y] > 0), key=lambda y, m=m: -m[y]), 1)}
                     for m in (d, lx, g)]
        out = []
        for i in ids:
            parts = {"dense": d.get(i, 0.0), "lexical": lx.get(i, 0.0), "graph": g.get(i, 0.0),
                     "relevance": relevance.get(i, 1.0)}
            if cfg.rerank == "rrf":
                score = sum(w / (cfg.rerank_k + rk[i]) for w, rk in zip((cfg.alpha, cfg.beta, cfg.gamma), ranks)
                            if i in rk)
            else:
                score = cfg.alpha * parts["dense"] + cfg.beta * parts["lexical"] + cfg.gamma * parts["graph"]
            if cfg.alpha == cfg.beta == cfg.gamma == 0.0:  # pure fusion preset (e.g. rrf)
                score = fused.get(i, 0.0)
            out.append((i, score * parts["relevance"], parts))
        return sorted(out, key=lambda t: (-t[1], t[0]))

    if "chunk" in kinds or "document" in kinds:
        dsim = chunk_index.similarity(qvec, chunk_cands) if chunk_index is not None else {}
        dsim = {c: max(s, 0.0) for c, s in dsim.items()}
        blex = store.chunk_bm25(query, chunk_cands) if cfg.use_lexical else {}
        gs = {n[1]: v for n, v in graph_score.items() if n[0] == "c"}
        ranked = combine(chunk_cands, dsim, blex, gs, {})
        chunks = store.get_chunks([c for c, _, _ in ranked[:want]])
        for cid, score, parts in ranked[:want]:
            ch = chunks[cid]
            doc_id, version, title, _ = info[cid]
            hits.append(Hit("chunk", cid, score, parts, ("c", cid) in seeds, title, ch.text, doc_id, cid, version,
                            [{"doc_id": doc_id, "version": version, "chunk_id": cid, "start": ch.start,
                              "end": ch.end, "text": ch.text, "title": title}],
                            _path(("c", cid), parent, names)))
    if "entity" in kinds:
        ent_ids = list(dict.fromkeys(list(ent_seeds) + [n[1] for n in top_graph]))
        ent_ids = [e for e in ent_ids if e in ent_map and ent_map[e].kind == ENTITY and not ent_map[e].archived]
        eindex = kb.vector_index(ENTITY) if qvec is not None else None
        edense = {e: max(s, 0.0) for e, s in (eindex.similarity(qvec, ent_ids) if eindex else {}).items()}
        elex = dict(store.search_node_names(query, ENTITY, want)) if cfg.use_lexical else {}
        gs = {n[1]: v for n, v in graph_score.items() if n[0] == "n"}
        prov = store.provenance_for("node", ent_ids[:want], 3)
        for eid, score, parts in combine(ent_ids, edense, elex, gs, {e: ent_map[e].relevance for e in ent_ids})[:want]:
            node = ent_map[eid]
            cites = [{"doc_id": p.doc_id, "version": p.version, "chunk_id": p.chunk_id, "start": p.start,
                      "end": p.end, "text": p.text} for p in prov.get(eid, [])]
            hits.append(Hit("entity", eid, score, parts, ("n", eid) in seeds, node.name,
                            f"{node.name} [{node.type}]", citations=cites, path=_path(("n", eid), parent, names)))
    if "page" in kinds:
        hits.extend(_page_hits(kb, query, want, graph_score, cfg))
    timings["rerank"] = (time.perf_counter() - t0) * 1000 - timings["seeds"] - timings["expand"]
    return hits, notes, timings


def _feedback_round(kb: KnowledgeBase, query: str, cfg: SearchConfig, hits: list[Hit], want: int,
                    notes: list[str], timings: dict[str, float]) -> list[Hit]:
    """A second round for multi-hop questions: the query followed by the text of its best
    ``feedback_passages`` passages finds what the first hop leads to (the passage names the
    bridge entity the question only describes). The two rankings of passages are fused by
    reciprocal rank; each passage reports both contributions (``first_round``, ``feedback``),
    its other parts and path come from the round that ranked it higher."""
    t0 = time.perf_counter()
    first = [h for h in hits if h.kind == "chunk"]
    if not first:
        return hits
    text = " ".join(h.text for h in first[: cfg.feedback_passages])
    second, notes2, _ = _rank(kb, f"{query}\n{text}", cfg, ["chunk"], want)
    notes.extend(n for n in notes2 if n not in notes)
    rank1 = {h.id: r for r, h in enumerate(first, 1)}
    rank2 = {h.id: r for r, h in enumerate(second, 1)}
    by1, by2 = {h.id: h for h in first}, {h.id: h for h in second}
    fused: list[Hit] = []
    for cid in by1.keys() | by2.keys():
        r1, r2 = rank1.get(cid), rank2.get(cid)
        h = by2[cid] if r1 is None or (r2 is not None and r2 < r1) else by1[cid]
        a = 1.0 / (cfg.feedback_rrf_k + r1) if r1 is not None else 0.0
        b = cfg.feedback_weight / (cfg.feedback_rrf_k + r2) if r2 is not None else 0.0
        h.parts = {**h.parts, "first_round": a, "feedback": b}
        h.score = a + b
        h.seed = (cid in by1 and by1[cid].seed) or (cid in by2 and by2[cid].seed)
        fused.append(h)
    fused.sort(key=lambda h: (-h.score, h.id))
    timings["feedback"] = (time.perf_counter() - t0) * 1000
    return fused[:want] + [h for h in hits if h.kind != "chunk"]


def _document_hits(hits: list[Hit]) -> list[Hit]:
    """Whole documents ranked by their best passage (citations: their best three)."""
    best: dict[str, Hit] = {}
    docs: dict[str, list[Hit]] = {}
    for h in sorted((h for h in hits if h.kind == "chunk"), key=lambda h: (-h.score, h.id)):
        if h.doc_id:
            docs.setdefault(h.doc_id, []).append(h)
            best.setdefault(h.doc_id, h)
    return [Hit("document", d, h.score, dict(h.parts), h.seed, h.title, h.text, d, h.chunk_id, h.version,
                [c for x in docs[d][:3] for c in x.citations], h.path) for d, h in best.items()]


def _page_hits(kb: KnowledgeBase, query: str, want: int, graph_score: Mapping[GNode, float],
               cfg: SearchConfig) -> list[Hit]:
    """Wiki pages: BM25 over title and text, plus the pages of the entities the walk reached
    (graph part = the entity's share of the walk)."""
    lexical = {h["slug"]: h for h in kb.wiki.search_wiki(query, want)} if cfg.use_lexical else {}
    ents = sorted(((n[1], v) for n, v in graph_score.items() if n[0] == "n"), key=lambda t: -t[1])[:want]
    about = kb.store.pages_by_subject(f"entity:{e}" for e, _ in ents)
    gs: dict[str, float] = {}
    for e, v in ents:
        page = about.get(f"entity:{e}")
        if page is not None:
            gs[page.slug] = max(gs.get(page.slug, 0.0), v)
    pages = kb.store.pages_by_slug(set(lexical) | set(gs))
    lex_n = max_normalise({slug: h["score"] for slug, h in lexical.items()})
    graph_n = max_normalise(gs)
    out: list[Hit] = []
    for slug, page in pages.items():
        parts = {"dense": 0.0, "lexical": lex_n.get(slug, 0.0), "graph": graph_n.get(slug, 0.0), "relevance": 1.0}
        score = cfg.beta * parts["lexical"] + cfg.gamma * parts["graph"]
        if score <= 0:
            continue
        text = lexical[slug]["snippet"] if slug in lexical else (page.summary or page.title)
        cite = {"page": slug, "path": f"wiki/{page.path}", "title": page.title, "text": text}
        out.append(Hit("page", slug, score, parts, slug in lexical, page.title, text, citations=[cite]))
    out.sort(key=lambda h: (-h.score, h.id))
    return out[:want]


def _interleave(hits: list[Hit], kinds: Sequence[str], k: int) -> list[Hit]:
    """With several kinds asked for, keep the best k of each (scores are per kind)."""
    out: list[Hit] = []
    for kind in kinds:
        out.extend([h for h in hits if h.kind == kind][:k])
    return out


def _subgraph(kb: KnowledgeBase, hits: list[Hit], min_confidence: float, max_nodes: int = 200,
              max_edges: int = 50) -> list[dict[str, Any]]:
    """The strongest relations (at most ``max_edges``) among the entities of the hits: hit
    entities first, then those mentioned in hit chunks, best hit first, at most ``max_nodes``
    (bounded, so a page of hits over hub entities does not read every edge of every hub)."""
    ents: dict[str, None] = {h.id: None for h in hits if h.kind == "entity"}
    chunk_ids = [h.chunk_id for h in hits if h.kind in ("chunk", "document") and h.chunk_id]
    by_chunk = kb.store.chunk_entities(chunk_ids)
    for cid in chunk_ids:
        for eid in by_chunk.get(cid, ()):
            ents.setdefault(eid, None)
    if not ents:
        return []
    edges = kb.store.edges_among(list(ents)[:max_nodes], min_confidence, max_edges)
    names = kb.store.node_names({e.source for e in edges} | {e.target for e in edges})
    return [{"src": e.source, "dst": e.target, "type": e.type, "weight": e.confidence,
             "src_name": names[e.source], "dst_name": names[e.target]} for e in edges]


def estimate_tokens(text: str) -> int:
    """Rough token count (about four characters per token for English)."""
    return (len(text) + 3) // 4


def build_context(hits: Iterable[Hit], subgraph: Sequence[Mapping[str, Any]], token_budget: int) -> str:
    """The best evidence as one text block with [n] citation markers, within ``token_budget``."""
    if token_budget < 20:
        raise InvalidInput("token_budget: at least 20 tokens")
    blocks: list[str] = []
    used = 0
    cited: list[str] = []
    for h in hits:
        for c in h.citations[:1] or [{"doc_id": h.doc_id, "chunk_id": h.chunk_id, "text": h.text}]:
            key = c.get("chunk_id") or h.id
            if key in cited:
                continue
            n = len(cited) + 1
            where = f"{c.get('doc_id') or c.get('path') or h.title}"
            if c.get("start") is not None:
                where += f", chars {c['start']}-{c['end']}"
            head = f"[{n}] {h.title} ({where})\n"
            body = " ".join(str(c.get("text") or h.text).split())
            room = token_budget - used - estimate_tokens(head) - 1
            if room <= 8:
                break
            if estimate_tokens(body) > room:
                body = _truncate(body, room * 4)
            blocks.append(head + body)
            used += estimate_tokens(head + body) + 1
            cited.append(key)
        if used >= token_budget - 8:
            break
    facts = []
    for e in subgraph:
        line = f"- {e['src_name']} --[{e['type']}]--> {e['dst_name']}"
        if used + estimate_tokens(line) + 1 > token_budget:
            break
        facts.append(line)
        used += estimate_tokens(line) + 1
    text = "\n\n".join(blocks)
    if facts:
        text += "\n\nRelations:\n" + "\n".join(facts)
    return text


def _truncate(text: str, max_chars: int) -> str:
    cut = text[: max(0, max_chars - 1)]
    space = cut.rfind(" ")
    if space > max_chars // 2:
        cut = cut[:space]
    return cut + "…"
