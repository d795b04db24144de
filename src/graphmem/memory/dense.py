"""Dense similarity within a scope (the vector index is global; scopes are filtered here)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..kb import KnowledgeBase

__all__ = ["dense_top", "dense_top_stored", "dense_of", "EXACT_SCOPE_LIMIT"]

# Up to this many memories in a scope, similarities are computed for exactly the scope's
# memories; above it, the global index is searched and the hits filtered (widening until enough).
EXACT_SCOPE_LIMIT = 20_000


def dense_of(kb: KnowledgeBase, qvec: np.ndarray | None, ids: list[str]) -> dict[str, float]:
    """Cosine of the query with each memory that has a vector."""
    if qvec is None or not ids:
        return {}
    idx = kb.embeddings.vector_index("memory")
    return idx.similarity(qvec, ids) if idx is not None else {}


def dense_top(kb: KnowledgeBase, qvec: np.ndarray | None, filters: Mapping[str, Any], include_archived: bool,
              k: int, exclude: str | None = None) -> list[tuple[str, float]]:
    """The ``k`` memories of a scope most similar to ``qvec``, best first."""
    if qvec is None or k <= 0:
        return []
    idx = kb.embeddings.vector_index("memory")
    if idx is None:
        return []
    ids = kb.store.memory_scope_ids(filters, include_archived, EXACT_SCOPE_LIMIT)
    if ids is not None:
        sims = idx.similarity(qvec, [i for i in ids if i != exclude])
        return sorted(sims.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    n = max(200, 20 * k)
    while True:
        hits = [(i, s) for i, s in idx.search(qvec, n) if i != exclude]
        inside = kb.store.memories_in_scope([i for i, _ in hits], filters, include_archived)
        found = [(i, s) for i, s in hits if i in inside]
        if len(found) >= k or n >= len(idx):
            return found[:k]
        n *= 4


def dense_top_stored(kb: KnowledgeBase, vec: np.ndarray | None, filters: Mapping[str, Any], k: int,
                     exclude: str | None = None) -> list[tuple[str, float]]:
    """Like :func:`dense_top` (live memories only), reading the scope's vectors from the store.

    For writes: the in-memory index appends every new vector to its matrix on refresh (a copy of
    the whole matrix), which once per add would make adding n memories cost O(n^2); one scope's
    vectors are a few small rows."""
    if vec is None or k <= 0:
        return []
    model = kb.embeddings.stored_model()
    ids = kb.store.memory_scope_ids(filters, False, EXACT_SCOPE_LIMIT)
    if model is None or ids is None:
        return dense_top(kb, vec, filters, False, k, exclude)
    blobs = kb.store.vectors_for("memory", [i for i in ids if i != exclude], model)
    if not blobs:
        return []
    keys = list(blobs)
    mat = np.frombuffer(b"".join(blobs[i] for i in keys), dtype=np.float16).reshape(len(keys), -1)
    scores = mat.astype(np.float32) @ np.asarray(vec, dtype=np.float32).reshape(-1)
    top = np.argsort(-scores, kind="stable")[:k]
    return [(keys[i], float(scores[i])) for i in top]
