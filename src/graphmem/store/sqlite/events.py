"""The change log (SQLite backend)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ...models import Event
from ..rows import JsonObject
from .sqlbase import SqlHelpers, batches

__all__ = ["EventSqlMixin", "event_payload", "event_payload_text", "shaped_payload"]

# One encoder for every event: json.dumps with options builds a new JSONEncoder per call.
_encode = json.JSONEncoder(ensure_ascii=False, default=str).encode

# The C encoder JSONEncoder.encode builds on every call, built once (a third of an event's encoding cost).
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)  # None on Pythons without the C accelerator
_c_iterencode = (None if _c_make_encoder is None else
                 _c_make_encoder(None, str, json.encoder.encode_basestring, None, ": ", ", ", False, False, True))


def _encode_fast(value: Any) -> str:
    """``_encode(value)`` byte for byte, for the payloads of appended events: the same C encoder with the same
    options, made once; it does not look for cycles, so a cyclic payload is encoded again by ``_encode``, which
    refuses it as before."""
    if _c_iterencode is None:  # pragma: no cover
        return _encode(value)
    try:
        return "".join(_c_iterencode(value, 0))
    except RecursionError:
        return _encode(value)


# A payload's keys -> their JSON text when the event is stored by shape, else None; the same few dozen key tuples
# come back for every event, so each is checked and encoded once per process (bounded, cleared when full).
_SHAPES: dict[tuple[Any, ...], str | None] = {}
_SHAPES_MAX = 4096


def _shape_of(keys: tuple[Any, ...]) -> str | None:
    got = _SHAPES.get(keys, False)
    if got is not False:
        return got  # type: ignore[return-value]
    shape = _encode(list(keys)) if len(keys) > 1 and all(isinstance(k, str) for k in keys) else None
    if len(_SHAPES) >= _SHAPES_MAX:
        _SHAPES.clear()
    _SHAPES[keys] = shape
    return shape


_ROWS_PER_INSERT = 140  # 7 parameters a row: 980, under the oldest SQLite's 999 bound parameters


@lru_cache(maxsize=_ROWS_PER_INSERT)
def _insert_events(n: int) -> str:
    return ("INSERT INTO events (id, type, target, ts, actor, payload, shape) VALUES "
            + ",".join(["(?, ?, ?, ?, ?, ?, ?)"] * n))


def event_payload(stored: str, keys: str | None) -> JsonObject:
    """An event's payload from ``events.payload`` and its shape's keys (migration 0021_event_payload_shapes): the
    values in the order of the keys when it has a shape, else the JSON object itself."""
    if keys is None:
        return json.loads(stored)
    return dict(zip(json.loads(keys), json.loads(stored)))


def event_payload_text(stored: str, keys: str | None) -> str:
    """The payload's JSON text as it was written (every event append_event stores is ``_encode(payload)``, and
    a JSON round trip of its values gives them back as they were: the text is rebuilt byte for byte)."""
    return stored if keys is None else _encode(event_payload(stored, keys))


def shaped_payload(text: str) -> tuple[str, str] | None:
    """``(keys, values)`` as JSON texts for a payload given as its JSON text (a dump's), when the shaped form
    reads back as exactly that text (:func:`event_payload_text`) and has a shape as append_event gives one; else
    None (the text is stored as it is)."""
    try:
        payload = json.loads(text)
    except ValueError:
        return None
    if not isinstance(payload, dict) or len(payload) < 2 or _encode(payload) != text:
        return None
    return _encode(list(payload)), _encode(list(payload.values()))


class EventSqlMixin(SqlHelpers):
    """Append-only change events."""

    # -- events ----------------------------------------------------------------------------------

    _depth: int
    # (id, type, target, ts, actor, payload text or its values, the payload's keys when given as values)
    _event_buffer: list[tuple[int, str, str, str, str | None, str, str | None]]
    _next_event_id: int

    def append_event(self, type: str, target: str, ts: str, payload: JsonObject, actor: str | None = None) -> int:
        """Append one change event (call inside the operation's transaction).

        Inside a transaction the event is numbered now and written with the others at COMMIT, in one
        statement: an ingest appends a dozen events, and one batched insert costs a fraction of a dozen
        (the write lock is held since BEGIN IMMEDIATE, so nobody else can take the ids meanwhile)."""
        if not self._depth:
            cur = self.conn.execute("INSERT INTO events (type, target, ts, actor, payload) VALUES (?, ?, ?, ?, ?)",
                                    (type, target, ts, actor, _encode(payload)))
            return int(cur.lastrowid or 0)
        # A payload's keys are the same for every event of a kind ("source", "target", "type", "confidence",
        # "doc_id" for each relation added): the log keeps them once per shape (event_shapes) and each event's
        # values as a JSON array, half of what the log took per event.
        shape = _shape_of(tuple(payload))
        body = _encode_fast(list(payload.values()) if shape is not None else payload)
        if not self._event_buffer:
            row = self.conn.execute(
                "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0), "
                "coalesce((SELECT max(id) FROM events), 0))").fetchone()
            self._next_event_id = int(row[0]) + 1
        event_id = self._next_event_id
        self._next_event_id += 1
        self._event_buffer.append((event_id, type, target, ts, actor, body, shape))
        return event_id

    def _flush_events(self) -> None:
        """Write the events buffered by this transaction (its last step before COMMIT)."""
        if self._event_buffer:
            rows, self._event_buffer = self._event_buffer, []
            shapes = self._shape_ids({r[6] for r in rows if r[6] is not None})
            # One multi-row INSERT per slice, not one execution per event: AUTOINCREMENT writes its
            # sqlite_sequence row at the end of every statement, so a statement per event paid that each time.
            for part in batches(rows, _ROWS_PER_INSERT):
                self.conn.execute(_insert_events(len(part)),
                                  [v for row in part for v in (*row[:6], shapes.get(row[6]) if row[6] else None)])

    def _shape_ids(self, shapes: set[str]) -> dict[str, int]:
        """The ids of payload shapes (their keys as JSON), added where new (inside the write transaction: no
        cache outlives it, so a rolled-back shape is never used)."""
        if not shapes:
            return {}
        got = self._map_in("SELECT keys, id FROM event_shapes WHERE keys IN ({ids})", shapes)
        for keys in sorted(shapes - got.keys()):
            got[keys] = int(self.conn.execute("INSERT INTO event_shapes (keys) VALUES (?)", (keys,)).lastrowid or 0)
        return got

    def list_events(
        self, after_id: int = 0, types: Sequence[str] | None = None, target: str | None = None, limit: int = 100
    ) -> list[Event]:
        """Events with id > ``after_id``, oldest first, optionally filtered."""
        sql = "SELECT e.*, s.keys FROM events e LEFT JOIN event_shapes s ON s.id = e.shape WHERE e.id > ?"
        params: list[Any] = [after_id]
        if types:
            sql += f" AND e.type IN ({','.join('?' * len(types))})"
            params += list(types)
        if target is not None:
            sql += " AND e.target = ?"
            params.append(target)
        sql += " ORDER BY e.id LIMIT ?"
        params.append(limit)
        return [
            Event(r["id"], r["type"], r["target"], r["ts"], event_payload(r["payload"], r["keys"]), r["actor"])
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
