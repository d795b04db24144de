"""PostgreSQL backend (+ pgvector): for knowledge bases shared between processes and hosts. Needs the
``postgres`` extra (``pip install 'graphmem[postgres]'``)."""

from .connect import is_postgres_url, safe_url
from .store import PostgresStore

__all__ = ["PostgresStore", "is_postgres_url", "safe_url"]
