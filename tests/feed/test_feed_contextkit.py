"""ContextKit's change-log names on graphmem.compat.contextkit.Memory, and its WebhookSink."""

from __future__ import annotations

from pathlib import Path

import pytest
from feed_helpers import receiver

import graphmem
from graphmem.compat.contextkit import ChangeEvent, Memory
from graphmem.compat.contextkit.sinks.webhook import WebhookSink, verify
from graphmem.errors import InvalidInput
from graphmem.feed.follow import wait_for


def _memory(tmp_path: Path) -> Memory:
    return Memory.from_config({"vector_store": {"provider": "qdrant", "config": {"path": str(tmp_path / "mem")}},
                               "context_graph": {"enabled": True}})


def test_subscribe_with_contextkit_names_gets_change_events_in_order(tmp_path: Path) -> None:
    with _memory(tmp_path) as m:
        m.add("I love pizza", user_id="u1")
        got: list[ChangeEvent] = []
        token = m.subscribe_context_graph_changes(got.append, event_types=["node_added", "memory_feedback_recorded"],
                                                  from_event_id=0)
        second = m.add("I am allergic to peanuts", user_id="u1")["results"][0]["id"]
        m.record_feedback(second, helpful=True, user_id="u1", query="allergies")
        assert wait_for(lambda: len(got) >= 3)
        assert [(e.event_type, e.graphmem_type) for e in got] == [
            ("node_added", "memory.added"), ("node_added", "memory.added"),
            ("memory_feedback_recorded", "memory.feedback")]
        assert got[1].node_id == second and got[1].scope == {"user_id": "u1"}
        assert got[1].payload["text"] == "I am allergic to peanuts"
        assert [e.event_id for e in got] == sorted(e.event_id for e in got)
        assert m.unsubscribe_context_graph_changes(token) is True
        assert m.unsubscribe_context_graph_changes(token) is False


def test_snapshot_context_graph_is_an_openable_copy(tmp_path: Path) -> None:
    with _memory(tmp_path) as m:
        mid = m.add("I love pizza", user_id="u1")["results"][0]["id"]
        out = m.snapshot_context_graph(tmp_path / "snap")
        assert out["last_event_id"] == m.kb.events.last_id()
        m.delete(mid)
    with graphmem.open(tmp_path / "snap", read_only=True) as snap:
        assert [r["id"] for r in snap.memory.get_all(user_id="u1").to_dict()["results"]] == [mid]


def test_changelog_sink_and_contextkit_webhook_sink_deliver_signed_changes(tmp_path: Path) -> None:
    with receiver() as rec, _memory(tmp_path) as m:
        sink = WebhookSink(rec.url, secret="k")
        token = m.context_graph.changelog.add_sink(sink, from_event_id=0)
        m.add("I love pizza", user_id="u1")
        assert wait_for(lambda: len(rec.requests) >= 1)
        m.kb.events.unsubscribe(token)
        headers, body = rec.requests[0]
        assert verify(body, headers, "k")["contextkit_type"] == "node_added"
        # .send also takes ContextKit's ChangeEvent
        change = m.context_graph.changelog.events()[0]
        assert sink.send(change).delivered is True
        assert verify(rec.requests[-1][1], rec.requests[-1][0], "k")["type"] == "memory.added"
    with pytest.raises(InvalidInput, match="secret"):
        WebhookSink("http://127.0.0.1:9/hook")


def test_replay_context_graph_shows_the_memories_as_they_were(tmp_path: Path) -> None:
    with _memory(tmp_path) as m:
        first = m.add("I love pizza", user_id="u1")["results"][0]["id"]
        point = m.kb.events.last_id()
        m.update(first, "I love pasta")
        m.add("I am allergic to peanuts", user_id="u1")
        with m.replay_context_graph(until=point) as then:
            assert [(r["id"], r["memory"]) for r in then.memory.get_all(user_id="u1").to_dict()["results"]] == [
                (first, "I love pizza")]
        with m.context_graph.changelog.replay(point) as then:
            assert then.memory.stats().to_dict()["memories"] == 1
        assert len(m.get_all(user_id="u1")["results"]) == 2
