"""The seed's quick start, through the library (acceptance of the foundation issue)."""

from __future__ import annotations

import pytest

import backend_kb
import graphmem
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT

# The knowledge base of these tests, on SQLite and on PostgreSQL (tests/backend_kb.py).
kb, backend_url = backend_kb.kb, backend_kb.backend_url


def test_quickstart_counts(quickstart):
    assert quickstart["doc_id"] == "doc_1"
    assert quickstart["chunk_count"] == 1
    assert quickstart["nodes_added"] == 2
    assert quickstart["edges_added"] == 1
    assert quickstart["warnings"] == []
    assert quickstart["status"] == "added"


def test_quickstart_query_with_evidence(kb, quickstart):
    r = kb.query_with_evidence("Why does the system crash?")
    names = {n["name"] for n in r["subgraph"]["nodes"].values()}
    assert names == {"memory leak", "system crash"}
    [edge] = r["subgraph"]["edges"]
    assert (edge["source_name"], edge["type"], edge["target_name"]) == ("memory leak", "causes", "system crash")
    assert edge["confidence"] == 1.0
    [doc] = r["supporting_documents"]
    assert doc["doc_id"] == "doc_1" and doc["doc_title"] == "System Crash Analysis"
    [chunk] = doc["supporting_chunks"]
    assert chunk["text"] == QUICKSTART_TEXT
    assert (chunk["start"], chunk["end"]) == (0, len(QUICKSTART_TEXT))
    quote = next(q for q in chunk["quotes"] if q["supports"] == "memory leak --[causes]--> system crash")
    assert (quote["start"], quote["end"]) == (0, 35)
    assert QUICKSTART_TEXT[quote["start"]:quote["end"]] == "System crashes due to memory leaks."
    assert "memory leak --[causes]--> system crash (doc_1)" in r["evidence_chain"]
    [path] = r["evidence_paths"]
    assert path["steps"][0]["documents"] == ["doc_1"]


def test_query_marks_seed(kb, quickstart):
    sg = kb.query("Why does the system crash?")
    seeds = {n["name"] for n in sg["nodes"].values() if n["seed"]}
    assert seeds == {"system crash"}


def test_no_match_returns_empty(kb, quickstart):
    r = kb.query_with_evidence("quantum chromodynamics")
    assert r["subgraph"] == {"nodes": {}, "edges": []}
    assert r["supporting_documents"] == []
    assert r["evidence_chain"] == "No matching nodes found."


def test_persists_across_reopen(tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        kb.ingest_with_content("doc_1", "t", "s", QUICKSTART_TEXT, QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    with graphmem.open(tmp_path / "kb", create=False) as kb:
        assert len(kb.query("system crash")["edges"]) == 1
        assert kb.stats()["documents"] == 1


def test_open_without_create_names_the_init_command(tmp_path):
    with pytest.raises(graphmem.InvalidInput, match="graphmem init"):
        graphmem.open(tmp_path / "none", create=False)
    assert not (tmp_path / "none").exists()
