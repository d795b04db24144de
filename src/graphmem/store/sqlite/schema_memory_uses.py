"""Schema migration 0031 of the SQLite backend: the use counts a memory search writes, in a narrow table of
their own (issue 16).

Every search counts the memories it returns (``uses + 1``, ``used_at = now``). In ``memories`` that rewrote ten
wide rows (text, metadata) on ten pages, moved ten entries of the ``memories_used`` index and logged each row
for replay: 0.2-0.3 ms of CPU per search, most of it at COMMIT (every dirty page goes to the WAL). A row of
``memory_uses`` is three numbers wide, about 90 to a page, so the same ten counts dirty a few small pages.

``memory_uses`` holds a memory's ``uses`` and ``used_at`` once a search has counted it; until then (and for
every memory of a knowledge base from before this migration) the columns of ``memories`` are the values. Reads
take ``coalesce(memory_uses.x, memories.x)``; writes that restart the decay clock (a text update, a mark) set
both. An export writes the merged values in ``memories``' own columns and leaves this table out, so dumps are
the same as before; replay undoes its rows like any other (``replay_memory_uses_*``).

``memories_used`` (archived, used_at) goes: nothing searched by it but decay's scan of the live memories, whose
order (used_at, then row) is now an explicit ORDER BY over the merged ``used_at``.

Shipped migrations are never edited: their text is pinned by a hash in the contract suite.
"""

from __future__ import annotations

from .schema_memory import _EV

__all__ = ["MEMORY_USES_MIGRATIONS", "MEMORY_USES_REPLAYED"]

# What replay undoes of the new table (with the generic rowid-based undo of store/sqlite/portable.py; rid is
# the rowid itself, logged as ``rowid``).
MEMORY_USES_REPLAYED: dict[str, tuple[str, ...]] = {"memory_uses": ("uses", "used_at")}


def _replay_triggers() -> str:
    cols = MEMORY_USES_REPLAYED["memory_uses"]
    old = "json_object(" + ", ".join(f"'{c}', old.\"{c}\"" for c in ("rowid", *cols)) + ")"
    parts = ["CREATE TRIGGER replay_memory_uses_i AFTER INSERT ON memory_uses BEGIN\n    INSERT INTO replay_log (ev,"
             f" tbl, op, rid) VALUES ({_EV}, 'memory_uses', 'I', new.rowid);\nEND;"]
    for op, when in (("U", "UPDATE"), ("D", "DELETE")):
        parts.append(f"CREATE TRIGGER replay_memory_uses_{op.lower()} AFTER {when} ON memory_uses BEGIN\n    INSERT"
                     f" INTO replay_log (ev, tbl, op, rid, old) VALUES ({_EV}, 'memory_uses', '{op}', old.rowid,"
                     f" {old});\nEND;")
    return "\n".join(parts)


_MEMORY_USES = f"""
-- rid is the memory's rowid_: the row goes with its memory.
CREATE TABLE memory_uses (
    rid INTEGER PRIMARY KEY REFERENCES memories (rowid_) ON DELETE CASCADE,
    uses INTEGER NOT NULL,
    used_at TEXT NOT NULL
);
{_replay_triggers()}
DROP INDEX IF EXISTS memories_used;
"""

# An older graphmem that opened the file before 0031 keeps counting uses in ``memories`` (it refuses to open a
# migrated file, but one already open goes on). Where a memory has a ``memory_uses`` row, reads take that row,
# so those counts would vanish; this trigger adds them to it. This code never raises ``memories.uses`` (it
# inserts it, and replay only lowers it back), so only an older writer fires it.
_FORWARD_OLD_USES = """
CREATE TRIGGER memory_uses_from_old_writers AFTER UPDATE OF uses ON memories
WHEN new.uses > old.uses AND EXISTS (SELECT 1 FROM memory_uses WHERE rid = new.rowid_)
BEGIN
    UPDATE memory_uses SET uses = uses + (new.uses - old.uses), used_at = max(used_at, new.used_at)
        WHERE rid = new.rowid_;
END;
"""

MEMORY_USES_MIGRATIONS: list[tuple[str, str]] = [("0031_memory_uses", _MEMORY_USES),
                                                 ("0034_memory_uses_from_old_writers", _FORWARD_OLD_USES)]
