"""Migration 0013: a knowledge base made before it gets its chunks' titles indexed."""

from __future__ import annotations

import sqlite3

from graphmem.store import open_store
from graphmem.store.sqlite.migrations import MIGRATIONS, split_sql


def _old_kb(path) -> None:
    """A graph.db as the code before 0013 left it: every migration up to 0012, two chunks."""
    conn = sqlite3.connect(path / "graph.db")
    conn.execute("CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, script in MIGRATIONS:
        if name.startswith("0013"):
            break
        for stmt in split_sql(script):
            conn.execute(stmt)
        conn.execute("INSERT INTO schema_migrations VALUES (?, datetime('now'))", (name,))
    conn.execute("INSERT INTO documents (doc_id, version, title, source, content, content_hash, created_at)"
                 " VALUES ('d', 1, 'Christopher Nolan', 's', 'He directed Memento. Born in London.', 'h', 't')")
    conn.executemany('INSERT INTO chunks (chunk_id, doc_id, version, ordinal, start, "end", text)'
                     " VALUES (?, 'd', 1, ?, ?, ?, ?)",
                     [("d:c0", 0, 0, 20, "He directed Memento."), ("d:c1", 1, 21, 36, "Born in London.")])
    conn.commit()
    conn.close()


def test_an_existing_kb_gets_its_titles_indexed_by_the_migration(tmp_path) -> None:
    _old_kb(tmp_path)
    store = open_store(tmp_path)
    try:
        assert "0013_chunk_titles" in store.applied_migrations()
        assert {h.chunk.chunk_id for h in store.search_chunks("christopher")} == {"d:c0", "d:c1"}
        assert {h.chunk.chunk_id for h in store.search_chunks("memento")} == {"d:c0"}
        assert store.check_store()["fts"] == []  # the rebuilt index agrees with the rows
        with store.transaction():  # deleting keeps the index in step (the trigger removes the title too)
            store.delete_document("d")
        assert store.search_chunks("christopher") == [] and store.check_store()["fts"] == []
    finally:
        store.close()


def test_a_chunk_loaded_without_its_title_takes_its_documents(tmp_path) -> None:
    """A dump from before 0013 has no chunks.title: the rows load, and the title is indexed."""
    store = open_store(tmp_path)
    try:
        with store.transaction():
            store.load_rows([
                ("documents", {"rowid_": 1, "doc_id": "d", "version": 1, "title": "Ada Lovelace", "source": "s",
                               "content": "She wrote notes.", "content_hash": "h", "created_at": "t"}),
                ("chunks", {"id": 1, "chunk_id": "d:c0", "doc_id": "d", "version": 1, "ordinal": 0, "start": 0,
                            "end": 16, "text": "She wrote notes."}),
            ])
        assert [h.chunk.chunk_id for h in store.search_chunks("lovelace")] == ["d:c0"]
        assert store.check_store()["fts"] == []
    finally:
        store.close()
