"""The passage adapter over the core: one round of seeds -> expand -> rerank for one query.

The graph is one graph whose vertices are passages (chunks) and entities: passages connect to the
entities they mention, entities to each other through relations (weight = confidence), as in
HippoRAG. :func:`rank` runs the named steps below; :mod:`.search` adds the feedback round,
documents, pages and evidence.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..context import Context
from ..models import ENTITY
from .config import PassageConfig
from .core import chain, expand_bfs, weighted_score
from .fusion import max_normalise, rrf, weighted_sum
from .hits import Hit
from .ppr import personalized_pagerank
from .seeds import find_seed_entities

__all__ = ["GNode", "PassageGraph", "Round", "rank", "fact_seeds"]

_WORD = re.compile(r"\w+", re.UNICODE)

GNode = tuple[str, str]  # ("c", chunk_id) | ("n", node_id)


class PassageGraph:
    """Neighbours in the passage+entity graph, fetched in batches from the store, and the other
    reads of one search that its feedback round would repeat (passage counts, display names,
    chunk rows): one search sees one state of the store."""

    def __init__(self, ctx: Context, cfg: PassageConfig) -> None:
        self.store = ctx.store
        self.cfg = cfg
        # Passage counts of the entities seen so far: a walk meets the same entities round after
        # round, and recounting their passages was ~9% of a search.
        self._counts: dict[str, int] = {}
        # Neighbours fetched so far: a feedback round's walk (same store, same settings) meets
        # most of the first walk's nodes again.
        self._known: dict[GNode, list[tuple[GNode, float]]] = {}
        # Display names and chunk rows read so far: the second round ranks many of the first's
        # candidates again (about half of its chunk rows and names were read by the first round).
        self._names: dict[str, str | None] = {}
        self._info: dict[str, Any] = {}

    def __call__(self, nodes: list[GNode]) -> dict[GNode, list[tuple[GNode, float]]]:
        missing = [n for n in nodes if n not in self._known]
        if missing:
            self._known.update(self._fetch(missing))
        return {n: self._known[n] for n in nodes}

    def chunk_counts(self, entity_ids: set[str]) -> dict[str, int]:
        """Distinct passages mentioning each entity (counted once per walk)."""
        missing = entity_ids - self._counts.keys()
        if missing:
            got = self.store.entity_chunk_counts(missing)
            self._counts.update({e: got.get(e, 0) for e in missing})
        return {e: self._counts[e] for e in entity_ids if self._counts[e]}

    def node_names(self, node_ids: set[str]) -> dict[str, str]:
        """Display name per node id (:meth:`store.node_names`, read once per search)."""
        missing = node_ids - self._names.keys()
        if missing:
            got = self.store.node_names(missing)
            self._names.update({n: got.get(n) for n in missing})
        return {n: name for n in node_ids if (name := self._names[n]) is not None}

    def chunk_info(self, chunk_ids: Sequence[str]) -> dict[str, Any]:
        """``(doc_id, version, title, is_latest)`` per chunk (:meth:`store.chunk_info`, read once)."""
        missing = [c for c in dict.fromkeys(chunk_ids) if c not in self._info]
        if missing:
            got = self.store.chunk_info(missing)
            self._info.update({c: got.get(c) for c in missing})
        return {c: info for c in chunk_ids if (info := self._info[c]) is not None}

    def _fetch(self, nodes: list[GNode]) -> dict[GNode, list[tuple[GNode, float]]]:
        out: dict[GNode, list[tuple[GNode, float]]] = {n: [] for n in nodes}
        chunks = [i for t, i in nodes if t == "c"]
        ents = [i for t, i in nodes if t == "n"]
        w = self.cfg.mention_weight
        if chunks:
            by_chunk = self.store.chunk_entities(chunks)
            power = self.cfg.mention_idf_power
            counts = self.chunk_counts({e for es in by_chunk.values() for e in es}) if power else {}
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

    def bfs_steps(self, frontier: list[GNode]) -> Iterator[tuple[GNode, GNode, float, None]]:
        """The walk's edges as BFS steps: each hop halves (closer evidence ranks higher)."""
        adj = self(frontier)
        for u in frontier:
            for v, w in adj.get(u, ()):
                yield u, v, min(w, 1.0) * 0.5, None


