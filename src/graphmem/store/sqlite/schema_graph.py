"""Schema migrations 0001-0002 of the SQLite backend: documents, chunks, nodes and
names, edges, provenance, types, events, mentions.

Shipped migrations are never edited: their text is pinned by a hash in the contract suite.
"""

from __future__ import annotations

__all__ = ["GRAPH_MIGRATIONS"]

GRAPH_MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
CREATE TABLE documents (
    rowid_ INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    title TEXT NOT NULL,
    source TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    is_latest INTEGER NOT NULL DEFAULT 1,
    chunk_count INTEGER NOT NULL DEFAULT 0,
    UNIQUE (doc_id, version)
);
CREATE INDEX documents_latest ON documents (is_latest, doc_id);

CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    chunk_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    text TEXT NOT NULL,
    FOREIGN KEY (doc_id, version) REFERENCES documents (doc_id, version) ON DELETE CASCADE
);
CREATE INDEX chunks_doc ON chunks (doc_id, version, ordinal);

CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    text, content='chunks', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;

CREATE TABLE nodes (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    properties TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    relevance REAL NOT NULL DEFAULT 1.0,
    archived INTEGER NOT NULL DEFAULT 0,
    manual INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX nodes_kind_type ON nodes (kind, type);

-- A node's name and aliases, normalised: entities are deduplicated on these.
CREATE TABLE node_names (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    norm TEXT NOT NULL,
    alias TEXT NOT NULL,
    node_id TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    UNIQUE (kind, norm)
);
CREATE INDEX node_names_node ON node_names (node_id);

CREATE VIRTUAL TABLE node_names_fts USING fts5 (
    alias, content='node_names', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER node_names_ai AFTER INSERT ON node_names BEGIN
    INSERT INTO node_names_fts (rowid, alias) VALUES (new.id, new.alias);
END;
CREATE TRIGGER node_names_ad AFTER DELETE ON node_names BEGIN
    INSERT INTO node_names_fts (node_names_fts, rowid, alias) VALUES ('delete', old.id, old.alias);
END;

CREATE TABLE edges (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    target TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    confidence REAL NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    valid_from TEXT,
    valid_to TEXT,
    manual INTEGER NOT NULL DEFAULT 0,
    properties TEXT NOT NULL DEFAULT '{}',
    UNIQUE (source, type, target)
);
CREATE INDEX edges_target ON edges (target);

-- Evidence for nodes and edges: many records per item, one per supporting passage.
CREATE TABLE provenance (
    id INTEGER PRIMARY KEY,
    item_kind TEXT NOT NULL,
    item_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    chunk_id TEXT,
    start INTEGER,
    "end" INTEGER,
    text TEXT NOT NULL,
    confidence REAL,
    created_at TEXT NOT NULL,
    FOREIGN KEY (doc_id, version) REFERENCES documents (doc_id, version) ON DELETE CASCADE
);
CREATE INDEX provenance_item ON provenance (item_kind, item_id);
CREATE INDEX provenance_doc ON provenance (doc_id, version);

CREATE TABLE ontology_types (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (kind, name)
);

CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    type TEXT NOT NULL,
    target TEXT NOT NULL,
    ts TEXT NOT NULL,
    actor TEXT,
    payload TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX events_type ON events (type, id);
CREATE INDEX events_target ON events (target, id);
""",
    ),
    (
        "0002_mentions",
        """
-- Every occurrence of an entity in a chunk: retrieval walks entity -> passage -> entity
-- through these (passages are vertices of the retrieval graph, as in HippoRAG).
CREATE TABLE mentions (
    id INTEGER PRIMARY KEY,
    node_id TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    chunk_id TEXT NOT NULL REFERENCES chunks (chunk_id) ON DELETE CASCADE,
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL
);
CREATE INDEX mentions_node ON mentions (node_id, chunk_id);
CREATE INDEX mentions_chunk ON mentions (chunk_id);
""",
    ),
]
