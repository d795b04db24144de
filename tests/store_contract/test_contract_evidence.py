"""Contract of :class:`graphmem.store.protocols.EvidenceStore`: provenance and mentions."""

from __future__ import annotations

import pytest

from graphmem.errors import BackendError
from graphmem.models import Mention, Provenance
from graphmem.store.protocols import EvidenceStore

from .seed import T0, document, edge, evidence, mention, node

PROTOCOL = EvidenceStore
contract = pytest.mark.contract


@contract("insert_provenance", "provenance_for", "first_provenance", "count_provenance")
def test_evidence_records_per_item(store) -> None:
    _, c = document(store, "d", ["Ada wrote notes", "Ada again"])
    node(store, "ada", "Ada")
    first = evidence(store, "node", "ada", c[0], "Ada")
    second = evidence(store, "node", "ada", c[1], "Ada", confidence=None)
    evidence(store, "edge", "ada", c[1], "again")  # same id, other kind: separate
    got = store.provenance_for("node", ["ada", "zzz", "ada"])
    assert list(got) == ["ada"]
    assert [(p.chunk_id, p.start, p.end, p.text, p.confidence) for p in got["ada"]] == [
        (c[1].chunk_id, second.start, second.end, "Ada", None), (c[0].chunk_id, 0, 3, "Ada", 0.9)]  # newest first
    assert all(p.id is not None and p.created_at == T0 for p in got["ada"])
    assert [p.chunk_id for p in store.provenance_for("node", ["ada"], limit_per_item=1)["ada"]] == [c[1].chunk_id]
    assert store.first_provenance("node", ["ada", "zzz"])["ada"].chunk_id == first.chunk_id
    assert store.count_provenance("node", ["ada", "zzz"]) == {"ada": 2}
    assert store.count_provenance("edge", ["ada"]) == {"ada": 1}
    assert store.provenance_for("node", []) == {} and store.first_provenance("node", []) == {}


@contract("insert_provenance")
def test_insert_provenance_rejects_a_missing_document_version(store) -> None:
    document(store, "d", ["text"])
    bad = Provenance("node", "n", "d", 7, None, None, None, "text", created_at=T0)
    with pytest.raises(BackendError), store.transaction():
        store.insert_provenance([Provenance("node", "n", "d", 1, None, None, None, "text", created_at=T0), bad])
    assert store.provenance_for("node", ["n"]) == {}


@contract("prune_unsupported")
def test_prune_unsupported_removes_what_has_no_evidence_left(store) -> None:
    _, c = document(store, "d", ["a b c d"])
    for n in "abcd":
        node(store, n, n.upper())
    node(store, "hand", "Hand", manual=True)
    supported = edge(store, "a", "r", "b", 0.8)
    bare = edge(store, "c", "r", "d", 0.8)
    handmade = edge(store, "hand", "r", "a", 0.8, manual=True)
    evidence(store, "edge", supported.id, c[0], "a b", confidence=0.65)
    evidence(store, "node", "a", c[0], "a")
    with store.transaction():
        removed = store.prune_unsupported(["b", "hand", "zzz"], [supported.id, bare.id, handmade.id, "zzz"])
    assert (sorted(removed.node_ids), removed.edge_ids) == (["c", "d"], [bare.id])
    assert removed == (removed.node_ids, removed.edge_ids)
    # b keeps its edge; hand is manual; the ends of the removed edge went with it
    assert set(store.get_nodes("abcd") | store.get_nodes(["hand"])) == {"a", "b", "hand"}
    assert store.get_edges([supported.id])[supported.id].confidence == 0.65  # its best remaining evidence
    with store.transaction():
        assert store.prune_unsupported([], []) == ([], [])


