"""Query helpers shared by the SQLite backend's classes (the store and its mixins)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

__all__ = ["SqlHelpers", "MAX_VARS", "batches"]

MAX_VARS = 500  # bound parameters per IN (...) list, well under SQLite's limit


def batches(seq: Sequence[Any], n: int = MAX_VARS) -> Iterator[Sequence[Any]]:
    """``seq`` in slices of at most ``n``."""
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


class SqlHelpers:
    """``_rows`` plus IN-list queries run in batches, with duplicates removed."""

    conn: sqlite3.Connection

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def _rows_in(self, sql: str, ids: Iterable[Any], before: Sequence[Any] = (),
                 after: Sequence[Any] = ()) -> Iterator[sqlite3.Row]:
        """Rows of ``sql``, whose ``{ids}`` marks an IN list, for every id (batched)."""
        for part in batches(list(dict.fromkeys(ids))):
            yield from self._rows(sql.format(ids=",".join("?" * len(part))), [*before, *part, *after])

    def _map_in(self, sql: str, ids: Iterable[Any], before: Sequence[Any] = (),
                after: Sequence[Any] = ()) -> dict[Any, Any]:
        """``{first column: second column}`` of :meth:`_rows_in`."""
        return {r[0]: r[1] for r in self._rows_in(sql, ids, before, after)}
