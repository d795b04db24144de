"""Contract of :class:`graphmem.store.protocols.DocumentStore`: document versions and chunks."""

from __future__ import annotations

import pytest

from graphmem.errors import BackendError, InvalidInput
from graphmem.models import Chunk, Document
from graphmem.store.protocols import DocumentStore

from .seed import T0, document, edge, evidence, mention, node

PROTOCOL = DocumentStore
contract = pytest.mark.contract


@contract("insert_document", "get_document", "document_versions", "list_documents")
def test_versions_latest_and_listing(store) -> None:
    document(store, "b", ["bee text"], metadata={"k": [1, 2]})
    document(store, "a", ["first"], title="A1")
    document(store, "a", ["second", "part"], version=2, title="A2")
    latest = store.get_document("a")
    assert (latest.version, latest.title, latest.content, latest.is_latest, latest.chunk_count) == (
        2, "A2", "second part", True, 2)
    old = store.get_document("a", 1)
    assert (old.content, old.is_latest) == ("first", False)
    assert store.get_document("b").metadata == {"k": [1, 2]}
    assert [(d.version, d.content, d.is_latest) for d in store.document_versions("a")] == [
        (1, "", False), (2, "", True)]
    assert [(d.doc_id, d.version, d.content) for d in store.list_documents()] == [("a", 2, ""), ("b", 1, "")]
    assert [d.doc_id for d in store.list_documents(limit=1)] == ["a"]
    assert [d.doc_id for d in store.list_documents(limit=5, offset=1)] == ["b"]
    # missing ids
    assert store.get_document("zzz") is None
    assert store.get_document("a", 9) is None
    assert store.document_versions("zzz") == []


@contract("insert_document")
def test_insert_document_rejects_a_duplicate_version_or_chunk_id(store) -> None:
    doc, chunks = document(store, "a", ["one"])
    with pytest.raises(BackendError), store.transaction():
        store.insert_document(doc, [])
    twice = Document("b", 1, "T", "S", "x y", "h", {}, T0)
    clash = [Chunk("b:c", "b", 1, 0, 0, 1, "x"), Chunk("b:c", "b", 1, 1, 2, 3, "y")]
    with pytest.raises(BackendError), store.transaction():
        store.insert_document(twice, clash)
    assert store.get_document("b") is None
    assert [d.version for d in store.document_versions("a")] == [1]


@contract("latest_documents", "document_hashes", "document_source_files", "documents_by_source_prefix")
def test_lookups_of_latest_versions(store) -> None:
    document(store, "a", ["one"], source="/docs/a_1.md", metadata={"source_file": "/abs/a_1.md"},
             content_hash="ha1")
    document(store, "a", ["two"], version=2, source="/docs/a_1.md", metadata={"source_file": "/abs/a_1.md"},
             content_hash="ha2")
    document(store, "b", ["bee"], source="/docs/ax1.md", metadata={"source_file": ""})
    document(store, "c", ["see"], source="/other/c.md")
    latest = store.latest_documents(["a", "c", "zzz", "a"])
    assert {k: (d.version, d.content, d.metadata, d.is_latest) for k, d in latest.items()} == {
        "a": (2, "", {}, True), "c": (1, "", {}, True)}
    assert store.document_hashes(["a", "zzz"]) == {"a": "ha2"}
    assert store.document_source_files(["a", "b", "c", "zzz"]) == {"a": "/abs/a_1.md"}
    # % and _ in the prefix are plain characters
    assert sorted(store.documents_by_source_prefix("/docs/")) == [("a", "/docs/a_1.md"), ("b", "/docs/ax1.md")]
    assert store.documents_by_source_prefix("/docs/a_") == [("a", "/docs/a_1.md")]
    assert store.documents_by_source_prefix("%") == []
    hit = store.documents_by_source_prefix("/other")[0]
    assert (hit.doc_id, hit.source) == ("c", "/other/c.md")
    assert store.latest_documents([]) == {} and store.document_hashes([]) == {}


