"""The memory graph in RAM, per store (one connection): what a memory search's walk reads.

A walk level used to be one SQL statement of correlated per-memory LIMITs (~0.6 ms of a 3 ms search
over 10,000 memories). Here every edge at a memory is read once into per-memory lists, sorted the way that
statement sorted (strongest first, then write order), and a walk level is a few list slices.

It stays exact across processes: ``memory.edges.generation`` in ``kb_meta`` changes (migration 0022's
triggers, in whichever process writes) when an edge at a memory is updated or deleted or a rowid is reused;
a new edge with a fresh rowid changes nothing there, and is read by rowid (everything above the highest rowid
read so far) before the next answer. Either check is one statement per walk level.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ..rows import MemoryEdgeRow, MemoryNeighbour

__all__ = ["MemoryGraphCache", "MAX_CACHED_EDGES", "LOAD_AFTER_READS"]

# Above this many edges at memories the graph is not held in RAM (the SQL statement serves every walk).
MAX_CACHED_EDGES = 1_000_000
# Reads answered by SQL before the graph is loaded: loading costs what ~150-250 cached searches save (60-130
# ms for 10,000 memories and 21,707 edges), so a process that searches once or twice (a CLI command) never
# pays it; one that keeps searching (a server, an agent loop) loads it after ~16 BFS or ~3 PPR searches.
LOAD_AFTER_READS = 32

_STATE_SQL = ("SELECT (SELECT value FROM kb_meta WHERE key = 'memory.edges.generation'),"
              " (SELECT coalesce(max(rowid), 0) FROM edges)")
_COLS = "e.rowid, e.source, e.target, e.confidence, e.type"
# Every edge leaving a memory, and every edge reaching one from a node that is not a memory (each edge once).
_LOAD_SQL = (f"SELECT {_COLS} FROM memories m JOIN edges e ON e.source = m.id UNION ALL"
             f" SELECT {_COLS} FROM memories m JOIN edges e ON e.target = m.id"
             " WHERE NOT EXISTS (SELECT 1 FROM memories s WHERE s.id = e.source) LIMIT ?")
_NEWER_SQL = (f"SELECT {_COLS}, s.id IS NOT NULL, t.id IS NOT NULL FROM edges e"
              " LEFT JOIN memories s ON s.id = e.source LEFT JOIN memories t ON t.id = e.target"
              " WHERE e.rowid > ? AND (s.id IS NOT NULL OR t.id IS NOT NULL) ORDER BY e.rowid")

# (confidence, rowid, the answer's tuple): sorted by (-confidence, rowid)
_Entry = tuple[float, int, MemoryNeighbour]


class MemoryGraphCache:
    """Each memory's edges, outgoing and incoming, strongest first (ties: earlier written first)."""

    def __init__(self) -> None:
        self._state: tuple[object, int] | None = None
        self._top = 0  # the highest edge rowid read
        self._known: set[str] = set()  # memories whose every edge is held
        self._out: dict[str, list[_Entry]] = {}
        self._in: dict[str, list[_Entry]] = {}
        self.disabled = False
        self._reads = 0  # reads answered before the graph was loaded
        self._checked_at: object = None  # the store's read stamp when the state was last checked

    def neighbours(self, conn: sqlite3.Connection, ids: Sequence[str], min_weight: float, per_node: int,
                   stamp: object = None) -> dict[str, list[MemoryNeighbour]] | None:
        """What ``memory_neighbours`` answers, from RAM; None when the caller should ask SQL (an id that
        is not a memory known here, or a graph too big to hold)."""
        # Inside a write transaction the rows may still be rolled back (and their rowids reused): SQL then.
        if not self._ready(conn, stamp) or any(i not in self._known for i in ids):
            return None
        out: dict[str, list[MemoryNeighbour]] = {}
        for mid in ids:
            got: list[MemoryNeighbour] = []
            for lists in (self._out, self._in):
                first = lists.get(mid, [])[:per_node]
                if first and first[-1][0] >= min_weight:  # strongest first: all of them pass
                    got += [e[2] for e in first]
                    continue
                for weight, _, nb in first:
                    if weight < min_weight:
                        break
                    got.append(nb)
            out[mid] = got
        return out

    def edges_among(self, conn: sqlite3.Connection, ids: Sequence[str], min_weight: float,
                    stamp: object = None) -> list[MemoryEdgeRow] | None:
        """What ``memory_edges_among`` answers, from RAM (None: ask SQL)."""
        if not self._ready(conn, stamp) or any(i not in self._known for i in ids):
            return None
        wanted = set(ids)
        out = [MemoryEdgeRow(s, nb.other, nb.type, float(nb.weight)) for s in wanted
               for _, _, nb in self._out.get(s, ()) if nb.other in wanted and nb.weight >= min_weight]
        return sorted(out, key=lambda e: (-e[3], e[0], e[1], e[2]))

    def _ready(self, conn: sqlite3.Connection, stamp: object) -> bool:
        """Whether this read is answered from RAM (the graph loaded or brought up to date first).
        ``stamp``: the store's read stamp taken before this call (None: unknown); while it equals the one of
        the last check, nothing changed and the check's statement is skipped."""
        if self.disabled or conn.in_transaction:
            return False
        if self._state is None and self._reads < LOAD_AFTER_READS:
            self._reads += 1
            return False
        if stamp is not None and stamp == self._checked_at and self._state is not None:
            return True
        ok = self._sync(conn)
        self._checked_at = stamp if ok else None
        return ok

    def _sync(self, conn: sqlite3.Connection) -> bool:
        gen, top = conn.execute(_STATE_SQL).fetchone()
        if self._state is not None and self._state[0] == gen:
            if top > self._top:
                self._add_newer(conn)
            self._state = (gen, max(top, self._top))
            return True
        return self._load(conn, gen, top)

    def _load(self, conn: sqlite3.Connection, gen: object, top: int) -> bool:
        # The state is read before the rows: a write in between makes the next check reload, never serve
        # a graph older than its label.
        known = {r[0] for r in conn.execute("SELECT id FROM memories")}
        rows = conn.execute(_LOAD_SQL, (MAX_CACHED_EDGES + 1,)).fetchall()
        if len(rows) > MAX_CACHED_EDGES:
            self.disabled = True  # a graph this big: the SQL statement, bounded per memory, serves
            self._out, self._in, self._known = {}, {}, set()
            return False
        self._out, self._in, self._known = {}, {}, known
        for rowid, source, target, weight, type_ in rows:
            self._add(rowid, source, target, weight, type_)
        for lists in (self._out, self._in):
            for lst in lists.values():
                lst.sort(key=_order)
        self._top = max(top, max((r[0] for r in rows), default=0))
        self._state = (gen, self._top)
        return True

    def _add_newer(self, conn: sqlite3.Connection) -> None:
        touched: set[tuple[int, str]] = set()
        for rowid, source, target, weight, type_, source_is_memory, target_is_memory in conn.execute(
                _NEWER_SQL, (self._top,)):
            self._add(rowid, source, target, weight, type_)
            touched |= {(0, source), (1, target)}
            # A memory written after the load has no edge older than its first one.
            self._known |= {m for m, is_memory in ((source, source_is_memory), (target, target_is_memory))
                            if is_memory}
            self._top = max(self._top, rowid)
        for side, node in touched:
            (self._out if side == 0 else self._in)[node].sort(key=_order)

    def _add(self, rowid: int, source: str, target: str, weight: float, type_: str) -> None:
        self._out.setdefault(source, []).append((weight, rowid, MemoryNeighbour(target, weight, type_)))
        self._in.setdefault(target, []).append((weight, rowid, MemoryNeighbour(source, weight, type_)))


def _order(entry: _Entry) -> tuple[float, int]:
    return (-entry[0], entry[1])
