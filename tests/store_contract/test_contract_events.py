"""Contract of :class:`graphmem.store.protocols.EventStore`: the change log."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from graphmem.store.protocols import EventStore

from .seed import T0, T1

PROTOCOL = EventStore
contract = pytest.mark.contract


@contract("append_event", "list_events")
def test_events_are_appended_with_increasing_ids_and_read_back(store) -> None:
    with store.transaction():
        a = store.append_event("doc.added", "d1", T0, {"n": 1, "tags": ["x"]}, actor="alice")
        b = store.append_event("doc.removed", "d1", T1, {})
        c = store.append_event("doc.added", "d2", T1, {"path": PurePosixPath("a/b")})
    assert a < b < c
    events = store.list_events()
    assert [(e.id, e.type, e.target, e.timestamp, e.actor) for e in events] == [
        (a, "doc.added", "d1", T0, "alice"), (b, "doc.removed", "d1", T1, None), (c, "doc.added", "d2", T1, None)]
    assert events[0].payload == {"n": 1, "tags": ["x"]}
    assert events[2].payload == {"path": "a/b"}  # not JSON: stored as its str


@contract("list_events")
def test_list_events_filters_and_pages(store) -> None:
    with store.transaction():
        ids = [store.append_event(t, g, T0, {}) for t, g in [("a", "x"), ("b", "x"), ("a", "y"), ("c", "y")]]
    assert [e.id for e in store.list_events(after_id=ids[1])] == ids[2:]
    assert [e.id for e in store.list_events(types=["a", "c"])] == [ids[0], ids[2], ids[3]]
    assert [e.id for e in store.list_events(types=[])] == ids  # empty: any type
    assert [e.id for e in store.list_events(target="y")] == ids[2:]
    assert [e.id for e in store.list_events(types=["a"], target="y")] == [ids[2]]
    assert [e.id for e in store.list_events(limit=2)] == ids[:2]
    assert store.list_events(types=["none"]) == []
    assert store.list_events(after_id=ids[-1]) == []


@contract("last_event_id")
def test_last_event_id_is_the_largest_committed_id(store) -> None:
    assert store.last_event_id() == 0
    with store.transaction():
        store.append_event("a", "x", T0, {})
        b = store.append_event("b", "x", T0, {})
    assert store.last_event_id() == b
    with pytest.raises(RuntimeError), store.transaction():
        store.append_event("c", "x", T0, {})
        raise RuntimeError("rolled back")
    assert store.last_event_id() == b


@contract("feed_cursor", "set_feed_cursor")
def test_feed_cursors_are_recorded_per_consumer_and_overwritten(store) -> None:
    assert store.feed_cursor("webhook:a") is None
    with store.transaction():
        store.set_feed_cursor("webhook:a", 7, T0)
        store.set_feed_cursor("webhook:b", 2, T0)
    with store.transaction():
        store.set_feed_cursor("webhook:a", 9, T1)
    assert (store.feed_cursor("webhook:a"), store.feed_cursor("webhook:b")) == (9, 2)
    assert store.list_events() == []  # bookkeeping: no event of its own


@contract("event_id_at")
def test_event_id_at_is_the_last_event_at_or_before_a_time(store) -> None:
    assert store.event_id_at(T1) == 0
    with store.transaction():
        a = store.append_event("a", "x", T0, {})
        b = store.append_event("b", "x", T1, {})
    assert (store.event_id_at("2025-12-31T00:00:00.000Z"), store.event_id_at(T0), store.event_id_at(T1)) == (0, a, b)
    assert store.event_id_at("2026-01-01T12:00:00.000Z") == a
