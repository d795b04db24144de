"""The memories' rank inputs a store keeps in RAM while its read stamp holds (part of the SQLite backend).

A search reranks ~50 candidates; reading their counters and decay state was one IN statement of ~50 ids
(0.15 ms of a 2.5 ms search over 10,000 memories). The copy is exact: it is dropped whenever the store's read
stamp moves (any row written by this connection, any commit by another), except for a search's own use-count
write, whose change (``uses + n``, ``used_at = now``) is applied to the copy after its COMMIT.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ..rows import MemoryRankInputs

__all__ = ["HeldRankInputs", "MAX_HELD"]

MAX_HELD = 200_000  # memories held at most (all dropped above; refilled as searches ask)


class HeldRankInputs:
    """Rank inputs by memory id, labelled with the read stamp they were read at."""

    def __init__(self) -> None:
        self.stamp: object = None
        self.rows: dict[str, MemoryRankInputs] = {}

    def get(self, stamp: object, ids: Iterable[str],
            read: Callable[[list[str]], dict[str, MemoryRankInputs]]) -> dict[str, MemoryRankInputs]:
        """Those of ``ids`` that are memories; ``read`` (SQL) answers the ones not held at ``stamp``."""
        if stamp != self.stamp or len(self.rows) > MAX_HELD:
            self.rows.clear()
            self.stamp = stamp
        wanted = list(ids)
        held = self.rows
        missing = [i for i in wanted if i not in held]
        if missing:
            held.update(read(missing))
        return {i: held[i] for i in wanted if i in held}

    def count_uses(self, by_count: Mapping[int, list[str]], now: str) -> None:
        """What ``record_memory_use`` wrote (committed, and counted harmless by the stamp)."""
        held = self.rows
        for n, ids in by_count.items():
            for mid in ids:
                r = held.get(mid)
                if r is not None:  # the constructor, not _replace: a third of this loop's cost
                    held[mid] = MemoryRankInputs(r.uses + n, r.helpful, r.unhelpful, r.quality, r.floor, now)
