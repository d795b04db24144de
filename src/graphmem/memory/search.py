"""Memory search: seeds (dense + BM25 within the scope) -> expand (BFS or personalised
PageRank over memory edges) -> rerank ``(α·dense + β·lexical + γ·graph + feedback) × relevance``.

Every step is confined to the caller's scope: seeds come from scoped queries, and the walk
only steps onto memories that pass the same scope filter, so neither results nor ``subgraph``
can reach another user's, agent's or tenant's memories.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..context import Context
from ..retrieval.config import MemoryConfig, search_config
from ..retrieval.core import expand_bfs, ranked, seed_strengths
from ..retrieval.fusion import max_normalise
from ..retrieval.ppr import personalized_pagerank
from ..retrieval.seeds import find_seed_entities
from ..text import query_words
from .decay import relevance_now
from .dense import ScopeIds, dense_of, dense_top
from .scope import parse_iso

__all__ = ["Ranked", "rank_memories", "STRATEGIES"]

STRATEGIES = ("bfs", "ppr")
MENTION_SEED_STRENGTH = 0.5  # memories naming an entity the query names join the seeds at this strength
LEXICAL_DEPTH = 1000  # BM25 rows read per search (the scope's matches; seeds and candidates' scores)
PPR_EPS = 2e-3  # push threshold: same LoCoMo recall as 1e-4, half the latency
# A path must improve a memory's graph score by more than float noise to become its parent.
MIN_GAIN = 1e-12
_PART_NAMES = ("dense", "lexical", "graph", "frequency", "personal", "success", "relevance")

Lookup = Callable[[list[str]], dict[str, list[tuple[str, float, str]]]]
Parent = tuple[str, str, float]  # (from memory, edge type, edge weight)


@dataclass
class Ranked:
    """Scored memories, best first, with their score parts and the walk that found them."""

    ids: list[str]
    score: dict[str, float]
    parts: dict[str, dict[str, Any]]  # the score's parts of each of ``ids``
    parent: dict[str, Parent] = field(default_factory=dict)  # node -> (from, type, weight)
    rows: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # the full rows of ``ids``
    # how many of ``ids`` come from the candidate pool (the rest: further full-text matches, see
    # _beyond_the_pool); only those count as used. None: all of them
    pooled: int | None = None


def _scoped_neighbours(ctx: Context, filters: Mapping[str, Any], include_archived: bool, floor: float,
                       allowed: dict[str, bool], scope: ScopeIds) -> Lookup:
    """Neighbour lookup over memory edges, restricted to memories passing the scope filter (the
    scope's ids read once, or the store asked about the memories reached when the scope is big)."""
    store = ctx.store

    def lookup(nodes: list[str]) -> dict[str, list[tuple[str, float, str]]]:
        raw = store.memory_neighbours(nodes, floor)
        known = scope.as_set()
        if known is not None:
            inside: Container[str] = known  # the scope's ids (the seeds are among them): no per-memory map
        else:
            unknown = {o for lst in raw.values() for o, _, _ in lst if o not in allowed}
            if unknown:
                found = store.memories_in_scope(unknown, filters, include_archived)
                for o in unknown:
                    allowed[o] = o in found
            inside = {o for o, ok in allowed.items() if ok}
        out: dict[str, list[tuple[str, float, str]]] = {}
        for n, lst in raw.items():
            best: dict[str, tuple[float, str]] = {}
            for o, w, t in lst:
                if o in inside:
                    b = best.get(o)
                    if b is None or w > b[0]:
                        best[o] = (w, t)
            out[n] = [(o, w, t) for o, (w, t) in best.items()]
        return out

    return lookup


_HAS_ENTITIES: weakref.WeakKeyDictionary[Any, tuple[object, bool]] = weakref.WeakKeyDictionary()


def _has_entities(store: Any) -> bool:
    """``store.has_entities()``, asked again only when the store's read stamp moved (every search asks)."""
    stamp = store.read_stamp()
    held = _HAS_ENTITIES.get(store) if stamp is not None else None
    if held is not None and held[0] == stamp:
        return held[1]
    has = bool(store.has_entities())
    if stamp is not None:
        _HAS_ENTITIES[store] = (stamp, has)
    return has


def _bfs(seeds: dict[str, float], lookup: Lookup, depth: int, cap: int
         ) -> tuple[dict[str, float], dict[str, Parent]]:
    """Graph score = best (seed strength x product of edge weights) over paths of <= depth edges
    (the core's BFS, scores rising as better paths are read); the seeds and the ``cap`` best
    others are kept."""

    def steps(frontier: list[str]) -> Iterator[tuple[str, str, float, tuple[str, float]]]:
        nbrs = lookup(frontier)
        for u in frontier:
            for v, w, t in nbrs.get(u, ()):
                yield u, v, w, (t, w)

    walk = expand_bfs(seeds, steps, depth=depth, update="current", frontier_cap=max(cap, 1), min_gain=MIN_GAIN)
    graph = walk.score
    keep = set(seeds) | set(sorted((n for n in graph if n not in seeds), key=lambda n: (-graph[n], n))
                            [: max(0, cap - len(seeds))])
    return ({n: s for n, s in graph.items() if n in keep},
            {n: (u, t, w) for n, (u, (t, w)) in walk.parent.items() if n in keep})


def _ppr(seeds: dict[str, float], lookup: Lookup, damping: float, cap: int
         ) -> tuple[dict[str, float], dict[str, Parent]]:
    """Personalised PageRank by local push from the seeds (cost bounded by the neighbourhood)."""
    types: dict[tuple[str, str], tuple[str, float]] = {}

    def nb(nodes: list[str]) -> dict[str, list[tuple[str, float]]]:
        got = lookup(nodes)
        out: dict[str, list[tuple[str, float]]] = {}
        for n, lst in got.items():
            out[n] = [(o, w) for o, w, _ in lst]
            for o, w, t in lst:
                types[(n, o)] = (t, w)
        return out

    res = personalized_pagerank(seeds, nb, alpha=max(1e-3, 1.0 - damping), eps=PPR_EPS, max_nodes=5000)
    by_score = sorted(res.scores.items(), key=lambda kv: (-kv[1], kv[0]))
    keep = set(seeds) | {n for n, _ in by_score[: max(cap, len(seeds))]}
    graph = max_normalise({n: s for n, s in res.scores.items() if n in keep})
    parent = {v: (u, *types.get((u, v), ("", 0.0))) for v, u in res.parent.items() if v in keep}
    return graph, parent


def _personal(query: str, feedback: Sequence[tuple[str, bool]]) -> float:
    """Mean of ±(word overlap of this query with a past feedback query)."""
    if not feedback:
        return 0.0
    q = set(query_words(query))
    total = 0.0
    for past, helpful in feedback:
        p = set(query_words(past))
        overlap = len(q & p) / len(q | p) if q | p else 0.0
        total += overlap if helpful else -overlap
    return total / len(feedback)


def rank_memories(ctx: Context, query: str, qvec: np.ndarray | None, filters: Mapping[str, Any], *,
                  limit: int, include_archived: bool, strategy: str, use_graph: bool,
                  cfg: MemoryConfig | None = None) -> Ranked:
    """Seeds -> expand -> rerank within the scope ``filters`` (``cfg``: the knowledge base's)."""
    rc = cfg or search_config(ctx.config).memories
    scope = ScopeIds(ctx, filters, include_archived)
    seeds, lexical_all = _seeds(ctx, query, qvec, filters, include_archived, rc, scope)
    graph: dict[str, float] = dict(seeds)
    parent: dict[str, Parent] = {}
    if use_graph and seeds and rc.expansion_depth > 0:
        allowed = {s: True for s in seeds}
        lookup = _scoped_neighbours(ctx, filters, include_archived, rc.edge_weight_floor, allowed, scope)
        cap = int(rc.max_candidates)
        if strategy == "ppr":
            graph, parent = _ppr(seeds, lookup, rc.ppr_damping, cap)
        else:
            graph, parent = _bfs(seeds, lookup, int(rc.expansion_depth), cap)
    if not graph:
        return Ranked([], {}, {})
    ranked = _rerank(ctx, query, qvec, list(graph), seeds, graph if use_graph else {}, lexical_all, parent, limit, rc)
    if len(ranked.ids) < limit:
        ranked = _beyond_the_pool(ctx, query, qvec, filters, include_archived, ranked, set(graph),
                                  lexical_all, limit, rc)
    return ranked


def _beyond_the_pool(ctx: Context, query: str, qvec: np.ndarray | None, filters: Mapping[str, Any],
                     include_archived: bool, ranked: Ranked, pool: set[str],
                     lexical_all: Sequence[tuple[str, float]], limit: int, rc: MemoryConfig) -> Ranked:
    """``ranked`` followed by further matches when the candidate pool (seeds and their graph) holds fewer than
    ``limit``: limit=100 answered 50 hits with the graph (max_candidates) and ~15 without although hundreds
    matched. The next full-text matches outside the pool (memories holding the query's words; dense
    neighbours alone would pad the list with unrelated memories) are ranked by the same score among themselves
    and come after the pool, their scores shifted below its last one (so the list stays sorted). They do not
    count as used (``Ranked.pooled``): a tail of a long list must not keep memories from fading.
    Larger pools for every search were measured and dropped: seeds beyond ``seed_top_k`` lowered LoCoMo's
    R@5 (bench/locomo.py); this changes nothing a pool can fill."""
    want = limit - len(ranked.ids)
    depth = len(pool) + want
    lexical: Sequence[tuple[str, float]] = lexical_all
    if len(lexical) >= LEXICAL_DEPTH and depth > len(lexical):
        lexical = ctx.store.search_memories_fts(query, filters, include_archived, depth)
    extra = [i for i, _ in lexical if i not in pool]
    if not extra:
        return ranked
    more = _rerank(ctx, query, qvec, extra, {}, {}, lexical, {}, want, rc)
    if not more.ids:
        return ranked
    floor = min((ranked.score[i] for i in ranked.ids), default=None)
    top = max(more.score[i] for i in more.ids)
    shift = top - floor + 1e-6 if floor is not None and top >= floor else 0.0  # keeps their order and gaps
    score = {**ranked.score, **{i: more.score[i] - shift for i in more.ids}}
    return Ranked(ranked.ids + more.ids, score, {**ranked.parts, **more.parts}, ranked.parent,
                  {**ranked.rows, **more.rows}, pooled=len(ranked.ids))


def _seeds(ctx: Context, query: str, qvec: np.ndarray | None, filters: Mapping[str, Any], include_archived: bool,
           rc: MemoryConfig, scope: ScopeIds) -> tuple[dict[str, float], Sequence[tuple[str, float]]]:
    """Seed strengths (BM25 and dense fused by rank, plus memories naming the query's entities)
    and the full-text matches of the scope."""
    store = ctx.store
    k = int(rc.seed_top_k)
    # One full-text pass gives the seeds and the BM25 of (nearly) every candidate: the scope's
    # matches are few, and a second MATCH restricted to the candidates costs more than this one.
    lexical_all = store.search_memories_fts(query, filters, include_archived, max(k, LEXICAL_DEPTH))
    lexical_seeds = lexical_all[:k]
    dense_seeds = dense_top(ctx, qvec, filters, include_archived, k, scope_ids=scope)
    # Seed strength: reciprocal-rank fusion of the two lists, best seed 1. (On LoCoMo this beat
    # strength 1 for every seed and a weighted sum of normalised scores; docs/benchmarks.md.)
    seeds = seed_strengths([[i for i, _ in lexical_seeds], [i for i, _ in dense_seeds]])
    if rc.mention_entities and _has_entities(store):
        ents = find_seed_entities(ctx, query, 5, strict=True)
        for mid in store.memories_mentioning(ents, filters, include_archived, k):
            seeds[mid] = max(seeds.get(mid, 0.0), MENTION_SEED_STRENGTH)
    return seeds, lexical_all


def _rerank(ctx: Context, query: str, qvec: np.ndarray | None, cands: list[str], seeds: Mapping[str, float],
            graph: Mapping[str, float], lexical_all: Sequence[tuple[str, float]], parent: dict[str, Parent],
            limit: int, rc: MemoryConfig) -> Ranked:
    """``(alpha*dense + beta*lexical + gamma*graph + feedback terms) * relevance``, best first."""
    store = ctx.store
    rows = store.memory_rank_inputs(cands)
    cands = [c for c in cands if c in rows]
    dense = dense_of(ctx, qvec, cands)  # raw cosine: max-normalising it measured worse on LoCoMo
    bm25 = dict(lexical_all)
    if len(lexical_all) >= LEXICAL_DEPTH:  # the pass was cut: score the rest exactly
        bm25.update(store.memory_bm25(query, [c for c in cands if c not in bm25]))
    lexical = max_normalise({c: bm25[c] for c in cands if c in bm25})
    fb = store.memory_feedback(cands) if rc.delta_personal else {}
    max_uses = max((rows[c].uses for c in cands), default=0)
    now = parse_iso(ctx.now())
    # the weighted sum in weighted_score's order (the same floats), its parts kept as tuples: only the
    # final ``limit`` get their rounded dicts (a search scores ~50 candidates and shows ~10)
    wd, wl, wg, wp, wf, ws = (rc.alpha_dense, rc.beta_bm25, rc.gamma_graph, rc.delta_personal, rc.epsilon_frequency,
                              rc.zeta_success)
    score: dict[str, float] = {}
    raw: dict[str, tuple[float, float, float, float, float, float, float]] = {}
    for c in cands:
        r = rows[c]
        d = max(0.0, dense.get(c, 0.0))
        lx = lexical.get(c, 0.0)
        g = graph.get(c, 0.0)
        freq = math.log1p(r.uses) / math.log1p(max_uses) if max_uses else 0.0
        votes = r.helpful + r.unhelpful
        success = (r.helpful - r.unhelpful) / (votes + 1)
        personal = _personal(query, fb.get(c, []))
        rel = relevance_now(r.quality, r.floor, r.used_at, now, rc.half_life_days)
        score[c] = sum((wd * d, wl * lx, wg * g, wp * personal, wf * freq, ws * success)) * rel
        raw[c] = (d, lx, g, freq, personal, success, rel)
    order = ranked(score)[:limit]
    parts = {c: dict(zip(_PART_NAMES, (round(x, 6) for x in raw[c])), was_seed=c in seeds) for c in order}
    return Ranked(order, score, parts, parent, store.get_memories(order))
