"""Contract of :class:`graphmem.store.protocols.MemoryStore`: memories and what hangs on them."""

from __future__ import annotations

import pytest

from graphmem.errors import BackendError
from graphmem.store.protocols import MemoryStore

from .seed import T0, T1, T2, node

PROTOCOL = MemoryStore
contract = pytest.mark.contract
V = b"\x00\x3c\x00\x3c"


def mem(store, memory_id: str, text: str, user_id: str | None = "u1", agent_id: str | None = None,
        run_id: str | None = None, said_at: str = T0, role: str | None = "user",
        metadata: dict[str, object] | None = None) -> int:
    row = {"id": memory_id, "text": text, "role": role, "said_at": said_at, "created_at": T0,
           "scope_key": f"{user_id}|{agent_id}", "user_id": user_id, "agent_id": agent_id, "run_id": run_id,
           "metadata": metadata or {}}
    with store.transaction():
        return store.insert_memory(row)


@contract("insert_memory", "get_memories", "list_memories", "memories_after")
def test_memories_are_stored_and_read_by_scope(store) -> None:
    r1 = mem(store, "m1", "the kayak is red", said_at=T1, metadata={"src": "chat"})
    r2 = mem(store, "m2", "i like tea", said_at=T0, agent_id="bot", run_id="r1", role=None)
    r3 = mem(store, "m3", "other user", user_id="u2")
    assert r1 < r2 < r3
    got = store.get_memories(["m1", "zzz", "m1"])
    assert list(got) == ["m1"]
    m1 = got["m1"]
    assert (m1["text"], m1["user_id"], m1["agent_id"], m1["role"], m1["metadata"], m1["said_at"]) == (
        "the kayak is red", "u1", None, "user", {"src": "chat"}, T1)
    assert (m1["version"], m1["archived"], m1["uses"], m1["rowid_"], m1["scope_key"]) == (1, False, 0, r1, "u1|None")
    assert store.get_nodes(["m1"])["m1"].kind == "memory"  # a memory is a node too
    assert [m["id"] for m in store.list_memories({"user_id": "u1"})] == ["m2", "m1"]  # oldest said first
    assert [m["id"] for m in store.list_memories({})] == ["m2", "m3", "m1"]  # said_at, then row order
    assert [m["id"] for m in store.list_memories({"user_id": "u1", "agent_id": "bot", "run_id": "r1"})] == ["m2"]
    assert [m["id"] for m in store.list_memories({"scope_key": "u2|None"})] == ["m3"]
    assert [m["id"] for m in store.list_memories({"user_id": "u1", "agent_id": None})] == ["m2", "m1"]
    assert [m["id"] for m in store.list_memories({"user_id": "u1"}, limit=1, offset=1)] == ["m1"]
    assert store.list_memories({"user_id": "nobody"}) == []
    assert [m["id"] for m in store.memories_after({"user_id": "u1"}, r1, 10)] == ["m2"]
    assert [m["id"] for m in store.memories_after({}, 0, 2)] == ["m1", "m2"]


@contract("insert_memory")
def test_insert_memory_needs_its_keys_and_a_free_id(store) -> None:
    mem(store, "m1", "hello")
    with pytest.raises(KeyError), store.transaction():
        store.insert_memory({"id": "m2"})
    with pytest.raises(BackendError), store.transaction():
        store.insert_memory({"id": "m1", "text": "again", "said_at": T0, "created_at": T0, "scope_key": "k"})
    assert list(store.get_memories(["m1", "m2"])) == ["m1"]


