"""Contract of :class:`graphmem.store.protocols.Lifecycle`: transactions, lifecycle, facts, stats."""

from __future__ import annotations

import warnings

import pytest

from graphmem.errors import BackendError, StoreBusy
from graphmem.models import Chunk, Document
from graphmem.store import Store
from graphmem.store.protocols import Lifecycle

from .seed import T0, document, edge, evidence, node

PROTOCOL = Lifecycle
contract = pytest.mark.contract


@contract("transaction")
def test_transaction_commits_together_and_rolls_back_together(store) -> None:
    with store.transaction():
        store.append_event("a", "x", T0, {})
        with store.transaction():  # nested: joins the outer one
            store.append_event("b", "x", T0, {})
    assert [e.type for e in store.list_events()] == ["a", "b"]
    with pytest.raises(RuntimeError), store.transaction():
        store.append_event("c", "x", T0, {})
        with store.transaction():
            store.insert_document(Document("d", 1, "T", "S", "hello world", "h", {}, T0),
                                  [Chunk("d:v1:c0", "d", 1, 0, 0, 11, "hello world")])
        raise RuntimeError("boom")
    assert [e.type for e in store.list_events()] == ["a", "b"]
    assert store.get_document("d") is None and store.search_chunks("hello") == []


def test_a_store_is_every_protocol(store) -> None:
    assert isinstance(store, Store) and isinstance(store, Lifecycle)
    assert isinstance(store.backend, str) and store.backend


@contract("transaction")
def test_a_constraint_failure_leaves_as_backend_error_and_writes_nothing(store) -> None:
    document(store, "d", ["hello world"])
    doc = store.get_document("d")
    with pytest.raises(BackendError), store.transaction():
        store.append_event("first", "x", T0, {})
        store.insert_document(doc, [])  # the same (doc_id, version) again
    assert store.list_events() == []


@contract("transaction", "refuse_write")
def test_read_only_store_refuses_writes_before_anything_runs(store, open_again) -> None:
    document(store, "d", ["hello"])
    ro = open_again(read_only="testing")
    assert ro.read_only is True and ro.read_only_reason == "testing"
    assert store.read_only is False and store.read_only_reason == ""
    store.refuse_write()  # writable: nothing happens
    ran = []
    with pytest.raises(BackendError, match="read-only"), ro.transaction():
        ran.append(1)
    assert ran == []
    with pytest.raises(BackendError, match="testing"):
        ro.refuse_write()
    assert ro.get_document("d") is not None  # reads work


@contract("savepoint")
def test_savepoint_undoes_only_its_unit(store) -> None:
    with store.transaction():
        store.append_event("kept", "x", T0, {})
        with pytest.raises(ValueError), store.savepoint():
            store.append_event("undone", "x", T0, {})
            raise ValueError("unit failed")
        with store.savepoint():
            store.append_event("also kept", "x", T0, {})
    assert [e.type for e in store.list_events()] == ["kept", "also kept"]
    with pytest.raises(BackendError), store.savepoint():
        pass


@contract("on_commit")
def test_on_commit_hooks_run_at_commit_or_undo_at_rollback(store) -> None:
    calls: list[str] = []
    with store.transaction():
        store.on_commit(before=lambda: calls.append("before"), undo=lambda: calls.append("undo"),
                        after=lambda: calls.append("after"))
        assert calls == []
    assert calls == ["before", "after"]
    calls.clear()
    with pytest.raises(RuntimeError), store.transaction():
        store.on_commit(before=lambda: calls.append("before"), undo=lambda: calls.append("undo"),
                        after=lambda: calls.append("after"))
        raise RuntimeError("boom")
    assert calls == ["undo"]
    calls.clear()

    def failing() -> None:
        raise OSError("rename failed")

    with pytest.raises(OSError), store.transaction():
        store.append_event("e", "x", T0, {})
        store.on_commit(before=failing, undo=lambda: calls.append("undo"))
    assert calls == ["undo"] and store.list_events() == []
    with pytest.raises(BackendError):
        store.on_commit(after=lambda: None)


@contract("no_wait", "try_write")
def test_no_wait_and_try_write_when_another_handle_holds_the_write_lock(store, open_again) -> None:
    other = open_again()
    with other.transaction():
        other.append_event("held", "x", T0, {})
        with store.no_wait(), pytest.raises(StoreBusy), store.transaction():
            pass
        assert store.try_write(lambda: store.append_event("skipped", "x", T0, {})) is False
    assert store.try_write(lambda: store.append_event("written", "x", T0, {})) is True
    assert [e.type for e in store.list_events()] == ["held", "written"]
    with pytest.raises(ZeroDivisionError):  # not a storage failure: propagates
        store.try_write(lambda: 1 / 0)


@contract("try_write")
def test_try_write_on_a_read_only_store_is_skipped_silently(store, open_again) -> None:
    ro = open_again(read_only="testing")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ro.try_write(lambda: ro.append_event("x", "x", T0, {})) is False
    assert store.list_events() == []


