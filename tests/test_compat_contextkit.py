"""ContextKit's Memory (mem0-shaped, with its context_graph block) through graphmem.compat.contextkit.

The config below is the seed README's "Full Config Structure" context_graph block written as a
dict (ContextKit accepts both), with a local vector store path instead of a Qdrant server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmem.compat.contextkit import Memory, translate_config
from graphmem.errors import GraphmemError, InvalidInput


def seed_config(path: Path, **context_graph: Any) -> dict[str, Any]:
    cg: dict[str, Any] = {
        "enabled": True,
        "backend": "networkx",
        "persist_path": "./cgl.json",
        "decay": {"enabled": True, "half_life_days": 30.0, "min_edge_weight": 0.05,
                  "min_node_relevance": 0.02, "tick_on_read": True},
        "edges": {"enable_reply_to": True, "enable_topic_similar": True, "enable_document_link": True,
                  "enable_temporal_next": True, "topic_min_similarity": 0.75, "reply_to_window_seconds": 1800,
                  "use_llm_inference": False,
                  "llm": {"enabled": False, "daily_token_budget": 100_000, "min_confidence": 0.60}},
        "retrieval": {"enabled": True, "algorithm": "bfs", "expansion_depth": 2, "max_candidates": 50,
                      "alpha_dense": 0.55, "beta_bm25": 0.15, "gamma_graph": 0.30},
        "log_changes": True,
    }
    cg.update(context_graph)
    return {"vector_store": {"provider": "qdrant", "config": {"path": str(path), "collection_name": "mem"}},
            "context_graph": cg}


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    m = Memory.from_config(seed_config(tmp_path / "mem"))
    yield m
    m.close()


def add_conversation(mem: Memory) -> list[str]:
    ids = []
    for text in ("I love pizza", "Italian food is my favourite", "I am allergic to peanuts"):
        out = mem.add(text, user_id="u1", run_id="r1")
        assert [r["event"] for r in out["results"]] == ["ADD"]
        ids.append(out["results"][0]["id"])
    mem.add("I prefer tea", user_id="u2", run_id="r9")
    return ids


def test_from_config_add_and_search_shapes(mem: Memory, tmp_path: Path) -> None:
    ids = add_conversation(mem)
    assert (tmp_path / "mem" / "graph.db").is_file()  # vector_store.config.path is the knowledge base

    out = mem.search("which food do I love?", user_id="u1")
    assert set(out) == {"results", "subgraph"}
    results = out["results"]
    assert {r["id"] for r in results} <= set(ids)  # never another user's memory
    assert results[0]["memory"] == "I love pizza"
    for r in results:
        assert {"id", "memory", "score", "user_id", "run_id", "created_at", "context_graph"} <= set(r)
        assert {"dense", "lexical", "graph", "was_seed"} <= set(r["context_graph"])
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    # The session's turns are linked: REPLY_TO / TEMPORAL_NEXT edges come back as the subgraph.
    types = {e["type"] for e in out["subgraph"]}
    assert types & {"REPLY_TO", "TEMPORAL_NEXT"}
    assert all({"src", "dst", "type", "weight"} == set(e) for e in out["subgraph"])


def test_search_options(mem: Memory) -> None:
    add_conversation(mem)
    plain = mem.search("which food do I love?", user_id="u1", use_context_graph=False)
    assert "subgraph" not in plain and plain["results"]
    assert mem.search("do I prefer tea?", filters={"user_id": "u2"})["results"][0]["memory"] == "I prefer tea"
    assert len(mem.search("food", user_id="u1", limit=1)["results"]) == 1
    top = mem.search("which food do I love?", user_id="u1")["results"][0]["score"]
    assert [r["score"] for r in mem.search("which food do I love?", user_id="u1", threshold=top)["results"]] == [top]
    with pytest.raises(InvalidInput, match="user_id"):
        mem.search("food")  # as in ContextKit, a scope is required
    with pytest.raises(InvalidInput, match="filters"):
        mem.search("food", filters={"colour": "red"})


def test_config_blocks_map_onto_graphmem_settings(tmp_path: Path) -> None:
    with Memory.from_config(seed_config(tmp_path / "m", retrieval={"algorithm": "ppr", "ppr_max_iter": 50,
                                                                   "alpha_dense": 0.4})) as m:
        cg = m.kb.config["memory"]["context_graph"]
        assert cg["retrieval"]["algorithm"] == "ppr" and cg["retrieval"]["alpha_dense"] == 0.4
        assert cg["decay"]["half_life_days"] == 30.0 and cg["edges"]["llm"]["daily_token_budget"] == 100_000
    home, enabled, llm, overrides = translate_config(seed_config(tmp_path / "x", edges={"use_llm_inference": True}))
    assert (home, enabled, llm) == (str(tmp_path / "x"), True, False)
    assert overrides["memory"]["context_graph"]["edges"]["llm"]["enabled"] is True
    _, _, llm, overrides = translate_config({
        "embedder": {"provider": "ollama", "config": {"model": "nomic-embed-text"}},
        "llm": {"provider": "openai", "config": {"model": "gpt-4o-mini", "temperature": 0.1}}})
    assert overrides["embeddings"] == {"model": "openai:nomic-embed-text", "base_url": "http://localhost:11434/v1"}
    assert overrides["llm"] == {"model": "gpt-4o-mini"} and llm is True


class FakeContextGraphConfig:
    """Stands in for ContextKit's pydantic ContextGraphConfig (anything with model_dump)."""

    def model_dump(self) -> dict[str, Any]:
        return {"enabled": True, "backend": "networkx", "persist_path": None, "log_changes": True,
                "decay": {"enabled": True, "half_life_days": 7.0, "min_edge_weight": 0.05,
                          "min_node_relevance": 0.02, "tick_on_read": True},
                "edges": {"enable_reply_to": True, "enable_topic_similar": True, "enable_document_link": True,
                          "enable_temporal_next": True, "topic_top_k": 5, "topic_min_similarity": 0.75,
                          "reply_to_window_seconds": 1800, "use_llm_inference": False,
                          "llm": {"enabled": False, "provider": None, "max_pairs_per_insert": 3,
                                  "min_topic_similarity": 0.8, "min_confidence": 0.6, "daily_token_budget": 100000,
                                  "tokens_per_call_estimate": 500, "timeout_seconds": 8.0,
                                  "retry_on_schema_violation": True, "cooldown_seconds": 900}},
                "retrieval": {"enabled": True, "seed_top_k": 10, "expansion_depth": 2, "max_candidates": 50,
                              "edge_weight_floor": 0.1, "alpha_dense": 0.55, "beta_bm25": 0.15, "gamma_graph": 0.3,
                              "algorithm": "bfs", "ppr_damping": 0.85, "ppr_max_iter": 200, "ppr_tolerance": 1e-6,
                              "delta_personal": 0.0, "epsilon_frequency": 0.0, "zeta_success": 0.0}}