@contract("set_memories_archived", "memory_scope_ids", "memories_in_scope", "memory_scope_state")
def test_archiving_scope_ids_and_scope_state(store) -> None:
    mem(store, "m1", "one")
    mem(store, "m2", "two")
    mem(store, "m3", "three", user_id="u2")
    gen, count, top = store.memory_scope_state("u1|None")
    assert (count, top) == (2, store.get_memories(["m2"])["m2"]["rowid_"])
    assert store.memory_scope_state("nobody") == (gen, 0, 0)
    with store.transaction():
        store.set_memories_archived(["m2"], True, T1)
    state = store.memory_scope_state("u1|None")
    assert state.generation > gen and state.memories == 2  # archived ones count
    assert store.get_memories(["m2"])["m2"]["archived"] is True
    assert [m["id"] for m in store.list_memories({"user_id": "u1"})] == ["m1"]
    assert [m["id"] for m in store.list_memories({"user_id": "u1"}, include_archived=True)] == ["m1", "m2"]
    assert store.memory_scope_ids({"user_id": "u1"}, False, 5) == ["m1"]
    assert sorted(store.memory_scope_ids({}, True, 3)) == ["m1", "m2", "m3"]
    assert store.memory_scope_ids({}, True, 2) is None  # more than the limit
    assert store.memories_in_scope(["m1", "m2", "m3", "zzz"], {"user_id": "u1"}, False) == {"m1"}
    assert store.memories_in_scope(["m1", "m2"], {"user_id": "u1"}, True) == {"m1", "m2"}
    with store.transaction():
        store.set_memories_archived(["m2"], False, T2)
        store.set_memories_archived([], True, T2)
    assert store.memory_scope_ids({"user_id": "u1"}, False, 5) is not None
    assert sorted(store.memory_scope_ids({"user_id": "u1"}, False, 5)) == ["m1", "m2"]


@contract("memory_vectors", "memories_to_embed")
def test_memory_vectors_of_a_scope(store) -> None:
    r1, r2, r3 = mem(store, "m1", "one"), mem(store, "m2", "two"), mem(store, "m3", "three")
    with store.transaction():
        store.upsert_vectors("memory", "m", 2, [("m1", "h", V), ("m2", "h", V)])
        store.upsert_vectors("memory", "other", 2, [("m3", "h", V)])
        store.set_memories_archived(["m2"], True, T1)
    rows = store.memory_vectors({"user_id": "u1"}, "m", 10)
    assert sorted(rows) == [(r1, "m1", V), (r2, "m2", None), (r3, "m3", None)]  # archived / other model: None
    assert store.memory_vectors({"user_id": "u1"}, "m", 10, after_rowid=r2) == [(r3, "m3", None)]
    assert store.memory_vectors({"user_id": "u1"}, "m", 2) is None
    assert store.memory_vectors({"user_id": "nobody"}, "m", 2) == []
    todo = store.memories_to_embed()
    assert [(r.item_id, r.text) for r in todo] == [("m1", "one"), ("m2", "two"), ("m3", "three")]
    assert store.memories_to_embed(after_rowid=todo[0].rowid, limit=1) == todo[1:2]


@contract("update_memory_text", "add_memory_version", "memory_versions", "delete_memory")
def test_update_history_and_delete(store) -> None:
    mem(store, "m1", "old text", metadata={"a": 1})
    mem(store, "m2", "neighbour")
    gen = store.memory_scope_state("u1|None").generation
    with store.transaction():
        store.update_memory_text("m1", "new text", {"b": 2}, T1)
        store.add_memory_version("m1", 1, "UPDATE", "old text", "new text", T1)
        store.add_memory_version("m1", 2, "NOTE", None, None, T2)
        store.update_memory_text("zzz", "x", {}, T1)
    m1 = store.get_memories(["m1"])["m1"]
    assert (m1["text"], m1["metadata"], m1["version"], m1["updated_at"], m1["used_at"]) == (
        "new text", {"b": 2}, 2, T1, T1)
    assert store.memory_scope_state("u1|None").generation > gen
    assert store.memory_versions("m1") == [
        {"memory_id": "m1", "version": 1, "event": "UPDATE", "old_text": "old text", "new_text": "new text", "ts": T1},
        {"memory_id": "m1", "version": 2, "event": "NOTE", "old_text": None, "new_text": None, "ts": T2}]
    assert store.memory_versions("zzz") == []
    with store.transaction():
        store.insert_memory_edges([("e1", "m1", "m2", "RELATED", 0.5, T0)])
        store.upsert_vectors("memory", "m", 2, [("m1", "h", V)])
        assert store.delete_memory("m1") == 1
        assert store.delete_memory("zzz") == 0
    assert store.get_memories(["m1"]) == {} and store.get_nodes(["m1"]) == {}
    assert store.get_edges(["e1"]) == {} and store.vectors_for("memory", ["m1"], "m") == {}
    assert [v["version"] for v in store.memory_versions("m1")] == [1, 2]  # the history outlives the memory
    with store.transaction():
        store.add_memory_version("m1", 3, "DELETE", "new text", None, T2)
    assert store.memory_versions("m1")[-1]["event"] == "DELETE"


