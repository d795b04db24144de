"""PostgreSQL backend (+ pgvector): for knowledge bases shared between processes and hosts. Needs the
``postgres`` extra (``pip install 'graphmem[postgres]'``)."""

from .store import PostgresStore
from .urls import is_postgres_url, safe_url

__all__ = ["PostgresStore", "is_postgres_url", "safe_url"]
