# 0008's trigger bodies are long lines, and a shipped migration is never re-wrapped:
# ruff: noqa: E501
"""Schema migrations 0006-0009 of the SQLite backend: skills, memories, the scoped
memory full text, relation vectors.

Shipped migrations are never edited: their text is pinned by a hash in the contract suite.
"""

from __future__ import annotations

# What replay undoes (kb.events.replay): every change to these tables after the point asked for. An insert
# is logged by its rowid only, an update or a delete with the row as it was, so walking the log backwards
# restores any earlier state; ``ev`` is the last event id when the change was made (the changes before the
# next event belong to that state). Rows of other tables that an undone insert leaves dangling go with it
# (replay drops rows whose foreign key points nowhere); full-text indexes and counters follow their tables.
# Not restored: page links and claims of a page deleted since, skills' index rows of a rebuild since.
_REPLAYED: dict[str, tuple[str, ...]] = {
    "documents": ("rowid_", "doc_id", "version", "title", "source", "content", "content_hash", "metadata",
                  "created_at", "is_latest", "chunk_count"),
    "chunks": ("id", "chunk_id", "doc_id", "version", "ordinal", "start", "end", "text"),
    "nodes": ("id", "kind", "name", "type", "properties", "created_at", "updated_at", "relevance", "archived",
              "manual"),
    "node_names": ("id", "kind", "norm", "alias", "node_id"),
    "edges": ("id", "source", "target", "type", "confidence", "created_at", "updated_at", "valid_from",
              "valid_to", "manual", "properties"),
    "memories": ("rowid_", "id", "tenant_id", "user_id", "agent_id", "run_id", "scope_key", "role", "text",
                 "metadata", "said_at", "created_at", "updated_at", "used_at", "version", "quality", "floor",
                 "relevance", "archived", "uses", "helpful", "unhelpful"),
    "provenance": ("id", "item_kind", "item_id", "doc_id", "version", "chunk_id", "start", "end", "text",
                   "confidence", "created_at"),
    "mentions": ("id", "node_id", "chunk_id", "doc_id", "version", "start", "end"),
    "memory_versions": ("id", "memory_id", "version", "event", "old_text", "new_text", "ts"),
    "memory_feedback": ("id", "memory_id", "query", "helpful", "ts"),
    "pages": ("id", "slug", "category", "shard", "title", "title_norm", "path", "summary", "tags", "front_matter",
              "content", "content_hash", "size", "mtime_ns", "node_id", "subject", "entity_type",
              "contradictions", "stub", "created_at", "updated_at"),
}
_EV = "coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)"
# Rows only ever inserted together with a new row of their parent (a document version's chunks, evidence and
# mentions): undoing the parent's insert drops them as dangling, so their inserts need no log of their own
# (half of what an ingest would log). Their updates and deletes (merges, document deletes) are logged.
_INSERT_UNLOGGED = ("chunks", "provenance", "mentions")


def _replay_log_sql() -> str:
    parts = ["CREATE TABLE replay_log (\n    seq INTEGER PRIMARY KEY,\n    ev INTEGER NOT NULL,\n"
             "    tbl TEXT NOT NULL,\n    op TEXT NOT NULL,\n    rid INTEGER NOT NULL,\n    old TEXT\n);"]
    # No index on ev: it never decreases along seq (one writer at a time), so replay finds where a point
    # starts by a binary search over seq, and ingest does not pay for a second B-tree per change.
    for table, cols in _REPLAYED.items():
        old = "json_object(" + ", ".join(f"'{c}', old.\"{c}\"" for c in ("rowid", *cols)) + ")"
        if table not in _INSERT_UNLOGGED:
            parts.append(f"CREATE TRIGGER replay_{table}_i AFTER INSERT ON {table} BEGIN\n    INSERT INTO "
                         f"replay_log (ev, tbl, op, rid) VALUES ({_EV}, '{table}', 'I', new.rowid);\nEND;")
        # A document's content never changes: its updates (is_latest) log the other columns only.
        changed = "json_object(" + ", ".join(f"'{c}', old.\"{c}\"" for c in ("rowid", *cols)
                                             if (table, c) != ("documents", "content")) + ")"
        for op, when, row in (("U", "UPDATE", changed), ("D", "DELETE", old)):
            parts.append(f"CREATE TRIGGER replay_{table}_{op.lower()} AFTER {when} ON {table} BEGIN\n    INSERT INTO "
                         f"replay_log (ev, tbl, op, rid, old) VALUES ({_EV}, '{table}', '{op}', old.rowid, {row});\n"
                         "END;")
    # The log is written on every change and read by target rarely (one item's history, with a limit): the
    # (target, id) index cost a third of each event's append (a random B-tree insert), so it goes; lists by
    # type still use events_type, and a target filter scans the log from ``after_id`` on.
    parts.append("DROP INDEX IF EXISTS events_target;")
    # An existing knowledge base has history from before the log: replay cannot go back past this event.
    parts.append("INSERT OR REPLACE INTO kb_meta (key, value) SELECT 'replay.since_event', "
                 "CAST(coalesce(max(id), 0) AS TEXT) FROM events;")
    return "\n".join(parts) + "\n"


_REPLAY_LOG = _replay_log_sql()
REPLAYED_TABLES = tuple(_REPLAYED)


__all__ = ["SKILL_MEMORY_MIGRATIONS", "REPLAYED_TABLES"]

SKILL_MEMORY_MIGRATIONS: list[tuple[str, str]] = [
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

# The change feed (issue 18), applied after the read-path indexes of schema_read.py (0010).
FEED_MIGRATIONS: list[tuple[str, str]] = [
    (
        "0011_feed_cursors",
        """
-- Where each long-running consumer of the change log (a webhook forwarder, a named follower) has got
-- to: it resumes after this event id when restarted. Bookkeeping, not knowledge: no event of its own.
CREATE TABLE feed_cursors (
    name TEXT PRIMARY KEY,
    event_id INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
""",
    ),
    ("0012_replay_log", _REPLAY_LOG),
]
