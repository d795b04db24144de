"""SQL for documents and chunks (SQLite backend): versions, chunks, their full text."""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ...errors import InvalidInput
from ...models import Chunk, ChunkHit, Document
from ..protocols.documents import DEFAULT_TITLE_WEIGHT
from ..rows import ChunkInfo, DocSource, LostEvidence
from .fts import pruned_fts_query
from .sqlbase import SqlHelpers, batches, marks

__all__ = ["DocumentSqlMixin"]


# Above this many chunks of old versions, rank_chunks filters inside the ranked join instead.
_MAX_OLD_CHUNKS = 2000
# Up to this many matching chunks, one match's scores serve a whole search (rank_chunks, chunk_bm25).
_ALL_MATCHES_MAX = 5000


def _weight(title_weight: float) -> float:
    """The title weight, checked, as written into bm25()'s column weights (a validated float, so
    formatting it into the SQL is safe). Refuses what is not a finite number >= 0."""
    try:
        w = float(title_weight)
    except (TypeError, ValueError):
        w = -1.0
    if not (0.0 <= w < float("inf")):
        raise InvalidInput(f"title_weight: expected a number >= 0, got {title_weight!r}")
    return w


def stitch_chunks(chunks: Iterable[Any]) -> str:
    """The text a document's chunks ``(text, start, end)``, in ordinal order, spell out: each chunk adds what lies
    past the furthest end before it (migration 0021_document_text_from_chunks computes the same in SQL)."""
    out: list[str] = []
    reached = 0
    for text, start, end in chunks:
        if end > reached:
            out.append(text[max(0, reached - start):])
        reached = max(reached, end)
    return "".join(out)


# A document version's text is stored once, in its chunks, where they spell it out: content '' when they spell all
# of it, else ``_AROUND`` + JSON ``[head, tail]`` when they spell all but a head and a tail (the whitespace a chunk
# does not keep). A text that itself starts with ``_AROUND`` is stored as ``_AROUND`` + JSON ``[text]``.
_AROUND = "\x00"


def stored_content(content: str, chunks: Sequence[tuple[str, int, int]]) -> str:
    """What ``documents.content`` holds for ``content`` cut into ``chunks`` ``(text, start, end)``, ordinal order."""
    if content.startswith(_AROUND):
        return _AROUND + json.dumps([content], ensure_ascii=False)
    if not chunks or _AROUND in content:
        return content
    spelled = stitch_chunks(chunks)
    if spelled == content:
        return ""
    head = chunks[0][1]
    if spelled and content[head:head + len(spelled)] == spelled:
        return _AROUND + json.dumps([content[:head], content[head + len(spelled):]], ensure_ascii=False)
    return content


def read_content(stored: str, chunks: Callable[[], Iterable[Any]]) -> str:
    """The text of a document version from ``documents.content`` (:func:`stored_content`) and, where it needs them,
    its ``chunks()`` ``(text, start, end)`` in ordinal order."""
    if stored == "":
        return stitch_chunks(chunks())
    if not stored.startswith(_AROUND):
        return stored
    parts = json.loads(stored[1:])
    return parts[0] if len(parts) == 1 else parts[0] + stitch_chunks(chunks()) + parts[1]


# A document version in one statement (one read snapshot): first its row as a JSON array (start and end NULL),
# then, where its text is stored in its chunks (content '' or NUL-led), its chunks' (text, start, end) in ordinal
# order. Three columns a row: the chunk rows are thousands for a long document.
_DOCUMENT_WITH_CHUNKS = (
    "SELECT json_array(doc_id, version, title, source, content, content_hash, metadata, created_at, is_latest,"
    " chunk_count), NULL, NULL FROM documents WHERE doc_id = ? AND version = {which}"
    ' UNION ALL SELECT * FROM (SELECT c.text, c.start, c."end" FROM chunks c JOIN documents d ON d.doc_id = c.doc_id'
    " AND d.version = c.version AND (d.content = '' OR substr(CAST(d.content AS BLOB), 1, 1) = x'00')"
    " WHERE c.doc_id = ? AND c.version = {which} ORDER BY c.ordinal)")
