"""SQL of the skills face (PostgreSQL backend): skill rows, fielded full text, skill-to-skill edges.
The port of ``store/sqlite/skills.py``."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import cast

from ...errors import InvalidInput
from ..rows import EdgeRow, ScoredId, SkillEdgeAdd, SkillEdgeReweight, SkillFileRow, SkillListRow, SkillRow
from .fts import FtsPgMixin, tokens
from .pgbase import Row

__all__ = ["SkillPgMixin", "SKILL_EDGE_TYPES"]

SKILL_EDGE_TYPES = ("related", "sibling", "similar", "mentions")
_FTS_FIELDS = ("name", "triggers", "tags", "description", "body")  # the weighted fields, in order
_LIST_COLUMNS = ("rid, skill_id, node_id, root, path, name, name_key, description, category, tags, triggers,"
                 " related, sha256, size, mtime_ns")
_ROW_COLUMNS = _LIST_COLUMNS + ", body, meta, updated_at"
_UPSERT = ("skill_id", "node_id", "root", "path", "name", "name_key", "description", "category", "tags",
           "triggers", "related", "body", "meta", "sha256", "size", "mtime_ns", "updated_at")


def _dict(r: Row) -> dict[str, object]:
    """A row as ``{column: value}`` (a Row iterates over its values)."""
    names = r.keys()
    return {k: r[k] for k in names}


class SkillPgMixin(FtsPgMixin):
    """Skill rows (with the node each one is) and their edges."""

    def skill_files(self, root: str) -> dict[str, SkillFileRow]:
        """``{skill_id: row(skill_id, root, sha256, size, mtime_ns, node_id)}`` of one root."""
        return {r["skill_id"]: cast(SkillFileRow, _dict(r)) for r in self._rows(
            "SELECT skill_id, root, sha256, size, mtime_ns, node_id FROM skills WHERE root = %s", [root])}

    def skill_roots_of(self, skill_ids: Iterable[str]) -> dict[str, str]:
        """The root each existing skill id was indexed from."""
        wanted = list(dict.fromkeys(skill_ids))
        if not wanted:
            return {}
        return {r[0]: r[1] for r in self._rows("SELECT skill_id, root FROM skills WHERE skill_id = ANY(%s)", [wanted])}

    def upsert_skill(self, row: Mapping[str, object]) -> None:
        """Insert or update one skill row (its node must exist)."""
        values = [row[c] if c not in ("tags", "triggers", "related", "meta") else json.dumps(row[c], ensure_ascii=False)
                  for c in _UPSERT]
        saved = self._one(
            f"INSERT INTO skills ({', '.join(_UPSERT)}) VALUES ({', '.join(['%s'] * len(_UPSERT))})"
            " ON CONFLICT (skill_id) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in _UPSERT[1:])
            + " RETURNING rid",
            values,
        )
        assert saved is not None
        fields = dict(zip(_UPSERT, values))
        self._fts_remove("skills", [int(saved[0])])
        self._fts_add("skills", [(int(saved[0]), [str(fields[f]) for f in _FTS_FIELDS])])

    def set_skill_name(self, node_id: str, alias: str, norm: str) -> None:
        """Make ``norm`` the one name key of a skill node (the first skill keeps a shared name)."""
        self._exec("DELETE FROM node_names WHERE node_id = %s", [node_id])
        row = self._one("INSERT INTO node_names (kind, norm, alias, node_id) VALUES ('skill', %s, %s, %s)"
                        " ON CONFLICT (kind, norm) DO NOTHING RETURNING id", [norm, alias, node_id])
        if row is not None:
            self._fts_add("node_names", [(int(row[0]), [alias])])

    def set_skill_stat(self, skill_id: str, size: int, mtime_ns: int) -> None:
        """Record a new size/mtime for a skill whose content did not change."""
        self._exec("UPDATE skills SET size = %s, mtime_ns = %s WHERE skill_id = %s", [size, mtime_ns, skill_id])

    def delete_skill_nodes(self, node_ids: Sequence[str]) -> None:
        """Delete skills by node id (the skill rows, edges and vectors cascade)."""
        wanted = list(dict.fromkeys(node_ids))
        if wanted:
            self._exec("DELETE FROM nodes WHERE kind = 'skill' AND id = ANY(%s)", [wanted])

    def list_skill_rows(self) -> list[SkillListRow]:
        """Every skill without its body, in row order."""
        return [cast(SkillListRow, _dict(r)) for r in self._rows(f"SELECT {_LIST_COLUMNS} FROM skills ORDER BY rid")]

    def get_skill_row(self, skill_id: str) -> SkillRow | None:
        """One skill with its body and meta."""
        r = self._one(f"SELECT {_ROW_COLUMNS} FROM skills WHERE skill_id = %s", [skill_id])
        return cast(SkillRow, _dict(r)) if r is not None else None

    def skill_bodies(self, skill_ids: Iterable[str]) -> dict[str, str]:
        """Bodies of some skills."""
        wanted = list(dict.fromkeys(skill_ids))
        if not wanted:
            return {}
        return {r[0]: r[1] for r in self._rows("SELECT skill_id, body FROM skills WHERE skill_id = ANY(%s)", [wanted])}

    def skill_rows_after(self, after_rid: int, limit: int) -> list[SkillListRow]:
        """Skills (without bodies) with rid > ``after_rid``, in row order (for reindex)."""
        return [cast(SkillListRow, _dict(r)) for r in self._rows(
            f"SELECT {_LIST_COLUMNS} FROM skills WHERE rid > %s ORDER BY rid LIMIT %s", [after_rid, limit])]

    def skill_bm25(self, text: str, weights: Sequence[float], limit: int) -> list[ScoredId]:
        """Fielded BM25 (fields name, triggers, tags, description, body weighted by ``weights``):
        ``[(skill_id, score)]``, best first, score > 0."""
        if len(weights) != len(_FTS_FIELDS):
            raise InvalidInput(f"weights: give {len(_FTS_FIELDS)} BM25 weights ({', '.join(_FTS_FIELDS)}), "
                               f"got {len(weights)}")
        if limit <= 0:
            return []
        ranked = self._fts_rank("skills", text, limit, weights=[float(w) for w in weights], prune=False)
        if not ranked:
            return []
        ids = {int(r[0]): r[1] for r in self._rows("SELECT rid, skill_id FROM skills WHERE rid = ANY(%s)",
                                                   [[rid for rid, _ in ranked]])}
        return [ScoredId(ids[rid], score) for rid, score in ranked if rid in ids]

    def skills_with_phrase_in_body(self, phrase_words: Sequence[str]) -> list[str]:
        """Skill ids whose body contains the words as a phrase (candidates; callers verify)."""
        phrase = [t for w in phrase_words for t in tokens(w)]
        if not phrase:
            return []
        # The term statistics find the bodies holding every term; the order is checked on their tokens.
        rows = self._rows(
            "SELECT s.skill_id, s.body FROM skills s WHERE s.rid IN (SELECT p.rid FROM skills_fts_terms p"
            " WHERE p.term = ANY(%s) AND p.tfs[5] > 0 GROUP BY p.rid HAVING count(*) = %s) ORDER BY s.rid",
            [list(set(phrase)), len(set(phrase))])
        n = len(phrase)
        out: list[str] = []
        for skill_id, body in rows:
            toks = tokens(body)
            if any(toks[i:i + n] == phrase for i in range(len(toks) - n + 1)):
                out.append(skill_id)
        return out

    def skill_edges(self) -> list[EdgeRow]:
        """``(source, type, target, weight, edge id)`` of every edge between skills, in the order the
        edges were written."""
        return [EdgeRow(r[0], r[1], r[2], float(r[3]), r[4]) for r in self._rows(
            "SELECT e.source, e.type, e.target, e.confidence, e.id FROM edges e"
            " JOIN skills a ON a.node_id = e.source JOIN skills b ON b.node_id = e.target"
            " WHERE e.type = ANY(%s) ORDER BY e.rid", [list(SKILL_EDGE_TYPES)])]

    def skill_edges_touching(self, node_ids: Sequence[str]) -> list[EdgeRow]:
        """The rows of :meth:`skill_edges` with a source or target among ``node_ids``, in the same order."""
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            return []
        return [EdgeRow(r[0], r[1], r[2], float(r[3]), r[4]) for r in self._rows(
            "SELECT e.source, e.type, e.target, e.confidence, e.id FROM edges e"
            " JOIN skills a ON a.node_id = e.source JOIN skills b ON b.node_id = e.target"
            " WHERE e.type = ANY(%s) AND (e.source = ANY(%s) OR e.target = ANY(%s)) ORDER BY e.rid",
            [list(SKILL_EDGE_TYPES), ids, ids])]

    def has_skill_edges(self) -> bool:
        """Whether :meth:`skill_edges` would return anything."""
        return self._one(
            "SELECT 1 FROM edges e JOIN skills a ON a.node_id = e.source JOIN skills b ON b.node_id = e.target"
            " WHERE e.type = ANY(%s) LIMIT 1", [list(SKILL_EDGE_TYPES)]) is not None

    def apply_skill_edges(self, add: Sequence[SkillEdgeAdd], remove: Sequence[str],
                          reweight: Sequence[SkillEdgeReweight], now: str) -> None:
        """Insert ``(id, source, type, target, weight)``, delete edge ids, change weights."""
        gone = list(dict.fromkeys(remove))
        if gone:
            self._exec("DELETE FROM edges WHERE id = ANY(%s)", [gone])
        self._execmany(
            "INSERT INTO edges (id, source, target, type, confidence, created_at, updated_at, manual, properties)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, 1, '{}')"
            " ON CONFLICT (source, type, target) DO UPDATE SET confidence = excluded.confidence,"
            " updated_at = excluded.updated_at",
            [(i, s, d, t, w, now, now) for i, s, t, d, w in add],
        )
        self._execmany("UPDATE edges SET confidence = %s, updated_at = %s WHERE id = %s",
                       [(w, now, i) for i, w in reweight])

    def skill_root_list(self) -> list[str]:
        """Folders skills were built from."""
        return [r[0] for r in self._rows("SELECT root FROM skill_roots ORDER BY root")]

    def add_skill_root(self, root: str, now: str) -> None:
        """Remember a folder skills were built from."""
        self._exec("INSERT INTO skill_roots (root, built_at) VALUES (%s, %s)"
                   " ON CONFLICT (root) DO UPDATE SET built_at = excluded.built_at", [root, now])

    def clear_skills(self) -> int:
        """Delete every skill (nodes, rows, edges, vectors); returns how many."""
        n = self._one("SELECT count(*) FROM skills")
        self._exec("DELETE FROM nodes WHERE kind = 'skill'")
        return int(n[0]) if n is not None else 0
