"""SQL for embedding vectors (SQLite backend) and the items waiting to be embedded."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..rows import EmbedRow, VectorBatch, VectorItem, VectorState
from .sqlbase import SqlHelpers, batches

__all__ = ["VectorSqlMixin"]


class VectorSqlMixin(SqlHelpers):
    """Vectors (one per item, tagged with its model) and embedding cursors."""

    # -- vectors ---------------------------------------------------------------------------------

    def upsert_vectors(self, item_kind: str, model: str, dim: int,
                       items: Sequence[VectorItem]) -> None:
        """Store ``(item_id, text_hash, float16 bytes)`` vectors, replacing older ones.

        A replaced vector is deleted and inserted again (a new row id, and the deletions counter
        moves) so that incremental in-memory and HNSW indexes notice the change."""
        for part in batches([i for i, _, _ in items]):
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
                     ) -> VectorBatch:
        """``(row ids, item ids, vector bytes)`` of a kind with row id > ``after_id``."""
        rows = self._rows(
            "SELECT id, item_id, vec FROM vectors WHERE model = ? AND item_kind = ? AND id > ? ORDER BY id",
            (model, item_kind, after_id),
        )
        return VectorBatch([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])

    def vectors_for(self, item_kind: str, item_ids: Iterable[str], model: str) -> dict[str, bytes]:
        """Vector bytes of the given items (those that have one)."""
        return self._vector_column("vec", item_kind, item_ids, model)

    def vector_state(self) -> VectorState:
        """``(max vector row id, deletions counter)``: an in-memory index is current iff both match."""
        max_id = self.conn.execute("SELECT coalesce(max(id), 0) FROM vectors").fetchone()[0]
        dels = self.conn.execute("SELECT value FROM kb_meta WHERE key = 'vectors.deletions'").fetchone()
        return VectorState(int(max_id), int(dels[0]) if dels else 0)

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

    # -- to embed --------------------------------------------------------------------------------

    def chunks_to_embed(self, latest_only: bool = True, after_id: int = 0, limit: int = 1000
                        ) -> list[EmbedRow]:
        """``(row id, chunk id, text)`` of chunks, in row order, for (re)embedding."""
        sql = "SELECT c.id, c.chunk_id, c.text FROM chunks c"
        if latest_only:
            sql += " JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.version AND d.is_latest = 1"
        sql += " WHERE c.id > ? ORDER BY c.id LIMIT ?"
        return [EmbedRow(r[0], r[1], r[2]) for r in self._rows(sql, (after_id, limit))]

    def relations_to_embed(self, after_rowid: int = 0, limit: int = 1000) -> list[EmbedRow]:
        """``(rowid, edge id, "subject relation object")`` of relations between entities, in row
        order, for (re)embedding (the text uses the entities' stored names)."""
        rows = self._rows(
            "SELECT e.rowid, e.id, a.name, e.type, b.name FROM edges e JOIN nodes a ON a.id = e.source"
            " JOIN nodes b ON b.id = e.target WHERE e.rowid > ? AND a.kind = 'entity' AND b.kind = 'entity'"
            " ORDER BY e.rowid LIMIT ?", (after_rowid, limit))
        return [EmbedRow(r[0], r[1], f"{r[2]} {r[3].replace('_', ' ')} {r[4]}") for r in rows]

    def nodes_to_embed(self, kind: str, after_rowid: int = 0, limit: int = 1000) -> list[EmbedRow]:
        """``(rowid, node id, name)`` of nodes of a kind, for (re)embedding."""
        rows = self._rows(
            "SELECT rowid, id, name FROM nodes WHERE kind = ? AND rowid > ? ORDER BY rowid LIMIT ?",
            (kind, after_rowid, limit),
        )
        return [EmbedRow(r[0], r[1], r[2]) for r in rows]
