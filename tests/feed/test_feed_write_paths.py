"""Every write path appends its event in the same transaction: the change and its event commit together,
and when the event cannot be appended the change is not written either."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import graphmem
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT
from graphmem.errors import BackendError
from graphmem.feed.types import CONTEXTKIT_TYPES, EVENT_TYPES, contextkit_name

KB = graphmem.KnowledgeBase


def _skills(root: Path, names: list[str]) -> Path:
    for name in names:
        (root / "ops" / name).mkdir(parents=True, exist_ok=True)
        (root / "ops" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Do {name}.\n---\nSteps.\n")
    return root


def _memory(kb: KB, user: str = "u1", text: str = "I like green tea") -> str:
    return kb.memory.add(text, user_id=user).results[0].id


# name -> (setup returning context, the write, the event type it must append)
PATHS: dict[str, tuple[Callable[[KB, Path], Any], Callable[[KB, Any], Any], str]] = {
    "document added (chunks, entities, relations, evidence, mentions)": (
        lambda kb, tmp: None,
        lambda kb, _: kb.ingest_with_content("doc_1", "Crash", "crash.txt", QUICKSTART_TEXT, QUICKSTART_ENTITIES,
                                             QUICKSTART_RELATIONS), "document.added"),
    "document versioned": (
        lambda kb, tmp: kb.ingest_with_content("doc_1", "Crash", "crash.txt", QUICKSTART_TEXT, [], []),
        lambda kb, _: kb.ingest_with_content("doc_1", "Crash", "crash.txt", QUICKSTART_TEXT + " More.", [], []),
        "document.versioned"),
    "document deleted": (
        lambda kb, tmp: kb.ingest_with_content("doc_1", "Crash", "crash.txt", QUICKSTART_TEXT, QUICKSTART_ENTITIES,
                                               QUICKSTART_RELATIONS),
        lambda kb, _: kb.documents.delete("doc_1"), "document.deleted"),
    "entity added": (lambda kb, tmp: None, lambda kb, _: kb.graph.add_node("redis", "tool"), "node.added"),
    "entity updated (alias)": (lambda kb, tmp: kb.graph.add_node("redis", "tool"),
                               lambda kb, _: kb.graph.add_node("redis", "tool", aliases=["redis cache"]),
                               "node.updated"),
    "entity retyped": (lambda kb, tmp: kb.graph.add_node("redis", "tool"),
                       lambda kb, _: kb.graph.retype("redis", "database"), "node.retyped"),
    "relation added": (lambda kb, tmp: (kb.graph.add_node("a"), kb.graph.add_node("b")),
                       lambda kb, _: kb.graph.add_edge("a", "b", "uses", 0.9), "edge.added"),
    "relation updated": (lambda kb, tmp: (kb.graph.add_node("a"), kb.graph.add_node("b"),
                                          kb.graph.add_edge("a", "b", "uses", 0.7)),
                         lambda kb, _: kb.graph.add_edge("a", "b", "uses", 0.9), "edge.updated"),
    "relation deleted": (lambda kb, tmp: (kb.graph.add_node("a"), kb.graph.add_node("b"),
                                          kb.graph.add_edge("a", "b", "uses", 0.7))[2],
                         lambda kb, edge_id: kb.graph.delete_edge(edge_id), "edge.removed"),
    "entities merged": (lambda kb, tmp: (kb.graph.add_node("redis"), kb.graph.add_node("redis server")),
                        lambda kb, _: kb.graph.merge("redis", "redis server"), "node.merged"),
    "entity deleted": (lambda kb, tmp: kb.graph.add_node("redis"), lambda kb, _: kb.graph.delete_node("redis"),
                       "node.removed"),
    "page written": (lambda kb, tmp: None,
                     lambda kb, _: kb.wiki.write_page("topic", "Runbook", "Restart [[redis]] first."), "wiki.write"),
    "page deleted": (lambda kb, tmp: kb.wiki.write_page("topic", "Runbook", "Restart it."),
                     lambda kb, _: kb.wiki.delete_page("topic", "Runbook"), "wiki.delete"),
    "memory added (with its edges)": (lambda kb, tmp: _memory(kb, text="first message"),
                                      lambda kb, _: _memory(kb, text="second message"), "memory.added"),
    "memory updated": (lambda kb, tmp: _memory(kb), lambda kb, mid: kb.memory.update(mid, "I like black tea"),
                       "memory.updated"),
    "memory deleted": (lambda kb, tmp: _memory(kb), lambda kb, mid: kb.memory.delete(mid), "memory.deleted"),
    "memories of a scope deleted": (lambda kb, tmp: _memory(kb), lambda kb, _: kb.memory.delete_all(user_id="u1"),
                                    "memory.deleted_all"),
    "memory relevance bumped": (lambda kb, tmp: _memory(kb), lambda kb, mid: kb.memory.mark_relevant(mid),
                                "memory.marked"),
    # (the setup's search runs the decay tick a first search makes, so that the write is the use counts alone)
    "memory accessed (use counts)": (lambda kb, tmp: (_memory(kb), kb.memory.search("tea", user_id="u1")),
                                     lambda kb, _: kb.memory.search("tea", user_id="u1"), "memory.accessed"),
    "memory feedback": (lambda kb, tmp: _memory(kb), lambda kb, mid: kb.memory.feedback(mid, "tea?", True),
                        "memory.feedback"),
    "decay": (lambda kb, tmp: _memory(kb), lambda kb, _: kb.memory.tick_decay(), "memory.decayed"),
    "context graph reset": (lambda kb, tmp: (_memory(kb, text="one"), _memory(kb, text="two")),
                            lambda kb, _: kb.memory.reset_context_graph(user_id="u1"), "memory.graph_reset"),
    "context graph backfilled": (lambda kb, tmp: (_memory(kb, text="one"), _memory(kb, text="two"),
                                                  kb.memory.reset_context_graph(user_id="u1")),
                                 lambda kb, _: kb.memory.backfill_context_graph(user_id="u1"), "memory.backfilled"),
    "skills built": (lambda kb, tmp: _skills(tmp / "skills", ["restart", "page"]),
                     lambda kb, root: kb.skills.build([root]), "skills.built"),
    "skills rebuilt (reset)": (lambda kb, tmp: kb.skills.build([_skills(tmp / "skills", ["restart"])]),
                               lambda kb, _: kb.skills.rebuild(), "skills.cleared"),
}


# Writes a read makes on the side (use counts): the read still answers when they fail.
READ_BOOKKEEPING = {"memory accessed (use counts)"}


def _state(kb: KB) -> tuple[dict[str, list[str]], dict[str, bytes]]:
    rows: dict[str, list[str]] = {}
    for table, row in kb.store.dump_rows():
        rows.setdefault(table, []).append(json.dumps(row, sort_keys=True))
    files = {p.relative_to(kb.home).as_posix(): p.read_bytes() for p in (kb.home / "wiki").rglob("*") if p.is_file()}
    return {t: sorted(r) for t, r in rows.items()}, files


@pytest.mark.parametrize("name", list(PATHS))
def test_the_write_appends_its_event_with_a_target_and_payload(name: str, kb: KB, tmp_path: Path) -> None:
    setup, write, etype = PATHS[name]
    ctx = setup(kb, tmp_path)
    before = kb.events.last_id()
    write(kb, ctx)
    new = kb.events.list(after_id=before, limit=10000)
    mine = [e for e in new if e.type == etype]
    assert mine, f"{name}: no {etype} event among {[e.type for e in new]}"
    assert all(e.target and e.timestamp and isinstance(e.payload, dict) for e in mine)
    assert [e.id for e in new] == sorted(e.id for e in new)
    assert all(e.type in EVENT_TYPES or e.type.startswith("wiki.") for e in new), [e.type for e in new]


@pytest.mark.parametrize("name", list(PATHS))
def test_when_the_event_cannot_be_appended_nothing_of_the_write_is_stored(name: str, kb: KB, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    setup, write, etype = PATHS[name]
    ctx = setup(kb, tmp_path)
    kb.wiki.flush()  # pages a setup left pending are not part of the write under test
    before = _state(kb)
    real = kb.store.append_event

    def failing(type: str, *args: Any, **kwargs: Any) -> int:
        if type == etype:
            raise BackendError("disk full (simulated) while appending the event")
        return real(type, *args, **kwargs)

    monkeypatch.setattr(kb.store, "append_event", failing)
    if name in READ_BOOKKEEPING:  # a search never fails for its bookkeeping: it warns, and writes nothing
        with pytest.warns(UserWarning, match="bookkeeping .* was not saved: disk full"):
            write(kb, ctx)
    else:
        with pytest.raises(BackendError, match="simulated"):
            write(kb, ctx)
    monkeypatch.undo()
    assert _state(kb) == before


def test_memory_events_carry_their_scope_and_enough_to_redo_them(kb: KB) -> None:
    mid = kb.memory.add("I like green tea", user_id="u1", agent_id="a1").results[0].id
    kb.memory.update(mid, "I like black tea")
    kb.memory.feedback(mid, "tea?", helpful=False)
    added, updated, feedback = kb.events.list(types=["memory.added", "memory.updated", "memory.feedback"])
    assert added.payload["text"] == "I like green tea" and added.payload["user_id"] == "u1"
    assert added.payload["agent_id"] == "a1" and added.payload["role"] is None
    assert updated.payload["text"] == "I like black tea" and updated.payload["user_id"] == "u1"
    assert feedback.payload == {"query": "tea?", "helpful": False, "user_id": "u1", "agent_id": "a1"}


def test_every_contextkit_event_name_maps_to_graphmem_types() -> None:
    assert set(CONTEXTKIT_TYPES) >= {"node_added", "node_updated", "node_archived", "node_deleted",
                                     "node_relevance_bumped", "edge_added", "edge_decayed", "edge_pruned",
                                     "memory_feedback_recorded", "reset", "node_accessed"}
    assert all(t in EVENT_TYPES for types in CONTEXTKIT_TYPES.values() for t in types)
    assert contextkit_name("memory.feedback") == "memory_feedback_recorded"
    assert contextkit_name("node.removed") == "node_deleted" and contextkit_name("wiki.write") == "wiki.write"
