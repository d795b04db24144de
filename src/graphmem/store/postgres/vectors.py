"""SQL for embedding vectors (PostgreSQL backend) and the items waiting to be embedded."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..rows import EmbedRow, VectorBatch, VectorItem, VectorState
from .pgbase import PgHelpers

__all__ = ["VectorPgMixin"]


class VectorPgMixin(PgHelpers):
    """Vectors (one per item, tagged with its model) and embedding cursors."""

    def upsert_vectors(self, item_kind: str, model: str, dim: int, items: Sequence[VectorItem]) -> None:
        """Store ``(item_id, text_hash, float16 bytes)`` vectors, replacing older ones (a replaced vector is
        deleted and inserted again: a new row id, and the deletions counter moves)."""
        if not items:
            return
        last = {i: (h, v) for i, h, v in items}  # the same item twice in one call: the last one wins
        ids = list(last)
        self._exec("DELETE FROM vectors WHERE item_kind = %s AND item_id = ANY(%s)", (item_kind, ids))
        self._exec(
            "INSERT INTO vectors (item_kind, item_id, model, dim, text_hash, vec)"
            " SELECT %s, i, %s, %s, h, v FROM unnest(%s::text[], %s::text[], %s::bytea[])"
            " WITH ORDINALITY AS u(i, h, v, n) ORDER BY n",
            (item_kind, model, dim, ids, [last[i][0] for i in ids], [bytes(last[i][1]) for i in ids]))

    def _vector_column(self, column: str, item_kind: str, item_ids: Iterable[str], model: str) -> dict[str, Any]:
        return {r[0]: r[1] for r in self._rows(
            f"SELECT item_id, {column} FROM vectors WHERE item_kind = %s AND item_id = ANY(%s) AND model = %s",
            (item_kind, list(set(item_ids)), model))}

    def vector_hashes(self, item_kind: str, item_ids: Iterable[str], model: str) -> dict[str, str]:
        """Text hash of the stored vector per item (for this model)."""
        return self._vector_column("text_hash", item_kind, item_ids, model)

    def vectors_for(self, item_kind: str, item_ids: Iterable[str], model: str) -> dict[str, bytes]:
        """Vector bytes of the given items (those that have one)."""
        return {k: bytes(v) for k, v in self._vector_column("vec", item_kind, item_ids, model).items()}

    def load_vectors(self, item_kind: str, model: str, after_id: int = 0) -> VectorBatch:
        """``(row ids, item ids, vector bytes)`` of a kind with row id > ``after_id``."""
        rows = self._rows("SELECT id, item_id, vec FROM vectors WHERE model = %s AND item_kind = %s AND id > %s"
                          " ORDER BY id", (model, item_kind, after_id))
        return VectorBatch([int(r[0]) for r in rows], [r[1] for r in rows], [bytes(r[2]) for r in rows])

    def vector_state(self) -> VectorState:
        """``(max vector row id, deletions counter)``: an in-memory index is current iff both match."""
        r = self._one("SELECT (SELECT coalesce(max(id), 0) FROM vectors),"
                      " (SELECT value FROM kb_meta WHERE key = 'vectors.deletions')")
        return VectorState(int(r[0]), int(r[1] or 0)) if r else VectorState(0, 0)

    def vector_models(self) -> dict[str, int]:
        """Number of stored vectors per model."""
        return {r[0]: int(r[1]) for r in self._rows("SELECT model, count(*) FROM vectors GROUP BY model")}

    def delete_vectors(self, model: str | None = None) -> int:
        """Remove vectors (of one model, or all); returns how many."""
        if model is None:
            return self._exec("DELETE FROM vectors")
        return self._exec("DELETE FROM vectors WHERE model = %s", (model,))

    # -- to embed --------------------------------------------------------------------------------

    def chunks_to_embed(self, latest_only: bool = True, after_id: int = 0, limit: int = 1000) -> list[EmbedRow]:
        """``(row id, chunk id, text)`` of chunks, in row order, for (re)embedding."""
        sql = "SELECT c.id, c.chunk_id, c.text FROM chunks c"
        if latest_only:
            sql += " JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.version AND d.is_latest = 1"
        sql += " WHERE c.id > %s ORDER BY c.id LIMIT %s"
        return [EmbedRow(int(r[0]), r[1], r[2]) for r in self._rows(sql, (after_id, max(limit, 0)))]

    def relations_to_embed(self, after_rowid: int = 0, limit: int = 1000) -> list[EmbedRow]:
        """``(row id, edge id, "subject relation object")`` of relations between entities, in row order."""
        rows = self._rows(
            "SELECT e.rid, e.id, a.name, e.type, b.name FROM edges e JOIN nodes a ON a.id = e.source"
            " JOIN nodes b ON b.id = e.target WHERE e.rid > %s AND a.kind = 'entity' AND b.kind = 'entity'"
            " ORDER BY e.rid LIMIT %s", (after_rowid, max(limit, 0)))
        return [EmbedRow(int(r[0]), r[1], f"{r[2]} {r[3].replace('_', ' ')} {r[4]}") for r in rows]

    def nodes_to_embed(self, kind: str, after_rowid: int = 0, limit: int = 1000) -> list[EmbedRow]:
        """``(row id, node id, name)`` of nodes of a kind, for (re)embedding."""
        rows = self._rows("SELECT rid, id, name FROM nodes WHERE kind = %s AND rid > %s ORDER BY rid LIMIT %s",
                          (kind, after_rowid, max(limit, 0)))
        return [EmbedRow(int(r[0]), r[1], r[2]) for r in rows]
