"""Contract of :class:`graphmem.store.protocols.VectorStore`: vectors and what waits to be embedded."""

from __future__ import annotations

import pytest

from graphmem.store.protocols import VectorStore

from .seed import document, edge, node

PROTOCOL = VectorStore
contract = pytest.mark.contract

V1, V2, V3 = b"\x00\x3c" * 4, b"\x00\x40" * 4, b"\x00\x42" * 4


@contract("upsert_vectors", "vector_hashes", "vectors_for", "load_vectors", "vector_state")
def test_vectors_are_replaced_with_a_new_row_id(store) -> None:
    assert store.vector_state() == (0, 0)
    with store.transaction():
        store.upsert_vectors("chunk", "m1", 4, [("c1", "h1", V1), ("c2", "h2", V2)])
        store.upsert_vectors("entity", "m1", 4, [("c1", "he", V3)])  # same id, other kind
    batch = store.load_vectors("chunk", "m1")
    assert (batch.item_ids, batch.vectors) == (["c1", "c2"], [V1, V2])
    first_rows = batch.row_ids
    state = store.vector_state()
    assert state.max_id >= max(first_rows) and state.deletions == 0
    with store.transaction():
        store.upsert_vectors("chunk", "m2", 4, [("c1", "h1b", V3)])  # another model replaces it too
    assert store.vector_hashes("chunk", ["c1", "c2", "zzz"], "m1") == {"c2": "h2"}
    assert store.vector_hashes("chunk", ["c1"], "m2") == {"c1": "h1b"}
    assert store.vectors_for("chunk", ["c1", "c2"], "m2") == {"c1": V3}
    assert store.vectors_for("entity", ["c1"], "m1") == {"c1": V3}
    again = store.load_vectors("chunk", "m2")
    assert again.item_ids == ["c1"] and again.row_ids[0] > max(first_rows)
    after = store.vector_state()
    assert after.max_id > state.max_id and after.deletions > state.deletions
    assert store.load_vectors("chunk", "m1", after_id=first_rows[0]) == ([first_rows[1]], ["c2"], [V2])
    assert store.load_vectors("chunk", "none") == ([], [], [])
    assert store.vector_hashes("chunk", [], "m1") == {} and store.vectors_for("chunk", [], "m1") == {}


@contract("vector_models", "delete_vectors")
def test_vectors_per_model_and_deletion(store) -> None:
    with store.transaction():
        store.upsert_vectors("chunk", "m1", 4, [("a", "h", V1), ("b", "h", V1)])
        store.upsert_vectors("entity", "m2", 4, [("a", "h", V2)])
    assert store.vector_models() == {"m1": 2, "m2": 1}
    dels = store.vector_state().deletions
    with store.transaction():
        assert store.delete_vectors("m1") == 2
        assert store.delete_vectors("none") == 0
    assert store.vector_models() == {"m2": 1} and store.vector_state().deletions == dels + 2
    with store.transaction():
        assert store.delete_vectors() == 1
    assert store.vector_models() == {}


@contract("upsert_vectors")
def test_a_vector_goes_with_its_item(store) -> None:
    _, c = document(store, "d", ["Ada wrote notes"])
    node(store, "ada", "Ada")
    node(store, "notes", "Notes")
    e = edge(store, "ada", "wrote", "notes")
    with store.transaction():
        store.upsert_vectors("chunk", "m", 4, [(c[0].chunk_id, "h", V1)])
        store.upsert_vectors("entity", "m", 4, [("ada", "h", V1), ("notes", "h", V1)])
        store.upsert_vectors("relation", "m", 4, [(e.id, "h", V1)])
    with store.transaction():
        store.delete_edges_by_id([e.id])
        store.delete_node("ada")
        store.delete_document("d")
    assert store.vectors_for("chunk", [c[0].chunk_id], "m") == {}
    assert store.vectors_for("relation", [e.id], "m") == {}
    assert store.vectors_for("entity", ["ada", "notes"], "m") == {"notes": V1}


@contract("chunks_to_embed", "relations_to_embed", "nodes_to_embed")
def test_items_to_embed_are_resumable_cursors(store) -> None:
    _, old = document(store, "d", ["old one"])
    _, new = document(store, "d", ["new one", "new two"], version=2)
    rows = store.chunks_to_embed()
    assert [(r.item_id, r.text) for r in rows] == [(new[0].chunk_id, "new one"), (new[1].chunk_id, "new two")]
    assert [r.item_id for r in store.chunks_to_embed(latest_only=False)] == [
        old[0].chunk_id, new[0].chunk_id, new[1].chunk_id]
    assert store.chunks_to_embed(after_id=rows[0].rowid) == rows[1:]
    assert store.chunks_to_embed(limit=1) == rows[:1]
    node(store, "ada", "Ada Lovelace")
    node(store, "bob", "Bob")
    node(store, "mem", "a memory", kind="memory")
    e1 = edge(store, "ada", "works_with", "bob")
    edge(store, "mem", "mentions", "ada")  # not between two entities
    rel = store.relations_to_embed()
    assert [(r.item_id, r.text) for r in rel] == [(e1.id, "Ada Lovelace works with Bob")]
    assert store.relations_to_embed(after_rowid=rel[0].rowid) == []
    ents = store.nodes_to_embed("entity")
    assert [(r.item_id, r.text) for r in ents] == [("ada", "Ada Lovelace"), ("bob", "Bob")]
    assert store.nodes_to_embed("entity", after_rowid=ents[0].rowid, limit=5) == ents[1:]
    assert [r.item_id for r in store.nodes_to_embed("memory")] == ["mem"]
    assert store.nodes_to_embed("skill") == []


@contract("upsert_vectors")
def test_vectors_are_not_checked_against_their_items(store) -> None:
    with store.transaction():  # the embedding layer writes them next to the item, in its transaction
        store.upsert_vectors("chunk", "m", 4, [("no-such-chunk", "h", V1)])
    assert store.vectors_for("chunk", ["no-such-chunk"], "m") == {"no-such-chunk": V1}
