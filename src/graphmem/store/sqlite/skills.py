"""SQL of the skills face: skill rows, fielded full text, skill-to-skill edges."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import cast

from ...errors import InvalidInput
from ..rows import EdgeRow, ScoredId, SkillEdgeAdd, SkillEdgeReweight, SkillFileRow, SkillListRow, SkillRow
from .fts import _fts_query
from .sqlbase import MAX_VARS, SqlHelpers, batches

__all__ = ["SkillSqlMixin", "SKILL_EDGE_TYPES"]

SKILL_EDGE_TYPES = ("related", "sibling", "similar", "mentions")
_FTS_FIELDS = ("name", "triggers", "tags", "description", "body")  # the columns of skills_fts, in order
_LIST_COLUMNS = ("rid, skill_id, node_id, root, path, name, name_key, description, category, tags, triggers,"
                 " related, sha256, size, mtime_ns")


class SkillSqlMixin(SqlHelpers):
    """Skill rows (with the node each one is) and their edges."""

    conn: sqlite3.Connection

    def skill_files(self, root: str) -> dict[str, SkillFileRow]:
        """``{skill_id: row(skill_id, root, sha256, size, mtime_ns, node_id)}`` of one root."""
        return {r["skill_id"]: cast(SkillFileRow, dict(r)) for r in self._rows(
            "SELECT skill_id, root, sha256, size, mtime_ns, node_id FROM skills WHERE root = ?", (root,))}

    def skill_roots_of(self, skill_ids: Iterable[str]) -> dict[str, str]:
        """The root each existing skill id was indexed from."""
        return self._map_in("SELECT skill_id, root FROM skills WHERE skill_id IN ({ids})", skill_ids)

    def upsert_skill(self, row: Mapping[str, object]) -> None:
        """Insert or update one skill row (its node must exist)."""
        cols = ("skill_id", "node_id", "root", "path", "name", "name_key", "description", "category", "tags",
                "triggers", "related", "body", "meta", "sha256", "size", "mtime_ns", "updated_at")
        values = [row[c] if c not in ("tags", "triggers", "related", "meta") else json.dumps(row[c], ensure_ascii=False)
                  for c in cols]
        self.conn.execute(
            f"INSERT INTO skills ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
            " ON CONFLICT (skill_id) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in cols if c != "skill_id"),
            values,
        )

    def set_skill_name(self, node_id: str, alias: str, norm: str) -> None:
        """Make ``norm`` the one name key of a skill node (the first skill keeps a shared name)."""
        self.conn.execute("DELETE FROM node_names WHERE node_id = ?", (node_id,))
        self.conn.execute("INSERT OR IGNORE INTO node_names (kind, norm, alias, node_id) VALUES ('skill', ?, ?, ?)",
                          (norm, alias, node_id))

    def set_skill_stat(self, skill_id: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for a skill whose content did not change."""
        self.conn.execute("UPDATE skills SET size = ?, mtime_ns = ? WHERE skill_id = ?", (size, mtime_ns, skill_id))

    def delete_skill_nodes(self, node_ids: Sequence[str]) -> None:
        """Delete skills by node id (the skill rows, edges and vectors cascade)."""
        for part in batches(list(node_ids)):
            self.conn.execute(f"DELETE FROM nodes WHERE kind = 'skill' AND id IN ({','.join('?' * len(part))})", part)

    def list_skill_rows(self) -> list[SkillListRow]:
        """Every skill without its body, in row order."""
        return [cast(SkillListRow, dict(r)) for r in self._rows(f"SELECT {_LIST_COLUMNS} FROM skills ORDER BY rid")]

    def get_skill_row(self, skill_id: str) -> SkillRow | None:
        """One skill with its body and meta."""
        rows = self._rows("SELECT * FROM skills WHERE skill_id = ?", (skill_id,))
        return cast(SkillRow, dict(rows[0])) if rows else None

    def skill_bodies(self, skill_ids: Iterable[str]) -> dict[str, str]:
        """Bodies of some skills."""
        return self._map_in("SELECT skill_id, body FROM skills WHERE skill_id IN ({ids})", skill_ids)

    def skill_rows_after(self, after_rid: int, limit: int) -> list[SkillListRow]:
        """Skills (without bodies) with rid > ``after_rid``, in row order (for reindex)."""
        rows = self._rows(f"SELECT {_LIST_COLUMNS} FROM skills WHERE rid > ? ORDER BY rid LIMIT ?", (after_rid, limit))
        return [cast(SkillListRow, dict(r)) for r in rows]

    def skill_bm25(self, text: str, weights: Sequence[float], limit: int) -> list[ScoredId]:
        """Fielded BM25 (columns name, triggers, tags, description, body weighted by ``weights``):
        ``[(skill_id, score)]``, best first, score > 0."""
        if len(weights) != len(_FTS_FIELDS):
            raise InvalidInput(f"weights: give {len(_FTS_FIELDS)} BM25 weights ({', '.join(_FTS_FIELDS)}), "
                               f"got {len(weights)}")
        expr = _fts_query(text)
        if expr is None:
            return []
        rows = self._rows(
            "SELECT s.skill_id, bm25(skills_fts, ?, ?, ?, ?, ?) AS r FROM skills_fts"
            " JOIN skills s ON s.rid = skills_fts.rowid WHERE skills_fts MATCH ? ORDER BY r LIMIT ?",
            (*weights, expr, limit),
        )
        return [ScoredId(r[0], -float(r[1])) for r in rows]

    def skills_with_phrase_in_body(self, phrase_words: Sequence[str]) -> list[str]:
        """Skill ids whose body contains the words as a phrase (candidates; callers verify)."""
        if not phrase_words:
            return []
        phrase = '"' + " ".join(w.replace('"', '""') for w in phrase_words) + '"'
        return [r[0] for r in self._rows(
            "SELECT s.skill_id FROM skills_fts JOIN skills s ON s.rid = skills_fts.rowid"
            " WHERE skills_fts MATCH ?", (f"body : {phrase}",))]

    def skill_edges(self) -> list[EdgeRow]:
        """``(source, type, target, weight, edge id)`` of every edge between skills."""
        types = ",".join(f"'{t}'" for t in SKILL_EDGE_TYPES)
        return [EdgeRow(r[0], r[1], r[2], float(r[3]), r[4]) for r in self._rows(
            "SELECT e.source, e.type, e.target, e.confidence, e.id FROM edges e"
            " JOIN skills a ON a.node_id = e.source JOIN skills b ON b.node_id = e.target"
            f" WHERE e.type IN ({types}) ORDER BY e.rowid")]

    def skill_edges_touching(self, node_ids: Sequence[str]) -> list[EdgeRow]:
        """The rows of :meth:`skill_edges` with an end among ``node_ids``, in the same order: what a
        walk from a few skills needs, without reading every edge."""
        types = ",".join(f"'{t}'" for t in SKILL_EDGE_TYPES)
        rows: dict[int, EdgeRow] = {}
        for part in batches(list(dict.fromkeys(node_ids)), MAX_VARS // 2):
            marks = ",".join("?" * len(part))
            for rid, *r in self._rows(
                    "SELECT e.rowid, e.source, e.type, e.target, e.confidence, e.id FROM edges e"
                    " JOIN skills a ON a.node_id = e.source JOIN skills b ON b.node_id = e.target"
                    f" WHERE (e.source IN ({marks}) OR e.target IN ({marks})) AND e.type IN ({types})",
                    [*part, *part]):
                rows[rid] = EdgeRow(r[0], r[1], r[2], float(r[3]), r[4])
        return [rows[k] for k in sorted(rows)]

    def has_skill_edges(self) -> bool:
        """Whether any edge joins two skills (from the skills' side: one index probe per skill until
        one has an edge, however many other edges the graph holds)."""
        types = ",".join(f"'{t}'" for t in SKILL_EDGE_TYPES)
        return bool(self._rows(
            "SELECT 1 FROM skills a CROSS JOIN edges e ON e.source = a.node_id JOIN skills b ON b.node_id = e.target"
            f" WHERE e.type IN ({types}) LIMIT 1"))

    def apply_skill_edges(self, add: Sequence[SkillEdgeAdd], remove: Sequence[str],
                          reweight: Sequence[SkillEdgeReweight], now: str) -> None:
        """Insert ``(id, source, type, target, weight)``, delete edge ids, change weights."""
        for part in batches(list(remove)):
            self.conn.execute(f"DELETE FROM edges WHERE id IN ({','.join('?' * len(part))})", part)
        self.conn.executemany(
            "INSERT INTO edges (id, source, target, type, confidence, created_at, updated_at, manual, properties)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, 1, '{}')"
            " ON CONFLICT (source, type, target) DO UPDATE SET confidence = excluded.confidence,"
            " updated_at = excluded.updated_at",
            [(i, s, d, t, w, now, now) for i, s, t, d, w in add],
        )
        self.conn.executemany("UPDATE edges SET confidence = ?, updated_at = ? WHERE id = ?",
                              [(w, now, i) for i, w in reweight])

    def skill_root_list(self) -> list[str]:
        """Folders skills were built from."""
        return [r[0] for r in self._rows("SELECT root FROM skill_roots ORDER BY root")]

    def add_skill_root(self, root: str, now: str) -> None:
        """Remember a folder skills were built from."""
        self.conn.execute("INSERT INTO skill_roots (root, built_at) VALUES (?, ?)"
                          " ON CONFLICT (root) DO UPDATE SET built_at = excluded.built_at", (root, now))

    def clear_skills(self) -> int:
        """Delete every skill (nodes, rows, edges, vectors); returns how many."""
        n = self.conn.execute("SELECT count(*) FROM skills").fetchone()[0]
        self.conn.execute("DELETE FROM nodes WHERE kind = 'skill'")
        return int(n)