@contract("close", "applied_migrations")
def test_migrations_are_recorded_once_and_close_is_idempotent(store, open_again) -> None:
    names = store.applied_migrations()
    assert names and len(set(names)) == len(names)
    again = open_again()
    assert again.applied_migrations() == names  # reopening applies nothing new
    again.close()
    again.close()


@contract("get_meta", "set_meta")
def test_meta_set_replace_remove(store) -> None:
    assert store.get_meta("embeddings.model") is None
    with store.transaction():
        store.set_meta("embeddings.model", "m1")
        store.set_meta("embeddings.model", "m2")
    assert store.get_meta("embeddings.model") == "m2"
    with store.transaction():
        store.set_meta("embeddings.model", None)
        store.set_meta("never.set", None)
    assert store.get_meta("embeddings.model") is None


@contract("stats")
def test_stats_count_what_is_stored(store) -> None:
    empty = store.stats()
    assert {k: v for k, v in empty.items() if k != "size_bytes"} == {
        "documents": 0, "document_versions": 0, "chunks": 0, "nodes": {}, "entities": 0, "edges": 0,
        "provenance": 0, "mentions": 0, "entity_types": 0, "relation_types": 0, "events": 0}
    _, chunks = document(store, "d", ["Ada wrote", "notes"])
    document(store, "d", ["Ada wrote more"], version=2)
    node(store, "a", "Ada")
    node(store, "n", "Notes")
    node(store, "m", "a memory", kind="memory")
    e = edge(store, "a", "wrote", "n")
    evidence(store, "edge", e.id, chunks[0])
    with store.transaction():
        store.add_ontology_type("entity", "person", T0)
        store.append_event("x", "y", T0, {})
    s = store.stats()
    assert (s["documents"], s["document_versions"], s["chunks"]) == (1, 2, 3)
    assert s["nodes"] == {"entity": 2, "memory": 1} and s["entities"] == 2
    assert (s["edges"], s["provenance"], s["mentions"]) == (1, 1, 0)
    assert (s["entity_types"], s["relation_types"], s["events"]) == (1, 0, 1)
    assert s["size_bytes"] > 0


@contract("read_stamp", "read_scope")
def test_read_stamp_moves_with_every_write_but_a_searchs_use_counts(store, open_again) -> None:
    # None means "cannot tell" (PostgreSQL): every copy keyed on it checks as before. A value must be
    # equal only while nothing changed: this connection's writes, another connection's commits.
    document(store, "d", ["hello world"])
    first = store.read_stamp()
    if first is None:
        with store.read_scope():
            assert store.read_stamp() is None
        return
    assert store.read_stamp() == first
    with store.transaction():
        assert store.read_stamp() is None  # rows may still roll back
        store.append_event("own", "x", T0, {})
    after_own = store.read_stamp()
    assert after_own != first
    other = open_again()
    with other.transaction():
        other.append_event("elsewhere", "x", T0, {})
    after_other = store.read_stamp()
    assert after_other not in (first, after_own)
    with store.read_scope():  # other connections' commits looked for once, at the start
        with store.read_scope():
            pinned = store.read_stamp()
        with other.transaction():
            other.append_event("mid-search", "x", T0, {})
        assert store.read_stamp() == pinned == after_other
        store.append_event("own in scope", "x", T0, {})  # own writes still show
        assert store.read_stamp() != pinned
    assert store.read_stamp() != pinned  # the commit seen once the scope ends


@contract("text_indexes_due", "compact_text_indexes")
def test_compacting_the_text_indexes_keeps_every_ranking_and_score(store) -> None:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    for i in range(40):  # one transaction each: an FTS5 segment each, before automerge
        document(store, f"d{i}", [f"{words[i % 8]} {words[(i * 3) % 8]} passage {i}", f"more {words[i % 5]} text"],
                 title=f"{words[(i + 1) % 8]} title")
    queries = ["alpha gamma", "theta title", "passage 7", "more text beta"]
    before = [store.rank_chunks(q, k=50) for q in queries]
    # (whether 40 writes left FTS5 enough segments depends on its own merges: tests/test_fts_compaction.py)
    assert set(store.text_indexes_due({"chunks": 80, "names": 0})) <= {"chunks"}
    with store.transaction():
        store.compact_text_indexes(["chunks"])
    assert store.text_indexes_due({"chunks": 80}) == []
    if type(store).__name__ == "SqliteStore":  # merged for real: one segment
        assert store.conn.execute("SELECT count(DISTINCT segid) FROM chunks_fts_idx").fetchone()[0] == 1
    assert [store.rank_chunks(q, k=50) for q in queries] == before
    for call in (lambda: store.text_indexes_due({"passages": 1}), lambda: store.compact_text_indexes(["passages"])):
        with pytest.raises(ValueError, match="no full-text index 'passages'"), store.transaction():
            call()
