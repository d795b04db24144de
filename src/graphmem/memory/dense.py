"""Dense similarity within a scope (the vector index is global; scopes are filtered here)."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..context import Context

if TYPE_CHECKING:
    from ..retrieval.vector_index import VectorIndex

__all__ = ["ScopeIds", "dense_top", "dense_top_stored", "dense_of", "EXACT_SCOPE_LIMIT"]

# Up to this many memories in a scope, similarities are computed for exactly the scope's
# memories; above it, the global index is searched and the hits filtered (widening until enough).
EXACT_SCOPE_LIMIT = 20_000


class ScopeIds:
    """The ids of a scope's memories (None above EXACT_SCOPE_LIMIT), read once when first asked:
    a search's dense seeding and its walk's scope checks share one read."""

    def __init__(self, ctx: Context, filters: Mapping[str, Any], include_archived: bool) -> None:
        self._args = (ctx, filters, include_archived)
        self._ids: list[str] | None = None
        self._set: frozenset[str] | None = None
        self._read = False

    def ids(self) -> list[str] | None:
        if not self._read:
            ctx, filters, include_archived = self._args
            self._ids = ctx.store.memory_scope_ids(filters, include_archived, EXACT_SCOPE_LIMIT)
            self._read = True
        return self._ids

    def as_set(self) -> frozenset[str] | None:
        """The ids as a set (None above EXACT_SCOPE_LIMIT: ask the store about each memory then)."""
        if self._set is None and (ids := self.ids()) is not None:
            self._set = frozenset(ids)
        return self._set


def dense_of(ctx: Context, qvec: np.ndarray | None, ids: list[str]) -> dict[str, float]:
    """Cosine of the query with each memory that has a vector.

    Not taken from the dense seeding's product over the whole scope: a product over other rows
    can round the last float bit differently, and a near-tie would then rank differently."""
    if qvec is None or not ids:
        return {}
    idx = ctx.embeddings.vector_index("memory")
    return idx.similarity(qvec, ids) if idx is not None else {}


def dense_top(ctx: Context, qvec: np.ndarray | None, filters: Mapping[str, Any], include_archived: bool,
              k: int, exclude: str | None = None, scope_ids: ScopeIds | None = None) -> list[tuple[str, float]]:
    """The ``k`` memories of a scope most similar to ``qvec``, best first (``scope_ids``: the
    scope's ids when the caller has read them already)."""
    if qvec is None or k <= 0:
        return []
    idx = ctx.embeddings.vector_index("memory")
    if idx is None:
        return []
    ids = (scope_ids or ScopeIds(ctx, filters, include_archived)).ids()
    if ids is not None:
        if exclude is None:
            return _held_top(ctx, idx, qvec, filters, include_archived, ids, k)
        # sorted by (-score, id)[:k] of the scope's similarities, without a dict and a sort of them all
        return idx.top_of(qvec, [i for i in ids if i != exclude], k)
    n = max(200, 20 * k)
    while True:
        hits = [(i, s) for i, s in idx.search(qvec, n) if i != exclude]
        inside = ctx.store.memories_in_scope([i for i, _ in hits], filters, include_archived)
        found = [(i, s) for i, s in hits if i in inside]
        if len(found) >= k or n >= len(idx):
            return found[:k]
        n *= 4


# The vectors of the scopes searched while the store's read stamp held: a search's product over its scope multiplies
# a copy of the scope's rows gathered out of the index's matrix anyway; kept, the scope's next searches at that stamp
# skip the index's freshness check, the scope's row lookups and the gather. (Kept from the first search on: keeping
# the copy costs nothing but RAM, while waiting for a second search made every other search in an agent loop of
# one search per write, and every scope's second search, pay the gather again.)
_HELD_ROWS = 20_000  # rows (memories) held per store at most; all are dropped above
_HELD_SCOPES = 256


class _HeldScope:
    """A scope's memories that have a vector (``found``, in the scope ids' order) and those vectors (``mat``), as
    of ``stamp``."""

    def __init__(self, stamp: object, ids: list[str], found: list[str], mat: np.ndarray) -> None:
        self.stamp, self.ids, self.found, self.mat = stamp, ids, found, mat


_HELD: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], _HeldScope]] = weakref.WeakKeyDictionary()


