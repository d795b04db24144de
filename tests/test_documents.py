"""Documents face: idempotent content-hashed ingest, versions, chunks, search, delete."""

from __future__ import annotations

import pytest

import graphmem
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT, snapshot


def test_same_content_twice_is_a_noop(kb, quickstart):
    before = snapshot(kb)
    again = kb.ingest_with_content("doc_1", "System Crash Analysis", "notes/crash.txt", QUICKSTART_TEXT,
                                   QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    assert again["status"] == "unchanged"
    assert (again["nodes_added"], again["edges_added"], again["version"]) == (0, 0, 1)
    assert "unchanged" in again["warnings"][0]
    assert snapshot(kb) == before


def test_changed_content_makes_version_2_and_keeps_version_1(kb, quickstart):
    text2 = QUICKSTART_TEXT + " Restarting the service clears the leak."
    r = kb.ingest_with_content("doc_1", "System Crash Analysis", "notes/crash.txt", text2,
                               QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    assert r["status"] == "new_version" and r["version"] == 2
    assert r["nodes_added"] == 0 and r["edges_added"] == 0  # same entities and relation, more evidence
    assert kb.documents.get("doc_1").version == 2
    v1 = kb.documents.get("doc_1", version=1)
    assert v1.content == QUICKSTART_TEXT and not v1.is_latest
    assert [d.version for d in kb.documents.versions("doc_1")] == [1, 2]
    ent = kb.graph.get_entity("memory leak")
    versions = sorted({(p["doc_id"], p["version"]) for r_ in ent["relations"] for p in r_["evidence"]})
    assert versions == [("doc_1", 1), ("doc_1", 2)]  # the old version's evidence stays readable
    assert kb.documents.chunks("doc_1", 1)[0].text == QUICKSTART_TEXT
    # full-text search sees the latest version only, unless asked
    assert {h.chunk.version for h in kb.documents.search("memory leaks")} == {2}
    assert {h.chunk.version for h in kb.documents.search("memory leaks", all_versions=True)} == {1, 2}


def test_chunk_offsets_index_the_document(kb):
    text = " ".join(f"Sentence number {i} talks about component C{i} and its failure modes." for i in range(60))
    r = kb.documents.add(text, doc_id="long", title="Long")
    chunks = kb.documents.chunks("long")
    assert r.chunk_count == len(chunks) > 5
    for c in chunks:
        assert text[c.start:c.end] == c.text
        assert len(c.text) <= 500
        assert c.start == 0 or text[c.start - 1].isspace()  # starts on a word
        assert c.end == len(text) or text[c.end].isspace()  # ends on a word
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    assert kb.documents.chunk(chunks[3].chunk_id) == chunks[3]


def test_add_without_id_uses_content_hash(kb):
    r = kb.documents.add("Some plain text about Kafka brokers.")
    assert r.doc_id.startswith("doc_") and len(r.doc_id) == 16
    assert kb.documents.add("Some plain text about Kafka brokers.").status == "unchanged"


def test_list_and_get(kb, quickstart):
    kb.documents.add("Another document about queues.", doc_id="doc_2", title="Queues", metadata={"team": "infra"})
    docs = kb.documents.list()
    assert [d.doc_id for d in docs] == ["doc_1", "doc_2"]
    assert docs[1].metadata == {"team": "infra"} and docs[1].content == ""
    assert kb.documents.get("doc_2").content == "Another document about queues."
    with pytest.raises(graphmem.NotFound, match="no document with id 'nope'"):
        kb.documents.get("nope")
    with pytest.raises(graphmem.NotFound, match=r"has no version 7; versions: \[1\]"):
        kb.documents.get("doc_1", version=7)
    with pytest.raises(graphmem.NotFound, match="no chunk with id"):
        kb.documents.chunk("doc_1:v9:c0")


def test_search_ranks_by_bm25_with_snippets(kb):
    kb.documents.add("Kafka brokers replicate partitions. Kafka consumers read partitions.", doc_id="kafka")
    kb.documents.add("Postgres stores rows in pages. Vacuum reclaims space.", doc_id="pg")
    kb.documents.add("A broker is mentioned once here alongside many other words about nothing.", doc_id="other")
    hits = kb.documents.search("kafka partitions")
    assert hits[0].chunk.doc_id == "kafka"
    assert "[Kafka]" in hits[0].snippet
    assert all(h.chunk.doc_id != "pg" for h in hits)
    assert hits == sorted(hits, key=lambda h: -h.score)


@pytest.mark.parametrize("q", ['"', 'kafka"', "*", "kafka*", "NEAR(a b)", "-kafka", "col:kafka", "a AND OR NOT",
                               "(", "^kafka", "the of and"])
def test_search_never_errors_on_fts_syntax(kb, q):
    kb.documents.add("Kafka brokers replicate partitions near the core.", doc_id="kafka")
    hits = kb.documents.search(q)
    assert isinstance(hits, list)
    if "kafka" in q.lower():
        assert hits and hits[0].chunk.doc_id == "kafka"


def test_delete_document(kb, quickstart):
    kb.documents.add("Unrelated text.", doc_id="doc_2")
    r = kb.documents.delete("doc_1")
    assert r == {"doc_id": "doc_1", "versions_deleted": 1, "nodes_removed": 2, "edges_removed": 1}
    assert kb.query("system crash") == {"nodes": {}, "edges": []}
    assert kb.documents.search("memory") == []
    assert [d.doc_id for d in kb.documents.list()] == ["doc_2"]
    with pytest.raises(graphmem.NotFound):
        kb.documents.delete("doc_1")
    events = kb.events.list(limit=1000)
    types = [e.type for e in events if not e.type.startswith("wiki.")]  # + its pages retired (below)
    assert types[-4:] == ["edge.removed", "node.removed", "node.removed", "document.deleted"]
    assert "wiki.delete" in [e.type for e in events[-3:]]  # the deleted document's summary page went too


def test_delete_keeps_hand_made_knowledge(kb, quickstart):
    kb.add_node("memory leak", "issue")  # confirmed by hand
    r = kb.documents.delete("doc_1")
    assert r["nodes_removed"] == 1  # system crash goes, the hand-confirmed memory leak stays
    assert kb.graph.find("memory leak") is not None
    assert kb.graph.find("system crash") is None


def test_events_are_written_with_the_change(kb, quickstart):
    evs = [e for e in kb.events.list() if not e.type.startswith("wiki.")]  # + the generated pages' events
    assert [e.type for e in evs] == ["node.added", "node.added", "edge.added", "document.added"]
    doc_event = evs[-1]
    assert doc_event.target == "doc_1"
    assert doc_event.payload["version"] == 1 and doc_event.payload["chunks"] == 1
    assert kb.events.list(after_id=evs[1].id, types=["edge.added"])[0].type == "edge.added"


def test_corpus_wide_words_are_pruned_from_full_text_queries(kb):
    from graphmem.store.sqlite.fts import pruned_fts_query

    for i in range(30):
        kb.documents.add(f"Widget report {i}: the widget works." + (" A zebra appeared." if i == 7 else ""),
                         doc_id=f"w{i}")
    conn = kb.store.conn
    assert pruned_fts_query(conn, "chunks_fts", "widget zebra", total=30, floor=5) == '"zebra"'
    assert pruned_fts_query(conn, "chunks_fts", "widget", total=30, floor=5) == '"widget"'  # nothing rarer
    assert pruned_fts_query(conn, "chunks_fts", "widget report", total=30, floor=5) == '"widget" OR "report"'
    assert pruned_fts_query(conn, "chunks_fts", "widget zebra", total=30, floor=100) == '"widget" OR "zebra"'
    hits = kb.documents.search("widget zebra", k=50)
    assert hits[0].chunk.doc_id == "w7"
