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

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidInput
from ..retrieval.fusion import rrf
from ..retrieval.ppr import personalized_pagerank
from .index import SkillIndex, message_keys

if TYPE_CHECKING:
    from ..kb import KnowledgeBase

__all__ = ["SkillSearchConfig", "SKILL_PRESETS", "SkillHit", "retrieve_skills"]


@dataclass(frozen=True)
class SkillSearchConfig:
    """Knobs of skill retrieval; the defaults are the best found by bench/skills.py."""

    use_lexical: bool = True
    use_dense: bool = True
    use_exact: bool = True
    # FTS5 bm25() column weights: name, triggers, tags, description, body
    field_weights: tuple[float, float, float, float, float] = (10.0, 10.0, 4.0, 2.0, 0.5)
    pool_k: int = 40                 # lexical and dense candidates each
    seed_k: int = 8                  # fused seeds the graph walk starts from
    rrf_k: float = 60.0
    strategy: str = "bfs"            # bfs (one hop) | ppr | none
    ppr_restart: float = 0.5
    ppr_eps: float = 1e-3
    max_graph: int = 30              # graph-only candidates added
    # multipliers of the stored edge weights in the walk, by edge type
    edge_types: tuple[tuple[str, float], ...] = (("related", 1.0), ("mentions", 1.0), ("similar", 1.0),
                                                 ("sibling", 1.0))
    exact_min_words: int = 2         # a one-word name counts as exact only in backticks or /name
    alpha: float = 0.2               # dense
    beta: float = 0.7                # lexical
    gamma: float = 0.1               # graph

    def replace(self, **changes: Any) -> SkillSearchConfig:
        known = {f.name for f in dataclasses.fields(self)}
        bad = set(changes) - known
        if bad:
            raise InvalidInput(f"unknown skills search setting(s) {sorted(bad)}; known: {', '.join(sorted(known))}")
        return dataclasses.replace(self, **changes)


SKILL_PRESETS: dict[str, SkillSearchConfig] = {
    "default": SkillSearchConfig(),
    "bm25": SkillSearchConfig(use_dense=False, use_exact=False, strategy="none", alpha=0.0, beta=1.0, gamma=0.0),
    "dense": SkillSearchConfig(use_lexical=False, use_exact=False, strategy="none", alpha=1.0, beta=0.0, gamma=0.0),
    "ppr": SkillSearchConfig(strategy="ppr"),
    "none": SkillSearchConfig(strategy="none", gamma=0.0),
}


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


def retrieve_skills(kb: KnowledgeBase, idx: SkillIndex, message: str, top_k: int,
                    cfg: SkillSearchConfig, return_all_factor: float) -> list[SkillHit]:
    """The ``top_k`` skills for ``message`` (all of them, ranked, when there are few)."""
    n = len(idx)
    if n == 0:
        return []
    lex: dict[int, float] = {}
    if cfg.use_lexical:
        for sid, s in kb.store.skill_bm25(message, cfg.field_weights, cfg.pool_k):
            j = idx.by_id.get(sid)
            if j is not None:
                lex[j] = s
    dense_all: np.ndarray | None = None
    if cfg.use_dense and idx.vectors is not None:
        q = kb.embed_query(message)
        if q is not None:
            dense_all = idx.vectors @ np.asarray(q, dtype=np.float32)
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
    for i in exact:
        if i not in seeds:
            seeds.append(i)
    graph: dict[int, float] = {}
    parent: dict[int, int] = {}
    if cfg.strategy != "none" and seeds and idx.adjacency:
        pers = {i: fused.get(i, max(fused.values(), default=1.0)) for i in seeds}
        tw = dict(cfg.edge_types)
        if cfg.strategy == "ppr":
            res = personalized_pagerank(
                pers, lambda nodes: {u: [(v, w * tw.get(t, 1.0)) for v, w, t in idx.adjacency.get(u, ())]
                                     for u in nodes},
                alpha=cfg.ppr_restart, eps=cfg.ppr_eps, max_nodes=5000)
            seed_set = set(seeds)
            graph = {i: s for i, s in res.scores.items() if s > 0}
            parent = {i: p for i, p in res.parent.items() if i not in seed_set}
        else:
            total = sum(pers.values()) or 1.0
            for s in seeds:
                graph[s] = max(graph.get(s, 0.0), pers[s] / total)
                for v, w, t in idx.adjacency.get(s, ()):
                    g = pers[s] / total * w * tw.get(t, 1.0)
                    if g > graph.get(v, 0.0):
                        graph[v] = g
                        if v not in pers:
                            parent[v] = s
    cands = set(lex) | set(dense) | exact | set(seeds)
    graph_only = sorted((i for i in graph if i not in cands), key=lambda i: -graph[i])[: cfg.max_graph]
    cands |= set(graph_only)
    everything = n <= top_k * return_all_factor
    if everything:
        cands = set(range(n))

    def norm(m: Mapping[int, float]) -> dict[int, float]:
        top = max((v for v in m.values() if v > 0), default=0.0)
        return {i: v / top for i, v in m.items() if v > 0} if top > 0 else {}

    if dense_all is not None:
        dense = {i: float(dense_all[i]) for i in cands}
    nl, nd, ng = norm(lex), norm(dense), norm({i: graph[i] for i in cands if i in graph})
    direct = set(seeds) | set(lex) | dense_pool  # matched directly, not only through the graph
    hits: list[SkillHit] = []
    for i in cands:
        parts = {"dense": nd.get(i, 0.0), "lexical": nl.get(i, 0.0), "graph": ng.get(i, 0.0),
                 "exact": 1.0 if i in exact else 0.0}
        score = cfg.alpha * parts["dense"] + cfg.beta * parts["lexical"] + cfg.gamma * parts["graph"]
        via = "exact" if i in exact else "seed" if i in direct else "graph" if i in graph else "all"
        e = idx.entries[i]
        src = parent.get(i)
        hits.append(SkillHit(e.id, e.name, e.description, e.category, e.path, score, via, parts,
                             idx.entries[src].id if via == "graph" and src is not None else None))
    hits.sort(key=lambda h: (-h.score, h.id))
    if everything:
        return hits
    # Exact matches are never dropped: they take places from the lowest-scored others.
    pinned = [h for h in hits if h.via == "exact"]
    rest = [h for h in hits if h.via != "exact"][: max(0, top_k - len(pinned))]
    return sorted(pinned + rest, key=lambda h: (-h.score, h.id))
