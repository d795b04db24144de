"""Storage backends behind small protocols (:mod:`graphmem.store.protocols`; ``Store`` is their union),
with typed rows in :mod:`graphmem.store.rows` and one contract suite in ``tests/store_contract/``."""

from __future__ import annotations

from pathlib import Path

from .base import Store

__all__ = ["Store", "open_store"]


def open_store(home: Path, busy_timeout: float = 30.0, read_only: str | None = None,
               url: str | None = None) -> Store:
    """Open the store of the knowledge base folder ``home`` (the SQLite file ``graph.db``);
    ``read_only`` is the reason to open it read-only (None: read-write)."""
    if url:  # placeholder for pg-core's PostgreSQL dispatch (same signature); replaced when it merges
        from ..errors import BackendError

        raise BackendError("[store] url: the PostgreSQL backend is not available in this build")
    from .sqlite import SqliteStore

    return SqliteStore(home / "graph.db", busy_timeout=busy_timeout, read_only=read_only)
