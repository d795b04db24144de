"""The retrieval core: seeds -> expand -> rerank -> evidence, as pure functions.

Nothing here knows what a node is: passages (chunks and entities), memories, skills and the
seed's entity query are adapters that bring their own neighbour lookup (batched, as
:func:`graphmem.retrieval.ppr.personalized_pagerank` takes it) and their own score parts.

- seeds: :func:`seed_strengths` (reciprocal-rank fusion of candidate lists, best seed 1);
- expand: :func:`expand_bfs` (the one BFS) or personalised PageRank (:mod:`.ppr`, the one PPR);
- rerank: :func:`weighted_score` and :func:`ranked`;
- evidence: :func:`chain` (the path from a seed to a node through the expansion's parents).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from .fusion import max_normalise, rrf

__all__ = ["Expansion", "Step", "UPDATES", "expand_bfs", "seed_strengths", "weighted_score", "ranked", "chain"]

N = TypeVar("N", bound=Hashable)
L = TypeVar("L")
Step = tuple[N, N, float, L]  # (from, to, weight, label): one way along one edge
StepsFn = Callable[[list[N]], Iterable[tuple[N, N, float, L]]]

# How a node's graph score may change once it has one:
#   "first"   - never: a node keeps the best score of the level that first reached it (a BFS tree;
#               the node cap takes the best new nodes of each level);
#   "level"   - rises to the best path found, sources scored as they were when the level began;
#   "current" - rises to the best path found, sources scored as they are when their edges are read.
UPDATES = ("first", "level", "current")


@dataclass
class Expansion(Generic[N, L]):
    """Graph scores (seeds included), the step that reached each non-seed node, its depth."""

    score: dict[N, float]
    parent: dict[N, tuple[N, L]] = field(default_factory=dict)
    depth: dict[N, int] = field(default_factory=dict)


def expand_bfs(
    seeds: Mapping[N, float],
    steps: StepsFn[N, L],
    *,
    depth: int,
    max_nodes: int | None = None,
    update: str = "first",
    frontier_cap: int | None = None,
    min_gain: float = 0.0,
) -> Expansion[N, L]:
    """Level-by-level expansion from ``seeds`` (node -> strength): a node reached from ``u`` along a
    step of weight ``w`` scores ``score[u] * w``; the best path wins (the first on a tie).

    ``steps(frontier)`` returns the steps leaving the frontier, in the order they should be tried
    (one batched lookup per level: the cost follows the neighbourhood touched). ``update`` is one
    of :data:`UPDATES`. ``max_nodes`` (with "first") caps the nodes kept, seeds first, strongest
    first; ``frontier_cap`` (with "level"/"current") caps the nodes expanded at each level;
    ``min_gain`` is how much a path must improve a score to replace it.
    """
    if update not in UPDATES:
        raise ValueError(f"update must be one of {UPDATES}")
    if max_nodes is not None:
        frontier = sorted(seeds, key=lambda n: -seeds[n])[:max_nodes]
        score = {n: seeds[n] for n in frontier}
    else:
        frontier = list(seeds)
        score = dict(seeds)
    out: Expansion[N, L] = Expansion(score, {}, {n: 0 for n in score})
    for level in range(1, depth + 1):
        if not frontier or (max_nodes is not None and len(score) >= max_nodes):
            break
        if update == "first":
            frontier = _first_visits(out, frontier, steps, level, max_nodes)
        else:
            frontier = _improve(out, frontier, steps, level, seeds, update == "current", min_gain, frontier_cap)
    return out


def _first_visits(out: Expansion[N, L], frontier: list[N], steps: StepsFn[N, L], level: int,
                  max_nodes: int | None) -> list[N]:
    score = out.score
    best: dict[N, tuple[float, N, L]] = {}
    for u, v, w, label in steps(frontier):
        s = score[u] * w
        if v not in score and s > (best[v][0] if v in best else 0.0):
            best[v] = (s, u, label)
    room = len(best) if max_nodes is None else max_nodes - len(score)
    reached = sorted(best, key=lambda v: -best[v][0])[:room]
    for v in reached:
        s, u, label = best[v]
        score[v], out.parent[v], out.depth[v] = s, (u, label), level
    return reached


def _improve(out: Expansion[N, L], frontier: list[N], steps: StepsFn[N, L], level: int, seeds: Mapping[N, float],
             current: bool, min_gain: float, frontier_cap: int | None) -> list[N]:
    score = out.score
    source = score if current else dict(score)
    changed: set[N] = set()
    for u, v, w, label in steps(frontier):
        s = source[u] * w
        if s > score.get(v, 0.0) + min_gain:
            score[v] = s
            if v not in seeds:
                out.parent[v] = (u, label)
            out.depth.setdefault(v, level)
            changed.add(v)
    nxt = sorted(changed, key=lambda n: -score[n])
    return nxt if frontier_cap is None else nxt[:frontier_cap]


def seed_strengths(rankings: Sequence[Sequence[N]], k: float = 60.0) -> dict[N, float]:
    """Seeds from ranked candidate lists: reciprocal-rank fusion, the best seed 1."""
    return max_normalise(rrf(rankings, k))


def weighted_score(parts: Mapping[str, float], weights: Sequence[tuple[str, float]]) -> float:
    """``sum(weight * parts[name])`` in the order of ``weights`` (a missing part counts 0)."""
    return sum(w * parts.get(name, 0.0) for name, w in weights)


def ranked(scores: Mapping[N, float], key: Callable[[N], object] | None = None) -> list[N]:
    """Ids best first; ties by ``key`` (default: the id itself)."""
    tie = key or (lambda n: n)
    return sorted(scores, key=lambda n: (-scores[n], tie(n)))


def chain(node: N, parent: Mapping[N, N], limit: int = 8) -> list[N]:
    """``node`` and its ancestors through ``parent``, the seed first (at most ``limit`` nodes)."""
    out = [node]
    while out[-1] in parent and len(out) < limit:
        out.append(parent[out[-1]])
    return out[::-1]
