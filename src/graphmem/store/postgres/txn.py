"""Transactions of the PostgreSQL store, and what a failed one tells the user.

Isolation: READ COMMITTED, and every write transaction first takes one transaction-level advisory lock
of the knowledge base (``pg_advisory_xact_lock``), so writers run one at a time, as SQLite's
``BEGIN IMMEDIATE`` makes them: the read-then-write steps of an operation (entity deduplication, event
numbering, counters) see every commit before theirs and nobody else's half-done work, and there are no
serialization failures or deadlocks between graphmem writers to retry. Readers never wait (MVCC). A
writer waits for the lock up to ``busy_timeout`` seconds (``lock_timeout``), then raises StoreBusy with
nothing written. Since nothing fails for want of isolation, ``transaction()`` never re-runs a body (a
``with`` body cannot be re-run anyway); a deadlock or serialization failure from outside graphmem's own
writers leaves as StoreBusy, nothing written, to be retried by the caller.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from ...errors import BackendError, StoreBusy
from ..bookkeeping import BookkeepingWriteMixin
from .urls import safe_url

__all__ = ["TransactionPgMixin", "WRITE_LOCK", "psycopg_error", "to_backend_error"]

WRITE_LOCK = 0x67726170686D656D  # "graphmem": the advisory lock key of a knowledge base's writer

Hook = tuple[Callable[[], None] | None, Callable[[], None] | None, Callable[[], None] | None]


def psycopg_error() -> type[Exception]:
    """``psycopg.Error`` (imported lazily: psycopg is an optional extra)."""
    import psycopg

    return psycopg.Error


def to_backend_error(exc: Exception, url: str, busy_timeout: float, wrote: bool = True) -> BackendError:
    """The graphmem error for a psycopg failure (of a write transaction, rolled back, when ``wrote``)."""
    where = safe_url(url)
    nothing = "; nothing was written" if wrote else ""
    state = getattr(exc, "sqlstate", None) or ""
    if state == "55P03":  # lock_not_available: lock_timeout passed
        return StoreBusy(f"knowledge base {where} is busy: another writer held the write lock for more than "
                         f"{busy_timeout:g} s{nothing}; retry, or raise [store] busy_timeout in config.toml")
    if state in ("40001", "40P01"):  # serialization failure, deadlock
        return StoreBusy(f"knowledge base {where}: a concurrent transaction conflicted with this one ({exc})"
                         f"{nothing}; retry")
    if state == "53100":
        return BackendError(f"disk full on the PostgreSQL server of {where} ({exc}){nothing}; free some disk "
                            "space on the server and retry")
    if state == "25006":
        return BackendError(f"read-only: the PostgreSQL server of {where} refuses writes ({exc}){nothing}; "
                            "connect to a writable server (not a standby)")
    if state.startswith("23"):
        return BackendError(f"constraint failed on {where}: {exc}{nothing}")
    if state.startswith("08") or state.startswith("57P") or exc.__class__.__name__ == "OperationalError":
        return BackendError(f"lost the connection to PostgreSQL at {where} ({exc}){nothing}; check the server "
                            "and retry")
    return BackendError(f"storage error on {where}: {exc}{nothing}")


class TransactionPgMixin(BookkeepingWriteMixin):
    """``transaction()``, ``savepoint()``, ``on_commit()``, ``no_wait()`` and ``try_write()``."""

    url: str
    home: Path
    busy_timeout: float
    read_only: bool
    read_only_reason: str
    _pool: Any
    _tls: threading.local
    _flush_events: Callable[[], None]  # EventPgMixin's: writes the events buffered for COMMIT
    _checkout: Callable[[], AbstractContextManager[Any]]  # ConnectionPgMixin's: a pooled connection

    # Transaction state is per thread: each thread's transaction holds its own pooled connection.
    @property
    def _depth(self) -> int:
        return getattr(self._tls, "depth", 0)

    @_depth.setter
    def _depth(self, value: int) -> None:
        self._tls.depth = value

    @property
    def _hooks(self) -> list[Hook]:
        if not hasattr(self._tls, "hooks"):
            self._tls.hooks = []
        return self._tls.hooks

    @_hooks.setter
    def _hooks(self, value: list[Hook]) -> None:
        self._tls.hooks = value

    @property
    def _event_buffer(self) -> list[tuple[int, str, str, str, str | None, str]]:
        if not hasattr(self._tls, "events"):
            self._tls.events = []
        return self._tls.events

    @_event_buffer.setter
    def _event_buffer(self, value: list[tuple[int, str, str, str, str | None, str]]) -> None:
        self._tls.events = value

    @property
    def _next_event_id(self) -> int:
        return getattr(self._tls, "next_event", 0)

    @_next_event_id.setter
    def _next_event_id(self, value: int) -> None:
        self._tls.next_event = value

    def on_commit(self, before: Callable[[], None] | None = None, undo: Callable[[], None] | None = None,
                  after: Callable[[], None] | None = None) -> None:
        """Tie side effects outside the database to the OUTERMOST transaction (see the SQLite store)."""
        if not self._depth:
            raise BackendError("on_commit() must be used inside transaction()")
        self._hooks.append((before, undo, after))

    def _undo_hooks(self, mark: int = 0) -> None:
        hooks = self._hooks[mark:]
        del self._hooks[mark:]
        for _, undo, _ in reversed(hooks):
            if undo is not None:
                try:
                    undo()
                except Exception:  # noqa: BLE001 - best effort; the next wiki sync reconciles what is left
                    pass

    def read_stamp(self) -> object | None:
        """PostgreSQL cannot tell cheaply that nothing changed: None (every copy checks as before)."""
        return None

    def read_scope(self) -> AbstractContextManager[None]:
        """Nothing to pin (``read_stamp`` is always None)."""
        return nullcontext()

    def refuse_write(self) -> None:
        """Raise the read-only error when this store was opened read-only."""
        if self.read_only:
            raise BackendError(
                f"knowledge base {self.home} is open read-only ({self.read_only_reason}); this call "
                "writes, so nothing was done; make the folder writable and open it without "
                "read_only / --read-only / GRAPHMEM_READ_ONLY"
            )

    @contextmanager
    def no_wait(self) -> Iterator[None]:
        """Inside, a transaction this thread starts raises StoreBusy at once when another writer holds the lock."""
        before = getattr(self._tls, "no_wait", False)
        self._tls.no_wait = True
        try:
            yield
        finally:
            self._tls.no_wait = before

    def _begin(self, conn: Any) -> None:
        conn.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        if getattr(self._tls, "no_wait", False):
            got = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (WRITE_LOCK,)).fetchone()[0]
            if not got:
                raise StoreBusy(f"knowledge base {safe_url(self.url)} is busy: another writer holds the write "
                                "lock; nothing was written; retry later")
            return
        # at least 1 ms: lock_timeout 0 means "wait forever", which a busy_timeout under a millisecond would give
        conn.execute(f"SET LOCAL lock_timeout = '{max(1, math.ceil(self.busy_timeout * 1000))}ms'")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        conn.execute("SET LOCAL lock_timeout = 0")

    @staticmethod
    def _rollback(conn: Any) -> None:
        try:
            conn.execute("ROLLBACK")
        except Exception:  # noqa: BLE001 - a broken connection: the server rolls back on its own
            pass

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction; nested calls join the outermost one (see the module docstring)."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.refuse_write()
        perror = psycopg_error()
        with self._checkout() as conn:
            try:
                self._begin(conn)
            except perror as exc:
                self._rollback(conn)
                raise to_backend_error(exc, self.url, self.busy_timeout) from None
            except BaseException:
                self._rollback(conn)
                raise
            self._tls.conn = conn
            self._depth = 1
            self._hooks = []
            self._event_buffer = []
            try:
                yield
                for before, _, _ in list(self._hooks):
                    if before is not None:
                        before()
                self._flush_events()
                conn.execute("COMMIT")
            except perror as exc:
                self._undo_hooks()
                self._rollback(conn)
                raise to_backend_error(exc, self.url, self.busy_timeout) from None
            except BaseException:
                self._undo_hooks()
                self._rollback(conn)
                raise
            finally:
                self._tls.conn = None
                self._depth = 0
                self._event_buffer = []
                hooks, self._hooks = self._hooks, []
        for _, _, after in hooks:
            if after is not None:
                after()

    @contextmanager
    def savepoint(self) -> Iterator[None]:
        """A nested unit inside the current transaction: undone alone if it fails."""
        if not self._depth:
            raise BackendError("savepoint() must be used inside transaction()")
        conn = self._tls.conn
        conn.execute("SAVEPOINT gm_unit")
        mark = len(self._hooks)
        events_mark = len(self._event_buffer)
        try:
            yield
        except BaseException:
            self._undo_hooks(mark)
            if len(self._event_buffer) > events_mark:
                self._next_event_id = self._event_buffer[events_mark][0]
                del self._event_buffer[events_mark:]
            try:
                conn.execute("ROLLBACK TO SAVEPOINT gm_unit")
                conn.execute("RELEASE SAVEPOINT gm_unit")
            except psycopg_error():  # the connection is gone: transaction() reports it
                pass
            raise
        else:
            conn.execute("RELEASE SAVEPOINT gm_unit")
