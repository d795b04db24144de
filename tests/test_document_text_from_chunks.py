"""A document version whose chunks spell out its whole text is stored with content '' and stitched back from its
chunks on every read (get_document, the documents face, dump_rows / export, point-in-time copies); a version its
chunks do not cover keeps its text. Migration 0021_document_text_from_chunks compacts an existing knowledge base
with the same rule, computed in SQL, and every read stays byte for byte the same."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import graphmem
from clocks import ticking_clock
from graphmem.models import Chunk, Document
from graphmem.store import open_store
from graphmem.store.sqlite.documents import stitch_chunks
from graphmem.store.sqlite.migrations import MIGRATIONS, split_sql

CONFIG = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}, "chunking": {"size": 80, "overlap": 25}}
# Non-ASCII (offsets are code points), runs of spaces and newlines across chunk boundaries.
TEXT = ("Zoë's café — the Dispatch Service 🚚 depends on the Ledger DB.\n\nThe ledger db runs on Postgres,   which the "
        "dispatch service also reads nightly. Bob maintains the Tracker; the tracker feeds the dispatch service "
        "every minute.\n\tÜnïcode naïve façade. " * 3)
ENTITIES = [{"name": "Dispatch Service", "type": "service"}, {"name": "Ledger DB", "type": "database"}]


def _build(home: Path) -> int:
    with graphmem.open(home, config=CONFIG, clock=ticking_clock()) as kb:
        kb.ingest_with_content("d1", "Dispatch", "s1", TEXT, ENTITIES, [])
        kb.ingest_with_content("d1", "Dispatch", "s1", TEXT + " Version two.", ENTITIES, [])
        kb.ingest_with_content("d2", "Short", "s2", "One line, one chunk.", ENTITIES[:1], [])
        kb.ingest_with_content("d3", "Gone", "s3", TEXT[:150], ENTITIES, [])
        point = kb.events.last_id()
        kb.documents.delete("d3")
        # chunks that do not spell the text (a gap, and a tail no chunk covers): the text is kept as given
        with kb.store.transaction():
            kb.store.insert_document(
                Document("d4", 1, "Gaps", "s4", "Head. Middle. Tail.", "h4", {}, "2026-01-01T00:00:00.000Z"),
                [Chunk("d4:v1:c0", "d4", 1, 0, 0, 5, "Head."), Chunk("d4:v1:c1", "d4", 1, 1, 6, 13, "Middle.")])
            # chunks that spell all but a head and a tail: those two are kept
            kb.store.insert_document(
                Document("d5", 1, "Around", "s5", "  Head text tail.\n", "h5", {}, "2026-01-01T00:00:00.000Z"),
                [Chunk("d5:v1:c0", "d5", 1, 0, 2, 11, "Head text"), Chunk("d5:v1:c1", "d5", 1, 1, 7, 17, "text tail.")])
            # a text that starts with the marker of that form is kept whole, marked
            kb.store.insert_document(
                Document("d6", 1, "Nul", "s6", "\x00raw", "h6", {}, "2026-01-01T00:00:00.000Z"),
                [Chunk("d6:v1:c0", "d6", 1, 0, 1, 4, "raw")])
    return point


def _stored(home: Path, decode: bool = True) -> dict[tuple[str, int], Any]:
    """``documents.content`` as stored, the head and tail form decoded (SQL and Python space JSON differently)."""
    conn = sqlite3.connect(home / "graph.db")
    try:
        return {(r[0], r[1]): ["around", *json.loads(r[2][1:])] if decode and r[2].startswith("\x00") else r[2]
                for r in conn.execute("SELECT doc_id, version, content FROM documents")}
    finally:
        conn.close()


def _reads(home: Path, point: int) -> dict[str, Any]:
    with graphmem.open(home, config=CONFIG, clock=ticking_clock()) as kb:
        store = kb.store
        out: dict[str, Any] = {
            "get": [store.get_document(d, v).to_dict()  # type: ignore[union-attr]
                    for d, v in (("d1", 1), ("d1", 2), ("d2", 1), ("d4", 1), ("d5", 1), ("d6", 1))],
            "latest": store.get_document("d1").to_dict(),  # type: ignore[union-attr]
            "face": kb.documents.get("d1").to_dict(),
            "dump": list(store.dump_rows()),
        }
        copy = home.parent / f"{home.name}-then"
        copy.mkdir(exist_ok=True)
        for f in copy.iterdir():
            f.unlink()
        store.replay_to(copy / "graph.db", point)
    then = open_store(copy)
    try:  # the deleted document is back, its text stitched from its restored chunks
        out["then"] = [then.get_document("d3").to_dict(), list(then.dump_rows(["documents"]))]  # type: ignore[union-attr]
    finally:
        then.close()
    return out


def test_stitching_keeps_what_lies_past_each_end() -> None:
    assert stitch_chunks([("abcdef", 0, 6), ("defgh", 3, 8), ("fg", 5, 7), ("ghij", 6, 10)]) == "abcdefghij"
    assert stitch_chunks([]) == ""
    assert stitch_chunks([("ab", 0, 2), ("de", 3, 5)]) == "abde"  # a gap is not filled: such a text is kept


def test_text_spelled_by_chunks_is_stored_once_and_read_back_whole(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    point = _build(home)
    stored = _stored(home)
    assert stored == {("d1", 1): ["around", "", " "], ("d1", 2): "", ("d2", 1): "", ("d4", 1): "Head. Middle. Tail.",
                      ("d5", 1): ["around", "  ", "\n"], ("d6", 1): ["around", "\x00raw"]}
    got = _reads(home, point)
    assert [d["content"] for d in got["get"]] == [TEXT, TEXT + " Version two.", "One line, one chunk.",
                                                 "Head. Middle. Tail.", "  Head text tail.\n", "\x00raw"]
    assert got["latest"]["content"] == got["face"]["content"] == TEXT + " Version two."
    docs = {(r["doc_id"], r["version"]): r["content"] for t, r in got["dump"] if t == "documents"}
    assert docs[("d1", 1)] == TEXT and docs[("d4", 1)] == "Head. Middle. Tail." and docs[("d6", 1)] == "\x00raw"
    assert got["then"][0]["content"] == TEXT[:150]
    assert {r["doc_id"]: r["content"] for _, r in got["then"][1]}["d3"] == TEXT[:150]


def test_migration_compacts_an_old_knowledge_base_and_reads_the_same(tmp_path: Path) -> None:
    new, old = tmp_path / "new", tmp_path / "old"
    point = _build(new)
    assert _build(old) == point
    # What the code before the migration stored: every text in full, the migration not applied.
    full = {(r["doc_id"], r["version"]): r["content"] for t, r in _reads(old, point)["dump"] if t == "documents"}
    conn = sqlite3.connect(old / "graph.db", isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("DROP TRIGGER replay_documents_u")
    conn.executemany("UPDATE documents SET content = ? WHERE doc_id = ? AND version = ?",
                     [(text, d, v) for (d, v), text in full.items()])
    for stmt in split_sql(dict(MIGRATIONS)["0012_replay_log"]):
        if stmt.startswith("CREATE TRIGGER replay_documents_u"):
            conn.execute(stmt)
    conn.execute("DELETE FROM schema_migrations WHERE name = '0021_document_text_from_chunks'")
    conn.execute("COMMIT")
    log = conn.execute("SELECT count(*) FROM replay_log").fetchone()
    conn.close()
    assert _stored(old, decode=False) == full
    got, want = _reads(old, point), _reads(new, point)  # the first opens migrate
    assert _stored(old) == _stored(new)
    assert json.dumps(got, sort_keys=True, default=str) == json.dumps(want, sort_keys=True, default=str)
    conn = sqlite3.connect(old / "graph.db")
    try:  # the compaction is not a change the replay log records, and its trigger is as 0012 made it
        assert conn.execute("SELECT count(*) FROM replay_log").fetchone() == log
        trigger = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'replay_documents_u'").fetchone()[0]
        assert trigger + ";" in split_sql(dict(MIGRATIONS)["0012_replay_log"])
    finally:
        conn.close()
