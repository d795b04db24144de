"""Query: entity seeds from text, BFS constraints from config, evidence paths."""

from __future__ import annotations

import graphmem
from graphmem.models import Edge
from graphmem.retrieval.graph_query import bfs


def E(s, t, c=1.0):
    return Edge(f"{s}-{t}", s, t, "r", c)


def _edges_of(edges, floor=0.6):
    def f(frontier):
        fr = set(frontier)
        return sorted((e for e in edges if (e.source in fr or e.target in fr) and e.confidence >= floor),
                      key=lambda e: -e.confidence)
    return f


def test_bfs_depth_and_both_directions():
    edges = [E("a", "b"), E("c", "b"), E("c", "d"), E("d", "e")]
    res = bfs(["a"], _edges_of(edges), max_depth=2, max_nodes=50)
    assert res.order == ["a", "b", "c"]  # b via a->b, c via c->b (reverse); d is depth 3
    assert res.depth == {"a": 0, "b": 1, "c": 2}
    assert res.parent["c"][0] == "b"


def test_bfs_confidence_floor():
    edges = [E("a", "b", 0.59), E("a", "c", 0.6)]
    assert bfs(["a"], _edges_of(edges), 2, 50).order == ["a", "c"]


def test_bfs_node_cap_prefers_strong_edges():
    edges = [E("a", f"n{i}", 0.6 + i * 0.01) for i in range(30)]
    res = bfs(["a"], _edges_of(edges), 2, 5)
    assert len(res.order) == 5
    assert res.order[1:] == ["n29", "n28", "n27", "n26"]


def test_bfs_zero_depth_and_duplicate_seeds():
    assert bfs(["a", "a", "b"], _edges_of([E("a", "c")]), 0, 50).order == ["a", "b"]


def _chain(kb, names, conf=1.0):
    text = " ".join(f"{a} feeds {b}." for a, b in zip(names, names[1:]))
    kb.ingest_with_content("chain", "Chain", "c", text, [{"name": n, "type": "component"} for n in names],
                           [{"source": a, "target": b, "type": "uses", "confidence": conf,
                             "supporting_text": f"{a} feeds {b}."} for a, b in zip(names, names[1:])])


def test_query_depth_from_config(tmp_path):
    names = ["alpha", "bravo", "charlie", "delta", "echo"]
    with graphmem.open(tmp_path / "a") as kb:
        _chain(kb, names)
        got = {n["name"] for n in kb.query("tell me about charlie")["nodes"].values()}
        assert got == {"alpha", "bravo", "charlie", "delta", "echo"}  # depth 2 each way
        got = {n["name"] for n in kb.query("alpha")["nodes"].values()}
        assert got == {"alpha", "bravo", "charlie"}
    with graphmem.open(tmp_path / "b", config={"graph": {"max_depth": 1}}) as kb:
        _chain(kb, names)
        assert {n["name"] for n in kb.query("alpha")["nodes"].values()} == {"alpha", "bravo"}


def test_query_respects_max_nodes_and_confidence(tmp_path):
    with graphmem.open(tmp_path / "k", config={"graph": {"max_nodes": 3}}) as kb:
        names = [f"svc{i}" for i in range(10)]
        text = " ".join(f"hub calls {n}." for n in names)
        kb.ingest_with_content("d", "t", "s", text, [{"name": "hub"}] + [{"name": n} for n in names],
                               [{"source": "hub", "target": n, "type": "uses", "confidence": 0.6 + i * 0.04,
                                 "supporting_text": f"hub calls {n}."} for i, n in enumerate(names)])
        sg = kb.query("hub")
        assert len(sg["nodes"]) == 3
        assert {n["name"] for n in sg["nodes"].values()} == {"hub", "svc9", "svc8"}


def test_phrase_match_beats_word_match_and_stop_words_ignored(kb):
    kb.ingest_with_content("d", "t", "s", "The system crash. The system. The crash report.",
                           [{"name": "system crash"}, {"name": "system"}, {"name": "crash report"},
                            {"name": "the"}], [])
    sg = kb.query("why does the system crash")
    seeds = [n["name"] for n in sg["nodes"].values() if n["seed"]]
    assert seeds[0] == "system crash"
    assert "the" not in seeds  # a stop word never seeds, even if it names an entity


