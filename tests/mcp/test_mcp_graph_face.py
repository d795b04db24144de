"""The two graph-face additions the memory tools need: edge properties and deleting one relation."""

from __future__ import annotations

import pytest

import graphmem
from graphmem.errors import InvalidInput, NotFound


def test_edge_properties_are_kept_and_merged(kb: graphmem.KnowledgeBase) -> None:
    kb.graph.add_node("wheel", "component")
    kb.graph.add_node("car", "system")
    eid = kb.graph.add_edge("wheel", "car", "is part of", properties={"relationType": "is part of"})
    edge = kb.graph.get_edge(eid)
    assert (edge["source_name"], edge["type"], edge["target_name"]) == ("car", "contains", "wheel")
    assert edge["properties"] == {"relationType": "is part of"}
    assert kb.graph.add_edge("car", "wheel", "contains", properties={"note": "x"}) == eid
    assert kb.graph.get_edge(eid)["properties"] == {"relationType": "is part of", "note": "x"}
    with pytest.raises(InvalidInput, match="properties"):
        kb.graph.add_edge("car", "wheel", "contains", properties=["x"])  # type: ignore[arg-type]


def test_delete_edge_removes_one_relation_and_keeps_the_entities(kb: graphmem.KnowledgeBase) -> None:
    kb.graph.add_node("alice", "person")
    kb.graph.add_node("acme", "organization")
    kb.graph.add_node("bob", "person")
    gone = kb.graph.add_edge("alice", "acme", "works at")
    kept = kb.graph.add_edge("bob", "acme", "works at")
    out = kb.graph.delete_edge(gone)
    assert out["id"] == gone and out["type"] == "works at"
    assert [r["id"] for r in kb.graph.get_entity("acme")["relations"]] == [kept]
    assert kb.graph.find("alice") is not None
    assert [e.type for e in kb.events.list(types=["edge.removed"])] == ["edge.removed"]
    with pytest.raises(NotFound, match=gone):
        kb.graph.delete_edge(gone)