@contract("delete_document")
def test_delete_document_removes_every_version_and_reports_what_lost_evidence(store) -> None:
    _, c1 = document(store, "a", ["Ada wrote notes"])
    _, c2 = document(store, "a", ["Ada wrote more notes"], version=2)
    document(store, "keep", ["other"])
    node(store, "ada", "Ada")
    node(store, "notes", "Notes")
    e = edge(store, "ada", "wrote", "notes")
    evidence(store, "node", "ada", c1[0], "Ada")
    evidence(store, "edge", e.id, c2[0], "Ada wrote")
    mention(store, "ada", c2[0], "Ada")
    with store.transaction():
        lost = store.delete_document("a")
    assert lost == ({"ada"}, {e.id})
    assert (lost.node_ids, lost.edge_ids) == ({"ada"}, {e.id})
    assert store.get_document("a") is None and store.document_versions("a") == []
    assert store.get_chunks([c.chunk_id for c in c1 + c2]) == {}
    assert store.provenance_for("edge", [e.id]) == {} and store.mentions_of(["ada"]) == {}
    assert set(store.get_nodes(["ada", "notes"])) == {"ada", "notes"}  # pruning is the caller's call
    assert store.get_document("keep") is not None
    with store.transaction():
        assert store.delete_document("zzz") == (set(), set())


@contract("get_chunks", "document_chunks", "chunk_info")
def test_chunks_by_id_by_version_and_their_origin(store) -> None:
    _, old = document(store, "a", ["one", "two"], title="Old")
    _, new = document(store, "a", ["three"], version=2, title="New")
    got = store.get_chunks([old[1].chunk_id, new[0].chunk_id, "zzz", old[1].chunk_id])
    assert got == {old[1].chunk_id: old[1], new[0].chunk_id: new[0]}
    assert store.document_chunks("a", 1) == old
    assert store.document_chunks("a", 3) == [] and store.document_chunks("zzz", 1) == []
    info = store.chunk_info([old[0].chunk_id, new[0].chunk_id, "zzz"])
    assert info == {old[0].chunk_id: ("a", 1, "Old", False), new[0].chunk_id: ("a", 2, "New", True)}
    assert info[new[0].chunk_id].is_latest is True
    assert store.get_chunks([]) == {} and store.chunk_info([]) == {}


@contract("search_chunks")
def test_search_chunks_ranks_latest_chunks_and_never_reads_query_syntax(store) -> None:
    _, old = document(store, "a", ["the kayak is red"], title="Boats")
    _, new = document(store, "a", ["the kayak is blue"], version=2, title="Boats")
    _, other = document(store, "b", ["a red bicycle with a red bell"], title="Bikes")
    hits = store.search_chunks("red kayak")
    assert {h.chunk.chunk_id for h in hits} == {other[0].chunk_id, new[0].chunk_id}  # not the old version
    assert all(h.score > 0 for h in hits) and hits == sorted(hits, key=lambda h: -h.score)
    top = store.search_chunks("kayak")[0]
    assert (top.chunk, top.title) == (new[0], "Boats") and "[kayak]" in top.snippet
    assert {h.chunk.chunk_id for h in store.search_chunks("kayak", latest_only=False)} == {
        old[0].chunk_id, new[0].chunk_id}
    assert len(store.search_chunks("red", k=1)) == 1
    assert store.search_chunks("red", k=0) == []
    assert store.search_chunks("?!. --") == []
    assert store.search_chunks("nothing matches") == []
    for hostile in ['"kayak', "kayak*", "NEAR(kayak red)", "kayak -red", "title:kayak", "kayak AND OR NOT"]:
        assert {h.chunk.chunk_id for h in store.search_chunks(hostile)} >= {new[0].chunk_id}


