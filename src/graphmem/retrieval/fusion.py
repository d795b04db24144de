"""Score fusion: pure functions, unit-tested on their own."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

__all__ = ["minmax", "max_normalise", "rrf", "weighted_sum"]

K = TypeVar("K", bound=Hashable)


def minmax(scores: Mapping[K, float]) -> dict[K, float]:
    """Scale to [0, 1] (best -> 1, worst -> 0); all-equal scores all become 1."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return {k: 1.0 for k in scores}
    return {k: (v - lo) / (hi - lo) for k, v in scores.items()}


def max_normalise(scores: Mapping[K, float]) -> dict[K, float]:
    """Divide by the maximum (non-negative scores; keeps ratios, best -> 1)."""
    if not scores:
        return {}
    hi = max(scores.values())
    if hi <= 0:
        return {k: 0.0 for k in scores}
    return {k: max(v, 0.0) / hi for k, v in scores.items()}


def rrf(rankings: Sequence[Sequence[K]], k: float = 60.0, weights: Sequence[float] | None = None) -> dict[K, float]:
    """Reciprocal-rank fusion: ``sum_i w_i / (k + rank_i)`` with ranks starting at 1."""
    if weights is not None and len(weights) != len(rankings):
        raise ValueError("rrf: one weight per ranking")
    out: dict[K, float] = {}
    for i, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[i]
        for rank, key in enumerate(ranking, start=1):
            out[key] = out.get(key, 0.0) + w / (k + rank)
    return out


def weighted_sum(score_maps: Sequence[Mapping[K, float]], weights: Sequence[float]) -> dict[K, float]:
    """Sum of min-max normalised scores times weights; a key missing from a map scores 0 there."""
    if len(score_maps) != len(weights):
        raise ValueError("weighted_sum: one weight per score map")
    out: dict[K, float] = {}
    for scores, w in zip(score_maps, weights):
        for key, v in minmax(scores).items():
            out[key] = out.get(key, 0.0) + w * v
    return out
