"""Named, append-only schema migrations of the SQLite backend.

Each migration runs once, in its own transaction, and is recorded in ``schema_migrations``.
Never edit or reorder a migration that has shipped: add a new one.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
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
    (
        "0006_skills",
        """
-- Skills (SKILL.md files). Each is also a node of kind 'skill' (id 'skill:<skill_id>') so its
-- related / sibling / similar / mentions links are ordinary rows of `edges`. skill_id is the
-- skill folder relative to the indexed root; names are not unique across collections.
CREATE TABLE skills (
    rid INTEGER PRIMARY KEY,
    skill_id TEXT NOT NULL UNIQUE,
    node_id TEXT NOT NULL UNIQUE REFERENCES nodes (id) ON DELETE CASCADE,
    root TEXT NOT NULL,
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    description TEXT NOT NULL,
    category TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    triggers TEXT NOT NULL DEFAULT '[]',
    related TEXT NOT NULL DEFAULT '[]',
    body TEXT NOT NULL,
    meta TEXT NOT NULL DEFAULT '{}',
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL DEFAULT 0,
    mtime_ns INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);
CREATE INDEX skills_root ON skills (root);
CREATE INDEX skills_name_key ON skills (name_key);
CREATE INDEX skills_category ON skills (category);

-- Fielded full text: bm25() weighs the columns (name and triggers over tags over description
-- over body) per query.
CREATE VIRTUAL TABLE skills_fts USING fts5 (
    name, triggers, tags, description, body,
    content='skills', content_rowid='rid', tokenize='porter unicode61'
);
CREATE TRIGGER skills_ai AFTER INSERT ON skills BEGIN
    INSERT INTO skills_fts (rowid, name, triggers, tags, description, body)
    VALUES (new.rid, new.name, new.triggers, new.tags, new.description, new.body);
END;
CREATE TRIGGER skills_ad AFTER DELETE ON skills BEGIN
    INSERT INTO skills_fts (skills_fts, rowid, name, triggers, tags, description, body)
    VALUES ('delete', old.rid, old.name, old.triggers, old.tags, old.description, old.body);
END;
CREATE TRIGGER skills_au AFTER UPDATE OF name, triggers, tags, description, body ON skills BEGIN
    INSERT INTO skills_fts (skills_fts, rowid, name, triggers, tags, description, body)
    VALUES ('delete', old.rid, old.name, old.triggers, old.tags, old.description, old.body);
    INSERT INTO skills_fts (rowid, name, triggers, tags, description, body)
    VALUES (new.rid, new.name, new.triggers, new.tags, new.description, new.body);
END;

-- The folders skills were built from (rebuild starts over from these).
CREATE TABLE skill_roots (
    root TEXT PRIMARY KEY,
    built_at TEXT NOT NULL
);
""",
    ),
    (
        "0007_memory",
        """
-- Memories (kind 'memory' nodes): what an agent was told, scoped by tenant / user / agent / run.
-- scope_key = tenant|user|agent: memory edges never join two different scope keys.
-- said_at is when it was said (ordering, reply windows); used_at is the system time it was
-- stored or last used (decay). relevance = max(floor, quality * 0.5 ** (age / half-life)).
CREATE TABLE memories (
    rowid_ INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE REFERENCES nodes (id) ON DELETE CASCADE,
    tenant_id TEXT,
    user_id TEXT,
    agent_id TEXT,
    run_id TEXT,
    scope_key TEXT NOT NULL,
    role TEXT,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    said_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    used_at TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 1,
    quality REAL NOT NULL DEFAULT 1.0,
    floor REAL NOT NULL DEFAULT 0.0,
    relevance REAL NOT NULL DEFAULT 1.0,
    archived INTEGER NOT NULL DEFAULT 0,
    uses INTEGER NOT NULL DEFAULT 0,
    helpful INTEGER NOT NULL DEFAULT 0,
    unhelpful INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX memories_user ON memories (user_id, archived);
CREATE INDEX memories_agent ON memories (agent_id, archived);
CREATE INDEX memories_run ON memories (run_id);
CREATE INDEX memories_tenant ON memories (tenant_id);
CREATE INDEX memories_scope ON memories (scope_key, said_at);
CREATE INDEX memories_used ON memories (archived, used_at);

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    text, content='memories', content_rowid='rowid_', tokenize='porter unicode61'
);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text) VALUES (new.rowid_, new.text);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rowid_, old.text);
END;
CREATE TRIGGER memories_au AFTER UPDATE OF text ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rowid_, old.text);
    INSERT INTO memories_fts (rowid, text) VALUES (new.rowid_, new.text);
END;
-- The node row mirrors what the shared graph shows of a memory.
CREATE TRIGGER memories_node_sync AFTER UPDATE OF relevance, archived, text ON memories BEGIN
    UPDATE nodes SET relevance = new.relevance, archived = new.archived, name = substr(new.text, 1, 200),
        updated_at = new.updated_at WHERE id = new.id;
END;

