"""Storage backends behind one protocol (see :mod:`graphmem.store.base`)."""

from __future__ import annotations

from pathlib import Path

from .base import Store

__all__ = ["Store", "open_store"]


def open_store(home: Path, busy_timeout: float = 30.0) -> Store:
    """Open the store of the knowledge base folder ``home`` (the SQLite file ``graph.db``)."""
    from .sqlite import SqliteStore

    return SqliteStore(home / "graph.db", busy_timeout=busy_timeout)
