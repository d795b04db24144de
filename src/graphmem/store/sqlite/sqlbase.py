"""Helpers shared by the SQL mixins of the SQLite backend: batched IN-lists and row decoding."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

from ...models import Edge

__all__ = ["SqlHelpers", "MAX_VARS", "batches", "marks", "edge_from_row"]

T = TypeVar("T", bound=tuple[Any, ...])

MAX_VARS = 500  # bound parameters per IN (...) list, well under SQLite's limit


def batches(seq: Sequence[Any], n: int = MAX_VARS) -> Iterator[Sequence[Any]]:
    """``seq`` in slices of at most ``n``."""
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


def marks(n: int) -> str:
    """``?,?,...`` for an IN list of ``n`` parameters."""
    return ",".join("?" * n)


def edge_from_row(r: sqlite3.Row) -> Edge:
    """An :class:`Edge` from a ``SELECT *`` row of ``edges``."""
    return Edge(
        id=r["id"], source=r["source"], target=r["target"], type=r["type"], confidence=r["confidence"],
        created_at=r["created_at"], updated_at=r["updated_at"], valid_from=r["valid_from"],
        valid_to=r["valid_to"], manual=bool(r["manual"]),
        # Most edges have no properties: skip the JSON decoder for them.
        properties={} if r["properties"] == "{}" else json.loads(r["properties"]),
    )


class SqlHelpers:
    """``_rows`` plus IN-list queries run in batches, with duplicates removed."""

    conn: sqlite3.Connection
    _old_memo: tuple[tuple[int, ...] | None, int] = (None, 0)

    def _old_chunk_count(self) -> int:
        """Chunks of documents' older versions (memoised until a chunk or a version is added:
        only a new version makes another one old)."""
        key = self.conn.execute("SELECT (SELECT coalesce(max(id), 0) FROM chunks),"
                                " (SELECT coalesce(max(rowid), 0) FROM documents)").fetchone()
        if self._old_memo[0] != tuple(key):
            n = self.conn.execute("SELECT count(*) FROM chunks c JOIN documents d ON d.doc_id = c.doc_id"
                                  " AND d.version = c.version WHERE d.is_latest = 0").fetchone()[0]
            self._old_memo = (tuple(key), n)
        return self._old_memo[1]

    def _prune_memo(self, table: str, total: int) -> dict[str, bool]:
        """Which words are too common to search ``table`` for, kept until the next write to the
        file (this connection's or another's) or a change of ``total``."""
        key = (total, self.conn.total_changes, self.conn.execute("PRAGMA data_version").fetchone()[0])
        memos = self.__dict__.setdefault("_prune_memos", {})
        if table not in memos or memos[table][0] != key:
            memos[table] = (key, {})
        got: dict[str, bool] = memos[table][1]
        return got

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def _rows_as(self, row_type: type[T], sql: str, params: Sequence[Any] = ()) -> list[T]:
        """Rows of ``sql`` built straight into the tuple type ``row_type`` (a NamedTuple whose fields are
        the selected columns, in order): on hot paths this is cheaper than reading sqlite3.Row items."""
        cur = self.conn.cursor()
        cur.row_factory = lambda _cursor, row: tuple.__new__(row_type, row)
        return cur.execute(sql, params).fetchall()

    def _rows_in(self, sql: str, ids: Iterable[Any], before: Sequence[Any] = (),
                 after: Sequence[Any] = ()) -> Iterator[sqlite3.Row]:
        """Rows of ``sql``, whose ``{ids}`` marks an IN list, for every id (batched)."""
        for part in batches(list(dict.fromkeys(ids))):
            yield from self._rows(sql.format(ids=",".join("?" * len(part))), [*before, *part, *after])

    def _map_in(self, sql: str, ids: Iterable[Any], before: Sequence[Any] = (),
                after: Sequence[Any] = ()) -> dict[Any, Any]:
        """``{first column: second column}`` of :meth:`_rows_in`."""
        return {r[0]: r[1] for r in self._rows_in(sql, ids, before, after)}
