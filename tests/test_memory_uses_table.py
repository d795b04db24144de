"""Migration 0031: the use counts a memory search writes live in the narrow ``memory_uses`` table, not in the wide
``memories`` rows. Reads see ``memory_uses`` once a search counted a memory, the memory's own columns before; the
counts are durable and visible to another process; a text update or a mark restarts the clock of a counted memory;
a delete takes the row with it; an export writes the merged counts in ``memories``' columns and imports back; and a
knowledge base from before 0031 (counts in ``memories``, the ``memories_used`` index, the replay log's narrow
records) migrates with every read, the dump and each point-in-time copy the same as those of the same history
written with the migration in place."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

import graphmem
from clocks import ticking_clock
from graphmem.store import open_store
from kb_history import forget_migrations, point_copies
from spies import traced_sql

CONFIG: dict[str, Any] = {"embeddings": {"model": "none"}, "wiki": {"auto_pages": False}}
TOPICS = ["boats", "trains", "planes", "tea", "coffee"]


def _counts(kb: graphmem.KnowledgeBase) -> dict[str, tuple[int, str]]:
    rows = kb.store.get_memories([r[0] for r in kb.store.conn.execute("SELECT id FROM memories")])
    return {i: (r["uses"], r["used_at"]) for i, r in rows.items()}


def _fill(kb: graphmem.KnowledgeBase) -> None:
    for run in range(2):
        kb.memory.add([f"turn {i} of run {run} about {TOPICS[(i + run) % 5]}" for i in range(6)],
                      user_id="u1", run_id=f"r{run}")


def test_a_search_counts_in_memory_uses_and_leaves_the_memories_rows_alone(tmp_path: Path) -> None:
    home = tmp_path / "kb"
    with graphmem.open(home, config=CONFIG, clock=ticking_clock()) as kb:
        _fill(kb)
        wide = kb.store.conn.execute("SELECT * FROM memories ORDER BY rowid_").fetchall()
        before = _counts(kb)
        with traced_sql(kb.store.conn) as seen:  # type: ignore[attr-defined]
            ids = [h.id for h in kb.memory.search("boats trains", user_id="u1", limit=4).results]
        assert len(ids) == 4
        assert not [s for s in seen if s.startswith("UPDATE memories")]
        assert kb.store.conn.execute("SELECT * FROM memories ORDER BY rowid_").fetchall() == wide
        after = _counts(kb)
        assert {i: after[i][0] for i in ids} == {i: before[i][0] + 1 for i in ids}
        assert all(after[i][1] > before[i][1] for i in ids)  # the decay clock restarted
        assert {i: after[i] for i in after if i not in ids} == {i: before[i] for i in before if i not in ids}
        kb.memory.search("boats trains", user_id="u1", limit=4)
        twice = _counts(kb)
        assert {i: twice[i][0] for i in ids} == {i: before[i][0] + 2 for i in ids}
        held = kb.store.memory_rank_inputs(ids)  # the rank inputs the next search reads
        assert {i: (held[i].uses, held[i].used_at) for i in ids} == {i: twice[i] for i in ids}
        expected = {i: list(twice[i]) for i in ids}
    # another process sees the counts, and ranks with them (its frequency part is the counts' log ratio)
    script = ("import json, sys, graphmem\n"
              "kb = graphmem.open(sys.argv[1], config={'embeddings': {'model': 'none'}})\n"
              "ids = json.loads(sys.argv[2])\n"
              "rows = kb.store.get_memories(ids)\n"
              "print(json.dumps({i: [rows[i]['uses'], rows[i]['used_at']] for i in ids}))\n")
    out = subprocess.run([sys.executable, "-c", script, str(home), json.dumps(ids)], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout) == expected


def test_a_text_update_and_a_mark_restart_the_clock_of_a_counted_memory(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "kb", config=CONFIG, clock=ticking_clock()) as kb:
        _fill(kb)
        mid = kb.memory.search("boats", user_id="u1", limit=1).results[0].id
        uses, counted_at = _counts(kb)[mid]
        assert uses == 1
        kb.memory.update(mid, "turn 0 is about zeppelins now")
        uses_then, updated_at = _counts(kb)[mid]
        assert (uses_then, updated_at > counted_at) == (1, True)
        assert updated_at == kb.store.get_memories([mid])[mid]["updated_at"]
        kb.memory.mark_irrelevant(mid, 0.1)
        assert _counts(kb)[mid][0] == 1 and _counts(kb)[mid][1] > updated_at
        rid = kb.store.get_memories([mid])[mid]["rowid_"]
        kb.memory.delete(mid)
        assert kb.store.conn.execute("SELECT count(*) FROM memory_uses WHERE rid = ?", (rid,)).fetchone()[0] == 0


def test_the_export_writes_the_counts_in_the_memories_columns_and_imports_back(tmp_path: Path) -> None:
    with graphmem.open(tmp_path / "a", config=CONFIG, clock=ticking_clock()) as kb:
        _fill(kb)
        for q in ("boats", "trains tea", "boats coffee"):
            kb.memory.search(q, user_id="u1")
        counts = _counts(kb)
        dump = list(kb.store.dump_rows())
        assert "memory_uses" not in kb.store.dump_tables()
        dumped = {r["id"]: (r["uses"], r["used_at"]) for t, r in dump if t == "memories"}
        assert dumped == counts and any(u for u, _ in dumped.values())
    with graphmem.open(tmp_path / "b", config=CONFIG, clock=ticking_clock()) as copy:
        with copy.store.transaction():
            copy.store.load_rows(dump)
        assert _counts(copy) == counts
        assert list(copy.store.dump_rows()) == dump
        assert copy.store.conn.execute("SELECT count(*) FROM memory_uses").fetchone()[0] == 0
        copy.memory.search("boats", user_id="u1", limit=2)  # counts on from the imported values
        assert sum(u for u, _ in _counts(copy).values()) == sum(u for u, _ in counts.values()) + 2


# -- a knowledge base from before 0031 ---------------------------------------------------------------------------

def _history(home: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Adds, searches, a text update, a mark and a delete: the event id after each step (memory ids from a
    counter, so that two runs of it name the same memories alike)."""
    points = []
    counter = iter(range(1, 10**6))
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(counter) << 64))
    with graphmem.open(home, config=CONFIG, clock=ticking_clock()) as kb:
        _fill(kb)
        points.append(kb.events.last_id())
        for q in ("boats", "trains", "boats tea"):
            kb.memory.search(q, user_id="u1")
            points.append(kb.events.last_id())
        first, second = (r.id for r in kb.memory.get_all(user_id="u1").results[:2])
        kb.memory.update(first, "turn 0 of run 0 is about zeppelins now")
        kb.memory.mark_relevant(second, 0.3)
        points.append(kb.events.last_id())
        kb.memory.search("zeppelins boats", user_id="u1")
        kb.memory.delete(second)
        points.append(kb.events.last_id())
    return points


