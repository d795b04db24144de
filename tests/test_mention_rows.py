"""Migration 0021: mentions stored as compact rows naming their chunk by its integer key, shown through the
``mentions`` view with the columns and rows of the table they replace. A knowledge base from before it
(mentions table, its indexes and replay triggers, replay-log records naming chunks by their text id) migrates with
nothing lost: every mention read, the stats, ``dump_rows`` and the point-in-time copies of the replay log are the
same, byte for byte, as those of the same history written with the migration in place."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import graphmem
from clocks import ticking_clock
from graphmem.errors import BackendError
from graphmem.models import Mention
from graphmem.store import open_store
from graphmem.store.sqlite.migrations import MIGRATIONS, split_sql
from kb_history import forget_migrations, point_copies

CONFIG = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}, "chunking": {"size": 90, "overlap": 20}}
TEXT = ("The Dispatch Service depends on the Ledger DB. The Ledger DB runs on Postgres. Bob maintains the "
        "Tracker; the Tracker feeds the Dispatch Service. Zoë's café uses Postgres too, like the Tracker.")
ENTITIES = [{"name": n, "type": t} for n, t in (("Dispatch Service", "service"), ("Ledger DB", "database"),
                                                ("Postgres", "technology"), ("Tracker", "service"),
                                                ("Bob", "person"), ("Zoë's café", "organization"))]
RELATIONS = [
    {"source": "Dispatch Service", "target": "Ledger DB", "type": "depends on", "confidence": 0.9,
     "supporting_text": "The Dispatch Service depends on the Ledger DB."},
    {"source": "Tracker", "target": "Dispatch Service", "type": "feeds", "confidence": 0.7,
     "supporting_text": "the Tracker feeds the Dispatch Service"},
]


def _history(home: Path) -> list[int]:
    """Versions, a merge (mentions updated), a delete and a re-ingest of the same document (its chunk ids come
    back under new keys): the event id after each step."""
    points = []
    with graphmem.open(home, config=CONFIG, clock=ticking_clock()) as kb:
        kb.ingest_with_content("d1", "Dispatch", "s1", TEXT, ENTITIES, RELATIONS)
        kb.ingest_with_content("d2", "Tracker notes", "s2", TEXT[60:], ENTITIES[2:], [])
        points.append(kb.events.last_id())
        kb.ingest_with_content("d1", "Dispatch", "s1", TEXT + " The Tracker is new.", ENTITIES, RELATIONS)
        kb.graph.merge("Ledger DB", "Postgres")
        points.append(kb.events.last_id())
        kb.documents.delete("d2")
        points.append(kb.events.last_id())
        kb.ingest_with_content("d2", "Tracker notes", "s2", TEXT[60:], ENTITIES[2:], [])
        points.append(kb.events.last_id())
    return points


def _downgrade(db: Path) -> None:
    """Turn a knowledge base into what the code before 0021 left for the same history: the mentions table, its
    indexes and replay triggers as 0002, 0010 and 0012 made them, the rows in it, and the replay log's mention
    records in their old form (the chunk by its text id, document and version)."""
    scripts = dict(MIGRATIONS)
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN")
        rows = conn.execute("SELECT * FROM mentions ORDER BY id").fetchall()
        chunks = {r[0]: r[1:] for r in conn.execute("SELECT id, chunk_id, doc_id, version FROM chunks")}
        chunks |= {json.loads(o)["id"]: (json.loads(o)["chunk_id"], json.loads(o)["doc_id"], json.loads(o)["version"])
                   for (o,) in conn.execute("SELECT old FROM replay_log WHERE tbl = 'chunks' AND op = 'D'")}
        log = []
        for seq, old in conn.execute("SELECT seq, old FROM replay_log WHERE tbl = 'mention_rows'").fetchall():
            m = json.loads(old)
            cid, doc, version = chunks[m["chunk"]]
            log.append((json.dumps({"rowid": m["rowid"], "id": m["id"], "node_id": m["node_id"], "chunk_id": cid,
                                    "doc_id": doc, "version": version, "start": m["start"], "end": m["end"]},
                                   separators=(",", ":"), ensure_ascii=False), seq))
        conn.execute("DROP VIEW mentions")
        conn.execute("DROP TABLE mention_rows")
        for stmt in [*split_sql(scripts["0002_mentions"]), *split_sql(scripts["0010_mentions_node_recent"]),
                     *(s for s in split_sql(scripts["0012_replay_log"]) if " ON mentions " in s)]:
            conn.execute(stmt)
        conn.executemany('INSERT INTO mentions (id, node_id, chunk_id, doc_id, version, start, "end")'
                         " VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        conn.executemany("UPDATE replay_log SET tbl = 'mentions', old = ? WHERE seq = ?", log)
        # an index on mention_rows since (0027) went with the table: a KB from before 0021 had none of them
        forget_migrations(conn, "0021_mention_rows", "0027_mention_rows_node_chunk")
    finally:
        conn.close()


def _reads(home: Path, points: list[int]) -> dict[str, Any]:
    """Every read of mentions, the stats, the whole dump, and the dump of each point-in-time copy."""
    store = open_store(home)
    try:
        nodes = [r[0] for r in store.conn.execute("SELECT id FROM nodes ORDER BY id")]  # type: ignore[attr-defined]
        chunks = [r[0] for r in store.conn.execute("SELECT chunk_id FROM chunks ORDER BY id")]  # type: ignore[attr-defined]
        stats = store.stats()
        stats.pop("size_bytes")
        out: dict[str, Any] = {
            "mentions_of": {k: [m.__dict__ for m in v] for k, v in store.mentions_of(nodes).items()},
            "mentions_of_1": {k: [m.__dict__ for m in v] for k, v in store.mentions_of(nodes, 1).items()},
            "chunk_mentions": {k: [m.__dict__ for m in v] for k, v in store.chunk_mentions(chunks).items()},
            "entities_chunks": {k: [tuple(c) for c in v] for k, v in store.entities_chunks(nodes, 2).items()},
            "entities_chunks_all": {k: [tuple(c) for c in v] for k, v in store.entities_chunks(nodes, 99).items()},
            "entity_chunks": {n: store.entity_chunks(n, 5) for n in nodes},
            "chunk_entities": store.chunk_entities(chunks),
            "counts": store.entity_chunk_counts(nodes),
            "stats": stats,
            "dump": list(store.dump_rows()),
            "tables": store.dump_tables(),
            "check": store.check_store(),
        }
        for ev, replayed, then in point_copies(store, home, points):
            out[f"replayed_{ev}"] = replayed
            out[f"dump_{ev}"] = list(then.dump_rows())
            out[f"mentions_{ev}"] = {k: [m.__dict__ for m in v] for k, v in then.mentions_of(nodes).items()}
        return out
    finally:
        store.close()


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path, list[int]]:
    """The same history twice: once left as written, once turned into a knowledge base from before 0021."""
    new, old = tmp_path / "new", tmp_path / "old"
    points = _history(new)
    assert _history(old) == points
    _downgrade(old / "graph.db")
    return new, old, points


def test_an_old_knowledge_base_migrates_with_nothing_lost(homes: tuple[Path, Path, list[int]]) -> None:
    new, old, points = homes
    conn = sqlite3.connect(old / "graph.db")
    try:  # the downgrade left the old schema, with replay records of mention updates and deletes
        assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'mentions'").fetchone() == ("table",)
        logged = conn.execute("SELECT op, count(*) FROM replay_log WHERE tbl = 'mentions' GROUP BY op").fetchall()
        assert dict(logged).keys() == {"U", "D"}
    finally:
        conn.close()
    want = _reads(new, points)
    got = _reads(old, points)  # opening migrates
    assert want["mentions_of"] and want["entities_chunks"] and want["stats"]["mentions"] > 20
    assert want["check"] == {"integrity": [], "fts": [], "vectors": [], "evidence": []}
    # the point before the delete of d2 has its mentions back (restored from the log, under their old chunk keys)
    before_delete = {m["chunk_id"] for v in want[f"mentions_{points[1]}"].values() for m in v}
    assert {c for c in before_delete if c.startswith("d2:")}
    assert json.dumps(got, sort_keys=True, default=str) == json.dumps(want, sort_keys=True, default=str)
    conn = sqlite3.connect(old / "graph.db")
    try:
        assert conn.execute("SELECT type FROM sqlite_master WHERE name = 'mentions'").fetchone() == ("view",)
        assert conn.execute("SELECT count(*) FROM replay_log WHERE tbl = 'mentions'").fetchone() == (0,)
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"mention_rows_node", "mention_rows_chunk", "mention_rows_node_chunk"} <= names
        assert not names & {"mentions_node", "mentions_node_recent", "mentions_chunk"}
    finally:
        conn.close()


def test_the_dump_shows_mentions_as_before_and_loads_back(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    _history(home)
    store = open_store(home)
    try:
        rows = list(store.dump_rows())
        tables = store.dump_tables()
    finally:
        store.close()
    assert "mentions" in tables and "mention_rows" not in tables
    assert tables.index("mentions") > max(tables.index("nodes"), tables.index("chunks"))
    dumped = [r for t, r in rows if t == "mentions"]
    assert dumped and list(dumped[0]) == ["id", "node_id", "chunk_id", "doc_id", "version", "start", "end"]
    assert all(r["chunk_id"].startswith(f"{r['doc_id']}:v{r['version']}:") for r in dumped)
    (tmp_path / "copy").mkdir()
    target = open_store(tmp_path / "copy")
    try:
        with target.transaction():
            target.load_rows(rows)
        assert list(target.dump_rows()) == rows
        assert target.check_store() == {"integrity": [], "fts": [], "vectors": [], "evidence": []}
    finally:
        target.close()


def test_a_mention_of_a_chunk_that_is_not_there_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    _history(home)
    store = open_store(home)
    try:
        before = list(store.dump_rows(["mentions"]))
        node = before[0][1]["node_id"]
        for bad in (Mention(node, "d1:v9:c0", "d1", 9, 0, 3), Mention(node, "d1:v1:c0", "d2", 1, 0, 3)):
            with pytest.raises(BackendError, match="mention.chunk_id: no chunk"):
                with store.transaction():
                    store.insert_mentions([Mention(node, "d1:v1:c0", "d1", 1, 0, 3), bad])
        # a loaded row must agree with its chunk too
        with pytest.raises(BackendError, match="mentions.chunk_id: no chunk of that id in that document version"):
            with store.transaction():
                store.load_rows([("mentions", {**before[0][1], "id": 9999, "doc_id": "d2"})])
        assert list(store.dump_rows(["mentions"])) == before
    finally:
        store.close()
