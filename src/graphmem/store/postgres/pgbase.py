"""Helpers shared by the SQL mixins of the PostgreSQL backend (the mirror of ``sqlite/sqlbase.py``, with
``%s`` placeholders): rows readable by position and by column name, batched IN-lists.

Inside ``transaction()`` every helper runs on the connection the thread's transaction holds; outside one,
on a pooled connection in autocommit mode (each read sees what was committed when it ran).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from ...models import Edge

__all__ = ["PgHelpers", "Row", "MAX_VARS", "batches", "marks", "edge_from_row", "row_factory"]

T = TypeVar("T", bound=tuple[Any, ...])

MAX_VARS = 500  # bound parameters per IN (...) list: the SQLite mixins' batches, ported as they are


class Row(tuple[Any, ...]):
    """A result row: a tuple that is also indexable by column name (as ``sqlite3.Row`` is)."""

    _names: dict[str, int]

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, in order."""
        return list(self._names)


_ROW_TYPES: dict[tuple[str, ...], type[Row]] = {}


def row_factory(cursor: Any) -> Any:
    """A psycopg row factory making :class:`Row` s (one subclass per result shape, made once and kept)."""
    desc = cursor.description
    if desc is None:
        return lambda values: values
    key = tuple(d.name for d in desc)
    row_type = _ROW_TYPES.get(key)
    if row_type is None:
        names: dict[str, int] = {}
        for i, name in enumerate(key):
            names.setdefault(name, i)  # in column order; the first of a repeated name wins
        row_type = _ROW_TYPES[key] = type("Row", (Row,), {"_names": names, "__slots__": ()})

    def make(values: Sequence[Any]) -> Row:
        return tuple.__new__(row_type, values)

    return make


def batches(seq: Sequence[Any], n: int = MAX_VARS) -> Iterator[Sequence[Any]]:
    """``seq`` in slices of at most ``n``."""
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


def marks(n: int) -> str:
    """``%s,%s,...`` for an IN list of ``n`` parameters."""
    return ",".join(["%s"] * n)


def edge_from_row(r: Row) -> Edge:
    """An :class:`Edge` from a ``SELECT *`` row of ``edges``."""
    return Edge(
        id=r["id"], source=r["source"], target=r["target"], type=r["type"], confidence=r["confidence"],
        created_at=r["created_at"], updated_at=r["updated_at"], valid_from=r["valid_from"],
        valid_to=r["valid_to"], manual=bool(r["manual"]),
        properties={} if r["properties"] == "{}" else json.loads(r["properties"]),
    )


class PgHelpers:
    """``_rows`` and friends over the connection of the current transaction (or a pooled one)."""

    def _use(self) -> AbstractContextManager[Any]:
        """The psycopg connection to run on: the thread's transaction's, or a pooled autocommit one."""
        raise NotImplementedError  # ConnectionPgMixin's

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._use() as conn:
            return conn.execute(sql, params or None).fetchall()

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """The first row of ``sql`` (None: no row)."""
        with self._use() as conn:
            return conn.execute(sql, params or None).fetchone()

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement; returns its row count."""
        with self._use() as conn:
            return int(conn.execute(sql, params or None).rowcount)

    def _execmany(self, sql: str, seq: Iterable[Sequence[Any]]) -> None:
        """Run a statement once per parameter row (pipelined by psycopg)."""
        rows = list(seq)
        if not rows:
            return
        with self._use() as conn, conn.cursor() as cur:
            cur.executemany(sql, rows)

    def _rows_as(self, row_type: type[T], sql: str, params: Sequence[Any] = ()) -> list[T]:
        """Rows of ``sql`` built straight into the tuple type ``row_type`` (a NamedTuple whose fields are
        the selected columns, in order)."""
        with self._use() as conn, conn.cursor(row_factory=lambda _c: lambda v: tuple.__new__(row_type, v)) as cur:
            return cur.execute(sql, params or None).fetchall()

    def _rows_in(self, sql: str, ids: Iterable[Any], before: Sequence[Any] = (),
                 after: Sequence[Any] = ()) -> Iterator[Row]:
        """Rows of ``sql``, whose ``{ids}`` marks an IN list, for every id (batched)."""
        for part in batches(list(dict.fromkeys(ids))):
            yield from self._rows(sql.format(ids=marks(len(part))), [*before, *part, *after])

    def _map_in(self, sql: str, ids: Iterable[Any], before: Sequence[Any] = (),
                after: Sequence[Any] = ()) -> dict[Any, Any]:
        """``{first column: second column}`` of :meth:`_rows_in`."""
        return {r[0]: r[1] for r in self._rows_in(sql, ids, before, after)}
