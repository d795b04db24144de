"""Fixes of the review of the compact SQLite rows (migrations 0021): point-in-time copies after a chunk id is
reused, one snapshot per document read, loaded rows stored in the compact forms, load order, unknown migrations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import graphmem

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
    finally:
        kb.close()
