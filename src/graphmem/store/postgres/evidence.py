"""SQL for evidence (PostgreSQL backend): provenance records, entity mentions, pruning items left
unsupported, and the per-document evidence reads generated pages are built from.

The port of ``store/sqlite/evidence.py``. Per-item reads are one LATERAL, LIMITed index probe per
item in a single statement, so that their cost follows the items asked for, not how much evidence a
popular entity has piled up."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...models import Mention, Provenance
from ..rows import ChunkOffset, Claim, DocVersion, NodeDocuments, PruneResult
from .graph import EDGE_COLS
from .pgbase import PgHelpers, Row, edge_from_row

__all__ = ["EvidencePgMixin"]

_PROV_COLS = 'item_kind, item_id, doc_id, version, chunk_id, start, "end", text, confidence, id, created_at'
_MENTION_COLS = 'node_id, chunk_id, doc_id, version, start, "end"'


def _prov(r: Row | Sequence[object]) -> Provenance:
    """A :class:`Provenance` from a row of ``_PROV_COLS``."""
    return Provenance(*r)


class EvidencePgMixin(PgHelpers):
    """Provenance and mentions."""

    # -- provenance ------------------------------------------------------------------------------

    def insert_provenance(self, records: Sequence[Provenance]) -> None:
        """Append evidence records (ids in the order given)."""
        self._execmany(
            'INSERT INTO provenance (item_kind, item_id, doc_id, version, chunk_id, start, "end", text, confidence,'
            " created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            [(p.item_kind, p.item_id, p.doc_id, p.version, p.chunk_id, p.start, p.end, p.text, p.confidence,
              p.created_at) for p in records],
        )

    def provenance_for(
        self, item_kind: str, item_ids: Iterable[str], limit_per_item: int | None = None
    ) -> dict[str, list[Provenance]]:
        """Evidence per item, newest first; at most ``limit_per_item`` records each."""
        ids = list(dict.fromkeys(item_ids))
        if not ids:
            return {}
        out: dict[str, list[Provenance]] = {}
        if limit_per_item is None:
            rows = self._rows(f"SELECT {_PROV_COLS} FROM provenance WHERE item_kind = %s AND item_id = ANY(%s)"
                              " ORDER BY id DESC", [item_kind, ids])
        else:
            rows = self._rows(
                f"SELECT p.* FROM unnest(%s::text[]) AS k(id) CROSS JOIN LATERAL (SELECT {_PROV_COLS} FROM provenance"
                " WHERE item_kind = %s AND item_id = k.id ORDER BY id DESC LIMIT %s) p ORDER BY p.id DESC",
                [ids, item_kind, limit_per_item])
        for r in rows:
            out.setdefault(r[1], []).append(_prov(r))
        return out

    def count_provenance(self, item_kind: str, item_ids: Iterable[str]) -> dict[str, int]:
        """Number of evidence records per item."""
        ids = list(dict.fromkeys(item_ids))
        if not ids:
            return {}
        return {r[0]: int(r[1]) for r in self._rows(
            "SELECT item_id, count(*) FROM provenance WHERE item_kind = %s AND item_id = ANY(%s) GROUP BY item_id",
            [item_kind, ids])}

    def first_provenance(self, item_kind: str, item_ids: Iterable[str]) -> dict[str, Provenance]:
        """The first (oldest) evidence record of each item: one indexed probe per item."""
        ids = list(dict.fromkeys(item_ids))
        if not ids:
            return {}
        rows = self._rows(
            f"SELECT p.* FROM unnest(%s::text[]) AS k(id) CROSS JOIN LATERAL (SELECT {_PROV_COLS} FROM provenance"
            " WHERE item_kind = %s AND item_id = k.id ORDER BY id LIMIT 1) p", [ids, item_kind])
        return {r[1]: _prov(r) for r in rows}

    def prune_unsupported(self, node_ids: Iterable[str], edge_ids: Iterable[str]) -> PruneResult:
        """Delete, among the given items, edges and nodes left with no evidence.

        Hand-made items (``manual``) stay. A node stays while an edge still uses it.
        Returns the removed node ids and edge ids.
        """
        nodes = set(node_ids)
        edges = list(dict.fromkeys(edge_ids))
        removed_edges: list[str] = []
        if edges:
            gone = self._rows(
                "DELETE FROM edges e WHERE e.id = ANY(%s) AND e.manual = 0 AND NOT EXISTS (SELECT 1 FROM provenance p"
                " WHERE p.item_kind = 'edge' AND p.item_id = e.id) RETURNING e.id, e.source, e.target", [edges])
            removed_edges = [r[0] for r in sorted(gone, key=lambda r: edges.index(r[0]))]
            for r in gone:  # the ends of a removed edge may now be unsupported too
                nodes.update((r[1], r[2]))
            # Surviving extracted edges keep the confidence of their best remaining evidence.
            self._exec(
                "UPDATE edges SET confidence = coalesce((SELECT max(p.confidence) FROM provenance p"
                " WHERE p.item_kind = 'edge' AND p.item_id = edges.id), confidence)"
                " WHERE manual = 0 AND id = ANY(%s)", [[e for e in edges if e not in set(removed_edges)]])
        removed_nodes: list[str] = []
        if nodes:
            removed_nodes = sorted(r[0] for r in self._rows(
                "DELETE FROM nodes n WHERE n.id = ANY(%s) AND n.manual = 0"
                " AND NOT EXISTS (SELECT 1 FROM provenance p WHERE p.item_kind = 'node' AND p.item_id = n.id)"
                " AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.source = n.id)"
                " AND NOT EXISTS (SELECT 1 FROM edges e WHERE e.target = n.id) RETURNING n.id", [sorted(nodes)]))
        return PruneResult(removed_nodes, removed_edges)

    # -- mentions --------------------------------------------------------------------------------

    def insert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Record entity occurrences in chunks."""
        self._execmany(
            'INSERT INTO mentions (node_id, chunk_id, doc_id, version, start, "end") VALUES (%s, %s, %s, %s, %s, %s)',
            [(m.node_id, m.chunk_id, m.doc_id, m.version, m.start, m.end) for m in mentions],
        )

    def mentions_of(self, node_ids: Iterable[str], limit_per_node: int | None = None) -> dict[str, list[Mention]]:
        """Occurrences per entity, newest first (at most ``limit_per_node`` each)."""
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            return {}
        lim = "" if limit_per_node is None else " LIMIT %s"
        params: list[object] = [ids] + ([] if limit_per_node is None else [limit_per_node])
        rows = self._rows(
            f"SELECT m.* FROM unnest(%s::text[]) AS k(id) CROSS JOIN LATERAL (SELECT {_MENTION_COLS}, id AS mid"
            f" FROM mentions WHERE node_id = k.id ORDER BY id DESC{lim}) m ORDER BY m.mid DESC", params)
        out: dict[str, list[Mention]] = {}
        for r in rows:
            out.setdefault(r[0], []).append(Mention(*r[:6]))
        return out

    def chunk_mentions(self, chunk_ids: Iterable[str]) -> dict[str, list[Mention]]:
        """Entity occurrences per chunk."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return {}
        out: dict[str, list[Mention]] = {}
        for r in self._rows(f"SELECT {_MENTION_COLS} FROM mentions WHERE chunk_id = ANY(%s) ORDER BY id", [ids]):
            out.setdefault(r[1], []).append(Mention(*r))
        return out

    def entity_chunk_counts(self, node_ids: Iterable[str]) -> dict[str, int]:
        """Number of distinct chunks mentioning each entity (its passage frequency).

        Not cached: another host may write at any time, and the (node_id, id) index answers it."""
        ids = list(dict.fromkeys(node_ids))
        if not ids:
            return {}
        return {r[0]: int(r[1]) for r in self._rows(
            "SELECT node_id, count(DISTINCT chunk_id) FROM mentions WHERE node_id = ANY(%s) GROUP BY node_id", [ids])}

    def entities_chunks(self, node_ids: Iterable[str], limit_per_node: int) -> dict[str, list[ChunkOffset]]:
        """Distinct chunks of latest document versions mentioning each entity, newest first (by
        each chunk's newest mention), at most ``limit_per_node`` each, with the entity's first
        offset in the document.

        Each entity's mentions are read newest first off the (node_id, id) index, a few times the
        limit of them (one statement for the batch), so a hub's cost follows the limit, not how many
        passages mention it; only an entity whose recent mentions repeat a few chunks is read whole."""
        ids = list(dict.fromkeys(node_ids))
        if limit_per_node <= 0 or not ids:
            return {}
        cap = 4 * limit_per_node + 16
        rows = self._rows(
            "SELECT k.id, x.chunk_id, x.latest FROM unnest(%s::text[]) WITH ORDINALITY AS k(id, ord) CROSS JOIN LATERAL"
            " (SELECT m.id, m.chunk_id, d.is_latest AS latest FROM mentions m JOIN documents d ON d.doc_id = m.doc_id"
            " AND d.version = m.version WHERE m.node_id = k.id ORDER BY m.id DESC LIMIT %s) x"
            " ORDER BY k.ord, x.id DESC", [ids, cap])
        read: dict[str, int] = {}
        picked: dict[str, dict[str, None]] = {}
        for nid, cid, latest in rows:  # rows of one entity come newest first
            read[nid] = read.get(nid, 0) + 1
            chunks = picked.setdefault(nid, {})
            if latest == 1 and len(chunks) < limit_per_node:
                chunks.setdefault(cid, None)
        short = [n for n in ids if read.get(n, 0) >= cap and len(picked.get(n, {})) < limit_per_node]
        if short:
            picked.update(self._all_recent(short, limit_per_node))
        pairs = [(n, c) for n in ids for c in picked.get(n, {})]
        if not pairs:
            return {}
        first = {(r[0], r[1]): int(r[2]) for r in self._rows(
            "SELECT m.node_id, m.chunk_id, min(m.start) FROM unnest(%s::text[], %s::text[]) AS k(n, c)"
            " JOIN mentions m ON m.node_id = k.n AND m.chunk_id = k.c GROUP BY m.node_id, m.chunk_id",
            [[n for n, _ in pairs], [c for _, c in pairs]])}
        return {n: [ChunkOffset(c, first[(n, c)]) for c in picked[n]] for n in ids if picked.get(n)}

    def _all_recent(self, node_ids: list[str], limit: int) -> dict[str, dict[str, None]]:
        """Per entity, its ``limit`` latest-version chunks by newest mention, reading all its mentions."""
        out: dict[str, dict[str, None]] = {n: {} for n in node_ids}
        for r in self._rows(
                "SELECT k.id, c.chunk_id FROM unnest(%s::text[]) AS k(id) CROSS JOIN LATERAL (SELECT m.chunk_id,"
                " max(m.id) AS last FROM mentions m JOIN documents d ON d.doc_id = m.doc_id AND d.version = m.version"
                " AND d.is_latest = 1 WHERE m.node_id = k.id GROUP BY m.chunk_id ORDER BY max(m.id) DESC LIMIT %s) c"
                " ORDER BY k.id, c.last DESC", [node_ids, limit]):
            out[r[0]].setdefault(r[1], None)
        return out

    def entity_chunks(self, node_id: str, limit: int) -> list[str]:
        """Distinct chunks (latest document versions) mentioning an entity, newest first."""
        return [r[0] for r in self._rows(
            "SELECT m.chunk_id FROM mentions m JOIN documents d ON d.doc_id = m.doc_id AND d.version = m.version"
            " AND d.is_latest = 1 WHERE m.node_id = %s GROUP BY m.chunk_id ORDER BY max(m.id) DESC LIMIT %s",
            [node_id, limit])]

    def chunk_entities(self, chunk_ids: Iterable[str]) -> dict[str, list[str]]:
        """Distinct entities mentioned in each chunk."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return {}
        out: dict[str, list[str]] = {}
        for r in self._rows("SELECT chunk_id, node_id FROM mentions WHERE chunk_id = ANY(%s)"
                            " GROUP BY chunk_id, node_id ORDER BY min(id)", [ids]):
            out.setdefault(r[0], []).append(r[1])
        return out

    # -- per-document evidence -------------------------------------------------------------------

    def node_documents(self, node_id: str, limit: int) -> NodeDocuments:
        """Documents whose extraction named the node, first-named first: ``([(doc id, highest
        version naming it)], more exist)``. Reads at most ``4 * limit + 1`` evidence records."""
        rows = self._rows("SELECT doc_id FROM provenance WHERE item_kind = 'node' AND item_id = %s"
                          " ORDER BY id LIMIT %s", [node_id, 4 * limit + 1])
        docs = list(dict.fromkeys(r[0] for r in rows))
        more = len(docs) > limit or len(rows) > 4 * limit
        docs = docs[:limit]
        versions: dict[str, int] = {}
        if docs:
            versions = {r[0]: int(r[1]) for r in self._rows(
                "SELECT doc_id, max(version) FROM provenance WHERE doc_id = ANY(%s) AND item_kind = 'node'"
                " AND item_id = %s GROUP BY doc_id", [docs, node_id])}
        return NodeDocuments([DocVersion(d, versions.get(d, 1)) for d in docs], more)

    def document_claims(self, doc_id: str, version: int, limit: int) -> list[Claim]:
        """Edges a document version gives evidence for, with that version's first evidence
        for each, in the order they were first stated."""
        edge_cols = ", ".join(f"e.{c}" for c in EDGE_COLS.split(", "))
        rows = self._rows(
            f"SELECT {edge_cols}, p.id AS p_id, p.chunk_id AS p_chunk, p.start AS p_start, p.\"end\" AS p_end,"
            " p.text AS p_text, p.confidence AS p_conf, p.created_at AS p_created"
            " FROM (SELECT item_id, min(id) AS first FROM provenance WHERE doc_id = %s AND version = %s"
            " AND item_kind = 'edge' GROUP BY item_id) f JOIN edges e ON e.id = f.item_id"
            " JOIN provenance p ON p.id = f.first ORDER BY f.first LIMIT %s", [doc_id, version, limit])
        return [Claim(edge_from_row(r), Provenance("edge", r["id"], doc_id, version, r["p_chunk"], r["p_start"],
                                                   r["p_end"], r["p_text"], r["p_conf"], r["p_id"], r["p_created"]))
                for r in rows]

    def document_claim_ids(self, doc_id: str, version: int) -> set[str]:
        """Ids of the edges a document version gives evidence for."""
        return {r[0] for r in self._rows("SELECT DISTINCT item_id FROM provenance WHERE doc_id = %s AND version = %s"
                                         " AND item_kind = 'edge'", [doc_id, version])}

    def document_entity_ids(self, doc_id: str, version: int, limit: int) -> list[str]:
        """Entities a document version names, in extraction order."""
        return [r[0] for r in self._rows(
            "SELECT item_id FROM provenance WHERE doc_id = %s AND version = %s AND item_kind = 'node'"
            " GROUP BY item_id ORDER BY min(id) LIMIT %s", [doc_id, version, limit])]

    def edges_supported_by(self, edge_ids: Iterable[str], doc_id: str, version: int) -> set[str]:
        """Which of ``edge_ids`` have evidence in this document version."""
        ids = list(dict.fromkeys(edge_ids))
        if not ids:
            return set()
        return {r[0] for r in self._rows(
            "SELECT DISTINCT item_id FROM provenance WHERE doc_id = %s AND version = %s AND item_kind = 'edge'"
            " AND item_id = ANY(%s)", [doc_id, version, ids])}
