"""SQL for embeddings and graph adjacency used by retrieval (part of the SQLite backend)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .sqlbase import MAX_VARS as _MAX_VARS
from .sqlbase import SqlHelpers
from .sqlbase import batches as _parts

__all__ = ["VectorSqlMixin"]


class VectorSqlMixin(SqlHelpers):
    """Vectors (one per item and model), KB metadata, and retrieval lookups."""

    # -- kb metadata ----------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A knowledge-base fact (e.g. ``embeddings.model``), or None."""
        row = self.conn.execute("SELECT value FROM kb_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        """Set (or with None, remove) a knowledge-base fact."""
        if value is None:
            self.conn.execute("DELETE FROM kb_meta WHERE key = ?", (key,))
        else:
            self.conn.execute(
                "INSERT INTO kb_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- vectors ----------------------------------------------------------------------------------

    def upsert_vectors(self, item_kind: str, model: str, dim: int,
                       items: Sequence[tuple[str, str, bytes]]) -> None:
        """Store ``(item_id, text_hash, float16 bytes)`` vectors, replacing older ones.

        A replaced vector is deleted and inserted again (a new row id, and the deletions counter
        moves) so that incremental in-memory and HNSW indexes notice the change."""
        for part in _parts([i for i, _, _ in items]):
            self.conn.execute(
                f"DELETE FROM vectors WHERE item_kind = ? AND item_id IN ({','.join('?' * len(part))})",
                [item_kind, *part],
            )
        self.conn.executemany(
            "INSERT INTO vectors (item_kind, item_id, model, dim, text_hash, vec) VALUES (?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(item_kind, item_id) DO UPDATE SET model = excluded.model, dim = excluded.dim,"
            " text_hash = excluded.text_hash, vec = excluded.vec",
            [(item_kind, i, model, dim, h, v) for i, h, v in items],
        )

    def _vector_column(self, column: str, item_kind: str, item_ids: Iterable[str], model: str) -> dict[str, Any]:
        # Filter on the model in Python: with it in SQL the planner prefers the (model, kind)
        # index and scans every vector of the model instead of the (kind, id) lookups.
        return {r[0]: r[1] for r in self._rows_in(
            f"SELECT item_id, {column}, model FROM vectors WHERE item_kind = ? AND item_id IN ({{ids}})",
            item_ids, before=[item_kind]) if r[2] == model}

    def vector_hashes(self, item_kind: str, item_ids: Iterable[str], model: str) -> dict[str, str]:
        """Text hash of the stored vector per item (for this model)."""
        return self._vector_column("text_hash", item_kind, item_ids, model)

    def load_vectors(self, item_kind: str, model: str, after_id: int = 0
                     ) -> tuple[list[int], list[str], list[bytes]]:
        """``(row ids, item ids, vector bytes)`` of a kind with row id > ``after_id``."""
        rows = self._rows(
            "SELECT id, item_id, vec FROM vectors WHERE model = ? AND item_kind = ? AND id > ? ORDER BY id",
            (model, item_kind, after_id),
        )
        return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]

    def vectors_for(self, item_kind: str, item_ids: Iterable[str], model: str) -> dict[str, bytes]:
        """Vector bytes of the given items (those that have one)."""
        return self._vector_column("vec", item_kind, item_ids, model)

    def vector_state(self) -> tuple[int, int]:
        """``(max vector row id, deletions counter)``: an in-memory index is current iff both match."""
        max_id = self.conn.execute("SELECT coalesce(max(id), 0) FROM vectors").fetchone()[0]
        dels = self.conn.execute("SELECT value FROM kb_meta WHERE key = 'vectors.deletions'").fetchone()
        return int(max_id), int(dels[0]) if dels else 0

    def vector_models(self) -> dict[str, int]:
        """Number of stored vectors per model."""
        return {r[0]: r[1] for r in self._rows("SELECT model, count(*) FROM vectors GROUP BY model")}

    def delete_vectors(self, model: str | None = None) -> int:
        """Remove vectors (of one model, or all); returns how many."""
        if model is None:
            cur = self.conn.execute("DELETE FROM vectors")
        else:
            cur = self.conn.execute("DELETE FROM vectors WHERE model = ?", (model,))
        return cur.rowcount

    def chunks_to_embed(self, latest_only: bool = True, after_id: int = 0, limit: int = 1000
                        ) -> list[tuple[int, str, str]]:
        """``(row id, chunk id, text)`` of chunks, in row order, for (re)embedding."""
        sql = "SELECT c.id, c.chunk_id, c.text FROM chunks c"
        if latest_only:
            sql += " JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.version AND d.is_latest = 1"
        sql += " WHERE c.id > ? ORDER BY c.id LIMIT ?"
        return [(r[0], r[1], r[2]) for r in self._rows(sql, (after_id, limit))]

    def relations_to_embed(self, after_rowid: int = 0, limit: int = 1000) -> list[tuple[int, str, str]]:
        """``(rowid, edge id, "subject relation object")`` of relations between entities, in row
        order, for (re)embedding (the text uses the entities' stored names)."""
        rows = self._rows(
            "SELECT e.rowid, e.id, a.name, e.type, b.name FROM edges e JOIN nodes a ON a.id = e.source"
            " JOIN nodes b ON b.id = e.target WHERE e.rowid > ? AND a.kind = 'entity' AND b.kind = 'entity'"
            " ORDER BY e.rowid LIMIT ?", (after_rowid, limit))
        return [(r[0], r[1], f"{r[2]} {r[3].replace('_', ' ')} {r[4]}") for r in rows]

    def nodes_to_embed(self, kind: str, after_rowid: int = 0, limit: int = 1000) -> list[tuple[int, str, str]]:
        """``(rowid, node id, name)`` of nodes of a kind, for (re)embedding."""
        rows = self._rows(
            "SELECT rowid, id, name FROM nodes WHERE kind = ? AND rowid > ? ORDER BY rowid LIMIT ?",
            (kind, after_rowid, limit),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    # -- retrieval lookups ------------------------------------------------------------------------

    def chunk_bm25(self, text: str, chunk_ids: Sequence[str]) -> dict[str, float]:
        """BM25 (higher is better) of ``text`` for the given chunks (absent: no word matches)."""
        fts_expr = self.chunk_fts_expr(text)  # type: ignore[attr-defined]
        out: dict[str, float] = {}
        if fts_expr is None:
            return out
        for part in _parts(list(chunk_ids)):
            for r in self._rows(
                "SELECT c.chunk_id, -bm25(chunks_fts) FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid"
                f" WHERE chunks_fts MATCH ? AND c.chunk_id IN ({','.join('?' * len(part))})",
                [fts_expr, *part],
            ):
                out[r[0]] = float(r[1])
        return out

    def entity_chunk_counts(self, node_ids: Iterable[str]) -> dict[str, int]:
        """Number of distinct chunks mentioning each entity (its passage frequency)."""
        return self._map_in(
            "SELECT node_id, count(DISTINCT chunk_id) FROM mentions WHERE node_id IN ({ids}) GROUP BY node_id",
            node_ids)

    def adjacency(self, node_ids: Iterable[str], min_confidence: float = 0.0, limit: int | None = None
                  ) -> list[tuple[str, str, str, float, str]]:
        """``(source, type, target, confidence, edge id)`` of the edges touching the nodes, strongest
        first, at most ``limit`` (no JSON decoding: this is the graph walks' hot path)."""
        ids = list(dict.fromkeys(node_ids))
        out: list[tuple[str, str, str, float, str]] = []
        if limit is None:
            for part in _parts(ids, _MAX_VARS // 2):
                marks = ",".join("?" * len(part))
                out += [(r[0], r[1], r[2], r[3], r[4]) for r in self._rows(
                    f"SELECT source, type, target, confidence, id FROM edges WHERE source IN ({marks})"
                    f" AND confidence >= ? UNION SELECT source, type, target, confidence, id FROM edges"
                    f" WHERE target IN ({marks}) AND confidence >= ?",
                    [*part, min_confidence, *part, min_confidence],
                )]
            return out
        # Bounded: each node's strongest edges through the (node, confidence) indexes, so a hub
        # with 10,000 relations costs what a node with 10 does.
        per_node = max(10, -(-limit // max(len(ids), 1)))
        seen: set[str] = set()
        for nid in ids:
            for col in ("source", "target"):
                for r in self._rows(
                    f"SELECT source, type, target, confidence, id FROM edges WHERE {col} = ? AND confidence >= ?"
                    " ORDER BY confidence DESC LIMIT ?",
                    (nid, min_confidence, per_node),
                ):
                    if r[4] not in seen:
                        seen.add(r[4])
                        out.append((r[0], r[1], r[2], r[3], r[4]))
        out.sort(key=lambda t: (-t[3], t[4]))
        return out[:limit]

    def entities_chunks(self, node_ids: Iterable[str], limit_per_node: int) -> dict[str, list[tuple[str, int]]]:
        """Distinct chunks of latest document versions mentioning each entity, newest first, at
        most ``limit_per_node`` each, with the entity's first offset in the document (one query
        for the whole batch)."""
        ids = list(dict.fromkeys(node_ids))
        out: dict[str, list[tuple[str, int]]] = {}
        for part in _parts(ids):
            rows = self._rows(
                "SELECT node_id, chunk_id, first FROM (SELECT m.node_id, m.chunk_id, min(m.start) AS first,"
                " ROW_NUMBER() OVER (PARTITION BY m.node_id ORDER BY max(m.id) DESC) AS rn FROM mentions m"
                " JOIN documents d ON d.doc_id = m.doc_id AND d.version = m.version AND d.is_latest = 1"
                f" WHERE m.node_id IN ({','.join('?' * len(part))}) GROUP BY m.node_id, m.chunk_id)"
                " WHERE rn <= ?",
                [*part, limit_per_node],
            )
            for r in rows:
                out.setdefault(r[0], []).append((r[1], r[2]))
        return out

    def node_names(self, node_ids: Iterable[str]) -> dict[str, str]:
        """Display name per node id (no aliases, no JSON): for paths and subgraphs."""
        return self._map_in("SELECT id, name FROM nodes WHERE id IN ({ids})", node_ids)

    def entity_chunks(self, node_id: str, limit: int) -> list[str]:
        """Distinct chunks (latest document versions) mentioning an entity, newest first."""
        rows = self._rows(
            "SELECT m.chunk_id FROM mentions m JOIN documents d ON d.doc_id = m.doc_id AND d.version = m.version"
            " AND d.is_latest = 1 WHERE m.node_id = ? GROUP BY m.chunk_id ORDER BY max(m.id) DESC LIMIT ?",
            (node_id, limit),
        )
        return [r[0] for r in rows]

    def chunk_entities(self, chunk_ids: Iterable[str]) -> dict[str, list[str]]:
        """Distinct entities mentioned in each chunk."""
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, list[str]] = {}
        for part in _parts(ids):
            for r in self._rows(
                f"SELECT DISTINCT chunk_id, node_id FROM mentions WHERE chunk_id IN ({','.join('?' * len(part))})",
                part,
            ):
                out.setdefault(r[0], []).append(r[1])
        return out

    def chunk_info(self, chunk_ids: Iterable[str]) -> dict[str, tuple[str, int, str, bool]]:
        """``(doc_id, version, title, is_latest)`` per chunk."""
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, tuple[str, int, str, bool]] = {}
        for part in _parts(ids):
            for r in self._rows(
                "SELECT c.chunk_id, c.doc_id, c.version, d.title, d.is_latest FROM chunks c JOIN documents d"
                " ON d.doc_id = c.doc_id AND d.version = c.version"
                f" WHERE c.chunk_id IN ({','.join('?' * len(part))})",
                part,
            ):
                out[r[0]] = (r[1], r[2], r[3], bool(r[4]))
        return out
