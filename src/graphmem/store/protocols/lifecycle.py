"""Transactions, lifecycle and knowledge-base facts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from ..rows import StoreStats

__all__ = ["Lifecycle"]


@runtime_checkable
class Lifecycle(Protocol):
    """Opening, transactions, migrations, facts about the knowledge base, counts."""

    backend: str
    """Backend name (``"sqlite"``, ``"postgres"``)."""
    read_only: bool
    """Opened read-only: :meth:`transaction` raises BackendError naming the folder."""
    read_only_reason: str
    """Why it is read-only (shown in that error); ``""`` when writable."""

    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction; nested calls join the outermost one. An exception inside rolls
        everything back and propagates (a storage failure leaves as BackendError saying nothing
        was written; a write lock held elsewhere past the busy timeout as StoreBusy). Read-only
        store: BackendError before anything runs."""
        ...

    def savepoint(self) -> AbstractContextManager[None]:
        """Inside :meth:`transaction`: a unit undone alone when it raises (the exception propagates;
        the enclosing transaction goes on). Outside a transaction: BackendError."""
        ...

    def on_commit(self, before: Callable[[], None] | None = None, undo: Callable[[], None] | None = None,
                  after: Callable[[], None] | None = None) -> None:
        """Inside :meth:`transaction`: run ``before`` just before the outermost COMMIT (its failure
        rolls back), ``undo`` when the transaction (or the enclosing savepoint) rolls back, ``after``
        once committed. Outside a transaction: BackendError."""
        ...

    def no_wait(self) -> AbstractContextManager[None]:
        """Inside, a transaction this thread starts raises StoreBusy at once instead of waiting for a
        write lock held elsewhere."""
        ...

    def try_write(self, fn: Callable[[], object], what: str = "a read's bookkeeping (use counts, decay)") -> bool:
        """Run ``fn`` in a transaction if the write lock is free now. False, with nothing written,
        when skipped: read-only store, lock held elsewhere, or a storage failure (then a warning
        saying that ``what`` was not saved).
        Exceptions ``fn`` raises that are not storage failures propagate."""
        ...

    def read_stamp(self) -> object | None:
        """An opaque value equal between two calls only if nothing in the store changed in between (in
        any process), apart from a search's own use counts (``record_memory_use`` in a transaction of its
        own with its event); RAM copies keyed on it skip their freshness checks. None: cannot tell (inside
        a write transaction, or a backend without it): check as usual."""
        ...

    def read_scope(self) -> AbstractContextManager[None]:
        """One search's reads: inside it ``read_stamp`` may look for other processes' writes only once,
        at the start (the copies then answer as of the start, as one read transaction would)."""
        ...

    def refuse_write(self) -> None:
        """Raise BackendError naming the folder when the store is read-only; else nothing."""
        ...

    def close(self) -> None:
        """Release the connection(s); closing twice is harmless."""
        ...

    def applied_migrations(self) -> list[str]:
        """Names of the schema migrations applied, in order."""
        ...

    def get_meta(self, key: str) -> str | None:
        """A knowledge-base fact (e.g. ``embeddings.model``); None when unset."""
        ...

    def set_meta(self, key: str, value: str | None) -> None:
        """Set a fact (replacing it), or with None remove it (removing an unset key does nothing)."""
        ...

    def text_indexes_due(self, written: dict[str, int]) -> list[str]:
        """The full-text indexes a run wrote to (``written``: "chunks", "names", "pages", "memories" or
        "skills" -> rows it wrote) that have fragmented and of which the run wrote enough to pay for
        merging them (a read; a backend without segments: none). ValueError for another name."""
        ...

    def compact_text_indexes(self, names: Sequence[str]) -> None:
        """Merge the segments of the full-text indexes ``names`` (rankings and scores stay the same).
        Call inside a write transaction; a backend without segments does nothing."""
        ...

    def stats(self) -> StoreStats:
        """Counts of what is stored (latest documents, versions, chunks, nodes per kind, ...) and the
        size on disk in bytes."""
        ...