@contract("memory_session", "set_memory_session")
def test_sessions_remember_their_last_memory(store) -> None:
    mem(store, "m1", "one")
    mem(store, "m2", "two")
    assert store.memory_session("s") is None
    with store.transaction():
        store.set_memory_session("s", "m1", T0)
        store.set_memory_session("s", "m2", T1)
    last = store.memory_session("s")
    assert last == ("m2", T1) and (last.memory_id, last.said_at) == ("m2", T1)
    with store.transaction():
        store.delete_memory("m2")
    assert store.memory_session("s") == ("m2", T1)  # not checked: callers verify the memory still exists


@contract("add_memory_docrefs", "memories_with_docrefs")
def test_document_references(store) -> None:
    for i in (1, 2, 3):
        mem(store, f"m{i}", f"text {i}")
    with store.transaction():
        store.add_memory_docrefs("k", "m1", ["doc:a", "doc:a", "url:x"])
        store.add_memory_docrefs("k", "m2", ["doc:a"])
        store.add_memory_docrefs("k", "m3", ["url:x"])
        store.add_memory_docrefs("other", "m3", ["doc:a"])
    assert store.memories_with_docrefs("k", ["doc:a", "url:x"], "m1", 10) == ["m3", "m2"]  # newest first
    assert store.memories_with_docrefs("k", ["doc:a"], "zzz", 1) == ["m2"]
    assert store.memories_with_docrefs("k", [], "m1", 10) == []
    assert store.memories_with_docrefs("nobody", ["doc:a"], "m1", 10) == []


@contract("add_memory_mentions", "memory_mentions", "memories_mentioning")
def test_entities_a_memory_names(store) -> None:
    node(store, "ada", "Ada")
    node(store, "bob", "Bob")
    mem(store, "m1", "Ada and Bob")
    mem(store, "m2", "Ada again")
    mem(store, "m3", "Ada, other user", user_id="u2")
    with store.transaction():
        assert store.add_memory_mentions("m1", ["ada", "bob"]) == 2
        assert store.add_memory_mentions("m1", ["ada"]) == 0
        store.add_memory_mentions("m2", ["ada"])
        store.add_memory_mentions("m3", ["ada"])
    assert {k: sorted(v) for k, v in store.memory_mentions(["m1", "m2", "zzz"]).items()} == {
        "m1": ["ada", "bob"], "m2": ["ada"]}
    assert store.memories_mentioning(["ada"], {"user_id": "u1"}, False, 10) == ["m2", "m1"]
    assert store.memories_mentioning(["bob", "zzz"], {}, False, 10) == ["m1"]
    assert store.memories_mentioning(["ada"], {}, False, 1) == ["m3"]
    assert store.memories_mentioning([], {}, False, 10) == []
    assert store.edges_of(["ada"]) == []  # entity walks never step onto memories


