"""Approximate vector search (HNSW, via the optional ``usearch`` package) for large kinds.

Why usearch: a maintained single-file HNSW library with wheels for every platform, float16
storage, incremental ``add``/``remove`` and save/restore — everything this needs and nothing
heavier (faiss-cpu is 10x the size; hnswlib has no float16 and is barely maintained). Measured
recall@10 against exact search is in docs/benchmarks.md (bench/ann_recall.py).

The index is a cache: the store keeps the vectors. It is persisted next to the knowledge base
(``<home>/vectors/<kind>-<model>.usearch`` plus a small JSON sidecar) and brought up to date
incrementally: rows added since it was saved are added; any deletion since (the store's
counter moved) rebuilds it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["AnnIndex", "ann_available"]


def ann_available() -> bool:
    """True when the optional ``usearch`` package is importable."""
    try:
        import usearch.index  # noqa: F401  (availability probe)
    except ImportError:
        return False
    return True


class AnnIndex:
    """HNSW over the vectors of one item kind and model; keys are the store's vector row ids."""

    def __init__(self, store: Store, item_kind: str, model: str, folder: Path, dim: int) -> None:
        from usearch.index import Index

        self._Index = Index
        self.store = store
        self.item_kind = item_kind
        self.model = model
        self.dim = dim
        slug = re.sub(r"[^A-Za-z0-9]+", "-", model).strip("-")
        self.path = folder / f"{item_kind}-{slug}.usearch"
        self.meta_path = self.path.with_suffix(".json")
        self.index: Any = None
        self.state: tuple[int, int] | None = None

    def _new(self) -> Any:
        return self._Index(ndim=self.dim, metric="cos", dtype="f16", connectivity=32, expansion_add=200,
                           expansion_search=512)

    def refresh(self) -> None:
        """Load from disk or build, then add what the store gained since."""
        state = self.store.vector_state()
        if state == self.state:
            return
        if self.index is None and self.path.exists() and self.meta_path.exists():
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
            if meta.get("deletions") == state[1] and meta.get("model") == self.model:
                self.index = self._Index.restore(str(self.path))
                self.state = (int(meta["last_id"]), int(meta["deletions"]))
        if self.index is None or self.state is None or self.state[1] != state[1]:
            self.index, self.state = self._new(), (0, state[1])
        last_id = self.state[0]
        rowids, item_ids, blobs = self.store.load_vectors(self.item_kind, self.model, last_id)
        # Row ids of every vector the index holds map back to item ids through the store.
        if rowids:
            mat = np.frombuffer(b"".join(blobs), dtype=np.float16).reshape(len(rowids), -1)
            self.index.add(np.asarray(rowids, dtype=np.int64), mat)
        self.state = (max([last_id, *rowids]), state[1])
        self._save()

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        self.index.save(str(tmp))
        os.replace(tmp, self.path)
        meta_tmp = self.meta_path.with_name(self.meta_path.name + ".tmp")
        last_id, deletions = self.state or (0, 0)
        meta_tmp.write_text(json.dumps({"model": self.model, "last_id": last_id,
                                        "deletions": deletions}), encoding="utf-8")
        os.replace(meta_tmp, self.meta_path)

    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Top ``k`` ``(vector row id, cosine)``."""
        self.refresh()
        if len(self.index) == 0:
            return []
        m = self.index.search(np.asarray(query, dtype=np.float32), k)
        return [(int(key), 1.0 - float(d)) for key, d in zip(m.keys, m.distances)]
