"""Opening the SQLite file: the connection (read-write, or read-only with ``mode=ro``) and its
pragmas. (The migrations applied on open stay in store.py.)"""

from __future__ import annotations

import functools
import os
import sqlite3
from pathlib import Path

from ...errors import BackendError

__all__ = ["ConnectionMixin"]


class ConnectionMixin:
    """``_connect()`` and ``_configure()``."""

    conn: sqlite3.Connection
    path: Path
    busy_timeout: float
    read_only: bool

    def _connect(self) -> sqlite3.Connection:
        if not self.read_only:
            conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout, isolation_level=None,
                                   check_same_thread=False)
            conn.row_factory = sqlite3.Row
            return conn
        if not self.path.is_file():
            raise sqlite3.OperationalError("no such file (a read-only knowledge base is never created)")
        return self._connect_read_only()

    def _connect_read_only(self) -> sqlite3.Connection:
        """A connection that never writes the file (the store's own when read-only; an export's snapshot)."""
        uri = self.path.resolve().as_uri()
        try:
            conn = self._connect_uri(f"{uri}?mode=ro")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError as exc:
            # WAL needs graph.db-shm (and -wal): in a folder nobody may write they cannot be
            # created, so read graph.db as it is (immutable=1). That is only right when the
            # file holds everything: a non-empty -wal file holds commits not yet copied into
            # graph.db, which immutable=1 would silently leave out (or worse, read half of).
            wal = Path(str(self.path) + "-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise sqlite3.OperationalError(
                    f"{exc}; {wal.name} holds changes not yet in {self.path.name}, and this folder is not "
                    "writable, so they cannot be read: open it once with write access (or ask its owner to "
                    "close graphmem) so that they are checkpointed") from None
            conn = self._connect_uri(f"{uri}?mode=ro&immutable=1")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn

    def _connect_uri(self, uri: str) -> sqlite3.Connection:
        conn = sqlite3.connect(uri, uri=True, timeout=self.busy_timeout, isolation_level=None,
                               check_same_thread=False)
        conn.row_factory = sqlite3.Row
        return conn

    def _configure(self) -> None:
        c = self.conn
        c.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        if not self.read_only:
            mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise BackendError(f"{self.path}: could not switch to WAL journal mode (got {mode})")
            c.execute("PRAGMA synchronous = NORMAL")
        c.execute("PRAGMA foreign_keys = ON")
        # temp_store stays SQLite's default (temporary files, cached by the OS until they grow): with
        # temp_store = MEMORY the savepoint journal of the wiki's page writes inside an ingest stayed in
        # memory, where SQLite walks it as a list: re-ingesting 2,000 changed notes took 6.6x a first ingest
        # of them per document (bench/reingest.py; 1.1x without it). Where no temporary folder is writable
        # (a read-only container), temporary files would fail every big write: memory it is, there.
        if not _temp_dir_writable():
            c.execute("PRAGMA temp_store = MEMORY")
        # Index pages of a growing knowledge base (mentions, provenance, names) are touched at
        # random by every ingest: a 64 MB page cache and memory-mapped reads keep that cost flat
        # instead of re-reading them through the OS at every transaction. The map is capped at
        # 64 MB: mapped pages count in the process's RSS, and at 256 MB they alone pushed a
        # 400 MB bulk ingest past 600 MB peak (665 MB; 377 MB without the map).
        c.execute("PRAGMA cache_size = -65536")
        c.execute("PRAGMA mmap_size = 67108864")
        try:
            c.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)")
            c.execute("DROP TABLE temp.fts5_probe")
        except sqlite3.OperationalError:
            raise BackendError(
                "this Python's SQLite has no FTS5; install a Python built with FTS5 (e.g. python.org or "
                "distribution builds) to use graphmem"
            ) from None


@functools.lru_cache(maxsize=1)
def _temp_dir_writable() -> bool:
    """Whether SQLite can create its temporary files: one of the folders it looks in ($SQLITE_TMPDIR,
    $TMPDIR, /var/tmp, /usr/tmp, /tmp, the working folder) is writable. Asked once per process."""
    candidates = [os.environ.get("SQLITE_TMPDIR"), os.environ.get("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp", "."]
    return any(d and os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK) for d in candidates)