@contract("insert_mentions", "mentions_of", "chunk_mentions", "chunk_entities", "entity_chunk_counts")
def test_mentions_per_entity_and_per_chunk(store) -> None:
    _, c = document(store, "d", ["Ada met Bob", "Ada left"])
    node(store, "ada", "Ada")
    node(store, "bob", "Bob")
    m1 = mention(store, "ada", c[0], "Ada")
    m2 = mention(store, "bob", c[0], "Bob")
    m3 = mention(store, "ada", c[1], "Ada")
    m4 = Mention("ada", c[0].chunk_id, "d", 1, 0, 3)  # the same occurrence twice is kept twice
    with store.transaction():
        store.insert_mentions([m4])
    assert store.mentions_of(["ada", "zzz"]) == {"ada": [m4, m3, m1]}
    assert store.mentions_of(["ada"], limit_per_node=1) == {"ada": [m4]}
    assert store.chunk_mentions([c[0].chunk_id, "zzz"]) == {c[0].chunk_id: [m1, m2, m4]}
    assert {k: sorted(v) for k, v in store.chunk_entities([c[0].chunk_id, c[1].chunk_id]).items()} == {
        c[0].chunk_id: ["ada", "bob"], c[1].chunk_id: ["ada"]}
    assert store.entity_chunk_counts(["ada", "bob", "zzz"]) == {"ada": 2, "bob": 1}
    assert store.mentions_of([]) == {} and store.chunk_entities([]) == {} and store.entity_chunk_counts([]) == {}


@contract("insert_mentions")
def test_insert_mentions_rejects_a_missing_node_or_chunk(store) -> None:
    _, c = document(store, "d", ["Ada"])
    node(store, "ada", "Ada")
    for bad in (Mention("nobody", c[0].chunk_id, "d", 1, 0, 3), Mention("ada", "no-chunk", "d", 1, 0, 3)):
        with pytest.raises(BackendError), store.transaction():
            store.insert_mentions([Mention("ada", c[0].chunk_id, "d", 1, 0, 3), bad])
    assert store.mentions_of(["ada"]) == {}


@contract("entities_chunks")
def test_entities_chunks_reads_latest_versions_most_recent_first(store) -> None:
    _, old = document(store, "d", ["Ada old"])
    _, new = document(store, "d", ["x Ada one", "Ada two Ada"], version=2)
    node(store, "ada", "Ada")
    mention(store, "ada", old[0], "Ada")
    mention(store, "ada", new[0], "Ada")
    mention(store, "ada", new[1], "Ada")
    with store.transaction():  # a second, later occurrence in the second chunk
        store.insert_mentions([Mention("ada", new[1].chunk_id, "d", 2, new[1].start + 8, new[1].start + 11)])
    got = store.entities_chunks(["ada", "zzz"], 5)
    assert got == {"ada": [(new[1].chunk_id, new[1].start), (new[0].chunk_id, new[0].start + 2)]}
    assert got["ada"][0].chunk_id == new[1].chunk_id and got["ada"][0].first == new[1].start
    assert store.entities_chunks(["ada"], 1) == {"ada": [(new[1].chunk_id, new[1].start)]}
    assert store.entities_chunks([], 3) == {}


@contract("node_documents", "document_claims", "document_claim_ids", "document_entity_ids", "edges_supported_by")
def test_per_document_evidence(store) -> None:
    _, a1 = document(store, "a", ["Ada wrote notes"])
    _, a2 = document(store, "a", ["Ada wrote notes again"], version=2)
    _, b1 = document(store, "b", ["Bob read notes"])
    for n, name in (("ada", "Ada"), ("notes", "Notes"), ("bob", "Bob")):
        node(store, n, name)
    wrote = edge(store, "ada", "wrote", "notes")
    read = edge(store, "bob", "read", "notes")
    evidence(store, "node", "notes", a1[0], "notes")
    evidence(store, "node", "ada", a1[0], "Ada")
    evidence(store, "node", "ada", a2[0], "Ada")
    evidence(store, "node", "notes", b1[0], "notes")
    p_wrote = evidence(store, "edge", wrote.id, a1[0], "Ada wrote")
    evidence(store, "edge", wrote.id, a1[0], "wrote notes")
    evidence(store, "edge", read.id, b1[0], "Bob read")
    docs = store.node_documents("notes", 5)
    assert docs == ([("a", 1), ("b", 1)], False) and docs.documents[0].doc_id == "a"
    assert store.node_documents("ada", 5) == ([("a", 2)], False)  # the highest version naming it
    assert store.node_documents("notes", 1) == ([("a", 1)], True)
    assert store.node_documents("zzz", 5) == ([], False)
    claims = store.document_claims("a", 1, 10)
    assert [(cl.edge.id, cl.evidence.text, cl.evidence.start) for cl in claims] == [
        (wrote.id, "Ada wrote", p_wrote.start)]  # each edge once, with its first evidence
    assert claims[0].evidence.id == store.first_provenance("edge", [wrote.id])[wrote.id].id
    assert claims[0].evidence.chunk_id == a1[0].chunk_id and claims[0].edge == wrote
    assert store.document_claims("a", 2, 10) == [] and store.document_claims("zzz", 1, 10) == []
    assert store.document_claim_ids("a", 1) == {wrote.id} and store.document_claim_ids("a", 2) == set()
    assert store.document_entity_ids("a", 1, 10) == ["notes", "ada"]  # in the order first named
    assert store.document_entity_ids("a", 1, 1) == ["notes"] and store.document_entity_ids("zzz", 1, 5) == []
    assert store.edges_supported_by([wrote.id, read.id, "zzz"], "b", 1) == {read.id}
    assert store.edges_supported_by([], "a", 1) == set()


