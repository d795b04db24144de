"""SQL of the memories face (part of the SQLite backend).

Memories are ``kind = 'memory'`` nodes with a row in ``memories`` (scope, text, timestamps,
decay state, feedback counters) and an FTS5 index for real BM25. Their links are rows of the
shared ``edges`` table (REPLY_TO, TEMPORAL_NEXT, ... between two memories of one scope key);
the entities a memory names are in ``memory_mentions``, outside ``edges``, so that entity-graph
walks never step onto memories.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from ..rows import (
    EmbedRow,
    Feedback,
    LLMBudget,
    MemoryDecay,
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
)
from .fts import pruned_fts_query
from .memory_edges import MemoryEdgeSqlMixin
from .memory_held import HeldRankInputs
from .memory_scope import scope_where
from .read_stamp import ReadStampMixin
from .sqlbase import MAX_VARS, SqlHelpers, batches

__all__ = ["MemorySqlMixin", "USES", "USED_AT", "WITH_USES"]


_SCOPE_TOKENS = (("t", "tenant_id"), ("u", "user_id"), ("a", "agent_id"), ("r", "run_id"))
_COLUMNS = ("rowid_", "id", "tenant_id", "user_id", "agent_id", "run_id", "scope_key", "role", "text", "metadata",
            "said_at", "created_at", "updated_at", "used_at", "version", "quality", "floor", "relevance",
            "archived", "uses", "helpful", "unhelpful")


# A memory's use counts: in memory_uses once a search counted it, else its own columns (migration 0031).
USES, USED_AT = "coalesce(u.uses, m.uses)", "coalesce(u.used_at, m.used_at)"
WITH_USES = "memories m LEFT JOIN memory_uses u ON u.rid = m.rowid_"
_SELECT_COLUMNS = ", ".join({"uses": USES, "used_at": USED_AT}.get(c, f"m.{c}") for c in _COLUMNS)
_HELD_SCOPES = 256  # scopes whose ids a store keeps (all are dropped when more are asked for)
_SCOPE_READ = 1000  # a held miss reads its scope keys' rank inputs up to this many (then by id only)
_ID, _METADATA, _ARCHIVED = _COLUMNS.index("id"), _COLUMNS.index("metadata"), _COLUMNS.index("archived")
_USES, _USED_AT = _COLUMNS.index("uses"), _COLUMNS.index("used_at")


def _row(r: Sequence[Any]) -> MemoryRow:
    """A memory row from a plain tuple of ``_COLUMNS`` (zip, not per-name lookups: the search's
    candidates go through here)."""
    out = dict(zip(_COLUMNS, r))
    meta = r[_METADATA]
    out["metadata"] = {} if meta == "{}" else json.loads(meta)  # most memories have none: skip the parser
    out["archived"] = bool(r[_ARCHIVED])
    return cast(MemoryRow, out)


class MemorySqlMixin(MemoryEdgeSqlMixin, ReadStampMixin, SqlHelpers):
    """Memories, their sessions, document references, mentions, feedback, decay and budgets."""

    # -- memories --------------------------------------------------------------------------------

    def insert_memory(self, mem: Mapping[str, object]) -> int:
        """Insert a memory (its node and its row); returns the row id."""
        c = self.conn
        c.execute(
            "INSERT INTO nodes (id, kind, name, type, properties, created_at, updated_at, relevance, archived, manual)"
            " VALUES (?, 'memory', ?, ?, '{}', ?, ?, 1.0, 0, 1)",
            (mem["id"], str(mem["text"])[:200], mem.get("role") or "memory", mem["created_at"], mem["created_at"]),
        )
        cur = c.execute(
            "INSERT INTO memories (id, tenant_id, user_id, agent_id, run_id, scope_key, role, text, metadata, said_at,"
            " created_at, updated_at, used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (mem["id"], mem.get("tenant_id"), mem.get("user_id"), mem.get("agent_id"), mem.get("run_id"),
             mem["scope_key"], mem.get("role"), mem["text"], json.dumps(mem.get("metadata") or {}, ensure_ascii=False),
             mem["said_at"], mem["created_at"], mem["created_at"], mem["created_at"]),
        )
        return int(cur.lastrowid or 0)

    def get_memories(self, ids: Iterable[str]) -> dict[str, MemoryRow]:
        """Memories by id (missing ids are absent); each call builds new rows (held as tuples while the read
        stamp holds, see memory_held.py)."""
        sql = f"SELECT {_SELECT_COLUMNS} FROM {WITH_USES} WHERE m.id IN ({{ids}})"

        def read(some: list[str]) -> dict[str, tuple[Any, ...]]:
            return {r[_ID]: tuple(r) for r in self._rows_in(sql, some)}

        stamp = self.read_stamp()
        got = read(list(ids)) if stamp is None else self._held_rank_inputs().get_full(stamp, ids, read)
        return {i: _row(r) for i, r in got.items()}

    def memory_rank_inputs(self, ids: Iterable[str]) -> dict[str, MemoryRankInputs]:
        """The rerank's columns of each memory (a search scores ~50 candidates and shows ~10: the
        texts and metadata of the others were read and parsed for nothing)."""
        cols = f"SELECT m.id, {USES}, m.helpful, m.unhelpful, m.quality, m.floor, {USED_AT} FROM {WITH_USES}"

        def read(some: list[str]) -> dict[str, MemoryRankInputs]:
            return {r[0]: MemoryRankInputs(*r[1:]) for r in self._rows_in(f"{cols} WHERE m.id IN ({{ids}})", some)}

        def read_scopes(some: list[str]) -> dict[str, MemoryRankInputs]:
            # Held, so read the missing ones' whole scope keys: the scope's next searches rank its other
            # memories, and one statement of 200 rows costs less than four of 50. A store that meets a scope
            # key of more than _SCOPE_READ memories reads by id from then on (a miss never reads a big scope).
            if self.__dict__.get("_big_scope_seen"):
                return read(some)
            got = {r[0]: MemoryRankInputs(*r[1:]) for r in self._rows_in(
                f"{cols} WHERE m.scope_key IN (SELECT scope_key FROM memories WHERE id IN ({{ids}})) LIMIT ?", some,
                after=[_SCOPE_READ + 1])}
            if len(got) > _SCOPE_READ:
                self.__dict__["_big_scope_seen"] = True
            rest = [i for i in some if i not in got]
            return {**got, **read(rest)} if rest else got

        stamp = self.read_stamp()
        if stamp is None:
            return read(list(ids))
        return self._held_rank_inputs().get(stamp, ids, read_scopes)

    def _held_rank_inputs(self) -> HeldRankInputs:
        held = self.__dict__.get("_rank_inputs")
        if held is None:
            held = self.__dict__["_rank_inputs"] = HeldRankInputs(_USES, _USED_AT)
        return cast(HeldRankInputs, held)

    def list_memories(self, filters: ScopeFilters, include_archived: bool = False, limit: int = 100,
                      offset: int = 0) -> list[MemoryRow]:
        """Memories matching the scope filters, oldest said first."""
        where, params = scope_where(filters, include_archived)
        rows = self._rows(f"SELECT {_SELECT_COLUMNS} FROM {WITH_USES} WHERE {where} ORDER BY m.said_at, m.rowid_"
                          " LIMIT ? OFFSET ?", [*params, limit, offset])
        return [_row(r) for r in rows]

    def memories_after(self, filters: ScopeFilters, after_rowid: int, limit: int) -> list[MemoryRow]:
        """Memories (archived too) with row id > ``after_rowid`` in row order (for backfills)."""
        where, params = scope_where(filters, True)
        rows = self._rows(f"SELECT {_SELECT_COLUMNS} FROM {WITH_USES} WHERE {where} AND m.rowid_ > ?"
                          " ORDER BY m.rowid_ LIMIT ?", [*params, after_rowid, limit])
        return [_row(r) for r in rows]

    def memory_scope_ids(self, filters: ScopeFilters, include_archived: bool, limit: int) -> list[str] | None:
        """Ids of the memories of a scope, or None when there are more than ``limit`` (kept per scope while
        ``memory.generation`` and the highest rowid_ stay: migration 0022 bumps the one for every change of a
        memory's scope columns, archived flag or existence; a new memory raises the other)."""
        key = (tuple(sorted((k, v) for k, v in filters.items() if v is not None)), include_archived, limit)
        state = self._memory_state()
        held = self.__dict__.setdefault("_memory_scope_ids", {})
        if state is not None and key in held and held[key][0] == state:
            return cast("list[str] | None", held[key][1])
        where, params = scope_where(filters, include_archived)
        rows = self._rows(f"SELECT id FROM memories m WHERE {where} LIMIT ?", [*params, limit + 1])
        ids = None if len(rows) > limit else [r[0] for r in rows]
        if state is not None:
            if len(held) >= _HELD_SCOPES:
                held.clear()
            held[key] = (state, ids)
        return ids

    def _memory_state(self) -> tuple[object, int] | None:
        """``(memory.generation, highest rowid_)``: what keys this process's copies of memory facts; None
        inside a write transaction (rows that may still be rolled back are not kept)."""
        stamp = self.read_stamp()
        if stamp is None:
            return None
        held = self.__dict__.get("_memory_state_at")
        if held is not None and held[0] == stamp:
            return cast("tuple[object, int]", held[1])
        gen, top = self.conn.execute("SELECT (SELECT value FROM kb_meta WHERE key = 'memory.generation'),"
                                     " coalesce(max(rowid_), 0) FROM memories").fetchone()
        self.__dict__["_memory_state_at"] = (stamp, (gen, int(top)))
        return (gen, int(top))

    def memory_vectors(self, filters: ScopeFilters, model: str, limit: int, after_rowid: int = 0
                       ) -> list[MemoryVectorRow] | None:
        """``(rowid, id, vector bytes)`` of a scope's memories with row id > ``after_rowid`` (one
        join), archived ones and those without a ``model`` vector with None bytes; None when there
        are more than ``limit``."""
        where, params = scope_where(filters, True)
        rows = self._rows(
            f"SELECT m.rowid_, m.id, v.vec, v.model, m.archived FROM memories m LEFT JOIN vectors v"
            f" ON v.item_kind = 'memory' AND v.item_id = m.id WHERE {where} AND m.rowid_ > ? LIMIT ?",
            [*params, after_rowid, limit + 1])
        if len(rows) > limit:
            return None
        return [MemoryVectorRow(r[0], r[1], r[2] if r[3] == model and not r[4] else None) for r in rows]

    def memory_scope_state(self, scope_key: str) -> ScopeState:
        """``(generation, count, max row id)`` of a scope key's memories (archived included; from
        the scope index alone): an unchanged generation and a grown count mean only new memories
        arrived (updates, deletions and archiving bump the generation)."""
        gen = self.conn.execute("SELECT value FROM kb_meta WHERE key = 'memory.generation'").fetchone()
        r = self.conn.execute("SELECT count(*), coalesce(max(rowid_), 0) FROM memories WHERE scope_key = ?",
                              (scope_key,)).fetchone()
        return ScopeState(int(gen[0]) if gen else 0, int(r[0]), int(r[1]))

    def _bump_memory_generation(self) -> None:
        self.conn.execute("INSERT INTO kb_meta (key, value) VALUES ('memory.generation', '1') ON CONFLICT(key)"
                          " DO UPDATE SET value = CAST(value AS INTEGER) + 1")

    def memories_in_scope(self, ids: Iterable[str], filters: ScopeFilters, include_archived: bool) -> set[str]:
        """Those of ``ids`` that match the scope filters."""
        where, params = scope_where(filters, include_archived)
        return {r[0] for r in self._rows_in(f"SELECT id FROM memories m WHERE id IN ({{ids}}) AND {where}",
                                            ids, after=params)}

    def memories_to_embed(self, after_rowid: int = 0, limit: int = 1000) -> list[EmbedRow]:
        """``(rowid, id, text)`` of memories after ``after_rowid``, for reindex."""
        return [EmbedRow(r[0], r[1], r[2]) for r in self._rows(
            "SELECT rowid_, id, text FROM memories WHERE rowid_ > ? ORDER BY rowid_ LIMIT ?", (after_rowid, limit))]

    def update_memory_text(self, memory_id: str, text: str, metadata: Mapping[str, object], now: str) -> None:
        """New text and metadata for a memory (version + 1; the decay clock restarts)."""
        self.conn.execute(
            "UPDATE memories SET text = ?, metadata = ?, updated_at = ?, used_at = ?, version = version + 1"
            " WHERE id = ?", (text, json.dumps(dict(metadata), ensure_ascii=False), now, now, memory_id))
        self._restart_use_clock(memory_id, now)
        self._bump_memory_generation()

    def _restart_use_clock(self, memory_id: str, used_at: str) -> None:
        # the memories column was set with it: a counted memory's memory_uses row is what reads see
        self.conn.execute("UPDATE memory_uses SET used_at = ? WHERE rid = (SELECT rowid_ FROM memories WHERE id = ?)",
                          (used_at, memory_id))

    def delete_memory(self, memory_id: str) -> int:
        """Delete a memory (its node, row, edges, references and vector); returns its edge count."""
        n = self.conn.execute("SELECT count(*) FROM edges WHERE source = ? OR target = ?",
                              (memory_id, memory_id)).fetchone()[0]
        self.conn.execute("DELETE FROM nodes WHERE id = ?", (memory_id,))  # cascades
        self._bump_memory_generation()
        return int(n)

    def add_memory_version(self, memory_id: str, version: int, event: str, old: str | None, new: str | None,
                           ts: str) -> None:
        """Record one history entry of a memory."""
        self.conn.execute(
            "INSERT INTO memory_versions (memory_id, version, event, old_text, new_text, ts) VALUES (?, ?, ?, ?, ?, ?)",
            (memory_id, version, event, old, new, ts))

    def memory_versions(self, memory_id: str) -> list[MemoryVersionRow]:
        """History of a memory, oldest first."""
        return [cast(MemoryVersionRow, dict(r)) for r in self._rows(
            "SELECT memory_id, version, event, old_text, new_text, ts FROM memory_versions WHERE memory_id = ?"
            " ORDER BY id", (memory_id,))]

    def memory_session(self, session_key: str) -> MemorySession | None:
        """``(memory id, said_at)`` of the last memory of a session."""
        r = self.conn.execute("SELECT memory_id, said_at FROM memory_sessions WHERE session_key = ?",
                              (session_key,)).fetchone()
        return MemorySession(r[0], r[1]) if r else None

    def memory_session_neighbours(self, scope_key: str, run_id: str | None, said_at: str, exclude: str
                                  ) -> tuple[MemorySession | None, MemorySession | None]:
        """The session's memories said just before (or at) and just after ``said_at`` (see the protocol)."""
        where = "scope_key = ? AND run_id IS ? AND id != ? AND instr(id, '~v') = 0"
        before = self.conn.execute(f"SELECT id, said_at FROM memories WHERE {where} AND said_at <= ?"
                                   " ORDER BY said_at DESC, rowid_ DESC LIMIT 1",
                                   (scope_key, run_id, exclude, said_at)).fetchone()
        after = self.conn.execute(f"SELECT id, said_at FROM memories WHERE {where} AND said_at > ?"
                                  " ORDER BY said_at, rowid_ LIMIT 1", (scope_key, run_id, exclude, said_at)).fetchone()
        return (MemorySession(before[0], before[1]) if before else None,
                MemorySession(after[0], after[1]) if after else None)

    def set_memory_session(self, session_key: str, memory_id: str, said_at: str) -> None:
        """Make a memory the last of its session."""
        self.conn.execute(
            "INSERT INTO memory_sessions (session_key, memory_id, said_at) VALUES (?, ?, ?) ON CONFLICT(session_key)"
            " DO UPDATE SET memory_id = excluded.memory_id, said_at = excluded.said_at",
            (session_key, memory_id, said_at))

    def add_memory_docrefs(self, scope_key: str, memory_id: str, refs: Iterable[str]) -> None:
        """Record the document references of a memory."""
        self.conn.executemany("INSERT OR IGNORE INTO memory_docrefs (scope_key, ref, memory_id) VALUES (?, ?, ?)",
                              [(scope_key, r, memory_id) for r in refs])

    def memories_with_docrefs(self, scope_key: str, refs: Sequence[str], exclude: str, limit: int) -> list[str]:
        """Memories of a scope key sharing one of ``refs`` (most recent first)."""
        if not refs:
            return []
        marks = ",".join("?" * len(refs))
        return [r[0] for r in self._rows(
            f"SELECT DISTINCT d.memory_id FROM memory_docrefs d JOIN memories m ON m.id = d.memory_id"
            f" WHERE d.scope_key = ? AND d.ref IN ({marks}) AND d.memory_id != ? ORDER BY m.rowid_ DESC LIMIT ?",
            [scope_key, *refs, exclude, limit])]

    def add_memory_mentions(self, memory_id: str, entity_ids: Iterable[str]) -> int:
        """Link a memory to entities it names; returns the number of new links."""
        cur = self.conn.executemany("INSERT OR IGNORE INTO memory_mentions (memory_id, entity_id) VALUES (?, ?)",
                                    [(memory_id, e) for e in entity_ids])
        return max(cur.rowcount, 0)

    def memory_mentions(self, memory_ids: Iterable[str]) -> dict[str, list[str]]:
        """Entity ids each memory names."""
        out: dict[str, list[str]] = {}
        for r in self._rows_in("SELECT memory_id, entity_id FROM memory_mentions WHERE memory_id IN ({ids})",
                               memory_ids):
            out.setdefault(r[0], []).append(r[1])
        return out

    def memories_mentioning(self, entity_ids: Iterable[str], filters: ScopeFilters, include_archived: bool,
                            limit: int) -> list[str]:
        """Memories of a scope that name any of the entities (most recent first)."""
        where, params = scope_where(filters, include_archived)
        ids = list(dict.fromkeys(entity_ids))[:MAX_VARS]
        if not ids:
            return []
        return [r[0] for r in self._rows(
            f"SELECT DISTINCT m.id FROM memory_mentions x JOIN memories m ON m.id = x.memory_id"
            f" WHERE x.entity_id IN ({','.join('?' * len(ids))}) AND {where} ORDER BY m.rowid_ DESC LIMIT ?",
            [*ids, *params, limit])]

    def _memory_fts_expr(self, text: str) -> str | None:
        # Which words are too common to search for: kept while no memory's text or scope changed and none
        # was added (_memory_state); the shared memo, emptied by every write to the file, lost them to each
        # search's own use counts.
        state = self._memory_state()
        if state is None:
            total = self.conn.execute("SELECT coalesce(max(rowid_), 0) FROM memories").fetchone()[0]
            return pruned_fts_query(self.conn, "memories_fts", text, total)
        held = self.__dict__.get("_memory_fts_words")
        if held is None or held[0] != state:
            held = self.__dict__["_memory_fts_words"] = (state, {})
        return pruned_fts_query(self.conn, "memories_fts", text, state[1], memo=held[1])

    @staticmethod
    def _scoped_expr(words: str, filters: ScopeFilters) -> str:
        """``scope : "u<hex>" AND ... AND text : (words)`` (see migration 0008)."""
        scope = [f'scope : "{p}{value.encode("utf-8").hex()}"' for p, key in _SCOPE_TOKENS
                 if isinstance(value := filters.get(key), str)]
        return " AND ".join([*scope, f"text : ({words})"])

    def search_memories_fts(self, text: str, filters: ScopeFilters, include_archived: bool,
                            k: int) -> list[ScoredId]:
        """BM25-ranked memories of a scope matching any word of ``text`` (never FTS syntax)."""
        expr = self._memory_fts_expr(text)
        if expr is None or k <= 0:
            return []
        where, params = scope_where(filters, include_archived)
        rows = self._rows(
            f"SELECT m.id, -bm25(memories_fts, 1.0, 0.0) AS score FROM memories_fts JOIN memories m"
            f" ON m.rowid_ = memories_fts.rowid WHERE memories_fts MATCH ? AND {where}"
            f" ORDER BY bm25(memories_fts, 1.0, 0.0) LIMIT ?", [self._scoped_expr(expr, filters), *params, k])
        return [ScoredId(r[0], float(r[1])) for r in rows]

    def memory_bm25(self, text: str, memory_ids: Sequence[str]) -> dict[str, float]:
        """BM25 of ``text`` for the given memories (those matching at least one word)."""
        expr = self._memory_fts_expr(text)
        if expr is None or not memory_ids:
            return {}
        out: dict[str, float] = {}
        for part in batches(list(memory_ids)):
            rows = self._rows(
                f"SELECT m.id, -bm25(memories_fts, 1.0, 0.0) FROM memories_fts JOIN memories m"
                f" ON m.rowid_ = memories_fts.rowid WHERE memories_fts MATCH ? AND memories_fts.rowid IN"
                f" (SELECT rowid_ FROM memories WHERE id IN ({','.join('?' * len(part))}))",
                [f"text : ({expr})", *part])
            out.update({r[0]: float(r[1]) for r in rows})
        return out

    def memory_decay_rows(self) -> list[MemoryDecay]:
        """``(id, used_at, quality, floor, relevance)`` of every live memory."""
        # in the order the dropped memories_used (archived, used_at) index gave them: decay's archived ids too
        return [MemoryDecay(r[0], r[1], float(r[2]), float(r[3]), float(r[4])) for r in self._rows(
            f"SELECT m.id, {USED_AT} AS used, m.quality, m.floor, m.relevance FROM {WITH_USES} WHERE m.archived = 0"
            " ORDER BY used, m.rowid_")]

    def set_memory_relevance(self, values: Sequence[WeightUpdate]) -> None:
        """``(relevance, id)`` updates."""
        self.conn.executemany("UPDATE memories SET relevance = ? WHERE id = ?", values)

    def set_memories_archived(self, memory_ids: Sequence[str], archived: bool, now: str) -> None:
        """Archive (or restore) memories."""
        if memory_ids:
            self.conn.executemany("UPDATE memories SET archived = ?, updated_at = ? WHERE id = ?",
                                  [(int(archived), now, i) for i in memory_ids])
            self._bump_memory_generation()

    def set_memory_quality(self, memory_id: str, quality: float, floor: float, relevance: float, used_at: str,
                           archived: bool) -> None:
        """Write a memory's relevance state (after mark_relevant / mark_irrelevant)."""
        self.conn.execute(
            "UPDATE memories SET quality = ?, floor = ?, relevance = ?, used_at = ?, archived = ? WHERE id = ?",
            (quality, floor, relevance, used_at, int(archived), memory_id))
        self._restart_use_clock(memory_id, used_at)
        self._bump_memory_generation()

    def record_memory_use(self, memory_ids: Sequence[str], now: str) -> None:
        """The memories were returned by a search: count it and restart their decay clock."""
        # One statement per multiplicity (a search's ids are distinct: one statement), not one per id.
        by_count: dict[int, list[str]] = {}
        if len(set(memory_ids)) == len(memory_ids):
            by_count[1] = list(memory_ids)
        else:
            for mid, n in Counter(memory_ids).items():
                by_count.setdefault(n, []).append(mid)
        # a search's own bookkeeping: the read stamp ignores it, and the held rank inputs get it after COMMIT
        counted = self.note_harmless(lambda: self._held_rank_inputs().count_uses(by_count, now))
        # Into the narrow memory_uses (migration 0031): a memory counted for the first time gets its row there,
        # from its own columns; the wide memories rows, their index and their replay log stay untouched.
        for n, ids in by_count.items():
            for part in batches(ids, MAX_VARS - 3):
                self.conn.execute(
                    "INSERT INTO memory_uses (rid, uses, used_at) SELECT rowid_, uses + ?, ? FROM memories WHERE id IN"
                    f" ({','.join('?' * len(part))}) ON CONFLICT (rid) DO UPDATE SET uses = memory_uses.uses + ?,"
                    " used_at = excluded.used_at", [n, now, *part, n])
        counted()

    def add_memory_feedback(self, memory_id: str, query: str, helpful: bool, ts: str) -> None:
        """Record a feedback and count it on the memory."""
        self.conn.execute("INSERT INTO memory_feedback (memory_id, query, helpful, ts) VALUES (?, ?, ?, ?)",
                          (memory_id, query, int(helpful), ts))
        col = "helpful" if helpful else "unhelpful"
        self.conn.execute(f"UPDATE memories SET {col} = {col} + 1 WHERE id = ?", (memory_id,))

    def memory_feedback(self, memory_ids: Iterable[str], limit_per: int = 20) -> dict[str, list[Feedback]]:
        """The latest feedback ``(query, helpful)`` per memory."""
        out: dict[str, list[Feedback]] = {}
        for r in self._rows_in("SELECT memory_id, query, helpful FROM memory_feedback WHERE memory_id IN ({ids})"
                               " ORDER BY id DESC", memory_ids):
            lst = out.setdefault(r[0], [])
            if len(lst) < limit_per:
                lst.append(Feedback(r[1], bool(r[2])))
        return out

    def memory_llm_budget(self, key: str) -> LLMBudget | None:
        """``(day, tokens used, cooldown until)`` of an LLM budget."""
        r = self.conn.execute("SELECT day, tokens, cooldown_until FROM memory_llm_budget WHERE budget_key = ?",
                              (key,)).fetchone()
        return LLMBudget(r[0], int(r[1]), r[2]) if r else None

    def set_memory_llm_budget(self, key: str, day: str, tokens: int, cooldown_until: str | None) -> None:
        """Persist an LLM budget."""
        self.conn.execute(
            "INSERT INTO memory_llm_budget (budget_key, day, tokens, cooldown_until) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(budget_key) DO UPDATE SET day = excluded.day, tokens = excluded.tokens,"
            " cooldown_until = excluded.cooldown_until", (key, day, tokens, cooldown_until))

    def memory_stats(self, filters: ScopeFilters) -> MemoryStats:
        """Counts of memories (live, archived) and of their edges by type, within a scope."""
        where, params = scope_where(filters, True)
        r = self.conn.execute(
            f"SELECT count(*), coalesce(sum(archived), 0) FROM memories m WHERE {where}", params).fetchone()
        by_type = {row[0]: row[1] for row in self._rows(
            f"SELECT e.type, count(*) FROM edges e JOIN memories m ON m.id = e.source"
            f" JOIN memories b ON b.id = e.target WHERE {where} GROUP BY e.type ORDER BY e.type", params)}
        mentions = self.conn.execute(
            f"SELECT count(*) FROM memory_mentions x JOIN memories m ON m.id = x.memory_id WHERE {where}",
            params).fetchone()[0]
        return {"memories": r[0] - r[1], "archived": r[1], "edges": sum(by_type.values()), "edge_types": by_type,
                "mentions": mentions}
