"""``try_write``: the one rule both backends follow for the writes a read makes on the side.

Use counts and decay ticks are bookkeeping of a search: the search must never wait for another process's
writer, nor fail because the bookkeeping could not be saved. The rule is backend-neutral (it needs only
``no_wait()``, ``transaction()`` and ``read_only``), so it lives here once instead of in each backend's
transaction module.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager

from ..errors import BackendError, StoreBusy

__all__ = ["BookkeepingWriteMixin"]


class BookkeepingWriteMixin:
    """Mixed into a backend's transaction mixin, which provides the three members below."""

    read_only: bool
    no_wait: Callable[[], AbstractContextManager[None]]
    transaction: Callable[[], AbstractContextManager[None]]

    def try_write(self, fn: Callable[[], object], what: str = "a read's bookkeeping (use counts, decay)") -> bool:
        """Run ``fn`` in a write transaction only if the write lock is free right now.

        For bookkeeping that a read does on the side (use counts, decay): it never waits for
        another process's writer and never fails the read. False when skipped: read-only
        store or lock held elsewhere (silently: that is the normal case under load), or a
        storage failure such as a full disk (``fn``'s writes are rolled back, and a warning
        says what failed, since hiding a damaged store would be worse than a noisy read)."""
        if self.read_only:
            return False
        try:
            with self.no_wait(), self.transaction():
                fn()
        except StoreBusy:
            return False
        except BackendError as exc:
            warnings.warn(f"{what} was not saved: {exc}", stacklevel=3)
            return False
        return True