@contract("entity_chunk_counts")
def test_entity_chunk_counts_follow_every_write(store, open_again) -> None:
    """Counts may be kept between calls, never past a write (this connection's or another's)."""
    _, c = document(store, "d", ["Ada met Bob", "Ada left", "Bob stayed"])
    node(store, "ada", "Ada")
    node(store, "bob", "Bob")
    mention(store, "ada", c[0], "Ada")
    assert store.entity_chunk_counts(["ada", "bob"]) == {"ada": 1}
    mention(store, "ada", c[1], "Ada")
    mention(store, "bob", c[2], "Bob")
    assert store.entity_chunk_counts(["ada", "bob"]) == {"ada": 2, "bob": 1}
    with store.transaction():  # uncommitted writes of the same transaction count too
        store.insert_mentions([Mention("bob", c[0].chunk_id, "d", 1, 8, 11)])
        assert store.entity_chunk_counts(["bob"]) == {"bob": 2}
    assert store.entity_chunk_counts(["bob", "ada"]) == {"ada": 2, "bob": 2}
    other = open_again()  # a write through another handle on the same knowledge base
    mention(other, "ada", c[2], "Bob")
    assert store.entity_chunk_counts(["ada"]) == {"ada": 3}


@contract("entities_chunks")
def test_entities_chunks_of_a_hub_stop_at_the_limit_newest_first(store) -> None:
    _, c = document(store, "d", [f"Hub {i} and Hub" for i in range(30)])
    node(store, "hub", "Hub")
    node(store, "solo", "Solo")
    for ch in c:  # two mentions per chunk, the second one later in the chunk
        with store.transaction():
            store.insert_mentions([Mention("hub", ch.chunk_id, "d", 1, ch.start + 8, ch.start + 11),
                                   Mention("hub", ch.chunk_id, "d", 1, ch.start, ch.start + 3)])
    mention(store, "solo", c[3], "Hub")
    with store.transaction():  # chunk 5 mentioned again, last: it becomes the newest
        store.insert_mentions([Mention("hub", c[5].chunk_id, "d", 1, c[5].start + 8, c[5].start + 11)])
    _, gone = document(store, "e", ["Hub was here"])
    document(store, "e", ["nobody now"], version=2)
    mention(store, "hub", gone[0], "Hub")  # the newest mention, in a version that is no longer latest
    got = store.entities_chunks(["solo", "hub", "nobody"], 4)
    assert got == {"hub": [(c[5].chunk_id, c[5].start), (c[29].chunk_id, c[29].start),
                           (c[28].chunk_id, c[28].start), (c[27].chunk_id, c[27].start)],
                   "solo": [(c[3].chunk_id, c[3].start)]}
    assert store.entities_chunks(["hub"], 0) == {}
    assert len(store.entities_chunks(["hub"], 100)["hub"]) == 30
