"""SQL for embedding vectors (PostgreSQL backend) and the items waiting to be embedded."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..rows import EmbedRow, VectorBatch, VectorItem, VectorState
from .pgbase import PgHelpers

__all__ = ["VectorPgMixin", "HNSW_THRESHOLD"]

HNSW_THRESHOLD = 20_000
"""Vectors of one model and kind above which an HNSW index serves :meth:`VectorPgMixin.nearest_vectors`
(below it an exact scan is fast enough, and exact)."""


def _literal(vec: bytes) -> str:
    """pgvector's text form of float16 vector bytes."""
    return "[" + ",".join(repr(float(x)) for x in np.frombuffer(vec, dtype=np.float16)) + "]"


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
        kind = self._vector_type()
        self._exec(
            "INSERT INTO vectors (item_kind, item_id, model, dim, text_hash, vec, emb)"
            f" SELECT %s, i, %s, %s, h, v, e::{kind} FROM unnest(%s::text[], %s::text[], %s::bytea[], %s::text[])"
            " WITH ORDINALITY AS u(i, h, v, e, n) ORDER BY n",
            (item_kind, model, dim, ids, [last[i][0] for i in ids], [bytes(last[i][1]) for i in ids],
             [_literal(bytes(last[i][1])) for i in ids]))
        self._ensure_hnsw(item_kind, model, dim)

    def _vector_type(self) -> str:
        """``halfvec`` or ``vector``: what migration pg0102 chose for ``vectors.emb`` on this server."""
        memo = self.__dict__.get("_emb_type")
        if memo is None:
            row = self._one("SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                            " WHERE attrelid = 'vectors'::regclass AND attname = 'emb'")
            memo = self.__dict__["_emb_type"] = str(row[0]) if row else "vector"
        return str(memo)

    @staticmethod
    def _hnsw_name(item_kind: str, model: str, dim: int) -> str:
        return "vectors_hnsw_" + hashlib.sha256(f"{item_kind}\0{model}\0{dim}".encode()).hexdigest()[:16]

    def _ensure_hnsw(self, item_kind: str, model: str, dim: int) -> None:
        """Past HNSW_THRESHOLD vectors of a kind and model, build their HNSW index (once; partial, on the
        dimension-typed expression, cosine distance)."""
        name = self._hnsw_name(item_kind, model, dim)
        if self._one("SELECT to_regclass(%s)", (name,)) not in (None, (None,)):
            return
        row = self._one("SELECT count(*) FROM (SELECT 1 FROM vectors WHERE model = %s AND item_kind = %s"
                        " AND dim = %s LIMIT %s) v", (model, item_kind, dim, HNSW_THRESHOLD + 1))
        if row is None or int(row[0]) <= HNSW_THRESHOLD:
            return
        kind = self._vector_type()
        lit = lambda v: "'" + str(v).replace("'", "''") + "'"  # noqa: E731 - DDL takes no parameters
        self._exec(f"CREATE INDEX IF NOT EXISTS {name} ON vectors USING hnsw ((emb::{kind}({int(dim)}))"
                   f" {kind}_cosine_ops) WHERE model = {lit(model)} AND item_kind = {lit(item_kind)}"
                   f" AND dim = {int(dim)}")

    def nearest_vectors(self, item_kind: str, model: str, query: bytes, k: int = 10) -> list[tuple[str, float]]:
        """``(item id, cosine similarity)`` of the ``k`` stored vectors of a kind and model nearest to the
        float16 ``query``, best first: exact below HNSW_THRESHOLD vectors, through their HNSW index above it
        (approximate). Not a protocol method yet: the engine ranks vectors in memory from load_vectors."""
        dim = len(query) // 2
        if k <= 0 or dim == 0:
            return []
        kind = self._vector_type()
        typed = f"emb::{kind}({dim})"
        # The partial index's predicate is matched with the constants inlined (a parameter would not match).
        lit = lambda v: "'" + str(v).replace("'", "''") + "'"  # noqa: E731
        rows = self._rows(
            f"SELECT item_id, 1 - ({typed} <=> %s::{kind}({dim})) FROM vectors WHERE model = {lit(model)}"
            f" AND item_kind = {lit(item_kind)} AND dim = {dim} ORDER BY {typed} <=> %s::{kind}({dim}) LIMIT %s",
            (_literal(query), _literal(query), k))
        return [(r[0], float(r[1])) for r in rows]

    def _fill_emb(self) -> None:
        """Give loaded vectors (which come as bytes only) their pgvector value."""
        kind = self._vector_type()
        while True:
            rows = self._rows("SELECT id, vec FROM vectors WHERE emb IS NULL ORDER BY id LIMIT 2000")
            if not rows:
                return
            self._exec(f"UPDATE vectors v SET emb = u.e::{kind} FROM unnest(%s::bigint[], %s::text[]) AS u(i, e)"
                       " WHERE v.id = u.i", ([int(r[0]) for r in rows], [_literal(bytes(r[1])) for r in rows]))

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
