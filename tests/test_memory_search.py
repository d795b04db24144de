"""Memory search: the ContextKit example, scope isolation, BM25, BFS/PPR, feedback, entity mentions."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

import graphmem
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT

PARTS = {"dense", "lexical", "graph", "frequency", "personal", "success", "was_seed"}


@pytest.fixture
def ekb(tmp_path: Path, model_dir: Path) -> Any:
    with graphmem.open(tmp_path / "kb", config={"embeddings": {"model": f"model2vec:{model_dir}"}}) as kb:
        yield kb


@pytest.mark.parametrize("strategy", ["bfs", "ppr"])
def test_contextkit_example(ekb: graphmem.KnowledgeBase, strategy: str) -> None:
    a = ekb.memory.add("I love pizza", user_id="u1", run_id="r1")["results"][0]["id"]
    b = ekb.memory.add("Italian food is my favourite", user_id="u1", run_id="r1")["results"][0]["id"]
    out = ekb.memory.search("what should I eat?", user_id="u1", strategy=strategy)
    assert {r["id"] for r in out["results"]} == {a, b}
    for r in out["results"]:
        assert set(r["context_graph"]) >= PARTS and r["score"] > 0
        assert {"id", "memory", "score", "metadata", "user_id", "agent_id", "run_id", "created_at"} <= set(r)
    types = {e["type"] for e in out["subgraph"]}
    assert types & {"REPLY_TO", "TEMPORAL_NEXT"}
    assert {(e["src"], e["dst"]) for e in out["subgraph"]} <= {(a, b), (b, a)}


def test_expansion_brings_the_context_of_a_strong_seed(kb: graphmem.KnowledgeBase) -> None:
    q = kb.memory.add("Where did you go on holiday?", user_id="u1", run_id="r1")["results"][0]["id"]
    ans = kb.memory.add("We went to Crete last summer", user_id="u1", run_id="r1")["results"][0]["id"]
    for i in range(5):
        kb.memory.add(f"unrelated note {i}", user_id="u1", run_id=f"x{i}")
    plain = kb.memory.search("holiday", user_id="u1", use_context_graph=False)
    assert [r["id"] for r in plain["results"]] == [q] and "subgraph" not in plain
    out = kb.memory.search("holiday", user_id="u1")
    assert [r["id"] for r in out["results"]] == [q, ans]
    cg = out["results"][1]["context_graph"]
    assert cg["was_seed"] is False and cg["graph"] == pytest.approx(1.0) and cg["lexical"] == 0.0
    assert {"src": ans, "dst": q, "type": "REPLY_TO", "weight": 1.0} in out["subgraph"]


def test_subgraph_is_only_results_and_paths(kb: graphmem.KnowledgeBase) -> None:
    ids = [r["id"] for r in kb.memory.add([f"turn {i} about {w}" for i, w in
                                           enumerate(["boats", "cars", "trains", "planes", "bikes"])],
                                          user_id="u1", run_id="r1")["results"]]
    out = kb.memory.search("trains", user_id="u1", limit=2)
    got = {r["id"] for r in out["results"]}
    assert ids[2] in got and len(got) == 2
    for e in out["subgraph"]:
        assert e["src"] in got or e["dst"] in got
    assert len(out["subgraph"]) < 8  # not the whole session graph


@pytest.mark.parametrize("field", ["user_id", "agent_id", "tenant_id"])
@pytest.mark.parametrize("strategy", ["bfs", "ppr"])
def test_isolation_between_scopes(ekb: graphmem.KnowledgeBase, field: str, strategy: str) -> None:
    base = {"user_id": "shared"} if field != "user_id" else {}
    texts = ["I love pizza", "Italian food is my favourite", "My flat is in Lisbon, see https://x.org/a"]
    for who in ("A", "B"):
        ekb.memory.add(texts, run_id="r1", metadata={"doc_id": "d1"}, **{**base, field: who})
    a_ids = {m["id"] for m in ekb.memory.get_all(**{**base, field: "A"})["results"]}
    b_ids = {m["id"] for m in ekb.memory.get_all(**{**base, field: "B"})["results"]}
    assert len(a_ids) == len(b_ids) == 3 and not a_ids & b_ids
    for q in ("what should I eat?", "pizza Italian food", "Lisbon flat"):
        out = ekb.memory.search(q, limit=50, strategy=strategy, **{**base, field: "B"})
        got = {r["id"] for r in out["results"]}
        assert got and got <= b_ids
        for e in out.get("subgraph", []):
            assert e["src"] in b_ids and e["dst"] in b_ids
    # no edge of the graph joins the two scopes, though content and document are identical
    edges = ekb.store.memory_edges_among(sorted(a_ids | b_ids))
    assert edges and all((s in a_ids) == (d in a_ids) for s, d, _, _ in edges)


def test_search_narrows_by_run_within_a_user(kb: graphmem.KnowledgeBase) -> None:
    kb.memory.add(["pasta tonight", "pasta again"], user_id="u1", run_id="r1")
    other = kb.memory.add("pasta in run two", user_id="u1", run_id="r2")["results"][0]["id"]
    out = kb.memory.search("pasta", user_id="u1", run_id="r2")
    assert [r["id"] for r in out["results"]] == [other]


def test_lexical_is_bm25_rare_words_weigh_more(kb: graphmem.KnowledgeBase) -> None:
    for i in range(8):
        kb.memory.add(f"pizza night number {i}", user_id="u1", run_id=f"r{i}")
    rare = kb.memory.add("anchovies are great", user_id="u1", run_id="rx")["results"][0]["id"]
    out = kb.memory.search("pizza anchovies", user_id="u1", use_context_graph=False)
    assert out["results"][0]["id"] == rare and out["results"][0]["context_graph"]["lexical"] == 1.0
    assert 0 < out["results"][1]["context_graph"]["lexical"] < 1.0


def test_query_syntax_is_plain_text(kb: graphmem.KnowledgeBase) -> None:
    said = kb.memory.add('he said "NEAR" OR not', user_id="u1")["results"][0]["id"]
    kb.memory.add("the boiler needs a service", user_id="u1")
    # FTS5 operators in a query are words: no error, and the memory that contains them is found
    for q in ['NEAR("a" OR *', 'said "NEAR', "AND OR NOT said", "^said*"]:
        hits = kb.memory.search(q, user_id="u1", use_context_graph=False)["results"]
        assert hits and hits[0]["id"] == said, q
    # a query of nothing but operators and punctuation finds nothing, without an error
    for q in ['text:"x', "-", "^*"]:
        assert all(h["id"] != said or h["context_graph"]["lexical"] == 0.0
                   for h in kb.memory.search(q, user_id="u1", use_context_graph=False)["results"]), q


def test_without_embeddings_search_works_and_says_so_once(kb: graphmem.KnowledgeBase) -> None:
    kb.memory.add("the boiler needs a service", user_id="u1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert kb.memory.search("boiler", user_id="u1")["results"]
        assert kb.memory.search("service", user_id="u1")["results"]
    said = [w for w in caught if "without dense similarity" in str(w.message)]
    assert len(said) == 1


def test_feedback_terms_are_off_until_weighted(tmp_path: Path) -> None:
    def run(weights: dict[str, float]) -> list[str]:
        with graphmem.open(tmp_path / "kb", config={"memory": {"context_graph": {"retrieval": weights}}}) as kb:
            if not kb.memory.get_all(user_id="u1")["results"]:
                kb.memory.add("blue bike for sale", user_id="u1", run_id="r1")
                kb.memory.add("blue bike stolen", user_id="u1", run_id="r2")
            return [r["id"] for r in kb.memory.search("blue bike", user_id="u1")["results"]]

    first = run({})
    with graphmem.open(tmp_path / "kb") as kb:
        kb.memory.feedback(first[1], "blue bike", helpful=True)
        kb.memory.feedback(first[0], "blue bike", helpful=False)
    assert run({}) == first  # weights default to 0: feedback changes nothing
    assert run({"zeta_success": 0.5}) == first[::-1]
    assert run({"delta_personal": 0.5}) == first[::-1]
    cfg = {"memory": {"context_graph": {"retrieval": {"zeta_success": 0.5}}}}
    with graphmem.open(tmp_path / "kb", config=cfg) as kb:
        parts = {r["id"]: r["context_graph"] for r in kb.memory.search("blue bike", user_id="u1")["results"]}
        assert parts[first[1]]["success"] > 0 > parts[first[0]]["success"]
        assert parts[first[0]]["frequency"] > 0  # returned by earlier searches


def test_memories_do_not_change_entity_graph_queries(kb: graphmem.KnowledgeBase) -> None:
    kb.ingest_with_content("doc_1", "System Crash Analysis", "notes/crash.txt", QUICKSTART_TEXT,
                           QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    q1, e1 = kb.query("memory leak"), kb.query_with_evidence("system crash")
    s1 = [h.id for h in kb.search("memory leak", kinds=("chunk", "entity")).hits]
    out = kb.memory.add(["My laptop had a memory leak yesterday", "It caused a system crash"], user_id="u1",
                        run_id="r1")
    assert kb.memory.stats()["mentions"] == 2
    assert kb.query("memory leak") == q1 and kb.query_with_evidence("system crash") == e1
    assert [h.id for h in kb.search("memory leak", kinds=("chunk", "entity")).hits] == s1
    got = kb.memory.search("system crash", user_id="u1")
    assert out["results"][1]["id"] in {r["id"] for r in got["results"]}


def test_entity_mentions_seed_memory_search(kb: graphmem.KnowledgeBase) -> None:
    kb.add_node("Kubernetes", "software", aliases=["k8s"])
    mid = kb.memory.add("our cluster runs on k8s", user_id="u1")["results"][0]["id"]
    # "Kubernetes" shares no word with the memory: only the mention edge can find it
    out = kb.memory.search("Kubernetes upgrade plans", user_id="u1")
    assert [r["id"] for r in out["results"]] == [mid]
    assert out["results"][0]["context_graph"]["was_seed"]


def test_scoped_full_text_index_is_filled_from_memories_stored_before_it(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import graphmem.store.sqlite.store as sqlite_store
    from graphmem.store.sqlite.migrations import MIGRATIONS

    before = [m for m in MIGRATIONS if m[0] != "0008_memory_scoped_fts"]
    monkeypatch.setattr(sqlite_store, "MIGRATIONS", before)
    with graphmem.open(tmp_path / "kb") as kb:
        a = kb.memory.add("the red kayak is in the shed", user_id="u1", agent_id="bot", run_id="r1")["results"][0]["id"]
        kb.memory.add("the red kayak is in the garage", user_id="u2", run_id="r1")
    monkeypatch.setattr(sqlite_store, "MIGRATIONS", MIGRATIONS)
    with graphmem.open(tmp_path / "kb") as kb:
        assert kb.store.applied_migrations()[-1] == "0008_memory_scoped_fts"
        assert [r["id"] for r in kb.memory.search("red kayak", user_id="u1")["results"]] == [a]
        assert [r["id"] for r in kb.memory.search("kayak", agent_id="bot", run_id="r1")["results"]] == [a]
        kb.memory.update(a, "the blue canoe is in the shed")
        assert kb.memory.search("kayak", user_id="u1")["results"] == []
        assert [r["id"] for r in kb.memory.search("canoe", user_id="u1")["results"]] == [a]
        kb.memory.delete(a)
        assert kb.memory.search("canoe", user_id="u1")["results"] == []
        assert len(kb.memory.search("kayak", user_id="u2")["results"]) == 1


@pytest.mark.parametrize("use_graph", [True, False])
def test_a_limit_above_the_candidate_pool_gets_that_many(kb: graphmem.KnowledgeBase, use_graph: bool) -> None:
    """limit=100 answered 50 hits with the graph (max_candidates) and 15 without (the seeds), although 120
    memories matched: mem0 users (and the ContextKit layer, limit 100 by default) ask for more than 10."""
    for i in range(120):
        kb.memory.add(f"apple note number {i} about orchard {i % 7}", user_id="u1", run_id=f"r{i // 10}")
    for limit in (10, 100):
        got = kb.memory.search("apple", user_id="u1", limit=limit, use_context_graph=use_graph)["results"]
        assert len(got) == limit and len({r["id"] for r in got}) == limit
        assert [r["score"] for r in got] == sorted((r["score"] for r in got), reverse=True)
    # the pool's own ranking is the one a small limit shows: the first ten of a hundred are those ten
    ten = [r["id"] for r in kb.memory.search("apple", user_id="u1", limit=10, use_context_graph=use_graph)["results"]]
    hundred = kb.memory.search("apple", user_id="u1", limit=100, use_context_graph=use_graph)["results"]
    assert [r["id"] for r in hundred[:10]] == ten


def test_the_hits_past_the_pool_match_the_query_and_do_not_count_as_used(ekb: graphmem.KnowledgeBase) -> None:
    """Review finding: the top-up took dense neighbours too, so limit=100 over 30 'apple orchard' and 60
    'plumber invoice' memories answered 90 hits, and every one of them counted as used (never fading)."""
    for i in range(30):
        ekb.memory.add(f"apple orchard visit {i}", user_id="u1", run_id=f"a{i}")
    for i in range(60):
        ekb.memory.add(f"plumber invoice {i}", user_id="u1", run_id=f"p{i}")
    got = ekb.memory.search("apple orchard", user_id="u1", limit=100, use_context_graph=False)["results"]
    assert len(got) == 30 and all("apple" in r["memory"] for r in got)
    rows = ekb.store.memory_rank_inputs([r["id"] for r in got])
    used = [r["id"] for r in got if rows[r["id"]].uses]
    assert 0 < len(used) < 30  # the pool's hits, not the tail