@dataclass
class Round:
    """What one round knows as it goes: first-stage scores, seeds, the walk, names for paths."""

    query: str
    qvec: np.ndarray | None
    chunk_index: Any = None
    lex: dict[str, float] = field(default_factory=dict)
    dense: dict[str, float] = field(default_factory=dict)
    fused: dict[str, float] = field(default_factory=dict)
    seed_ids: set[str] = field(default_factory=set)
    ent_seeds: dict[str, float] = field(default_factory=dict)
    seeds: dict[GNode, float] = field(default_factory=dict)
    graph_score: dict[GNode, float] = field(default_factory=dict)
    parent: dict[GNode, GNode] = field(default_factory=dict)
    names: dict[GNode, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    graph: PassageGraph | None = None  # the walk's neighbours and reads, for a later round of the same search


def rank(ctx: Context, query: str, cfg: PassageConfig, kinds: Sequence[str], want: int,
         graph: PassageGraph | None = None) -> Round:
    """Seeds and expansion for one query (:func:`rerank` turns the round into hits). ``graph``:
    an earlier round's neighbours (the same search: the same store and settings), reused."""
    t0 = time.perf_counter()
    r = Round(query, _query_vector(ctx, query, cfg), graph=graph or PassageGraph(ctx, cfg))
    _note_missing_model(ctx, r, cfg)
    _first_stage(ctx, r, cfg, want)
    if cfg.use_entities:
        _graph_seeds(ctx, r, cfg)
    r.timings["seeds"] = (time.perf_counter() - t0) * 1000
    _walk_seeds(ctx, r, cfg)
    _expand(ctx, r, cfg)
    r.timings["expand"] = (time.perf_counter() - t0) * 1000 - r.timings["seeds"]
    return r


# -- 1. seeds -------------------------------------------------------------------------------------

def _query_vector(ctx: Context, query: str, cfg: PassageConfig) -> np.ndarray | None:
    return ctx.embeddings.embed_query(query) if cfg.use_dense or cfg.use_entities else None


def _note_missing_model(ctx: Context, r: Round, cfg: PassageConfig) -> None:
    # A model that failed to load was reported once already (a warning, kb.notes): repeating it
    # in every result printed it twice per command (stdout and stderr).
    emb = ctx.embeddings
    if r.qvec is None and cfg.use_dense and emb.note and not emb.note_reported:
        r.notes.append(emb.note)


def _first_stage(ctx: Context, r: Round, cfg: PassageConfig, want: int) -> None:
    """BM25 and dense candidate pools, fused; their heads are the passage seeds."""
    # Candidate pools are deep (pool_k); only their heads seed the graph walk (seed_k_*).
    pool = max(cfg.pool_k, want if cfg.strategy == "none" else 0)
    if cfg.use_lexical:
        # Dense or walked candidates outside the lexical pool get their BM25 from the same match.
        keep = cfg.use_dense or cfg.strategy != "none"
        r.lex = dict(ctx.store.rank_chunks(r.query, max(pool, cfg.seed_k_lexical), keep_scores=keep,
                                           title_weight=cfg.title_weight))
    r.chunk_index = ctx.embeddings.vector_index("chunk") if r.qvec is not None and cfg.use_dense else None
    if r.chunk_index is not None:
        r.dense = {c: v for c, v in r.chunk_index.search(r.qvec, max(pool, cfg.seed_k_dense))
                   if v > cfg.dense_seed_min}
    rankings = [sorted(m, key=lambda c, m=m: -m[c]) for m in (r.lex, r.dense)]  # type: ignore[misc]
    if cfg.fusion == "rrf":
        r.fused = rrf(rankings, cfg.rrf_k, cfg.fusion_weights)
    else:
        r.fused = weighted_sum([r.lex, r.dense], cfg.fusion_weights)
    r.seed_ids = set(rankings[0][: cfg.seed_k_lexical]) | set(rankings[1][: cfg.seed_k_dense])


def _graph_seeds(ctx: Context, r: Round, cfg: PassageConfig) -> None:
    """Entities the query names (exact, whole-name matches) plus, when there is a query vector,
    entities close to it in embedding space among those mentioned by the seed passages (a local
    search: its cost follows the seeds, not the number of entities), plus fact seeds."""
    seeds: dict[str, float] = {}
    named = find_seed_entities(ctx, r.query, cfg.seed_k_entities, strict=True)
    if cfg.named_seeds_only:
        named = _written_as_names(_graph(ctx, r, cfg), r.query, named)
    for nid in named:
        seeds[nid] = 1.0
    near_chunks = sorted(r.seed_ids)
    if r.qvec is not None and near_chunks and cfg.link_entities_densely:
        index = ctx.embeddings.vector_index(ENTITY)
        if index is not None:
            near = {e for es in ctx.store.chunk_entities(near_chunks).values() for e in es}
            sims = sorted(index.similarity(r.qvec, sorted(near)).items(), key=lambda t: -t[1])
            for nid, sim in sims[: cfg.seed_k_entities]:
                if sim >= cfg.entity_dense_min:
                    seeds[nid] = max(seeds.get(nid, 0.0), sim)
    for nid, w in fact_seeds(ctx, r.qvec, cfg).items():
        seeds[nid] = max(seeds.get(nid, 0.0), w)
    r.ent_seeds = seeds


def _written_as_names(graph: PassageGraph, query: str, entity_ids: list[str]) -> list[str]:
    """The entities a query names as names: a one-word entity ("Professor", "Film") matched only
    by a lowercase word of a query that capitalises its names ("Which Stanford University
    professor ...") is a common noun there, not a name. A query without capitals (after its first
    word) cannot tell names from words: all stay."""
    words = _WORD.findall(query)
    if not any(w[0].isupper() for w in words[1:]):
        return entity_ids
    as_names = {w.casefold() for w in words if w[0].isupper() or w[0].isdigit()}
    names = graph.node_names(set(entity_ids))
    out = []
    for nid in entity_ids:
        parts = _WORD.findall(names.get(nid, ""))
        if len(parts) == 1 and parts[0].casefold() not in as_names:
            continue
        out.append(nid)
    return out


def fact_seeds(ctx: Context, qvec: np.ndarray | None, cfg: PassageConfig) -> dict[str, float]:
    """The entities of the relations nearest the query as "subject relation object" facts
    (HippoRAG 2's query-to-triple matching), weighted by cosine."""
    ents: dict[str, float] = {}
    facts = ctx.embeddings.vector_index("relation") if qvec is not None and cfg.fact_seed_k > 0 else None
    if facts is None:
        return ents
    top = [(fid, sim) for fid, sim in facts.search(qvec, cfg.fact_seed_k) if sim >= cfg.fact_min]
    edges = ctx.store.get_edges(fid for fid, _ in top)
    for fid, sim in top:
        e = edges.get(fid)
        if e is not None:
            for nid in (e.source, e.target):
                ents[nid] = max(ents.get(nid, 0.0), sim * cfg.fact_weight)
    return ents


def _walk_seeds(ctx: Context, r: Round, cfg: PassageConfig) -> None:
    """Restart weights of the walk: seed passages by fused score, query entities by HippoRAG's
    node specificity (weight / passages mentioning it). PPR takes shares, BFS strengths."""
    ppr = cfg.strategy == "ppr"
    if r.seed_ids:
        # Sorted: a set's order follows the process's hash seed, and the float sum and the walk's
        # seed order with it (the last digits of a score differed between two runs of one query).
        seed_ids = sorted(r.seed_ids)
        top = max(r.fused[c] for c in seed_ids)
        total = sum(r.fused[c] for c in seed_ids)
        for cid in seed_ids:
            v = r.fused[cid]
            r.seeds[("c", cid)] = cfg.passage_seed_weight * v / total if ppr else v / top
    # The search's counts (a feedback round's seeds were mostly counted by the first walk).
    counts = _graph(ctx, r, cfg).chunk_counts(set(r.ent_seeds)) if r.ent_seeds else {}
    cap = cfg.entity_seed_max_passages
    spec = {e: s / max(counts.get(e, 1), 1) for e, s in r.ent_seeds.items()  # node specificity
            if not cap or counts.get(e, 0) <= cap}  # hubs are no seeds (the walk still meets them, damped)
    if spec:
        total = sum(spec.values())
        top = max(spec.values())
        for e, v in spec.items():
            r.seeds[("n", e)] = r.seeds.get(("n", e), 0.0) + (cfg.entity_seed_weight * v / total if ppr else v / top)


# -- 2. expand ------------------------------------------------------------------------------------

def _graph(ctx: Context, r: Round, cfg: PassageConfig) -> PassageGraph:
    if r.graph is None:
        r.graph = PassageGraph(ctx, cfg)
    return r.graph


def _expand(ctx: Context, r: Round, cfg: PassageConfig) -> None:
    if not r.seeds:
        return
    graph = _graph(ctx, r, cfg)
    if cfg.strategy == "ppr":
        res = personalized_pagerank(r.seeds, graph, alpha=cfg.ppr_restart, eps=cfg.ppr_eps,
                                    max_nodes=cfg.ppr_max_nodes)
        r.graph_score, r.parent = res.scores, res.parent
        if cfg.graph_walk_only:
            # A seed's own restart mass says "it was a seed", which lexical/dense already say;
            # the mass that arrived by walking is what the graph adds.
            total_p = sum(r.seeds.values())
            r.graph_score = {n: max(v - cfg.ppr_restart * r.seeds.get(n, 0.0) / total_p, 0.0)
                             for n, v in r.graph_score.items()}
    elif cfg.strategy == "bfs":
        top = max(r.seeds.values())
        walk = expand_bfs({n: v / top for n, v in r.seeds.items()}, graph.bfs_steps, depth=cfg.bfs_depth,
                          max_nodes=cfg.bfs_max_nodes)
        r.graph_score, r.parent = walk.score, {v: u for v, (u, _) in walk.parent.items()}


# -- 3. rerank ------------------------------------------------------------------------------------

def combine(cfg: PassageConfig, fused: Mapping[str, float], ids: list[str], dense_s: Mapping[str, float],
            lex_s: Mapping[str, float], graph_s: Mapping[str, float], relevance: Mapping[str, float],
            gamma: float | None = None) -> list[tuple[str, float, dict[str, float]]]:
    """``(alpha*dense + beta*lexical + gamma*graph) * relevance``, each part normalised by its
    maximum ("weighted") or ``1 / (rerank_k + rank)`` ("rrf"); best first. ``gamma``: instead of
    ``cfg.gamma`` (the ranking without the graph takes 0; a config copy per round cost more)."""
    gamma = cfg.gamma if gamma is None else gamma
    d, lx, g = max_normalise(dense_s), max_normalise(lex_s), max_normalise(graph_s)
    ranks: list[dict[str, int]] = []
    if cfg.rerank == "rrf":  # ranks instead of magnitudes: a strong second-hop signal counts
        ranks = [_ranks(m) for m in (d, lx, g)]
    out = []
    for i in ids:
        parts = {"dense": d.get(i, 0.0), "lexical": lx.get(i, 0.0), "graph": g.get(i, 0.0),
                 "relevance": relevance.get(i, 1.0)}
        if cfg.rerank == "rrf":
            score = sum(w / (cfg.rerank_k + rk[i]) for w, rk in zip((cfg.alpha, cfg.beta, gamma), ranks)
                        if i in rk)
        else:
            score = weighted_score(parts, (("dense", cfg.alpha), ("lexical", cfg.beta), ("graph", gamma)))
        if cfg.alpha == cfg.beta == gamma == 0.0:  # pure fusion preset (e.g. rrf)
            score = fused.get(i, 0.0)
        out.append((i, score * parts["relevance"], parts))
    return sorted(out, key=lambda t: (-t[1], t[0]))


def _ranks(scores: Mapping[str, float]) -> dict[str, int]:
    """Rank (from 1) of every positive score, best first."""
    return {x: r for r, x in enumerate(sorted((y for y in scores if scores[y] > 0), key=lambda y: -scores[y]), 1)}


def _ancestors(node: GNode, parent: Mapping[GNode, GNode]) -> list[GNode]:
    return chain(node, parent, 9)[:-1]


def _path(node: GNode, r: Round) -> list[str]:
    return [r.names.get(n, n[1]) for n in chain(node, r.parent)]


def rerank(ctx: Context, r: Round, cfg: PassageConfig, kinds: Sequence[str], want: int,
           detail: int | None = None, texts: int | None = None) -> list[Hit]:
    """Chunk and entity hits (the kinds asked for), best ``want`` of each, with their paths.

    The candidates and their scores follow ``want``; only the best ``detail`` (default ``want``)
    of each kind are returned, so texts and citations are read only for those; ``texts``: only the
    best that many chunk hits get them now (the others later, by :func:`fill_texts`, if shown)."""
    out_k = want if detail is None else min(detail, want)
    store = ctx.store
    chunk_cands = list(dict.fromkeys(
        list(r.fused) + [n[1] for n in sorted((n for n in r.graph_score if n[0] == "c"),
                                              key=lambda n: -r.graph_score[n])[:want]]))
    graph = _graph(ctx, r, cfg)
    info = graph.chunk_info(chunk_cands)
    chunk_cands = [c for c in chunk_cands if c in info and info[c][3]]  # latest versions only
    for c in chunk_cands:
        r.names[("c", c)] = f"{info[c][2]} [{c}]"
    # Names only for what a result can show: paths of the best candidates and entity hits.
    top_graph = sorted((n for n in r.graph_score if n[0] == "n"), key=lambda n: -r.graph_score[n])[:want]
    on_paths = {p for c in chunk_cands[:want] for p in _ancestors(("c", c), r.parent) if p[0] == "n"}
    ent_ids_needed = {n[1] for n in on_paths} | set(r.ent_seeds) | (
        {n[1] for n in top_graph} if "entity" in kinds else set())
    ent_map = store.get_nodes(ent_ids_needed) if "entity" in kinds else {}
    for nid, name in graph.node_names(ent_ids_needed).items():
        r.names[("n", nid)] = name
    hits: list[Hit] = []
    if "chunk" in kinds or "document" in kinds:
        hits.extend(_chunk_hits(ctx, r, cfg, chunk_cands, info, out_k, texts))
    if "entity" in kinds:
        hits.extend(_entity_hits(ctx, r, cfg, [n[1] for n in top_graph], ent_map, want, out_k))
    return hits


def _chunk_hits(ctx: Context, r: Round, cfg: PassageConfig, chunk_cands: list[str],
                info: Mapping[str, Any], want: int, texts: int | None = None) -> list[Hit]:
    dsim = r.chunk_index.similarity(r.qvec, chunk_cands) if r.chunk_index is not None else {}
    dsim = {c: max(s, 0.0) for c, s in dsim.items()}
    blex = _candidate_bm25(ctx, r, cfg, chunk_cands) if cfg.use_lexical else {}
    gs = {n[1]: v for n, v in r.graph_score.items() if n[0] == "c"}
    ranked = combine(cfg, r.fused, chunk_cands, dsim, blex, gs, {})
    moves: dict[str, str] = {}
    if gs:
        first = [c for c, _, _ in combine(cfg, r.fused, chunk_cands, dsim, blex, {}, {}, gamma=0.0)
                 if c in r.fused]
        ranked = gate(ranked, first, protected(cfg, r, first))
        moves = graph_moves([c for c, _, _ in ranked], first)
    hits = []
    for cid, score, parts in ranked[:want]:
        doc_id, version, title, _ = info[cid]
        hits.append(Hit("chunk", cid, score, parts, ("c", cid) in r.seeds, title, "", doc_id, cid, version, [],
                        _path(("c", cid), r), moves.get(cid, "kept")))
    fill_texts(ctx, hits[:want if texts is None else texts])
    return hits


def fill_texts(ctx: Context, hits: Sequence[Hit]) -> None:
    """Text and citation of every chunk hit that has none yet (a round ranks many candidates; a
    search shows few of them)."""
    bare = [h for h in hits if h.kind == "chunk" and not h.citations]
    chunks = ctx.store.get_chunks([h.id for h in bare]) if bare else {}
    for h in bare:
        ch = chunks[h.id]
        h.text = ch.text
        h.citations = [{"doc_id": h.doc_id, "version": h.version, "chunk_id": h.id, "start": ch.start,
                        "end": ch.end, "text": ch.text, "title": h.title}]


def protected(cfg: PassageConfig, r: Round, first: Sequence[str]) -> set[str]:
    """The first-stage hits the graph may not push down: those in both the lexical and the dense
    top ``protect_agreed`` (two channels agree), and the first stage's top ``protect_top``."""
    keep = set(first[: cfg.protect_top])
    if cfg.protect_agreed and r.lex and r.dense:
        top_lex = sorted(r.lex, key=lambda c: (-r.lex[c], c))[: cfg.protect_agreed]
        top_dense = sorted(r.dense, key=lambda c: (-r.dense[c], c))[: cfg.protect_agreed]
        keep |= set(top_lex) & set(top_dense)
    return keep


def gate(ranked: list[tuple[str, float, dict[str, float]]], first: Sequence[str], keep: set[str]
         ) -> list[tuple[str, float, dict[str, float]]]:
    """``ranked`` (with the graph) re-ordered so that every passage in ``keep`` is at least at its
    place in ``first`` (the order without the graph); the rest keep their order. Scores are lowered
    just enough to stay in the new order (a later sort by score gives the same list)."""
    place = {c: i for i, c in enumerate(first) if c in keep}
    if not place:
        return ranked
    by_id = {c: (c, sc, parts) for c, sc, parts in ranked}
    due = sorted(place, key=lambda c: place[c])  # protected ones, by the place they must reach
    rest = iter([t for t in ranked if t[0] not in place])
    out: list[tuple[str, float, dict[str, float]]] = []
    nxt = next(rest, None)
    while nxt is not None or due:
        if due and (place[due[0]] <= len(out) or nxt is None or by_id[due[0]][1] >= nxt[1]):
            out.append(by_id[due.pop(0)])
        else:
            assert nxt is not None
            out.append(nxt)
            nxt = next(rest, None)
    fixed: list[tuple[str, float, dict[str, float]]] = []
    for c, sc, parts in out:
        if fixed and sc >= fixed[-1][1]:
            sc = fixed[-1][1] - 1e-9 * max(abs(fixed[-1][1]), 1e-9)
        fixed.append((c, sc, parts))
    return fixed


def graph_moves(final: Sequence[str], first: Sequence[str]) -> dict[str, str]:
    """Per passage, what the graph did to its place: "added" (not a first-stage candidate),
    "up", "down" or "kept" (the same place as without the graph)."""
    at = {c: i for i, c in enumerate(first)}
    return {c: "added" if c not in at else "up" if i < at[c] else "down" if i > at[c] else "kept"
            for i, c in enumerate(final)}


def _candidate_bm25(ctx: Context, r: Round, cfg: PassageConfig, chunk_cands: list[str]) -> dict[str, float]:
    """BM25 of the candidates: the seeding's scores (the same expression over the same rows,
    so the same numbers) and one restricted match for the candidates it did not score."""
    blex = {c: r.lex[c] for c in chunk_cands if c in r.lex}
    rest = [c for c in chunk_cands if c not in r.lex]
    if rest:
        blex.update(ctx.store.chunk_bm25(r.query, rest, title_weight=cfg.title_weight))
    return blex


def _entity_hits(ctx: Context, r: Round, cfg: PassageConfig, top_graph: list[str], ent_map: Mapping[str, Any],
                 want: int, out_k: int) -> list[Hit]:
    store = ctx.store
    ent_ids = list(dict.fromkeys(list(r.ent_seeds) + top_graph))
    ent_ids = [e for e in ent_ids if e in ent_map and ent_map[e].kind == ENTITY and not ent_map[e].archived]
    eindex = ctx.embeddings.vector_index(ENTITY) if r.qvec is not None else None
    edense = {e: max(s, 0.0) for e, s in (eindex.similarity(r.qvec, ent_ids) if eindex is not None else {}).items()}
    elex = dict(store.search_node_names(r.query, ENTITY, want)) if cfg.use_lexical else {}
    gs = {n[1]: v for n, v in r.graph_score.items() if n[0] == "n"}
    relevance = {e: ent_map[e].relevance for e in ent_ids}
    ranked = combine(cfg, r.fused, ent_ids, edense, elex, gs, relevance)[:out_k]
    shown = {eid for eid, _, _ in ranked}
    # Citations as before: for the first ``want`` candidates, now read only for those shown.
    prov = store.provenance_for("node", [e for e in ent_ids[:want] if e in shown], 3)
    hits = []
    for eid, score, parts in ranked:
        node = ent_map[eid]
        cites = [{"doc_id": p.doc_id, "version": p.version, "chunk_id": p.chunk_id, "start": p.start,
                  "end": p.end, "text": p.text} for p in prov.get(eid, [])]
        hits.append(Hit("entity", eid, score, parts, ("n", eid) in r.seeds, node.name,
                        f"{node.name} [{node.type}]", citations=cites, path=_path(("n", eid), r)))
    return hits
