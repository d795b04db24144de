"""Migration 0021_event_payload_shapes: an event written in a transaction stores its payload as the JSON array of
its values, the keys once per shape (event_shapes). Every read gives the payload back as before, the dump its JSON
text byte for byte; a shape added by a transaction that rolls back is never used; events from before the migration
(payload objects, no shape) read and dump as they always did."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.store import open_store
from graphmem.store.sqlite.events import _encode

CONFIG = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}
PAYLOADS: list[dict[Any, Any]] = [
    {"source": "n_1", "target": "n_2", "type": "depends on", "confidence": 0.847, "doc_id": "d1"},
    {"source": "n_3", "target": "n_4", "type": "feeds", "confidence": 1e-07, "doc_id": "d1"},  # the same shape
    {"name": "Zoë's café 🚚", "quote": 'a "quoted"\n\ttext \\ with \u0001 control', "n": 2**70, "neg": -0.0},
    {"nested": {"b": [1, 2.5, None, True], "a": {"z": "é"}}, "list": [{"x": 1}], "none": None, "flag": False},
    {"only": "one key"},  # a single key: kept as the object
    {},
    {1: "int key", "2": "str key"},  # a key that is not a string: kept as the object (its text says "1")
    {"nan": math.nan, "inf": math.inf},
]


def _append(home: Path) -> list[int]:
    with graphmem.open(home, config=CONFIG) as kb:
        with kb.store.transaction():
            ids = [kb.store.append_event("test.event", f"t{i}", "2026-01-01T00:00:00.000Z", p)
                   for i, p in enumerate(PAYLOADS)]
        ids.append(kb.store.append_event("test.single", "t", "2026-01-01T00:00:01.000Z", PAYLOADS[0]))  # outside
    return ids


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def test_payloads_read_back_and_dump_byte_for_byte(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    ids = _append(home)
    store = open_store(home)
    try:
        events = {e.id: e for e in store.list_events(after_id=0, types=["test.event", "test.single"], limit=100)}
        dumped = {r["id"]: r for t, r in store.dump_rows(["events"]) if r["type"].startswith("test.")}
    finally:
        store.close()
    want = [json.loads(_encode(p)) for p in PAYLOADS] + [PAYLOADS[0]]  # what the log gave back before
    assert [ids.index(i) for i in events] == list(range(len(ids)))
    for i, p in zip(ids, want):
        assert _same(events[i].payload, p), i
        assert list(events[i].payload) == list(p)  # key order too
    assert [dumped[i]["payload"] for i in ids] == [_encode(p) for p in PAYLOADS] + [_encode(PAYLOADS[0])]
    assert list(dumped[ids[0]]) == ["id", "type", "target", "ts", "actor", "payload"]
    conn = sqlite3.connect(home / "graph.db")
    try:
        stored = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, payload, shape FROM events")}
        shapes = dict(conn.execute("SELECT id, keys FROM event_shapes").fetchall())
    finally:
        conn.close()
    assert stored[ids[0]] == ('["n_1", "n_2", "depends on", 0.847, "d1"]', stored[ids[1]][1])  # one shape for both
    assert json.loads(shapes[stored[ids[0]][1]]) == ["source", "target", "type", "confidence", "doc_id"]
    # one key, no key, a key that is not a string, and an event outside a transaction keep the object
    assert all(stored[ids[i]][1] is None for i in (4, 5, 6, 8))


def test_a_shape_from_a_rolled_back_transaction_is_not_used(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    try:
        with pytest.raises(RuntimeError), store.transaction():
            store.append_event("x", "t", "ts", {"first": 1, "second": 2})
            store.append_event("x", "t", "ts", {"other": 1, "keys": 2})
            store._flush_events()  # type: ignore[attr-defined]  # the shapes are written, then rolled back
            raise RuntimeError("the operation fails")
        with store.transaction():
            store.append_event("x", "t", "ts", {"other": 3, "keys": 4})
        assert [e.payload for e in store.list_events(types=["x"])] == [{"other": 3, "keys": 4}]
        assert [r["payload"] for _, r in store.dump_rows(["events"])] == ['{"other": 3, "keys": 4}']
    finally:
        store.close()


def test_events_from_before_the_migration_read_and_dump_as_before(tmp_path: Path) -> None:
    new, old = tmp_path / "new", tmp_path / "old"
    ids = _append(new)
    assert _append(old) == ids
    conn = sqlite3.connect(old / "graph.db", isolation_level=None)
    try:  # what the code before the migration left: payload objects, no shapes
        texts = [(_encode(p), i) for i, p in zip(ids, [*PAYLOADS, PAYLOADS[0]])]
        conn.execute("BEGIN")
        conn.executemany("UPDATE events SET payload = ?, shape = NULL WHERE id = ?", texts)
        conn.execute("ALTER TABLE events DROP COLUMN shape")
        conn.execute("DROP TABLE event_shapes")
        conn.execute("DELETE FROM schema_migrations WHERE name = '0021_event_payload_shapes'")
        conn.execute("COMMIT")
    finally:
        conn.close()

    def reads(home: Path) -> list[Any]:
        store = open_store(home)  # migrates the old one
        try:
            return [[e.to_dict() for e in store.list_events(limit=1000)],
                    list(store.dump_rows(["events"]))]
        finally:
            store.close()
    assert _same(reads(old), reads(new))
    with graphmem.open(old, config=CONFIG) as kb:  # new events of the migrated log take shapes
        with kb.store.transaction():
            kb.store.append_event("test.event", "t", "2026-01-01T00:00:02.000Z", PAYLOADS[0])
    conn = sqlite3.connect(old / "graph.db")
    try:
        assert conn.execute("SELECT count(*) FROM events WHERE shape IS NOT NULL").fetchone() == (1,)
    finally:
        conn.close()


def test_a_dump_loads_into_a_new_store_and_dumps_the_same(tmp_path: Path) -> None:
    _append(tmp_path / "kb")
    source = open_store(tmp_path / "kb")
    (tmp_path / "copy").mkdir()
    target = open_store(tmp_path / "copy")
    try:
        rows = list(source.dump_rows())
        with target.transaction():
            target.load_rows(rows)
        assert list(target.dump_rows()) == rows
        assert _same([e.payload for e in target.list_events(limit=100)],
                     [e.payload for e in source.list_events(limit=100)])
    finally:
        source.close()
        target.close()
