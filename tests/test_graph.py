"""Graph face: provenance per piece of evidence, dedup, inverse phrases, hand-made knowledge, merge."""

from __future__ import annotations

import pytest

import graphmem

DOC_A = "Memory leaks cause system crashes. Operators restart the service nightly."
DOC_B = "Our postmortem found that a memory leak causes the system crash we saw on Friday."
ENTS = [{"name": "memory leak", "type": "bug"}, {"name": "system crash", "type": "failure"}]


def _rel(text):
    return [{"source": "memory leak", "target": "system crash", "type": "leads to", "confidence": 0.9,
             "supporting_text": text}]


def test_same_relation_in_two_documents_is_one_edge_with_two_evidence(kb):
    ra = kb.ingest_with_content("a", "A", "a.txt", DOC_A, ENTS, _rel("Memory leaks cause system crashes."))
    rb = kb.ingest_with_content("b", "B", "b.txt", DOC_B, ENTS,
                                _rel("a memory leak causes the system crash we saw on Friday"))
    assert (ra["edges_added"], rb["edges_added"]) == (1, 0)
    assert (ra["nodes_added"], rb["nodes_added"]) == (2, 0)
    ent = kb.graph.get_entity("memory leak")
    [rel] = ent["relations"]
    assert rel["type"] == "causes"  # "leads to" normalised
    assert sorted(p["doc_id"] for p in rel["evidence"]) == ["a", "b"]
    b_ev = next(p for p in rel["evidence"] if p["doc_id"] == "b")
    assert DOC_B[b_ev["start"]:b_ev["end"]] == "a memory leak causes the system crash we saw on Friday"
    assert b_ev["chunk_id"] == "b:v1:c0"

    kb.documents.delete("a")
    [rel] = kb.graph.get_entity("memory leak")["relations"]
    assert [p["doc_id"] for p in rel["evidence"]] == ["b"]
    r = kb.query_with_evidence("memory leak")
    assert [d["doc_id"] for d in r["supporting_documents"]] == ["b"]

    kb.documents.delete("b")
    assert kb.graph.find("memory leak") is None
    assert kb.stats()["edges"] == 0 and kb.stats()["provenance"] == 0


def test_edge_confidence_follows_remaining_evidence(kb):
    kb.ingest_with_content("a", "A", "a", DOC_A, ENTS,
                           [{**_rel("Memory leaks cause system crashes.")[0], "confidence": 1.0}])
    kb.ingest_with_content("b", "B", "b", DOC_B, ENTS, _rel("a memory leak causes the system crash"))
    assert kb.query("memory leak")["edges"][0]["confidence"] == 1.0
    kb.documents.delete("a")
    assert kb.query("memory leak")["edges"][0]["confidence"] == 0.9


def test_inverse_phrase_swaps_ends(kb):
    text = "The wheel is part of the car."
    kb.ingest_with_content("d", "Car", "c", text,
                           [{"name": "wheel", "type": "component"}, {"name": "car", "type": "system"}],
                           [{"source": "wheel", "target": "car", "type": "is part of", "confidence": 1.0,
                             "supporting_text": text}])
    [e] = kb.query("car")["edges"]
    assert (e["source_name"], e["type"], e["target_name"]) == ("car", "contains", "wheel")


def test_types_are_normalised_at_ingest(kb):
    kb.ingest_with_content("d", "t", "s", "Bug on the server.",
                           [{"name": "the bug", "type": "Bug"}, {"name": "web server", "type": "Server"}], [])
    assert kb.graph.find("the bug").type == "issue"
    assert kb.graph.find("web server").type == "infrastructure"


