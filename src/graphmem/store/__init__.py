"""Storage backends behind small protocols (:mod:`graphmem.store.protocols`; ``Store`` is their union),
with typed rows in :mod:`graphmem.store.rows` and one contract suite in ``tests/store_contract/``."""

from __future__ import annotations

from pathlib import Path

from .base import Store

__all__ = ["Store", "open_store"]


def open_store(home: Path, busy_timeout: float = 30.0, read_only: str | None = None) -> Store:
    """Open the store of the knowledge base folder ``home`` (the SQLite file ``graph.db``);
    ``read_only`` is the reason to open it read-only (None: read-write)."""
    from .sqlite import SqliteStore

    return SqliteStore(home / "graph.db", busy_timeout=busy_timeout, read_only=read_only)