_LATEST_VERSION = "(SELECT max(version) FROM documents WHERE doc_id = ?)"

CHUNK_TEXTS = 'SELECT text, start, "end" FROM chunks WHERE doc_id = ? AND version = ? ORDER BY ordinal'


class DocumentSqlMixin(SqlHelpers):
    """Document versions, their chunks and BM25 over chunks."""

    _fts_memo: tuple[tuple[str, int] | None, str | None]
    _scores_memo: tuple[tuple[str, float, int, int] | None, dict[int, float] | None] = (None, None)
    _just_inserted: tuple[dict[str, tuple[int, str]], dict[tuple[str, int], str]] = ({}, {})

    # -- documents -------------------------------------------------------------------------------

    @staticmethod
    def _doc(r: sqlite3.Row, with_content: bool = True) -> Document:
        return Document(
            doc_id=r["doc_id"],
            version=r["version"],
            title=r["title"],
            source=r["source"],
            content=r["content"] if with_content else "",
            content_hash=r["content_hash"],
            metadata=json.loads(r["metadata"]),
            created_at=r["created_at"],
            is_latest=bool(r["is_latest"]),
            chunk_count=r["chunk_count"],
        )

    def get_document(self, doc_id: str, version: int | None = None) -> Document | None:
        """A document version (the latest when ``version`` is None).

        One statement, so one read snapshot: the row and the chunks its text is rebuilt from can never come from
        two states of the file (another process deleting the document and adding it again in between)."""
        which, ask = (_LATEST_VERSION, doc_id) if version is None else ("?", version)
        cur = self.conn.cursor()
        cur.row_factory = None
        rows = cur.execute(_DOCUMENT_WITH_CHUNKS.format(which=which), (doc_id, ask, doc_id, ask)).fetchall()
        heads = [r[0] for r in rows if r[1] is None]  # the document row (a chunk's start is never NULL)
        if not heads:
            return None
        (d_id, d_version, title, source, stored, digest, meta, created, latest, count) = json.loads(heads[0])
        text = read_content(stored, lambda: [r for r in rows if r[1] is not None])
        return Document(doc_id=d_id, version=d_version, title=title, source=source, content=text,
                        content_hash=digest, metadata=json.loads(meta), created_at=created, is_latest=bool(latest),
                        chunk_count=count)

    def document_versions(self, doc_id: str) -> list[Document]:
        """Every stored version of a document, oldest first (content omitted)."""
        rows = self._rows("SELECT * FROM documents WHERE doc_id = ? ORDER BY version", (doc_id,))
        return [self._doc(r, with_content=False) for r in rows]

    def list_documents(self, limit: int | None = None, offset: int = 0) -> list[Document]:
        """Latest version of every document, by id (content omitted)."""
        rows = self._rows(
            "SELECT * FROM documents WHERE is_latest = 1 ORDER BY doc_id LIMIT ? OFFSET ?",
            (-1 if limit is None else limit, offset),
        )
        return [self._doc(r, with_content=False) for r in rows]

    def latest_documents(self, doc_ids: Iterable[str]) -> dict[str, Document]:
        """Latest version of each document, content and metadata omitted."""
        ids = list(dict.fromkeys(doc_ids))
        out: dict[str, Document] = {}
        for part in batches(ids):
            for r in self._rows(
                "SELECT doc_id, version, title, source, content_hash, created_at, chunk_count"
                f" FROM documents WHERE is_latest = 1 AND doc_id IN ({marks(len(part))})", part):
                out[r[0]] = Document(r[0], r[1], r[2], r[3], "", r[4], {}, r[5], True, r[6])
        return out

    def insert_document(self, doc: Document, chunks: Sequence[Chunk]) -> None:
        """Store a new document version with its chunks; it becomes the latest."""
        c = self.conn
        # Text its chunks spell out (their overlaps aside) is not stored twice (get_document puts it back).
        stored = stored_content(doc.content, [(ch.text, ch.start, ch.end)
                                              for ch in sorted(chunks, key=lambda ch: ch.ordinal)])
        if doc.version > 1:  # a first version has no earlier one to retire
            c.execute("UPDATE documents SET is_latest = 0 WHERE doc_id = ? AND is_latest = 1", (doc.doc_id,))
        c.execute(
            "INSERT INTO documents (doc_id, version, title, source, content, content_hash, metadata, created_at,"
            " is_latest, chunk_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
            (
                doc.doc_id, doc.version, doc.title, doc.source, stored, doc.content_hash,
                json.dumps(doc.metadata, ensure_ascii=False), doc.created_at, len(chunks),
            ),
        )
        c.executemany(
            'INSERT INTO chunks (chunk_id, doc_id, version, ordinal, start, "end", text, title)'
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(ch.chunk_id, ch.doc_id, ch.version, ch.ordinal, ch.start, ch.end, ch.text, doc.title) for ch in chunks],
        )
        # What the document's evidence will be compared with (EvidenceSqlMixin.insert_provenance), without a read.
        self._just_inserted = ({ch.chunk_id: (ch.start, ch.text) for ch in chunks},
                               {(doc.doc_id, doc.version): doc.created_at})

    def delete_document(self, doc_id: str) -> LostEvidence:
        """Delete every version of a document, its chunks and provenance.

        Returns the ids of the nodes and edges that lost provenance, so that the caller can
        prune those left unsupported.
        """
        # By the document's index: left to itself SQLite took (item_kind, item_id), which makes DISTINCT free
        # but walks every node's or relation's evidence, so each delete cost more the bigger the knowledge base
        # (pruning 800 of 8,000 documents: 86 ms each, 42 of 51 s in these two statements).
        rows = self._rows("SELECT DISTINCT item_kind, item_id FROM provenance INDEXED BY provenance_doc"
                          " WHERE doc_id = ? AND item_kind IN ('node', 'edge')", (doc_id,))
        node_ids = {r[1] for r in rows if r[0] == "node"}
        edge_ids = {r[1] for r in rows if r[0] == "edge"}
        self.conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))  # cascades
        return LostEvidence(node_ids, edge_ids)

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

    def documents_by_source_prefix(self, prefix: str) -> list[DocSource]:
        """``(doc_id, source)`` of latest documents whose source starts with ``prefix``."""
        esc = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return [DocSource(r[0], r[1]) for r in self._rows(
            "SELECT doc_id, source FROM documents WHERE is_latest = 1 AND source LIKE ? ESCAPE '\\'",
            (esc + "%",),
        )]

    # -- chunks ----------------------------------------------------------------------------------

    @staticmethod
    def _chunk(r: sqlite3.Row) -> Chunk:
        return Chunk(r["chunk_id"], r["doc_id"], r["version"], r["ordinal"], r["start"], r["end"], r["text"])

    def get_chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        """Chunks by id (missing ids are absent from the result)."""
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, Chunk] = {}
        for part in batches(ids):
            for r in self._rows(f"SELECT * FROM chunks WHERE chunk_id IN ({','.join('?' * len(part))})", part):
                out[r["chunk_id"]] = self._chunk(r)
        return out

    def document_chunks(self, doc_id: str, version: int) -> list[Chunk]:
        """The chunks of one document version, in order."""
        rows = self._rows("SELECT * FROM chunks WHERE doc_id = ? AND version = ? ORDER BY ordinal", (doc_id, version))
        return [self._chunk(r) for r in rows]

    def chunk_info(self, chunk_ids: Iterable[str]) -> dict[str, ChunkInfo]:
        """``(doc_id, version, title, is_latest)`` per chunk."""
        ids = list(dict.fromkeys(chunk_ids))
        out: dict[str, ChunkInfo] = {}
        for part in batches(ids):
            for r in self._rows(
                "SELECT c.chunk_id, c.doc_id, c.version, d.title, d.is_latest FROM chunks c JOIN documents d"
                " ON d.doc_id = c.doc_id AND d.version = c.version"
                f" WHERE c.chunk_id IN ({','.join('?' * len(part))})",
                part,
            ):
                out[r[0]] = ChunkInfo(r[1], r[2], r[3], bool(r[4]))
        return out

    # -- full text -------------------------------------------------------------------------------

    def search_chunks(self, text: str, k: int = 10, latest_only: bool = True,
                      title_weight: float = DEFAULT_TITLE_WEIGHT) -> list[ChunkHit]:
        """BM25F-ranked chunks (text, and title weighted ``title_weight``) matching any word of
        ``text``, with a snippet of the text."""
        expr = self.chunk_fts_expr(text)
        if expr is None or k <= 0:
            return []
        w = _weight(title_weight)
        sql = (
            f"SELECT c.*, d.title AS title, -bm25(chunks_fts, 1.0, {w}) AS score,"
            " snippet(chunks_fts, 0, '[', ']', '…', 16) AS snip"
            " FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid"
            " JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.version"
            " WHERE chunks_fts MATCH ?"
        )
        if latest_only:
            sql += " AND d.is_latest = 1"
        sql += f" ORDER BY bm25(chunks_fts, 1.0, {w}) LIMIT ?"
        return [ChunkHit(self._chunk(r), r["title"], float(r["score"]), r["snip"]) for r in self._rows(sql, (expr, k))]

    def rank_chunks(self, text: str, k: int = 10, latest_only: bool = True,
                    keep_scores: bool = False, title_weight: float = DEFAULT_TITLE_WEIGHT
                    ) -> list[tuple[str, float]]:
        """``(chunk id, BM25)`` of the best ``k`` chunks, in :meth:`search_chunks`' order, without
        snippets or chunk rows: a search's seeding keeps only ids and scores, and a snippet per
        candidate (of a deep pool) cost more than the match itself. ``keep_scores``: the caller
        will ask :meth:`chunk_bm25` about other chunks for the same text (read every match's
        score now, so that no second match is needed)."""
        expr = self.chunk_fts_expr(text)
        if expr is None or k <= 0:
            return []
        w = _weight(title_weight)
        bm25 = f"bm25(chunks_fts, 1.0, {w})"
        old = self._old_chunk_count() if latest_only else 0
        if old > _MAX_OLD_CHUNKS:  # many old versions: filter inside the ranked join
            sql = (f"SELECT c.chunk_id, -{bm25} FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid"
                   " JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.version"
                   f" WHERE chunks_fts MATCH ? AND d.is_latest = 1 ORDER BY {bm25} LIMIT ?")
            return [(r[0], float(r[1])) for r in self.conn.execute(sql, (expr, k))]
        every = self._all_chunk_scores(expr, w) if keep_scores and not old else None
        if every is not None:
            # FTS5's own order: by rank, ties by rowid. nsmallest is sorted(...)[:k], stable.
            scores = every
            top = heapq.nsmallest(k, every, key=lambda rowid: (-every[rowid], rowid))
        else:
            # Ranked and limited on the virtual table alone (a join, or ORDER BY rank, made
            # SQLite or FTS5 sort every match); the top k + (chunks of old versions) holds the
            # top k latest ones, however the old ones rank.
            rows = self.conn.execute(f"SELECT rowid, -{bm25} FROM chunks_fts WHERE chunks_fts MATCH ?"
                                     f" ORDER BY {bm25} LIMIT ?", (expr, k + old)).fetchall()
            scores = {r[0]: float(r[1]) for r in rows}
            top = [r[0] for r in rows]
        latest = (" JOIN documents d ON d.doc_id = c.doc_id AND d.version = c.version AND d.is_latest = 1"
                  if old else "")
        ids = {r[0]: r[1] for part in batches(top) for r in self._rows(
            f"SELECT c.id, c.chunk_id FROM chunks c{latest} WHERE c.id IN ({marks(len(part))})", part)}
        return [(ids[r], scores[r]) for r in top if r in ids][:k]

    def _all_chunk_scores(self, expr: str, title_weight: float) -> dict[int, float] | None:
        """BM25 (higher is better) of every chunk matching ``expr`` by row id, or None when more
        than _ALL_MATCHES_MAX match. One match serves a whole search: the seeding takes its
        head, the rerank the scores of its candidates (a second match cost as much as the first).
        Kept until the next write or another expression; never kept from inside a write transaction (a
        rollback does not move ``total_changes`` back, so the key could not tell its rows are gone)."""
        key = self._scores_key(expr, title_weight)
        if key is None or self._scores_memo[0] != key:
            rows = self.conn.execute(f"SELECT rowid, -bm25(chunks_fts, 1.0, {title_weight}) FROM chunks_fts"
                                     " WHERE chunks_fts MATCH ? LIMIT ?", (expr, _ALL_MATCHES_MAX + 1)).fetchall()
            got = None if len(rows) > _ALL_MATCHES_MAX else {r[0]: float(r[1]) for r in rows}
            if key is None:
                return got
            self._scores_memo = (key, got)
        return self._scores_memo[1]

    def _scores_key(self, expr: str, title_weight: float) -> tuple[str, float, int, int] | None:
        """What the kept scores are valid for; None inside a transaction (nothing is kept or served there)."""
        if self.conn.in_transaction:
            return None
        return (expr, title_weight, self.conn.total_changes, self.conn.execute("PRAGMA data_version").fetchone()[0])

    def chunk_fts_expr(self, text: str) -> str | None:
        """The FTS5 expression for ``text`` over chunks (escaped; corpus-wide words pruned)."""
        total = self.conn.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]
        # A search asks twice for the same text (seed retrieval, then BM25 of the candidates):
        # the pruning checks run once while the chunk table is unchanged.
        key = (text, total)
        if self._fts_memo[0] != key:
            self._fts_memo = (key, pruned_fts_query(self.conn, "chunks_fts", text, total,
                                                    memo=self._prune_memo("chunks_fts", total)))
        return self._fts_memo[1]

    def chunk_bm25(self, text: str, chunk_ids: Sequence[str],
                   title_weight: float = DEFAULT_TITLE_WEIGHT) -> dict[str, float]:
        """BM25F (higher is better) of ``text`` for the given chunks (absent: no word matches)."""
        fts_expr = self.chunk_fts_expr(text)
        out: dict[str, float] = {}
        if fts_expr is None:
            return out
        w = _weight(title_weight)
        key = self._scores_key(fts_expr, w)
        scores = self._scores_memo[1] if key is not None and self._scores_memo[0] == key else None
        if scores is not None:  # the match of this expression is at hand: no second one
            for part in batches(list(dict.fromkeys(chunk_ids))):
                for r in self._rows(f"SELECT chunk_id, id FROM chunks WHERE chunk_id IN ({marks(len(part))})", part):
                    if r[1] in scores:
                        out[r[0]] = scores[r[1]]
            return out
        for part in batches(list(chunk_ids)):
            for r in self._rows(
                f"SELECT c.chunk_id, -bm25(chunks_fts, 1.0, {w}) FROM chunks_fts"
                " JOIN chunks c ON c.id = chunks_fts.rowid"
                f" WHERE chunks_fts MATCH ? AND c.chunk_id IN ({','.join('?' * len(part))})",
                [fts_expr, *part],
            ):
                out[r[0]] = float(r[1])
        return out