@contract("search_memories_fts", "memory_bm25")
def test_memory_full_text_is_scoped(store) -> None:
    mem(store, "m1", "the red kayak is in the shed", agent_id="bot")
    mem(store, "m2", "a red bicycle")
    mem(store, "m3", "red kayak of another user", user_id="u2")
    hits = store.search_memories_fts("red kayak", {"user_id": "u1"}, False, 10)
    assert [h.id for h in hits] == ["m1", "m2"] and hits[0].score > hits[1].score > 0
    assert [h.id for h in store.search_memories_fts("kayak", {"agent_id": "bot"}, False, 10)] == ["m1"]
    assert len(store.search_memories_fts("red", {}, False, 2)) == 2
    assert store.search_memories_fts("red", {}, False, 0) == [] and store.search_memories_fts("?!", {}, False, 5) == []
    assert [h.id for h in store.search_memories_fts('kayak" NEAR(* text:', {"user_id": "u2"}, False, 5)] == ["m3"]
    with store.transaction():
        store.set_memories_archived(["m1"], True, T1)
    assert [h.id for h in store.search_memories_fts("kayak", {"user_id": "u1"}, False, 5)] == []
    assert [h.id for h in store.search_memories_fts("kayak", {"user_id": "u1"}, True, 5)] == ["m1"]
    scores = store.memory_bm25("red kayak", ["m1", "m2", "zzz"])
    assert set(scores) == {"m1", "m2"} and scores["m1"] > scores["m2"] > 0
    assert store.memory_bm25("red", []) == {} and store.memory_bm25("?!", ["m1"]) == {}


@contract("insert_memory_edges", "memory_neighbours", "memory_edges_among", "memories_with_edges",
          "delete_memory_edges")
def test_memory_edges(store) -> None:
    for i in (1, 2, 3, 4):
        mem(store, f"m{i}", f"text {i}")
    mem(store, "x1", "other scope", user_id="u2")
    with store.transaction():
        n = store.insert_memory_edges([("e12", "m1", "m2", "REPLY_TO", 0.9, T0), ("e13", "m1", "m3", "TOPIC", 0.4, T0),
                                       ("e32", "m3", "m2", "TOPIC", 0.6, T0)])
        again = store.insert_memory_edges([("dup", "m1", "m2", "REPLY_TO", 0.1, T1)])
    assert (n, again) == (3, 0)
    e12 = store.get_edges(["e12"])["e12"]
    assert (e12.confidence, e12.manual, e12.properties["w0"]) == (0.9, True, 0.9)
    nb = store.memory_neighbours(["m1", "m2", "m4"], 0.5)
    assert nb == {"m1": [("m2", 0.9, "REPLY_TO")], "m2": [("m1", 0.9, "REPLY_TO"), ("m3", 0.6, "TOPIC")], "m4": []}
    assert nb["m1"][0].other == "m2"
    assert store.memory_neighbours(["m1"], 0.0, per_node=1) == {"m1": [("m2", 0.9, "REPLY_TO")]}
    assert store.memory_edges_among(["m1", "m2", "m3"]) == [
        ("m1", "m2", "REPLY_TO", 0.9), ("m3", "m2", "TOPIC", 0.6), ("m1", "m3", "TOPIC", 0.4)]
    assert store.memory_edges_among(["m1", "m2", "m3"], min_weight=0.5)[-1].weight == 0.6
    assert store.memory_edges_among([]) == []
    assert store.memories_with_edges(["m1", "m4", "zzz"]) == {"m1"}
    assert store.memories_with_edges(["m1", "m2", "m3"], ignore_types=["TOPIC"]) == {"m1", "m2"}
    assert store.memories_with_edges(["m3"], ignore_types=["TOPIC", "REPLY_TO"]) == set()
    with store.transaction():
        assert store.delete_memory_edges({"user_id": "u1"}, keep_types=["REPLY_TO"]) == 2
    assert store.get_edges(["e12", "e13", "e32"]).keys() == {"e12"}
    with store.transaction():
        assert store.delete_memory_edges({}) == 1
    assert store.memories_with_edges(["m1", "m2"]) == set()


@contract("memory_edge_decay_rows", "memory_decay_rows", "set_memory_relevance", "set_memory_quality",
          "record_memory_use")