-- What happened to each memory (ADD / UPDATE / DELETE with old and new text), oldest first;
-- kept after the memory is deleted.
CREATE TABLE memory_versions (
    id INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    event TEXT NOT NULL,
    old_text TEXT,
    new_text TEXT,
    ts TEXT NOT NULL
);
CREATE INDEX memory_versions_memory ON memory_versions (memory_id, id);

-- The last memory of each session (scope key + run), so that REPLY_TO / TEMPORAL_NEXT survive restarts.
CREATE TABLE memory_sessions (
    session_key TEXT PRIMARY KEY,
    memory_id TEXT NOT NULL,
    said_at TEXT NOT NULL
) WITHOUT ROWID;

-- Document references found in a memory's metadata or text (DOCUMENT_LINK).
CREATE TABLE memory_docrefs (
    scope_key TEXT NOT NULL,
    ref TEXT NOT NULL,
    memory_id TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    PRIMARY KEY (scope_key, ref, memory_id)
) WITHOUT ROWID;
CREATE INDEX memory_docrefs_memory ON memory_docrefs (memory_id);

-- Memory -> knowledge-graph entity it names. A table of its own (like chunk mentions) so that
-- entity-graph walks (query, search over chunks) never step onto memories.
CREATE TABLE memory_mentions (
    memory_id TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    entity_id TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    PRIMARY KEY (memory_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX memory_mentions_entity ON memory_mentions (entity_id);

-- Feedback on a memory for a query (frequency / personal / success terms).
CREATE TABLE memory_feedback (
    id INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    query TEXT NOT NULL,
    helpful INTEGER NOT NULL,
    ts TEXT NOT NULL
);
CREATE INDEX memory_feedback_memory ON memory_feedback (memory_id, id);

-- Daily LLM token budget per user (edge labelling), with a cooldown once spent.
CREATE TABLE memory_llm_budget (
    budget_key TEXT PRIMARY KEY,
    day TEXT NOT NULL,
    tokens INTEGER NOT NULL DEFAULT 0,
    cooldown_until TEXT
) WITHOUT ROWID;
""",
    ),
    (
        "0008_memory_scoped_fts",
        """
-- Full-text search within a scope. The scope's ids, hex-encoded as tokens ('u' + hex(user_id),
-- 'a' agent, 'r' run, 't' tenant), sit in a second column, so a scoped query is
-- "scope tokens AND words": FTS5 steps through the words' postings to the scope's rows instead
-- of reading every match in the store and dropping other users' afterwards (O(store) -> about
-- O(scope)). bm25() with weight 0 on that column scores exactly like the one-column index.
DROP TRIGGER memories_ai;
DROP TRIGGER memories_ad;
DROP TRIGGER memories_au;
DROP TABLE memories_fts;
CREATE VIRTUAL TABLE memories_fts USING fts5 (text, scope, content='', tokenize='porter unicode61');
INSERT INTO memories_fts (rowid, text, scope) SELECT rowid_, text, trim(coalesce('t' || lower(hex(m.tenant_id)), '') || ' ' || coalesce('u' || lower(hex(m.user_id)), '') || ' ' || coalesce('a' || lower(hex(m.agent_id)), '') || ' ' || coalesce('r' || lower(hex(m.run_id)), '')) FROM memories m;
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, text, scope) VALUES (new.rowid_, new.text, trim(coalesce('t' || lower(hex(new.tenant_id)), '') || ' ' || coalesce('u' || lower(hex(new.user_id)), '') || ' ' || coalesce('a' || lower(hex(new.agent_id)), '') || ' ' || coalesce('r' || lower(hex(new.run_id)), '')));
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, scope) VALUES ('delete', old.rowid_, old.text, trim(coalesce('t' || lower(hex(old.tenant_id)), '') || ' ' || coalesce('u' || lower(hex(old.user_id)), '') || ' ' || coalesce('a' || lower(hex(old.agent_id)), '') || ' ' || coalesce('r' || lower(hex(old.run_id)), '')));
END;
CREATE TRIGGER memories_au AFTER UPDATE OF text, tenant_id, user_id, agent_id, run_id ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, text, scope) VALUES ('delete', old.rowid_, old.text, trim(coalesce('t' || lower(hex(old.tenant_id)), '') || ' ' || coalesce('u' || lower(hex(old.user_id)), '') || ' ' || coalesce('a' || lower(hex(old.agent_id)), '') || ' ' || coalesce('r' || lower(hex(old.run_id)), '')));
    INSERT INTO memories_fts (rowid, text, scope) VALUES (new.rowid_, new.text, trim(coalesce('t' || lower(hex(new.tenant_id)), '') || ' ' || coalesce('u' || lower(hex(new.user_id)), '') || ' ' || coalesce('a' || lower(hex(new.agent_id)), '') || ' ' || coalesce('r' || lower(hex(new.run_id)), '')));
END;
""",
    ),
    (
        "0009_relation_vectors",
        """
-- Relations are embedded as "subject relation object" facts (item_kind 'relation', matched
-- against the query to seed the walk); a relation going away takes its vector with it.
CREATE TRIGGER vectors_edge_gone AFTER DELETE ON edges BEGIN
    DELETE FROM vectors WHERE item_kind = 'relation' AND item_id = old.id;
END;
""",
    ),
]
