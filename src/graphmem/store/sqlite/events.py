"""The change log (SQLite backend)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ...models import Event
from ..rows import JsonObject
from .sqlbase import SqlHelpers, batches

__all__ = ["EventSqlMixin"]

# One encoder for every event: json.dumps with options builds a new JSONEncoder per call.
_encode = json.JSONEncoder(ensure_ascii=False, default=str).encode


_ROWS_PER_INSERT = 150  # 6 parameters a row: 900, under the oldest SQLite's 999 bound parameters


@lru_cache(maxsize=_ROWS_PER_INSERT)
def _insert_events(n: int) -> str:
    return "INSERT INTO events (id, type, target, ts, actor, payload) VALUES " + ",".join(["(?, ?, ?, ?, ?, ?)"] * n)


class EventSqlMixin(SqlHelpers):
    """Append-only change events."""

    # -- events ----------------------------------------------------------------------------------

    _depth: int
    _event_buffer: list[tuple[int, str, str, str, str | None, str]]
    _next_event_id: int

    def append_event(self, type: str, target: str, ts: str, payload: JsonObject, actor: str | None = None) -> int:
        """Append one change event (call inside the operation's transaction).

        Inside a transaction the event is numbered now and written with the others at COMMIT, in one
        statement: an ingest appends a dozen events, and one batched insert costs a fraction of a dozen
        (the write lock is held since BEGIN IMMEDIATE, so nobody else can take the ids meanwhile)."""
        body = _encode(payload)
        if not self._depth:
            cur = self.conn.execute("INSERT INTO events (type, target, ts, actor, payload) VALUES (?, ?, ?, ?, ?)",
                                    (type, target, ts, actor, body))
            return int(cur.lastrowid or 0)
        if not self._event_buffer:
            row = self.conn.execute(
                "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0), "
                "coalesce((SELECT max(id) FROM events), 0))").fetchone()
            self._next_event_id = int(row[0]) + 1
        event_id = self._next_event_id
        self._next_event_id += 1
        self._event_buffer.append((event_id, type, target, ts, actor, body))
        return event_id

    def _flush_events(self) -> None:
        """Write the events buffered by this transaction (its last step before COMMIT)."""
        if self._event_buffer:
            rows, self._event_buffer = self._event_buffer, []
            # One multi-row INSERT per slice, not one execution per event: AUTOINCREMENT writes its
            # sqlite_sequence row at the end of every statement, so a statement per event paid that each time.
            for part in batches(rows, _ROWS_PER_INSERT):
                self.conn.execute(_insert_events(len(part)), [v for row in part for v in row])

    def list_events(
        self, after_id: int = 0, types: Sequence[str] | None = None, target: str | None = None, limit: int = 100
    ) -> list[Event]:
        """Events with id > ``after_id``, oldest first, optionally filtered."""
        sql = "SELECT * FROM events WHERE id > ?"
        params: list[Any] = [after_id]
        if types:
            sql += f" AND type IN ({','.join('?' * len(types))})"
            params += list(types)
        if target is not None:
            sql += " AND target = ?"
            params.append(target)
        sql += " ORDER BY id LIMIT ?"
        params.append(limit)
        return [
            Event(r["id"], r["type"], r["target"], r["ts"], json.loads(r["payload"]), r["actor"])
            for r in self._rows(sql, params)
        ]

    def last_event_id(self) -> int:
        """The largest event id committed so far (0 for an empty log)."""
        row = self.conn.execute("SELECT max(id) FROM events").fetchone()
        return int(row[0] or 0)

    def feed_cursor(self, name: str) -> int | None:
        """The event id the consumer ``name`` last recorded; None if never."""
        row = self.conn.execute("SELECT event_id FROM feed_cursors WHERE name = ?", (name,)).fetchone()
        return None if row is None else int(row[0])

    def set_feed_cursor(self, name: str, event_id: int, ts: str) -> None:
        """Record that the consumer ``name`` has handled every event up to ``event_id`` (inside a transaction)."""
        self.conn.execute(
            "INSERT INTO feed_cursors (name, event_id, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) "
            "DO UPDATE SET event_id = excluded.event_id, updated_at = excluded.updated_at",
            (name, event_id, ts))

    def event_id_at(self, ts: str) -> int:
        """The id of the last event with a timestamp at or before ``ts``; 0 if none."""
        row = self.conn.execute("SELECT max(id) FROM events WHERE ts <= ?", (ts,)).fetchone()
        return int(row[0] or 0)
