"""SQL for documents and chunks (PostgreSQL backend): versions, chunks, BM25 over chunk texts (fts.py)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

from ...errors import InvalidInput
from ...models import Chunk, ChunkHit, Document
from ..protocols import documents as _protocol
from ..rows import ChunkInfo, DocSource, LostEvidence
from .fts import FtsPgMixin, query_terms, snippet, term_counts
from .pgbase import Row

__all__ = ["DocumentPgMixin", "TITLE_WEIGHT"]

# The weight of a chunk's title field (issue 15's BM25F): the protocol's default where it has one; before
# that lands, titles are indexed but weigh nothing.
TITLE_WEIGHT: float = float(getattr(_protocol, "DEFAULT_TITLE_WEIGHT", 0.0))


def _weight(title_weight: float) -> float:
    if isinstance(title_weight, bool) or not isinstance(title_weight, (int, float)) or not math.isfinite(
            title_weight) or title_weight < 0:
        raise InvalidInput(f"title_weight: expected a finite number >= 0, got {title_weight!r}")
    return float(title_weight)

_CHUNK_TOTAL = "SELECT coalesce(max(id), 0) FROM chunks"
# Chunks of latest versions only (``p`` is the terms table of fts.py, ``d`` its lengths).
_LATEST = (" JOIN chunks cc ON cc.id = p.rid JOIN documents dd ON dd.doc_id = cc.doc_id AND dd.version = cc.version"
           " AND dd.is_latest = 1")


class DocumentPgMixin(FtsPgMixin):
    """Document versions, their chunks and BM25 over chunks."""

    # -- documents -------------------------------------------------------------------------------

    @staticmethod
    def _doc(r: Row, with_content: bool = True) -> Document:
        return Document(
            doc_id=r["doc_id"], version=r["version"], title=r["title"], source=r["source"],
            content=r["content"] if with_content else "", content_hash=r["content_hash"],
            metadata=json.loads(r["metadata"]), created_at=r["created_at"], is_latest=bool(r["is_latest"]),
            chunk_count=r["chunk_count"],
        )

    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        """A document version (the latest when ``version`` is None)."""
        if version is None:
            rows = self._rows("SELECT * FROM documents WHERE doc_id = %s ORDER BY version DESC LIMIT 1", (doc_id,))
        else:
            rows = self._rows("SELECT * FROM documents WHERE doc_id = %s AND version = %s", (doc_id, version))
        return self._doc(rows[0]) if rows else None

    def document_versions(self, doc_id: str) -> list[Document]:
        """Every stored version of a document, oldest first (content omitted)."""
        rows = self._rows("SELECT * FROM documents WHERE doc_id = %s ORDER BY version", (doc_id,))
        return [self._doc(r, with_content=False) for r in rows]

    def list_documents(self, limit: int | None = None, offset: int = 0) -> list[Document]:
        """Latest version of every document, by id (content omitted)."""
        rows = self._rows('SELECT * FROM documents WHERE is_latest = 1 ORDER BY doc_id COLLATE "C" LIMIT %s OFFSET %s',
                          (limit, max(offset, 0)))
        return [self._doc(r, with_content=False) for r in rows]

    def latest_documents(self, doc_ids: Iterable[str]) -> dict[str, Document]:
        """Latest version of each document, content and metadata omitted."""
        out: dict[str, Document] = {}
        for r in self._rows("SELECT doc_id, version, title, source, content_hash, created_at, chunk_count"
                            " FROM documents WHERE is_latest = 1 AND doc_id = ANY(%s)", (list(set(doc_ids)),)):
            out[r[0]] = Document(r[0], r[1], r[2], r[3], "", r[4], {}, r[5], True, r[6])
        return out

    def insert_document(self, doc: Document, chunks: Sequence[Chunk]) -> None:
        """Store a new document version with its chunks (and their terms); it becomes the latest. One
        statement, one round trip: the previous latest version's flag, the version, its chunks, their lengths
        and terms (references between them are checked at the end of the statement)."""
        lengths: list[int] = []
        term_chunk: list[str] = []
        term_text: list[str] = []
        term_tfs: list[str] = []
        for ch in chunks:
            length, row_terms = term_counts([ch.text, doc.title])
            lengths.append(length)
            for term, tfs in row_terms:
                term_chunk.append(ch.chunk_id)
                term_text.append(term)
                term_tfs.append("{" + ",".join(map(str, tfs)) + "}")
        self._exec(
            "WITH old AS (UPDATE documents SET is_latest = 0 WHERE doc_id = %s AND is_latest = 1),"
            " doc AS (INSERT INTO documents (doc_id, version, title, source, content, content_hash, metadata,"
            " created_at, is_latest, chunk_count) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 1, %s)),"
            ' ch AS (INSERT INTO chunks (chunk_id, doc_id, version, ordinal, start, "end", text, title)'
            " SELECT a, b, c, d, e, f, g, %s FROM unnest(%s::text[], %s::text[], %s::int[], %s::int[], %s::int[],"
            " %s::int[], %s::text[]) WITH ORDINALITY AS u(a, b, c, d, e, f, g, n) ORDER BY n RETURNING id, chunk_id),"
            " fd AS (INSERT INTO chunks_fts_docs (rid, len) SELECT ch.id, l.len FROM ch"
            " JOIN unnest(%s::text[], %s::int[]) AS l(chunk_id, len) ON l.chunk_id = ch.chunk_id)"
            " INSERT INTO chunks_fts_terms (term, rid, tfs) SELECT t.term, ch.id, t.tfs::int[] FROM ch"
            " JOIN unnest(%s::text[], %s::text[], %s::text[]) AS t(chunk_id, term, tfs) ON t.chunk_id = ch.chunk_id",
            (doc.doc_id, doc.doc_id, doc.version, doc.title, doc.source, doc.content, doc.content_hash,
             json.dumps(doc.metadata, ensure_ascii=False), doc.created_at, len(chunks),
             doc.title, [ch.chunk_id for ch in chunks], [ch.doc_id for ch in chunks], [ch.version for ch in chunks],
             [ch.ordinal for ch in chunks], [ch.start for ch in chunks], [ch.end for ch in chunks],
             [ch.text for ch in chunks], [ch.chunk_id for ch in chunks], lengths, term_chunk, term_text, term_tfs))

    def delete_document(self, doc_id: str) -> LostEvidence:
        """Delete every version of a document, its chunks and provenance (cascades); returns the nodes and
        edges that lost provenance."""
        node_ids = {r[0] for r in self._rows(
            "SELECT DISTINCT item_id FROM provenance WHERE doc_id = %s AND item_kind = 'node'", (doc_id,))}
        edge_ids = {r[0] for r in self._rows(
            "SELECT DISTINCT item_id FROM provenance WHERE doc_id = %s AND item_kind = 'edge'", (doc_id,))}
        self._exec("DELETE FROM documents WHERE doc_id = %s", (doc_id,))
        return LostEvidence(node_ids, edge_ids)

    def document_hashes(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """Content hash of the latest version of each known document id."""
        return {r[0]: r[1] for r in self._rows(
            "SELECT doc_id, content_hash FROM documents WHERE is_latest = 1 AND doc_id = ANY(%s)",
            (list(set(doc_ids)),))}

    def document_source_files(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """Absolute path of the file each latest document was ingested from, where recorded."""
        out: dict[str, str] = {}
        for r in self._rows("SELECT doc_id, metadata FROM documents WHERE is_latest = 1 AND doc_id = ANY(%s)"
                            " AND metadata LIKE '%%source_file%%'", (list(set(doc_ids)),)):
            v = json.loads(r[1]).get("source_file")
            if isinstance(v, str) and v:
                out[r[0]] = v
        return out

    def documents_by_source_prefix(self, prefix: str) -> list[DocSource]:
        """``(doc_id, source)`` of latest documents whose source starts with ``prefix`` (literally)."""
        return [DocSource(r[0], r[1]) for r in self._rows(
            "SELECT doc_id, source FROM documents WHERE is_latest = 1 AND starts_with(source, %s)", (prefix,))]

    # -- chunks ----------------------------------------------------------------------------------

    @staticmethod
    def _chunk(r: Row) -> Chunk:
        return Chunk(r["chunk_id"], r["doc_id"], r["version"], r["ordinal"], r["start"], r["end"], r["text"])

    def get_chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """Chunks by id (missing ids are absent from the result)."""
        return {r["chunk_id"]: self._chunk(r) for r in self._rows(
            "SELECT * FROM chunks WHERE chunk_id = ANY(%s)", (list(set(chunk_ids)),))}

    def document_chunks(self, doc_id: str, version: int) -> list[Chunk]:
        """The chunks of one document version, in order."""
        return [self._chunk(r) for r in self._rows(
            "SELECT * FROM chunks WHERE doc_id = %s AND version = %s ORDER BY ordinal", (doc_id, version))]

    def chunk_info(self, chunk_ids: Iterable[str]) -> dict[str, ChunkInfo]:
        """``(doc_id, version, title, is_latest)`` per chunk."""
        return {r[0]: ChunkInfo(r[1], r[2], r[3], bool(r[4])) for r in self._rows(
            "SELECT c.chunk_id, c.doc_id, c.version, d.title, d.is_latest FROM chunks c JOIN documents d"
            " ON d.doc_id = c.doc_id AND d.version = c.version WHERE c.chunk_id = ANY(%s)",
            (list(set(chunk_ids)),))}

    # -- full text -------------------------------------------------------------------------------

    def _ranked_chunks(self, text: str, k: int | None, latest_only: bool, title_weight: float,
                       outer_sql: str | None = None, rids: Sequence[int] | None = None) -> list[Row]:
        # The pruning of common words is relative to the largest chunk row id, as in the SQLite backend.
        return self._fts_rank_rows("chunks", text, k, weights=(1.0, _weight(title_weight)),
                                   join_sql=_LATEST if latest_only else "", rids=rids,
                                   total_sql=_CHUNK_TOTAL, outer_sql=outer_sql)

    def search_chunks(self, text: str, k: int = 10, latest_only: bool = True,
                      title_weight: float = TITLE_WEIGHT) -> list[ChunkHit]:
        """BM25F-ranked chunks (text, and title weighted ``title_weight``) matching any word of ``text``,
        with a snippet of the text marking the matched words."""
        if k <= 0:
            _weight(title_weight)
            return []
        rows = self._ranked_chunks(text, k, latest_only, title_weight, outer_sql=(
            "SELECT c.*, d.title AS doc_title, r.score FROM ({ranked}) r JOIN chunks c ON c.id = r.rid"
            " JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.version ORDER BY r.score DESC, r.rid"))
        terms = {t for p in query_terms(text) for t in p}
        return [ChunkHit(self._chunk(r), r["doc_title"], float(r["score"]), snippet(r["text"], terms)) for r in rows]

    def rank_chunks(self, text: str, k: int = 10, latest_only: bool = True, keep_scores: bool = False,
                    title_weight: float = TITLE_WEIGHT) -> list[tuple[str, float]]:
        """``(chunk id, BM25)`` of :meth:`search_chunks`' hits, in its order, without snippets."""
        if k <= 0:
            _weight(title_weight)
            return []
        return [(r[0], float(r[1])) for r in self._ranked_chunks(text, k, latest_only, title_weight, outer_sql=(
            "SELECT c.chunk_id, r.score FROM ({ranked}) r JOIN chunks c ON c.id = r.rid ORDER BY r.score DESC, r.rid"))]

    def chunk_bm25(self, text: str, chunk_ids: Sequence[str], title_weight: float = TITLE_WEIGHT) -> dict[str, float]:
        """BM25 (higher is better) of ``text`` for the given chunks (absent: no word matches)."""
        weight = _weight(title_weight)
        ids = {int(r[0]): r[1] for r in self._rows("SELECT id, chunk_id FROM chunks WHERE chunk_id = ANY(%s)",
                                                   (list(set(chunk_ids)),))}
        if not ids:
            return {}
        return {ids[int(r[0])]: float(r[1]) for r in self._ranked_chunks(text, None, False, weight, rids=list(ids))
                if int(r[0]) in ids}
