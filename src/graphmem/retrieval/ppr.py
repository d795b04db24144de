"""Personalised PageRank by local push (Andersen, Chung and Lang, 2006).

Why push and not power iteration over the whole graph: push only ever touches nodes that
receive enough probability mass, so its cost follows the neighbourhood of the seeds, not
the size of the graph. Each round pushes every node whose residual exceeds ``eps`` times
its share, fetching the neighbours of all of them in ONE batched lookup (a round is one or
two SQL queries, not one per node). Total work is bounded by ``1 / (alpha * eps)`` pushes and
by ``max_nodes`` touched.

Conventions (shared with the dense reference in the tests): the walk restarts to the
personalisation vector with probability ``alpha`` at each step; it moves to a neighbour in
proportion to edge weight; a node without neighbours sends its walking mass back to the
personalisation vector.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["PushResult", "personalized_pagerank"]

N = TypeVar("N", bound=Hashable)
NeighboursFn = Callable[[list[N]], Mapping[N, Iterable[tuple[N, float]]]]


@dataclass
class PushResult(Generic[N]):
    """Approximate PPR scores, the strongest predecessor of each node, and the work done."""

    scores: dict[N, float]
    parent: dict[N, N]
    pushes: int
    rounds: int
    touched: int


def personalized_pagerank(
    personalization: Mapping[N, float],
    neighbours: NeighboursFn[N],
    alpha: float = 0.5,
    eps: float = 1e-4,
    max_rounds: int = 50,
    max_nodes: int = 20000,
) -> PushResult[N]:
    """Approximate PPR from ``personalization`` (non-negative weights, normalised here).

    ``neighbours(nodes)`` returns ``{node: [(neighbour, weight), ...]}`` for a batch.
    Returns scores summing to about 1 minus the mass left in residuals (at most ``eps`` per
    touched node).
    """
    if not 0.0 < alpha <= 1.0:
        raise ValueError("alpha (restart probability) must be in (0, 1]")
    total = sum(w for w in personalization.values() if w > 0)
    p: dict[N, float] = {}
    if total <= 0:
        return PushResult(p, {}, 0, 0, 0)
    s = {n: w / total for n, w in personalization.items() if w > 0}
    r: dict[N, float] = dict(s)
    adj: dict[N, list[tuple[N, float]]] = {}
    wsum: dict[N, float] = {}
    parent: dict[N, N] = {}
    best_in: dict[N, float] = {}
    pushes = rounds = 0
    while rounds < max_rounds:
        active = [n for n, v in r.items() if v > eps]
        if not active:
            break
        rounds += 1
        missing = [n for n in active if n not in adj]
        if missing and len(adj) < max_nodes:
            fetched = neighbours(missing)
            for n in missing:
                lst = [(m, float(w)) for m, w in fetched.get(n, ()) if w > 0 and m != n]
                adj[n] = lst
                wsum[n] = sum(w for _, w in lst)
        for u in active:
            mass = r.pop(u, 0.0)
            if mass <= 0:
                continue
            pushes += 1
            p[u] = p.get(u, 0.0) + alpha * mass
            walk = (1.0 - alpha) * mass
            nbrs = adj.get(u)
            if not nbrs:  # dangling, or beyond the touched-node budget: back to the seeds
                for n, w in s.items():
                    r[n] = r.get(n, 0.0) + walk * w
                continue
            total_w = wsum[u]
            for v, w in nbrs:
                share = walk * w / total_w
                r[v] = r.get(v, 0.0) + share
                if share > best_in.get(v, 0.0) and v not in s:
                    best_in[v] = share
                    parent[v] = u
    return PushResult(p, parent, pushes, rounds, len(adj))
