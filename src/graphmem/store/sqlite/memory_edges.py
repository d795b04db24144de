"""SQL of the links between memories (part of the SQLite backend): rows of the shared ``edges`` table between
two memories of one scope key (REPLY_TO, TEMPORAL_NEXT, ...), their walk, their decay and their deletion. The walk
answers from a per-store RAM copy of the memory graph while the database says it holds (memory_graph.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import cast

from ..rows import MemoryEdgeDecay, MemoryEdgeInput, MemoryEdgeRow, MemoryNeighbour, ScopeFilters
from .memory_graph import MemoryGraphCache
from .memory_scope import scope_where
from .read_stamp import ReadStampMixin
from .sqlbase import MAX_VARS, SqlHelpers, batches

__all__ = ["MemoryEdgeSqlMixin"]


def _used_at(alias: str) -> str:
    """A memory's ``used_at`` (memory_uses once a search counted it, migration 0031), as a scalar subquery: the
    join order, and with it the order of decay's rows, stays the one the plain columns gave."""
    return f"coalesce((SELECT u.used_at FROM memory_uses u WHERE u.rid = {alias}.rowid_), {alias}.used_at)"


# Each memory's ``per_node`` strongest edges each way; the outer rows come in no useful order (the
# caller sorts by direction, weight and rowid).
_NEIGHBOURS_SQL = (
    "SELECT j.value, e.target, e.confidence, e.type, e.rowid, 0 FROM json_each(?) j JOIN edges e ON e.rowid IN"
    " (SELECT rowid FROM edges WHERE source = j.value AND confidence >= ? ORDER BY confidence DESC, rowid LIMIT ?)"
    " UNION ALL"
    " SELECT j.value, e.source, e.confidence, e.type, e.rowid, 1 FROM json_each(?) j JOIN edges e ON e.rowid IN"
    " (SELECT rowid FROM edges WHERE target = j.value AND confidence >= ? ORDER BY confidence DESC, rowid LIMIT ?)")


