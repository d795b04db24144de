"""Fixes of the review of the compact SQLite rows (migrations 0021): point-in-time copies after a chunk id is
reused, one snapshot per document read, loaded rows stored in the compact forms, load order, unknown migrations."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import graphmem
from graphmem.errors import BackendError
from graphmem.ingest.chunking import chunk_spans
from graphmem.models import Chunk, Document
from graphmem.store import open_store

CONFIG: dict[str, Any] = {"embeddings": {"model": "none"}}


def _mentions(store: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in store.conn.execute(
        'SELECT node_id, chunk_id, doc_id, version, start, "end" FROM mentions ORDER BY 1, 2, 5')]


def test_replay_does_not_give_a_deleted_chunk_the_mentions_of_the_chunk_that_reused_its_id(tmp_path: Path) -> None:
    kb = graphmem.open(tmp_path / "kb", config=CONFIG)
    try:
        docs = kb.documents
        docs.ingest_text("Alice Smith works at Acme Corporation in Paris. Alice Smith met Bob Jones.", doc_id="C")
        docs.ingest_text("Bob Jones lives in Berlin. Alice Smith visited Rome.", doc_id="A")
        at_e0, e0 = _mentions(kb.store), kb.events.last_id()
        a_chunk = kb.store.conn.execute("SELECT id FROM chunks WHERE doc_id = 'A'").fetchone()[0]
        docs.delete("A")
        docs.ingest_text("Zed Zulu founded Omega Labs. Alice Smith and Bob Jones joined Omega Labs in Madrid. "
                         "Bob Jones moved to Rome later. Alice Smith wrote about Paris.", doc_id="B")
        # the situation under test: B's first chunk took A's chunk id
        assert kb.store.conn.execute("SELECT doc_id FROM chunks WHERE id = ?", (a_chunk,)).fetchone()[0] == "B"
        with kb.events.replay(e0) as view:
            got = _mentions(view.store)
            text = view.documents.get("A").content
        assert got == at_e0
        assert all(0 <= m[4] < m[5] <= len(text) for m in got if m[2] == "A")
        # the id taken twice more: B deleted, D added (B's mentions come back from the log, then go with B)
        docs.delete("B")
        docs.ingest_text("Carol King met Bob Jones in Lisbon. Alice Smith and Zed Zulu stayed in Oslo.", doc_id="D")
        assert kb.store.conn.execute("SELECT doc_id FROM chunks WHERE id = ?", (a_chunk,)).fetchone()[0] == "D"
        with kb.events.replay(e0) as view:
            assert _mentions(view.store) == at_e0
    finally:
        kb.close()


class _SwapAfterFirstRead:
    """A connection that, right after the first statement reading ``documents`` has started, lets another
    connection delete the document and add it again with another text (what a second process may do)."""

    def __init__(self, conn: Any, swap: Any) -> None:
        self._conn, self._swap = conn, swap

    def _after(self, sql: str) -> None:
        if self._swap is not None and "FROM documents" in sql:
            swap, self._swap = self._swap, None
            swap()

    def execute(self, sql: str, *args: Any) -> Any:
        cur = self._conn.execute(sql, *args)
        self._after(sql)
        return cur

    def cursor(self) -> Any:
        outer = self

        class _Cursor:
            def __init__(self) -> None:
                self._cur = outer._conn.cursor()

            def execute(self, sql: str, *args: Any) -> Any:
                got = self._cur.execute(sql, *args)
                outer._after(sql)
                return got

            def __getattr__(self, name: str) -> Any:
                return getattr(self._cur, name)

            def __setattr__(self, name: str, value: Any) -> None:
                if name == "_cur":
                    object.__setattr__(self, name, value)
                else:
                    setattr(self._cur, name, value)

        return _Cursor()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def test_get_document_reads_its_row_and_chunks_from_one_snapshot(tmp_path: Path) -> None:
    first = "  Alice Smith visited Paris in spring. " * 30 + "\n"
    second = "\tBob Jones wrote about Rome and Madrid. " * 25 + "\r\n"
    reader = graphmem.open(tmp_path / "kb", config=CONFIG)
    writer = graphmem.open(tmp_path / "kb", config=CONFIG)
    try:
        reader.documents.add(first, doc_id="d", title="d")
        assert reader.store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0] > 2  # text kept in chunks

        def swap() -> None:
            writer.documents.delete("d")
            writer.documents.add(second, doc_id="d", title="d")

        real = reader.store.conn
        reader.store.conn = _SwapAfterFirstRead(real, swap)
        try:
            got = reader.store.get_document("d")
        finally:
            reader.store.conn = real
        assert got is not None and got.content == first  # the state the read began in, whole
        assert reader.store.get_document("d").content == second  # and the next read sees the new one
    finally:
        writer.close()
        reader.close()


def test_adding_an_unchanged_document_compares_hashes_without_rebuilding_its_text(tmp_path: Path,
                                                                                   monkeypatch: Any) -> None:
    kb = graphmem.open(tmp_path / "kb", config=CONFIG)
    try:
        text = "Alice Smith visited Paris in spring. " * 40
        kb.documents.add(text, doc_id="d", title="d")

        def refuse(*_: Any, **__: Any) -> None:
            raise AssertionError("get_document rebuilt the text only to compare its hash")

        monkeypatch.setattr(type(kb.store), "get_document", refuse)
        again = kb.documents.add(text, doc_id="d", title="d")
        assert (again.status, again.version) == ("unchanged", 1)
        changed = kb.documents.add(text + " Bob too.", doc_id="d", title="d")
        assert (changed.status, changed.version) == ("new_version", 2)
    finally:
        kb.close()


def test_hub_mention_reads_seek_the_node_chunk_index(tmp_path: Path) -> None:
    kb = graphmem.open(tmp_path / "kb", config=CONFIG)
    try:
        for i in range(12):
            kb.documents.ingest_text(f"Alice Smith visited Paris, day {i}. Bob Jones stayed home.", doc_id=f"d{i}")
        store = kb.store
        hub = store.conn.execute("SELECT node_id FROM mention_rows GROUP BY node_id ORDER BY count(*) DESC"
                                 " LIMIT 1").fetchone()[0]
        assert store.entity_chunk_counts([hub])[hub] == 12
        seen: list[str] = []
        store.conn.set_trace_callback(seen.append)
        store._count_cache = (None, {})  # count again, through SQL
        try:
            got = store.entities_chunks([hub], 3)[hub]
        finally:
            store.conn.set_trace_callback(None)
        assert [c.chunk_id for c in got] == ["d11:v1:c0", "d10:v1:c0", "d9:v1:c0"]  # newest first
        want = dict(store.conn.execute("SELECT chunk_id, min(start) FROM mentions WHERE node_id = ? GROUP BY chunk_id",
                                       (hub,)).fetchall())
        assert [c.first for c in got] == [want[c.chunk_id] for c in got]
        plans = {}
        for sql in seen:
            if "mention_rows" in sql and ("min(" in sql or "count(DISTINCT" in sql):
                plans[sql] = " ; ".join(r[3] for r in store.conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert len(plans) == 2, seen
        for plan in plans.values():
            assert "mention_rows_node_chunk" in plan and "TEMP B-TREE" not in plan, plan
        assert any("(node_id=? AND chunk=?)" in plan for plan in plans.values())
    finally:
        kb.close()


TEXTS = {
    "a": "  Alice Smith works at Acme Corporation in Paris. " * 6 + "\n",
    "b": ("Bob Jones lives in Berlin. Alice Smith visited Rome with Bob Jones. " * 5).strip(),
}
COMPARED = ["documents", "chunks", "nodes", "mentions", "events"]


def _source(home: Path) -> Any:
    kb = graphmem.open(home, config=CONFIG)
    for doc_id, text in TEXTS.items():
        kb.documents.ingest_text(text, doc_id=doc_id, title=doc_id)
    # written below the ingest path (which refuses NUL): a text that starts with NUL, in chunks
    text = "\x00lead then words " * 20
    with kb.store.transaction():
        kb.store.insert_document(Document("z", 1, "z", "z", text, "hz", {}, "2026-01-01T00:00:00.000Z"),
                                 [Chunk(f"z:v1:c{i}", "z", 1, i, s, e, text[s:e])
                                  for i, (s, e) in enumerate(chunk_spans(text, 100, 20))])
    return kb


def _stored(store: Any) -> tuple[dict[str, str], int, int]:
    forms = {r[0]: ("''" if r[1] == "" else "nul" if r[1].startswith("\x00") else "full")
             for r in store.conn.execute("SELECT doc_id, content FROM documents")}
    shaped, total = store.conn.execute("SELECT count(shape), count(*) FROM events").fetchone()
    return forms, shaped, total


def _copy(rows: list[tuple[str, dict[str, Any]]], home: Path) -> Any:
    kb = graphmem.open(home, config=CONFIG)
    kb.store.conn.execute("DELETE FROM events")  # the copy holds the source's log only
    with kb.store.transaction():
        kb.store.load_rows(rows)
    return kb


def test_loaded_rows_are_stored_compactly_and_read_back_as_dumped(tmp_path: Path) -> None:
    src = _source(tmp_path / "src")
    copy = None
    try:
        rows = list(src.store.dump_rows())
        copy = _copy(rows, tmp_path / "copy")
        assert copy.store.get_document("z").content == "\x00lead then words " * 20
        assert {d: copy.store.get_document(d).content for d in TEXTS} == TEXTS
        forms, shaped, total = _stored(copy.store)
        assert forms == {"a": "nul", "b": "''", "z": "nul"} == _stored(src.store)[0]
        assert total == _stored(src.store)[2] and shaped >= _stored(src.store)[1] > 0
        assert list(copy.store.dump_rows(COMPARED)) == list(src.store.dump_rows(COMPARED))
        assert copy.store.list_events(limit=1000) == src.store.list_events(limit=1000)
    finally:
        src.close()
        if copy is not None:
            copy.close()


def test_rows_load_in_any_order_mentions_and_documents_before_their_chunks(tmp_path: Path) -> None:
    src = _source(tmp_path / "src")
    copy = None
    try:
        rows = list(src.store.dump_rows())
        order = {"mentions": 0, "documents": 2, "chunks": 3}
        reordered = sorted(rows, key=lambda r: order.get(r[0], 1))
        assert [t for t, _ in reordered].index("mentions") < [t for t, _ in reordered].index("chunks")
        copy = _copy(reordered, tmp_path / "copy")
        assert _stored(copy.store)[0] == {"a": "nul", "b": "''", "z": "nul"}
        assert sorted(copy.store.dump_rows(COMPARED), key=repr) == sorted(src.store.dump_rows(COMPARED), key=repr)
    finally:
        src.close()
        if copy is not None:
            copy.close()


@pytest.mark.parametrize("read_only", [False, True])
def test_a_knowledge_base_with_a_migration_this_code_does_not_know_is_refused(tmp_path: Path,
                                                                              read_only: bool) -> None:
    graphmem.open(tmp_path / "kb", config=CONFIG).close()
    db = tmp_path / "kb" / "graph.db"
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO schema_migrations (name, applied_at) VALUES ('0099_from_the_future', 'now')")
    before = conn.execute("SELECT count(*) FROM schema_migrations").fetchone()
    conn.close()
    with pytest.raises(BackendError) as err:
        open_store(tmp_path / "kb", read_only="a test" if read_only else None)
    assert "'0099_from_the_future'" in str(err.value) and "upgrade graphmem" in str(err.value)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone() == before  # nothing written
    conn.close()
    cli = subprocess.run([sys.executable, "-m", "graphmem", "--home", str(tmp_path / "kb"), "stats", "--json"],
                         capture_output=True, text=True)
    assert cli.returncode != 0 and "Traceback" not in cli.stderr
    assert "0099_from_the_future" in cli.stderr + cli.stdout and "upgrade graphmem" in cli.stderr + cli.stdout


def test_stats_count_the_mention_rows_without_joining_their_chunks(tmp_path: Path) -> None:
    kb = graphmem.open(tmp_path / "kb", config=CONFIG)
    try:
        for doc_id, text in TEXTS.items():
            kb.documents.ingest_text(text, doc_id=doc_id, title=doc_id)
        kb.documents.delete("a")  # its mentions go with its chunks
        seen: list[str] = []
        kb.store.conn.set_trace_callback(seen.append)
        try:
            got = kb.store.stats()["mentions"]
        finally:
            kb.store.conn.set_trace_callback(None)
        assert got == kb.store.conn.execute("SELECT count(*) FROM mentions").fetchone()[0] > 0
        counted = [sql for sql in seen if "count(*)" in sql and "mention" in sql]
        assert counted == ["SELECT count(*) FROM mention_rows"]
    finally:
        kb.close()