def test_contextkits_config_object_with_every_default_is_accepted(tmp_path: Path) -> None:
    with Memory.from_config({"context_graph": FakeContextGraphConfig()}, home=tmp_path / "m") as m:
        assert m.kb.config["memory"]["context_graph"]["decay"]["half_life_days"] == 7.0
        assert m.context_graph is not None


@pytest.mark.parametrize("config, field", [
    ({"vector_store": {"provider": "pinecone", "config": {"api_key": "x"}}}, "vector_store"),
    ({"vector_store": {"provider": "qdrant", "config": {"host": "localhost", "port": 6333}}}, "vector_store"),
    ({"vector_store": {"provider": "qdrant", "config": {}}}, "vector_store.config.path"),
    ({"graph_store": {"provider": "neo4j"}}, "config.graph_store"),
    ({"context_graph": {"enabled": True, "retrieval": {"alpha": 1}}}, "context_graph.retrieval.alpha"),
    ({"context_graph": {"enabled": True, "backend": "memgraph"}}, "context_graph.backend"),
    ({"context_graph": {"sinks": []}}, "context_graph.sinks"),
    ({"embedder": {"provider": "openai", "config": {"model": "m", "api_key": "sk-x"}}}, "OPENAI_API_KEY"),
    ({"embedder": {"provider": "cohere", "config": {"model": "m"}}}, "embedder.provider"),
    ({"llm": {"provider": "anthropic", "config": {"model": "m"}}}, "llm.provider"),
])
def test_unsupported_config_is_a_clear_error(config: dict, field: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=field.replace(".", r"\.")):
        Memory.from_config(config, home=tmp_path / "never")
    assert not (tmp_path / "never").exists()  # refused before anything was created


def test_decay_and_feedback(mem: Memory) -> None:
    ids = add_conversation(mem)
    assert mem.tick_decay() == {"decayed": 0, "pruned": 0, "archived": 0}  # nothing is old yet
    assert set(mem.context_graph.tick_decay()) == {"decayed", "pruned", "archived"}
    up = mem.mark_relevant(ids[2])
    assert isinstance(up, float) and up > 1.0
    down = mem.mark_irrelevant(ids[2], delta=0.5)
    assert isinstance(down, float) and down < up
    assert mem.mark_relevant("mem_unknown") is None and mem.mark_irrelevant("mem_unknown") is None
    mem.record_feedback(ids[0], helpful=True, user_id="u1", query="which food do I love?")
    events = [e for e in mem.kb.events.list(after_id=0) if e.type == "memory.feedback"]
    assert [e.target for e in events] == [ids[0]]


