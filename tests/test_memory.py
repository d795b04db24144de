"""kb.memory: add/get/get_all/update/delete/history, edges made on add, bad input, reindex."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import backend_kb
import graphmem
from conftest import snapshot
from graphmem.errors import InvalidInput, NotFound

# The knowledge base of these tests, on SQLite and on PostgreSQL (tests/backend_kb.py).
kb, backend_url = backend_kb.kb, backend_kb.backend_url

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def edges_of(kb: graphmem.KnowledgeBase, **scope: Any) -> set[tuple[str, str, str]]:
    ids = [m["id"] for m in kb.memory.get_all(include_archived=True, limit=10000, **scope)["results"]]
    return {(s, d, t) for s, d, t, _ in kb.store.memory_edges_among(ids)}


def test_add_get_get_all_and_events(kb: graphmem.KnowledgeBase) -> None:
    out = kb.memory.add("I love pizza", user_id="u1", run_id="r1", metadata={"dia_id": "D1:1"},
                        timestamp="2024-05-01T12:00:00Z")
    (r,) = out["results"]
    assert r["event"] == "ADD" and r["memory"] == "I love pizza"
    got = kb.memory.get(r["id"])
    assert got["memory"] == "I love pizza" and got["user_id"] == "u1" and got["run_id"] == "r1"
    assert got["metadata"] == {"dia_id": "D1:1"} and got["timestamp"] == "2024-05-01T12:00:00.000Z"
    assert [m["id"] for m in kb.memory.get_all(user_id="u1")["results"]] == [r["id"]]
    assert kb.memory.get_all(filters={"user_id": "u2"})["results"] == []
    assert [e.type for e in kb.events.list(types=["memory.added"])] == ["memory.added"]
    node = kb.store.get_nodes([r["id"]])[r["id"]]
    assert node.kind == "memory" and node.manual  # never pruned as "unsupported"


def test_messages_store_one_memory_each_in_order(kb: graphmem.KnowledgeBase) -> None:
    out = kb.memory.add([{"role": "user", "content": "I moved to Lisbon"},
                         {"role": "assistant", "content": "How do you like Lisbon?"}], user_id="u1", run_id="r1")
    a, b = (r["id"] for r in out["results"])
    assert kb.memory.get(a)["role"] == "user" and kb.memory.get(b)["role"] == "assistant"
    assert (b, a, "REPLY_TO") in edges_of(kb, user_id="u1")
    assert (a, b, "TEMPORAL_NEXT") in edges_of(kb, user_id="u1")


def test_reply_window_uses_the_said_timestamp(kb: graphmem.KnowledgeBase) -> None:
    a = kb.memory.add("first", user_id="u1", run_id="r1", timestamp=T0)["results"][0]["id"]
    b = kb.memory.add("second", user_id="u1", run_id="r1", timestamp=T0 + timedelta(hours=2))["results"][0]["id"]
    c = kb.memory.add("third", user_id="u1", run_id="r1", timestamp=T0 + timedelta(hours=2, minutes=5))
    c = c["results"][0]["id"]
    e = edges_of(kb, user_id="u1")
    assert (b, a, "REPLY_TO") not in e and (a, b, "TEMPORAL_NEXT") in e  # 2 h > 1,800 s window
    assert (c, b, "REPLY_TO") in e and (b, c, "TEMPORAL_NEXT") in e


def test_sessions_are_runs_and_pointers_survive_a_restart(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb") as kb:
        a = kb.memory.add("one", user_id="u1", run_id="r1")["results"][0]["id"]
        kb.memory.add("other run", user_id="u1", run_id="r2")
    with graphmem.open(tmp_path / "kb") as kb:
        b = kb.memory.add("two", user_id="u1", run_id="r1")["results"][0]["id"]
        e = edges_of(kb, user_id="u1")
        assert (b, a, "REPLY_TO") in e and (a, b, "TEMPORAL_NEXT") in e
        assert len(e) == 2  # nothing to the other run


def test_document_links_from_metadata_and_urls(kb: graphmem.KnowledgeBase) -> None:
    a = kb.memory.add("the spec says X", user_id="u1", run_id="r1", metadata={"doc_id": "spec-7"})["results"][0]["id"]
    b = kb.memory.add("and Y", user_id="u1", run_id="r2", metadata={"document_id": "spec-7"})["results"][0]["id"]
    c = kb.memory.add("see https://example.org/a.", user_id="u1", run_id="r3")["results"][0]["id"]
    d = kb.memory.add("read https://example.org/a too", user_id="u1", run_id="r4")["results"][0]["id"]
    kb.memory.add("other user", user_id="u2", run_id="r1", metadata={"doc_id": "spec-7"})
    e = edges_of(kb, user_id="u1")
    assert (b, a, "DOCUMENT_LINK") in e and (d, c, "DOCUMENT_LINK") in e
    assert not edges_of(kb, user_id="u2")


def test_edge_switches_in_config(tmp_path: Path) -> None:
    cfg = {"memory": {"context_graph": {"edges": {"enable_reply_to": False, "enable_document_link": False}}}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        kb.memory.add("one", user_id="u1", run_id="r1", metadata={"doc_id": "d"})
        kb.memory.add("two", user_id="u1", run_id="r1", metadata={"doc_id": "d"})
        assert {t for _, _, t in edges_of(kb, user_id="u1")} == {"TEMPORAL_NEXT"}


def test_topic_similar_edges_with_embeddings(tmp_path: Path, model_dir: Path) -> None:
    cfg = {"embeddings": {"model": f"model2vec:{model_dir}"}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        a = kb.memory.add("My favourite sport is tennis", user_id="u1", run_id="r1")["results"][0]["id"]
        kb.memory.add("The invoice is due on Friday", user_id="u1", run_id="r2")
        c = kb.memory.add("Tennis is my favourite sport", user_id="u1", run_id="r3")["results"][0]["id"]
        kb.memory.add("Tennis is my favourite sport", user_id="u2", run_id="r3")
        topic = [(s, d) for s, d, t in edges_of(kb, user_id="u1") if t == "TOPIC_SIMILAR"]
        assert topic == [(c, a)]
        w = [w for s, d, t, w in kb.store.memory_edges_among([a, c]) if t == "TOPIC_SIMILAR"][0]
        assert 0.75 <= w <= 1.0  # the weight is the cosine


def test_update_keeps_history_and_an_updated_from_edge(kb: graphmem.KnowledgeBase) -> None:
    mid = kb.memory.add("I live in Paris", user_id="u1")["results"][0]["id"]
    out = kb.memory.update(mid, "I live in Berlin")
    old = out["previous_version"]
    assert kb.memory.get(mid)["memory"] == "I live in Berlin" and kb.memory.get(mid)["version"] == 2
    assert kb.memory.get(old)["memory"] == "I live in Paris" and kb.memory.get(old)["archived"]
    assert (mid, old, "UPDATED_FROM") in edges_of(kb, user_id="u1")
    hist = kb.memory.history(mid)
    assert [h["event"] for h in hist] == ["ADD", "UPDATE"]
    assert hist[1]["old_text"] == "I live in Paris" and hist[1]["new_text"] == "I live in Berlin"
    assert [r["id"] for r in kb.memory.search("Paris", user_id="u1")["results"]] == []
    found = kb.memory.search("Paris", user_id="u1", include_archived=True)
    assert [r["id"] for r in found["results"]] == [old, mid]  # the current version comes along the edge
    assert found["results"][1]["context_graph"]["was_seed"] is False
    assert found["subgraph"] == [{"src": mid, "dst": old, "type": "UPDATED_FROM", "weight": 1.0}]
    assert [r["id"] for r in kb.memory.search("Berlin", user_id="u1")["results"]] == [mid]


def test_delete_keeps_history_and_the_session_goes_on(kb: graphmem.KnowledgeBase) -> None:
    a = kb.memory.add("one", user_id="u1", run_id="r1")["results"][0]["id"]
    b = kb.memory.add("two", user_id="u1", run_id="r1")["results"][0]["id"]
    kb.memory.update(b, "two, corrected")
    assert kb.memory.delete(b)["edges"] == 3  # REPLY_TO, TEMPORAL_NEXT, UPDATED_FROM
    with pytest.raises(NotFound, match=b):
        kb.memory.get(b)
    assert [h["event"] for h in kb.memory.history(b)] == ["ADD", "UPDATE", "DELETE"]
    assert kb.memory.get_all(user_id="u1", include_archived=True)["results"][0]["id"] == a
    c = kb.memory.add("three", user_id="u1", run_id="r1")["results"][0]["id"]  # pointer was the deleted one
    assert kb.memory.get(c)["memory"] == "three"
    # the session goes on from the memory said before the deleted one (it used to start over, unlinked)
    assert {(s, d, t) for s, d, t in edges_of(kb, user_id="u1")} == {(a, c, "TEMPORAL_NEXT"), (c, a, "REPLY_TO")}


@pytest.mark.parametrize("call", [
    lambda m: m.add("", user_id="u1"),
    lambda m: m.add("   ", user_id="u1"),
    lambda m: m.add([], user_id="u1"),
    lambda m: m.add([{"role": "user", "content": "ok"}, {"role": "user", "content": ""}], user_id="u1"),
    lambda m: m.add("no scope"),
    lambda m: m.add("x", user_id=""),
    lambda m: m.add("x", user_id="u1", metadata={"when": datetime.now()}),
    lambda m: m.add("x", user_id="u1", metadata={"s": {1, 2}}),
    lambda m: m.add("x", user_id="u1", metadata={"f": float("nan")}),
    lambda m: m.add("x", user_id="u1", timestamp="yesterday"),
    lambda m: m.search("q"),
    lambda m: m.search("", user_id="u1"),
    lambda m: m.search("q", user_id="u1", limit=0),
    lambda m: m.search("q", user_id="u1", strategy="dfs"),
    lambda m: m.get_all(),
    lambda m: m.get_all(filters={"colour": "red"}),
    lambda m: m.get_all(filters=["user_id"]),
    lambda m: m.update("mem_nope", "x"),
    lambda m: m.delete("mem_nope"),
    lambda m: m.get("mem_nope"),
    lambda m: m.mark_relevant("mem_nope"),
    lambda m: m.feedback("mem_nope", "q", True),
    lambda m: m.history("mem_nope"),
])
def test_bad_input_is_a_clear_error_and_stores_nothing(kb: graphmem.KnowledgeBase, call: Any) -> None:
    kb.memory.add("existing", user_id="u1")
    before = snapshot(kb)
    with pytest.raises((InvalidInput, NotFound)) as info:
        call(kb.memory)
    assert str(info.value)
    assert snapshot(kb) == before


def test_error_messages_name_the_field(kb: graphmem.KnowledgeBase) -> None:
    with pytest.raises(InvalidInput, match=r"metadata\['when'\].*not JSON-serialisable"):
        kb.memory.add("x", user_id="u1", metadata={"when": object()})
    with pytest.raises(InvalidInput, match="user_id, agent_id, run_id"):
        kb.memory.add("x")
    with pytest.raises(InvalidInput, match=r"messages\[1\].content"):
        kb.memory.add([{"content": "a"}, {"content": " "}], user_id="u1")
    with pytest.raises(NotFound, match="mem_nope"):
        kb.memory.update("mem_nope", "x")


def test_unscoped_memories_when_the_config_allows(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config={"memory": {"require_scope": False}}) as kb:
        mid = kb.memory.add("free floating")["results"][0]["id"]
        assert [r["id"] for r in kb.memory.search("floating")["results"]] == [mid]


def test_bad_config_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="algorithm"):
        graphmem.open(tmp_path / "a", config={"memory": {"context_graph": {"retrieval": {"algorithm": "dfs"}}}})
    with pytest.raises(InvalidInput, match="unknown config key 'memory.context_graph.edges.colour'"):
        graphmem.open(tmp_path / "b", config={"memory": {"context_graph": {"edges": {"colour": 1}}}})


def test_config_file_carries_contextkit_names(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    graphmem.open(home).close()
    with (home / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[memory.context_graph.retrieval]\nseed_top_k = 7\nalgorithm = \"ppr\"\n"
                 "[memory.context_graph.edges.llm]\ndaily_token_budget = 99\n")
    with graphmem.open(home) as kb:
        cg = kb.config["memory"]["context_graph"]
        assert cg["retrieval"]["seed_top_k"] == 7 and cg["retrieval"]["algorithm"] == "ppr"
        assert cg["edges"]["llm"]["daily_token_budget"] == 99 and cg["edges"]["topic_top_k"] == 5


def test_reindex_re_embeds_memories(tmp_path: Path, model_dir: Path) -> None:
    cfg = {"embeddings": {"model": f"model2vec:{model_dir}"}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        kb.memory.add(["alpha", "beta"], user_id="u1")
        out = kb.reindex()
        assert out["memory"] == 2
        assert len(kb.store.vectors_for("memory", [m["id"] for m in kb.memory.get_all(user_id="u1")["results"]],
                                        kb.embeddings.stored_model())) == 2


def test_backfill_links_old_memories_idempotently_and_reset_removes_links(tmp_path: Path) -> None:
    off = {"memory": {"context_graph": {"edges": {"enable_reply_to": False, "enable_temporal_next": False,
                                                  "enable_document_link": False}}}}
    with graphmem.open(tmp_path / "kb", config=off) as kb:
        kb.memory.add("b said later", user_id="u1", run_id="r1", timestamp=T0 + timedelta(minutes=1))
        kb.memory.add("a said first", user_id="u1", run_id="r1", timestamp=T0, metadata={"doc_id": "d"})
        kb.memory.add("c", user_id="u1", run_id="r1", timestamp=T0 + timedelta(minutes=2), metadata={"doc_id": "d"})
        kb.memory.add("other user", user_id="u2", run_id="r1", timestamp=T0)
        assert kb.memory.stats()["edges"] == 0
    with graphmem.open(tmp_path / "kb") as kb:
        ids = {m["memory"]: m["id"] for m in kb.memory.get_all(user_id="u1")["results"]}
        out = kb.memory.backfill_context_graph(user_id="u1", batch_size=2)
        assert out["nodes"] == 3 and out["edges"] == 5
        e = edges_of(kb, user_id="u1")
        a, b, c = ids["a said first"], ids["b said later"], ids["c"]
        assert {(b, a, "REPLY_TO"), (a, b, "TEMPORAL_NEXT"), (c, b, "REPLY_TO"), (b, c, "TEMPORAL_NEXT"),
                (c, a, "DOCUMENT_LINK")} == e
        assert kb.memory.backfill_context_graph(user_id="u1") == {"nodes": 3, "edges": 0}
        assert kb.memory.stats(user_id="u2")["edges"] == 0
        kb.memory.update(a, "a, corrected")
        assert (a, c, "DOCUMENT_LINK") in edges_of(kb, user_id="u1")  # update re-links the new text
        assert kb.memory.reset_context_graph(user_id="u1") == {"edges": 6}
        assert {t for _, _, t in edges_of(kb, user_id="u1")} == {"UPDATED_FROM"}
        d = kb.memory.add("d", user_id="u1", run_id="r1", timestamp=T0 + timedelta(minutes=3))["results"][0]["id"]
        assert (d, c, "REPLY_TO") in edges_of(kb, user_id="u1")  # backfill moved the session pointer to c


def test_stats_and_history_json_shapes(kb: graphmem.KnowledgeBase) -> None:
    kb.memory.add(["a", "b"], user_id="u1", run_id="r1")
    s = kb.memory.stats(user_id="u1")
    assert s["memories"] == 2 and s["edge_types"] == {"REPLY_TO": 1, "TEMPORAL_NEXT": 1}
    json.dumps(s)


def test_topic_links_follow_other_handles_updates_and_deletions(tmp_path: Path, model_dir: Path) -> None:
    cfg = {"embeddings": {"model": f"model2vec:{model_dir}"}}
    with graphmem.open(tmp_path / "kb", config=cfg) as one, graphmem.open(tmp_path / "kb", config=cfg) as two:
        a = one.memory.add("My favourite sport is tennis", user_id="u1", run_id="r1")["results"][0]["id"]
        b = two.memory.add("Tennis is my favourite sport", user_id="u1", run_id="r2")["results"][0]["id"]
        c = one.memory.add("Tennis really is my favourite sport", user_id="u1", run_id="r3")["results"][0]["id"]
        topic = {(s, d) for s, d, t in edges_of(one, user_id="u1") if t == "TOPIC_SIMILAR"}
        assert {(b, a), (c, a), (c, b)} <= topic  # each handle saw the other's memories
        two.memory.delete(a)
        one.memory.update(b, "The invoice is due on Friday")
        d = one.memory.add("Tennis is definitely my favourite sport", user_id="u1", run_id="r4")["results"][0]["id"]
        topic = {(s, d_) for s, d_, t in edges_of(one, user_id="u1") if t == "TOPIC_SIMILAR"}
        assert (d, c) in topic and (d, b) not in topic and not any(a in pair for pair in topic)


def _session_edges(kb, ids):
    names = {v: k for k, v in ids.items()}
    return sorted((names[e["src"]], e["type"], names[e["dst"]]) for e in kb.memory.edges_among(list(ids.values()))
                  if e["type"] in ("REPLY_TO", "TEMPORAL_NEXT"))


def test_a_memory_said_out_of_order_joins_the_chain_where_it_belongs(kb):
    """Imported in the order A 10:00, C 10:20, B 10:10, the session linked A->C and B->C: A->B was missing and
    B had no REPLY_TO. B now sits between A and C, and the A-C edges it replaces are gone."""
    ids = {}
    for name, at in (("A", "10:00"), ("C", "10:20"), ("B", "10:10")):
        ids[name] = kb.memory.add(f"turn {name}", user_id="u1", run_id="r1",
                                  timestamp=f"2026-03-01T{at}:00Z")["results"][0]["id"]
    assert _session_edges(kb, ids) == [("A", "TEMPORAL_NEXT", "B"), ("B", "REPLY_TO", "A"),
                                       ("B", "TEMPORAL_NEXT", "C"), ("C", "REPLY_TO", "B")]


def test_one_memory_dated_in_the_future_does_not_break_the_rest_of_the_session(kb):
    """After one memory dated 3024, every later turn linked only to it: no B -> C -> D chain."""
    ids = {"X": kb.memory.add("turn X", user_id="u1", run_id="r1", timestamp="2026-03-01T09:00:00Z")}
    ids["F"] = kb.memory.add("turn F", user_id="u1", run_id="r1", timestamp="3024-01-01T00:00:00Z")
    for name, at in (("B", "09:01"), ("C", "09:02"), ("D", "09:03")):
        ids[name] = kb.memory.add(f"turn {name}", user_id="u1", run_id="r1", timestamp=f"2026-03-01T{at}:00Z")
    ids = {k: v["results"][0]["id"] for k, v in ids.items()}
    tn = [e for e in _session_edges(kb, ids) if e[1] == "TEMPORAL_NEXT"]
    assert tn == [("B", "TEMPORAL_NEXT", "C"), ("C", "TEMPORAL_NEXT", "D"), ("D", "TEMPORAL_NEXT", "F"),
                  ("X", "TEMPORAL_NEXT", "B")]
    # and the next turn said now still follows D, not F
    e = kb.memory.add("turn E", user_id="u1", run_id="r1", timestamp="2026-03-01T09:04:00Z")
    ids["E"] = e["results"][0]["id"]
    assert ("D", "TEMPORAL_NEXT", "E") in _session_edges(kb, ids)


def test_get_all_reads_a_long_scope_page_by_page(kb):
    """get_all had no offset (the store has one) and stopped at 10,000: a bigger scope could not be listed."""
    ids = [kb.memory.add(f"note {i}", user_id="u1", timestamp=f"2026-03-01T10:{i:02d}:00Z")["results"][0]["id"]
           for i in range(7)]
    pages = [[m["id"] for m in kb.memory.get_all(user_id="u1", limit=3, offset=o)["results"]] for o in (0, 3, 6, 9)]
    assert pages == [ids[:3], ids[3:6], ids[6:], []]
    with pytest.raises(graphmem.InvalidInput, match="offset"):
        kb.memory.get_all(user_id="u1", offset=-1)


@pytest.mark.parametrize("text", ["\u200b", "\ufeff", "\u200b\u200d \u2060", "\u3000"])
def test_a_memory_of_invisible_characters_only_is_refused(kb, text):
    """'   ' and '\\u3000' were refused, a zero-width space or a BOM alone stored as a memory."""
    with pytest.raises(graphmem.InvalidInput, match="empty"):
        kb.memory.add(text, user_id="u1")
    assert kb.memory.get_all(user_id="u1")["results"] == []


def test_updating_a_memory_to_the_same_text_changes_nothing(kb):
    mid = kb.memory.add("the boat is blue", user_id="u1")["results"][0]["id"]
    events = len(kb.events.list(limit=1000))
    same = kb.memory.update(mid, "the boat is blue")
    assert (same.event, same.previous_version, same.edges) == ("NONE", "", 0)
    assert [v["event"] for v in kb.memory.history(mid)] == ["ADD"]
    assert len(kb.events.list(limit=1000)) == events and kb.memory.get(mid)["version"] == 1
    changed = kb.memory.update(mid, "the boat is green")
    assert changed.event == "UPDATE" and [v["event"] for v in kb.memory.history(mid)] == ["ADD", "UPDATE"]


@pytest.mark.parametrize("infer", ["yes", "no", 1, None])
def test_infer_must_be_a_boolean(kb, infer):
    with pytest.raises(graphmem.InvalidInput, match="infer"):
        kb.memory.add("the boat is blue", user_id="u1", infer=infer)


def test_a_session_whose_last_memory_was_deleted_keeps_its_chain(kb):
    """Review finding: the session's last-memory pointer still named a deleted memory, so the next memory got
    no predecessor (A, B, C; delete C; add D: no B -> D), and after delete_all a re-import lost links."""
    ids = {n: kb.memory.add(f"turn {n}", user_id="u1", run_id="r1", timestamp=f"2026-03-01T10:0{i}:00Z")
           ["results"][0]["id"] for i, n in enumerate("ABC")}
    kb.memory.delete(ids.pop("C"))
    ids["D"] = kb.memory.add("turn D", user_id="u1", run_id="r1", timestamp="2026-03-01T10:05:00Z")["results"][0]["id"]
    assert ("B", "TEMPORAL_NEXT", "D") in _session_edges(kb, ids)
    kb.memory.delete_all(user_id="u1")
    again = {}
    for n, at in (("X", "09:00"), ("Y", "09:30"), ("Z", "11:00"), ("W", "11:10")):
        again[n] = kb.memory.add(f"turn {n}", user_id="u1", run_id="r1",
                                 timestamp=f"2026-03-01T{at}:00Z")["results"][0]["id"]
    tn = [e for e in _session_edges(kb, again) if e[1] == "TEMPORAL_NEXT"]
    assert tn == [("X", "TEMPORAL_NEXT", "Y"), ("Y", "TEMPORAL_NEXT", "Z"), ("Z", "TEMPORAL_NEXT", "W")]
