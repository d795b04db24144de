"""The PostgreSQL backend: psycopg 3 with a connection pool, pgvector, and graphmem's own BM25 term
statistics. With its mixins (one module per store protocol), the only place holding its SQL.

Concurrency (txn.py): READ COMMITTED, one writer at a time per knowledge base through a transaction-level
advisory lock, readers never blocked. A knowledge base is one database; its folder (``home``) keeps the
config and the wiki pages, rendered from the database (the source of truth) on every host.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ...errors import BackendError
from ..protocols import Store
from .connect import ConnectionPgMixin
from .documents import DocumentPgMixin
from .events import EventPgMixin
from .evidence import EvidencePgMixin
from .graph import GraphPgMixin
from .lifecycle import LifecyclePgMixin
from .memory import MemoryPgMixin
from .portable import PortablePgMixin
from .skills import SkillPgMixin
from .urls import safe_url
from .vectors import VectorPgMixin
from .wiki import WikiPgMixin

__all__ = ["PostgresStore"]


class PostgresStore(ConnectionPgMixin, LifecyclePgMixin, EventPgMixin, DocumentPgMixin, GraphPgMixin,
                    EvidencePgMixin, VectorPgMixin, WikiPgMixin, SkillPgMixin, MemoryPgMixin, PortablePgMixin):
    """The :class:`~graphmem.store.protocols.Store` protocol over one PostgreSQL database."""

    backend = "postgres"

    def __init__(self, url: str, home: Path, busy_timeout: float = 30.0, read_only: str | None = None,
                 pool_size: int = 8) -> None:
        """Connect to ``url`` (and migrate it); ``home`` is the knowledge base folder (config, wiki);
        ``read_only`` is the reason to open it read-only (None: writable)."""
        self.url = url
        self.home = home
        self.path = home  # what messages and the wiki call the knowledge base's place
        self.busy_timeout = busy_timeout
        self.pool_size = pool_size
        self.read_only = read_only is not None
        self.read_only_reason = read_only or ""
        self._tls = threading.local()
        self._pool: Any = None
        self._open_pool()
        try:
            self._migrate()
        except BackendError:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"PostgresStore({safe_url(self.url)!r})"


def _conforms(store: PostgresStore) -> Store:
    # Never called: makes the type checker verify that PostgresStore implements every protocol
    # method with a compatible signature.
    return store
