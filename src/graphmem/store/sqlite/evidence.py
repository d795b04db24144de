"""SQL for evidence (SQLite backend): provenance records, entity mentions, pruning items left
unsupported, and the per-document evidence reads generated pages are built from."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import cast

from ...errors import BackendError
from ...models import Mention, Provenance
from ..rows import ChunkOffset, Claim, DocVersion, NodeDocuments, PruneResult
from .mention_graph import MentionGraph, MentionGraphCache
from .read_stamp import ReadStampMixin
from .sqlbase import SqlHelpers, batches, edge_from_row, marks

__all__ = ["EvidenceSqlMixin"]

# Per-document reads must use the (doc_id, version) index: left to itself the planner picks
# (item_kind, item_id) for "item_kind = 'edge'" and scans every edge's evidence.
_BY_DOC = "INDEXED BY provenance_doc"
# A quote that is exactly its span of the chunk it cites is stored as the span (text ''): it is rebuilt here from
# the chunk, so every read returns the same bytes (a third of the evidence table was text stored twice).
PROVENANCE_TEXT = ("CASE WHEN p.text = '' AND p.start IS NOT NULL THEN coalesce((SELECT substr(c.text,"
                   " p.start - c.start + 1, p.\"end\" - p.start) FROM chunks c WHERE c.chunk_id = p.chunk_id), '')"
                   " ELSE p.text END")
# Likewise a record made when its document version was (every record an ingest writes) stores created_at ''.
PROVENANCE_CREATED = ("CASE WHEN p.created_at = '' THEN coalesce((SELECT d.created_at FROM documents d WHERE"
                      " d.doc_id = p.doc_id AND d.version = p.version), '') ELSE p.created_at END")
_PROV_COLS = ('p.id, p.item_kind, p.item_id, p.doc_id, p.version, p.chunk_id, p.start, p."end", '
              f"{PROVENANCE_TEXT} AS text, p.confidence, {PROVENANCE_CREATED} AS created_at")
# Entities whose passage counts entity_chunk_counts keeps between writes (a bound on memory).
_COUNT_CACHE_MAX = 200_000


class EvidenceSqlMixin(ReadStampMixin, SqlHelpers):
    """Provenance and mentions."""

    _count_cache: tuple[tuple[int, int] | None, dict[str, int]] = (None, {})
    # The chunks (id -> (start, text)) and the creation time of the document version stored last in the current
    # transaction (DocumentSqlMixin.insert_document sets it, the end of the transaction clears it).
    _just_inserted: tuple[dict[str, tuple[int, str]], dict[tuple[str, int], str]] = ({}, {})

    # -- provenance ------------------------------------------------------------------------------

    def insert_provenance(self, records: Sequence[Provenance]) -> None:
        """Append evidence records (a quote that is exactly its span of the cited chunk is stored as the span, a
        creation time that is the document version's as '')."""
        # The document just stored (an ingest's evidence cites it) is known without a read; others are read.
        chunks, created = self._just_inserted
        spans = {p.chunk_id for p in records if p.chunk_id and p.start is not None and p.end is not None and p.text
                 and p.chunk_id not in chunks}
        if spans:
            chunks = {**chunks, **{r[0]: (r[1], r[2]) for r in self._rows_in(
                "SELECT chunk_id, start, text FROM chunks WHERE chunk_id IN ({ids})", spans)}}
        versions = {(p.doc_id, p.version) for p in records} - created.keys()
        if versions:
            created = {**created, **{(r[0], r[1]): r[2] for r in self._rows(
                "SELECT d.doc_id, d.version, d.created_at FROM json_each(?) j JOIN documents d ON"
                " d.doc_id = json_extract(j.value, '$[0]') AND d.version = json_extract(j.value, '$[1]')",
                (json.dumps(list(versions)),))}}

        # The rows in one pass (no function call per record: an ingest writes ~10 records per document).
        rows = []
        for p in records:
            text = p.text
            if p.chunk_id and p.start is not None and p.end is not None:
                got = chunks.get(p.chunk_id)
                if got is not None:  # stored as the span when it is exactly that span of its chunk
                    first, chunk_text = got
                    start, end = p.start - first, p.end - first
                    if 0 <= start <= end <= len(chunk_text) and chunk_text[start:end] == text:
                        text = ""
            made = p.created_at
            rows.append((p.item_kind, p.item_id, p.doc_id, p.version, p.chunk_id, p.start, p.end, text, p.confidence,
                         "" if made and created.get((p.doc_id, p.version)) == made else made))
        self.conn.executemany(
            'INSERT INTO provenance (item_kind, item_id, doc_id, version, chunk_id, start, "end", text, confidence,'
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    def provenance_for(
        self, item_kind: str, item_ids: Iterable[str], limit_per_item: int | None = None
    ) -> dict[str, list[Provenance]]:
        """Evidence per item, newest first; at most ``limit_per_item`` records each."""
        out: dict[str, list[Provenance]] = {}
        ids = list(dict.fromkeys(item_ids))
        if limit_per_item is None:
            for part in batches(ids):
                rows = self._rows(
                    f"SELECT {_PROV_COLS} FROM provenance p WHERE p.item_kind = ? AND p.item_id IN"
                    f" ({','.join('?' * len(part))}) ORDER BY p.id DESC",
                    [item_kind, *part],
                )
                for r in rows:
                    out.setdefault(r["item_id"], []).append(self._prov(r))
            return out
        # One indexed, LIMITed lookup per item: cost follows the items asked for, not how
        # much evidence a popular entity has piled up.
        for item_id in ids:
            rows = self._rows(
                f"SELECT {_PROV_COLS} FROM provenance p WHERE p.item_kind = ? AND p.item_id = ? ORDER BY p.id DESC"
                " LIMIT ?",
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

    def first_provenance(self, item_kind: str, item_ids: Iterable[str]) -> dict[str, Provenance]:
        """The first (oldest) evidence record of each item: one indexed probe per item."""
        ids = list(dict.fromkeys(item_ids))
        out: dict[str, Provenance] = {}
        for part in batches(ids):
            rows = self._rows(
                f"SELECT {_PROV_COLS} FROM provenance p WHERE p.id IN (SELECT (SELECT q.id FROM provenance q"
                " WHERE q.item_kind = ? AND q.item_id = x.value ORDER BY q.id LIMIT 1) FROM json_each(?) x)",
                (item_kind, json.dumps(list(part))),
            )
            for r in rows:
                out[r["item_id"]] = Provenance(
                    item_kind=r["item_kind"], item_id=r["item_id"], doc_id=r["doc_id"], version=r["version"],
                    chunk_id=r["chunk_id"], start=r["start"], end=r["end"], text=r["text"],
                    confidence=r["confidence"], id=r["id"], created_at=r["created_at"],
                )
        return out

    def prune_unsupported(self, node_ids: Iterable[str], edge_ids: Iterable[str]) -> PruneResult:
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
        return PruneResult(removed_nodes, removed_edges)

    # -- mentions --------------------------------------------------------------------------------

    def _mention_cache(self) -> MentionGraphCache:
        """This store's holder of the mention graph (mention_graph.py)."""
        cache = self.__dict__.get("_mention_graph_cache")
        if cache is None:
            cache = self.__dict__["_mention_graph_cache"] = MentionGraphCache()
        return cast(MentionGraphCache, cache)

    def _held_mentions(self) -> MentionGraph | None:
        """The mention graph in RAM when this process keeps reading one state of the file, else None (SQL)."""
        return self._mention_cache().get(self.conn, self.read_stamp())

    def insert_mentions(self, mentions: Sequence[Mention]) -> None:
        """Record entity occurrences in chunks (stored naming the chunk by its key: the ``mentions`` view shows
        its id, document and version)."""
        if not mentions:
            return
        keys = {r[0]: (r[1], r[2], r[3]) for r in self._rows_in(
            "SELECT chunk_id, id, doc_id, version FROM chunks WHERE chunk_id IN ({ids})",
            {m.chunk_id for m in mentions})}
        rows = []
        for m in mentions:
            got = keys.get(m.chunk_id)
            if got is None or got[1] != m.doc_id or got[2] != m.version:
                # BackendError, as the foreign key of the table before 0021 (and PostgreSQL's) refused it
                raise BackendError(f"mention.chunk_id: no chunk {m.chunk_id!r} in document {m.doc_id!r} version "
                                   f"{m.version}; store the document version (its chunks) before its mentions")
            rows.append((m.node_id, got[0], m.start, m.end))
        self.conn.executemany('INSERT INTO mention_rows (node_id, chunk, start, "end") VALUES (?, ?, ?, ?)', rows)

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

    def entity_chunk_counts(self, node_ids: Iterable[str]) -> dict[str, int]:
        """Number of distinct chunks mentioning each entity (its passage frequency).

        Kept between calls until the next write to the file (this connection's or another's):
        a search's walk asks for the same hub entities query after query, and counting a hub's
        passages reads all its mentions. Inside a write transaction nothing is kept: a rollback
        leaves ``total_changes`` where the rolled-back rows put it, so the key would not move.
        From the mention graph in RAM when it is held (mention_graph.py), as the three mention reads."""
        held = self._held_mentions()
        if held is not None:
            return {n: c for n in set(node_ids) if (c := held.count(n))}
        ids = set(node_ids)
        if self.conn.in_transaction:
            got = self._map_in("SELECT node_id, count(DISTINCT chunk) FROM mention_rows WHERE node_id IN ({ids})"
                               " GROUP BY node_id", ids)
            return {n: got[n] for n in ids if got.get(n)}
        key = (self.conn.total_changes, self.conn.execute("PRAGMA data_version").fetchone()[0])
        if self._count_cache[0] != key:
            self._count_cache = (key, {})
        cache = self._count_cache[1]
        missing = ids - cache.keys()
        if missing:
            got = self._map_in("SELECT node_id, count(DISTINCT chunk) FROM mention_rows WHERE node_id IN ({ids})"
                               " GROUP BY node_id", missing)
            if len(cache) > _COUNT_CACHE_MAX:
                cache.clear()
            cache.update({n: got.get(n, 0) for n in missing})
        return {n: cache[n] for n in ids if cache[n]}

    def entities_chunks(self, node_ids: Iterable[str], limit_per_node: int) -> dict[str, list[ChunkOffset]]:
        """Distinct chunks of latest document versions mentioning each entity, newest first (by
        each chunk's newest mention), at most ``limit_per_node`` each, with the entity's first
        offset in the document.

        Entities with at most the limit of passages (most of them) take one grouped query for
        the batch; a hub's mentions are read newest first off the (node_id, id) index until the
        limit is reached, so its cost follows the limit, not how many passages mention it."""
        ids = list(dict.fromkeys(node_ids))
        if limit_per_node <= 0 or not ids:
            return {}
        held = self._held_mentions()
        if held is not None:
            return {n: got[:limit_per_node] for n in ids if (got := held.recent(n))}
        # Without old versions every chunk is a latest one: the join to documents is skipped.
        latest = (" JOIN documents d ON d.doc_id = m.doc_id AND d.version = m.version AND d.is_latest = 1"
                  if self._old_chunk_count() else "")
        counts = self.entity_chunk_counts(ids)
        hubs = [n for n in ids if counts.get(n, 0) > limit_per_node]
        picked, first = self._all_recent_chunks([n for n in ids if n in counts and n not in hubs], latest)
        for nid in hubs:
            cids = self._hub_recent_chunks(nid, limit_per_node, latest)
            if cids:
                picked[nid] = cids
        with_hubs = [n for n in hubs if n in picked]
        chunks = list(dict.fromkeys(c for n in with_hubs for c in picked[n]))
        for npart in batches(with_hubs, 400):
            for cpart in batches(chunks, 400):
                # Seeks on the (node_id, chunk) index (0027), chunks first (CROSS JOIN keeps that order): a hub's
                # mention list is long, its picked chunks few.
                for r in self._rows(
                    "SELECT r.node_id, c.chunk_id, min(r.start) FROM chunks c CROSS JOIN mention_rows r INDEXED BY"
                    f" mention_rows_node_chunk ON r.chunk = c.id WHERE c.chunk_id IN ({marks(len(cpart))})"
                    f" AND r.node_id IN ({marks(len(npart))}) GROUP BY r.node_id, c.chunk_id", [*cpart, *npart]):
                    first[(r[0], r[1])] = r[2]
        return {n: [ChunkOffset(c, first[(n, c)]) for c in picked[n]] for n in ids if n in picked}

    def _all_recent_chunks(self, node_ids: list[str], latest: str
                           ) -> tuple[dict[str, list[str]], dict[tuple[str, str], int]]:
        """Every chunk of each entity, newest first, and the entity's first offset in each."""
        last: dict[tuple[str, str], int] = {}
        first: dict[tuple[str, str], int] = {}
        for part in batches(node_ids):
            for r in self._rows(
                f"SELECT m.node_id, m.chunk_id, max(m.id), min(m.start) FROM mentions m{latest}"
                f" WHERE m.node_id IN ({marks(len(part))}) GROUP BY m.node_id, m.chunk_id", part):
                last[(r[0], r[1])] = r[2]
                first[(r[0], r[1])] = r[3]
        picked: dict[str, list[str]] = {}
        for nid, cid in sorted(last, key=lambda nc: -last[nc]):
            picked.setdefault(nid, []).append(cid)
        return picked, first

    def _hub_recent_chunks(self, node_id: str, limit: int, latest: str) -> list[str]:
        """The ``limit`` chunks of an entity's newest mentions, read off the index in id order."""
        # Off the compact rows (a view cannot take INDEXED BY): the node's index is in rowid (= id) order.
        only_latest = (" JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.version AND d.is_latest = 1"
                       if latest else "")
        cur = self.conn.execute("SELECT c.chunk_id FROM mention_rows r INDEXED BY mention_rows_node JOIN chunks c ON"
                                f" c.id = r.chunk{only_latest} WHERE r.node_id = ? ORDER BY r.id DESC", (node_id,))
        seen: dict[str, None] = {}
        try:
            for (cid,) in cur:
                if cid not in seen:
                    seen[cid] = None
                    if len(seen) >= limit:
                        break
        finally:
            cur.close()
        return list(seen)

    def entity_chunks(self, node_id: str, limit: int) -> list[str]:
        """Distinct chunks (latest document versions) mentioning an entity, newest first."""
        rows = self._rows(
            "SELECT m.chunk_id FROM mentions m JOIN documents d ON d.doc_id = m.doc_id AND d.version = m.version"
            " AND d.is_latest = 1 WHERE m.node_id = ? GROUP BY m.chunk_id ORDER BY max(m.id) DESC LIMIT ?",
            (node_id, limit),
        )
        return [r[0] for r in rows]

    def chunk_entities(self, chunk_ids: Iterable[str]) -> dict[str, list[str]]:
        """Distinct entities mentioned in each chunk, in the order of their first mention."""
        ids = list(dict.fromkeys(chunk_ids))
        if not ids:
            return {}
        held = self._held_mentions()
        if held is not None:
            return {c: got for c in ids if (got := held.entities_of(c))}
        out: dict[str, list[str]] = {}
        for part in batches(ids):
            for r in self._rows(
                f"SELECT DISTINCT chunk_id, node_id FROM mentions WHERE chunk_id IN ({','.join('?' * len(part))})",
                part,
            ):
                out.setdefault(r[0], []).append(r[1])
        return out

    # -- per-document evidence -------------------------------------------------------------------

    def node_documents(self, node_id: str, limit: int) -> NodeDocuments:
        """Documents whose extraction named the node, first-named first: ``([(doc id, highest
        version naming it)], more exist)``. Reads at most ``4 * limit + 1`` evidence records."""
        rows = self._rows("SELECT doc_id FROM provenance WHERE item_kind = 'node' AND item_id = ? ORDER BY id LIMIT ?",
                        (node_id, 4 * limit + 1))
        docs = list(dict.fromkeys(r[0] for r in rows))
        more = len(docs) > limit or len(rows) > 4 * limit
        docs = docs[:limit]
        versions: dict[str, int] = {}
        for part in batches(docs):
            for r in self._rows(
                f"SELECT doc_id, max(version) FROM provenance {_BY_DOC} WHERE doc_id IN ({marks(len(part))})"
                " AND item_kind = 'node' AND item_id = ? GROUP BY doc_id", [*part, node_id]):
                versions[r[0]] = r[1]
        return NodeDocuments([DocVersion(d, versions.get(d, 1)) for d in docs], more)

    def document_claims(self, doc_id: str, version: int, limit: int) -> list[Claim]:
        """Edges a document version gives evidence for, with that version's first evidence
        for each, in the order they were first stated."""
        rows = self._rows(
            "SELECT e.*, p.id AS p_id, p.chunk_id AS p_chunk, p.start AS p_start, p.\"end\" AS p_end,"
            f" {PROVENANCE_TEXT} AS p_text, p.confidence AS p_conf, {PROVENANCE_CREATED} AS p_created"
            f" FROM (SELECT item_id, min(id) AS first FROM provenance {_BY_DOC} WHERE doc_id = ? AND version = ?"
            " AND item_kind = 'edge' GROUP BY item_id) f JOIN edges e ON e.id = f.item_id"
            " JOIN provenance p ON p.id = f.first ORDER BY f.first LIMIT ?", (doc_id, version, limit))
        return [Claim(edge_from_row(r), Provenance("edge", r["id"], doc_id, version, r["p_chunk"], r["p_start"],
                                                   r["p_end"], r["p_text"], r["p_conf"], r["p_id"], r["p_created"]))
                for r in rows]

    def document_claim_ids(self, doc_id: str, version: int) -> set[str]:
        """Ids of the edges a document version gives evidence for."""
        return {r[0] for r in self._rows(f"SELECT DISTINCT item_id FROM provenance {_BY_DOC} WHERE doc_id = ?"
                                       " AND version = ? AND item_kind = 'edge'", (doc_id, version))}

    def document_entity_ids(self, doc_id: str, version: int, limit: int) -> list[str]:
        """Entities a document version names, in extraction order."""
        return [r[0] for r in self._rows(
            f"SELECT item_id FROM provenance {_BY_DOC} WHERE doc_id = ? AND version = ? AND item_kind = 'node'"
            " GROUP BY item_id ORDER BY min(id) LIMIT ?", (doc_id, version, limit))]

    def edges_supported_by(self, edge_ids: Iterable[str], doc_id: str, version: int) -> set[str]:
        """Which of ``edge_ids`` have evidence in this document version."""
        ids = list(dict.fromkeys(edge_ids))
        out: set[str] = set()
        for part in batches(ids):
            for r in self._rows(
                f"SELECT DISTINCT item_id FROM provenance {_BY_DOC} WHERE doc_id = ? AND version = ?"
                f" AND item_kind = 'edge' AND item_id IN ({marks(len(part))})", [doc_id, version, *part]):
                out.add(r[0])
        return out
