"""A cheap "has anything in the file changed?" for the RAM copies a search keeps (part of the SQLite backend).

Each copy (the vector index, the memory graph, the scope ids, the stored model's name, the memories' rank
inputs) used to check its own freshness with a statement or two of its own, several times per search. A stamp
answers them all: ``(PRAGMA data_version, total_changes - harmless)``. ``data_version`` moves when any other
connection (any process) commits; ``total_changes`` when this connection writes a row. Equal stamps: nothing
changed in between, so every copy labelled with that stamp is current.

``harmless`` is what a search's own bookkeeping wrote (use counts and their event, :meth:`note_harmless`):
changes to ``memories.uses``/``used_at``, the replay log and the events only, which no stamped copy holds
except the rank inputs, and those are updated in place by the same write. So a search's use-count write
does not make the next search re-check everything.

Inside :meth:`read_scope` (one search's reads) ``data_version`` is read once, at the start: the copies then
answer as of the search's start, as one read transaction would (own writes still show, through
``total_changes``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import cast

__all__ = ["ReadStampMixin", "ReadStamp"]

ReadStamp = tuple[int, int]


class ReadStampMixin:
    """``read_stamp`` / ``read_scope`` of the Lifecycle protocol, and the harmless-write accounting."""

    conn: sqlite3.Connection
    on_commit: Callable[..., None]
    _hooks: list[tuple[Callable[[], None] | None, Callable[[], None] | None, Callable[[], None] | None]]

    def _stamp_state(self) -> dict[str, int]:
        # per store (connection): harmless changes so far
        return self.__dict__.setdefault("_read_stamp_state", {"harmless": 0})

    def _pin(self) -> dict[str, int]:
        # per thread: data_version pinned by read_scope (or -1) and the scope's depth (a server's threads
        # share a store; one thread's search must not pin another's reads)
        local = self.__dict__.setdefault("_read_stamp_pins", threading.local())
        if not hasattr(local, "pin"):
            local.pin = {"pinned": -1, "depth": 0}
        return cast("dict[str, int]", local.pin)

    def read_stamp(self) -> ReadStamp | None:
        """A value equal between two calls only if nothing in the database changed in between (apart
        from a search's own use counts); None inside a write transaction (rows may still roll back)."""
        if self.conn.in_transaction:
            return None
        version = self._pin()["pinned"]
        if version < 0:
            version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        return (version, self.conn.total_changes - self._stamp_state()["harmless"])

    @contextmanager
    def read_scope(self) -> Iterator[None]:
        """One search's reads: other connections' commits are looked for once, at the start."""
        st = self._pin()
        st["depth"] += 1
        try:
            if st["depth"] == 1:
                st["pinned"] = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
            yield
        finally:
            st["depth"] -= 1
            if st["depth"] == 0:
                st["pinned"] = -1

    def note_harmless(self, then: Callable[[], None] | None = None) -> Callable[[], None]:
        """Call right before a bookkeeping write inside a transaction; call the returned function right
        after it. If nothing else is written after it but the transaction's events (no statement, no other
        commit hook) and the transaction commits, its changes are not counted by :meth:`read_stamp`, and
        ``then`` runs after COMMIT. Changes before it still count."""
        start = self.conn.total_changes

        def done() -> None:
            if not self.conn.in_transaction:
                return  # autocommitted: counted as any write (the held copies are dropped)
            end = self.conn.total_changes
            ok = [False]

            def before() -> None:
                # the transaction's only hook (no other before/after step writes) and no statement since
                ok[0] = len(self._hooks) == 1 and self._hooks[0] is hook and self.conn.total_changes == end

            def after() -> None:
                if ok[0]:
                    self._stamp_state()["harmless"] += self.conn.total_changes - start
                    if then is not None:
                        then()

            self.on_commit(before=before, after=after)
            hook = self._hooks[-1]

        return done
