"""The memories' rank inputs and full rows a store keeps in RAM while its read stamp holds (part of the SQLite
backend).

A search reranks ~50 candidates; reading their counters and decay state was one IN statement of ~50 ids
(0.15 ms of a 2.5 ms search over 10,000 memories). Its ~10 results' full rows were another statement and a
fifteenth of a search. The copies are exact: they are dropped whenever the store's read stamp moves (any row
written by this connection, any commit by another), except for a search's own use-count write, whose change
(``uses + n``, ``used_at = now``) is applied to them after its COMMIT. Full rows are held as the plain tuples SQLite
returned: every read builds a new row (and parses its metadata) from them, so a caller changing what it got
changes nothing held.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from ..rows import MemoryRankInputs

__all__ = ["HeldRankInputs", "MAX_HELD", "MAX_HELD_ROWS"]

MAX_HELD = 200_000  # memories held at most (all dropped above; refilled as searches ask)
MAX_HELD_ROWS = 20_000  # full rows (texts) held at most, the same way

V = TypeVar("V")


class HeldRankInputs:
    """Rank inputs and full rows by memory id, labelled with the read stamp they were read at (``uses_at``,
    ``used_at_at``: where a full row keeps its use count and its last use)."""

    def __init__(self, uses_at: int = -1, used_at_at: int = -1) -> None:
        self.stamp: object = None
        self.rows: dict[str, MemoryRankInputs] = {}
        self.full: dict[str, tuple[Any, ...]] = {}  # full rows as read, by id
        self._uses_at, self._used_at_at = uses_at, used_at_at

    def _at(self, stamp: object) -> None:
        if stamp != self.stamp or len(self.rows) > MAX_HELD or len(self.full) > MAX_HELD_ROWS:
            self.rows.clear()
            self.full.clear()
            self.stamp = stamp

    def get_full(self, stamp: object, ids: Iterable[str],
                 read: Callable[[list[str]], dict[str, tuple[Any, ...]]]) -> dict[str, tuple[Any, ...]]:
        """The full rows (plain tuples) of those of ``ids`` that are memories; ``read`` (SQL) answers the ones
        not held at ``stamp``."""
        self._at(stamp)
        return _answer(self.full, ids, read)

    def get(self, stamp: object, ids: Iterable[str],
            read: Callable[[list[str]], dict[str, MemoryRankInputs]]) -> dict[str, MemoryRankInputs]:
        """Those of ``ids`` that are memories; ``read`` (SQL) answers the ones not held at ``stamp``."""
        self._at(stamp)
        return _answer(self.rows, ids, read)

    def count_uses(self, by_count: Mapping[int, list[str]], now: str) -> None:
        """What ``record_memory_use`` wrote (committed, and counted harmless by the stamp)."""
        held, full = self.rows, self.full
        for n, ids in by_count.items():
            for mid in ids:
                r = held.get(mid)
                if r is not None:  # the constructor, not _replace: a third of this loop's cost
                    held[mid] = MemoryRankInputs(r.uses + n, r.helpful, r.unhelpful, r.quality, r.floor, now)
                f = full.get(mid)
                if f is not None:
                    row = list(f)
                    row[self._uses_at] += n
                    row[self._used_at_at] = now
                    full[mid] = tuple(row)


def _answer(held: dict[str, V], ids: Iterable[str], read: Callable[[list[str]], dict[str, V]]) -> dict[str, V]:
    """``held``'s values of ``ids``, the missing ones read (and kept) first; ids ``read`` does not know are absent."""
    wanted = list(ids)
    missing = [i for i in wanted if i not in held]
    if missing:
        held.update(read(missing))
    return {i: held[i] for i in wanted if i in held}