@contract("rank_chunks")
def test_rank_chunks_is_search_chunks_without_the_rows(store) -> None:
    _, old = document(store, "a", ["the kayak is red"], title="Boats")
    document(store, "a", ["the kayak is blue", "a red kayak, a red paddle"], version=2, title="Boats")
    document(store, "b", ["a red bicycle with a red bell", "red", "kayak kayak"], title="Bikes")
    for text, k, latest in [("red kayak", 10, True), ("red kayak", 2, True), ("kayak", 10, False), ("red", 1, True)]:
        full = store.search_chunks(text, k, latest_only=latest)
        for keep in (False, True):
            assert store.rank_chunks(text, k, latest_only=latest, keep_scores=keep) == [
                (h.chunk.chunk_id, h.score) for h in full]
    assert old[0].chunk_id not in {c for c, _ in store.rank_chunks("kayak")}
    assert old[0].chunk_id in {c for c, _ in store.rank_chunks("kayak", latest_only=False)}
    assert len(store.rank_chunks("red kayak")) == 5
    assert store.rank_chunks("red", k=0) == [] and store.rank_chunks("?!. --") == []
    assert store.rank_chunks('"kayak* NEAR(') != []


@contract("chunk_bm25")
def test_chunk_bm25_scores_only_the_given_matching_chunks(store) -> None:
    _, c = document(store, "a", ["red kayak", "blue boat", "red red red"])
    scores = store.chunk_bm25("red kayak", [c[0].chunk_id, c[1].chunk_id, "zzz"])
    assert set(scores) == {c[0].chunk_id} and scores[c[0].chunk_id] > 0
    both = store.chunk_bm25("red", [x.chunk_id for x in c])
    assert set(both) == {c[0].chunk_id, c[2].chunk_id} and both[c[2].chunk_id] > both[c[0].chunk_id]
    assert store.chunk_bm25("?!", [c[0].chunk_id]) == {} and store.chunk_bm25("red", []) == {}


@contract("search_chunks", "rank_chunks", "chunk_bm25")
def test_the_title_is_a_weighted_field_of_every_chunk(store) -> None:
    """BM25F: a word only in a document's title finds every chunk of it; title_weight scales it."""
    _, nolan = document(store, "n", ["He directed Memento.", "He was born in London."], title="Christopher Nolan")
    _, text = document(store, "t", ["Nolan Nolan is a river."], title="A river")
    _, other = document(store, "o", ["Memento is a film by a British director."], title="Memento")
    by_title = {h.chunk.chunk_id for h in store.search_chunks("christopher")}
    assert by_title == {nolan[0].chunk_id, nolan[1].chunk_id}  # a split document: every chunk has the title
    hit = store.search_chunks("christopher")[0]
    assert hit.title == "Christopher Nolan" and "[" not in hit.snippet  # the snippet is the text's
    # title_weight 0: the title adds nothing; a large weight puts the title match first
    assert [h.score for h in store.search_chunks("christopher", title_weight=0.0)] == [0.0, 0.0]
    heavy = [h.chunk.doc_id for h in store.search_chunks("nolan", title_weight=10.0)]
    light = [h.chunk.doc_id for h in store.search_chunks("nolan", title_weight=0.1)]
    assert heavy[0] == "n" and light[0] == "t"
    for w in (0.1, 1.0, 10.0):
        full = store.search_chunks("nolan memento", title_weight=w)
        assert store.rank_chunks("nolan memento", title_weight=w) == [(h.chunk.chunk_id, h.score) for h in full]
        assert store.rank_chunks("nolan memento", title_weight=w, keep_scores=True) == [
            (h.chunk.chunk_id, h.score) for h in full]
        scores = store.chunk_bm25("nolan memento", [h.chunk.chunk_id for h in full], title_weight=w)
        assert scores == pytest.approx({h.chunk.chunk_id: h.score for h in full})
    # the weight changes the scores (memoised answers never leak from one weight to another)
    a = store.chunk_bm25("nolan", [nolan[0].chunk_id], title_weight=1.0)
    b = store.chunk_bm25("nolan", [nolan[0].chunk_id], title_weight=3.0)
    assert b[nolan[0].chunk_id] > a[nolan[0].chunk_id] > 0
    assert other[0].chunk_id in {h.chunk.chunk_id for h in store.search_chunks("memento", title_weight=0.0)}
    for bad in (-1.0, float("nan"), float("inf"), "x"):
        with pytest.raises(InvalidInput, match="title_weight"):
            store.search_chunks("nolan", title_weight=bad)  # type: ignore[arg-type]
