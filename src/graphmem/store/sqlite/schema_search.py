"""Schema migration 0013 of the SQLite backend: titles as a full-text field of every chunk.

A chunk carries its document version's title (``chunks.title``), and ``chunks_fts`` indexes two
columns, text and title, so that ``bm25(chunks_fts, 1.0, w)`` weighs title words BM25F-style (see
:class:`~graphmem.store.protocols.DocumentStore.search_chunks`). Existing knowledge bases get the
titles from their stored documents and a rebuilt index.

Shipped migrations are never edited: their text is pinned by a hash in the contract suite.
"""

from __future__ import annotations

__all__ = ["SEARCH_MIGRATIONS"]

SEARCH_MIGRATIONS: list[tuple[str, str]] = [
    (
        "0013_chunk_titles",
        """
ALTER TABLE chunks ADD COLUMN title TEXT NOT NULL DEFAULT '';
UPDATE chunks SET title = coalesce((SELECT d.title FROM documents d
                                    WHERE d.doc_id = chunks.doc_id AND d.version = chunks.version), '');

DROP TRIGGER chunks_ai;
DROP TRIGGER chunks_ad;
DROP TABLE chunks_fts;
CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    text, title, content='chunks', content_rowid='id', tokenize='porter unicode61'
);
INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild');

-- A chunk inserted without its title (a dump from before this migration, loaded) takes its
-- document's, so that the index and the row always agree.
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    UPDATE chunks SET title = coalesce((SELECT d.title FROM documents d
                                        WHERE d.doc_id = new.doc_id AND d.version = new.version), '')
        WHERE id = new.id AND new.title = '';
    INSERT INTO chunks_fts (rowid, text, title) SELECT id, text, title FROM chunks WHERE id = new.id;
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text, title) VALUES ('delete', old.id, old.text, old.title);
END;
""",
    ),
]
