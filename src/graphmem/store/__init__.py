"""Storage backends behind small protocols (:mod:`graphmem.store.protocols`; ``Store`` is their union),
with typed rows in :mod:`graphmem.store.rows` and one contract suite in ``tests/store_contract/``."""

from __future__ import annotations

from pathlib import Path

from ..errors import InvalidInput
from .base import Store

__all__ = ["Store", "open_store"]


def open_store(home: Path, busy_timeout: float = 30.0, read_only: str | None = None,
               url: str | None = None) -> Store:
    """Open the store of the knowledge base folder ``home``: the SQLite file ``graph.db`` when ``url`` is
    None, else the PostgreSQL database at ``url`` (``postgresql://`` or ``postgres://``); ``read_only`` is
    the reason to open it read-only (None: read-write)."""
    if url is None:
        from .sqlite import SqliteStore

        return SqliteStore(home / "graph.db", busy_timeout=busy_timeout, read_only=read_only)
    from .postgres import PostgresStore, is_postgres_url

    if not is_postgres_url(url):
        raise InvalidInput(f"store url {url.split('://', 1)[0]!r}://... is not supported: give a "
                           "postgresql://user@host/database url, or none for the SQLite file graph.db")
    return PostgresStore(url, home, busy_timeout=busy_timeout, read_only=read_only)
