"""Dense similarity within a scope (the vector index is global; scopes are filtered here)."""

from __future__ import annotations

import weakref
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


class _ScopeMatrix:
    """One scope key's live memory vectors, kept in step by appending new rows."""

    def __init__(self) -> None:
        self.state: tuple[int, int, int] = (-1, -1, -1)
        self.ids: list[str] = []
        self.mat = np.zeros((0, 0), dtype=np.float32)


_CACHE: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], _ScopeMatrix]] = weakref.WeakKeyDictionary()


def _scope_matrix(kb: KnowledgeBase, scope_key: str, model: str) -> _ScopeMatrix | None:
    """The scope's vectors: from the per-process cache when only new memories arrived since
    (appended), reloaded after an update, deletion or archiving; None above EXACT_SCOPE_LIMIT."""
    store = kb.store
    cache = _CACHE.setdefault(kb, {})
    sm = cache.get((scope_key, model))
    state = store.memory_scope_state(scope_key)
    if sm is not None and sm.state == state:
        return sm
    incremental = sm is not None and sm.state[0] == state[0] and state[1] > sm.state[1]
    rows = store.memory_vectors({"scope_key": scope_key}, model, EXACT_SCOPE_LIMIT,
                                sm.state[2] if incremental and sm is not None else 0)
    if rows is None:
        cache.pop((scope_key, model), None)
        return None
    new_ids = [i for _, i, _ in rows]
    new = (np.frombuffer(b"".join(b for _, _, b in rows), dtype=np.float16).reshape(len(rows), -1)
           .astype(np.float32) if rows else None)
    if incremental and sm is not None and len(sm.ids) + len(rows) == state[1]:
        if new is not None:
            sm.mat = new if sm.mat.size == 0 else np.vstack([sm.mat, new])
            sm.ids += new_ids
    else:
        if incremental:  # something else changed too: reload all
            return _reload(cache, kb, scope_key, model, state)
        sm = cache[(scope_key, model)] = _ScopeMatrix()
        sm.ids = new_ids
        sm.mat = new if new is not None else np.zeros((0, 0), dtype=np.float32)
    sm.state = state
    return sm


def _reload(cache: dict[tuple[str, str], _ScopeMatrix], kb: KnowledgeBase, scope_key: str, model: str,
            state: tuple[int, int, int]) -> _ScopeMatrix | None:
    rows = kb.store.memory_vectors({"scope_key": scope_key}, model, EXACT_SCOPE_LIMIT)
    if rows is None:
        cache.pop((scope_key, model), None)
        return None
    sm = cache[(scope_key, model)] = _ScopeMatrix()
    sm.ids = [i for _, i, _ in rows]
    if rows:
        sm.mat = np.frombuffer(b"".join(b for _, _, b in rows), dtype=np.float16).reshape(len(rows), -1).astype(
            np.float32)
    sm.state = state
    return sm


def dense_top_stored(kb: KnowledgeBase, vec: np.ndarray | None, scope_key: str, k: int,
                     exclude: str | None = None) -> list[tuple[str, float]]:
    """The ``k`` live memories of a scope key most similar to ``vec`` (for writes).

    Not through the shared in-memory index: it appends every new vector to one big matrix on
    refresh (a copy of the whole matrix), which once per add would make adding n memories cost
    O(n^2). A per-scope matrix grows by appending only the scope's new rows."""
    if vec is None or k <= 0:
        return []
    model = kb.embeddings.stored_model()
    sm = _scope_matrix(kb, scope_key, model) if model is not None else None
    if sm is None:
        return dense_top(kb, vec, {"scope_key": scope_key}, False, k, exclude)
    if not sm.ids:
        return []
    scores = sm.mat @ np.asarray(vec, dtype=np.float32).reshape(-1)
    order = np.argsort(-scores, kind="stable")[: k + 1]
    return [(sm.ids[i], float(scores[i])) for i in order if sm.ids[i] != exclude][:k]
