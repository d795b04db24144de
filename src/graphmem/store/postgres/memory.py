"""SQL of the memories face (PostgreSQL backend): the port of ``store/sqlite/memory.py``.

Memories are ``kind = 'memory'`` nodes with a row in ``memories`` and their text in fts.py's term
statistics, ranked by real BM25. A scoped search joins the memory rows of the matched terms and filters
them by the scope columns in the ranking statement (SQLite puts scope tokens in its index instead).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from ..rows import (
    EmbedRow,
    Feedback,
    LLMBudget,
    MemoryDecay,
    MemoryEdgeDecay,
    MemoryEdgeInput,
    MemoryEdgeRow,
    MemoryNeighbour,
    MemoryRankInputs,
    MemoryRow,
    MemorySession,
    MemoryStats,
    MemoryVectorRow,
    MemoryVersionRow,
    ScopeFilters,
    ScopeState,
    ScoredId,
    WeightUpdate,
    scope_terms,
)
from .fts import FtsPgMixin
from .pgbase import Row

__all__ = ["MemoryPgMixin"]


_COLUMNS = ("rowid_", "id", "tenant_id", "user_id", "agent_id", "run_id", "scope_key", "role", "text", "metadata",
            "said_at", "created_at", "updated_at", "used_at", "version", "quality", "floor", "relevance",
            "archived", "uses", "helpful", "unhelpful")
_COLS = ", ".join(_COLUMNS)
_MCOLS = ", ".join(f"m.{c}" for c in _COLUMNS)


def _row(r: Row) -> MemoryRow:
    out: dict[str, Any] = dict(zip(_COLUMNS, r))
    out["metadata"] = json.loads(out["metadata"])
    out["archived"] = bool(out["archived"])
    return cast(MemoryRow, out)


def _where(filters: ScopeFilters, include_archived: bool, alias: str = "m") -> tuple[str, list[Any]]:
    """``AND``-ed equality on the given scope fields (None values are not filters)."""
    terms = scope_terms(filters)
    parts = [f"{alias}.{column} = %s" for column, _ in terms]
    params: list[Any] = [value for _, value in terms]
    if not include_archived:
        parts.append(f"{alias}.archived = 0")
    return (" AND ".join(parts) or "TRUE"), params


class MemoryPgMixin(FtsPgMixin):
    """Memories, their sessions, document references, mentions, feedback, decay and budgets."""

    # -- memories --------------------------------------------------------------------------------

    def insert_memory(self, mem: Mapping[str, object]) -> int:
        """Insert a memory (its node and its row); returns the row id."""
        self._exec(
            "INSERT INTO nodes (id, kind, name, type, properties, created_at, updated_at, relevance, archived, manual)"
            " VALUES (%s, 'memory', %s, %s, '{}', %s, %s, 1.0, 0, 1)",
            [mem["id"], str(mem["text"])[:200], mem.get("role") or "memory", mem["created_at"], mem["created_at"]],
        )
        r = self._one(
            "INSERT INTO memories (id, tenant_id, user_id, agent_id, run_id, scope_key, role, text, metadata, said_at,"
            " created_at, updated_at, used_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " RETURNING rowid_",
            [mem["id"], mem.get("tenant_id"), mem.get("user_id"), mem.get("agent_id"), mem.get("run_id"),
             mem["scope_key"], mem.get("role"), mem["text"], json.dumps(mem.get("metadata") or {}, ensure_ascii=False),
             mem["said_at"], mem["created_at"], mem["created_at"], mem["created_at"]],
        )
        assert r is not None
        self._fts_add("memories", [(int(r[0]), [str(mem["text"])])])
        return int(r[0])

    def memory_rank_inputs(self, ids: Iterable[str]) -> dict[str, MemoryRankInputs]:
        """The rerank's columns of each memory (missing ids are absent)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        rows = self._rows("SELECT id, uses, helpful, unhelpful, quality, floor, used_at FROM memories"
                          " WHERE id = ANY(%s)", [wanted])
        return {r[0]: MemoryRankInputs(*tuple(r)[1:]) for r in rows}

    def get_memories(self, ids: Iterable[str]) -> dict[str, MemoryRow]:
        """Memories by id (missing ids are absent)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        return {r[1]: _row(r) for r in self._rows(f"SELECT {_COLS} FROM memories WHERE id = ANY(%s)", [wanted])}

    def list_memories(self, filters: ScopeFilters, include_archived: bool = False, limit: int = 100,
                      offset: int = 0) -> list[MemoryRow]:
        """Memories matching the scope filters, oldest said first."""
        where, params = _where(filters, include_archived)
        rows = self._rows(f"SELECT {_MCOLS} FROM memories m WHERE {where} ORDER BY said_at, rowid_ LIMIT %s OFFSET %s",
                          [*params, limit, offset])
        return [_row(r) for r in rows]

    def memories_after(self, filters: ScopeFilters, after_rowid: int, limit: int) -> list[MemoryRow]:
        """Memories (archived too) with row id > ``after_rowid`` in row order (for backfills)."""
        where, params = _where(filters, True)
        rows = self._rows(f"SELECT {_MCOLS} FROM memories m WHERE {where} AND rowid_ > %s ORDER BY rowid_ LIMIT %s",
                          [*params, after_rowid, limit])
        return [_row(r) for r in rows]

    def memory_scope_ids(self, filters: ScopeFilters, include_archived: bool, limit: int) -> list[str] | None:
        """Ids of the memories of a scope, or None when there are more than ``limit``."""
        where, params = _where(filters, include_archived)
        rows = self._rows(f"SELECT id FROM memories m WHERE {where} ORDER BY rowid_ LIMIT %s", [*params, limit + 1])
        return None if len(rows) > limit else [r[0] for r in rows]

    def memory_vectors(self, filters: ScopeFilters, model: str, limit: int, after_rowid: int = 0
                       ) -> list[MemoryVectorRow] | None:
        """``(rowid, id, vector bytes)`` of a scope's memories with row id > ``after_rowid`` (one
        join), archived ones and those without a ``model`` vector with None bytes; None when there
        are more than ``limit``."""
        where, params = _where(filters, True)
        rows = self._rows(
            f"SELECT m.rowid_, m.id, v.vec, v.model, m.archived FROM memories m LEFT JOIN vectors v"
            f" ON v.item_kind = 'memory' AND v.item_id = m.id WHERE {where} AND m.rowid_ > %s ORDER BY m.rowid_"
            " LIMIT %s", [*params, after_rowid, limit + 1])
        if len(rows) > limit:
            return None
        return [MemoryVectorRow(int(r[0]), r[1], bytes(r[2]) if r[3] == model and not r[4] and r[2] is not None
                                else None) for r in rows]

    def memory_scope_state(self, scope_key: str) -> ScopeState:
        """``(generation, count, max row id)`` of a scope key's memories (archived included): an
        unchanged generation and a grown count mean only new memories arrived (updates, deletions
        and archiving bump the generation)."""
        gen = self._one("SELECT value FROM kb_meta WHERE key = 'memory.generation'")
        r = self._one("SELECT count(*), coalesce(max(rowid_), 0) FROM memories WHERE scope_key = %s", [scope_key])
        assert r is not None
        return ScopeState(int(gen[0]) if gen else 0, int(r[0]), int(r[1]))

    def _bump_memory_generation(self) -> None:
        self._exec("INSERT INTO kb_meta (key, value) VALUES ('memory.generation', '1') ON CONFLICT (key)"
                   " DO UPDATE SET value = (kb_meta.value::bigint + 1)::text")

    def memories_in_scope(self, ids: Iterable[str], filters: ScopeFilters, include_archived: bool) -> set[str]:
        """Those of ``ids`` that match the scope filters."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return set()
        where, params = _where(filters, include_archived)
        return {r[0] for r in self._rows(f"SELECT id FROM memories m WHERE id = ANY(%s) AND {where}",
                                         [wanted, *params])}

    def memories_to_embed(self, after_rowid: int = 0, limit: int = 1000) -> list[EmbedRow]:
        """``(rowid, id, text)`` of memories after ``after_rowid``, for reindex."""
        return [EmbedRow(int(r[0]), r[1], r[2]) for r in self._rows(
            "SELECT rowid_, id, text FROM memories WHERE rowid_ > %s ORDER BY rowid_ LIMIT %s", [after_rowid, limit])]

    def update_memory_text(self, memory_id: str, text: str, metadata: Mapping[str, object], now: str) -> None:
        """New text and metadata for a memory (version + 1; the decay clock restarts)."""
        rows = self._rows(
            "UPDATE memories SET text = %s, metadata = %s, updated_at = %s, used_at = %s, version = version + 1"
            " WHERE id = %s RETURNING rowid_", [text, json.dumps(dict(metadata), ensure_ascii=False), now, now,
                                                 memory_id])
        if rows:
            self._fts_remove("memories", [int(rows[0][0])])
            self._fts_add("memories", [(int(rows[0][0]), [text])])
        self._bump_memory_generation()

    def delete_memory(self, memory_id: str) -> int:
        """Delete a memory (its node, row, edges, references and vector); returns its edge count."""
        n = self._one("SELECT (SELECT count(*) FROM edges WHERE source = %s) + (SELECT count(*) FROM edges"
                      " WHERE target = %s AND source != %s)", [memory_id, memory_id, memory_id])
        self._exec("DELETE FROM nodes WHERE id = %s", [memory_id])  # cascades
        self._bump_memory_generation()
        return int(n[0]) if n is not None else 0

    def add_memory_version(self, memory_id: str, version: int, event: str, old: str | None, new: str | None,
                           ts: str) -> None:
        """Record one history entry of a memory."""
        self._exec("INSERT INTO memory_versions (memory_id, version, event, old_text, new_text, ts)"
                   " VALUES (%s, %s, %s, %s, %s, %s)", [memory_id, version, event, old, new, ts])

    def memory_versions(self, memory_id: str) -> list[MemoryVersionRow]:
        """History of a memory, oldest first."""
        return [cast(MemoryVersionRow, dict(zip(("memory_id", "version", "event", "old_text", "new_text", "ts"), r)))
                for r in self._rows(
            "SELECT memory_id, version, event, old_text, new_text, ts FROM memory_versions WHERE memory_id = %s"
            " ORDER BY id", [memory_id])]

    def memory_session(self, session_key: str) -> MemorySession | None:
        """``(memory id, said_at)`` of the last memory of a session."""
        r = self._one("SELECT memory_id, said_at FROM memory_sessions WHERE session_key = %s", [session_key])
        return MemorySession(r[0], r[1]) if r else None

    def memory_session_neighbours(self, scope_key: str, run_id: str | None, said_at: str, exclude: str
                                  ) -> tuple[MemorySession | None, MemorySession | None]:
        """The session's memories said just before (or at) and just after ``said_at`` (see the protocol)."""
        where = "scope_key = %s AND run_id IS NOT DISTINCT FROM %s AND id <> %s AND strpos(id, '~v') = 0"
        before = self._one(f"SELECT id, said_at FROM memories WHERE {where} AND said_at <= %s"
                           " ORDER BY said_at DESC, rowid_ DESC LIMIT 1", [scope_key, run_id, exclude, said_at])
        after = self._one(f"SELECT id, said_at FROM memories WHERE {where} AND said_at > %s"
                          " ORDER BY said_at, rowid_ LIMIT 1", [scope_key, run_id, exclude, said_at])
        return (MemorySession(before[0], before[1]) if before else None,
                MemorySession(after[0], after[1]) if after else None)

    def set_memory_session(self, session_key: str, memory_id: str, said_at: str) -> None:
        """Make a memory the last of its session."""
        self._exec(
            "INSERT INTO memory_sessions (session_key, memory_id, said_at) VALUES (%s, %s, %s)"
            " ON CONFLICT (session_key) DO UPDATE SET memory_id = excluded.memory_id, said_at = excluded.said_at",
            [session_key, memory_id, said_at])

    def add_memory_docrefs(self, scope_key: str, memory_id: str, refs: Iterable[str]) -> None:
        """Record the document references of a memory."""
        wanted = list(dict.fromkeys(refs))
        if wanted:
            self._exec("INSERT INTO memory_docrefs (scope_key, ref, memory_id) SELECT %s, r, %s FROM unnest(%s::text[])"
                       " AS r ON CONFLICT DO NOTHING", [scope_key, memory_id, wanted])

    def memories_with_docrefs(self, scope_key: str, refs: Sequence[str], exclude: str, limit: int) -> list[str]:
        """Memories of a scope key sharing one of ``refs`` (most recent first)."""
        if not refs:
            return []
        return [r[0] for r in self._rows(
            "SELECT d.memory_id FROM memory_docrefs d JOIN memories m ON m.id = d.memory_id"
            " WHERE d.scope_key = %s AND d.ref = ANY(%s) AND d.memory_id != %s GROUP BY d.memory_id"
            " ORDER BY max(m.rowid_) DESC LIMIT %s", [scope_key, list(refs), exclude, limit])]

    def add_memory_mentions(self, memory_id: str, entity_ids: Iterable[str]) -> int:
        """Link a memory to entities it names; returns the number of new links."""
        wanted = list(dict.fromkeys(entity_ids))
        if not wanted:
            return 0
        return self._exec("INSERT INTO memory_mentions (memory_id, entity_id) SELECT %s, e FROM unnest(%s::text[]) AS e"
                          " ON CONFLICT DO NOTHING", [memory_id, wanted])

    def memory_mentions(self, memory_ids: Iterable[str]) -> dict[str, list[str]]:
        """Entity ids each memory names."""
        wanted = list(dict.fromkeys(memory_ids))
        out: dict[str, list[str]] = {}
        if wanted:
            for r in self._rows("SELECT memory_id, entity_id FROM memory_mentions WHERE memory_id = ANY(%s)", [wanted]):
                out.setdefault(r[0], []).append(r[1])
        return out

    def memories_mentioning(self, entity_ids: Iterable[str], filters: ScopeFilters, include_archived: bool,
                            limit: int) -> list[str]:
        """Memories of a scope that name any of the entities (most recent first)."""
        ids = list(dict.fromkeys(entity_ids))[:500]
        if not ids:
            return []
        where, params = _where(filters, include_archived)
        return [r[0] for r in self._rows(
            f"SELECT m.id FROM memory_mentions x JOIN memories m ON m.id = x.memory_id"
            f" WHERE x.entity_id = ANY(%s) AND {where} GROUP BY m.id, m.rowid_ ORDER BY m.rowid_ DESC LIMIT %s",
            [ids, *params, limit])]

    def _memory_total(self) -> int:
        row = self._one("SELECT coalesce(max(rowid_), 0) FROM memories")  # as SQLite's pruning counts
        return int(row[0]) if row else 0

    def _memory_ids(self, ranked: list[tuple[int, float]]) -> list[ScoredId]:
        if not ranked:
            return []
        ids = {int(r[0]): r[1] for r in self._rows("SELECT rowid_, id FROM memories WHERE rowid_ = ANY(%s)",
                                                   [[rid for rid, _ in ranked]])}
        return [ScoredId(ids[rid], score) for rid, score in ranked if rid in ids]

    def search_memories_fts(self, text: str, filters: ScopeFilters, include_archived: bool,
                            k: int) -> list[ScoredId]:
        """BM25-ranked memories of a scope matching any word of ``text`` (never query syntax)."""
        if k <= 0:
            return []
        where, params = _where(filters, include_archived)
        return self._memory_ids(self._fts_rank("memories", text, k, join_sql="JOIN memories m ON m.rowid_ = p.rid",
                                               where_sql=f"AND {where}", params=params, total=self._memory_total()))

    def memory_bm25(self, text: str, memory_ids: Sequence[str]) -> dict[str, float]:
        """BM25 of ``text`` for the given memories (those matching at least one word)."""
        wanted = list(dict.fromkeys(memory_ids))
        if not wanted:
            return {}
        rids = [int(r[0]) for r in self._rows("SELECT rowid_ FROM memories WHERE id = ANY(%s)", [wanted])]
        if not rids:
            return {}
        return dict(self._memory_ids(self._fts_rank("memories", text, None, rids=rids, total=self._memory_total())))

    def insert_memory_edges(self, edges: Sequence[MemoryEdgeInput]) -> int:
        """Insert ``(id, source, target, type, weight, now)`` memory edges (manual, base weight in
        properties); existing ``(source, type, target)`` edges are left alone. Returns how many are new."""
        n = 0
        for i, s, t, ty, w, now in edges:
            n += self._exec(
                "INSERT INTO edges (id, source, target, type, confidence, created_at, updated_at, manual, properties)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, 1, %s) ON CONFLICT DO NOTHING",
                [i, s, t, ty, w, now, now, json.dumps({"w0": w, "memory": True})])
        return n

    def memory_neighbours(self, memory_ids: Sequence[str], min_weight: float, per_node: int = 32
                          ) -> dict[str, list[MemoryNeighbour]]:
        """Memory-to-memory edges of each memory (either direction), its ``per_node`` strongest
        each way: ``{id: [(other, weight, type)]}``, in one statement of bounded index reads."""
        ids = list(dict.fromkeys(memory_ids))
        out: dict[str, list[MemoryNeighbour]] = {mid: [] for mid in ids}
        if not ids:
            return out
        rows = self._rows(
            "SELECT k.id, x.other, x.confidence, x.type FROM unnest(%s::text[]) WITH ORDINALITY AS k(id, ord)"
            " CROSS JOIN LATERAL (SELECT * FROM (SELECT 0 AS dir, target AS other, confidence, type, rid FROM edges"
            " WHERE source = k.id AND confidence >= %s ORDER BY confidence DESC, rid LIMIT %s) a UNION ALL"
            " SELECT * FROM (SELECT 1, source, confidence, type, rid FROM edges WHERE target = k.id"
            " AND confidence >= %s ORDER BY confidence DESC, rid LIMIT %s) b) x"
            " ORDER BY k.ord, x.dir, x.confidence DESC, x.rid", [ids, min_weight, per_node, min_weight, per_node])
        for r in rows:
            out[r[0]].append(MemoryNeighbour(r[1], float(r[2]), r[3]))
        return out

    def memory_edges_among(self, memory_ids: Sequence[str], min_weight: float = 0.0
                           ) -> list[MemoryEdgeRow]:
        """``(source, target, type, weight)`` of the edges whose two ends are among ``memory_ids``."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return []
        out = [MemoryEdgeRow(r[0], r[1], r[2], float(r[3])) for r in self._rows(
            "SELECT source, target, type, confidence FROM edges WHERE source = ANY(%s) AND target = ANY(%s)"
            " AND confidence >= %s", [ids, ids, min_weight])]
        return sorted(out, key=lambda e: (-e[3], e[0], e[1], e[2]))

    def memory_edge_decay_rows(self) -> list[MemoryEdgeDecay]:
        """``(edge id, type, weight, base weight, created_at, source used_at, target used_at)`` of every
        memory-to-memory edge."""
        return [MemoryEdgeDecay(r[0], r[1], float(r[2]), float(r[3] if r[3] is not None else r[2]), r[4], r[5], r[6])
                for r in self._rows(
                    "SELECT e.id, e.type, e.confidence, (e.properties::jsonb ->> 'w0')::float8, e.created_at,"
                    " a.used_at, b.used_at FROM edges e JOIN memories a ON a.id = e.source"
                    " JOIN memories b ON b.id = e.target ORDER BY e.rid")]

    def delete_memory_edges(self, filters: ScopeFilters, keep_types: Sequence[str] = ()) -> int:
        """Delete the memory-to-memory edges of a scope (all memories without filters), except
        those of ``keep_types``."""
        where, params = _where(filters, True)
        return self._exec(
            f"DELETE FROM edges WHERE id IN (SELECT e.id FROM edges e JOIN memories m ON m.id = e.source"
            f" JOIN memories b ON b.id = e.target WHERE {where} AND NOT (e.type = ANY(%s)))",
            [*params, list(keep_types)])

    def delete_memory_edges_by_id(self, edge_ids: Sequence[str]) -> int:
        """Delete these memory-to-memory edges; returns how many were deleted."""
        ids = list(dict.fromkeys(edge_ids))
        return self._exec("DELETE FROM edges WHERE id = ANY(%s)", [ids]) if ids else 0

    def memories_with_edges(self, memory_ids: Sequence[str], ignore_types: Sequence[str] = ()) -> set[str]:
        """Those of ``memory_ids`` that still have an edge (one of ``ignore_types`` does not count)."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return set()
        skip = list(ignore_types)
        return {r[0] for r in self._rows(
            "SELECT source FROM edges WHERE source = ANY(%s) AND NOT (type = ANY(%s)) UNION SELECT target FROM edges"
            " WHERE target = ANY(%s) AND NOT (type = ANY(%s))", [ids, skip, ids, skip])}

    def memory_decay_rows(self) -> list[MemoryDecay]:
        """``(id, used_at, quality, floor, relevance)`` of every live memory."""
        return [MemoryDecay(r[0], r[1], float(r[2]), float(r[3]), float(r[4])) for r in self._rows(
            "SELECT id, used_at, quality, floor, relevance FROM memories WHERE archived = 0 ORDER BY rowid_")]

    def set_memory_relevance(self, values: Sequence[WeightUpdate]) -> None:
        """``(relevance, id)`` updates."""
        self._execmany("UPDATE memories SET relevance = %s WHERE id = %s", [tuple(v) for v in values])

    def set_memories_archived(self, memory_ids: Sequence[str], archived: bool, now: str) -> None:
        """Archive (or restore) memories."""
        if memory_ids:
            self._exec("UPDATE memories SET archived = %s, updated_at = %s WHERE id = ANY(%s)",
                       [int(archived), now, list(dict.fromkeys(memory_ids))])
            self._bump_memory_generation()

    def set_memory_quality(self, memory_id: str, quality: float, floor: float, relevance: float, used_at: str,
                           archived: bool) -> None:
        """Write a memory's relevance state (after mark_relevant / mark_irrelevant)."""
        self._exec(
            "UPDATE memories SET quality = %s, floor = %s, relevance = %s, used_at = %s, archived = %s WHERE id = %s",
            [quality, floor, relevance, used_at, int(archived), memory_id])
        self._bump_memory_generation()

    def record_memory_use(self, memory_ids: Sequence[str], now: str) -> None:
        """The memories were returned by a search: count it and restart their decay clock."""
        self._execmany("UPDATE memories SET uses = uses + 1, used_at = %s WHERE id = %s",
                       [(now, i) for i in memory_ids])

    def add_memory_feedback(self, memory_id: str, query: str, helpful: bool, ts: str) -> None:
        """Record a feedback and count it on the memory."""
        self._exec("INSERT INTO memory_feedback (memory_id, query, helpful, ts) VALUES (%s, %s, %s, %s)",
                   [memory_id, query, int(helpful), ts])
        col = "helpful" if helpful else "unhelpful"
        self._exec(f"UPDATE memories SET {col} = {col} + 1 WHERE id = %s", [memory_id])

    def memory_feedback(self, memory_ids: Iterable[str], limit_per: int = 20) -> dict[str, list[Feedback]]:
        """The latest feedback ``(query, helpful)`` per memory."""
        wanted = list(dict.fromkeys(memory_ids))
        out: dict[str, list[Feedback]] = {}
        if not wanted:
            return out
        for r in self._rows(
                "SELECT k.id, f.query, f.helpful FROM unnest(%s::text[]) AS k(id) CROSS JOIN LATERAL (SELECT id, query,"
                " helpful FROM memory_feedback WHERE memory_id = k.id ORDER BY id DESC LIMIT %s) f ORDER BY f.id DESC",
                [wanted, limit_per]):
            out.setdefault(r[0], []).append(Feedback(r[1], bool(r[2])))
        return out

    def memory_llm_budget(self, key: str) -> LLMBudget | None:
        """``(day, tokens used, cooldown until)`` of an LLM budget."""
        r = self._one("SELECT day, tokens, cooldown_until FROM memory_llm_budget WHERE budget_key = %s", [key])
        return LLMBudget(r[0], int(r[1]), r[2]) if r else None

    def set_memory_llm_budget(self, key: str, day: str, tokens: int, cooldown_until: str | None) -> None:
        """Persist an LLM budget."""
        self._exec(
            "INSERT INTO memory_llm_budget (budget_key, day, tokens, cooldown_until) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (budget_key) DO UPDATE SET day = excluded.day, tokens = excluded.tokens,"
            " cooldown_until = excluded.cooldown_until", [key, day, tokens, cooldown_until])

    def memory_stats(self, filters: ScopeFilters) -> MemoryStats:
        """Counts of memories (live, archived) and of their edges by type, within a scope."""
        where, params = _where(filters, True)
        r = self._one(f"SELECT count(*), coalesce(sum(archived), 0) FROM memories m WHERE {where}", params)
        assert r is not None
        by_type = {row[0]: int(row[1]) for row in self._rows(
            f"SELECT e.type, count(*) FROM edges e JOIN memories m ON m.id = e.source"
            f" JOIN memories b ON b.id = e.target WHERE {where} GROUP BY e.type ORDER BY e.type", params)}
        mentions = self._one(
            f"SELECT count(*) FROM memory_mentions x JOIN memories m ON m.id = x.memory_id WHERE {where}", params)
        total, archived = int(r[0]), int(r[1])
        return {"memories": total - archived, "archived": archived, "edges": sum(by_type.values()),
                "edge_types": by_type, "mentions": int(mentions[0]) if mentions else 0}
