"""Schema migration 0022 of the SQLite backend: what memory search may keep in RAM between searches
(issue 16), and a narrower replay log for the bookkeeping updates a search writes.

Shipped migrations are never edited: their text is pinned by a hash in the contract suite.
"""

from __future__ import annotations

from .schema_memory import _EV, _REPLAYED

__all__ = ["MEMORY_READ_MIGRATIONS"]

_BUMP = ("INSERT INTO kb_meta (key, value) VALUES ('{key}', '1') ON CONFLICT(key)"
         " DO UPDATE SET value = CAST(value AS INTEGER) + 1;")
_EDGES_BUMP = _BUMP.format(key="memory.edges.generation")
_MEMORY_BUMP = _BUMP.format(key="memory.generation")


def _is_memory(end: str) -> str:
    return f"EXISTS (SELECT 1 FROM nodes WHERE id = {end} AND kind = 'memory')"


def _narrow_log(only: tuple[str, ...]) -> tuple[str, str]:
    """(the condition "only ``only`` changed", the log row of just those columns)."""
    same = " AND ".join(f'old."{c}" IS new."{c}"' for c in ("rowid", *_REPLAYED["memories"]) if c not in only)
    row = "json_object('rowid', old.rowid, " + ", ".join(f"'{c}', old.\"{c}\"" for c in only) + ")"
    return same, row


def _replay_memories_update() -> str:
    """0012's update trigger of ``memories``, logging only the columns of the updates a read writes (a
    search's use counts, decay's relevance) instead of the whole row with its text and metadata; replay
    sets the logged columns back, so the undone row is the same."""
    full = "json_object(" + ", ".join(f"'{c}', old.\"{c}\"" for c in ("rowid", *_REPLAYED["memories"])) + ")"
    cases = [_narrow_log(("uses", "used_at")), _narrow_log(("relevance",))]
    row = "CASE " + " ".join(f"WHEN {same} THEN {narrow}" for same, narrow in cases) + f" ELSE {full} END"
    return ("CREATE TRIGGER replay_memories_u AFTER UPDATE ON memories BEGIN\n    INSERT INTO replay_log (ev, tbl, "
            f"op, rid, old) VALUES ({_EV}, 'memories', 'U', old.rowid, {row});\nEND;")


_MEMORY_READS = f"""
-- memory.edges.generation changes whenever an edge at a memory may have changed, in this process or any other:
-- a process keeps the memory graph in RAM (store/sqlite/memory_graph.py) while it and the highest edge rowid
-- are what it read. A new edge with a fresh rowid (the common write) is read by rowid instead, so it bumps
-- nothing; one that reuses a rowid does. A delete bumps unless both ends are live non-memory nodes (in a
-- cascade the deleted node is already gone), and always when it was the highest rowid (the next insert takes
-- that rowid again, as max + 1, which the insert trigger cannot tell from a fresh one).
CREATE TRIGGER memory_edges_gen_i AFTER INSERT ON edges
WHEN new.rowid < (SELECT max(rowid) FROM edges) BEGIN
    {_EDGES_BUMP}
END;
CREATE TRIGGER memory_edges_gen_u AFTER UPDATE OF source, target, type, confidence ON edges
WHEN {_is_memory("old.source")} OR {_is_memory("old.target")} OR {_is_memory("new.source")}
    OR {_is_memory("new.target")} BEGIN
    {_EDGES_BUMP}
END;
CREATE TRIGGER memory_edges_gen_d AFTER DELETE ON edges
WHEN old.rowid > (SELECT coalesce(max(rowid), 0) FROM edges)
    OR NOT (EXISTS (SELECT 1 FROM nodes WHERE id = old.source AND kind <> 'memory')
            AND EXISTS (SELECT 1 FROM nodes WHERE id = old.target AND kind <> 'memory')) BEGIN
    {_EDGES_BUMP}
END;
-- memory.generation (read with the highest rowid_ of memories) also keys what a process keeps of the memories'
-- full-text word statistics and of each scope's ids: every change of the indexed text, the scope columns or
-- the archived flag bumps it, whichever path made it (a memory deleted through the graph's node delete used
-- to leave it as it was).
CREATE TRIGGER memory_gen_d AFTER DELETE ON memories BEGIN
    {_MEMORY_BUMP}
END;
CREATE TRIGGER memory_gen_u AFTER UPDATE OF text, tenant_id, user_id, agent_id, run_id, scope_key, archived
ON memories BEGIN
    {_MEMORY_BUMP}
END;
DROP TRIGGER replay_memories_u;
{_replay_memories_update()}
"""

MEMORY_READ_MIGRATIONS: list[tuple[str, str]] = [("0022_memory_read_generations", _MEMORY_READS)]
