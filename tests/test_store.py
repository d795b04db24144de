"""Store contract (run against every backend) and SQLite specifics: migrations, WAL,
locking, readers never blocked, writers time out cleanly."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import pytest

import graphmem
from conftest import QUICKSTART_ENTITIES, QUICKSTART_RELATIONS, QUICKSTART_TEXT, snapshot
from graphmem.models import Chunk, Document
from graphmem.store import Store, open_store
from graphmem.store.sqlite.migrations import MIGRATIONS

BACKENDS = ["sqlite"]


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path):
    s = open_store(tmp_path) if request.param == "sqlite" else None
    yield s
    s.close()


def _doc(doc_id="d", version=1, content="hello world"):
    return Document(doc_id, version, "T", "S", content, f"h{version}", {}, "2026-01-01T00:00:00Z")


def test_contract_protocol(store):
    assert isinstance(store, Store)


def test_contract_transaction_rolls_back_everything(store):
    with pytest.raises(RuntimeError), store.transaction():
        store.insert_document(_doc(), [Chunk("d:v1:c0", "d", 1, 0, 0, 11, "hello world")])
        store.append_event("document.added", "d", "t", {})
        raise RuntimeError("boom")
    assert store.get_document("d") is None
    assert store.list_events() == []
    assert store.search_chunks("hello") == []


def test_contract_nested_transactions_join(store):
    with store.transaction():
        with store.transaction():
            store.append_event("a", "x", "t", {"k": 1})
        store.append_event("b", "x", "t", {})
    assert [e.type for e in store.list_events()] == ["a", "b"]
    assert store.list_events()[0].payload == {"k": 1}


def test_contract_versions_and_latest(store):
    with store.transaction():
        store.insert_document(_doc(version=1), [])
        store.insert_document(_doc(version=2, content="v2"), [])
    assert store.get_document("d").version == 2
    assert store.get_document("d", 1).is_latest is False
    assert [d.version for d in store.document_versions("d")] == [1, 2]
    assert [d.version for d in store.list_documents()] == [2]


def test_migrations_recorded_and_not_reapplied(tmp_path):
    with graphmem.open(tmp_path / "kb") as kb:
        assert kb.store.applied_migrations() == [name for name, _ in MIGRATIONS]
        kb.ingest_with_content("d", "t", "s", QUICKSTART_TEXT, QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
    with graphmem.open(tmp_path / "kb") as kb:  # reopening migrates nothing and loses nothing
        assert kb.stats()["entities"] == 2
        assert kb.store.applied_migrations() == [name for name, _ in MIGRATIONS]


def test_wal_and_foreign_keys(kb):
    conn = kb.store.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_not_a_database(tmp_path):
    home = tmp_path / "kb"
    home.mkdir()
    (home / "graph.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(graphmem.BackendError, match="not a usable graphmem knowledge base"):
        graphmem.open(home)


def test_home_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(graphmem.InvalidInput, match="not a folder"):
        graphmem.open(tmp_path / "f")


def test_writer_waits_then_fails_cleanly(tmp_path):
    home = tmp_path / "kb"
    with graphmem.open(home, config={"store": {"busy_timeout": 0.2}}) as kb:
        kb.ingest_with_content("d", "t", "s", QUICKSTART_TEXT, QUICKSTART_ENTITIES, QUICKSTART_RELATIONS)
        before = snapshot(kb)
        other = sqlite3.connect(str(home / "graph.db"), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            with pytest.raises(graphmem.StoreBusy, match="busy_timeout"):
                kb.documents.add("A second document.", doc_id="d2")
            # readers are not blocked by the writer
            assert len(kb.query("system crash")["nodes"]) == 2
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert snapshot(kb) == before
        assert kb.documents.add("A second document.", doc_id="d2").status == "added"


def test_reader_does_not_see_uncommitted_writes(tmp_path):
    home = tmp_path / "kb"
    with graphmem.open(home) as writer, graphmem.open(home) as reader:
        with writer.store.transaction():
            writer.documents.add("Uncommitted text about zebras.", doc_id="z")
            assert reader.documents.search("zebras") == []
        assert [h.chunk.doc_id for h in reader.documents.search("zebras")] == ["z"]


WORKER = textwrap.dedent("""
    import sys, graphmem
    home, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    vocab = [f"component {i}" for i in range(40)]
    with graphmem.open(home) as kb:
        for i in range(n):
            a, b = vocab[(i * 7) % 40], vocab[(i * 11 + 3) % 40]
            if a == b:
                b = vocab[(i + 1) % 40]
            text = f"Report {tag}-{i}: {a} depends on {b}. Nothing else to add."
            kb.ingest_with_content(f"{tag}-{i}", f"Report {i}", "gen", text,
                                   [{"name": a, "type": "component"}, {"name": b, "type": "component"}],
                                   [{"source": a, "target": b, "type": "depends on", "confidence": 0.9,
                                     "supporting_text": f"{a} depends on {b}."}])
    print("done", tag)
""")


@pytest.mark.slow
def test_two_processes_ingest_concurrently(tmp_path):
    home = tmp_path / "kb"
    graphmem.open(home).close()
    n = 120
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(home), tag, str(n)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tag in ("p", "q")]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    with graphmem.open(home) as kb:
        ids = {d.doc_id for d in kb.documents.list()}
        assert ids == {f"{t}-{i}" for t in "pq" for i in range(n)}
        s = kb.stats()
        assert s["entities"] <= 40  # shared entities were deduplicated across processes
        assert s["provenance"] == 2 * n * 3  # two entity quotes + one relation quote per document
        assert kb.store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
