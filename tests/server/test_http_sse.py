"""GET /events/stream: Server-Sent Events, resumable with Last-Event-ID."""

from __future__ import annotations

import json
from typing import Any

from http_helpers import (
    client_fixture,  # noqa: F401  (fixtures, by name)
    error_of,
)


def _frames(client: Any, **kw: Any) -> list[tuple[int, dict[str, Any]]]:
    headers = kw.pop("headers", {})
    with client.stream("GET", "/events/stream", params=kw, headers=headers) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        text = resp.read().decode("utf-8")
    out = []
    for frame in text.split("\n\n"):
        lines = frame.splitlines()
        ids = [ln[3:].strip() for ln in lines if ln.startswith("id:")]
        data = [ln[5:].strip() for ln in lines if ln.startswith("data:")]
        if ids and data:
            out.append((int(ids[0]), json.loads("\n".join(data))))
    return out


def _seed(client: Any, n: int) -> None:
    for i in range(n):
        assert client.post("/memories", json={"messages": f"memory {i}", "user_id": "u"}).status_code == 200


def test_stream_sends_events_with_ids_in_order(client: Any) -> None:
    _seed(client, 3)
    frames = _frames(client, limit=3)
    assert [i for i, _ in frames] == [1, 2, 3]
    assert all(ev["id"] == i and ev["type"] == "memory.added" for i, ev in frames)


def test_last_event_id_resumes_after_the_last_event_seen(client: Any) -> None:
    _seed(client, 5)
    first = _frames(client, limit=2)
    assert [i for i, _ in first] == [1, 2]
    resumed = _frames(client, limit=3, headers={"Last-Event-ID": str(first[-1][0])})
    assert [i for i, _ in resumed] == [3, 4, 5]  # nothing repeated, nothing skipped
    # the header wins over ?after (a browser reconnecting keeps the URL it started with)
    again = _frames(client, limit=1, after=0, headers={"Last-Event-ID": "4"})
    assert [i for i, _ in again] == [5]
    by_query = _frames(client, limit=2, after=3)
    assert [i for i, _ in by_query] == [4, 5]


def test_stream_with_nothing_new_closes_at_its_timeout_then_delivers_the_next_event(client: Any) -> None:
    _seed(client, 1)
    frames = _frames(client, limit=1, headers={"Last-Event-ID": "1"}, timeout=0.3)
    assert frames == []
    _seed(client, 1)
    frames = _frames(client, limit=5, headers={"Last-Event-ID": "1"}, timeout=0.3)
    assert [i for i, _ in frames] == [2]


def test_stream_filters_by_type(client: Any) -> None:
    _seed(client, 2)
    client.post("/wiki/pages", json={"category": "notes", "title": "T", "content": "body"})
    frames = _frames(client, types="memory.added", timeout=0.3)
    assert [ev["type"] for _, ev in frames] == ["memory.added", "memory.added"]


def test_bad_last_event_id_is_400(client: Any) -> None:
    err = error_of(client.get("/events/stream", headers={"Last-Event-ID": "abc"}), 400, "InvalidInput")
    assert err["field"] == "Last-Event-ID"
    error_of(client.get("/events/stream", params={"limit": 0}), 400, "InvalidInput")