def test_decay_inputs_and_relevance_state(store) -> None:
    mem(store, "m1", "one")
    mem(store, "m2", "two")
    with store.transaction():
        store.insert_memory_edges([("e", "m1", "m2", "TOPIC", 0.8, T0)])
        store.set_edge_weights([(0.5, "e")], T1)
    assert store.memory_edge_decay_rows() == [("e", "TOPIC", 0.5, 0.8, T0, T0, T0)]
    assert store.memory_edge_decay_rows()[0].base_weight == 0.8
    rows = sorted(store.memory_decay_rows())
    assert rows[0] == ("m1", T0, rows[0].quality, rows[0].floor, 1.0) and rows[0].memory_id == "m1"
    gen = store.memory_scope_state("u1|None").generation
    with store.transaction():
        store.set_memory_relevance([(0.25, "m1"), (0.5, "zzz")])
        store.set_memory_quality("m2", 0.9, 0.2, 0.7, T1, True)
        store.record_memory_use(["m1", "m1", "zzz"], T2)
    m1, m2 = (store.get_memories(["m1", "m2"])[i] for i in ("m1", "m2"))
    assert (m1["relevance"], m1["uses"], m1["used_at"]) == (0.25, 2, T2)
    assert (m2["quality"], m2["floor"], m2["relevance"], m2["used_at"], m2["archived"]) == (0.9, 0.2, 0.7, T1, True)
    assert store.memory_scope_state("u1|None").generation > gen
    assert [r.memory_id for r in store.memory_decay_rows()] == ["m1"]  # archived ones are left out


@contract("memory_rank_inputs")
def test_rank_inputs_are_get_memories_columns(store) -> None:
    mem(store, "m1", "one")
    mem(store, "m2", "two", user_id="u2")
    with store.transaction():
        store.set_memory_quality("m2", 0.9, 0.2, 0.7, T1, True)
        store.record_memory_use(["m1", "m1", "m2"], T2)
        store.add_memory_feedback("m1", "q", True, T2)
        store.add_memory_feedback("m2", "q", False, T2)
    got = store.memory_rank_inputs(["m1", "m2", "zzz"])
    full = store.get_memories(["m1", "m2"])
    assert set(got) == {"m1", "m2"}
    for mid, r in got.items():
        assert r._asdict() == {k: full[mid][k] for k in ("uses", "helpful", "unhelpful", "quality", "floor",
                                                          "used_at")}
    assert (got["m1"].uses, got["m1"].helpful, got["m2"].unhelpful, got["m2"].quality) == (2, 1, 1, 0.9)
    assert store.memory_rank_inputs([]) == {}


def test_record_memory_use_of_many_memories_counts_each(store) -> None:
    ids = [f"m{i}" for i in range(620)]  # more than one IN list of the SQLite backend
    with store.transaction():
        for i in ids:
            store.insert_memory({"id": i, "text": i, "scope_key": "k", "said_at": T0, "created_at": T0})
        store.record_memory_use(ids + ids[:3], T2)
    rows = store.get_memories(ids)
    assert sorted({(r["uses"], r["used_at"]) for r in rows.values()}) == [(1, T2), (2, T2)]
    assert sorted(i for i, r in rows.items() if r["uses"] == 2) == ["m0", "m1", "m2"]


@contract("add_memory_feedback", "memory_feedback")
def test_feedback(store) -> None:
    mem(store, "m1", "one")
    with store.transaction():
        store.add_memory_feedback("m1", "q1", True, T0)
        store.add_memory_feedback("m1", "q2", False, T1)
        store.add_memory_feedback("m1", "q3", True, T2)
    assert store.memory_feedback(["m1", "zzz"]) == {"m1": [("q3", True), ("q2", False), ("q1", True)]}
    assert store.memory_feedback(["m1"], limit_per=1)["m1"][0].query == "q3"
    m1 = store.get_memories(["m1"])["m1"]
    assert (m1["helpful"], m1["unhelpful"]) == (2, 1)
    with pytest.raises(BackendError), store.transaction():
        store.add_memory_feedback("zzz", "q", True, T0)


@contract("memory_llm_budget", "set_memory_llm_budget")
def test_llm_budget(store) -> None:
    assert store.memory_llm_budget("k") is None
    with store.transaction():
        store.set_memory_llm_budget("k", "2026-01-01", 100, None)
        store.set_memory_llm_budget("k", "2026-01-02", 5, T1)
    budget = store.memory_llm_budget("k")
    assert budget == ("2026-01-02", 5, T1) and budget.tokens == 5


