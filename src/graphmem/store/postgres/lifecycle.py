"""Lifecycle of the PostgreSQL backend: the migrations applied on open, closing, knowledge-base facts
(``kb_meta``) and counts. (Connecting is in connect.py, transactions in txn.py.)"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...errors import BackendError
from ..rows import StoreStats
from .migrations import MIGRATIONS
from .pgbase import PgHelpers
from .txn import WRITE_LOCK, TransactionPgMixin
from .urls import safe_url

__all__ = ["LifecyclePgMixin"]

_MIGRATIONS_TABLE = ("CREATE TABLE IF NOT EXISTS schema_migrations (seq BIGINT GENERATED ALWAYS AS IDENTITY,"
                     " name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")


class LifecyclePgMixin(TransactionPgMixin, PgHelpers):
    """Migrations, close, facts about the knowledge base, stats."""

    def _migrate(self) -> None:
        """Apply the pending migrations, all in one transaction under the write lock."""
        if self.read_only:
            exists = self._one("SELECT to_regclass('schema_migrations')")
            applied = set(self.applied_migrations()) if exists and exists[0] else set()
            missing = [name for name, _ in MIGRATIONS if name not in applied]
            if missing:
                raise BackendError(
                    f"{safe_url(self.url)} needs upgrading ({len(missing)} migration(s), first {missing[0]}) and "
                    "is open read-only; open it once with write access to upgrade it")
            return
        exists = self._one("SELECT to_regclass('schema_migrations')")
        if exists and exists[0]:
            applied = set(self.applied_migrations())
            if all(name in applied for name, _ in MIGRATIONS):
                return  # the common case: nothing to do, no lock taken
        with self.transaction(), self._use() as conn:
            # transaction() holds the write lock: whoever got it first has applied what it found missing.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            conn.execute(_MIGRATIONS_TABLE)
            applied = {r[0] for r in conn.execute("SELECT name FROM schema_migrations").fetchall()}
            pending = [(n, s) for n, s in MIGRATIONS if n not in applied]
            if pending and not applied:
                self._ensure_vector_extension(conn)
            for name, script in pending:
                conn.execute(script)
                conn.execute("INSERT INTO schema_migrations (name, applied_at) VALUES (%s, now()::text)", (name,))

    def _ensure_vector_extension(self, conn: object) -> None:
        from .txn import psycopg_error

        try:
            with conn.transaction():  # type: ignore[attr-defined]
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # type: ignore[attr-defined]
        except psycopg_error() as exc:
            raise BackendError(
                f"the PostgreSQL server of {safe_url(self.url)} has no pgvector extension, or this user may not "
                f"create it ({exc}); install pgvector on the server (Debian: postgresql-16-pgvector) or run "
                "CREATE EXTENSION vector as a superuser in that database") from None

    def applied_migrations(self) -> list[str]:
        """Names of the migrations applied to this database, in order."""
        return [r[0] for r in self._rows("SELECT name FROM schema_migrations ORDER BY seq")]

    def close(self) -> None:
        """Close the pool (idempotent)."""
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.close()

    # -- knowledge-base facts --------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A knowledge-base fact (e.g. ``embeddings.model``), or None."""
        row = self._one("SELECT value FROM kb_meta WHERE key = %s", (key,))
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        """Set (or with None, remove) a knowledge-base fact."""
        if value is None:
            self._exec("DELETE FROM kb_meta WHERE key = %s", (key,))
        else:
            self._exec("INSERT INTO kb_meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE"
                       " SET value = excluded.value", (key, value))

    # -- stats -----------------------------------------------------------------------------------

    def text_indexes_due(self, written: dict[str, int]) -> list[str]:
        """None: PostgreSQL's GIN indexes have no FTS5 segments (autovacuum folds their pending entries
        in). The index names are checked as SQLite checks them."""
        _check_index_names(written)
        return []

    def compact_text_indexes(self, names: Sequence[str]) -> None:
        """Nothing to merge (see :meth:`text_indexes_due`)."""
        _check_index_names(names)

    def stats(self) -> StoreStats:
        """Counts of everything stored (one snapshot), and the database's size in bytes."""
        nodes_by_kind = {r[0]: int(r[1]) for r in self._rows("SELECT kind, count(*) FROM nodes GROUP BY kind")}
        r = self._one(
            "SELECT (SELECT count(*) FROM documents WHERE is_latest = 1), (SELECT count(*) FROM documents),"
            " (SELECT count(*) FROM chunks), (SELECT count(*) FROM edges), (SELECT count(*) FROM provenance),"
            " (SELECT count(*) FROM mentions), (SELECT count(*) FROM ontology_types WHERE kind = 'entity'),"
            " (SELECT count(*) FROM ontology_types WHERE kind = 'relation'), (SELECT count(*) FROM events),"
            " pg_database_size(current_database())")
        assert r is not None
        return {
            "documents": int(r[0]), "document_versions": int(r[1]), "chunks": int(r[2]), "nodes": nodes_by_kind,
            "entities": nodes_by_kind.get("entity", 0), "edges": int(r[3]), "provenance": int(r[4]),
            "mentions": int(r[5]), "entity_types": int(r[6]), "relation_types": int(r[7]), "events": int(r[8]),
            "size_bytes": int(r[9]),
        }


def _check_index_names(names: Iterable[str]) -> None:
    unknown = set(names) - {"chunks", "names", "pages", "memories", "skills"}
    if unknown:
        raise ValueError(f"no full-text index {sorted(unknown)[0]!r}; known: chunks, names, pages, memories, skills")