def test_entities_dedup_on_normalised_name_and_alias(kb):
    kb.ingest_with_content("a", "A", "a", "PostgreSQL is a database.",
                           [{"name": "PostgreSQL", "type": "database", "aliases": ["Postgres"]}], [])
    r = kb.ingest_with_content("b", "B", "b", "We run postgres 16.",
                               [{"name": "postgres", "type": "database"}], [])
    assert r["nodes_added"] == 0 and r["nodes_linked"] == 1
    node = kb.graph.find("  POSTGRESQL ")
    assert node.aliases == ["Postgres"]
    ev = kb.graph.get_entity("postgres")["evidence"]
    assert {p["doc_id"] for p in ev} == {"a", "b"}


def test_relation_to_entity_already_in_graph(kb, quickstart):
    text = "Heap growth is a memory leak symptom; it causes a system crash."
    r = kb.ingest_with_content("d2", "t", "s", text, [{"name": "heap growth", "type": "event"}],
                               [{"source": "heap growth", "target": "system crash", "type": "causes",
                                 "confidence": 0.8, "supporting_text": "it causes a system crash"}])
    assert r["edges_added"] == 1 and r["warnings"] == []


def test_warnings_low_confidence_unknown_entity_missing_quote(kb):
    text = "Caches may affect latency. Nothing else here."
    r = kb.ingest_with_content(
        "d", "t", "s", text,
        [{"name": "cache", "type": "component", "supporting_text": "Caches may affect latency."},
         {"name": "latency", "type": "concept", "supporting_text": "latency is measured in ms"}],
        [{"source": "cache", "target": "latency", "type": "affects", "confidence": 0.5,
          "supporting_text": "Caches may affect latency."},
         {"source": "cache", "target": "ghost", "type": "uses", "confidence": 0.9},
         {"source": "cache", "target": "latency", "type": "affects", "confidence": 0.7,
          "supporting_text": "caches   MAY affect\nlatency"}],
    )
    w = r["warnings"]
    assert any("relations[0]" in x and "below the minimum 0.6" in x for x in w)
    assert any("relations[1]" in x and "'ghost'" in x and "neither in this document" in x for x in w)
    assert any("entities[1]" in x and "not found in document" in x for x in w)
    assert r["edges_added"] == 1  # only the third relation
    # folded match (case/whitespace) gives the exact original span
    [rel] = kb.graph.get_entity("cache")["relations"]
    [p] = rel["evidence"]
    assert text[p["start"]:p["end"]] == "Caches may affect latency"
    # an unlocatable quote gets no span, never a made-up one
    lat = kb.graph.get_entity("latency")["evidence"][0]
    assert lat["start"] is None and lat["end"] is None
    assert lat["chunk_id"] == "d:v1:c0"  # best-overlapping chunk


def test_entity_without_supporting_text_cites_its_name(kb):
    text = "The scheduler assigns jobs to workers."
    kb.ingest_with_content("d", "t", "s", text, [{"name": "Scheduler", "type": "component"}], [])
    [p] = kb.graph.get_entity("scheduler")["evidence"]
    assert text[p["start"]:p["end"]] == "scheduler"


def test_provenance_in_later_chunk_points_at_it(kb):
    filler = " ".join(f"Filler sentence {i} about nothing in particular." for i in range(40))
    text = filler + " Finally the cache invalidation bug corrupts the index."
    kb.ingest_with_content("d", "t", "s", text,
                           [{"name": "cache invalidation bug", "type": "bug",
                             "supporting_text": "the cache invalidation bug corrupts the index"}], [])
    [p] = kb.graph.get_entity("cache invalidation bug")["evidence"]
    chunk = kb.documents.chunk(p["chunk_id"])
    assert chunk.start <= p["start"] and p["end"] <= chunk.end
    assert chunk.ordinal > 0


def test_type_cap_through_ingest(tmp_path):
    with graphmem.open(tmp_path / "kb", config={"ontology": {"max_entity_types": 2}}) as kb:
        r = kb.ingest_with_content("d", "t", "s", "alpha beta gamma",
                                   [{"name": "alpha", "type": "network error"}, {"name": "beta", "type": "person"},
                                    {"name": "gamma", "type": "network errors"}], [])
        assert kb.graph.find("gamma").type == "network error"
        assert any("cap of 2" in w for w in r["warnings"])
        assert kb.stats()["entity_types"] == 2