class MemoryEdgeSqlMixin(ReadStampMixin, SqlHelpers):
    """Memory-to-memory edges: insert, neighbours (the walk), edges among a set, decay rows, delete."""

    def insert_memory_edges(self, edges: Sequence[MemoryEdgeInput]) -> int:
        """Insert ``(id, source, target, type, weight, now)`` memory edges (manual, base weight in
        properties); existing ``(source, type, target)`` edges are left alone. Returns how many are new."""
        # rowcount, not total_changes: the latter also counts what triggers write (the replay log)
        cur = self.conn.executemany(
            "INSERT OR IGNORE INTO edges (id, source, target, type, confidence, created_at, updated_at, manual,"
            " properties) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)",
            [(i, s, t, ty, w, now, now, json.dumps({"w0": w, "memory": True})) for i, s, t, ty, w, now in edges])
        return max(cur.rowcount, 0)

    def memory_neighbours(self, memory_ids: Sequence[str], min_weight: float, per_node: int = 32
                          ) -> dict[str, list[MemoryNeighbour]]:
        """Memory-to-memory edges of each memory (either direction), its ``per_node`` strongest
        each way: ``{id: [(other, weight, type)]}``, outgoing then incoming, each strongest first
        (ties: the earlier written first). Bounded so that a hub (a memory hundreds of later ones
        are topic-similar to) costs what any memory does: the LIMIT is per memory, inside one
        statement for all of them (a walk level used to be two statements per memory; the
        (node, confidence) indexes of migration 0003 serve each inner read)."""
        ids = list(dict.fromkeys(memory_ids))
        out: dict[str, list[MemoryNeighbour]] = {mid: [] for mid in ids}
        if not ids:
            return out
        held = self._memory_graph().neighbours(self.conn, ids, min_weight, per_node, self.read_stamp())
        if held is not None:
            return held
        listed = json.dumps(ids)
        rows = self._rows(_NEIGHBOURS_SQL, (listed, min_weight, per_node, listed, min_weight, per_node))
        # direction, then strongest first, then write order: what the per-memory ORDER BY gave
        rows.sort(key=lambda r: (r[5], -r[2], r[4]))
        for mid, other, weight, type_, _, _ in rows:
            out[mid].append(MemoryNeighbour(other, weight, type_))
        return out

    def _memory_graph(self) -> MemoryGraphCache:
        """This store's memory graph in RAM (memory_graph.py: exact across processes)."""
        cache = self.__dict__.get("_memory_graph_cache")
        if cache is None:
            cache = self.__dict__["_memory_graph_cache"] = MemoryGraphCache()
        return cast(MemoryGraphCache, cache)

    def memory_edges_among(self, memory_ids: Sequence[str], min_weight: float = 0.0
                           ) -> list[MemoryEdgeRow]:
        """``(source, target, type, weight)`` of the edges whose two ends are among ``memory_ids``."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return []
        held = self._memory_graph().edges_among(self.conn, ids, min_weight, self.read_stamp())
        if held is not None:
            return held
        out: list[MemoryEdgeRow] = []
        wanted = set(ids)
        for part in batches(ids, MAX_VARS // 2):
            marks = ",".join("?" * len(part))
            for s, t, ty, w in self._rows(
                    f"SELECT source, target, type, confidence FROM edges WHERE source IN ({marks}) AND confidence >= ?",
                    [*part, min_weight]):
                if t in wanted:
                    out.append(MemoryEdgeRow(s, t, ty, float(w)))
        return sorted(out, key=lambda e: (-e[3], e[0], e[1], e[2]))

    def memory_edge_decay_rows(self) -> list[MemoryEdgeDecay]:
        """``(edge id, type, weight, base weight, created_at, source used_at, target used_at)`` of every
        memory-to-memory edge."""
        return [MemoryEdgeDecay(r[0], r[1], float(r[2]), float(r[3] if r[3] is not None else r[2]), r[4], r[5], r[6])
                for r in self._rows(
                    "SELECT e.id, e.type, e.confidence, json_extract(e.properties, '$.w0'), e.created_at,"
                    f" {_used_at('a')}, {_used_at('b')} FROM edges e JOIN memories a ON a.id = e.source"
                    " JOIN memories b ON b.id = e.target")]

    def delete_memory_edges(self, filters: ScopeFilters, keep_types: Sequence[str] = ()) -> int:
        """Delete the memory-to-memory edges of a scope (all memories without filters), except
        those of ``keep_types``."""
        where, params = scope_where(filters, True)
        keep = "".join(" AND e.type != ?" for _ in keep_types)
        return self.conn.execute(
            f"DELETE FROM edges WHERE id IN (SELECT e.id FROM edges e JOIN memories m ON m.id = e.source"
            f" JOIN memories b ON b.id = e.target WHERE {where}{keep})", [*params, *keep_types]).rowcount

    def delete_memory_edges_by_id(self, edge_ids: Sequence[str]) -> int:
        """Delete these memory-to-memory edges; returns how many were deleted."""
        ids = list(dict.fromkeys(edge_ids))
        if not ids:
            return 0
        return self.conn.execute(f"DELETE FROM edges WHERE id IN ({','.join('?' * len(ids))})", ids).rowcount

    def memories_with_edges(self, memory_ids: Sequence[str], ignore_types: Sequence[str] = ()) -> set[str]:
        """Those of ``memory_ids`` that still have an edge (one of ``ignore_types`` does not count)."""
        out: set[str] = set()
        skip = list(ignore_types)
        not_types = f" AND type NOT IN ({','.join('?' * len(skip))})" if skip else ""
        for part in batches(list(dict.fromkeys(memory_ids)), (MAX_VARS - 2 * len(skip)) // 2):
            marks = ",".join("?" * len(part))
            out |= {r[0] for r in self._rows(
                f"SELECT source FROM edges WHERE source IN ({marks}){not_types} UNION SELECT target FROM edges"
                f" WHERE target IN ({marks}){not_types}", [*part, *skip, *part, *skip])}
        return out
