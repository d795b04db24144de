"""SQL for evidence: provenance records, entity mentions, and what follows from them
(pruning unsupported items, merging and deleting nodes). Part of the SQLite backend."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from ...models import Mention, Provenance
from .sqlbase import SqlHelpers, batches

__all__ = ["EvidenceSqlMixin"]


class EvidenceSqlMixin(SqlHelpers):
    """Provenance and mentions; relies on the store's edge lookups (``edges_of``, ``find_edge``)."""

    # -- provenance -----------------------------------------------------------------------

    def insert_provenance(self, records: Sequence[Provenance]) -> None:
        """Append evidence records."""
        self.conn.executemany(
            'INSERT INTO provenance (item_kind, item_id, doc_id, version, chunk_id, start, "end", text, confidence,'
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (p.item_kind, p.item_id, p.doc_id, p.version, p.chunk_id, p.start, p.end, p.text, p.confidence,
                 p.created_at)
                for p in records
            ],
        )

    def provenance_for(
        self, item_kind: str, item_ids: Iterable[str], limit_per_item: int | None = None
    ) -> dict[str, list[Provenance]]:
        """Evidence per item, newest first; at most ``limit_per_item`` records each."""
        out: dict[str, list[Provenance]] = {}
        ids = list(dict.fromkeys(item_ids))
        if limit_per_item is None:
            for part in batches(ids):
                rows = self._rows(
                    f"SELECT * FROM provenance WHERE item_kind = ? AND item_id IN ({','.join('?' * len(part))})"
                    " ORDER BY id DESC",
                    [item_kind, *part],
                )
                for r in rows:
                    out.setdefault(r["item_id"], []).append(self._prov(r))
            return out
        # One indexed, LIMITed lookup per item: cost follows the items asked for, not how
        # much evidence a popular entity has piled up.
        for item_id in ids:
            rows = self._rows(
                "SELECT * FROM provenance WHERE item_kind = ? AND item_id = ? ORDER BY id DESC LIMIT ?",
                (item_kind, item_id, limit_per_item),
            )
            if rows:
                out[item_id] = [self._prov(r) for r in rows]
        return out

    def count_provenance(self, item_kind: str, item_ids: Iterable[str]) -> dict[str, int]:
        """Number of evidence records per item."""
        return self._map_in("SELECT item_id, count(*) FROM provenance WHERE item_kind = ? AND item_id IN ({ids})"
                            " GROUP BY item_id", item_ids, before=[item_kind])

    @staticmethod
    def _prov(r: sqlite3.Row) -> Provenance:
        return Provenance(
            item_kind=r["item_kind"], item_id=r["item_id"], doc_id=r["doc_id"], version=r["version"],
            chunk_id=r["chunk_id"], start=r["start"], end=r["end"], text=r["text"], confidence=r["confidence"],
            id=r["id"], created_at=r["created_at"],
        )

    def prune_unsupported(self, node_ids: Iterable[str], edge_ids: Iterable[str]) -> tuple[list[str], list[str]]:
        """Delete, among the given items, edges and nodes left with no evidence.

        Hand-made items (``manual``) stay. A node stays while an edge still uses it.
        Returns the removed node ids and edge ids.
        """
        node_ids = set(node_ids)
        edge_ids = list(edge_ids)
        removed_edges: list[str] = []
        for part in batches(edge_ids):
            rows = self._rows(
                f"SELECT e.id FROM edges e WHERE e.id IN ({','.join('?' * len(part))}) AND e.manual = 0"
                " AND NOT EXISTS (SELECT 1 FROM provenance p WHERE p.item_kind = 'edge' AND p.item_id = e.id)",
                part,
            )
            removed_edges += [r[0] for r in rows]
        for part in batches(removed_edges):
            marks = ",".join("?" * len(part))
            # The ends of a removed edge may now be unsupported too.
            for r in self._rows(f"SELECT source, target FROM edges WHERE id IN ({marks})", part):
                node_ids.update((r[0], r[1]))
            self.conn.execute(f"DELETE FROM edges WHERE id IN ({marks})", part)
        # Surviving extracted edges keep the confidence of their best remaining evidence.
        gone = set(removed_edges)
        kept = [e for e in edge_ids if e not in gone]
        for part in batches(kept):
            self.conn.execute(
                "UPDATE edges SET confidence = coalesce((SELECT max(p.confidence) FROM provenance p"
                " WHERE p.item_kind = 'edge' AND p.item_id = edges.id), confidence)"
                f" WHERE manual = 0 AND id IN ({','.join('?' * len(part))})",
                part,
            )
        removed_nodes: list[str] = []
        for part in batches(sorted(node_ids)):
            rows = self._rows(
                f"SELECT n.id FROM nodes n WHERE n.id IN ({','.join('?' * len(part))}) AND n.manual = 0"
                " AND NOT EXISTS (SELECT 1 FROM provenance p WHERE p.item_kind = 'node' AND p.item_id = n.id)"
                " AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.source = n.id)"
                " AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.target = n.id)",
                part,
            )
            removed_nodes += [r[0] for r in rows]
        for part in batches(removed_nodes):
            self.conn.execute(f"DELETE FROM nodes WHERE id IN ({','.join('?' * len(part))})", part)
        return removed_nodes, removed_edges

    def merge_nodes(self, keep: str, other: str, now: str) -> dict[str, int]:
        """Move everything of node ``other`` onto ``keep`` and delete ``other``.

        Edges are re-pointed; an edge that then duplicates one of ``keep``'s is folded into
        it (evidence moved, higher confidence kept); a self-loop created by the merge is
        dropped. Returns counts of what moved.
        """
        c = self.conn
        moved = folded = dropped = 0
        for e in self.edges_of([other]):
            src = keep if e.source == other else e.source
            dst = keep if e.target == other else e.target
            if src == dst:
                c.execute("DELETE FROM provenance WHERE item_kind = 'edge' AND item_id = ?", (e.id,))
                c.execute("DELETE FROM edges WHERE id = ?", (e.id,))
                dropped += 1
                continue
            existing = self.find_edge(src, e.type, dst)
            if existing is not None and existing.id != e.id:
                c.execute(
                    "UPDATE provenance SET item_id = ? WHERE item_kind = 'edge' AND item_id = ?", (existing.id, e.id)
                )
                c.execute(
                    "UPDATE edges SET confidence = max(confidence, ?), manual = max(manual, ?), updated_at = ?"
                    " WHERE id = ?",
                    (e.confidence, int(e.manual), now, existing.id),
                )
                c.execute("DELETE FROM edges WHERE id = ?", (e.id,))
                folded += 1
            else:
                c.execute(
                    "UPDATE edges SET source = ?, target = ?, updated_at = ? WHERE id = ?", (src, dst, now, e.id)
                )
                moved += 1
        c.execute("UPDATE provenance SET item_id = ? WHERE item_kind = 'node' AND item_id = ?", (keep, other))
        c.execute("UPDATE mentions SET node_id = ? WHERE node_id = ?", (keep, other))
        # Names: drop the FTS rows through delete + insert so the index stays in step.
        names = self._rows("SELECT kind, norm, alias FROM node_names WHERE node_id = ?", (other,))
        c.execute("DELETE FROM node_names WHERE node_id = ?", (other,))
        for r in names:
            c.execute(
                "INSERT OR IGNORE INTO node_names (kind, norm, alias, node_id) VALUES (?, ?, ?, ?)",
                (r["kind"], r["norm"], r["alias"], keep),
            )
        c.execute("UPDATE nodes SET manual = max(manual, (SELECT manual FROM nodes WHERE id = ?)) WHERE id = ?",
                  (other, keep))
        c.execute("DELETE FROM nodes WHERE id = ?", (other,))
        return {"edges_moved": moved, "edges_folded": folded, "self_loops_dropped": dropped}

    def delete_node(self, node_id: str) -> None:
        """Delete a node, its edges (cascade) and all their evidence."""
        c = self.conn
        edge_ids = [r[0] for r in self._rows("SELECT id FROM edges WHERE source = ? OR target = ?", (node_id, node_id))]
        for part in batches(edge_ids):
            c.execute(
                f"DELETE FROM provenance WHERE item_kind = 'edge' AND item_id IN ({','.join('?' * len(part))})", part
            )
        c.execute("DELETE FROM provenance WHERE item_kind = 'node' AND item_id = ?", (node_id,))
        c.execute("DELETE FROM nodes WHERE id = ?", (node_id,))

    # -- mentions ---------------------------------------------------------------------------

    def insert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Record entity occurrences in chunks."""
        self.conn.executemany(
            'INSERT INTO mentions (node_id, chunk_id, doc_id, version, start, "end") VALUES (?, ?, ?, ?, ?, ?)',
            [(m.node_id, m.chunk_id, m.doc_id, m.version, m.start, m.end) for m in mentions],
        )

    def mentions_of(self, node_ids: Iterable[str], limit_per_node: int | None = None) -> dict[str, list[Mention]]:
        """Occurrences per entity, newest first (at most ``limit_per_node`` each)."""
        out: dict[str, list[Mention]] = {}
        lim = -1 if limit_per_node is None else limit_per_node
        for nid in dict.fromkeys(node_ids):
            rows = self._rows(
                'SELECT node_id, chunk_id, doc_id, version, start, "end" FROM mentions WHERE node_id = ?'
                " ORDER BY id DESC LIMIT ?",
                (nid, lim),
            )
            if rows:
                out[nid] = [Mention(*r) for r in rows]
        return out

    def chunk_mentions(self, chunk_ids: Iterable[str]) -> dict[str, list[Mention]]:
        """Entity occurrences per chunk."""
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, list[Mention]] = {}
        for part in batches(ids):
            for r in self._rows(
                f'SELECT node_id, chunk_id, doc_id, version, start, "end" FROM mentions WHERE chunk_id IN'
                f" ({','.join('?' * len(part))}) ORDER BY id",
                part,
            ):
                out.setdefault(r[1], []).append(Mention(*r))
        return out

    def document_hashes(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """Content hash of the latest version of each known document id."""
        return self._map_in("SELECT doc_id, content_hash FROM documents WHERE is_latest = 1 AND doc_id IN ({ids})",
                            doc_ids)

    def document_source_files(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """Absolute path of the file each latest document was ingested from, where recorded
        (metadata ``source_file``; documents stored before it was recorded have none)."""
        return {k: v for k, v in self._map_in(
            "SELECT doc_id, json_extract(metadata, '$.source_file') FROM documents"
            " WHERE is_latest = 1 AND doc_id IN ({ids})", doc_ids).items() if isinstance(v, str) and v}

    def documents_by_source_prefix(self, prefix: str) -> list[tuple[str, str]]:
        """``(doc_id, source)`` of latest documents whose source starts with ``prefix``."""
        esc = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return [(r[0], r[1]) for r in self._rows(
            "SELECT doc_id, source FROM documents WHERE is_latest = 1 AND source LIKE ? ESCAPE '\\'",
            (esc + "%",),
        )]
