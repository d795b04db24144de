"""Exact vector search over one kind of item (chunks, entities, ...), kept in step with the store.

Vectors live in the store (float16, one row per item, written in the same transaction as
the item). A process keeps a float32 matrix of them in memory and refreshes it
incrementally: new rows are appended by row id; a deletion (noticed through a counter the
store bumps) triggers a reload. Search is one matrix-vector product plus ``argpartition``.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .ann import AnnIndex, ann_available
from .blas import matvec

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["VectorIndex", "to_blob", "from_blob"]


# similarity() reads only the vectors asked for, up to PARTIAL_MAX of them, in the first
# PARTIAL_CALLS calls of a process that has not loaded the matrix; then the matrix is loaded.
PARTIAL_CALLS = 16
PARTIAL_MAX = 2000


def to_blob(vec: np.ndarray) -> bytes:
    """Store form: float16 bytes (half the space; ample precision for cosine ranking)."""
    return np.asarray(vec, dtype=np.float16).tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    """float32 vector from its store form."""
    return np.frombuffer(blob, dtype=np.float16).astype(np.float32)


class VectorIndex:
    """In-memory exact index of the vectors of one item kind and model."""

    def __init__(self, store: Store, item_kind: str, model: str, ann_threshold: int = -1,
                 ann_folder: Path | None = None) -> None:
        self.store = store
        self.item_kind = item_kind
        self.model = model
        # Above ann_threshold items (and with usearch installed) search goes through HNSW.
        self.ann_threshold = ann_threshold
        self.ann_folder = ann_folder
        self._ann: AnnIndex | None = None
        self._rowid_item: dict[int, str] = {}
        self._lock = threading.Lock()
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        self._mat = np.zeros((0, 0), dtype=np.float32)
        self._buf = self._mat  # capacity for appends; _mat is its first len(_ids) rows
        self._last_id = 0
        self._state: tuple[int, int] | None = None
        self._checked_at: object = None  # the store's read stamp at the last check of ``_state``
        self._partial_calls = 0

    def __len__(self) -> int:
        return len(self._ids)

    def refresh(self) -> None:
        """Bring the matrix in step with the store (cheap when nothing changed)."""
        with self._lock:
            # the store's read stamp unchanged since the last check: nothing was written, not even elsewhere
            stamp = self.store.read_stamp()
            if stamp is not None and stamp == self._checked_at and self._state is not None:
                return
            state = self.store.vector_state()
            self._checked_at = stamp
            if state == self._state:
                return
            if self._state is not None and state[1] != self._state[1]:
                self._ids, self._row, self._last_id, self._rowid_item = [], {}, 0, {}
                self._mat = self._buf = np.zeros((0, 0), dtype=np.float32)
            rowids, ids, blobs = self.store.load_vectors(self.item_kind, self.model, self._last_id)
            if ids:
                new = np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(ids), -1).astype(np.float32)
                # An item re-embedded gets a new row id: drop its old row (rare; compacts).
                stale = [self._row[i] for i in ids if i in self._row]
                if stale:
                    keep = np.ones(len(self._ids), dtype=bool)
                    keep[stale] = False
                    kept = self._mat[keep]
                    self._ids = [x for x, k in zip(self._ids, keep) if k]
                    self._buf, self._mat = kept, kept
                    self._row = {x: i for i, x in enumerate(self._ids)}
                self._append(new, ids)
                self._rowid_item.update(zip(rowids, ids))
                self._last_id = rowids[-1]
            self._state = state

    def _append(self, rows: np.ndarray, ids: list[str]) -> None:
        """Add rows at the end, growing the buffer geometrically so that many small refreshes
        (interleaved writes and searches) cost amortised O(new rows), not a copy each."""
        n = len(self._ids)
        need = n + len(ids)
        if self._buf.size == 0 or self._buf.shape[1] != rows.shape[1]:
            old = self._mat[:n]
            self._buf = np.empty((max(need, 64), rows.shape[1]), dtype=np.float32)
            if n:
                self._buf[:n] = old
        elif need > self._buf.shape[0]:
            grown = np.empty((max(need, 2 * self._buf.shape[0]), rows.shape[1]), dtype=np.float32)
            grown[:n] = self._buf[:n]
            self._buf = grown
        self._buf[n:need] = rows
        self._mat = self._buf[:need]
        for j, x in enumerate(ids, n):
            self._row[x] = j
        self._ids.extend(ids)

    def search(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Top ``k`` ``(item id, cosine)`` for a unit-length query vector."""
        self.refresh()
        if not self._ids or k <= 0:
            return []
        if 0 <= self.ann_threshold <= len(self._ids) and self.ann_folder is not None and ann_available():
            if self._ann is None:
                self._ann = AnnIndex(self.store, self.item_kind, self.model, self.ann_folder, self._mat.shape[1])
            hits = self._ann.search(query, k)
            return [(self._rowid_item[r], s) for r, s in hits if r in self._rowid_item]
        scores = matvec(self._mat, np.asarray(query, dtype=np.float32).reshape(-1))
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self._ids[i], float(scores[i])) for i in top]

    def similarity(self, query: np.ndarray, ids: list[str]) -> dict[str, float]:
        """Cosine of the query with the given items (those that have a vector).

        Until the matrix is loaded (by a search, or after PARTIAL_CALLS calls), only the vectors
        asked for are read: a fresh process scoring < 100 entities loaded all 41,702 first
        (a third of a cold ``graphmem search``). The same rows in the same order: the same numbers."""
        found, scores = self._scores(query, ids)
        return dict(zip(found, scores.tolist()))

    def top_of(self, query: np.ndarray, ids: list[str], k: int) -> list[tuple[str, float]]:
        """The ``k`` of ``ids`` most similar to the query, best first, ties by id: exactly
        ``sorted(similarity(query, ids).items(), key=(-score, id))[:k]``, without a dict of every
        score and a sort of them all (a memory search ranks its whole scope for 20 seeds)."""
        found, scores = self._scores(query, ids)
        return top_by_score(found, scores, k)

    def _scores(self, query: np.ndarray, ids: list[str]) -> tuple[list[str], np.ndarray]:
        """The items of ``ids`` that have a vector, in ``ids``' order, and their cosines (float64)."""
        found, mat = self.rows_of(ids)
        if not found:
            return [], np.zeros(0)
        return found, matvec(mat, np.asarray(query, dtype=np.float32).reshape(-1)).astype(np.float64)

    def rows_of(self, ids: list[str]) -> tuple[list[str], np.ndarray]:
        """The items of ``ids`` that have a vector, in ``ids``' order, and their float32 rows (a new array):
        the very matrix :meth:`similarity` multiplies, so a caller keeping it gets the same floats later."""
        if self._state is None and self._partial_calls < PARTIAL_CALLS and len(ids) <= PARTIAL_MAX:
            self._partial_calls += 1
            blobs = self.store.vectors_for(self.item_kind, ids, self.model)
            found = [i for i in ids if i in blobs]  # as the matrix path builds its rows
            if not found:
                return [], np.zeros((0, 0), dtype=np.float32)
            mat = np.frombuffer(b"".join(blobs[i] for i in found), dtype=np.float16).reshape(len(found), -1)
            return found, mat.astype(np.float32)
        self.refresh()
        row = self._row
        found = [i for i in ids if i in row]
        if not found:
            return [], np.zeros((0, 0), dtype=np.float32)
        return found, self._mat[[row[i] for i in found]]

    def vectors_of(self, ids: list[str]) -> np.ndarray | None:
        """``(len(ids), dim)`` float32 matrix aligned with ``ids`` (zero rows for items without a
        vector), or None when none of them has one."""
        self.refresh()
        rows = [self._row.get(i, -1) for i in ids]
        if not ids or all(r < 0 for r in rows):
            return None
        out = np.zeros((len(ids), self._mat.shape[1]), dtype=np.float32)
        have = np.array([r >= 0 for r in rows])
        out[have] = self._mat[[r for r in rows if r >= 0]]
        return out


def top_by_score(found: list[str], scores: np.ndarray, k: int) -> list[tuple[str, float]]:
    """The ``k`` best ``(id, score)`` of ``found`` (``scores[i]`` is ``found[i]``'s), best first, ties by id:
    every one of the k best scores at least the k-th largest score, so only those are sorted."""
    if k <= 0 or not found:
        return []
    if len(found) > k:
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        picked = np.flatnonzero(scores >= kth).tolist()
    else:
        picked = list(range(len(found)))
    values = scores.tolist()
    best = sorted((-values[j], found[j]) for j in picked)[:k]
    return [(i, -s) for s, i in best]