def _held_top(ctx: Context, idx: VectorIndex, qvec: np.ndarray, filters: Mapping[str, Any], include_archived: bool,
              ids: list[str], k: int) -> list[tuple[str, float]]:
    """``idx.top_of(qvec, ids, k)``, the same floats: the product over the same rows (float32 from the same
    stored float16 bytes, in the same order), from a matrix of the scope's own kept while the read stamp holds."""
    from ..retrieval.blas import matvec
    from ..retrieval.vector_index import top_by_score

    store = ctx.store
    stamp = store.read_stamp()
    if stamp is None:
        return idx.top_of(qvec, ids, k)
    held = _HELD.setdefault(store, {})
    key = (tuple(sorted((f, v) for f, v in filters.items() if v is not None)), include_archived, idx.model)
    scope = held.get(key)
    if scope is None or scope.stamp != stamp or scope.ids is not ids:
        found, mat = idx.rows_of(ids)  # what top_of would multiply
        if len(held) >= _HELD_SCOPES or sum(len(h.found) for h in held.values()) + len(found) > _HELD_ROWS:
            held.clear()
        if len(found) <= _HELD_ROWS:
            scope = held[key] = _HeldScope(stamp, ids, found, mat)
        else:
            scope = _HeldScope(stamp, ids, found, mat)  # this search's only
    if not scope.found:
        return []
    scores = matvec(scope.mat, np.asarray(qvec, dtype=np.float32).reshape(-1)).astype(np.float64)
    return top_by_score(scope.found, scores, k)


class _ScopeMatrix:
    """One scope key's live memory vectors, kept in step by appending new rows (amortised: the
    buffer doubles when full, so n appends copy O(n) rows in all)."""

    def __init__(self) -> None:
        self.state: tuple[int, int, int] = (-1, -1, -1)
        self.ids: list[str] = []
        self.buf = np.zeros((0, 0), dtype=np.float32)

    @property
    def mat(self) -> np.ndarray:
        return self.buf[: len(self.ids)]

    def append(self, ids: list[str], rows: np.ndarray) -> None:
        n, need = len(self.ids), len(self.ids) + len(ids)
        if self.buf.shape[0] < need or self.buf.shape[1] != rows.shape[1]:
            grown = np.zeros((max(need, 2 * self.buf.shape[0], 64), rows.shape[1]), dtype=np.float32)
            if n:
                grown[:n] = self.buf[:n]
            self.buf = grown
        self.buf[n:need] = rows
        self.ids += ids


_CACHE: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], _ScopeMatrix]] = weakref.WeakKeyDictionary()


def _scope_matrix(ctx: Context, scope_key: str, model: str) -> _ScopeMatrix | None:
    """The scope's live vectors: from the per-process cache when only new memories arrived since
    (their rows appended), reloaded after an update, deletion or archiving; None above
    EXACT_SCOPE_LIMIT."""
    cache = _CACHE.setdefault(ctx.store, {})  # the store: a Context is a dataclass (unhashable)
    sm = cache.get((scope_key, model))
    state = ctx.store.memory_scope_state(scope_key)
    if sm is not None and sm.state == state:
        return sm
    grew = sm is not None and sm.state[0] == state[0] and state[1] > sm.state[1]
    rows = ctx.store.memory_vectors({"scope_key": scope_key}, model, EXACT_SCOPE_LIMIT,
                                   sm.state[2] if grew and sm is not None else 0)
    if grew and sm is not None and rows is not None and sm.state[1] + len(rows) != state[1]:
        grew = False  # rows also went away: reload everything
        rows = ctx.store.memory_vectors({"scope_key": scope_key}, model, EXACT_SCOPE_LIMIT)
    if rows is None:
        cache.pop((scope_key, model), None)
        return None
    live = [(i, b) for _, i, b in rows if b is not None]
    new = (np.frombuffer(b"".join(b for _, b in live), dtype=np.float16).reshape(len(live), -1).astype(np.float32)
           if live else None)
    if not grew or sm is None:
        sm = cache[(scope_key, model)] = _ScopeMatrix()
    if new is not None:
        sm.append([i for i, _ in live], new)
    sm.state = state
    return sm


def dense_top_stored(ctx: Context, vec: np.ndarray | None, scope_key: str, k: int,
                     exclude: str | None = None) -> list[tuple[str, float]]:
    """The ``k`` live memories of a scope key most similar to ``vec`` (for writes).

    Not through the shared in-memory index: it appends every new vector to one big matrix on
    refresh (a copy of the whole matrix), which once per add would make adding n memories cost
    O(n^2). A per-scope matrix grows by appending only the scope's new rows."""
    if vec is None or k <= 0:
        return []
    model = ctx.embeddings.stored_model()
    sm = _scope_matrix(ctx, scope_key, model) if model is not None else None
    if sm is None:
        return dense_top(ctx, vec, {"scope_key": scope_key}, False, k, exclude)
    if not sm.ids:
        return []
    scores = sm.mat @ np.asarray(vec, dtype=np.float32).reshape(-1)
    n = min(k + 1, len(scores))
    top = np.argpartition(-scores, n - 1)[:n]
    order = top[np.argsort(-scores[top], kind="stable")]
    return [(sm.ids[i], float(scores[i])) for i in order if sm.ids[i] != exclude][:k]
