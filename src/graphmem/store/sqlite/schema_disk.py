"""Schema migrations 0021- of the SQLite backend: disk per document (issue 16).

Shipped migrations are never edited: their text is pinned by a hash in the contract suite.
"""

from __future__ import annotations

from .schema_memory import _EV, _REPLAYED

__all__ = ["DISK_FIX_MIGRATIONS", "DISK_MIGRATIONS", "DISK_REPLAYED"]

# Tables whose changes the replay log records, added since 0012 (replay drops their triggers before undoing).
DISK_REPLAYED: dict[str, tuple[str, ...]] = {"mention_rows": ("id", "node_id", "chunk", "start", "end")}


def _replay_triggers(table: str) -> str:
    """0012's update and delete triggers for ``table`` (its inserts are not logged: a mention is only ever
    inserted with its document version, whose own insert is logged)."""
    row = "json_object(" + ", ".join(f"'{c}', old.\"{c}\"" for c in ("rowid", *DISK_REPLAYED[table])) + ")"
    return "\n".join(
        f"CREATE TRIGGER replay_{table}_{op.lower()} AFTER {when} ON {table} BEGIN\n    INSERT INTO replay_log"
        f" (ev, tbl, op, rid, old) VALUES ({_EV}, '{table}', '{op}', old.rowid, {row});\nEND;"
        for op, when in (("U", "UPDATE"), ("D", "DELETE")))


_MENTION_ROWS = f"""
-- A mention was 7 columns of which 3 repeated its chunk's (the chunk id text, the document id and version) and
-- 3 indexes, two of them over the same node_id prefix: 3.9x the raw text of the seed workload. The rows now name
-- their chunk by its integer key; one index per direction, node_id's in rowid order (what (node_id, id) held).
CREATE TABLE mention_rows (
    id INTEGER PRIMARY KEY,
    node_id TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
    chunk INTEGER NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL
);
INSERT INTO mention_rows (id, node_id, chunk, start, "end")
    SELECT m.id, m.node_id, c.id, m.start, m."end" FROM mentions m JOIN chunks c ON c.chunk_id = m.chunk_id
    ORDER BY m.id;
-- The replay log's records of mentions (updates and deletes) name the chunk by its key too: the chunk a mention
-- was in is the one of that chunk id whose delete was logged first after the mention's change, else the one
-- that still exists (chunk ids of a deleted document come back when it is ingested again).
CREATE TEMP TABLE gone_chunks AS SELECT json_extract(old, '$.chunk_id') AS chunk_id, seq,
    json_extract(old, '$.id') AS id FROM replay_log WHERE tbl = 'chunks' AND op = 'D';
CREATE INDEX temp.gone_chunks_id ON gone_chunks (chunk_id, seq);
UPDATE replay_log SET tbl = 'mention_rows', old = json_object(
    'rowid', json_extract(old, '$.rowid'), 'id', json_extract(old, '$.id'), 'node_id', json_extract(old, '$.node_id'),
    'chunk', coalesce(
        (SELECT g.id FROM gone_chunks g WHERE g.chunk_id = json_extract(replay_log.old, '$.chunk_id')
         AND g.seq > replay_log.seq ORDER BY g.seq LIMIT 1),
        (SELECT c.id FROM chunks c WHERE c.chunk_id = json_extract(replay_log.old, '$.chunk_id'))),
    'start', json_extract(old, '$.start'), 'end', json_extract(old, '$.end'))
    WHERE tbl = 'mentions';
DROP TABLE temp.gone_chunks;
DROP TABLE mentions;
CREATE INDEX mention_rows_node ON mention_rows (node_id);
CREATE INDEX mention_rows_chunk ON mention_rows (chunk);
{_replay_triggers("mention_rows")}

-- Every read, dump and load sees mentions as before (same columns, same rows): a view over the compact rows.
CREATE VIEW mentions (id, node_id, chunk_id, doc_id, version, start, "end") AS
    SELECT m.id, m.node_id, c.chunk_id, c.doc_id, c.version, m.start, m."end"
    FROM mention_rows m JOIN chunks c ON c.id = m.chunk;
CREATE TRIGGER mentions_insert INSTEAD OF INSERT ON mentions BEGIN
    SELECT RAISE(ABORT, 'mentions.chunk_id: no chunk of that id in that document version; insert the chunk first')
        WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.chunk_id = new.chunk_id AND c.doc_id = new.doc_id
                          AND c.version = new.version);
    INSERT INTO mention_rows (id, node_id, chunk, start, "end")
        SELECT new.id, new.node_id, c.id, new.start, new."end" FROM chunks c WHERE c.chunk_id = new.chunk_id;
END;
CREATE TRIGGER mentions_update INSTEAD OF UPDATE ON mentions BEGIN
    SELECT RAISE(ABORT, 'mentions.chunk_id: no chunk of that id in that document version')
        WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.chunk_id = new.chunk_id AND c.doc_id = new.doc_id
                          AND c.version = new.version);
    UPDATE mention_rows SET id = new.id, node_id = new.node_id,
        chunk = (SELECT c.id FROM chunks c WHERE c.chunk_id = new.chunk_id), start = new.start, "end" = new."end"
        WHERE id = old.id;
END;
CREATE TRIGGER mentions_delete INSTEAD OF DELETE ON mentions BEGIN
    DELETE FROM mention_rows WHERE id = old.id;
END;
"""



