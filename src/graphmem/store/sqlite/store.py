"""The SQLite backend: one file, WAL, FTS5. With its mixins (one module per store protocol), the
only place holding SQL.

Concurrency: WAL lets readers run while one writer writes. Every write transaction starts
with ``BEGIN IMMEDIATE`` so a second writer waits (up to ``busy_timeout`` seconds) for the
write lock up front instead of failing half-way; past the timeout it raises
:class:`StoreBusy` and nothing of the operation is written (see txn.py; opening is in
connect.py; the migrations are applied on open here).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from ...errors import BackendError, StoreBusy
from ..protocols import Store
from .connect import ConnectionMixin
from .documents import DocumentSqlMixin
from .events import EventSqlMixin
from .evidence import EvidenceSqlMixin
from .graph import GraphSqlMixin
from .lifecycle import LifecycleSqlMixin
from .memory import MemorySqlMixin
from .migrations import MIGRATIONS, split_sql
from .portable import PortableSqlMixin
from .skills import SkillSqlMixin
from .vectors import VectorSqlMixin
from .wiki import WikiSqlMixin

__all__ = ["SqliteStore"]


class SqliteStore(ConnectionMixin, LifecycleSqlMixin, EventSqlMixin, DocumentSqlMixin, GraphSqlMixin,
                  EvidenceSqlMixin, VectorSqlMixin, WikiSqlMixin, SkillSqlMixin, MemorySqlMixin, PortableSqlMixin):
    """The :class:`~graphmem.store.protocols.Store` protocol over one SQLite file."""

    backend = "sqlite"

    def __init__(self, path: Path, busy_timeout: float = 30.0, read_only: str | None = None) -> None:
        """Open (and migrate) ``path``; ``read_only`` is the reason to open it read-only (None: writable)."""
        self.path = path
        self.busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self._depth = 0
        self._hooks = []
        self._event_buffer = []
        self._next_event_id = 0
        self._tls = threading.local()
        self.read_only = read_only is not None
        self.read_only_reason = read_only or ""
        self._fts_memo = (None, None)
        try:
            self.conn = self._connect()
        except sqlite3.Error as exc:
            raise BackendError(f"cannot open knowledge base file {path}: {exc}") from None
        try:
            self._configure()
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusy(
                    f"{path} is locked by another process for more than {busy_timeout:g} s; retry later"
                ) from None
            raise BackendError(f"{path} is not a usable graphmem knowledge base ({exc})") from None
        except BackendError:
            self.conn.close()
            raise

    def _migrate(self) -> None:
        c = self.conn
        if self.read_only:
            applied = {r[0] for r in c.execute("SELECT name FROM schema_migrations")}
            self._refuse_unknown_migrations()
            missing = [name for name, _ in MIGRATIONS if name not in applied]
            if missing:
                raise BackendError(
                    f"{self.path} needs upgrading ({len(missing)} migration(s), first {missing[0]}) and is open "
                    "read-only; open it once with write access to upgrade it"
                )
            return
        c.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        self._refuse_unknown_migrations()
        applied = {r[0] for r in c.execute("SELECT name FROM schema_migrations")}
        for name, script in MIGRATIONS:
            if name in applied:
                continue
            with self.transaction():
                # Another process may have applied it while we waited for the lock.
                if c.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (name,)).fetchone():
                    continue
                for stmt in split_sql(script):
                    c.execute(stmt)
                c.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, datetime('now'))", (name,)
                )


    def _refuse_unknown_migrations(self) -> None:
        """A file a newer graphmem migrated may store rows in forms this code cannot read (it would read them
        wrong, silently): refuse it, naming the first migration this code does not know."""
        known = {name for name, _ in MIGRATIONS}
        unknown = [r[0] for r in self.conn.execute("SELECT name FROM schema_migrations ORDER BY rowid")
                   if r[0] not in known]
        if unknown:
            raise BackendError(
                f"{self.path} was written by a newer graphmem (schema migration {unknown[0]!r} is unknown to this "
                "version); upgrade graphmem to open it; nothing was changed")


def _conforms(store: SqliteStore) -> Store:
    # Never called: makes the type checker verify that SqliteStore implements every protocol
    # method with a compatible signature.
    return store