def test_word_level_match_is_stemmed(kb, quickstart):
    sg = kb.query("what about memory leaks?")
    assert any(n["name"] == "memory leak" and n["seed"] for n in sg["nodes"].values())


def test_alias_seeds(kb):
    kb.ingest_with_content("d", "t", "s", "PostgreSQL stores rows.",
                           [{"name": "PostgreSQL", "type": "database", "aliases": ["pg"]}], [])
    sg = kb.query("is pg up?")
    assert [n["name"] for n in sg["nodes"].values()] == ["PostgreSQL"]


def test_query_fts_syntax_never_errors(kb, quickstart):
    for q in ['"', "NEAR(", "memory* -leak", "col:memory", "(((", "AND"]:  # a blank one is refused (test_api_misuse)
        assert isinstance(kb.query(q)["nodes"], dict)


def test_multi_hop_evidence_path(kb):
    _chain(kb, ["alpha", "bravo", "charlie"])
    r = kb.query_with_evidence("alpha")
    texts = [p["text"] for p in r["evidence_paths"]]
    assert "alpha --[uses]--> bravo (chain) ; bravo --[uses]--> charlie (chain)" in texts
    quotes = {q["text"] for d in r["supporting_documents"] for c in d["supporting_chunks"] for q in c["quotes"]}
    assert {"alpha feeds bravo.", "bravo feeds charlie."} <= quotes


def test_evidence_is_bounded(tmp_path):
    with graphmem.open(tmp_path / "k", config={"graph": {"max_evidence_per_item": 2,
                                                         "max_evidence_chunks": 3}}) as kb:
        for i in range(10):
            text = f"Report {i}: the memory leak causes a system crash again."
            kb.ingest_with_content(f"d{i}", "t", "s", text, [{"name": "memory leak"}, {"name": "system crash"}],
                                   [{"source": "memory leak", "target": "system crash", "type": "causes",
                                     "confidence": 1.0, "supporting_text": text}])
        r = kb.query_with_evidence("memory leak")
        chunks = [c for d in r["supporting_documents"] for c in d["supporting_chunks"]]
        assert len(chunks) <= 3
        assert len(r["evidence_paths"][0]["steps"][0]["documents"]) == 2


def test_query_with_evidence_uses_the_hybrid_pipeline_for_passages_and_unnamed_seeds(kb, quickstart):
    kb.ingest_with_content("ops_1", "Dispatch outage", "ops.txt",
                           "The dispatch API failed on Monday because the connection pool was exhausted.")
    # no entity is named: the search pipeline's passages are the evidence
    r = kb.query_with_evidence("why did the dispatch API fail on Monday?")
    assert r["subgraph"]["nodes"] == {}
    docs = {d["doc_id"]: d for d in r["supporting_documents"]}
    assert "ops_1" in docs and docs["ops_1"]["supporting_chunks"][0]["quotes"] == []
    assert r["evidence_chain"] == "No matching nodes found."
    # an entity named: the subgraph is the graph query's, the relation evidence ranks first
    r = kb.query_with_evidence("Why does the system crash?")
    assert r["subgraph"] == kb.query("Why does the system crash?")
    assert r["supporting_documents"][0]["doc_id"] == "doc_1"
    assert r["supporting_documents"][0]["supporting_chunks"][0]["quotes"]
    # no name, but a passage that mentions an entity: the pipeline's entity hits seed the subgraph
    text = "objects that are not released"
    from graphmem.retrieval.graph_query import find_seed_entities
    assert find_seed_entities(kb, text, 10, strict=True) == []  # names no entity
    r = kb.query_with_evidence(text)
    assert any(n["name"] == "memory leak" for n in r["subgraph"]["nodes"].values())
    assert any(e["type"] == "causes" for e in r["subgraph"]["edges"])