def _documents_update_trigger() -> str:
    """0012's replay trigger for document updates, as 0012 created it (content is not logged: it never changes)."""
    cols = [c for c in ("rowid", *_REPLAYED["documents"]) if c != "content"]
    row = "json_object(" + ", ".join(f"'{c}', old.\"{c}\"" for c in cols) + ")"
    return ("CREATE TRIGGER replay_documents_u AFTER UPDATE ON documents BEGIN\n    INSERT INTO replay_log (ev, tbl,"
            f" op, rid, old) VALUES ({_EV}, 'documents', 'U', old.rowid, {row});\nEND;")


_DOCUMENT_TEXT = f"""
-- A document's chunks overlap and together spell out its text: stored once more in the document it was 1.0x of the
-- 1.37x the documents table took. A version whose chunks (each in ordinal order adding what lies past the furthest
-- end before it) spell all of its text is stored with content ''; one whose chunks spell all but a head and a tail
-- (whitespace a chunk does not keep) as NUL + JSON [head, tail]; a text that itself starts with NUL as NUL + JSON
-- [text] (store/sqlite/documents.py stored_content and read_content: every read, the dump too, puts the text back).
-- A text with a NUL inside is left as it is. The replay log does not record this (the rows mean the same before and
-- after), so its trigger is set aside for the update.
DROP TRIGGER replay_documents_u;
UPDATE documents SET content = char(0) || json_array(content) WHERE hex(substr(CAST(content AS BLOB), 1, 1)) = '00';
CREATE TEMP TABLE spelled AS SELECT d.rowid_ AS rid,
    (SELECT c.start FROM chunks c WHERE c.doc_id = d.doc_id AND c.version = d.version ORDER BY c.ordinal LIMIT 1)
        AS head,
    (SELECT group_concat(s.piece, '') FROM (
        SELECT CASE WHEN k."end" > k.reached THEN substr(k.text, 1 + max(0, k.reached - k.start)) ELSE '' END AS piece
        FROM (SELECT c.ordinal, c.text, c.start, c."end", coalesce(max(c."end") OVER (ORDER BY c.ordinal
                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS reached
              FROM chunks c WHERE c.doc_id = d.doc_id AND c.version = d.version) k
        ORDER BY k.ordinal) s) AS text
    FROM documents d WHERE d.content <> '' AND instr(CAST(d.content AS BLOB), x'00') = 0;
UPDATE documents SET content = CASE WHEN documents.content = s.text THEN '' ELSE char(0) || json_array(
        substr(documents.content, 1, s.head), substr(documents.content, s.head + length(s.text) + 1)) END
    FROM temp.spelled s WHERE s.rid = documents.rowid_ AND s.text <> '' AND documents.content =
        substr(documents.content, 1, s.head) || s.text || substr(documents.content, s.head + length(s.text) + 1);
DROP TABLE temp.spelled;
{_documents_update_trigger()}
"""

_EVENT_SHAPES = """
-- The change log was 1.9x the raw text of the seed workload, half of it the keys of payloads repeated in every event
-- of a kind. An event may store its payload as the JSON array of its values, its keys once in event_shapes (shape);
-- without a shape (every event written before this migration, and a dump's) the payload is the JSON object itself.
-- Every read rebuilds the object, and the dump its text byte for byte (store/sqlite/events.py event_payload_text).
CREATE TABLE event_shapes (
    id INTEGER PRIMARY KEY,
    keys TEXT NOT NULL UNIQUE
);
ALTER TABLE events ADD COLUMN shape INTEGER;
"""

DISK_MIGRATIONS: list[tuple[str, str]] = [
    ("0021_mention_rows", _MENTION_ROWS),
    ("0021_document_text_from_chunks", _DOCUMENT_TEXT),
    ("0021_event_payload_shapes", _EVENT_SHAPES),
]

_MENTION_NODE_CHUNK = """
-- Which chunks of a hub entity's list hold its first offset (entities_chunks: min(start) per (node, chunk)) and how
-- many chunks an entity is in (entity_chunk_counts) were seeks and an ordered scan on the (node_id, chunk_id) index
-- before 0021, and became a scan of the entity's whole mention list plus a temporary B-tree on mention_rows_node.
-- The (node_id, chunk) index serves both again; mention_rows_node stays (newest-first reads go in rowid order).
CREATE INDEX mention_rows_node_chunk ON mention_rows (node_id, chunk);
"""

# Review fixes of the 0021 migrations (issue 16).
DISK_FIX_MIGRATIONS: list[tuple[str, str]] = [
    ("0027_mention_rows_node_chunk", _MENTION_NODE_CHUNK),
]
