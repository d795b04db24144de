"""The change log (PostgreSQL backend).

Event ids follow commit order: they are given under the knowledge base's write lock (max + 1, never
reusing one: ``kb_meta['events.high']`` remembers the highest given), so no transaction can commit an id
smaller than one already visible, and a consumer resuming after the last id it saw misses nothing.
(A sequence alone would not do: two writers could take ids 7 and 8 and commit 8 first.)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ...models import Event
from ..rows import JsonObject
from .pgbase import PgHelpers

__all__ = ["EventPgMixin"]

_encode = json.JSONEncoder(ensure_ascii=False, default=str).encode


class EventPgMixin(PgHelpers):
    """Append-only change events."""

    _depth: int
    _event_buffer: list[tuple[int, str, str, str, str | None, str]]
    _next_event_id: int

    def append_event(self, type: str, target: str, ts: str, payload: JsonObject, actor: str | None = None) -> int:
        """Append one change event inside the operation's transaction (numbered now, written at COMMIT)."""
        body = _encode(payload)
        if not self._depth:
            with self.transaction():  # type: ignore[attr-defined]
                return self.append_event(type, target, ts, payload, actor)
        if not self._event_buffer:
            row = self._one("SELECT greatest((SELECT value::bigint FROM kb_meta WHERE key = 'events.high'),"
                            " (SELECT coalesce(max(id), 0) FROM events))")
            self._next_event_id = int(row[0] if row else 0) + 1
        event_id = self._next_event_id
        self._next_event_id += 1
        self._event_buffer.append((event_id, type, target, ts, actor, body))
        return event_id

    def _flush_events(self) -> None:
        """Write the events buffered by this transaction (its last step before COMMIT)."""
        if self._event_buffer:
            rows, self._event_buffer = self._event_buffer, []
            with self._use() as conn, conn.cursor() as cur:
                with cur.copy("COPY events (id, type, target, ts, actor, payload) FROM STDIN") as copy:
                    for r in rows:
                        copy.write_row(r)
                cur.execute("UPDATE kb_meta SET value = %s WHERE key = 'events.high'", (str(rows[-1][0]),))

    def list_events(
        self, after_id: int = 0, types: Sequence[str] | None = None, target: str | None = None, limit: int = 100
    ) -> list[Event]:
        """Events with id > ``after_id``, oldest first, optionally filtered."""
        sql = "SELECT id, type, target, ts, payload, actor FROM events WHERE id > %s"
        params: list[Any] = [after_id]
        if types:
            sql += " AND type = ANY(%s)"
            params.append(list(types))
        if target is not None:
            sql += " AND target = %s"
            params.append(target)
        sql += " ORDER BY id LIMIT %s"
        params.append(max(limit, 0))
        return [Event(int(r[0]), r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in self._rows(sql, params)]

    def last_event_id(self) -> int:
        """The largest event id committed so far (0 for an empty log)."""
        row = self._one("SELECT max(id) FROM events")
        return int(row[0] or 0) if row else 0

    def feed_cursor(self, name: str) -> int | None:
        """The event id the consumer ``name`` last recorded; None if never."""
        row = self._one("SELECT event_id FROM feed_cursors WHERE name = %s", (name,))
        return None if row is None else int(row[0])

    def set_feed_cursor(self, name: str, event_id: int, ts: str) -> None:
        """Record that the consumer ``name`` has handled every event up to ``event_id`` (inside a transaction)."""
        self._exec("INSERT INTO feed_cursors (name, event_id, updated_at) VALUES (%s, %s, %s) ON CONFLICT (name)"
                   " DO UPDATE SET event_id = excluded.event_id, updated_at = excluded.updated_at",
                   (name, event_id, ts))

    def event_id_at(self, ts: str) -> int:
        """The id of the last event with a timestamp at or before ``ts``; 0 if none."""
        row = self._one('SELECT max(id) FROM events WHERE ts COLLATE "C" <= %s', (ts,))
        return int(row[0] or 0) if row else 0
