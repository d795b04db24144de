"""Transactions of the SQLite store, and what a failed one tells the user.

SQLite rolls a transaction back by itself after some failures (a full disk, an I/O error): a
ROLLBACK issued afterwards fails with "no transaction is active" and would hide the real
cause. So every rollback here first asks the connection whether a transaction is still open,
and every SQLite failure inside a transaction leaves as one :class:`BackendError` (or
:class:`StoreBusy`) that says what happened and that nothing was written.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ...errors import BackendError, StoreBusy
from ..bookkeeping import BookkeepingWriteMixin

__all__ = ["TransactionMixin", "backend_error"]

# Primary result codes (the low byte of an extended code such as SQLITE_IOERR_WRITE).
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY, _SQLITE_IOERR = 5, 6, 8, 10
_SQLITE_CORRUPT, _SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 11, 13, 14, 26


def _primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    text = str(exc).lower()  # errors raised without a code (older Pythons)
    for needle, guess in (("disk is full", _SQLITE_FULL), ("i/o error", _SQLITE_IOERR),
                          ("readonly", _SQLITE_READONLY), ("locked", _SQLITE_BUSY), ("busy", _SQLITE_BUSY),
                          ("malformed", _SQLITE_CORRUPT)):
        if needle in text:
            return guess
    return None


def backend_error(exc: sqlite3.Error, path: Path, busy_timeout: float) -> BackendError:
    """The graphmem error for a SQLite failure of a write transaction on ``path`` (rolled back)."""
    code = _primary_code(exc)
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return StoreBusy(
            f"knowledge base {path} is busy: another process held the write lock for more than "
            f"{busy_timeout:g} s; nothing was written; retry, or raise [store] busy_timeout in config.toml"
        )
    if code == _SQLITE_FULL:
        return BackendError(f"disk full: {path} could not grow ({exc}); nothing was written; "
                            "free some disk space and retry")
    if code == _SQLITE_IOERR:
        return BackendError(f"disk I/O error: {path} ({exc}); nothing was written; check the disk "
                            "(and that the folder is still mounted) and retry")
    if code == _SQLITE_READONLY:
        return BackendError(f"read-only: {path} cannot be written ({exc}); nothing was written; make the "
                            "knowledge base folder and graph.db writable")
    if code in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return BackendError(f"corrupt: {path} is damaged ({exc}); nothing was written; restore it from a "
                            "backup")
    if code == _SQLITE_CANTOPEN:
        return BackendError(f"cannot open: {path} or its -wal/-shm file ({exc}); nothing was written")
    return BackendError(f"storage error on {path}: {exc}; nothing was written")


class TransactionMixin(BookkeepingWriteMixin):
    """``transaction()``, ``savepoint()`` and ``try_write()`` over ``self.conn``."""

    conn: sqlite3.Connection
    path: Path
    busy_timeout: float
    read_only: bool
    read_only_reason: str
    _lock: threading.RLock
    _tls: threading.local
    _depth: int
    _hooks: list[tuple[Callable[[], None] | None, Callable[[], None] | None, Callable[[], None] | None]]
    _event_buffer: list[tuple[int, str, str, str, str | None, str, str | None]]  # see EventSqlMixin
    _next_event_id: int
    _just_inserted: tuple[dict[str, tuple[int, str]], dict[tuple[str, int], str]]
    _flush_events: Callable[[], None]  # EventSqlMixin's: writes the events buffered for COMMIT

    def on_commit(self, before: Callable[[], None] | None = None, undo: Callable[[], None] | None = None,
                  after: Callable[[], None] | None = None) -> None:
        """Tie side effects outside the database (the wiki's file renames, its log line) to the
        OUTERMOST transaction: ``before`` runs as its last step before COMMIT (a failure there
        rolls everything back), ``undo`` when it or the enclosing savepoint rolls back (before
        the ROLLBACK, so the write lock is still held), ``after`` once COMMIT succeeded."""
        if not self._depth:
            raise BackendError("on_commit() must be used inside transaction()")
        self._hooks.append((before, undo, after))

    def _undo_hooks(self, mark: int = 0) -> None:
        hooks, self._hooks[mark:] = self._hooks[mark:], []
        for _, undo, _ in reversed(hooks):
            if undo is not None:
                try:
                    undo()
                except Exception:  # best effort; the next wiki sync reconciles what is left
                    pass

    def _rollback(self) -> None:
        # After SQLITE_FULL / SQLITE_IOERR SQLite may already have rolled back on its own.
        if self.conn.in_transaction:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:  # the connection is unusable; the file is left as it was
                pass

    def refuse_write(self) -> None:
        """Raise the read-only error when this store was opened read-only."""
        if self.read_only:
            raise BackendError(
                f"knowledge base {self.path.parent} is open read-only ({self.read_only_reason}); this call "
                "writes, so nothing was done; make the folder writable and open it without "
                "read_only / --read-only / GRAPHMEM_READ_ONLY"
            )

    def _begin(self) -> None:
        self.refuse_write()
        no_wait = getattr(self._tls, "no_wait", False)
        try:
            if no_wait:
                self.conn.execute("PRAGMA busy_timeout = 0")
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            finally:
                if no_wait:
                    self.conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        except sqlite3.Error as exc:
            self._rollback()
            raise backend_error(exc, self.path, 0.0 if no_wait else self.busy_timeout) from None

    @contextmanager
    def no_wait(self) -> Iterator[None]:
        """Inside, a transaction this thread starts does not wait for another process's write
        lock: it raises :class:`StoreBusy` at once (for the writes a read path does on the side)."""
        before = getattr(self._tls, "no_wait", False)
        self._tls.no_wait = True
        try:
            yield
        finally:
            self._tls.no_wait = before

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction; nested calls join the outermost one.

        Any SQLite failure (in the body or at COMMIT) rolls everything back and raises a
        :class:`BackendError` naming the cause (disk full, I/O error, read-only, busy)."""
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._begin()
            self._depth = 1
            self._hooks = []
            try:
                yield
                for before, _, _ in list(self._hooks):
                    if before is not None:
                        before()
                self._flush_events()
                self.conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._undo_hooks()
                self._rollback()
                raise backend_error(exc, self.path, self.busy_timeout) from None
            except BaseException:
                self._undo_hooks()
                self._rollback()
                raise
            finally:
                self._depth = 0
                self._event_buffer = []  # written at COMMIT, or gone with the rollback
                self._just_inserted = ({}, {})  # rows of this transaction only (a rollback may take them)
                hooks, self._hooks = self._hooks, []
            for _, _, after in hooks:
                if after is not None:
                    after()

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested unit inside the current transaction: undone alone if it fails."""
        with self._lock:
            if not self._depth:
                raise BackendError("savepoint() must be used inside transaction()")
            self.conn.execute("SAVEPOINT gm_unit")
            mark = len(self._hooks)
            events_mark = len(self._event_buffer)
            try:
                yield
            except BaseException:
                self._just_inserted = ({}, {})  # the unit's rows may be gone
                self._undo_hooks(mark)  # what this unit tied to the commit goes with it
                if len(self._event_buffer) > events_mark:  # and so do the events it appended
                    self._next_event_id = self._event_buffer[events_mark][0]
                    del self._event_buffer[events_mark:]
                # A failure SQLite answered by rolling back the whole transaction has taken the
                # savepoint with it; transaction() reports it.
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK TO gm_unit")
                    self.conn.execute("RELEASE gm_unit")
                raise
            else:
                self.conn.execute("RELEASE gm_unit")
