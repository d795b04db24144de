"""Schema migrations 0003-0005 of the SQLite backend: wiki pages and their links,
vectors and knowledge-base facts, edge-walk indexes.

Shipped migrations are never edited: their text is pinned by a hash in the contract suite.
"""

from __future__ import annotations

__all__ = ["WIKI_VECTOR_MIGRATIONS"]

WIKI_VECTOR_MIGRATIONS: list[tuple[str, str]] = [
    (
        "0003_wiki",
        """
-- Wiki pages. The markdown files under <home>/wiki/<category>/<slug>.md are the source of
-- truth for page text; these rows index them (full text, links, claims, cited documents,
-- lint flags) and are re-synced from the files by stat + content hash.
CREATE TABLE pages (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    category TEXT NOT NULL,
    shard TEXT NOT NULL,
    title TEXT NOT NULL,
    title_norm TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    summary TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '[]',
    front_matter TEXT NOT NULL DEFAULT '{}',
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    size INTEGER NOT NULL DEFAULT 0,
    mtime_ns INTEGER NOT NULL DEFAULT 0,
    node_id TEXT,
    subject TEXT,
    entity_type TEXT,
    contradictions INTEGER NOT NULL DEFAULT 0,
    stub INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX pages_category ON pages (category, title_norm);
CREATE INDEX pages_shard ON pages (category, shard, title_norm);
CREATE UNIQUE INDEX pages_subject ON pages (subject) WHERE subject IS NOT NULL;

CREATE VIRTUAL TABLE pages_fts USING fts5 (
    title, content, content='pages', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER pages_ai AFTER INSERT ON pages BEGIN
    INSERT INTO pages_fts (rowid, title, content) VALUES (new.id, new.title, new.content);
END;
CREATE TRIGGER pages_ad AFTER DELETE ON pages BEGIN
    INSERT INTO pages_fts (pages_fts, rowid, title, content)
    VALUES ('delete', old.id, old.title, old.content);
END;
CREATE TRIGGER pages_au AFTER UPDATE OF title, content ON pages BEGIN
    INSERT INTO pages_fts (pages_fts, rowid, title, content)
    VALUES ('delete', old.id, old.title, old.content);
    INSERT INTO pages_fts (rowid, title, content) VALUES (new.id, new.title, new.content);
END;

-- Pages per (category, shard): index.md and its shard files are rendered from these
-- counts and from bounded, indexed queries, so that a write never reads the whole index.
CREATE TABLE wiki_index_counts (
    category TEXT NOT NULL,
    shard TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (category, shard)
) WITHOUT ROWID;
CREATE TRIGGER pages_count_ai AFTER INSERT ON pages BEGIN
    INSERT INTO wiki_index_counts (category, shard, n) VALUES (new.category, new.shard, 1)
    ON CONFLICT (category, shard) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER pages_count_ad AFTER DELETE ON pages BEGIN
    UPDATE wiki_index_counts SET n = n - 1 WHERE category = old.category AND shard = old.shard;
    DELETE FROM wiki_index_counts WHERE category = old.category AND shard = old.shard AND n <= 0;
END;
CREATE TRIGGER pages_count_au AFTER UPDATE OF category, shard ON pages BEGIN
    UPDATE wiki_index_counts SET n = n - 1 WHERE category = old.category AND shard = old.shard;
    DELETE FROM wiki_index_counts WHERE category = old.category AND shard = old.shard AND n <= 0;
    INSERT INTO wiki_index_counts (category, shard, n) VALUES (new.category, new.shard, 1)
    ON CONFLICT (category, shard) DO UPDATE SET n = n + 1;
END;

-- Every [[wikilink]] of a page with its 1-based line; the target may not exist (broken link).
-- Links stay here rather than in `edges` so that entity queries and pruning are unaffected;
-- page -> entity links resolve through the target page's subject or the entity's name.
CREATE TABLE page_links (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL REFERENCES pages (slug) ON DELETE CASCADE ON UPDATE CASCADE,
    target TEXT NOT NULL,
    label TEXT,
    line INTEGER NOT NULL
);
CREATE INDEX page_links_source ON page_links (source);
CREATE INDEX page_links_target ON page_links (target);

-- Claims a page states ("[[a]] causes [[b]]"), by the id the relation has or would have.
CREATE TABLE page_claims (
    id INTEGER PRIMARY KEY,
    page TEXT NOT NULL REFERENCES pages (slug) ON DELETE CASCADE ON UPDATE CASCADE,
    edge_id TEXT NOT NULL,
    line INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX page_claims_page ON page_claims (page);

-- Document versions a page cites (front matter source_documents).
CREATE TABLE page_sources (
    page TEXT NOT NULL REFERENCES pages (slug) ON DELETE CASCADE ON UPDATE CASCADE,
    doc_id TEXT NOT NULL,
    version INTEGER,
    PRIMARY KEY (page, doc_id)
) WITHOUT ROWID;
CREATE INDEX page_sources_doc ON page_sources (doc_id);

-- Generated pages waiting to be regenerated ('doc:<id>', 'entity:<node id>'): marked in the
-- ingest transaction, cleared in the transaction that rewrites the pages.
CREATE TABLE wiki_dirty (key TEXT PRIMARY KEY) WITHOUT ROWID;

-- Bounded "strongest relations of X" for entity pages of hub entities.
-- (Strongest first, oldest first among equals: a hub's page stops changing once it is full.)
CREATE INDEX wiki_edges_source ON edges (source, confidence DESC);
CREATE INDEX wiki_edges_target ON edges (target, confidence DESC);
""",
    ),
    (
        "0004_vectors",
        """
-- One embedding per item (chunk, entity, page, memory, skill) and model. text_hash lets
-- a re-ingest skip texts already embedded with the same model.
CREATE TABLE vectors (
    id INTEGER PRIMARY KEY,
    item_kind TEXT NOT NULL,
    item_id TEXT NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    text_hash TEXT NOT NULL,
    vec BLOB NOT NULL,
    UNIQUE (item_kind, item_id)
);
CREATE INDEX vectors_model ON vectors (model, item_kind, id);

-- Key/value facts about the knowledge base itself (e.g. its embedding model).
CREATE TABLE kb_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- Cascades: a chunk or node going away takes its vector with it; a counter lets
-- in-memory vector indexes notice deletions cheaply.
INSERT INTO kb_meta (key, value) VALUES ('vectors.deletions', '0');
CREATE TRIGGER vectors_chunk_gone AFTER DELETE ON chunks BEGIN
    DELETE FROM vectors WHERE item_kind = 'chunk' AND item_id = old.chunk_id;
END;
CREATE TRIGGER vectors_node_gone AFTER DELETE ON nodes BEGIN
    DELETE FROM vectors WHERE item_kind = old.kind AND item_id = old.id;
END;
CREATE TRIGGER vectors_deleted AFTER DELETE ON vectors BEGIN
    UPDATE kb_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors.deletions';
END;
""",
    ),
    (
        "0005_edge_walk_indexes",
        """
-- The edges among a set of nodes (a query's subgraph) are (source, target) probes with this,
-- whatever the size of the hubs' edge lists. Strongest-first reads per node use the
-- (source|target, confidence) indexes of 0003, which also make edges_target redundant.
CREATE INDEX edges_pair ON edges (source, target);
DROP INDEX edges_target;
""",
    ),
]


# Issue 16: an entity page's "See also" reads the summaries linking to it in slug order (the same
# whichever order the pages were saved in); (target, source) serves that and every target lookup.
WIKI_SEE_ALSO_MIGRATIONS: list[tuple[str, str]] = [
    (
        "0016_page_links_target_source",
        """
CREATE INDEX page_links_target_source ON page_links (target, source);
DROP INDEX page_links_target;
""",
    ),
]
