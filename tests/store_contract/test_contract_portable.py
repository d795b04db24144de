"""Contract of :class:`graphmem.store.protocols.PortableStore`: dump, load, backup, check."""

from __future__ import annotations

import pytest

from graphmem.errors import InvalidInput
from graphmem.store.protocols import PortableStore

from .seed import T0, document, edge, evidence, mention, node, raw_sql

PROTOCOL = PortableStore
contract = pytest.mark.contract


# Each backend's way of losing a chunk's full-text entry (the damage check_store must find).
_UNINDEX_ONE_CHUNK = {
    "sqlite": "INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', "
              "(SELECT id FROM chunks WHERE chunk_id = 'd1:v1:c1'), 'Postgres stores orders.')",
    "postgres": "DELETE FROM chunks_fts_docs WHERE rid = (SELECT id FROM chunks WHERE chunk_id = 'd1:v1:c1')",
}
_UNINDEX_ALL_CHUNKS = {"sqlite": "INSERT INTO chunks_fts (chunks_fts) VALUES ('delete-all')",
                       "postgres": "DELETE FROM chunks_fts_docs"}


def _seed(store) -> None:
    _, chunks = document(store, "d1", ["Redis caches sessions.", "Postgres stores orders."])
    node(store, "n1", "redis", aliases=("redis cache",))
    node(store, "n2", "sessions")
    edge(store, "n1", "caches", "n2")
    evidence(store, "edge", "e:n1:caches:n2", chunks[0], "Redis caches sessions.")
    mention(store, "n1", chunks[0], "Redis")
    with store.transaction():
        store.append_event("node.added", "n1", T0, {"name": "redis"})
        store.upsert_vectors("chunk", "m1", 2, [(chunks[0].chunk_id, "h1", b"\x00\x3c\x00\x40")])


def _content(store) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for table, row in store.dump_rows():
        out.setdefault(table, []).append(repr(sorted(row.items())))
    return {t: sorted(rows) for t, rows in out.items()}


@contract("dump_tables", "dump_rows", "load_rows")
def test_dump_then_load_into_an_empty_store_gives_the_same_rows_and_search_works(store, backend, tmp_path) -> None:
    _seed(store)
    tables = store.dump_tables()
    assert {"documents", "chunks", "nodes", "edges", "provenance", "mentions", "events"} <= set(tables)
    assert tables.index("nodes") < tables.index("edges") and tables.index("documents") < tables.index("chunks")
    assert not any("fts" in t for t in tables)
    rows = list(store.dump_rows())
    (tmp_path / "other").mkdir()
    other = backend(tmp_path / "other", None)
    try:
        with other.transaction():
            counts = other.load_rows(rows)
        assert counts["chunks"] == 2 and counts["nodes"] == 2 and counts["provenance"] == 1
        assert other.vectors_for("chunk", ["d1:v1:c0"], "m1") == {"d1:v1:c0": b"\x00\x3c\x00\x40"}  # bytes kept
        assert _content(other) == _content(store)
        # the derived full-text indexes followed the rows
        assert [h.chunk.chunk_id for h in other.search_chunks("postgres", 5)] == ["d1:v1:c1"]
        assert other.check_store() == {"integrity": [], "fts": [], "vectors": [], "evidence": []}
    finally:
        other.close()


@contract("dump_rows", "load_rows")
def test_unknown_tables_and_columns_are_refused_and_load_nothing(store) -> None:
    with pytest.raises(InvalidInput, match="'chunks_fts' is not a dumpable table"):
        list(store.dump_rows(["chunks_fts"]))
    with pytest.raises(InvalidInput, match="'nope' is not a graphmem table"), store.transaction():
        store.load_rows([("kb_meta", {"key": "a", "value": "1"}), ("nope", {"x": 1})])
    with pytest.raises(InvalidInput, match=r"kb_meta\.colour: no such column"), store.transaction():
        store.load_rows([("kb_meta", {"key": "a", "value": "1", "colour": "red"})])
    assert store.get_meta("a") is None


@contract("backup_to")
def test_backup_is_a_consistent_openable_copy(store, backend, tmp_path) -> None:
    _seed(store)
    target = tmp_path / "copy"
    target.mkdir()
    store.backup_to(target / "graph.db")
    with pytest.raises(InvalidInput, match="exists"):
        store.backup_to(target / "graph.db")
    copy = backend(target, "reading a backup")
    try:
        assert _content(copy) == _content(store)
    finally:
        copy.close()


@contract("check_store")
def test_check_finds_index_drift_and_dangling_rows_and_repair_fixes_them(store) -> None:
    _seed(store)
    assert store.check_store() == {"integrity": [], "fts": [], "vectors": [], "evidence": []}
    with store.transaction():  # damage behind the store's back: what a crash or a hand edit might leave
        raw_sql(store, _UNINDEX_ONE_CHUNK[store.backend])
        raw_sql(store, "UPDATE provenance SET chunk_id = 'gone:c9'")
        raw_sql(store, "INSERT INTO vectors (item_kind, item_id, model, dim, text_hash, vec) "
                       "SELECT item_kind, 'gone', model, dim, text_hash, vec FROM vectors")
    found = store.check_store()
    assert found["fts"] and found["evidence"] == ["1 evidence records point at missing chunks"]
    assert found["vectors"] == ["1 chunk vectors of chunks that are gone"]
    again = store.check_store(repair=True)
    assert again == found  # what was found is reported
    assert store.check_store() == {"integrity": [], "fts": [], "vectors": [], "evidence": []}


@contract("replay_to")
def test_replay_to_undoes_every_change_after_the_event(store, backend, tmp_path) -> None:
    node(store, "n1", "redis")
    with store.transaction():
        first = store.append_event("node.added", "n1", T0, {})
    _, chunks = document(store, "d1", ["Redis caches sessions."])
    node(store, "n2", "sessions")
    edge(store, "n1", "caches", "n2")
    mention(store, "n2", chunks[0], "sessions")
    with store.transaction():
        store.append_event("document.added", "d1", T0, {})
        store.delete_node("n1")  # after the last event: undone by a replay to it as well
    (tmp_path / "then").mkdir()
    stats = store.replay_to(tmp_path / "then" / "graph.db", first)
    assert stats["events"] == 1 and stats["undone"] >= 5
    then = backend(tmp_path / "then", None)
    try:
        assert [e.id for e in then.list_events()] == [first]
        assert sorted(n.name for n in then.get_nodes(["n1", "n2"]).values()) == ["redis"]
        assert then.search_chunks("redis", 5) == [] and then.stats()["documents"] == 0
        assert then.check_store() == {"integrity": [], "fts": [], "vectors": [], "evidence": []}
    finally:
        then.close()
    assert store.get_nodes(["n1"]) == {}  # the store itself is as it was
    with pytest.raises(InvalidInput, match="does not exist yet"):
        store.replay_to(tmp_path / "x.db", first + 5)


@contract("check_store")
def test_check_works_on_a_read_only_store(store, open_again) -> None:
    _seed(store)
    reader = open_again("checking")
    assert reader.check_store() == {"integrity": [], "fts": [], "vectors": [], "evidence": []}
    with store.transaction():
        raw_sql(store, _UNINDEX_ALL_CHUNKS[store.backend])
    assert reader.check_store()["fts"] == ["chunks_fts: 0 rows indexed for 2 in chunks"]
