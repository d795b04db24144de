"""Retrieving the few skills a message needs: seeds -> expand -> rerank, as for passages.

1. Seeds: fielded BM25 (FTS5 over name, triggers, tags, description, body with per-column
   weights), dense cosine over the skills' vectors, fused by reciprocal rank; plus every skill
   whose name or trigger the message contains (those are never dropped).
2. Expand: one BFS hop from the seeds over the related / sibling / similar / mentions edges
   (graph score = seed share x edge weight), or personalised PageRank by local push
   (``strategy``; BFS measured best on bench/skills.py).
3. Rerank: ``alpha*dense + beta*lexical + gamma*graph`` (each normalised by its maximum over the
   candidates); exact matches first. Every result says how it was reached and its parts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..context import Context
from ..retrieval.config import SKILL_PRESETS, SkillConfig
from ..retrieval.core import expand_bfs, weighted_score
from ..retrieval.fusion import max_normalise, rrf
from ..retrieval.ppr import personalized_pagerank
from .index import SkillIndex, message_keys

__all__ = ["SkillSearchConfig", "SKILL_PRESETS", "SkillHit", "retrieve_skills"]

SkillSearchConfig = SkillConfig  # the name faces and users know; one config in retrieval/config.py


@dataclass
class SkillHit:
    """One retrieved skill: what to show, where its SKILL.md is, and why it was picked."""

    id: str
    name: str
    description: str
    category: str
    path: str
    score: float
    via: str                 # exact | seed | graph | all
    parts: dict[str, float]
    from_skill: str | None = None   # for via=graph: the seed it was reached from

    def to_dict(self) -> dict[str, Any]:
        d = {"id": self.id, "name": self.name, "description": self.description, "category": self.category,
             "path": self.path, "score": round(self.score, 6), "via": self.via,
             "parts": {k: round(v, 6) for k, v in self.parts.items()}}
        if self.from_skill:
            d["from"] = self.from_skill
        return d


def _exact_matches(message: str, idx: SkillIndex, min_words: int) -> set[int]:
    """Skills whose name or a trigger the message contains. A one-word name or trigger counts
    only when marked (`name`, /name, $name): plain words like 'review' or 'test' are not a
    request for the skill of that name, and some collections list such words as triggers."""
    keys = message_keys(message, idx.max_key_words)
    out: set[int] = set()
    lowered = message.lower()
    for key in keys:
        long_enough = key.count(" ") + 1 >= min_words
        if key in idx.triggers and (long_enough or _marked(lowered, key)):
            out.update(idx.triggers[key])
        if key in idx.names and (long_enough or any(_marked(lowered, idx.entries[i].name.lower())
                                                    for i in idx.names[key])):
            out.update(idx.names[key])
    return out


def _marked(lowered: str, word: str) -> bool:
    return f"`{word}`" in lowered or f"/{word}" in lowered or f"${word}" in lowered


def retrieve_skills(ctx: Context, idx: SkillIndex, message: str, top_k: int,
                    cfg: SkillConfig, return_all_factor: float) -> list[SkillHit]:
    """The ``top_k`` skills for ``message`` (all of them, ranked, when there are few)."""
    n = len(idx)
    if n == 0:
        return []
    lex = _lexical(ctx, idx, message, cfg)
    dense_all = _dense_all(ctx, idx, message, cfg)
    dense: dict[int, float] = {}
    if dense_all is not None:
        k = min(cfg.pool_k, n)
        top = np.argpartition(-dense_all, k - 1)[:k]
        dense = {int(i): float(dense_all[i]) for i in top[np.argsort(-dense_all[top])] if dense_all[i] > 0}
    dense_pool = set(dense)
    exact = _exact_matches(message, idx, cfg.exact_min_words) if cfg.use_exact else set()
    rankings = [sorted(m, key=lambda i, m=m: -m[i]) for m in (lex, dense) if m]  # type: ignore[misc]
    fused = rrf(rankings, k=cfg.rrf_k) if rankings else {}
    seeds = sorted(fused, key=lambda i: -fused[i])[: cfg.seed_k]
    for i in sorted(exact):  # a set's order follows insertion order on hash collisions, i.e. the string hash seed
        if i not in seeds:
            seeds.append(i)
    graph, parent = _expand(idx, seeds, fused, cfg)
    cands = set(lex) | set(dense) | exact | set(seeds)
    graph_only = sorted((i for i in graph if i not in cands), key=lambda i: -graph[i])[: cfg.max_graph]
    cands |= set(graph_only)
    everything = n <= top_k * return_all_factor
    if everything:
        cands = set(range(n))
    if dense_all is not None:
        dense = {i: float(dense_all[i]) for i in cands}
    direct = set(seeds) | set(lex) | dense_pool  # matched directly, not only through the graph
    hits = _rerank(idx, cands, cfg, lex, dense, {i: graph[i] for i in cands if i in graph}, exact, direct,
                   graph, parent)
    if everything:
        return hits
    # Exact matches are never dropped: they take places from the lowest-scored others.
    pinned = [h for h in hits if h.via == "exact"]
    rest = [h for h in hits if h.via != "exact"][: max(0, top_k - len(pinned))]
    return sorted(pinned + rest, key=lambda h: (-h.score, h.id))


def _lexical(ctx: Context, idx: SkillIndex, message: str, cfg: SkillConfig) -> dict[int, float]:
    """Fielded BM25 of the skills matching ``message`` (by index row)."""
    lex: dict[int, float] = {}
    if cfg.use_lexical:
        for sid, s in ctx.store.skill_bm25(message, cfg.field_weights, cfg.pool_k):
            j = idx.by_id.get(sid)
            if j is not None:
                lex[j] = s
    return lex


def _dense_all(ctx: Context, idx: SkillIndex, message: str, cfg: SkillConfig) -> np.ndarray | None:
    """Cosine of the message with every skill (None without vectors or a model)."""
    if cfg.use_dense and idx.vectors is not None:
        q = ctx.embeddings.embed_query(message)
        if q is not None:
            return idx.vectors @ np.asarray(q, dtype=np.float32)
    return None


def _expand(idx: SkillIndex, seeds: list[int], fused: Mapping[int, float], cfg: SkillConfig
            ) -> tuple[dict[int, float], dict[int, int]]:
    """Graph scores from the seeds over the skill edges (weights times the edge type's multiplier):
    one BFS hop (a seed's share times the edge weight) or personalised PageRank."""
    if cfg.strategy == "none" or not seeds or not idx.adjacency:
        return {}, {}
    pers = {i: fused.get(i, max(fused.values(), default=1.0)) for i in seeds}
    tw = dict(cfg.edge_types)
    adjacency = idx.adjacency
    # A lazily read adjacency (SkillAdjacency) reads each level's skills in one store call.
    prefetch = getattr(adjacency, "prefetch", lambda rows: None)
    if cfg.strategy == "ppr":
        def lookup(nodes: list[int]) -> dict[int, list[tuple[int, float]]]:
            prefetch(nodes)
            return {u: [(v, w * tw.get(t, 1.0)) for v, w, t in adjacency.get(u, ())] for u in nodes}

        res = personalized_pagerank(pers, lookup, alpha=cfg.ppr_restart, eps=cfg.ppr_eps, max_nodes=5000)
        seed_set = set(seeds)
        return ({i: s for i, s in res.scores.items() if s > 0},
                {i: p for i, p in res.parent.items() if i not in seed_set})
    total = sum(pers.values()) or 1.0

    def steps(frontier: list[int]) -> Iterator[tuple[int, int, float, None]]:
        prefetch(frontier)
        for u in frontier:
            for v, w, t in adjacency.get(u, ()):
                yield u, v, w * tw.get(t, 1.0), None

    # Seeds' shares as they were before the hop: a seed raised by another seed spreads its own.
    walk = expand_bfs({s: pers[s] / total for s in seeds}, steps, depth=1, update="level")
    return walk.score, {v: u for v, (u, _) in walk.parent.items()}


def _rerank(idx: SkillIndex, cands: set[int], cfg: SkillConfig, lex: Mapping[int, float],
            dense: Mapping[int, float], graph_c: Mapping[int, float], exact: set[int], direct: set[int],
            graph: Mapping[int, float], parent: Mapping[int, int]) -> list[SkillHit]:
    """``alpha*dense + beta*lexical + gamma*graph``, each part normalised by its maximum; every hit
    says how it was reached (exact, seed, graph, all)."""
    nl, nd, ng = max_normalise(lex), max_normalise(dense), max_normalise(graph_c)
    weights = (("dense", cfg.alpha), ("lexical", cfg.beta), ("graph", cfg.gamma))
    hits: list[SkillHit] = []
    for i in cands:
        parts = {"dense": nd.get(i, 0.0), "lexical": nl.get(i, 0.0), "graph": ng.get(i, 0.0),
                 "exact": 1.0 if i in exact else 0.0}
        score = weighted_score(parts, weights)
        via = "exact" if i in exact else "seed" if i in direct else "graph" if i in graph else "all"
        e = idx.entries[i]
        src = parent.get(i)
        hits.append(SkillHit(e.id, e.name, e.description, e.category, e.path, score, via, parts,
                             idx.entries[src].id if via == "graph" and src is not None else None))
    hits.sort(key=lambda h: (-h.score, h.id))
    return hits