def test_stats_reset_and_backfill(mem: Memory) -> None:
    add_conversation(mem)
    stats = mem.context_graph.stats()
    assert stats["nodes"] == stats["nodes_total"] == 4 and stats["edges"] > 0
    linked = stats["edges"]
    assert mem.reset_context_graph() is None
    assert mem.context_graph.stats() == {"nodes": 4, "nodes_total": 4, "edges": 0}
    assert "subgraph" not in mem.search("which food do I love?", user_id="u1")
    assert mem.backfill_context_graph() == {"nodes": 4, "edges": linked}
    assert mem.context_graph.stats()["edges"] == linked
    assert mem.backfill_context_graph(user_id="u1")["edges"] == 0  # idempotent


def test_memory_crud(mem: Memory) -> None:
    ids = add_conversation(mem)
    assert mem.get(ids[0])["memory"] == "I love pizza"
    assert mem.get("mem_unknown") is None
    assert [r["memory"] for r in mem.get_all(user_id="u2")["results"]] == ["I prefer tea"]
    assert mem.update(ids[0], "I love pizza and pasta") == {"message": "Memory updated successfully!"}
    assert [h["event"] for h in mem.history(ids[0])] == ["ADD", "UPDATE"]
    assert mem.delete(ids[1]) == {"message": "Memory deleted successfully!"}
    assert mem.get(ids[1]) is None


def test_graph_off_by_default_as_in_contextkit(tmp_path: Path) -> None:
    with Memory(home=tmp_path / "plain") as m:
        m.add("I love pizza", user_id="u1", run_id="r1")
        m.add("Italian food is my favourite", user_id="u1", run_id="r1")
        out = m.search("which food do I love?", user_id="u1", use_context_graph=True)
        assert "subgraph" not in out and out["results"]
        assert m.context_graph is None
        assert m.tick_decay() == {"decayed": 0, "pruned": 0, "archived": 0}
        assert m.mark_relevant(out["results"][0]["id"]) is None
        with pytest.raises(InvalidInput, match="context_graph.enabled"):
            m.backfill_context_graph()


@pytest.mark.parametrize("call", [
    lambda m: m.replay_context_graph(),
    lambda m: m.context_graph.changelog.replay(),
    lambda m: m.replay_context_graph(until="soon"),
])
def test_replay_without_a_valid_point_raises_a_clear_graphmem_error(mem: Memory, call: Any) -> None:
    # the change feed's names are tested in tests/feed/test_feed_contextkit.py
    with pytest.raises(GraphmemError, match="until"):
        call(mem)


def test_wrong_types_in_config_and_calls_are_invalid_input(tmp_path: Path) -> None:
    """Each raised TypeError / ValueError, and enabled: "no" switched the graph on (bool("no") is True)."""
    with pytest.raises(InvalidInput, match=r"vector_store.config.path: expected a folder path, got 5"):
        Memory.from_config({"vector_store": {"config": {"path": 5}}})
    with pytest.raises(InvalidInput, match=r"context_graph.enabled: expected true or false, got 'no'"):
        translate_config({"vector_store": {"config": {"path": str(tmp_path / "m")}},
                          "context_graph": {"enabled": "no"}})
    mem = Memory.from_config({"vector_store": {"config": {"path": str(tmp_path / "m")}},
                              "context_graph": {"enabled": True}})
    try:
        mem.add("I love pizza", user_id="u1")
        with pytest.raises(InvalidInput, match=r"threshold: expected a number"):
            mem.search("pizza", user_id="u1", threshold="high")
        with pytest.raises(InvalidInput, match=r"path: expected the folder to write the snapshot to"):
            mem.snapshot_context_graph(None)  # type: ignore[arg-type]
    finally:
        mem.kb.close()


def test_delete_all_and_reset_as_in_mem0(mem: Memory) -> None:
    """Memory.delete_all(user_id=...) and Memory.reset() exist in mem0 and ContextKit; here they raised
    AttributeError."""
    mem.add("I like tea", user_id="u1")
    mem.add("I like coffee", user_id="u2")
    mem.add("I like cocoa", user_id="u2", run_id="r1")
    assert mem.delete_all(user_id="u1") == {"message": "Memories deleted successfully!"}
    assert mem.get_all(user_id="u1")["results"] == []
    assert len(mem.get_all(user_id="u2")["results"]) == 2
    mem.delete_all(filters={"run_id": "r1"})
    assert [r["memory"] for r in mem.get_all(user_id="u2")["results"]] == ["I like coffee"]
    with pytest.raises(InvalidInput, match="at least one"):
        mem.delete_all()
    assert mem.reset() is None
    assert mem.get_all(user_id="u2")["results"] == []
