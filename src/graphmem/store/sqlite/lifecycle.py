"""Lifecycle of the SQLite backend: the migrations applied, closing, knowledge-base facts
(``kb_meta``) and counts. (Opening is in connect.py, the migration runner in store.py,
transactions in txn.py.)"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from ..rows import StoreStats
from .fts import compact_fts, fts_due
from .sqlbase import SqlHelpers
from .txn import TransactionMixin

__all__ = ["LifecycleSqlMixin"]


class LifecycleSqlMixin(TransactionMixin, SqlHelpers):
    """Migrations, close, facts about the knowledge base, stats."""

    # -- migrations and lifecycle ----------------------------------------------------------------

    def applied_migrations(self) -> list[str]:
        """Names of the migrations applied to this file, in order."""
        return [r[0] for r in self.conn.execute("SELECT name FROM schema_migrations ORDER BY rowid")]

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            try:
                self.conn.close()
            except sqlite3.Error:  # pragma: no cover - closing twice is harmless
                pass

    # -- knowledge-base facts --------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A knowledge-base fact (e.g. ``embeddings.model``), or None."""
        row = self.conn.execute("SELECT value FROM kb_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        """Set (or with None, remove) a knowledge-base fact."""
        if value is None:
            self.conn.execute("DELETE FROM kb_meta WHERE key = ?", (key,))
        else:
            self.conn.execute(
                "INSERT INTO kb_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def text_indexes_due(self, written: dict[str, int]) -> list[str]:
        """The FTS5 indexes of ``written`` (name -> rows a run wrote) worth merging now (fts.py says when)."""
        return fts_due(self.conn, written)

    def compact_text_indexes(self, names: Sequence[str]) -> None:
        """FTS5 'optimize' of the indexes ``names``, inside the caller's write transaction."""
        compact_fts(self.conn, names)

    # -- stats -----------------------------------------------------------------------------------

    def stats(self) -> StoreStats:
        """Counts of everything stored."""
        one = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        nodes_by_kind = {r[0]: r[1] for r in self._rows("SELECT kind, count(*) FROM nodes GROUP BY kind")}
        return {
            "documents": one("SELECT count(*) FROM documents WHERE is_latest = 1"),
            "document_versions": one("SELECT count(*) FROM documents"),
            "chunks": one("SELECT count(*) FROM chunks"),
            "nodes": nodes_by_kind,
            "entities": nodes_by_kind.get("entity", 0),
            "edges": one("SELECT count(*) FROM edges"),
            "provenance": one("SELECT count(*) FROM provenance"),
            "mentions": one("SELECT count(*) FROM mention_rows"),  # each names a chunk that exists (cascade)
            "entity_types": one("SELECT count(*) FROM ontology_types WHERE kind = 'entity'"),
            "relation_types": one("SELECT count(*) FROM ontology_types WHERE kind = 'relation'"),
            "events": one("SELECT count(*) FROM events"),
            "size_bytes": self._size(),
        }

    def _size(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                total += p.stat().st_size
        return total