@contract("memory_stats")
def test_memory_stats_of_a_scope(store) -> None:
    node(store, "ada", "Ada")
    for i in (1, 2, 3):
        mem(store, f"m{i}", f"text {i}")
    mem(store, "x", "other", user_id="u2")
    with store.transaction():
        store.insert_memory_edges([("a", "m1", "m2", "TOPIC", 0.5, T0), ("b", "m2", "m3", "REPLY_TO", 0.5, T0)])
        store.set_memories_archived(["m3"], True, T1)
        store.add_memory_mentions("m1", ["ada"])
    assert store.memory_stats({"user_id": "u1"}) == {
        "memories": 2, "archived": 1, "edges": 2, "edge_types": {"REPLY_TO": 1, "TOPIC": 1}, "mentions": 1}
    assert store.memory_stats({"user_id": "nobody"}) == {
        "memories": 0, "archived": 0, "edges": 0, "edge_types": {}, "mentions": 0}


@contract("add_memory_mentions", "add_memory_docrefs", "insert_memory_edges", "set_memories_archived",
          "set_memory_quality")
def test_writes_naming_a_missing_memory(store) -> None:
    node(store, "ada", "Ada")
    mem(store, "m1", "one")
    for write in (lambda: store.add_memory_mentions("zzz", ["ada"]),
                  lambda: store.add_memory_mentions("m1", ["no-entity"]),
                  lambda: store.add_memory_docrefs("k", "zzz", ["doc:a"]),
                  lambda: store.insert_memory_edges([("e", "m1", "zzz", "TOPIC", 0.5, T0)])):
        with pytest.raises(BackendError), store.transaction():
            store.set_memory_llm_budget("marker", "d", 1, None)
            write()
        assert store.memory_llm_budget("marker") is None  # nothing of the transaction was written
    with store.transaction():  # updates of a missing memory change nothing
        store.set_memories_archived(["zzz"], True, T1)
        store.set_memory_quality("zzz", 0.1, 0.1, 0.1, T1, True)
    assert list(store.get_memories(["m1", "zzz"])) == ["m1"] and store.memory_mentions(["m1"]) == {}


@contract("memory_session_neighbours")
def test_session_neighbours_by_said_at(store) -> None:
    mem(store, "a", "one", run_id="r1", said_at=T0)
    mem(store, "c", "three", run_id="r1", said_at=T2)
    mem(store, "b", "two", run_id="r1", said_at=T1)
    mem(store, "b2", "two again", run_id="r1", said_at=T1)  # same time: the one stored last is "before"
    mem(store, "x", "other run", run_id="r2", said_at=T1)
    mem(store, "n", "no run", said_at=T1)
    mem(store, "c~v1", "an old version", run_id="r1", said_at=T1)
    between = "2026-01-02T12:00:00.000Z"
    assert store.memory_session_neighbours("u1|None", "r1", between, "zzz") == (("b2", T1), ("c", T2))
    assert store.memory_session_neighbours("u1|None", "r1", T1, "b2") == (("b", T1), ("c", T2))
    assert store.memory_session_neighbours("u1|None", "r1", "2025-01-01T00:00:00.000Z", "zzz") == (None, ("a", T0))
    assert store.memory_session_neighbours("u1|None", "r1", "2027-01-01T00:00:00.000Z", "zzz") == (("c", T2), None)
    assert store.memory_session_neighbours("u1|None", None, between, "zzz") == (("n", T1), None)
    assert store.memory_session_neighbours("u2|None", "r1", between, "zzz") == (None, None)


@contract("delete_memory_edges_by_id")
def test_memory_edges_deleted_by_id(store) -> None:
    for i in (1, 2, 3):
        mem(store, f"m{i}", f"text {i}")
    with store.transaction():
        store.insert_memory_edges([("e12", "m1", "m2", "REPLY_TO", 0.9, T0), ("e23", "m2", "m3", "REPLY_TO", 0.9, T0)])
        assert store.delete_memory_edges_by_id(["e12", "e12", "nope"]) == 1
        assert store.delete_memory_edges_by_id([]) == 0
    assert [(e[0], e[1]) for e in store.memory_edges_among(["m1", "m2", "m3"])] == [("m2", "m3")]
