"""Memories in mem0's REST shape, and the face functions added for them (delete_all, reset, edges)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from http_helpers import (
    client_fixture,  # noqa: F401  (fixtures, by name)
    error_of,
)

import graphmem


def _add(client: Any, text: str, **scope: str) -> str:
    resp = client.post("/memories", json={"messages": [{"role": "user", "content": text}], **scope})
    assert resp.status_code == 200, resp.text
    out = resp.json()
    assert out["results"][0]["event"] == "ADD" and out["results"][0]["memory"] == text
    return str(out["results"][0]["id"])


def test_mem0_add_get_list_update_history_delete(client: Any) -> None:
    mid = _add(client, "I am vegetarian and allergic to nuts", user_id="alex")
    _add(client, "I live in Lisbon", user_id="alex", run_id="s1")
    _add(client, "Someone else's memory", user_id="sam")
    one = client.get(f"/memories/{mid}").json()
    assert one["memory"] == "I am vegetarian and allergic to nuts" and one["user_id"] == "alex"
    listed = client.get("/memories", params={"user_id": "alex"}).json()
    assert [m["memory"] for m in listed["results"]] == ["I am vegetarian and allergic to nuts", "I live in Lisbon"]
    assert len(client.get("/memories", params={"user_id": "alex", "run_id": "s1"}).json()["results"]) == 1
    upd = client.put(f"/memories/{mid}", json={"text": "I am vegan and allergic to nuts"}).json()
    assert upd["event"] == "UPDATE" and upd["memory"] == "I am vegan and allergic to nuts"
    assert client.get(f"/memories/{mid}").json()["memory"] == "I am vegan and allergic to nuts"
    deleted = client.delete(f"/memories/{mid}").json()
    assert deleted["event"] == "DELETE" and deleted["message"] == "Memory deleted successfully"
    history = client.get(f"/memories/{mid}/history").json()
    assert [h["event"] for h in history] == ["ADD", "UPDATE", "DELETE"]
    assert history[1]["old_text"] == "I am vegetarian and allergic to nuts"
    error_of(client.get(f"/memories/{mid}"), 404, "NotFound")
    error_of(client.put(f"/memories/{mid}", json={"text": "x"}), 404, "NotFound")
    error_of(client.delete(f"/memories/{mid}"), 404, "NotFound")
    error_of(client.get("/memories/mem_nope/history"), 404, "NotFound")


def test_mem0_update_accepts_memory_or_data_and_needs_exactly_one(client: Any) -> None:
    mid = _add(client, "likes tea", user_id="u")
    assert client.put(f"/memories/{mid}", json={"memory": "likes green tea"}).json()["memory"] == "likes green tea"
    assert client.put(f"/memories/{mid}", json={"data": "likes black tea"}).json()["memory"] == "likes black tea"
    err = error_of(client.put(f"/memories/{mid}", json={}), 400, "InvalidInput")
    assert err["field"] == "text"
    error_of(client.put(f"/memories/{mid}", json={"text": "a", "memory": "b"}), 400, "InvalidInput")


def test_mem0_search_through_search_with_filters_and_memories_search(client: Any) -> None:
    _add(client, "My favourite food is ramen", user_id="alex")
    _add(client, "I work as a dispatcher", user_id="alex")
    _add(client, "My favourite food is pizza", user_id="sam")
    via_filters = client.post("/search", json={"query": "favourite food", "filters": {"user_id": "alex"}}).json()
    assert [r["memory"] for r in via_filters["results"]][0] == "My favourite food is ramen"
    assert all(r["user_id"] == "alex" for r in via_filters["results"])
    via_id = client.post("/search", json={"query": "favourite food", "user_id": "alex", "limit": 1}).json()
    assert [r["memory"] for r in via_id["results"]] == ["My favourite food is ramen"]
    alias = client.post("/memories/search", json={"query": "favourite food", "filters": {"user_id": "sam"}}).json()
    assert [r["memory"] for r in alias["results"]] == ["My favourite food is pizza"]
    assert set(alias["results"][0]["context_graph"]) >= {"dense", "lexical", "graph", "relevance"}
    err = error_of(client.post("/search", json={"query": "food", "filters": {"colour": "red"}}), 400, "InvalidInput")
    assert err["field"] == "filters.colour"


def test_mem0_delete_by_scope_needs_a_scope_and_reset_deletes_all(client: Any) -> None:
    a = _add(client, "alex one", user_id="alex")
    _add(client, "alex two", user_id="alex")
    _add(client, "sam one", user_id="sam")
    err = error_of(client.delete("/memories"), 400, "InvalidInput")
    assert "user_id" in err["message"]
    out = client.delete("/memories", params={"user_id": "alex"}).json()
    assert out["deleted"] == 2
    assert client.get("/memories", params={"user_id": "alex"}).json()["results"] == []
    assert [m["memory"] for m in client.get("/memories", params={"user_id": "sam"}).json()["results"]] == ["sam one"]
    assert [h["event"] for h in client.get(f"/memories/{a}/history").json()] == ["ADD", "DELETE"]
    assert client.post("/reset", json={"confirm": True}).json()["deleted"] == 1
    assert client.get("/memories", params={"user_id": "sam"}).json()["results"] == []


def test_memory_graph_lists_a_scopes_memories_with_their_edges(client: Any) -> None:
    first = _add(client, "The dispatch API was slow today", user_id="ops", run_id="r1")
    second = _add(client, "The dispatch API slowness came from PgBouncer", user_id="ops", run_id="r1")
    graph = client.get("/memories/graph", params={"user_id": "ops"}).json()
    assert [m["id"] for m in graph["results"]] == [first, second]
    pairs = {(e["src"], e["dst"], e["type"]) for e in graph["edges"]}
    assert (first, second, "TEMPORAL_NEXT") in pairs or (second, first, "REPLY_TO") in pairs
    assert all(e["src"] in (first, second) and e["dst"] in (first, second) for e in graph["edges"])


def test_memory_add_validation(client: Any) -> None:
    error_of(client.post("/memories", json={"messages": [], "user_id": "u"}), 400, "InvalidInput")
    err = error_of(client.post("/memories", json={"messages": [{"role": "user"}], "user_id": "u"}), 400,
                   "InvalidInput")
    assert err["field"].startswith("messages")
    err = error_of(client.post("/memories", json={"messages": "x", "user_id": ""}), 400, "InvalidInput")
    assert err["field"] == "user_id"
    error_of(client.get("/memories", params={"user_id": "u", "limit": 0}), 400, "InvalidInput")


# -- the face functions behind DELETE /memories, POST /reset and GET /memories/graph -------------------


def test_delete_all_is_one_transaction_with_its_event(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb") as kb:
        ids = [kb.memory.add(t, user_id="u")["results"][0]["id"] for t in ("one", "two")]
        kb.memory.update(ids[0], "one, edited")  # leaves an archived old version u's scope holds too
        kb.memory.add("keep", user_id="v")
        out = kb.memory.delete_all(user_id="u")
        assert out["deleted"] == 2
        assert kb.memory.get_all(user_id="u", include_archived=True)["results"] == []
        assert [m["memory"] for m in kb.memory.get_all(user_id="v")["results"]] == ["keep"]
        ev = kb.events.list(0, ["memory.deleted_all"])
        assert len(ev) == 1 and ev[0].payload["deleted"] == 2 and ev[0].payload["user_id"] == "u"
        assert kb.memory.reset() == {"deleted": 1, "edges": 0}
        assert kb.memory.stats()["memories"] == 0


def test_edges_among_validates_its_input(tmp_path: Path) -> None:
    import pytest

    with graphmem.open(tmp_path / "kb") as kb:
        with pytest.raises(graphmem.InvalidInput):
            kb.memory.edges_among("mem_x")
        assert kb.memory.edges_among([]) == []