def test_hand_made_nodes_and_edges(kb):
    a = kb.add_node("wheel", "component")
    b = kb.add_node("car", "system")
    assert kb.add_node("Wheel", "component") == a
    e = kb.add_edge("wheel", "car", "is part of", 0.9)
    edge = kb.graph.get_edge(e)
    assert (edge["source_name"], edge["type"], edge["target_name"]) == ("car", "contains", "wheel")
    assert edge["manual"] and edge["evidence"] == []
    assert b in kb.graph.neighbours("wheel")["nodes"]
    with pytest.raises(graphmem.NotFound, match="no entity named 'bus'"):
        kb.add_edge("bus", "car", "uses")
    with pytest.raises(graphmem.InvalidInput, match="below graph.min_confidence"):
        kb.add_edge("wheel", "car", "uses", 0.3)
    with pytest.raises(graphmem.InvalidInput, match="outside"):
        kb.add_edge("wheel", "car", "uses", 1.5)
    r = kb.query_with_evidence("car")
    assert "(hand-made)" in r["evidence_chain"]


def test_merge_entities_keeps_aliases_and_evidence(kb, quickstart):
    text = "A mem leak slowly eats the heap and causes a system crash."
    kb.ingest_with_content("d2", "t", "s", text, [{"name": "mem leak", "type": "issue"}],
                           [{"source": "mem leak", "target": "system crash", "type": "causes", "confidence": 0.8,
                             "supporting_text": "A mem leak slowly eats the heap and causes a system crash."}])
    r = kb.graph.merge("memory leak", "mem leak")
    assert r["edges_folded"] == 1
    node = kb.graph.find("mem leak")
    assert node.name == "memory leak" and "mem leak" in node.aliases
    [rel] = kb.graph.get_entity("memory leak")["relations"]
    assert sorted(p["doc_id"] for p in rel["evidence"]) == ["d2", "doc_1"]
    assert rel["confidence"] == 1.0
    with pytest.raises(graphmem.InvalidInput, match="already the same entity"):
        kb.graph.merge("memory leak", "mem leak")


def test_list_and_delete_entities(kb, quickstart):
    assert [n.name for n in kb.graph.list(type="Bug")] == ["memory leak", "system crash"]
    r = kb.graph.delete_node("memory leak")
    assert r["edges_removed"] == 1
    assert kb.query("memory leak system crash")["edges"] == []


def test_reingest_extraction_types_differs_is_reported(kb, quickstart):
    r = kb.ingest_with_content("d2", "t", "s", "memory leak again",
                               [{"name": "memory leak", "type": "component"}], [])
    assert any("differs from the stored type 'issue'" in w for w in r["warnings"])
    # (the generic `concept` is not a conflict: tests/newcomer/test_nc_entity_types.py)


def test_mentions_every_occurrence_whole_words_plural_longest_first(kb):
    text = ("Memory leaks crash the system. A memory leak is not memorylessness. "
            "The memory pool holds memory. MEMORY LEAK again.")
    kb.ingest_with_content("d", "t", "s", text, [{"name": "memory leak"}, {"name": "memory"}], [])
    leak = kb.graph.find("memory leak").id
    mem = kb.graph.find("memory").id
    found = kb.store.mentions_of([leak, mem])
    leak_spans = sorted(text[m.start:m.end] for m in found[leak])
    assert leak_spans == ["MEMORY LEAK", "Memory leaks", "memory leak"]
    # "memory" alone: only where no longer name claimed it, never inside "memorylessness"
    mem_spans = sorted((m.start, text[m.start:m.end]) for m in found[mem])
    assert [s for _, s in mem_spans] == ["memory", "memory"]
    assert all(m.chunk_id == "d:v1:c0" for ms in found.values() for m in ms)