def _downgrade(db: Path) -> None:
    """What the code before 0031 left for the same history: the counts in memories' own columns, the
    memories_used index, the replay log's use-count records as 0022's narrow memories records."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN")
        rewritten = []
        for seq, op, rid, old in conn.execute("SELECT seq, op, rid, old FROM replay_log WHERE tbl = 'memory_uses'"
                                              " ORDER BY seq").fetchall():
            if op == "U":
                was = json.loads(old)
            else:  # a first count: the memory's own columns then (the next record of its row that holds them)
                later = [json.loads(o) for (o,) in conn.execute(
                    "SELECT old FROM replay_log WHERE tbl = 'memories' AND rid = ? AND seq > ? ORDER BY seq",
                    (rid, seq))]
                now = conn.execute("SELECT uses, used_at FROM memories WHERE rowid_ = ?", (rid,)).fetchone()
                was = next((o for o in later if "used_at" in o), None) or {"uses": now[0], "used_at": now[1]}
            if op == "D":  # went with its memory, whose own record holds the row
                conn.execute("DELETE FROM replay_log WHERE seq = ?", (seq,))
                continue
            rewritten.append((json.dumps({"rowid": rid, "uses": was["uses"], "used_at": was["used_at"]}), seq))
        # a memories record (a text update, a mark, a delete) holds the row's own columns: the old code had the
        # counts there, i.e. the memory_uses row of that time when it had one (the next record of that row holds it)
        rows = []
        for seq, rid, old in conn.execute("SELECT seq, rid, old FROM replay_log WHERE tbl = 'memories' AND op != 'I'"
                                          " ORDER BY seq").fetchall():
            row = json.loads(old)
            if "used_at" not in row:
                continue
            nxt = conn.execute("SELECT op, old FROM replay_log WHERE tbl = 'memory_uses' AND rid = ? AND seq > ?"
                               " ORDER BY seq LIMIT 1", (rid, seq)).fetchone()
            held = (json.loads(nxt[1]) if nxt[0] != "I" else None) if nxt else conn.execute(
                "SELECT uses, used_at FROM memory_uses WHERE rid = ?", (rid,)).fetchone()
            if held is not None:
                row["uses"], row["used_at"] = (held["uses"], held["used_at"]) if isinstance(held, dict) else held
                rows.append((json.dumps(row), seq))
        conn.executemany("UPDATE replay_log SET tbl = 'memories', op = 'U', old = ? WHERE seq = ?", rewritten)
        conn.executemany("UPDATE replay_log SET old = ? WHERE seq = ?", rows)
        trigger = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'replay_memories_u'").fetchone()[0]
        conn.execute("DROP TRIGGER replay_memories_u")
        conn.execute("UPDATE memories SET uses = u.uses, used_at = u.used_at FROM memory_uses u"
                     " WHERE u.rid = memories.rowid_")
        conn.execute(trigger)
        conn.execute("DROP TRIGGER IF EXISTS memory_uses_from_old_writers")  # 0034, which reads memory_uses
        conn.execute("DROP TABLE memory_uses")
        conn.execute("CREATE INDEX memories_used ON memories (archived, used_at)")
        forget_migrations(conn, "0031_memory_uses", "0034_memory_uses_from_old_writers")
    finally:
        conn.close()


def _reads(home: Path, points: list[int]) -> dict[str, Any]:
    store = open_store(home)
    try:
        ids = [r[0] for r in store.conn.execute("SELECT id FROM memories ORDER BY rowid_")]  # type: ignore[attr-defined]
        out: dict[str, Any] = {
            "memories": store.get_memories(ids),
            "listed": store.list_memories({"user_id": "u1"}, True, 100),
            "rank_inputs": store.memory_rank_inputs(ids),
            "decay": store.memory_decay_rows(),
            "edge_decay": store.memory_edge_decay_rows(),
            "dump": list(store.dump_rows()),
            "check": store.check_store(),
        }
        for ev, replayed, then in point_copies(store, home, points):
            replayed.pop("undone")  # log records: the old log held a memory's use counts and its row in one
            out[f"replayed_{ev}"] = replayed
            out[f"dump_{ev}"] = list(then.dump_rows())
            out[f"rank_inputs_{ev}"] = then.memory_rank_inputs(ids)
        return out
    finally:
        store.close()


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, list[int]]:
    new, old = tmp_path / "new", tmp_path / "old"
    points = _history(new, monkeypatch)
    assert _history(old, monkeypatch) == points
    _downgrade(old / "graph.db")
    return new, old, points


def test_an_old_knowledge_base_migrates_with_the_same_reads(homes: tuple[Path, Path, list[int]]) -> None:
    new, old, points = homes
    with sqlite3.connect(old / "graph.db") as conn:  # what the old code read decay's rows by: memories_used
        plan = " ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN SELECT id FROM memories WHERE archived = 0"))
        assert "memories_used" in plan
        by_index = [r[0] for r in conn.execute("SELECT id FROM memories WHERE archived = 0")]
        assert any(r[0] for r in conn.execute("SELECT uses FROM memories"))
    expected = _reads(new, points)
    migrated = _reads(old, points)
    assert [r[0] for r in migrated["decay"]] == by_index  # the order the index gave, now by ORDER BY
    assert migrated == expected
    with sqlite3.connect(old / "graph.db") as conn:
        assert "0031_memory_uses" in {r[0] for r in conn.execute("SELECT name FROM schema_migrations")}
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'memories_used'").fetchone()
    # searching on: the same counts, results and reads on both
    for home in (new, old):
        with graphmem.open(home, config=CONFIG, clock=ticking_clock()) as kb:
            kb.memory.search("trains coffee", user_id="u1")
    assert _reads(old, []) == _reads(new, [])

